/* gmres.c: restarted GMRES(m) and flexible FGMRES(m), right-preconditioned, written once against the Krylov vector-operation table. */
#include "krylov_method.h"

#include <float.h>
#include <math.h>
#include <string.h>

/*
 * GMRES(m) (Saad & Schultz, SISSC 7(3), 1986; Saad, Iterative Methods, 2nd ed., Alg. 6.9 and,
 * right-preconditioned, Alg. 9.5) and FGMRES(m) (Saad, SISC 14(2), 1993; Alg. 9.6), one code.
 * Right preconditioning: |g_{j+1}| below is the norm of the actual residual b - A x_j, not of
 * M^-1 r. Givens rotations reduce the Hessenberg matrix to triangular form as it grows; at a
 * restart or a stop the small triangular system is solved and x updated.
 *
 * Orthogonalisation: classical Gram-Schmidt with delayed (lagged) re-orthogonalisation, DCGS2
 * (Swirydowicz, Langou, Ananthan, Yang & Thomas, "Low synchronization Gram-Schmidt and
 * generalized minimal residual algorithms", NLAA 2021; Bielich, Langou, Thomas, Swirydowicz,
 * Yamazaki & Boman, "Low-synch Gram-Schmidt with delayed reorthogonalization for Krylov
 * solvers", Parallel Computing 2022). Each basis vector gets two CGS passes, as CGS2 does, but
 * the second pass of q_j runs one step late, fused with the first pass of the next vector, so a
 * step has one reduction. At step j, Q = V[0 .. j-1] is final and V[j] holds the candidate u_j
 * (the previous step's once-projected vector divided by its estimated norm rho_{j-1}):
 *
 *  1. w = A M^-1 u_j into V[j+1] (without a preconditioner A u_j directly, no copy; FGMRES keeps
 *     z_j = M^-1 u_j).
 *  2. ONE reduction (multi_dot2 over V[0 .. j+1] against u_j and w): s = Q'u, alpha = u'u,
 *     t = Q'w, beta = u'w, gamma = w'w.
 *  3. The lagged second pass of u_j: u_j = Q s + r q_j with r = sqrt(alpha - s's) (Pythagoras:
 *     s is at the rounding level of the first pass, so no cancellation). Should alpha - s's fall
 *     below sqrt(eps) alpha (the first pass left u_j mostly in span Q), u_j -= Q s and r = ||u_j||
 *     are formed explicitly instead (one more reduction; r not > 0: breakdown).
 *  4. Column j-1, provisional (A M^-1 u_{j-1} = Q h + rho_{j-1} u_j), becomes final: h += rho s,
 *     subdiagonal rho r; its rotation is recomputed.
 *  5. Column j of H: the first-pass coefficients of w against [Q, q_j] from the same dots:
 *     Q'w = t, q_j'w = (beta - s't) / r. The once-projected w' = w - [Q, q_j] h has
 *     ||w'||^2 = gamma - h'h (Pythagoras); when that is below sqrt(eps) gamma (cancellation: the
 *     lucky-breakdown regime) ||w'|| is computed explicitly after step 6 (one more reduction).
 *  6. ONE fused pass over Q (multi_axpy2): q_j = (u_j - Q s) / r into V[j] and the next
 *     candidate u_{j+1} = w' / rho_j into V[j+1], with w' written against Q and the old u_j:
 *     w' = w - Q (t - (h_jj / r) s) - (h_jj / r) u_j.
 *  7. Column j (provisional, subdiagonal rho_j) is rotated: |g_{j+1}| is the least-squares
 *     residual estimate that decides the end of the cycle.
 *
 * H is thus built for the candidates: A M^-1 U_j = V_{j+1} H_j with U = V S, S upper triangular
 * (column j: s and r; S = I + O(eps kappa) since the candidates are already projected and
 * normalised). The papers instead correct w to A M^-1 q_j = (w - V H s) / r before projecting
 * it; projecting w itself spans the same next direction and needs no correction of w, and it is
 * what makes FGMRES exact: the flexible relation A Z = V H holds with z_j = M^-1 u_j whatever M
 * did at each step, while M^-1 q_j would need M linear and fixed. The residual at step 0 is
 * beta u_0 = beta r_0 q_0, so g starts at beta r_0 and the least-squares problem
 * min || beta r_0 e_1 - H y || is the one of GMRES on the same Krylov space (span U = span V).
 * The update is x += M^-1 V (S y) (GMRES; x += V (S y) without a preconditioner) or x += Z y
 * (FGMRES).
 * When a cycle ends (tolerance met, m steps, the iteration limit), the last candidate gets its
 * lagged pass as coefficients only (one multi_dot and one reduction: s, alpha of u_{j+1}; no
 * vector is written), so the last column is final and its rotation recomputed before the back
 * substitution. A lucky breakdown (rho_j ~ 0) ends the cycle without it.
 *
 * Numerically it is CGS2 (Giraud, Langou, Rozloznik & van den Eshof, Numer. Math. 101, 2005:
 * two CGS passes give a basis orthogonal to working precision while A is not numerically
 * singular), the second pass merely lagged: the dots of the second pass of u_j and of the first
 * pass of w share one reduction, and the first pass's coefficients against q_j follow from them
 * exactly in exact arithmetic and to O(eps) given the orthogonality the second passes maintain
 * (the papers above: loss of orthogonality O(eps), as CGS2 and MGS-GMRES). Pythagorean norms are
 * used only where no cancellation can occur; otherwise they are computed.
 *
 * Cost per step j: 1 SpMV, 1 preconditioner apply (none without one; GMRES one more per cycle),
 * ONE reduction (multi_dot2: one pass reading V[0 .. j+1]), ONE fused update pass (multi_axpy2:
 * reads V[0 .. j+1], writes V[j] and V[j+1]): about 2(j+2) vector reads, where CGS with a DGKS
 * second pass reads the basis up to four times and needs 2 to 4 reductions. Per cycle one more
 * reduction (the last column) and one scale of the residual. Vectors: m + 1 (no preconditioner),
 * m + 3 (GMRES) or 2m + 1 (FGMRES).
 *
 * Stopping: each cycle starts from the TRUE residual r = b - A x (one SpMV), so convergence is
 * judged on it at every restart. A cycle ends when the least-squares residual meets the
 * tolerance, at m steps, at the iteration limit, or at a breakdown: rho_j ~ 0 (the Krylov
 * space is invariant: the "lucky" breakdown, converged only if the true residual at the next
 * restart confirms it; a singular H leaves the true residual above the tolerance:
 * NZ_SOLVE_BREAKDOWN_SINGULAR). A cycle whose true residual does not fall below the previous
 * cycle's has stagnated (GMRES(m) can stall completely, e.g. GMRES(1) on a skew operator); a
 * least-squares residual at the tolerance that the true residual misses is handled by CG's
 * replacement rule (nzi_krylov_check).
 */

