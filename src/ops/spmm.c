/* spmm.c: public SpMM entry points (Y = alpha op(A) X + beta Y): check arguments once, resolve the algorithm, call a backend. */
#include "nzi.h"
#include "backend.h"
#include "ops_common.h"
#include "plan_internal.h"

#include <string.h>

nz_status_t nz_spmm_plan_create(nz_context_t *ctx, nz_spmm_plan_t **plan, const nz_matrix_t *A,
                                nz_operation_t op, int64_t k, nz_dense_layout_t layout,
                                nz_alg_t alg, unsigned flags) {
    nz_status_t status;
    nz_spmm_plan_t *P = NULL;
    const char *what = "nz_spmm_plan_create";
    NZI_TRY(nzi_plan_check_start(ctx, plan, A, op, what));
    if (k < 1 || k > NZI_SPMM_MAX_K)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: k = %lld right-hand sides, expected 1 .. %d", what, (long long)k,
                         NZI_SPMM_MAX_K);
    if (layout != NZ_COL_MAJOR && layout != NZ_ROW_MAJOR)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: invalid dense layout %d", what,
                         (int)layout);
    if (flags & ~(NZ_PLAN_DETERMINISTIC | NZ_PLAN_TUNE | NZ_PLAN_MIXED))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", what, flags);
    /* AUTO: the planner's choice (CPU serial for small work, else row-parallel; GPU the CSR
     * vector or SELL slot kernel) */
    const nzi_backend_t *table = nzi_backend_of(A);
    if (alg == NZ_ALG_AUTO) alg = nzi_plan_spmm_alg(table, A, k);
    if (!table->spmm_supports(A->format, alg))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: SpMM algorithm %s is not available for %s on the %s (CPU: serial or "
                         "parallel, any format; GPU: vector for csr, scalar for sell)",
                         what, nz_alg_name(alg), nz_format_name(A->format), table->name);

    P = (nz_spmm_plan_t *)nzi_calloc(ctx, 1, sizeof *P);
    if (P == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate a plan", what);
    P->magic = NZI_SPMM_PLAN_MAGIC;
    P->ctx = ctx;
    P->A = A;
    P->op = op;
    P->k = k;
    P->layout = layout;
    P->alg = alg;
    P->flags = flags;
    P->backend = table->id;
    P->ops = table;
    P->reproducible = 1;
    double t0 = nzi_wtime();
    NZI_CHECK(table->spmm_plan_setup(P));
    P->plan_seconds = nzi_wtime() - t0;
    *plan = P;
    return NZ_SUCCESS;
cleanup:
    P->magic = NZI_DEAD_MAGIC;
    nzi_free(ctx, P);
    return status;
}

/* Leading dimension ld of a dense rows x k operand in `layout`: at least k (row-major) or rows
 * (column-major), and at least 1. The operand spans (major - 1) ld + minor elements (major =
 * rows, minor = k for row-major; the other way round for column-major), and *bytes = that span
 * times the value size vs. The span is computed with overflow checks and its bytes must fit
 * ptrdiff_t and not run past the end of the address space from `data`: the kernels (CPU and GPU)
 * address element (r, c) as data + r ld + c, so an ld whose byte offsets wrap would land on other
 * memory (ld = 2^61 - 1 with 8-byte values put column 1 at Y[-1], ld = 2^61 on column 0). */
static nz_status_t check_dense(nz_context_t *ctx, const char *name, const void *data, int64_t rows,
                               int64_t k, nz_dense_layout_t layout, int64_t ld, size_t vs,
                               size_t *bytes) {
    const bool row_major = layout == NZ_ROW_MAJOR;
    const int64_t minimum = row_major ? k : (rows > 1 ? rows : 1);
    const int64_t major = row_major ? rows : k, minor = row_major ? k : rows;
    int64_t gaps, span;
    *bytes = 0;
    if (ld < minimum)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_spmm_execute: ld%s = %lld is below the minimum %lld for a %lld x %lld "
                         "%s-major %s", name, (long long)ld, (long long)minimum, (long long)rows,
                         (long long)k, row_major ? "row" : "column", name);
    if (rows == 0) return NZ_SUCCESS;
    if (data == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_spmm_execute: %s is NULL", name);
    if (nzi_mul_overflow_i64(major - 1, ld, &gaps) || nzi_add_overflow_i64(gaps, minor, &span) ||
        (uint64_t)span > (uint64_t)PTRDIFF_MAX / vs ||
        (uintptr_t)data > UINTPTR_MAX - (uintptr_t)span * vs)
        return nzi_error(ctx, NZ_ERR_OVERFLOW,
                         "nz_spmm_execute: ld%s = %lld: a %lld x %lld %s-major %s of %zu-byte "
                         "values would span (%lld - 1) x %lld + %lld elements, beyond the address "
                         "space (element offsets in bytes must fit ptrdiff_t)",
                         name, (long long)ld, (long long)rows, (long long)k,
                         row_major ? "row" : "column", name, vs, (long long)major, (long long)ld,
                         (long long)minor);
    *bytes = (size_t)span * vs;
    return NZ_SUCCESS;
}

nz_status_t nz_spmm_execute(nz_spmm_plan_t *plan, double alpha, const void *X, int64_t ldx,
                            double beta, void *Y, int64_t ldy) {
    if (plan == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (plan->magic != NZI_SPMM_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    int64_t xrows, yrows;
    NZI_TRY(nzi_plan_operand_rows(ctx, A, plan->op, "nz_spmm_execute", &xrows, &yrows));
    const size_t vs = nzi_value_size(A->value_type);
    size_t x_bytes, y_bytes;
    NZI_TRY(check_dense(ctx, "X", X, xrows, plan->k, plan->layout, ldx, vs, &x_bytes));
    NZI_TRY(check_dense(ctx, "Y", Y, yrows, plan->k, plan->layout, ldy, vs, &y_bytes));
    if (nzi_ranges_overlap(X, x_bytes, Y, y_bytes))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_spmm_execute: X and Y overlap in memory; use separate arrays");
    return plan->ops->spmm_execute(plan, alpha, X, ldx, beta, Y, ldy);
}

nz_status_t nz_spmm_plan_destroy(nz_spmm_plan_t **plan) {
    if (plan == NULL || *plan == NULL) return NZ_SUCCESS;
    nz_spmm_plan_t *P = *plan;
    if (P->magic != NZI_SPMM_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    P->ops->spmm_plan_release(P);
    P->magic = NZI_DEAD_MAGIC;
    nzi_free(P->ctx, P);
    *plan = NULL;
    return NZ_SUCCESS;
}

nz_status_t nz_spmm_plan_info(const nz_spmm_plan_t *plan, nz_spmm_plan_info_t *info) {
    if (plan == NULL || info == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (plan->magic != NZI_SPMM_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    memset(info, 0, sizeof *info);
    info->format = plan->A->format;
    info->alg = plan->alg;
    info->backend = plan->backend;
    info->op = plan->op;
    info->k = plan->k;
    info->layout = plan->layout;
    info->reproducible = plan->reproducible;
    info->vector_width = plan->vector_width;
    info->plan_seconds = plan->plan_seconds;
    info->workspace_bytes = plan->workspace_bytes;
    return NZ_SUCCESS;
}
