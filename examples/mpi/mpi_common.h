/* Helpers shared by the MPI examples (xcorr_network.c, wavepacket_volume.c): agreement on
 * failures at the end of each stage, one GPU per rank, CPU threads shared among the ranks
 * of a node, timing, and an output file that only looks complete once it is. */
#ifndef SEISGPU_MPI_COMMON_H
#define SEISGPU_MPI_COMMON_H

#include <mpi.h>
#include <stddef.h>

#include "seisgpu.h"

/* A rank's error message, empty while all is well. */
typedef struct {
    char text[512];
} failure;

/* Records the first failure of this rank (printf-style). */
void fail(failure *f, const char *fmt, ...);

/* Records a seisgpu status other than SG_OK with the library's message. Returns 1 if failed. */
int fail_status(failure *f, sg_status s, const char *what);

/* Every rank's failure, agreed at the end of a stage: returns 1 on every rank if any rank
 * failed, after rank 0 printed each failing rank's message (prefixed by `program`). */
int stage_failed(MPI_Comm comm, const failure *f, const char *program);

/* This rank's index among the ranks of its node (MPI_COMM_TYPE_SHARED), and their count. */
void node_rank(MPI_Comm comm, int *local_rank, int *local_size);

/* A context: CUDA device `local_rank` (one GPU per rank), or the CPU; either way its CPU
 * pool gets this rank's share of the node's cores (SEISGPU_NUM_THREADS, unless the caller
 * set it). `backend` is SG_BACKEND_AUTO, _CPU or _CUDA. */
sg_status rank_context(int backend, int local_rank, int local_size, sg_context **ctx);

/* Seconds on a monotonic clock. */
double wall(void);

/* The output is written to "<path>.partial" and renamed to `path` by rank 0 only once every
 * rank's part is in; a failed run leaves no file named `path` (a stale one is removed at
 * the start). */
void partial_name(const char *path, char *out, size_t len);
int remove_stale_output(const char *path);

/* Records a failed MPI call (`rc` other than MPI_SUCCESS) with MPI's message. Returns 1 if
 * failed. */
int mpi_failed(int rc, failure *f, const char *what);

/* Ends an output opened as "<path>.partial": syncs it, agrees on failures, has rank 0 set
 * the uint32 flag at `complete_offset` to 1 once every rank's part is on disk, closes it and
 * gives it its final name; with `failed` (or a failure on any rank), closes it and removes
 * it instead. 0 on success. Collective. */
int finish_output(MPI_Comm comm, const char *path, MPI_File *fh, MPI_Offset complete_offset,
                  int failed, failure *f);

/* The max, over ranks, of each of `n` values (to rank 0). */
void max_over_ranks(MPI_Comm comm, const double *v, double *out, int n);

#endif
