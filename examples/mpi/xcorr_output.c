/* xcorr_network's file: the header, then every rank's pair records, stacks and substacks
 * as runs of consecutive rows (one run per station row of a block), written collectively. */
#include <stdlib.h>
#include <string.h>

#include "xcorr_network.h"
#include "xcorr_write.h"

static const char *PROGRAM = "xcorr_network";

static uint64_t align64(uint64_t x) { return (x + 63) / 64 * 64; }

static void fill_header(const run *r, xcorr_file_header *h) {
    const sg_xcorr_options *o = &r->cfg.options;
    uint64_t n = r->stations.n;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, XCORR_FILE_MAGIC, sizeof XCORR_FILE_MAGIC);
    h->version = XCORR_FILE_VERSION;
    h->n_stations = n;
    h->n_pairs = n * (n - 1) / 2 + (o->autocorrelation ? n : 0);
    h->n_lags = r->n_lags;
    h->n_groups = r->n_groups;
    h->station_offset = XCORR_HEADER_BYTES;
    h->index_offset = align64(h->station_offset + n * XCORR_NAME_BYTES);
    h->stacks_offset = align64(h->index_offset + h->n_pairs * sizeof(xcorr_file_pair));
    h->substack_index_offset = h->n_groups ? align64(h->stacks_offset + 4 * h->n_pairs * h->n_lags) : 0;
    h->substacks_offset = h->n_groups ? align64(h->substack_index_offset + 4 * h->n_groups * h->n_pairs) : 0;
    h->n_samples = r->cfg.n_samples;
    h->sampling_rate = o->sampling_rate;
    h->maxlag = o->maxlag;
    h->cc_len = o->cc_len;
    h->step = o->step;
    h->freqmin = o->freqmin;
    h->freqmax = o->freqmax;
    h->substack_len = r->n_groups ? r->cfg.substack_len : 0.0;
    h->cc_method = o->cc_method;
    h->stack_method = o->stack_method;
    h->time_norm = o->time_norm;
    h->freq_norm = o->freq_norm;
    h->autocorrelation = o->autocorrelation;
}

/* Runs of this rank's pairs: records, stacks, and per group substacks and their counts. */
typedef struct {
    row_run *index, *stacks, *sub, *sub_counts;
    size_t n_index, n_stacks, n_sub;
    xcorr_file_pair **records; /* per block */
} runs;

static int block_runs(const run *r, const xcorr_file_header *h, size_t ob, runs *u) {
    const block_out *o = &r->outs[ob];
    const xcorr_block *b = o->block;
    const xcorr_layout *l = &r->layout;
    int autoc = h->autocorrelation;
    xcorr_file_pair *rec = malloc((b->n_pairs ? b->n_pairs : 1) * sizeof *rec);
    if (!rec) return -1;
    u->records[ob] = rec;
    size_t ni = group_size(l, b->a), nj = group_size(l, b->b), q = 0;
    for (size_t a = 0; a < ni; a++) {
        size_t first = b->a != b->b ? 0 : a + (autoc ? 0 : 1);
        if (first >= nj) continue;
        uint64_t gi = l->group_start[b->a] + a, gj = l->group_start[b->b] + first;
        size_t count = nj - first;
        uint64_t p = xcorr_pair_index(gi, gj, h->n_stations, autoc);
        for (size_t k = 0; k < count; k++)
            rec[q + k] = (xcorr_file_pair){(uint32_t)gi, (uint32_t)(gj + k), o->counts[q + k], 0};
        u->index[u->n_index++] = (row_run){p, count, rec + q};
        u->stacks[u->n_stacks++] = (row_run){p, count, o->stacks + q * h->n_lags};
        for (uint64_t g = 0; g < h->n_groups; g++) {
            uint64_t row = g * h->n_pairs + p, at = g * b->n_pairs + q;
            u->sub[u->n_sub] = (row_run){row, count, o->sub + at * h->n_lags};
            u->sub_counts[u->n_sub++] = (row_run){row, count, o->sub_counts + at};
        }
        q += count;
    }
    return 0;
}

static int all_runs(const run *r, const xcorr_file_header *h, runs *u) {
    size_t rows = 0;
    for (size_t i = 0; i < r->n_outs; i++) rows += group_size(&r->layout, r->outs[i].block->a);
    size_t with_groups = rows * (h->n_groups ? h->n_groups : 1) + 1;
    u->index = malloc((rows + 1) * sizeof *u->index);
    u->stacks = malloc((rows + 1) * sizeof *u->stacks);
    u->sub = malloc(with_groups * sizeof *u->sub);
    u->sub_counts = malloc(with_groups * sizeof *u->sub_counts);
    u->records = calloc(r->n_outs + 1, sizeof *u->records);
    if (!u->index || !u->stacks || !u->sub || !u->sub_counts || !u->records) return -1;
    for (size_t i = 0; i < r->n_outs; i++)
        if (block_runs(r, h, i, u)) return -1;
    return 0;
}

static void free_runs(const run *r, runs *u) {
    for (size_t i = 0; u->records && i < r->n_outs; i++) free(u->records[i]);
    free(u->records);
    free(u->index);
    free(u->stacks);
    free(u->sub);
    free(u->sub_counts);
}

int write_network(run *r, failure *f) {
    MPI_Comm w = MPI_COMM_WORLD;
    xcorr_file_header h;
    fill_header(r, &h);
    runs u;
    memset(&u, 0, sizeof u);
    if (all_runs(r, &h, &u)) fail(f, "out of memory for the file's runs");
    MPI_File fh;
    xcorr_file_open(w, r->cfg.out, &h, (const char (*)[XCORR_NAME_BYTES])r->stations.name, &fh, f);
    if (stage_failed(w, f, PROGRAM)) {
        free_runs(r, &u);
        failure ignore = {{0}};
        xcorr_file_finish(w, r->cfg.out, &fh, 1, &ignore);
        return 1;
    }
    write_rows(fh, (MPI_Offset)h.index_offset, MPI_UINT32_T, 4, u.index, u.n_index, f);
    write_rows(fh, (MPI_Offset)h.stacks_offset, MPI_FLOAT, h.n_lags, u.stacks, u.n_stacks, f);
    if (h.n_groups) {
        write_rows(fh, (MPI_Offset)h.substack_index_offset, MPI_UINT32_T, 1, u.sub_counts, u.n_sub, f);
        write_rows(fh, (MPI_Offset)h.substacks_offset, MPI_FLOAT, h.n_lags, u.sub, u.n_sub, f);
    }
    free_runs(r, &u);
    xcorr_file_finish(w, r->cfg.out, &fh, 0, f);
    return stage_failed(w, f, PROGRAM);
}
