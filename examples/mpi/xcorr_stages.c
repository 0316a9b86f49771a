/* xcorr_network's stages: the spectra a rank needs, its blocks' correlations, and its part
 * of the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xcorr_network.h"
#include "xcorr_write.h"

static const char *PROGRAM = "xcorr_network";

sg_xcorr_spectra *preprocess_stations(run *r, const size_t *which, size_t count, failure *f) {
    size_t n = r->cfg.n_samples;
    float *days = malloc(count * n * sizeof *days);
    if (!days) {
        fail(f, "out of memory for %zu station-days", count);
        return NULL;
    }
    double t = wall();
    int bad = load_days(&r->stations, which, count, n, days, f);
    r->times[T_READ] += wall() - t;
    sg_xcorr_spectra *s = NULL;
    t = wall();
    if (!bad)
        fail_status(f, sg_xcorr_preprocess_f32(r->plan, days, count, n, n, NULL, &s), "preprocess");
    r->times[T_PRE] += wall() - t;
    r->preprocessed += count;
    free(days);
    return s;
}

/* The groups this rank's blocks need and where their stations sit in its spectra. */
static int needed_groups(run *r, failure *f) {
    const xcorr_layout *l = &r->layout;
    r->needed = malloc(l->n_groups * sizeof *r->needed);
    r->local_start = malloc((l->n_groups + 1) * sizeof *r->local_start);
    if (!r->needed || !r->local_start) {
        fail(f, "out of memory");
        return -1;
    }
    r->n_needed = rank_groups(l, r->rank, r->size, 0, r->needed);
    r->local_start[0] = 0;
    for (size_t k = 0; k < r->n_needed; k++)
        r->local_start[k + 1] = r->local_start[k] + group_size(l, r->needed[k]);
    return 0;
}

/* Default mode: this rank reads and preprocesses every station its blocks need. */
static int spectra_where_needed(run *r, failure *f) {
    size_t count = r->local_start[r->n_needed];
    if (count == 0) return 0; /* no blocks here */
    size_t *which = malloc(count * sizeof *which);
    if (!which) {
        fail(f, "out of memory");
        return -1;
    }
    for (size_t k = 0, at = 0; k < r->n_needed; k++)
        for (size_t s = r->layout.group_start[r->needed[k]]; s < r->layout.group_start[r->needed[k] + 1]; s++)
            which[at++] = s;
    r->spectra = preprocess_stations(r, which, count, f);
    free(which);
    return r->spectra ? 0 : -1;
}

static size_t local_index(const run *r, size_t group) {
    for (size_t k = 0; k < r->n_needed; k++)
        if (r->needed[k] == group) return k;
    return (size_t)-1;
}

/* One block on this rank's spectra (local station numbers). */
static int correlate_block(run *r, const int32_t *labels, block_out *o, failure *f) {
    const xcorr_block *b = o->block;
    size_t ka = local_index(r, b->a), kb = local_index(r, b->b);
    size_t i0 = r->local_start[ka], ni = group_size(&r->layout, b->a);
    size_t j0 = r->local_start[kb], nj = group_size(&r->layout, b->b);
    size_t rows = b->n_pairs ? b->n_pairs : 1, ng = r->n_groups;
    o->stacks = malloc(rows * r->n_lags * sizeof(float));
    o->counts = malloc(rows * sizeof(uint32_t));
    if (ng) {
        o->sub = malloc(ng * rows * r->n_lags * sizeof(float));
        o->sub_counts = malloc(ng * rows * sizeof(uint32_t));
    }
    if (!o->stacks || !o->counts || (ng && (!o->sub || !o->sub_counts))) {
        fail(f, "out of memory for block (%zu, %zu)", b->a, b->b);
        return -1;
    }
    const sg_xcorr_spectra *days[1] = {r->spectra};
    sg_status s =
        ng ? sg_xcorr_correlate_substacks_f32(r->plan, days, 1, i0, ni, j0, nj, labels, ng,
                                              o->stacks, r->n_lags, o->counts, o->sub,
                                              o->sub_counts)
           : sg_xcorr_correlate_f32(r->plan, days, 1, i0, ni, j0, nj, o->stacks, r->n_lags,
                                    o->counts);
    return fail_status(f, s, "correlate") ? -1 : 0;
}

