/* bicgstab.c: right-preconditioned BiCGSTAB, written once against the Krylov vector-operation table. */
#include "krylov_method.h"

#include <math.h>

/*
 * BiCGSTAB (van der Vorst, "Bi-CGSTAB: a fast and smoothly converging variant of Bi-CG for the
 * solution of nonsymmetric linear systems", SISC 13(2), 1992; the preconditioned form of Saad,
 * Iterative Methods, 2nd ed., Alg. 7.7 with M^-1 on the right, as PETSc's KSPBCGS):
 *     rho = r0'r;  p = r + beta (p - omega v),  beta = (rho / rho_old)(alpha / omega)
 *     p^ = M^-1 p; v = A p^; alpha = rho / r0'v; s = r - alpha v
 *     s^ = M^-1 s; t = A s^; omega = t's / t't
 *     x += alpha p^ + omega s^;  r = s - omega t
 * Right preconditioning (A M^-1 u = b, x = M^-1 u) keeps r the residual b - A x of the actual
 * system, so the recursive residual the loop watches estimates the very quantity the stopping
 * rule is about; left preconditioning would watch ||M^-1 r||, a different norm, and need an
 * extra product to stop honestly. Cost per iteration: 2 SpMVs, 2 preconditioner applies, 4
 * reductions (rho; r0'v; t't with t's fused; ||r||, plus ||s|| for the half-step test) and 5
 * fused vector updates; 7 work vectors (s overwrites r).
 * Stopping: when ||s|| or ||r|| meets the tolerance the true residual b - A x is computed; if it
 * misses, BiCGSTAB restarts from it with r0 = r (nzi_krylov_check: each such restart must halve
 * the true residual). Breakdowns: rho = 0 or r0'v = 0 (the Bi-CG part: r0 orthogonal to the new
 * space) and omega = 0 (t's = 0 or t = 0: the minimal-residual step stalls) end the solve with
 * x the last iterate.
 */

enum { R, R0, P, V, PHAT, SHAT, T, NVEC };

