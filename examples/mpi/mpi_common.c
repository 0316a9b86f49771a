/* See mpi_common.h. */
#define _POSIX_C_SOURCE 200809L
#include "mpi_common.h"

#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void fail(failure *f, const char *fmt, ...) {
    if (f->text[0]) return; /* the first failure is the cause */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->text, sizeof f->text, fmt, ap);
    va_end(ap);
    if (!f->text[0]) strcpy(f->text, "failed");
}

int fail_status(failure *f, sg_status s, const char *what) {
    if (s == SG_OK) return 0;
    fail(f, "%s: %s: %s", what, sg_status_string(s), sg_last_error_message());
    return 1;
}

int stage_failed(MPI_Comm comm, const failure *f, const char *program) {
    int mine = f->text[0] != 0, any = 0, rank, size;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    if (!any) return 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char *all = rank == 0 ? malloc((size_t)size * sizeof f->text) : NULL;
    MPI_Gather(f->text, (int)sizeof f->text, MPI_CHAR, all, (int)sizeof f->text, MPI_CHAR, 0,
               comm);
    if (rank == 0) {
        for (int r = 0; all && r < size; r++) {
            const char *m = all + (size_t)r * sizeof f->text;
            if (m[0]) fprintf(stderr, "%s: rank %d: %s\n", program, r, m);
        }
        fprintf(stderr, "%s: stopped on every rank\n", program);
        free(all);
    }
    return 1;
}

void node_rank(MPI_Comm comm, int *local_rank, int *local_size) {
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
}

sg_status rank_context(int backend, int local_rank, int local_size, sg_context **ctx) {
    /* Every context has a CPU pool of one thread per core unless told otherwise: the work on
     * the CPU, the host staging of a CUDA context's host arrays. Ranks of one node share the
     * cores, or each would run as many threads as the node has. */
    if (!getenv("SEISGPU_NUM_THREADS")) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        long share = cores / (local_size > 0 ? local_size : 1);
        char v[32];
        snprintf(v, sizeof v, "%ld", share > 0 ? share : 1);
        setenv("SEISGPU_NUM_THREADS", v, 0);
    }
    return sg_context_create(backend, backend == SG_BACKEND_CPU ? 0 : local_rank, ctx);
}

double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void partial_name(const char *path, char *out, size_t len) {
    snprintf(out, len, "%s.partial", path);
}

int remove_stale_output(const char *path) {
    char partial[4096];
    partial_name(path, partial, sizeof partial);
    int ok = (unlink(path) == 0 || errno == ENOENT);
    ok = ok && (unlink(partial) == 0 || errno == ENOENT);
    return ok ? 0 : -1;
}

void max_over_ranks(MPI_Comm comm, const double *v, double *out, int n) {
    MPI_Reduce(v, out, n, MPI_DOUBLE, MPI_MAX, 0, comm);
}

int mpi_failed(int rc, failure *f, const char *what) {
    if (rc == MPI_SUCCESS) return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fail(f, "%s: %s", what, msg);
    return 1;
}

int finish_output(MPI_Comm comm, const char *path, MPI_File *fh, MPI_Offset complete_offset,
                  int failed, failure *f) {
    char partial[4096];
    partial_name(path, partial, sizeof partial);
    int rank, open = *fh != MPI_FILE_NULL;
    MPI_Comm_rank(comm, &rank);
    failed = failed || !open;
    if (open) MPI_File_set_view(*fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    if (!failed) mpi_failed(MPI_File_sync(*fh), f, "syncing the output");
    /* Every rank's part is on disk (or some rank failed) before the flag is written. */
    int mine = f->text[0] != 0, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    failed = failed || any;
    if (!failed && rank == 0) {
        uint32_t one = 1;
        MPI_Status st;
        int rc = MPI_File_write_at(*fh, complete_offset, &one, 4, MPI_BYTE, &st);
        mpi_failed(rc, f, "marking the output complete");
    }
    if (open) MPI_File_close(fh);
    if (rank != 0) return f->text[0] ? -1 : 0;
    if (failed || f->text[0])
        unlink(partial);
    else if (rename(partial, path) != 0)
        fail(f, "renaming %s to %s", partial, path);
    return f->text[0] ? -1 : 0;
}
