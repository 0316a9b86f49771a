/* wavepacket_volume's parts: its options and setup (wavepacket_volume.c), the tiles'
 * forward into the file (wavepacket_write.c) and the check against one context
 * (wavepacket_check.c), and the state of a run that they share. */
#ifndef SEISGPU_WAVEPACKET_VOLUME_H
#define SEISGPU_WAVEPACKET_VOLUME_H

#include <stddef.h>

#include "mpi_common.h"
#include "wavepacket_file.h"

typedef struct {
    int dim;
    size_t volume[3], tile[3]; /* 1 for an unused axis */
    int round_robin;           /* tiles dealt in turn (1) or in blocks (0) */
    int backend;               /* SG_BACKEND_* */
    int check;                 /* compare with one context on rank 0 */
    int bad_rank;              /* -1, or a rank whose first tile gets a NaN sample */
    int quiet;
    const char *out;           /* NULL: the coefficients are not kept (timing only) */
    sg_wavepacket_layout_options options;
} config;

enum { T_PLAN, T_FORWARD, T_WRITE, T_CHECK, T_TOTAL, N_TIMES };

typedef struct {
    config cfg;
    int rank, size;
    sg_context *ctx;
    sg_wavepacket_volume *volume;
    wavepacket_file_header h; /* the file's header, whether or not a file is written */
    size_t n_mine;            /* tiles this rank transforms */
    double times[N_TIMES];
} run;

/* Parses the command line into `c`. */
int parse_args(int argc, char **argv, config *c, failure *f);

/* Whether rank r of `size` transforms tile t of n (in blocks: ranks take consecutive runs
 * of tiles, the first n mod size ranks one more; in turn: t mod size). */
int tile_is_mine(const config *c, size_t t, size_t n, int r, int size);

/* Tile t's samples of the synthetic volume (zero past the volume's end). */
void synthetic_tile(const run *r, size_t t, float *tile);

/* The whole synthetic volume (n_samples values). */
void synthetic_volume(const run *r, float *data);

/* This rank's tiles forward, each written into the file as it is made (none with no
 * output); the file marked complete once every rank's are in. 1 on every rank if any
 * failed (the partial file is removed then). */
int forward_tiles(run *r, failure *f);

/* The tiles read back from the file and added in tile order, the tiles' adjoints made on
 * their ranks and gathered, both compared on rank 0 with one context's volume calls, and
 * the inverse's error. 1 on every rank if any failed or differed. */
int check_against_one_context(run *r, failure *f);

#endif
