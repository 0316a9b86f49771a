/* --exchange: every station group is read and preprocessed once, by its owner (rank
 * g mod ranks); its spectra go to the host (sg_xcorr_spectra_copy), to the ranks whose
 * blocks need the group (MPI point to point), and into each such rank's spectra of its
 * needed groups (sg_xcorr_spectra_import). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "xcorr_network.h"

/* One group's spectra on the host: values [bin][station][window] (interleaved complex)
 * and kept flags [station][window]. */
typedef struct {
    float *values;
    uint8_t *kept;
} group_host;

/* Preprocesses the owned groups and copies their spectra to the host; the band length
 * (the same for all) into *band_len. */
static int make_owned(run *r, group_host *h, size_t *band_len, failure *f) {
    const xcorr_layout *l = &r->layout;
    for (size_t g = (size_t)r->rank; g < l->n_groups && !f->text[0]; g += (size_t)r->size) {
        size_t n = group_size(l, g), *which = malloc(n * sizeof *which);
        if (!which) {
            fail(f, "out of memory");
            break;
        }
        for (size_t k = 0; k < n; k++) which[k] = l->group_start[g] + k;
        sg_xcorr_spectra *s = preprocess_stations(r, which, n, f);
        free(which);
        if (!s) break;
        double t = wall();
        size_t ns, nw, bl;
        fail_status(f, sg_xcorr_spectra_sizes(s, &ns, &nw, NULL, &bl, NULL), "spectra sizes");
        h[g].values = malloc(2 * bl * ns * nw * sizeof(float));
        h[g].kept = malloc(ns * nw);
        if (!f->text[0] && (!h[g].values || !h[g].kept)) fail(f, "out of memory for spectra");
        if (!f->text[0]) fail_status(f, sg_xcorr_spectra_copy(s, h[g].values, h[g].kept), "copying spectra");
        *band_len = bl;
        sg_xcorr_spectra_destroy(s);
        r->times[T_EXCHANGE] += wall() - t;
    }
    return f->text[0] ? -1 : 0;
}

static int needs(const run *r, int rank, size_t g, size_t *scratch) {
    size_t n = rank_groups(&r->layout, rank, r->size, 0, scratch);
    for (size_t k = 0; k < n; k++)
        if (scratch[k] == g) return 1;
    return 0;
}

/* Sends the owned groups to the ranks that need them, receives the needed ones. */
static int trade(run *r, group_host *h, size_t band_len, failure *f) {
    const xcorr_layout *l = &r->layout;
    size_t *scratch = malloc(l->n_groups * sizeof *scratch);
    MPI_Request *req = malloc((2 * l->n_groups * (size_t)r->size + 1) * sizeof *req);
    int n_req = 0;
    if (!scratch || !req) fail(f, "out of memory");
    for (size_t g = 0; !f->text[0] && g < l->n_groups; g++) {
        int owner = (int)(g % (size_t)r->size);
        size_t nv = 2 * band_len * group_size(l, g) * r->n_windows, nk = group_size(l, g) * r->n_windows;
        if (nv > INT_MAX) {
            fail(f, "group %zu: %zu floats, more than one MPI message counts", g, nv);
            break;
        }
        int tag = (int)(2 * g) % 32000;
        if (owner == r->rank) {
            for (int q = 0; q < r->size; q++) {
                if (q == owner || !needs(r, q, g, scratch)) continue;
                MPI_Isend(h[g].values, (int)nv, MPI_FLOAT, q, tag, MPI_COMM_WORLD, &req[n_req++]);
                MPI_Isend(h[g].kept, (int)nk, MPI_UINT8_T, q, tag + 1, MPI_COMM_WORLD, &req[n_req++]);
            }
        } else if (needs(r, r->rank, g, scratch)) {
            h[g].values = malloc(nv * sizeof(float));
            h[g].kept = malloc(nk);
            if (!h[g].values || !h[g].kept) {
                fail(f, "out of memory for group %zu's spectra", g);
                break;
            }
            MPI_Irecv(h[g].values, (int)nv, MPI_FLOAT, owner, tag, MPI_COMM_WORLD, &req[n_req++]);
            MPI_Irecv(h[g].kept, (int)nk, MPI_UINT8_T, owner, tag + 1, MPI_COMM_WORLD, &req[n_req++]);
        }
    }
    /* Posted messages are completed even after a local failure: the peers wait on them. */
    MPI_Waitall(n_req, req, MPI_STATUSES_IGNORE);
    free(scratch);
    free(req);
    return f->text[0] ? -1 : 0;
}

/* The needed groups' host spectra, side by side, imported as this rank's spectra. */
static int assemble(run *r, group_host *h, size_t band_len, failure *f) {
    size_t n_loc = r->local_start[r->n_needed], nw = r->n_windows;
    if (n_loc == 0) return 0;
    float *v = malloc(2 * band_len * n_loc * nw * sizeof *v);
    uint8_t *k = malloc(n_loc * nw);
    if (!v || !k) fail(f, "out of memory for %zu stations' spectra", n_loc);
    for (size_t q = 0; !f->text[0] && q < r->n_needed; q++) {
        size_t g = r->needed[q], ng = group_size(&r->layout, g), at = r->local_start[q];
        for (size_t b = 0; b < band_len; b++)
            memcpy(v + 2 * (b * n_loc + at) * nw, h[g].values + 2 * b * ng * nw, 2 * ng * nw * sizeof *v);
        memcpy(k + at * nw, h[g].kept, ng * nw);
    }
    if (!f->text[0])
        fail_status(f, sg_xcorr_spectra_import(r->plan, v, k, n_loc, nw, &r->spectra), "import");
    free(v);
    free(k);
    return f->text[0] ? -1 : 0;
}

/* 0 on success, -1 on a local failure (not yet agreed), 1 when the ranks already agreed
 * that preprocessing failed (and rank 0 reported it). */
int exchange_spectra(run *r, failure *f) {
    size_t n_groups = r->layout.n_groups;
    group_host *h = calloc(n_groups, sizeof *h);
    size_t band_len = 0;
    if (!h) fail(f, "out of memory");
    if (h) make_owned(r, h, &band_len, f);
    /* every group has an owner; agree on failures before any message is posted */
    uint64_t mine = band_len, most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    size_t any = (size_t)most;
    if (stage_failed(MPI_COMM_WORLD, f, "xcorr_network")) {
        for (size_t g = 0; h && g < n_groups; g++) {
            free(h[g].values);
            free(h[g].kept);
        }
        free(h);
        return 1; /* agreed and reported */
    }
    double t = wall();
    if (trade(r, h, any, f) == 0) assemble(r, h, any, f);
    r->times[T_EXCHANGE] += wall() - t;
    for (size_t g = 0; g < n_groups; g++) {
        free(h[g].values);
        free(h[g].kept);
    }
    free(h);
    return f->text[0] ? -1 : 0;
}
