/* xcorr_network: ambient-noise correlation of a station network's day over MPI ranks, one
 * GPU per rank where there are GPUs (device = the rank's index on its node), with
 * seisgpu's block correlation, every rank writing its pairs into one file with MPI-IO.
 *
 *   mpirun -np 4 xcorr_network --synthetic 2000 -o day.xc
 *   mpirun -np 3 xcorr_network --list stations.txt --samples 86400 -o day.xc --exchange
 *
 * The stations are cut into G groups; the G(G+1)/2 blocks of the upper triangle of pairs
 * are dealt to the ranks (xcorr_layout.h). Each rank needs the spectra of the groups of
 * its blocks, made one of two ways:
 *   default     each rank reads and preprocesses the station-days its blocks need (a
 *               station is preprocessed by every rank that needs it);
 *   --exchange  each station group is read and preprocessed once, by its owner rank
 *               (g mod ranks), and its spectra are sent to the ranks that need them
 *               (sg_xcorr_spectra_copy, MPI, sg_xcorr_spectra_import).
 * Each rank then correlates its blocks (sg_xcorr_correlate_f32, or with --substack-len
 * sg_xcorr_correlate_substacks_f32) and the ranks write their pairs collectively into
 * "<out>.partial" (layout: xcorr_file.h), which rank 0 marks complete and renames to <out>
 * once every rank's part is in. The results do not depend on the number of ranks or
 * groups: on the CPU the file is the same bit for bit as with one rank and one group.
 *
 * A failure on any rank (a bad station file, a refused argument) stops every rank at the
 * end of the stage: rank 0 prints each failing rank's message, every rank exits with
 * status 1, and no file named <out> is left (nor the partial one).
 *
 * Options: --list FILE | --synthetic N; --samples N (86400); --fs HZ (1); --freqmin (0.05),
 * --freqmax (0.4) Hz; --cc-len (1800), --step (450), --maxlag (200) s; --cc-method
 * xcorr|deconv|coherency; --stack linear|pws|robust; --substack-len S (0: none);
 * --autocorrelation; --groups G (default: the least with 2 blocks a rank); --exchange;
 * --backend auto|cpu|cuda (auto); -o FILE (xcorr_network.xc); --quiet.
 * Prints per-rank and overall times (read, preprocess, exchange, correlate, write).
 *
 * Build: make mpi-examples (mpicc, rpath to target/release). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_common.h"
#include "xcorr_file.h"
#include "xcorr_input.h"
#include "xcorr_layout.h"
#include "xcorr_network.h"

static const char *PROGRAM = "xcorr_network";

static int finish(MPI_Comm comm, int failed) {
    MPI_Barrier(comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}

/* The station list, layout, context and plan: every rank the same. */
static int setup(run *r, failure *f) {
    const config *c = &r->cfg;
    if (c->list)
        stations_from_list(c->list, &r->stations, f);
    else if (stations_synthetic(c->synthetic, &r->stations))
        fail(f, "out of memory for %zu station names", c->synthetic);
    if (f->text[0]) return -1;
    if (xcorr_layout_make(&r->layout, r->stations.n, c->groups, r->size, c->options.autocorrelation)) {
        fail(f, "cannot cut %zu stations into %zu groups", r->stations.n, c->groups);
        return -1;
    }
    int local, local_size;
    node_rank(MPI_COMM_WORLD, &local, &local_size);
    if (fail_status(f, rank_context(c->backend, local, local_size, &r->ctx), "context")) return -1;
    if (fail_status(f, sg_xcorr_plan_create(r->ctx, &c->options, &r->plan), "plan")) return -1;
    size_t n_lags = 0;
    if (fail_status(f, sg_xcorr_plan_sizes(r->plan, c->n_samples, &r->n_windows, &n_lags),
                    "plan sizes"))
        return -1;
    r->n_lags = n_lags;
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    run r;
    memset(&r, 0, sizeof r);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    failure f = {{0}};
    double t_start = wall();
    parse_args(argc, argv, &r.cfg, &f);
    if (stage_failed(MPI_COMM_WORLD, &f, PROGRAM)) return finish(MPI_COMM_WORLD, 1);
    if (r.rank == 0 && remove_stale_output(r.cfg.out)) fail(&f, "cannot remove an old %s", r.cfg.out);
    setup(&r, &f);
    if (stage_failed(MPI_COMM_WORLD, &f, PROGRAM)) {
        release(&r);
        return finish(MPI_COMM_WORLD, 1);
    }
    int failed = run_stages(&r, &f);
    r.times[T_TOTAL] = wall() - t_start;
    if (!failed) report(&r);
    release(&r);
    return finish(MPI_COMM_WORLD, failed);
}
