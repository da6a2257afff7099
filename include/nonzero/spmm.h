/* nonzero/spmm.h: SpMM plans and execution, many right-hand sides. Part of <nonzero.h>. */
#ifndef NONZERO_SPMM_H
#define NONZERO_SPMM_H

#include "nonzero/core.h"
#include "nonzero/matrix.h"
#include "nonzero/spmv.h" /* nz_operation_t */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Many right-hand sides: Y = alpha op(A) X + beta Y                                           */
/* ------------------------------------------------------------------------------------------ */

/* Layout of the dense blocks X and Y of an SpMM: columns contiguous or rows contiguous. */
typedef enum nz_dense_layout { NZ_COL_MAJOR = 0, NZ_ROW_MAJOR = 1 } nz_dense_layout_t;

/* An SpMM plan: Y = alpha op(A) X + beta Y for k right-hand sides (opaque). */
typedef struct nz_spmm_plan nz_spmm_plan_t;

/* What an SpMM plan chose (nz_spmm_plan_info). */
typedef struct nz_spmm_plan_info {
    nz_format_t format;        /* A's format */
    nz_alg_t alg;              /* the algorithm actually chosen */
    nz_backend_t backend;
    nz_operation_t op;
    int64_t k;                 /* right-hand sides */
    nz_dense_layout_t layout;  /* layout of X and Y */
    int reproducible;          /* 1 if results are bitwise identical run to run */
    int vector_width;          /* lanes per row where it applies (GPU vector) */
    double plan_seconds;       /* preprocessing time */
    size_t workspace_bytes;    /* bytes the plan holds beyond the matrix */
} nz_spmm_plan_info_t;

/* Plan Y = alpha op(A) X + beta Y for X with k columns (1..64) in the given layout; X is
 * (op(A) cols) x k and Y (op(A) rows) x k with leading dimensions ldx, ldy (elements). A host
 * matrix runs on the CPU, a device matrix on the GPU (CSR and SELL). At execution, X and Y must
 * not overlap (the byte ranges from their first to their last element): NZ_ERR_INVALID_ARGUMENT. */
nz_status_t nz_spmm_plan_create(nz_context_t *ctx, nz_spmm_plan_t **plan, const nz_matrix_t *A,
                                nz_operation_t op, int64_t k, nz_dense_layout_t layout,
                                nz_alg_t alg, unsigned flags);
nz_status_t nz_spmm_execute(nz_spmm_plan_t *plan, double alpha, const void *X, int64_t ldx,
                            double beta, void *Y, int64_t ldy);
nz_status_t nz_spmm_plan_destroy(nz_spmm_plan_t **plan);
/* Algorithms: CPU serial / parallel for any host format (non-CSR formats through a CSR copy made
 * by the plan; op T through A^T built by the plan); GPU vector for csr (a group of lanes per row:
 * lanes over the right-hand sides for row-major X, over the row's nonzeros with a chunk of
 * columns in registers for column-major X; op T through a device transpose) and scalar for sell
 * (a thread per slot, op N only). NZ_ALG_AUTO picks these (on the CPU serial below 32768
 * multiply-adds, nnz x k: the parallel kernel runs such products on one thread anyway).
 * NZ_PLAN_MIXED as for SpMV. All are bitwise reproducible. ld = minimal plus 0 or more; beta == 0 never reads Y.
 * An ld whose last element's byte offset does not fit ptrdiff_t (or runs past the end of the
 * address space) is NZ_ERR_OVERFLOW: such offsets would wrap onto other memory. */
nz_status_t nz_spmm_plan_info(const nz_spmm_plan_t *plan, nz_spmm_plan_info_t *info);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_SPMM_H */
