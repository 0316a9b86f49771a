/* demo_penobscot.c: denoising a real seismic section through the seisgpu C ABI, with
 * wavelets (here), F-X prediction (demo_fxdecon.c) and wave packets (demo_wavepackets.c,
 * which also takes a 3D cube).
 *
 *   demo_penobscot SECTION.sgy CUBE.sgy OUTDIR
 *
 * Reads a post-stack 2D SEG-Y section (Penobscot 3D crossline 1155 in `make demo`), adds
 * white Gaussian noise at a known signal-to-noise ratio, removes it with batched DWT
 * shrinkage (sg_dwt_denoise_f32, GSL Daubechies 8, all traces in one call), and reports the
 * backend, the timings and the SNR before and after for three threshold settings: the
 * library default, per-level noise estimates, and the default restricted to the wavelet
 * levels above the seismic band (the one that improves the SNR, used for the images).
 * Then the F-X and wave-packet steps on the same noisy data.
 *
 * Writes into OUTDIR grayscale PNGs for a quick look (clean.png, noisy.png, denoised.png,
 * removed_noise.png, wp_*.png) and the raw arrays with their description (section.f32 and
 * .json, wp_section.*, wp_cube.*) that examples/python/plot_sections.py and plot_cube.py
 * draw the figures from (`make demo` runs them).
 *
 * Exit status: 0 on success; 1 if a seisgpu call fails, the input cannot be read, or a
 * denoised result is not closer to the clean data than the noisy data were.
 *
 * The data are CC BY-SA 3.0, owned by the Nova Scotia Department of Energy (see
 * data/penobscot-xl1155/README.md); so are the images this program makes from them.
 *
 * C99 plus POSIX (clock_gettime, mkdir); zlib for the PNG's deflate stream and CRC-32. */

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo.h"
#include "seisgpu.h"

/* ---- Demo parameters ---------------------------------------------------------------- */

#define NOISE_SNR_DB 5.0           /* added noise: 5 dB below the section's RMS power   */
#define NOISE_SEED 20140703u       /* fixed seed so every run adds the same noise       */
#define WAVELET_MEMBER 8           /* GSL daubechies 8 (PyWavelets' db4)                */
/* Upper end of the reflection band. In this section the clean coefficients of the 62.5-125
 * Hz level have an RMS of 240, against 1400-2900 for the 16-62 Hz levels. */
#define SIGNAL_MAX_HZ 60.0
#define TIMED_RUNS 7               /* timed calls after one warm-up; median reported    */
#define CLIP_PERCENTILE 99.0       /* display clip: this percentile of |clean amplitude| */

/* ---- Small helpers ------------------------------------------------------------------ */

/* Prints the failing call with the library's explanation; returns nonzero on failure so
 * callers can write `if (failed(sg_x(...), "sg_x")) goto done;`. */
