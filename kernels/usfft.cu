// USFFT (non-uniform FFT) kernels: spreading (type 1), interpolation (type 2) and the
// deconvolution/copy between the mode array and the fine grid. cuFFT does the FFT.
//
// The prelude defines REAL (float or double), DIM (1, 2, 3), NSPREAD (kernel width w in
// cells), KERNEL_ES (1: exp(β(√(1−z²)−1)); 0: Gaussian exp(−βz²)), ES_FACTOR(x) and
// ES_MIRROR (= e^{−2β}) where the prolate kernel is (ES + its mirror in √(1−z²)) times a
// polynomial in x = 1 − 2z² (src/usfft/prolate.rs), ROW_TILE1 (the
// fastest-axis bin size of usfft_spread_rows) and ROW_MIN_BLOCKS (its launch bound's blocks
// per multiprocessor). Complex arrays are interleaved (re, im) REAL pairs. Points come
// sorted by bin (the counting sort at the end of this file):
// per dimension an integer first cell i0 and an offset d = i0 − g ∈ [−w/2, −w/2+1), so the
// weight of cell i0+k is φ((d+k)·2/w) and no kernel forms x·nf/2π in REAL arithmetic.
// A bin b of tile t starts at cell b·t − (w/2 + 1); its padded tile spans t + w − 1 cells.

#if DIM >= 2
#define IF2(x) x
#else
#define IF2(x)
#endif
#if DIM >= 3
#define IF3(x) x
#else
#define IF3(x)
#endif

#define SHIFT (NSPREAD / 2 + 1)

// φ(z), inlined: for loops that evaluate one value an iteration while sums are live in
// registers (a call would save and restore them around it).
__device__ __forceinline__ REAL phi_inline(REAL z, REAL beta)
{
#if KERNEL_ES
    REAL q = (REAL)1 - z * z;
    q = q > (REAL)0 ? q : (REAL)0;
    const REAL s = sqrt(q);
#ifdef ES_FACTOR
    // ES plus its mirror e^{−β(s+1)} = e^{−2β}/ES (even in s), times P(1 − 2z²). The mirror
    // is below e^{−β}, so a single-precision quotient (2 ulp, no IEEE division's slow path)
    // is exact enough in either precision; e ≥ e^{−β} and e^{−2β} stay normal floats.
    const REAL e = exp(beta * (s - (REAL)1));
    const REAL mirror = (REAL)__fdividef((float)ES_MIRROR, (float)e);
    return (e + mirror) * ES_FACTOR((REAL)1 - (REAL)2 * z * z);
#else
    return exp(beta * (s - (REAL)1));
#endif
#else
    return exp(-beta * z * z);
#endif
}

// φ(z); not inlined, so that each of the w unrolled weights is a call rather than a copy
// of exp (compile time grows with w × kernels otherwise).
__device__ __noinline__ REAL phi(REAL z, REAL beta)
{
    return phi_inline(z, beta);
}

__device__ __forceinline__ void weights(REAL d, REAL beta, REAL *k)
{
    const REAL s = (REAL)2 / (REAL)NSPREAD;
#pragma unroll
    for (int i = 0; i < NSPREAD; ++i)
        k[i] = phi((d + (REAL)i) * s, beta);
}

__device__ __forceinline__ int wrap(int i, int n)
{
    return i < 0 ? i + n : (i >= n ? i - n : i);
}

#define TWO_PI 6.283185307179586

// (i0, d) of coordinate x on nf cells, in double whatever REAL is (as points.rs on the
// host): g = frac(x/2π)·nf, i0 = ceil(g − w/2) shifted by a period so that i0 + SHIFT lies
// in [0, nf), d = i0 − g.
__device__ __forceinline__ int place(double x, int nf, double *d)
{
    const double t = x / TWO_PI;
    double g = (t - floor(t)) * (double)nf;
    if (g >= (double)nf)
        g -= (double)nf;
    int i0 = (int)ceil(g - (double)NSPREAD / 2.0);
    *d = (double)i0 - g;
    if (i0 + SHIFT >= nf)
        i0 -= nf;
    return i0;
}

// A coordinate in the radians the fine grid wraps at 2π: (x − c)·scale in double (the
// points' frame; c = 0, scale = 1 for types 1 and 2, whose coordinates are radians already;
// type 3 rescales its points and frequencies onto its grid as the host does, in f64).
#define FRAMED(x, c, scale) (((double)(x) - (c)) * (scale))

// Points on rotated lattices (set-points from lattices): point j of lattice l (the last l
// with first[l] <= j; first ascends from 0) is ξ = Σ_a t_a·(1/P_a) · e_a for t = lo + the
// local index k = j − first[l] cut by len (axis 1 fastest; fewer than 2^31 points a plan);
// its coordinate is 2π·ξ rounded to REAL. frame[12·l] holds the axes e_a row by row then
// the reciprocal periods 1/P_a, shape[6·l] lo then len. Each operation is rounded on its
// own in the host's order, so the coordinates are those the host computes
// (usfft/lattice.rs), bit for bit. n = 0: the points are stored instead.
#define LAT_FRAME 12
#define LAT_SHAPE 6
struct lattices {
    const double *frame;
    const long long *shape, *first;
    int n;
};

__device__ __forceinline__ void lattice_point(const lattices &L, long long j, REAL *x)
{
    int lo = 0, hi = L.n - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (L.first[mid] <= j)
            lo = mid;
        else
            hi = mid - 1;
    }
    const long long *s = L.shape + (long long)LAT_SHAPE * lo;
    const double *f = L.frame + (long long)LAT_FRAME * lo;
    const unsigned int k = (unsigned int)(j - L.first[lo]);
    const unsigned int n1 = (unsigned int)s[3], n2 = (unsigned int)s[4], r = k / n1;
    const long long t[3] = {s[0] + k % n1, s[1] + r % n2, s[2] + r / n2};
    double xi[3] = {0.0, 0.0, 0.0};
#pragma unroll
    for (int a = 0; a < 3; a++) {
        const double sa = __dmul_rn((double)t[a], f[9 + a]);
#pragma unroll
        for (int d = 0; d < 3; d++)
            xi[d] = __dadd_rn(xi[d], __dmul_rn(sa, f[3 * a + d]));
    }
#pragma unroll
    for (int d = 0; d < 3; d++)
        x[d] = (REAL)__dmul_rn(TWO_PI, xi[d]);
}

// The sorted points as the spreading and interpolation kernels take them: slot p is caller
// point perm[p]; its first cell i and offset d per dimension are stored (i1 … d3) or, for
// points on lattices, computed from the lattice point where they are used (no per-point
// storage but the permutation).
#define POINTS_PARAMS                                                                       \
    const int *__restrict__ perm, const int *__restrict__ i1, const int *__restrict__ i2,   \
        const int *__restrict__ i3, const REAL *__restrict__ d1, const REAL *__restrict__ d2, \
        const REAL *__restrict__ d3, const double *__restrict__ lat_frame,                  \
        const long long *__restrict__ lat_shape, const long long *__restrict__ lat_first,  \
        int n_lat
#define POINTS_OF_PARAMS {perm, i1, i2, i3, d1, d2, d3, {lat_frame, lat_shape, lat_first, n_lat}}
struct points {
    const int *perm;
    const int *i1, *i2, *i3;
    const REAL *d1, *d2, *d3;
    lattices lat;
};

// A sorted point's first cell and offset per dimension (unused dimensions: 0).
struct cell_offset {
    int i1, i2, i3;
    REAL d1, d2, d3;
};

