/* test_spmv_transpose.c: GPU y = alpha A^T x + beta y (cached device transpose for every CSR algorithm, atomic scatter) and mixed-precision SpMV, against the CPU double reference. */
#include "spmv_job.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

/*
 * For every CSR algorithm of nz_spmv_list(NZ_BACKEND_CUDA) x {f32, f64} x {32-, 64-bit row
 * offsets} with NZ_OP_T, on the zoo, generated and real matrices: y (NaN-poisoned for beta = 0)
 * against nzt_reference_spmv(NZ_OP_T); the cached-transpose plans must match, bit for bit, the
 * same algorithm with NZ_OP_N on the host-built transpose uploaded (so the device transpose is
 * exactly the canonical A^T), and repeat bitwise; the atomic plan must say it is not
 * reproducible and be refused under NZ_PLAN_DETERMINISTIC. NZ_PLAN_MIXED (scalar, vector,
 * merge; op N and T) must be within half a float ulp of the exact result, which float sums miss
 * on long rows. NZ_TEST_QUICK=1 (compute-sanitizer) trims the matrix set.
 */

static nz_context_t *ctx;
static int quick;
static nz_alg_t algs[32];
static int num_algs;

static void check_device_matrix(const nzt_spmv_job_t *j, const nz_matrix_t *dA, const nz_matrix_t *dAT,
                                int bits) {
    char label[512];
    for (int a = 0; a < num_algs; a++) {
        nz_alg_t alg = algs[a];
        const char *an = nz_alg_name(alg);
        nz_spmv_plan_t *plan = NULL;
        nz_status_t s = nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_T, alg, 0);
        NZT_CHECK(s == NZ_SUCCESS, "%s %s off%d alg=%s op T: plan returned %d: %s", j->name,
                  nzt_vt_name(j->vt), bits, an, (int)s, nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        nz_spmv_plan_info_t pi;
        NZT_OK(ctx, nz_spmv_plan_info(plan, &pi));
        const bool atomic = alg == NZ_ALG_ATOMIC;
        if (atomic && j->nnz > 0 && j->rows > 0 && j->cols > 0)
            /* (an empty matrix runs no kernel at all: y = beta y is trivially reproducible) */
            NZT_CHECK(pi.reproducible == 0 && pi.workspace_bytes == 0,
                      "%s: atomic transpose claims reproducible %d, workspace %zu", j->name,
                      pi.reproducible, pi.workspace_bytes);
        else if (j->nnz > 0 && j->rows > 0 && j->cols > 0)
            NZT_CHECK(pi.workspace_bytes >= (size_t)j->nnz * (4 + j->vs),
                      "%s alg=%s: cached transpose workspace %zu below the copy of A", j->name, an,
                      pi.workspace_bytes);
        if (alg == NZ_ALG_SCALAR || alg == NZ_ALG_VECTOR || alg == NZ_ALG_MERGE)
            NZT_CHECK(pi.reproducible == 1, "%s alg=%s op T: should be reproducible", j->name, an);

        snprintf(label, sizeof label, "[%s %s off%d alg=%s op=T alpha=1 beta=0 (y NaN)]", j->name,
                 nzt_vt_name(j->vt), bits, an);
        int64_t bad1 = nzt_spmv_run(j, plan, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh);
        snprintf(label, sizeof label, "[%s %s off%d alg=%s op=T alpha=-2.5 beta=0.5]", j->name,
                 nzt_vt_name(j->vt), bits, an);
        nzt_spmv_run(j, plan, label, j->dx, -2.5, 0.5, j->ref_b, j->bound_b, j->yh2);
        snprintf(label, sizeof label, "[%s %s off%d alg=%s op=T repeat]", j->name,
                 nzt_vt_name(j->vt), bits, an);
        int64_t bad2 = nzt_spmv_run(j, plan, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh2);
        if (pi.reproducible && bad1 == 0 && bad2 == 0) {
            int64_t d = nzt_first_difference(j->yh, j->yh2, j->cols, j->vs);
            NZT_CHECK(d < 0, "%s: claims reproducible, repeated runs differ at %lld", label,
                      (long long)d);
        }
        NZT_OK(ctx, nz_spmv_plan_destroy(&plan));

        /* the cached transpose is exactly the host transpose: op N on it agrees bit for bit
         * (where the algorithm is reproducible: csr/tiles' shared-memory atomics are not) */
        if (!atomic && pi.reproducible && bad1 == 0 && dAT != NULL) {
            NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dAT, NZ_OP_N, alg, 0));
            NZT_OK(ctx, nz_device_memset(ctx, j->dy, 0xFF, (size_t)j->cols * j->vs));
            NZT_OK(ctx, nz_spmv_execute(plan, 1.0, j->dx, 0.0, j->dy));
            NZT_OK(ctx, nz_device_copy_to_host(ctx, j->yh2, j->dy, (size_t)j->cols * j->vs));
            int64_t d = nzt_first_difference(j->yh, j->yh2, j->cols, j->vs);
            NZT_CHECK(d < 0,
                      "[%s %s off%d alg=%s]: op T differs from op N on the host transpose "
                      "at %lld",
                      j->name, nzt_vt_name(j->vt), bits, an, (long long)d);
            NZT_OK(ctx, nz_spmv_plan_destroy(&plan));
        }
    }
    /* determinism: atomic refused, the others accepted */
    nz_spmv_plan_t *plan = NULL;
    nz_status_t s = nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_T, NZ_ALG_ATOMIC, NZ_PLAN_DETERMINISTIC);
    if (j->rows > 0 && j->cols > 0 && j->nnz > 0)
        NZT_CHECK(s == NZ_ERR_UNSUPPORTED && plan == NULL,
                  "%s: atomic op T under NZ_PLAN_DETERMINISTIC returned %d", j->name, (int)s);
    nz_spmv_plan_destroy(&plan);
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_T, NZ_ALG_MERGE, NZ_PLAN_DETERMINISTIC));
    nz_spmv_plan_destroy(&plan);
}

