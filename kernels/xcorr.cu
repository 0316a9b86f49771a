// Ambient-noise cross-correlation (NoisePy conventions; see src/xcorr/).
//
// Preprocessing, per chunk of station-days (station s of the chunk = blockIdx.y or one
// thread): xc_day_prepare (gaps zeroed, detrend, NoisePy's two day tapers),
// xc_filter_* (zero-phase Butterworth over segments of each day, and the day's std),
// xc_windows (cut, max/std rejection, demean, detrend, taper, time normalisation; rows
// of nfft reals for cuFFT R2C), xc_whiten (whitening, and the transpose into the
// frequency-major [bin][station][window] layout that the correlation GEMMs read).
//
// Correlation, per tile of station pairs: cuBLAS forms C_f = X_f^H X_f; xc_pair_spectra
// gathers each pair's bins (scaled by 1/(windows·nfft)) into rows for cuFFT C2R,
// xc_pair_center removes NoisePy's spectral mean, xc_trim keeps lags −maxlag..maxlag.
// Nonlinear stacks: xc_window_products makes one row per (pair, window) instead.
//
// No constants are baked in: every size is an argument. Sums are in double.

typedef long long i64;

struct c32 {
    float re, im;
};

#define MAX_SECTIONS 10
#define TILE 32
#define TILE_ROWS 8

// Block-wide sum of up to three doubles (blockDim.x a multiple of 32, ≤ 1024).
__device__ void block_sum3(double &a, double &b, double &c) {
    __shared__ double part[3][32];
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_down_sync(0xffffffffu, a, o);
        b += __shfl_down_sync(0xffffffffu, b, o);
        c += __shfl_down_sync(0xffffffffu, c, o);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) {
        part[0][warp] = a;
        part[1][warp] = b;
        part[2][warp] = c;
    }
    __syncthreads();
    a = b = c = 0.0;
    for (int w = 0; w < warps; w++) {
        a += part[0][w];
        b += part[1][w];
        c += part[2][w];
    }
}

// ObsPy's Hann taper of half-length wlen on n samples, at sample t.
__device__ double hann_side(i64 t, i64 n, i64 wlen) {
    if (wlen == 0) return 1.0;
    i64 m = (2 * wlen == n) ? 2 * wlen : 2 * wlen + 1;
    i64 k;
    if (t < wlen) k = t;
    else if (t >= n - wlen) k = m - wlen + (t - (n - wlen));
    else return 1.0;
    return 0.5 - 0.5 * cospi(2.0 * (double)k / (double)(m - 1));
}

// One block per station-day: gap samples zeroed; then (detrend_taper) the
// least-squares line removed and NoisePy's two tapers (half-lengths w1, w2) applied.
extern "C" __global__ void xc_day_prepare(float *day, const unsigned char *valid, i64 n,
                                          int detrend_taper, i64 w1, i64 w2) {
    float *x = day + (i64)blockIdx.x * n;
    const unsigned char *v = valid ? valid + (i64)blockIdx.x * n : 0;
    double s0 = 0.0, s1 = 0.0, unused = 0.0;
    double tm = 0.5 * (double)(n - 1);
    for (i64 t = threadIdx.x; t < n; t += blockDim.x) {
        float val = x[t];
        if (v && v[t] == 0) {
            val = 0.0f;
            x[t] = 0.0f;
        }
        s0 += val;
        s1 += ((double)t - tm) * val;
    }
    if (!detrend_taper) return;
    block_sum3(s0, s1, unused);
    double mean = s0 / (double)n;
    double sxx = (double)n * ((double)n * (double)n - 1.0) / 12.0;
    double slope = sxx > 0.0 ? s1 / sxx : 0.0;
    for (i64 t = threadIdx.x; t < n; t += blockDim.x) {
        double y = (double)x[t] - mean - slope * ((double)t - tm);
        x[t] = (float)(y * hann_side(t, n, w1) * hann_side(t, n, w2));
    }
}

