// Periodic wavelet transforms (GSL layout) and wavelet denoising.
//
// The prelude written by src/backend/cuda/dwt.rs defines:
//   REAL       float or double          KEY, KEY_BITS  unsigned type of REAL's bits
//   VEC        REALs in 16 bytes        NC, OFF        filter taps, GSL centring offset
//   __constant__ REAL H1[NC], G1[NC]    analysis low/high pass (forward)
//   __constant__ REAL H2[NC], G2[NC]    synthesis low/high pass (inverse)
//
// Index arithmetic (the same function as src/dwt/transform.rs):
//   forward  a[i] = sum_k H1[k] x[(2i + k - OFF) mod m],  d[i] likewise with G1
//   inverse  x[j] = sum over k with (2i + k - OFF) = j (mod m) of H2[k] a[i] + G2[k] d[i]
// With s = k - OFF, sigma_k = floor(s / 2) and rho_k = s & 1:
//   forward  a[i]                = sum_k H1[k] P_rho_k[i + sigma_k]   (P_0 = even x, P_1 = odd x)
//   inverse  x[2p + rho_k]      += H2[k] a[p - sigma_k] + G2[k] d[p - sigma_k]
// so the forward reads its input as two polyphase sequences ("F form") and the inverse
// reads contiguous sequences ("G form"); both with unit stride in the output index, which
// makes every shared-memory read a conflict-free 16-byte vector load.
//
// Buffers. A sequence seq of length len is kept in shared memory as buf[u] = seq[base - SHIFT + u]
// (indices mod len), u in [0, bl). Work item w computes VEC consecutive outputs
// base + VEC w + r and reads the window buf[VEC w .. VEC (w + NV)). In a whole-trace kernel
// base = 0 and the halo entries are periodic copies written alongside the main ones; in the
// tile kernels of long signals, base is the tile's first output and the halo is computed.

#define DEVI __device__ __forceinline__

static_assert(VEC * sizeof(REAL) == 16, "VEC must fill 16 bytes");
static_assert(sizeof(KEY) == sizeof(REAL), "KEY must hold the bits of REAL");
static_assert(NC % 2 == 0, "GSL's filters have an even number of taps");

// ---------------------------------------------------------------------------------------------
// Compile-time geometry of the filters.

__host__ __device__ constexpr int fdiv2(int s) { return s >= 0 ? s / 2 : -((1 - s) / 2); }
__host__ __device__ constexpr int round_up(int x, int a) { return (x + a - 1) / a * a; }

constexpr int SIG_MIN = fdiv2(-OFF);
constexpr int SIG_MAX = fdiv2(NC - 1 - OFF);
constexpr int SPAN = SIG_MAX - SIG_MIN;
// F form (forward input): shift and vectors per window.
constexpr int SHF = round_up(-SIG_MIN, VEC);
constexpr int B0F = SIG_MIN + SHF;
constexpr int NVF = (B0F + VEC + SPAN + VEC - 1) / VEC;
// G form (inverse input): tau = -sigma ranges over [-SIG_MAX, -SIG_MIN].
constexpr int SHG = round_up(SIG_MAX, VEC);
constexpr int B0G = SHG - SIG_MAX;
constexpr int NVG = (B0G + VEC + SPAN + VEC - 1) / VEC;

// Words (REALs) of the histogram scratch of a median: 256 bins, 32 warp sums, selection,
// one 64-bit maximum.
constexpr int HIST_INTS = 256 + 32 + 8 + 4;
constexpr int HIST_WORDS = round_up((HIST_INTS * 4 + (int)sizeof(REAL) - 1) / (int)sizeof(REAL), VEC);

// Buffer lengths (REALs) of sequences of length h >= 1 (0 when h is 0).
DEVI int blf(int h) { return h > 0 ? VEC * ((h + VEC - 1) / VEC + NVF - 1) : 0; }
DEVI int blg(int h) { return h > 0 ? VEC * ((h + VEC - 1) / VEC + NVG - 1) : 0; }

// ---------------------------------------------------------------------------------------------
// Small helpers.

DEVI void ldv(const float* p, float* o) {
    float4 v = *reinterpret_cast<const float4*>(p);
    o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
}
DEVI void ldv(const double* p, double* o) {
    double2 v = *reinterpret_cast<const double2*>(p);
    o[0] = v.x; o[1] = v.y;
}
DEVI void stv(float* p, const float* o) {
    *reinterpret_cast<float4*>(p) = make_float4(o[0], o[1], o[2], o[3]);
}
DEVI void stv(double* p, const double* o) {
    *reinterpret_cast<double2*>(p) = make_double2(o[0], o[1]);
}
// Stores VEC/2 values (the even or the odd half of a group) at an aligned position.
DEVI void st_half(float* p, float a, float b) { *reinterpret_cast<float2*>(p) = make_float2(a, b); }
DEVI void st_half(double* p, double a, double) { *p = a; }

DEVI bool aligned16(const void* p) { return (reinterpret_cast<unsigned long long>(p) & 15) == 0; }

DEVI KEY key_of(float v) { return __float_as_uint(v) & 0x7fffffffu; }
DEVI KEY key_of(double v) {
    return (unsigned long long)__double_as_longlong(v) & 0x7fffffffffffffffull;
}
DEVI float real_of(unsigned int k) { return __uint_as_float(k); }
DEVI double real_of(unsigned long long k) { return __longlong_as_double((long long)k); }

// The threads of one trace ("team") are a warp or a whole block.
DEVI void team_sync() {
    if (blockDim.x == 32) __syncwarp();
    else __syncthreads();
}

// Soft or hard shrinkage by lambda; `on` false leaves values alone.
struct Shrink {
    REAL lambda;
    bool on;
    bool hard;
    DEVI REAL operator()(REAL v) const {
        if (!on) return v;
        REAL m = fabs(v);
        if (hard) return m <= lambda ? (REAL)0 : v;
        m -= lambda;
        return m > (REAL)0 ? copysign(m, v) : (REAL)0;
    }
};

// sigma = median / 0.6745 and lambda = sigma * sqrt(2 ln n) in double, as the CPU does.
DEVI REAL universal_lambda(REAL median, double factor) {
    double sigma = (double)median / 0.6745;
    return (REAL)(sigma * factor);
}

// ---------------------------------------------------------------------------------------------
// Stores. A level writes each output once, at its main position; the periodic copies in a
// buffer's halo are made afterwards by `fill_halo`, so that the hot loops hold plain vector
// stores and no branches.

// buf[u] for u outside [shift, shift + len) takes seq[(u - shift) mod len] = buf[shift + that];
// the buffer is bl long and len a power of two.
DEVI void fill_halo(REAL* buf, int len, int shift, int bl, int t, int team) {
    const int right = bl - shift - len;
    for (int j = t; j < shift + right; j += team) {
        const int u = j < shift ? j : j + len;
        buf[u] = buf[shift + ((u - shift) & (len - 1))];
    }
}

// Where a whole-trace level's outputs go: a periodic F-form buffer (the next forward level's
// input: a[i] to phase i & 1 at i >> 1), a G-form buffer (details, the coarsest approximation,
// inverse outputs), or device memory. Shared buffers are offsets from the team's base, so that
// the compiler keeps shared and global addresses apart (shared stores, not generic ones).
enum WholeSinkKind { WS_F, WS_G, WS_GLOBAL };

struct WholeSink {
    int kind;
    REAL* smem;  // the team's shared memory
    int off0;    // F: phase 0 main start; G: main start (shifts included)
    int off1;    // F: phase 1 main start
    REAL* gp;    // GLOBAL: where output 0 goes
    bool vec;    // GLOBAL: 16-byte aligned

