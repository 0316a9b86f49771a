/* See xcorr_input.h. */
#define _POSIX_C_SOURCE 200809L
#include "xcorr_input.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow(station_list *s, size_t cap) {
    void *n = realloc(s->name, cap * sizeof *s->name);
    if (n) s->name = n;
    void *p = realloc(s->path, cap * sizeof *s->path);
    if (p) s->path = p;
    void *o = realloc(s->offset, cap * sizeof *s->offset);
    if (o) s->offset = o;
    return n && p && o ? 0 : -1;
}

/* `file` relative to the folder of `list`, unless absolute. */
static char *beside(const char *list, const char *file) {
    const char *slash = strrchr(list, '/');
    size_t dir = (file[0] == '/' || !slash) ? 0 : (size_t)(slash - list) + 1;
    char *out = malloc(dir + strlen(file) + 1);
    if (!out) return NULL;
    memcpy(out, list, dir);
    strcpy(out + dir, file);
    return out;
}

int stations_from_list(const char *path, station_list *out, failure *f) {
    memset(out, 0, sizeof *out);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fail(f, "station list %s: %s", path, strerror(errno));
        return -1;
    }
    char line[4096], name[256], file[2048];
    size_t cap = 0, lineno = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        unsigned long long offset = 0;
        int got = sscanf(line, "%255s %2047s %llu", name, file, &offset);
        if (got <= 0) continue;
        if (got < 2 || strlen(name) >= XCORR_NAME_BYTES) {
            fail(f, "station list %s, line %zu: expected `NAME PATH [OFFSET]` (names < %d bytes)",
                 path, lineno, XCORR_NAME_BYTES);
            break;
        }
        if (out->n == cap && grow(out, cap = cap ? 2 * cap : 64)) {
            fail(f, "station list %s: out of memory", path);
            break;
        }
        memset(out->name[out->n], 0, XCORR_NAME_BYTES);
        strcpy(out->name[out->n], name);
        out->path[out->n] = beside(path, file);
        out->offset[out->n] = (size_t)offset;
        out->n++;
    }
    fclose(fp);
    if (!f->text[0] && out->n == 0) fail(f, "station list %s: no stations", path);
    return f->text[0] ? -1 : 0;
}

int stations_synthetic(size_t n, station_list *out) {
    memset(out, 0, sizeof *out);
    if (grow(out, n ? n : 1)) return -1;
    for (size_t s = 0; s < n; s++) {
        memset(out->name[s], 0, XCORR_NAME_BYTES);
        snprintf(out->name[s], XCORR_NAME_BYTES, "S%05zu", s);
        out->path[s] = NULL;
        out->offset[s] = 0;
    }
    out->n = n;
    return 0;
}

void stations_free(station_list *s) {
    for (size_t i = 0; s->path && i < s->n; i++) free(s->path[i]);
    free(s->name);
    free(s->path);
    free(s->offset);
    memset(s, 0, sizeof *s);
}

/* xorshift64*; roughly Gaussian values from four uniforms (cheap, and the same on every
 * rank). */
static double noise(uint64_t *x) {
    double sum = 0.0;
    for (int k = 0; k < 4; k++) {
        *x ^= *x >> 12;
        *x ^= *x << 25;
        *x ^= *x >> 27;
        sum += (double)((*x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
    }
    return (sum - 2.0) * 1.7320508075688772;
}

enum { MAX_DELAY = 41 };

static void synthetic_day(size_t s, size_t n, const double *field, float *out) {
    uint64_t x = (uint64_t)(s + 1) * 0x9E3779B97F4A7C15ULL | 1;
    size_t delay = (13 * s) % MAX_DELAY;
    for (size_t t = 0; t < n; t++) {
        double v = field[t + MAX_DELAY - delay] + 0.5 * noise(&x);
        out[t] = (float)(1000.0 * v + 50.0 + 0.01 * (double)t);
    }
}

static int read_day(const station_list *s, size_t st, size_t n, float *out, failure *f) {
    FILE *fp = fopen(s->path[st], "rb");
    if (!fp) {
        fail(f, "station %s: %s: %s", s->name[st], s->path[st], strerror(errno));
        return -1;
    }
    size_t got = 0;
    if (fseek(fp, (long)(s->offset[st] * sizeof(float)), SEEK_SET) == 0)
        got = fread(out, sizeof(float), n, fp);
    fclose(fp);
    if (got != n) {
        fail(f, "station %s: %s holds %zu of the %zu samples from value %zu", s->name[st],
             s->path[st], got, n, s->offset[st]);
        return -1;
    }
    return 0;
}

int load_days(const station_list *s, const size_t *which, size_t count, size_t n_samples,
              float *out, failure *f) {
    double *field = NULL;
    if (s->path[0] == NULL) {
        field = malloc((n_samples + MAX_DELAY) * sizeof *field);
        if (!field) {
            fail(f, "out of memory for the synthetic noise field");
            return -1;
        }
        uint64_t x = 1;
        for (size_t t = 0; t < n_samples + MAX_DELAY; t++) field[t] = noise(&x);
    }
    for (size_t k = 0; k < count; k++) {
        float *day = out + k * n_samples;
        if (field)
            synthetic_day(which[k], n_samples, field, day);
        else if (read_day(s, which[k], n_samples, day, f))
            break;
    }
    free(field);
    return f->text[0] ? -1 : 0;
}
