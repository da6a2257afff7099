/* preconditioner.c: preconditioner objects (nz_precond_*): every kind from the Krylov table, the factor code or an SpMV plan. */
#include "nzi.h"
#include "backend.h"
#include "krylov.h"
#include "precond.h"
#include "amg.h"

#include <float.h>
#include <math.h>
#include <string.h>

/*
 * One object, whatever the kind, so a solver (or a caller) sees only "apply M^-1". Nothing here
 * is backend code: JACOBI, L1_JACOBI and CHEBYSHEV run on a small Krylov space of A's backend
 * table (its precond_setup / precond, and for Chebyshev apply, axpby and copy); ILU0 and IC0
 * are the factor code's (precond.h); BLOCK_JACOBI is host set-up arithmetic whose result is an
 * ordinary CSR matrix, applied by an SpMV plan where A lives. So each kind runs wherever its
 * parts do.
 */

#define NZI_PRECONDITIONER_MAGIC 0x4e5a505245000001ull /* "NZPRE" */
#define NZI_BLOCK_JACOBI_DEFAULT 4
#define NZI_BLOCK_JACOBI_MAX 32
#define NZI_CHEBYSHEV_DEFAULT_DEGREE 3
#define NZI_CHEBYSHEV_MAX_DEGREE 64
/* Power-iteration steps of the lambda_max estimate, and the factor it is raised by: the estimate
 * approaches lambda_max from below, and a polynomial whose interval misses the top of the
 * spectrum amplifies the error there, while a slightly wide interval only costs a little. */
#define NZI_CHEBYSHEV_POWER_STEPS 20
#define NZI_CHEBYSHEV_SAFETY 1.1
/* lambda_min = lambda_max / 30 when not given: the eigenvalue ratio Trilinos Ifpack2's Chebyshev
 * uses by default ("chebyshev: ratio eigenvalue"); PETSc's GAMG smoother takes 0.1 lambda_max
 * and hypre's 0.3, since a smoother needs only the upper part of the spectrum damped. As a
 * preconditioner the wider interval reaches further down the spectrum. */
#define NZI_CHEBYSHEV_RATIO 30.0
#define NZI_CHEBYSHEV_WORK 4

struct nz_preconditioner {
    uint64_t magic;
    nz_context_t *ctx;
    nz_precond_t kind;
    nz_value_type_t value_type;
    nz_location_t location;
    int64_t rows;
    double setup_seconds;
    int block_size, degree;
    double lambda_min, lambda_max, lambda_estimate;
    /* NONE, JACOBI, L1_JACOBI, CHEBYSHEV: the table of A's backend and a space of its vectors */
    const nzi_krylov_ops_t *ops;
    nzi_krylov_space_t space;
    int space_created;
    void *work[NZI_CHEBYSHEV_WORK]; /* CHEBYSHEV: res, d, w, t (apply allocates nothing) */
    nz_spmv_plan_t *plan;        /* CHEBYSHEV: A; BLOCK_JACOBI: the block inverses */
    nz_matrix_t *blocks;         /* BLOCK_JACOBI: block-diagonal CSR of the inverses */
    nzi_factor_precond_t *factor; /* ILU0, IC0 */
    nz_precond_apply_t user_apply; /* USER */
    void *user;
    nzi_amg_t *amg;              /* AMG */
    nz_precond_options_t options; /* what nz_precond_update builds again with (amg: NULL) */
    nz_amg_options_t amg_options; /* AMG: checked, defaults filled */
    int broken;                  /* an update failed: apply refuses */
};

const char *nz_precond_name(nz_precond_t kind) {
    switch (kind) {
    case NZ_PRECOND_NONE: return "none";
    case NZ_PRECOND_JACOBI: return "jacobi";
    case NZ_PRECOND_USER: return "user";
    case NZ_PRECOND_L1_JACOBI: return "l1-jacobi";
    case NZ_PRECOND_ILU0: return "ilu0";
    case NZ_PRECOND_IC0: return "ic0";
    case NZ_PRECOND_BLOCK_JACOBI: return "block-jacobi";
    case NZ_PRECOND_CHEBYSHEV: return "chebyshev";
    case NZ_PRECOND_AMG: return "amg";
    }
    return "unknown";
}

