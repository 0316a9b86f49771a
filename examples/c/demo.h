/* demo.h: what the parts of the demo share.
 *
 *   demo_penobscot.c   main: the section, its noise, the DWT step
 *   demo_fxdecon.c     the F-X step on the same noisy section
 *   demo_wavepackets.c the wave-packet step: a window of the section, and the F3 cube
 *   demo_segy.c        SEG-Y reading
 *   demo_signal.c      padding, noise, SNR and percentiles
 *   demo_output.c      quick-look PNGs, and the raw arrays the figure scripts plot */
#ifndef SEISGPU_DEMO_H
#define SEISGPU_DEMO_H

#include <stddef.h>
#include <stdint.h>

#include "seisgpu.h"

typedef struct {
    size_t n_traces;
    size_t n_samples;     /* samples per trace in the file                          */
    size_t stride;        /* elements from one trace to the next in `samples`       */
    double dt_ms;         /* sample interval                                        */
    double delay_ms;      /* time of the first sample (trace header bytes 109-110)  */
    int32_t first_inline, first_crossline; /* of the first trace (bytes 189, 193)   */
    int32_t last_inline, last_crossline;   /* of the last trace                     */
    int format;           /* SEG-Y data sample format code                          */
    int revision_major;
    char first_card[81];  /* the first 80-column line of the text header, if ASCII  */
    float *samples;       /* n_traces traces, trace t at samples + t * stride        */
} section;

/* One array of a raw output: its short name, the label a figure gives it, its samples
 * (in the grid's shape, rows `row_stride` apart) and its SNR against the clean data (NAN:
 * none). */
typedef struct {
    const char *name;
    const char *label;
    const float *data;
    double snr_db;
} raw_array;

/* The grid the arrays of a raw output share: `dim` axes, slowest first (the last one is
 * time), each with a name, a unit, its first value and its step; `row_stride` elements
 * from one fastest-axis row to the next in every array. */
typedef struct {
    const char *title;
    size_t dim;
    size_t shape[3];
    const char *axis[3];
    const char *unit[3];
    double first[3];
    double step[3];
    size_t row_stride;
} raw_grid;

/* Prints the failing call with the library's explanation; nonzero on failure. */
int failed(sg_status status, const char *call);
double now_seconds(void);
/* "CPU" or "CUDA (GPU)": the context's backend, for the logs and the figures. */
const char *backend_name(const sg_context *ctx);

/* Reads a SEG-Y file of fixed-length traces (formats 1, 3 and 5); traces at a stride of the
 * next power of two of their length, the tail zeroed. 0 on success. */
int read_segy(const char *path, section *out);

/* Extends the n samples of each row to `stride` by even reflection (stride <= 2n - 1). */
void reflect_pad(float *rows, size_t n_rows, size_t n, size_t stride);
/* noisy = clean + sigma * N(0, 1), over the first n samples of each of n_rows rows. */
void add_gaussian_noise(const float *clean, float *noisy, size_t n_rows, size_t n,
                        size_t stride, double sigma, uint64_t seed);
double mean_square(const float *x, size_t n_rows, size_t n, size_t stride);
/* 10 log10(|clean|^2 / |test - clean|^2) over the first n samples of each row. */
double snr_db(const float *clean, const float *test, size_t n_rows, size_t n, size_t stride);
/* The p-th percentile (0..100) of |x|; -1 if out of memory. */
double abs_percentile(const float *x, size_t n_rows, size_t n, size_t stride, double p);

/* mkdir -p. 0 if the folder exists afterwards. */
int make_directories(const char *path);
/* OUTDIR/NAME: a grayscale PNG of n_traces columns of n samples, +clip black, -clip white. */
int write_section_png(const char *dir, const char *name, const float *x, size_t n_traces,
                      size_t n, size_t stride, double clip);
/* OUTDIR/NAME.f32 (the arrays, float32) and OUTDIR/NAME.json (grid, labels, SNRs, clip,
 * backend), for examples/python/plot_*.py. 0 on success. */
int write_raw(const char *dir, const char *name, const raw_grid *grid, const raw_array *arrays,
              size_t count, double clip, const char *backend);

/* The F-X step: the noisy section (the DWT step's input, `stride` apart, n_samples each)
 * filtered by F-X prediction; writes the result into `filtered`, its SNR and a label of the
 * setting used, and prints the SNRs. 0 on success. */
int demo_fxdecon(sg_context *ctx, const section *sec, const float *noisy, float *filtered,
                 double *snr_filtered, const char **label);

/* The wave-packet step: a window of the section (clean and with the noise of `noisy`, of
 * standard deviation sigma) and the 3D cube at CUBE.sgy, denoised and compressed, with
 * before/after images and raw arrays into OUTDIR. 0 on success. */
int demo_wavepackets(sg_context *ctx, const section *sec, const float *noisy, double sigma,
                     const char *cube_path, const char *out_dir);

#endif
