/* cg_table.c: preconditioned CG written against the Krylov vector-operation table (matrix-free and distributed solves). */
#include "krylov_method.h"

#include <math.h>

/*
 * Preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad, Iterative Methods, 2nd ed.,
 * Alg. 9.1) on the table of krylov.h, so that it runs wherever a table runs: a caller's operator
 * on the host or the device (nz_solve_operator) and, through that, the distributed layer, whose
 * reductions add an allreduce. nz_cg_solve keeps its own fused GPU iteration (cg.c and its
 * kernels: the scalars stay on the device, the iteration replays as a CUDA graph) for matrices;
 * this is the iteration for operators, where the table's reductions return to the host anyway.
 *     q = A p;  alpha = r'z / p'q;  x += alpha p;  r -= alpha q
 *     z = M^-1 r;  (r'r, r'z) in one reduction;  p = z + (r'z_new / r'z) p
 * Cost per iteration: 1 operator apply, 1 preconditioner apply (none without one: z is r),
 * 2 reductions, 3 vector passes (4 with a preconditioner); 4 work vectors (3 without).
 * Stopping: as BiCGSTAB, the recursive residual only asks for a check; the true residual
 * decides (nzi_krylov_settled) and a missed check restarts from it (residual replacement,
 * nzi_krylov_check). p'Ap <= 0 (A not positive definite) and r'M^-1 r <= 0 for r != 0 (M not
 * positive definite) end the solve as NZ_SOLVE_BREAKDOWN_INDEFINITE with x the last iterate.
 */

enum { R, Z, P, Q, NVEC };

/* z = M^-1 r (z is r itself without a preconditioner) and (r'r, r'z) in one reduction. */
static nz_status_t cg_precond_dots(nzi_krylov_solve_t *k, void *r, void *z, double *rr,
                                   double *rz) {
    double out[2];
    if (z == r) {
        NZI_TRY(k->ops->dot(k->space, r, r, &out[0]));
        out[1] = out[0];
    } else {
        NZI_TRY(k->ops->precond(k->space, r, z));
        void *const rz_vec[2] = {r, z};
        NZI_TRY(k->ops->multi_dot(k->space, 2, rz_vec, r, out));
    }
    *rr = out[0];
    *rz = out[1];
    return NZ_SUCCESS;
}

/* The reason a scalar of the recurrence ends the solve with (NOT_RUN: it does not). */
static nz_solve_reason_t cg_scalar_reason(double v) {
    if (!isfinite(v)) return NZ_SOLVE_BREAKDOWN_NAN;
    if (!(v > 0.0)) return NZ_SOLVE_BREAKDOWN_INDEFINITE;
    return NZ_SOLVE_NOT_RUN;
}

static nz_status_t cg_run(nzi_krylov_solve_t *k, void *const *vec) {
    const nzi_krylov_ops_t *ops = k->ops;
    nzi_krylov_space_t *s = k->space;
    void *r = vec[R], *z = vec[Z] != NULL ? vec[Z] : vec[R], *p = vec[P], *q = vec[Q];
    double rnorm, rr, rz;
    NZI_TRY(nzi_krylov_residual(k, r, &rnorm));
    for (;;) { /* one pass per (re)start from the true residual in r */
        if (nzi_krylov_settled(k, rnorm)) return NZ_SUCCESS;
        NZI_TRY(cg_precond_dots(k, r, z, &rr, &rz));
        if ((k->reason = cg_scalar_reason(rz)) != NZ_SOLVE_NOT_RUN) return NZ_SUCCESS;
        NZI_TRY(ops->copy(s, z, p));
        int check = 0;
        while (!check) {
            if (k->iterations >= k->max_iterations) {
                k->reason = NZ_SOLVE_MAX_ITERATIONS;
                return NZ_SUCCESS;
            }
            double pq, rz_new;
            NZI_TRY(ops->apply(s, p, q));
            NZI_TRY(ops->dot(s, p, q, &pq));
            if ((k->reason = cg_scalar_reason(pq)) != NZ_SOLVE_NOT_RUN) return NZ_SUCCESS;
            const double alpha = rz / pq;
            NZI_TRY(ops->axpby(s, alpha, p, 1.0, k->x));
            NZI_TRY(ops->axpby(s, -alpha, q, 1.0, r));
            NZI_TRY(cg_precond_dots(k, r, z, &rr, &rz_new));
            k->iterations++;
            const double norm = sqrt(rr);
            nzi_krylov_record(k, norm);
            if (!isfinite(norm) || !isfinite(rz_new)) {
                k->reason = NZ_SOLVE_BREAKDOWN_NAN;
                return NZ_SUCCESS;
            }
            if (norm <= k->tol) {
                check = 1;
                break;
            }
            if ((k->reason = cg_scalar_reason(rz_new)) != NZ_SOLVE_NOT_RUN) return NZ_SUCCESS;
            NZI_TRY(ops->axpby(s, 1.0, z, rz_new / rz, p));
            rz = rz_new;
        }
        /* The recursive residual meets the tolerance: the true one decides. */
        NZI_TRY(nzi_krylov_residual(k, r, &rnorm));
        if (nzi_krylov_settled(k, rnorm)) return NZ_SUCCESS;
        if (!nzi_krylov_check(k, rnorm)) return NZ_SUCCESS;
        k->restarts++;
    }
}

/* The work vectors (no z without a preconditioner), the iteration, the work vectors freed. */
nz_status_t nzi_krylov_cg(nzi_krylov_solve_t *k) {
    nz_status_t status = NZ_SUCCESS;
    void *vec[NVEC] = {NULL};
    int agreed = 0;
    for (int i = 0; i < NVEC; i++) {
        if (i == Z && k->space->precond == NZ_PRECOND_NONE) continue;
        NZI_CHECK(k->ops->vec_create(k->space, &vec[i], "nz_solve: CG work vector"));
    }
    agreed = 1;
    NZI_CHECK(nzi_krylov_agree(k, NZ_SUCCESS));
    status = cg_run(k, vec);
cleanup:
    if (!agreed) status = nzi_krylov_agree(k, status);
    for (int i = 0; i < NVEC; i++) k->ops->vec_destroy(k->space, vec[i]);
    return status;
}