// The zero-phase Butterworth day filter: sections (b0 b1 b2 a1 a2 each) forward then
// backward, direct form II transposed, zero initial state, then the day's std. A day is
// cut into segments of `seg` samples, each filtered by a thread of its own (one thread a
// day leaves most of the GPU idle): xc_filter_states runs each segment from a zero state
// and keeps the state it ends in; xc_filter_carry turns those into each segment's true
// starting state, along the day, with M, the cascade's state transition over seg samples
// (the filter is linear: end = M·start + the zero-state end); xc_filter_apply filters each
// segment from its true state. reverse = 1 runs the backward pass (sample t = n − 1 − r).
// A segment's state: z0, z1 of each section in turn, 2·n_sections doubles.

// One sample through the cascade (c: the sections); the state in z0, z1.
__device__ inline double cascade(const double *c, int n_sections, double *z0, double *z1,
                                 double y) {
#pragma unroll
    for (int s = 0; s < MAX_SECTIONS; s++) {
        if (s < n_sections) {
            const double *q = c + 5 * s;
            double out = q[0] * y + z0[s];
            z0[s] = q[1] * y - q[3] * out + z1[s];
            z1[s] = q[2] * y - q[4] * out;
            y = out;
        }
    }
    return y;
}

// The sections into shared memory (c: MAX_SECTIONS·5 doubles).
__device__ void load_sections(double *c, const double *sos, int n_sections) {
    for (int i = threadIdx.x; i < n_sections * 5; i += blockDim.x) c[i] = sos[i];
    __syncthreads();
}

// Thread (day, segment) of n_days·n_seg: its segment's end state from a zero state.
extern "C" __global__ void xc_filter_states(const float *day, double *states, int n_days,
                                            i64 n, int seg, int n_seg, int n_sections,
                                            const double *sos, int reverse) {
    __shared__ double c[MAX_SECTIONS * 5];
    load_sections(c, sos, n_sections);
    i64 id = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (i64)n_days * n_seg) return;
    const float *x = day + (id / n_seg) * n;
    i64 r0 = (id % n_seg) * seg, r1 = r0 + seg < n ? r0 + seg : n;
    double z0[MAX_SECTIONS], z1[MAX_SECTIONS];
#pragma unroll
    for (int s = 0; s < MAX_SECTIONS; s++) z0[s] = z1[s] = 0.0;
    for (i64 r = r0; r < r1; r++) cascade(c, n_sections, z0, z1, x[reverse ? n - 1 - r : r]);
    double *o = states + id * 2 * n_sections;
#pragma unroll
    for (int s = 0; s < MAX_SECTIONS; s++) {
        if (s < n_sections) {
            o[2 * s] = z0[s];
            o[2 * s + 1] = z1[s];
        }
    }
}

// Thread per day: each segment's end state (zero start) replaced by its true start state,
// the first's zero; m is M, row-major (2·n_sections)².
extern "C" __global__ void xc_filter_carry(double *states, int n_days, int n_seg, int n_sections,
                                           const double *m) {
    int d = blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= n_days) return;
    int w = 2 * n_sections;
    double s[2 * MAX_SECTIONS], next[2 * MAX_SECTIONS];
    for (int i = 0; i < w; i++) s[i] = 0.0;
    double *st = states + (i64)d * n_seg * w;
    for (int k = 0; k < n_seg; k++) {
        double *o = st + (i64)k * w;
        for (int i = 0; i < w; i++) {
            double a = o[i];
            for (int j = 0; j < w; j++) a += m[i * w + j] * s[j];
            next[i] = a;
        }
        for (int i = 0; i < w; i++) {
            o[i] = s[i];
            s[i] = next[i];
        }
    }
}

// Thread (day, segment): the segment filtered in place from its start state (none without
// sections: the samples are only summed); with `sums`, the sum and sum of squares of the
// outputs as stored (floats), two doubles a thread.
extern "C" __global__ void xc_filter_apply(float *day, const double *states, double *sums,
                                           int n_days, i64 n, int seg, int n_seg,
                                           int n_sections, const double *sos, int reverse) {
    __shared__ double c[MAX_SECTIONS * 5];
    load_sections(c, sos, n_sections);
    i64 id = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (i64)n_days * n_seg) return;
    float *x = day + (id / n_seg) * n;
    i64 r0 = (id % n_seg) * seg, r1 = r0 + seg < n ? r0 + seg : n;
    double z0[MAX_SECTIONS], z1[MAX_SECTIONS];
    const double *o = states + id * 2 * n_sections;