static nz_status_t check_object(const nz_preconditioner_t *M) {
    if (M == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (M->magic != NZI_PRECONDITIONER_MAGIC) return NZ_ERR_INVALID_HANDLE;
    return NZ_SUCCESS;
}

nz_status_t nz_precond_destroy(nz_preconditioner_t **M) {
    if (M == NULL || *M == NULL) return NZ_SUCCESS;
    nz_preconditioner_t *p = *M;
    NZI_TRY(check_object(p));
    nz_context_t *ctx = p->ctx;
    if (p->space_created) {
        for (int i = 0; i < NZI_CHEBYSHEV_WORK; i++) p->ops->vec_destroy(&p->space, p->work[i]);
        p->ops->destroy(&p->space);
    }
    nz_spmv_plan_destroy(&p->plan);
    nz_matrix_destroy(&p->blocks);
    nzi_factor_precond_destroy(&p->factor);
    nzi_amg_destroy(&p->amg);
    p->magic = NZI_DEAD_MAGIC;
    nzi_free(ctx, p);
    *M = NULL;
    return NZ_SUCCESS;
}

/* Copy *in (zeros when NULL) into *opt, check it, fill the defaults. */
static nz_status_t options_check(nz_context_t *ctx, nz_precond_t kind,
                                 const nz_precond_options_t *in, nz_precond_options_t *opt) {
    const char *what = "nz_precond_create";
    if (in != NULL)
        *opt = *in;
    else
        memset(opt, 0, sizeof *opt);
    if (opt->reserved0 != 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: options->reserved0 is not zero (zero-initialise the options)", what);
    for (int i = 0; i < 3; i++)
        if (opt->reserved[i] != 0)
            return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                             "%s: options->reserved[%d] is not zero (zero-initialise the options)",
                             what, i);
    if (opt->sweeps < 0 || opt->sweeps > 255)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: sweeps %d outside 0 .. 255 (0: exact triangular solves)", what,
                         opt->sweeps);
    if (opt->block_size < 0 || opt->block_size > NZI_BLOCK_JACOBI_MAX)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: block_size %d outside 1 .. %d", what,
                         opt->block_size, NZI_BLOCK_JACOBI_MAX);
    if (opt->degree < 0 || opt->degree > NZI_CHEBYSHEV_MAX_DEGREE)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: degree %d outside 1 .. %d", what,
                         opt->degree, NZI_CHEBYSHEV_MAX_DEGREE);
    if (!(opt->lambda_min >= 0.0) || !(opt->lambda_max >= 0.0) || isinf(opt->lambda_min) ||
        isinf(opt->lambda_max))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: lambda_min %g and lambda_max %g must be finite and >= 0", what,
                         opt->lambda_min, opt->lambda_max);
    if (opt->lambda_max > 0.0 && opt->lambda_min >= opt->lambda_max)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: lambda_min %g must be below lambda_max %g", what, opt->lambda_min,
                         opt->lambda_max);
    if (kind == NZ_PRECOND_USER && opt->apply == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: NZ_PRECOND_USER needs options->apply",
                         what);
    if (opt->block_size == 0) opt->block_size = NZI_BLOCK_JACOBI_DEFAULT;
    if (opt->degree == 0) opt->degree = NZI_CHEBYSHEV_DEFAULT_DEGREE;
    return NZ_SUCCESS;
}

/* The Krylov space of the table-based kinds: A's backend table, max_dots 1, the SpMV plan
 * (Chebyshev only; NULL otherwise), and for Jacobi-type scaling the table's precond_setup on
 * A (L1_JACOBI reads a CSR copy of a host matrix of another format). */
