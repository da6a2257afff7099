/* krylov_method.h: what nz_solve (solve.c) hands a Krylov method (bicgstab.c, gmres.c, minres.c), and the stopping helpers they share. */
#ifndef NZI_KRYLOV_METHOD_H
#define NZI_KRYLOV_METHOD_H

#include "nzi.h"
#include "krylov.h"
#include "cg_scalars.h"

#include <math.h>

/* One solve as a method sees it: the table and its space, b and x (vectors of the space), the
 * tolerance on the true residual norm, and what the method reports back. A method returns
 * NZ_SUCCESS with `reason` set (how it stopped; x its last finite iterate) or an error of the
 * table (out of memory, a failed preconditioner callback); solve.c then computes the true
 * residual of x by an explicit SpMV and turns the reason into the status. */
typedef struct nzi_krylov_solve {
    const nzi_krylov_ops_t *ops;
    nzi_krylov_space_t *space;
    const void *b;
    void *x;
    double tol;              /* max(rtol ||b||, atol) on ||b - A x|| */
    int64_t max_iterations;
    int restart;             /* GMRES: the Krylov dimension m */
    int flexible;            /* GMRES: FGMRES (keep z_j = M^-1 v_j) */
    double *history;         /* host, history_capacity entries, or NULL */
    int64_t history_capacity;
    /* out */
    int64_t iterations;
    int64_t restarts;        /* GMRES cycles after the first; BiCGSTAB residual replacements */
    nz_solve_reason_t reason;
    /* the caller's monitor (nz_solve_options_t.monitor): */
    nz_solve_monitor_t monitor;
    void *monitor_user;
    int monitor_x;           /* the method keeps a current x (CG, BiCGSTAB, MINRES) and the
                                solve is not scaled */
    int exponent;            /* the solve runs on 2^exponent (A x = b): norms shown unscaled */
    int64_t monitored;       /* the last iteration shown to it */
    nz_status_t monitor_status; /* its first error (the method then stops at the limit) */
    /* the true-residual checks (nzi_krylov_check) */
    int32_t checks;          /* true-residual checks made after a recursive residual met tol */
    double checked_norm;     /* the true residual norm at the last such check */
} nzi_krylov_solve_t;

/* Residual norm of iteration k->iterations into the history (a later value for the same
 * iteration, e.g. the true residual of a check, replaces it). */
static inline void nzi_krylov_record(nzi_krylov_solve_t *k, double norm) {
    if (k->history != NULL && k->iterations < k->history_capacity)
        k->history[k->iterations] = norm;
    /* the monitor sees each iteration once; an error stops the method at its next iteration
     * boundary (the limit is lowered to the iterations done) */
    if (k->monitor != NULL && k->iterations > k->monitored && k->monitor_status == NZ_SUCCESS) {
        k->monitored = k->iterations;
        nz_status_t st = k->monitor(k->monitor_user, k->iterations, ldexp(norm, -k->exponent),
                                    k->monitor_x ? k->x : NULL);
        if (st != NZ_SUCCESS) {
            k->monitor_status = st;
            k->max_iterations = k->iterations;
        }
    }
}

/* r = b - A x, *norm = ||r|| (one SpMV, one fused pass, one reduction), recorded. */
static inline nz_status_t nzi_krylov_residual(nzi_krylov_solve_t *k, void *r, double *norm) {
    NZI_TRY(k->ops->apply(k->space, k->x, r));
    NZI_TRY(k->ops->axpby(k->space, 1.0, k->b, -1.0, r));
    NZI_TRY(k->ops->norm2(k->space, r, norm));
    nzi_krylov_record(k, *norm);
    return NZ_SUCCESS;
}

/* A true residual norm settles the solve when it is not finite (NZ_SOLVE_BREAKDOWN_NAN) or meets
 * the tolerance (NZ_SOLVE_CONVERGED, the only way to converge): 1 with the reason set, else 0. */
static inline int nzi_krylov_settled(nzi_krylov_solve_t *k, double true_norm) {
    if (!isfinite(true_norm)) {
        k->reason = NZ_SOLVE_BREAKDOWN_NAN;
        return 1;
    }
    if (true_norm <= k->tol) {
        k->reason = NZ_SOLVE_CONVERGED;
        return 1;
    }
    return 0;
}

/* After the recursive (BiCGSTAB) or least-squares (GMRES) residual met the tolerance, the true
 * one `true_norm` missed it: may the method restart from the true residual? CG's residual
 * replacement rule (cg_scalars.h, after van der Vorst & Ye 2000): each such check must cut the
 * true residual by NZI_CG_REPLACEMENT_GAIN against the previous check, at most
 * NZI_CG_MAX_REPLACEMENTS of them; else the attainable accuracy of the precision is reached and
 * the solve stagnated (0 returned, reason set). */
static inline int nzi_krylov_check(nzi_krylov_solve_t *k, double true_norm) {
    if (k->checks >= NZI_CG_MAX_REPLACEMENTS ||
        (k->checks > 0 && !(true_norm <= NZI_CG_REPLACEMENT_GAIN * k->checked_norm))) {
        k->reason = NZ_SOLVE_STAGNATED;
        return 0;
    }
    k->checks++;
    k->checked_norm = true_norm;
    return 1;
}

/* After a step that may fail on some processes only (a method's allocations): the worst status
 * of every process (nzi_krylov_space_t.agree), so that all leave together. */
static inline nz_status_t nzi_krylov_agree(nzi_krylov_solve_t *k, nz_status_t status) {
    return k->space->agree != NULL ? k->space->agree(k->space, status) : status;
}

/* The methods (bicgstab.c, gmres.c, minres.c, cg_table.c). */
nz_status_t nzi_krylov_bicgstab(nzi_krylov_solve_t *k);
nz_status_t nzi_krylov_gmres(nzi_krylov_solve_t *k);
nz_status_t nzi_krylov_minres(nzi_krylov_solve_t *k);
/* Preconditioned CG on the table (cg_table.c): nz_solve_operator's CG. */
nz_status_t nzi_krylov_cg(nzi_krylov_solve_t *k);
/* Reduction width a method needs from the table (nzi_krylov_space_t.max_dots). */
#define NZI_BICGSTAB_DOTS 2
static inline int nzi_gmres_dots(int restart) { return restart + 1; }

#endif /* NZI_KRYLOV_METHOD_H */
