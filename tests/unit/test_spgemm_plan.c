/* test_spgemm_plan.c: SpGEMM plans (numeric products into a kept pattern), SpGEAM and the
 * Galerkin product on the host: against fresh products bitwise, against dense references,
 * pattern changes refused, allocation failures. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static nz_spgemm_options_t cpu_options(int threads) {
    nz_spgemm_options_t o;
    memset(&o, 0, sizeof o);
    o.alg = NZ_SPGEMM_CPU;
    o.threads = threads;
    return o;
}

/* A plan's C equals nz_spgemm's; executed with new values it equals a fresh product of them;
 * executed again with the first operands it gives the first C back. */
static void check_plan(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                       const nz_matrix_t *B, int threads) {
    nz_spgemm_options_t o = cpu_options(threads);
    nz_spgemm_plan_t *plan = NULL;
    nz_matrix_t *C = NULL, *F = NULL, *F2 = NULL;
    nz_matrix_t *A2 = nzt_new_values(ctx, A, nzt_seed + 31), *B2 = nzt_new_values(ctx, B, nzt_seed + 32);
    nz_spgemm_info_t info;
    NZT_OK(ctx, nz_spgemm_plan_create(ctx, &plan, &C, A, B, &o, &info));
    NZT_OK(ctx, nz_spgemm(ctx, &F, A, B, &o, NULL));
    NZT_CHECK(nzt_csr_identical(ctx, C, F, 1), "%s: the plan's C differs from nz_spgemm's", what);
    NZT_OK(ctx, nz_spgemm_plan_execute(plan, A2, B2, C));
    NZT_OK(ctx, nz_spgemm(ctx, &F2, A2, B2, &o, NULL));
    NZT_CHECK(nzt_csr_identical(ctx, C, F2, 1), "%s: numeric product with new values differs from a fresh one",
              what);
    NZT_OK(ctx, nz_spgemm_plan_execute(plan, A, B, C));
    NZT_CHECK(nzt_csr_identical(ctx, C, F, 1), "%s: numeric product of the first operands differs", what);
    /* one operand new, the other the plan's own */
    NZT_OK(ctx, nz_spgemm_plan_execute(plan, A2, B, C));
    nz_matrix_destroy(&F2);
    NZT_OK(ctx, nz_spgemm(ctx, &F2, A2, B, &o, NULL));
    NZT_CHECK(nzt_csr_identical(ctx, C, F2, 1), "%s: A2 B differs", what);
    nz_matrix_destroy(&F2);
    NZT_OK(ctx, nz_spgemm_plan_destroy(&plan));
    NZT_CHECK(plan == NULL, "%s: destroy leaves the handle set", what);
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&F);
    nz_matrix_destroy(&A2);
    nz_matrix_destroy(&B2);
}

static void real_plan(nz_context_t *ctx, const char *name, nz_matrix_t *M, void *arg) {
    (void)arg;
    check_plan(ctx, name, M, M, 0);
}

static void test_plans(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 9, 8, 7, NZ_F64));
    check_plan(ctx, "laplace3d 9x8x7 squared, 1 thread", A, A, 1);
    check_plan(ctx, "laplace3d 9x8x7 squared, 2 threads", A, A, 2);
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 10, 8, 0, 0, 0, nzt_seed + 1, NZ_F64));
    check_plan(ctx, "rmat 10 squared", A, A, 0);
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_random(ctx, &A, 200, 50, 1.5, nzt_seed + 2, NZ_F32));
    NZT_OK(ctx, nz_gen_random(ctx, &B, 50, 300, 4, nzt_seed + 3, NZ_F32));
    check_plan(ctx, "random 200x50 times 50x300 f32 (empty rows)", A, B, 0);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    /* B wider than the dense position maps allow: per-row hash tables */
    NZT_OK(ctx, nz_gen_random(ctx, &A, 100, 500, 3, nzt_seed + 4, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &B, 500, 9000000, 6, nzt_seed + 5, NZ_F64));
    check_plan(ctx, "random 100x500 times 500x9000000 (hash positions)", A, B, 1);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    /* real matrices of the test data: squares */
    NZT_CHECK(nzt_each_square_data_matrix(ctx, 6, 200000, real_plan, NULL) > 0,
              "no real test matrix was checked");
    nz_context_destroy(&ctx);
}