// Not inlined: the lattice's arithmetic stays out of the register budget of the kernels'
// stencil loops.
__device__ __noinline__ cell_offset lattice_cell_offset(const lattices &L, long long j, int nf1,
                                                        int nf2, int nf3)
{
    (void)nf2; (void)nf3;
    cell_offset q = {0, 0, 0, (REAL)0, (REAL)0, (REAL)0};
    REAL x[3];
    lattice_point(L, j, x);
    double d;
    q.i1 = place((double)x[0], nf1, &d);
    q.d1 = (REAL)d;
    IF2(q.i2 = place((double)x[1], nf2, &d); q.d2 = (REAL)d;)
    IF3(q.i3 = place((double)x[2], nf3, &d); q.d3 = (REAL)d;)
    return q;
}

__device__ __forceinline__ cell_offset stored_at(const points &P, long long p)
{
    cell_offset q = {0, 0, 0, (REAL)0, (REAL)0, (REAL)0};
    q.i1 = P.i1[p];
    q.d1 = P.d1[p];
    IF2(q.i2 = P.i2[p]; q.d2 = P.d2[p];)
    IF3(q.i3 = P.i3[p]; q.d3 = P.d3[p];)
    return q;
}

__device__ __forceinline__ cell_offset point_at(const points &P, long long p, int nf1, int nf2,
                                                int nf3)
{
    if (P.lat.n != 0)
        return lattice_cell_offset(P.lat, P.perm[p], nf1, nf2, nf3);
    return stored_at(P, p);
}

// Warp-cooperative stencils: one warp per point. Lane l covers the fastest-axis tap
// a1 = l % NSPREAD of rows l / NSPREAD, + LANE_ROWS, ... of the point's NSPREAD^(DIM−1) rows
// (row r: a2 = r % NSPREAD, a3 = r / NSPREAD); lanes ≥ LANE_ROWS·NSPREAD idle. Each lane
// evaluates φ once per dimension (at its own index), so a point costs w·DIM kernel values,
// shared with shuffles, and the lanes of a warp touch distinct cells.
#define LANE_ROWS (32 / NSPREAD)
#if DIM == 3
#define ROWS (NSPREAD * NSPREAD)
#elif DIM == 2
#define ROWS NSPREAD
#else
#define ROWS 1
#endif
#define PASSES ((ROWS + LANE_ROWS - 1) / LANE_ROWS)

// The weight of row r (a2, a3) from the lanes' per-dimension values k2, k3 (all lanes call).
__device__ __forceinline__ REAL row_weight(int r, REAL k2, REAL k3)
{
    (void)k2; (void)k3;
#if DIM == 3
    return __shfl_sync(0xffffffffu, k2, r % NSPREAD) * __shfl_sync(0xffffffffu, k3, r / NSPREAD);
#elif DIM == 2
    return __shfl_sync(0xffffffffu, k2, r);
#else
    (void)r;
    return (REAL)1;
#endif
}

// Type 1, shared-memory subproblems: one block per bin, one warp per point. For each vector
// the block zeroes its padded tile (real and imaginary planes), adds every point of the bin
// (shared atomics, conflict-free within a warp), then adds the tile into the fine grid with
// one global atomic per non-zero cell.
extern "C" __global__ void __launch_bounds__(256) usfft_spread_sm(
    const unsigned int *__restrict__ bin_start, POINTS_PARAMS,
    const REAL *__restrict__ c, REAL *__restrict__ grid, long long m, int nvec,
    int nf1, int nf2, int nf3, int t1, int t2, int t3, int nb1, int nb2, REAL beta)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int b = blockIdx.x;
    const int start = (int)bin_start[b], end = (int)bin_start[b + 1];
    if (start == end)
        return;
    const int b1 = b % nb1, b2 = (b / nb1) % nb2, b3 = b / (nb1 * nb2);
    const int p1 = t1 + NSPREAD - 1;
    const int p2 = DIM >= 2 ? t2 + NSPREAD - 1 : 1;
    const int p3 = DIM >= 3 ? t3 + NSPREAD - 1 : 1;
    const int cells = p1 * p2 * p3;
    REAL *tre = (REAL *)smem_raw;
    REAL *tim = tre + cells;
    const int o1 = b1 * t1 - SHIFT;
    const int o2 = DIM >= 2 ? b2 * t2 - SHIFT : 0;
    const int o3 = DIM >= 3 ? b3 * t3 - SHIFT : 0;
    const long long nft = (long long)nf1 * nf2 * nf3;
    (void)b2; (void)b3; (void)o2; (void)o3;
    const points P = POINTS_OF_PARAMS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int a1 = lane % NSPREAD, lrow = lane / NSPREAD;
    const bool active = lrow < LANE_ROWS;
    const REAL s = (REAL)2 / (REAL)NSPREAD;
    for (int v = 0; v < nvec; ++v) {
        for (int i = threadIdx.x; i < 2 * cells; i += blockDim.x)
            tre[i] = (REAL)0;
        __syncthreads();
        for (int p = start + warp; p < end; p += warps) {
            const cell_offset pt = point_at(P, p, nf1, nf2, nf3);
            const REAL k1 = phi((pt.d1 + (REAL)a1) * s, beta);
            REAL k2 = 0, k3 = 0;
            IF2(k2 = phi((pt.d2 + (REAL)lane) * s, beta);)
            IF3(k3 = phi((pt.d3 + (REAL)lane) * s, beta);)
            const int l1 = pt.i1 - o1 + a1;
            IF2(const int l2 = pt.i2 - o2;)
            IF3(const int l3 = pt.i3 - o3;)
            const long long j = (long long)v * m + perm[p];
            const REAL cr = c[2 * j] * k1, ci = c[2 * j + 1] * k1;
#pragma unroll 4
            for (int q = 0; q < PASSES; ++q) {
                const int r = q * LANE_ROWS + lrow;
                const REAL w = row_weight(r < ROWS ? r : 0, k2, k3);
                if (active && r < ROWS) {
                    int cell = l1;
#if DIM == 3
                    cell += ((l3 + r / NSPREAD) * p2 + l2 + r % NSPREAD) * p1;
#elif DIM == 2
                    cell += (l2 + r) * p1;
#endif
                    atomicAdd(tre + cell, cr * w);
                    atomicAdd(tim + cell, ci * w);
                }
            }
        }
        __syncthreads();
        REAL *g = grid + 2 * (long long)v * nft;
        for (int i = threadIdx.x; i < cells; i += blockDim.x) {
            const REAL re = tre[i], im = tim[i];
            if (re == (REAL)0 && im == (REAL)0)
                continue;
            const int j1 = i % p1;
            long long cell = wrap(o1 + j1, nf1);
#if DIM >= 2
            const int j2 = (i / p1) % p2;
            cell += (long long)nf1 * wrap(o2 + j2, nf2);
#endif
#if DIM >= 3
            const int j3 = i / (p1 * p2);
            cell += (long long)nf1 * nf2 * wrap(o3 + j3, nf3);
#endif
            atomicAdd(g + 2 * cell, re);
            atomicAdd(g + 2 * cell + 1, im);
        }
        __syncthreads();
    }
}

// Type 1, register rows (DIM >= 2): one block per bin of ROW_TILE1 x t2 [x t3] cells, one
// thread per row (a2, a3) of its padded tile, holding the row's ROW_CELLS complex sums in
// registers: no atomics while spreading. The points of the bin are staged ROW_BATCH at a time
// in shared memory with their w kernel values per dimension. A warp first keeps the points
// whose stencil reaches one of its rows (a ballot per 32 points); a thread whose row is in a
// point's w x w stencil adds the point to the w cells from the point's first (the warp's
// other lanes add zeros rather than branch), which is the same for the whole block, so a
// switch on it (taps_at) keeps the sums in registers and adds only the w non-zero taps. Each thread then adds its row into the fine grid (one atomic
// per cell; a pair of floats in one operation where the GPU has it). ROW_TILE1 comes from the
// prelude (src/usfft/cuda/prelude.rs).
#define ROW_CELLS (ROW_TILE1 + NSPREAD - 1)
// A point's fastest-axis taps, padded to whole 16-byte words so that their reads vectorise.
#define TAP_STRIDE ((NSPREAD + 3) & ~3)
#define ROW_BATCH 64
#define ROW_THREADS_MAX 512
#if ROW_TILE1 != 8 && ROW_TILE1 != 16
#error "taps_at's switch covers ROW_TILE1 = 8 and 16"
#endif