#pragma unroll
    for (int s = 0; s < MAX_SECTIONS; s++) {
        z0[s] = s < n_sections ? o[2 * s] : 0.0;
        z1[s] = s < n_sections ? o[2 * s + 1] : 0.0;
    }
    double sum = 0.0, sum2 = 0.0;
    for (i64 r = r0; r < r1; r++) {
        i64 t = reverse ? n - 1 - r : r;
        double y = x[t];
        if (n_sections > 0) {
            float yf = (float)cascade(c, n_sections, z0, z1, y);
            x[t] = yf;
            y = yf;
        }
        sum += y;
        sum2 += y * y;
    }
    if (sums) {
        sums[2 * id] = sum;
        sums[2 * id + 1] = sum2;
    }
}

// Thread per day: its std from the segments' sums.
extern "C" __global__ void xc_filter_std(const double *sums, double *day_std, int n_days, i64 n,
                                         int n_seg) {
    int d = blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= n_days) return;
    double sum = 0.0, sum2 = 0.0;
    for (int k = 0; k < n_seg; k++) {
        sum += sums[2 * ((i64)d * n_seg + k)];
        sum2 += sums[2 * ((i64)d * n_seg + k) + 1];
    }
    double mean = sum / (double)n;
    double var = sum2 / (double)n - mean * mean;
    day_std[d] = sqrt(var > 0.0 ? var : 0.0);
}

// One block per (window, station): the window's statistic and kept flag, then demean,
// detrend, Hann taper and time normalisation into a row of nfft reals (zero padded).
// time_norm: 0 none, 1 one-bit, 2 running mean of |x| over smooth_n (needs scratch).
extern "C" __global__ void xc_windows(const float *day, const unsigned char *valid,
                                      const double *day_std, float *win, float *scratch,
                                      unsigned char *kept, i64 n, int n_windows, int npts,
                                      int nfft, int step, double max_over_std, int taper_len,
                                      int time_norm, int smooth_n) {
    int w = blockIdx.x, s = blockIdx.y;
    i64 row = (i64)s * n_windows + w;
    const float *x = day + (i64)s * n + (i64)w * step;
    const unsigned char *v = valid ? valid + (i64)s * n + (i64)w * step : 0;
    float *out = win + row * nfft;
    double s0 = 0.0, s1 = 0.0, peak = 0.0;
    int gap = 0;
    double tm = 0.5 * (double)(npts - 1);
    for (int t = threadIdx.x; t < npts; t += blockDim.x) {
        double val = x[t];
        s0 += val;
        s1 += ((double)t - tm) * val;
        peak = fmax(peak, fabs(val));
        if (v && v[t] == 0) gap = 1;
    }
    gap = __syncthreads_or(gap);
    // The block's max: through the same reduction, one warp at a time.
    __shared__ double wmax[32];
    double m = peak;
    for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) wmax[threadIdx.x >> 5] = m;
    double unused = 0.0;
    block_sum3(s0, s1, unused);  // (synchronises, so wmax is complete)
    m = 0.0;
    for (int i = 0; i < (int)(blockDim.x >> 5); i++) m = fmax(m, wmax[i]);
    double ratio = m / day_std[s];
    int keep = !gap && ratio < max_over_std && ratio > 0.0;
    if (threadIdx.x == 0) kept[row] = (unsigned char)keep;
    if (!keep) {
        for (int t = threadIdx.x; t < nfft; t += blockDim.x) out[t] = 0.0f;
        return;
    }
    double mean = s0 / (double)npts;
    double sxx = (double)npts * ((double)npts * (double)npts - 1.0) / 12.0;
    double slope = sxx > 0.0 ? s1 / sxx : 0.0;
    float *dst = time_norm == 2 ? scratch + row * npts : out;
    for (int t = threadIdx.x; t < npts; t += blockDim.x) {
        double y = ((double)x[t] - mean - slope * ((double)t - tm)) * hann_side(t, npts, taper_len);
        if (time_norm == 1) y = (y > 0.0) ? 1.0 : (y < 0.0 ? -1.0 : 0.0);
        dst[t] = (float)y;
    }
    for (int t = npts + threadIdx.x; t < nfft; t += blockDim.x) out[t] = 0.0f;
    if (time_norm != 2) return;
    __syncthreads();
    const float *y = scratch + row * npts;
    int back = (smooth_n - 1) / 2;
    for (int t = threadIdx.x; t < npts; t += blockDim.x) {
        double acc = 0.0;
        for (int j = 0; j < smooth_n; j++) {
            int k = min(max(t + back - j, 0), npts - 1);
            acc += fabs((double)y[k]);
        }
        double ma = acc / (double)smooth_n;
        out[t] = ma > 0.0 ? (float)((double)y[t] / ma) : 0.0f;
    }
}

