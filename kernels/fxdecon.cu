// F-X / F-XY prediction filtering (src/fxdecon/), f32. One module serves every shape and
// stencil: sizes, window tables and the operator's offsets are kernel arguments.
//
// Layouts (one slab of traces, trace index tr = ix + nx * iy_local):
//   traces   trace tr at (tr % nx) * sx + (tr / nx) * sy   input samples (a staged slab, or the
//                                               caller's device volume at the slab's first line)
//   windows  [tr][ntw][nfft]                    zero-padded time windows; after the inverse
//                                               FFT, the filtered windows
//   spectra  [tr][ntw][nf] float2               nf = nfft/2 + 1 (cuFFT R2C/C2R layout)
//   out      written trace w = tr - first at (w % nx) * sx + (w / nx) * sy
//                                               blended output traces
//
// FX_THREADS: threads per block of fx_window_solve, from the prelude.

#ifndef FX_THREADS
#define FX_THREADS 256
#endif

__device__ __forceinline__ float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// conj(a) * b
__device__ __forceinline__ float2 cmulc(float2 a, float2 b)
{
    return make_float2(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x);
}

__device__ __forceinline__ float2 cconj(float2 a) { return make_float2(a.x, -a.y); }

// Cuts every trace into its time windows, zero-padded to nfft.
extern "C" __global__ void fx_extract(const float *__restrict__ traces, float *__restrict__ windows,
                                      long long total, int ntw, int nfft, int nx, long long sx,
                                      long long sy, const int *__restrict__ tw_start,
                                      const int *__restrict__ tw_len)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        int i = (int)(e % nfft);
        long long row = e / nfft;
        int k = (int)(row % ntw);
        long long tr = row / ntw;
        windows[e] = i < tw_len[k] ? traces[(tr % nx) * sx + (tr / nx) * sy + tw_start[k] + i] : 0.0f;
    }
}

// The filtered spectra start at zero in band (windows add into them) and outside the band
// hold zero or the input (passed through) times the share of the trace's window weights
// that this slab's windows hold (a trace near a slab edge is finished by two slabs).
extern "C" __global__ void fx_init_out(const float2 *__restrict__ spec_in, float2 *__restrict__ spec_out,
                                       long long total, int nf, int ntw, int nx,
                                       const int *__restrict__ in_band, int zero_out_of_band,
                                       const float *__restrict__ y_share)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        int f = (int)(e % nf);
        if (in_band[f] || zero_out_of_band) {
            spec_out[e] = make_float2(0.0f, 0.0f);
        } else {
            float w = y_share[e / ((long long)nf * ntw) / nx];
            float2 v = spec_in[e];
            spec_out[e] = make_float2(w * v.x, w * v.y);
        }
    }
}

