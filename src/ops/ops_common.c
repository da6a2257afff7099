/* ops_common.c: the argument checks the public SpMV and SpMM entry points share. */
#include "ops_common.h"

nz_status_t nzi_plan_check_start(nz_context_t *ctx, const void *plan, const nz_matrix_t *A,
                                 nz_operation_t op, const char *what) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (plan == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: plan is NULL", what);
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (op != NZ_OP_N && op != NZ_OP_T)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: invalid operation %d", what, (int)op);
    return NZ_SUCCESS;
}

nz_status_t nzi_plan_operand_rows(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                                  const char *what, int64_t *x_rows, int64_t *y_rows) {
    if (A->magic != NZI_MATRIX_MAGIC)
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "%s: the plan's matrix was destroyed", what);
    *x_rows = op == NZ_OP_N ? A->cols : A->rows;
    *y_rows = op == NZ_OP_N ? A->rows : A->cols;
    return NZ_SUCCESS;
}