__device__ double amp(const c32 *s, int k, int nfft) {
    c32 v = s[k <= nfft / 2 ? k : nfft - k];
    return sqrt((double)v.re * v.re + (double)v.im * v.im);
}

// Whitening of each kept row's spectrum (nfft/2+1 bins from R2C) on the stored band
// [band_start, band_start + band_len), written transposed: out[f·out_plane + row0 + r].
// freq_norm: 0 none, 1 running mean of |S| over smoothspect_n bins of [ix00, ix11),
// 2 phase only; taper[f]: NoisePy's cosine-squared band edges (1 inside).
// Block (32, 8); grid (ceil(band_len/32), ceil(rows/32)).
extern "C" __global__ void xc_whiten(const c32 *spec, const unsigned char *kept,
                                     const float *taper, c32 *out, i64 out_plane, i64 row0,
                                     int rows, int nfft, int band_start, int band_len, int ix00,
                                     int ix11, int freq_norm, int smoothspect_n) {
    __shared__ c32 tile[TILE][TILE + 1];
    int nbins = nfft / 2 + 1;
    int f = blockIdx.x * TILE + threadIdx.x;
    int back = (smoothspect_n - 1) / 2;
    for (int q = threadIdx.y; q < TILE; q += TILE_ROWS) {
        i64 r = (i64)blockIdx.y * TILE + q;
        c32 val = {0.0f, 0.0f};
        if (r < rows && f < band_len && kept[r]) {
            const c32 *s = spec + r * nbins;
            int k = band_start + f;
            c32 x = s[k];
            double re = x.re, im = x.im;
            if (freq_norm == 1) {
                double acc = 0.0;
                for (int j = 0; j < smoothspect_n; j++) {
                    int kk = min(max(k + back - j, ix00), ix11 - 1);
                    acc += amp(s, kk, nfft);
                }
                double ma = acc / (double)smoothspect_n;
                if (ma > 0.0) {
                    re /= ma;
                    im /= ma;
                } else {
                    re = im = 0.0;
                }
            } else if (freq_norm == 2) {
                double a = sqrt(re * re + im * im);
                if (a > 0.0) {
                    re /= a;
                    im /= a;
                } else {
                    re = 1.0;
                    im = 0.0;
                }
            }
            double g = freq_norm == 0 ? 1.0 : (double)taper[f];
            val.re = (float)(re * g);
            val.im = (float)(im * g);
        }
        tile[q][threadIdx.x] = val;
    }
    __syncthreads();
    i64 r = (i64)blockIdx.y * TILE + threadIdx.x;
    for (int q = threadIdx.y; q < TILE; q += TILE_ROWS) {
        int ff = blockIdx.x * TILE + q;
        if (r < rows && ff < band_len) out[(i64)ff * out_plane + row0 + r] = tile[threadIdx.x][q];
    }
}

