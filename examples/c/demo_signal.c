/* demo_signal.c: what the demo does to the data around the library calls: padding traces to
 * a power of two, reproducible Gaussian noise, and the measures it reports (SNR, percentiles). */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "demo.h"

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The DWT needs a power-of-two length, so the n samples of each row are extended to
 * `stride` by even reflection: x[n-1+k] = x[n-1-k]. Unlike zero padding this keeps the
 * trace continuous at its end and gives the padding the same noise level as the data, so
 * the library's noise estimate (the median of the finest detail coefficients) is not
 * pulled down by runs of exact zeros (on this section zero padding gives an estimate of
 * 555 for a true sigma of 877; reflection gives 905). Requires stride <= 2n - 1. */
void reflect_pad(float *rows, size_t n_rows, size_t n, size_t stride)
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
