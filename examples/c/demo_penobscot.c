/* demo_penobscot.c: wavelet denoising of a real seismic section through the seisgpu C ABI,
 * then wave packets on the same section and on a 3D cube (demo_wavepackets.c).
 *
 *   demo_penobscot SECTION.sgy CUBE.sgy OUTDIR
 *
 * Reads a post-stack 2D SEG-Y section (Penobscot 3D crossline 1155 in `make demo`), adds
 * white Gaussian noise at a known signal-to-noise ratio, removes it with batched DWT
 * shrinkage (sg_dwt_denoise_f32, GSL Daubechies 8, all traces in one call), and reports the
 * backend, the timings and the SNR before and after for three threshold settings: the
 * library default, per-level noise estimates, and the default restricted to the wavelet
 * levels above the seismic band (the one that improves the SNR, used for the images).
 * Writes four grayscale PNGs of the section into OUTDIR: clean, noisy, denoised and the
 * noise that was removed; and the four sections as float32 (sections.f32, with their
 * sizes in sections.txt) for examples/python/plot_sections.py, which `make demo` runs
 * when matplotlib is there to draw the slide figure with titles, axes and a colour bar.
 *
 * Exit status: 0 on success; 1 if a seisgpu call fails, the input cannot be read, or the
 * denoised section is not closer to the clean one than the noisy section was (here or in
 * the wave-packet step).
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
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

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

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static size_t next_power_of_two(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

static unsigned log2_exact(size_t n)
{
    unsigned k = 0;
    while ((n >>= 1) != 0)
        k++;
    return k;
}

/* ---- SEG-Y reading ------------------------------------------------------------------ */

/* SEG-Y is big-endian throughout (rev 1 does not allow otherwise). */
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int be16s(const unsigned char *p)
{
    return (int16_t)(uint16_t)(p[0] << 8 | p[1]);
}

/* IBM System/360 single precision: 1 sign bit, a 7-bit exponent of 16 biased by 64, and a
 * 24-bit fraction F read as 0.F, so value = (-1)^s * (F / 2^24) * 16^(e - 64). The
 * fraction has at most 24 significant bits, so through double the result is exact unless
 * it falls outside float's range (|x| > 3.4e38 becomes inf, tiny values lose bits). */
static float ibm_to_float(uint32_t word)
{
    int negative = (int)(word >> 31);
    int exponent16 = (int)((word >> 24) & 0x7f) - 64;
    uint32_t fraction = word & 0x00ffffffu;
    double magnitude = ldexp((double)fraction, 4 * exponent16 - 24);
    return (float)(negative ? -magnitude : magnitude);
}

/* IEEE 754 single precision stored big-endian (format code 5). */
static float ieee_to_float(uint32_t word)
{
    float f;
    memcpy(&f, &word, sizeof f);
    return f;
}


/* Reads a whole SEG-Y file with fixed-length traces into `out`. Each trace is stored at a
 * stride of the next power of two of its length, the tail zeroed, so that the caller can
 * pad traces in place for the DWT. Returns 0 on success, else prints why and returns -1. */
