/* test_spsv.c: CPU SpSV (y = op(T)^-1 alpha x) against a dense double reference, SpMV residuals, levels, threads, errors, allocation failures. */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <string.h>

/*
 * The reference solves with the dense n x n matrix the solve is defined by (the `fill` triangle
 * of T, its diagonal or ones for NZ_UNIT, transposed for op T) by substitution in double. Every
 * execute starts from a NaN-poisoned y; matrices are diagonally dominant (unit ones with
 * off-diagonal sums below 1), so the tolerance is a few hundred epsilons of the value type
 * relative to max |y_ref|.
 */

#define TOL_FACTOR 400.0

static nz_context_t *ctx;
static int64_t solves;

static double eps_of(nz_value_type_t vt) { return vt == NZ_F32 ? FLT_EPSILON : DBL_EPSILON; }

/* The dense op(T) the solve is defined by (row-major n x n). */
static double *dense_operator(const nz_matrix_t *T, nz_operation_t op, nz_fill_mode_t fill,
                              nz_diag_type_t diag) {
    const int64_t n = T->rows;
    double *M = nzt_malloc((size_t)nzt_at_least_one(n * n) * sizeof(double));
    memset(M, 0, (size_t)nzt_at_least_one(n * n) * sizeof(double));
    const int64_t *ro = T->host.csr.row_offsets;
    const int32_t *ci = T->host.csr.col_indices;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) {
            int64_t j = ci[k];
            int keep = fill == NZ_LOWER ? j < i : j > i;
            if (j == i) keep = diag == NZ_NON_UNIT;
            if (!keep) continue;
            double v = nzi_get(T->host.csr.values, T->value_type, k);
            if (op == NZ_OP_N)
                M[i * n + j] = v;
            else
                M[j * n + i] = v;
        }
        if (diag == NZ_UNIT) M[i * n + i] = 1.0;
    }
    return M;
}

/* y_ref = op(T)^-1 alpha x by substitution on the dense operator (its nonzeros lie in one
 * triangle). */
static void reference_solve(const nz_matrix_t *T, nz_operation_t op, nz_fill_mode_t fill,
                            nz_diag_type_t diag, double alpha, const double *x, double *y) {
    const int64_t n = T->rows;
    double *M = dense_operator(T, op, fill, diag);
    const int lower = (fill == NZ_LOWER) == (op == NZ_OP_N);
    for (int64_t step = 0; step < n; step++) {
        int64_t i = lower ? step : n - 1 - step;
        double sum = alpha * x[i];
        for (int64_t j = 0; j < n; j++)
            if (j != i && M[i * n + j] != 0) sum -= M[i * n + j] * y[j];
        y[i] = sum / M[i * n + i];
    }
    free(M);
}

/* Bad entries of y against y_ref: |y - y_ref| > TOL_FACTOR eps max(1, max |y_ref|), or NaN. */
static int64_t compare_solution(const char *what, nz_value_type_t vt, const void *y,
                                const double *y_ref, int64_t n) {
    double scale = 1.0;
    for (int64_t i = 0; i < n; i++)
        if (fabs(y_ref[i]) > scale) scale = fabs(y_ref[i]);
    const double tol = TOL_FACTOR * eps_of(vt) * scale;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = nzi_get(y, vt, i);
        if (!(fabs(v - y_ref[i]) <= tol)) {
            if (bad < 3)
                fprintf(stderr, "  %s: y[%lld] = %.17g, reference %.17g (tol %.3g)\n", what,
                        (long long)i, v, y_ref[i], tol);
            bad++;
        }
    }
    return bad;
}

/* A random n x n matrix with entries in both triangles (about `per_row` off-diagonal entries a
 * row, some rows with none), a stored diagonal of magnitude 1..2 with random signs, and
 * off-diagonal magnitudes scaled so every row's and every column's off-diagonal sum stays below
 * 0.9: dominant, so every triangle (unit or not, either op) solves stably. */