/* The dense, host-side part of one cycle (all in double); (m + 1) x m matrices column-major,
 * entry (i, j) at [j * (m + 1) + i]. */
typedef struct gmres_dense {
    int m;
    double *H;       /* Hessenberg, unrotated: column j = coefficients of A M^-1 u_j */
    double *R;       /* H with the rotations applied (upper triangular) */
    double *S;       /* u_j = sum_{i<j} S(i, j) q_i + S(j, j) q_j */
    double *cs, *sn; /* the rotations (m) */
    double *g;       /* the rotated right-hand side (m + 1) */
    double *g0;      /* g[j] before rotation j (m + 1): a recomputed rotation restarts from it */
    double *y;       /* the least-squares solution (m) */
    double *dots;    /* multi_dot2's 2 (m + 1) sums */
    double *a, *b;   /* multi_axpy2's coefficients; a also S y (m + 1 each) */
} gmres_dense_t;

#define GMRES_AT(d, i, j) ((size_t)(j) * ((size_t)(d)->m + 1) + (size_t)(i))

/* Column j of R from column j of H: the j earlier rotations, then the new one that zeroes
 * R(j+1, j), applied to g from g0[j]: g_{j+1} = -sn_j g_j is the new least-squares residual.
 * Returns 0 when the column is zero after the rotations (R singular). */
static int gmres_rotate(gmres_dense_t *d, int j) {
    const double *hc = d->H + GMRES_AT(d, 0, j);
    double *h = d->R + GMRES_AT(d, 0, j);
    memcpy(h, hc, ((size_t)j + 2) * sizeof(double));
    for (int i = 0; i < j; i++) {
        const double a = h[i], b = h[i + 1];
        h[i] = d->cs[i] * a + d->sn[i] * b;
        h[i + 1] = -d->sn[i] * a + d->cs[i] * b;
    }
    const double denom = hypot(h[j], h[j + 1]);
    if (!(denom > 0.0)) return 0;
    d->cs[j] = h[j] / denom;
    d->sn[j] = h[j + 1] / denom;
    h[j] = denom;
    h[j + 1] = 0.0;
    d->g[j + 1] = -d->sn[j] * d->g0[j];
    d->g[j] = d->cs[j] * d->g0[j];
    return 1;
}

