/* spmv.c: y = A x from a Matrix Market file with a plan made once and reused, on the CPU and,
 * when a GPU is present, on the GPU; the two results are compared.
 *
 *   cc spmv.c $(pkg-config --cflags --libs nonzero) -o spmv && ./spmv A.mtx
 *
 * Without an argument it multiplies a generated 2-D Laplacian. Prints the checksum sum(y) and,
 * with a GPU, the largest difference between the CPU and GPU results. */
#include <nonzero.h>
#include "example_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL;
    nz_spmv_plan_t *plan = NULL;
    nz_matrix_info_t info;

    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    if (argc > 1)
        CHECK(nz_mm_read(ctx, &A, argv[1], NZ_F64));
    else
        CHECK(nz_gen_laplace2d(ctx, &A, 300, 300, NZ_F64));
    CHECK(nz_matrix_info(ctx, &info, A));
    printf("Nonzero %s: A is %lld x %lld with %lld nonzeros\n", nz_version(),
           (long long)info.rows, (long long)info.cols, (long long)info.nnz);

    double *x = malloc((size_t)(info.cols > 0 ? info.cols : 1) * sizeof *x);
    double *y = malloc((size_t)(info.rows > 0 ? info.rows : 1) * sizeof *y);
    double *y_gpu = malloc((size_t)(info.rows > 0 ? info.rows : 1) * sizeof *y_gpu);
    if (x == NULL || y == NULL || y_gpu == NULL) return 1;
    for (int64_t j = 0; j < info.cols; j++) x[j] = 1.0 + (double)(j % 7);

    /* CPU: plan once (the planner picks the algorithm), execute as often as needed. */
    CHECK(nz_spmv_plan_create(ctx, &plan, A, NZ_OP_N, NZ_ALG_AUTO, 0));
    for (int run = 0; run < 10; run++) CHECK(nz_spmv_execute(plan, 1.0, x, 0.0, y));
    nz_spmv_plan_info_t pinfo;
    CHECK(nz_spmv_plan_info(plan, &pinfo));
    CHECK(nz_spmv_plan_destroy(&plan));
    double sum = 0;
    for (int64_t i = 0; i < info.rows; i++) sum += y[i];
    printf("cpu: %s/%s  sum(y) = %.12g\n", nz_format_name(pinfo.format), nz_alg_name(pinfo.alg),
           sum);

    /* GPU: the same matrix copied to the device; x and y live on the device. */
    if (nz_device_count() > 0 && nz_context_set_device(ctx, 0, NULL) == NZ_SUCCESS) {
        nz_matrix_t *dA = NULL;
        void *dx = NULL, *dy = NULL;
        size_t xbytes = (size_t)info.cols * sizeof(double), ybytes = (size_t)info.rows * sizeof(double);
        CHECK(nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
        CHECK(nz_device_malloc(ctx, &dx, xbytes));
        CHECK(nz_device_malloc(ctx, &dy, ybytes));
        CHECK(nz_device_copy_from_host(ctx, dx, x, xbytes));
        CHECK(nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_N, NZ_ALG_AUTO, 0));
        for (int run = 0; run < 10; run++) CHECK(nz_spmv_execute(plan, 1.0, dx, 0.0, dy));
        CHECK(nz_device_copy_to_host(ctx, y_gpu, dy, ybytes));
        CHECK(nz_spmv_plan_info(plan, &pinfo));
        double diff = 0;
        for (int64_t i = 0; i < info.rows; i++) diff = fmax(diff, fabs(y_gpu[i] - y[i]));
        printf("gpu: %s, %s/%s  max |y_gpu - y_cpu| = %.3g\n", nz_context_device_name(ctx),
               nz_format_name(pinfo.format), nz_alg_name(pinfo.alg), diff);
        CHECK(nz_spmv_plan_destroy(&plan));
        CHECK(nz_device_free(ctx, dx));
        CHECK(nz_device_free(ctx, dy));
        CHECK(nz_matrix_destroy(&dA));
    } else {
        printf("gpu: none (CPU only)\n");
    }
    free(x);
    free(y);
    free(y_gpu);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return 0;
}
