/* xcorr: ambient-noise cross-correlation of synthetic station-days with seisgpu, split
 * across two contexts the way an MPI job or a multi-GPU process would split it.
 *
 * Six stations record one noise field; it reaches station s 2·s seconds after station 0,
 * plus local noise (1 Hz, two hours). Windows of 300 s every 150 s, 0.05–0.3 Hz, lags
 * ±30 s, NoisePy's defaults otherwise (rma whitening, linear stack).
 *
 * Context A correlates every pair (the diagonal block 0..6 × 0..6). Then the work is
 * split: context A takes blocks 0..3 × 0..3 and 0..3 × 3..6 from its spectra of all six
 * stations, context B block 3..6 × 3..6 from its own spectra of stations 3..5 only.
 * (With two GPUs, give the contexts device ordinals 0 and 1.)
 *
 * Known answers (exit status 1 if any fails):
 *   1. pair (i, j) peaks at lag +2·(j − i) s: positive lags are station j later than i;
 *   2. every pair stacks all 46 windows;
 *   3. the split gives every pair once, equal to the whole to 1e-5 of its maximum;
 *   4. one station gives no pairs (0, and success);
 *   5. freqmax above Nyquist is refused with SG_ERR_INVALID_ARGUMENT and a message.
 *
 * Build: make examples   (or: cc -I include xcorr.c -L target/release -lseisgpu -lm)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "seisgpu.h"

enum { N_STA = 6, N = 7200, SPLIT = 3 };

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

/* Park-Miller generator; Gaussian-ish from 12 uniforms. */
static int64_t rng = 12345;
static double gauss(void) {
    double s = 0.0;
    for (int k = 0; k < 12; k++) {
        rng = (rng * 48271) % 2147483647;
        s += (double)rng / 2147483647.0;
    }
    return s - 6.0;
}

/* Correlates block (i0, ni, j0, nj) of `spectra`; returns the pair count, stacks and
 * window counts in freshly allocated arrays (NULL on failure). */
static size_t correlate(const sg_xcorr_plan *plan, const sg_xcorr_spectra *spectra, size_t n_sta,
                        size_t i0, size_t ni, size_t j0, size_t nj, size_t n_lags,
                        float **stacks, uint32_t **counts) {
    size_t n_pairs = 0;
    *stacks = NULL;
    *counts = NULL;
    if (failed(sg_xcorr_pair_count(plan, n_sta, i0, ni, j0, nj, &n_pairs), "pair count"))
        return 0;
    *stacks = malloc((n_pairs ? n_pairs : 1) * n_lags * sizeof(float));
    *counts = malloc((n_pairs ? n_pairs : 1) * sizeof(uint32_t));
    const sg_xcorr_spectra *days[1] = {spectra};
    if (!*stacks || !*counts ||
        failed(sg_xcorr_correlate_f32(plan, days, 1, i0, ni, j0, nj, *stacks, n_lags, *counts),
               "correlate")) {
        free(*stacks);
        free(*counts);
        *stacks = NULL;
        *counts = NULL;
        return 0;
    }
    return n_pairs;
}

