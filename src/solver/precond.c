/* precond.c: ILU(0) and IC(0) preconditioners of nz_solve: the factorisation with a positive-definite-style diagonal shift, and the apply as two SpSV solves. */
#include "nzi.h"
#include "backend.h"
#include "precond.h"

#include <math.h>
#include <string.h>

/* The pattern of the factors: A's CSR pattern with the diagonal entry added where a row lacks
 * it (so a shift always has a place and SpSV NZ_NON_UNIT finds every diagonal); diag[i] its
 * position; a[k] A's value at position k in double (0 for an added diagonal). */
typedef struct factor_pattern {
    int64_t n, nnz;
    int64_t *row_offsets;
    int32_t *col_indices;
    int64_t *diag;
    double *a;
    double amax;                 /* max |a_ij| */
    double dmax;                 /* max |a_ii| */
} factor_pattern_t;

static void pattern_free(nz_context_t *ctx, factor_pattern_t *p) {
    nzi_free(ctx, p->row_offsets);
    nzi_free(ctx, p->col_indices);
    nzi_free(ctx, p->diag);
    nzi_free(ctx, p->a);
}

static nz_status_t pattern_build(nz_context_t *ctx, const nz_matrix_t *A, const char *name,
                                 factor_pattern_t *p) {
    nz_status_t status = NZ_SUCCESS;
    const nzi_csr_t *c = &A->host.csr;
    const int64_t n = A->rows;
    int64_t missing = 0;
    memset(p, 0, sizeof *p);
    p->n = n;
    for (int64_t i = 0; i < n; i++) {
        int found = 0;
        for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++) {
            const double v = nzi_get(c->values, A->value_type, k);
            if (!isfinite(v))
                return nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                                 "nz_solve: %s preconditioner: A(%lld, %lld) is %g (not finite)",
                                 name, (long long)i + 1, (long long)c->col_indices[k] + 1, v);
            if (c->col_indices[k] == i) found = 1;
        }
        missing += !found;
    }
    p->nnz = A->nnz + missing;
    const size_t nnz = p->nnz > 0 ? (size_t)p->nnz : 1, rows = n > 0 ? (size_t)n : 1;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&p->row_offsets, rows + 1, sizeof(int64_t),
                              "nz_solve: factor row offsets"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&p->col_indices, nnz, sizeof(int32_t),
                              "nz_solve: factor column indices"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&p->diag, rows, sizeof(int64_t),
                              "nz_solve: factor diagonal positions"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&p->a, nnz, sizeof(double), "nz_solve: factor values"));
    int64_t at = 0;
    p->row_offsets[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int placed = 0;
        for (int64_t k = c->row_offsets[i]; k <= c->row_offsets[i + 1]; k++) {
            const int64_t col = k < c->row_offsets[i + 1] ? c->col_indices[k] : n;
            if (!placed && col >= i) {
                p->diag[i] = at;
                placed = 1;
                if (col != i) { /* the missing diagonal, before the first column past it */
                    p->col_indices[at] = (int32_t)i;
                    p->a[at++] = 0.0;
                }
            }
            if (k == c->row_offsets[i + 1]) break;
            const double v = nzi_get(c->values, A->value_type, k);
            p->col_indices[at] = (int32_t)col;
            p->a[at++] = v;
            if (fabs(v) > p->amax) p->amax = fabs(v);
            if (col == i && fabs(v) > p->dmax) p->dmax = fabs(v);
        }
        p->row_offsets[i + 1] = at;
    }
cleanup:
    if (status < 0) pattern_free(ctx, p);
    return status;
}

/* ILU(0), the IKJ variant (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed., Alg.
 * 10.4) on f (A's values plus the shift): row i is eliminated with the rows k < i of its lower
 * part, updates kept only where row i has an entry (pos[] maps the columns of row i to their
 * positions, -1 elsewhere). Returns the first row whose pivot is zero, tiny or not finite, or n. */
