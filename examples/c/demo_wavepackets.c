/* demo_wavepackets.c: the Penobscot demo's wave-packet step (sg_wavepacket_*).
 *
 * On a window of the section (256 samples x 192 traces, with the noise the DWT step added)
 * and on a 3D field cube (the F3 crop in data/f3-tiny-cube: 64 samples x 18 crosslines x
 * 23 inlines, with noise added at the same SNR), in single precision:
 *   - denoising: hard thresholds at k * sigma * |psi_b| per box (the level white noise of
 *     the known sigma reaches in each box), then the inverse;
 *   - compression: the sparse approximation with as many complex coefficients as 5 % of the
 *     samples hold reals over two, reconstructed with the adjoint.
 * Prints the SNRs and the times, writes quick-look images (wp_*.png; for the cube, its
 * middle inline) and the raw arrays (wp_section.*, wp_cube.*) for the figures, and fails if
 * a denoised result is not closer to the clean data than the noisy one, or a compressed
 * one has no positive SNR. */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

enum { WIN_T0 = 350, WIN_T = 256, WIN_X0 = 200, WIN_X = 192 };
enum { CUBE_T0 = 5, CUBE_T = 64, CUBE_XL = 18, CUBE_IL = 23 };
#define CUBE_NOISE_SNR_DB 5.0
#define CUBE_SEED 20260126u
#define THRESHOLD_K 2.5      /* hard threshold at k * sigma * |psi_b|                  */
#define COMPRESSION 0.05     /* reals kept, as a fraction of the samples               */

/* What one data set needs: its shape, clean and noisy samples (axis 1 fastest), the noise
 * sigma, a layout's options, and where its results go. */
typedef struct {
    const char *name;
    int dim;
    size_t shape[3];
    const float *clean, *noisy;
    double sigma;
    sg_wavepacket_layout_options options;
    float *denoised, *compressed;
    double snr_noisy, snr_denoised, snr_compressed;
} dataset;

/* Denoises and compresses one data set. 0 on success. */
static int run(sg_context *ctx, dataset *d)
{
    int rc = -1;
    size_t n = d->shape[0] * d->shape[1] * (d->dim == 3 ? d->shape[2] : 1);
    size_t n_samples, m, n_boxes, levels, n_dirs;
    sg_wavepacket_layout *layout = NULL;
    float *c = NULL;
    double t = now_seconds();
    if (failed(sg_wavepacket_layout_create_with_options(ctx, d->dim, d->shape, SG_WAVEPACKET_F32,
                                                        &d->options, &layout),
               "sg_wavepacket_layout_create_with_options") ||
        failed(sg_wavepacket_layout_sizes(layout, &n_samples, &m, &n_boxes, &levels, &n_dirs),
               "sg_wavepacket_layout_sizes"))
        goto done;
    double plan_s = now_seconds() - t;
    c = malloc(2 * m * sizeof *c);
    if (!c) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    printf("  %s: %zu directions stored, %zu levels, %zu boxes, redundancy %.1f, layout %.2f s\n",
           d->name, n_dirs, levels, n_boxes, (double)m / n_samples, plan_s);

    /* Denoising: C, per-box thresholds for white noise of the known sigma, the inverse. */
    double sigma_est = 0.0;
    size_t iterations = 0;
    t = now_seconds();
    if (failed(sg_wavepacket_forward_f32(layout, d->noisy, c), "sg_wavepacket_forward_f32") ||
        failed(sg_wavepacket_estimate_noise_f32(layout, c, &sigma_est),
               "sg_wavepacket_estimate_noise_f32") ||
        failed(sg_wavepacket_threshold_noise_f32(layout, c, SG_WAVEPACKET_HARD, THRESHOLD_K,
                                                 d->sigma),
               "sg_wavepacket_threshold_noise_f32") ||
        failed(sg_wavepacket_inverse_f32(layout, c, d->denoised, 1e-4, 30, &iterations, NULL),
               "sg_wavepacket_inverse_f32"))
        goto done;
    double denoise_s = now_seconds() - t;
    d->snr_noisy = snr_db(d->clean, d->noisy, 1, n, n);
    d->snr_denoised = snr_db(d->clean, d->denoised, 1, n, n);
    printf("    denoise (hard, %.1f sigma |psi_b|; sigma %.1f, estimated %.1f): %.2f -> %.2f dB "
           "(%+.2f dB), %zu CG iterations, %.2f s\n",
           THRESHOLD_K, d->sigma, sigma_est, d->snr_noisy, d->snr_denoised,
           d->snr_denoised - d->snr_noisy, iterations, denoise_s);

    /* Compression: S coefficients, S complex values = COMPRESSION * n reals. */
    size_t s = (size_t)(COMPRESSION * (double)n / 2.0), kept = 0;
    sg_wavepacket_sparse_options so = sg_wavepacket_sparse_options_default();
    so.stages = 6;
    so.refit_iterations = 4;
    t = now_seconds();
    if (failed(sg_wavepacket_sparse_approximation_f32(layout, d->clean, c, s, &so, &kept, NULL),
               "sg_wavepacket_sparse_approximation_f32") ||
        failed(sg_wavepacket_adjoint_f32(layout, c, d->compressed), "sg_wavepacket_adjoint_f32"))
        goto done;
    d->snr_compressed = snr_db(d->clean, d->compressed, 1, n, n);
    printf("    compress to %.0f %% (%zu of %zu coefficients): %.2f dB, %.2f s\n",
           100.0 * COMPRESSION, kept, m, d->snr_compressed, now_seconds() - t);
    rc = 0;

done:
    free(c);
    sg_wavepacket_layout_destroy(layout);
    return rc;
}

