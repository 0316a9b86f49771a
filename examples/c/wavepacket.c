/* wavepacket: Gaussian wave packets on a 2D section through the C ABI.
 *
 * A synthetic section of 96 samples x 48 traces (three reflections, Ricker wavelets of
 * 0.1 cycles/sample: a flat one, a dipping one and a curved one) is decomposed over a
 * layout of 12 directions and the automatic number of levels, in single precision.
 *
 * Known answers (exit status 1 if any fails):
 *   1. the adjoint is exact: <C f, c> = <f, C* c> for random f and c, to 1e-5 relative;
 *   2. forward then inverse gives the section back to 1e-5 relative (USFFT tol 1e-6);
 *   3. compression: keeping the largest coefficients, as many complex values as 5 % of the
 *      samples (each holds two reals), keeps exactly that many, and the reconstruction's
 *      SNR is positive (printed); the sparse approximation with as many coefficients keeps
 *      that many and, reconstructed with C*, beats it (SNR printed);
 *   4. POCS fills 12 of the 48 traces, removed at random: the recorded traces come out
 *      unchanged, the filled ones closer to the truth than the zero traces (error printed);
 *   5. bad input is refused with nothing written: a NaN sample (SG_ERR_NON_FINITE, the
 *      coefficients untouched), a 3D layout of 351 directions, which no Lebedev rule has
 *      (SG_ERR_INVALID_ARGUMENT, *out untouched), and a trace mask of the wrong length
 *      (SG_ERR_INVALID_ARGUMENT, the data untouched).
 *
 * Build: make examples   (or: cc -I include wavepacket.c -L target/release -lseisgpu -lm)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seisgpu.h"

enum { NT = 96, NX = 48, N = NT * NX, DEAD = 12 };

static int failures = 0;

static void check(int ok, const char *what) {
    printf("  [%s] %s\n", ok ? "ok" : "FAIL", what);
    if (!ok) failures++;
}

static int failed(sg_status s, const char *what) {
    if (s == SG_OK) return 0;
    fprintf(stderr, "error: %s: %s: %s\n", what, sg_status_string(s), sg_last_error_message());
    return 1;
}

/* Park-Miller: reproducible data in [-1, 1). */
static uint64_t state = 12345;
static double uniform(void) {
    state = state * 48271 % 2147483647;
    return 2.0 * (double)state / 2147483647.0 - 1.0;
}

static double ricker(double t, double f) {
    const double PI = 3.14159265358979323846;
    double a = PI * f * t;
    return (1.0 - 2.0 * a * a) * exp(-a * a);
}

static double rel_error(const float *x, const float *ref, size_t n) {
    double e = 0.0, r = 0.0;
    for (size_t i = 0; i < n; i++) {
        e += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
        r += (double)ref[i] * ref[i];
    }
    return sqrt(e / r);
}