static nz_status_t space_setup(nz_preconditioner_t *p, const nz_matrix_t *A, nz_precond_t scaling) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = p->ctx;
    const nzi_backend_t *backend = nzi_backend_of(A);
    nz_matrix_t *owned = NULL;
    p->ops = backend->krylov_ops != NULL ? backend->krylov_ops() : NULL;
    if (p->ops == NULL)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_precond_create: %s needs the Krylov vector operations, which the %s "
                         "backend does not have yet", nz_precond_name(p->kind), backend->name);
    p->space.ctx = ctx;
    p->space.value_type = A->value_type;
    p->space.n = A->rows;
    p->space.plan = p->plan;
    p->space.precond = scaling;
    p->space.max_dots = 1;
    NZI_TRY(p->ops->create(&p->space));
    p->space_created = 1;
    if (scaling != NZ_PRECOND_JACOBI && scaling != NZ_PRECOND_L1_JACOBI) return NZ_SUCCESS;
    const nz_matrix_t *As = A;
    if (scaling == NZ_PRECOND_L1_JACOBI && A->location == NZ_HOST)
        NZI_CHECK(nzi_as_csr(ctx, A, &As, &owned));
    int64_t bad_row;
    NZI_CHECK(p->ops->precond_setup(&p->space, As, &bad_row));
    if (bad_row < A->rows) {
        if (scaling == NZ_PRECOND_JACOBI)
            status = nzi_error(ctx, NZ_ERR_BREAKDOWN,
                               "nz_precond_create: %s preconditioner: diagonal entry (%lld, %lld) "
                               "of A is missing, zero or not finite",
                               p->kind == NZ_PRECOND_CHEBYSHEV ? "Chebyshev (Jacobi-scaled)"
                                                               : "Jacobi",
                               (long long)bad_row + 1, (long long)bad_row + 1);
        else
            status = nzi_error(ctx, NZ_ERR_BREAKDOWN,
                               "nz_precond_create: l1-Jacobi preconditioner: row %lld of A is zero "
                               "or holds a value that is not finite",
                               (long long)bad_row + 1);
    }
cleanup:
    if (owned != NULL) nzi_matrix_free(owned);
    return status;
}

/* In-place inverse of the dense m x m row-major matrix a by LU with partial pivoting (Golub and
 * Van Loan, Alg. 3.4.1, then solves against the columns of I into inv). Returns 0, or 1 when a
 * pivot is zero, below m eps max|a_ij| or not finite (the block is singular to working
 * precision). Cost 8/3 m^3 flops; m <= 32. */
int nzi_dense_invert(double *a, double *inv, int *perm, int m) {
    double amax = 0.0;
    for (int i = 0; i < m * m; i++) {
        if (!isfinite(a[i])) return 1;
        if (fabs(a[i]) > amax) amax = fabs(a[i]);
    }
    const double tiny = (double)m * DBL_EPSILON * amax;
    for (int i = 0; i < m; i++) perm[i] = i;
    for (int k = 0; k < m; k++) {
        int pivot = k;
        for (int i = k + 1; i < m; i++)
            if (fabs(a[i * m + k]) > fabs(a[pivot * m + k])) pivot = i;
        if (!(fabs(a[pivot * m + k]) > tiny)) return 1;
        if (pivot != k) {
            for (int j = 0; j < m; j++) {
                const double t = a[k * m + j];
                a[k * m + j] = a[pivot * m + j];
                a[pivot * m + j] = t;
            }
            const int t = perm[k];
            perm[k] = perm[pivot];
            perm[pivot] = t;
        }
        for (int i = k + 1; i < m; i++) {
            const double l = a[i * m + k] / a[k * m + k];
            a[i * m + k] = l;
            for (int j = k + 1; j < m; j++) a[i * m + j] -= l * a[k * m + j];
        }
    }
    /* column c of the inverse: L U x = P e_c */
    for (int c = 0; c < m; c++) {
        for (int i = 0; i < m; i++) {
            double s = perm[i] == c ? 1.0 : 0.0;
            for (int j = 0; j < i; j++) s -= a[i * m + j] * inv[j * m + c];
            inv[i * m + c] = s;
        }
        for (int i = m - 1; i >= 0; i--) {
            double s = inv[i * m + c];
            for (int j = i + 1; j < m; j++) s -= a[i * m + j] * inv[j * m + c];
            inv[i * m + c] = s / a[i * m + i];
        }
    }
    for (int i = 0; i < m * m; i++)
        if (!isfinite(inv[i])) return 1;
    return 0;
}

