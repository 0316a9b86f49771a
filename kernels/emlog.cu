// EM-logging inversion by exhaustive search (src/emlog/cuda.rs): every model of a grid of
// EM_P searched conductivities, reduced on the device to the count of equivalent models,
// their 1D and 2D marginal histograms and each block's best model.
//
// Prelude: EM_P (parameters, 1..16). Model index = i0 + n0*(i1 + n1*(i2 + ...)) (u64).
//
// emlog_fast: one work item = one row (axes 1..EM_P-1 fixed) and a segment of axis 0. The
// centred form is evaluated exactly as the CPU does (src/emlog/tables.rs), with rounding
// intrinsics that forbid fused multiply-adds, so that both decide on the same f64 value.
// emlog_direct: the full weighted residual d - A~x of every model over every measurement,
// bit for bit the CPU's sum (rows share their partial residual, as on the CPU).
//
// Histograms: u32 in shared memory when `use_shared` (bins <= the dynamic size), flushed
// to the u64 global bins with one atomic per non-zero bin; else global atomics. A launch
// covers < 2^31 models, so a block's u32 counts cannot overflow.

#define EM_THREADS 256
#define EM_TILE 128
// Axis-0 values per work item of the direct kernel (src/emlog/cuda.rs: DIRECT_SEGMENT).
#define EM_LANES 16

typedef unsigned long long u64;

struct Best {
    double q;
    u64 index;
};

__device__ __forceinline__ bool better(double qa, u64 ia, double qb, u64 ib)
{
    return qa < qb || (qa == qb && ia < ib);
}

__device__ __forceinline__ void add_bin(unsigned int *sh, u64 *bins, int use_shared, int bin, unsigned int v)
{
    if (use_shared)
        atomicAdd(&sh[bin], v);
    else
        atomicAdd(&bins[bin], (u64)v);
}

// Counts of a model (or of `v` models of a row) into the histograms.
__device__ void tally(unsigned int *sh, u64 *bins, int use_shared, const int *digits, int with_axis0,
                      unsigned int v, const int *axis_offset, int n_pairs, const int *pair_a,
                      const int *pair_b, const int *pair_offset, const int *lens)
{
    for (int k = with_axis0 ? 0 : 1; k < (with_axis0 ? 1 : EM_P); ++k)
        add_bin(sh, bins, use_shared, axis_offset[k] + digits[k], v);
    for (int q = 0; q < n_pairs; ++q) {
        int a = pair_a[q], b = pair_b[q];
        if ((a == 0 || b == 0) != (with_axis0 != 0))
            continue;
        add_bin(sh, bins, use_shared, pair_offset[q] + digits[a] + lens[a] * digits[b], v);
    }
}

// Block-wide: flush shared histograms, add the block's count, keep the block's best.
__device__ void finish_block(unsigned int *sh, u64 *bins, int use_shared, int n_bins, unsigned int count,
                             Best best, u64 *total, double *block_q, u64 *block_index)
{
    __shared__ double red_q[EM_THREADS / 32];
    __shared__ u64 red_i[EM_THREADS / 32];
    __shared__ unsigned int red_c;
    if (threadIdx.x == 0)
        red_c = 0;
    for (int o = 16; o > 0; o >>= 1) {
        double q = __shfl_down_sync(0xffffffffu, best.q, o);
        u64 i = __shfl_down_sync(0xffffffffu, best.index, o);
        if (better(q, i, best.q, best.index)) {
            best.q = q;
            best.index = i;
        }
        count += __shfl_down_sync(0xffffffffu, count, o);
    }
    __syncthreads();
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        red_q[warp] = best.q;
        red_i[warp] = best.index;
        atomicAdd(&red_c, count);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < EM_THREADS / 32; ++w)
            if (better(red_q[w], red_i[w], best.q, best.index)) {
                best.q = red_q[w];
                best.index = red_i[w];
            }
        if (better(best.q, best.index, block_q[blockIdx.x], block_index[blockIdx.x])) {
            block_q[blockIdx.x] = best.q;
            block_index[blockIdx.x] = best.index;
        }
        if (red_c)
            atomicAdd(total, (u64)red_c);
    }
    if (use_shared)
        for (int b = threadIdx.x; b < n_bins; b += blockDim.x)
            if (sh[b])
                atomicAdd(&bins[b], (u64)sh[b]);
}