static void check_matrix(const char *name, const nz_matrix_t *A, const void *arg) {
    (void)arg;
    nz_matrix_t *AT = NULL;
    NZT_OK(ctx, nz_matrix_transpose(ctx, &AT, A));
    nzt_spmv_job_t j;
    nzt_spmv_job_begin(&j, ctx, name, A, NZ_OP_T, nzt_seed + 31, 0);
    for (int bits = 32; bits <= 64; bits += 32) {
        nz_matrix_t *dA = NULL, *dAT = NULL;
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, bits == 32 ? NZ_I32 : NZ_I64));
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dAT, AT, bits == 32 ? NZ_I32 : NZ_I64));
        check_device_matrix(&j, dA, dAT, bits);
        nz_matrix_destroy(&dA);
        nz_matrix_destroy(&dAT);
    }
    nzt_spmv_job_end(&j);
    nz_matrix_destroy(&AT);
}

static void check_both(const char *name, nzt_make_fn make, const void *arg) {
    nzt_both_precisions(ctx, name, make, arg, check_matrix, NULL, 40);
}

static void test_generated(void) {
    printf("generated:\n");
    const nzt_gen_case_t gens[] = {
        {"random 5000x7000 mean 9", NZT_GEN_RANDOM, {5000, 7000, 9, 0}},
        /* A^T of a rail matrix: 120000 short rows, columns of ~3000 become rows of A */
        {"rail 40 x 120000, rows ~3000", NZT_GEN_RAIL, {40, 120000, 3000, 0}},
        /* long rows of A become long columns: many atomics on the same y_j */
        {"mixed 30000, 12 long rows of 25000", NZT_GEN_MIXED, {30000, 4, 12, 25000}},
        {"rmat scale 13 x 8", NZT_GEN_RMAT, {13, 8, 0, 0}},
        {"fe3d 10", NZT_GEN_FE3D, {10, 0, 0, 0}},
    };
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++)
        check_both(gens[g].name, nzt_make_gen, &gens[g]);
}

/* A few: every 4th (every 16th in quick mode). */
static void test_real_matrices(void) {
    nzt_both_precisions_real(ctx, quick ? 16 : 4, 0, check_matrix, NULL, 40);
}

/* The zoo matrix with |a_ij|: positive data, so every partial sum is below the result and the
 * accuracy bound below holds even for merge-path, which rounds y once per tile a row spans. */
