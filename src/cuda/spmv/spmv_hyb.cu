/* spmv_hyb.cu: HYB SpMV on the GPU: the ELL part one thread per row, the COO remainder by segmented reduction or atomics. */
#include "cuda_internal.h"

/*
 * HYB (Bell & Garland, SC09, section 3.4): the first ell.width entries of every row in ELL, the
 * rest of the long rows in COO sorted by row. Two kernels on the same stream:
 *   1. the ELL kernel of spmv_ell.cu writes y = alpha E x + beta y for every row (one thread per
 *      row, coalesced column-major loads, padding skipped);
 *   2. the COO kernels of spmv_coo.cu add alpha C x to the rows that have a remainder:
 *      NZ_ALG_SEGMENTED: a warp per segment of 256 entries, segmented scan by row, rows that
 *        cross segments finished by a second kernel in a fixed order; no floating-point atomics,
 *        so the whole product is bitwise reproducible;
 *      NZ_ALG_ATOMIC: the same per-segment reduction, then one atomicAdd per row and segment;
 *        not reproducible run to run (plan->reproducible = 0).
 * Each row's result is (ELL sum) then plus (COO sum): the order is fixed by the format.
 * Cost: the ELL pass (rows x width entries) plus one pass over the COO entries; the segmented
 * plan holds 2 x (coo_nnz / 256) partial sums and the list of rows crossing segments.
 */

static nz_status_t hyb_setup(nz_spmv_plan_t *plan, bool segmented) {
    const nz_matrix_t *A = plan->A;
    const nzi_hyb_t *h = &A->host.hyb;
    plan->vector_width = 1;
    plan->reproducible = segmented || h->coo_nnz == 0 ? 1 : 0;
    return nzi_cuda_coo_prepare(plan->ctx, &h->coo, h->coo_nnz, A->value_type, segmented,
                                &plan->state, &plan->workspace_bytes);
}

static nz_status_t hyb_atomic_setup(nz_spmv_plan_t *plan) { return hyb_setup(plan, false); }
static nz_status_t hyb_segmented_setup(nz_spmv_plan_t *plan) { return hyb_setup(plan, true); }

static nz_status_t hyb_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                               double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    const nzi_hyb_t *h = &A->host.hyb;
    NZI_TRY(nzi_cuda_ell_launch(plan->ctx, A->value_type, A->rows, &h->ell, alpha, x, beta, y));
    return nzi_cuda_coo_accumulate(plan->ctx, plan->state, &h->coo, h->coo_nnz, A->value_type,
                                   alpha, x, y);
}

/* The plan state is the COO part's workspace: released as a COO plan's. */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_hyb_atomic_ops = {
    NZ_ALG_ATOMIC, hyb_atomic_setup, hyb_execute, nzi_cuda_coo_plan_release};
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_hyb_segmented_ops = {
    NZ_ALG_SEGMENTED, hyb_segmented_setup, hyb_execute, nzi_cuda_coo_plan_release};