/* BLOCK_JACOBI: the diagonal blocks of the host CSR matrix H (rows [kb, kb + b) x the same
 * columns, the last block shorter), each inverted in double, into a new host CSR matrix *B of
 * H's value type holding every entry of each inverse block (sum of m^2 over the blocks). */
static nz_status_t block_inverses(nz_context_t *ctx, const nz_matrix_t *H, int b, nz_matrix_t **B) {
    nz_status_t status = NZ_SUCCESS;
    double *a = NULL, *inv = NULL;
    int *perm = NULL;
    nz_matrix_t *out = NULL;
    const int64_t n = H->rows;
    const int64_t full = n / b, last = n % b;
    const int64_t nnz = full * (int64_t)b * b + last * last;
    const nzi_csr_t *c = &H->host.csr;
    *B = NULL;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&a, (size_t)b * b, sizeof(double),
                              "nz_precond_create: dense block"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&inv, (size_t)b * b, sizeof(double),
                              "nz_precond_create: dense block inverse"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&perm, (size_t)b, sizeof(int),
                              "nz_precond_create: pivots"));
    NZI_CHECK(nzi_csr_alloc(ctx, &out, H->value_type, n, n, nnz));
    nzi_csr_t *o = &out->host.csr;
    int64_t at = 0;
    o->row_offsets[0] = 0;
    for (int64_t r0 = 0; r0 < n; r0 += b) {
        const int m = (int)(n - r0 < b ? n - r0 : b);
        memset(a, 0, (size_t)m * m * sizeof(double));
        for (int i = 0; i < m; i++)
            for (int64_t k = c->row_offsets[r0 + i]; k < c->row_offsets[r0 + i + 1]; k++) {
                const int64_t col = c->col_indices[k];
                if (col >= r0 && col < r0 + m)
                    a[i * m + (col - r0)] = nzi_get(c->values, H->value_type, k);
            }
        int bad = nzi_dense_invert(a, inv, perm, m);
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < m; j++) {
                o->col_indices[at] = (int32_t)(r0 + j);
                nzi_set(o->values, H->value_type, at, inv[i * m + j]);
                if (!isfinite(nzi_get(o->values, H->value_type, at))) bad = 1;
                at++;
            }
            o->row_offsets[r0 + i + 1] = at;
        }
        if (bad) {
            status = nzi_error(ctx, NZ_ERR_BREAKDOWN,
                               "nz_precond_create: block-Jacobi preconditioner: the diagonal "
                               "block of rows %lld .. %lld of A is singular or not finite (its "
                               "inverse does not exist in the value type)",
                               (long long)r0 + 1, (long long)(r0 + m));
            goto cleanup;
        }
    }
    *B = out;
    out = NULL;
cleanup:
    nz_matrix_destroy(&out);
    nzi_free(ctx, perm);
    nzi_free(ctx, inv);
    nzi_free(ctx, a);
    return status;
}

/* BLOCK_JACOBI set-up: A on the host (a device A is downloaded; another host format read as
 * CSR), the block inverses, uploaded when A is a device matrix, and their SpMV plan. */
static nz_status_t block_jacobi_setup(nz_preconditioner_t *p, const nz_matrix_t *A) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = p->ctx;
    nz_matrix_t *downloaded = NULL, *owned = NULL, *host_blocks = NULL;
    const nz_matrix_t *H = A;
    if (A->location == NZ_DEVICE) {
        NZI_CHECK(nz_matrix_to_host(ctx, &downloaded, A));
        H = downloaded;
    }
    NZI_CHECK(nzi_as_csr(ctx, H, &H, &owned));
    NZI_CHECK(block_inverses(ctx, H, p->block_size, &host_blocks));
    if (A->location == NZ_DEVICE) {
        NZI_CHECK(nz_matrix_to_device(ctx, &p->blocks, host_blocks, NZ_INDEX_AUTO));
    } else {
        p->blocks = host_blocks;
        host_blocks = NULL;
    }
    NZI_CHECK(nz_spmv_plan_create(ctx, &p->plan, p->blocks, NZ_OP_N, NZ_ALG_AUTO, NZ_PLAN_REUSE));
