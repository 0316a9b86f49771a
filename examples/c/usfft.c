/* USFFT from C: 2D and 3D non-uniform FFTs of both types, checked against direct sums.
 *
 * Type 1 ("u2e"): f_k = sum_j c_j exp(i sign k.x_j) over irregular points x_j in [-pi, pi)^d.
 * Type 2 ("e2u"): c_j = sum_k f_k exp(i sign k.x_j) over the centred modes k.
 * Runs on the GPU when one is usable (SG_BACKEND_AUTO), else on the CPU, and exits non-zero
 * when any relative l2 error exceeds the requested tolerance.
 *
 *   cc -std=c11 -Iinclude examples/c/usfft.c -Ltarget/release -lseisgpu -lm
 */
#include "seisgpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long rng_state = 88172645463325252ULL;

static double uniform(void) /* in [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static int check(sg_status s, const char *what)
{
    if (s != SG_OK) {
        fprintf(stderr, "%s failed: %s: %s\n", what, sg_status_string(s), sg_last_error_message());
        return 1;
    }
    return 0;
}

/* Relative l2 error of one transform of `type` in `dim` dimensions (modes n[0..dim)) on `m`
 * random points, double precision, against the direct sum; -1 on a library error. */
static double run(sg_context *ctx, int type, int dim, const size_t *n, size_t m, double tol)
{
    const double pi = 3.14159265358979323846;
    const int sign = -1;
    size_t nm = 1;
    for (int d = 0; d < dim; ++d)
        nm *= n[d];
    double *xyz[3] = {NULL, NULL, NULL};
    for (int d = 0; d < dim; ++d) {
        xyz[d] = malloc(m * sizeof(double));
        for (size_t j = 0; j < m; ++j)
            xyz[d][j] = (2.0 * uniform() - 1.0) * pi;
    }
    double *c = malloc(2 * m * sizeof(double));  /* interleaved (re, im) */
    double *f = malloc(2 * nm * sizeof(double));
    double *in = type == SG_USFFT_TYPE1 ? c : f;
    size_t n_in = type == SG_USFFT_TYPE1 ? m : nm;
    for (size_t i = 0; i < 2 * n_in; ++i)
        in[i] = 2.0 * uniform() - 1.0;

    sg_usfft_plan *plan = NULL;
    sg_usfft_options opts = sg_usfft_options_default();
    double err = -1.0;
    if (check(sg_usfft_plan_create(ctx, type, dim, n, sign, tol, SG_USFFT_F64, 1, &opts, &plan),
              "sg_usfft_plan_create") ||
        check(sg_usfft_set_points_f64(plan, m, xyz[0], xyz[1], xyz[2]), "sg_usfft_set_points_f64") ||
        check(sg_usfft_execute_f64(plan, c, f), "sg_usfft_execute_f64"))
        goto done;

    /* Direct sums: for each output entry, the sum over every input entry. */
    double num = 0.0, den = 0.0;
    size_t n_out = type == SG_USFFT_TYPE1 ? nm : m;
    for (size_t o = 0; o < n_out; ++o) {
        double sr = 0.0, si = 0.0;
        for (size_t i = 0; i < n_in; ++i) {
            size_t j = type == SG_USFFT_TYPE1 ? i : o; /* point */
            size_t k = type == SG_USFFT_TYPE1 ? o : i; /* mode index */
            double phase = 0.0;
            size_t rest = k;
            for (int d = 0; d < dim; ++d) {
                long kd = (long)(rest % n[d]) - (long)(n[d] / 2);
                rest /= n[d];
                phase += (double)kd * xyz[d][j];
            }
            phase *= sign;
            sr += in[2 * i] * cos(phase) - in[2 * i + 1] * sin(phase);
            si += in[2 * i] * sin(phase) + in[2 * i + 1] * cos(phase);
        }
        const double *out = type == SG_USFFT_TYPE1 ? f : c;
        num += (out[2 * o] - sr) * (out[2 * o] - sr) + (out[2 * o + 1] - si) * (out[2 * o + 1] - si);
        den += sr * sr + si * si;
    }
    err = sqrt(num / den);
done:
    sg_usfft_plan_destroy(plan);
    for (int d = 0; d < dim; ++d)
        free(xyz[d]);
    free(c);
    free(f);
    return err;
}

int main(void)
{
    sg_context *ctx = NULL;
    if (check(sg_context_create(SG_BACKEND_AUTO, 0, &ctx), "sg_context_create"))
        return 1;
    int backend = 0;
    sg_context_backend(ctx, &backend);
    printf("USFFT example on the %s\n", backend == SG_BACKEND_CUDA ? "GPU" : "CPU");

    const size_t n2[2] = {32, 24}, n3[3] = {12, 10, 8};
    const double tol = 1e-9;
    int failures = 0;
    for (int type = SG_USFFT_TYPE1; type <= SG_USFFT_TYPE2; ++type) {
        double e2 = run(ctx, type, 2, n2, 2000, tol);
        double e3 = run(ctx, type, 3, n3, 1500, tol);
        printf("type %d: 2D 32x24 modes, 2000 points: rel l2 error %.2e; "
               "3D 12x10x8 modes, 1500 points: %.2e (tolerance %.0e)\n", type, e2, e3, tol);
        failures += !(e2 >= 0.0 && e2 <= tol) + !(e3 >= 0.0 && e3 <= tol);
    }
    sg_context_destroy(ctx);
    if (failures) {
        fprintf(stderr, "%d transform(s) above tolerance or failed\n", failures);
        return 1;
    }
    printf("all transforms within tolerance\n");
    return 0;
}