/* y = R^-1 g for the leading cols x cols triangle. */
static void gmres_back_substitute(gmres_dense_t *d, int cols) {
    for (int i = cols - 1; i >= 0; i--) {
        double sum = d->g[i];
        for (int l = i + 1; l < cols; l++) sum -= d->R[GMRES_AT(d, i, l)] * d->y[l];
        d->y[i] = sum / d->R[GMRES_AT(d, i, i)];
    }
}

/* ||column j of H|| (rows 0 .. j+1): the scale of a breakdown test. */
static double gmres_colnorm(const gmres_dense_t *d, int j) {
    double sum = 0.0;
    for (int i = 0; i <= j + 1; i++) sum += d->H[GMRES_AT(d, i, j)] * d->H[GMRES_AT(d, i, j)];
    return sqrt(sum);
}

/* The vectors of one solve: V[0 .. m] (the basis; V[0] holds the residual at a restart),
 * Z[0 .. nz-1] (with a preconditioner: FGMRES its m vectors z_j, GMRES one), u (GMRES with a
 * preconditioner: V S y). */
typedef struct gmres_vectors {
    void **V, **Z, *u;
    int nz;
    int identity; /* no preconditioner: A applied to the basis directly */
} gmres_vectors_t;

/* How a step ended. */
enum {
    GMRES_STEP_OK,
    GMRES_STEP_NAN,        /* a non-finite value: x keeps columns 0 .. j-1 */
    GMRES_STEP_SINGULAR,   /* column j is zero after the rotations: keep 0 .. j-1 */
    GMRES_STEP_PREV_LUCKY, /* the final column j-1 shows an invariant space: keep 0 .. j-1 */
    GMRES_STEP_PREV_SINGULAR /* the final column j-1 is zero after the rotations: keep 0 .. j-2 */
};

/* One DCGS2 Arnoldi step j (the comment at the top): on entry V[0 .. j-1] final, V[j] the
 * candidate u_j, column j-1 of H provisional with subdiagonal rho (the coefficient of u_j).
 * On return (OK) V[j] = q_j, V[j+1] the next candidate, column j-1 final, column j provisional
 * and rotated, *rho_next its subdiagonal. */