__device__ void clear_shared(unsigned int *sh, int use_shared, int n_bins)
{
    if (use_shared)
        for (int b = threadIdx.x; b < n_bins; b += blockDim.x)
            sh[b] = 0;
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(EM_THREADS)
emlog_fast(const double *__restrict__ w, const double *__restrict__ table, const int *__restrict__ table_offset,
           const int *__restrict__ lens, double phi_min, double q_thr, u64 row_begin, u64 items, int seg,
           int n_seg, u64 *bins, int n_bins, int use_shared, const int *__restrict__ axis_offset, int n_pairs,
           const int *__restrict__ pair_a, const int *__restrict__ pair_b, const int *__restrict__ pair_offset,
           u64 *total, double *block_q, u64 *block_index)
{
    extern __shared__ unsigned int sh[];
    clear_shared(sh, use_shared, n_bins);
    const int n0 = lens[0];
    Best best = {1.0 / 0.0, ~0ull};
    unsigned int count = 0;
    for (u64 item = blockIdx.x * (u64)blockDim.x + threadIdx.x; item < items;
         item += (u64)gridDim.x * blockDim.x) {
        u64 row = row_begin + item / n_seg;
        int first = (int)(item % n_seg) * seg;
        int last = min(first + seg, n0);
        int digits[EM_P];
        digits[0] = 0;
        u64 rest = row;
        for (int k = 1; k < EM_P; ++k) {
            digits[k] = (int)(rest % (u64)lens[k]);
            rest /= (u64)lens[k];
        }
        double u[EM_P];
#pragma unroll
        for (int i = 0; i < EM_P; ++i)
            u[i] = 0.0;
#pragma unroll
        for (int j = EM_P - 1; j >= 1; --j) {
            const double *col = table + table_offset[j] + (long long)digits[j] * EM_P;
#pragma unroll
            for (int i = 0; i < EM_P; ++i)
                u[i] = __dadd_rn(u[i], col[i]);
        }
        double base = phi_min;
#pragma unroll
        for (int i = 1; i < EM_P; ++i)
            base = __dadd_rn(base, __dmul_rn(u[i], u[i]));
        unsigned int in_row = 0;
        for (int i0 = first; i0 < last; ++i0) {
            double t = __dadd_rn(u[0], w[i0]);
            double q = __dadd_rn(base, __dmul_rn(t, t));
            u64 index = row * (u64)n0 + i0;
            if (better(q, index, best.q, best.index)) {
                best.q = q;
                best.index = index;
            }
            if (q <= q_thr) {
                ++in_row;
                digits[0] = i0;
                tally(sh, bins, use_shared, digits, 1, 1, axis_offset, n_pairs, pair_a, pair_b, pair_offset, lens);
            }
        }
        if (in_row) {
            count += in_row;
            tally(sh, bins, use_shared, digits, 0, in_row, axis_offset, n_pairs, pair_a, pair_b, pair_offset, lens);
        }
    }
    __syncthreads();
    finish_block(sh, bins, use_shared, n_bins, count, best, total, block_q, block_index);
}

// norm: 0 L2 (sum of squares), 1 L1 (sum of |r|), 2 max |r|.
__device__ __forceinline__ double accumulate(int norm, double acc, double r)
{
    if (norm == 0)
        return __dadd_rn(acc, __dmul_rn(r, r));
    if (norm == 1)
        return __dadd_rn(acc, fabs(r));
    return fmax(acc, fabs(r));
}

// One work item = one row (axes 1..EM_P-1 fixed) and a segment of <= EM_LANES values of
// axis 0, as in emlog_fast. Per measurement i the row's partial residual
// s_i = d_i - sum_{j>=1} A~_ij x_j is formed once and shared by the segment's models,
// r = s_i - A~_i0 v; the order and the unfused roundings are the CPU's (src/emlog/cpu.rs),
// so both decide on the same f64 value. Tiles of measurements are staged in shared memory
// for the whole block; every thread runs the same number of passes.
extern "C" __global__ void __launch_bounds__(EM_THREADS)
emlog_direct(const double *__restrict__ a_w, const double *__restrict__ d, int n,
             const double *__restrict__ values, const int *__restrict__ value_offset, const int *__restrict__ lens,
             int norm, double q_thr, u64 row_begin, u64 items, int seg, int n_seg, u64 *bins, int n_bins,
             int use_shared, const int *__restrict__ axis_offset, int n_pairs, const int *__restrict__ pair_a,
             const int *__restrict__ pair_b, const int *__restrict__ pair_offset, u64 *total, double *block_q,
             u64 *block_index)
{
    extern __shared__ unsigned int sh[];
    __shared__ double tile_a[EM_TILE][EM_P];
    __shared__ double tile_d[EM_TILE];
    clear_shared(sh, use_shared, n_bins);
    const int n0 = lens[0];
    Best best = {1.0 / 0.0, ~0ull};
    unsigned int count = 0;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 base_item = blockIdx.x * (u64)blockDim.x; base_item < items; base_item += stride) {
        u64 item = base_item + threadIdx.x;
        bool live = item < items;
        u64 row = row_begin + (live ? item : 0) / n_seg;
        int first = (int)((live ? item : 0) % n_seg) * seg;
        int lanes = min(seg, n0 - first);
        int digits[EM_P];
        double x[EM_P];
        digits[0] = 0;
        x[0] = 0.0;
        u64 rest = row;
#pragma unroll
        for (int k = 1; k < EM_P; ++k) {
            digits[k] = (int)(rest % (u64)lens[k]);
            rest /= (u64)lens[k];
            x[k] = values[value_offset[k] + digits[k]];
        }
        double v[EM_LANES], acc[EM_LANES];
#pragma unroll
        for (int m = 0; m < EM_LANES; ++m) {
            v[m] = m < lanes ? values[value_offset[0] + first + m] : 0.0;
            acc[m] = 0.0;
        }
        for (int i0 = 0; i0 < n; i0 += EM_TILE) {
            int m_tile = min(EM_TILE, n - i0);
            __syncthreads();
            for (int e = threadIdx.x; e < m_tile * EM_P; e += blockDim.x) {
                int i = e % m_tile, j = e / m_tile;
                tile_a[i][j] = a_w[(long long)j * n + i0 + i];
            }
            for (int i = threadIdx.x; i < m_tile; i += blockDim.x)
                tile_d[i] = d[i0 + i];
            __syncthreads();
            for (int i = 0; i < m_tile; ++i) {
                double s = tile_d[i];
#pragma unroll
                for (int j = 1; j < EM_P; ++j)
                    s = __dsub_rn(s, __dmul_rn(tile_a[i][j], x[j]));
                double a0 = tile_a[i][0];
#pragma unroll
                for (int m = 0; m < EM_LANES; ++m)
                    if (m < lanes)
                        acc[m] = accumulate(norm, acc[m], __dsub_rn(s, __dmul_rn(a0, v[m])));
            }
        }
        if (!live)
            continue;
        unsigned int in_row = 0;
#pragma unroll
        for (int m = 0; m < EM_LANES; ++m) {
            if (m >= lanes)
                continue;
            u64 index = row * (u64)n0 + first + m;
            if (better(acc[m], index, best.q, best.index)) {
                best.q = acc[m];
                best.index = index;
            }
            if (acc[m] <= q_thr) {
                ++in_row;
                digits[0] = first + m;
                tally(sh, bins, use_shared, digits, 1, 1, axis_offset, n_pairs, pair_a, pair_b, pair_offset, lens);
            }
        }
        if (in_row) {
            count += in_row;
            tally(sh, bins, use_shared, digits, 0, in_row, axis_offset, n_pairs, pair_a, pair_b, pair_offset, lens);
        }
    }
    __syncthreads();
    finish_block(sh, bins, use_shared, n_bins, count, best, total, block_q, block_index);
}

// A plan made from device memory (src/emlog/cuda/gather.rs): out[k*n + i] =
// src[i*row_stride + cols[k]*col_stride] for k < p, i < n, the searched columns of A
// (or, with n = 1, row_stride = 0, col_stride = 1, the searched entries of sigma0),
// copied unchanged.
extern "C" __global__ void emlog_gather(const double *__restrict__ src, u64 row_stride, u64 col_stride,
                                        const int *__restrict__ cols, u64 n, int p, double *__restrict__ out)
{
    u64 total = n * (u64)p;
    for (u64 e = blockIdx.x * (u64)blockDim.x + threadIdx.x; e < total; e += (u64)gridDim.x * blockDim.x) {
        u64 k = e / n, i = e % n;
        out[e] = src[i * row_stride + (u64)cols[k] * col_stride];
    }
}