    // VEC outputs from i0 (a multiple of VEC); cnt < VEC only at a level's short tail.
    DEVI void put(int i0, const REAL* v, int cnt) const {
        if (cnt == VEC) {
            if (kind == WS_F) {
                const int q0 = i0 >> 1;
                st_half(smem + off0 + q0, v[0], v[2 % VEC]);
                st_half(smem + off1 + q0, v[1], v[3 % VEC]);
            } else if (kind == WS_G) {
                stv(smem + off0 + i0, v);
            } else if (vec) {
                stv(gp + i0, v);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; ++e) gp[i0 + e] = v[e];
            }
        } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                if (e < cnt) put1(i0 + e, v[e]);
        }
    }

    DEVI void put1(int i, REAL v) const {
        if (kind == WS_F) smem[((i & 1) ? off1 : off0) + (i >> 1)] = v;
        else if (kind == WS_G) smem[off0 + i] = v;
        else gp[i] = v;
    }
};

DEVI WholeSink to_f(REAL* smem, int f0, int f1) {
    return WholeSink{WS_F, smem, f0 + SHF, f1 + SHF, nullptr, false};
}
DEVI WholeSink to_g(REAL* smem, int g) { return WholeSink{WS_G, smem, g + SHG, 0, nullptr, false}; }
DEVI WholeSink to_global(REAL* smem, REAL* p) {
    return WholeSink{WS_GLOBAL, smem, 0, 0, p, aligned16(p)};
}

// Tile kernels' sinks (long signals): windows of the next level, and the outputs a tile owns.
enum TileSinkKind {
    TS_F_WIN,   // the next forward level's F-form window (outputs outside it dropped)
    TS_G_WIN,   // the next finer inverse level's G-form window
    TS_OWNED,   // device memory, only outputs in [x, y) (relative) kept
    TS_GLOBAL,  // device memory
};

struct TileSink {
    int kind;
    REAL* p0;
    REAL* p1;
    int x;  // F_WIN, G_WIN: window offset; OWNED: first owned
    int y;  // F_WIN, G_WIN: window length; OWNED: end of owned
    bool vec;

    DEVI void put(int i0, const REAL* v, int cnt) const {
        switch (kind) {
            case TS_GLOBAL:
                if (vec && cnt == VEC) stv(p0 + i0, v);
                else {
#pragma unroll
                    for (int e = 0; e < VEC; ++e)
                        if (e < cnt) p0[i0 + e] = v[e];
                }
                break;
            case TS_F_WIN: {
                const int q0 = (i0 >> 1) + x;
                if (q0 >= 0 && q0 + VEC / 2 <= y) {
                    st_half(p0 + q0, v[0], v[2 % VEC]);
                    st_half(p1 + q0, v[1], v[3 % VEC]);
                } else {
#pragma unroll
                    for (int e = 0; e < VEC; ++e) {
                        const int q = q0 + (e >> 1);
                        if (q >= 0 && q < y) ((e & 1) ? p1 : p0)[q] = v[e];
                    }
                }
                break;
            }
            case TS_G_WIN: {
                const int u0 = i0 + x;
                if (u0 >= 0 && u0 + VEC <= y) stv(p0 + u0, v);
                else {
#pragma unroll
                    for (int e = 0; e < VEC; ++e)
                        if (u0 + e >= 0 && u0 + e < y) p0[u0 + e] = v[e];
                }
                break;
            }
            case TS_OWNED:
                if (i0 >= x && i0 + VEC <= y) {
                    if (vec) stv(p0 + i0, v);
                    else {
#pragma unroll
                        for (int e = 0; e < VEC; ++e) p0[i0 + e] = v[e];
                    }
                }
                break;
            default: break;
        }
    }
};

DEVI TileSink tile_global(REAL* p) { return TileSink{TS_GLOBAL, p, nullptr, 0, 0, aligned16(p)}; }
DEVI TileSink tile_f_window(REAL* f0, REAL* f1, int qoff, int bl) {
    return TileSink{TS_F_WIN, f0, f1, qoff, bl, false};
}
DEVI TileSink tile_g_window(REAL* g, int uoff, int bl) {
    return TileSink{TS_G_WIN, g, nullptr, uoff, bl, false};
}
// `p` is where relative output 0 would go; `base` is checked for alignment.
DEVI TileSink tile_owned(REAL* p, int own_lo, int own_hi, const REAL* base) {
    return TileSink{TS_OWNED, p, nullptr, own_lo, own_hi, aligned16(base)};
}

// The forward transform multiplies and adds in the CPU reference's order and rounding (a
// product rounded, then a sum rounded), so that coefficients, medians and thresholds are
// bit-identical to it (a threshold that differed by an ulp could flip a hard decision). The
// inverse fuses them (half the instructions; results within an ulp or two). DWT_FMA fuses both.
DEVI float mac(float acc, float c, float v) {
#ifdef DWT_FMA
    return fmaf(c, v, acc);
#else
    return __fadd_rn(acc, __fmul_rn(c, v));
#endif
}
DEVI double mac(double acc, double c, double v) {
#ifdef DWT_FMA
    return fma(c, v, acc);
#else
    return __dadd_rn(acc, __dmul_rn(c, v));
#endif
}
DEVI float fmac(float acc, float c, float v) { return fmaf(c, v, acc); }
DEVI double fmac(double acc, double c, double v) { return fma(c, v, acc); }

// ---------------------------------------------------------------------------------------------
// One level, for `count` outputs (forward: approximation/detail pairs; inverse: sample pairs),
// VEC consecutive outputs per work item.

template <class SA, class SD>
DEVI void forward_level(const REAL* f0, const REAL* f1, int count, const SA& sa, const SD& sd,
                        int t, int team) {
    const int works = (count + VEC - 1) / VEC;
#pragma unroll 1
    for (int w = t; w < works; w += team) {
        REAL e[VEC * NVF], o[VEC * NVF];
#pragma unroll
        for (int j = 0; j < NVF; ++j) {
            ldv(f0 + VEC * (w + j), e + VEC * j);
            ldv(f1 + VEC * (w + j), o + VEC * j);
        }
        REAL a[VEC], d[VEC];
#pragma unroll
        for (int r = 0; r < VEC; ++r) {
            REAL sa_ = 0, sd_ = 0;
#pragma unroll
            for (int k = 0; k < NC; ++k) {
                const int s = k - OFF;
                const int idx = r + fdiv2(s) + SHF;
                const REAL v = (s & 1) ? o[idx] : e[idx];
                sa_ = mac(sa_, H1[k], v);
                sd_ = mac(sd_, G1[k], v);
            }
            a[r] = sa_;
            d[r] = sd_;
        }
        const int cnt = min(VEC, count - VEC * w);
        sa.put(VEC * w, a, cnt);
        sd.put(VEC * w, d, cnt);
    }
}

template <class SX>
DEVI void inverse_level(const REAL* ga, const REAL* gd, int count, const Shrink& sh, const SX& sx,
                        int t, int team) {
    const int works = (count + VEC - 1) / VEC;
#pragma unroll 1
    for (int w = t; w < works; w += team) {
        REAL A[VEC * NVG], D[VEC * NVG];
#pragma unroll
        for (int j = 0; j < NVG; ++j) {
            ldv(ga + VEC * (w + j), A + VEC * j);
            ldv(gd + VEC * (w + j), D + VEC * j);
        }
        if (sh.on) {
#pragma unroll
            for (int j = 0; j < VEC * NVG; ++j) D[j] = sh(D[j]);
        }
        REAL x[2 * VEC];
#pragma unroll
        for (int j = 0; j < 2 * VEC; ++j) x[j] = 0;
#pragma unroll
        for (int r = 0; r < VEC; ++r) {
#pragma unroll
            for (int k = 0; k < NC; ++k) {
                const int s = k - OFF;
                const int idx = r - fdiv2(s) + SHG;
                const int o = 2 * r + (s & 1);
                x[o] = fmac(x[o], H2[k], A[idx]);
                x[o] = fmac(x[o], G2[k], D[idx]);
            }
        }
        const int cnt = min(2 * VEC, 2 * (count - VEC * w));
        REAL lo[VEC], hi[VEC];
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            lo[j] = x[j];
            hi[j] = x[VEC + j];
        }
        sx.put(2 * VEC * w, lo, min(VEC, cnt));
        if (cnt > VEC) sx.put(2 * VEC * w + VEC, hi, cnt - VEC);
    }
}

