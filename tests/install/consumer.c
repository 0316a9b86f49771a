/* A program outside the source tree, as a user writes it: built against an installed
 * seisgpu (pkg-config or CMake) and checked to run from that install. It compares the
 * library's version with the one it was told to expect, and runs one real call: a Haar
 * forward transform of [1, 2, 3, 4], whose coefficients are known in closed form. */
#include <math.h>
#include <seisgpu.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s EXPECTED_VERSION\n", argv[0]);
        return 2;
    }
    if (strcmp(sg_version(), argv[1]) != 0) {
        fprintf(stderr, "library version %s, expected %s\n", sg_version(), argv[1]);
        return 1;
    }
    sg_context *ctx = NULL;
    sg_dwt_plan *plan = NULL;
    if (sg_context_create(SG_BACKEND_CPU, 0, &ctx) != SG_OK ||
        sg_dwt_plan_create(ctx, SG_WAVELET_HAAR, 2, 4, &plan) != SG_OK) {
        fprintf(stderr, "setup failed: %s\n", sg_last_error_message());
        return 1;
    }
    const double x[4] = {1, 2, 3, 4};
    double c[4];
    if (sg_dwt_execute_f64(plan, SG_DWT_FORWARD, 0, x, c, 1, 4) != SG_OK) {
        fprintf(stderr, "transform failed: %s\n", sg_last_error_message());
        return 1;
    }
    /* GSL layout [a2 | d2 | d1, d1]: a2 = 10/2, d2 = (3 − 7)/2, d1 = (1 − 2, 3 − 4)/√2. */
    const double r = sqrt(0.5);
    const double want[4] = {5.0, -2.0, -r, -r};
    for (int i = 0; i < 4; i++) {
        if (fabs(c[i] - want[i]) > 1e-12) {
            fprintf(stderr, "coefficient %d is %.15g, expected %.15g\n", i, c[i], want[i]);
            return 1;
        }
    }
    sg_dwt_plan_destroy(plan);
    sg_context_destroy(ctx);
    printf("seisgpu %s from an installed tree: Haar coefficients correct\n", sg_version());
    return 0;
}