static nz_matrix_t *random_matrix(nz_value_type_t vt, int64_t n, int per_row, uint64_t seed,
                                  nz_index_type_t offset_type) {
    nzi_rng_t rng;
    nzi_rng_seed(&rng, seed);
    int64_t cap = n * (2 * per_row + 1) + 1, nnz = 0;
    int32_t *ri = nzt_malloc((size_t)cap * 4), *cj = nzt_malloc((size_t)cap * 4);
    double *v = nzt_malloc((size_t)cap * 8);
    int64_t *count = nzt_malloc((size_t)nzt_at_least_one(2 * n) * 8);
    memset(count, 0, (size_t)nzt_at_least_one(2 * n) * 8);
    for (int64_t i = 0; i < n; i++) {
        int entries = nzi_rng_below(&rng, 5) == 0 ? 0 : (int)nzi_rng_below(&rng, 2 * per_row + 1);
        for (int e = 0; e < entries && n > 1; e++) {
            int64_t j = nzi_rng_below(&rng, n);
            if (j == i) continue;
            ri[nnz] = (int32_t)i;
            cj[nnz] = (int32_t)j;
            v[nnz] = 2.0 * nzi_rng_uniform(&rng) - 1.0;
            count[i]++;
            count[n + j]++;
            nnz++;
        }
    }
    int64_t most = 1;
    for (int64_t k = 0; k < 2 * n; k++)
        if (count[k] > most) most = count[k];
    for (int64_t k = 0; k < nnz; k++) v[k] *= 0.9 / (double)most;
    for (int64_t i = 0; i < n; i++) {
        ri[nnz] = (int32_t)i;
        cj[nnz] = (int32_t)i;
        v[nnz] = (1.0 + nzi_rng_uniform(&rng)) * (nzi_rng_below(&rng, 2) ? 1.0 : -1.0);
        nnz++;
    }
    /* COO -> CSR with the requested offset width: nz_matrix_create_csr sorts and sums */
    nz_matrix_t *C = NULL;
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &C, n, n, nnz, ri, cj, NZ_F64, v));
    nz_matrix_t *A = NULL;
    const int64_t *ro;
    const int32_t *ci;
    const void *vals;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &vals, C));
    int64_t stored = ro[n];
    void *offsets = nzt_malloc((size_t)(n + 1) * 8);
    for (int64_t i = 0; i <= n; i++) {
        if (offset_type == NZ_I32)
            ((int32_t *)offsets)[i] = (int32_t)ro[i];
        else
            ((int64_t *)offsets)[i] = ro[i];
    }
    void *typed = nzt_malloc((size_t)nzt_at_least_one(stored) * 8);
    nzt_from_double(typed, vt, (const double *)vals, stored);
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, n, n, offset_type, offsets, ci, vt, typed));
    nz_matrix_destroy(&C);
    free(ri);
    free(cj);
    free(v);
    free(count);
    free(offsets);
    free(typed);
    return A;
}

/* The `fill` triangle of A with its diagonal (a new matrix, the other triangle dropped). */
static nz_matrix_t *triangle_of(const nz_matrix_t *A, nz_fill_mode_t fill) {
    const int64_t n = A->rows;
    const int64_t *ro = A->host.csr.row_offsets;
    const int32_t *ci = A->host.csr.col_indices;
    int64_t nnz = 0;
    int32_t *ri = nzt_malloc((size_t)nzt_at_least_one(A->nnz) * 4);
    int32_t *cj = nzt_malloc((size_t)nzt_at_least_one(A->nnz) * 4);
    double *v = nzt_malloc((size_t)nzt_at_least_one(A->nnz) * 8);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            if (fill == NZ_LOWER ? ci[k] <= i : ci[k] >= i) {
                ri[nnz] = (int32_t)i;
                cj[nnz] = ci[k];
                v[nnz++] = nzi_get(A->host.csr.values, A->value_type, k);
            }
    nz_matrix_t *T = NULL;
    /* double values convert exactly back to the matrix's type */
    nz_matrix_t *D = NULL;
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &D, n, n, nnz, ri, cj, NZ_F64, v));
    if (A->value_type == NZ_F64) {
        T = D;
    } else {
        NZT_OK(ctx, nz_matrix_convert_values(ctx, &T, D, NZ_F32));
        nz_matrix_destroy(&D);
    }
    free(ri);
    free(cj);
    free(v);
    return T;
}

/* Solve with a plan on poisoned y and check against the reference; also in place (x == y,
 * bitwise the same) and, when `tri` is given (T's triangle alone), the same plan on it must
 * give bitwise the same y (entries of the other triangle are ignored). */
static void check_solve(const char *name, const nz_matrix_t *T, const nz_matrix_t *tri,
                        nz_operation_t op, nz_fill_mode_t fill, nz_diag_type_t diag,
                        double alpha) {
    const nz_value_type_t vt = T->value_type;
    const int64_t n = T->rows;
    const size_t vs = nzi_value_size(vt);
    char what[300];
    snprintf(what, sizeof what, "%s %s op %c %s %s alpha %g", name, nzt_vt_name(vt),
             op == NZ_OP_N ? 'N' : 'T', fill == NZ_LOWER ? "lower" : "upper",
             diag == NZ_UNIT ? "unit" : "non-unit", alpha);
    double *xd = nzt_malloc(nzt_at_least_one(n) * 8), *ref = nzt_malloc(nzt_at_least_one(n) * 8);
    void *x = nzt_malloc(nzt_at_least_one(n) * vs), *y = nzt_malloc(nzt_at_least_one(n) * vs);
    void *inplace = nzt_malloc(nzt_at_least_one(n) * vs);
    nzt_random_vector(xd, x, vt, n, nzt_seed + 7);
    /* the reference solves the rounded x the library sees */
    for (int64_t i = 0; i < n; i++) xd[i] = nzi_get(x, vt, i);
    reference_solve(T, op, fill, diag, alpha, xd, ref);

    nz_spsv_plan_t *plan = NULL;
    NZT_OK(ctx, nz_spsv_plan_create(ctx, &plan, T, op, fill, diag, 0));
    nzt_poison(y, vt, n);
    NZT_OK(ctx, nz_spsv_execute(plan, alpha, x, y));
    solves++;
    int64_t bad = compare_solution(what, vt, y, ref, n);
    NZT_CHECK(bad == 0, "%s: %lld of %lld entries wrong", what, (long long)bad, (long long)n);
    /* a second run: bitwise the same */
    void *again = nzt_malloc(nzt_at_least_one(n) * vs);
    nzt_poison(again, vt, n);
    NZT_OK(ctx, nz_spsv_execute(plan, alpha, x, again));
    NZT_CHECK(memcmp(again, y, (size_t)n * vs) == 0, "%s: second run differs", what);
    /* in place */
    memcpy(inplace, x, (size_t)n * vs);
    NZT_OK(ctx, nz_spsv_execute(plan, alpha, inplace, inplace));
    NZT_CHECK(memcmp(inplace, y, (size_t)n * vs) == 0, "%s: in-place solve differs", what);
    nz_spsv_plan_destroy(&plan);
    NZT_CHECK(plan == NULL, "%s: destroy did not clear the handle", what);
    if (tri != NULL) {
        nz_spsv_plan_t *tplan = NULL;
        NZT_OK(ctx, nz_spsv_plan_create(ctx, &tplan, tri, op, fill, diag, 0));
        nzt_poison(again, vt, n);
        NZT_OK(ctx, nz_spsv_execute(tplan, alpha, x, again));
        NZT_CHECK(memcmp(again, y, (size_t)n * vs) == 0,
                  "%s: the other triangle's entries changed the result", what);
        nz_spsv_plan_destroy(&tplan);
    }
    free(again);
    free(xd);
    free(ref);
    free(x);
    free(y);
    free(inplace);
}

