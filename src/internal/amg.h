/* amg.h: smoothed-aggregation AMG (src/solver/amg.c): what preconditioner.c calls for NZ_PRECOND_AMG, and the hierarchy's matrices for tests. */
#ifndef NZI_AMG_H
#define NZI_AMG_H

#include "nzi.h"
#include "krylov.h"
#include "backend.h"

typedef struct nzi_amg nzi_amg_t;

/* The hierarchy of A (square; host any format, or device) with options opt (defaults filled,
 * checked by nzi_amg_options). *out is freed by nzi_amg_destroy. */
nz_status_t nzi_amg_create(nz_context_t *ctx, const nz_matrix_t *A, const nz_amg_options_t *opt,
                           nzi_amg_t **out);
/* Copy *in (zeros when NULL) into *opt, check it and fill its defaults; what names the caller. */
nz_status_t nzi_amg_options(nz_context_t *ctx, const nz_amg_options_t *in, nz_amg_options_t *opt,
                            int64_t rows, const char *what);
/* z = one cycle applied to r (arrays where A lives, distinct). Allocates nothing. */
nz_status_t nzi_amg_apply(nzi_amg_t *amg, const void *r, void *z);
/* New values of A, the same pattern: every value of the hierarchy recomputed. */
nz_status_t nzi_amg_update(nzi_amg_t *amg, const nz_matrix_t *A);
void nzi_amg_info(const nzi_amg_t *amg, nz_amg_info_t *info);
void nzi_amg_destroy(nzi_amg_t **amg);

/* The AMG object of an NZ_PRECOND_AMG preconditioner (NULL for another kind). */
nzi_amg_t *nzi_precond_amg(const nz_preconditioner_t *M);
/* Level l's host matrices (A_l; P_l, NULL on the coarsest level), its rho(D^-1 A_l) estimate and
 * the resolved options; NZ_ERR_INVALID_ARGUMENT past the last level. For tests that rebuild the
 * cycle from the hierarchy. */
nz_status_t nzi_amg_level(const nzi_amg_t *amg, int l, const nz_matrix_t **A,
                          const nz_matrix_t **P, double *rho, nz_amg_options_t *opt);

/* lambda_max of D^-1 A for the Jacobi-scaled space s (apply A, precond D^-1) by `steps` steps
 * of the power iteration from a start vector uniform in [-1, 1) drawn from `seed` (built on the
 * host, copied where s's vectors live by backend's mem_copy): v <- D^-1 A v / ||D^-1 A v||, the
 * estimate the larger of ||D^-1 A v|| (||v|| = 1) and the A-inner-product Rayleigh quotient
 * (A v)' D^-1 (A v) / v' A v (below lambda_max for SPD A, converging twice as fast). v, w, t:
 * vectors of s. *estimate = 0 when A D^-1 maps a vector to zero or non-finite values
 * (preconditioner.c; the Chebyshev preconditioner and AMG). */
nz_status_t nzi_power_estimate(const nzi_krylov_ops_t *ops, nzi_krylov_space_t *s,
                               const nzi_backend_t *backend, uint64_t seed, int steps, void *v,
                               void *w, void *t, double *estimate);
/* The Chebyshev recurrence of docs/SOLVERS.md (Saad, Alg. 12.1, residual kept Jacobi-scaled)
 * on [lambda_min, lambda_max] from the scaled residual res = D^-1 (b - A z): d = res / theta,
 * z = d (accumulate: z += d), then `steps` steps of res -= D^-1 A d, the three-term update of
 * d, z += d; A and D^-1 are s's apply and precond (preconditioner.c; the Chebyshev
 * preconditioner and AMG's smoother). */
nz_status_t nzi_chebyshev_recurrence(const nzi_krylov_ops_t *ops, nzi_krylov_space_t *s,
                                     double lambda_min, double lambda_max, int steps, void *res,
                                     void *d, void *w, void *t, void *z, int accumulate);

/* In-place inverse of the dense m x m row-major a into inv by LU with partial pivoting
 * (preconditioner.c); 0, or 1 when a pivot is below m eps max|a_ij| or not finite. */
int nzi_dense_invert(double *a, double *inv, int *perm, int m);

#endif /* NZI_AMG_H */