// One output per thread, for levels with fewer work items than threads (the deep levels of a
// trace), where VEC-wide work items would leave most lanes idle.
DEVI void forward_level_scalar(const REAL* f0, const REAL* f1, int count, const WholeSink& sa,
                               const WholeSink& sd, int t, int team) {
#pragma unroll 1
    for (int i = t; i < count; i += team) {
        REAL e[SPAN + 1], o[SPAN + 1];
#pragma unroll
        for (int j = 0; j <= SPAN; ++j) {
            e[j] = f0[i + B0F + j];
            o[j] = f1[i + B0F + j];
        }
        REAL a = 0, d = 0;
#pragma unroll
        for (int k = 0; k < NC; ++k) {
            const int s = k - OFF;
            const int idx = fdiv2(s) - SIG_MIN;
            const REAL v = (s & 1) ? o[idx] : e[idx];
            a = mac(a, H1[k], v);
            d = mac(d, G1[k], v);
        }
        sa.put1(i, a);
        sd.put1(i, d);
    }
}

DEVI void inverse_level_scalar(const REAL* ga, const REAL* gd, int count, const Shrink& sh,
                               const WholeSink& sx, int t, int team) {
#pragma unroll 1
    for (int p = t; p < count; p += team) {
        REAL A[SPAN + 1], D[SPAN + 1];
#pragma unroll
        for (int j = 0; j <= SPAN; ++j) {
            A[j] = ga[p + B0G + j];
            D[j] = sh(gd[p + B0G + j]);
        }
        REAL x[2] = {0, 0};
#pragma unroll
        for (int k = 0; k < NC; ++k) {
            const int s = k - OFF;
            const int idx = SIG_MAX - fdiv2(s);
            const int o = s & 1;
            x[o] = fmac(x[o], H2[k], A[idx]);
            x[o] = fmac(x[o], G2[k], D[idx]);
        }
        sx.put1(2 * p, x[0]);
        sx.put1(2 * p + 1, x[1]);
    }
}

// ---------------------------------------------------------------------------------------------
// Loads from device memory into shared buffers (main positions; halos filled afterwards).

// A trace of n samples into level 1's F form (phases of n/2 at f0 and f1, offsets from smem).
DEVI void load_trace_f(const REAL* x, int n, REAL* smem, int f0, int f1, int t, int team) {
    const WholeSink s = to_f(smem, f0, f1);
    if (aligned16(x) && n >= VEC) {
        for (int c = t; c < n / VEC; c += team) {
            REAL v[VEC];
            ldv(x + VEC * c, v);
            s.put(VEC * c, v, VEC);
        }
    } else {
        for (int j = t; j < n; j += team) s.put1(j, x[j]);
    }
}

// A contiguous sequence of len values into G form at offset g.
DEVI void load_g(const REAL* p, int len, REAL* smem, int g, int t, int team) {
    const WholeSink s = to_g(smem, g);
    if (aligned16(p) && len >= VEC) {
        for (int c = t; c < len / VEC; c += team) {
            REAL v[VEC];
            ldv(p + VEC * c, v);
            s.put(VEC * c, v, VEC);
        }
    } else {
        for (int j = t; j < len; j += team) s.put1(j, p[j]);
    }
}

// ---------------------------------------------------------------------------------------------
// Median of |v[0..m)| by radix selection on the bits of |v| (non-negative floats order as
// their bit patterns), 8 bits a pass from the top, in a shared histogram. The median of an
// even count is the mean of the two middle values, as NumPy and src/dwt/denoise.rs take it.

// log2 of a team's size (a power of two).
DEVI int log2_team(int team) { return __ffs(team) - 1; }

DEVI int find_digit(int* hist, int nb, int& k, int* wsum, int* sel, int t, int team) {
    const int per = nb > team ? nb >> log2_team(team) : 1;
    const int b0 = t * per;
    int local = 0;
    for (int j = 0; j < per; ++j)
        if (b0 + j < nb) local += hist[b0 + j];
    const int lane = t & 31, warp = t >> 5;
    int incl = local;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        int y = __shfl_up_sync(0xffffffffu, incl, off);
        if (lane >= off) incl += y;
    }
    if (team > 32) {
        if (lane == 31) wsum[warp] = incl;
        team_sync();
        int add = 0;
        for (int w = 0; w < warp; ++w) add += wsum[w];
        incl += add;
    }
    const int excl = incl - local;
    if (local > 0 && k >= excl && k < incl) {
        int c = excl;
        for (int j = 0; j < per; ++j) {
            int cnt = hist[b0 + j];
            if (k < c + cnt) {
                sel[0] = b0 + j;
                sel[1] = k - c;
                break;
            }
            c += cnt;
        }
    }
    for (int j = 0; j < per; ++j)
        if (b0 + j < nb) hist[b0 + j] = 0;
    team_sync();
    k = sel[1];
    return sel[0];
}

DEVI KEY warp_max(KEY v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        KEY o = __shfl_xor_sync(0xffffffffu, v, off);
        v = o > v ? o : v;
    }
    return v;
}

// Keys a thread keeps in registers; longer sequences are read from shared memory each pass.
constexpr int MEDIAN_REGS = 64 / (int)sizeof(REAL);

// Ascending bitonic sort of one key per lane across a warp.
DEVI KEY warp_sort(KEY c, int lane) {
#pragma unroll
    for (int size = 2; size <= 32; size <<= 1) {
#pragma unroll
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            const KEY o = __shfl_xor_sync(0xffffffffu, c, stride);
            const bool keep_min = ((lane & stride) == 0) == ((lane & size) == 0);
            c = keep_min ? (o < c ? o : c) : (o > c ? o : c);
        }
    }
    return c;
}

// The median of a team's keys (registers) in one histogram pass over their values: 256 bins
// of equal width from 0 to the largest value. That map is monotone, so the counts below a bin
// are exact; the keys of the upper middle's bin (at most 32) are then sorted by the first
// warp. Noise fills the bins evenly (a few keys each, for up to MEDIAN_BY_VALUE_MAX keys),
// where the bit-digit passes put most keys in the few bins of one exponent. Returns false,
// the histogram zeroed, when that bin holds more than 32 keys or the largest value is not a
// finite scale (the bit-digit passes decide then).
constexpr int MEDIAN_BY_VALUE_MAX = 2048;