static nz_status_t gmres_step(nzi_krylov_solve_t *k, gmres_vectors_t *vs, gmres_dense_t *d,
                              int j, double rho, double *rho_next, int *state) {
    const nzi_krylov_ops_t *ops = k->ops;
    nzi_krylov_space_t *s = k->space;
    const double eps = s->value_type == NZ_F32 ? (double)FLT_EPSILON : DBL_EPSILON;
    const double trust = sqrt(eps); /* a Pythagorean difference below trust x its minuend is
                                       recomputed (relative error beyond sqrt(eps)) */
    void *u = vs->V[j], *w = vs->V[j + 1];
    *state = GMRES_STEP_OK;
    *rho_next = NAN;
    /* 1. w = A M^-1 u_j */
    if (vs->identity) {
        NZI_TRY(ops->apply(s, u, w));
    } else {
        void *z = k->flexible ? vs->Z[j] : vs->Z[0];
        NZI_TRY(ops->precond(s, u, z));
        NZI_TRY(ops->apply(s, z, w));
    }
    /* 2. one reduction: [Q, u, w]' [u, w] */
    const int kk = j + 2;
    double *o = d->dots;
    NZI_TRY(ops->multi_dot2(s, kk, vs->V, u, w, o));
    for (int i = 0; i < 2 * kk; i++)
        if (!isfinite(o[i])) {
            *state = GMRES_STEP_NAN;
            return NZ_SUCCESS;
        }
    const double *sv = o, *t = o + kk;
    const double alpha = o[j], beta = o[kk + j], gamma = o[kk + j + 1];
    /* 3. the lagged second pass of u_j */
    double ss = 0.0, st = 0.0;
    for (int i = 0; i < j; i++) {
        ss += sv[i] * sv[i];
        st += sv[i] * t[i];
    }
    double r, sfac = 1.0;
    if (alpha - ss > trust * alpha) {
        r = sqrt(alpha - ss);
    } else { /* explicitly: u_j -= Q s, r = ||u_j|| (the fused pass then subtracts nothing) */
        for (int i = 0; i < j; i++) d->a[i] = -sv[i];
        NZI_TRY(ops->multi_axpy(s, j, d->a, vs->V, u));
        NZI_TRY(ops->norm2(s, u, &r));
        sfac = 0.0;
    }
    if (!isfinite(r) || !(r > 0.0)) {
        *state = GMRES_STEP_NAN;
        return NZ_SUCCESS;
    }
    /* 4. column j-1 final: A M^-1 u_{j-1} = Q (h + rho s) + rho r q_j */
    if (j > 0) {
        double *hp = d->H + GMRES_AT(d, 0, j - 1);
        for (int i = 0; i < j; i++) hp[i] += rho * sv[i];
        hp[j] = rho * r;
        if (!gmres_rotate(d, j - 1)) {
            *state = GMRES_STEP_PREV_SINGULAR;
            return NZ_SUCCESS;
        }
        if (!(hp[j] > 4.0 * eps * gmres_colnorm(d, j - 1))) {
            *state = GMRES_STEP_PREV_LUCKY;
            return NZ_SUCCESS;
        }
    } else {
        d->g[0] *= r; /* r_0 = beta u_0 = beta r q_0 */
    }
    double *sc = d->S + GMRES_AT(d, 0, j);
    for (int i = 0; i < j; i++) sc[i] = sv[i];
    sc[j] = r;
    /* 5. column j: h = [Q, q_j]'w from the same dots; ||w'||^2 = gamma - h'h */
    double *h = d->H + GMRES_AT(d, 0, j);
    const double hjj = (beta - st) / r;
    double hh = hjj * hjj;
    for (int i = 0; i < j; i++) {
        h[i] = t[i];
        hh += t[i] * t[i];
    }
    h[j] = hjj;
    const double rho2 = gamma - hh;
    const int pythagoras = rho2 > trust * gamma;
    const double f = pythagoras ? 1.0 / sqrt(rho2) : 1.0;
    /* 6. one fused pass: q_j = (u - sfac Q s) / r; u_{j+1} = f (w - Q (t - sfac c s) - c u),
     * c = h_jj / r */
    const double c = hjj / r;
    for (int i = 0; i < j; i++) {
        d->a[i] = -sfac * sv[i] / r;
        d->b[i] = -f * (t[i] - sfac * c * sv[i]);
    }
    NZI_TRY(ops->multi_axpy2(s, j, d->a, d->b, vs->V, 1.0 / r, u, f, -f * c, w));
    double rn;
    if (pythagoras) {
        rn = sqrt(rho2);
    } else {
        NZI_TRY(ops->norm2(s, w, &rn));
        if (rn > 0.0 && isfinite(rn)) NZI_TRY(ops->scale(s, 1.0 / rn, w));
    }
    h[j + 1] = rn;
    *rho_next = rn;
    for (int i = 0; i <= j + 1; i++)
        if (!isfinite(h[i])) {
            *state = GMRES_STEP_NAN;
            return NZ_SUCCESS;
        }
    /* 7. rotate the provisional column j */
    d->g0[j] = d->g[j];
    if (!gmres_rotate(d, j)) *state = GMRES_STEP_SINGULAR;
    return NZ_SUCCESS;
}

/* The end of a cycle whose last column j is provisional (subdiagonal rho, the candidate in
 * V[j+1]): the candidate's lagged pass as coefficients only (one multi_dot, one reduction), so
 * column j is final, and its rotation recomputed. *cols drops to j when that column turns out
 * singular. */
static nz_status_t gmres_finish(nzi_krylov_solve_t *k, gmres_vectors_t *vs, gmres_dense_t *d,
                                int j, double rho, int *cols) {
    const int kk = j + 2;
    double *o = d->dots;
    NZI_TRY(k->ops->multi_dot(k->space, kk, vs->V, vs->V[j + 1], o));
    for (int i = 0; i < kk; i++)
        if (!isfinite(o[i])) return NZ_SUCCESS; /* keep the provisional column */
    double ss = 0.0;
    for (int i = 0; i <= j; i++) ss += o[i] * o[i];
    const double r2 = o[j + 1] - ss;
    double *h = d->H + GMRES_AT(d, 0, j);
    for (int i = 0; i <= j; i++) h[i] += rho * o[i];
    h[j + 1] = rho * sqrt(r2 > 0.0 ? r2 : 0.0);
    if (!gmres_rotate(d, j)) *cols = j;
    return NZ_SUCCESS;
}