/* The quick-look images of a data set (clean, noisy, denoised, compressed; `offset` picks
 * the part shown: a 2D section: all of it, a cube: one inline, n_traces columns of n
 * samples), and its raw arrays on grid `g`. 0 on success. */
static int outputs(const char *out_dir, const char *prefix, const dataset *d, size_t offset,
                   size_t n_traces, size_t n, const raw_grid *g, const char *backend)
{
    double clip = abs_percentile(d->clean + offset, n_traces, n, n, 99.0);
    const float *x[4] = {d->clean, d->noisy, d->denoised, d->compressed};
    const char *what[4] = {"clean", "noisy", "denoised", "compressed"};
    char name[128];
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "wp_%s_%s.png", prefix, what[k]);
        if (clip <= 0.0 || write_section_png(out_dir, name, x[k] + offset, n_traces, n, n, clip))
            return -1;
    }
    char compressed_label[64];
    snprintf(compressed_label, sizeof compressed_label, "clean, compressed to %.0f %%",
             100.0 * COMPRESSION);
    raw_array arrays[4] = {
        {"clean", "clean", d->clean, NAN},
        {"noisy", "noisy", d->noisy, d->snr_noisy},
        {"denoised", "wave packets, thresholds per box", d->denoised, d->snr_denoised},
        {"compressed", compressed_label, d->compressed, d->snr_compressed},
    };
    snprintf(name, sizeof name, "wp_%s", strcmp(prefix, "cube_inline") ? prefix : "cube");
    return write_raw(out_dir, name, g, arrays, 4, clip, backend);
}