static void test_plan_errors(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *B = NULL, *C = NULL, *D = NULL, *S = NULL, *Acoo = NULL;
    nz_spgemm_plan_t *plan = NULL;
    nz_spgemm_options_t o;
    memset(&o, 0, sizeof o);
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 5, 5, 5, NZ_F64));
    NZT_OK(ctx, nz_spgemm_plan_create(ctx, &plan, &C, A, A, NULL, NULL));
    /* another matrix as C */
    NZT_OK(ctx, nz_spgemm(ctx, &D, A, A, NULL, NULL));
    NZT_CHECK(nz_spgemm_plan_execute(plan, A, A, D) == NZ_ERR_INVALID_ARGUMENT, "a foreign C");
    /* another pattern with the same shape and nonzero count: every column shifted by 40
     * (cyclically), so some products fall outside C's pattern */
    {
        S = nzt_shifted_pattern(ctx, A, 40);
        nz_status_t s = nz_spgemm_plan_execute(plan, S, A, C);
        NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT && strstr(nz_context_last_error(ctx), "pattern"),
                  "a changed pattern: status %d (%s)", (int)s, nz_context_last_error(ctx));
    }
    /* shape, format, algorithm */
    nz_matrix_destroy(&B);
    NZT_OK(ctx, nz_gen_random(ctx, &B, 125, 125, 3, nzt_seed + 8, NZ_F64));
    NZT_CHECK(nz_spgemm_plan_execute(plan, B, A, C) == NZ_ERR_INVALID_ARGUMENT,
              "another nonzero count");
    NZT_OK(ctx, nz_matrix_convert(ctx, &Acoo, A, NZ_FORMAT_COO, NULL));
    NZT_CHECK(nz_spgemm_plan_execute(plan, Acoo, A, C) == NZ_ERR_UNSUPPORTED, "a coo operand");
    {
        nz_spgemm_plan_t *p2 = NULL;
        nz_matrix_t *C2 = NULL;
        o.alg = NZ_SPGEMM_ESC;
        NZT_CHECK(nz_spgemm_plan_create(ctx, &p2, &C2, A, A, &o, NULL) == NZ_ERR_UNSUPPORTED &&
                      p2 == NULL && C2 == NULL,
                  "esc plans are refused");
        NZT_CHECK(nz_spgemm_plan_create(ctx, NULL, &C2, A, A, NULL, NULL) == NZ_ERR_NULL_ARGUMENT,
                  "NULL plan");
        NZT_CHECK(nz_spgemm_plan_execute(NULL, A, A, C) == NZ_ERR_NULL_ARGUMENT, "NULL plan");
    }
    NZT_OK(ctx, nz_spgemm_plan_destroy(&plan));
    NZT_OK(ctx, nz_spgemm_plan_destroy(&plan)); /* NULL: nothing */
    nz_matrix_destroy(&Acoo);
    nz_matrix_destroy(&S);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&D);
    nz_context_destroy(&ctx);
}

/* ---- SpGEAM ----------------------------------------------------------------------------------- */

static void dense_of(nz_context_t *ctx, const nz_matrix_t *A, double *D, int64_t rows, int64_t cols) {
    const int64_t *rp;
    const int32_t *ci;
    const void *vp;
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &rp, &ci, &vp, A));
    memset(D, 0, (size_t)(rows * cols) * sizeof(double));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t k = rp[i]; k < rp[i + 1]; k++)
            D[i * cols + ci[k]] = info.value_type == NZ_F32 ? ((const float *)vp)[k]
                                                            : ((const double *)vp)[k];
}