__device__ __forceinline__ void add_pair(float *g, float re, float im)
{
#if __CUDA_ARCH__ >= 900
    atomicAdd((float2 *)g, make_float2(re, im));
#else
    atomicAdd(g, re);
    atomicAdd(g + 1, im);
#endif
}

__device__ __forceinline__ void add_pair(double *g, double re, double im)
{
    atomicAdd(g, re);
    atomicAdd(g + 1, im);
}

// Adds (wr, wi)·k[i] into cells C + i of a register row: C is a constant, so the row stays in
// registers.
template <int C>
__device__ __forceinline__ void add_taps(REAL (&ar)[ROW_CELLS], REAL (&ai)[ROW_CELLS],
                                         const REAL *__restrict__ k, REAL wr, REAL wi)
{
#pragma unroll
    for (int i = 0; i < NSPREAD; ++i) {
        ar[C + i] += wr * k[i];
        ai[C + i] += wi * k[i];
    }
}

#define TAPS_CASE(C)                                                                        \
    case C:                                                                                 \
        add_taps<C>(ar, ai, k, wr, wi);                                                     \
        break;

// The point's taps into a register row from its first cell l1 ∈ [0, ROW_TILE1).
__device__ __forceinline__ void taps_at(int l1, REAL (&ar)[ROW_CELLS], REAL (&ai)[ROW_CELLS],
                                        const REAL *__restrict__ k, REAL wr, REAL wi)
{
    switch (l1) {
        TAPS_CASE(0) TAPS_CASE(1) TAPS_CASE(2) TAPS_CASE(3)
        TAPS_CASE(4) TAPS_CASE(5) TAPS_CASE(6) TAPS_CASE(7)
#if ROW_TILE1 > 8
        TAPS_CASE(8) TAPS_CASE(9) TAPS_CASE(10) TAPS_CASE(11)
        TAPS_CASE(12) TAPS_CASE(13) TAPS_CASE(14) TAPS_CASE(15)
#endif
    default:
        break;
    }
}

// Adds a register row into the fine grid's row `row` from cell o1 on (wrapped), skipping zero
// cells. In f32 on sm_90 and an even fine grid, cells o1 + j with o1 + j even pair with the
// next one in one 16-byte atomic (o1 ≡ −SHIFT mod 2, ROW_TILE1 being even: the pairing is
// known at compile time; an even cell and its successor never straddle the wrap and are
// 16-byte aligned): half the grid's atomics.
__device__ __forceinline__ void flush_row(const REAL (&ar)[ROW_CELLS], const REAL (&ai)[ROW_CELLS],
                                          REAL *g, long long row, int o1, int nf1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (sizeof(REAL) == 4 && (nf1 & 1) == 0) {
#pragma unroll
        for (int j = 0; j < ROW_CELLS; ++j) {
            const bool leads = ((j - SHIFT) & 1) == 0;
            if (leads && j + 1 < ROW_CELLS) {
                if (ar[j] != (REAL)0 || ai[j] != (REAL)0 || ar[j + 1] != (REAL)0 || ai[j + 1] != (REAL)0)
                    atomicAdd((float4 *)(g + 2 * (row + wrap(o1 + j, nf1))),
                              make_float4(ar[j], ai[j], ar[j + 1], ai[j + 1]));
            } else if (leads || j == 0) {
                if (ar[j] != (REAL)0 || ai[j] != (REAL)0)
                    add_pair(g + 2 * (row + wrap(o1 + j, nf1)), ar[j], ai[j]);
            }
        }
        return;
    }
#endif
#pragma unroll
    for (int j = 0; j < ROW_CELLS; ++j)
        if (ar[j] != (REAL)0 || ai[j] != (REAL)0)
            add_pair(g + 2 * (row + wrap(o1 + j, nf1)), ar[j], ai[j]);
}

#define SPREAD_ROWS_PARAMS                                                                  \
    const unsigned int *__restrict__ bin_start, POINTS_PARAMS, const REAL *__restrict__ c,  \
        REAL *__restrict__ grid, long long m, int nvec, int nf1, int nf2, int nf3, int t1,  \
        int t2, int t3, int nb1, int nb2, REAL beta
#define SPREAD_ROWS_ARGS                                                                    \
    bin_start, perm, i1, i2, i3, d1, d2, d3, lat_frame, lat_shape, lat_first, n_lat, c, grid, \
        m, nvec, nf1, nf2, nf3, t1, t2, t3, nb1, nb2, beta

// The body of usfft_spread_rows (stored points) and usfft_spread_rows_lattice (lattice
// points, placed from the lattice where they are staged).
template <bool lat>
__device__ __forceinline__ void spread_rows(SPREAD_ROWS_PARAMS)
{
    __shared__ __align__(16) REAL s_k1[ROW_BATCH][TAP_STRIDE];
    __shared__ REAL s_k2[ROW_BATCH][NSPREAD];
    IF3(__shared__ REAL s_k3[ROW_BATCH][NSPREAD];)
    __shared__ REAL s_cr[ROW_BATCH], s_ci[ROW_BATCH];
    __shared__ int s_l1[ROW_BATCH], s_l2[ROW_BATCH], s_l3[ROW_BATCH];
    __shared__ REAL s_d1[ROW_BATCH], s_d2[ROW_BATCH];
    IF3(__shared__ REAL s_d3[ROW_BATCH];)
    const int b = blockIdx.x;
    const int start = (int)bin_start[b], end = (int)bin_start[b + 1];
    if (start == end)
        return;
    (void)t3;
    const points P = POINTS_OF_PARAMS;
    const int b1 = b % nb1, b2 = (b / nb1) % nb2, b3 = b / (nb1 * nb2);
    const int p2 = t2 + NSPREAD - 1;
    const int p3 = DIM >= 3 ? t3 + NSPREAD - 1 : 1;
    const int o1 = b1 * t1 - SHIFT, o2 = b2 * t2 - SHIFT; // t1 = ROW_TILE1
    const int o3 = DIM >= 3 ? b3 * t3 - SHIFT : 0;
    const int a2 = threadIdx.x % p2, a3 = threadIdx.x / p2;
    const bool mine = (int)threadIdx.x < p2 * p3;
    // a2, or past every stencil for a thread without a row.
    const int r2 = mine ? a2 : 1 << 20;
    // The rows of this thread's warp along the axis that splits them: the slowest one whose
    // index changes within the warp (3D: a3, 2D: a2).
    const int first = threadIdx.x & ~31, last = min(first + 31, p2 * p3 - 1);
    const int lo = DIM >= 3 ? first / p2 : first, hi = DIM >= 3 ? last / p2 : last;
    const REAL s = (REAL)2 / (REAL)NSPREAD;
    const long long nft = (long long)nf1 * nf2 * nf3;
    // A vector per blockIdx.y (a loop only past the grid's y limit).
    for (int v = blockIdx.y; v < nvec; v += gridDim.y) {
        const REAL *__restrict__ cv = c + 2 * (long long)v * m;
        REAL ar[ROW_CELLS], ai[ROW_CELLS];
#pragma unroll
        for (int j = 0; j < ROW_CELLS; ++j)
            ar[j] = ai[j] = (REAL)0;
        for (int base = start; base < end; base += ROW_BATCH) {
            const int nb = min(ROW_BATCH, end - base);
            __syncthreads();
            // Each point's first cells (relative to the padded tile), offsets and strength.
            for (int q = threadIdx.x; q < nb; q += blockDim.x) {
                const int p = base + q;
                const cell_offset pt = lat ? lattice_cell_offset(P.lat, perm[p], nf1, nf2, nf3)
                                           : stored_at(P, p);
                s_l1[q] = pt.i1 - o1;
                s_l2[q] = pt.i2 - o2;
                s_l3[q] = DIM >= 3 ? pt.i3 - o3 : 0;
                s_d1[q] = pt.d1;
                s_d2[q] = pt.d2;
                IF3(s_d3[q] = pt.d3;)
                const long long j = perm[p];
                s_cr[q] = cv[2 * j];
                s_ci[q] = cv[2 * j + 1];
            }
            __syncthreads();
            // The kernel values, w per dimension.
            for (int e = threadIdx.x; e < nb * NSPREAD; e += blockDim.x) {
                const int q = e / NSPREAD, k = e - q * NSPREAD;
                s_k1[q][k] = phi_inline((s_d1[q] + (REAL)k) * s, beta);
                s_k2[q][k] = phi_inline((s_d2[q] + (REAL)k) * s, beta);
                IF3(s_k3[q][k] = phi_inline((s_d3[q] + (REAL)k) * s, beta);)
            }
            __syncthreads();
            for (int q0 = 0; q0 < nb; q0 += 32) {
                // The points of these 32 whose stencil reaches this warp's rows.
                const int ql = q0 + (threadIdx.x & 31);
                const int l = ql < nb ? (DIM >= 3 ? s_l3[ql] : s_l2[ql]) : hi + 1;
                unsigned int hits = __ballot_sync(0xffffffffu, l <= hi && l + NSPREAD > lo);
                while (hits) {
                    const int q = q0 + __ffs(hits) - 1;
                    hits &= hits - 1;
                    // Every lane runs the taps (the warp would anyway); a lane whose row is
                    // not in the point's stencil adds zeros.
                    const unsigned int k2 = (unsigned int)(r2 - s_l2[q]);
                    const unsigned int k3 = (unsigned int)(a3 - s_l3[q]);
                    const bool in = k2 < NSPREAD && k3 < NSPREAD;
                    REAL wgt = s_k2[q][in ? k2 : 0];
                    IF3(wgt *= s_k3[q][in ? k3 : 0];)
                    wgt = in ? wgt : (REAL)0;
                    taps_at(s_l1[q], ar, ai, s_k1[q], s_cr[q] * wgt, s_ci[q] * wgt);
                }
            }
        }
        if (mine)
            flush_row(ar, ai, grid + 2 * (long long)v * nft,
                      (long long)nf1 * (wrap(o2 + a2, nf2) + (long long)nf2 * wrap(o3 + a3, nf3)),
                      o1, nf1);
    }
}