static int64_t ilu0_factor(const factor_pattern_t *p, double *f, int64_t *pos, double tiny) {
    const int64_t *ro = p->row_offsets;
    const int32_t *ci = p->col_indices;
    for (int64_t i = 0; i < p->n; i++) {
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) pos[ci[k]] = k;
        for (int64_t k = ro[i]; k < p->diag[i]; k++) {
            const int64_t row = ci[k];
            f[k] /= f[p->diag[row]];
            for (int64_t j = p->diag[row] + 1; j < ro[row + 1]; j++)
                if (pos[ci[j]] >= 0) f[pos[ci[j]]] -= f[k] * f[j];
        }
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) pos[ci[k]] = -1;
        const double pivot = f[p->diag[i]];
        if (!(fabs(pivot) > tiny) || !isfinite(pivot)) return i;
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            if (!isfinite(f[k])) return i;
    }
    return p->n;
}

/* IC(0), row by row on the lower triangle (the row form of Cholesky, Golub and Van Loan 4.2;
 * no fill): l_ik = (a_ik - sum_{j<k} l_ij l_kj) / l_kk over the common pattern of rows i and k,
 * l_ii = sqrt(a_ii - sum_{j<i} l_ij^2). The upper triangle of f is not read or written. Returns
 * the first row whose pivot (before the square root) is <= tiny or not finite, or n. */
static int64_t ic0_factor(const factor_pattern_t *p, double *f, int64_t *pos, double tiny) {
    const int64_t *ro = p->row_offsets;
    const int32_t *ci = p->col_indices;
    for (int64_t i = 0; i < p->n; i++) {
        for (int64_t k = ro[i]; k < p->diag[i]; k++) pos[ci[k]] = k;
        double d = f[p->diag[i]];
        for (int64_t k = ro[i]; k < p->diag[i]; k++) {
            const int64_t row = ci[k];
            double s = f[k];
            for (int64_t j = ro[row]; j < p->diag[row]; j++)
                if (pos[ci[j]] >= 0 && ci[j] < row) s -= f[pos[ci[j]]] * f[j];
            f[k] = s / f[p->diag[row]];
            d -= f[k] * f[k];
        }
        for (int64_t k = ro[i]; k < p->diag[i]; k++) pos[ci[k]] = -1;
        if (!(d > tiny) || !isfinite(d)) return i;
        f[p->diag[i]] = sqrt(d);
    }
    return p->n;
}

nz_status_t nzi_factor_compute(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                               nz_matrix_t **F, double *shift, int *attempts) {
    nz_status_t status = NZ_SUCCESS;
    factor_pattern_t p;
    double *f = NULL;
    int64_t *pos = NULL;
    void *values = NULL;
    const char *name = kind == NZ_PRECOND_IC0 ? "IC(0)" : "ILU(0)";
    *F = NULL;
    *shift = 0.0;
    *attempts = 0;
    memset(&p, 0, sizeof p);
    NZI_TRY(pattern_build(ctx, A, name, &p));
    const size_t nnz = p.nnz > 0 ? (size_t)p.nnz : 1, rows = p.n > 0 ? (size_t)p.n : 1;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&f, nnz, sizeof(double), "nz_solve: factors"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&pos, rows, sizeof(int64_t), "nz_solve: factor map"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&values, nnz, nzi_value_size(A->value_type),
                              "nz_solve: factor values"));
    for (size_t i = 0; i < rows; i++) pos[i] = -1;
    nzi_shift_sequence_t seq;
    nzi_shift_start(&seq, p.amax, p.dmax);
    int64_t bad = p.n;
    do {
        const double s = seq.shift, tiny = seq.tiny;
        memcpy(f, p.a, (size_t)p.nnz * sizeof(double));
        for (int64_t i = 0; i < p.n; i++) f[p.diag[i]] += s;
        bad = kind == NZ_PRECOND_IC0 ? ic0_factor(&p, f, pos, tiny) : ilu0_factor(&p, f, pos, tiny);
        /* the factors must also be finite and keep non-zero pivots in the value type */
        for (int64_t k = 0; bad == p.n && k < p.nnz; k++) {
            nzi_set(values, A->value_type, k, f[k]);
            const double stored = nzi_get(values, A->value_type, k);
            if (!isfinite(stored)) bad = 0;
        }
        for (int64_t i = 0; bad == p.n && i < p.n; i++)
            if (nzi_get(values, A->value_type, p.diag[i]) == 0.0) bad = i;
        *attempts = seq.attempt;
        if (bad == p.n) break;
        for (int64_t i = 0; i < p.n; i++) pos[i] = -1;
    } while (nzi_shift_next(&seq));
    if (bad < p.n) {
        status = nzi_shift_breakdown(ctx, name, bad, &seq);
        goto cleanup;
    }
    *shift = seq.shift;
    NZI_CHECK(nz_matrix_create_csr(ctx, F, p.n, p.n, NZ_I64, p.row_offsets, p.col_indices,
                                   A->value_type, values));
