// Wave-packet box stage (src/wavepacket/cuda/): lattice values ↔ box coefficients, the
// GPU half of src/wavepacket/cpu.rs and boxfft.rs. The USFFT (kernels/usfft.cu) runs before
// (forward) or after (adjoint); cuFFT does the box FFTs, batched over the boxes of one shape.
//
// The prelude defines REAL (float or double). Complex arrays are interleaved (re, im) pairs.
// Boxes are numbered in work order (grouped by shape, so that each group is one batched FFT
// over a contiguous piece of the work array); box j's row of the table holds BOX_FIELDS
// long longs, named below. A box's local index k runs axis 1 fastest over n1 × n2 × n3.
//
// Phase tables hold, per box, n1 + n2 + n3 complex factors (axis 1, then 2, then 3) whose
// product over a point's three indices is its factor: the coefficient-side phase
// L^(−½)·e^{2πi·lo·y/L} (`phase`, at the box's F_PHASE), or a call's grid shift
// e^{−2πi(lo+i)δ/L} (`shift`, at shift_at[j] for box j; −1 where box j has none; both NULL
// for a call without shifts).

#define F_WORK 0     // first work element of the box
#define F_COEFF 1    // first coefficient (and window value) of the box
#define F_BASE 2     // lattice-value index of the box's local point (0, 0, 0)
#define F_S2 3       // lattice-value stride of axis 2 (the lattice's len1)
#define F_S3 4       // lattice-value stride of axis 3 (len1 · len2)
#define F_N1 5       // box shape
#define F_N2 6
#define F_N3 7
#define F_PHASE 8    // offset of the box's factors in the phase table
#define F_O1 9       // the box's first lattice index minus the lattice's, per axis
#define F_O2 10
#define F_O3 11
#define BOX_FIELDS 12

struct cpx {
    REAL re, im;
};

__device__ __forceinline__ cpx cmul(cpx a, cpx b)
{
    cpx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}

__device__ __forceinline__ cpx cconj(cpx a)
{
    cpx r = {a.re, -a.im};
    return r;
}

// The last j with start[j] ≤ e (start ascending, start[0] = 0, n entries).
__device__ __forceinline__ int find_row(const long long *__restrict__ start, int n, long long e)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) >> 1;
        if (start[mid] <= e)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// The product of a box's three per-axis factors at (i1, i2, i3).
__device__ __forceinline__ cpx factor(const cpx *__restrict__ table, long long at, long long n1,
                                      long long n2, long long i1, long long i2, long long i3)
{
    return cmul(cmul(table[at + i1], table[at + n1 + i2]), table[at + n1 + n2 + i3]);
}

// Forward, first half: work[e] = window · lattice value (· the box's grid shift), for the
// elements first ≤ e < end of one group of directions' boxes (each box found from the work
// starts); its lattice values are numbered from the group's first point.
extern "C" __global__ void wp_gather(const cpx *__restrict__ values, const REAL *__restrict__ windows,
                                     const long long *__restrict__ table,
                                     const long long *__restrict__ work_start, int n_boxes,
                                     long long first, long long end,
                                     const long long *__restrict__ shift_at,
                                     const cpx *__restrict__ shift, cpx *__restrict__ work)
{
    for (long long e = first + blockIdx.x * (long long)blockDim.x + threadIdx.x; e < end;
         e += (long long)gridDim.x * blockDim.x) {
        int j = find_row(work_start, n_boxes, e);
        const long long *b = table + (long long)j * BOX_FIELDS;
        long long k = e - b[F_WORK];
        long long n1 = b[F_N1], n2 = b[F_N2];
        long long i1 = k % n1, r = k / n1, i2 = r % n2, i3 = r / n2;
        cpx v = values[b[F_BASE] + i3 * b[F_S3] + i2 * b[F_S2] + i1];
        REAL w = windows[b[F_COEFF] + k];
        v.re *= w;
        v.im *= w;
        if (shift_at && shift_at[j] >= 0)
            v = cmul(v, factor(shift, shift_at[j], n1, n2, i1, i2, i3));
        work[e] = v;
    }
}

