/* Station-days for xcorr_network: from a station list (each line `NAME PATH [OFFSET]`: a
 * raw little-endian float32 day of n_samples values at OFFSET values into PATH, relative
 * paths from the list's folder; `#` starts a comment), or synthetic (one noise field
 * reaching station s (13·s mod 41) samples late, plus local noise, in counts). */
#ifndef SEISGPU_XCORR_INPUT_H
#define SEISGPU_XCORR_INPUT_H

#include <stddef.h>

#include "mpi_common.h"
#include "xcorr_file.h"

typedef struct {
    size_t n;
    char (*name)[XCORR_NAME_BYTES];
    char **path;      /* NULL for synthetic stations */
    size_t *offset;   /* values into path */
} station_list;

/* The list in `path`; 0 on success, else -1 with the reason in `f`. */
int stations_from_list(const char *path, station_list *out, failure *f);

/* n synthetic stations named S00000, S00001, … */
int stations_synthetic(size_t n, station_list *out);

void stations_free(station_list *s);

/* The days of stations `which[0..count)` into out (count × n_samples, station-major): read
 * from their files (only those), or made. 0 on success, else -1 with the reason in `f`. */
int load_days(const station_list *s, const size_t *which, size_t count, size_t n_samples,
              float *out, failure *f);

#endif
