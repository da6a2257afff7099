/* amg.c: smoothed-aggregation algebraic multigrid (NZ_PRECOND_AMG): the set-up phase by phase on the host, the cycle on the Krylov vector operations and SpMV plans of A's backend. */
#include "nzi.h"
#include "backend.h"
#include "krylov.h"
#include "amg.h"

#include <float.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/*
 * Vaněk, Mandel and Brezina's smoothed aggregation, in the order PyAMG's
 * smoothed_aggregation_solver states it, one function per phase:
 *
 *   strength     S: node j strong for i when |a_ij| >= theta sqrt(|a_ii a_jj|) (blocks of
 *                block_size unknowns: Frobenius norms), made symmetric (S union S^T)
 *   aggregate    roots = a distance-2 maximal independent set of S (Luby-style rounds with a
 *                fixed hash as priority: Bell, Dalton and Olson, SISC 2012), each node joined
 *                to its strongest root neighbour, then to its strongest neighbour's aggregate
 *   tentative    T: per aggregate, the QR factorisation of the near-nullspace rows (modified
 *                Gram-Schmidt, twice); Q is T's block, R the coarse near-nullspace
 *   smooth       P = T - omega / rho(D^-1 A) D^-1 (A T): an SpGEMM plan and an SpGEAM plan
 *   rap          A_c = P^T A P: a Galerkin-product plan
 *
 * level by level until max_coarse rows; the coarsest level gets a dense LU inverse applied as
 * a CSR SpMV. Strength, aggregation and T are host code (parallel loops whose results do not
 * depend on the thread count); the products are Nonzero SpGEMM / SpGEAM / RAP plans where A
 * lives (bitwise equal on host and device); rho(D^-1 A) is the Chebyshev preconditioner's power
 * iteration on the host's Krylov table, or on the device's for a device A outside deterministic
 * mode (its own summation order). So the
 * hierarchy is bitwise the same for any thread count, and with NZ_PLAN_DETERMINISTIC for a
 * host or device A. The cycle runs where
 * A lives, written once on the backend's Krylov table: smoother, residual, restriction, coarse
 * cycle, prolongation, smoother. Re-setup (nzi_amg_update) keeps the aggregation, T and every
 * symbolic product and recomputes values through the plans.
 */

#define NZI_AMG_DEFAULT_LEVELS 10
#define NZI_AMG_DEFAULT_COARSE 256
#define NZI_AMG_MAX_COARSE 1024    /* the dense inverse: (8/3) m^3 flops, m^2 entries */
#define NZI_AMG_DEFAULT_DEGREE 2
#define NZI_AMG_MAX_DEGREE 16
#define NZI_AMG_DEFAULT_RATIO 10.0 /* Chebyshev smoothing interval [lambda / 10, lambda] */
#define NZI_AMG_MAX_NULLSPACE 16
#define NZI_AMG_POWER_STEPS 15
#define NZI_AMG_SAFETY 1.1         /* lambda_max estimates approach from below */
#define NZI_AMG_STALL 0.85         /* stop when a level keeps more than 85% of the rows */
#define NZI_AMG_COARSE_SMOOTHS 8   /* smoothing steps of a coarsest level too large to invert */
#define NZI_AMG_WORK 5             /* per level: r, res, d, w, t */
#define NZI_AMG_QR_TOL 1e-10       /* a near-nullspace column below this fraction of its norm
                                      after orthogonalisation is dependent (zero column of Q) */

typedef struct amg_level {
    /* set-up (host): the level operator as host CSR (level 0: A's CSR, borrowed or a copy) */
    const nz_matrix_t *Ah;
    nz_matrix_t *Ah_owned;
    int block;                   /* unknowns per node */
    int64_t nodes, naggs, unaggregated;
    int32_t *agg;                /* aggregate of each node, -1: none */
    int mis_rounds;
    double rho;                  /* power-iteration estimate of rho(D^-1 A) */
    double *diag;                /* A's diagonal (double) */
    nz_matrix_t *T, *AT, *P, *R; /* tentative, scaled A T, smoothed prolongator, P^T (host;
                                    a device A: T, and AT on the device) */
    nz_matrix_t *Dh, *D_dev, *T_dev, *DAT; /* a device A: the row scales, T and D (A T) */
    nz_spgemm_plan_t *ds_plan;   /* a device A: D (A T) */
    int64_t *r_from_p;           /* R's k-th value is P's r_from_p[k]-th */
    nz_spgemm_plan_t *at_plan;
    nz_spgeam_plan_t *p_plan;
    nz_rap_plan_t *rap_plan;
    nz_spmv_plan_t *host_plan;   /* A_h, during the host estimate of rho only */
    /* the cycle, where A lives */
    const nz_matrix_t *A;        /* the level operator of the cycle */
    nz_matrix_t *A_dev, *P_dev, *R_dev;
    nz_spmv_plan_t *plan_A, *plan_P, *plan_R;
    nzi_krylov_space_t space;
    int space_created;
    void *x, *b;                 /* levels >= 1: the coarse problem */
    void *work[NZI_AMG_WORK];
} amg_level_t;

struct nzi_amg {
    nz_context_t *ctx;
    nz_amg_options_t opt;
    nz_location_t location;
    nz_value_type_t vt;
    int64_t n;
    const nzi_krylov_ops_t *ops;
    const nzi_backend_t *backend;
    const nz_matrix_t *A0;       /* A (borrowed): the level-0 operator where the cycle runs */
    int levels;
    amg_level_t level[NZ_AMG_MAX_LEVELS];
    int coarse_direct;           /* 1: dense inverse, 0: smoothing steps */
    nz_matrix_t *coarse_inv, *coarse_inv_dev;
    nz_spmv_plan_t *coarse_plan;
    double *dense_a, *dense_inv; /* the coarsest level's m x m workspaces */
    int *dense_perm;
    nz_amg_info_t info;
    int broken;                  /* an update failed: apply refuses until one succeeds */
    uint64_t pattern;            /* a hash of A's row offsets and column indices */
    int symmetric;               /* A equals A^T (then so does every P^T A P: S needs no union) */
};

/* ---- options --------------------------------------------------------------------------- */

nz_status_t nzi_amg_options(nz_context_t *ctx, const nz_amg_options_t *in, nz_amg_options_t *opt,
                            int64_t rows, const char *what) {
    if (in != NULL)
        *opt = *in;
    else
        memset(opt, 0, sizeof *opt);
    for (int i = 0; i < 4; i++)
        if (opt->reserved[i] != 0)
            return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                             "%s: amg->reserved[%d] is not zero (zero-initialise the options)",
                             what, i);
    if (!(opt->threshold >= 0.0 && opt->threshold < 1.0))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: AMG threshold %g outside [0, 1)", what, opt->threshold);
    if (!(opt->omega >= 0.0 && opt->omega < 2.0))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: AMG omega %g outside (0, 2) (0: the default 4/3)", what, opt->omega);
    if (opt->max_levels < 0 || opt->max_levels > NZ_AMG_MAX_LEVELS)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: AMG max_levels %d outside 1 .. %d",
                         what, opt->max_levels, NZ_AMG_MAX_LEVELS);
    if (opt->max_coarse < 0 || opt->max_coarse > NZI_AMG_MAX_COARSE)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: AMG max_coarse %lld outside 1 .. %d (the coarsest level is inverted "
                         "densely)", what, (long long)opt->max_coarse, NZI_AMG_MAX_COARSE);
    if ((int)opt->smoother != NZ_AMG_SMOOTHER_AUTO &&
        (int)opt->smoother != NZ_AMG_SMOOTHER_CHEBYSHEV &&
        (int)opt->smoother != NZ_AMG_SMOOTHER_L1_JACOBI)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: unknown AMG smoother %d", what,
                         (int)opt->smoother);
    if (opt->smoother_degree < 0 || opt->smoother_degree > NZI_AMG_MAX_DEGREE)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: AMG smoother_degree %d outside 1 .. %d", what,
                         opt->smoother_degree, NZI_AMG_MAX_DEGREE);
    if (!(opt->cheb_ratio == 0.0 || (opt->cheb_ratio > 1.0 && isfinite(opt->cheb_ratio))))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: AMG cheb_ratio %g must be above 1 (0: the default 10)", what,
                         opt->cheb_ratio);
    if ((int)opt->cycle != NZ_AMG_CYCLE_V && (int)opt->cycle != NZ_AMG_CYCLE_W)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: unknown AMG cycle %d", what,
                         (int)opt->cycle);
    if (opt->block_size < 0 || opt->block_size > 64)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: AMG block_size %d outside 1 .. 64",
                         what, opt->block_size);
    if (opt->block_size == 0) opt->block_size = 1;
    if (rows % opt->block_size != 0)
        return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH,
                         "%s: AMG block_size %d does not divide the %lld rows of A", what,
                         opt->block_size, (long long)rows);
    if (opt->nullspace_dim < 0 || opt->nullspace_dim > NZI_AMG_MAX_NULLSPACE)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: AMG nullspace_dim %d outside 1 .. %d", what, opt->nullspace_dim,
                         NZI_AMG_MAX_NULLSPACE);
    if (opt->nullspace_dim > 1 && opt->near_nullspace == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT,
                         "%s: AMG nullspace_dim %d needs near_nullspace (rows x k, column-major)",
                         what, opt->nullspace_dim);
    if (opt->nullspace_dim == 0) opt->nullspace_dim = 1;
    if (opt->omega == 0.0) opt->omega = 4.0 / 3.0;
    if (opt->max_levels == 0) opt->max_levels = NZI_AMG_DEFAULT_LEVELS;
    if (opt->max_coarse == 0) opt->max_coarse = NZI_AMG_DEFAULT_COARSE;
    if (opt->smoother_degree == 0) opt->smoother_degree = NZI_AMG_DEFAULT_DEGREE;
    if (opt->cheb_ratio == 0.0) opt->cheb_ratio = NZI_AMG_DEFAULT_RATIO;
    if (opt->near_nullspace != NULL)
        for (int64_t k = 0; k < rows * opt->nullspace_dim; k++)
            if (!isfinite(opt->near_nullspace[k]))
                return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                                 "%s: AMG near_nullspace entry (%lld, %lld) is not finite", what,
                                 (long long)(k % (rows > 0 ? rows : 1)) + 1,
                                 (long long)(k / (rows > 0 ? rows : 1)) + 1);
    return NZ_SUCCESS;
}

