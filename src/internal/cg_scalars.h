/* cg_scalars.h: CG's scalar state machine, option defaults and final messages, shared by nz_cg_solve, its GPU kernels and nz_dist_cg_solve. */
#ifndef NZI_CG_SCALARS_H
#define NZI_CG_SCALARS_H

/* Header-only and on the public types alone, so that the distributed layer (src/dist, built on
 * the public API) runs the very same iteration logic as the library. */
#include "nonzero.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NZI_CG_DEFAULT_RTOL 1e-8
#define NZI_CG_DEFAULT_MAX_ITERATIONS 10000

/* The scalar state machine runs wherever the scalars live: on the host for the CPU backend, in the
 * last block of a reduction kernel for the GPU backend (so a GPU iteration needs no host round
 * trip). Both compile the same inline functions below. */
#if defined(__CUDACC__)
#define NZI_CG_HD __host__ __device__
#else
#define NZI_CG_HD
#endif

/* Solver state codes (nzi_cg_scalars_t.state). */
#define NZI_CG_RUNNING 0
#define NZI_CG_CONVERGED 1
#define NZI_CG_MAX_ITERATIONS 2
#define NZI_CG_BREAKDOWN_PAP -1 /* p'Ap <= 0: A is not positive definite */
#define NZI_CG_BREAKDOWN_NAN -2 /* a NaN or Inf in a dot product */

/* All scalars of one solve, in double whatever the value type. */
typedef struct nzi_cg_scalars {
    double rz;          /* r'z of the current residual (z = M^-1 r; z = r without preconditioner) */
    double rr;          /* r'r of the current (recursive) residual */
    double pq;          /* p'Ap of the current direction */
    double alpha, beta;
    double tol2;        /* stop when rr <= tol2 */
    double result;      /* output slot of a plain dot product (norms, the final true residual) */
    double *history;    /* ||r_k|| for k = 0 .. (history_capacity - 1); in the scalars' memory */
    int64_t history_capacity;
    int64_t iterations;
    int64_t max_iterations;
    int64_t bad_row;    /* Jacobi setup: first row with a non-positive or missing diagonal */
    int32_t state;      /* NZI_CG_* */
    int32_t x_pending;  /* 1 from an iteration's r update (nzi_cg_after_update) until its x update
                         * (the ops' update_xp, which runs after the state may have stopped);
                         * cleared by dot_pq */
} nzi_cg_scalars_t;

/* The finite test without <math.h> in device code: NaN fails x == x, Inf fails x - x == 0. */
static inline NZI_CG_HD int nzi_cg_finite(double v) { return v == v && v - v == 0.0; }

static inline NZI_CG_HD void nzi_cg_record(nzi_cg_scalars_t *s, double rr) {
    if (s->history != 0 && s->iterations < s->history_capacity)
        s->history[s->iterations] = rr >= 0.0 ? sqrt(rr) : rr;
}

/* After r0 = b - A x0 and z0 = M^-1 r0 (and p0 = z0). */
static inline NZI_CG_HD void nzi_cg_after_init(nzi_cg_scalars_t *s, double rr, double rz) {
    s->rr = rr;
    s->rz = rz;
    s->iterations = 0;
    s->x_pending = 0;
    nzi_cg_record(s, rr);
    if (!nzi_cg_finite(rr) || !nzi_cg_finite(rz))
        s->state = NZI_CG_BREAKDOWN_NAN;
    else if (rr <= s->tol2)
        s->state = NZI_CG_CONVERGED;
    else if (s->max_iterations <= 0)
        s->state = NZI_CG_MAX_ITERATIONS;
    else
        s->state = NZI_CG_RUNNING;
}

/* After q = A p and pq = p'q: the step length, or breakdown. */
static inline NZI_CG_HD void nzi_cg_after_pq(nzi_cg_scalars_t *s, double pq) {
    if (s->state != NZI_CG_RUNNING) return;
    s->pq = pq;
    if (!nzi_cg_finite(pq))
        s->state = NZI_CG_BREAKDOWN_NAN;
    else if (!(pq > 0.0))
        s->state = NZI_CG_BREAKDOWN_PAP;
    else
        s->alpha = s->rz / pq;
}

/* After r -= alpha q, z = M^-1 r with the new rr = r'r and rz = r'z (x += alpha p follows in
 * update_xp, whatever the new state). */