extern "C" __global__ void __launch_bounds__(ROW_THREADS_MAX, ROW_MIN_BLOCKS)
    usfft_spread_rows(SPREAD_ROWS_PARAMS)
{
    spread_rows<false>(SPREAD_ROWS_ARGS);
}

extern "C" __global__ void __launch_bounds__(ROW_THREADS_MAX, ROW_MIN_BLOCKS)
    usfft_spread_rows_lattice(SPREAD_ROWS_PARAMS)
{
    spread_rows<true>(SPREAD_ROWS_ARGS);
}

// Type 1 fallback when a padded tile does not fit in shared memory: one thread per sorted
// point, global atomics (neighbouring threads hit neighbouring cells: the sort keeps them
// in L2).
extern "C" __global__ void __launch_bounds__(256) usfft_spread_gm(
    POINTS_PARAMS,
    const REAL *__restrict__ c, REAL *__restrict__ grid, long long m, int nvec,
    int nf1, int nf2, int nf3, REAL beta)
{
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= m)
        return;
    const points P = POINTS_OF_PARAMS;
    const cell_offset pt = point_at(P, p, nf1, nf2, nf3);
    REAL k1[NSPREAD];
    int c1[NSPREAD];
    weights(pt.d1, beta, k1);
#pragma unroll
    for (int a = 0; a < NSPREAD; ++a)
        c1[a] = wrap(pt.i1 + a, nf1);
    IF2(REAL k2[NSPREAD]; weights(pt.d2, beta, k2); const int s2 = pt.i2;)
    IF3(REAL k3[NSPREAD]; weights(pt.d3, beta, k3); const int s3 = pt.i3;)
    const long long nft = (long long)nf1 * nf2 * nf3;
    for (int v = 0; v < nvec; ++v) {
        const long long j = (long long)v * m + perm[p];
        const REAL cr = c[2 * j], ci = c[2 * j + 1];
        REAL *g = grid + 2 * (long long)v * nft;
#if DIM == 3
        for (int a3 = 0; a3 < NSPREAD; ++a3) {
            const long long z = (long long)wrap(s3 + a3, nf3) * nf2;
            for (int a2 = 0; a2 < NSPREAD; ++a2) {
                const REAL s = k3[a3] * k2[a2];
                const long long row = (z + wrap(s2 + a2, nf2)) * nf1;
                for (int a1 = 0; a1 < NSPREAD; ++a1) {
                    atomicAdd(g + 2 * (row + c1[a1]), cr * s * k1[a1]);
                    atomicAdd(g + 2 * (row + c1[a1]) + 1, ci * s * k1[a1]);
                }
            }
        }
#elif DIM == 2
        for (int a2 = 0; a2 < NSPREAD; ++a2) {
            const long long row = (long long)wrap(s2 + a2, nf2) * nf1;
            for (int a1 = 0; a1 < NSPREAD; ++a1) {
                atomicAdd(g + 2 * (row + c1[a1]), cr * k2[a2] * k1[a1]);
                atomicAdd(g + 2 * (row + c1[a1]) + 1, ci * k2[a2] * k1[a1]);
            }
        }
#else
        for (int a1 = 0; a1 < NSPREAD; ++a1) {
            atomicAdd(g + 2 * c1[a1], cr * k1[a1]);
            atomicAdd(g + 2 * c1[a1] + 1, ci * k1[a1]);
        }
#endif
    }
}

// Type 2: one warp per sorted point gathers its w^DIM cells (lanes as in spreading, rows
// read as contiguous runs), reduces across the warp, and lane 0 writes the value at the
// caller's index of the point; every vector of the batch in turn.
extern "C" __global__ void __launch_bounds__(256) usfft_interp(
    POINTS_PARAMS,
    const REAL *__restrict__ grid, REAL *__restrict__ c, long long m, int nvec,
    int nf1, int nf2, int nf3, REAL beta)
{
    const long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (p >= m)
        return;
    const points P = POINTS_OF_PARAMS;
    const cell_offset pt = point_at(P, p, nf1, nf2, nf3);
    const int lane = threadIdx.x & 31;
    const int a1 = lane % NSPREAD, lrow = lane / NSPREAD;
    const bool active = lrow < LANE_ROWS;
    const REAL s = (REAL)2 / (REAL)NSPREAD;
    const REAL k1 = phi((pt.d1 + (REAL)a1) * s, beta);
    REAL k2 = 0, k3 = 0;
    IF2(k2 = phi((pt.d2 + (REAL)lane) * s, beta); const int s2 = pt.i2;)
    IF3(k3 = phi((pt.d3 + (REAL)lane) * s, beta); const int s3 = pt.i3;)
    const int c1 = wrap(pt.i1 + a1, nf1);
    const long long nft = (long long)nf1 * nf2 * nf3;
    const int dest = perm[p];
    for (int v = 0; v < nvec; ++v) {
        const REAL *g = grid + 2 * (long long)v * nft;
        REAL sr = 0, si = 0;
#pragma unroll 4
        for (int q = 0; q < PASSES; ++q) {
            const int r = q * LANE_ROWS + lrow;
            const REAL w = row_weight(r < ROWS ? r : 0, k2, k3);
            if (active && r < ROWS) {
                long long cell = c1;
#if DIM == 3
                cell += ((long long)wrap(s3 + r / NSPREAD, nf3) * nf2 + wrap(s2 + r % NSPREAD, nf2)) * nf1;
#elif DIM == 2
                cell += (long long)wrap(s2 + r, nf2) * nf1;
#endif
                sr += g[2 * cell] * w;
                si += g[2 * cell + 1] * w;
            }
        }
        sr *= k1;
        si *= k1;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            sr += __shfl_down_sync(0xffffffffu, sr, o);
            si += __shfl_down_sync(0xffffffffu, si, o);
        }
        if (lane == 0) {
            const long long j = (long long)v * m + dest;
            c[2 * j] = sr;
            c[2 * j + 1] = si;
        }
    }
}