// Work element e's box row (*row) and the box's coefficient-side phase at e.
__device__ __forceinline__ cpx work_phase(const long long *__restrict__ table,
                                          const long long *__restrict__ work_start, int n_boxes,
                                          const cpx *__restrict__ phase, long long e,
                                          const long long **row)
{
    const long long *b = table + (long long)find_row(work_start, n_boxes, e) * BOX_FIELDS;
    long long k = e - b[F_WORK];
    long long n1 = b[F_N1], n2 = b[F_N2];
    long long y1 = k % n1, r = k / n1, y2 = r % n2, y3 = r / n2;
    *row = b;
    return factor(phase, b[F_PHASE], n1, n2, y1, y2, y3);
}

// Forward, second half (after the box FFTs): coefficients = work · the box's phase.
extern "C" __global__ void wp_to_coefficients(const cpx *__restrict__ work,
                                              const long long *__restrict__ table,
                                              const long long *__restrict__ work_start,
                                              int n_boxes, long long total,
                                              const cpx *__restrict__ phase, cpx *__restrict__ coeffs)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        const long long *b;
        const cpx f = work_phase(table, work_start, n_boxes, phase, e, &b);
        coeffs[b[F_COEFF] + e - b[F_WORK]] = cmul(work[e], f);
    }
}

// Host-to-host calls: the box phases applied to the work array in place (conj = 1: their
// conjugates), the coefficients' box order left to the host's copy. The same products as
// wp_to_coefficients and wp_from_coefficients, bit for bit.
extern "C" __global__ void wp_phase_work(cpx *__restrict__ work, const long long *__restrict__ table,
                                         const long long *__restrict__ work_start, int n_boxes,
                                         long long total, const cpx *__restrict__ phase, int conj)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        const long long *b;
        const cpx f = work_phase(table, work_start, n_boxes, phase, e, &b);
        work[e] = cmul(work[e], conj ? cconj(f) : f);
    }
}

// Adjoint, first half (before the box FFTs): work = coefficients · the conjugate phase.
extern "C" __global__ void wp_from_coefficients(const cpx *__restrict__ coeffs,
                                                const long long *__restrict__ table,
                                                const long long *__restrict__ work_start,
                                                int n_boxes, long long total,
                                                const cpx *__restrict__ phase, cpx *__restrict__ work)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        const long long *b;
        const cpx f = work_phase(table, work_start, n_boxes, phase, e, &b);
        work[e] = cmul(coeffs[b[F_COEFF] + e - b[F_WORK]], cconj(f));
    }
}

// Adjoint, second half: each lattice value is the sum, over the boxes of its lattice that
// hold it, of window · work (· the conjugate grid shift). One thread per lattice point, so
// the sum needs no atomics and its order is fixed. The lattices are one group of
// directions', their points numbered from the group's first. Lattice l's points start at
// lat_start[l] (n_lattices + 1 entries); its lengths are lat_len[2l], lat_len[2l + 1]
// (axes 1, 2); its boxes are lat_boxes[lat_first[l] … lat_first[l + 1]).
extern "C" __global__ void wp_scatter(const cpx *__restrict__ work, const REAL *__restrict__ windows,
                                      const long long *__restrict__ table,
                                      const long long *__restrict__ lat_start,
                                      const long long *__restrict__ lat_len,
                                      const int *__restrict__ lat_first,
                                      const int *__restrict__ lat_boxes, int n_lattices,
                                      long long n_points, const long long *__restrict__ shift_at,
                                      const cpx *__restrict__ shift, cpx *__restrict__ values)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n_points;
         p += (long long)gridDim.x * blockDim.x) {
        int l = find_row(lat_start, n_lattices, p);
        long long t = p - lat_start[l];
        long long len1 = lat_len[2 * l], len2 = lat_len[2 * l + 1];
        long long t1 = t % len1, r = t / len1, t2 = r % len2, t3 = r / len2;
        cpx sum = {(REAL)0, (REAL)0};
        for (int q = lat_first[l]; q < lat_first[l + 1]; ++q) {
            int j = lat_boxes[q];
            const long long *b = table + (long long)j * BOX_FIELDS;
            long long n1 = b[F_N1], n2 = b[F_N2], n3 = b[F_N3];
            long long i1 = t1 - b[F_O1], i2 = t2 - b[F_O2], i3 = t3 - b[F_O3];
            if (i1 < 0 || i1 >= n1 || i2 < 0 || i2 >= n2 || i3 < 0 || i3 >= n3)
                continue;
            long long k = (i3 * n2 + i2) * n1 + i1;
            cpx v = work[b[F_WORK] + k];
            if (shift_at && shift_at[j] >= 0)
                v = cmul(v, cconj(factor(shift, shift_at[j], n1, n2, i1, i2, i3)));
            REAL w = windows[b[F_COEFF] + k];
            sum.re += v.re * w;
            sum.im += v.im * w;
        }
        values[p] = sum;
    }
}

