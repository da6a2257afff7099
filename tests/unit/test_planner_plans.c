/* test_planner_plans.c: the planner through the public API: nz_spmv_plan_choose, generated matrices, CPU AUTO / TUNE plans end to end, allocation failures (and AUTO moving past a candidate that runs out of memory). */
#include "planner_test.h"

#include <math.h>

/* The public entry point: arguments, the reason string, the backend of this build. */
static void test_public_choose(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    nz_matrix_stats_t s;
    nz_format_t f = NZ_FORMAT_COO;
    nz_alg_t a = NZ_ALG_AUTO;
    char why[256];
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 100, 100, NZ_F64));
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
    NZT_OK(ctx, nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0));
    NZT_CHECK(f == NZ_FORMAT_CSR && a == NZ_ALG_PARALLEL, "laplace2d 100^2 on the CPU: %s/%s (%s)",
              nz_format_name(f), nz_alg_name(a), why);
    NZT_CHECK(strncmp(why, "csr on the CPU: parallel", 24) == 0, "why: %s", why);
    NZT_OK(ctx, nz_spmv_plan_choose(&f, &a, NULL, 0, &s, NZ_BACKEND_CPU, NZ_FORMAT_COUNT,
                                    NZ_PLAN_TUNE));
    NZT_CHECK(nz_cpu_spmv_supports(f, a), "advised %s/%s unsupported", nz_format_name(f),
              nz_alg_name(a));
    /* truncation keeps the string terminated */
    memset(why, 'x', sizeof why);
    NZT_OK(ctx, nz_spmv_plan_choose(&f, &a, why, 8, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0));
    NZT_CHECK(strlen(why) == 7, "truncated why has %zu characters", strlen(why));

    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, NULL, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0) ==
                  NZ_ERR_NULL_ARGUMENT, "NULL stats");
    NZT_CHECK(nz_spmv_plan_choose(NULL, &a, why, sizeof why, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0) ==
                  NZ_ERR_NULL_ARGUMENT, "NULL format");
    NZT_CHECK(nz_spmv_plan_choose(&f, NULL, why, sizeof why, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0) ==
                  NZ_ERR_NULL_ARGUMENT, "NULL alg");
    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, (nz_backend_t)7, NZ_FORMAT_CSR, 0) ==
                  NZ_ERR_INVALID_ARGUMENT, "backend 7");
    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CPU, (nz_format_t)-1, 0) ==
                  NZ_ERR_INVALID_ARGUMENT, "format -1");
    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CPU, (nz_format_t)9, 0) ==
                  NZ_ERR_INVALID_ARGUMENT, "format 9");
    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0x1000) ==
                  NZ_ERR_INVALID_ARGUMENT, "flag 0x1000");

    nz_status_t st =
        nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, 0);
#ifdef NZ_HAVE_CUDA
    NZT_CHECK(st == NZ_SUCCESS && nz_cuda_spmv_supports(f, a), "GPU choice: %d %s/%s (%s)",
              (int)st, nz_format_name(f), nz_alg_name(a), why);
#else
    NZT_CHECK(st == NZ_ERR_UNSUPPORTED && why[0] != '\0',
              "GPU choice without CUDA: %d (%s)", (int)st, why);
#endif
    nz_matrix_destroy(&A);
}

/* Statistics of generated matrices, through the whole chain. */
static void test_generated(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    nz_matrix_stats_t full, rows;
    nzi_plan_choice_t c;

    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 40, 40, 40, NZ_F64));
    NZT_OK(ctx, nz_matrix_stats(ctx, &full, A));
    NZT_OK(ctx, nzi_plan_row_stats(ctx, A, NZ_OP_N, &rows));
    NZT_CHECK(rows.rows == full.rows && rows.cols == full.cols && rows.nnz == full.nnz &&
                  rows.row_min == full.row_min && rows.row_max == full.row_max &&
                  rows.empty_rows == full.empty_rows &&
                  fabs(rows.row_mean - full.row_mean) <= 1e-12 * full.row_mean &&
                  fabs(rows.row_std - full.row_std) <= 1e-9 * (1 + full.row_std),
              "row statistics differ from nz_matrix_stats");
    c = gpu_csr(&full);
    EXPECT_ALG(c, NZ_ALG_VECTOR, "generated laplace3d 40^3");
    c = choose(&full, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, full_gpu);
    NZT_CHECK(c.count > 0 && full_gpu->spmv_supports(c.format, c.algs[0]), "advice for laplace3d: %s (%s)",
              nz_format_name(c.format), c.why);
    nz_matrix_destroy(&A);

    NZT_OK(ctx, nz_gen_mixed(ctx, &A, 200000, 6, 4, 150000, 7, NZ_F64));
    NZT_OK(ctx, nzi_plan_row_stats(ctx, A, NZ_OP_N, &rows));
    c = gpu_csr(&rows);
    NZT_CHECK(c.count > 0 && splits_long_rows(c.algs[0]), "generated mixed: %s (%s)",
              c.count ? nz_alg_name(c.algs[0]) : "-", c.why);
    nz_matrix_destroy(&A);

    NZT_OK(ctx, nz_gen_random(ctx, &A, 100000, 100000, 16.0, 3, NZ_F32));
    NZT_OK(ctx, nzi_plan_row_stats(ctx, A, NZ_OP_N, &rows));
    c = gpu_csr(&rows);
    EXPECT_ALG(c, NZ_ALG_VECTOR, "generated random mean 16");
    nz_matrix_destroy(&A);

    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 16, 16, 0, 0, 0, 5, NZ_F32));
    NZT_OK(ctx, nzi_plan_row_stats(ctx, A, NZ_OP_N, &rows));
    c = gpu_csr(&rows);
    NZT_CHECK(c.count > 0 && splits_long_rows(c.algs[0]),
              "generated rmat 16 (max %lld, mean %.1f): %s (%s)", (long long)rows.row_max,
              rows.row_mean, c.count ? nz_alg_name(c.algs[0]) : "-", c.why);
    nz_matrix_destroy(&A);
}

