/* ops_common.h: the argument checks the public SpMV and SpMM entry points share (ops_common.c). */
#ifndef NZI_OPS_COMMON_H
#define NZI_OPS_COMMON_H

#include "nzi.h"

/* What a plan constructor checks first, in this order: a valid context (its last error then
 * cleared), a non-NULL output `plan`, a valid matrix A of that context, op N or T. `what` names
 * the function in the messages. */
nz_status_t nzi_plan_check_start(nz_context_t *ctx, const void *plan, const nz_matrix_t *A,
                                 nz_operation_t op, const char *what);

/* What an execute checks of its plan's matrix A: still alive. *x_rows and *y_rows: the rows of
 * the operands of op(A) (A's columns and rows for op N, the other way round for op T). */
nz_status_t nzi_plan_operand_rows(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                                  const char *what, int64_t *x_rows, int64_t *y_rows);

#endif /* NZI_OPS_COMMON_H */
