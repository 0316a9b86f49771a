/* The file wavepacket_volume writes (one per run, every rank writing its own tiles with
 * MPI-IO). Little-endian throughout.
 *
 *   offset 0              header (512 bytes, below)
 *   tiles_offset          n_tiles records of tile_bytes each, in tile order (axis 1
 *                         fastest, then 2, then 3): tile t's coefficients on its window of
 *                         the common grid, n_tile_coefficients complex values as interleaved
 *                         (re, im) float32, in the order sg_wavepacket_volume_forward_tile_f32
 *                         writes them; tile t starts at tiles_offset + t * tile_bytes
 *
 * The volume's coefficients on the common grid (sg_wavepacket_volume_forward_f32's, bit for
 * bit) are the tiles added into zeros in tile order with sg_wavepacket_volume_add_tile_f32,
 * on a volume created with the header's shapes and layout options.
 *
 * `complete` is 0 while the ranks write and set to 1 by rank 0 once every rank's tiles are
 * in, before the file gets its final name (it is written as "<name>.partial"): a reader
 * refuses a file whose flag is 0. */
#ifndef SEISGPU_WAVEPACKET_FILE_H
#define SEISGPU_WAVEPACKET_FILE_H

#include <stdint.h>

#define WAVEPACKET_FILE_MAGIC "SGWPVOL"
#define WAVEPACKET_FILE_VERSION 1u
#define WAVEPACKET_HEADER_BYTES 512
/* Byte offset of the `complete` flag (rank 0 writes it last). */
#define WAVEPACKET_COMPLETE_OFFSET 12

typedef struct {
    char magic[8];                /* "SGWPVOL" and a NUL */
    uint32_t version;             /* 1 */
    uint32_t complete;            /* 1 once every rank's tiles are written */
    uint32_t dim;                 /* 2 or 3 */
    uint32_t real_bytes;          /* 4: float32 */
    uint64_t volume_shape[3];     /* samples per axis, axis 1 fastest (1: unused axis) */
    uint64_t tile_shape[3];       /* (1: unused axis) */
    uint64_t tiles[3];            /* tiles per axis */
    uint64_t n_tiles;
    uint64_t n_tile_samples;
    uint64_t n_tile_coefficients; /* complex values per tile */
    uint64_t n_coefficients;      /* complex values on the common grid */
    uint64_t tiles_offset;        /* bytes from the start of the file */
    uint64_t tile_bytes;          /* 8 * n_tile_coefficients */
    uint64_t directions, levels;  /* sg_wavepacket_layout_options */
    double alpha, beta, cutoff, tolerance;
    char reserved[WAVEPACKET_HEADER_BYTES - 8 - 4 * 4 - 17 * 8 - 4 * 8];
} wavepacket_file_header;

_Static_assert(sizeof(wavepacket_file_header) == WAVEPACKET_HEADER_BYTES, "512-byte header");

#endif
