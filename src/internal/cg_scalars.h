/* cg_scalars.h: CG's scalar state machine, option defaults and final messages, shared by nz_cg_solve, its GPU kernels and nz_dist_cg_solve. */
#ifndef NZI_CG_SCALARS_H
#define NZI_CG_SCALARS_H

/* Header-only and on the public types alone, so that the distributed layer (src/mpi, built on
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

/* Solver state codes (nzi_cg_scalars_t.state). CONVERGED is only ever set from a true residual
 * b - A x (the initial one, or a check); the recursive residual r_k, which drifts from b - A x_k
 * in finite precision, only asks for a check (CHECK). */
#define NZI_CG_RUNNING 0
#define NZI_CG_CONVERGED 1      /* the true residual meets the tolerance */
#define NZI_CG_MAX_ITERATIONS 2
#define NZI_CG_CHECK 3          /* the recursive residual meets the tolerance: the caller computes
                                 * the true one (nzi_cg_after_replace) */
#define NZI_CG_STAGNATED 4      /* the true residual no longer decreases across replacements */
#define NZI_CG_BREAKDOWN_PAP -1 /* p'Ap <= 0: A is not positive definite */
#define NZI_CG_BREAKDOWN_NAN -2 /* a NaN or Inf in a dot product */

/* Residual replacement (van der Vorst & Ye, "Residual replacement strategies for Krylov subspace
 * iterative methods", SISC 22(3), 2000; PETSc's KSPConvergedDefault checks the same criterion on
 * the true residual). When the recursive residual meets the tolerance, r = b - A x is computed;
 * if it misses, CG restarts from it (r and p = M^-1 r replaced, x kept). A replacement must cut
 * the true residual norm by NZI_CG_REPLACEMENT_GAIN against the previous one, else the
 * attainable accuracy of the precision is reached (||b - A x|| ~ eps ||A|| ||x|| whatever the
 * recursion says) and the solve stops as stagnated; at most NZI_CG_MAX_REPLACEMENTS are made. A
 * replacement costs one SpMV and one vector pass; CG needs one or two in practice. */
#define NZI_CG_MAX_REPLACEMENTS 16
#define NZI_CG_REPLACEMENT_GAIN 0.5

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
    double rr_replaced; /* true r'r at the last replacement */
    int32_t replacements; /* residual replacements made (<= NZI_CG_MAX_REPLACEMENTS) */
    int32_t state;      /* NZI_CG_* */
    int32_t x_pending;  /* 1 from an iteration's r update (nzi_cg_after_update) until its x update
                         * (the ops' update_xp, which runs after the state may have stopped);
                         * cleared by dot_pq */
} nzi_cg_scalars_t;

/* Modes of the ops' residual pass r = b - A x, p = M^-1 r (cg_work.h, and the distributed CG). */
#define NZI_CG_RESIDUAL_TRUE 0    /* result = r'r only (the final true residual) */
#define NZI_CG_RESIDUAL_INIT 1    /* the starting residual: nzi_cg_after_init */
#define NZI_CG_RESIDUAL_REPLACE 2 /* a check of a CHECK state: nzi_cg_after_replace */

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
    s->replacements = 0;
    s->rr_replaced = rr;
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
        s->state = NZI_CG_CHECK; /* recursive only: the true residual decides */
    } else if (s->iterations >= s->max_iterations) {
        s->state = NZI_CG_MAX_ITERATIONS;
    } else if (!(rz > 0.0)) {
        s->state = NZI_CG_BREAKDOWN_PAP; /* r'M^-1 r <= 0 with r != 0: M not positive */
    } else {
        s->beta = rz / s->rz;
        s->rz = rz;
    }
}

/* After the check of a CHECK state: r = b - A x (the true residual), p = z = M^-1 r with rr = r'r
 * and rz = r'z. Converged if the true residual meets the tolerance; else CG goes on from it (a
 * residual replacement: the recursion restarts with p = z) unless it stagnated (it did not fall
 * below NZI_CG_REPLACEMENT_GAIN times the previous replacement's, or NZI_CG_MAX_REPLACEMENTS are
 * spent) or the iteration limit is reached. The history entry of this iteration becomes the true
 * residual norm. */
static inline NZI_CG_HD void nzi_cg_after_replace(nzi_cg_scalars_t *s, double rr, double rz) {
    if (s->state != NZI_CG_CHECK) return;
    s->x_pending = 0;
    s->rr = rr;
    nzi_cg_record(s, rr);
    if (!nzi_cg_finite(rr) || !nzi_cg_finite(rz)) {
        s->state = NZI_CG_BREAKDOWN_NAN;
    } else if (rr <= s->tol2) {
        s->state = NZI_CG_CONVERGED;
    } else if (s->replacements >= NZI_CG_MAX_REPLACEMENTS ||
               (s->replacements > 0 &&
                rr > NZI_CG_REPLACEMENT_GAIN * NZI_CG_REPLACEMENT_GAIN * s->rr_replaced)) {
        s->state = NZI_CG_STAGNATED;
    } else if (s->iterations >= s->max_iterations) {
        s->state = NZI_CG_MAX_ITERATIONS;
    } else if (!(rz > 0.0)) {
        s->state = NZI_CG_BREAKDOWN_PAP;
    } else {
        s->replacements++;
        s->rr_replaced = rr;
        s->rz = rz;
        s->state = NZI_CG_RUNNING;
    }
}

