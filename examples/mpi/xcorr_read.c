/* xcorr_read: reads a file of xcorr_network (layout: xcorr_file.h) — refuses one that is
 * not complete — checks its pair index, and prints its header and, per pair, the window
 * count and the lag and value of the stack's peak (or one pair's stack with --pair I J).
 *
 *   xcorr_read day.xc [--pair I J] [--max N]
 *
 * Exit status 0 when the file is complete and consistent, 1 otherwise. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xcorr_file.h"

static int bad(const char *path, const char *why) {
    fprintf(stderr, "xcorr_read: %s: %s\n", path, why);
    return 1;
}

static int read_at(FILE *fp, uint64_t offset, void *dst, size_t bytes) {
    return fseek(fp, (long)offset, SEEK_SET) == 0 && fread(dst, 1, bytes, fp) == bytes ? 0 : -1;
}

/* Every record names the pair its position says, in the file's order. */
static int check_index(const xcorr_file_header *h, const xcorr_file_pair *rec) {
    uint64_t p = 0;
    for (uint64_t i = 0; i < h->n_stations; i++)
        for (uint64_t j = i + (h->autocorrelation ? 0 : 1); j < h->n_stations; j++, p++)
            if (rec[p].i != i || rec[p].j != j || xcorr_pair_index(i, j, h->n_stations, h->autocorrelation) != p)
                return -1;
    return p == h->n_pairs ? 0 : -1;
}

static void print_pair(const xcorr_file_header *h, const xcorr_file_pair *r, const float *s,
                       const char (*names)[XCORR_NAME_BYTES]) {
    uint64_t k = 0;
    for (uint64_t t = 1; t < h->n_lags; t++)
        if (fabsf(s[t]) > fabsf(s[k])) k = t;
    double lag = ((double)k - (double)(h->n_lags - 1) / 2) / h->sampling_rate;
    printf("%-10s %-10s windows %5u  peak %+.4e at %+8.2f s\n", names[r->i], names[r->j],
           r->n_windows, s[k], lag);
}

int main(int argc, char **argv) {
    if (argc < 2) return bad("(none)", "usage: xcorr_read FILE [--pair I J] [--max N]");
    const char *path = argv[1];
    long pi = -1, pj = -1, max = 10;
    for (int a = 2; a < argc; a++) {
        if (!strcmp(argv[a], "--pair") && a + 2 < argc) {
            pi = atol(argv[++a]);
            pj = atol(argv[++a]);
        } else if (!strcmp(argv[a], "--max") && a + 1 < argc) {
            max = atol(argv[++a]);
        } else {
            return bad(path, "usage: xcorr_read FILE [--pair I J] [--max N]");
        }
    }
    FILE *fp = fopen(path, "rb");
    if (!fp) return bad(path, "cannot open");
    xcorr_file_header h;
    if (read_at(fp, 0, &h, sizeof h)) return bad(path, "shorter than a header");
    if (memcmp(h.magic, XCORR_FILE_MAGIC, sizeof XCORR_FILE_MAGIC) || h.version != XCORR_FILE_VERSION)
        return bad(path, "not a version-1 xcorr_network file");
    if (h.complete != 1) return bad(path, "incomplete (its writers did not all finish)");
    char (*names)[XCORR_NAME_BYTES] = malloc(h.n_stations * XCORR_NAME_BYTES);
    xcorr_file_pair *rec = malloc(h.n_pairs * sizeof *rec);
    float *s = malloc(h.n_lags * sizeof *s);
    if (!names || !rec || !s) return bad(path, "out of memory");
    if (read_at(fp, h.station_offset, names, h.n_stations * XCORR_NAME_BYTES) ||
        read_at(fp, h.index_offset, rec, h.n_pairs * sizeof *rec))
        return bad(path, "truncated");
    if (check_index(&h, rec)) return bad(path, "its pair index is not in the documented order");
    printf("%s: %llu stations, %llu pairs x %llu lags (maxlag %g s at %g Hz), %llu substack "
           "groups; cc_method %d, stack %d\n",
           path, (unsigned long long)h.n_stations, (unsigned long long)h.n_pairs,
           (unsigned long long)h.n_lags, h.maxlag, h.sampling_rate,
           (unsigned long long)h.n_groups, h.cc_method, h.stack_method);
    for (uint64_t p = 0; p < h.n_pairs; p++) {
        int want = pi < 0 ? (long)p < max : (rec[p].i == (uint64_t)pi && rec[p].j == (uint64_t)pj);
        if (!want) continue;
        if (read_at(fp, h.stacks_offset + 4 * p * h.n_lags, s, 4 * h.n_lags)) return bad(path, "truncated");
        print_pair(&h, &rec[p], s, (const char (*)[XCORR_NAME_BYTES])names);
        for (uint64_t t = 0; pi >= 0 && t < h.n_lags; t++)
            printf("%+9.2f %+.6e\n", ((double)t - (double)(h.n_lags - 1) / 2) / h.sampling_rate, s[t]);
    }
    free(names);
    free(rec);
    free(s);
    fclose(fp);
    return 0;
}