/* ---- small host helpers --------------------------------------------------------------- */

/* The calling thread's number inside a parallel region (0 without OpenMP). */
static int nzi_omp_thread(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static nz_status_t alloc(nz_context_t *ctx, void *ptr, int64_t count, size_t size,
                         const char *what) {
    return nzi_alloc_array(ctx, (void **)ptr, count > 0 ? (size_t)count : 1, size, what);
}

/* The diagonal of the host CSR matrix H into d (double); *bad = the first row whose diagonal is
 * missing, zero or not finite (rows when none). */
static void diagonal(const nz_matrix_t *H, double *d, int64_t *bad, int threads) {
    const nzi_csr_t *c = &H->host.csr;
    int64_t first = H->rows;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : first)
    for (int64_t i = 0; i < H->rows; i++) {
        d[i] = 0.0;
        for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++)
            if (c->col_indices[k] == i) d[i] = nzi_get(c->values, H->value_type, k);
        if ((!(d[i] != 0.0) || !isfinite(d[i])) && i < first) first = i;
    }
    *bad = first;
}

/* rho(D^-1 A_l) by NZI_AMG_POWER_STEPS steps of the power iteration (nzi_power_estimate, the
 * Chebyshev preconditioner's) on a Jacobi-scaled Krylov space: of the device level for a device
 * A outside deterministic mode, else of the host level through the CPU table (whose sums are
 * fixed-order: the same bits for any thread count, and for a host or device A under
 * NZ_PLAN_DETERMINISTIC). */
static nz_status_t estimate_rho(nzi_amg_t *amg, amg_level_t *L, int l, double *rho) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = amg->ctx;
    const int device = amg->location == NZ_DEVICE && !(amg->opt.plan_flags & NZ_PLAN_DETERMINISTIC);
    const nz_matrix_t *M = device ? (l == 0 ? amg->A0 : L->A_dev) : L->Ah;
    const nzi_backend_t *backend = nzi_backend_of(M);
    const nzi_krylov_ops_t *ops = backend->krylov_ops();
    nz_spmv_plan_t **plan = device ? &L->plan_A : &L->host_plan; /* plan_A: kept for the cycle */
    nzi_krylov_space_t s;
    void *v = NULL, *w = NULL, *t = NULL;
    int created = 0;
    int64_t bad;
    *rho = 0.0;
    if (*plan == NULL)
        NZI_CHECK(nz_spmv_plan_create(ctx, plan, M, NZ_OP_N, NZ_ALG_AUTO,
                                      NZ_PLAN_REUSE | (device ? amg->opt.plan_flags : 0u)));
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.value_type = amg->vt;
    s.n = M->rows;
    s.plan = *plan;
    s.precond = NZ_PRECOND_JACOBI;
    s.max_dots = 1;
    NZI_CHECK(ops->create(&s));
    created = 1;
    NZI_CHECK(ops->precond_setup(&s, M, &bad)); /* the diagonal was checked by level_values */
    NZI_CHECK(ops->vec_create(&s, &v, "AMG set-up: power-iteration vector"));
    NZI_CHECK(ops->vec_create(&s, &w, "AMG set-up: power-iteration vector"));
    NZI_CHECK(ops->vec_create(&s, &t, "AMG set-up: power-iteration vector"));
    NZI_CHECK(nzi_power_estimate(ops, &s, backend, 20261128u, NZI_AMG_POWER_STEPS, v, w, t, rho));
cleanup:
    if (created) {
        ops->vec_destroy(&s, v);
        ops->vec_destroy(&s, w);
        ops->vec_destroy(&s, t);
        ops->destroy(&s);
    }
    nz_spmv_plan_destroy(&L->host_plan);
    return status;
}

/* ---- strength of connection ------------------------------------------------------------ */

/* A node graph in CSR with double weights, no diagonal. */
typedef struct node_graph {
    int64_t n;
    int64_t *off;
    int32_t *col;
    double *w;
} node_graph_t;

static void graph_free(nz_context_t *ctx, node_graph_t *g) {
    nzi_free(ctx, g->off);
    nzi_free(ctx, g->col);
    nzi_free(ctx, g->w);
    memset(g, 0, sizeof *g);
}

/* Sort idx[0..m) ascending with val alongside (insertion sort: rows of a node graph are short;
 * the marker lists come out nearly sorted). */
static void sort_pairs(int32_t *idx, double *val, int64_t m) {
    for (int64_t a = 1; a < m; a++) {
        const int32_t key = idx[a];
        const double kv = val[a];
        int64_t b = a - 1;
        while (b >= 0 && idx[b] > key) {
            idx[b + 1] = idx[b];
            val[b + 1] = val[b];
            b--;
        }
        idx[b + 1] = key;
        val[b + 1] = kv;
    }
}

/* S of the host CSR level H with `bs` unknowns per node: the node matrix G (block Frobenius
 * norms of A / max|a_ij|, so squares neither overflow nor underflow for a scaled A), then the
 * strong off-diagonal entries g_IJ > 0, g_IJ >= theta sqrt(g_II g_JJ), then S union S^T
 * (weight the larger of the two). */
