/* gmres.c: restarted GMRES(m) and flexible FGMRES(m), right-preconditioned, written once against the Krylov vector-operation table. */
#include "krylov_method.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* DGKS: a second Gram-Schmidt pass when ||w|| after the first is below this times ||w|| before */
#define GMRES_DGKS_ETA 0.70710678118654752

/*
 * GMRES(m) (Saad & Schultz, SISSC 7(3), 1986; Saad, Iterative Methods, 2nd ed., Alg. 6.9 and,
 * right-preconditioned, Alg. 9.5) and FGMRES(m) (Saad, SISC 14(2), 1993; Alg. 9.6), one code:
 * Arnoldi on A M^-1 builds an orthonormal basis V of the Krylov space and the (j+1) x j
 * Hessenberg H with A Z_j = V_{j+1} H_j, z_j = M^-1 v_j. Givens rotations reduce H to triangular
 * form as it grows, so |g_{j+1}| is the least-squares residual ||b - A x_j|| at no extra cost
 * (right preconditioning: the norm of the actual residual, not of M^-1 r). At a restart or a
 * stop x += Z y with R y = g (back substitution). GMRES stores V only and forms Z y = M^-1 (V y)
 * with one more preconditioner apply; FGMRES stores the m vectors z_j, so M may change between
 * iterations (a callback that runs an inner iteration).
 *
 * Orthogonalisation: classical Gram-Schmidt with a second pass when the first one cancelled
 * (h = V'w, w -= V h; then, only if ||w|| fell below ||w_before|| / sqrt(2), c = V'w, w -= V c,
 * h += c): the Daniel-Gragg-Kaufman-Stewart criterion (Math. Comp. 30, 1976), PETSc's
 * "refine if needed". Giraud, Langou, Rozloznik & van den Eshof ("Rounding error analysis of
 * the classical Gram-Schmidt orthogonalization process", Numer. Math. 101, 2005) show that two
 * passes give a basis orthogonal to working precision, as modified Gram-Schmidt with
 * re-orthogonalisation does; a first pass that removed little of w left it orthogonal already,
 * and the criterion catches the cancelling ones. Each CGS pass is one multi_dot (all j+1 dots in
 * one pass over w and one reduction; the first also gives w'w) and one multi_axpy, where MGS
 * needs j+1 dependent reductions: on a GPU or across nodes a reduction is a synchronisation.
 * Cost per step j: 1 SpMV, 1 preconditioner apply (FGMRES; GMRES one more per cycle), 2
 * reductions and 2(j+1) + 3 vector passes (twice that when the second pass runs); m + 2 vectors
 * (GMRES) or 2m + 2 (FGMRES).
 *
 * Stopping: each cycle starts from the TRUE residual r = b - A x (one SpMV), so convergence is
 * judged on it at every restart. A cycle ends when the least-squares residual meets the
 * tolerance, at m steps, at the iteration limit, or at a breakdown: h_{j+1,j} ~ 0 (the Krylov
 * space is invariant: the "lucky" breakdown, converged only if the true residual at the next
 * restart confirms it; a singular H leaves the true residual above the tolerance:
 * NZ_SOLVE_BREAKDOWN_SINGULAR). A cycle whose true residual does not fall below the previous
 * cycle's has stagnated (GMRES(m) can stall completely, e.g. GMRES(1) on a skew operator); a
 * least-squares residual at the tolerance that the true residual misses is handled by CG's
 * replacement rule (nzi_krylov_check).
 */

/* The dense, host-side part of one cycle (all in double). */
typedef struct gmres_dense {
    int m;
    double *H;    /* (m + 1) x m, column-major: H[j * (m + 1) + i] */
    double *cs, *sn; /* the rotations (m) */
    double *g;    /* the rotated right-hand side beta e_1 (m + 1) */
    double *y;    /* the least-squares solution (m) */
    double *c;    /* the second CGS pass's coefficients (m + 1) */
} gmres_dense_t;

/* Apply the j earlier rotations to column j of H, then the new one that zeroes H[j+1, j]:
 * g_{j+1} = -sn_j g_j is the new least-squares residual. Returns 0 when the column is zero after
 * the rotations (R singular). */