/* ||op(tri) y - alpha x|| through the library's SpMV, componentwise against the substitution's
 * backward-error bound gamma |op(tri)| |y| (tri: the triangle alone, with its diagonal). */
static void check_residual(const char *name, const nz_matrix_t *tri, nz_operation_t op,
                           nz_fill_mode_t fill, double alpha) {
    const nz_value_type_t vt = tri->value_type;
    const int64_t n = tri->rows;
    const size_t vs = nzi_value_size(vt);
    double *xd = nzt_malloc(nzt_at_least_one(n) * 8), *yd = nzt_malloc(nzt_at_least_one(n) * 8);
    double *ref = nzt_malloc(nzt_at_least_one(n) * 8), *bound = nzt_malloc(nzt_at_least_one(n) * 8);
    int64_t *len = nzt_malloc(nzt_at_least_one(n) * 8);
    void *x = nzt_malloc(nzt_at_least_one(n) * vs), *y = nzt_malloc(nzt_at_least_one(n) * vs);
    void *z = nzt_malloc(nzt_at_least_one(n) * vs);
    nzt_random_vector(xd, x, vt, n, nzt_seed + 11);
    nzt_poison(y, vt, n);
    NZT_OK(ctx, nz_spsv(ctx, tri, op, fill, NZ_NON_UNIT, alpha, x, y));
    solves++;
    nz_spmv_plan_t *mv = NULL;
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &mv, tri, op, NZ_ALG_SERIAL, 0));
    nzt_poison(z, vt, n);
    NZT_OK(ctx, nz_spmv_execute(mv, 1.0, y, 0.0, z));
    nz_spmv_plan_destroy(&mv);
    /* bound = |op(tri)| |y| in double, the scale of the substitution's residual */
    for (int64_t i = 0; i < n; i++) yd[i] = nzi_get(y, vt, i);
    nzt_reference_spmv(tri, op, 1.0, yd, 0.0, NULL, ref, bound, len);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = fabs(nzi_get(z, vt, i) - alpha * nzi_get(x, vt, i));
        double tol = 4.0 * eps_of(vt) * (double)(len[i] + 2) * (bound[i] + fabs(alpha * xd[i]));
        if (!(r <= tol + 1e-300)) {
            if (bad < 3)
                fprintf(stderr, "  %s: residual row %lld = %.3g > %.3g\n", name, (long long)i, r,
                        tol);
            bad++;
        }
    }
    NZT_CHECK(bad == 0, "%s %s op %c: %lld of %lld residual rows too large", name,
              nzt_vt_name(vt), op == NZ_OP_N ? 'N' : 'T', (long long)bad, (long long)n);
    free(xd);
    free(yd);
    free(ref);
    free(bound);
    free(len);
    free(x);
    free(y);
    free(z);
}

static nz_spsv_plan_info_t plan_info(const nz_matrix_t *T, nz_operation_t op,
                                     nz_fill_mode_t fill, nz_diag_type_t diag) {
    nz_spsv_plan_t *plan = NULL;
    nz_spsv_plan_info_t info;
    NZT_OK(ctx, nz_spsv_plan_create(ctx, &plan, T, op, fill, diag, NZ_PLAN_DETERMINISTIC));
    NZT_OK(ctx, nz_spsv_plan_info(plan, &info));
    nz_spsv_plan_destroy(&plan);
    return info;
}

