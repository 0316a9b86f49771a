/* See xcorr_write.h. */
#define _POSIX_C_SOURCE 200809L
#include "xcorr_write.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file's size: the end of its last section. */
static MPI_Offset file_size(const xcorr_file_header *h) {
    uint64_t end = h->stacks_offset + 4 * h->n_pairs * h->n_lags;
    if (h->n_groups)
        end = h->substacks_offset + 4 * h->n_groups * h->n_pairs * h->n_lags;
    return (MPI_Offset)end;
}

int xcorr_file_open(MPI_Comm comm, const char *path, const xcorr_file_header *h,
                    const char (*names)[XCORR_NAME_BYTES], MPI_File *fh, failure *f) {
    char partial[4096];
    partial_name(path, partial, sizeof partial);
    int rank, amode = MPI_MODE_CREATE | MPI_MODE_WRONLY;
    MPI_Comm_rank(comm, &rank);
    *fh = MPI_FILE_NULL;
    if (mpi_failed(MPI_File_open(comm, partial, amode, MPI_INFO_NULL, fh), f, partial)) {
        *fh = MPI_FILE_NULL;
        return -1;
    }
    if (mpi_failed(MPI_File_set_size(*fh, file_size(h)), f, "sizing the output")) return -1;
    if (rank != 0) return 0;
    MPI_Status st;
    int rc = MPI_File_write_at(*fh, 0, h, XCORR_HEADER_BYTES, MPI_BYTE, &st);
    if (mpi_failed(rc, f, "writing the header")) return -1;
    size_t bytes = h->n_stations * XCORR_NAME_BYTES;
    for (size_t at = 0; at < bytes; at += (size_t)INT_MAX / 2) {
        size_t n = bytes - at < (size_t)INT_MAX / 2 ? bytes - at : (size_t)INT_MAX / 2;
        rc = MPI_File_write_at(*fh, (MPI_Offset)(h->station_offset + at),
                               (const char *)names + at, (int)n, MPI_BYTE, &st);
        if (mpi_failed(rc, f, "writing the station names")) return -1;
    }
    return 0;
}

static int by_row(const void *x, const void *y) {
    const row_run *a = x, *b = y;
    return a->row < b->row ? -1 : (a->row > b->row);
}

int write_rows(MPI_File fh, MPI_Offset offset, MPI_Datatype elem, size_t row_elems,
               row_run *runs, size_t n_runs, failure *f) {
    int elem_bytes;
    MPI_Type_size(elem, &elem_bytes);
    size_t row_bytes = row_elems * (size_t)elem_bytes, rows = 0;
    qsort(runs, n_runs, sizeof *runs, by_row); /* a file view's blocks must ascend */
    for (size_t r = 0; r < n_runs; r++) rows += runs[r].count;
    int *lens = malloc((n_runs ? n_runs : 1) * sizeof *lens);
    MPI_Aint *at = malloc((n_runs ? n_runs : 1) * sizeof *at);
    char *buf = malloc(rows ? rows * row_bytes : 1);
    int ok = lens && at && buf && rows <= INT_MAX && row_elems <= INT_MAX;
    for (size_t r = 0, k = 0; ok && r < n_runs; k += runs[r].count, r++) {
        ok = runs[r].count <= INT_MAX;
        lens[r] = (int)runs[r].count;
        at[r] = (MPI_Aint)(runs[r].row * row_bytes);
        memcpy(buf + k * row_bytes, runs[r].src, runs[r].count * row_bytes);
    }
    if (!ok) fail(f, "out of memory, or more rows than one MPI write counts, packing %zu rows", rows);
    MPI_Datatype row, view;
    MPI_Type_contiguous((int)row_elems, elem, &row);
    MPI_Type_create_hindexed(ok ? (int)n_runs : 0, lens, at, row, &view);
    MPI_Type_commit(&row);
    MPI_Type_commit(&view);
    /* Collective: every rank takes part, with nothing to write after a failure. */
    int rc = MPI_File_set_view(fh, offset, elem, view, "native", MPI_INFO_NULL);
    MPI_Status st;
    if (!mpi_failed(rc, f, "setting a file view"))
        mpi_failed(MPI_File_write_all(fh, buf, ok ? (int)rows : 0, row, &st), f, "writing rows");
    MPI_Type_free(&view);
    MPI_Type_free(&row);
    free(lens);
    free(at);
    free(buf);
    return f->text[0] ? -1 : 0;
}

int xcorr_file_finish(MPI_Comm comm, const char *path, MPI_File *fh, int failed, failure *f) {
    return finish_output(comm, path, fh, XCORR_COMPLETE_OFFSET, failed, f);
}