static nz_matrix_t *positive_zoo(int z) {
    nz_matrix_t *Z = NULL, *A = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &Z, z, NZ_F32, nzt_seed));
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, Z));
    const int64_t *offsets;
    const int32_t *columns;
    const void *values;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &offsets, &columns, &values, Z));
    float *v = nzt_malloc(nzt_at_least_one(info.nnz) * 4);
    for (int64_t k = 0; k < info.nnz; k++) v[k] = fabsf(((const float *)values)[k]);
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, info.rows, info.cols, NZ_I64, offsets, columns,
                                     NZ_F32, v));
    free(v);
    nz_matrix_destroy(&Z);
    return A;
}

/* Mixed precision: float storage, double sums. Accepted by scalar / vector / merge (op N and T)
 * and within a float ulp of the exact result on positive data (a float sum of a row of
 * thousands misses that by tens of ulps); the others are refused with a message naming the
 * three. */
static void test_mixed(void) {
    printf("mixed precision:\n");
    const int zs[] = {7, 9, 11, 5}; /* rows of ~3000, power-law, dense 64, one enormous row */
    for (size_t z = 0; z < sizeof zs / sizeof zs[0]; z++) {
        nz_matrix_t *A = positive_zoo(zs[z]), *dA = NULL;
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
        nz_matrix_info_t info;
        NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
        int before = nzt_failures;
        for (int op = 0; op < 2; op++) {
            int64_t xn = op == 0 ? info.cols : info.rows, yn = op == 0 ? info.rows : info.cols;
            double *xd = nzt_malloc(nzt_at_least_one(xn) * 8),
                   *y0 = nzt_malloc(nzt_at_least_one(yn) * 8);
            double *ref = nzt_malloc(nzt_at_least_one(yn) * 8),
                   *bound = nzt_malloc(nzt_at_least_one(yn) * 8);
            int64_t *len = nzt_malloc(nzt_at_least_one(yn) * 8);
            float *xf = nzt_malloc(nzt_at_least_one(xn) * 4),
                  *y0f = nzt_malloc(nzt_at_least_one(yn) * 4);
            float *y = nzt_malloc(nzt_at_least_one(yn) * 4);
            void *dx = NULL, *dy = NULL;
            nzt_random_vector(xd, NULL, NZ_F32, xn, nzt_seed + 41);
            nzt_random_vector(y0, NULL, NZ_F32, yn, nzt_seed + 42);
            for (int64_t i = 0; i < xn; i++) xf[i] = (float)(xd[i] = fabs(xd[i]));
            for (int64_t i = 0; i < yn; i++) y0f[i] = (float)(y0[i] = fabs(y0[i]));
            NZT_OK(ctx, nz_device_malloc(ctx, &dx, nzt_at_least_one(xn) * 4));
            NZT_OK(ctx, nz_device_malloc(ctx, &dy, nzt_at_least_one(yn) * 4));
            NZT_OK(ctx, nz_device_copy_from_host(ctx, dx, xf, (size_t)xn * 4));
            for (int a = 0; a < num_algs; a++) {
                nz_alg_t alg = algs[a];
                bool expected = alg == NZ_ALG_SCALAR || alg == NZ_ALG_VECTOR || alg == NZ_ALG_MERGE ||
                                alg == NZ_ALG_SPLIT;
                nz_spmv_plan_t *plan = NULL;
                nz_status_t s = nz_spmv_plan_create(ctx, &plan, dA, (nz_operation_t)op, alg,
                                                    NZ_PLAN_MIXED);
                if (!expected) {
                    NZT_CHECK(s == NZ_ERR_UNSUPPORTED &&
                                  strstr(nz_context_last_error(ctx), "scalar, vector, merge and split"),
                              "mixed alg=%s returned %d: %s", nz_alg_name(alg), (int)s,
                              nz_context_last_error(ctx));
                    nz_spmv_plan_destroy(&plan);
                    continue;
                }
                NZT_CHECK(s == NZ_SUCCESS, "mixed alg=%s op %d: %s", nz_alg_name(alg), op,
                          nz_context_last_error(ctx));
                if (s != NZ_SUCCESS) continue;
                for (int c = 0; c < 2; c++) {
                    double alpha = c == 0 ? 1.0 : 0.75, beta = c == 0 ? 0.0 : 0.5;
                    nzt_reference_spmv(A, (nz_operation_t)op, alpha, xd, beta, y0, ref, bound, len);
                    if (beta == 0.0)
                        NZT_OK(ctx, nz_device_memset(ctx, dy, 0xFF, (size_t)yn * 4));
                    else
                        NZT_OK(ctx, nz_device_copy_from_host(ctx, dy, y0f, (size_t)yn * 4));
                    NZT_OK(ctx, nz_spmv_execute(plan, alpha, dx, beta, dy));
                    NZT_OK(ctx, nz_device_copy_to_host(ctx, y, dy, (size_t)yn * 4));
                    nzt_spmv_cases++;
                    int64_t bad = 0;
                    for (int64_t i = 0; i < yn; i++) {
                        /* half an ulp, twice for a row summed across merge tiles */
                        double tol = FLT_EPSILON * fabs(ref[i]) * 1.0000001 + 1e-11 * bound[i] + 1e-40;
                        if (!(fabs((double)y[i] - ref[i]) <= tol)) {
                            if (bad < 3)
                                fprintf(stderr, "  mixed %s alg=%s op %d: y[%lld] = %.9g, exact %.17g\n",
                                        nzt_zoo_name(zs[z]), nz_alg_name(alg), op, (long long)i,
                                        (double)y[i], ref[i]);
                            bad++;
                        }
                    }
                    NZT_CHECK(bad == 0, "mixed %s alg=%s op %d alpha %g beta %g: %lld entries "
                              "beyond a float ulp (sums not in double?)", nzt_zoo_name(zs[z]),
                              nz_alg_name(alg), op, alpha, beta, (long long)bad);
                }
                nz_spmv_plan_destroy(&plan);
            }
            NZT_OK(ctx, nz_device_free(ctx, dx));
            NZT_OK(ctx, nz_device_free(ctx, dy));
            free(xd);
            free(y0);
            free(ref);
            free(bound);
            free(len);
            free(xf);
            free(y0f);
            free(y);
        }
        printf("  %-40s %s\n", nzt_zoo_name(zs[z]), nzt_failures == before ? "ok" : "FAILED");
        nz_matrix_destroy(&dA);
        nz_matrix_destroy(&A);
    }
}