int failed(sg_status status, const char *call)
{
    if (status == SG_OK)
        return 0;
    fprintf(stderr, "error: %s failed: %s: %s\n", call, sg_status_string(status),
            sg_last_error_message());
    return 1;
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *backend_name(const sg_context *ctx)
{
    int32_t backend = SG_BACKEND_CPU;
    if (sg_context_backend(ctx, &backend) != SG_OK)
        return "unknown";
    return backend == SG_BACKEND_CUDA ? "CUDA (GPU)" : "CPU";
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static unsigned log2_exact(size_t n)
{
    unsigned k = 0;
    while ((n >>= 1) != 0)
        k++;
    return k;
}

/* Prints the context's description (which backend, and why), indented. 0 on success. */
static int print_context(const sg_context *ctx)
{
    size_t needed = 0;
    /* Size query first: SG_ERR_BUFFER_TOO_SMALL is expected and fills `needed`. */
    sg_status s = sg_context_describe(ctx, NULL, 0, &needed);
    if (s != SG_ERR_BUFFER_TOO_SMALL && failed(s, "sg_context_describe"))
        return -1;
    char *description = malloc(needed);
    if (!description) {
        fprintf(stderr, "error: out of memory\n");
        return -1;
    }
    if (failed(sg_context_describe(ctx, description, needed, NULL), "sg_context_describe")) {
        free(description);
        return -1;
    }
    fputs("context:  ", stdout);
    for (const char *c = description; *c; c++) { /* indent the description's lines */
        putchar(*c);
        if (*c == '\n')
            fputs("          ", stdout);
    }
    printf("\n\n");
    free(description);
    return 0;
}

/* ---- Denoising and timing ----------------------------------------------------------- */

typedef struct {
    const char *label;
    sg_dwt_denoise_options options;
    double median_ms;
    double sigma_estimate; /* mean over traces of the finest level's sigma estimate */
    double snr_db;
} denoise_run;

/* One warm-up call (which also returns the thresholds, to recover the noise estimate),
 * then TIMED_RUNS timed calls on all traces at once; records the median time, which is
 * robust to the odd descheduled run. A call's time is everything it does (on a GPU, the
 * host-device copies too). The input is never modified, so every run does identical
 * work. Returns 0 on success. */
static int run_denoise(const sg_dwt_plan *plan, denoise_run *run, const float *noisy,
                       float *denoised, size_t n_traces, size_t stride, unsigned levels)
{
    double *thresholds = malloc(n_traces * levels * sizeof *thresholds);
    double times[TIMED_RUNS];
    if (!thresholds) {
        fprintf(stderr, "error: out of memory\n");
        return -1;
    }
    if (failed(sg_dwt_denoise_f32(plan, &run->options, noisy, denoised, n_traces, stride,
                                  thresholds),
               "sg_dwt_denoise_f32")) {
        free(thresholds);
        return -1;
    }
    /* Universal threshold = sigma * sqrt(2 ln n); level 1 (finest) comes first per trace. */
    double sum = 0.0;
    for (size_t t = 0; t < n_traces; t++)
        sum += thresholds[t * levels];
    run->sigma_estimate = sum / (double)n_traces / sqrt(2.0 * log((double)stride));
    free(thresholds);

    for (int r = 0; r < TIMED_RUNS; r++) {
        double t0 = now_seconds();
        sg_status s = sg_dwt_denoise_f32(plan, &run->options, noisy, denoised, n_traces,
                                         stride, NULL);
        times[r] = 1e3 * (now_seconds() - t0);
        if (failed(s, "sg_dwt_denoise_f32"))
            return -1;
    }
    qsort(times, TIMED_RUNS, sizeof times[0], compare_double);
    run->median_ms = times[TIMED_RUNS / 2];
    return 0;
}

/* The level mask that thresholds only the detail levels above the seismic band. Detail
 * level j holds roughly [f_N / 2^j, f_N / 2^(j-1)], f_N the Nyquist frequency; levels whose
 * band starts at or above SIGNAL_MAX_HZ hold noise only. Describes it in `label`. */
static uint64_t noise_level_mask(double dt_ms, unsigned levels, char *label, size_t size)
{
    double nyquist_hz = 500.0 / dt_ms;
    uint64_t mask = 0;
    unsigned n = 0;
    while (n < levels && ldexp(nyquist_hz, -(int)n - 1) >= SIGNAL_MAX_HZ)
        mask |= (uint64_t)1 << n++;
    if (n == 0) { /* coarse sampling: still shrink the finest level */
        mask = 1;
        n = 1;
    }
    if (n == 1)
        snprintf(label, size, "default, level 1 only (%.1f-%.1f Hz)", nyquist_hz / 2.0,
                 nyquist_hz);
    else
        snprintf(label, size, "default, levels 1-%u only (%.1f-%.1f Hz)", n,
                 ldexp(nyquist_hz, -(int)n), nyquist_hz);
    return mask;
}

/* The DWT step: three threshold settings on the whole noisy section, timed; the last one
 * (levels above the seismic band) writes `denoised`. Returns its SNR, or NAN on failure.
 *  - the library default: soft universal threshold, sigma from the finest level, on every
 *    level. On band-limited seismic data at moderate SNR it removes reflections along with
 *    noise: inside the seismic band the signal's coefficients are only 1.5-3.5 sigma, below
 *    the universal threshold sigma * sqrt(2 ln n) (3.9 sigma here);
 *  - the same with sigma estimated per level, meant for coloured noise; inside the band the
 *    "noise" estimate then includes the signal, so it removes even more;
 *  - the default restricted to the levels above the seismic band (level_mask): the noise
 *    there goes, the reflections stay. */
static double dwt_step(const sg_context *ctx, const section *sec, const float *noisy,
                       float *denoised, double sigma)
{
    const size_t n_traces = sec->n_traces, stride = sec->stride;
    unsigned levels = log2_exact(stride); /* n_levels = 0 in the options: all levels */
    char band_label[96];
    sg_dwt_plan *plan = NULL;
    float *scratch = calloc(n_traces * stride, sizeof *scratch);
    double result = NAN;
    if (!scratch) {
        fprintf(stderr, "error: out of memory\n");
        return NAN;
    }
    if (failed(sg_dwt_plan_create(ctx, SG_WAVELET_DAUBECHIES, WAVELET_MEMBER, stride, &plan),
               "sg_dwt_plan_create"))
        goto done;
    denoise_run runs[3] = {
        {"default (soft, universal, sigma finest), all levels",
         sg_dwt_denoise_options_default(), 0, 0, 0},
        {"sigma per level, all levels", sg_dwt_denoise_options_default(), 0, 0, 0},
        {band_label, sg_dwt_denoise_options_default(), 0, 0, 0},
    };
    runs[1].options.noise_estimate = SG_NOISE_PER_LEVEL;
    runs[2].options.level_mask = noise_level_mask(sec->dt_ms, levels, band_label,
                                                  sizeof band_label);

    /* Throughput counts the padded f32 input, which is what the library processes. */
    double megabytes = (double)(n_traces * stride) * sizeof(float) / 1e6;
    printf("DWT:      GSL daubechies %d, %u levels, %zu traces x %zu samples per call "
           "(%.2f MB),\n          median of %d runs after a warm-up\n",
           WAVELET_MEMBER, levels, n_traces, stride, megabytes, TIMED_RUNS);
    printf("  %-52s %8s %8s %10s %8s\n", "thresholding", "ms", "MB/s", "sigma est", "SNR dB");
    for (size_t r = 0; r < 3; r++) {
        float *dst = r == 2 ? denoised : scratch; /* the chosen run writes the result */
        if (run_denoise(plan, &runs[r], noisy, dst, n_traces, stride, levels))
            goto done;
        runs[r].snr_db = snr_db(sec->samples, dst, n_traces, sec->n_samples, stride);
        printf("%c %-52s %8.2f %8.1f %10.1f %8.2f\n", r == 2 ? '*' : ' ', runs[r].label,
               runs[r].median_ms, megabytes / (runs[r].median_ms * 1e-3),
               runs[r].sigma_estimate, runs[r].snr_db);
    }
    printf("  (true noise sigma %.1f; * = used for the images)\n", sigma);
    result = runs[2].snr_db;

done:
    sg_dwt_plan_destroy(plan);
    free(scratch);
    return result;
}

/* ---- Outputs ------------------------------------------------------------------------ */

/* The quick-look PNGs and the raw arrays of the whole section. 0 on success. */
static int section_outputs(const char *out_dir, const section *sec, const float *noisy,
                           const float *dwt, const float *fx, const double snr[3],
                           const char *fx_label, const char *backend)
{
    const size_t n_traces = sec->n_traces, n = sec->n_samples, stride = sec->stride;
    double clip = abs_percentile(sec->samples, n_traces, n, stride, CLIP_PERCENTILE);
    float *removed = malloc(n_traces * stride * sizeof *removed);
    int rc = -1;
    if (clip <= 0.0 || !removed) {
        fprintf(stderr, "error: cannot choose a display clip (out of memory or a silent "
                        "section)\n");
        goto done;
    }
    for (size_t i = 0; i < n_traces * stride; i++)
        removed[i] = noisy[i] - dwt[i];
    printf("images:   %zu x %zu, gray clipped at +-%.0f (%.0fth percentile of |clean|), "
           "peaks black\n", n_traces, n, clip, CLIP_PERCENTILE);
    if (write_section_png(out_dir, "clean.png", sec->samples, n_traces, n, stride, clip) ||
        write_section_png(out_dir, "noisy.png", noisy, n_traces, n, stride, clip) ||
        write_section_png(out_dir, "denoised.png", dwt, n_traces, n, stride, clip) ||
        write_section_png(out_dir, "removed_noise.png", removed, n_traces, n, stride, clip))
        goto done;
    raw_grid g = {"Penobscot 3D, crossline 1155", 2, {n_traces, n, 1},
                  {"inline", "time", ""}, {"", "s", ""},
                  {sec->first_inline, 1e-3 * sec->delay_ms, 0}, {1, 1e-3 * sec->dt_ms, 0},
                  stride};
    if (sec->last_inline < sec->first_inline)
        g.step[0] = -1;
    raw_array arrays[4] = {
        {"clean", "clean", sec->samples, NAN},
        {"noisy", "noisy", noisy, snr[0]},
        {"dwt", "DWT, Daubechies 8, levels above 60 Hz", dwt, snr[1]},
        {"fx", fx_label, fx, snr[2]},
    };
    rc = write_raw(out_dir, "section", &g, arrays, 4, clip, backend);

done:
    free(removed);
    return rc;
}

/* ---- Main --------------------------------------------------------------------------- */

/* Reads the section and prints what it is; 0 on success. */
static int load_section(const char *path, section *sec)
{
    if (read_segy(path, sec))
        return -1;
    printf("input:    %s\n", path);
    if (sec->first_card[0])
        printf("          \"%s\"\n", sec->first_card);
    printf("          SEG-Y rev %d, format %d (%s), %zu traces x %zu samples, dt %g ms\n",
           sec->revision_major, sec->format,
           sec->format == 1 ? "IBM float" : sec->format == 3 ? "16-bit integer" : "IEEE float",
           sec->n_traces, sec->n_samples, sec->dt_ms);
    if (sec->stride > 2 * sec->n_samples - 1) {
        fprintf(stderr, "error: %zu samples is too short to reflect-pad to %zu\n",
                sec->n_samples, sec->stride);
        return -1;
    }
    printf("          padded to %zu samples per trace (even reflection) for the DWT\n\n",
           sec->stride);
    return 0;
}

int main(int argc, char **argv)
{
    int exit_code = 1;
    section sec = {0};
    float *noisy = NULL, *dwt = NULL, *fx = NULL;
    sg_context *ctx = NULL;

    if (argc != 4) {
        fprintf(stderr, "usage: %s SECTION.sgy CUBE.sgy OUTDIR\n", argv[0]);
        return 2;
    }
    const char *segy_path = argv[1], *cube_path = argv[2], *out_dir = argv[3];
    /* Line-buffer stdout so that, piped into a log, errors on stderr appear in order. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* A library built for another ABI would misread our structs; refuse early. */
    if (sg_version_number() / 10000 != SG_VERSION_MAJOR) {
        fprintf(stderr, "error: libseisgpu %s does not match the header (major %d)\n",
                sg_version(), SG_VERSION_MAJOR);
        return 1;
    }
    printf("seisgpu %s: denoising demo\n\n", sg_version());
    if (load_section(segy_path, &sec) ||
        failed(sg_context_create(SG_BACKEND_AUTO, 0, &ctx), "sg_context_create") ||
        print_context(ctx))
        goto done;

    const size_t n_traces = sec.n_traces, n = sec.n_samples, stride = sec.stride;
    noisy = calloc(n_traces * stride, sizeof(float));
    dwt = calloc(n_traces * stride, sizeof(float));
    fx = calloc(n_traces * stride, sizeof(float));
    if (!noisy || !dwt || !fx) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    double signal_rms = sqrt(mean_square(sec.samples, n_traces, n, stride));
    double sigma = signal_rms * pow(10.0, -NOISE_SNR_DB / 20.0);
    add_gaussian_noise(sec.samples, noisy, n_traces, n, stride, sigma, NOISE_SEED);
    reflect_pad(noisy, n_traces, n, stride);
    double snr[3] = {snr_db(sec.samples, noisy, n_traces, n, stride), NAN, NAN};
    printf("noise:    Gaussian, sigma %.1f = section RMS %.1f at %.1f dB SNR (seed %u)\n\n",
           sigma, signal_rms, NOISE_SNR_DB, NOISE_SEED);

    snr[1] = dwt_step(ctx, &sec, noisy, dwt, sigma);
    if (isnan(snr[1]))
        goto done;
    printf("SNR:      noisy %.2f dB -> DWT %.2f dB (%+.2f dB)\n\n", snr[0], snr[1],
           snr[1] - snr[0]);
    const char *fx_label = NULL;
    if (demo_fxdecon(ctx, &sec, noisy, fx, &snr[2], &fx_label))
        goto done;

    if (make_directories(out_dir)) {
        fprintf(stderr, "error: cannot create directory %s: %s\n", out_dir, strerror(errno));
        goto done;
    }
    if (section_outputs(out_dir, &sec, noisy, dwt, fx, snr, fx_label, backend_name(ctx)))
        goto done;
    printf("\n");
    if (!(snr[1] > snr[0] && snr[2] > snr[0])) {
        fprintf(stderr, "error: denoising did not improve the SNR (DWT %+.2f dB, F-X %+.2f dB)\n",
                snr[1] - snr[0], snr[2] - snr[0]);
        goto done;
    }
    if (demo_wavepackets(ctx, &sec, noisy, sigma, cube_path, out_dir))
        goto done;
    exit_code = 0;

done:
    sg_context_destroy(ctx);
    free(fx);
    free(dwt);
    free(noisy);
    free(sec.samples);
    return exit_code;
}
