/* spsv.c: public sparse triangular solve entry points: check arguments once, call a backend. */
#include "nzi.h"
#include "backend.h"
#include "ops_common.h"

#include <string.h>

/* Every SpSV plan is bitwise reproducible, so NZ_PLAN_DETERMINISTIC is accepted and changes
 * nothing. The NZ_SPSV_JACOBI bits hold k (1 .. 255; 0: the exact solve), so any value there is
 * valid. */
#define NZI_SPSV_PLAN_FLAGS (NZ_PLAN_DETERMINISTIC | NZ_SPSV_JACOBI(0xff))

nz_status_t nz_spsv_plan_create(nz_context_t *ctx, nz_spsv_plan_t **plan, const nz_matrix_t *T,
                                nz_operation_t op, nz_fill_mode_t fill, nz_diag_type_t diag,
                                unsigned flags) {
    nz_status_t status;
    nz_spsv_plan_t *P = NULL;
    const char *what = "nz_spsv_plan_create";
    NZI_TRY(nzi_plan_check_start(ctx, plan, T, op, what));
    if (fill != NZ_LOWER && fill != NZ_UPPER)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: fill must be NZ_LOWER or NZ_UPPER, not %d", what, (int)fill);
    if (diag != NZ_NON_UNIT && diag != NZ_UNIT)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: diag must be NZ_NON_UNIT or NZ_UNIT, not %d", what, (int)diag);
    if (flags & ~(unsigned)NZI_SPSV_PLAN_FLAGS)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", what, flags);
    /* the backend table decides where SpSV runs: T's (host: the CPU's level sets, device: the
     * GPU's synchronisation-free solve) */
    const nzi_backend_t *table = nzi_backend_of(T);
    if (table->spsv_plan_setup == NULL)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: the %s backend has no SpSV", what,
                         table->name);
    if (T->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: SpSV needs a csr matrix, T is %s (convert it with "
                         "nz_matrix_convert)", what, nz_format_name(T->format));
    if (T->rows != T->cols)
        return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH,
                         "%s: T must be square, it is %lld x %lld", what, (long long)T->rows,
                         (long long)T->cols);

    P = (nz_spsv_plan_t *)nzi_calloc(ctx, 1, sizeof *P);
    if (P == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate an SpSV plan");
    P->magic = NZI_SPSV_PLAN_MAGIC;
    P->ctx = ctx;
    P->T = T;
    P->op = op;
    P->fill = fill;
    P->diag = diag;
    P->flags = flags;
    P->backend = table->id;
    P->ops = table;
    double t0 = nzi_wtime();
    NZI_CHECK(table->spsv_plan_setup(P));
    P->analysis_seconds = nzi_wtime() - t0;
    *plan = P;
    return NZ_SUCCESS;
cleanup:
    if (P->state != NULL) table->spsv_plan_release(P);
    P->magic = NZI_DEAD_MAGIC;
    nzi_free(ctx, P);
    return status;
}

nz_status_t nz_spsv_execute(nz_spsv_plan_t *plan, double alpha, const void *x, void *y) {
    if (plan == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (plan->magic != NZI_SPSV_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *T = plan->T;
    int64_t n, ylen;
    NZI_TRY(nzi_plan_operand_rows(ctx, T, plan->op, "nz_spsv_execute", &n, &ylen));
    if ((x == NULL || y == NULL) && n > 0)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_spsv_execute: x or y is NULL");
    const size_t bytes = (size_t)n * nzi_value_size(T->value_type);
    /* in place (x == y) is safe: each row reads its own x before writing its y */
    if (x != y && nzi_ranges_overlap(x, bytes, y, bytes))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_spsv_execute: x and y overlap in memory without being the same "
                         "array; pass x == y to solve in place, or separate arrays");
    /* x and y live where T does: a device T's backend checks them (as nz_solve checks b, x) */
    if (plan->ops->vector_check != NULL && n > 0) {
        NZI_TRY(plan->ops->vector_check(ctx, x, "nz_spsv_execute: x"));
        NZI_TRY(plan->ops->vector_check(ctx, y, "nz_spsv_execute: y"));
    }
    return plan->ops->spsv_execute(plan, alpha, x, y);
}

nz_status_t nz_spsv_plan_destroy(nz_spsv_plan_t **plan) {
    if (plan == NULL || *plan == NULL) return NZ_SUCCESS;
    nz_spsv_plan_t *P = *plan;
    if (P->magic != NZI_SPSV_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    P->ops->spsv_plan_release(P);
    P->magic = NZI_DEAD_MAGIC;
    nzi_free(P->ctx, P);
    *plan = NULL;
    return NZ_SUCCESS;
}

nz_status_t nz_spsv_plan_info(const nz_spsv_plan_t *plan, nz_spsv_plan_info_t *info) {
    if (plan == NULL || info == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (plan->magic != NZI_SPSV_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    memset(info, 0, sizeof *info);
    info->backend = plan->backend;
    info->op = plan->op;
    info->fill = plan->fill;
    info->diag = plan->diag;
    info->rows = plan->T->rows;
    info->nnz = plan->nnz;
    info->levels = plan->levels;
    info->max_level_rows = plan->max_level_rows;
    info->reproducible = 1;
    info->analysis_seconds = plan->analysis_seconds;
    info->workspace_bytes = plan->workspace_bytes;
    return NZ_SUCCESS;
}

nz_status_t nz_spsv(nz_context_t *ctx, const nz_matrix_t *T, nz_operation_t op,
                    nz_fill_mode_t fill, nz_diag_type_t diag, double alpha, const void *x,
                    void *y) {
    nz_spsv_plan_t *plan = NULL;
    NZI_TRY(nz_spsv_plan_create(ctx, &plan, T, op, fill, diag, 0));
    nz_status_t status = nz_spsv_execute(plan, alpha, x, y);
    nz_spsv_plan_destroy(&plan);
    return status;
}