/* x += Z y (FGMRES with a preconditioner), x += M^-1 (V S y) (GMRES) or x += V S y (no
 * preconditioner) for the first cols columns. */
static nz_status_t gmres_update_x(nzi_krylov_solve_t *k, gmres_vectors_t *vs, gmres_dense_t *d,
                                  int cols) {
    const nzi_krylov_ops_t *ops = k->ops;
    nzi_krylov_space_t *s = k->space;
    if (cols <= 0) return NZ_SUCCESS;
    gmres_back_substitute(d, cols);
    for (int i = 0; i < cols; i++)
        if (!isfinite(d->y[i])) {
            k->reason = NZ_SOLVE_BREAKDOWN_NAN;
            return NZ_SUCCESS;
        }
    if (k->flexible && !vs->identity) return ops->multi_axpy(s, cols, d->y, vs->Z, k->x);
    /* the candidates U = V S: U y = V (S y), S upper triangular */
    for (int i = 0; i < cols; i++) {
        double sum = 0.0;
        for (int l = i; l < cols; l++) sum += d->S[GMRES_AT(d, i, l)] * d->y[l];
        d->a[i] = sum;
    }
    if (vs->identity) return ops->multi_axpy(s, cols, d->a, vs->V, k->x);
    NZI_TRY(ops->fill(s, 0.0, vs->u));
    NZI_TRY(ops->multi_axpy(s, cols, d->a, vs->V, vs->u));
    NZI_TRY(ops->precond(s, vs->u, vs->Z[0]));
    return ops->axpby(s, 1.0, vs->Z[0], 1.0, k->x);
}

/* One cycle from the true residual in V[0] with norm beta: up to m steps, the last column
 * finished, then x updated. *met: the least-squares residual met the tolerance; *lucky: an
 * invariant space. */
static nz_status_t gmres_cycle(nzi_krylov_solve_t *k, gmres_vectors_t *vs, gmres_dense_t *d,
                               double beta, int *met, int *lucky) {
    const nzi_krylov_ops_t *ops = k->ops;
    nzi_krylov_space_t *s = k->space;
    /* The breakdown test: rho_j at the rounding level of the value type relative to the column
     * it came from means A M^-1 u_j lies in the space already. */
    const double eps = s->value_type == NZ_F32 ? (double)FLT_EPSILON : DBL_EPSILON;
    int cols = 0, finish = 0;
    double rho = 0.0;
    *met = *lucky = 0;
    memset(d->g, 0, (size_t)(d->m + 1) * sizeof(double));
    d->g[0] = beta;
    NZI_TRY(ops->scale(s, 1.0 / beta, vs->V[0]));
    for (int j = 0; j < d->m && k->iterations < k->max_iterations; j++) {
        double rho_next;
        int state;
        NZI_TRY(gmres_step(k, vs, d, j, rho, &rho_next, &state));
        if (state == GMRES_STEP_PREV_LUCKY || state == GMRES_STEP_PREV_SINGULAR) {
            /* column j-1, now final, shows the invariant space: step j is discarded */
            cols = state == GMRES_STEP_PREV_LUCKY ? j : j - 1;
            *lucky = 1;
            finish = 0;
            break;
        }
        k->iterations++;
        if (state == GMRES_STEP_NAN || !isfinite(d->g[j + 1])) {
            nzi_krylov_record(k, NAN);
            k->reason = NZ_SOLVE_BREAKDOWN_NAN;
            finish = 0;
            break; /* x keeps the columns before this one */
        }
        if (state == GMRES_STEP_SINGULAR) { /* column j is useless; the space is invariant */
            nzi_krylov_record(k, fabs(d->g[j]));
            *lucky = 1;
            finish = 0;
            break;
        }
        cols = j + 1;
        rho = rho_next;
        finish = 1;
        const double estimate = fabs(d->g[j + 1]);
        nzi_krylov_record(k, estimate);
        if (estimate <= k->tol) {
            *met = 1;
            break;
        }
        if (rho_next <= 4.0 * eps * gmres_colnorm(d, j)) {
            *lucky = 1;
            finish = 0; /* the candidate is noise: column j stays as it is */
            break;
        }
    }
    if (finish && cols > 0) NZI_TRY(gmres_finish(k, vs, d, cols - 1, rho, &cols));
    return gmres_update_x(k, vs, d, cols);
}