DEVI bool median_by_value(const KEY* keys, int mine, int m, int* scratch, int t, int team,
                          REAL& median) {
    int* hist = scratch;
    int* wsum = scratch + 256;
    int* sel = scratch + 288;
    KEY* pick = reinterpret_cast<KEY*>(sel + 2);  // the upper and the lower middle key
    unsigned long long* top_all = reinterpret_cast<unsigned long long*>(sel + 6);
    unsigned long long* below_all = reinterpret_cast<unsigned long long*>(scratch + 296);
    const int lane = t & 31;
    KEY top = 0;
#pragma unroll
    for (int j = 0; j < MEDIAN_REGS; ++j)
        if (j < mine && keys[j] > top) top = keys[j];
    top = warp_max(top);
    if (team > 32) {
        if (lane == 0) atomicMax(top_all, (unsigned long long)top);
        team_sync();
        top = (KEY)*top_all;
    }
    if (top == 0) {
        team_sync();  // every thread has read top_all before the next median clears it
        median = 0;
        return true;
    }
    const REAL scale = (REAL)256 / real_of(top);
    if (!isfinite(scale)) return false;
    auto bin = [&](KEY key) { return min(255, (int)(real_of(key) * scale)); };
#pragma unroll
    for (int j = 0; j < MEDIAN_REGS; ++j)
        if (j < mine) atomicAdd(&hist[bin(keys[j])], 1);
    team_sync();
    int k = m / 2;  // rank of the upper middle value; then its rank within its bin
    const int b = find_digit(hist, 256, k, wsum, sel, t, team);
    // The bin's keys (a few, in any order: they are sorted next) and the largest key below it.
    KEY* cand = reinterpret_cast<KEY*>(hist);
    int* fill = wsum;  // find_digit is done with it
    if (t == 0) *fill = 0;
    team_sync();
    KEY below = 0;
#pragma unroll
    for (int j = 0; j < MEDIAN_REGS; ++j) {
        if (j >= mine) continue;
        const int bj = bin(keys[j]);
        if (bj < b) {
            below = keys[j] > below ? keys[j] : below;
        } else if (bj == b) {
            const int pos = atomicAdd(fill, 1);
            if (pos < 32) cand[pos] = keys[j];
        }
    }
    if (team > 32) {
        below = warp_max(below);
        if (lane == 0 && below != 0) atomicMax(below_all, (unsigned long long)below);
    }
    team_sync();
    const int count = *fill;
    if (count > 32) {
        if (t < 32) cand[t] = 0;  // the histogram's words back to zero
        if (t == 0) *below_all = 0;
        team_sync();
        return false;
    }
    if (team == 32) {  // one warp: its picks by shuffles
        KEY c = t < count ? cand[t] : ~(KEY)0;
        __syncwarp();  // every lane has read its candidate before the scratch is reused
        c = warp_sort(c, t);
        const REAL upper = real_of(__shfl_sync(0xffffffffu, c, k));
        const KEY lower_key = __shfl_sync(0xffffffffu, c, k > 0 ? k - 1 : 0);
        const REAL lower = k > 0 ? real_of(lower_key) : real_of(warp_max(below));
        median = (m & 1) ? upper : (lower + upper) / (REAL)2;
        return true;
    }
    if (t < 32) {
        KEY c = t < count ? cand[t] : ~(KEY)0;
        c = warp_sort(c, t);
        if (t == k) pick[0] = c;
        if (t == k - 1) pick[1] = c;
    }
    team_sync();
    const REAL upper = real_of(pick[0]);
    const REAL lower = k > 0 ? real_of(pick[1]) : real_of((KEY)*below_all);
    team_sync();  // every thread has read the picks before the next median writes them
    median = (m & 1) ? upper : (lower + upper) / (REAL)2;
    return true;
}

DEVI REAL team_median(const REAL* v, int m, int* scratch, int t, int team) {
    int* hist = scratch;
    int* wsum = scratch + 256;
    int* sel = scratch + 288;
    unsigned long long* best_all = reinterpret_cast<unsigned long long*>(scratch + 296);
    unsigned long long* top_all = reinterpret_cast<unsigned long long*>(scratch + 294);
    for (int b = t; b < 256; b += team) hist[b] = 0;
    if (t == 0) {
        *best_all = 0;
        *top_all = 0;
    }
    const bool in_regs = m <= MEDIAN_REGS * team;
    const int mine = t < m ? (m - t + team - 1) >> log2_team(team) : 0;  // keys of this thread
    KEY keys[MEDIAN_REGS];
#pragma unroll
    for (int j = 0; j < MEDIAN_REGS; ++j) keys[j] = in_regs && j < mine ? key_of(v[t + j * team]) : 0;
    team_sync();
    if (in_regs && m <= MEDIAN_BY_VALUE_MAX) {
        REAL median;
        if (median_by_value(keys, mine, m, scratch, t, team, median)) return median;
    }
    KEY prefix = 0, mask = 0;
    int k = m / 2;  // rank of the upper middle value
    for (int top = KEY_BITS - 2; top >= 0; top -= 8) {
        const int lo = top >= 7 ? top - 7 : 0;
        const int nb = 1 << (top - lo + 1);
        auto count = [&](KEY key) {
            if ((key & mask) == prefix) atomicAdd(&hist[(int)(key >> lo) & (nb - 1)], 1);
        };
        if (in_regs) {
#pragma unroll
            for (int j = 0; j < MEDIAN_REGS; ++j)
                if (j < mine) count(keys[j]);
        } else {
            for (int i = t; i < m; i += team) count(key_of(v[i]));
        }
        team_sync();
        const int digit = find_digit(hist, nb, k, wsum, sel, t, team);
        prefix |= (KEY)digit << lo;
        mask |= (KEY)(nb - 1) << lo;
    }
    const REAL upper = real_of(prefix);
    if (m & 1) return upper;
    REAL lower = upper;
    if (k == 0) {
        // No value equal to the upper middle ranks below it: the lower middle is the largest
        // value under it.
        KEY best = 0;
        auto keep = [&](KEY key) {
            if (key < prefix && key > best) best = key;
        };
        if (in_regs) {
#pragma unroll
            for (int j = 0; j < MEDIAN_REGS; ++j)
                if (j < mine) keep(keys[j]);
        } else {
            for (int i = t; i < m; i += team) keep(key_of(v[i]));
        }
        best = warp_max(best);
        if ((t & 31) == 0) atomicMax(best_all, (unsigned long long)best);
        team_sync();
        lower = real_of((KEY)*best_all);
        team_sync();
    }
    return (lower + upper) / (REAL)2;
}

// ---------------------------------------------------------------------------------------------
// Whole-trace kernels: one team (a warp, or a block) per trace, all levels in shared memory.
// Layout per trace (REALs), mirrored by `Layout` in src/backend/cuda/dwt.rs:
//   X0  level 1's F form; the G-form outputs of even inverse levels
//   X1  level 2's F form; odd inverse levels >= 3; the median's histogram
//   D   detail level l in G form, l = 1..L            (inverse and denoise)
//   A   the level-L approximation in G form           (inverse and denoise)
//   LAM the threshold of each level                   (inverse and denoise)

enum Kind { KIND_FORWARD = 0, KIND_INVERSE = 1, KIND_DENOISE = 2 };

struct Layout {
    int x0, x1, d, a, lam, total;
};

DEVI Layout layout_of(int n, int L, int kind) {
    Layout s;
    const int h1 = n / 2, h2 = n / 4 > 0 ? n / 4 : 1;
    int x0 = 2 * blf(h1), x1 = 2 * blf(h2);
    int d = 0, a = 0, lam = 0;
    if (kind != KIND_FORWARD) {
        x0 = max(x0, blg(h1));
        x1 = max(x1, blg(h2));
        for (int l = 1; l <= L; ++l) d += blg(n >> l);
        a = blg(n >> L);
        lam = round_up(L, VEC);
    }
    if (kind == KIND_DENOISE) x1 = max(x1, HIST_WORDS);
    s.x0 = 0;
    s.x1 = x0;
    s.d = x0 + x1;
    s.a = s.d + d;
    s.lam = s.a + a;
    s.total = s.lam + lam;
    return s;
}

extern __shared__ __align__(16) unsigned char smem_raw[];

