/* minres.c: preconditioned MINRES for symmetric (indefinite) systems, written once against the Krylov vector-operation table. */
#include "krylov_method.h"

#include <math.h>

/*
 * MINRES (Paige & Saunders, "Solution of sparse indefinite systems of linear equations", SINUM
 * 12(4), 1975; the recurrences of SciPy's minres.py): Lanczos on A with an SPD preconditioner M
 * builds a tridiagonal T_k; one Givens rotation per step keeps its QR factorisation, so x_k
 * minimises ||b - A x||_{M^-1} over the Krylov space with short recurrences (3 direction vectors
 * w, w1, w2). A must be symmetric (any inertia), M symmetric positive definite: r'M^-1 r <= 0
 * for r != 0 is a breakdown (NZ_SOLVE_BREAKDOWN_SINGULAR: M is not positive definite), as is a
 * singular T_k (gamma = 0). Cost per iteration: 1 SpMV, 1 preconditioner apply,
 * 2 reductions, 6 vector passes; 7 work vectors.
 * Stopping: phibar estimates ||r||_{M^-1}, not the 2-norm the stopping rule is about; when it
 * meets the trigger (first the tolerance) the true residual is computed; if it misses, MINRES
 * restarts from it (nzi_krylov_check) with the trigger lowered by the ratio of the estimate to
 * the true norm seen at that check, so that the next check is made where the 2-norm should meet
 * the tolerance.
 */

enum { R1, R2, Y, V, W, W1, W2, NVEC };

static nz_status_t minres_run(nzi_krylov_solve_t *k, void **vec) {
    const nzi_krylov_ops_t *ops = k->ops;
    nzi_krylov_space_t *s = k->space;
    double rnorm, trigger = k->tol;
    NZI_TRY(nzi_krylov_residual(k, vec[R1], &rnorm));
    for (;;) { /* one pass per (re)start from the true residual in vec[R1] */
        if (nzi_krylov_settled(k, rnorm)) return NZ_SUCCESS;
        double beta1;
        NZI_TRY(ops->precond(s, vec[R1], vec[Y]));
        NZI_TRY(ops->dot(s, vec[R1], vec[Y], &beta1));
        if (!isfinite(beta1)) {
            k->reason = NZ_SOLVE_BREAKDOWN_NAN;
            return NZ_SUCCESS;
        }
        if (!(beta1 > 0.0)) { /* r'M^-1 r <= 0 with r != 0: M is not positive definite */
            k->reason = NZ_SOLVE_BREAKDOWN_SINGULAR;
            return NZ_SUCCESS;
        }
        beta1 = sqrt(beta1);
        double oldb = 0.0, beta = beta1, dbar = 0.0, epsln = 0.0, phibar = beta1;
        double cs = -1.0, sn = 0.0;
        NZI_TRY(ops->fill(s, 0.0, vec[W]));
        NZI_TRY(ops->fill(s, 0.0, vec[W2]));
        NZI_TRY(ops->copy(s, vec[R1], vec[R2]));
        int check = 0;
        for (int64_t step = 1; !check; step++) {
            if (k->iterations >= k->max_iterations) {
                k->reason = NZ_SOLVE_MAX_ITERATIONS;
                return NZ_SUCCESS;
            }
            /* Lanczos: v = y / beta, y = A v - (beta / oldb) r1 - (alfa / beta) r2 */
            NZI_TRY(ops->axpby(s, 1.0 / beta, vec[Y], 0.0, vec[V]));
            NZI_TRY(ops->apply(s, vec[V], vec[Y]));
            if (step >= 2) NZI_TRY(ops->axpby(s, -beta / oldb, vec[R1], 1.0, vec[Y]));
            double alfa;
            NZI_TRY(ops->dot(s, vec[V], vec[Y], &alfa));
            NZI_TRY(ops->axpby(s, -alfa / beta, vec[R2], 1.0, vec[Y]));
            void *t = vec[R1];
            vec[R1] = vec[R2];
            vec[R2] = vec[Y];
            vec[Y] = t;
            NZI_TRY(ops->precond(s, vec[R2], vec[Y]));
            oldb = beta;
            NZI_TRY(ops->dot(s, vec[R2], vec[Y], &beta));
            k->iterations++;
            if (!isfinite(beta) || !isfinite(alfa)) {
                nzi_krylov_record(k, NAN);
                k->reason = NZ_SOLVE_BREAKDOWN_NAN;
                return NZ_SUCCESS;
            }
            if (beta < 0.0) {
                k->reason = NZ_SOLVE_BREAKDOWN_SINGULAR;
                return NZ_SUCCESS;
            }
            beta = sqrt(beta);
            /* the rotation of T_k's new column */
            const double oldeps = epsln;
            const double delta = cs * dbar + sn * alfa;
            const double gbar = sn * dbar - cs * alfa;
            epsln = sn * beta;
            dbar = -cs * beta;
            const double gamma = hypot(gbar, beta);
            if (!(gamma > 0.0)) { /* T_k singular: the space is invariant and A singular */
                k->reason = NZ_SOLVE_BREAKDOWN_SINGULAR;
                return NZ_SUCCESS;
            }
            cs = gbar / gamma;
            sn = beta / gamma;
            const double phi = cs * phibar;
            phibar = sn * phibar;
            /* w_new = (v - oldeps w2 - delta w) / gamma into w1's buffer; then w1 = w2, w2 = w */
            NZI_TRY(ops->axpby(s, 1.0 / gamma, vec[V], 0.0, vec[W1]));
            NZI_TRY(ops->axpbypcz(s, -oldeps / gamma, vec[W2], -delta / gamma, vec[W], 1.0,
                                  vec[W1]));
            t = vec[W1];
            vec[W1] = vec[W2];
            vec[W2] = vec[W];
            vec[W] = t;
            NZI_TRY(ops->axpby(s, phi, vec[W], 1.0, k->x));
            nzi_krylov_record(k, phibar);
            if (!isfinite(phibar)) {
                k->reason = NZ_SOLVE_BREAKDOWN_NAN;
                return NZ_SUCCESS;
            }
            /* beta = 0: the Krylov space is invariant, x is the minimiser: check it */
            check = phibar <= trigger || beta == 0.0;
        }
        const double estimate = phibar;
        NZI_TRY(nzi_krylov_residual(k, vec[R1], &rnorm));
        if (isfinite(rnorm) && rnorm > k->tol) {
            if (!nzi_krylov_check(k, rnorm)) return NZ_SUCCESS;
            k->restarts++;
            if (estimate > 0.0 && estimate < rnorm) trigger *= 0.9 * estimate / rnorm;
        }
    }
}

nz_status_t nzi_krylov_minres(nzi_krylov_solve_t *k) {
    nz_status_t status = NZ_SUCCESS;
    void *vec[NVEC] = {NULL};
    void *owned[NVEC] = {NULL};
    int agreed = 0;
    for (int i = 0; i < NVEC; i++) {
        NZI_CHECK(k->ops->vec_create(k->space, &owned[i], "nz_solve: MINRES work vector"));
        vec[i] = owned[i];
    }
    agreed = 1;
    NZI_CHECK(nzi_krylov_agree(k, NZ_SUCCESS));
    status = minres_run(k, vec);
cleanup:
    if (!agreed) status = nzi_krylov_agree(k, status);
    for (int i = 0; i < NVEC; i++) k->ops->vec_destroy(k->space, owned[i]);
    return status;
}
