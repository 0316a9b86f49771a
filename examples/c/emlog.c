/* emlog: the quasi-solution region of a VIKIZ-like EM log by exhaustive search.
 *
 * A 1.2 m reservoir layer between shoulder beds, with an invasion zone (r < 0.3 m), an
 * annulus (0.3-0.5 m) and the undisturbed formation, logged by five probes (0.5 to 2 m)
 * at 40 depths. The sensitivity matrix is Doll's geometric factors (as in
 * src/emlog/synthetic.rs): a probe of length L at depth z weighs a depth interval [a, b]
 * by (atan((b - z)/h) - atan((a - z)/h))/pi and a radial interval by G(r2) - G(r1),
 * G(r) = r^2/(r^2 + h^2), h = L/2. The data are the noise-free apparent conductivities of
 * the true model, relative errors 2 %; the three zone conductivities are searched on a
 * 21^3 grid centred on the truth, the shoulders stay fixed.
 *
 * Known answers (exit status 1 if any fails):
 *   1. sigma* is the true model and F_min = 0 (noise-free data);
 *   2. the grid's best model is the truth, with F = 0;
 *   3. per parameter, the grid region's extent lies within one grid step of the analytic
 *      ellipsoid's (F <= 1);
 *   4. the fast and direct modes count the same models, and every marginal sums to it;
 *   5. delta = 0 is refused with SG_ERR_INVALID_ARGUMENT and nothing is written.
 *
 * With an argument OUTDIR (make demo passes out/) it also writes OUTDIR/emlog_region.txt:
 * the grid, the analytic region (sigma*, extent, SVD) and the fast mode's three 2D
 * marginals, which examples/python/plot_emlog.py draws.
 *
 * Build: make examples   (or: cc -I include emlog.c -L target/release -lseisgpu -lm)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "seisgpu.h"

enum { PROBES = 5, DEPTHS = 40, N = PROBES * DEPTHS, M = 5, P = 3, COUNT = 21 };

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

static const double PI = 3.14159265358979323846;

static double radial(double r, double h) { return isinf(r) ? 1.0 : r * r / (r * r + h * h); }

enum { PAIRS = 3 };
static const int32_t PAIR_AXES[2 * PAIRS] = {0, 1, 0, 2, 1, 2};

static void write_values(FILE *out, const char *key, const double *v, int n) {
    fprintf(out, "%s", key);
    for (int i = 0; i < n; i++) fprintf(out, " %.17g", v[i]);
    fprintf(out, "\n");
}

/* One line per key: the grid, the analytic region and each pair's counts (i_a + COUNT*i_b). */
static int write_region(const char *dir, const double *lo, const double *hi, const double *sigma_star,
                        const double *lower, const double *upper, const double *sv, const double *vectors,
                        const uint64_t *pair_counts) {
    char path[4096];
    snprintf(path, sizeof path, "%s/emlog_region.txt", dir);
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "error: cannot write %s\n", path);
        return 1;
    }
    fprintf(out, "p %d\ncount %d\nnames invasion_zone annulus formation\n", P, COUNT);
    write_values(out, "lo", lo, P);
    write_values(out, "hi", hi, P);
    write_values(out, "sigma_star", sigma_star, P);
    write_values(out, "lower", lower, P);
    write_values(out, "upper", upper, P);
    write_values(out, "singular_values", sv, P);
    write_values(out, "right_vectors", vectors, P * P);
    for (int q = 0; q < PAIRS; q++) {
        fprintf(out, "pair %d %d", PAIR_AXES[2 * q], PAIR_AXES[2 * q + 1]);
        for (int i = 0; i < COUNT * COUNT; i++)
            fprintf(out, " %llu", (unsigned long long)pair_counts[q * COUNT * COUNT + i]);
        fprintf(out, "\n");
    }
    int bad = fclose(out) != 0;
    if (!bad) printf("wrote %s\n", path);
    return bad;
}