static nz_status_t strength(nz_context_t *ctx, const nz_matrix_t *H, int bs, double theta,
                            int symmetric, node_graph_t *S) {
    nz_status_t status = NZ_SUCCESS;
    const nzi_csr_t *c = &H->host.csr;
    const nz_value_type_t t = H->value_type;
    const int64_t N = H->rows / bs;
    node_graph_t G = {0}, F = {0}, Ft = {0};
    int64_t *mark = NULL, *cnt = NULL;
    double *acc = NULL, *gd = NULL;
    int32_t *list = NULL;
    double amax = 0.0;
    const int threads = nzi_context_threads(ctx);
    memset(S, 0, sizeof *S);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(max : amax)
    for (int64_t k = 0; k < H->nnz; k++) {
        const double a = fabs(nzi_get(c->values, t, k));
        if (a > amax) amax = a;
    }
    const double scale = amax > 0.0 ? 1.0 / amax : 1.0;
    if (bs == 1) {
        /* scalar unknowns: G = |A| / max|a_ij| read straight from A */
        NZI_CHECK(alloc(ctx, &gd, N, sizeof(double), "AMG set-up: node diagonal"));
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t I = 0; I < N; I++) {
            gd[I] = 0.0;
            for (int64_t k = c->row_offsets[I]; k < c->row_offsets[I + 1]; k++)
                if (c->col_indices[k] == I) gd[I] = fabs(nzi_get(c->values, t, k)) * scale;
        }
        G.n = N;
        G.off = c->row_offsets; /* borrowed: G.col / G.w stay NULL, read through A below */
    } else {
    /* G with the diagonal; an upper bound of its entries: A's nnz */
    G.n = N;
    NZI_CHECK(alloc(ctx, &G.off, N + 1, sizeof(int64_t), "AMG set-up: node graph"));
    NZI_CHECK(alloc(ctx, &G.col, H->nnz, sizeof(int32_t), "AMG set-up: node graph"));
    NZI_CHECK(alloc(ctx, &G.w, H->nnz, sizeof(double), "AMG set-up: node graph"));
    NZI_CHECK(alloc(ctx, &mark, N, sizeof(int64_t), "AMG set-up: node marks"));
    NZI_CHECK(alloc(ctx, &acc, N, sizeof(double), "AMG set-up: node sums"));
    NZI_CHECK(alloc(ctx, &list, N, sizeof(int32_t), "AMG set-up: node list"));
    NZI_CHECK(alloc(ctx, &gd, N, sizeof(double), "AMG set-up: node diagonal"));
    for (int64_t J = 0; J < N; J++) mark[J] = -1;
    G.off[0] = 0;
    for (int64_t I = 0; I < N; I++) {
        int64_t m = 0;
        for (int64_t i = I * bs; i < (I + 1) * bs; i++)
            for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++) {
                const int32_t J = (int32_t)(c->col_indices[k] / bs);
                const double a = nzi_get(c->values, t, k) * scale;
                if (mark[J] != I) {
                    mark[J] = I;
                    acc[J] = 0.0;
                    list[m++] = J;
                }
                acc[J] += a * a;
            }
        int64_t at = G.off[I];
        gd[I] = 0.0;
        for (int64_t q = 0; q < m; q++) {
            G.col[at + q] = list[q];
            G.w[at + q] = sqrt(acc[list[q]]);
            if (list[q] == I) gd[I] = G.w[at + q];
        }
        sort_pairs(G.col + at, G.w + at, m);
        G.off[I + 1] = at + m;
    }
    }
    /* F: the strong entries */
    F.n = N;
    NZI_CHECK(alloc(ctx, &F.off, N + 1, sizeof(int64_t), "AMG set-up: strength graph"));
    NZI_CHECK(alloc(ctx, &F.col, G.off[N], sizeof(int32_t), "AMG set-up: strength graph"));
    NZI_CHECK(alloc(ctx, &F.w, G.off[N], sizeof(double), "AMG set-up: strength graph"));
    /* two passes, each parallel over the rows: count the strong entries, then (after a
     * prefix sum) write them */
    for (int pass = 0; pass < 2; pass++) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t I = 0; I < N; I++) {
            int64_t at = pass == 0 ? 0 : F.off[I];
            for (int64_t k = G.off[I]; k < G.off[I + 1]; k++) {
                const int32_t J = G.col != NULL ? G.col[k] : c->col_indices[k];
                const double g = G.w != NULL ? G.w[k] : fabs(nzi_get(c->values, t, k)) * scale;
                if (J == I || !(g > 0.0) || !isfinite(g)) continue;
                if (g < theta * sqrt(gd[I] * gd[J])) continue;
                if (pass == 1) {
                    F.col[at] = J;
                    F.w[at] = g;
                }
                at++;
            }
            if (pass == 0) F.off[I + 1] = at;
        }
        if (pass == 0) {
            F.off[0] = 0;
            for (int64_t I = 0; I < N; I++) F.off[I + 1] += F.off[I];
        }
    }
    if (symmetric) { /* S = F: the strong pattern of a symmetric matrix is symmetric */
        *S = F;
        memset(&F, 0, sizeof F);
        goto cleanup;
    }
    /* Ft = F^T by counting sort (rows come out sorted) */
    const int64_t fn = F.off[N];
    Ft.n = N;
    NZI_CHECK(alloc(ctx, &Ft.off, N + 1, sizeof(int64_t), "AMG set-up: strength transpose"));
    NZI_CHECK(alloc(ctx, &Ft.col, fn, sizeof(int32_t), "AMG set-up: strength transpose"));
    NZI_CHECK(alloc(ctx, &Ft.w, fn, sizeof(double), "AMG set-up: strength transpose"));
    NZI_CHECK(alloc(ctx, &cnt, N + 1, sizeof(int64_t), "AMG set-up: strength transpose"));
    memset(cnt, 0, (size_t)(N + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < fn; k++) cnt[F.col[k] + 1]++;
    for (int64_t J = 0; J < N; J++) cnt[J + 1] += cnt[J];
    memcpy(Ft.off, cnt, (size_t)(N + 1) * sizeof(int64_t));
    for (int64_t I = 0; I < N; I++)
        for (int64_t k = F.off[I]; k < F.off[I + 1]; k++) {
            const int64_t at = cnt[F.col[k]]++;
            Ft.col[at] = (int32_t)I;
            Ft.w[at] = F.w[k];
        }
    /* S = F union Ft, merged row by row (both sorted) */
    S->n = N;
    NZI_CHECK(alloc(ctx, &S->off, N + 1, sizeof(int64_t), "AMG set-up: strength graph"));
    NZI_CHECK(alloc(ctx, &S->col, 2 * fn, sizeof(int32_t), "AMG set-up: strength graph"));
    NZI_CHECK(alloc(ctx, &S->w, 2 * fn, sizeof(double), "AMG set-up: strength graph"));
    S->off[0] = 0;
    for (int64_t I = 0; I < N; I++) {
        int64_t a = F.off[I], b = Ft.off[I], at = S->off[I];
        while (a < F.off[I + 1] || b < Ft.off[I + 1]) {
            if (b >= Ft.off[I + 1] || (a < F.off[I + 1] && F.col[a] < Ft.col[b])) {
                S->col[at] = F.col[a];
                S->w[at++] = F.w[a++];
            } else if (a >= F.off[I + 1] || Ft.col[b] < F.col[a]) {
                S->col[at] = Ft.col[b];
                S->w[at++] = Ft.w[b++];
            } else {
                S->col[at] = F.col[a];
                S->w[at++] = F.w[a] > Ft.w[b] ? F.w[a] : Ft.w[b];
                a++;
                b++;
            }
        }
        S->off[I + 1] = at;
    }
cleanup:
    if (status < 0) graph_free(ctx, S);
    if (G.col == NULL) G.off = NULL; /* borrowed from A */
    graph_free(ctx, &G);
    graph_free(ctx, &F);
    graph_free(ctx, &Ft);
    nzi_free(ctx, mark);
    nzi_free(ctx, cnt);
    nzi_free(ctx, acc);
    nzi_free(ctx, gd);
    nzi_free(ctx, list);
    return status;
}

/* ---- aggregation ------------------------------------------------------------------------ */

#define MIS_OUT 0ull
#define MIS_UNDECIDED 1ull
#define MIS_IN 2ull

/* A fixed 30-bit priority of node i (a 32-bit integer hash finaliser). */
static uint64_t priority(uint32_t i) {
    uint32_t x = i + 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return (uint64_t)(x & 0x3fffffffu);
}

/* dst[I] = src[I]; a node without an aggregate in src joins the aggregate (in src) of its
 * strongest neighbour that has one (ties: the smaller index). Reads src only: the result does
 * not depend on the order of work. Returns the nodes that joined. */
static int64_t join_strongest(const node_graph_t *S, const int32_t *src, int32_t *dst,
                              int threads) {
    int64_t joined = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : joined)
    for (int64_t I = 0; I < S->n; I++) {
        dst[I] = src[I];
        if (src[I] >= 0) continue;
        double best = -1.0;
        for (int64_t k = S->off[I]; k < S->off[I + 1]; k++) {
            const int32_t J = S->col[k];
            if (src[J] >= 0 && S->w[k] > best) {
                best = S->w[k];
                dst[I] = src[J];
            }
        }
        joined += dst[I] >= 0;
    }
    return joined;
}

/* agg[I] for every node of S: roots are a distance-2 maximal independent set (rounds in which
 * every undecided node whose key (state, priority, index) is the largest of its distance-2
 * neighbourhood joins the set and every undecided node within distance 2 of a member leaves
 * it, all decisions from the round's start: the result depends on S only). Pass 1 joins each
 * node to its strongest root neighbour (ties: the smaller index), pass 2 each remaining node to
 * the aggregate its strongest pass-1 neighbour joined; maximality leaves nothing for pass 2 to
 * miss when S is symmetric. Nodes with no strong neighbour stay unaggregated (-1). */
static nz_status_t aggregate(nz_context_t *ctx, const node_graph_t *S, int32_t *agg,
                             int64_t *naggs, int *rounds, int64_t *unaggregated) {
    nz_status_t status = NZ_SUCCESS;
    const int64_t N = S->n;
    uint64_t *key = NULL, *t1 = NULL, *t2 = NULL;
    int32_t *first = NULL;
    const int threads = nzi_context_threads(ctx);
    *naggs = 0;
    *rounds = 0;
    *unaggregated = 0;
    NZI_CHECK(alloc(ctx, &key, N, sizeof(uint64_t), "AMG set-up: independent-set keys"));
    NZI_CHECK(alloc(ctx, &t1, N, sizeof(uint64_t), "AMG set-up: independent-set maxima"));
    NZI_CHECK(alloc(ctx, &t2, N, sizeof(uint64_t), "AMG set-up: independent-set maxima"));
    NZI_CHECK(alloc(ctx, &first, N, sizeof(int32_t), "AMG set-up: aggregates"));
    int64_t undecided = 0;
    for (int64_t I = 0; I < N; I++) {
        const uint64_t state = S->off[I + 1] > S->off[I] ? MIS_UNDECIDED : MIS_OUT;
        key[I] = state << 62 | priority((uint32_t)I) << 32 | (uint64_t)I;
        undecided += state == MIS_UNDECIDED;
    }
    while (undecided > 0) {
        (*rounds)++;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t I = 0; I < N; I++) {
            uint64_t m = key[I];
            for (int64_t k = S->off[I]; k < S->off[I + 1]; k++)
                if (key[S->col[k]] > m) m = key[S->col[k]];
            t1[I] = m;
        }
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t I = 0; I < N; I++) {
            uint64_t m = t1[I];
            for (int64_t k = S->off[I]; k < S->off[I + 1]; k++)
                if (t1[S->col[k]] > m) m = t1[S->col[k]];
            t2[I] = m;
        }
        undecided = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : undecided)
        for (int64_t I = 0; I < N; I++) {
            if (key[I] >> 62 != MIS_UNDECIDED) continue;
            const uint64_t low = key[I] & ((1ull << 62) - 1);
            if (t2[I] == key[I])
                key[I] = MIS_IN << 62 | low;
            else if (t2[I] >> 62 == MIS_IN)
                key[I] = MIS_OUT << 62 | low;
            else
                undecided++;
        }
    }
    int64_t roots = 0;
    for (int64_t I = 0; I < N; I++) agg[I] = key[I] >> 62 == MIS_IN ? (int32_t)roots++ : -1;
    /* pass 1: the strongest root neighbour (agg holds the roots only); then, until nothing
     * changes (once for a symmetric graph), a pass-1 neighbour's aggregate */
    join_strongest(S, agg, first, threads);
    while (join_strongest(S, first, agg, threads) > 0)
        memcpy(first, agg, (size_t)N * sizeof(int32_t));
    for (int64_t I = 0; I < N; I++) *unaggregated += agg[I] < 0;
    *naggs = roots;