// Type 2 for wide kernels (w > 10, where a warp covers only one or two rows per pass): one
// thread per sorted point gathers its w^DIM cells for every vector and writes the result at
// the caller's index of the point. Its w values per dimension come from weights().
extern "C" __global__ void __launch_bounds__(256) usfft_interp_thread(
    POINTS_PARAMS,
    const REAL *__restrict__ grid, REAL *__restrict__ c, long long m, int nvec,
    int nf1, int nf2, int nf3, REAL beta)
{
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= m)
        return;
    const points P = POINTS_OF_PARAMS;
    const cell_offset pt = point_at(P, p, nf1, nf2, nf3);
    REAL k1[NSPREAD];
    int c1[NSPREAD];
    weights(pt.d1, beta, k1);
#pragma unroll
    for (int a = 0; a < NSPREAD; ++a)
        c1[a] = wrap(pt.i1 + a, nf1);
    IF2(REAL k2[NSPREAD]; weights(pt.d2, beta, k2); const int s2 = pt.i2;)
    IF3(REAL k3[NSPREAD]; weights(pt.d3, beta, k3); const int s3 = pt.i3;)
    const long long nft = (long long)nf1 * nf2 * nf3;
    const int dest = perm[p];
    for (int v = 0; v < nvec; ++v) {
        const REAL *g = grid + 2 * (long long)v * nft;
        REAL sr = 0, si = 0;
#if DIM == 3
        for (int a3 = 0; a3 < NSPREAD; ++a3) {
            const long long z = (long long)wrap(s3 + a3, nf3) * nf2;
            for (int a2 = 0; a2 < NSPREAD; ++a2) {
                const long long row = (z + wrap(s2 + a2, nf2)) * nf1;
                REAL rr = 0, ri = 0;
#pragma unroll
                for (int a1 = 0; a1 < NSPREAD; ++a1) {
                    rr += g[2 * (row + c1[a1])] * k1[a1];
                    ri += g[2 * (row + c1[a1]) + 1] * k1[a1];
                }
                const REAL s = k3[a3] * k2[a2];
                sr += rr * s;
                si += ri * s;
            }
        }
#elif DIM == 2
        for (int a2 = 0; a2 < NSPREAD; ++a2) {
            const long long row = (long long)wrap(s2 + a2, nf2) * nf1;
            REAL rr = 0, ri = 0;
#pragma unroll
            for (int a1 = 0; a1 < NSPREAD; ++a1) {
                rr += g[2 * (row + c1[a1])] * k1[a1];
                ri += g[2 * (row + c1[a1]) + 1] * k1[a1];
            }
            sr += rr * k2[a2];
            si += ri * k2[a2];
        }
#else
#pragma unroll
        for (int a1 = 0; a1 < NSPREAD; ++a1) {
            sr += g[2 * c1[a1]] * k1[a1];
            si += g[2 * c1[a1] + 1] * k1[a1];
        }
#endif
        const long long j = (long long)v * m + dest;
        c[2 * j] = sr;
        c[2 * j + 1] = si;
    }
}

// Type 2 from shared memory: the sorted points are cut into chunks of `chunk` points, one
// block per chunk. For each bin its chunk touches, the block stages the bin's padded tile
// (tile + w − 1 cells per dimension, the wrap applied once per cell) in shared memory, then
// IL lanes per point gather its w^DIM cells: lane l takes the fastest-axis taps
// a1 = l % 8, l % 8 + 8, … and, with INTERP_SPLIT = 2, every other plane (3D) or row (2D)
// from l / 8. So the 8 lanes of one shared-memory request phase (16-byte f64 cells) or the
// 16 (8-byte f32 cells) read one contiguous row, or two rows `pitch` cells apart with
// pitch ≡ 8 (mod 16): no bank conflicts. The kernel values are evaluated once per tap and
// dimension across the lanes and shared with shuffles. Chunks bound the work per block
// however the points cluster; a bin's tile is read from global memory once per chunk that
// touches it.
struct __align__(2 * sizeof(REAL)) cplx {
    REAL re, im;
};

#define IL (8 * INTERP_SPLIT)
// Kernel values a lane evaluates per dimension (taps l, l + IL, …).
#define IV ((NSPREAD + IL - 1) / IL)

// Lane `sub` of a point's IL lanes: the kernel values of its taps sub, sub + IL, … for the
// point's offset e along one axis.
__device__ __forceinline__ void lane_taps(REAL e, int sub, REAL beta, REAL *v)
{
    const REAL s = (REAL)2 / (REAL)NSPREAD;
#pragma unroll
    for (int j = 0; j < IV; ++j)
        v[j] = sub + j * IL < NSPREAD ? phi_inline((e + (REAL)(sub + j * IL)) * s, beta) : (REAL)0;
}

// All w kernel values along one axis in every lane of the point, from the lanes' own taps
// (every lane of the warp must call).
__device__ __forceinline__ void all_taps(REAL e, int sub, REAL beta, REAL *k)
{
    REAL v[IV];
    lane_taps(e, sub, beta, v);
#pragma unroll
    for (int a = 0; a < NSPREAD; ++a)
        k[a] = __shfl_sync(0xffffffffu, v[a / IL], a % IL, IL);
}

#define INTERP_SM_PARAMS                                                                    \
    const unsigned int *__restrict__ bin_start, long long n_bins, POINTS_PARAMS,            \
        const REAL *__restrict__ grid, REAL *__restrict__ c, long long m, int nvec, int nf1, \
        int nf2, int nf3, int t1, int t2, int t3, int nb1, int nb2, int chunk, int pitch,   \
        REAL beta
#define INTERP_SM_ARGS                                                                      \
    bin_start, n_bins, perm, i1, i2, i3, d1, d2, d3, lat_frame, lat_shape, lat_first, n_lat, \
        grid, c, m, nvec, nf1, nf2, nf3, t1, t2, t3, nb1, nb2, chunk, pitch, beta