// Real data → complex modes (the USFFT's input).
extern "C" __global__ void wp_complex_from_real(const REAL *__restrict__ data, cpx *__restrict__ modes,
                                                long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        cpx v = {data[i], (REAL)0};
        modes[i] = v;
    }
}

// Complex modes → their real parts (the adjoint's output).
extern "C" __global__ void wp_real_part(const cpx *__restrict__ modes, REAL *__restrict__ data, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        data[i] = modes[i].re;
}

// The index of the first non-finite value of x (n values) into *first, which starts at
// ULLONG_MAX: host-to-host calls check their input where it already is.
extern "C" __global__ void wp_first_non_finite(const REAL *__restrict__ x, long long n,
                                               unsigned long long *first)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        if (!isfinite(x[i]))
            atomicMin(first, (unsigned long long)i);
}

// The part of the coefficients a hard threshold removes, in place in the work array (the
// phased coefficients in work order): each box's values with |c| > t[j] are zeroed (box j
// in work order), those at or below kept (a POCS step subtracts their synthesis). Blocks
// stride over the boxes, threads over a box's coefficients.
extern "C" __global__ void wp_keep_below(cpx *__restrict__ work, const long long *__restrict__ table,
                                         const double *__restrict__ t, long long n_boxes)
{
    for (long long j = blockIdx.x; j < n_boxes; j += gridDim.x) {
        const long long *b = table + j * BOX_FIELDS;
        const long long first = b[F_WORK], n = b[F_N1] * b[F_N2] * b[F_N3];
        const double tj = t[j];
        for (long long k = threadIdx.x; k < n; k += blockDim.x) {
            const cpx z = work[first + k];
            if (hypot((double)z.re, (double)z.im) > tj) {
                const cpx zero = {0, 0};
                work[first + k] = zero;
            }
        }
    }
}

// |c| as the host computes it: for float, the double square root of the exact sum of squares
// rounded to float (what the C library's hypotf returns), so that device and host decide
// alike; for double, hypot (within an ulp or two of the host's).
__device__ __forceinline__ double magnitude(float re, float im)
{
    return (double)(float)sqrt((double)re * re + (double)im * im);
}

__device__ __forceinline__ double magnitude(double re, double im)
{
    return hypot(re, im);
}

// One coefficient thresholded at t: |c| ≤ t zeroed; above, kept (hard) or shrunk to
// c·(1 − t/|c|) (soft, the factor rounded to REAL as the host rounds it).
__device__ __forceinline__ cpx shrink_one(cpx z, double t, int soft)
{
    const double m = magnitude(z.re, z.im);
    if (m <= t) {
        z.re = 0;
        z.im = 0;
    } else if (soft) {
        const REAL s = (REAL)(1.0 - t / m);
        z.re = z.re * s;
        z.im = z.im * s;
    }
    return z;
}

// Thresholding in place at one value t (n coefficients), as shrink_one.
extern "C" __global__ void wp_shrink(cpx *__restrict__ coeffs, long long n, double t, int soft)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        coeffs[i] = shrink_one(coeffs[i], t, soft);
}

// Thresholding in place box by box (box j in work order at scale·norms[j], the product
// rounded as the host rounds k·σ·‖ψ_b‖), as shrink_one. Blocks stride over the boxes,
// threads over a box's coefficients.
extern "C" __global__ void wp_shrink_boxes(cpx *__restrict__ coeffs, const long long *__restrict__ table,
                                           const double *__restrict__ norms, long long n_boxes,
                                           double scale, int soft)
{
    for (long long j = blockIdx.x; j < n_boxes; j += gridDim.x) {
        const long long *b = table + j * BOX_FIELDS;
        const long long first = b[F_COEFF], n = b[F_N1] * b[F_N2] * b[F_N3];
        const double tj = __dmul_rn(scale, norms[j]);
        for (long long k = threadIdx.x; k < n; k += blockDim.x)
            coeffs[first + k] = shrink_one(coeffs[first + k], tj, soft);
    }
}