/* Substack labels by time for the day (hours of substack_len from its first sample). */
static int32_t *substack_labels(run *r, failure *f) {
    r->n_groups = 0;
    if (r->cfg.substack_len <= 0.0) return NULL;
    int32_t *labels = malloc(r->n_windows * sizeof *labels);
    double start = 0.0;
    if (!labels) fail(f, "out of memory");
    else
        fail_status(f,
                    sg_xcorr_substack_groups(r->plan, 1, &r->n_windows, &start,
                                             r->cfg.substack_len, labels, &r->n_groups),
                    "substack groups");
    return labels;
}

static int correlate_blocks(run *r, failure *f) {
    double t = wall();
    int32_t *labels = substack_labels(r, f);
    r->outs = calloc(r->layout.n_blocks, sizeof *r->outs);
    if (!r->outs) fail(f, "out of memory");
    for (size_t i = 0; !f->text[0] && i < r->layout.n_blocks; i++) {
        if (r->layout.blocks[i].rank != r->rank) continue;
        block_out *o = &r->outs[r->n_outs++];
        o->block = &r->layout.blocks[i];
        correlate_block(r, labels, o, f);
    }
    free(labels);
    r->times[T_CORRELATE] = wall() - t;
    return f->text[0] ? -1 : 0;
}

int run_stages(run *r, failure *f) {
    MPI_Comm w = MPI_COMM_WORLD;
    int agreed = 0;
    if (needed_groups(r, f) == 0) {
        if (r->cfg.exchange) agreed = exchange_spectra(r, f) == 1;
        else spectra_where_needed(r, f);
    }
    if (agreed) return 1;
    if (stage_failed(w, f, PROGRAM)) return 1;
    correlate_blocks(r, f);
    if (stage_failed(w, f, PROGRAM)) return 1;
    double t = wall();
    int failed = write_network(r, f);
    r->times[T_WRITE] = wall() - t;
    return failed;
}

void release(run *r) {
    for (size_t i = 0; r->outs && i < r->n_outs; i++) {
        free(r->outs[i].stacks);
        free(r->outs[i].counts);
        free(r->outs[i].sub);
        free(r->outs[i].sub_counts);
    }
    free(r->outs);
    free(r->needed);
    free(r->local_start);
    sg_xcorr_spectra_destroy(r->spectra);
    sg_xcorr_plan_destroy(r->plan);
    sg_context_destroy(r->ctx);
    xcorr_layout_free(&r->layout);
    stations_free(&r->stations);
}

void report(const run *r) {
    enum { K = N_TIMES + 2 };
    double mine[K], *all = NULL;
    memcpy(mine, r->times, sizeof r->times);
    mine[N_TIMES] = (double)r->preprocessed;
    double pairs = 0.0;
    for (size_t i = 0; i < r->n_outs; i++) pairs += (double)r->outs[i].block->n_pairs;
    mine[N_TIMES + 1] = pairs;
    if (r->rank == 0) all = malloc((size_t)r->size * K * sizeof *all);
    MPI_Gather(mine, K, MPI_DOUBLE, all, K, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (r->rank != 0 || !all) return;
    double max[K] = {0}, sum[K] = {0};
    if (!r->cfg.quiet) printf("rank  station-days  pairs       read   prepro  exchange correlate  write   total (s)\n");
    for (int q = 0; q < r->size; q++) {
        const double *v = all + (size_t)q * K;
        for (int k = 0; k < K; k++) {
            max[k] = v[k] > max[k] ? v[k] : max[k];
            sum[k] += v[k];
        }
        if (!r->cfg.quiet)
            printf("%4d  %12.0f %9.0f  %7.3f  %7.3f  %7.3f  %7.3f  %7.3f  %7.3f\n", q, v[N_TIMES],
                   v[N_TIMES + 1], v[T_READ], v[T_PRE], v[T_EXCHANGE], v[T_CORRELATE], v[T_WRITE],
                   v[T_TOTAL]);
    }
    printf("max   %12.0f %9.0f  %7.3f  %7.3f  %7.3f  %7.3f  %7.3f  %7.3f\n", max[N_TIMES],
           max[N_TIMES + 1], max[T_READ], max[T_PRE], max[T_EXCHANGE], max[T_CORRELATE],
           max[T_WRITE], max[T_TOTAL]);
    printf("%s: %zu stations, %.0f pairs on %d ranks (%zu groups); %.0f station-days "
           "preprocessed (%.2f a station); %s; wrote %s\n",
           PROGRAM, r->stations.n, sum[N_TIMES + 1], r->size, r->layout.n_groups, sum[N_TIMES],
           sum[N_TIMES] / (double)r->stations.n,
           r->cfg.exchange ? "spectra exchanged" : "spectra made where needed", r->cfg.out);
    free(all);
}