/* Plan A with alg / flags, check the chosen alg is supported, run y = 1.5 A x - 0.5 y against
 * the reference and return the plan's info. */
static nz_spmv_plan_info_t run_plan(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *csr,
                                    unsigned flags, const char *label) {
    nz_spmv_plan_t *plan = NULL;
    nz_spmv_plan_info_t info;
    nz_matrix_info_t mi;
    memset(&info, 0, sizeof info);
    NZT_OK(ctx, nz_matrix_info(ctx, &mi, A));
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, A, NZ_OP_N, NZ_ALG_AUTO, flags));
    NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
    NZT_CHECK(info.alg != NZ_ALG_AUTO && nz_cpu_spmv_supports(mi.format, info.alg),
              "%s: plan reports %s", label, nz_alg_name(info.alg));
    NZT_CHECK(info.plan_seconds >= 0 && info.reproducible == 1, "%s: info", label);
    NZT_CHECK(info.vector_warps == 1, "%s: a CPU plan reports %d warps per row", label,
              info.vector_warps);
    size_t vs = mi.value_type == NZ_F32 ? 4 : 8;
    int64_t rows = mi.rows, cols = mi.cols;
    double *xd = nzt_malloc((size_t)(cols > 0 ? cols : 1) * 8);
    double *y0d = nzt_malloc((size_t)(rows > 0 ? rows : 1) * 8);
    void *x = nzt_malloc((size_t)(cols > 0 ? cols : 1) * vs);
    void *y = nzt_malloc((size_t)(rows > 0 ? rows : 1) * vs);
    void *y2 = nzt_malloc((size_t)(rows > 0 ? rows : 1) * vs);
    double *ref = nzt_malloc((size_t)(rows > 0 ? rows : 1) * 8);
    double *bound = nzt_malloc((size_t)(rows > 0 ? rows : 1) * 8);
    int64_t *len = nzt_malloc((size_t)(rows > 0 ? rows : 1) * 8);
    nzt_random_vector(xd, x, mi.value_type, cols, nzt_seed + 1);
    nzt_random_vector(y0d, y, mi.value_type, rows, nzt_seed + 2);
    memcpy(y2, y, (size_t)rows * vs);
    nzt_reference_spmv(csr, NZ_OP_N, 1.5, xd, -0.5, y0d, ref, bound, len);
    NZT_OK(ctx, nz_spmv_execute(plan, 1.5, x, -0.5, y));
    NZT_CHECK(nzt_compare(label, mi.value_type, y, ref, bound, len, rows, 4.0) == 0, "%s: wrong y",
              label);
    if (flags & NZ_PLAN_DETERMINISTIC) {
        NZT_OK(ctx, nz_spmv_execute(plan, 1.5, x, -0.5, y2));
        NZT_CHECK(memcmp(y, y2, (size_t)rows * vs) == 0, "%s: repeated results differ", label);
    }
    nz_spmv_plan_destroy(&plan);
    free(xd);
    free(y0d);
    free(x);
    free(y);
    free(y2);
    free(ref);
    free(bound);
    free(len);
    return info;
}