cleanup:
    nz_matrix_destroy(&host_blocks);
    if (owned != NULL) nzi_matrix_free(owned);
    nz_matrix_destroy(&downloaded);
    return status;
}

nz_status_t nzi_power_estimate(const nzi_krylov_ops_t *ops, nzi_krylov_space_t *s,
                               const nzi_backend_t *backend, uint64_t seed, int steps, void *v,
                               void *w, void *t, double *estimate) {
    nz_status_t status = NZ_SUCCESS;
    void *host = NULL;
    const int64_t n = s->n;
    const size_t bytes = (size_t)n * nzi_value_size(s->value_type);
    double norm = 0.0, est = 0.0;
    nzi_rng_t rng;
    *estimate = 0.0;
    /* the start vector: uniform in [-1, 1) from the seed, built on the host */
    NZI_CHECK(nzi_alloc_array(s->ctx, &host, n > 0 ? (size_t)n : 1,
                              nzi_value_size(s->value_type), "power iteration: start vector"));
    nzi_rng_seed(&rng, seed);
    for (int64_t i = 0; i < n; i++)
        nzi_set(host, s->value_type, i, 2.0 * nzi_rng_uniform(&rng) - 1.0);
    if (backend->mem_copy != NULL)
        NZI_CHECK(backend->mem_copy(s->ctx, v, host, bytes, NZI_H2D));
    else if (bytes > 0)
        memcpy(v, host, bytes);
    NZI_CHECK(ops->norm2(s, v, &norm));
    if (!(norm > 0.0) || !isfinite(norm)) goto cleanup;
    NZI_CHECK(ops->scale(s, 1.0 / norm, v));
    for (int step = 0; step < steps; step++) {
        double vw, wt;
        NZI_CHECK(ops->apply(s, v, w));
        NZI_CHECK(ops->precond(s, w, t));
        NZI_CHECK(ops->dot(s, v, w, &vw));
        NZI_CHECK(ops->dot(s, w, t, &wt));
        NZI_CHECK(ops->norm2(s, t, &norm));
        if (!(norm > 0.0) || !isfinite(norm)) goto cleanup;
        est = norm;
        if (vw > 0.0 && isfinite(wt / vw) && wt / vw > est) est = wt / vw;
        NZI_CHECK(ops->axpby(s, 1.0 / norm, t, 0.0, v));
    }
    *estimate = est;
cleanup:
    nzi_free(s->ctx, host);
    return status;
}

/* CHEBYSHEV set-up: the SpMV plan of A, a Jacobi-scaled space, the work vectors, the interval. */
static nz_status_t chebyshev_setup(nz_preconditioner_t *p, const nz_matrix_t *A,
                                   const nz_precond_options_t *opt) {
    nz_context_t *ctx = p->ctx;
    NZI_TRY(nz_spmv_plan_create(ctx, &p->plan, A, NZ_OP_N, NZ_ALG_AUTO, NZ_PLAN_REUSE));
    NZI_TRY(space_setup(p, A, NZ_PRECOND_JACOBI));
    for (int i = 0; i < NZI_CHEBYSHEV_WORK; i++)
        NZI_TRY(p->ops->vec_create(&p->space, &p->work[i], "nz_precond_create: Chebyshev vector"));
    p->lambda_max = opt->lambda_max;
    if (p->lambda_max == 0.0 && p->rows > 0) {
        NZI_TRY(nzi_power_estimate(p->ops, &p->space, nzi_backend_of(A), 20261127u,
                                   NZI_CHEBYSHEV_POWER_STEPS, p->work[0], p->work[1], p->work[2],
                                   &p->lambda_estimate));
        if (!(p->lambda_estimate > 0.0) || !isfinite(p->lambda_estimate))
            return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                             "nz_precond_create: Chebyshev preconditioner: the estimate of the "
                             "largest eigenvalue of D^-1 A is %g (A D^-1 maps the start vector "
                             "to zero or to non-finite values); give options->lambda_max",
                             p->lambda_estimate);
        p->lambda_max = NZI_CHEBYSHEV_SAFETY * p->lambda_estimate;
    } else if (p->lambda_max == 0.0) {
        p->lambda_max = 1.0; /* n = 0: nothing is ever applied */
    }
    p->lambda_min = opt->lambda_min > 0.0 ? opt->lambda_min : p->lambda_max / NZI_CHEBYSHEV_RATIO;
    if (!(p->lambda_min < p->lambda_max))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_precond_create: Chebyshev preconditioner: lambda_min %g is not below "
                         "lambda_max %g (estimated)", p->lambda_min, p->lambda_max);
    return NZ_SUCCESS;
}