int demo_wavepackets(sg_context *ctx, const section *sec, const float *noisy, double sigma,
                     const char *cube_path, const char *out_dir)
{
    int rc = -1;
    section cube = {0};
    float *buf = NULL;
    printf("wave packets: Gaussian wave packets (sg_wavepacket_*), f32\n");
    if (sec->n_samples < WIN_T0 + WIN_T || sec->n_traces < WIN_X0 + WIN_X) {
        fprintf(stderr, "error: the section is smaller than the wave-packet window\n");
        return -1;
    }
    if (read_segy(cube_path, &cube))
        return -1;
    if (cube.n_traces != CUBE_XL * CUBE_IL || cube.n_samples < CUBE_T0 + CUBE_T) {
        fprintf(stderr, "error: %s is not the %d x %d-trace F3 crop\n", cube_path, CUBE_IL,
                CUBE_XL);
        goto done;
    }
    size_t n2 = WIN_T * WIN_X, n3 = CUBE_T * CUBE_XL * CUBE_IL;
    buf = malloc((5 * n2 + 5 * n3) * sizeof *buf);
    if (!buf) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    float *w = buf, *w3 = buf + 5 * n2;

    /* The section's window, clean and noisy (the DWT step's noise). */
    for (size_t x = 0; x < WIN_X; x++)
        for (size_t t = 0; t < WIN_T; t++) {
            size_t src = (WIN_X0 + x) * sec->stride + WIN_T0 + t;
            w[x * WIN_T + t] = sec->samples[src];
            w[n2 + x * WIN_T + t] = noisy[src];
        }
    dataset d2 = {"Penobscot window 256 x 192", 2, {WIN_T, WIN_X, 1}, w, w + n2, sigma,
                  sg_wavepacket_layout_options_default(), w + 2 * n2, w + 3 * n2, 0, 0, 0};
    d2.options.directions = 16; /* narrow enough for the reflectors, few enough to be quick */
    d2.options.levels = 4;
    d2.options.cutoff = 0.2;

    /* The cube (inline-sorted traces: inline, then crossline), and its noise. */
    for (size_t tr = 0; tr < CUBE_XL * CUBE_IL; tr++)
        for (size_t t = 0; t < CUBE_T; t++)
            w3[tr * CUBE_T + t] = cube.samples[tr * cube.stride + CUBE_T0 + t];
    double sigma3 = sqrt(mean_square(w3, 1, n3, n3)) * pow(10.0, -CUBE_NOISE_SNR_DB / 20.0);
    add_gaussian_noise(w3, w3 + n3, 1, n3, n3, sigma3, CUBE_SEED);
    dataset d3 = {"F3 cube 64 x 18 x 23", 3, {CUBE_T, CUBE_XL, CUBE_IL}, w3, w3 + n3, sigma3,
                  sg_wavepacket_layout_options_default(), w3 + 2 * n3, w3 + 3 * n3, 0, 0, 0};
    d3.options.directions = 26;
    d3.options.levels = 2;
    d3.options.cutoff = 0.2;

    if (run(ctx, &d2) || run(ctx, &d3))
        goto done;
    size_t middle = CUBE_IL / 2 * CUBE_XL * CUBE_T;
    const double dt_s = 1e-3 * sec->dt_ms, dt3_s = 1e-3 * cube.dt_ms;
    raw_grid g2 = {"Penobscot 3D, crossline 1155, a window", 2, {WIN_X, WIN_T, 1},
                   {"inline", "time", ""}, {"", "s", ""},
                   {sec->first_inline + WIN_X0, 1e-3 * sec->delay_ms + WIN_T0 * dt_s, 0},
                   {1, dt_s, 0}, WIN_T};
    raw_grid g3 = {"F3 Netherlands, a crop", 3, {CUBE_IL, CUBE_XL, CUBE_T},
                   {"inline", "crossline", "time"}, {"", "", "s"},
                   {cube.first_inline, cube.first_crossline,
                    1e-3 * cube.delay_ms + CUBE_T0 * dt3_s},
                   {1, 1, dt3_s}, CUBE_T};
    const char *backend = backend_name(ctx);
    if (outputs(out_dir, "section", &d2, 0, WIN_X, WIN_T, &g2, backend) ||
        outputs(out_dir, "cube_inline", &d3, middle, CUBE_XL, CUBE_T, &g3, backend))
        goto done;
    printf("\n");
    if (!(d2.snr_denoised > d2.snr_noisy && d3.snr_denoised > d3.snr_noisy &&
          d2.snr_compressed > 0.0 && d3.snr_compressed > 0.0)) {
        fprintf(stderr, "error: a wave-packet result missed its mark (see above)\n");
        goto done;
    }
    rc = 0;

done:
    free(buf);
    free(cube.samples);
    return rc;
}