static nz_status_t bicgstab_run(nzi_krylov_solve_t *k, void *const *vec) {
    const nzi_krylov_ops_t *ops = k->ops;
    nzi_krylov_space_t *s = k->space;
    void *r = vec[R], *r0 = vec[R0], *p = vec[P], *v = vec[V], *t = vec[T];
    /* without a preconditioner p^ is p and s^ is s (= r): no copies (bitwise the same) */
    const int identity = s->precond == NZ_PRECOND_NONE;
    void *phat = identity ? p : vec[PHAT], *shat = identity ? r : vec[SHAT];
    double rnorm;
    NZI_TRY(nzi_krylov_residual(k, r, &rnorm));
    if (nzi_krylov_settled(k, rnorm)) return NZ_SUCCESS;
    for (;;) { /* one pass per (re)start from a true residual r */
        double rho_old = 1.0, alpha = 1.0, omega = 1.0;
        int first = 1, check = 0;
        NZI_TRY(ops->copy(s, r, r0));
        while (!check) {
            if (k->iterations >= k->max_iterations) {
                k->reason = NZ_SOLVE_MAX_ITERATIONS;
                return NZ_SUCCESS;
            }
            double rho, rv, norm, tt_ts[2];
            NZI_TRY(ops->dot(s, r0, r, &rho));
            if (!isfinite(rho)) k->reason = NZ_SOLVE_BREAKDOWN_NAN;
            else if (rho == 0.0) k->reason = NZ_SOLVE_BREAKDOWN_RHO;
            if (k->reason != NZ_SOLVE_NOT_RUN) return NZ_SUCCESS;
            if (first) {
                NZI_TRY(ops->copy(s, r, p));
            } else {
                const double beta = (rho / rho_old) * (alpha / omega);
                NZI_TRY(ops->axpbypcz(s, 1.0, r, -beta * omega, v, beta, p));
            }
            first = 0;
            if (!identity) NZI_TRY(ops->precond(s, p, phat));
            NZI_TRY(ops->apply(s, phat, v));
            NZI_TRY(ops->dot(s, r0, v, &rv));
            if (!isfinite(rv)) k->reason = NZ_SOLVE_BREAKDOWN_NAN;
            else if (rv == 0.0) k->reason = NZ_SOLVE_BREAKDOWN_RHO;
            if (k->reason != NZ_SOLVE_NOT_RUN) return NZ_SUCCESS;
            alpha = rho / rv;
            NZI_TRY(ops->axpby(s, -alpha, v, 1.0, r)); /* r = s */
            NZI_TRY(ops->norm2(s, r, &norm));
            k->iterations++;
            if (!isfinite(norm) || !isfinite(alpha)) {
                k->reason = NZ_SOLVE_BREAKDOWN_NAN;
                return NZ_SUCCESS;
            }
            if (norm <= k->tol) { /* half step: x + alpha p^ may already solve it */
                NZI_TRY(ops->axpby(s, alpha, phat, 1.0, k->x));
                nzi_krylov_record(k, norm);
                check = 1;
                break;
            }
            if (!identity) NZI_TRY(ops->precond(s, r, shat));
            NZI_TRY(ops->apply(s, shat, t));
            void *const tr[2] = {t, r};
            NZI_TRY(ops->multi_dot(s, 2, tr, t, tt_ts)); /* t't, s't in one reduction */
            if (!isfinite(tt_ts[0]) || !isfinite(tt_ts[1])) {
                NZI_TRY(ops->axpby(s, alpha, phat, 1.0, k->x));
                k->reason = NZ_SOLVE_BREAKDOWN_NAN;
                return NZ_SUCCESS;
            }
            if (tt_ts[0] == 0.0 || tt_ts[1] == 0.0) { /* omega = 0: keep the Bi-CG half step */
                NZI_TRY(ops->axpby(s, alpha, phat, 1.0, k->x));
                nzi_krylov_record(k, norm);
                k->reason = NZ_SOLVE_BREAKDOWN_OMEGA;
                return NZ_SUCCESS;
            }
            omega = tt_ts[1] / tt_ts[0];
            NZI_TRY(ops->axpbypcz(s, alpha, phat, omega, shat, 1.0, k->x));
            NZI_TRY(ops->axpby(s, -omega, t, 1.0, r));
            NZI_TRY(ops->norm2(s, r, &norm));
            nzi_krylov_record(k, norm);
            rho_old = rho;
            if (!isfinite(norm)) {
                k->reason = NZ_SOLVE_BREAKDOWN_NAN;
                return NZ_SUCCESS;
            }
            check = norm <= k->tol;
        }
        /* The recursive residual meets the tolerance: the true one decides. */
        NZI_TRY(nzi_krylov_residual(k, r, &rnorm));
        if (nzi_krylov_settled(k, rnorm)) return NZ_SUCCESS;
        if (!nzi_krylov_check(k, rnorm)) return NZ_SUCCESS;
        k->restarts++;
    }
}

/* The work vectors, the iteration, the work vectors freed. */
nz_status_t nzi_krylov_bicgstab(nzi_krylov_solve_t *k) {
    nz_status_t status = NZ_SUCCESS;
    void *vec[NVEC] = {NULL};
    int agreed = 0;
    for (int i = 0; i < NVEC; i++) {
        if ((i == PHAT || i == SHAT) && k->space->precond == NZ_PRECOND_NONE) continue;
        NZI_CHECK(k->ops->vec_create(k->space, &vec[i], "nz_solve: BiCGSTAB work vector"));
    }
    agreed = 1;
    NZI_CHECK(nzi_krylov_agree(k, NZ_SUCCESS));
    status = bicgstab_run(k, vec);
cleanup:
    if (!agreed) status = nzi_krylov_agree(k, status);
    for (int i = 0; i < NVEC; i++) k->ops->vec_destroy(k->space, vec[i]);
    return status;
}
