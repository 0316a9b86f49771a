// USFFT (non-uniform FFT) kernels: spreading (type 1), interpolation (type 2) and the
// deconvolution/copy between the mode array and the fine grid. cuFFT does the FFT.
//
// The prelude defines REAL (float or double), DIM (1, 2, 3), NSPREAD (kernel width w in
// cells) and KERNEL_ES (1: exp(β(√(1−z²)−1)); 0: Gaussian exp(−βz²)). Complex arrays are
// interleaved (re, im) REAL pairs. Points come sorted by bin (host-side sort in set-points):
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

// φ(z); not inlined, so that each of the w unrolled weights is a call rather than a copy
// of exp (compile time grows with w × kernels otherwise; the spreading loops dominate the
// run time).
__device__ __noinline__ REAL phi(REAL z, REAL beta)
{
#if KERNEL_ES
    REAL q = (REAL)1 - z * z;
    q = q > (REAL)0 ? q : (REAL)0;
    return exp(beta * (sqrt(q) - (REAL)1));
#else
    return exp(-beta * z * z);
#endif
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

// Type 1, shared-memory subproblems: one block per bin. For each vector the block zeroes
// its padded tile, adds every point of the bin with shared-memory atomics, then adds the
// tile into the fine grid with one global atomic per non-zero cell.
extern "C" __global__ void __launch_bounds__(256) usfft_spread_sm(
    const unsigned int *__restrict__ bin_start, const int *__restrict__ perm,
    const int *__restrict__ i1, const int *__restrict__ i2, const int *__restrict__ i3,
    const REAL *__restrict__ d1, const REAL *__restrict__ d2, const REAL *__restrict__ d3,
    const REAL *__restrict__ c, REAL *__restrict__ grid, long long m, int nvec,
    int nf1, int nf2, int nf3, int t1, int t2, int t3, int nb1, int nb2, REAL beta)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    REAL *tile = (REAL *)smem_raw;
    const int b = blockIdx.x;
    const int start = (int)bin_start[b], end = (int)bin_start[b + 1];
    if (start == end)
        return;
    const int b1 = b % nb1, b2 = (b / nb1) % nb2, b3 = b / (nb1 * nb2);
    const int p1 = t1 + NSPREAD - 1;
    const int p2 = DIM >= 2 ? t2 + NSPREAD - 1 : 1;
    const int p3 = DIM >= 3 ? t3 + NSPREAD - 1 : 1;
    const int cells = p1 * p2 * p3;
    const int o1 = b1 * t1 - SHIFT;
    const int o2 = DIM >= 2 ? b2 * t2 - SHIFT : 0;
    const int o3 = DIM >= 3 ? b3 * t3 - SHIFT : 0;
    const long long nft = (long long)nf1 * nf2 * nf3;
    (void)i2; (void)i3; (void)d2; (void)d3; (void)b2; (void)b3; (void)o2; (void)o3;
    for (int v = 0; v < nvec; ++v) {
        for (int i = threadIdx.x; i < 2 * cells; i += blockDim.x)
            tile[i] = (REAL)0;
        __syncthreads();
        for (int p = start + threadIdx.x; p < end; p += blockDim.x) {
            REAL k1[NSPREAD];
            weights(d1[p], beta, k1);
            const int l1 = i1[p] - o1;
            IF2(REAL k2[NSPREAD]; weights(d2[p], beta, k2); const int l2 = i2[p] - o2;)
            IF3(REAL k3[NSPREAD]; weights(d3[p], beta, k3); const int l3 = i3[p] - o3;)
            const long long j = (long long)v * m + perm[p];
            const REAL cr = c[2 * j], ci = c[2 * j + 1];
#if DIM == 3
            for (int a3 = 0; a3 < NSPREAD; ++a3) {
                for (int a2 = 0; a2 < NSPREAD; ++a2) {
                    const REAL s = k3[a3] * k2[a2];
                    const REAL vr = cr * s, vi = ci * s;
                    REAL *row = tile + 2 * (((l3 + a3) * p2 + l2 + a2) * p1 + l1);
#pragma unroll
                    for (int a1 = 0; a1 < NSPREAD; ++a1) {
                        atomicAdd(row + 2 * a1, vr * k1[a1]);
                        atomicAdd(row + 2 * a1 + 1, vi * k1[a1]);
                    }
                }
            }
#elif DIM == 2
            for (int a2 = 0; a2 < NSPREAD; ++a2) {
                const REAL vr = cr * k2[a2], vi = ci * k2[a2];
                REAL *row = tile + 2 * ((l2 + a2) * p1 + l1);
#pragma unroll
                for (int a1 = 0; a1 < NSPREAD; ++a1) {
                    atomicAdd(row + 2 * a1, vr * k1[a1]);
                    atomicAdd(row + 2 * a1 + 1, vi * k1[a1]);
                }
            }
#else
            REAL *row = tile + 2 * l1;
#pragma unroll
            for (int a1 = 0; a1 < NSPREAD; ++a1) {
                atomicAdd(row + 2 * a1, cr * k1[a1]);
                atomicAdd(row + 2 * a1 + 1, ci * k1[a1]);
            }
#endif
        }
        __syncthreads();
        REAL *g = grid + 2 * (long long)v * nft;
        for (int i = threadIdx.x; i < cells; i += blockDim.x) {
            const REAL re = tile[2 * i], im = tile[2 * i + 1];
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

// Type 1 fallback when a padded tile does not fit in shared memory: one thread per sorted
// point, global atomics (neighbouring threads hit neighbouring cells: the sort keeps them
// in L2).
extern "C" __global__ void __launch_bounds__(256) usfft_spread_gm(
    const int *__restrict__ perm,
    const int *__restrict__ i1, const int *__restrict__ i2, const int *__restrict__ i3,
    const REAL *__restrict__ d1, const REAL *__restrict__ d2, const REAL *__restrict__ d3,
    const REAL *__restrict__ c, REAL *__restrict__ grid, long long m, int nvec,
    int nf1, int nf2, int nf3, REAL beta)
{
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= m)
        return;
    (void)i2; (void)i3; (void)d2; (void)d3;
    REAL k1[NSPREAD];
    int c1[NSPREAD];
    weights(d1[p], beta, k1);
#pragma unroll
    for (int a = 0; a < NSPREAD; ++a)
        c1[a] = wrap(i1[p] + a, nf1);
    IF2(REAL k2[NSPREAD]; weights(d2[p], beta, k2); const int s2 = i2[p];)
    IF3(REAL k3[NSPREAD]; weights(d3[p], beta, k3); const int s3 = i3[p];)
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

// Type 2: one thread per sorted point gathers its w^DIM cells for every vector and writes
// the result at the caller's index of the point.
extern "C" __global__ void __launch_bounds__(256) usfft_interp(
    const int *__restrict__ perm,
    const int *__restrict__ i1, const int *__restrict__ i2, const int *__restrict__ i3,
    const REAL *__restrict__ d1, const REAL *__restrict__ d2, const REAL *__restrict__ d3,
    const REAL *__restrict__ grid, REAL *__restrict__ c, long long m, int nvec,
    int nf1, int nf2, int nf3, REAL beta)
{
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= m)
        return;
    (void)i2; (void)i3; (void)d2; (void)d3;
    REAL k1[NSPREAD];
    int c1[NSPREAD];
    weights(d1[p], beta, k1);
#pragma unroll
    for (int a = 0; a < NSPREAD; ++a)
        c1[a] = wrap(i1[p] + a, nf1);
    IF2(REAL k2[NSPREAD]; weights(d2[p], beta, k2); const int s2 = i2[p];)
    IF3(REAL k3[NSPREAD]; weights(d3[p], beta, k3); const int s3 = i3[p];)
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