cleanup:
    nzi_free(ctx, key);
    nzi_free(ctx, t1);
    nzi_free(ctx, t2);
    nzi_free(ctx, first);
    return status;
}

/* ---- tentative prolongator -------------------------------------------------------------- */

/* T (n x naggs k, host CSR of value type vt) and the coarse near-nullspace Bc (naggs k x k,
 * column-major) from B (n x k, column-major): per aggregate, the rows of B at its unknowns
 * (nodes ascending, then components) orthonormalised by modified Gram-Schmidt with a second
 * pass; a column whose norm falls below NZI_AMG_QR_TOL of its own norm is dependent: a zero
 * column of Q and of R (its coarse unknown gets an identity row later). */
static nz_status_t tentative(nz_context_t *ctx, nz_value_type_t vt, int64_t n, int bs,
                             const int32_t *agg, int64_t naggs, const double *B, int k,
                             nz_matrix_t **T, double **Bc_out) {
    nz_status_t status = NZ_SUCCESS;
    const int64_t N = n / bs;
    int64_t *start = NULL, *members = NULL, aggregated = 0;
    double *q = NULL, *Bc = NULL;
    nz_matrix_t *out = NULL;
    int64_t maxm = 0;
    *T = NULL;
    *Bc_out = NULL;
    NZI_CHECK(alloc(ctx, &start, naggs + 1, sizeof(int64_t), "AMG set-up: aggregate lists"));
    NZI_CHECK(alloc(ctx, &members, N, sizeof(int64_t), "AMG set-up: aggregate lists"));
    memset(start, 0, (size_t)(naggs + 1) * sizeof(int64_t));
    for (int64_t I = 0; I < N; I++)
        if (agg[I] >= 0) start[agg[I] + 1]++;
    for (int64_t a = 0; a < naggs; a++) {
        if (start[a + 1] > maxm) maxm = start[a + 1];
        start[a + 1] += start[a];
    }
    aggregated = start[naggs];
    {
        int64_t *fill = NULL;
        NZI_CHECK(alloc(ctx, &fill, naggs, sizeof(int64_t), "AMG set-up: aggregate lists"));
        if (naggs > 0) memcpy(fill, start, (size_t)naggs * sizeof(int64_t));
        for (int64_t I = 0; I < N; I++)
            if (agg[I] >= 0) members[fill[agg[I]]++] = I;
        nzi_free(ctx, fill);
    }
    const int threads = nzi_context_threads(ctx);
    const int64_t qsize = maxm * bs * k > 0 ? maxm * bs * k : 1;
    NZI_CHECK(alloc(ctx, &q, qsize * threads, sizeof(double), "AMG set-up: local QR"));
    NZI_CHECK(alloc(ctx, &Bc, naggs * k * k, sizeof(double), "AMG set-up: coarse near-nullspace"));
    memset(Bc, 0, (size_t)(naggs * k * k > 0 ? naggs * k * k : 1) * sizeof(double));
    if (naggs * k > INT32_MAX)
        NZI_CHECK(nzi_error(ctx, NZ_ERR_OVERFLOW, "AMG set-up: %lld coarse unknowns exceed the "
                            "32-bit column index", (long long)(naggs * k)));
    NZI_CHECK(nzi_csr_alloc(ctx, &out, vt, n, naggs * k, aggregated * bs * k));
    nzi_csr_t *o = &out->host.csr;
    const int64_t ldb = naggs * k; /* Bc's leading dimension */
    /* row offsets: k entries per aggregated unknown */
    o->row_offsets[0] = 0;
    for (int64_t i = 0; i < n; i++)
        o->row_offsets[i + 1] = o->row_offsets[i] + (agg[i / bs] >= 0 ? k : 0);
#pragma omp parallel num_threads(threads)
    {
    double *const qw = q + qsize * nzi_omp_thread();
#pragma omp for schedule(dynamic, 256)
    for (int64_t a = 0; a < naggs; a++) {
        double *const q = qw;
        const int64_t m = (start[a + 1] - start[a]) * bs;
        /* q (m x k column-major) = the aggregate's rows of B */
        for (int64_t p = 0; p < start[a + 1] - start[a]; p++)
            for (int c = 0; c < bs; c++) {
                const int64_t row = members[start[a] + p] * bs + c;
                for (int j = 0; j < k; j++) q[j * m + p * bs + c] = B[j * n + row];
            }
        for (int j = 0; j < k; j++) {
            double *v = q + (int64_t)j * m;
            double orig = 0.0;
            for (int64_t r = 0; r < m; r++) orig += v[r] * v[r];
            orig = sqrt(orig);
            for (int pass = 0; pass < 2; pass++)
                for (int i = 0; i < j; i++) {
                    const double *u = q + (int64_t)i * m;
                    double d = 0.0;
                    for (int64_t r = 0; r < m; r++) d += u[r] * v[r];
                    for (int64_t r = 0; r < m; r++) v[r] -= d * u[r];
                    Bc[(int64_t)j * ldb + a * k + i] += d; /* R(i, j) */
                }
            double norm = 0.0;
            for (int64_t r = 0; r < m; r++) norm += v[r] * v[r];
            norm = sqrt(norm);
            if (norm > NZI_AMG_QR_TOL * orig && norm > 0.0) {
                for (int64_t r = 0; r < m; r++) v[r] /= norm;
                Bc[(int64_t)j * ldb + a * k + j] = norm;
            } else {
                for (int64_t r = 0; r < m; r++) v[r] = 0.0;
                Bc[(int64_t)j * ldb + a * k + j] = 0.0;
            }
        }
        for (int64_t p = 0; p < start[a + 1] - start[a]; p++)
            for (int c = 0; c < bs; c++) {
                const int64_t row = members[start[a] + p] * bs + c;
                const int64_t at = o->row_offsets[row];
                for (int j = 0; j < k; j++) {
                    o->col_indices[at + j] = (int32_t)(a * k + j);
                    nzi_set(o->values, vt, at + j, q[(int64_t)j * m + p * bs + c]);
                }
            }
    }
    }
    *T = out;
    out = NULL;
    *Bc_out = Bc;
    Bc = NULL;
cleanup:
    nz_matrix_destroy(&out);
    nzi_free(ctx, Bc);
    nzi_free(ctx, q);
    nzi_free(ctx, start);
    nzi_free(ctx, members);
    return status;
}

/* ---- values of a level: smoothed prolongator, R, Galerkin product ---------------------------- */

/* AT's rows scaled by -omega / (rho d_i) (after the A T product). */
static void scale_rows(nz_matrix_t *AT, const double *d, double factor, int threads) {
    nzi_csr_t *c = &AT->host.csr;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < AT->rows; i++)
        for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++)
            nzi_set(c->values, AT->value_type, k,
                    nzi_get(c->values, AT->value_type, k) * (factor / d[i]));
}

/* R's values from P's through the map of the transpose. */
static void gather_r(amg_level_t *L) {
    const size_t vs = nzi_value_size(L->P->value_type);
    const char *pv = L->P->host.csr.values;
    char *rv = L->R->host.csr.values;
    for (int64_t k = 0; k < L->R->nnz; k++) memcpy(rv + k * vs, pv + L->r_from_p[k] * vs, vs);
}