/* 0 x 0, 1 x 1 (hand-computed), a diagonal matrix (one level), a bidiagonal chain (n levels). */
static void test_small_shapes(void) {
    nz_matrix_t *E = NULL;
    int64_t zero = 0;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &E, 0, 0, NZ_I64, &zero, NULL, NZ_F64, NULL));
    nz_spsv_plan_info_t info = plan_info(E, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT);
    NZT_CHECK(info.levels == 0 && info.rows == 0 && info.nnz == 0, "0x0: levels %lld",
              (long long)info.levels);
    NZT_OK(ctx, nz_spsv(ctx, E, NZ_OP_T, NZ_UPPER, NZ_NON_UNIT, 1.0, NULL, NULL));
    nz_matrix_destroy(&E);

    for (int t = 0; t < 2; t++) {
        nz_value_type_t vt = t == 0 ? NZ_F32 : NZ_F64;
        int64_t ro[2] = {0, 1};
        int32_t ci[1] = {0};
        double v64[1] = {4.0};
        float v32[1] = {4.0f};
        nz_matrix_t *one = NULL;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &one, 1, 1, NZ_I64, ro, ci, vt,
                                         vt == NZ_F32 ? (void *)v32 : (void *)v64));
        char x[8], y[8];
        nzi_set(x, vt, 0, 2.0);
        for (int op = 0; op < 2; op++)
            for (int fill = 0; fill < 2; fill++) {
                nzt_poison(y, vt, 1);
                NZT_OK(ctx, nz_spsv(ctx, one, (nz_operation_t)op, (nz_fill_mode_t)fill,
                                    NZ_NON_UNIT, 1.5, x, y));
                NZT_CHECK(nzi_get(y, vt, 0) == 0.75, "1x1 %s: y = %g, want 0.75",
                          nzt_vt_name(vt), nzi_get(y, vt, 0));
                nzt_poison(y, vt, 1);
                NZT_OK(ctx, nz_spsv(ctx, one, (nz_operation_t)op, (nz_fill_mode_t)fill, NZ_UNIT,
                                    1.5, x, y));
                NZT_CHECK(nzi_get(y, vt, 0) == 3.0, "1x1 unit %s: y = %g, want 3",
                          nzt_vt_name(vt), nzi_get(y, vt, 0));
            }
        nz_matrix_destroy(&one);

        /* diagonal: one level of every row; y_i = alpha x_i / d_i */
        enum { N = 50, CHAIN = 300 };
        int64_t dro[N + 1];
        int32_t dci[N];
        double dv[N];
        for (int i = 0; i < N; i++) {
            dro[i] = i;
            dci[i] = i;
            dv[i] = (i % 2 ? -1.0 : 1.0) * (1 + i % 7);
        }
        dro[N] = N;
        char dvals[N * 8];
        nzt_from_double(dvals, vt, dv, N);
        nz_matrix_t *D = NULL;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &D, N, N, NZ_I64, dro, dci, vt, dvals));
        info = plan_info(D, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT);
        NZT_CHECK(info.levels == 1 && info.max_level_rows == N && info.nnz == 0,
                  "diagonal: %lld levels, widest %lld", (long long)info.levels,
                  (long long)info.max_level_rows);
        for (int op = 0; op < 2; op++)
            for (int fill = 0; fill < 2; fill++)
                for (int diag = 0; diag < 2; diag++)
                    check_solve("diagonal", D, NULL, (nz_operation_t)op, (nz_fill_mode_t)fill,
                                (nz_diag_type_t)diag, -2.5);
        nz_matrix_destroy(&D);

        /* lower bidiagonal chain: row i reads row i - 1, so n levels of one row */
        int64_t cro[CHAIN + 1];
        int32_t cci[2 * CHAIN];
        double cv[2 * CHAIN];
        int64_t k = 0;
        for (int i = 0; i < CHAIN; i++) {
            cro[i] = k;
            if (i > 0) {
                cci[k] = i - 1;
                cv[k++] = 0.5 + 0.4 * ((i * 37) % 11) / 11.0 * (i % 3 ? 1 : -1);
            }
            cci[k] = i;
            cv[k++] = 1.0 + (i % 5) * 0.25;
        }
        cro[CHAIN] = k;
        char *cvals = nzt_malloc((size_t)k * 8);
        nzt_from_double(cvals, vt, cv, k);
        nz_matrix_t *B = NULL;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &B, CHAIN, CHAIN, NZ_I64, cro, cci, vt, cvals));
        free(cvals);
        info = plan_info(B, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT);
        NZT_CHECK(info.levels == CHAIN && info.max_level_rows == 1 && info.nnz == CHAIN - 1,
                  "chain op N lower: %lld levels", (long long)info.levels);
        info = plan_info(B, NZ_OP_T, NZ_LOWER, NZ_UNIT);
        NZT_CHECK(info.levels == CHAIN && info.max_level_rows == 1,
                  "chain op T lower: %lld levels", (long long)info.levels);
        info = plan_info(B, NZ_OP_N, NZ_UPPER, NZ_NON_UNIT);
        NZT_CHECK(info.levels == 1 && info.nnz == 0, "chain upper (diagonal only): %lld levels",
                  (long long)info.levels);
        for (int op = 0; op < 2; op++)
            for (int diag = 0; diag < 2; diag++) {
                check_solve("chain", B, NULL, (nz_operation_t)op, NZ_LOWER, (nz_diag_type_t)diag,
                            1.0);
                check_solve("chain", B, NULL, (nz_operation_t)op, NZ_UPPER, (nz_diag_type_t)diag,
                            0.5);
            }
        nz_matrix_destroy(&B);
    }
}