/* alpha = 0: x is not read (NaN x), y = beta y exactly, for every algorithm with op T. */
static void test_alpha_zero(void) {
    nz_matrix_t *A = NULL, *dA = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 4, NZ_F64, nzt_seed)); /* 2000 x 1500 */
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
    double *y0 = nzt_malloc(1500 * 8), *y = nzt_malloc(1500 * 8);
    for (int i = 0; i < 1500; i++) y0[i] = i - 700.25;
    void *dx = NULL, *dy = NULL;
    NZT_OK(ctx, nz_device_malloc(ctx, &dx, 2000 * 8));
    NZT_OK(ctx, nz_device_malloc(ctx, &dy, 1500 * 8));
    NZT_OK(ctx, nz_device_memset(ctx, dx, 0xFF, 2000 * 8));
    for (int a = 0; a < num_algs; a++) {
        nz_spmv_plan_t *plan = NULL;
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_T, algs[a], 0));
        NZT_OK(ctx, nz_device_copy_from_host(ctx, dy, y0, 1500 * 8));
        NZT_OK(ctx, nz_spmv_execute(plan, 0.0, dx, 2.0, dy));
        NZT_OK(ctx, nz_device_copy_to_host(ctx, y, dy, 1500 * 8));
        int bad = 0;
        for (int i = 0; i < 1500; i++) bad += y[i] != 2.0 * y0[i];
        NZT_CHECK(bad == 0, "alg=%s op T alpha = 0: %d entries not 2 y", nz_alg_name(algs[a]), bad);
        nz_spmv_plan_destroy(&plan);
    }
    NZT_OK(ctx, nz_device_free(ctx, dx));
    NZT_OK(ctx, nz_device_free(ctx, dy));
    free(y0);
    free(y);
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
}

/* The cached transpose's allocations (A^T arrays, sort buffers, the inner plan's) may each fail:
 * an out-of-memory status with a message, nothing leaked; the atomic plan allocates nothing. */