// Per-trace shared memory and the team's trace; null when the team has no trace.
DEVI REAL* team_smem(int n_traces, int smem_words, int& trace) {
    trace = blockIdx.x * blockDim.y + threadIdx.y;
    if (trace >= n_traces) return nullptr;
    return reinterpret_cast<REAL*>(smem_raw) + (size_t)threadIdx.y * smem_words;
}

DEVI void check_layout(const Layout& s, int smem_words) {
    if (s.total > smem_words) __trap();  // host and device disagree on the layout: a bug
}

// Both phases of an F-form buffer at offset f (phase length h).
DEVI void fill_halo_f(REAL* smem, int f, int h, int t, int team) {
    const int bl = blf(h);
    fill_halo(smem + f, h, SHF, bl, t, team);
    fill_halo(smem + f + bl, h, SHF, bl, t, team);
}

// Level 1's input: the trace at x, into X0.
DEVI void load_level1(const REAL* x, REAL* smem, const Layout& s, int n, int t, int team) {
    const int h = n / 2;
    load_trace_f(x, n, smem, s.x0, s.x0 + blf(h), t, team);
    team_sync();
    fill_halo_f(smem, s.x0, h, t, team);
    team_sync();
}

// Deep levels of a warp team, from the first whose input has at most 32 samples: lane i holds
// sample i, and a level is NC shuffles per output (no shared-memory round trip, no barrier).
// The sum runs in the CPU's order with its rounding, as in forward_level.
constexpr int TAIL = 32;

DEVI void forward_tail(REAL* smem, const Layout& s, int n, int l0, int L, int fin, int d_off,
                       REAL* y, int lane) {
    int m = n >> (l0 - 1);
    const int bl = blf(m / 2);
    REAL x = lane < m ? smem[fin + ((lane & 1) ? bl : 0) + SHF + (lane >> 1)] : (REAL)0;
    for (int l = l0; l <= L; ++l) {
        const int h = m / 2;
        REAL a = 0, d = 0;
#pragma unroll
        for (int k = 0; k < NC; ++k) {
            const REAL v = __shfl_sync(0xffffffffu, x, (2 * lane + k - OFF) & (m - 1));
            a = mac(a, H1[k], v);
            d = mac(d, G1[k], v);
        }
        if (lane < h) {
            if (y) y[h + lane] = d;
            else smem[d_off + SHG + lane] = d;
            if (l == L) {
                if (y) y[lane] = a;
                else smem[s.a + SHG + lane] = a;
            }
        }
        x = a;
        m = h;
        d_off += blg(h);
    }
    __syncwarp();
}

// Forward levels 1..L of the trace in X0. Details and a_L go to device memory at y (forward
// transform) or to D and A in shared memory, halos filled (denoise).
DEVI void forward_levels(REAL* smem, const Layout& s, int n, int L, REAL* y, int t, int team) {
    int d_off = s.d;
    for (int l = 1; l <= L; ++l) {
        if (team == 32 && (n >> (l - 1)) <= TAIL) {
            forward_tail(smem, s, n, l, L, (l & 1) ? s.x0 : s.x1, d_off, y, t);
            break;
        }
        const int h = n >> l, hn = h / 2;
        const int fin = (l & 1) ? s.x0 : s.x1, fo = (l & 1) ? s.x1 : s.x0;
        const WholeSink sd = y ? to_global(smem, y + h) : to_g(smem, d_off);
        const WholeSink sa = l < L ? to_f(smem, fo, fo + blf(hn))
                                   : (y ? to_global(smem, y) : to_g(smem, s.a));
        const REAL* f0 = smem + fin;
        const REAL* f1 = f0 + blf(h);
        if ((h + VEC - 1) / VEC >= team) {
            forward_level(f0, f1, h, sa, sd, t, team);
        } else {
            forward_level_scalar(f0, f1, h, sa, sd, t, team);
        }
        team_sync();
        if (l < L) {
            fill_halo_f(smem, fo, hn, t, team);
            team_sync();
        }
        d_off += blg(h);
    }
    if (!y) {
        // Details and the approximation are read with their halos by the inverse only.
        d_off = s.d;
        for (int l = 1; l <= L; ++l) {
            fill_halo(smem + d_off, n >> l, SHG, blg(n >> l), t, team);
            d_off += blg(n >> l);
        }
        fill_halo(smem + s.a, n >> L, SHG, blg(n >> L), t, team);
        team_sync();
    }
}

// Thresholds of inverse levels: level l (of this kernel) uses lam[level0 + l - 1] when bit
// level0 + l - 1 of the mask is set; lam null: no thresholding.
struct ShrinkTable {
    const REAL* lam;
    int level0;
    unsigned long long mask;
    bool hard;
    DEVI Shrink at(int l) const {
        const int g = level0 + l;
        const bool on = lam != nullptr && g <= 64 && ((mask >> (g - 1)) & 1);
        return Shrink{on ? lam[g - 1] : (REAL)0, on, hard};
    }
};

// The deep inverse levels of a warp team, L down to the first whose output exceeds 32 samples:
// lane i holds a[i], then its output x[i]. Returns the next level to run from shared memory
// (0 when done); its input is stored, halos filled.
DEVI int inverse_tail(REAL* smem, const Layout& s, int n, int L, const ShrinkTable& table,
                      REAL* y, int& d_off, int lane) {
    int h = n >> L;
    REAL a = lane < h ? smem[s.a + SHG + lane] : (REAL)0;
    int l = L;
    for (; l >= 1 && 2 * h <= TAIL; --l, h *= 2) {
        d_off -= blg(h);
        const Shrink sh = table.at(l);
        const REAL d = lane < h ? sh(smem[d_off + SHG + lane]) : (REAL)0;
        // x[j] takes the taps k of j + OFF's parity: k = 2 q + rho.
        const int rho = (lane + OFF) & 1;
        REAL x = 0;
#pragma unroll
        for (int q = 0; q < NC / 2; ++q) {
            const REAL ch = rho ? H2[2 * q + 1] : H2[2 * q];
            const REAL cg = rho ? G2[2 * q + 1] : G2[2 * q];
            const int src = ((lane + OFF - 2 * q - rho) >> 1) & (h - 1);
            const REAL av = __shfl_sync(0xffffffffu, a, src);
            const REAL dv = __shfl_sync(0xffffffffu, d, src);
            x = fmac(x, ch, av);
            x = fmac(x, cg, dv);
        }
        a = x;
    }
    // a holds the output of level l + 1: 2 h' = h samples.
    if (l == 0) {
        if (lane < h) y[lane] = a;
        __syncwarp();
        return 0;
    }
    const int gx = (l + 1) % 2 == 0 ? s.x0 : s.x1;
    if (lane < h) smem[gx + SHG + lane] = a;
    __syncwarp();
    fill_halo(smem + gx, h, SHG, blg(h), lane, 32);
    __syncwarp();
    return l;
}

// Inverse levels L..1 from A and D (halos filled); level 1 writes to y.
DEVI void inverse_levels(REAL* smem, const Layout& s, int n, int L, const ShrinkTable& table,
                         REAL* y, int t, int team) {
    int d_off = s.a;  // D_l starts where D_{l+1} ends; walk down from the end of D
    int first = L;
    if (team == 32 && 2 * (n >> L) <= TAIL) first = inverse_tail(smem, s, n, L, table, y, d_off, t);
    for (int l = first; l >= 1; --l) {
        const int h = n >> l;
        d_off -= blg(h);
        const REAL* ga = smem + (l == L ? s.a : ((l + 1) % 2 == 0 ? s.x0 : s.x1));
        const REAL* gd = smem + d_off;
        const int gx = l % 2 == 0 ? s.x0 : s.x1;
        const WholeSink sx = l > 1 ? to_g(smem, gx) : to_global(smem, y);
        const Shrink sh = table.at(l);
        if ((h + VEC - 1) / VEC >= team) {
            inverse_level(ga, gd, h, sh, sx, t, team);
        } else {
            inverse_level_scalar(ga, gd, h, sh, sx, t, team);
        }
        team_sync();
        if (l > 1) {
            fill_halo(smem + gx, 2 * h, SHG, blg(2 * h), t, team);
            team_sync();
        }
    }
}