cleanup:
    nzi_free(ctx, values);
    nzi_free(ctx, pos);
    nzi_free(ctx, f);
    pattern_free(ctx, &p);
    return status;
}

void nzi_factor_precond_destroy(nzi_factor_precond_t **p) {
    if (p == NULL || *p == NULL) return;
    nz_context_t *ctx = (*p)->ctx;
    nz_spsv_plan_destroy(&(*p)->lower);
    nz_spsv_plan_destroy(&(*p)->upper);
    nz_matrix_destroy(&(*p)->F);
    if ((*p)->work != NULL) nzi_backend_get((*p)->backend)->mem_free(ctx, (*p)->work, (size_t)-1);
    nzi_free(ctx, *p);
    *p = NULL;
}

nz_status_t nzi_factor_precond_create(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                                      int sweeps, nzi_factor_precond_t **out) {
    nz_status_t status = NZ_SUCCESS;
    nzi_factor_precond_t *p = NULL;
    *out = NULL;
    NZI_TRY(nzi_alloc_array(ctx, (void **)&p, 1, sizeof *p, "nz_solve: preconditioner"));
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->kind = kind;
    p->sweeps = sweeps;
    const unsigned flags = sweeps > 0 ? NZ_SPSV_JACOBI(sweeps) : 0;
    /* A's backend factors it (the CPU's table has no entry: the host code below) */
    const nzi_backend_t *table = nzi_backend_of(A);
    p->backend = table->id;
    if (table->factor_compute != NULL)
        NZI_CHECK(table->factor_compute(ctx, A, kind, &p->F, &p->shift, &p->attempts));
    else
        NZI_CHECK(nzi_factor_compute(ctx, A, kind, &p->F, &p->shift, &p->attempts));
    /* rows <= INT32_MAX: the size cannot overflow */
    const size_t bytes = (A->rows > 0 ? (size_t)A->rows : 1) * nzi_value_size(A->value_type);
    NZI_CHECK(table->mem_alloc(ctx, &p->work, bytes, "nz_solve: preconditioner vector"));
    if (kind == NZ_PRECOND_IC0) {
        NZI_CHECK(nz_spsv_plan_create(ctx, &p->lower, p->F, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT,
                                      flags));
        NZI_CHECK(nz_spsv_plan_create(ctx, &p->upper, p->F, NZ_OP_T, NZ_LOWER, NZ_NON_UNIT,
                                      flags));
    } else {
        NZI_CHECK(nz_spsv_plan_create(ctx, &p->lower, p->F, NZ_OP_N, NZ_LOWER, NZ_UNIT, flags));
        NZI_CHECK(nz_spsv_plan_create(ctx, &p->upper, p->F, NZ_OP_N, NZ_UPPER, NZ_NON_UNIT,
                                      flags));
    }
    *out = p;
    p = NULL;
cleanup:
    nzi_factor_precond_destroy(&p);
    return status;
}

nz_status_t nzi_factor_precond_apply(void *user, const void *r, void *z) {
    nzi_factor_precond_t *p = (nzi_factor_precond_t *)user;
    NZI_TRY(nz_spsv_execute(p->lower, 1.0, r, p->work));
    return nz_spsv_execute(p->upper, 1.0, p->work, z);
}