// Gathers each slot's (pair's) cross-spectrum from the GEMM output C (batch stride
// c_stride per band bin, element (a, b) at a + b·ldc) into a row of nbins = nfft/2+1
// bins, scaled; bins outside the band are 0. Block (32, 8); grid (ceil(nbins/32),
// ceil(n_slots/32)).
extern "C" __global__ void xc_pair_spectra(const c32 *C, i64 c_stride, int ldc, const int *slot_a,
                                           const int *slot_b, const float *slot_scale,
                                           int n_slots, c32 *spec, int nbins, int band_start,
                                           int band_len) {
    __shared__ c32 tile[TILE][TILE + 1];
    int slot = blockIdx.y * TILE + threadIdx.x;
    for (int q = threadIdx.y; q < TILE; q += TILE_ROWS) {
        int k = blockIdx.x * TILE + q;
        int f = k - band_start;
        c32 v = {0.0f, 0.0f};
        if (slot < n_slots && f >= 0 && f < band_len) {
            c32 c = C[(i64)f * c_stride + slot_a[slot] + (i64)slot_b[slot] * ldc];
            float g = slot_scale[slot];
            v.re = c.re * g;
            v.im = c.im * g;
        }
        tile[q][threadIdx.x] = v;
    }
    __syncthreads();
    int k = blockIdx.x * TILE + threadIdx.x;
    for (int q = threadIdx.y; q < TILE; q += TILE_ROWS) {
        int sl = blockIdx.y * TILE + q;
        if (sl < n_slots && k < nbins) spec[(i64)sl * nbins + k] = tile[threadIdx.x][q];
    }
}

// One row per (pair, window) for nonlinear stacks: conj(A_i)·X_j of window w of day d,
// scaled; bins outside the band 0. Day d's spectra start at day_x[d] (the receiver side)
// and day_a[d] (the source side: the same but for deconvolution), plane day_plane[d],
// day_nw[d] windows. One block per row.
extern "C" __global__ void xc_window_products(const unsigned long long *day_x,
                                              const unsigned long long *day_a,
                                              const i64 *day_plane, const int *day_nw,
                                              const int *row_day, const int *row_i,
                                              const int *row_j, const int *row_w, c32 *spec,
                                              int nbins, int band_start, int band_len,
                                              float scale) {
    i64 r = blockIdx.x;
    int d = row_day[r];
    const c32 *X = (const c32 *)day_x[d];
    const c32 *A = (const c32 *)day_a[d];
    i64 plane = day_plane[d];
    i64 ai = (i64)row_i[r] * day_nw[d] + row_w[r];
    i64 aj = (i64)row_j[r] * day_nw[d] + row_w[r];
    for (int k = threadIdx.x; k < nbins; k += blockDim.x) {
        int f = k - band_start;
        c32 v = {0.0f, 0.0f};
        if (f >= 0 && f < band_len) {
            c32 a = A[(i64)f * plane + ai], b = X[(i64)f * plane + aj];
            v.re = (a.re * b.re + a.im * b.im) * scale;
            v.im = (a.re * b.im - a.im * b.re) * scale;
        }
        spec[r * nbins + k] = v;
    }
}

// NoisePy's spectral mean removal: subtract the mean over bins 0..nfft2 from those bins,
// zero the rest (the Nyquist bin), and bin 0 where zero_dc[row]. One warp per row.
extern "C" __global__ void xc_pair_center(c32 *spec, int n_rows, int nbins, int nfft2,
                                          const unsigned char *zero_dc) {
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    int lane = threadIdx.x & 31;
    if (row >= n_rows) return;
    c32 *s = spec + (i64)row * nbins;
    double re = 0.0, im = 0.0;
    for (int k = lane; k < nfft2; k += 32) {
        re += s[k].re;
        im += s[k].im;
    }
    for (int o = 16; o > 0; o >>= 1) {
        re += __shfl_xor_sync(0xffffffffu, re, o);
        im += __shfl_xor_sync(0xffffffffu, im, o);
    }
    float mre = (float)(re / nfft2), mim = (float)(im / nfft2);
    for (int k = lane; k < nbins; k += 32) {
        c32 v = s[k];
        if (k < nfft2) {
            v.re -= mre;
            v.im -= mim;
        } else {
            v.re = v.im = 0.0f;
        }
        if (k == 0 && zero_dc && zero_dc[row]) v.re = v.im = 0.0f;
        s[k] = v;
    }
}

