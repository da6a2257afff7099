/* csr_layout.cuh: the CSR plan layouts' state and what each layout's file provides (column panels, reordering, compressed indices). */
#ifndef NZI_CSR_LAYOUT_CUH
#define NZI_CSR_LAYOUT_CUH

#include "cuda_internal.h"

/* spmv_csr_layout.cu: the entry points and why the layouts exist; spmv_csr_layout_build.cu:
 * column panels and reordering built on the device; spmv_csr_segments.cu: compressed indices
 * (16-bit column segments), which CSR-vector reads. */

#define LAYOUT_BLOCK 256
#define LAYOUT_MAX_PANELS 8
/* A panel's slice of x: at most this fraction of L2, so x's slice, the lines of y being written
 * and the streaming matrix lines share L2 with room to spare. H100 (50 MB L2), random 4M x 16
 * f64 (x 32 MB), ncu with flushed caches: 2 panels 1.35 GB DRAM read / 870 us, 3 panels 1.23 GB /
 * 868 us, 4 panels 1.13 GB / 807 us (the issue's simpler probe kernel lost with four). */
#define LAYOUT_PANEL_L2_DIVISOR 6

typedef struct nzi_layout_state {
    unsigned layout;                                /* the one NZI_PLAN_LAYOUTS flag */
    int parts;                                      /* panels (1 for the other layouts) */
    nz_matrix_t views[LAYOUT_MAX_PANELS];           /* A's shape with the plan's arrays */
    nz_spmv_plan_t inner[LAYOUT_MAX_PANELS];        /* the algorithm's plan on each view */
    bool inner_ready[LAYOUT_MAX_PANELS];
    bool owns_arrays[LAYOUT_MAX_PANELS];            /* views[p]'s device arrays are the plan's */
    int32_t *perm;                                  /* reorder: new column -> old column */
    void *x_perm;                                   /* reorder: x in the new column order */
    int32_t *seg_base;                              /* compress: per row (width < 32) or per
                                                       32 nonzeros; -1: 32-bit indices */
    uint16_t *seg_offsets;                          /* compress: column - base */
    int64_t narrow_nnz;                             /* compress: nonzeros in 16 bits */
    int width;                                      /* compress: CSR-vector's lanes per row */
    int32_t *row_indices;                           /* reorder, csr/atomic: each nonzero's row */
    int32_t read_cols;                              /* reorder: columns some nonzero reads (the
                                                       first of the new order; the gather's) */
} nzi_layout_state_t;

/* ---- column panels and reordering (spmv_csr_layout_build.cu) ------------------------------- */

/* The panel count for A: enough panels that one panel's slice of x fits in L2 / 6 (the context's
 * tunables.column_panels overrides, for sweeps and tests), at most LAYOUT_MAX_PANELS. */
int nzi_layout_panel_count(const nz_context_t *ctx, const nz_matrix_t *A);
/* st->views[0 .. parts) become A's column panels (arrays owned by the plan); *bytes: their size. */
nz_status_t nzi_layout_panels_build(nz_context_t *ctx, const nz_matrix_t *A, nzi_layout_state_t *st,
                                    int parts, size_t *bytes);
/* st->perm (new -> old column, by descending column count), st->views[0]'s renumbered column
 * indices, st->x_perm and st->read_cols; *bytes: their size. */
nz_status_t nzi_layout_reorder_build(nz_context_t *ctx, const nz_matrix_t *A,
                                     nzi_layout_state_t *st, size_t *bytes);
/* st->row_indices[k] = the row of nonzero k (one warp per row); *bytes: their size. */
nz_status_t nzi_layout_rows_build(nz_context_t *ctx, const nz_matrix_t *A, nzi_layout_state_t *st,
                                  size_t *bytes);
/* st->x_perm[0 .. st->read_cols) = x in the new column order (the rest is never read; launched
 * on the context's stream, checked). */
nz_status_t nzi_layout_reorder_gather(nz_context_t *ctx, const nz_matrix_t *A,
                                      const nzi_layout_state_t *st, const void *x);

/* ---- compressed column indices (spmv_csr_segments.cu) -------------------------------------- */

/* st->seg_base, st->seg_offsets and st->narrow_nnz for A and st->width; *bytes: their size. */
nz_status_t nzi_layout_compress_build(nz_context_t *ctx, const nz_matrix_t *A,
                                      nzi_layout_state_t *st, size_t *bytes);
/* y = alpha A x + beta y through the compressed indices of plan->state (CSR-vector, its width). */
nz_status_t nzi_layout_segments_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                     double beta, void *y);

#endif /* NZI_CSR_LAYOUT_CUH */