/* Random matrices with both triangles stored: every (op, fill, diag, type, offset width). */
static void test_random(void) {
    const int64_t sizes[] = {2, 7, 64, 257};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int t = 0; t < 2; t++)
            for (int w = 0; w < 2; w++) {
                nz_value_type_t vt = t == 0 ? NZ_F32 : NZ_F64;
                nz_index_type_t it = w == 0 ? NZ_I32 : NZ_I64;
                uint64_t seed = nzt_seed + 1000 * s + 10 * (uint64_t)t;
                nz_matrix_t *A = random_matrix(vt, sizes[s], 4, seed, it);
                char name[64];
                snprintf(name, sizeof name, "random %lld (%s offsets)", (long long)sizes[s],
                         it == NZ_I32 ? "32-bit" : "64-bit");
                for (int fill = 0; fill < 2; fill++) {
                    nz_matrix_t *tri = triangle_of(A, (nz_fill_mode_t)fill);
                    for (int op = 0; op < 2; op++) {
                        for (int diag = 0; diag < 2; diag++)
                            check_solve(name, A, tri, (nz_operation_t)op, (nz_fill_mode_t)fill,
                                        (nz_diag_type_t)diag, diag ? 1.0 : -1.75);
                        check_residual(name, tri, (nz_operation_t)op, (nz_fill_mode_t)fill, 2.0);
                    }
                    nz_matrix_destroy(&tri);
                }
                nz_matrix_destroy(&A);
            }
    /* the same matrix from 32- and 64-bit offsets: bitwise the same solution */
    for (int t = 0; t < 2; t++) {
        nz_value_type_t vt = t == 0 ? NZ_F32 : NZ_F64;
        nz_matrix_t *A32 = random_matrix(vt, 200, 5, nzt_seed + 77, NZ_I32);
        nz_matrix_t *A64 = random_matrix(vt, 200, 5, nzt_seed + 77, NZ_I64);
        size_t vs = nzi_value_size(vt);
        void *x = nzt_malloc(200 * vs), *y1 = nzt_malloc(200 * vs), *y2 = nzt_malloc(200 * vs);
        double xd[200];
        nzt_random_vector(xd, x, vt, 200, nzt_seed + 78);
        NZT_OK(ctx, nz_spsv(ctx, A32, NZ_OP_T, NZ_LOWER, NZ_NON_UNIT, 1.0, x, y1));
        NZT_OK(ctx, nz_spsv(ctx, A64, NZ_OP_T, NZ_LOWER, NZ_NON_UNIT, 1.0, x, y2));
        NZT_CHECK(memcmp(y1, y2, 200 * vs) == 0, "%s: 32- and 64-bit offsets differ",
                  nzt_vt_name(vt));
        free(x);
        free(y1);
        free(y2);
        nz_matrix_destroy(&A32);
        nz_matrix_destroy(&A64);
    }
}

/* NZ_SPSV_JACOBI(k) against the recurrence in double on the dense operator:
 * y_0 = D^-1 alpha x, y_m = D^-1 (alpha x - E y_{m-1}); exact once k >= levels - 1. */
static void reference_jacobi(const nz_matrix_t *T, nz_operation_t op, nz_fill_mode_t fill,
                             nz_diag_type_t diag, double alpha, const double *x, int k,
                             double *y) {
    const int64_t n = T->rows;
    double *M = dense_operator(T, op, fill, diag);
    double *prev = nzt_malloc(nzt_at_least_one(n) * 8);
    for (int64_t i = 0; i < n; i++) y[i] = alpha * x[i] / M[i * n + i];
    for (int m = 1; m <= k; m++) {
        memcpy(prev, y, (size_t)n * 8);
        for (int64_t i = 0; i < n; i++) {
            double sum = alpha * x[i];
            for (int64_t j = 0; j < n; j++)
                if (j != i) sum -= M[i * n + j] * prev[j];
            y[i] = sum / M[i * n + i];
        }
    }
    free(prev);
    free(M);
}

