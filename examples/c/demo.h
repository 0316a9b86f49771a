/* demo.h: what the two parts of the Penobscot demo share (demo_penobscot.c defines these;
 * demo_wavepackets.c uses them). */
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
    int format;           /* SEG-Y data sample format code                          */
    int revision_major;
    char first_card[81];  /* the first 80-column line of the text header, if ASCII  */
    float *samples;       /* n_traces traces, trace t at samples + t * stride        */
} section;

/* Prints the failing call with the library's explanation; nonzero on failure. */
int failed(sg_status status, const char *call);
double now_seconds(void);
/* Reads a SEG-Y file of fixed-length traces (formats 1, 3 and 5); traces at a stride of the
 * next power of two of their length, the tail zeroed. 0 on success. */
int read_segy(const char *path, section *out);
/* noisy = clean + sigma * N(0, 1), over the first n samples of each of n_rows rows. */
void add_gaussian_noise(const float *clean, float *noisy, size_t n_rows, size_t n,
                        size_t stride, double sigma, uint64_t seed);
double mean_square(const float *x, size_t n_rows, size_t n, size_t stride);
/* 10 log10(|clean|^2 / |test - clean|^2) over the first n samples of each row. */
double snr_db(const float *clean, const float *test, size_t n_rows, size_t n, size_t stride);
/* The p-th percentile (0..100) of |x|; -1 if out of memory. */
double abs_percentile(const float *x, size_t n_rows, size_t n, size_t stride, double p);
/* OUTDIR/NAME: a grayscale PNG of n_traces columns of n samples, +clip black, -clip white. */
int write_section_png(const char *dir, const char *name, const float *x, size_t n_traces,
                      size_t n, size_t stride, double clip);

/* The wave-packet step: a window of the section (clean and with the noise of `noisy`, of
 * standard deviation sigma) and the 3D cube at CUBE.sgy, denoised and compressed, with
 * before/after images into OUTDIR. 0 on success. */
int demo_wavepackets(sg_context *ctx, const section *sec, const float *noisy, double sigma,
                     const char *cube_path, const char *out_dir);

#endif