int main(void) {
    static float data[N_STA * N];
    double field[N + 2 * N_STA];
    for (int t = 0; t < N + 2 * N_STA; t++) field[t] = gauss();
    for (int s = 0; s < N_STA; s++)
        for (int t = 0; t < N; t++)
            data[s * N + t] = (float)(1000.0 * (field[t + 2 * N_STA - 2 * s] + 0.5 * gauss()));

    sg_context *a = NULL, *b = NULL;
    if (failed(sg_context_create(SG_BACKEND_AUTO, 0, &a), "context A") ||
        failed(sg_context_create(SG_BACKEND_AUTO, 0, &b), "context B"))
        return 1;
    char text[2048];
    size_t needed = 0;
    if (sg_context_describe(a, text, sizeof text, &needed) == SG_OK) printf("%s\n\n", text);

    sg_xcorr_options o = sg_xcorr_options_default();
    o.sampling_rate = 1.0;
    o.cc_len = 300.0;
    o.step = 150.0;
    o.freqmin = 0.05;
    o.freqmax = 0.3;
    o.maxlag = 30.0;
    sg_xcorr_plan *pa = NULL, *pb = NULL;
    if (failed(sg_xcorr_plan_create(a, &o, &pa), "plan A") ||
        failed(sg_xcorr_plan_create(b, &o, &pb), "plan B"))
        return 1;
    size_t n_windows = 0, n_lags = 0;
    if (failed(sg_xcorr_plan_sizes(pa, N, &n_windows, &n_lags), "sizes")) return 1;
    printf("%d stations x %d s: %zu windows, %zu lags per pair\n", N_STA, N, n_windows, n_lags);

    sg_xcorr_spectra *sa = NULL, *sb = NULL;
    if (failed(sg_xcorr_preprocess_f32(pa, data, N_STA, N, N, NULL, &sa), "preprocess A") ||
        failed(sg_xcorr_preprocess_f32(pb, data + SPLIT * N, N_STA - SPLIT, N, N, NULL, &sb),
               "preprocess B"))
        return 1;

    float *whole = NULL;
    uint32_t *whole_n = NULL;
    size_t n_pairs = correlate(pa, sa, N_STA, 0, N_STA, 0, N_STA, n_lags, &whole, &whole_n);
    if (!whole) return 1;

    int peaks_ok = 1, counts_ok = 1;
    for (size_t p = 0; p < n_pairs; p++) {
        size_t i = 0, j = 0;
        if (failed(sg_xcorr_pair_stations(pa, N_STA, 0, N_STA, 0, N_STA, p, &i, &j), "pair"))
            return 1;
        size_t best = 0;
        for (size_t k = 1; k < n_lags; k++)
            if (whole[p * n_lags + k] > whole[p * n_lags + best]) best = k;
        long lag = (long)best - (long)(n_lags / 2);
        if (p < 3 || lag != 2 * (long)(j - i))
            printf("    pair (%zu,%zu): peak at %+ld s (expected %+ld)\n", i, j, lag,
                   2 * (long)(j - i));
        peaks_ok &= lag == 2 * (long)(j - i);
        counts_ok &= whole_n[p] == n_windows;
    }
    check(n_pairs == N_STA * (N_STA - 1) / 2, "15 pairs i < j");
    check(peaks_ok, "every pair peaks at lag +2(j - i) s");
    check(counts_ok, "every pair stacks every window");

    /* The split: blocks on A, the last diagonal block on B (its stations 0..2 = 3..5). */
    struct {
        const sg_xcorr_plan *plan;
        const sg_xcorr_spectra *spectra;
        size_t n_sta, i0, ni, j0, nj, offset;
    } blocks[3] = {
        {pa, sa, N_STA, 0, SPLIT, 0, SPLIT, 0},
        {pa, sa, N_STA, 0, SPLIT, SPLIT, N_STA - SPLIT, 0},
        {pb, sb, N_STA - SPLIT, 0, N_STA - SPLIT, 0, N_STA - SPLIT, SPLIT},
    };
    int seen[N_STA * N_STA] = {0};
    double worst = 0.0;
    size_t covered = 0;
    for (int k = 0; k < 3; k++) {
        float *part = NULL;
        uint32_t *part_n = NULL;
        size_t np = correlate(blocks[k].plan, blocks[k].spectra, blocks[k].n_sta, blocks[k].i0,
                              blocks[k].ni, blocks[k].j0, blocks[k].nj, n_lags, &part, &part_n);
        if (!part) return 1;
        for (size_t p = 0; p < np; p++) {
            size_t i = 0, j = 0, q = 0;
            sg_xcorr_pair_stations(blocks[k].plan, blocks[k].n_sta, blocks[k].i0, blocks[k].ni,
                                   blocks[k].j0, blocks[k].nj, p, &i, &j);
            i += blocks[k].offset;
            j += blocks[k].offset;
            /* index of (i, j) in the whole: row-major over i < j */
            q = i * N_STA - i * (i + 1) / 2 + (j - i - 1);
            seen[i * N_STA + j]++;
            covered++;
            double peak = 0.0, diff = 0.0;
            for (size_t l = 0; l < n_lags; l++) {
                peak = fmax(peak, fabs(whole[q * n_lags + l]));
                diff = fmax(diff, fabs(whole[q * n_lags + l] - part[p * n_lags + l]));
            }
            worst = fmax(worst, diff / peak);
        }
        free(part);
        free(part_n);
    }
    int once = covered == n_pairs;
    for (int i = 0; i < N_STA; i++)
        for (int j = i + 1; j < N_STA; j++) once &= seen[i * N_STA + j] == 1;
    printf("    split vs whole: max difference %.2e of the pair's maximum\n", worst);
    check(once && worst <= 1e-5, "blocks on two contexts give every pair once, as the whole");

    /* One station: no pairs. */
    size_t none = 99;
    check(sg_xcorr_pair_count(pa, 1, 0, 1, 0, 1, &none) == SG_OK && none == 0,
          "one station: 0 pairs");

    /* A band above Nyquist is refused, with a message, and no plan is made. */
    sg_xcorr_options bad = o;
    bad.freqmax = 0.7;
    sg_xcorr_plan *none_plan = NULL;
    sg_status s = sg_xcorr_plan_create(a, &bad, &none_plan);
    printf("    freqmax 0.7 Hz at 1 Hz: %s: %s\n", sg_status_string(s), sg_last_error_message());
    check(s == SG_ERR_INVALID_ARGUMENT && none_plan == NULL, "freqmax above Nyquist refused");

    free(whole);
    free(whole_n);
    sg_xcorr_spectra_destroy(sa);
    sg_xcorr_spectra_destroy(sb);
    sg_xcorr_plan_destroy(pa);
    sg_xcorr_plan_destroy(pb);
    sg_context_destroy(a);
    sg_context_destroy(b);
    printf("%s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