/* Cycles until the true residual at a restart meets the tolerance, or another reason stops. */
static nz_status_t gmres_run(nzi_krylov_solve_t *k, gmres_vectors_t *vs, gmres_dense_t *d) {
    double beta, previous = INFINITY;
    int met = 0, lucky = 0;
    for (int64_t cycle = 0;; cycle++) {
        NZI_TRY(nzi_krylov_residual(k, vs->V[0], &beta));
        if (k->reason != NZ_SOLVE_NOT_RUN) return NZ_SUCCESS; /* NaN in the last cycle */
        if (nzi_krylov_settled(k, beta)) return NZ_SUCCESS;
        if (lucky && !met) { /* invariant space, yet the least-squares residual stayed above */
            k->reason = NZ_SOLVE_BREAKDOWN_SINGULAR;
            return NZ_SUCCESS;
        }
        if (k->iterations >= k->max_iterations) {
            k->reason = NZ_SOLVE_MAX_ITERATIONS;
            return NZ_SUCCESS;
        }
        if (met || lucky) {
            if (!nzi_krylov_check(k, beta)) return NZ_SUCCESS;
        } else if (!(beta < previous)) {
            k->reason = NZ_SOLVE_STAGNATED;
            return NZ_SUCCESS;
        }
        previous = beta;
        if (cycle > 0) k->restarts++;
        NZI_TRY(gmres_cycle(k, vs, d, beta, &met, &lucky));
    }
}

/* Workspace (vectors of the space; the small dense arrays on the host, through the context),
 * the cycles, everything freed. */
nz_status_t nzi_krylov_gmres(nzi_krylov_solve_t *k) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = k->space->ctx;
    const int m = k->restart;
    gmres_vectors_t vs;
    gmres_dense_t d;
    double *dense = NULL;
    int agreed = 0;
    memset(&vs, 0, sizeof vs);
    memset(&d, 0, sizeof d);
    /* without a preconditioner A is applied to the basis itself and x += V S y: no Z, no u */
    vs.identity = k->space->precond == NZ_PRECOND_NONE;
    vs.nz = vs.identity ? 0 : k->flexible ? m : 1;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&vs.V, (size_t)m + 1, sizeof(void *),
                              "nz_solve: basis"));
    memset(vs.V, 0, ((size_t)m + 1) * sizeof(void *));
    if (vs.nz > 0) {
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&vs.Z, (size_t)vs.nz, sizeof(void *),
                                  "nz_solve: Z"));
        memset(vs.Z, 0, (size_t)vs.nz * sizeof(void *));
    }
    for (int i = 0; i <= m; i++)
        NZI_CHECK(k->ops->vec_create(k->space, &vs.V[i], "nz_solve: GMRES basis vector"));
    for (int i = 0; i < vs.nz; i++)
        NZI_CHECK(k->ops->vec_create(k->space, &vs.Z[i], "nz_solve: GMRES preconditioned vector"));
    if (!k->flexible && !vs.identity)
        NZI_CHECK(k->ops->vec_create(k->space, &vs.u, "nz_solve: GMRES update vector"));
    /* H, R, S (m+1) m each; cs, sn, y m each; g, g0, a, b m+1 each; dots 2 (m+1) */
    const size_t mm = ((size_t)m + 1) * (size_t)m;
    const size_t count = 3 * mm + 3 * (size_t)m + 6 * ((size_t)m + 1);
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&dense, count, sizeof(double), "nz_solve: Hessenberg"));
    memset(dense, 0, count * sizeof(double));
    d.m = m;
    d.H = dense;
    d.R = d.H + mm;
    d.S = d.R + mm;
    d.cs = d.S + mm;
    d.sn = d.cs + m;
    d.y = d.sn + m;
    d.g = d.y + m;
    d.g0 = d.g + m + 1;
    d.a = d.g0 + m + 1;
    d.b = d.a + m + 1;
    d.dots = d.b + m + 1;
    agreed = 1;
    NZI_CHECK(nzi_krylov_agree(k, NZ_SUCCESS));
    status = gmres_run(k, &vs, &d);
cleanup:
    if (!agreed) status = nzi_krylov_agree(k, status);
    if (vs.V != NULL)
        for (int i = 0; i <= m; i++) k->ops->vec_destroy(k->space, vs.V[i]);
    if (vs.Z != NULL)
        for (int i = 0; i < vs.nz; i++) k->ops->vec_destroy(k->space, vs.Z[i]);
    k->ops->vec_destroy(k->space, vs.u);
    nzi_free(ctx, vs.V);
    nzi_free(ctx, vs.Z);
    nzi_free(ctx, dense);
    return status;
}