nz_status_t nz_precond_create(nz_context_t *ctx, nz_preconditioner_t **M, const nz_matrix_t *A,
                              nz_precond_t kind, const nz_precond_options_t *options) {
    nz_status_t status = NZ_SUCCESS;
    nz_preconditioner_t *p = NULL;
    nz_precond_options_t opt;
    nz_matrix_t *owned = NULL;
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (M == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_precond_create: M is NULL");
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->rows != A->cols)
        return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH,
                         "nz_precond_create: A is %lld x %lld, not square", (long long)A->rows,
                         (long long)A->cols);
    if ((int)kind < (int)NZ_PRECOND_NONE || (int)kind > (int)NZ_PRECOND_AMG)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_precond_create: unknown kind %d",
                         (int)kind);
    NZI_TRY(options_check(ctx, kind, options, &opt));
    nz_amg_options_t amg_opt;
    if (kind == NZ_PRECOND_AMG)
        NZI_TRY(nzi_amg_options(ctx, opt.amg, &amg_opt, A->rows, "nz_precond_create"));
    const double t0 = nzi_wtime();
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&p, 1, sizeof *p, "nz_precond_create: object"));
    memset(p, 0, sizeof *p);
    p->magic = NZI_PRECONDITIONER_MAGIC;
    p->ctx = ctx;
    p->kind = kind;
    p->value_type = A->value_type;
    p->location = A->location;
    p->rows = A->rows;
    p->options = opt;
    p->options.amg = NULL;
    if (kind == NZ_PRECOND_AMG) {
        p->amg_options = amg_opt;
        p->amg_options.near_nullspace = NULL;
    }
    switch (kind) {
    case NZ_PRECOND_NONE:
    case NZ_PRECOND_JACOBI:
    case NZ_PRECOND_L1_JACOBI: NZI_CHECK(space_setup(p, A, kind)); break;
    case NZ_PRECOND_USER:
        p->user_apply = opt.apply;
        p->user = opt.user;
        break;
    case NZ_PRECOND_ILU0:
    case NZ_PRECOND_IC0: {
        /* the factor code reads a CSR matrix: a host matrix of another format is read as CSR */
        const nz_matrix_t *Ac = A;
        if (A->location == NZ_HOST) NZI_CHECK(nzi_as_csr(ctx, A, &Ac, &owned));
        NZI_CHECK(nzi_factor_precond_create(ctx, Ac, kind, opt.sweeps, &p->factor));
        break;
    }
    case NZ_PRECOND_BLOCK_JACOBI:
        p->block_size = opt.block_size;
        NZI_CHECK(block_jacobi_setup(p, A));
        break;
    case NZ_PRECOND_CHEBYSHEV:
        p->degree = opt.degree;
        NZI_CHECK(chebyshev_setup(p, A, &opt));
        break;
    case NZ_PRECOND_AMG: NZI_CHECK(nzi_amg_create(ctx, A, &amg_opt, &p->amg)); break;
    }
    p->setup_seconds = nzi_wtime() - t0;
    *M = p;
    p = NULL;