extern "C" __global__ void __launch_bounds__(1024)
    dwt_forward(const REAL* in, REAL* out, long long in_stride, long long out_stride, int n_traces,
                int log2n, int L, int smem_words) {
    int trace;
    REAL* smem = team_smem(n_traces, smem_words, trace);
    if (!smem) return;
    const int t = threadIdx.x, team = blockDim.x, n = 1 << log2n;
    const Layout s = layout_of(n, L, KIND_FORWARD);
    check_layout(s, smem_words);
    load_level1(in + trace * in_stride, smem, s, n, t, team);
    forward_levels(smem, s, n, L, out + trace * out_stride, t, team);
}

extern "C" __global__ void __launch_bounds__(1024)
    dwt_inverse(const REAL* in, REAL* out, long long in_stride, long long out_stride, int n_traces,
                int log2n, int L, const REAL* lam, int lam_stride, int level0,
                unsigned long long mask, int hard, int smem_words) {
    int trace;
    REAL* smem = team_smem(n_traces, smem_words, trace);
    if (!smem) return;
    const int t = threadIdx.x, team = blockDim.x, n = 1 << log2n;
    const Layout s = layout_of(n, L, KIND_INVERSE);
    check_layout(s, smem_words);
    const REAL* x = in + trace * in_stride;
    load_g(x, n >> L, smem, s.a, t, team);
    int d_off = s.d;
    for (int l = 1; l <= L; ++l) {
        load_g(x + (n >> l), n >> l, smem, d_off, t, team);
        d_off += blg(n >> l);
    }
    team_sync();
    d_off = s.d;
    for (int l = 1; l <= L; ++l) {
        fill_halo(smem + d_off, n >> l, SHG, blg(n >> l), t, team);
        d_off += blg(n >> l);
    }
    fill_halo(smem + s.a, n >> L, SHG, blg(n >> L), t, team);
    team_sync();
    const ShrinkTable table{lam ? lam + (size_t)trace * lam_stride : nullptr, level0, mask, hard != 0};
    inverse_levels(smem, s, n, L, table, out + trace * out_stride, t, team);
}

// Denoise flags.
#define DENOISE_UNIVERSAL 1
#define DENOISE_PER_LEVEL 2
#define DENOISE_HARD 4

// The threshold of every level into lam[0..L), and the medians (traces x 1 for the finest
// level, traces x L per level) into device memory.
DEVI void denoise_thresholds(REAL* smem, const Layout& s, int n, int L, int flags,
                             unsigned long long mask, REAL fixed_lambda, double factor,
                             REAL* medians, int trace, int t, int team) {
    REAL* lam = smem + s.lam;
    int* scratch = reinterpret_cast<int*>(smem + s.x1);
    auto selected = [&](int l) { return l <= 64 && ((mask >> (l - 1)) & 1); };
    if (!(flags & DENOISE_UNIVERSAL)) {
        if (t == 0)
            for (int l = 1; l <= L; ++l) lam[l - 1] = fixed_lambda;
    } else if (flags & DENOISE_PER_LEVEL) {
        int d_off = s.d;
        for (int l = 1; l <= L; ++l) {
            REAL med = 0;
            if (selected(l)) {
                med = team_median(smem + d_off + SHG, n >> l, scratch, t, team);
                if (t == 0) lam[l - 1] = universal_lambda(med, factor);
            }
            if (t == 0) medians[(size_t)trace * L + l - 1] = med;
            d_off += blg(n >> l);
        }
    } else {
        bool any = false;
        for (int l = 1; l <= L; ++l) any |= selected(l);
        REAL med = 0;
        if (any) med = team_median(smem + s.d + SHG, n / 2, scratch, t, team);
        if (t == 0) {
            medians[trace] = med;
            const REAL lambda = universal_lambda(med, factor);
            for (int l = 1; l <= L; ++l) lam[l - 1] = lambda;
        }
    }
    team_sync();
}

extern "C" __global__ void __launch_bounds__(1024)
    dwt_denoise(const REAL* in, REAL* out, long long in_stride, long long out_stride, int n_traces,
                int log2n, int L, int flags, unsigned long long mask, REAL fixed_lambda,
                double factor, REAL* medians, int smem_words) {
    int trace;
    REAL* smem = team_smem(n_traces, smem_words, trace);
    if (!smem) return;
    const int t = threadIdx.x, team = blockDim.x, n = 1 << log2n;
    const Layout s = layout_of(n, L, KIND_DENOISE);
    check_layout(s, smem_words);
    load_level1(in + trace * in_stride, smem, s, n, t, team);
    forward_levels(smem, s, n, L, nullptr, t, team);
    denoise_thresholds(smem, s, n, L, flags, mask, fixed_lambda, factor, medians, trace, t, team);
    const ShrinkTable table{smem + s.lam, 0, mask, (flags & DENOISE_HARD) != 0};
    inverse_levels(smem, s, n, L, table, out + trace * out_stride, t, team);
}

// ---------------------------------------------------------------------------------------------
// Long signals: K levels per pass over tiles. Block (b, trace) of a forward pass owns the
// level-(s+K) outputs [b T, (b+1) T) and, at level s+k, the details [b T 2^(K-k), (b+1) T 2^(K-k));
// it computes the approximations it needs for that, halo included, from an input window.

DEVI int floor_vec(int x) { return x & ~(VEC - 1); }

// VEC values from p[(g0 + e) & (len - 1)]: one vector load where p is aligned (g0 is a multiple
// of VEC, len a power of two >= VEC).
DEVI void ld_wrapped(const REAL* p, int g0, int len, bool vec, REAL* v) {
    if (vec) {
        ldv(p + (g0 & (len - 1)), v);
    } else {
#pragma unroll
        for (int e = 0; e < VEC; ++e) v[e] = p[(g0 + e) & (len - 1)];
    }
}

// First output and output count (a multiple of VEC) that level k of a forward pass computes.
DEVI void forward_range(int k, int K, int b, int T, int& lo, int& cnt) {
    lo = b * T;
    cnt = T;
    for (int j = K - 1; j >= k; --j) {
        const int l2 = floor_vec(2 * lo + 2 * SIG_MIN);
        const int h2 = 2 * (lo + cnt) + 2 * SIG_MAX;
        lo = l2;
        cnt = round_up(h2 - l2, VEC);
    }
}

// F-form window length (per phase) of level k's input.
DEVI int forward_window(int cnt) { return VEC * (cnt / VEC + NVF); }

struct TileFwdLayout {
    int f0, f1, total;
};
DEVI TileFwdLayout tile_fwd_layout(int K, int T) {
    int lo, c1, c2 = 0;
    forward_range(1, K, 0, T, lo, c1);
    if (K >= 2) forward_range(2, K, 0, T, lo, c2);
    TileFwdLayout s;
    s.f0 = 0;
    s.f1 = 2 * forward_window(c1);
    s.total = s.f1 + (K >= 2 ? 2 * forward_window(c2) : 0);
    return s;
}