/* R = P^T (host CSR) and the map of its values, by counting sort. */
static nz_status_t transpose_with_map(nz_context_t *ctx, amg_level_t *L) {
    nz_status_t status = NZ_SUCCESS;
    const nz_matrix_t *P = L->P;
    const nzi_csr_t *p = &P->host.csr;
    int64_t *next = NULL;
    NZI_CHECK(nzi_csr_alloc(ctx, &L->R, P->value_type, P->cols, P->rows, P->nnz));
    NZI_CHECK(alloc(ctx, &L->r_from_p, P->nnz, sizeof(int64_t), "AMG set-up: transpose map"));
    NZI_CHECK(alloc(ctx, &next, P->cols + 1, sizeof(int64_t), "AMG set-up: transpose"));
    nzi_csr_t *r = &L->R->host.csr;
    memset(r->row_offsets, 0, (size_t)(P->cols + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < P->nnz; k++) r->row_offsets[p->col_indices[k] + 1]++;
    for (int64_t j = 0; j < P->cols; j++) r->row_offsets[j + 1] += r->row_offsets[j];
    memcpy(next, r->row_offsets, (size_t)(P->cols + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < P->rows; i++)
        for (int64_t k = p->row_offsets[i]; k < p->row_offsets[i + 1]; k++) {
            const int64_t at = next[p->col_indices[k]]++;
            r->col_indices[at] = (int32_t)i;
            L->r_from_p[at] = k;
        }
    gather_r(L);
cleanup:
    nzi_free(ctx, next);
    return status;
}

/* A coarse row whose every value is zero (a dependent near-nullspace column gave its unknown a
 * zero column of P) gets 1 on its diagonal: a decoupled unknown the cycle leaves at zero. */
static int fix_empty_rows(nz_matrix_t *Ac) {
    nzi_csr_t *c = &Ac->host.csr;
    int fixed = 0;
    for (int64_t i = 0; i < Ac->rows; i++) {
        int zero = 1;
        int64_t dk = -1;
        for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++) {
            if (nzi_get(c->values, Ac->value_type, k) != 0.0) zero = 0;
            if (c->col_indices[k] == i) dk = k;
        }
        if (zero && dk >= 0) {
            nzi_set(c->values, Ac->value_type, dk, 1.0);
            fixed = 1;
        }
    }
    return fixed;
}

/* Level l's products on the device (A where the cycle runs): T uploaded once, A T by a device
 * SpGEMM plan, its rows scaled by the product with the diagonal matrix of -omega / (rho d_i)
 * (one rounded product an entry, as the host's scaling), P = T + that by a device SpGEAM plan,
 * R = P^T by the device transpose, A_{l+1} = P^T A P by a device RAP plan and copied down for
 * the next level's host phases. The device plans' values are bitwise the host plans' on the same
 * operands, so the hierarchy is the host path's, bit for bit. */
static nz_status_t level_products_device(nzi_amg_t *amg, int l, int create) {
    nz_context_t *ctx = amg->ctx;
    amg_level_t *L = &amg->level[l];
    amg_level_t *C = &amg->level[l + 1];
    const nz_value_type_t vt = amg->vt;
    const size_t vs = nzi_value_size(vt);
    const int64_t n = L->Ah->rows;
    nz_spgemm_options_t so;
    double t0 = nzi_wtime();
    memset(&so, 0, sizeof so);
    so.alg = NZ_SPGEMM_AUTO;
    const nz_matrix_t *Ad = l == 0 ? amg->A0 : L->A_dev;
    /* the row scales, written into the host diagonal matrix and uploaded */
    if (create) {
        NZI_TRY(nzi_csr_alloc(ctx, &L->Dh, vt, n, n, n));
        for (int64_t i = 0; i <= n; i++) L->Dh->host.csr.row_offsets[i] = i;
        for (int64_t i = 0; i < n; i++) L->Dh->host.csr.col_indices[i] = (int32_t)i;
    }
    const double factor = -amg->opt.omega / L->rho;
    for (int64_t i = 0; i < n; i++) nzi_set(L->Dh->host.csr.values, vt, i, factor / L->diag[i]);
    if (create) {
        NZI_TRY(nz_matrix_to_device(ctx, &L->T_dev, L->T, NZ_INDEX_AUTO));
        NZI_TRY(nz_matrix_to_device(ctx, &L->D_dev, L->Dh, NZ_INDEX_AUTO));
        NZI_TRY(nz_spgemm_plan_create(ctx, &L->at_plan, &L->AT, Ad, L->T_dev, &so, NULL));
        NZI_TRY(nz_spgemm_plan_create(ctx, &L->ds_plan, &L->DAT, L->D_dev, L->AT, &so, NULL));
        NZI_TRY(nz_spgeam_plan_create(ctx, &L->p_plan, &L->P_dev, 1.0, L->T_dev, 1.0, L->DAT));
    } else {
        NZI_TRY(amg->backend->mem_copy(ctx, L->D_dev->device.values, L->Dh->host.csr.values,
                                       (size_t)n * vs, NZI_H2D));
        NZI_TRY(nz_spgemm_plan_execute(L->at_plan, Ad, L->T_dev, L->AT));
        NZI_TRY(nz_spgemm_plan_execute(L->ds_plan, L->D_dev, L->AT, L->DAT));
        NZI_TRY(nz_spgeam_plan_execute(L->p_plan, 1.0, L->T_dev, 1.0, L->DAT, L->P_dev));
    }
    nz_matrix_destroy(&L->R_dev);
    NZI_TRY(nz_matrix_transpose(ctx, &L->R_dev, L->P_dev));
    amg->info.smooth_seconds += nzi_wtime() - t0;
    t0 = nzi_wtime();
    if (create) {
        NZI_TRY(nz_rap_plan_create(ctx, &L->rap_plan, &C->A_dev, Ad, L->P_dev, &so, NULL));
        NZI_TRY(nz_matrix_to_host(ctx, &C->Ah_owned, C->A_dev));
        C->Ah = C->Ah_owned;
    } else {
        NZI_TRY(nz_rap_plan_execute(L->rap_plan, Ad, L->P_dev, C->A_dev));
        NZI_TRY(amg->backend->mem_copy(ctx, C->Ah_owned->host.csr.values, C->A_dev->device.values,
                                       (size_t)C->A_dev->nnz * vs, NZI_D2H));
    }
    if (fix_empty_rows(C->Ah_owned))
        NZI_TRY(amg->backend->mem_copy(ctx, C->A_dev->device.values, C->Ah_owned->host.csr.values,
                                       (size_t)C->A_dev->nnz * vs, NZI_H2D));
    amg->info.rap_seconds += nzi_wtime() - t0;
    return NZ_SUCCESS;
}

/* The values of level l's host quantities from its operator's values: the diagonal (checked),
 * the host SpMV plan, rho; for a level above the coarsest P = T + scaled A T and R through the
 * plans (create: make them), and A_{l+1} = P^T A P. */
static nz_status_t level_values(nzi_amg_t *amg, int l, int coarsest, int create) {
    nz_context_t *ctx = amg->ctx;
    amg_level_t *L = &amg->level[l];
    nz_spgemm_options_t so;
    int64_t bad;
    double t0 = nzi_wtime();
    memset(&so, 0, sizeof so);
    so.alg = NZ_SPGEMM_CPU;
    diagonal(L->Ah, L->diag, &bad, nzi_context_threads(ctx));
    if (bad < L->Ah->rows)
        return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                         "nz_precond_create: AMG preconditioner: diagonal entry (%lld, %lld) of "
                         "the level-%d operator is missing, zero or not finite (smoothed "
                         "aggregation needs a non-zero diagonal)",
                         (long long)bad + 1, (long long)bad + 1, l);
    if (L->Ah->rows == 0) { /* a 0 x 0 A: one empty level, nothing to estimate */
        L->rho = 1.0;
        return NZ_SUCCESS;
    }
    NZI_TRY(estimate_rho(amg, L, l, &L->rho));
    if (!(L->rho > 0.0) || !isfinite(L->rho))
        return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                         "nz_precond_create: AMG preconditioner: the estimate of rho(D^-1 A) of "
                         "level %d is %g (A maps the start vector to zero or to non-finite "
                         "values)", l, L->rho);
    amg->info.smooth_seconds += nzi_wtime() - t0;
    if (l == coarsest) return NZ_SUCCESS;
    if (amg->location == NZ_DEVICE) return level_products_device(amg, l, create);
    t0 = nzi_wtime();
    if (create) {
        NZI_TRY(nz_spgemm_plan_create(ctx, &L->at_plan, &L->AT, L->Ah, L->T, &so, NULL));
    } else {
        NZI_TRY(nz_spgemm_plan_execute(L->at_plan, L->Ah, L->T, L->AT));
    }
    scale_rows(L->AT, L->diag, -amg->opt.omega / L->rho, nzi_context_threads(ctx));
    if (create) {
        NZI_TRY(nz_spgeam_plan_create(ctx, &L->p_plan, &L->P, 1.0, L->T, 1.0, L->AT));
        NZI_TRY(transpose_with_map(ctx, L));
    } else {
        NZI_TRY(nz_spgeam_plan_execute(L->p_plan, 1.0, L->T, 1.0, L->AT, L->P));
        gather_r(L);
    }
    amg->info.smooth_seconds += nzi_wtime() - t0;
    t0 = nzi_wtime();
    amg_level_t *C = &amg->level[l + 1];
    if (create) {
        NZI_TRY(nz_rap_plan_create(ctx, &L->rap_plan, &C->Ah_owned, L->Ah, L->P, &so, NULL));
        C->Ah = C->Ah_owned;
    } else {
        NZI_TRY(nz_rap_plan_execute(L->rap_plan, L->Ah, L->P, C->Ah_owned));
    }
    fix_empty_rows(C->Ah_owned);
    amg->info.rap_seconds += nzi_wtime() - t0;
    return NZ_SUCCESS;
}