// ---- The k-th smallest of a set of keys, found on the device (radix select) ----
//
// A key is a pair (v, ix) of unsigned words of vbits and ibits bits (multiples of 8; ibits
// may be 0), ordered by v, then ix. Pass p (8 bits each, v's from the top, then ix's)
// counts the next digit of the keys whose bits fixed so far match (a select_count kernel
// adds into SEL_HIST), then wp_select_choose fixes the digit whose bin holds the sought rank
// and leaves the rank within it. After vbits/8 + ibits/8 passes SEL_V and SEL_I hold the
// key. Every step reads and writes only device memory: nothing waits on the host.
#define SEL_V 0     // v's bits fixed so far
#define SEL_VMASK 1 // which bits of v they are
#define SEL_I 2     // ix's bits fixed so far
#define SEL_IMASK 3
#define SEL_RANK 4 // the rank sought among the keys that match (0: the smallest)
#define SEL_HIST 5 // 256 counts
#define SEL_WORDS (SEL_HIST + 256)

typedef unsigned long long u64;

// The state for the rank-th smallest key: nothing fixed, the counts zero.
extern "C" __global__ void wp_select_init(u64 *st, u64 rank)
{
    for (int i = threadIdx.x; i < SEL_WORDS; i += blockDim.x)
        st[i] = i == SEL_RANK ? rank : 0;
}

// The bits a key must share with the selection so far.
struct SelPrefix {
    u64 v, vmask, ix, imask;
};

__device__ __forceinline__ SelPrefix sel_prefix(const u64 *st)
{
    SelPrefix p = {st[SEL_V], st[SEL_VMASK], st[SEL_I], st[SEL_IMASK]};
    return p;
}

// Pass `pass`'s digit of the key (v, ix) into *d, or false where the key no longer matches.
__device__ __forceinline__ bool sel_digit(SelPrefix p, u64 v, u64 ix, int pass, int vbits, int ibits,
                                          unsigned *d)
{
    if ((v & p.vmask) != p.v || (ix & p.imask) != p.ix)
        return false;
    const int vd = vbits >> 3;
    *d = pass < vd ? (unsigned)(v >> (vbits - 8 * (pass + 1))) & 255u
                   : (unsigned)(ix >> (ibits - 8 * (pass - vd + 1))) & 255u;
    return true;
}

// A block's counts (shared) added into the state's.
__device__ __forceinline__ void sel_flush(unsigned *h, u64 *st)
{
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (h[b])
            atomicAdd(st + SEL_HIST + b, (u64)h[b]);
}

__device__ __forceinline__ void sel_clear(unsigned *h)
{
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        h[b] = 0;
    __syncthreads();
}

// Fixes pass `pass`'s digit: the bin where the sought rank falls; the rank becomes the rank
// within it and the counts are cleared for the next pass. One thread.
extern "C" __global__ void wp_select_choose(u64 *st, int pass, int vbits, int ibits)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    u64 rank = st[SEL_RANK], below = 0;
    int b = 0;
    for (;; ++b) {
        const u64 c = st[SEL_HIST + b];
        if (b == 255 || rank < below + c)
            break;
        below += c;
    }
    for (int i = 0; i < 256; ++i)
        st[SEL_HIST + i] = 0;
    st[SEL_RANK] = rank - below;
    const int vd = vbits >> 3;
    if (pass < vd) {
        const int sh = vbits - 8 * (pass + 1);
        st[SEL_V] |= (u64)b << sh;
        st[SEL_VMASK] |= 255ull << sh;
    } else {
        const int sh = ibits - 8 * (pass - vd + 1);
        st[SEL_I] |= (u64)b << sh;
        st[SEL_IMASK] |= 255ull << sh;
    }
}

// |c|² in REAL as the host computes it (two products and a sum, each rounded, never fused),
// as its bits: non-negative values order as their bits do.
__device__ __forceinline__ u64 norm_sqr_bits(float re, float im)
{
    return __float_as_uint(__fadd_rn(__fmul_rn(re, re), __fmul_rn(im, im)));
}