static void test_jacobi_sweeps(void) {
    for (int t = 0; t < 2; t++) {
        const nz_value_type_t vt = t == 0 ? NZ_F32 : NZ_F64;
        const size_t vs = nzi_value_size(vt);
        const int64_t n = 150;
        nz_matrix_t *A = random_matrix(vt, n, 4, nzt_seed + 300 + (uint64_t)t, NZ_I64);
        double *xd = nzt_malloc(n * 8), *ref = nzt_malloc(n * 8), *exact = nzt_malloc(n * 8);
        void *x = nzt_malloc(n * vs), *y = nzt_malloc(n * vs), *again = nzt_malloc(n * vs);
        nzt_random_vector(xd, x, vt, n, nzt_seed + 301);
        for (int64_t i = 0; i < n; i++) xd[i] = nzi_get(x, vt, i);
        for (int op = 0; op < 2; op++)
            for (int fill = 0; fill < 2; fill++)
                for (int diag = 0; diag < 2; diag++) {
                    const nz_operation_t o = (nz_operation_t)op;
                    const nz_fill_mode_t f = (nz_fill_mode_t)fill;
                    const nz_diag_type_t d = (nz_diag_type_t)diag;
                    const int64_t levels = plan_info(A, o, f, d).levels;
                    const int ks[] = {1, 2, 5, (int)(levels - 1 > 1 ? levels - 1 : 1)};
                    for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
                        char what[200];
                        snprintf(what, sizeof what, "jacobi %d sweeps %s op %c %s %s", ks[q],
                                 nzt_vt_name(vt), op ? 'T' : 'N', fill ? "upper" : "lower",
                                 diag ? "unit" : "non-unit");
                        nz_spsv_plan_t *plan = NULL;
                        NZT_OK(ctx, nz_spsv_plan_create(ctx, &plan, A, o, f, d,
                                                        NZ_SPSV_JACOBI(ks[q])));
                        nz_spsv_plan_info_t info;
                        NZT_OK(ctx, nz_spsv_plan_info(plan, &info));
                        NZT_CHECK(info.levels == 0 && info.nnz > 0,
                                  "%s: info levels %lld nnz %lld", what, (long long)info.levels,
                                  (long long)info.nnz);
                        nzt_poison(y, vt, n);
                        NZT_OK(ctx, nz_spsv_execute(plan, -1.5, x, y));
                        solves++;
                        reference_jacobi(A, o, f, d, -1.5, xd, ks[q], ref);
                        int64_t bad = compare_solution(what, vt, y, ref, n);
                        NZT_CHECK(bad == 0, "%s: %lld of %lld entries wrong", what,
                                  (long long)bad, (long long)n);
                        if (q == 3) { /* k = levels - 1: the exact solution */
                            reference_solve(A, o, f, d, -1.5, xd, exact);
                            bad = compare_solution(what, vt, y, exact, n);
                            NZT_CHECK(bad == 0, "%s: %lld entries differ from the exact solve",
                                      what, (long long)bad);
                        } else if (q == 0) { /* one sweep on a chain is not exact */
                            reference_solve(A, o, f, d, -1.5, xd, exact);
                            double diff = 0.0;
                            for (int64_t i = 0; i < n; i++)
                                diff = fmax(diff, fabs(exact[i] - ref[i]));
                            NZT_CHECK(levels <= 2 || diff > 0.0,
                                      "%s: one sweep matched the exact solve", what);
                        }
                        memcpy(again, x, n * vs);
                        NZT_OK(ctx, nz_spsv_execute(plan, -1.5, again, again));
                        NZT_CHECK(memcmp(again, y, n * vs) == 0, "%s: in place differs", what);
                        nz_spsv_plan_destroy(&plan);
                    }
                }
        nz_matrix_destroy(&A);
        free(xd);
        free(ref);
        free(exact);
        free(x);
        free(y);
        free(again);
    }
}

/* alpha == 0: y = 0 and x is not read (NaN in x does not propagate). */
static void test_alpha_zero(void) {
    nz_matrix_t *A = random_matrix(NZ_F64, 30, 3, nzt_seed + 5, NZ_I64);
    double x[30], y[30];
    for (int i = 0; i < 30; i++) x[i] = NAN;
    nzt_poison(y, NZ_F64, 30);
    NZT_OK(ctx, nz_spsv(ctx, A, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, 0.0, x, y));
    int nonzero = 0;
    for (int i = 0; i < 30; i++) nonzero += y[i] != 0.0;
    NZT_CHECK(nonzero == 0, "alpha 0: %d entries of y are not 0", nonzero);
    nz_matrix_destroy(&A);
}

/* A large matrix whose levels are wide enough for a 2-thread team: bitwise the same as 1. */
static void test_threads(void) {
    const int64_t n = 40000;
    for (int t = 0; t < 2; t++) {
        nz_value_type_t vt = t == 0 ? NZ_F32 : NZ_F64;
        nz_matrix_t *A = random_matrix(vt, n, 3, nzt_seed + 300 + (uint64_t)t, NZ_I64);
        size_t vs = nzi_value_size(vt);
        void *x = nzt_malloc((size_t)n * vs), *y1 = nzt_malloc((size_t)n * vs);
        void *y2 = nzt_malloc((size_t)n * vs);
        double *xd = nzt_malloc((size_t)n * 8);
        nzt_random_vector(xd, x, vt, n, nzt_seed + 301);
        for (int op = 0; op < 2; op++)
            for (int fill = 0; fill < 2; fill++) {
                nz_spsv_plan_t *plan = NULL;
                nz_spsv_plan_info_t info;
                NZT_OK(ctx, nz_spsv_plan_create(ctx, &plan, A, (nz_operation_t)op,
                                                (nz_fill_mode_t)fill, NZ_NON_UNIT, 0));
                NZT_OK(ctx, nz_spsv_plan_info(plan, &info));
                /* the solve must really run on two threads: the team rule's thresholds */
                NZT_CHECK(info.nnz + n >= 32768 && n / info.levels >= 64,
                          "threads case too small for a team: %lld levels, %lld nnz",
                          (long long)info.levels, (long long)info.nnz);
                NZT_OK(ctx, nz_context_set_threads(ctx, 1));
                nzt_poison(y1, vt, n);
                NZT_OK(ctx, nz_spsv_execute(plan, -0.5, x, y1));
                NZT_OK(ctx, nz_context_set_threads(ctx, 2));
                nzt_poison(y2, vt, n);
                NZT_OK(ctx, nz_spsv_execute(plan, -0.5, x, y2));
                NZT_CHECK(memcmp(y1, y2, (size_t)n * vs) == 0,
                          "%s op %d fill %d: 1 and 2 threads differ", nzt_vt_name(vt), op, fill);
                NZT_OK(ctx, nz_context_set_threads(ctx, 0));
                nz_spsv_plan_destroy(&plan);
                solves += 2;
            }
        free(xd);
        free(x);
        free(y1);
        free(y2);
        nz_matrix_destroy(&A);
    }
}