// Keeps lags −maxlag..maxlag of each row of nfft reals: out[row][k] = y[row][(k − maxlag)
// mod nfft]. Grid (n_rows, ceil(n_lags/256)).
extern "C" __global__ void xc_trim(const float *y, int nfft, int maxlag, float *out) {
    i64 row = blockIdx.x;
    int n_lags = 2 * maxlag + 1;
    int k = blockIdx.y * blockDim.x + threadIdx.x;
    if (k >= n_lags) return;
    int tau = k - maxlag;
    if (tau < 0) tau += nfft;
    out[row * n_lags + k] = y[row * nfft + tau];
}

// NoisePy's correlation methods: out = x / smooth^power at every stored bin, smooth the
// moving average of |x| over n bins (n values ending (n − 1)/2 after the bin) along a
// station's windows end to end (bins 0..nfft2 of window 0, then of window 1, …; the ends
// of the day extended with the first and last values; bins outside the stored band 0).
// A zero smooth gives 0. x, out: [bin][station][window], plane = stations × nw values a
// bin. Grid (ceil(plane/256), min(band_len, 65535)); bins loop over gridDim.y.
extern "C" __global__ void xc_divide(const c32 *x, c32 *out, i64 plane, int nw, int band_start,
                                     int band_len, int nfft2, int n, int power) {
    i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= plane) return;
    i64 s = k / nw;
    int w = (int)(k % nw);
    i64 last = (i64)nw * nfft2 - 1;
    int back = (n - 1) / 2;
    for (int f = blockIdx.y; f < band_len; f += gridDim.y) {
        i64 q = (i64)w * nfft2 + band_start + f;
        double sum = 0.0;
        for (int j = 0; j < n; j++) {
            i64 at = q + back - j;
            at = at < 0 ? 0 : (at > last ? last : at);
            int wj = (int)(at / nfft2), kk = (int)(at % nfft2);
            if (kk >= band_start && kk < band_start + band_len) {
                c32 v = x[(i64)(kk - band_start) * plane + s * nw + wj];
                sum += sqrt((double)v.re * (double)v.re + (double)v.im * (double)v.im);
            }
        }
        double m = sum / (double)n;
        double d = power == 2 ? m * m : m;
        c32 v = x[(i64)f * plane + k], o = {0.0f, 0.0f};
        if (d > 0.0) {
            o.re = (float)((double)v.re / d);
            o.im = (float)((double)v.im / d);
        }
        out[(i64)f * plane + k] = o;
    }
}

// Substacks: the stack of all windows as the sum of the groups' cross-spectra,
// c = g (first) or c += g. n floats; one thread each.
extern "C" __global__ void xc_add(float *c, const float *g, i64 n, int first) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    c[i] = first ? g[i] : c[i] + g[i];
}

// Nonlinear stacks on the device. A batch holds whole pairs: pair p's per-window
// correlations (m lags each) are rows start[p] .. start[p+1] of `rows`; sums in double,
// rows in order, as src/xcorr/stack.rs.

// PWS, 1: each row zero-padded to n complex doubles (interleaved). One thread a value.
extern "C" __global__ void xc_pws_pad(const float *rows, i64 n_rows, int m, int n, double *z) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_rows * n) return;
    i64 r = i / n;
    int t = (int)(i % n);
    z[2 * i] = t < m ? (double)rows[r * m + t] : 0.0;
    z[2 * i + 1] = 0.0;
}

// PWS, 2 (after the forward FFT): the analytic signal's spectrum scaled by 1/n (SciPy's
// hilbert): DC (and Nyquist) kept, positive bins doubled, negative bins zeroed.
extern "C" __global__ void xc_pws_analytic(double *z, i64 n_rows, int n) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_rows * n) return;
    int k = (int)(i % n);
    double h = (k == 0 || (n % 2 == 0 && k == n / 2)) ? 1.0 : (k < (n + 1) / 2 ? 2.0 : 0.0);
    double s = h / (double)n;
    z[2 * i] *= s;
    z[2 * i + 1] *= s;
}