__device__ __forceinline__ u64 norm_sqr_bits(double re, double im)
{
    return (u64)__double_as_longlong(__dadd_rn(__dmul_rn(re, re), __dmul_rn(im, im)));
}

// Keep-largest, one pass's counts: coefficient i's key is (|c_i|², n − 1 − i), so that of
// equal magnitudes the first in the array ranks highest (the host keeps ties in order).
extern "C" __global__ void wp_keep_count(const cpx *__restrict__ coeffs, long long n, u64 *st, int pass,
                                         int vbits, int ibits)
{
    __shared__ unsigned h[256];
    sel_clear(h);
    const SelPrefix p = sel_prefix(st);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const cpx z = coeffs[i];
        unsigned d;
        if (sel_digit(p, norm_sqr_bits(z.re, z.im), (u64)(n - 1 - i), pass, vbits, ibits, &d))
            atomicAdd(&h[d], 1u);
    }
    sel_flush(h, st);
}

// Keep-largest, the end: every coefficient whose key lies below the selected one is zeroed
// (the selected key is the (n − s)-th smallest: the s largest stay).
extern "C" __global__ void wp_keep_apply(cpx *__restrict__ coeffs, long long n, const u64 *st)
{
    const u64 kv = st[SEL_V], ki = st[SEL_I];
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const cpx z = coeffs[i];
        const u64 v = norm_sqr_bits(z.re, z.im), ix = (u64)(n - 1 - i);
        if (v < kv || (v == kv && ix < ki)) {
            const cpx zero = {0, 0};
            coeffs[i] = zero;
        }
    }
}

// The noise estimate, one pass's counts: over the coefficients marked in `inside` (a bit per
// coefficient: the finest level's, packet norm > 0, the packet inside the data), the key
// |c|/‖ψ_b‖ as a double (magnitude as the host's, the quotient correctly rounded). Threads
// stride over the work elements (e of box j in work order is coefficient F_COEFF + k).
extern "C" __global__ void wp_noise_count(const cpx *__restrict__ coeffs, const unsigned *__restrict__ inside,
                                          const long long *__restrict__ table,
                                          const long long *__restrict__ work_start,
                                          const double *__restrict__ norms, int n_boxes,
                                          long long total, u64 *st, int pass)
{
    __shared__ unsigned h[256];
    sel_clear(h);
    const SelPrefix p = sel_prefix(st);
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        const int j = find_row(work_start, n_boxes, e);
        const long long i = table[j * BOX_FIELDS + F_COEFF] + (e - work_start[j]);
        if (!((inside[i >> 5] >> (i & 31)) & 1u))
            continue;
        const cpx z = coeffs[i];
        const double r = __ddiv_rn(magnitude(z.re, z.im), norms[j]);
        unsigned d;
        if (sel_digit(p, (u64)__double_as_longlong(r), 0, pass, 64, 0, &d))
            atomicAdd(&h[d], 1u);
    }
    sel_flush(h, st);
}

// Tiled volumes (src/wavepacket/cuda/tiled.rs). A tile of n1 × n2 × n3 samples (n in all)
// whose sample (0, 0, 0) is volume sample `at`, in a volume whose axis 2 and 3 strides are
// v1 and v12: tile sample (i1, i2, i3) is the volume's at + i1 + i2·v1 + i3·v12 while
// i1 < w1, i2 < w2 and i3 < w3 (the part inside the volume), 0 past the volume's end.
__device__ __forceinline__ bool tile_sample(long long i, long long at, long long v1, long long v12,
                                            long long w1, long long w2, long long w3, long long n1,
                                            long long n2, long long *v)
{
    long long i1 = i % n1, i2 = (i / n1) % n2, i3 = i / (n1 * n2);
    *v = at + i1 + i2 * v1 + i3 * v12;
    return i1 < w1 && i2 < w2 && i3 < w3;
}

// The tile from the volume (`read_tile`): a copy, 0 past the volume's end.
extern "C" __global__ void wp_tile_cut(const REAL *__restrict__ volume, REAL *__restrict__ tile,
                                       long long at, long long v1, long long v12, long long w1,
                                       long long w2, long long w3, long long n1, long long n2,
                                       long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long v;
        tile[i] = tile_sample(i, at, v1, v12, w1, w2, w3, n1, n2, &v) ? volume[v] : (REAL)0;
    }
}

