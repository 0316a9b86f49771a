/* wavepacket_volume: the wave packets of a volume larger than one layout over MPI ranks, one
 * GPU per rank where there are GPUs (device = the rank's index on its node): the tiles are
 * dealt over the ranks, each rank transforms its own (sg_wavepacket_volume_forward_tile_f32)
 * and writes each tile's coefficients on its window of the common grid into its place in
 * one file with MPI-IO (layout: wavepacket_file.h).
 *
 *   mpirun -np 4 wavepacket_volume --volume 1024x1024x512 --tile 256x256x256 -o cube.wp
 *   mpirun -np 3 wavepacket_volume --volume 64x64x32 --tile 32x32x32 --directions 6 --levels 1 \
 *       -o cube.wp --check
 *
 * The tiles go to the ranks in blocks of consecutive tiles (default) or in turn
 * (--round-robin). Rank 0 marks the file complete and renames "<out>.partial" to <out> once
 * every rank's tiles are in. The file does not depend on the number of ranks or how the
 * tiles are dealt: the same bytes as from one rank.
 *
 * --check then gathers: every rank reads the tiles back and adds them into the common grid
 * in tile order (sg_wavepacket_volume_add_tile_f32), each rank makes its own tiles' part of
 * the adjoint (sg_wavepacket_volume_adjoint_tile_f32) and rank 0 gathers them; rank 0
 * compares both with one context's sg_wavepacket_volume_forward_f32 and _adjoint_f32 (bit
 * for bit on the CPU) and prints the inverse's error (sg_wavepacket_volume_inverse_f32 of
 * the gathered coefficients against the volume).
 *
 * A failure on any rank (a refused argument, a tile with a NaN sample: --bad-rank R puts one
 * into rank R's first tile) stops every rank: rank 0 prints each failing rank's message,
 * every rank exits with status 1, and no file named <out> is left (nor the partial one).
 *
 * Options: --volume N1xN2[xN3] (64x64x32); --tile T1xT2[xT3] (32x32x32); --directions N,
 * --levels N, --cutoff C (the layout's defaults); --round-robin; --backend auto|cpu|cuda (auto); -o FILE
 * (wavepacket_volume.wp); --no-output (the coefficients are dropped: timing only); --check;
 * --bad-rank R; --quiet. Prints the times, the max over ranks: plan (the volume's creation),
 * forward (the tiles' transforms), write, check, total.
 *
 * Build: make mpi-examples (mpicc, rpath to target/release). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wavepacket_volume.h"

static const char *PROGRAM = "wavepacket_volume";

static int finish(MPI_Comm comm, run *r, int failed) {
    sg_wavepacket_volume_destroy(r->volume);
    sg_context_destroy(r->ctx);
    MPI_Barrier(comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}

/* The file's header from the volume's sizes (every rank the same). */
static int fill_header(run *r, failure *f) {
    wavepacket_file_header *h = &r->h;
    const config *c = &r->cfg;
    size_t n_samples, n_coefficients, tiles[3], n_boxes, origin[3], n_tile, m_tile;
    if (fail_status(f, sg_wavepacket_volume_sizes(r->volume, &n_samples, &n_coefficients, tiles, &n_boxes),
                    "volume sizes") ||
        fail_status(f, sg_wavepacket_volume_tile_info(r->volume, 0, origin, &n_tile, &m_tile), "tile info"))
        return -1;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, WAVEPACKET_FILE_MAGIC, sizeof WAVEPACKET_FILE_MAGIC);
    h->version = WAVEPACKET_FILE_VERSION;
    h->dim = (uint32_t)c->dim;
    h->real_bytes = 4;
    for (int a = 0; a < 3; a++) {
        h->volume_shape[a] = c->volume[a];
        h->tile_shape[a] = c->tile[a];
        h->tiles[a] = tiles[a];
    }
    h->n_tiles = tiles[0] * tiles[1] * tiles[2];
    h->n_tile_samples = n_tile;
    h->n_tile_coefficients = m_tile;
    h->n_coefficients = n_coefficients;
    h->tiles_offset = 4096;
    h->tile_bytes = 8 * (uint64_t)m_tile;
    h->directions = c->options.directions;
    h->levels = c->options.levels;
    h->alpha = c->options.alpha;
    h->beta = c->options.beta;
    h->cutoff = c->options.cutoff;
    h->tolerance = c->options.tolerance;
    for (size_t t = 0; t < h->n_tiles; t++)
        r->n_mine += (size_t)tile_is_mine(c, t, h->n_tiles, r->rank, r->size);
    return 0;
}

/* The context and the volume: every rank the same volume. */
static int setup(run *r, failure *f) {
    const config *c = &r->cfg;
    int local, local_size;
    node_rank(MPI_COMM_WORLD, &local, &local_size);
    if (fail_status(f, rank_context(c->backend, local, local_size, &r->ctx), "context")) return -1;
    double t = wall();
    sg_status s = sg_wavepacket_volume_create(r->ctx, c->dim, c->volume, c->tile, SG_WAVEPACKET_F32,
                                              &c->options, &r->volume);
    r->times[T_PLAN] = wall() - t;
    if (fail_status(f, s, "volume")) return -1;
    return fill_header(r, f);
}

static void report(const run *r) {
    double max[N_TIMES];
    max_over_ranks(MPI_COMM_WORLD, r->times, max, N_TIMES);
    if (r->rank != 0) return;
    if (!r->cfg.quiet) {
        const wavepacket_file_header *h = &r->h;
        printf("%s: %llu tiles of %llu samples on %d ranks (%s), %llu coefficients a tile, "
               "%llu on the common grid; %s\n",
               PROGRAM, (unsigned long long)h->n_tiles, (unsigned long long)h->n_tile_samples,
               r->size, r->cfg.round_robin ? "in turn" : "in blocks",
               (unsigned long long)h->n_tile_coefficients, (unsigned long long)h->n_coefficients,
               r->cfg.out ? r->cfg.out : "no output");
    }
    printf("times (s, max over ranks): plan %.3f forward %.3f write %.3f check %.3f total %.3f\n",
           max[T_PLAN], max[T_FORWARD], max[T_WRITE], max[T_CHECK], max[T_TOTAL]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    run r;
    memset(&r, 0, sizeof r);
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Comm_rank(w, &r.rank);
    MPI_Comm_size(w, &r.size);
    failure f = {{0}};
    double t_start = wall();
    parse_args(argc, argv, &r.cfg, &f);
    if (stage_failed(w, &f, PROGRAM)) return finish(w, &r, 1);
    if (r.rank == 0 && r.cfg.out && remove_stale_output(r.cfg.out))
        fail(&f, "cannot remove an old %s", r.cfg.out);
    setup(&r, &f);
    if (stage_failed(w, &f, PROGRAM)) return finish(w, &r, 1);
    int failed = forward_tiles(&r, &f);
    if (!failed && r.cfg.check) failed = check_against_one_context(&r, &f);
    r.times[T_TOTAL] = wall() - t_start;
    if (!failed) report(&r);
    return finish(w, &r, failed);
}
