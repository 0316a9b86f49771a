/* wavepacket_volume --check: the file read back and gathered, compared on rank 0 with one
 * context's volume calls. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wavepacket_volume.h"

static const char *PROGRAM = "wavepacket_volume";
static const size_t PIECE = (size_t)1 << 30;

static int read_bytes(MPI_File fh, MPI_Offset at, void *buf, size_t bytes, failure *f) {
    for (size_t k = 0; k < bytes; k += PIECE) {
        size_t n = bytes - k < PIECE ? bytes - k : PIECE;
        MPI_Status st;
        int rc = MPI_File_read_at(fh, at + (MPI_Offset)k, (char *)buf + k, (int)n, MPI_BYTE, &st);
        if (mpi_failed(rc, f, "reading the file")) return -1;
    }
    return 0;
}

/* The common grid: every tile of the file added into zeros in tile order. */
static int coefficients_from_file(const run *r, float *common, failure *f) {
    const wavepacket_file_header *h = &r->h;
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, r->cfg.out, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (mpi_failed(rc, f, r->cfg.out)) return -1;
    wavepacket_file_header got;
    float *local = malloc(h->tile_bytes);
    if (!local) fail(f, "out of memory for a tile");
    else if (!read_bytes(fh, 0, &got, sizeof got, f) && (!got.complete || memcmp(&got.n_tiles, &h->n_tiles, 8)))
        fail(f, "%s: not marked complete, or not this volume's", r->cfg.out);
    for (size_t t = 0; t < h->n_tiles && !f->text[0]; t++)
        if (!read_bytes(fh, (MPI_Offset)(h->tiles_offset + t * h->tile_bytes), local, h->tile_bytes, f))
            fail_status(f, sg_wavepacket_volume_add_tile_f32(r->volume, t, local, common), "add tile");
    free(local);
    MPI_File_close(&fh);
    return f->text[0] ? -1 : 0;
}

static int owner(const run *r, size_t t) {
    for (int q = 0; q < r->size; q++)
        if (tile_is_mine(&r->cfg, t, r->h.n_tiles, q, r->size)) return q;
    return 0;
}

/* Each rank's tiles' part of the adjoint, gathered into `adj` (n_samples) on rank 0 in tile
 * order; a rank whose call failed sends its (zero) tile all the same. */
static void gather_adjoint(const run *r, const float *common, float *adj, failure *f) {
    const wavepacket_file_header *h = &r->h;
    const size_t *n = r->cfg.volume, *s = r->cfg.tile;
    float *tile = calloc(h->n_tile_samples, sizeof *tile);
    int ok = tile && h->n_tile_samples <= INT_MAX;
    if (!ok) fail(f, "out of memory for a tile, or a tile larger than one MPI message");
    for (size_t t = 0; t < h->n_tiles && ok; t++) {
        int from = owner(r, t), tag = (int)(t % 32768);
        if (from == r->rank)
            fail_status(f, sg_wavepacket_volume_adjoint_tile_f32(r->volume, t, common, tile), "adjoint tile");
        if (from == r->rank && r->rank != 0)
            MPI_Send(tile, (int)h->n_tile_samples, MPI_FLOAT, 0, tag, MPI_COMM_WORLD);
        if (r->rank != 0) continue;
        if (from != 0)
            MPI_Recv(tile, (int)h->n_tile_samples, MPI_FLOAT, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        size_t o[3], nt, mt;
        sg_wavepacket_volume_tile_info(r->volume, t, o, &nt, &mt);
        for (size_t i3 = 0; i3 < s[2] && o[2] + i3 < n[2]; i3++)
            for (size_t i2 = 0; i2 < s[1] && o[1] + i2 < n[1]; i2++)
                for (size_t i1 = 0; i1 < s[0] && o[0] + i1 < n[0]; i1++)
                    adj[((o[2] + i3) * n[1] + o[1] + i2) * n[0] + o[0] + i1] =
                        tile[(i3 * s[1] + i2) * s[0] + i1];
    }
    free(tile);
}

/* Largest |a − b| over the largest |b|; 0 when equal bit for bit. */
static double difference(const float *a, const float *b, size_t n, int *same) {
    double d = 0.0, m = 0.0;
    *same = memcmp(a, b, n * sizeof *a) == 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - (double)b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return m > 0.0 ? d / m : d;
}

/* Rank 0: one context's forward, adjoint and inverse, compared. */
static void compare(const run *r, const float *common, const float *adj, failure *f) {
    const wavepacket_file_header *h = &r->h;
    size_t n = h->volume_shape[0] * h->volume_shape[1] * h->volume_shape[2];
    size_t m = 2 * h->n_coefficients, iterations = 0;
    float *data = malloc(n * sizeof *data), *ref = malloc(m * sizeof *ref);
    float *ref_adj = malloc(n * sizeof *ref_adj), *back = malloc(n * sizeof *back);
    double residual = 0.0;
    if (!data || !ref || !ref_adj || !back) fail(f, "out of memory for the one-context check");
    if (!f->text[0]) synthetic_volume(r, data);
    if (!f->text[0] && !fail_status(f, sg_wavepacket_volume_forward_f32(r->volume, data, ref), "forward") &&
        !fail_status(f, sg_wavepacket_volume_adjoint_f32(r->volume, ref, ref_adj), "adjoint") &&
        !fail_status(f, sg_wavepacket_volume_inverse_f32(r->volume, common, back, 1e-5, 100, &iterations, &residual),
                     "inverse")) {
        int same_c, same_a, same_b;
        double dc = difference(common, ref, m, &same_c), da = difference(adj, ref_adj, n, &same_a);
        double err = difference(back, data, n, &same_b);
        printf("%s: tiles from %d ranks added in tile order vs one context's forward: %s (%.3g)\n"
               "%s: adjoint gathered from the ranks vs one context's adjoint: %s (%.3g)\n"
               "%s: inverse of the gathered coefficients: %zu iterations, residual %.3g, "
               "largest error %.3g of the largest sample\n",
               PROGRAM, r->size, same_c ? "bit for bit" : "DIFFERENT", dc, PROGRAM,
               same_a ? "bit for bit" : "DIFFERENT", da, PROGRAM, iterations, residual, err);
        /* On the CPU the steps are those of one context, in its order: equal bit for bit. */
        int exact = r->cfg.backend == SG_BACKEND_CPU;
        if ((exact && !(same_c && same_a)) || dc > 1e-4 || da > 1e-4)
            fail(f, "the ranks' results differ from one context's");
    }
    free(data);
    free(ref);
    free(ref_adj);
    free(back);
}

int check_against_one_context(run *r, failure *f) {
    double t0 = wall();
    const wavepacket_file_header *h = &r->h;
    size_t n = h->volume_shape[0] * h->volume_shape[1] * h->volume_shape[2];
    float *common = calloc(2 * h->n_coefficients, sizeof *common);
    float *adj = r->rank == 0 ? calloc(n, sizeof *adj) : NULL;
    if (!common || (r->rank == 0 && !adj)) fail(f, "out of memory for the common grid");
    else coefficients_from_file(r, common, f);
    int failed = stage_failed(MPI_COMM_WORLD, f, PROGRAM);
    if (!failed) {
        gather_adjoint(r, common, adj, f);
        failed = stage_failed(MPI_COMM_WORLD, f, PROGRAM);
    }
    if (!failed && r->rank == 0) compare(r, common, adj, f);
    if (!failed) failed = stage_failed(MPI_COMM_WORLD, f, PROGRAM);
    free(common);
    free(adj);
    r->times[T_CHECK] = wall() - t0;
    return failed;
}