static int gmres_rotate(gmres_dense_t *d, int j) {
    double *h = d->H + (size_t)j * (d->m + 1);
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
    d->g[j + 1] = -d->sn[j] * d->g[j];
    d->g[j] = d->cs[j] * d->g[j];
    return 1;
}

/* y = R^-1 g for the leading cols x cols triangle of the rotated H. */
static void gmres_back_substitute(gmres_dense_t *d, int cols) {
    for (int i = cols - 1; i >= 0; i--) {
        double sum = d->g[i];
        for (int l = i + 1; l < cols; l++) sum -= d->H[(size_t)l * (d->m + 1) + i] * d->y[l];
        d->y[i] = sum / d->H[(size_t)i * (d->m + 1) + i];
    }
}

/* The vectors of one solve: V[0 .. m] (the basis; V[0] holds the residual at a restart),
 * Z[0 .. m-1] (FGMRES; GMRES uses Z[0] as its one preconditioned vector), u (GMRES: V y). */
typedef struct gmres_vectors {
    void **V, **Z, *u;
    int nz;
} gmres_vectors_t;

/* One Arnoldi step j: w = A M^-1 v_j into V[j+1], CGS2 against V[0 .. j], H's column j, its
 * rotation. *hn = h_{j+1,j}; *colnorm = ||A M^-1 v_j|| (the scale of a breakdown test);
 * *rotated = 0 when R became singular. */
static nz_status_t gmres_arnoldi(nzi_krylov_solve_t *k, gmres_vectors_t *vs, gmres_dense_t *d,
                                 int j, double *hn, int *rotated) {
    const nzi_krylov_ops_t *ops = k->ops;
    nzi_krylov_space_t *s = k->space;
    void *z = k->flexible ? vs->Z[j] : vs->Z[0];
    double *h = d->H + (size_t)j * (d->m + 1);
    NZI_TRY(ops->precond(s, vs->V[j], z));
    NZI_TRY(ops->apply(s, z, vs->V[j + 1]));
    /* pass 1: h = V'w and w'w in one multi_dot (V[j + 1] is w itself), w -= V h */
    NZI_TRY(ops->multi_dot(s, j + 2, vs->V, vs->V[j + 1], h));
    const double before = sqrt(fabs(h[j + 1]));
    for (int i = 0; i <= j; i++) h[i] = -h[i];
    NZI_TRY(ops->multi_axpy(s, j + 1, h, vs->V, vs->V[j + 1]));
    for (int i = 0; i <= j; i++) h[i] = -h[i];
    NZI_TRY(ops->norm2(s, vs->V[j + 1], hn));
    /* pass 2 only when pass 1 cancelled: ||w|| fell below ||w before|| / sqrt(2) (DGKS) */
    if (!(*hn > GMRES_DGKS_ETA * before)) {
        NZI_TRY(ops->multi_dot(s, j + 1, vs->V, vs->V[j + 1], d->c));
        for (int i = 0; i <= j; i++) d->c[i] = -d->c[i];
        NZI_TRY(ops->multi_axpy(s, j + 1, d->c, vs->V, vs->V[j + 1]));
        for (int i = 0; i <= j; i++) h[i] -= d->c[i];
        NZI_TRY(ops->norm2(s, vs->V[j + 1], hn));
    }
    h[j + 1] = *hn;
    *rotated = 1;
    for (int i = 0; i <= j + 1; i++)
        if (!isfinite(h[i])) {
            *hn = NAN; /* the caller stops on it */
            return NZ_SUCCESS;
        }
    *rotated = gmres_rotate(d, j);
    return NZ_SUCCESS;
}

/* x += Z y (FGMRES) or x += M^-1 (V y) (GMRES) for the first cols columns. */
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
    if (k->flexible) return ops->multi_axpy(s, cols, d->y, vs->Z, k->x);
    NZI_TRY(ops->fill(s, 0.0, vs->u));
    NZI_TRY(ops->multi_axpy(s, cols, d->y, vs->V, vs->u));
    NZI_TRY(ops->precond(s, vs->u, vs->Z[0]));
    return ops->axpby(s, 1.0, vs->Z[0], 1.0, k->x);
}