// The body of usfft_interp_sm (stored points) and usfft_interp_sm_lattice.
template <bool lat>
__device__ __forceinline__ void interp_sm(INTERP_SM_PARAMS)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    cplx *tile = reinterpret_cast<cplx *>(smem_raw);
    (void)nf2; (void)nf3; (void)t2; (void)t3;
    (void)nb1; (void)nb2; (void)pitch;
    const points P = POINTS_OF_PARAMS;
    const int T1 = t1 + NSPREAD - 1;
    const int T2 = DIM >= 2 ? t2 + NSPREAD - 1 : 1;
    const int T3 = DIM >= 3 ? t3 + NSPREAD - 1 : 1;
    // Cells between rows and between planes of the staged tile.
    const int R1 = DIM == 2 ? pitch : T1;
    const int PL = DIM == 3 ? pitch : R1 * T2;
    (void)PL;
    // Points on lattices: a block's worth at a time placed by one thread each into a stage
    // after the tile (its cells, slices `pitch` apart; the host sized the shared memory for
    // both), rather than by each of a point's IL lanes. d per dimension, then i.
    const int extent = DIM == 3 ? T3 * PL : (DIM == 2 ? T2 * R1 : T1);
    REAL *st_d = reinterpret_cast<REAL *>(smem_raw + ((extent * sizeof(cplx) + 15) & ~(size_t)15));
    int *st_i = reinterpret_cast<int *>(st_d + 3 * blockDim.x);
    const long long first = (long long)blockIdx.x * chunk;
    const long long last = first + chunk < m ? first + chunk : m;
    if (first >= last)
        return;
    // The bin holding the chunk's first point: the last b with bin_start[b] ≤ first.
    long long lo = 0, hi = n_bins;
    while (hi - lo > 1) {
        const long long mid = (lo + hi) >> 1;
        if ((long long)bin_start[mid] <= first)
            lo = mid;
        else
            hi = mid;
    }
    long long b = lo;
    const int group = threadIdx.x / IL, sub = threadIdx.x % IL;
    const int groups = blockDim.x / IL;
    const int r1 = sub & 7, part = sub >> 3;
    (void)part;
    const long long nft = (long long)nf1 * nf2 * nf3;
    for (int v = 0; v < nvec; ++v) {
        const cplx *g = reinterpret_cast<const cplx *>(grid) + (long long)v * nft;
        long long p0 = first, bb = b;
        while (p0 < last) {
            while ((long long)bin_start[bb + 1] <= p0)
                ++bb;
            const long long seg_end = bin_start[bb + 1] < last ? (long long)bin_start[bb + 1] : last;
            // The bin's origin cell per dimension (bins numbered dimension 1 fastest).
            const int o1 = (int)(bb % nb1) * t1 - SHIFT;
#if DIM >= 2
            const int o2 = (int)((bb / nb1) % nb2) * t2 - SHIFT;
#endif
#if DIM >= 3
            const int o3 = (int)(bb / ((long long)nb1 * nb2)) * t3 - SHIFT;
#endif
            __syncthreads(); // the previous segment's reads are done
            {
                // The tile's cells in order, blockDim.x apart: each thread steps its
                // (j1, j2, j3) on by the block's size in the tile's mixed radix, so that a
                // cell costs no division.
                const int bs = blockDim.x;
                const int s1 = bs % T1, s2 = (bs / T1) % T2, s3 = bs / (T1 * T2);
                int j1 = threadIdx.x % T1, j2 = (threadIdx.x / T1) % T2, j3 = threadIdx.x / (T1 * T2);
                while (j3 < T3) {
                    long long cell = wrap(o1 + j1, nf1);
                    int at = j1;
#if DIM >= 2
                    cell += (long long)wrap(o2 + j2, nf2) * nf1;
                    at += j2 * R1;
#endif
#if DIM >= 3
                    cell += (long long)wrap(o3 + j3, nf3) * nf2 * nf1;
                    at += j3 * PL;
#endif
                    tile[at] = g[cell];
                    j1 += s1;
                    const int c1 = j1 >= T1;
                    j1 -= c1 ? T1 : 0;
                    j2 += s2 + c1;
                    const int c2 = j2 >= T2;
                    j2 -= c2 ? T2 : 0;
                    j3 += s3 + c2;
                }
            }
            __syncthreads();
            // Stored points: the segment in one batch; on lattices, blockDim.x at a time.
            for (long long b0 = p0; b0 < seg_end; b0 += lat ? blockDim.x : seg_end - p0) {
                const long long b_end = lat && b0 + blockDim.x < seg_end ? b0 + blockDim.x : seg_end;
                if (lat) {
                    if (b0 > p0)
                        __syncthreads(); // the previous batch's reads are done
                    const long long pp = b0 + threadIdx.x;
                    if (pp < b_end) {
                        const cell_offset c = lattice_cell_offset(P.lat, perm[pp], nf1, nf2, nf3);
                        const int n = blockDim.x, at = threadIdx.x;
                        st_d[at] = c.d1;
                        st_d[n + at] = c.d2;
                        st_d[2 * n + at] = c.d3;
                        st_i[at] = c.i1;
                        st_i[n + at] = c.i2;
                        st_i[2 * n + at] = c.i3;
                    }
                    __syncthreads();
                }
                for (long long base = b0; base < b_end; base += groups) {
                    const long long p = base + group;
                    const bool on = p < b_end;
                    // Lanes past the batch's end work on its first point (their sums are
                    // dropped) so that every lane takes part in the shuffles.
                    const long long q = on ? p : base;
                    cell_offset pt;
                    if (lat) {
                        const int n = blockDim.x, at = (int)(q - b0);
                        pt = {st_i[at], st_i[n + at], st_i[2 * n + at],
                              st_d[at], st_d[n + at], st_d[2 * n + at]};
                    } else {
                        pt = stored_at(P, q);
                    }
                    REAL v1[IV];
                    lane_taps(pt.d1, sub, beta, v1);
#if DIM >= 2
                    REAL k2[NSPREAD];
                    all_taps(pt.d2, sub, beta, k2);
                    const int l2 = pt.i2 - o2;
#endif
#if DIM == 3
                    REAL k3[NSPREAD];
                    all_taps(pt.d3, sub, beta, k3);
                    const int l3 = pt.i3 - o3;
#endif
                    const int l1 = pt.i1 - o1;
                    REAL sr = 0, si = 0;
#pragma unroll
                    for (int pass = 0; pass < (NSPREAD + 7) / 8; ++pass) {
                        const int a1 = r1 + 8 * pass;
                        // Tap a1 is held by lane a1 % IL as its value (8·pass) / IL.
                        const REAL w1 = __shfl_sync(0xffffffffu, v1[(8 * pass) / IL], a1 % IL, IL);
                        if (on && a1 < NSPREAD) {
                            const cplx *col = tile + l1 + a1;
                            REAL rr = 0, ri = 0;
#if DIM == 3
#pragma unroll
                            for (int j3 = 0; j3 < NSPREAD; j3 += INTERP_SPLIT) {
                                const int a3 = j3 + part;
                                if (a3 < NSPREAD) {
                                    const REAL w3 = part ? k3[j3 + 1 < NSPREAD ? j3 + 1 : j3] : k3[j3];
                                    const cplx *plane = col + (l3 + a3) * PL + l2 * R1;
                                    REAL pr = 0, pi = 0;
#pragma unroll
                                    for (int a2 = 0; a2 < NSPREAD; ++a2) {
                                        const cplx z = plane[a2 * R1];
                                        pr += z.re * k2[a2];
                                        pi += z.im * k2[a2];
                                    }
                                    rr += pr * w3;
                                    ri += pi * w3;
                                }
                            }
#elif DIM == 2
#pragma unroll
                            for (int j2 = 0; j2 < NSPREAD; j2 += INTERP_SPLIT) {
                                const int a2 = j2 + part;
                                if (a2 < NSPREAD) {
                                    const REAL w2 = part ? k2[j2 + 1 < NSPREAD ? j2 + 1 : j2] : k2[j2];
                                    const cplx z = col[(l2 + a2) * R1];
                                    rr += z.re * w2;
                                    ri += z.im * w2;
                                }
                            }
#else
                            rr = col[0].re;
                            ri = col[0].im;
#endif
                            sr += rr * w1;
                            si += ri * w1;
                        }
                    }
                    // The point's IL lanes are adjacent lanes of one warp (IL divides 32).
#pragma unroll
                    for (int o = IL >> 1; o > 0; o >>= 1) {
                        sr += __shfl_down_sync(0xffffffffu, sr, o, IL);
                        si += __shfl_down_sync(0xffffffffu, si, o, IL);
                    }
                    if (on && sub == 0) {
                        const long long j = (long long)v * m + perm[p];
                        c[2 * j] = sr;
                        c[2 * j + 1] = si;
                    }
                }
            }
            p0 = seg_end;
        }
    }
}

extern "C" __global__ void __launch_bounds__(256) usfft_interp_sm(INTERP_SM_PARAMS)
{
    interp_sm<false>(INTERP_SM_ARGS);
}

