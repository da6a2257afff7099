/* precond.h: the factored preconditioners of nz_solve (ILU(0), IC(0)): factorisation with a diagonal shift, and the apply through SpSV plans. */
#ifndef NZI_PRECOND_H
#define NZI_PRECOND_H

#include "nzi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most factorisations one setup tries (the first unshifted, then growing shifts). */
#define NZI_PRECOND_MAX_ATTEMPTS 8

/* A factored preconditioner: F holds the factors in one CSR matrix of A's pattern with every
 * diagonal entry present (ILU(0): L strictly below the diagonal, unit diagonal implied, U on and
 * above it; IC(0): L on and below it, the upper triangle unused), lower / upper the SpSV plans of
 * the two triangular solves, work a vector of A's value type and length between them. */
typedef struct nzi_factor_precond {
    nz_context_t *ctx;
    nz_precond_t kind;          /* NZ_PRECOND_ILU0 or NZ_PRECOND_IC0 */
    nz_matrix_t *F;
    nz_spsv_plan_t *lower;
    nz_spsv_plan_t *upper;
    void *work;
    double shift;               /* the diagonal shift of the accepted factorisation (0: none) */
    int attempts;               /* factorisations tried (1: the unshifted one succeeded) */
} nzi_factor_precond_t;

/* The factors only: *F (a new host CSR matrix of A's value type and A's pattern with the diagonal
 * added where missing) = ILU(0) or IC(0) of the host CSR matrix A (square, sorted columns),
 * computed in double. A pivot that is not finite, or |pivot| <= 1e-12 max|a_ij| (ILU(0)), or
 * pivot <= 1e-12 max|a_ij| (IC(0), before its square root), restarts the factorisation of
 * A + shift I with shift = 1e-3 max|a_ii| (max|a_ij| when the diagonal is zero, 1 for A = 0),
 * multiplied by 10 per attempt, at most NZI_PRECOND_MAX_ATTEMPTS in all (then NZ_ERR_BREAKDOWN).
 * *shift and *attempts report the accepted one. A non-finite entry of A is
 * NZ_ERR_INVALID_MATRIX naming it. Cost: ILU(0) sum over rows i of sum over k < i in row i of
 * nnz(row k); IC(0) the same over the lower triangle. */
nz_status_t nzi_factor_compute(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                               nz_matrix_t **F, double *shift, int *attempts);

/* Factor A and plan the two triangular solves (ILU(0): L unit lower, U upper; IC(0): L and
 * L^T as op T of the lower triangle). *out is freed by nzi_factor_precond_destroy, which
 * accepts NULL. */
nz_status_t nzi_factor_precond_create(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                                      nzi_factor_precond_t **out);
void nzi_factor_precond_destroy(nzi_factor_precond_t **p);
/* z = U^-1 L^-1 r (ILU(0)) or L^-T L^-1 r (IC(0)); r and z distinct; allocates nothing. The
 * signature of nz_precond_apply_t, user = the nzi_factor_precond_t. */
nz_status_t nzi_factor_precond_apply(void *user, const void *r, void *z);

#ifdef __cplusplus
}
#endif

#endif /* NZI_PRECOND_H */