/* bcsstk01 (tests/data, symmetric, expanded on reading): its lower triangle with the diagonal,
 * solved from the full matrix (upper entries ignored), checked against the reference and, by
 * SpMV on the triangle alone, by its residual. */
static void test_real_matrix(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/bcsstk01.mtx", nzt_data_dir());
    for (int t = 0; t < 2; t++) {
        nz_value_type_t vt = t == 0 ? NZ_F32 : NZ_F64;
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_mm_read(ctx, &A, path, vt));
        nz_matrix_t *lower = triangle_of(A, NZ_LOWER);
        nz_spsv_plan_info_t info = plan_info(A, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT);
        NZT_CHECK(info.rows == 48 && info.levels > 1 && info.levels <= 48,
                  "bcsstk01: %lld rows, %lld levels", (long long)info.rows,
                  (long long)info.levels);
        for (int op = 0; op < 2; op++) {
            check_solve("bcsstk01", A, lower, (nz_operation_t)op, NZ_LOWER, NZ_NON_UNIT, 1.0);
            check_residual("bcsstk01", lower, (nz_operation_t)op, NZ_LOWER, 3.0);
        }
        nz_matrix_destroy(&lower);
        nz_matrix_destroy(&A);
    }
}

static void expect_error(nz_status_t got, nz_status_t want, const char *needle, const char *what) {
    NZT_CHECK(got == want, "%s: status %d, want %d", what, (int)got, (int)want);
    if (needle != NULL)
        NZT_CHECK(strstr(nz_context_last_error(ctx), needle) != NULL,
                  "%s: message \"%s\" lacks \"%s\"", what, nz_context_last_error(ctx), needle);
}

static void test_errors(void) {
    nz_spsv_plan_t *plan = NULL;
    nz_matrix_t *A = random_matrix(NZ_F64, 10, 2, nzt_seed + 9, NZ_I64);
    double x[10] = {0}, y[16] = {0};

    expect_error(nz_spsv_plan_create(NULL, &plan, A, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, 0),
                 NZ_ERR_NULL_ARGUMENT, NULL, "NULL context");
    expect_error(nz_spsv_plan_create(ctx, NULL, A, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, 0),
                 NZ_ERR_NULL_ARGUMENT, "plan", "NULL plan");
    expect_error(nz_spsv_plan_create(ctx, &plan, NULL, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, 0),
                 NZ_ERR_NULL_ARGUMENT, NULL, "NULL T");
    expect_error(nz_spsv_plan_create(ctx, &plan, A, (nz_operation_t)5, NZ_LOWER, NZ_NON_UNIT, 0),
                 NZ_ERR_INVALID_ARGUMENT, "operation", "bad op");
    expect_error(nz_spsv_plan_create(ctx, &plan, A, NZ_OP_N, (nz_fill_mode_t)2, NZ_NON_UNIT, 0),
                 NZ_ERR_INVALID_ARGUMENT, "fill", "bad fill");
    expect_error(nz_spsv_plan_create(ctx, &plan, A, NZ_OP_N, NZ_LOWER, (nz_diag_type_t)7, 0),
                 NZ_ERR_INVALID_ARGUMENT, "diag", "bad diag");
    expect_error(nz_spsv_plan_create(ctx, &plan, A, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, NZ_PLAN_TUNE),
                 NZ_ERR_INVALID_ARGUMENT, "flags", "bad flags");
    NZT_CHECK(plan == NULL, "a refused plan_create wrote the handle");

    /* other formats: refused, the message says to use csr */
    nz_matrix_t *coo = NULL;
    NZT_OK(ctx, nz_matrix_convert(ctx, &coo, A, NZ_FORMAT_COO, NULL));
    expect_error(nz_spsv_plan_create(ctx, &plan, coo, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, 0),
                 NZ_ERR_UNSUPPORTED, "csr", "coo matrix");
    nz_matrix_destroy(&coo);

    /* a device matrix (the object alone; this test needs no GPU) goes to the GPU's SpSV, which
     * refuses a context bound to no device (and a build without CUDA) */
    nz_matrix_t *fake = NULL;
    NZT_OK(ctx, nzi_matrix_new(ctx, &fake, NZ_FORMAT_CSR, NZ_F64, 4, 4, 0));
    fake->location = NZ_DEVICE;
    expect_error(nz_spsv_plan_create(ctx, &plan, fake, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, 0),
                 NZ_ERR_NO_DEVICE, NULL, "device matrix");
    fake->location = NZ_HOST;
    nz_matrix_destroy(&fake);

    /* non-square */
    int64_t ro[3] = {0, 1, 2};
    int32_t ci[2] = {0, 1};
    double v[2] = {1.0, 1.0};
    nz_matrix_t *rect = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &rect, 2, 3, NZ_I64, ro, ci, NZ_F64, v));
    expect_error(nz_spsv_plan_create(ctx, &plan, rect, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, 0),
                 NZ_ERR_DIMENSION_MISMATCH, "square", "2 x 3");
    nz_matrix_destroy(&rect);

    /* a missing diagonal in row 3 and a zero one in row 2, in the lower triangle: refused with
     * NZ_NON_UNIT (the row named), accepted with NZ_UNIT */
    int64_t lro[6] = {0, 1, 3, 5, 6, 8};
    int32_t lci[8] = {0, 0, 1, 0, 2, 1, 2, 4};
    double lv[8] = {2, 1, 3, 1, 0.0, 5, 1, 4};
    nz_matrix_t *L = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &L, 5, 5, NZ_I64, lro, lci, NZ_F64, lv));
    expect_error(nz_spsv_plan_create(ctx, &plan, L, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, 0),
                 NZ_ERR_INVALID_MATRIX, "row 2 of T has a zero diagonal", "zero diagonal");
    lv[4] = 4.0;
    nz_matrix_destroy(&L);
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &L, 5, 5, NZ_I64, lro, lci, NZ_F64, lv));
    expect_error(nz_spsv_plan_create(ctx, &plan, L, NZ_OP_T, NZ_LOWER, NZ_NON_UNIT, 0),
                 NZ_ERR_INVALID_MATRIX, "row 3 of T has no diagonal", "missing diagonal");
    NZT_CHECK(plan == NULL, "a refused plan_create wrote the handle");
    NZT_OK(ctx, nz_spsv_plan_create(ctx, &plan, L, NZ_OP_N, NZ_LOWER, NZ_UNIT, 0));
    nz_spsv_plan_destroy(&plan);
    nz_matrix_destroy(&L);

    /* execute: NULL vectors, partial overlap refused */
    NZT_OK(ctx, nz_spsv_plan_create(ctx, &plan, A, NZ_OP_N, NZ_LOWER, NZ_NON_UNIT, 0));
    expect_error(nz_spsv_execute(NULL, 1.0, x, y), NZ_ERR_NULL_ARGUMENT, NULL, "NULL plan");
    expect_error(nz_spsv_execute(plan, 1.0, NULL, y), NZ_ERR_NULL_ARGUMENT, "NULL", "NULL x");
    expect_error(nz_spsv_execute(plan, 1.0, x, NULL), NZ_ERR_NULL_ARGUMENT, "NULL", "NULL y");
    expect_error(nz_spsv_execute(plan, 1.0, y, y + 3), NZ_ERR_INVALID_ARGUMENT, "overlap",
                 "overlapping x and y");
    nz_spsv_plan_info_t info;
    expect_error(nz_spsv_plan_info(plan, NULL), NZ_ERR_NULL_ARGUMENT, NULL, "NULL info");
    expect_error(nz_spsv_plan_info(NULL, &info), NZ_ERR_NULL_ARGUMENT, NULL, "NULL plan info");
    nz_spsv_plan_destroy(&plan);
    nz_matrix_destroy(&A);
    /* a destroyed plan's handle, destroy of NULL */
    NZT_CHECK(nz_spsv_plan_destroy(NULL) == NZ_SUCCESS, "destroy(NULL)");
    NZT_CHECK(nz_spsv_plan_destroy(&plan) == NZ_SUCCESS, "destroy(&NULL)");
    nz_spmv_plan_t *foreign = NULL;
    nz_matrix_t *B = random_matrix(NZ_F64, 10, 2, nzt_seed + 10, NZ_I64);
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &foreign, B, NZ_OP_N, NZ_ALG_SERIAL, 0));
    expect_error(nz_spsv_execute((nz_spsv_plan_t *)(void *)foreign, 1.0, x, y),
                 NZ_ERR_INVALID_HANDLE, NULL, "an SpMV plan as an SpSV plan");
    nz_spmv_plan_destroy(&foreign);
    nz_matrix_destroy(&B);
}