DEVI void forward_tiles_body(const REAL* src, long long src_stride, int log2m, REAL* coef,
                             long long coef_stride, int log2n, int s0, int K, int log2T, REAL* dst,
                             long long dst_stride, int smem_words) {
    const int b = blockIdx.x, trace = blockIdx.y, t = threadIdx.x, team = blockDim.x;
    const int m = 1 << log2m, n = 1 << log2n, T = 1 << log2T;
    const TileFwdLayout s = tile_fwd_layout(K, T);
    if (s.total > smem_words) __trap();
    REAL* base = reinterpret_cast<REAL*>(smem_raw);
    const REAL* x = src + trace * src_stride;
    REAL* c = coef + trace * coef_stride;

    // The level-s0 window: polyphase indices [lo_1 - SHF, lo_1 - SHF + bl).
    {
        int lo, cnt;
        forward_range(1, K, b, T, lo, cnt);
        const int bl = forward_window(cnt);
        const int g0 = 2 * (lo - SHF);  // a multiple of 2 VEC
        REAL* f0 = base + s.f0;
        REAL* f1 = f0 + bl;
        const bool vec = aligned16(x);
        for (int c4 = t; c4 < 2 * bl / VEC; c4 += team) {
            REAL v[VEC];
            ld_wrapped(x, g0 + VEC * c4, m, vec, v);
            st_half(f0 + VEC / 2 * c4, v[0], v[2 % VEC]);
            st_half(f1 + VEC / 2 * c4, v[1], v[3 % VEC]);
        }
    }
    __syncthreads();
    for (int k = 1; k <= K; ++k) {
        int lo, cnt;
        forward_range(k, K, b, T, lo, cnt);
        const int bl = forward_window(cnt);
        const REAL* f0 = base + ((k & 1) ? s.f0 : s.f1);
        const REAL* f1 = f0 + bl;
        const int level = s0 + k;
        const int own = T << (K - k);
        // Details of this level: coefficients [n >> level, n >> (level - 1)).
        const TileSink sd = tile_owned(c + (n >> level) + lo, b * own - lo, (b + 1) * own - lo, c);
        TileSink sa;
        if (k < K) {
            int lo2, cnt2;
            forward_range(k + 1, K, b, T, lo2, cnt2);
            const int bl2 = forward_window(cnt2);
            REAL* g0 = base + ((k & 1) ? s.f1 : s.f0);
            sa = tile_f_window(g0, g0 + bl2, lo / 2 - lo2 + SHF, bl2);
        } else {
            REAL* a = dst + trace * dst_stride;
            sa = tile_owned(a + lo, 0, T, a);
        }
        forward_level(f0, f1, cnt, sa, sd, t, team);
        __syncthreads();
    }
}

// Inverse pass: block (b, trace) reconstructs level-s0 samples [b T0, (b+1) T0) from the
// level-(s0+K) approximation and details s0+1..s0+K. Level k computes sample pairs
// [P_k, P_k + c_k) of level s0+k-1.
DEVI void inverse_range(int k, int b, int T0, int& P, int& c) {
    P = b * (T0 / 2);
    c = T0 / 2;
    for (int j = 2; j <= k; ++j) {
        const int jlo = P - SIG_MAX, jhi = P + c - SIG_MIN;  // samples level j-1 reads
        const int plo = floor_vec(jlo >= 0 ? jlo / 2 : -((1 - jlo) / 2));
        const int phi = (jhi + 1) >> 1;
        P = plo;
        c = round_up(phi - plo, VEC);
    }
}

DEVI int inverse_window(int c) { return VEC * (c / VEC + NVG); }

struct TileInvLayout {
    int a, y0, y1, d, total;  // d: D_1 first, then D_2 ...
};
DEVI TileInvLayout tile_inv_layout(int K, int T0) {
    TileInvLayout s;
    int P, c, d = 0, y0 = 0, y1 = 0;
    for (int k = 1; k <= K; ++k) {
        inverse_range(k, 0, T0, P, c);
        const int bl = inverse_window(c);
        d += bl;
        // Level k+1 writes its output into level k's a-window.
        if (k < K) {
            if ((k + 1) % 2 == 0) y0 = max(y0, bl);
            else y1 = max(y1, bl);
        }
    }
    inverse_range(K, 0, T0, P, c);
    s.a = 0;
    s.y0 = inverse_window(c);
    s.y1 = s.y0 + y0;
    s.d = s.y1 + y1;
    s.total = s.d + d;
    return s;
}

DEVI void inverse_tiles_body(const REAL* src, long long src_stride, const REAL* coef,
                             long long coef_stride, int log2n, int s0, int K, int log2T0, REAL* dst,
                             long long dst_stride, const REAL* lam, int lam_stride,
                             unsigned long long mask, int hard, int smem_words) {
    const int b = blockIdx.x, trace = blockIdx.y, t = threadIdx.x, team = blockDim.x;
    const int n = 1 << log2n, T0 = 1 << log2T0;
    const TileInvLayout s = tile_inv_layout(K, T0);
    if (s.total > smem_words) __trap();
    REAL* base = reinterpret_cast<REAL*>(smem_raw);
    const REAL* c = coef + trace * coef_stride;
    const REAL* lam_t = lam ? lam + (size_t)trace * lam_stride : nullptr;

    // Windows of the details (thresholded here) and of the level-(s0+K) approximation.
    int d_off = s.d;
    for (int k = 1; k <= K; ++k) {
        int P, cnt;
        inverse_range(k, b, T0, P, cnt);
        const int bl = inverse_window(cnt);
        const int level = s0 + k;
        const int len = n >> level;
        const REAL* dsrc = c + len;
        const bool on = lam_t != nullptr && level <= 64 && ((mask >> (level - 1)) & 1);
        const Shrink sh{on ? lam_t[level - 1] : (REAL)0, on, hard != 0};
        const int g0 = P - SHG;  // a multiple of VEC
        const bool vec = aligned16(c);
        for (int c4 = t; c4 < bl / VEC; c4 += team) {
            REAL v[VEC];
            ld_wrapped(dsrc, g0 + VEC * c4, len, vec, v);
#pragma unroll
            for (int e = 0; e < VEC; ++e) v[e] = sh(v[e]);
            stv(base + d_off + VEC * c4, v);
        }
        if (k == K) {
            const REAL* asrc = src + trace * src_stride;
            const bool avec = aligned16(asrc);
            for (int c4 = t; c4 < bl / VEC; c4 += team) {
                REAL v[VEC];
                ld_wrapped(asrc, g0 + VEC * c4, len, avec, v);
                stv(base + s.a + VEC * c4, v);
            }
        }
        d_off += bl;
    }
    __syncthreads();
    const Shrink none{(REAL)0, false, false};
    for (int k = K; k >= 1; --k) {
        int P, cnt;
        inverse_range(k, b, T0, P, cnt);
        int d_k = s.d;
        for (int j = 1; j < k; ++j) {
            int Pj, cj;
            inverse_range(j, b, T0, Pj, cj);
            d_k += inverse_window(cj);
        }
        const REAL* ga = base + (k == K ? s.a : ((k + 1) % 2 == 0 ? s.y0 : s.y1));
        TileSink sx;
        if (k > 1) {
            int P1, c1;
            inverse_range(k - 1, b, T0, P1, c1);
            REAL* gx = base + (k % 2 == 0 ? s.y0 : s.y1);
            sx = tile_g_window(gx, 2 * P - (P1 - SHG), inverse_window(c1));
        } else {
            sx = tile_global(dst + trace * dst_stride + 2 * P);
        }
        inverse_level(ga, base + d_k, cnt, none, sx, t, team);
        __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(256)
    dwt_forward_tiles(const REAL* src, long long src_stride, int log2m, REAL* coef,
                      long long coef_stride, int log2n, int s0, int K, int log2T, REAL* dst,
                      long long dst_stride, int smem_words) {
    forward_tiles_body(src, src_stride, log2m, coef, coef_stride, log2n, s0, K, log2T, dst,
                            dst_stride, smem_words);
}

extern "C" __global__ void __launch_bounds__(256)
    dwt_inverse_tiles(const REAL* src, long long src_stride, const REAL* coef,
                      long long coef_stride, int log2n, int s0, int K, int log2T0, REAL* dst,
                      long long dst_stride, const REAL* lam, int lam_stride,
                      unsigned long long mask, int hard, int smem_words) {
    inverse_tiles_body(src, src_stride, coef, coef_stride, log2n, s0, K, log2T0, dst,
                            dst_stride, lam, lam_stride, mask, hard, smem_words);
}

// ---------------------------------------------------------------------------------------------
// Long signals: median of |d| per segment (trace, level) by radix selection over device
// memory. Segment g = trace * seg_levels + li is detail level li + 1 (seg_levels = 1: level 1
// only). State per segment: prefix and mask of the selected bits, the rank left, the largest
// key under the prefix (for the lower middle value).

struct Segment {
    const REAL* p;
    int len;
    bool on;
};
DEVI Segment segment_of(const REAL* coef, long long coef_stride, int log2n, int seg_levels,
                        unsigned long long mask, int g) {
    const int trace = g / seg_levels, li = g % seg_levels;
    const int len = (1 << log2n) >> (li + 1);
    Segment s{coef + trace * coef_stride + len, len, ((mask >> li) & 1) != 0};
    return s;
}

extern "C" __global__ void dwt_select_init(int log2n, int seg_levels, int n_segs,
                                           unsigned long long* prefix, unsigned long long* pmask,
                                           int* rank, unsigned long long* below) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n_segs) return;
    const int len = (1 << log2n) >> (g % seg_levels + 1);
    prefix[g] = 0;
    pmask[g] = 0;
    rank[g] = len / 2;
    below[g] = 0;
}

