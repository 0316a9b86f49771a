/* fxdecon_2d: F-X prediction filtering (random-noise attenuation) of a 2D section with
 * seisgpu.
 *
 * Creates an SG_BACKEND_AUTO context (the GPU when CUDA can be used, else all CPU cores),
 * prints its description, then checks known answers and exits non-zero if one fails:
 *   1. a section of zeros comes out exactly zero (no NaN where a window holds no data);
 *   2. one flat event, without noise, passes with a relative RMS error below 1 %;
 *   3. three linear events (flat, dipping both ways) plus Gaussian noise: the default
 *      two-sided operator over 1-110 Hz raises the SNR by at least MIN_SNR_GAIN_DB (the
 *      CPU reaches 4.0 dB on this section);
 *   4. errors are reported: an operator wider than its spatial window is refused with
 *      SG_ERR_INVALID_ARGUMENT, NaN input with SG_ERR_NON_FINITE, and a message.
 * The noise comes from a Park-Miller generator (sum of 12 uniforms): exactly reproducible.
 *
 * Build: make examples   (or: cc -I include fxdecon_2d.c -L target/release -lseisgpu -lm)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "seisgpu.h"

enum { N_SAMPLES = 500, N_TRACES = 96 };
#define DT 0.004
#define NOISE_SIGMA 0.2
#define MIN_SNR_GAIN_DB 3.0
static const double PI = 3.14159265358979323846;

static int passed = 0, failures = 0;

static int failed(sg_status status, const char *what) {
    if (status == SG_OK) return 0;
    fprintf(stderr, "error: %s failed: %s (%d): %s\n", what, sg_status_string(status),
            (int)status, sg_last_error_message());
    return 1;
}

static void check(int ok, const char *what) {
    printf("  [%s] %s\n", ok ? "ok" : "FAIL", what);
    if (ok)
        passed++;
    else
        failures++;
}

static int64_t rng_state = 20261122;
static double uniform(void) {
    rng_state = (rng_state * 48271) % 2147483647;
    return (double)rng_state / 2147483647.0;
}
static double gaussian(void) {
    double s = 0.0;
    for (int k = 0; k < 12; k++) s += uniform();
    return s - 6.0;
}

/* A 25 Hz Ricker wavelet at time t (s). */
static double ricker(double t) {
    const double a = (PI * 25.0 * t) * (PI * 25.0 * t);
    return (1.0 - 2.0 * a) * exp(-a);
}

/* Sample i of trace t: a flat event at 0.3 s, events dipping 2 ms/trace and -3 ms/trace. */
static double events(int t, int i, int flat_only) {
    const double time = i * DT;
    double s = ricker(time - 0.3);
    if (!flat_only) s += 0.8 * ricker(time - 0.6 - 0.002 * t) + 0.6 * ricker(time - 1.6 + 0.003 * t);
    return s;
}

static double rel_rms(const float *a, const float *b, size_t n) {
    double d = 0.0, r = 0.0;
    for (size_t k = 0; k < n; k++) {
        d += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
        r += (double)b[k] * b[k];
    }
    return sqrt(d / r);
}

static double snr_db(const float *x, const float *clean, size_t n) {
    return -20.0 * log10(rel_rms(x, clean, n));
}