/* The coarsest level's dense inverse (LU with partial pivoting in double; a singular operator,
 * e.g. of a pure Neumann problem, is shifted by 1e-10 max|a_ii|, times 100 per attempt, at most
 * 6 attempts), written into coarse_inv's values (create: the matrix made first). */
static nz_status_t coarse_values(nzi_amg_t *amg, int create) {
    nz_context_t *ctx = amg->ctx;
    amg_level_t *L = &amg->level[amg->levels - 1];
    const nz_matrix_t *H = L->Ah;
    const int m = (int)H->rows;
    const nzi_csr_t *c = &H->host.csr;
    const double t0 = nzi_wtime();
    if (!amg->coarse_direct) return NZ_SUCCESS;
    if (create) {
        NZI_TRY(alloc(ctx, &amg->dense_a, (int64_t)m * m, sizeof(double), "AMG set-up: coarse LU"));
        NZI_TRY(alloc(ctx, &amg->dense_inv, (int64_t)m * m, sizeof(double),
                      "AMG set-up: coarse inverse"));
        NZI_TRY(alloc(ctx, &amg->dense_perm, m, sizeof(int), "AMG set-up: coarse pivots"));
        NZI_TRY(nzi_csr_alloc(ctx, &amg->coarse_inv, H->value_type, m, m, (int64_t)m * m));
        nzi_csr_t *o = &amg->coarse_inv->host.csr;
        for (int64_t i = 0; i <= m; i++) o->row_offsets[i] = i * m;
        for (int64_t k = 0; k < (int64_t)m * m; k++) o->col_indices[k] = (int32_t)(k % m);
    }
    double dmax = 0.0;
    for (int i = 0; i < m; i++)
        if (fabs(L->diag[i]) > dmax) dmax = fabs(L->diag[i]);
    double shift = 0.0;
    for (int attempt = 0;; attempt++) {
        memset(amg->dense_a, 0, (size_t)m * m * sizeof(double));
        for (int i = 0; i < m; i++) {
            for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++)
                amg->dense_a[(int64_t)i * m + c->col_indices[k]] +=
                    nzi_get(c->values, H->value_type, k);
            amg->dense_a[(int64_t)i * m + i] += shift;
        }
        if (m == 0 || nzi_dense_invert(amg->dense_a, amg->dense_inv, amg->dense_perm, m) == 0)
            break;
        if (attempt == 5)
            return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                             "nz_precond_create: AMG preconditioner: the %d x %d coarsest "
                             "operator is singular even with its diagonal shifted by %.3e", m, m,
                             shift);
        shift = shift == 0.0 ? 1e-10 * dmax : 100.0 * shift;
    }
    amg->info.coarse_shift = shift;
    void *v = amg->coarse_inv->host.csr.values;
    for (int64_t k = 0; k < (int64_t)m * m; k++) nzi_set(v, H->value_type, k, amg->dense_inv[k]);
    amg->info.coarse_seconds += nzi_wtime() - t0;
    return NZ_SUCCESS;
}

/* ---- the cycle's objects ------------------------------------------------------------------ */

/* Level l where the cycle runs (A_l, P_l and R_l: the device's made by level_products_device,
 * or the host matrices): the SpMV plans, the Krylov space with the smoother's scaling, and
 * (not on update) the level's vectors. */
static nz_status_t level_cycle(nzi_amg_t *amg, int l, int update) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = amg->ctx;
    amg_level_t *L = &amg->level[l];
    const int coarsest = l == amg->levels - 1;
    const unsigned flags = NZ_PLAN_REUSE | amg->opt.plan_flags;
    const double t0 = nzi_wtime();
    /* a device A: A_l (l >= 1), P_l and R_l were made on the device by level_products_device */
    if (amg->location == NZ_DEVICE)
        L->A = l == 0 ? amg->A0 : L->A_dev;
    else
        L->A = l == 0 ? amg->A0 : L->Ah;
    /* plan_A may exist already: made for A_l by the device estimate of this set-up (an update
     * destroys every plan first) */
    nz_spmv_plan_destroy(&L->plan_P);
    nz_spmv_plan_destroy(&L->plan_R);
    if (L->plan_A == NULL)
        NZI_CHECK(nz_spmv_plan_create(ctx, &L->plan_A, L->A, NZ_OP_N, NZ_ALG_AUTO, flags));
    if (!coarsest) {
        const nz_matrix_t *P = amg->location == NZ_DEVICE ? L->P_dev : L->P;
        const nz_matrix_t *R = amg->location == NZ_DEVICE ? L->R_dev : L->R;
        NZI_CHECK(nz_spmv_plan_create(ctx, &L->plan_P, P, NZ_OP_N, NZ_ALG_AUTO, flags));
        NZI_CHECK(nz_spmv_plan_create(ctx, &L->plan_R, R, NZ_OP_N, NZ_ALG_AUTO, flags));
    }
    if (L->space_created) {
        amg->ops->destroy(&L->space);
        L->space_created = 0;
    }
    L->space.ctx = ctx;
    L->space.value_type = amg->vt;
    L->space.n = L->A->rows;
    L->space.plan = L->plan_A;
    L->space.precond = amg->opt.smoother == NZ_AMG_SMOOTHER_L1_JACOBI ? NZ_PRECOND_L1_JACOBI
                                                                      : NZ_PRECOND_JACOBI;
    L->space.max_dots = 1;
    NZI_CHECK(amg->ops->create(&L->space));
    L->space_created = 1;
    {
        /* the scaling reads a CSR matrix: the host level's, or the device level (CSR) */
        const nz_matrix_t *As = amg->location == NZ_DEVICE ? L->A : L->Ah;
        int64_t bad;
        NZI_CHECK(amg->ops->precond_setup(&L->space, As, &bad));
        if (bad < L->space.n)
            NZI_CHECK(nzi_error(ctx, NZ_ERR_BREAKDOWN,
                                "nz_precond_create: AMG preconditioner: row %lld of the level-%d "
                                "operator has a zero or non-finite %s", (long long)bad + 1, l,
                                L->space.precond == NZ_PRECOND_L1_JACOBI ? "l1 norm"
                                                                         : "diagonal"));
    }
    if (!update) {
        if (l > 0) {
            NZI_CHECK(amg->ops->vec_create(&L->space, &L->x, "AMG: coarse vector"));
            NZI_CHECK(amg->ops->vec_create(&L->space, &L->b, "AMG: coarse vector"));
        }
        for (int i = 0; i < NZI_AMG_WORK; i++)
            NZI_CHECK(amg->ops->vec_create(&L->space, &L->work[i], "AMG: level vector"));
    }
    amg->info.transfer_seconds += nzi_wtime() - t0;
cleanup:
    return status;
}

/* ---- set-up --------------------------------------------------------------------------- */

/* Whether the host CSR H (sorted columns) equals its transpose to 1e-12 max|a_ij|: for every
 * entry (i, j) a binary search for (j, i); no allocation. */
static int is_symmetric(const nz_matrix_t *H, int threads) {
    const nzi_csr_t *c = &H->host.csr;
    const nz_value_type_t t = H->value_type;
    double amax = 0.0, dmax = 0.0;
    int missing = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(max : amax)
    for (int64_t k = 0; k < H->nnz; k++)
        if (fabs(nzi_get(c->values, t, k)) > amax) amax = fabs(nzi_get(c->values, t, k));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1024) reduction(max : dmax) \
    reduction(| : missing)
    for (int64_t i = 0; i < H->rows; i++)
        for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++) {
            const int64_t j = c->col_indices[k];
            if (j <= i) continue;
            int64_t lo = c->row_offsets[j], hi = c->row_offsets[j + 1];
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo) / 2;
                if (c->col_indices[mid] < i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == c->row_offsets[j + 1] || c->col_indices[lo] != i) {
                missing = 1;
                break;
            }
            const double d = fabs(nzi_get(c->values, t, k) - nzi_get(c->values, t, lo));
            if (d > dmax) dmax = d;
        }
    return !missing && dmax <= 1e-12 * amax;
}

/* FNV-1a over the host CSR pattern, what nzi_amg_update compares A's pattern with: a hash per
 * block of 65536 rows (their offsets and columns), the blocks' hashes then hashed in order (the
 * same value for any thread count). */
