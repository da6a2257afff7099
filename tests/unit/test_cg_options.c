/* test_cg_options.c: CPU conjugate gradients in every format and algorithm, in the planner's format, with bad arguments and failing allocations. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* Every format / algorithm the CPU backend lists gives the same iteration count as CSR (+-1). */
static void test_formats(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    void *b = NULL;
    NZT_OK(ctx, nz_gen_fe3d(ctx, &A, &b, NULL, 10, NZ_F64));
    const int64_t n = 729;
    double *x = (double *)nzt_malloc(n * sizeof(double));
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.precond = NZ_PRECOND_JACOBI;
    nz_cg_result_t ref, res;
    nzt_random_vector(x, x, NZ_F64, n, nzt_seed + 7); /* x = 0 would converge in one step */
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &ref));
    NZT_CHECK(ref.iterations > 10, "FE 10 from a random start: only %lld iterations",
              (long long)ref.iterations);
    nz_format_t f;
    nz_alg_t alg;
    for (int k = 0; nz_spmv_list(&f, &alg, NZ_BACKEND_CPU, k) == NZ_SUCCESS; k++) {
        nz_matrix_t *B = NULL;
        nz_format_options_t fo;
        memset(&fo, 0, sizeof fo);
        fo.sell_chunk = 8; /* the SIMD SELL kernel needs C = 4 or 8 */
        nz_status_t st = f == NZ_FORMAT_CSR ? NZ_SUCCESS : nz_matrix_convert(ctx, &B, A, f, &fo);
        if (st != NZ_SUCCESS) {
            printf("format %s: conversion refused (%s), skipped\n", nz_format_name(f),
                   nz_status_string(st));
            continue;
        }
        nzt_random_vector(x, x, NZ_F64, n, nzt_seed + 7);
        opt.alg = alg;
        st = nz_cg_solve(ctx, B != NULL ? B : A, b, x, &opt, &res);
        NZT_CHECK(st == NZ_SUCCESS, "%s/%s: status %d: %s", nz_format_name(f), nz_alg_name(alg),
                  (int)st, nz_context_last_error(ctx));
        NZT_CHECK(res.iterations >= ref.iterations - 1 && res.iterations <= ref.iterations + 1,
                  "%s/%s: %lld iterations, CSR %lld", nz_format_name(f), nz_alg_name(alg),
                  (long long)res.iterations, (long long)ref.iterations);
        NZT_CHECK(res.alg == alg, "%s: result names alg %s", nz_alg_name(alg), nz_alg_name(res.alg));
        nz_matrix_destroy(&B);
    }
    free(x);
    nz_free(ctx, b);
    nz_matrix_destroy(&A);
}

/* NZ_ALG_AUTO runs a host CSR matrix in the planner's format (DIA for the 5-point stencil),
 * converted inside the setup; keep_format, an explicit algorithm, a non-CSR input or a matrix
 * below the one-thread size keep the matrix as it is. All forms converge alike. */
static void test_planner_format(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *S = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 90, 90, NZ_F64)); /* 40140 nonzeros: above one thread */
    const int64_t n = 8100;
    double *b = (double *)nzt_malloc(n * sizeof(double)), *x = (double *)nzt_malloc(n * sizeof(double));
    nzt_random_vector(b, b, NZ_F64, n, nzt_seed + 17);
    nz_matrix_stats_t stats;
    nz_format_t advised = NZ_FORMAT_CSR;
    nz_alg_t advised_alg;
    NZT_OK(ctx, nz_matrix_stats(ctx, &stats, A));
    NZT_OK(ctx, nz_spmv_plan_choose(&advised, &advised_alg, NULL, 0, &stats, NZ_BACKEND_CPU,
                                    NZ_FORMAT_COUNT, 0));
    NZT_CHECK(advised == NZ_FORMAT_DIA, "laplace2d 90^2: the CPU planner advises %s, not dia",
              nz_format_name(advised));
    nz_cg_options_t opt;
    nz_cg_result_t planner, kept;
    memset(&opt, 0, sizeof opt);
    memset(x, 0, n * sizeof(double));
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &planner));
    NZT_CHECK(planner.format == advised, "auto: the solve ran %s, the planner advises %s",
              nz_format_name(planner.format), nz_format_name(advised));
    NZT_CHECK(planner.relative_residual <= 1e-8, "auto: relative residual %g",
              planner.relative_residual);
    opt.keep_format = 1;
    memset(x, 0, n * sizeof(double));
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &kept));
    NZT_CHECK(kept.format == NZ_FORMAT_CSR, "keep_format: the solve ran %s",
              nz_format_name(kept.format));
    NZT_CHECK(kept.iterations >= planner.iterations - 1 && kept.iterations <= planner.iterations + 1,
              "csr %lld iterations, %s %lld", (long long)kept.iterations,
              nz_format_name(planner.format), (long long)planner.iterations);
    opt.keep_format = 0;
    opt.alg = NZ_ALG_PARALLEL;
    memset(x, 0, n * sizeof(double));
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &kept));
    NZT_CHECK(kept.format == NZ_FORMAT_CSR && kept.alg == NZ_ALG_PARALLEL,
              "explicit alg: the solve ran %s/%s", nz_format_name(kept.format),
              nz_alg_name(kept.alg));
    opt.alg = NZ_ALG_AUTO;
    NZT_OK(ctx, nz_matrix_convert(ctx, &S, A, NZ_FORMAT_COO, NULL));
    memset(x, 0, n * sizeof(double));
    NZT_OK(ctx, nz_cg_solve(ctx, S, b, x, &opt, &kept));
    NZT_CHECK(kept.format == NZ_FORMAT_COO, "coo input: the solve ran %s",
              nz_format_name(kept.format));
    nz_matrix_t *small = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &small, 12, 12, NZ_F64)); /* 672 nonzeros */
    memset(x, 0, n * sizeof(double));
    NZT_OK(ctx, nz_cg_solve(ctx, small, b, x, &opt, &kept));
    NZT_CHECK(kept.format == NZ_FORMAT_CSR, "laplace2d 12^2: the solve ran %s",
              nz_format_name(kept.format));
    nz_matrix_destroy(&small);
    /* nothing of the conversion is left behind */
    nz_alloc_stats_t s0, s1;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, NULL));
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
    NZT_CHECK(s1.live_blocks == s0.live_blocks && s1.live_bytes == s0.live_bytes,
              "auto: the solve leaked %lld blocks", (long long)(s1.live_blocks - s0.live_blocks));
    free(b);
    free(x);
    nz_matrix_destroy(&S);
    nz_matrix_destroy(&A);
}

