/* solve_internal.h: the part of a solve that nz_solve (solve.c) and nz_solve_operator (solve_operator.c) share. */
#ifndef NZI_SOLVE_INTERNAL_H
#define NZI_SOLVE_INTERNAL_H

#include "nzi.h"
#include "krylov.h"

/* Copy *in (zeros when NULL) to *opt, check it against n unknowns, fill the defaults. */
nz_status_t nzi_solve_options(nz_context_t *ctx, const nz_solve_options_t *in, int64_t n,
                              nz_solve_options_t *opt);

/* The reduction width opt->method needs from the table (nzi_krylov_space_t.max_dots). */
int nzi_solve_max_dots(const nz_solve_options_t *opt);

/* Run opt->method on a created space whose preconditioner is set up: ||b|| (NaN or Inf in b
 * refused with x untouched, a b whose squared norm leaves the double range refused), b = 0
 * (x = 0), the method (NZ_METHOD_CG: the table's CG, cg_table.c), the true residual of x by an
 * explicit apply, and the status with its message. Fills res (iterations, restarts, reason,
 * residuals, history moved over, setup_seconds from t0, solve_seconds); frees nothing of the
 * space. */
nz_status_t nzi_solve_run(nz_context_t *ctx, const nzi_krylov_ops_t *ops,
                          nzi_krylov_space_t *space, const void *b, void *x,
                          const nz_solve_options_t *opt, nz_solve_result_t *res, double t0);

#endif /* NZI_SOLVE_INTERNAL_H */