static void test_spgeam(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    for (int vt_i = 0; vt_i < 2; vt_i++) {
        const nz_value_type_t vt = vt_i ? NZ_F64 : NZ_F32;
        const double tol = vt == NZ_F32 ? 1e-5 : 1e-13;
        nz_matrix_t *A = NULL, *B = NULL, *C = NULL, *A2 = NULL, *F = NULL;
        const int64_t m = 70, n = 90;
        NZT_OK(ctx, nz_gen_random(ctx, &A, m, n, 5, nzt_seed + 40, vt));
        NZT_OK(ctx, nz_gen_random(ctx, &B, m, n, 3, nzt_seed + 41, vt));
        double *da = malloc(m * n * sizeof(double)), *db = malloc(m * n * sizeof(double)),
               *dc = malloc(m * n * sizeof(double));
        const double ab[4][2] = {{1.0, 1.0}, {2.5, -0.5}, {0.0, 3.0}, {-1.0, 0.0}};
        for (int t = 0; t < 4; t++) {
            const double alpha = ab[t][0], beta = ab[t][1];
            NZT_OK(ctx, nz_spgeam(ctx, &C, alpha, A, beta, B));
            nz_matrix_info_t ci, ai, bi;
            NZT_OK(ctx, nz_matrix_info(ctx, &ci, C));
            NZT_OK(ctx, nz_matrix_info(ctx, &ai, A));
            NZT_OK(ctx, nz_matrix_info(ctx, &bi, B));
            dense_of(ctx, A, da, m, n);
            dense_of(ctx, B, db, m, n);
            dense_of(ctx, C, dc, m, n);
            int64_t both = 0, bad = 0;
            for (int64_t e = 0; e < m * n; e++) {
                if (da[e] != 0 && db[e] != 0) both++;
                double want = alpha * da[e] + beta * db[e];
                if (fabs(dc[e] - want) > tol * (1 + fabs(want))) bad++;
            }
            NZT_CHECK(bad == 0, "spgeam %s alpha %g beta %g: %lld wrong entries", nzt_vt_name(vt),
                      alpha, beta, (long long)bad);
            NZT_CHECK(ci.nnz == ai.nnz + bi.nnz - both, "spgeam: C has %lld entries, the union %lld",
                      (long long)ci.nnz, (long long)(ai.nnz + bi.nnz - both));
            nz_matrix_destroy(&C);
        }
        /* A - A: the union pattern stays, every value an explicit zero */
        NZT_OK(ctx, nz_spgeam(ctx, &C, 1.0, A, -1.0, A));
        {
            nz_matrix_info_t ci, ai;
            NZT_OK(ctx, nz_matrix_info(ctx, &ci, C));
            NZT_OK(ctx, nz_matrix_info(ctx, &ai, A));
            dense_of(ctx, C, dc, m, n);
            int64_t nonzero = 0;
            for (int64_t e = 0; e < m * n; e++) nonzero += dc[e] != 0;
            NZT_CHECK(ci.nnz == ai.nnz && nonzero == 0, "A - A: nnz %lld, %lld nonzero values",
                      (long long)ci.nnz, (long long)nonzero);
        }
        nz_matrix_destroy(&C);
        /* alpha == 0 never reads A's values: A full of NaN gives beta B on the union */
        {
            const int64_t *rp;
            const int32_t *cj;
            const void *vp;
            nz_matrix_info_t ai;
            NZT_OK(ctx, nz_matrix_info(ctx, &ai, A));
            NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &rp, &cj, &vp, A));
            double *nan = malloc((size_t)ai.nnz * sizeof(double));
            for (int64_t k = 0; k < ai.nnz; k++) nan[k] = NAN;
            void *vals = malloc((size_t)ai.nnz * sizeof(double));
            nzt_from_double(vals, vt, nan, ai.nnz);
            nz_matrix_t *N = NULL;
            NZT_OK(ctx, nz_matrix_create_csr(ctx, &N, m, n, NZ_I64, rp, cj, vt, vals));
            NZT_OK(ctx, nz_spgeam(ctx, &C, 0.0, N, 2.0, B));
            dense_of(ctx, C, dc, m, n);
            dense_of(ctx, B, db, m, n);
            int64_t bad = 0;
            for (int64_t e = 0; e < m * n; e++) bad += !(dc[e] == 2.0 * db[e]);
            NZT_CHECK(bad == 0, "alpha 0 with NaN in A: %lld wrong entries", (long long)bad);
            nz_matrix_destroy(&C);
            nz_matrix_destroy(&N);
            free(nan);
            free(vals);
        }
        /* plans: new values, bitwise as a fresh sum; a changed pattern refused */
        {
            nz_spgeam_plan_t *plan = NULL;
            NZT_OK(ctx, nz_spgeam_plan_create(ctx, &plan, &C, 2.0, A, -3.0, B));
            A2 = nzt_new_values(ctx, A, nzt_seed + 42);
            NZT_OK(ctx, nz_spgeam_plan_execute(plan, 0.5, A2, 4.0, B, C));
            NZT_OK(ctx, nz_spgeam(ctx, &F, 0.5, A2, 4.0, B));
            NZT_CHECK(nzt_csr_identical(ctx, C, F, 1), "spgeam plan %s: differs from a fresh sum",
                      nzt_vt_name(vt));
            nz_status_t s = nz_spgeam_plan_execute(plan, 1.0, B, 1.0, A, C);
            NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "spgeam plan: swapped operands, status %d",
                      (int)s);
            NZT_OK(ctx, nz_spgeam_plan_destroy(&plan));
            nz_matrix_destroy(&F);
            nz_matrix_destroy(&C);
            nz_matrix_destroy(&A2);
        }
        /* shapes and types */
        {
            nz_matrix_t *W = NULL;
            NZT_OK(ctx, nz_gen_random(ctx, &W, m, n + 1, 2, nzt_seed + 43, vt));
            NZT_CHECK(nz_spgeam(ctx, &C, 1, A, 1, W) == NZ_ERR_DIMENSION_MISMATCH && C == NULL,
                      "spgeam: shapes");
            nz_matrix_destroy(&W);
        }
        free(da);
        free(db);
        free(dc);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&B);
    }
    nz_context_destroy(&ctx);
}

