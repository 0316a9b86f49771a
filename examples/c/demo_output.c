/* demo_output.c: what the demo writes: quick-look grayscale PNGs (no plotting library
 * needed), and the raw float32 arrays with a JSON description that
 * examples/python/plot_*.py draw the figures from. */

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "demo.h"

/* OUTDIR/NAME into `path`; -1 if it does not fit. */
static int out_path(char *path, size_t size, const char *dir, const char *name)
{
    size_t dlen = strlen(dir);
    const char *sep = (dlen && dir[dlen - 1] == '/') ? "" : "/";
    if ((size_t)snprintf(path, size, "%s%s%s", dir, sep, name) >= size) {
        fprintf(stderr, "error: output path too long: %s%s%s\n", dir, sep, name);
        return -1;
    }
    return 0;
}

/* ---- PNG ------------------------------------------------------------------------------ */

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
    if (out_path(path, sizeof path, dir, name))
        return -1;
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

/* ---- Raw arrays ------------------------------------------------------------------------ */

/* A JSON string; the demo's own labels hold no control characters. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* A number, or null for NaN (JSON has no NaN). */
static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

static int write_raw_json(FILE *f, const char *name, const raw_grid *g,
                          const raw_array *arrays, size_t count, double clip,
                          const char *backend)
{
    fputs("{\n  \"title\": ", f);
    json_string(f, g->title);
    fputs(",\n  \"backend\": ", f);
    json_string(f, backend);
    fprintf(f, ",\n  \"file\": \"%s.f32\",\n  \"dtype\": \"<f4\",\n  \"shape\": [", name);
    for (size_t a = 0; a < g->dim; a++)
        fprintf(f, "%s%zu", a ? ", " : "", g->shape[a]);
    fputs("],\n  \"axes\": [", f);
    for (size_t a = 0; a < g->dim; a++) {
        fputs(a ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        json_string(f, g->axis[a]);
        fputs(", \"unit\": ", f);
        json_string(f, g->unit[a]);
        fputs(", \"first\": ", f);
        json_number(f, g->first[a]);
        fputs(", \"step\": ", f);
        json_number(f, g->step[a]);
        fputc('}', f);
    }
    fputs("\n  ],\n  \"clip\": ", f);
    json_number(f, clip);
    fputs(",\n  \"arrays\": [", f);
    for (size_t k = 0; k < count; k++) {
        fputs(k ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        json_string(f, arrays[k].name);
        fputs(", \"label\": ", f);
        json_string(f, arrays[k].label);
        fputs(", \"snr_db\": ", f);
        json_number(f, arrays[k].snr_db);
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
    return ferror(f) ? -1 : 0;
}

/* OUTDIR/NAME.f32: the arrays one after another, each in the grid's shape (slowest axis
 * first, little-endian float32 on the machines seisgpu supports); OUTDIR/NAME.json: the
 * grid, the arrays' names, labels and SNRs, the display clip and the backend. */
int write_raw(const char *dir, const char *name, const raw_grid *g, const raw_array *arrays,
              size_t count, double clip, const char *backend)
{
    char file[256], path[4096];
    size_t rows = 1, n = g->shape[g->dim - 1];
    for (size_t a = 0; a + 1 < g->dim; a++)
        rows *= g->shape[a];
    snprintf(file, sizeof file, "%s.f32", name);
    if (out_path(path, sizeof path, dir, file))
        return -1;
    FILE *f = fopen(path, "wb");
    int ok = f != NULL;
    for (size_t k = 0; ok && k < count; k++)
        for (size_t r = 0; ok && r < rows; r++)
            ok = fwrite(arrays[k].data + r * g->row_stride, sizeof(float), n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    snprintf(file, sizeof file, "%s.json", name);
    f = ok && out_path(path, sizeof path, dir, file) == 0 ? fopen(path, "w") : NULL;
    ok = f != NULL && write_raw_json(f, name, g, arrays, count, clip, backend) == 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "error: cannot write %s.f32 / %s.json into %s\n", name, name, dir);
    return ok ? 0 : -1;
}

/* mkdir -p: creates `path` and any missing parents. Returns 0 if it exists afterwards. */
int make_directories(const char *path)
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