// Histogram bins per segment: digits of up to 11 bits (3 passes over a float's 31 bits).
#define SELECT_BINS 2048

// One histogram pass over the keys under the segment's prefix. The last pass also keeps the
// largest key below the prefix, from which the lower middle value follows (select_digit).
extern "C" __global__ void __launch_bounds__(256)
    dwt_select_count(const REAL* coef, long long coef_stride, int log2n, int seg_levels,
                     unsigned long long mask, int lo, int width, int last,
                     const unsigned long long* prefix, const unsigned long long* pmask, int* hist,
                     unsigned long long* below, int chunk) {
    const int g = blockIdx.y;
    const Segment sg = segment_of(coef, coef_stride, log2n, seg_levels, mask, g);
    const int start = blockIdx.x * chunk;
    if (!sg.on || start >= sg.len) return;
    __shared__ int h[SELECT_BINS];
    const int nb = 1 << width;
    for (int i = threadIdx.x; i < nb; i += blockDim.x) h[i] = 0;
    __syncthreads();
    const KEY pre = (KEY)prefix[g], msk = (KEY)pmask[g];
    const int end = min(start + chunk, sg.len);
    KEY best = 0;
    auto count = [&](REAL v) {
        const KEY key = key_of(v);
        if ((key & msk) == pre) atomicAdd(&h[(int)(key >> lo) & (nb - 1)], 1);
        else if (key < pre && key > best) best = key;
    };
    if (sg.len >= VEC && aligned16(sg.p)) {
        for (int i = start + VEC * threadIdx.x; i < end; i += VEC * blockDim.x) {
            REAL v[VEC];
            ldv(sg.p + i, v);
#pragma unroll
            for (int e = 0; e < VEC; ++e) count(v[e]);
        }
    } else {
        for (int i = start + threadIdx.x; i < end; i += blockDim.x) count(sg.p[i]);
    }
    if (last) {
        best = warp_max(best);
        if ((threadIdx.x & 31) == 0 && best) atomicMax(&below[g], (unsigned long long)best);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < nb; i += blockDim.x)
        if (h[i]) atomicAdd(&hist[(size_t)g * SELECT_BINS + i], h[i]);
}

// One block per segment: the digit holding the rank; clears the histogram. After the last
// digit, below[g] becomes the lower middle key: the upper one when it is duplicated below its
// rank, else the largest non-empty bin under it (the last digit spans the lowest bits), else
// the largest key under the prefix that the last count pass kept.
extern "C" __global__ void __launch_bounds__(256)
    dwt_select_digit(int* hist, unsigned long long* prefix, unsigned long long* pmask, int* rank,
                     unsigned long long* below, int lo, int width, int last, int seg_levels,
                     unsigned long long mask) {
    const int g = blockIdx.x;
    if (!((mask >> (g % seg_levels)) & 1)) return;
    __shared__ int h[SELECT_BINS];
    __shared__ int wsum[32];
    __shared__ int sel[4];
    __shared__ int lower_bin;
    const int nb = 1 << width;
    int* gh = hist + (size_t)g * SELECT_BINS;
    for (int i = threadIdx.x; i < nb; i += blockDim.x) h[i] = gh[i];
    if (threadIdx.x == 0) lower_bin = -1;
    __syncthreads();
    int k = rank[g];
    const int digit = find_digit(h, nb, k, wsum, sel, threadIdx.x, blockDim.x);
    for (int i = threadIdx.x; i < nb; i += blockDim.x) {
        if (last && i < digit && gh[i] > 0) atomicMax(&lower_bin, i);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < nb; i += blockDim.x) gh[i] = 0;
    if (threadIdx.x == 0) {
        const unsigned long long before = prefix[g];
        const unsigned long long p = before | (unsigned long long)digit << lo;
        prefix[g] = p;
        pmask[g] |= (unsigned long long)((1 << width) - 1) << lo;
        rank[g] = k;
        if (last) {
            if (k > 0) below[g] = p;
            else if (lower_bin >= 0) below[g] = before | (unsigned long long)lower_bin << lo;
        }
    }
}

// Medians per segment (n_traces x seg_levels) and thresholds per trace and level
// (lam: n_traces x L, 0 where the level is left alone).
DEVI REAL segment_median(int log2n, int seg_levels, int g, const unsigned long long* prefix,
                         const int* rank, const unsigned long long* below) {
    const int len = (1 << log2n) >> (g % seg_levels + 1);
    const REAL upper = real_of((KEY)prefix[g]);
    if (len & 1) return upper;
    const REAL lower = real_of((KEY)below[g]);
    return (lower + upper) / (REAL)2;
}

extern "C" __global__ void dwt_select_finish(int log2n, int n_traces, int L, int seg_levels,
                                             unsigned long long seg_mask, unsigned long long mask,
                                             int flags, REAL fixed_lambda, double factor,
                                             const unsigned long long* prefix, const int* rank,
                                             const unsigned long long* below, REAL* medians,
                                             REAL* lam) {
    const int trace = blockIdx.x * blockDim.x + threadIdx.x;
    if (trace >= n_traces) return;
    const bool universal = (flags & DENOISE_UNIVERSAL) != 0;
    if (universal) {
        for (int li = 0; li < seg_levels; ++li) {
            const int g = trace * seg_levels + li;
            medians[g] = ((seg_mask >> li) & 1)
                             ? segment_median(log2n, seg_levels, g, prefix, rank, below)
                             : (REAL)0;
        }
    }
    for (int l = 1; l <= L; ++l) {
        REAL lambda = 0;
        if (l <= 64 && ((mask >> (l - 1)) & 1)) {
            if (universal) {
                const int li = (flags & DENOISE_PER_LEVEL) ? l - 1 : 0;
                lambda = universal_lambda(medians[trace * seg_levels + li], factor);
            } else {
                lambda = fixed_lambda;
            }
        }
        lam[(size_t)trace * L + l - 1] = lambda;
    }
}