cleanup:
    if (owned != NULL) nzi_matrix_free(owned);
    if (p != NULL) nz_precond_destroy(&p);
    return status;
}

/* z = D^-1-scaled Chebyshev iteration for B z = D^-1 r, B = D^-1 A, from z = 0 (Saad, Iterative
 * Methods for Sparse Linear Systems, 2nd ed., Alg. 12.1, with the residual kept Jacobi-scaled:
 * res = D^-1 (r - A z)). theta and delta are the centre and half-width of [lambda_min,
 * lambda_max], sigma = theta / delta:
 *   res = D^-1 r; d = res / theta; z = d; rho = 1 / sigma
 *   degree - 1 times: res -= D^-1 A d; rho' = 1 / (2 sigma - rho);
 *                     d = rho' rho d + (2 rho' / delta) res; z += d; rho = rho'
 * z = q(B) D^-1 r with q of degree `degree` - 1; degree - 1 SpMVs, `degree` Jacobi scalings. */
nz_status_t nzi_chebyshev_recurrence(const nzi_krylov_ops_t *ops, nzi_krylov_space_t *s,
                                     double lambda_min, double lambda_max, int steps, void *res,
                                     void *d, void *w, void *t, void *z, int accumulate) {
    const double theta = 0.5 * (lambda_max + lambda_min);
    const double delta = 0.5 * (lambda_max - lambda_min);
    const double sigma = theta / delta;
    double rho = 1.0 / sigma;
    NZI_TRY(ops->axpby(s, 1.0 / theta, res, 0.0, d));
    if (accumulate)
        NZI_TRY(ops->axpby(s, 1.0, d, 1.0, z));
    else
        NZI_TRY(ops->copy(s, d, z));
    for (int step = 0; step < steps; step++) {
        const double rho_next = 1.0 / (2.0 * sigma - rho);
        NZI_TRY(ops->apply(s, d, w));
        NZI_TRY(ops->precond(s, w, t));
        NZI_TRY(ops->axpby(s, -1.0, t, 1.0, res));
        NZI_TRY(ops->axpby(s, 2.0 * rho_next / delta, res, rho_next * rho, d));
        NZI_TRY(ops->axpby(s, 1.0, d, 1.0, z));
        rho = rho_next;
    }
    return NZ_SUCCESS;
}

static nz_status_t chebyshev_apply(const nz_preconditioner_t *p, const void *r, void *z) {
    nzi_krylov_space_t *s = (nzi_krylov_space_t *)&p->space;
    NZI_TRY(p->ops->precond(s, r, p->work[0]));
    return nzi_chebyshev_recurrence(p->ops, s, p->lambda_min, p->lambda_max, p->degree - 1,
                                    p->work[0], p->work[1], p->work[2], p->work[3], z, 0);
}

nz_status_t nz_precond_apply(const nz_preconditioner_t *M, const void *r, void *z) {
    NZI_TRY(check_object(M));
    nz_context_t *ctx = M->ctx;
    const size_t bytes = (size_t)M->rows * nzi_value_size(M->value_type);
    if (M->rows == 0) return NZ_SUCCESS;
    if (r == NULL || z == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_precond_apply: r or z is NULL");
    if (nzi_ranges_overlap(r, bytes, z, bytes))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_precond_apply: r and z overlap in memory; use separate arrays");
    if (M->broken)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_precond_apply: the preconditioner's last nz_precond_update failed; "
                         "update it again first");
    nzi_krylov_space_t *s = (nzi_krylov_space_t *)&M->space;
    switch (M->kind) {
    case NZ_PRECOND_NONE:
    case NZ_PRECOND_JACOBI:
    case NZ_PRECOND_L1_JACOBI: return M->ops->precond(s, r, z);
    case NZ_PRECOND_ILU0:
    case NZ_PRECOND_IC0: return nzi_factor_precond_apply(M->factor, r, z);
    case NZ_PRECOND_BLOCK_JACOBI: return nz_spmv_execute(M->plan, 1.0, r, 0.0, z);
    case NZ_PRECOND_CHEBYSHEV: return chebyshev_apply(M, r, z);
    case NZ_PRECOND_AMG: return nzi_amg_apply(M->amg, r, z);
    case NZ_PRECOND_USER: {
        const nz_status_t status = M->user_apply(M->user, r, z);
        if (status != NZ_SUCCESS)
            return nzi_error(ctx, status < 0 ? status : NZ_ERR_INVALID_ARGUMENT,
                             "nz_precond_apply: the preconditioner callback returned %d (%s)",
                             (int)status, nz_status_string(status));
        return NZ_SUCCESS;
    }
    }
    return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "nz_precond_apply: unknown kind %d",
                     (int)M->kind);
}