// One block per (band frequency, time window) × (spatial window): loads the window's traces
// (with the operator's halo) into shared memory, forms the autocorrelation lags over the
// estimation region, the Hermitian (block-)Toeplitz normal equations with damping, solves
// them by Cholesky (a pivot ≤ tol drops its unknown), predicts the output traces and adds
// them, weighted, into spec_out. Mirrors src/fxdecon/filter.rs. Data and prediction are
// f32; lags (exact products of f32 values summed in double) and the solve are f64, so that
// ill-conditioned windows (no damping in SU mode) lose no more than the f32 data.
//
// Axis tables, per window w: params[6w..] = gather length, estimation start, estimation
// length, output start, output length, first output trace; gather[w * max + j] = trace of
// local position j; weight[w * max + i] = weight of output position i.
//
// Dynamic shared memory (the host mirrors it in solve_shared_bytes): double2 lags[nl],
// part[max(nh, FX_THREADS)], A[K*K], rhs[K], then float2 loc[x_max * y_max].
extern "C" __global__ void __launch_bounds__(FX_THREADS)
fx_window_solve(const float2 *__restrict__ spec_in, float2 *spec_out, int nf, int ntw, int nband,
                const int *__restrict__ band, int nx,
                const int *__restrict__ x_gather, const int *__restrict__ x_params,
                const float *__restrict__ x_weight, int x_max, int nwx,
                const int *__restrict__ y_gather, const int *__restrict__ y_params,
                const float *__restrict__ y_weight, int y_max,
                const int *__restrict__ offsets, int K, int forward_backward, int lx, int ly,
                double damping, double tol_rel)
{
    extern __shared__ double2 shd[];
    __shared__ double s_inv;
    const int tid = threadIdx.x;
    const int b = blockIdx.x % nband, k = blockIdx.x / nband, f = band[b];
    const int wx = blockIdx.y % nwx, wy = blockIdx.y / nwx;
    const int *px = x_params + 6 * wx, *py = y_params + 6 * wy;
    const int gxl = px[0], exs = px[1], exl = px[2], oxs = px[3], oxl = px[4], oxf = px[5];
    const int gyl = py[0], eys = py[1], eyl = py[2], oys = py[3], oyl = py[4], oyf = py[5];
    const int bw = 2 * lx + 1, nl = bw * (2 * ly + 1), centre = (nl - 1) / 2, nh = nl - centre;
    const int nparts = nh > FX_THREADS ? nh : FX_THREADS;

    double2 *lags = shd;             // nl
    double2 *part = lags + nl;       // nparts
    double2 *A = part + nparts;      // K * K
    double2 *rhs = A + K * K;        // K
    float2 *loc = (float2 *)(rhs + K); // x_max * y_max

    for (int e = tid; e < gxl * gyl; e += FX_THREADS) {
        int jx = e % gxl, jy = e / gxl;
        long long tr = x_gather[wx * x_max + jx] + (long long)nx * y_gather[wy * y_max + jy];
        loc[e] = spec_in[(tr * ntw + k) * nf + f];
    }
    __syncthreads();

    // Lags d with d >= centre in box order (dy > 0, or dy == 0 and dx >= 0); each summed by
    // P threads over interleaved pairs, then reduced; the others are conjugates.
    int P = FX_THREADS / nh;
    if (P < 1)
        P = 1;
    for (int item = tid; item < P * nh; item += FX_THREADS) {
        int l = centre + item % nh, p = item / nh;
        int dx = l % bw - lx, dy = l / bw - ly;
        int x0 = max(exs, exs - dx), x1 = min(exs + exl, exs + exl - dx);
        int y0 = max(eys, eys - dy), y1 = min(eys + eyl, eys + eyl - dy);
        int cx = max(x1 - x0, 0), cy = max(y1 - y0, 0);
        double sr = 0.0, si = 0.0;
        for (int e = p; e < cx * cy; e += P) {
            int ix = x0 + e % cx, iy = y0 + e / cx;
            float2 a = loc[ix + gxl * iy], c = loc[ix + dx + gxl * (iy + dy)];
            // conj(a) * c
            sr += (double)a.x * c.x + (double)a.y * c.y;
            si += (double)a.x * c.y - (double)a.y * c.x;
        }
        part[item] = make_double2(sr, si);
    }
    __syncthreads();
    for (int l = tid; l < nh; l += FX_THREADS) {
        double sr = 0.0, si = 0.0;
        for (int p = 0; p < P; ++p) {
            sr += part[p * nh + l].x;
            si += part[p * nh + l].y;
        }
        lags[centre + l] = make_double2(sr, si);
        if (l > 0)
            lags[centre - l] = make_double2(sr, -si);
    }
    __syncthreads();

    const double r0 = lags[centre].x;
    for (int e = tid; e < K * K; e += FX_THREADS) {
        int q = e / K, p = e % K;
        int dx = offsets[2 * p] - offsets[2 * q], dy = offsets[2 * p + 1] - offsets[2 * q + 1];
        double2 v = lags[dx + lx + bw * (dy + ly)];
        if (p == q)
            v.x += damping * r0;
        A[e] = v;
    }
    for (int q = tid; q < K; q += FX_THREADS)
        rhs[q] = lags[lx - offsets[2 * q] + bw * (ly - offsets[2 * q + 1])];
    __syncthreads();

    // Cholesky, right-looking, lower triangle.
    const double tol = tol_rel * r0 * (1.0 + damping);
    for (int j = 0; j < K; ++j) {
        if (tid == 0) {
            double d = A[j * K + j].x;
            double piv = d > tol ? sqrt(d) : 0.0;
            A[j * K + j] = make_double2(piv, 0.0);
            s_inv = piv > 0.0 ? 1.0 / piv : 0.0;
        }
        __syncthreads();
        const double inv = s_inv;
        for (int i = j + 1 + tid; i < K; i += FX_THREADS) {
            A[i * K + j].x *= inv;
            A[i * K + j].y *= inv;
        }
        __syncthreads();
        const int m = K - j - 1;
        for (int e = tid; e < m * m; e += FX_THREADS) {
            int i = j + 1 + e / m, c = j + 1 + e % m;
            if (c <= i) {
                // A[i][c] -= L[i][j] * conj(L[c][j])
                double2 u = A[i * K + j], v = A[c * K + j];
                A[i * K + c].x -= u.x * v.x + u.y * v.y;
                A[i * K + c].y -= u.y * v.x - u.x * v.y;
            }
        }
        __syncthreads();
    }
    // L y = rhs, then L^H a = y.
    for (int j = 0; j < K; ++j) {
        if (tid == 0) {
            double l = A[j * K + j].x;
            rhs[j] = l > 0.0 ? make_double2(rhs[j].x / l, rhs[j].y / l) : make_double2(0.0, 0.0);
        }
        __syncthreads();
        const double2 y = rhs[j];
        for (int i = j + 1 + tid; i < K; i += FX_THREADS) {
            double2 u = A[i * K + j]; // rhs[i] -= u * y
            rhs[i].x -= u.x * y.x - u.y * y.y;
            rhs[i].y -= u.x * y.y + u.y * y.x;
        }
        __syncthreads();
    }
    for (int j = K - 1; j >= 0; --j) {
        if (tid == 0) {
            double l = A[j * K + j].x;
            rhs[j] = l > 0.0 ? make_double2(rhs[j].x / l, rhs[j].y / l) : make_double2(0.0, 0.0);
        }
        __syncthreads();
        const double2 x = rhs[j];
        for (int i = tid; i < j; i += FX_THREADS) {
            double2 u = A[j * K + i]; // rhs[i] -= conj(u) * x
            rhs[i].x -= u.x * x.x + u.y * x.y;
            rhs[i].y -= u.x * x.y - u.y * x.x;
        }
        __syncthreads();
    }

    const float half = forward_backward ? 0.5f : 1.0f;
    for (int e = tid; e < oxl * oyl; e += FX_THREADS) {
        int i = e % oxl, j = e / oxl;
        int ix = oxs + i, iy = oys + j;
        float2 pred = make_float2(0.0f, 0.0f);
        for (int p = 0; p < K; ++p) {
            int dx = offsets[2 * p], dy = offsets[2 * p + 1];
            float2 a = make_float2((float)rhs[p].x, (float)rhs[p].y);
            float2 v = cmul(a, loc[ix + dx + gxl * (iy + dy)]);
            pred.x += v.x;
            pred.y += v.y;
            if (forward_backward) {
                v = cmulc(a, loc[ix - dx + gxl * (iy - dy)]);
                pred.x += v.x;
                pred.y += v.y;
            }
        }
        float w = half * x_weight[wx * x_max + i] * y_weight[wy * y_max + j];
        long long tr = (oxf + i) + (long long)nx * (oyf + j);
        float2 *o = spec_out + (tr * ntw + k) * nf + f;
        atomicAdd(&o->x, w * pred.x);
        atomicAdd(&o->y, w * pred.y);
    }
}

