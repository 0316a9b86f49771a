/* How xcorr_network shares the pairs of n stations among ranks: the stations in G groups
 * of consecutive stations, the upper triangle of pairs in G(G+1)/2 blocks (a, b), a <= b
 * (diagonal blocks a == b hold the pairs inside group a), dealt to ranks largest first,
 * each to the rank whose work it raises least: its pairs, and the station-days it must
 * then preprocess, each counted as XCORR_STATION_PAIRS pairs. Every rank computes the
 * same layout. */
#ifndef SEISGPU_XCORR_LAYOUT_H
#define SEISGPU_XCORR_LAYOUT_H

#include <stddef.h>

typedef struct {
    size_t a, b;     /* station groups */
    size_t n_pairs;
    int rank;        /* the rank that correlates it */
} xcorr_block;

typedef struct {
    size_t n_stations, n_groups;
    size_t *group_start; /* n_groups + 1: group g is stations group_start[g] .. [g + 1] */
    size_t n_blocks;
    xcorr_block *blocks;
    int autocorrelation;
} xcorr_layout;

/* A GPU preprocesses a station-day in about the time it correlates this many pairs
 * (H200: 0.05 ms against 1.6 µs, host to host). */
#define XCORR_STATION_PAIRS 30.0

/* The layout of n_stations in n_groups groups over n_ranks ranks (n_groups 0: of the
 * counts from the least with at least two blocks per rank to four times that, at most one
 * group per station, the one whose busiest rank has the least work). 0 on success. */
int xcorr_layout_make(xcorr_layout *l, size_t n_stations, size_t n_groups, int n_ranks,
                      int autocorrelation);
void xcorr_layout_free(xcorr_layout *l);

/* Stations of group g. */
static inline size_t group_size(const xcorr_layout *l, size_t g) {
    return l->group_start[g + 1] - l->group_start[g];
}

/* The groups rank r's blocks need, ascending, into `groups` (n_groups entries); returns
 * their count. With `owned`, the groups rank r owns instead (g mod n_ranks == r). */
size_t rank_groups(const xcorr_layout *l, int r, int n_ranks, int owned, size_t *groups);

#endif