// PWS, 3 (after the inverse FFT): per pair p (grid.x) and lag t, the mean of the rows
// times |mean of exp(i·arg z)|^power. A pair without rows gives zeros.
extern "C" __global__ void xc_pws_stack(const float *rows, const double *z, const int *start,
                                        int m, int n, double power, float *out) {
    int p = blockIdx.x;
    int t = blockIdx.y * blockDim.x + threadIdx.x;
    if (t >= m) return;
    int a = start[p], b = start[p + 1];
    double pr = 0.0, pi = 0.0, mean = 0.0;
    for (int r = a; r < b; r++) {
        i64 at = 2 * ((i64)r * n + t);
        double ang = atan2(z[at + 1], z[at]);
        pr += cos(ang);
        pi += sin(ang);
        mean += (double)rows[(i64)r * m + t];
    }
    int count = b - a;
    float v = 0.0f;
    if (count > 0) {
        double w = pow(hypot(pr, pi) / (double)count, power);
        v = (float)(mean / (double)count * w);
    }
    out[(i64)p * m + t] = v;
}

// Floats in the order of their values (total order: -0 before +0), as unsigned keys.
__device__ unsigned int order_key(float x) {
    unsigned int u = __float_as_uint(x);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ float from_key(unsigned int k) {
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

// The k-th smallest (from 0) of column t of the rows x[0 .. R), by its key bits.
__device__ float kth(const float *x, int R, int m, int t, int k) {
    unsigned int prefix = 0u;
    for (int bit = 31; bit >= 0; bit--) {
        unsigned int high = bit == 31 ? 0u : (0xffffffffu << (bit + 1));
        int below = 0;
        for (int r = 0; r < R; r++) {
            unsigned int key = order_key(x[(i64)r * m + t]);
            if ((key & high) == prefix && !((key >> bit) & 1u)) below++;
        }
        if (k >= below) {
            k -= below;
            prefix |= 1u << bit;
        }
    }
    return from_key(prefix);
}

__device__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Robust stack (Pavlis & Vernon; NoisePy's robust_stack), one block per pair (blockDim a
// multiple of 32): from the median, weights |⟨s, d_r⟩| / (‖d_r‖·‖d_r − ⟨s, d_r⟩ s‖)
// normalised to sum 1, s = Σ w_r d_r, until ‖s_new − s‖₁/‖s_new‖₂/R ≤ epsilon or 11
// iterations. Scratch of pair p from scratch_at[p]: s (m), next (m), ‖d_r‖ (R), w (R).
extern "C" __global__ void xc_robust(const float *rows, const int *start, int m,
                                     double epsilon, double *scratch, const i64 *scratch_at,
                                     float *out) {
    int p = blockIdx.x, tid = threadIdx.x, bd = blockDim.x;
    int a = start[p], R = start[p + 1] - a;
    float *o = out + (i64)p * m;
    if (R == 0) {
        for (int t = tid; t < m; t += bd) o[t] = 0.0f;
        return;
    }
    const float *x = rows + (i64)a * m;
    double *s = scratch + scratch_at[p], *next = s + m, *dn = next + m, *w = dn + R;
    for (int t = tid; t < m; t += bd) {
        s[t] = (R % 2 == 1) ? (double)kth(x, R, m, t, R / 2)
                            : 0.5 * ((double)kth(x, R, m, t, R / 2 - 1) +
                                     (double)kth(x, R, m, t, R / 2));
    }
    int lane = tid & 31, warp = tid >> 5, warps = bd >> 5;
    for (int r = warp; r < R; r += warps) {
        double q = 0.0;
        for (int t = lane; t < m; t += 32) {
            double v = x[(i64)r * m + t];
            q += v * v;
        }
        q = warp_sum(q);
        if (lane == 0) dn[r] = sqrt(q);
    }
    __shared__ double total_shared;
    for (int step = 0; step < 11; step++) {
        __syncthreads();
        for (int r = warp; r < R; r += warps) {
            const float *xr = x + (i64)r * m;
            double dot = 0.0;
            for (int t = lane; t < m; t += 32) dot += (double)xr[t] * s[t];
            dot = warp_sum(dot);
            double q = 0.0;
            for (int t = lane; t < m; t += 32) {
                double d = (double)xr[t] - dot * s[t];
                q += d * d;
            }
            q = warp_sum(q);
            if (lane == 0) {
                double rn = sqrt(q);
                w[r] = (dn[r] > 0.0 && rn > 0.0) ? fabs(dot) / dn[r] / rn : 0.0;
            }
        }
        __syncthreads();
        if (tid == 0) {
            double total = 0.0;  // in row order, as the CPU
            for (int r = 0; r < R; r++) total += w[r];
            total_shared = total;
        }
        __syncthreads();
        double total = total_shared;
        if (isnan(total) || total <= 0.0) break;
        double l1 = 0.0, l2 = 0.0, unused = 0.0;
        for (int t = tid; t < m; t += bd) {
            double acc = 0.0;
            for (int r = 0; r < R; r++) acc += w[r] / total * (double)x[(i64)r * m + t];
            next[t] = acc;
            l1 += fabs(acc - s[t]);
            l2 += acc * acc;
        }
        block_sum3(l1, l2, unused);
        for (int t = tid; t < m; t += bd) s[t] = next[t];
        double residual = l1 / sqrt(l2) / (double)R;
        if (isnan(residual) || residual <= epsilon) break;
    }
    __syncthreads();
    for (int t = tid; t < m; t += bd) o[t] = (float)s[t];
}

// Substacks from per-window rows: per pair p (grid.x), lag t and group g < n_groups, the
// mean of the pair's rows labelled g (label[r]; n_groups or more: none), summed in
// double into sums (n_groups·m a pair), divided by counts[p·n_groups + g] (0: zeros).
extern "C" __global__ void xc_group_means(const float *rows, const int *start,
                                          const int *label, int m, int n_groups,
                                          const unsigned int *counts, double *sums,
                                          float *out) {
    int p = blockIdx.x;
    int t = blockIdx.y * blockDim.x + threadIdx.x;
    if (t >= m) return;
    double *acc = sums + (i64)p * n_groups * m;
    for (int g = 0; g < n_groups; g++) acc[(i64)g * m + t] = 0.0;
    for (int r = start[p]; r < start[p + 1]; r++) {
        int g = label[r];
        if (g < n_groups) acc[(i64)g * m + t] += (double)rows[(i64)r * m + t];
    }
    for (int g = 0; g < n_groups; g++) {
        unsigned int c = counts[(i64)p * n_groups + g];
        out[((i64)p * n_groups + g) * m + t] = c ? (float)(acc[(i64)g * m + t] / (double)c) : 0.0f;
    }
}

// Device calls. Station-days from the caller's array (station s at s·stride) packed into a
// chunk's rows of n samples, and the mask alike (valid and src_valid both null without
// one). Grid (x: samples, y: stations of the chunk), a grid-stride loop over samples.
extern "C" __global__ void xc_gather_days(const float *src, const unsigned char *src_valid,
                                          i64 stride, i64 n, float *day,
                                          unsigned char *valid) {
    i64 s = blockIdx.y;
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += (i64)gridDim.x * blockDim.x) {
        day[s * n + t] = src[s * stride + t];
        if (valid) valid[s * n + t] = src_valid[s * stride + t];
    }
}

// Rows of n_lags floats into the caller's array at row dst[r] (first + r without a table),
// `stride` floats a row; zeros where `rows` is null. Grid (x: rows, y: lags / blockDim.x).
extern "C" __global__ void xc_put_rows(const float *rows, const i64 *dst, i64 first,
                                       int n_lags, i64 stride, float *out) {
    i64 r = blockIdx.x;
    int k = blockIdx.y * blockDim.x + threadIdx.x;
    if (k >= n_lags) return;
    i64 d = dst ? dst[r] : first + r;
    out[d * stride + k] = rows ? rows[r * n_lags + k] : 0.0f;
}