int main(void) {
    sg_context *ctx = NULL;
    sg_fxdecon_plan *plan = NULL, *wide_plan = NULL, *bad = NULL;
    size_t needed = 0;
    char *description = NULL;
    const size_t count = (size_t)N_SAMPLES * N_TRACES;
    float *clean = malloc(count * sizeof *clean);
    float *noisy = malloc(count * sizeof *noisy);
    float *out = malloc(count * sizeof *out);
    int code = 1;

    if (!clean || !noisy || !out) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    if (failed(sg_context_create(SG_BACKEND_AUTO, 0, &ctx), "sg_context_create(SG_BACKEND_AUTO)"))
        goto done;
    sg_status st = sg_context_describe(ctx, NULL, 0, &needed);
    if (st != SG_ERR_BUFFER_TOO_SMALL && failed(st, "sg_context_describe(size query)")) goto done;
    description = malloc(needed);
    if (!description || failed(sg_context_describe(ctx, description, needed, &needed),
                               "sg_context_describe"))
        goto done;
    printf("%s\n\nF-X decon of %d traces x %d samples (dt %.0f ms)\n", description, N_TRACES,
           N_SAMPLES, DT * 1e3);

    /* Defaults: 20-trace windows stepping 17, operator of 4 traces each side, 1 % damping,
     * 6 Hz to 0.6 Nyquist filtered, the rest passed through. */
    sg_fxdecon_options options = sg_fxdecon_options_default();
    options.sample_interval_s = DT;
    if (failed(sg_fxdecon_plan_create_2d(ctx, &options, N_SAMPLES, N_TRACES, &plan),
               "sg_fxdecon_plan_create_2d"))
        goto done;

    /* 1. Zeros. */
    for (size_t k = 0; k < count; k++) noisy[k] = 0.0f;
    if (failed(sg_fxdecon_execute_2d_f32(plan, noisy, out, N_SAMPLES), "execute (zeros)")) goto done;
    int zero = 1;
    for (size_t k = 0; k < count; k++) zero &= out[k] == 0.0f;
    check(zero, "a section of zeros comes out exactly zero");

    /* 2. One flat event. */
    for (int t = 0; t < N_TRACES; t++)
        for (int i = 0; i < N_SAMPLES; i++) clean[(size_t)t * N_SAMPLES + i] = (float)events(t, i, 1);
    if (failed(sg_fxdecon_execute_2d_f32(plan, clean, out, N_SAMPLES), "execute (flat event)"))
        goto done;
    const double flat_err = rel_rms(out, clean, count);
    printf("  flat event: relative RMS error %.2e\n", flat_err);
    check(flat_err < 0.01, "a flat event passes with under 1 % error");

    /* 3. Linear events plus noise, filtered over 1-110 Hz. */
    for (int t = 0; t < N_TRACES; t++)
        for (int i = 0; i < N_SAMPLES; i++) {
            const size_t k = (size_t)t * N_SAMPLES + i;
            clean[k] = (float)events(t, i, 0);
            noisy[k] = (float)(clean[k] + NOISE_SIGMA * gaussian());
        }
    options.fmin_hz = 1.0;
    options.fmax_hz = 110.0;
    if (failed(sg_fxdecon_plan_create_2d(ctx, &options, N_SAMPLES, N_TRACES, &wide_plan),
               "sg_fxdecon_plan_create_2d(1-110 Hz)") ||
        failed(sg_fxdecon_execute_2d_f32(wide_plan, noisy, out, N_SAMPLES), "execute (noisy)"))
        goto done;
    const double before = snr_db(noisy, clean, count), after = snr_db(out, clean, count);
    printf("  noisy events: SNR %.2f dB -> %.2f dB (gain %.2f dB)\n", before, after, after - before);
    check(after - before >= MIN_SNR_GAIN_DB, "the SNR rises by at least 3 dB");

    /* 4. Errors. */
    options.operator_traces = 12; /* 25 traces wide, in 20-trace windows */
    st = sg_fxdecon_plan_create_2d(ctx, &options, N_SAMPLES, N_TRACES, &bad);
    printf("  operator wider than the window: %s: %s\n", sg_status_string(st), sg_last_error_message());
    check(st == SG_ERR_INVALID_ARGUMENT && bad == NULL, "an operator wider than its window is refused");
    noisy[1234] = NAN;
    st = sg_fxdecon_execute_2d_f32(plan, noisy, out, N_SAMPLES);
    printf("  NaN input: %s: %s\n", sg_status_string(st), sg_last_error_message());
    check(st == SG_ERR_NON_FINITE, "NaN input is refused");

    printf("\n%d passed, %d failed\n", passed, failures);
    code = failures ? 1 : 0;
done:
    sg_fxdecon_plan_destroy(bad);
    sg_fxdecon_plan_destroy(wide_plan);
    sg_fxdecon_plan_destroy(plan);
    sg_context_destroy(ctx);
    free(description);
    free(clean);
    free(noisy);
    free(out);
    return code;
}