/* One cycle from the true residual in V[0] with norm beta: up to m Arnoldi steps, then x
 * updated. *met: the least-squares residual met the tolerance; *lucky: an invariant space. */
static nz_status_t gmres_cycle(nzi_krylov_solve_t *k, gmres_vectors_t *vs, gmres_dense_t *d,
                               double beta, int *met, int *lucky) {
    const nzi_krylov_ops_t *ops = k->ops;
    nzi_krylov_space_t *s = k->space;
    /* The breakdown test: h_{j+1,j} at the rounding level of the value type relative to the
     * column it came from means A M^-1 v_j lies in the space already. */
    const double eps = s->value_type == NZ_F32 ? (double)FLT_EPSILON : DBL_EPSILON;
    int cols = 0;
    *met = *lucky = 0;
    memset(d->g, 0, (size_t)(d->m + 1) * sizeof(double));
    d->g[0] = beta;
    NZI_TRY(ops->scale(s, 1.0 / beta, vs->V[0]));
    for (int j = 0; j < d->m && k->iterations < k->max_iterations; j++) {
        double hn;
        int rotated;
        NZI_TRY(gmres_arnoldi(k, vs, d, j, &hn, &rotated));
        k->iterations++;
        if (!isfinite(hn) || !isfinite(d->g[j + 1])) {
            nzi_krylov_record(k, NAN);
            k->reason = NZ_SOLVE_BREAKDOWN_NAN;
            break; /* x keeps the columns before this one */
        }
        if (!rotated) { /* R singular: column j is useless; the space is invariant */
            nzi_krylov_record(k, fabs(d->g[j]));
            *lucky = 1;
            break;
        }
        cols = j + 1;
        const double estimate = fabs(d->g[j + 1]);
        nzi_krylov_record(k, estimate);
        double colnorm = 0.0;
        for (int i = 0; i <= j; i++) {
            const double hij = d->H[(size_t)j * (d->m + 1) + i];
            colnorm += hij * hij;
        }
        colnorm = sqrt(colnorm + hn * hn);
        if (estimate <= k->tol) {
            *met = 1;
            break;
        }
        if (hn <= 4.0 * eps * colnorm) {
            *lucky = 1;
            break;
        }
        NZI_TRY(ops->scale(s, 1.0 / hn, vs->V[j + 1]));
    }
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
    vs.nz = k->flexible ? m : 1;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&vs.V, (size_t)m + 1, sizeof(void *),
                              "nz_solve: basis"));
    memset(vs.V, 0, ((size_t)m + 1) * sizeof(void *));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&vs.Z, (size_t)vs.nz, sizeof(void *), "nz_solve: Z"));
    memset(vs.Z, 0, (size_t)vs.nz * sizeof(void *));
    for (int i = 0; i <= m; i++)
        NZI_CHECK(k->ops->vec_create(k->space, &vs.V[i], "nz_solve: GMRES basis vector"));
    for (int i = 0; i < vs.nz; i++)
        NZI_CHECK(k->ops->vec_create(k->space, &vs.Z[i], "nz_solve: GMRES preconditioned vector"));
    if (!k->flexible)
        NZI_CHECK(k->ops->vec_create(k->space, &vs.u, "nz_solve: GMRES update vector"));
    /* H (m+1) m, cs m, sn m, g m+1, y m, c m+1 */
    const size_t count = ((size_t)m + 1) * (size_t)m + 3 * (size_t)m + 2 * ((size_t)m + 1);
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&dense, count, sizeof(double), "nz_solve: Hessenberg"));
    memset(dense, 0, count * sizeof(double));
    d.m = m;
    d.H = dense;
    d.cs = d.H + ((size_t)m + 1) * (size_t)m;
    d.sn = d.cs + m;
    d.y = d.sn + m;
    d.g = d.y + m;
    d.c = d.g + m + 1;
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