/* The final true residual true_rr = ||b - A x||^2 of the returned x: a solve stopped at the
 * iteration limit whose true residual meets the tolerance after all converged. */
static inline void nzi_cg_after_true(nzi_cg_scalars_t *s, double true_rr) {
    if (s->state == NZI_CG_MAX_ITERATIONS && true_rr <= s->tol2) s->state = NZI_CG_CONVERGED;
}

/* NaN-propagating maximum (a NaN in either argument wins): for max-abs reductions that must see
 * a NaN or Inf in the vector. */
static inline NZI_CG_HD double nzi_cg_max(double a, double b) { return (a > b || a != a) ? a : b; }

/* ---- scaling: solving 2^e A x = 2^e b with vectors of moderate size ----
 * CG's scalars are sums of squares in double: b with entries 1e160 overflows r'r, entries 1e-170
 * underflow it to 0 (and a float vector near its range loses digits to subnormals). The solve
 * then runs on 2^e b and 2^e x0 (powers of two: exact) and returns 2^-e x; tolerances, the
 * history and the residual norm are scaled alike. No scaling (e = 0, the same bits as without
 * this) when ||b||^2 lies in [2^-2E, 2^2E], E = NZI_CG_SAFE_EXPONENT of the value type. */
#define NZI_CG_SAFE_EXPONENT_F64 256
#define NZI_CG_SAFE_EXPONENT_F32 32

static inline int nzi_cg_safe_exponent(nz_value_type_t value_type) {
    return value_type == NZ_F32 ? NZI_CG_SAFE_EXPONENT_F32 : NZI_CG_SAFE_EXPONENT_F64;
}

/* Whether bb = ||b||^2 (as computed, possibly overflowed or underflowed) needs no scaling. */
static inline int nzi_cg_norm2_safe(double bb, nz_value_type_t value_type) {
    const int e = nzi_cg_safe_exponent(value_type);
    return bb >= ldexp(1.0, -2 * e) && bb <= ldexp(1.0, 2 * e); /* NaN: not safe */
}

/* The exponent e that brings max|b| = bmax (finite, > 0) to [1, 2), lowered where 2^e xmax
 * (xmax = max|x0|) would pass 2^E, but never so far that 2^e bmax falls below 2^-E (a huge guess
 * for a tiny b: both stay representable, and the solve stagnates honestly rather than
 * overflowing or taking b for 0). */
static inline int nzi_cg_scale_exponent(double bmax, double xmax, nz_value_type_t value_type) {
    const int limit = nzi_cg_safe_exponent(value_type);
    int e = -ilogb(bmax);
    if (e > 0 && xmax > 0.0 && isfinite(xmax) && ilogb(xmax) + e > limit) {
        e = limit - ilogb(xmax);
        if (e < -limit - ilogb(bmax)) e = -limit - ilogb(bmax);
    }
    return e;
}

/* The stopping tolerance of the solve run on 2^e A x = 2^e b: max(rtol ||2^e b||, 2^e atol),
 * with bnorm = ||2^e b||; *reltol = that tolerance / bnorm. ldexp of atol may overflow to Inf:
 * then any residual meets it, as it does unscaled. */
static inline double nzi_cg_scaled_tolerance(double rtol, double atol, double bnorm, int exponent,
                                             double *reltol) {
    double tol = rtol * bnorm;
    if (ldexp(atol, exponent) > tol) tol = ldexp(atol, exponent);
    *reltol = tol / bnorm;
    return tol;
}

/* The residual history of a scaled solve back to the caller's problem (2^-e each entry). */
static inline void nzi_cg_unscale_history(double *history, int64_t count, int exponent) {
    for (int64_t k = 0; k < count && exponent != 0; k++)
        history[k] = ldexp(history[k], -exponent);
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
 * function name). relres is the true relative residual ||b - A x|| / ||b|| of the returned x and
 * reltol the tolerance max(rtol ||b||, atol) / ||b||: a caveat names both. */
static inline nz_status_t nzi_cg_final_message(const nzi_cg_scalars_t *s, double relres,
                                               double reltol, char *why, size_t why_size) {
    switch (s->state) {
    case NZI_CG_CONVERGED: return NZ_SUCCESS;
    case NZI_CG_MAX_ITERATIONS:
        snprintf(why, why_size,
                 "not converged: stopped at the iteration limit %lld with true relative residual "
                 "%.3e above the tolerance %.3e",
                 (long long)s->max_iterations, relres, reltol);
        return NZ_MAX_ITERATIONS;
    case NZI_CG_STAGNATED:
        snprintf(why, why_size,
                 "not converged: stagnated after %lld iterations and %d residual replacements "
                 "with true relative residual %.3e above the tolerance %.3e (the attainable "
                 "accuracy of this precision and matrix)",
                 (long long)s->iterations, (int)s->replacements, relres, reltol);
        return NZ_STAGNATED;
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
