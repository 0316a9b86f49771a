/* The collective MPI-IO writes of xcorr_network (layout: xcorr_file.h). */
#ifndef SEISGPU_XCORR_WRITE_H
#define SEISGPU_XCORR_WRITE_H

#include <mpi.h>
#include <stdint.h>

#include "mpi_common.h"
#include "xcorr_file.h"

/* `count` consecutive rows of a section, from row `row` on, their data at `src`. */
typedef struct {
    uint64_t row;
    size_t count;
    const void *src;
} row_run;

/* Opens "<path>.partial" on every rank, sized for the header's sections; rank 0 writes
 * the header (complete = 0) and the station names. 0 on success. */
int xcorr_file_open(MPI_Comm comm, const char *path, const xcorr_file_header *h,
                    const char (*names)[XCORR_NAME_BYTES], MPI_File *fh, failure *f);

/* Every rank's runs of one section (rows of `row_elems` values of `elem`, from byte
 * `offset`), in one collective write. 0 on success. */
int write_rows(MPI_File fh, MPI_Offset offset, MPI_Datatype elem, size_t row_elems,
               row_run *runs, size_t n_runs, failure *f);

/* Marks the file complete (rank 0, after every rank's writes are synced), closes it and
 * gives it its final name; with `failed`, closes it and removes it instead. 0 on success. */
int xcorr_file_finish(MPI_Comm comm, const char *path, MPI_File *fh, int failed, failure *f);

#endif
