/* spmv_cuda.cu: the CUDA SpMV dispatch: the (format, algorithm) table, empty matrices, y = beta y. */
#include "cuda_internal.h"

/* spmv_transpose.cu: CSR atomic scatter, and op(A) = A^T for every CSR algorithm. */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_atomic_ops;
nz_status_t nzi_cuda_transpose_setup(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops);
nz_status_t nzi_cuda_transpose_execute(const nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops,
                                       double alpha, const void *x, double beta, void *y);
void nzi_cuda_transpose_release(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops);
/* spmv_csr_layout.cu: column panels, reordering, compressed indices (NZI_PLAN_LAYOUTS); setup is
 * called for non-empty csr matrices with op N only (checked here, in nz_cuda_spmv_plan_setup). */
nz_status_t nzi_cuda_layout_setup(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops);
nz_status_t nzi_cuda_layout_execute(const nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops,
                                    double alpha, const void *x, double beta, void *y);
void nzi_cuda_layout_release(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops);

/* Every (format, algorithm) pair the backend has, with
 * whether its op = N product is bitwise reproducible run to run (op = T runs the same kernels on
 * a cached A^T, except the atomic scatter, which is never reproducible). The one list of pairs:
 * the planner asks it through nz_cuda_spmv_supports / nz_cuda_spmv_reproducible. A new
 * algorithm is one line here. */
static const struct {
    nz_format_t format;
    const nzi_cuda_spmv_ops_t *ops;
    int reproducible;
} spmv_table[] = {
    {NZ_FORMAT_CSR, &nzi_cuda_csr_scalar_ops, 1},
    {NZ_FORMAT_CSR, &nzi_cuda_csr_vector_ops, 1},
    {NZ_FORMAT_CSR, &nzi_cuda_csr_light_vector_ops, 1},
    {NZ_FORMAT_CSR, &nzi_cuda_csr_light_warp_ops, 1},
    {NZ_FORMAT_CSR, &nzi_cuda_csr_ipcsr_ops, 1},
    {NZ_FORMAT_CSR, &nzi_cuda_csr_adaptive_ops, 1},
    {NZ_FORMAT_CSR, &nzi_cuda_csr_merge_ops, 1},
    {NZ_FORMAT_CSR, &nzi_cuda_csr_split_ops, 1},
    {NZ_FORMAT_CSR, &nzi_cuda_csr_atomic_ops, 0},
    {NZ_FORMAT_CSR, &nzi_cuda_csr_tiles_ops, 0},
    {NZ_FORMAT_COO, &nzi_cuda_coo_atomic_ops, 0},
    {NZ_FORMAT_COO, &nzi_cuda_coo_segmented_ops, 1},
    {NZ_FORMAT_ELL, &nzi_cuda_ell_scalar_ops, 1},
    {NZ_FORMAT_SELL, &nzi_cuda_sell_scalar_ops, 1},
    {NZ_FORMAT_HYB, &nzi_cuda_hyb_atomic_ops, 0},
    {NZ_FORMAT_HYB, &nzi_cuda_hyb_segmented_ops, 1},
    {NZ_FORMAT_BSR, &nzi_cuda_bsr_row_ops, 1},
    {NZ_FORMAT_BSR, &nzi_cuda_bsr_col_ops, 1},
    {NZ_FORMAT_DIA, &nzi_cuda_dia_scalar_ops, 1},
};
#define SPMV_TABLE_SIZE ((int)(sizeof spmv_table / sizeof spmv_table[0]))

/* The table's index of (format, alg), or -1. Called at plan setup only: a plan keeps the ops. */
static int find_pair(nz_format_t format, nz_alg_t alg) {
    for (int i = 0; i < SPMV_TABLE_SIZE; i++)
        if (spmv_table[i].format == format && spmv_table[i].ops->alg == alg) return i;
    return -1;
}

int64_t nzi_cuda_grid_blocks(const nzi_cuda_state_t *cs, int block, int waves, int64_t needed) {
    int per_sm = cs->max_threads_per_sm / block;
    if (per_sm < 1) per_sm = 1;
    int64_t blocks = (int64_t)cs->sm_count * per_sm * (waves > 0 ? waves : 1);
    if (needed > 0 && blocks > needed) blocks = needed;
    return blocks > 0 ? blocks : 1;
}

/* ---- y = beta y ------------------------------------------------------------------------------ */

#define NZI_SCALE_BLOCK 256

/* Grid-stride, one element per thread per step (beta != 0; beta == 0 is a memset, y not read). */
template <typename Value>
__global__ void __launch_bounds__(NZI_SCALE_BLOCK)
    scale_kernel(int64_t n, Value beta, Value *__restrict__ y) {
    const int64_t stride = (int64_t)gridDim.x * NZI_SCALE_BLOCK;
    for (int64_t i = (int64_t)blockIdx.x * NZI_SCALE_BLOCK + threadIdx.x; i < n; i += stride)
        y[i] = beta * y[i];
}