static inline NZI_CG_HD void nzi_cg_after_update(nzi_cg_scalars_t *s, double rr, double rz) {
    if (s->state != NZI_CG_RUNNING) return;
    s->x_pending = 1;
    s->iterations++;
    s->rr = rr;
    nzi_cg_record(s, rr);
    if (!nzi_cg_finite(rr) || !nzi_cg_finite(rz)) {
        s->state = NZI_CG_BREAKDOWN_NAN;
    } else if (rr <= s->tol2) {
        s->state = NZI_CG_CONVERGED;
    } else if (s->iterations >= s->max_iterations) {
        s->state = NZI_CG_MAX_ITERATIONS;
    } else if (!(rz > 0.0)) {
        s->state = NZI_CG_BREAKDOWN_PAP; /* r'M^-1 r <= 0 with r != 0: M not positive */
    } else {
        s->beta = rz / s->rz;
        s->rz = rz;
    }
}

/* Copy *in (all zeros when NULL) to *opt and check it: finite tolerances >= 0, max_iterations
 * >= 0, a known preconditioner; then rtol 0 means NZI_CG_DEFAULT_RTOL and max_iterations 0 means
 * max(n, NZI_CG_DEFAULT_MAX_ITERATIONS). NZ_ERR_INVALID_ARGUMENT with the reason in `why` (no
 * function name) when a check fails. check_interval is the caller's. */
static inline nz_status_t nzi_cg_options_read(const nz_cg_options_t *in, int64_t n,
                                              nz_cg_options_t *opt, char *why, size_t why_size) {
    if (in != NULL)
        *opt = *in;
    else
        memset(opt, 0, sizeof *opt);
    if (!(opt->rtol >= 0.0) || !(opt->atol >= 0.0) || isinf(opt->rtol) || isinf(opt->atol)) {
        snprintf(why, why_size, "tolerances must be finite and >= 0 (rtol %g, atol %g)",
                 opt->rtol, opt->atol);
        return NZ_ERR_INVALID_ARGUMENT;
    }
    if (opt->max_iterations < 0) {
        snprintf(why, why_size, "max_iterations %lld < 0", (long long)opt->max_iterations);
        return NZ_ERR_INVALID_ARGUMENT;
    }
    if (opt->precond != NZ_PRECOND_NONE && opt->precond != NZ_PRECOND_JACOBI) {
        snprintf(why, why_size, "unknown preconditioner %d", (int)opt->precond);
        return NZ_ERR_INVALID_ARGUMENT;
    }
    if (opt->rtol == 0.0) opt->rtol = NZI_CG_DEFAULT_RTOL;
    if (opt->max_iterations == 0)
        opt->max_iterations = n > NZI_CG_DEFAULT_MAX_ITERATIONS ? n : NZI_CG_DEFAULT_MAX_ITERATIONS;
    return NZ_SUCCESS;
}

/* The status a finished solve returns, and for any but NZ_SUCCESS what happened in `why` (no
 * function name): the iteration limit with the relative residual sqrt(rr) / bnorm, or a
 * breakdown. */
static inline nz_status_t nzi_cg_final_message(const nzi_cg_scalars_t *s, double bnorm, char *why,
                                               size_t why_size) {
    switch (s->state) {
    case NZI_CG_CONVERGED: return NZ_SUCCESS;
    case NZI_CG_MAX_ITERATIONS:
        snprintf(why, why_size,
                 "stopped at the iteration limit %lld with relative residual %.3e",
                 (long long)s->max_iterations, sqrt(s->rr) / bnorm);
        return NZ_MAX_ITERATIONS;
    case NZI_CG_BREAKDOWN_PAP:
        snprintf(why, why_size,
                 "breakdown at iteration %lld: p'Ap = %.3e or r'M^-1r <= 0 (A or the "
                 "preconditioner is not positive definite)",
                 (long long)s->iterations, s->pq);
        return NZ_ERR_BREAKDOWN;
    case NZI_CG_BREAKDOWN_NAN:
        snprintf(why, why_size,
                 "breakdown at iteration %lld: NaN or Inf in a dot product (A is singular, "
                 "indefinite or holds non-finite values)",
                 (long long)s->iterations);
        return NZ_ERR_BREAKDOWN;
    default:
        snprintf(why, why_size, "internal state %d", (int)s->state);
        return NZ_ERR_INVALID_ARGUMENT;
    }
}

#ifdef __cplusplus
}
#endif

#endif /* NZI_CG_SCALARS_H */