/* AUTO and TUNE plans on the CPU end to end. */
static void test_cpu_plans(nz_context_t *ctx) {
    nz_matrix_t *small = NULL, *big = NULL, *S = NULL, *C = NULL;
    nz_format_options_t o;
    nz_spmv_plan_info_t info;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &small, 10, 10, NZ_F64));
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &big, 150, 150, NZ_F32));

    info = run_plan(ctx, small, small, 0, "laplace2d 10^2 auto");
    NZT_CHECK(info.alg == NZ_ALG_SERIAL, "tiny CPU plan: %s", nz_alg_name(info.alg));
    info = run_plan(ctx, big, big, 0, "laplace2d 150^2 auto");
    NZT_CHECK(info.alg == NZ_ALG_PARALLEL, "CPU plan: %s", nz_alg_name(info.alg));
    info = run_plan(ctx, big, big, NZ_PLAN_DETERMINISTIC, "laplace2d 150^2 deterministic");

    /* SELL: SIMD where the chunk allows it, else the planner falls back to parallel */
    memset(&o, 0, sizeof o);
    o.sell_chunk = 8;
    NZT_OK(ctx, nz_matrix_convert(ctx, &S, big, NZ_FORMAT_SELL, &o));
    info = run_plan(ctx, S, big, 0, "sell C=8 auto");
    NZT_CHECK(info.alg == NZ_ALG_SIMD, "SELL C=8: %s", nz_alg_name(info.alg));
    nz_matrix_destroy(&S);
    NZT_OK(ctx, nz_matrix_convert(ctx, &S, big, NZ_FORMAT_SELL, NULL));
    info = run_plan(ctx, S, big, 0, "sell C=32 auto");
    NZT_CHECK(info.alg == NZ_ALG_PARALLEL, "SELL C=32: %s", nz_alg_name(info.alg));
    NZT_CHECK(nz_context_last_error(ctx)[0] == '\0', "a successful fallback leaves an error: %s",
              nz_context_last_error(ctx));
    info = run_plan(ctx, S, big, NZ_PLAN_TUNE, "sell C=32 tune");
    nz_matrix_destroy(&S);
    NZT_OK(ctx, nz_matrix_convert(ctx, &C, big, NZ_FORMAT_CSC, NULL));
    info = run_plan(ctx, C, big, 0, "csc auto");
    NZT_CHECK(info.alg == NZ_ALG_SERIAL, "CSC: %s", nz_alg_name(info.alg));
    nz_matrix_destroy(&C);

    /* TUNE: a candidate of the list, and the tuning time counts as plan time */
    info = run_plan(ctx, big, big, NZ_PLAN_TUNE | NZ_PLAN_DETERMINISTIC, "laplace2d 150^2 tune");
    NZT_CHECK(info.alg == NZ_ALG_SERIAL || info.alg == NZ_ALG_PARALLEL, "tuned: %s",
              nz_alg_name(info.alg));
    {
        nz_spmv_plan_t *plan = NULL;
        int64_t n = 150 * 150;
        float *x = nzt_malloc((size_t)n * 4), *y = nzt_malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) x[i] = 1.0f;
        /* One thread: on a loaded machine an OpenMP team can stall at every join after the
         * planning (a scheduler time slice), which made `fastest` larger than the whole tuning;
         * the check is about what plan_seconds counts, not about threads. */
        NZT_OK(ctx, nz_context_set_threads(ctx, 1));
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, big, NZ_OP_N, NZ_ALG_AUTO, NZ_PLAN_TUNE));
        NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
        double fastest = 1e30;
        for (int r = 0; r < 5; r++) {
            double t0 = nzi_wtime();
            NZT_OK(ctx, nz_spmv_execute(plan, 1.0, x, 0.0, y));
            double t = nzi_wtime() - t0;
            if (t < fastest) fastest = t;
        }
        /* the winner alone ran tune_runs_cpu + 1 times during planning */
        NZT_CHECK(info.plan_seconds >= 0.5 * (T.tune_runs_cpu + 1) * fastest,
                  "plan_seconds %.3g s does not include tuning (one product %.3g s)",
                  info.plan_seconds, fastest);
        nz_spmv_plan_destroy(&plan);
        NZT_OK(ctx, nz_context_set_threads(ctx, 0));
        free(x);
        free(y);
    }

    /* op = T and empty shapes through AUTO and TUNE */
    {
        nz_spmv_plan_t *plan = NULL;
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, big, NZ_OP_T, NZ_ALG_AUTO, NZ_PLAN_TUNE));
        nz_spmv_plan_destroy(&plan);
        for (int k = 0; k < nzt_zoo_count(); k++) {
            nz_matrix_t *Z = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &Z, k, NZ_F64, nzt_seed));
            run_plan(ctx, Z, Z, 0, nzt_zoo_name(k));
            run_plan(ctx, Z, Z, NZ_PLAN_TUNE | NZ_PLAN_DETERMINISTIC, nzt_zoo_name(k));
            nz_matrix_destroy(&Z);
        }
    }
    nz_matrix_destroy(&small);
    nz_matrix_destroy(&big);
}

