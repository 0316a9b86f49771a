/* demo_segy.c: the demo's SEG-Y reader: fixed-length traces in IBM float, 16-bit integer or
 * IEEE float, with the few trace-header fields the figures need. */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

static size_t next_power_of_two(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

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


/* What the log and the figures need from the headers: the first card of the text header
 * when it is ASCII ('C' is 0xC3 in EBCDIC, which we do not translate), and of the first and
 * the last trace the delay (bytes 109-110, ms) and the inline and crossline numbers (bytes
 * 189-196, SEG-Y rev 1). */
static void note_headers(const unsigned char *file, size_t data_start, size_t trace_bytes,
                         section *out)
{
    out->first_card[0] = '\0';
    if (file[0] == 'C') {
        size_t n = 80;
        memcpy(out->first_card, file, n);
        while (n > 0 && (out->first_card[n - 1] == ' ' || out->first_card[n - 1] == '\0'))
            n--;
        out->first_card[n] = '\0';
    }
    const unsigned char *first = file + data_start;
    const unsigned char *last = first + (out->n_traces - 1) * trace_bytes;
    out->delay_ms = be16s(first + 108);
    out->first_inline = (int32_t)be32(first + 188);
    out->first_crossline = (int32_t)be32(first + 192);
    out->last_inline = (int32_t)be32(last + 188);
    out->last_crossline = (int32_t)be32(last + 192);
}

/* The samples of every trace (the first at `first`, traces `trace_bytes` apart) into
 * out->samples, in the file's format: 1 IBM float, 3 16-bit integer, 5 IEEE float. */
static void decode_traces(const unsigned char *first, size_t trace_bytes, int format,
                          section *out)
{
    size_t sample_bytes = format == 3 ? 2 : 4;
    for (size_t t = 0; t < out->n_traces; t++) {
        const unsigned char *p = first + t * trace_bytes;
        float *row = out->samples + t * out->stride;
        for (size_t i = 0; i < out->n_samples; i++, p += sample_bytes)
            row[i] = format == 1 ? ibm_to_float(be32(p))
                     : format == 3 ? (float)be16s(p)
                                   : ieee_to_float(be32(p));
    }
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

    note_headers(file, data_start, trace_bytes, out);
    out->samples = calloc(out->n_traces * out->stride, sizeof(float));
    if (!out->samples) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    decode_traces(file + data_start + TRACE_HEADER_BYTES, trace_bytes, format, out);
    rc = 0;

done:
    free(file);
    fclose(f);
    return rc;
}