int main(void) {
    static float section[N];
    for (int x = 0; x < NX; x++) {
        double t1 = 20.0, t2 = 40.0 + 0.6 * x, t3 = 80.0 - 0.015 * (x - 24) * (x - 24);
        for (int t = 0; t < NT; t++)
            section[x * NT + t] =
                (float)(ricker(t - t1, 0.1) - 0.7 * ricker(t - t2, 0.1) + 0.5 * ricker(t - t3, 0.1));
    }

    sg_context *ctx = NULL;
    sg_wavepacket_layout *layout = NULL;
    if (failed(sg_context_create(SG_BACKEND_AUTO, 0, &ctx), "context")) return 1;
    const size_t shape[2] = {NT, NX};
    sg_wavepacket_layout_options lo = sg_wavepacket_layout_options_default();
    lo.directions = 12; /* levels automatic, alpha 3, cutoff 1e-3, USFFT tolerance 1e-6 */
    if (failed(sg_wavepacket_layout_create_with_options(ctx, 2, shape, SG_WAVEPACKET_F32, &lo, &layout),
               "layout"))
        return 1;
    size_t n_samples, m, n_boxes, levels, n_dirs;
    if (failed(sg_wavepacket_layout_sizes(layout, &n_samples, &m, &n_boxes, &levels, &n_dirs), "sizes"))
        return 1;
    printf("layout %d x %d: %zu levels, %zu directions stored, %zu boxes, %zu coefficients (redundancy %.2f)\n",
           NT, NX, levels, n_dirs, n_boxes, m, (double)m / n_samples);
    for (size_t b = 0; b < n_boxes; b += n_boxes - 1) {
        int32_t level, dir;
        double centre[3];
        size_t box_shape[3], offset;
        if (failed(sg_wavepacket_box_info(layout, b, &level, &dir, centre, box_shape, &offset), "box info"))
            return 1;
        printf("  box %zu: level %d, direction %d, centre (%.3f, %.3f) cycles/sample, grid %zu x %zu, offset %zu\n",
               b, level, dir, centre[0], centre[1], box_shape[0], box_shape[1], offset);
    }

    float *coeffs = malloc(2 * m * sizeof *coeffs), *kept = malloc(2 * m * sizeof *kept);
    float *random_c = malloc(2 * m * sizeof *random_c);
    static float random_f[N], adj[N], back[N], work[N];
    if (!coeffs || !kept || !random_c) return 1;

    /* 1. The dot-product test. */
    for (size_t i = 0; i < N; i++) random_f[i] = (float)uniform();
    for (size_t i = 0; i < 2 * m; i++) random_c[i] = (float)uniform();
    if (failed(sg_wavepacket_forward_f32(layout, random_f, coeffs), "forward")) return 1;
    if (failed(sg_wavepacket_adjoint_f32(layout, random_c, adj), "adjoint")) return 1;
    double lhs = 0.0, rhs = 0.0, nc = 0.0, nr = 0.0;
    for (size_t i = 0; i < 2 * m; i++) {
        lhs += (double)coeffs[i] * random_c[i];
        nc += (double)coeffs[i] * coeffs[i];
        nr += (double)random_c[i] * random_c[i];
    }
    for (size_t i = 0; i < N; i++) rhs += (double)random_f[i] * adj[i];
    double mismatch = fabs(lhs - rhs) / sqrt(nc * nr);
    printf("adjoint: <Cf,c> = %.7e, <f,C*c> = %.7e, mismatch %.1e\n", lhs, rhs, mismatch);
    check(mismatch < 1e-5, "<C f, c> = <f, C* c> to 1e-5");

    /* 2. The round trip. */
    size_t iterations;
    double residual;
    if (failed(sg_wavepacket_forward_f32(layout, section, coeffs), "forward")) return 1;
    if (failed(sg_wavepacket_inverse_f32(layout, coeffs, back, 2e-6, 60, &iterations, &residual), "inverse"))
        return 1;
    double e = rel_error(back, section, N);
    printf("inverse: %zu CG iterations (residual %.1e), round-trip error %.2e\n", iterations, residual, e);
    check(e <= 1e-5, "inverse(C f) = f to 1e-5");

    /* 3. Compression at 5 % of the samples. */
    size_t s = (size_t)(0.05 * N) / 2;
    memcpy(kept, coeffs, 2 * m * sizeof *kept);
    if (failed(sg_wavepacket_keep_largest_f32(layout, kept, s), "keep largest")) return 1;
    size_t nonzero = 0;
    for (size_t i = 0; i < m; i++) nonzero += kept[2 * i] != 0.0f || kept[2 * i + 1] != 0.0f;
    if (failed(sg_wavepacket_inverse_f32(layout, kept, back, 1e-6, 30, NULL, NULL), "inverse")) return 1;
    double snr = -20.0 * log10(rel_error(back, section, N));
    printf("compression: %zu of %zu coefficients kept (5 %% of the samples), SNR %.2f dB\n", nonzero, m, snr);
    check(nonzero == s && snr > 0.0, "the S largest kept, positive SNR");
    sg_wavepacket_sparse_options so = sg_wavepacket_sparse_options_default();
    so.stages = 4; /* fewer transforms than the default (12 stages, 8 refit iterations) */
    so.refit_iterations = 4;
    size_t sparse_kept;
    double sparse_residual;
    if (failed(sg_wavepacket_sparse_approximation_f32(layout, section, kept, s, &so, &sparse_kept, &sparse_residual),
               "sparse approximation"))
        return 1;
    if (failed(sg_wavepacket_adjoint_f32(layout, kept, back), "adjoint")) return 1;
    double sparse_snr = -20.0 * log10(rel_error(back, section, N));
    printf("sparse approximation (%zu stages, %zu refit iterations): %zu coefficients, residual %.3f, SNR %.2f dB "
           "(C* of them)\n",
           so.stages, so.refit_iterations, sparse_kept, sparse_residual, sparse_snr);
    check(sparse_kept == s && sparse_snr > snr, "S coefficients kept, better than the S largest");

    /* 4. POCS over DEAD missing traces. */
    int32_t live[NX];
    for (int x = 0; x < NX; x++) live[x] = 1;
    for (int k = 0; k < DEAD;) {
        int x = 1 + (int)((uniform() + 1.0) / 2.0 * (NX - 2));
        if (live[x]) {
            live[x] = 0;
            k++;
        }
    }
    memcpy(work, section, sizeof work);
    for (int x = 0; x < NX; x++)
        if (!live[x]) memset(&work[x * NT], 0, NT * sizeof *work);
    sg_wavepacket_pocs_options po = sg_wavepacket_pocs_options_default();
    po.iterations = 10;
    if (failed(sg_wavepacket_pocs_f32(layout, work, live, NX, &po), "pocs")) return 1;
    double de = 0.0, dr = 0.0;
    int live_same = 1;
    for (int x = 0; x < NX; x++)
        for (int t = 0; t < NT; t++) {
            double d = (double)work[x * NT + t] - section[x * NT + t];
            if (live[x])
                live_same &= d == 0.0;
            else {
                de += d * d;
                dr += (double)section[x * NT + t] * section[x * NT + t];
            }
        }
    printf("POCS: %d of %d traces filled in %zu iterations, relative error on them %.3f (zero traces: 1)\n",
           DEAD, NX, po.iterations, sqrt(de / dr));
    check(live_same && sqrt(de / dr) < 0.9, "recorded traces unchanged, missing ones approached");

    /* 5. Bad input. */
    memcpy(work, section, sizeof work);
    work[77] = NAN;
    for (size_t i = 0; i < 2 * m; i++) kept[i] = -7.0f;
    sg_status st = sg_wavepacket_forward_f32(layout, work, kept);
    int untouched = 1;
    for (size_t i = 0; i < 2 * m; i++) untouched &= kept[i] == -7.0f;
    printf("NaN sample: %s: %s\n", sg_status_string(st), sg_last_error_message());
    check(st == SG_ERR_NON_FINITE && untouched, "NaN data refused, coefficients untouched");

    sg_wavepacket_layout *bad = (sg_wavepacket_layout *)&st;
    const size_t cube[3] = {16, 16, 16};
    st = sg_wavepacket_layout_create(ctx, 3, cube, 351, 1, 0.0, 0.0, 1e-6, SG_WAVEPACKET_F32, &bad);
    printf("351 directions: %s: %s\n", sg_status_string(st), sg_last_error_message());
    check(st == SG_ERR_INVALID_ARGUMENT && bad == (sg_wavepacket_layout *)&st, "no Lebedev rule of 351: refused");

    memcpy(work, section, sizeof work);
    st = sg_wavepacket_pocs_f32(layout, work, live, NX - 1, NULL);
    printf("mask of %d traces: %s: %s\n", NX - 1, sg_status_string(st), sg_last_error_message());
    check(st == SG_ERR_INVALID_ARGUMENT && memcmp(work, section, sizeof work) == 0,
          "a mask of the wrong length refused, data untouched");

    free(coeffs);
    free(kept);
    free(random_c);
    sg_wavepacket_layout_destroy(layout);
    sg_context_destroy(ctx);
    printf("%s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