/* Fail the k-th allocation for k = 1, 2, ... until AUTO | TUNE succeeds; nothing may leak. */
static void test_allocation_failures(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *S = NULL;
    nz_format_options_t o;
    memset(&o, 0, sizeof o);
    o.sell_chunk = 8;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 30, 30, NZ_F64));
    NZT_OK(ctx, nz_matrix_convert(ctx, &S, A, NZ_FORMAT_SELL, &o));
    const nz_matrix_t *mats[] = {A, S};
    for (int m = 0; m < 2; m++)
        for (int op = 0; op < 2; op++) {
            int k;
            for (k = 1; k < 50; k++) {
                nz_alloc_stats_t before, after;
                nz_spmv_plan_t *plan = NULL;
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
                nz_status_t st = nz_spmv_plan_create(ctx, &plan, mats[m], (nz_operation_t)op,
                                                     NZ_ALG_AUTO, NZ_PLAN_TUNE);
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
                if (st == NZ_SUCCESS) {
                    nz_spmv_plan_destroy(&plan);
                    break;
                }
                NZT_CHECK(st == NZ_ERR_OUT_OF_MEMORY, "k = %d: status %d (%s)", k, (int)st,
                          nz_context_last_error(ctx));
                NZT_CHECK(plan == NULL, "k = %d: a plan despite the failure", k);
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
                NZT_CHECK(after.live_blocks == before.live_blocks &&
                              after.live_bytes == before.live_bytes,
                          "k = %d: leaked %lld blocks", k,
                          (long long)(after.live_blocks - before.live_blocks));
            }
            NZT_CHECK(k > 1 && k < 50, "matrix %d op %d: succeeded at k = %d", m, op, k);
        }
    nz_matrix_destroy(&S);
    nz_matrix_destroy(&A);
}

/* A candidate that runs out of memory gives way to the next (AUTO and AUTO | TUNE): with the
 * k-th allocation failing, op T on the CPU (each candidate builds A^T), some k must fail inside
 * the first candidate (parallel) and still give a plan, made by a later one; every k gives a
 * plan or NZ_ERR_OUT_OF_MEMORY, and nothing leaks. The named algorithm has no fallback: the same
 * failure inside it is the plan's status. */
static void test_out_of_memory_fallback(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 90, 90, NZ_F64)); /* 40140 nonzeros: cpu-parallel */
    for (int tune = 0; tune < 2; tune++) {
        const unsigned flags = tune ? NZ_PLAN_TUNE : 0;
        int fell_back = 0, k;
        for (k = 1; k < 60; k++) {
            nz_alloc_stats_t before, after;
            nz_spmv_plan_t *plan = NULL;
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            nz_status_t st = nz_spmv_plan_create(ctx, &plan, A, NZ_OP_T, NZ_ALG_AUTO, flags);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            const int fired = after.failed_allocs > before.failed_allocs;
            if (st == NZ_SUCCESS) {
                nz_spmv_plan_info_t info;
                NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
                if (fired && info.alg != NZ_ALG_PARALLEL) fell_back = 1;
                nz_spmv_plan_destroy(&plan);
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
                if (!fired) break; /* past the last allocation */
            } else {
                NZT_CHECK(st == NZ_ERR_OUT_OF_MEMORY && fired, "%s k = %d: status %d (%s)",
                          tune ? "tune" : "auto", k, (int)st, nz_context_last_error(ctx));
                NZT_CHECK(plan == NULL, "k = %d: a plan despite the failure", k);
            }
            NZT_CHECK(after.live_blocks == before.live_blocks &&
                          after.live_bytes == before.live_bytes,
                      "%s k = %d: %lld blocks leaked", tune ? "tune" : "auto", k,
                      (long long)(after.live_blocks - before.live_blocks));
        }
        NZT_CHECK(k < 60, "%s: still failing at k = %d", tune ? "tune" : "auto", k);
        NZT_CHECK(fell_back, "%s: no failure inside the first candidate led to a later one",
                  tune ? "tune" : "auto");
    }
    /* the named algorithm: some k fails with out-of-memory */
    int failed = 0;
    for (int k = 1; k < 60 && !failed; k++) {
        nz_spmv_plan_t *plan = NULL;
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t st = nz_spmv_plan_create(ctx, &plan, A, NZ_OP_T, NZ_ALG_PARALLEL, 0);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        if (st == NZ_SUCCESS) nz_spmv_plan_destroy(&plan);
        else failed = st == NZ_ERR_OUT_OF_MEMORY;
    }
    NZT_CHECK(failed, "parallel op T never reported the injected failure");
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nz_context_t *ctx = NULL;
    nzt_init(argc, argv);
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    test_public_choose(ctx);
    test_generated(ctx);
    test_out_of_memory_fallback(ctx);
    test_cpu_plans(ctx);
    test_allocation_failures(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_planner_plans");
}