// The transpose (`write_tile`): the tile's samples inside the volume, copied there (the
// tiles do not overlap).
extern "C" __global__ void wp_tile_put(const REAL *__restrict__ tile, REAL *__restrict__ volume,
                                       long long at, long long v1, long long v12, long long w1,
                                       long long w2, long long w3, long long n1, long long n2,
                                       long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long v;
        if (tile_sample(i, at, v1, v12, w1, w2, w3, n1, n2, &v))
            volume[v] = tile[i];
    }
}

// A tiled volume's common grids (src/wavepacket/tiles.rs): per box (layout order) GRID_FIELDS
// long longs, below; per row of a box's grid (along axis 1) two: its first index Y1 and where
// it starts in the coefficient array. A tile's window: three offsets per box.
#define G_N1 0   // the box's shape
#define G_N2 1
#define G_N3 2
#define G_LO2 3  // the grid's first row index along axes 2 and 3
#define G_LO3 4
#define G_ROWS2 5 // rows along axis 2
#define G_ROW 6  // the box's first row in the row table
#define GRID_FIELDS 7

// The centred local index of y on an axis of length l: y, or y − l past the middle.
__device__ __forceinline__ long long centred_index(long long y, long long l)
{
    return y < l - l / 2 ? y : y - l;
}

// Where a tile's coefficient e (layout order; `first`: each box's first, n_boxes of them)
// lies on the common grids, its window at `offsets`.
__device__ __forceinline__ long long common_index(const long long *__restrict__ first,
                                                  const long long *__restrict__ grid,
                                                  const long long *__restrict__ rows,
                                                  const long long *__restrict__ offsets, int n_boxes,
                                                  long long e)
{
    int b = find_row(first, n_boxes, e);
    const long long *g = grid + (long long)b * GRID_FIELDS;
    const long long *o = offsets + 3LL * b;
    long long n1 = g[G_N1], n2 = g[G_N2], k = e - first[b];
    long long y1 = o[0] + centred_index(k % n1, n1);
    long long y2 = o[1] + centred_index((k / n1) % n2, n2);
    long long y3 = o[2] + centred_index(k / (n1 * n2), g[G_N3]);
    long long r = g[G_ROW] + (y2 - g[G_LO2]) + (y3 - g[G_LO3]) * g[G_ROWS2];
    return rows[2 * r + 1] + (y1 - rows[2 * r]);
}

// Adds a tile's coefficients e_lo ≤ e < e_hi (layout order) into a part of the common grids
// (`scatter`): `common` holds the grids' coefficients from `common_lo` on (all of them, or
// the part one GPU keeps). Within one tile every coefficient has its own place, so no two
// threads meet.
extern "C" __global__ void wp_tile_add(const cpx *__restrict__ local, cpx *__restrict__ common,
                                       const long long *__restrict__ first,
                                       const long long *__restrict__ grid,
                                       const long long *__restrict__ rows,
                                       const long long *__restrict__ offsets, int n_boxes,
                                       long long e_lo, long long e_hi, long long common_lo)
{
    for (long long e = e_lo + blockIdx.x * (long long)blockDim.x + threadIdx.x; e < e_hi;
         e += (long long)gridDim.x * blockDim.x) {
        long long i = common_index(first, grid, rows, offsets, n_boxes, e) - common_lo;
        cpx c = common[i], l = local[e];
        c.re = c.re + l.re;
        c.im = c.im + l.im;
        common[i] = c;
    }
}

// The transpose (`gather`): a tile's coefficients e_lo ≤ e < e_hi, copied from its window of
// a part of the common grids.
extern "C" __global__ void wp_tile_take(const cpx *__restrict__ common, cpx *__restrict__ local,
                                        const long long *__restrict__ first,
                                        const long long *__restrict__ grid,
                                        const long long *__restrict__ rows,
                                        const long long *__restrict__ offsets, int n_boxes,
                                        long long e_lo, long long e_hi, long long common_lo)
{
    for (long long e = e_lo + blockIdx.x * (long long)blockDim.x + threadIdx.x; e < e_hi;
         e += (long long)gridDim.x * blockDim.x)
        local[e] = common[common_index(first, grid, rows, offsets, n_boxes, e) - common_lo];
}
