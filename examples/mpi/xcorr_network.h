/* xcorr_network's parts: its options (xcorr_args.c), its stages (xcorr_stages.c: spectra,
 * correlation, the file; xcorr_exchange.c: spectra sent between ranks) and the state of a
 * run that they share. */
#ifndef SEISGPU_XCORR_NETWORK_H
#define SEISGPU_XCORR_NETWORK_H

#include <stddef.h>
#include <stdint.h>

#include "mpi_common.h"
#include "xcorr_input.h"
#include "xcorr_layout.h"

typedef struct {
    const char *list;      /* station list, or NULL for synthetic stations */
    size_t synthetic;      /* synthetic station count */
    size_t n_samples;
    size_t groups;         /* 0: chosen from the rank count */
    double substack_len;   /* s; 0: no substacks */
    int exchange;          /* spectra made once and sent (1), or made where needed (0) */
    int backend;           /* SG_BACKEND_* */
    int quiet;
    const char *out;
    sg_xcorr_options options;
} config;

enum { T_READ, T_PRE, T_EXCHANGE, T_CORRELATE, T_WRITE, T_TOTAL, N_TIMES };

/* A block's results: its pairs' stacks (n_pairs × n_lags) and window counts, and with
 * substacks theirs (n_groups × n_pairs rows). */
typedef struct {
    const xcorr_block *block;
    float *stacks, *sub;
    uint32_t *counts, *sub_counts;
} block_out;

typedef struct {
    config cfg;
    int rank, size;
    station_list stations;
    xcorr_layout layout;
    sg_context *ctx;
    sg_xcorr_plan *plan;
    size_t n_windows, n_lags, n_groups;
    /* The spectra of the groups this rank's blocks need, those groups ascending, each at
     * its local station offset. */
    sg_xcorr_spectra *spectra;
    size_t *needed, n_needed, *local_start;
    size_t preprocessed;   /* station-days this rank preprocessed */
    block_out *outs;
    size_t n_outs;
    double times[N_TIMES];
} run;

/* Parses the command line into `c` (defaults: NoisePy's at 1 Hz, 0.05–0.4 Hz). */
int parse_args(int argc, char **argv, config *c, failure *f);

/* Spectra, correlation and the file, agreeing on failures after each; 1 if any failed. */
int run_stages(run *r, failure *f);

/* Every rank's pairs into the file (xcorr_file.h), collectively; 1 on every rank if any
 * failed (the partial file is removed then). */
int write_network(run *r, failure *f);

/* Per-rank and overall times on rank 0. */
void report(const run *r);

void release(run *r);

/* --exchange: the spectra of this rank's needed groups from their owners (the owned ones
 * made here). 0 on success, -1 on a local failure, 1 when every rank already agreed that
 * the preprocessing failed (and it was reported). */
int exchange_spectra(run *r, failure *f);

/* The days of stations which[0 .. count), preprocessed (timing the reading and the
 * preprocessing into r->times). NULL on failure. */
sg_xcorr_spectra *preprocess_stations(run *r, const size_t *which, size_t count, failure *f);

#endif