extern "C" __global__ void __launch_bounds__(256) usfft_interp_sm_lattice(INTERP_SM_PARAMS)
{
    interp_sm<true>(INTERP_SM_ARGS);
}

// Between the mode array (n1 × n2 × n3 per vector, dimension 1 fastest) and the fine grid:
// mode index m_d sits at fine cell fi_d[m_d] and is scaled by q_d[m_d] = 1/ψ̂(k).
// to_modes = 1 (type 1): modes = grid × q. to_modes = 0 (type 2): grid = modes × q (the grid
// was zeroed before).
extern "C" __global__ void __launch_bounds__(256) usfft_deconvolve(
    REAL *__restrict__ modes, REAL *__restrict__ grid,
    const int *__restrict__ fi1, const int *__restrict__ fi2, const int *__restrict__ fi3,
    const REAL *__restrict__ q1, const REAL *__restrict__ q2, const REAL *__restrict__ q3,
    int n1, int n2, int n3, int nf1, int nf2, int nf3, int nvec, int to_modes)
{
    const long long per = (long long)n1 * n2 * n3;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= per * nvec)
        return;
    const int v = (int)(idx / per);
    const long long r = idx - v * per;
    const int m1 = (int)(r % n1);
    const int m2 = (int)((r / n1) % n2);
    const int m3 = (int)(r / ((long long)n1 * n2));
    const long long cell = (long long)v * nf1 * nf2 * nf3
        + ((long long)fi3[m3] * nf2 + fi2[m2]) * nf1 + fi1[m1];
    const REAL s = q1[m1] * q2[m2] * q3[m3];
    if (to_modes) {
        modes[2 * idx] = grid[2 * cell] * s;
        modes[2 * idx + 1] = grid[2 * cell + 1] * s;
    } else {
        grid[2 * cell] = modes[2 * idx] * s;
        grid[2 * cell + 1] = modes[2 * idx + 1] * s;
    }
}

// ---- Set-points on the device: fold, bin, counting sort (histogram, scan, scatter). ----


// The bin of point j (host order: dimension 1 fastest), or −1 with the smallest
// 3·j + axis of a non-finite coordinate recorded in *bad.
__device__ __forceinline__ long long bin_of(
    const REAL *x, const REAL *y, const REAL *z, long long j, int nf1, int nf2, int nf3,
    int t1, int t2, int t3, int nb1, int nb2, const double *frame, unsigned long long *bad)
{
    (void)y; (void)z; (void)nf2; (void)nf3; (void)t2; (void)t3; (void)nb2;
    double d;
    long long key = 0;
#if DIM >= 3
    if (!isfinite((double)z[j])) {
        atomicMin(bad, (unsigned long long)(3 * j + 2));
        return -1;
    }
    key = (place(FRAMED(z[j], frame[4], frame[5]), nf3, &d) + SHIFT) / t3;
#endif
#if DIM >= 2
    if (!isfinite((double)y[j])) {
        atomicMin(bad, (unsigned long long)(3 * j + 1));
        return -1;
    }
    key = key * nb2 + (place(FRAMED(y[j], frame[2], frame[3]), nf2, &d) + SHIFT) / t2;
#endif
    if (!isfinite((double)x[j])) {
        atomicMin(bad, (unsigned long long)(3 * j));
        return -1;
    }
    return key * nb1 + (place(FRAMED(x[j], frame[0], frame[1]), nf1, &d) + SHIFT) / t1;
}

// A point's coordinates side by side, so that the gather in sorted order reads one sector
// per point instead of one per dimension.
struct __align__(4 * sizeof(REAL)) xyz {
    REAL x, y, z, pad;
};

// Histogram: key[j] = bin of point j and rank[j] its place among the bin's points, counted
// in count[bin] (zeroed before; the order within a bin is arbitrary); packed[j] its
// coordinates as given (the frame (c_d, s_d) is applied where they are placed).
extern "C" __global__ void __launch_bounds__(256) usfft_bin_points(
    const REAL *__restrict__ x, const REAL *__restrict__ y, const REAL *__restrict__ z,
    long long m, int nf1, int nf2, int nf3, int t1, int t2, int t3, int nb1, int nb2,
    double c1, double s1, double c2, double s2, double c3, double s3,
    unsigned int *__restrict__ key, unsigned int *__restrict__ rank,
    unsigned int *__restrict__ count, xyz *__restrict__ packed,
    unsigned long long *__restrict__ bad)
{
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    const double frame[6] = {c1, s1, c2, s2, c3, s3};
    const long long b = bin_of(x, y, z, j, nf1, nf2, nf3, t1, t2, t3, nb1, nb2, frame, bad);
    if (b < 0)
        return;
    key[j] = (unsigned int)b;
    rank[j] = atomicAdd(count + b, 1u);
    xyz p;
    p.x = x[j];
    p.y = DIM >= 2 ? y[j] : (REAL)0;
    p.z = DIM >= 3 ? z[j] : (REAL)0;
    p.pad = (REAL)0;
    packed[j] = p;
}

// The histogram of points on lattices (usfft_bin_points without coordinates to check or
// keep: the sorted points are computed where they are used): key[j], rank[j] and the count
// of lattice point j's bin.
extern "C" __global__ void __launch_bounds__(256) usfft_bin_lattice(
    const double *__restrict__ lat_frame, const long long *__restrict__ lat_shape,
    const long long *__restrict__ lat_first, int n_lat, long long m, int nf1, int nf2, int nf3,
    int t1, int t2, int t3, int nb1, int nb2, unsigned int *__restrict__ key,
    unsigned int *__restrict__ rank, unsigned int *__restrict__ count)
{
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    (void)nf2; (void)nf3; (void)t2; (void)t3; (void)nb2;
    const lattices L = {lat_frame, lat_shape, lat_first, n_lat};
    REAL x[3];
    lattice_point(L, j, x);
    double d;
    long long b = 0;
#if DIM >= 3
    b = (place((double)x[2], nf3, &d) + SHIFT) / t3;
#endif
#if DIM >= 2
    b = b * nb2 + (place((double)x[1], nf2, &d) + SHIFT) / t2;
#endif
    b = b * nb1 + (place((double)x[0], nf1, &d) + SHIFT) / t1;
    key[j] = (unsigned int)b;
    rank[j] = atomicAdd(count + b, 1u);
}

// Exclusive scans of the bins' counts, in tiles of SCAN_TILE = 4·SCAN_THREADS bins: each
// thread sums its four bins, the warps scan those sums with shuffles, and warp 0 scans the
// warps' totals. One block runs the tiles in turn (usfft_scan_bins); large grids of bins
// sum their tiles in parallel (usfft_sum_tiles), scan the tiles' totals in one block, and
// scan the tiles in parallel from their starts (usfft_scan_tiles).
#define SCAN_THREADS 1024
#define SCAN_TILE (4 * SCAN_THREADS)

// start[base + i] = carry + the sum of count[base .. base + i) for the tile at `base`;
// returns the tile's total to every thread (all of the block's threads call).
__device__ unsigned int scan_tile(const unsigned int *__restrict__ count,
    unsigned int *__restrict__ start, long long nbins, long long base, unsigned int carry)
{
    __shared__ unsigned int warp_sums[SCAN_THREADS / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long i0 = base + 4 * (long long)threadIdx.x;
    unsigned int v[4], t = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        v[k] = i0 + k < nbins ? count[i0 + k] : 0u;
        t += v[k];
    }
    unsigned int incl = t;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned int n = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o)
            incl += n;
    }
    if (lane == 31)
        warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        unsigned int ws = warp_sums[lane];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned int n = __shfl_up_sync(0xffffffffu, ws, o);
            if (lane >= o)
                ws += n;
        }
        warp_sums[lane] = ws;
    }
    __syncthreads();
    unsigned int run = carry + (warp > 0 ? warp_sums[warp - 1] : 0u) + incl - t;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        if (i0 + k < nbins)
            start[i0 + k] = run;
        run += v[k];
    }
    const unsigned int total = warp_sums[SCAN_THREADS / 32 - 1];
    __syncthreads(); // warp_sums is rewritten by the next tile
    return total;
}