int read_segy(const char *path, section *out)
{
    enum { TEXT_BYTES = 3200, BINARY_BYTES = 400, TRACE_HEADER_BYTES = 240 };
    unsigned char *file = NULL;
    long size = -1;
    int rc = -1;

    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "error: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < TEXT_BYTES + BINARY_BYTES || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "error: %s is not a SEG-Y file (too short or unseekable)\n", path);
        goto done;
    }
    file = malloc((size_t)size);
    if (!file || fread(file, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "error: cannot read %s\n", path);
        goto done;
    }

    /* Binary header fields, at their SEG-Y byte positions (1-based) minus 3201. */
    const unsigned char *bin = file + TEXT_BYTES;
    int interval_us = be16s(bin + 16);   /* bytes 3217-3218 */
    int n_samples = be16s(bin + 20);     /* bytes 3221-3222 */
    int format = be16s(bin + 24);        /* bytes 3225-3226 */
    int revision = bin[300];             /* byte 3501: major revision number */
    int n_extended = be16s(bin + 304);   /* bytes 3505-3506: extended text headers */
    if (n_samples <= 0 || interval_us <= 0) {
        fprintf(stderr, "error: %s: binary header has %d samples at %d us\n", path,
                n_samples, interval_us);
        goto done;
    }
    if (format != 1 && format != 3 && format != 5) {
        fprintf(stderr, "error: %s: sample format %d not supported (1 = IBM, 3 = 16-bit "
                "integer, 5 = IEEE)\n", path, format);
        goto done;
    }
    size_t sample_bytes = format == 3 ? 2 : 4;
    if (n_extended < 0) {
        fprintf(stderr, "error: %s: variable number of extended text headers\n", path);
        goto done;
    }

    size_t data_start = TEXT_BYTES + BINARY_BYTES + (size_t)n_extended * TEXT_BYTES;
    size_t trace_bytes = TRACE_HEADER_BYTES + sample_bytes * (size_t)n_samples;
    if ((size_t)size < data_start || ((size_t)size - data_start) % trace_bytes != 0) {
        fprintf(stderr, "error: %s: %ld bytes is not headers plus whole traces of %d "
                "samples (variable-length traces are not supported)\n", path, size, n_samples);
        goto done;
    }
    out->n_traces = ((size_t)size - data_start) / trace_bytes;
    if (out->n_traces == 0) {
        fprintf(stderr, "error: %s holds no traces\n", path);
        goto done;
    }
    out->n_samples = (size_t)n_samples;
    out->stride = next_power_of_two(out->n_samples);
    out->dt_ms = interval_us / 1000.0;
    out->format = format;
    out->revision_major = revision;

    /* Keep the first card for the log when the text header is ASCII ('C' is 0xC3 in
     * EBCDIC, which we do not translate). */
    out->first_card[0] = '\0';
    if (file[0] == 'C') {
        size_t n = 80;
        memcpy(out->first_card, file, n);
        while (n > 0 && (out->first_card[n - 1] == ' ' || out->first_card[n - 1] == '\0'))
            n--;
        out->first_card[n] = '\0';
    }

    out->samples = calloc(out->n_traces * out->stride, sizeof(float));
    if (!out->samples) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    for (size_t t = 0; t < out->n_traces; t++) {
        const unsigned char *p = file + data_start + t * trace_bytes + TRACE_HEADER_BYTES;
        float *row = out->samples + t * out->stride;
        for (size_t i = 0; i < out->n_samples; i++, p += sample_bytes)
            row[i] = format == 1 ? ibm_to_float(be32(p))
                     : format == 3 ? (float)be16s(p)
                                   : ieee_to_float(be32(p));
    }
    rc = 0;

done:
    free(file);
    fclose(f);
    return rc;
}

/* ---- Padding, noise and quality measures ------------------------------------------- */

/* The DWT needs a power-of-two length, so the n samples of each row are extended to
 * `stride` by even reflection: x[n-1+k] = x[n-1-k]. Unlike zero padding this keeps the
 * trace continuous at its end and gives the padding the same noise level as the data, so
 * the library's noise estimate (the median of the finest detail coefficients) is not
 * pulled down by runs of exact zeros (on this section zero padding gives an estimate of
 * 555 for a true sigma of 877; reflection gives 905). Requires stride <= 2n - 1. */
static void reflect_pad(float *rows, size_t n_rows, size_t n, size_t stride)
{
    for (size_t t = 0; t < n_rows; t++) {
        float *row = rows + t * stride;
        for (size_t i = n; i < stride; i++)
            row[i] = row[2 * (n - 1) - i];
    }
}

/* SplitMix64: a small, well-mixed generator; good enough for test noise and fully
 * reproducible across platforms. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static const double TWO_PI = 6.283185307179586; /* M_PI is not in C99 */