nz_status_t nz_precond_info(const nz_preconditioner_t *M, nz_precond_info_t *info) {
    NZI_TRY(check_object(M));
    if (info == NULL)
        return nzi_error(M->ctx, NZ_ERR_NULL_ARGUMENT, "nz_precond_info: info is NULL");
    memset(info, 0, sizeof *info);
    info->kind = M->kind;
    info->rows = M->rows;
    info->value_type = M->value_type;
    info->location = M->location;
    info->setup_seconds = M->setup_seconds;
    if (M->factor != NULL) {
        info->shift = M->factor->shift;
        info->attempts = M->factor->attempts;
    }
    info->block_size = M->block_size;
    info->degree = M->degree;
    if (M->factor != NULL) info->sweeps = M->factor->sweeps;
    info->lambda_min = M->lambda_min;
    info->lambda_max = M->lambda_max;
    info->lambda_estimate = M->lambda_estimate;
    return NZ_SUCCESS;
}

nz_status_t nz_amg_info(const nz_preconditioner_t *M, nz_amg_info_t *info) {
    NZI_TRY(check_object(M));
    if (info == NULL) return nzi_error(M->ctx, NZ_ERR_NULL_ARGUMENT, "nz_amg_info: info is NULL");
    if (M->kind != NZ_PRECOND_AMG || M->amg == NULL)
        return nzi_error(M->ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_amg_info: the preconditioner is %s, not amg", nz_precond_name(M->kind));
    nzi_amg_info(M->amg, info);
    return NZ_SUCCESS;
}

nz_status_t nz_precond_update(nz_preconditioner_t *M, const nz_matrix_t *A) {
    NZI_TRY(check_object(M));
    nz_context_t *ctx = M->ctx;
    nzi_clear_error(ctx);
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->rows != M->rows || A->cols != M->rows)
        return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH,
                         "nz_precond_update: A is %lld x %lld, the preconditioner %lld x %lld",
                         (long long)A->rows, (long long)A->cols, (long long)M->rows,
                         (long long)M->rows);
    if (A->value_type != M->value_type || A->location != M->location)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_precond_update: A's value type or location differs from the matrix "
                         "the preconditioner was made from");
    const double t0 = nzi_wtime();
    if (M->kind == NZ_PRECOND_AMG) {
        M->broken = 1;
        NZI_TRY(nzi_amg_update(M->amg, A));
        M->broken = 0;
        M->setup_seconds = nzi_wtime() - t0;
        return NZ_SUCCESS;
    }
    if (M->kind == NZ_PRECOND_USER) return NZ_SUCCESS; /* nothing is built from A */
    /* the other kinds: a new object from A, its contents moved into M */
    nz_preconditioner_t *fresh = NULL;
    const nz_status_t status = nz_precond_create(ctx, &fresh, A, M->kind, &M->options);
    if (status < 0) {
        M->broken = 1;
        return status;
    }
    nz_preconditioner_t old = *M;
    *M = *fresh;
    /* the object holds no pointer into itself: its contents move as they are */
    *fresh = old;
    fresh->broken = 0;
    nz_precond_destroy(&fresh);
    return NZ_SUCCESS;
}

nzi_amg_t *nzi_precond_amg(const nz_preconditioner_t *M) {
    return M != NULL && M->magic == NZI_PRECONDITIONER_MAGIC && M->kind == NZ_PRECOND_AMG
               ? M->amg
               : NULL;
}