static void test_arguments(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *R = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 4, 4, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &R, 5, 7, 2.0, 1, NZ_F64));
    double b[16] = {1}, x[16] = {0};
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    NZT_CHECK(nz_cg_solve(NULL, A, b, x, NULL, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL ctx");
    NZT_CHECK(nz_cg_solve(ctx, NULL, b, x, NULL, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL A");
    NZT_CHECK(nz_cg_solve(ctx, A, NULL, x, NULL, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL b");
    NZT_CHECK(nz_cg_solve(ctx, A, b, NULL, NULL, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL x");
    NZT_CHECK(nz_cg_solve(ctx, R, b, x, NULL, NULL) == NZ_ERR_DIMENSION_MISMATCH, "rectangular");
    opt.rtol = -1;
    NZT_CHECK(nz_cg_solve(ctx, A, b, x, &opt, NULL) == NZ_ERR_INVALID_ARGUMENT, "rtol < 0");
    opt.rtol = NAN;
    NZT_CHECK(nz_cg_solve(ctx, A, b, x, &opt, NULL) == NZ_ERR_INVALID_ARGUMENT, "rtol NaN");
    opt.rtol = 0;
    opt.max_iterations = -1;
    NZT_CHECK(nz_cg_solve(ctx, A, b, x, &opt, NULL) == NZ_ERR_INVALID_ARGUMENT, "maxit < 0");
    opt.max_iterations = 0;
    opt.precond = (nz_precond_t)7;
    NZT_CHECK(nz_cg_solve(ctx, A, b, x, &opt, NULL) == NZ_ERR_INVALID_ARGUMENT, "precond 7");
    opt.precond = NZ_PRECOND_NONE;
    opt.alg = NZ_ALG_MERGE; /* a GPU algorithm on a host matrix */
    NZT_CHECK(nz_cg_solve(ctx, A, b, x, &opt, NULL) == NZ_ERR_UNSUPPORTED, "GPU alg on host");
    opt.alg = NZ_ALG_AUTO;
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, NULL)); /* result may be NULL */
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&R);
}

/* Fail the k-th allocation for k = 1, 2, ... until the solve succeeds; nothing may leak. */
static void test_allocation_failures(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 40, 40, NZ_F64));
    const int64_t n = 1600;
    double *b = (double *)nzt_malloc(n * sizeof(double)), *x = (double *)nzt_malloc(n * sizeof(double));
    nzt_random_vector(b, b, NZ_F64, n, nzt_seed + 5);
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.precond = NZ_PRECOND_JACOBI;
    opt.record_history = 1;
    nz_alloc_stats_t before, after;
    int k;
    for (k = 1; k < 100; k++) {
        memset(x, 0, n * sizeof(double));
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_cg_result_t res;
        nz_status_t st = nz_cg_solve(ctx, A, b, x, &opt, &res);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        if (st == NZ_SUCCESS) nz_free(ctx, res.history);
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
        NZT_CHECK(after.live_blocks == before.live_blocks && after.live_bytes == before.live_bytes,
                  "failing allocation %d: leaked %lld blocks", k,
                  (long long)(after.live_blocks - before.live_blocks));
        if (st == NZ_SUCCESS) break;
        NZT_CHECK(st == NZ_ERR_OUT_OF_MEMORY, "failing allocation %d: status %d", k, (int)st);
    }
    NZT_CHECK(k > 3 && k < 100, "the solve never succeeded or made too few allocations (%d)", k);
    free(b);
    free(x);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    test_formats(ctx);
    test_planner_format(ctx);
    test_arguments(ctx);
    test_allocation_failures(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_cg_options");
}
