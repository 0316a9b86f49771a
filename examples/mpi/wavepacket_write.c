/* wavepacket_volume's forward: each rank's tiles transformed, each written into its place in
 * the file as it is made (layout: wavepacket_file.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "wavepacket_volume.h"

static const char *PROGRAM = "wavepacket_volume";

/* One MPI call counts at most INT_MAX elements: bytes in pieces of 1 GiB. */
static const size_t PIECE = (size_t)1 << 30;

static int write_bytes(MPI_File fh, MPI_Offset at, const void *buf, size_t bytes, failure *f) {
    for (size_t k = 0; k < bytes; k += PIECE) {
        size_t n = bytes - k < PIECE ? bytes - k : PIECE;
        MPI_Status st;
        int rc = MPI_File_write_at(fh, at + (MPI_Offset)k, (const char *)buf + k, (int)n, MPI_BYTE, &st);
        if (mpi_failed(rc, f, "writing a tile")) return -1;
    }
    return 0;
}

/* "<out>.partial" opened on every rank and sized; rank 0 writes the header (complete = 0). */
static int open_output(const run *r, MPI_File *fh, failure *f) {
    char partial[4096];
    partial_name(r->cfg.out, partial, sizeof partial);
    *fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, partial, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, fh);
    if (mpi_failed(rc, f, partial)) {
        *fh = MPI_FILE_NULL;
        return -1;
    }
    const wavepacket_file_header *h = &r->h;
    MPI_Offset size = (MPI_Offset)(h->tiles_offset + h->n_tiles * h->tile_bytes);
    if (mpi_failed(MPI_File_set_size(*fh, size), f, "sizing the output")) return -1;
    if (r->rank != 0) return 0;
    return write_bytes(*fh, 0, h, sizeof *h, f);
}

/* This rank's tiles, in tile order, each forward and written (with a file). */
static void transform_mine(run *r, MPI_File fh, failure *f) {
    const wavepacket_file_header *h = &r->h;
    float *tile = malloc(h->n_tile_samples * sizeof *tile);
    float *coeffs = malloc(h->tile_bytes);
    if (!tile || !coeffs) fail(f, "out of memory for a tile (%llu bytes of coefficients)",
                               (unsigned long long)h->tile_bytes);
    int first = 1;
    for (size_t t = 0; t < h->n_tiles && !f->text[0]; t++) {
        if (!tile_is_mine(&r->cfg, t, h->n_tiles, r->rank, r->size)) continue;
        synthetic_tile(r, t, tile);
        if (first && r->cfg.bad_rank == r->rank) tile[h->n_tile_samples / 2] = NAN;
        first = 0;
        double t0 = wall();
        sg_status s = sg_wavepacket_volume_forward_tile_f32(r->volume, t, tile, coeffs);
        r->times[T_FORWARD] += wall() - t0;
        char what[64];
        snprintf(what, sizeof what, "tile %zu forward", t);
        if (fail_status(f, s, what) || fh == MPI_FILE_NULL) continue;
        t0 = wall();
        write_bytes(fh, (MPI_Offset)(h->tiles_offset + t * h->tile_bytes), coeffs, h->tile_bytes, f);
        r->times[T_WRITE] += wall() - t0;
    }
    free(tile);
    free(coeffs);
}

int forward_tiles(run *r, failure *f) {
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_File fh = MPI_FILE_NULL;
    if (r->cfg.out) open_output(r, &fh, f);
    if (stage_failed(w, f, PROGRAM)) {
        failure ignore = {{0}};
        if (r->cfg.out) finish_output(w, r->cfg.out, &fh, WAVEPACKET_COMPLETE_OFFSET, 1, &ignore);
        return 1;
    }
    transform_mine(r, fh, f);
    if (r->cfg.out) {
        double t0 = wall();
        finish_output(w, r->cfg.out, &fh, WAVEPACKET_COMPLETE_OFFSET, 0, f);
        r->times[T_WRITE] += wall() - t0;
    }
    return stage_failed(w, f, PROGRAM);
}