static uint64_t pattern_hash(const nz_matrix_t *H, int threads) {
    const nzi_csr_t *c = &H->host.csr;
    const int64_t rows = H->rows, block = 65536, blocks = (rows + block - 1) / block;
    uint64_t h = 1469598103934665603ull;
    h = (h ^ (uint64_t)H->rows) * 1099511628211ull;
    h = (h ^ (uint64_t)H->nnz) * 1099511628211ull;
#pragma omp parallel for num_threads(threads) schedule(static) ordered
    for (int64_t b = 0; b < blocks; b++) {
        uint64_t g = 1469598103934665603ull;
        const int64_t r1 = (b + 1) * block < rows ? (b + 1) * block : rows;
        for (int64_t i = b * block; i < r1; i++) {
            g = (g ^ (uint64_t)c->row_offsets[i + 1]) * 1099511628211ull;
            for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++)
                g = (g ^ (uint32_t)c->col_indices[k]) * 1099511628211ull;
        }
#pragma omp ordered
        h = (h ^ g) * 1099511628211ull;
    }
    return h;
}

static void level_free(nzi_amg_t *amg, amg_level_t *L) {
    nz_context_t *ctx = amg->ctx;
    if (L->space_created) {
        nzi_krylov_space_t *s = &L->space;
        amg->ops->vec_destroy(s, L->x);
        amg->ops->vec_destroy(s, L->b);
        for (int i = 0; i < NZI_AMG_WORK; i++) amg->ops->vec_destroy(s, L->work[i]);
        amg->ops->destroy(s);
    }
    nz_spmv_plan_destroy(&L->plan_A);
    nz_spmv_plan_destroy(&L->plan_P);
    nz_spmv_plan_destroy(&L->plan_R);
    nz_spmv_plan_destroy(&L->host_plan);
    nz_spgemm_plan_destroy(&L->at_plan);
    nz_spgeam_plan_destroy(&L->p_plan);
    nz_rap_plan_destroy(&L->rap_plan);
    nz_matrix_destroy(&L->A_dev);
    nz_matrix_destroy(&L->P_dev);
    nz_matrix_destroy(&L->R_dev);
    nz_spgemm_plan_destroy(&L->ds_plan);
    nz_matrix_destroy(&L->Dh);
    nz_matrix_destroy(&L->D_dev);
    nz_matrix_destroy(&L->T_dev);
    nz_matrix_destroy(&L->DAT);
    nz_matrix_destroy(&L->T);
    nz_matrix_destroy(&L->AT);
    nz_matrix_destroy(&L->P);
    nz_matrix_destroy(&L->R);
    if (L->Ah_owned != NULL) nz_matrix_destroy(&L->Ah_owned);
    nzi_free(ctx, L->agg);
    nzi_free(ctx, L->diag);
    nzi_free(ctx, L->r_from_p);
    memset(L, 0, sizeof *L);
}

void nzi_amg_destroy(nzi_amg_t **amg) {
    if (amg == NULL || *amg == NULL) return;
    nzi_amg_t *a = *amg;
    for (int l = 0; l < NZ_AMG_MAX_LEVELS; l++) level_free(a, &a->level[l]);
    nz_spmv_plan_destroy(&a->coarse_plan);
    nz_matrix_destroy(&a->coarse_inv);
    nz_matrix_destroy(&a->coarse_inv_dev);
    nzi_free(a->ctx, a->dense_a);
    nzi_free(a->ctx, a->dense_inv);
    nzi_free(a->ctx, a->dense_perm);
    nzi_free(a->ctx, a);
    *amg = NULL;
}

/* Level 0's host CSR: A itself, a CSR copy of another host format, or the download of a device
 * matrix (then read as CSR). */
static nz_status_t level0_host(nzi_amg_t *amg, const nz_matrix_t *A) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = amg->ctx;
    amg_level_t *L = &amg->level[0];
    nz_matrix_t *down = NULL, *owned = NULL;
    const nz_matrix_t *H = A;
    if (L->Ah_owned != NULL) nz_matrix_destroy(&L->Ah_owned);
    L->Ah = NULL;
    if (A->location == NZ_DEVICE) {
        NZI_CHECK(nz_matrix_to_host(ctx, &down, A));
        H = down;
    }
    NZI_CHECK(nzi_as_csr(ctx, H, &H, &owned));
    if (owned != NULL) {
        L->Ah_owned = owned;
        owned = NULL;
    } else if (down != NULL) {
        L->Ah_owned = down;
        down = NULL;
    }
    L->Ah = L->Ah_owned != NULL ? L->Ah_owned : A;
cleanup:
    if (owned != NULL) nzi_matrix_free(owned);
    nz_matrix_destroy(&down);
    return status;
}

nz_status_t nzi_amg_create(nz_context_t *ctx, const nz_matrix_t *A, const nz_amg_options_t *opt,
                           nzi_amg_t **out) {
    nz_status_t status = NZ_SUCCESS;
    nzi_amg_t *amg = NULL;
    double *B = NULL, *Bc = NULL;
    node_graph_t S = {0};
    const double t_start = nzi_wtime();
    *out = NULL;
    NZI_CHECK(alloc(ctx, &amg, 1, sizeof *amg, "AMG: object"));
    memset(amg, 0, sizeof *amg);
    amg->ctx = ctx;
    amg->opt = *opt;
    amg->opt.near_nullspace = NULL; /* read at set-up only */
    amg->location = A->location;
    amg->vt = A->value_type;
    amg->n = A->rows;
    amg->backend = nzi_backend_of(A);
    amg->ops = amg->backend->krylov_ops != NULL ? amg->backend->krylov_ops() : NULL;
    if (amg->ops == NULL)
        NZI_CHECK(nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                            "nz_precond_create: AMG needs the Krylov vector operations, which "
                            "the %s backend does not have", amg->backend->name));
    if (A->location == NZ_DEVICE && A->format != NZ_FORMAT_CSR)
        NZI_CHECK(nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                            "nz_precond_create: AMG on the GPU needs a device CSR matrix, A is "
                            "%s (convert on the host before nz_matrix_to_device)",
                            nz_format_name(A->format)));
    amg->A0 = A;
    {
        const double t0 = nzi_wtime();
        NZI_CHECK(level0_host(amg, A));
        amg->pattern = pattern_hash(amg->level[0].Ah, nzi_context_threads(ctx));
        amg->symmetric = is_symmetric(amg->level[0].Ah, nzi_context_threads(ctx));
        amg->info.transfer_seconds += nzi_wtime() - t0;
    }
    if (amg->opt.smoother == NZ_AMG_SMOOTHER_AUTO)
        amg->opt.smoother = amg->symmetric ? NZ_AMG_SMOOTHER_CHEBYSHEV : NZ_AMG_SMOOTHER_L1_JACOBI;
    /* the fine near-nullspace: the caller's or the constant */
    int k = opt->nullspace_dim;
    const int64_t n = A->rows;
    NZI_CHECK(alloc(ctx, &B, n * k, sizeof(double), "AMG set-up: near-nullspace"));
    if (opt->near_nullspace != NULL)
        memcpy(B, opt->near_nullspace, (size_t)(n * k) * sizeof(double));
    else
        for (int64_t i = 0; i < n; i++) B[i] = 1.0;
    amg->level[0].block = opt->block_size;
    int l = 0;
    for (;; l++) {
        amg_level_t *L = &amg->level[l];
        const nz_matrix_t *H = L->Ah;
        L->nodes = H->rows / L->block;
        NZI_CHECK(alloc(ctx, &L->diag, H->rows, sizeof(double), "AMG set-up: diagonal"));
        if (H->rows <= amg->opt.max_coarse || l == amg->opt.max_levels - 1) break;
        double t0 = nzi_wtime();
        NZI_CHECK(strength(ctx, H, L->block, amg->opt.threshold, amg->symmetric, &S));
        amg->info.strength_seconds += nzi_wtime() - t0;
        t0 = nzi_wtime();
        NZI_CHECK(alloc(ctx, &L->agg, L->nodes, sizeof(int32_t), "AMG set-up: aggregates"));
        NZI_CHECK(aggregate(ctx, &S, L->agg, &L->naggs, &L->mis_rounds, &L->unaggregated));
        graph_free(ctx, &S);
        amg->info.aggregate_seconds += nzi_wtime() - t0;
        if (L->naggs == 0 || (double)(L->naggs * k) > NZI_AMG_STALL * (double)H->rows) break;
        t0 = nzi_wtime();
        NZI_CHECK(tentative(ctx, amg->vt, H->rows, L->block, L->agg, L->naggs, B, k, &L->T,
                            &Bc));
        amg->info.tentative_seconds += nzi_wtime() - t0;
        NZI_CHECK(level_values(amg, l, -1, 1));
        nzi_free(ctx, B);
        B = Bc;
        Bc = NULL;
        amg->level[l + 1].block = k;
    }
    amg->levels = l + 1;
    amg_level_t *Lc = &amg->level[l];
    /* a level that stopped coarsening (stall, max_levels) drops its aggregation */
    nz_matrix_destroy(&Lc->T);
    NZI_CHECK(level_values(amg, l, l, 1));
    amg->coarse_direct = Lc->Ah->rows <= NZI_AMG_MAX_COARSE;
    NZI_CHECK(coarse_values(amg, 1));
    /* where the cycle runs */
    for (int j = 0; j < amg->levels; j++) NZI_CHECK(level_cycle(amg, j, 0));
    if (amg->coarse_direct) {
        const double t0 = nzi_wtime();
        const nz_matrix_t *Ci = amg->coarse_inv;
        if (amg->location == NZ_DEVICE) {
            NZI_CHECK(nz_matrix_to_device(ctx, &amg->coarse_inv_dev, amg->coarse_inv,
                                          NZ_INDEX_AUTO));
            Ci = amg->coarse_inv_dev;
        }
        NZI_CHECK(nz_spmv_plan_create(ctx, &amg->coarse_plan, Ci, NZ_OP_N, NZ_ALG_AUTO,
                                      NZ_PLAN_REUSE | amg->opt.plan_flags));
        amg->info.transfer_seconds += nzi_wtime() - t0;
    }
    amg->info.setup_seconds = nzi_wtime() - t_start;
    *out = amg;
    amg = NULL;