/* Fail the k-th allocation of plan_create for k = 1, 2, ... until it succeeds: every failure
 * is NZ_ERR_OUT_OF_MEMORY and leaves nothing allocated. */
static void test_allocation_failures(void) {
    nz_matrix_t *A = random_matrix(NZ_F32, 40, 3, nzt_seed + 12, NZ_I64);
    for (int mode = 0; mode < 4; mode++) {
        const int op = mode & 1;
        const unsigned flags = mode >= 2 ? NZ_SPSV_JACOBI(3) : 0;
        nz_alloc_stats_t before, after;
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
        int k;
        for (k = 1; k < 100; k++) {
            nz_spsv_plan_t *plan = NULL;
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            nz_status_t s = nz_spsv_plan_create(ctx, &plan, A, (nz_operation_t)op, NZ_UPPER,
                                                NZ_NON_UNIT, flags);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            if (s == NZ_SUCCESS) {
                nz_spsv_plan_destroy(&plan);
                break;
            }
            NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY, "allocation %d failed: status %d", k, (int)s);
            NZT_CHECK(plan == NULL, "allocation %d failed: handle written", k);
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            NZT_CHECK(after.live_blocks == before.live_blocks,
                      "allocation %d failed: %lld blocks leaked", k,
                      (long long)(after.live_blocks - before.live_blocks));
        }
        NZT_CHECK(k > 3 && k < 100, "op %d flags 0x%x: plan_create succeeded at allocation %d",
                  op, flags, k);
    }
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    NZT_OK(NULL, nz_context_create(&ctx));
    test_small_shapes();
    test_random();
    test_jacobi_sweeps();
    test_alpha_zero();
    test_threads();
    test_real_matrix();
    test_errors();
    test_allocation_failures();
    nz_alloc_stats_t stats;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &stats));
    NZT_CHECK(stats.live_blocks == 0, "%lld blocks leaked", (long long)stats.live_blocks);
    printf("test_spsv: %lld solves checked\n", (long long)solves);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spsv");
}
