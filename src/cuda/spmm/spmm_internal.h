/* spmm_internal.h: what the GPU SpMM's kernels (spmm.cu) and its plan (spmm_plan.cu) share. */
#ifndef NZI_SPMM_INTERNAL_H
#define NZI_SPMM_INTERNAL_H

#include "cuda_internal.h"

/* 256 threads = 8 warps: as for the SpMV kernels, 8 blocks fill an SM of 2048 threads. */
#define SPMM_BLOCK 256
#define SPMM_WARPS (SPMM_BLOCK / 32)
/* Grid-stride grids of this many times what the device holds at once, to smooth the tail. */
#define SPMM_WAVES 4

typedef struct spmm_cuda_state {
    nz_matrix_t *AT;        /* op T: A^T on the device, owned; else NULL */
    const nz_matrix_t *run; /* the matrix the kernels run on (A or AT) */
    int column_lanes;       /* L: lanes over columns (row-major kernels) */
    int nonzero_lanes;      /* N (row-major) or V (column-major): lanes over a row's nonzeros */
    int chunk;              /* CC: columns per thread (column-major kernels) */
    int64_t long_min;       /* rows of at least this many nonzeros are cut into pieces (0: none) */
    int64_t piece_len;      /* nonzeros per piece */
    int64_t num_long;       /* how many rows that is (0: the piece kernels never run) */
    int64_t num_pieces;     /* pieces of all long rows */
    int32_t *long_rows;     /* device, num_long: the long rows, ascending */
    int64_t *first_piece;   /* device, num_long + 1: long row i owns pieces [first_piece[i], [i + 1]) */
    int32_t *piece_rows;    /* device, num_pieces: the row of each piece */
    int64_t *piece_starts;  /* device, num_pieces: its first nonzero */
    void *partials;         /* device, num_pieces x L CPL accumulators (Accum) */
} spmm_cuda_state_t;

#endif /* NZI_SPMM_INTERNAL_H */