/* ---- the Galerkin product --------------------------------------------------------------------- */

/* An aggregation-like P (n x ceil(n / 4)): row i has column i / 4 with a value, and column
 * i / 4 + 1 where it exists (a smoothed prolongator's second entry). */
static nz_matrix_t *prolongator(nz_context_t *ctx, int64_t n, uint64_t seed) {
    const int64_t k = (n + 3) / 4;
    int64_t *rp = malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *ci = malloc((size_t)(2 * n) * sizeof(int32_t));
    double *v = malloc((size_t)(2 * n) * sizeof(double));
    int64_t e = 0;
    rp[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        ci[e] = (int32_t)(i / 4);
        v[e++] = 1.0 + (double)((seed + (uint64_t)i) % 7) / 8.0;
        if (i / 4 + 1 < k) {
            ci[e] = (int32_t)(i / 4 + 1);
            v[e++] = -0.25 + (double)((seed + 3 * (uint64_t)i) % 5) / 16.0;
        }
        rp[i + 1] = e;
    }
    nz_matrix_t *P = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &P, n, k, NZ_I64, rp, ci, NZ_F64, v));
    free(rp);
    free(ci);
    free(v);
    return P;
}

static void test_rap(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *P = NULL, *C = NULL, *R = NULL, *AP = NULL, *F = NULL, *A2 = NULL,
                *P2 = NULL;
    nz_rap_plan_t *plan = NULL;
    nz_spgemm_options_t o = cpu_options(0);
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 10, 9, 8, NZ_F64));
    P = prolongator(ctx, 720, 1);
    NZT_OK(ctx, nz_rap_plan_create(ctx, &plan, &C, A, P, &o, NULL));
    /* the reference: P^T by nz_matrix_transpose, then two nz_spgemm products (same order) */
    NZT_OK(ctx, nz_matrix_transpose(ctx, &R, P));
    NZT_OK(ctx, nz_spgemm(ctx, &AP, A, P, &o, NULL));
    NZT_OK(ctx, nz_spgemm(ctx, &F, R, AP, &o, NULL));
    NZT_CHECK(nzt_csr_identical(ctx, C, F, 1), "rap: P^T A P differs from the two products");
    nz_matrix_destroy(&R);
    nz_matrix_destroy(&AP);
    nz_matrix_destroy(&F);
    /* new values of both */
    A2 = nzt_new_values(ctx, A, nzt_seed + 50);
    P2 = nzt_new_values(ctx, P, nzt_seed + 51);
    NZT_OK(ctx, nz_rap_plan_execute(plan, A2, P2, C));
    NZT_OK(ctx, nz_rap(ctx, &F, A2, P2, &o));
    NZT_CHECK(nzt_csr_identical(ctx, C, F, 1), "rap plan with new values differs from nz_rap");
    nz_matrix_destroy(&F);
    /* a dense check of P^T A P on the new values */
    {
        const int64_t n = 720, k = 180;
        double *da = malloc(n * n * sizeof(double)), *dp = malloc(n * k * sizeof(double)),
               *dc = malloc(k * k * sizeof(double)), *ap = calloc(n * k, sizeof(double));
        dense_of(ctx, A2, da, n, n);
        dense_of(ctx, P2, dp, n, k);
        dense_of(ctx, C, dc, k, k);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                if (da[i * n + j] != 0)
                    for (int64_t c = 0; c < k; c++) ap[i * k + c] += da[i * n + j] * dp[j * k + c];
        int64_t bad = 0;
        for (int64_t r = 0; r < k; r++)
            for (int64_t c = 0; c < k; c++) {
                double want = 0;
                for (int64_t i = 0; i < n; i++) want += dp[i * k + r] * ap[i * k + c];
                if (fabs(dc[r * k + c] - want) > 1e-12 * (1 + fabs(want))) bad++;
            }
        NZT_CHECK(bad == 0, "rap: %lld entries differ from the dense P^T A P", (long long)bad);
        free(da);
        free(dp);
        free(dc);
        free(ap);
    }
    /* errors: P of the wrong height, a foreign C */
    {
        nz_matrix_t *Q = prolongator(ctx, 700, 2), *D = NULL;
        nz_rap_plan_t *p2 = NULL;
        NZT_CHECK(nz_rap_plan_create(ctx, &p2, &D, A, Q, NULL, NULL) == NZ_ERR_DIMENSION_MISMATCH &&
                      p2 == NULL && D == NULL,
                  "rap: P's rows must be A's");
        NZT_CHECK(nz_rap_plan_execute(plan, A, P, A) == NZ_ERR_INVALID_ARGUMENT, "rap: foreign C");
        nz_matrix_destroy(&Q);
    }
    NZT_OK(ctx, nz_rap_plan_destroy(&plan));
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&P);
    nz_matrix_destroy(&A2);
    nz_matrix_destroy(&P2);
    nz_context_destroy(&ctx);
}