/* Uniform on (0, 1]: never 0, so log() in Box-Muller stays finite. */
static double uniform_open0(uint64_t *state)
{
    return ((double)(splitmix64(state) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

/* noisy = clean + sigma * N(0, 1) on the first n samples of each row; the padding is left
 * for reflect_pad. Box-Muller turns two uniforms into two independent normals. */
void add_gaussian_noise(const float *clean, float *noisy, size_t n_rows, size_t n,
                        size_t stride, double sigma, uint64_t seed)
{
    uint64_t state = seed;
    double spare = 0.0;
    int have_spare = 0;
    for (size_t t = 0; t < n_rows; t++) {
        for (size_t i = 0; i < n; i++) {
            double z;
            if (have_spare) {
                z = spare;
                have_spare = 0;
            } else {
                double r = sqrt(-2.0 * log(uniform_open0(&state)));
                double phi = TWO_PI * uniform_open0(&state);
                z = r * cos(phi);
                spare = r * sin(phi);
                have_spare = 1;
            }
            noisy[t * stride + i] = (float)(clean[t * stride + i] + sigma * z);
        }
    }
}

/* Mean square of the first n samples of each row, in double to avoid float round-off. */
double mean_square(const float *x, size_t n_rows, size_t n, size_t stride)
{
    double sum = 0.0;
    for (size_t t = 0; t < n_rows; t++)
        for (size_t i = 0; i < n; i++)
            sum += (double)x[t * stride + i] * x[t * stride + i];
    return sum / ((double)n_rows * (double)n);
}

/* SNR of `test` against `clean` in dB: signal power over the power of the difference,
 * over the real samples only (not the padding). */
double snr_db(const float *clean, const float *test, size_t n_rows, size_t n, size_t stride)
{
    double signal = 0.0, error = 0.0;
    for (size_t t = 0; t < n_rows; t++)
        for (size_t i = 0; i < n; i++) {
            double c = clean[t * stride + i], e = test[t * stride + i] - c;
            signal += c * c;
            error += e * e;
        }
    return 10.0 * log10(signal / error);
}

/* The p-th percentile (0..100) of |x| over the real samples; -1 if out of memory. */
double abs_percentile(const float *x, size_t n_rows, size_t n, size_t stride, double p)
{
    size_t count = n_rows * n;
    float *a = malloc(count * sizeof *a);
    if (!a)
        return -1.0;
    for (size_t t = 0; t < n_rows; t++)
        for (size_t i = 0; i < n; i++)
            a[t * n + i] = fabsf(x[t * stride + i]);
    qsort(a, count, sizeof *a, compare_float);
    double v = a[(size_t)(p / 100.0 * (double)(count - 1) + 0.5)];
    free(a);
    return v;
}

/* ---- PNG writing -------------------------------------------------------------------- */

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* A PNG chunk: length, type, data, and the CRC-32 of type and data. */
static int write_chunk(FILE *f, const char *type, const unsigned char *data, size_t len)
{
    unsigned char word[4];
    uLong crc = crc32(0L, (const Bytef *)type, 4);
    if (len)
        crc = crc32(crc, data, (uInt)len);
    put_be32(word, (uint32_t)len);
    if (fwrite(word, 1, 4, f) != 4 || fwrite(type, 1, 4, f) != 4 ||
        (len && fwrite(data, 1, len, f) != len))
        return -1;
    put_be32(word, (uint32_t)crc);
    return fwrite(word, 1, 4, f) == 4 ? 0 : -1;
}

/* Writes an 8-bit grayscale PNG. Each scanline uses the Sub filter (difference from the
 * pixel to its left): neighbouring traces are similar, so the differences are small and
 * deflate compresses them better than raw values. Returns 0 on success. */
static int write_png_gray(const char *path, const unsigned char *pixels, uint32_t width,
                          uint32_t height)
{
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    size_t row_bytes = 1 + (size_t)width; /* filter-type byte + pixels */
    size_t raw_len = row_bytes * height;
    uLongf packed_len = compressBound((uLong)raw_len);
    unsigned char *raw = malloc(raw_len), *packed = malloc(packed_len);
    int rc = -1;
    FILE *f = NULL;

    if (!raw || !packed)
        goto done;
    for (uint32_t y = 0; y < height; y++) {
        const unsigned char *src = pixels + (size_t)y * width;
        unsigned char *dst = raw + (size_t)y * row_bytes;
        dst[0] = 1; /* filter type 1: Sub */
        for (uint32_t x = 0; x < width; x++)
            dst[1 + x] = (unsigned char)(src[x] - (x ? src[x - 1] : 0));
    }
    if (compress2(packed, &packed_len, raw, (uLong)raw_len, Z_BEST_COMPRESSION) != Z_OK)
        goto done;

    unsigned char ihdr[13];
    put_be32(ihdr, width);
    put_be32(ihdr + 4, height);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 0;  /* colour type: grayscale */
    ihdr[10] = 0; /* compression: deflate */
    ihdr[11] = 0; /* filter method: adaptive (per-scanline filter types) */
    ihdr[12] = 0; /* no interlace */

    f = fopen(path, "wb");
    if (!f || fwrite(signature, 1, 8, f) != 8 || write_chunk(f, "IHDR", ihdr, 13) ||
        write_chunk(f, "IDAT", packed, packed_len) || write_chunk(f, "IEND", NULL, 0))
        goto done;
    rc = 0;

done:
    if (f && fclose(f) != 0)
        rc = -1;
    free(raw);
    free(packed);
    return rc;
}

/* Renders a section as an image: one column per trace, time increasing downwards.
 * Amplitudes map linearly to gray with +clip black, 0 mid-gray and -clip white (peaks
 * dark, as in variable-area displays); values beyond +-clip saturate. The same clip for
 * every image keeps their gray levels comparable. */
int write_section_png(const char *dir, const char *name, const float *x, size_t n_traces,
                      size_t n, size_t stride, double clip)
{
    char path[4096];
    size_t dlen = strlen(dir);
    const char *sep = (dlen && dir[dlen - 1] == '/') ? "" : "/";
    if ((size_t)snprintf(path, sizeof path, "%s%s%s", dir, sep, name) >= sizeof path) {
        fprintf(stderr, "error: output path too long\n");
        return -1;
    }
    unsigned char *pixels = malloc(n_traces * n);
    if (!pixels) {
        fprintf(stderr, "error: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t t = 0; t < n_traces; t++) {
            double v = x[t * stride + i] / clip;
            v = v > 1.0 ? 1.0 : v < -1.0 ? -1.0 : v;
            pixels[i * n_traces + t] = (unsigned char)lround(127.5 - 127.5 * v);
        }
    int rc = write_png_gray(path, pixels, (uint32_t)n_traces, (uint32_t)n);
    free(pixels);
    if (rc)
        fprintf(stderr, "error: cannot write %s\n", path);
    else
        printf("  %s\n", path);
    return rc;
}

/* Writes the sections (trace after trace, n samples each, little-endian float32 on the
 * machines seisgpu supports) to OUTDIR/sections.f32 and their description to
 * OUTDIR/sections.txt, one "key value" per line. */
static int write_sections_raw(const char *dir, const float *const *sections, size_t count,
                              size_t n_traces, size_t n, size_t stride, double dt_s,
                              double clip, double snr_noisy, double snr_denoised,
                              const char *backend)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/sections.f32", dir);
    FILE *f = fopen(path, "wb");
    int ok = f != NULL;
    for (size_t k = 0; ok && k < count; k++)
        for (size_t t = 0; ok && t < n_traces; t++)
            ok = fwrite(sections[k] + t * stride, sizeof(float), n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    snprintf(path, sizeof path, "%s/sections.txt", dir);
    f = ok ? fopen(path, "w") : NULL;
    ok = f != NULL;
    if (ok) {
        fprintf(f, "n_traces %zu\nn_samples %zu\ndt_s %.9g\nclip %.9g\n", n_traces, n, dt_s,
                clip);
        fprintf(f, "snr_noisy_db %.4f\nsnr_denoised_db %.4f\nbackend %s\n", snr_noisy,
                snr_denoised, backend);
        ok = fclose(f) == 0;
    }
    if (!ok)
        fprintf(stderr, "error: cannot write the raw sections into %s\n", dir);
    return ok ? 0 : -1;
}

/* mkdir -p: creates `path` and any missing parents. Returns 0 if it exists afterwards. */
static int make_directories(const char *path)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf)
        return -1;
    strcpy(buf, path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
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

/* ---- Main --------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int exit_code = 1;
    section sec = {0};
    float *noisy = NULL, *denoised = NULL, *scratch = NULL, *removed = NULL;
    sg_context *ctx = NULL;
    sg_dwt_plan *plan = NULL;
    char *description = NULL;

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
    printf("seisgpu %s: wavelet denoising demo\n\n", sg_version());

    /* -- Input ------------------------------------------------------------------------ */
    if (read_segy(segy_path, &sec))
        goto done;
    const size_t n_traces = sec.n_traces, n = sec.n_samples, stride = sec.stride;
    printf("input:    %s\n", segy_path);
    if (sec.first_card[0])
        printf("          \"%s\"\n", sec.first_card);
    printf("          SEG-Y rev %d, format %d (%s), %zu traces x %zu samples, dt %g ms\n",
           sec.revision_major, sec.format,
           sec.format == 1 ? "IBM float" : sec.format == 3 ? "16-bit integer" : "IEEE float",
           n_traces, n, sec.dt_ms);
    if (stride > 2 * n - 1) {
        fprintf(stderr, "error: %zu samples is too short to reflect-pad to %zu\n", n, stride);
        goto done;
    }
    printf("          padded to %zu samples per trace (even reflection) for the DWT\n\n",
           stride);

    /* -- Backend ---------------------------------------------------------------------- */
    int32_t backend = 0;
    size_t needed = 0;
    if (failed(sg_context_create(SG_BACKEND_AUTO, 0, &ctx), "sg_context_create") ||
        failed(sg_context_backend(ctx, &backend), "sg_context_backend"))
        goto done;
    /* Size query first: SG_ERR_BUFFER_TOO_SMALL is expected and fills `needed`. */
    sg_status s = sg_context_describe(ctx, NULL, 0, &needed);
    if (s != SG_ERR_BUFFER_TOO_SMALL && failed(s, "sg_context_describe"))
        goto done;
    description = malloc(needed);
    if (!description) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    if (failed(sg_context_describe(ctx, description, needed, NULL), "sg_context_describe"))
        goto done;
    printf("backend:  %s\n          ", backend == SG_BACKEND_CUDA ? "CUDA (GPU)" : "CPU");
    for (const char *c = description; *c; c++) { /* indent the description's lines */
        putchar(*c);
        if (*c == '\n')
            fputs("          ", stdout);
    }
    printf("\n\n");

    /* -- Noise ------------------------------------------------------------------------ */
    size_t total = n_traces * stride;
    noisy = calloc(total, sizeof(float));
    denoised = calloc(total, sizeof(float));
    scratch = calloc(total, sizeof(float));
    removed = calloc(total, sizeof(float));
    if (!noisy || !denoised || !scratch || !removed) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    double signal_rms = sqrt(mean_square(sec.samples, n_traces, n, stride));
    double sigma = signal_rms * pow(10.0, -NOISE_SNR_DB / 20.0);
    add_gaussian_noise(sec.samples, noisy, n_traces, n, stride, sigma, NOISE_SEED);
    reflect_pad(noisy, n_traces, n, stride);
    double snr_noisy = snr_db(sec.samples, noisy, n_traces, n, stride);
    printf("noise:    Gaussian, sigma %.1f = section RMS %.1f at %.1f dB SNR (seed %u)\n\n",
           sigma, signal_rms, NOISE_SNR_DB, NOISE_SEED);

    /* -- Denoising -------------------------------------------------------------------- */
    unsigned levels = log2_exact(stride); /* n_levels = 0 in the options: all levels */
    if (failed(sg_dwt_plan_create(ctx, SG_WAVELET_DAUBECHIES, WAVELET_MEMBER, stride, &plan),
               "sg_dwt_plan_create"))
        goto done;

    /* Detail level j holds roughly the band [f_N / 2^j, f_N / 2^(j-1)], f_N the Nyquist
     * frequency. Levels whose band starts at or above SIGNAL_MAX_HZ hold noise only. */
    double nyquist_hz = 500.0 / sec.dt_ms;
    uint64_t noise_levels = 0;
    unsigned n_noise_levels = 0;
    while (n_noise_levels < levels &&
           ldexp(nyquist_hz, -(int)n_noise_levels - 1) >= SIGNAL_MAX_HZ)
        noise_levels |= (uint64_t)1 << n_noise_levels++;
    if (n_noise_levels == 0) { /* coarse sampling: still shrink the finest level */
        noise_levels = 1;
        n_noise_levels = 1;
    }
    char band_label[96];
    if (n_noise_levels == 1)
        snprintf(band_label, sizeof band_label, "default, level 1 only (%.1f-%.1f Hz)",
                 nyquist_hz / 2.0, nyquist_hz);
    else
        snprintf(band_label, sizeof band_label, "default, levels 1-%u only (%.1f-%.1f Hz)",
                 n_noise_levels, ldexp(nyquist_hz, -(int)n_noise_levels), nyquist_hz);

    /* Three settings, the last one used for the images and the pass/fail test:
     *  - the library default: soft universal threshold, sigma from the finest level, on
     *    every level. On band-limited seismic data at moderate SNR it removes reflections
     *    along with noise: inside the seismic band the signal's coefficients are only
     *    1.5-3.5 sigma, below the universal threshold sigma * sqrt(2 ln n) (3.9 sigma here);
     *  - the same with sigma estimated per level, meant for coloured noise; inside the
     *    band the "noise" estimate then includes the signal, so it removes even more;
     *  - the default restricted to the levels above the seismic band (level_mask): the
     *    noise there goes, the reflections stay. */
    denoise_run runs[3] = {
        {"default (soft, universal, sigma finest), all levels",
         sg_dwt_denoise_options_default(), 0, 0, 0},
        {"sigma per level, all levels", sg_dwt_denoise_options_default(), 0, 0, 0},
        {band_label, sg_dwt_denoise_options_default(), 0, 0, 0},
    };
    runs[1].options.noise_estimate = SG_NOISE_PER_LEVEL;
    runs[2].options.level_mask = noise_levels;
    const size_t n_runs = sizeof runs / sizeof runs[0];
    denoise_run *chosen = &runs[n_runs - 1];

    /* Throughput counts the padded f32 input, which is what the library processes. */
    double megabytes = (double)total * sizeof(float) / 1e6;
    printf("denoise:  GSL daubechies %d, %u levels, %zu traces x %zu samples per call "
           "(%.2f MB),\n          median of %d runs after a warm-up\n",
           WAVELET_MEMBER, levels, n_traces, stride, megabytes, TIMED_RUNS);
    printf("  %-52s %8s %8s %10s %8s\n", "thresholding", "ms", "MB/s", "sigma est", "SNR dB");
    for (size_t r = 0; r < n_runs; r++) {
        /* The chosen run writes the `denoised` section for the images; others, scratch. */
        float *dst = &runs[r] == chosen ? denoised : scratch;
        if (run_denoise(plan, &runs[r], noisy, dst, n_traces, stride, levels))
            goto done;
        runs[r].snr_db = snr_db(sec.samples, dst, n_traces, n, stride);
        printf("%c %-52s %8.2f %8.1f %10.1f %8.2f\n", &runs[r] == chosen ? '*' : ' ',
               runs[r].label, runs[r].median_ms, megabytes / (runs[r].median_ms * 1e-3),
               runs[r].sigma_estimate, runs[r].snr_db);
    }
    printf("  (true noise sigma %.1f; * = used for the images)\n\n", sigma);

    double gain = chosen->snr_db - snr_noisy;
    printf("SNR:      noisy %.2f dB -> denoised %.2f dB (%+.2f dB)\n\n", snr_noisy,
           chosen->snr_db, gain);

    /* -- Images ----------------------------------------------------------------------- */
    for (size_t i = 0; i < total; i++)
        removed[i] = noisy[i] - denoised[i];
    double clip = abs_percentile(sec.samples, n_traces, n, stride, CLIP_PERCENTILE);
    if (clip <= 0.0) {
        fprintf(stderr, "error: cannot choose a display clip (out of memory or a silent "
                        "section)\n");
        goto done;
    }
    if (make_directories(out_dir)) {
        fprintf(stderr, "error: cannot create directory %s: %s\n", out_dir, strerror(errno));
        goto done;
    }
    printf("images:   %zu x %zu, gray clipped at +-%.0f (%.0fth percentile of |clean|), "
           "peaks black\n", n_traces, n, clip, CLIP_PERCENTILE);
    if (write_section_png(out_dir, "clean.png", sec.samples, n_traces, n, stride, clip) ||
        write_section_png(out_dir, "noisy.png", noisy, n_traces, n, stride, clip) ||
        write_section_png(out_dir, "denoised.png", denoised, n_traces, n, stride, clip) ||
        write_section_png(out_dir, "removed_noise.png", removed, n_traces, n, stride, clip))
        goto done;
    const float *sections[4] = {sec.samples, noisy, denoised, removed};
    if (write_sections_raw(out_dir, sections, 4, n_traces, n, stride, sec.dt_ms * 1e-3, clip,
                           snr_noisy, chosen->snr_db,
                           backend == SG_BACKEND_CUDA ? "CUDA (GPU)" : "CPU"))
        goto done;

    if (!(gain > 0.0)) {
        fprintf(stderr, "error: denoising did not improve the SNR (%+.2f dB)\n", gain);
        goto done;
    }

    /* -- Wave packets (demo_wavepackets.c) -------------------------------------------- */
    if (demo_wavepackets(ctx, &sec, noisy, sigma, cube_path, out_dir))
        goto done;
    exit_code = 0;

done:
    sg_dwt_plan_destroy(plan);
    sg_context_destroy(ctx);
    free(description);
    free(removed);
    free(scratch);
    free(denoised);
    free(noisy);
    free(sec.samples);
    return exit_code;
}