// Exclusive scan of count[0..nbins) into start[0..nbins] (start[nbins] = total) by one block
// of SCAN_THREADS threads, a tile at a time with a carry.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) usfft_scan_bins(
    const unsigned int *__restrict__ count, unsigned int *__restrict__ start, long long nbins)
{
    unsigned int carry = 0;
    for (long long base = 0; base < nbins; base += SCAN_TILE)
        carry += scan_tile(count, start, nbins, base, carry);
    if (threadIdx.x == 0)
        start[nbins] = carry;
}

// sums[b] = the sum of tile b of count[0..nbins): one block of SCAN_THREADS per tile.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) usfft_sum_tiles(
    const unsigned int *__restrict__ count, unsigned int *__restrict__ sums, long long nbins)
{
    __shared__ unsigned int warp_sums[SCAN_THREADS / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long i0 = (long long)blockIdx.x * SCAN_TILE + 4 * (long long)threadIdx.x;
    unsigned int t = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k)
        t += i0 + k < nbins ? count[i0 + k] : 0u;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        t += __shfl_down_sync(0xffffffffu, t, o);
    if (lane == 0)
        warp_sums[warp] = t;
    __syncthreads();
    if (warp == 0) {
        t = warp_sums[lane];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            t += __shfl_down_sync(0xffffffffu, t, o);
        if (lane == 0)
            sums[blockIdx.x] = t;
    }
}

// Tile b of count[0..nbins) scanned into start from tile_start[b] (the scan of the tiles'
// sums, whose entry gridDim.x is the total: start[nbins]).
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) usfft_scan_tiles(
    const unsigned int *__restrict__ count, const unsigned int *__restrict__ tile_start,
    unsigned int *__restrict__ start, long long nbins)
{
    scan_tile(count, start, nbins, (long long)blockIdx.x * SCAN_TILE, tile_start[blockIdx.x]);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        start[nbins] = tile_start[gridDim.x];
}

// Scatter: point j goes to slot start[key[j]] + rank[j] of the sorted order (one scattered
// 4-byte write per point; no atomics).
extern "C" __global__ void __launch_bounds__(256) usfft_scatter_points(
    long long m, const unsigned int *__restrict__ key, const unsigned int *__restrict__ rank,
    const unsigned int *__restrict__ start, int *__restrict__ perm)
{
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    perm[start[key[j]] + rank[j]] = (int)j;
}

// Gather, in sorted order: slot p takes point perm[p]'s i0 and d per dimension. The reads of
// the packed coordinates are scattered, the writes contiguous (scattered partial writes of
// six arrays cost several times more).
extern "C" __global__ void __launch_bounds__(256) usfft_sorted_coords(
    const xyz *__restrict__ packed, long long m, int nf1, int nf2, int nf3,
    double c1, double s1, double c2, double s2, double c3, double s3,
    const int *__restrict__ perm,
    int *__restrict__ i1, int *__restrict__ i2, int *__restrict__ i3,
    REAL *__restrict__ d1, REAL *__restrict__ d2, REAL *__restrict__ d3)
{
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= m)
        return;
    (void)nf2; (void)nf3; (void)i2; (void)i3; (void)d2; (void)d3;
    (void)c2; (void)s2; (void)c3; (void)s3;
    const xyz c = packed[perm[p]];
    double d;
    i1[p] = place(FRAMED(c.x, c1, s1), nf1, &d);
    d1[p] = (REAL)d;
#if DIM >= 2
    i2[p] = place(FRAMED(c.y, c2, s2), nf2, &d);
    d2[p] = (REAL)d;
#endif
#if DIM >= 3
    i3[p] = place(FRAMED(c.z, c3, s3), nf3, &d);
    d3[p] = (REAL)d;
#endif
}

// ---- Type 3: the phase factors around its spread and type 2. ----

// a[v·n + j] *= factor[j] for the nvec vectors (complex, interleaved): the pre-phase of the
// strengths (n = M) and the post-factor of the values (n = N, e^{i·sign·s·C}/ψ̂).
extern "C" __global__ void __launch_bounds__(256) usfft_phase(
    REAL *__restrict__ a, const REAL *__restrict__ factor, long long n, int nvec)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n * nvec)
        return;
    const long long j = idx % n;
    const REAL re = a[2 * idx], im = a[2 * idx + 1];
    const REAL fr = factor[2 * j], fi = factor[2 * j + 1];
    a[2 * idx] = re * fr - im * fi;
    a[2 * idx + 1] = re * fi + im * fr;
}

// The pre-phase e^{i·sign·Σ_d D_d·(x_d − C_d)} of point j, in double from the coordinates as
// given (the host's formula, summed in the same order).
extern "C" __global__ void __launch_bounds__(256) usfft_type3_pre(
    const REAL *__restrict__ x, const REAL *__restrict__ y, const REAL *__restrict__ z,
    long long m, int sign, double cx1, double cs1, double cx2, double cs2, double cx3,
    double cs3, REAL *__restrict__ pre)
{
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    (void)y; (void)z; (void)cx2; (void)cs2; (void)cx3; (void)cs3;
    double phase = cs1 * ((double)x[j] - cx1);
#if DIM >= 2
    phase += cs2 * ((double)y[j] - cx2);
#endif
#if DIM >= 3
    phase += cs3 * ((double)z[j] - cx3);
#endif
    double sn, cs;
    sincos((double)sign * phase, &sn, &cs);
    pre[2 * j] = (REAL)cs;
    pre[2 * j + 1] = (REAL)sn;
}

// ψ̂(κ) from its Chebyshev series in u = 2(κ/κ_max)² − 1 (kernel.rs, TransformSeries).
__device__ __forceinline__ double psi_hat(double kappa, const double *coef, int terms,
                                          double inv_kappa_max)
{
    const double r = kappa * inv_kappa_max;
    const double u = 2.0 * r * r - 1.0;
    double b1 = 0.0, b2 = 0.0;
    for (int k = terms - 1; k >= 1; --k) {
        const double b = 2.0 * u * b1 - b2 + coef[k];
        b2 = b1;
        b1 = b;
    }
    return u * b1 - b2 + coef[0];
}

// The post-factor e^{i·sign·Σ_d s_d·C_d} / Π_d ψ̂((s_d − D_d)·h_d) of frequency k.
extern "C" __global__ void __launch_bounds__(256) usfft_type3_post(
    const REAL *__restrict__ s, const REAL *__restrict__ t, const REAL *__restrict__ u,
    long long n, int sign, double cx1, double cs1, double h1, double cx2, double cs2,
    double h2, double cx3, double cs3, double h3, const double *__restrict__ coef, int terms,
    double inv_kappa_max, REAL *__restrict__ post)
{
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n)
        return;
    (void)t; (void)u; (void)cx2; (void)cs2; (void)h2; (void)cx3; (void)cs3; (void)h3;
    double sk = (double)s[k];
    double phase = sk * cx1;
    double hat = psi_hat((sk - cs1) * h1, coef, terms, inv_kappa_max);
#if DIM >= 2
    sk = (double)t[k];
    phase += sk * cx2;
    hat *= psi_hat((sk - cs2) * h2, coef, terms, inv_kappa_max);
#endif
#if DIM >= 3
    sk = (double)u[k];
    phase += sk * cx3;
    hat *= psi_hat((sk - cs3) * h3, coef, terms, inv_kappa_max);
#endif
    double sn, cs;
    sincos((double)sign * phase, &sn, &cs);
    const double r = 1.0 / hat;
    post[2 * k] = (REAL)(r * cs);
    post[2 * k + 1] = (REAL)(r * sn);
}