cleanup:
    graph_free(ctx, &S);
    nzi_free(ctx, B);
    nzi_free(ctx, Bc);
    nzi_amg_destroy(&amg);
    return status;
}

/* ---- re-setup ------------------------------------------------------------------------- */

nz_status_t nzi_amg_update(nzi_amg_t *amg, const nz_matrix_t *A) {
    nz_context_t *ctx = amg->ctx;
    amg_level_t *L0 = &amg->level[0];
    const double t0 = nzi_wtime();
    if (A->location != amg->location || A->value_type != amg->vt || A->rows != amg->n ||
        A->cols != amg->n || (A->location == NZ_DEVICE && A->format != NZ_FORMAT_CSR))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_precond_update: A is not a matrix of the AMG hierarchy's dimension, "
                         "value type, location and format");
    amg->broken = 1;
    amg->A0 = A;
    NZI_TRY(level0_host(amg, A));
    if (pattern_hash(L0->Ah, nzi_context_threads(ctx)) != amg->pattern)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_precond_update: A's pattern differs from the one the AMG hierarchy "
                         "was built from (make a new preconditioner)");
    amg->info.coarse_shift = 0.0;
    for (int l = 0; l < amg->levels; l++) nz_spmv_plan_destroy(&amg->level[l].plan_A);
    for (int l = 0; l < amg->levels; l++)
        NZI_TRY(level_values(amg, l, amg->levels - 1, 0));
    NZI_TRY(coarse_values(amg, 0));
    for (int l = 0; l < amg->levels; l++) NZI_TRY(level_cycle(amg, l, 1));
    if (amg->coarse_plan != NULL) {
        if (amg->location == NZ_DEVICE)
            NZI_TRY(amg->backend->mem_copy(
                ctx, amg->coarse_inv_dev->device.values, amg->coarse_inv->host.csr.values,
                (size_t)amg->coarse_inv->nnz * nzi_value_size(amg->vt), NZI_H2D));
        const nz_matrix_t *Ci =
            amg->location == NZ_DEVICE ? amg->coarse_inv_dev : amg->coarse_inv;
        nz_spmv_plan_destroy(&amg->coarse_plan);
        NZI_TRY(nz_spmv_plan_create(ctx, &amg->coarse_plan, Ci, NZ_OP_N, NZ_ALG_AUTO,
                                    NZ_PLAN_REUSE | amg->opt.plan_flags));
    }
    amg->info.update_seconds = nzi_wtime() - t0;
    amg->broken = 0;
    return NZ_SUCCESS;
}

/* ---- the cycle ------------------------------------------------------------------------ */

/* x += smoothing of A x = b on level L (zero: x is zero on entry, so r = b and x is written, not
 * read). Chebyshev: Saad's Alg. 12.1 on D^-1 A over [rho / ratio, rho] from the residual, x
 * accumulating each step's d; l1-Jacobi: sweeps of x += D_l1^-1 (b - A x). */
static nz_status_t smooth(nzi_amg_t *amg, amg_level_t *L, const void *b, void *x, int zero) {
    const nzi_krylov_ops_t *ops = amg->ops;
    nzi_krylov_space_t *s = &L->space;
    void *r = L->work[0], *res = L->work[1], *d = L->work[2], *w = L->work[3], *t = L->work[4];
    if (amg->opt.smoother == NZ_AMG_SMOOTHER_L1_JACOBI) {
        for (int sweep = 0; sweep < amg->opt.smoother_degree; sweep++) {
            if (zero && sweep == 0) {
                NZI_TRY(ops->precond(s, b, x));
                continue;
            }
            NZI_TRY(ops->copy(s, b, r));
            NZI_TRY(nz_spmv_execute(L->plan_A, -1.0, x, 1.0, r));
            NZI_TRY(ops->precond(s, r, t));
            NZI_TRY(ops->axpby(s, 1.0, t, 1.0, x));
        }
        return NZ_SUCCESS;
    }
    const double lmax = NZI_AMG_SAFETY * L->rho, lmin = lmax / amg->opt.cheb_ratio;
    if (zero) {
        NZI_TRY(ops->precond(s, b, res));
    } else {
        NZI_TRY(ops->copy(s, b, r));
        NZI_TRY(nz_spmv_execute(L->plan_A, -1.0, x, 1.0, r));
        NZI_TRY(ops->precond(s, r, res));
    }
    /* the space's apply is L->plan_A */
    return nzi_chebyshev_recurrence(ops, s, lmin, lmax, amg->opt.smoother_degree, res, d, w, t, x,
                                    !zero);
}

/* x = cycle(l) applied to b, x written (not read). */
static nz_status_t cycle(nzi_amg_t *amg, int l, const void *b, void *x) {
    amg_level_t *L = &amg->level[l];
    const nzi_krylov_ops_t *ops = amg->ops;
    if (l == amg->levels - 1) {
        /* (a small A is its own coarsest level: the inverse replaces the cycle) */
        if (amg->coarse_direct) return nz_spmv_execute(amg->coarse_plan, 1.0, b, 0.0, x);
        NZI_TRY(smooth(amg, L, b, x, 1));
        for (int i = 1; i < NZI_AMG_COARSE_SMOOTHS; i++) NZI_TRY(smooth(amg, L, b, x, 0));
        return NZ_SUCCESS;
    }
    amg_level_t *C = &amg->level[l + 1];
    void *r = L->work[0];
    NZI_TRY(smooth(amg, L, b, x, 1));
    const int visits = amg->opt.cycle == NZ_AMG_CYCLE_W && l + 2 < amg->levels ? 2 : 1;
    for (int v = 0; v < visits; v++) {
        NZI_TRY(ops->copy(&L->space, b, r));
        NZI_TRY(nz_spmv_execute(L->plan_A, -1.0, x, 1.0, r));
        NZI_TRY(nz_spmv_execute(L->plan_R, 1.0, r, 0.0, C->b));
        NZI_TRY(cycle(amg, l + 1, C->b, C->x));
        NZI_TRY(nz_spmv_execute(L->plan_P, 1.0, C->x, 1.0, x));
    }
    return smooth(amg, L, b, x, 0);
}

nz_status_t nzi_amg_apply(nzi_amg_t *amg, const void *r, void *z) {
    if (amg->broken)
        return nzi_error(amg->ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_precond_apply: the AMG preconditioner's last update failed; update "
                         "it with a matrix of its pattern first");
    return cycle(amg, 0, r, z);
}

void nzi_amg_info(const nzi_amg_t *amg, nz_amg_info_t *info) {
    *info = amg->info;
    info->levels = amg->levels;
    double nnz = 0.0, rows = 0.0;
    for (int l = 0; l < amg->levels; l++) {
        const amg_level_t *L = &amg->level[l];
        if (L->Ah == NULL) continue; /* level 0 after a failed update */
        info->rows[l] = L->Ah->rows;
        info->nnz[l] = L->Ah->nnz;
        info->block_size[l] = L->block;
        info->lambda_max[l] = L->rho;
        info->mis_rounds[l] = L->mis_rounds;
        info->unaggregated[l] = L->unaggregated;
        nnz += (double)L->Ah->nnz;
        rows += (double)L->Ah->rows;
    }
    info->operator_complexity = amg->levels > 0 && info->nnz[0] > 0 ? nnz / (double)info->nnz[0]
                                                                    : 1.0;
    info->grid_complexity = amg->levels > 0 && info->rows[0] > 0 ? rows / (double)info->rows[0]
                                                                 : 1.0;
    info->coarse_direct = amg->coarse_direct;
    info->smoother = amg->opt.smoother;
}

nz_status_t nzi_amg_level(const nzi_amg_t *amg, int l, const nz_matrix_t **A,
                          const nz_matrix_t **P, double *rho, nz_amg_options_t *opt) {
    if (l < 0 || l >= amg->levels || amg->level[l].Ah == NULL) return NZ_ERR_INVALID_ARGUMENT;
    *A = amg->level[l].Ah;
    *P = l + 1 < amg->levels ? amg->level[l].P : NULL;
    *rho = amg->level[l].rho;
    *opt = amg->opt;
    return NZ_SUCCESS;
}
