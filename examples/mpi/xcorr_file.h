/* The file xcorr_network writes (one per run, every rank writing its own pairs with MPI-IO),
 * read by xcorr_read.c. Little-endian throughout.
 *
 *   offset 0                header (512 bytes, below)
 *   station_offset          n_stations names, 32 bytes each, NUL-padded
 *   index_offset            n_pairs records {uint32 i, j, n_windows, reserved}: pair p is
 *                           stations (i, j), i < j (i <= j with autocorrelation), in the
 *                           order p = i*n - i*(i+1)/2 + (j - i - 1) (with autocorrelation
 *                           p = i*n - i*(i-1)/2 + (j - i)); n_windows 0: the stack is zeros
 *   stacks_offset           n_pairs stacks of n_lags float32; element k is lag
 *                           (k - (n_lags - 1)/2) / sampling_rate seconds, positive lags
 *                           station j later than station i
 *   substack_index_offset   n_groups * n_pairs uint32 window counts, group-major
 *   substacks_offset        n_groups * n_pairs * n_lags float32: group g's stack of pair p
 *                           at row g * n_pairs + p (0 and 0 when n_groups is 0)
 *
 * `complete` is 0 while the ranks write and set to 1 by rank 0 once every rank's part is
 * in, before the file gets its final name (it is written as "<name>.partial"): a reader
 * refuses a file whose flag is 0. */
#ifndef SEISGPU_XCORR_FILE_H
#define SEISGPU_XCORR_FILE_H

#include <stdint.h>

#define XCORR_FILE_MAGIC "SGXCORR"
#define XCORR_FILE_VERSION 1u
#define XCORR_HEADER_BYTES 512
#define XCORR_NAME_BYTES 32

typedef struct {
    char magic[8];            /* "SGXCORR" and a NUL */
    uint32_t version;         /* 1 */
    uint32_t complete;        /* 1 once every rank's part is written */
    uint64_t n_stations;
    uint64_t n_pairs;
    uint64_t n_lags;
    uint64_t n_groups;        /* substacks per pair (0: none) */
    uint64_t station_offset;  /* bytes from the start of the file */
    uint64_t index_offset;
    uint64_t stacks_offset;
    uint64_t substack_index_offset;
    uint64_t substacks_offset;
    uint64_t n_samples;       /* per station-day */
    double sampling_rate;     /* Hz */
    double maxlag;            /* s */
    double cc_len, step;      /* s */
    double freqmin, freqmax;  /* Hz */
    double substack_len;      /* s (0: no substacks) */
    int32_t cc_method;        /* SG_XCORR_CC_* */
    int32_t stack_method;     /* SG_XCORR_STACK_* */
    int32_t time_norm;        /* SG_XCORR_TIME_NORM_* */
    int32_t freq_norm;        /* SG_XCORR_FREQ_NORM_* */
    int32_t autocorrelation;  /* 1: pairs i <= j */
    int32_t reserved0;        /* 0 */
    char reserved[XCORR_HEADER_BYTES - 8 - 8 - 10 * 8 - 7 * 8 - 6 * 4];
} xcorr_file_header;

_Static_assert(sizeof(xcorr_file_header) == XCORR_HEADER_BYTES, "512-byte header");

/* Byte offset of the `complete` flag (rank 0 writes it last). */
#define XCORR_COMPLETE_OFFSET 12

/* Pair index record. */
typedef struct {
    uint32_t i, j, n_windows, reserved;
} xcorr_file_pair;

/* The index of pair (i, j) of n stations in the file's order. */
static inline uint64_t xcorr_pair_index(uint64_t i, uint64_t j, uint64_t n, int autocorrelation) {
    /* (i - 1) wraps for i = 0, where it is multiplied by 0 */
    return autocorrelation ? i * n - i * (i - 1) / 2 + (j - i)
                           : i * n - i * (i + 1) / 2 + (j - i - 1);
}

#endif