int main(int argc, char **argv) {
    const char *out_dir = argc > 1 ? argv[1] : NULL;
    const double lengths[PROBES] = {0.5, 0.71, 1.0, 1.41, 2.0};
    const double top = 0.0, bottom = 1.2, radii[3] = {0.0, 0.3, 0.5};
    /* Upper shoulder, invasion, annulus, formation, lower shoulder (S/m). */
    const double truth[M] = {0.25, 0.2, 0.5, 0.1, 0.3};
    static double a[N * M], f[N], delta[N];
    for (int p = 0; p < PROBES; p++) {
        double h = lengths[p] / 2.0;
        for (int d = 0; d < DEPTHS; d++) {
            double z = -1.0 + 3.2 * d / (DEPTHS - 1);
            double *row = &a[(p * DEPTHS + d) * M];
            double up = atan((top - z) / h) / PI + 0.5, down = 0.5 - atan((bottom - z) / h) / PI;
            double layer = 1.0 - up - down;
            row[0] = up;
            for (int k = 0; k < 3; k++) {
                double r2 = k == 2 ? INFINITY : radii[k + 1];
                row[1 + k] = layer * (radial(r2, h) - radial(radii[k], h));
            }
            row[4] = down;
            f[p * DEPTHS + d] = 0.0;
            for (int j = 0; j < M; j++) f[p * DEPTHS + d] += row[j] * truth[j];
            delta[p * DEPTHS + d] = 0.02;
        }
    }
    const int32_t searched[P] = {1, 2, 3};

    sg_context *ctx = NULL;
    sg_emlog_plan *plan = NULL;
    if (failed(sg_context_create(SG_BACKEND_AUTO, 0, &ctx), "context")) return 1;
    /* sigma0 = truth, f0 = f: the linearisation point is the truth itself. */
    if (failed(sg_emlog_plan_create(ctx, N, M, a, M, 1, truth, f, f, delta, P, searched, &plan), "plan"))
        return 1;

    double sigma_star[P], f_min, lower[P], upper[P], sv[P], vectors[P * P];
    int32_t empty;
    if (failed(sg_emlog_analytic(plan, SG_EMLOG_FIT_WITHIN_ERRORS, 1.0, sigma_star, &f_min, &empty, lower,
                                 upper, sv, vectors),
               "analytic"))
        return 1;
    printf("analytic: F_min %.3g, singular values %.4g %.4g %.4g (condition %.0f)\n", f_min, sv[0], sv[1],
           sv[2], sv[0] / sv[2]);
    for (int k = 0; k < P; k++)
        printf("  sigma[%d] = %.4f S/m, region %.4f .. %.4f\n", searched[k], sigma_star[k], lower[k], upper[k]);
    int star_ok = !empty && f_min < 1e-9;
    for (int k = 0; k < P; k++) star_ok &= fabs(sigma_star[k] - truth[searched[k]]) < 1e-9;
    check(star_ok, "sigma* is the true model, F_min = 0");

    /* 21 values per axis, centred on the truth, 1.5 x the ellipsoid's half-width. */
    int32_t kinds[P];
    size_t counts[P];
    double lo[P], hi[P];
    for (int k = 0; k < P; k++) {
        double half = 1.5 * (upper[k] - sigma_star[k]);
        kinds[k] = SG_EMLOG_AXIS_LINEAR;
        counts[k] = COUNT;
        lo[k] = truth[searched[k]] - half;
        hi[k] = truth[searched[k]] + half;
    }
    static uint64_t pair_counts[PAIRS * COUNT * COUNT];
    uint64_t n_found[2];
    for (int mode = 0; mode < 2; mode++) {
        sg_emlog_options o = sg_emlog_options_default();
        o.mode = mode == 0 ? SG_EMLOG_FAST : SG_EMLOG_DIRECT;
        o.max_models = 5;
        sg_emlog_result *r = NULL;
        if (failed(sg_emlog_search(plan, kinds, counts, lo, hi, NULL, 0, PAIRS, PAIR_AXES, &o, &r), "search")) return 1;
        uint64_t total, count, best;
        double best_model[P], best_f, vmin[P], vmax[P];
        size_t n_models;
        int32_t more;
        if (failed(sg_emlog_result_summary(r, &total, &count, &best, best_model, &best_f, vmin, vmax, &n_models,
                                           &more),
                   "summary"))
            return 1;
        n_found[mode] = count;
        printf("%s mode: %llu of %llu models equivalent (F <= 1); best F %.2g\n", mode ? "direct" : "fast",
               (unsigned long long)count, (unsigned long long)total, best_f);
        if (mode == 0) {
            int best_ok = best_f < 1e-6;
            for (int k = 0; k < P; k++) best_ok &= fabs(best_model[k] - truth[searched[k]]) < 1e-12;
            check(best_ok, "the grid's best model is the truth, F = 0");
            int extent_ok = 1;
            printf("\n| parameter | truth | sigma* | grid region | ellipsoid | grid step |\n"
                   "|---|---:|---:|---|---|---:|\n");
            for (int k = 0; k < P; k++) {
                double step = (hi[k] - lo[k]) / (COUNT - 1);
                printf("| sigma[%d] (S/m) | %.4f | %.4f | %.4f .. %.4f | %.4f .. %.4f | %.4f |\n", searched[k],
                       truth[searched[k]], sigma_star[k], vmin[k], vmax[k], lower[k], upper[k], step);
                extent_ok &= vmin[k] >= lower[k] - 1e-12 && vmin[k] <= lower[k] + step;
                extent_ok &= vmax[k] <= upper[k] + 1e-12 && vmax[k] >= upper[k] - step;
            }
            printf("\n");
            check(extent_ok, "grid extent within one step of the ellipsoid's");
        }
        uint64_t marg[COUNT], sum = 0;
        int pairs_ok = 1;
        if (failed(sg_emlog_result_marginal(r, 1, marg, COUNT), "marginal")) return 1;
        for (int i = 0; i < COUNT; i++) sum += marg[i];
        for (int q = 0; q < PAIRS; q++) {
            uint64_t *pair = &pair_counts[q * COUNT * COUNT], psum = 0;
            if (failed(sg_emlog_result_pair(r, (size_t)q, pair, COUNT * COUNT), "pair")) return 1;
            for (int i = 0; i < COUNT * COUNT; i++) psum += pair[i];
            pairs_ok &= psum == count;
        }
        check(sum == count && pairs_ok, "1D and 2D marginals sum to the count");
        if (mode == 0 && out_dir && write_region(out_dir, lo, hi, sigma_star, lower, upper, sv, vectors, pair_counts))
            return 1;
        uint64_t idx[5];
        double values[5 * P];
        if (failed(sg_emlog_result_models(r, idx, values, 5), "models")) return 1;
        check(n_models == 5 && more == 1 && idx[0] < idx[1], "first 5 models listed, more flagged");
        sg_emlog_result_destroy(r);
    }
    check(n_found[0] == n_found[1] && n_found[0] > 0, "fast and direct modes count the same models");

    delta[7] = 0.0;
    sg_emlog_plan *bad = (sg_emlog_plan *)&failures; /* a sentinel: must stay as it is */
    sg_status s = sg_emlog_plan_create(ctx, N, M, a, M, 1, truth, f, f, delta, P, searched, &bad);
    check(s == SG_ERR_INVALID_ARGUMENT && bad == (sg_emlog_plan *)&failures, "delta = 0 refused, nothing written");
    printf("  (%s)\n", sg_last_error_message());

    sg_emlog_plan_destroy(plan);
    sg_context_destroy(ctx);
    printf(failures ? "emlog: %d check(s) FAILED\n" : "emlog: all checks passed\n", failures);
    return failures ? 1 : 0;
}