template <typename Value>
static nz_status_t scale_launch(nz_context_t *ctx, int64_t n, double beta, void *y) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    int64_t blocks = nzi_cuda_grid_blocks(cs, NZI_SCALE_BLOCK, 2,
                                          (n + NZI_SCALE_BLOCK - 1) / NZI_SCALE_BLOCK);
    if (beta == 0.0) /* zero bits are +0.0; the runtime's memset writes 16 bytes a store */
        NZI_CUDA_TRY(ctx, cudaMemsetAsync(y, 0, (size_t)n * sizeof(Value), cs->stream));
    else
        scale_kernel<Value><<<(unsigned)blocks, NZI_SCALE_BLOCK, 0, cs->stream>>>(
            n, (Value)beta, (Value *)y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

nz_status_t nzi_cuda_scale(nz_context_t *ctx, nz_value_type_t value_type, int64_t n, double beta,
                           void *y) {
    if (n <= 0 || beta == 1.0) return NZ_SUCCESS;
    return value_type == NZ_F32 ? scale_launch<float>(ctx, n, beta, y)
                                : scale_launch<double>(ctx, n, beta, y);
}

/* ---- the backend entry points --------------------------------------------------------------- */

bool nz_cuda_spmv_supports(nz_format_t format, nz_alg_t alg) { return find_pair(format, alg) >= 0; }

int nz_cuda_spmv_reproducible(nz_format_t format, nz_alg_t alg, nz_operation_t op) {
    const int i = find_pair(format, alg);
    if (i < 0) return -1;
    if (op == NZ_OP_T && alg == NZ_ALG_ATOMIC) return 0;
    return spmv_table[i].reproducible;
}

/* Checks what no algorithm supports yet, then lets the family do its preprocessing. Matrices
 * without rows or nonzeros need none: execute reduces them to y = beta y. */
nz_status_t nz_cuda_spmv_plan_setup(nz_spmv_plan_t *plan) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const int pair = find_pair(A->format, plan->alg);
    const nzi_cuda_spmv_ops_t *ops = pair >= 0 ? spmv_table[pair].ops : NULL;
    const char *what = "nz_spmv_plan_create";

    plan->impl = ops;
    plan->state = NULL;
    plan->workspace_bytes = 0;
    plan->vector_width = 0;
    plan->vector_warps = 0;
    plan->reproducible = 1;
    if (ops == NULL)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: algorithm %s is not available for %s on the GPU",
                         what, nz_alg_name(plan->alg), nz_format_name(A->format));
    if (A->location != NZ_DEVICE)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION, "%s: matrix A is not on the device", what);
    NZI_TRY(nzi_cuda_format_plan_check(plan)); /* non-CSR formats: op, flags, C / b limits */
    if ((plan->flags & NZ_PLAN_MIXED) &&
        !(A->format == NZ_FORMAT_CSR && (plan->alg == NZ_ALG_SCALAR || plan->alg == NZ_ALG_VECTOR ||
                                         plan->alg == NZ_ALG_MERGE || plan->alg == NZ_ALG_SPLIT)))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: NZ_PLAN_MIXED (single storage, double accumulation) is implemented "
                         "on the GPU for csr with the scalar, vector, merge and split algorithms, not "
                         "%s with %s", what, nz_format_name(A->format), nz_alg_name(plan->alg));
    NZI_TRY(nzi_cuda_enter(ctx));
    plan->layout_parts = 1;
    if ((plan->flags & NZI_PLAN_LAYOUTS) && (A->format != NZ_FORMAT_CSR || plan->op != NZ_OP_N))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: the plan layouts (column panels, "
                         "reordering, compressed indices) are implemented for csr with op N, not "
                         "%s%s", what, nz_format_name(A->format),
                         plan->op != NZ_OP_N ? " with op T" : "");
    if (plan->op == NZ_OP_T) {
        NZI_TRY(nzi_cuda_transpose_setup(plan, ops));
    } else {
        if (A->rows == 0 || A->nnz == 0) return NZ_SUCCESS;
        if (plan->flags & NZI_PLAN_LAYOUTS)
            NZI_TRY(nzi_cuda_layout_setup(plan, ops));
        else
            NZI_TRY(ops->setup(plan));
    }
    if ((plan->flags & NZ_PLAN_DETERMINISTIC) && !plan->reproducible) {
        if (plan->state != NULL && plan->op == NZ_OP_T)
            nzi_cuda_transpose_release(plan, ops);
        else if (plan->state != NULL && (plan->flags & NZI_PLAN_LAYOUTS))
            nzi_cuda_layout_release(plan, ops);
        else if (plan->state != NULL)
            ops->release(plan);
        plan->state = NULL;
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: algorithm %s is not bitwise reproducible, but NZ_PLAN_DETERMINISTIC "
                         "was asked for", what, nz_alg_name(plan->alg));
    }
    return NZ_SUCCESS;
}

/* BLAS semantics: alpha == 0 or an empty A reduce to y = beta y (x is not read); beta == 0 never
 * reads y (each family's kernels take beta == 0 as a template flag). */
nz_status_t nz_cuda_spmv_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                 double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const nzi_cuda_spmv_ops_t *ops = (const nzi_cuda_spmv_ops_t *)plan->impl;
    if (ops == NULL)
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "nz_spmv_execute: the plan is corrupted");
    NZI_TRY(nzi_cuda_enter(ctx));
    if (plan->op == NZ_OP_T) return nzi_cuda_transpose_execute(plan, ops, alpha, x, beta, y);
    if (A->rows == 0) return NZ_SUCCESS;
    if (A->nnz == 0 || alpha == 0.0) return nzi_cuda_scale(ctx, A->value_type, A->rows, beta, y);
    if (plan->flags & NZI_PLAN_LAYOUTS) return nzi_cuda_layout_execute(plan, ops, alpha, x, beta, y);
    return ops->execute(plan, alpha, x, beta, y);
}

void nz_cuda_spmv_plan_release(nz_spmv_plan_t *plan) {
    if (plan->state == NULL) return;
    const nzi_cuda_spmv_ops_t *ops = (const nzi_cuda_spmv_ops_t *)plan->impl;
    if (ops != NULL) {
        if (plan->ctx->cuda != NULL) (void)cudaSetDevice(plan->ctx->device);
        if (plan->op == NZ_OP_T)
            nzi_cuda_transpose_release(plan, ops);
        else if (plan->flags & NZI_PLAN_LAYOUTS)
            nzi_cuda_layout_release(plan, ops);
        else
            ops->release(plan);
    }
    plan->state = NULL;
}
