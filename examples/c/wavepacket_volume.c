/* wavepacket_volume: wave packets of a section longer than one layout, in tiles, through the
 * C ABI (sg_wavepacket_volume_*).
 *
 * A synthetic section of 96 samples x 150 traces (a flat reflection, a dipping one and a
 * curved one, Ricker wavelets of 0.1 cycles/sample) is cut into tiles of 96 x 64 traces (the
 * last one zero-padded past the section's end), each decomposed over 12 directions and the
 * automatic levels in single precision, every box's grid shifted onto one grid common to
 * all tiles.
 *
 * Known answers (exit status 1 if any fails):
 *   1. the sizes: 150 / 64 rounds up to 3 tiles; the boxes' ranges follow each other and
 *      cover the coefficient array;
 *   2. the adjoint is exact: <C f, c> = <f, C* c> for random f and c, to 1e-5 relative;
 *   3. forward then inverse gives the section back to 1e-5 relative (USFFT tol 1e-6);
 *   4. bad input is refused with nothing written: a NaN sample (SG_ERR_NON_FINITE, the
 *      coefficients untouched) and a tile of 4 traces (SG_ERR_INVALID_ARGUMENT, *out
 *      untouched).
 *
 * Build: make examples   (or: cc -I include wavepacket_volume.c -L target/release -lseisgpu -lm)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "seisgpu.h"

enum { NT = 96, NX = 150, N = NT * NX, TILE_X = 64 };

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
static uint64_t state = 2026;
static double uniform(void) {
    state = state * 48271 % 2147483647;
    return 2.0 * (double)state / 2147483647.0 - 1.0;
}

static double ricker(double t, double f) {
    const double PI = 3.14159265358979323846;
    double a = PI * f * t;
    return (1.0 - 2.0 * a * a) * exp(-a * a);
}

int main(void) {
    static float section[N], random_f[N], adj[N], back[N], work[N];
    for (int x = 0; x < NX; x++) {
        double t1 = 20.0, t2 = 30.0 + 0.35 * x, t3 = 80.0 - 0.004 * (x - 75) * (x - 75);
        for (int t = 0; t < NT; t++)
            section[x * NT + t] =
                (float)(ricker(t - t1, 0.1) - 0.7 * ricker(t - t2, 0.1) + 0.5 * ricker(t - t3, 0.1));
    }

    sg_context *ctx = NULL;
    sg_wavepacket_volume *volume = NULL;
    if (failed(sg_context_create(SG_BACKEND_AUTO, 0, &ctx), "context")) return 1;
    const size_t shape[2] = {NT, NX}, tile[2] = {NT, TILE_X};
    sg_wavepacket_layout_options lo = sg_wavepacket_layout_options_default();
    lo.directions = 12; /* levels automatic, alpha 3, cutoff 1e-3, USFFT tolerance 1e-6 */
    if (failed(sg_wavepacket_volume_create(ctx, 2, shape, tile, SG_WAVEPACKET_F32, &lo, &volume), "volume"))
        return 1;

    /* 1. Sizes and box ranges. */
    size_t n, m, tiles[3], n_boxes;
    if (failed(sg_wavepacket_volume_sizes(volume, &n, &m, tiles, &n_boxes), "sizes")) return 1;
    printf("section %d x %d in tiles of %d x %d: %zu x %zu tiles, %zu boxes, %zu coefficients (redundancy %.2f)\n",
           NT, NX, NT, TILE_X, tiles[0], tiles[1], n_boxes, m, (double)m / n);
    size_t next = 0;
    int contiguous = 1;
    for (size_t b = 0; b < n_boxes; b++) {
        int32_t level, dir;
        size_t offset, count;
        if (failed(sg_wavepacket_volume_box_info(volume, b, &level, &dir, &offset, &count), "box info"))
            return 1;
        contiguous &= offset == next && count > 0;
        next = offset + count;
        if (b == 0 || b + 1 == n_boxes)
            printf("  box %zu: level %d, direction %d, %zu coefficients from %zu\n", b, level, dir, count, offset);
    }
    check(n == N && tiles[0] == 1 && tiles[1] == 3 && tiles[2] == 1, "150 traces in tiles of 64: 1 x 3 tiles");
    check(contiguous && next == m, "the boxes' ranges follow each other and cover the coefficients");

    float *coeffs = malloc(2 * m * sizeof *coeffs), *random_c = malloc(2 * m * sizeof *random_c);
    if (!coeffs || !random_c) return 1;

    /* 2. The dot-product test. */
    for (size_t i = 0; i < N; i++) random_f[i] = (float)uniform();
    for (size_t i = 0; i < 2 * m; i++) random_c[i] = (float)uniform();
    if (failed(sg_wavepacket_volume_forward_f32(volume, random_f, coeffs), "forward")) return 1;
    if (failed(sg_wavepacket_volume_adjoint_f32(volume, random_c, adj), "adjoint")) return 1;
    double lhs = 0.0, rhs = 0.0, nc = 0.0, nr = 0.0;
    for (size_t i = 0; i < 2 * m; i++) {
        lhs += (double)coeffs[i] * random_c[i];
        nc += (double)coeffs[i] * coeffs[i];
        nr += (double)random_c[i] * random_c[i];
    }
    for (size_t i = 0; i < N; i++) rhs += (double)random_f[i] * adj[i];
    double mismatch = fabs(lhs - rhs) / sqrt(nc * nr);
    printf("adjoint mismatch %.2e\n", mismatch);
    check(mismatch < 1e-5, "<C f, c> = <f, C* c> to 1e-5");

    /* 3. The round trip. */
    if (failed(sg_wavepacket_volume_forward_f32(volume, section, coeffs), "forward")) return 1;
    size_t iterations;
    double residual;
    if (failed(sg_wavepacket_volume_inverse_f32(volume, coeffs, back, 1e-6, 30, &iterations, &residual), "inverse"))
        return 1;
    double de = 0.0, ds = 0.0;
    for (size_t i = 0; i < N; i++) {
        de += ((double)back[i] - section[i]) * ((double)back[i] - section[i]);
        ds += (double)section[i] * section[i];
    }
    double e = sqrt(de / ds);
    printf("round trip %.2e after %zu CG iterations (residual %.1e)\n", e, iterations, residual);
    check(e <= 1e-5, "inverse(C f) = f to 1e-5");

    /* 4. Bad input. */
    for (size_t i = 0; i < N; i++) work[i] = section[i];
    work[NT * 100 + 7] = NAN;
    for (size_t i = 0; i < 2 * m; i++) coeffs[i] = -7.0f;
    sg_status st = sg_wavepacket_volume_forward_f32(volume, work, coeffs);
    int untouched = 1;
    for (size_t i = 0; i < 2 * m; i++) untouched &= coeffs[i] == -7.0f;
    printf("NaN sample: %s: %s\n", sg_status_string(st), sg_last_error_message());
    check(st == SG_ERR_NON_FINITE && untouched, "NaN data refused, coefficients untouched");

    sg_wavepacket_volume *bad = (sg_wavepacket_volume *)&st;
    const size_t thin[2] = {NT, 4};
    st = sg_wavepacket_volume_create(ctx, 2, shape, thin, SG_WAVEPACKET_F32, NULL, &bad);
    printf("tiles of 4 traces: %s: %s\n", sg_status_string(st), sg_last_error_message());
    check(st == SG_ERR_INVALID_ARGUMENT && bad == (sg_wavepacket_volume *)&st, "a tile under 8 traces refused");

    free(coeffs);
    free(random_c);
    sg_wavepacket_volume_destroy(volume);
    sg_context_destroy(ctx);
    printf("%s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