static void test_alloc_failures(void) {
    nz_matrix_t *A = NULL, *dA = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 9, NZ_F32, nzt_seed)); /* power-law 4000 x 4000 */
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
    void *dx = NULL, *dy = NULL;
    NZT_OK(ctx, nz_device_malloc(ctx, &dx, 4000 * 4));
    NZT_OK(ctx, nz_device_malloc(ctx, &dy, 4000 * 4));
    NZT_OK(ctx, nz_device_memset(ctx, dx, 0, 4000 * 4));
    for (int a = 0; a < num_algs; a++) {
        const char *an = nz_alg_name(algs[a]);
        nz_alloc_stats_t s0, s1;
        nz_spmv_plan_t *plan = NULL;
        /* a first plan grows the device allocation table, so the count below is stable */
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_T, algs[a], 0));
        nz_spmv_plan_destroy(&plan);
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_T, algs[a], 0));
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
        int64_t count = s1.total_allocs - s0.total_allocs;
        NZT_CHECK(algs[a] == NZ_ALG_ATOMIC ? count == 1 : count >= 5,
                  "alg=%s op T: %lld allocations", an, (long long)count);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 1));
        NZT_CHECK(nz_spmv_execute(plan, 1.0, dx, 0.0, dy) == NZ_SUCCESS,
                  "alg=%s op T: execute with injection armed: %s", an, nz_context_last_error(ctx));
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
        NZT_CHECK(s0.total_allocs == s1.total_allocs, "alg=%s op T: execute allocated", an);
        nz_spmv_plan_destroy(&plan);
        /* ours (the transpose, scalar, vector, merge, atomic) have no fallbacks: every injected
         * failure must surface; other families may fall back */
        const bool ours = algs[a] == NZ_ALG_SCALAR || algs[a] == NZ_ALG_VECTOR ||
                          algs[a] == NZ_ALG_MERGE || algs[a] == NZ_ALG_ATOMIC;
        int64_t failures = 0;
        for (int64_t k = 1; k <= count; k++) {
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            nz_status_t s = nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_T, algs[a], 0);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            NZT_CHECK(s == NZ_SUCCESS || s == NZ_ERR_OUT_OF_MEMORY ||
                          s == NZ_ERR_DEVICE_OUT_OF_MEMORY,
                      "alg=%s op T: failing allocation %lld of %lld gave %d (%s)", an,
                      (long long)k, (long long)count, (int)s, nz_context_last_error(ctx));
            if (s != NZ_SUCCESS) {
                failures++;
                NZT_CHECK(plan == NULL && strlen(nz_context_last_error(ctx)) > 0,
                          "alg=%s op T: failure %lld left a plan or no message", an, (long long)k);
            } else {
                NZT_CHECK(nz_spmv_execute(plan, 1.0, dx, 0.0, dy) == NZ_SUCCESS,
                          "alg=%s op T: execute after injected failure %lld", an, (long long)k);
            }
            nz_spmv_plan_destroy(&plan);
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
            NZT_CHECK(s1.live_blocks == s0.live_blocks && s1.live_bytes == s0.live_bytes,
                      "alg=%s op T: failing allocation %lld leaked %lld blocks, %lld bytes", an,
                      (long long)k, (long long)(s1.live_blocks - s0.live_blocks),
                      (long long)(s1.live_bytes - s0.live_bytes));
        }
        NZT_CHECK(ours ? failures == count : failures >= 1,
                  "alg=%s op T: %lld of %lld injected failures surfaced", an, (long long)failures,
                  (long long)count);
    }
    NZT_OK(ctx, nz_device_free(ctx, dx));
    NZT_OK(ctx, nz_device_free(ctx, dy));
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    quick = nzt_env_flag("NZ_TEST_QUICK");
    ctx = nzt_gpu_context(quick ? " (quick mode)" : "");
    num_algs = nzt_spmv_algs(NZ_BACKEND_CUDA, NZ_FORMAT_CSR, algs, 32);
    bool has_atomic = false;
    for (int a = 0; a < num_algs; a++) has_atomic |= algs[a] == NZ_ALG_ATOMIC;
    NZT_CHECK(has_atomic && num_algs >= 4, "csr atomic not listed (%d csr algorithms)", num_algs);
    printf("algorithms:");
    for (int a = 0; a < num_algs; a++) printf(" %s", nz_alg_name(algs[a]));
    printf("\n");

    if (nzt_shard_take()) test_alpha_zero();
    if (nzt_shard_take()) test_alloc_failures();
    if (nzt_shard_take()) test_mixed();
    nzt_both_precisions_zoo(ctx, check_matrix, NULL, 40);
    test_generated();
    test_real_matrices();

    printf("%lld products compared\n", (long long)nzt_spmv_cases);
    nz_alloc_stats_t st;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &st));
    NZT_CHECK(st.live_blocks == 0, "%lld blocks leaked", (long long)st.live_blocks);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spmv_transpose");
}