/* ---- allocation failures ---------------------------------------------------------------------- */

typedef nz_status_t (*attempt_fn)(nz_context_t *ctx, void *arg);

static void failure_loop(nz_context_t *ctx, const char *what, attempt_fn fn, void *arg) {
    nz_alloc_stats_t before, after;
    int k, succeeded = 0;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
    for (k = 1; k < 400 && !succeeded; k++) {
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t s = fn(ctx, arg);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        if (s == NZ_SUCCESS)
            succeeded = 1;
        else
            NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY, "%s k %d: status %d", what, k, (int)s);
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
        NZT_CHECK(after.live_blocks == before.live_blocks, "%s k %d: %lld blocks leaked", what, k,
                  (long long)(after.live_blocks - before.live_blocks));
    }
    NZT_CHECK(succeeded && k > 3, "%s: succeeded after %d injected failures", what, k - 1);
}

typedef struct operands {
    nz_matrix_t *A, *B, *P;
} operands_t;

static nz_status_t attempt_plan(nz_context_t *ctx, void *arg) {
    operands_t *x = (operands_t *)arg;
    nz_spgemm_plan_t *plan = NULL;
    nz_matrix_t *C = NULL;
    nz_status_t s = nz_spgemm_plan_create(ctx, &plan, &C, x->A, x->B, NULL, NULL);
    if (s == NZ_SUCCESS) s = nz_spgemm_plan_execute(plan, x->A, x->B, C);
    nz_spgemm_plan_destroy(&plan);
    nz_matrix_destroy(&C);
    return s;
}

static nz_status_t attempt_spgeam(nz_context_t *ctx, void *arg) {
    operands_t *x = (operands_t *)arg;
    nz_spgeam_plan_t *plan = NULL;
    nz_matrix_t *C = NULL;
    nz_status_t s = nz_spgeam_plan_create(ctx, &plan, &C, 1.0, x->A, 2.0, x->B);
    if (s == NZ_SUCCESS) s = nz_spgeam_plan_execute(plan, 1.0, x->A, 2.0, x->B, C);
    nz_spgeam_plan_destroy(&plan);
    nz_matrix_destroy(&C);
    return s;
}

static nz_status_t attempt_rap(nz_context_t *ctx, void *arg) {
    operands_t *x = (operands_t *)arg;
    nz_rap_plan_t *plan = NULL;
    nz_matrix_t *C = NULL;
    nz_status_t s = nz_rap_plan_create(ctx, &plan, &C, x->A, x->P, NULL, NULL);
    if (s == NZ_SUCCESS) s = nz_rap_plan_execute(plan, x->A, x->P, C);
    nz_rap_plan_destroy(&plan);
    nz_matrix_destroy(&C);
    return s;
}

static nz_status_t attempt_transpose(nz_context_t *ctx, void *arg) {
    operands_t *x = (operands_t *)arg;
    nz_matrix_t *T = NULL;
    nz_status_t s = nz_matrix_transpose(ctx, &T, x->P);
    nz_matrix_destroy(&T);
    return s;
}

static void test_allocation_failures(void) {
    nz_context_t *ctx = NULL;
    operands_t x;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &x.A, 6, 5, 4, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &x.B, 120, 120, 3, nzt_seed + 60, NZ_F64));
    x.P = prolongator(ctx, 120, 3);
    failure_loop(ctx, "spgemm plan", attempt_plan, &x);
    failure_loop(ctx, "spgeam plan", attempt_spgeam, &x);
    failure_loop(ctx, "rap plan", attempt_rap, &x);
    failure_loop(ctx, "transpose", attempt_transpose, &x);
    nz_matrix_destroy(&x.A);
    nz_matrix_destroy(&x.B);
    nz_matrix_destroy(&x.P);
    nz_context_destroy(&ctx);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_plans();
    test_plan_errors();
    test_spgeam();
    test_rap();
    test_allocation_failures();
    return nzt_finish("test_spgemm_plan");
}