// Blends the filtered windows of traces [first, first + total / n_samples) into output
// traces, with the time-window weights and the inverse FFT's 1/nfft. The first add_traces
// written traces already hold another slab's part of them (windows of two slabs cover
// them): this slab's part is added. Explicit roundings (no fused multiply-add) make the sum
// the host's f32 addition of the two parts, bit for bit.
extern "C" __global__ void fx_overlap_add(const float *__restrict__ windows, float *__restrict__ out,
                                          long long total, int n_samples, long long first, int ntw,
                                          int nfft, const int *__restrict__ tw_start,
                                          const int *__restrict__ tw_len,
                                          const float *__restrict__ tw_weight, int tw_max, float scale,
                                          int nx, long long sx, long long sy, long long add_traces)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        int t = (int)(e % n_samples);
        long long w = e / n_samples, tr = first + w;
        float s = 0.0f;
        for (int k = 0; k < ntw; ++k) {
            int i = t - tw_start[k];
            if (i >= 0 && i < tw_len[k])
                s += tw_weight[k * tw_max + i] * windows[(tr * ntw + k) * nfft + i];
        }
        float v = __fmul_rn(s, scale);
        long long o = (w % nx) * sx + (w / nx) * sy + t;
        out[o] = w < add_traces ? __fadd_rn(out[o], v) : v;
    }
}

// Every trace of a volume (trace tr at (tr % nx) * sx + (tr / nx) * sy) copied from `in`, or
// zeroed (`in` is not read, and may be NULL): a filter with nothing to filter.
extern "C" __global__ void fx_copy_traces(const float *in, float *out, long long total,
                                          int n_samples, int nx, long long sx, long long sy,
                                          int zero)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long tr = e / n_samples;
        long long o = (tr % nx) * sx + (tr / nx) * sy + e % n_samples;
        out[o] = zero ? 0.0f : in[o];
    }
}
