/* See xcorr_layout.h. */
#include "xcorr_layout.h"

#include <stdlib.h>

static size_t pairs_of(const xcorr_layout *l, size_t a, size_t b) {
    size_t na = group_size(l, a), nb = group_size(l, b);
    if (a != b) return na * nb;
    return na * (na - 1) / 2 + (l->autocorrelation ? na : 0);
}

static int by_pairs_desc(const void *x, const void *y) {
    const xcorr_block *p = x, *q = y;
    if (p->n_pairs != q->n_pairs) return p->n_pairs < q->n_pairs ? 1 : -1;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : (p->b > q->b);
}

/* The layout in exactly n_groups groups; *work receives its busiest rank's work. */
static int layout_in(xcorr_layout *l, size_t n_stations, size_t n_groups, int n_ranks,
                     int autocorrelation, double *work) {
    l->n_stations = n_stations;
    l->n_groups = n_groups;
    l->autocorrelation = autocorrelation;
    l->n_blocks = n_groups * (n_groups + 1) / 2;
    l->group_start = malloc((n_groups + 1) * sizeof *l->group_start);
    l->blocks = malloc(l->n_blocks * sizeof *l->blocks);
    double *load = calloc((size_t)n_ranks, sizeof *load);
    unsigned char *has = calloc((size_t)n_ranks * n_groups, 1); /* rank r needs group g */
    if (!l->group_start || !l->blocks || !load || !has) {
        free(load);
        free(has);
        xcorr_layout_free(l);
        return -1;
    }
    for (size_t g = 0; g <= n_groups; g++) l->group_start[g] = g * n_stations / n_groups;
    size_t k = 0;
    for (size_t a = 0; a < n_groups; a++)
        for (size_t b = a; b < n_groups; b++)
            l->blocks[k++] = (xcorr_block){a, b, pairs_of(l, a, b), 0};
    qsort(l->blocks, l->n_blocks, sizeof *l->blocks, by_pairs_desc);
    *work = 0.0;
    for (size_t i = 0; i < l->n_blocks; i++) {
        xcorr_block *b = &l->blocks[i];
        int best = 0;
        double best_after = 0.0;
        for (int r = 0; r < n_ranks; r++) {
            const unsigned char *h = has + (size_t)r * n_groups;
            size_t new_days = (h[b->a] ? 0 : group_size(l, b->a)) +
                              (h[b->b] || b->b == b->a ? 0 : group_size(l, b->b));
            double after = load[r] + (double)b->n_pairs + XCORR_STATION_PAIRS * (double)new_days;
            if (r == 0 || after < best_after) best = r, best_after = after;
        }
        b->rank = best;
        load[best] = best_after;
        has[(size_t)best * n_groups + b->a] = has[(size_t)best * n_groups + b->b] = 1;
        if (best_after > *work) *work = best_after;
    }
    free(load);
    free(has);
    return 0;
}

int xcorr_layout_make(xcorr_layout *l, size_t n_stations, size_t n_groups, int n_ranks,
                      int autocorrelation) {
    double work;
    if (n_groups > 0)
        return n_groups > n_stations ? -1
                                     : layout_in(l, n_stations, n_groups, n_ranks, autocorrelation, &work);
    size_t least = 0;
    while (least < n_stations && least * (least + 1) / 2 < 2 * (size_t)n_ranks) least++;
    if (least == 0) return -1;
    size_t most = 4 * least < n_stations ? 4 * least : n_stations;
    int found = -1;
    double best = 0.0;
    for (size_t g = least; g <= most; g++) {
        xcorr_layout trial;
        if (layout_in(&trial, n_stations, g, n_ranks, autocorrelation, &work)) {
            if (found == 0) xcorr_layout_free(l);
            return -1;
        }
        if (found != 0 || work < best) {
            if (found == 0) xcorr_layout_free(l);
            *l = trial;
            best = work;
            found = 0;
        } else {
            xcorr_layout_free(&trial);
        }
    }
    return found;
}

void xcorr_layout_free(xcorr_layout *l) {
    free(l->group_start);
    free(l->blocks);
    l->group_start = NULL;
    l->blocks = NULL;
}

size_t rank_groups(const xcorr_layout *l, int r, int n_ranks, int owned, size_t *groups) {
    size_t n = 0;
    for (size_t g = 0; g < l->n_groups; g++) {
        int use = 0;
        if (owned) {
            use = (int)(g % (size_t)n_ranks) == r;
        } else {
            for (size_t i = 0; i < l->n_blocks && !use; i++) {
                const xcorr_block *b = &l->blocks[i];
                use = b->rank == r && (b->a == g || b->b == g);
            }
        }
        if (use) groups[n++] = g;
    }
    return n;
}
