/* device_arrays.c: SpMV on CSR arrays the caller already holds on the GPU (cudaMalloc'd), on
 * the caller's own CUDA stream: Nonzero borrows the arrays (no copy) and orders its work on
 * that stream, after the caller's copies and before the caller's copy back.
 *
 *   cc device_arrays.c $(pkg-config --cflags --libs nonzero) -I/usr/local/cuda/include \
 *      -L/usr/local/cuda/lib64 -lcudart -o device_arrays && ./device_arrays
 *
 * The matrix is the 1-D Laplacian tridiag(-1, 2, -1) of order n; times a vector of ones it
 * gives 1 at both ends and 0 inside, which the program checks. */
#include <nonzero.h>
#include "example_common.h"
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#define CUDA(call)                                                                              \
    do {                                                                                        \
        cudaError_t err_ = (call);                                                              \
        if (err_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));       \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

int main(void) {
    const int n = 1000000;
    const int nnz = 3 * n - 2;
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL;
    nz_spmv_plan_t *plan = NULL;

    if (nz_device_count() == 0) {
        printf("device_arrays: no CUDA device here, nothing to run\n");
        return 0;
    }
    /* The caller's CSR arrays (int32 offsets, as cuSPARSE users hold them), built on the host. */
    int *row_offsets = malloc((size_t)(n + 1) * sizeof(int));
    int *col_indices = malloc((size_t)nnz * sizeof(int));
    double *values = malloc((size_t)nnz * sizeof(double));
    double *ones = malloc((size_t)n * sizeof(double));
    double *y = malloc((size_t)n * sizeof(double));
    if (!row_offsets || !col_indices || !values || !ones || !y) return 1;
    int k = 0;
    for (int i = 0; i < n; i++) {
        row_offsets[i] = k;
        if (i > 0) { col_indices[k] = i - 1; values[k++] = -1.0; }
        col_indices[k] = i; values[k++] = 2.0;
        if (i < n - 1) { col_indices[k] = i + 1; values[k++] = -1.0; }
        ones[i] = 1.0;
    }
    row_offsets[n] = k;

    cudaStream_t stream;
    int *d_offsets, *d_cols;
    double *d_values, *d_x, *d_y;
    CUDA(cudaStreamCreate(&stream));
    CUDA(cudaMalloc((void **)&d_offsets, (size_t)(n + 1) * sizeof(int)));
    CUDA(cudaMalloc((void **)&d_cols, (size_t)nnz * sizeof(int)));
    CUDA(cudaMalloc((void **)&d_values, (size_t)nnz * sizeof(double)));
    CUDA(cudaMalloc((void **)&d_x, (size_t)n * sizeof(double)));
    CUDA(cudaMalloc((void **)&d_y, (size_t)n * sizeof(double)));
    CUDA(cudaMemcpyAsync(d_offsets, row_offsets, (size_t)(n + 1) * sizeof(int),
                         cudaMemcpyHostToDevice, stream));
    CUDA(cudaMemcpyAsync(d_cols, col_indices, (size_t)nnz * sizeof(int), cudaMemcpyHostToDevice,
                         stream));
    CUDA(cudaMemcpyAsync(d_values, values, (size_t)nnz * sizeof(double), cudaMemcpyHostToDevice,
                         stream));
    CUDA(cudaMemcpyAsync(d_x, ones, (size_t)n * sizeof(double), cudaMemcpyHostToDevice, stream));

    /* Nonzero on the caller's stream, the arrays borrowed (validated once here). */
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    CHECK(nz_context_set_device(ctx, 0, (void *)stream));
    CHECK(nz_matrix_wrap_csr_device(ctx, &A, n, n, nnz, NZ_I32, d_offsets, d_cols, NZ_F64,
                                    d_values, 1));
    CHECK(nz_spmv_plan_create(ctx, &plan, A, NZ_OP_N, NZ_ALG_AUTO, 0));
    CHECK(nz_spmv_execute(plan, 1.0, d_x, 0.0, d_y));
    CUDA(cudaMemcpyAsync(y, d_y, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost, stream));
    CUDA(cudaStreamSynchronize(stream));

    int bad = 0;
    for (int i = 0; i < n; i++) {
        double expect = (i == 0 || i == n - 1) ? 1.0 : 0.0;
        if (y[i] != expect) bad++;
    }
    nz_spmv_plan_info_t pinfo;
    CHECK(nz_spmv_plan_info(plan, &pinfo));
    printf("device_arrays: n = %d on %s with %s/%s: %d wrong entries %s\n", n,
           nz_context_device_name(ctx), nz_format_name(pinfo.format), nz_alg_name(pinfo.alg), bad,
           bad == 0 ? "ok" : "WRONG");
    nz_spmv_plan_destroy(&plan);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    cudaFree(d_offsets); cudaFree(d_cols); cudaFree(d_values); cudaFree(d_x); cudaFree(d_y);
    cudaStreamDestroy(stream);
    free(row_offsets); free(col_indices); free(values); free(ones); free(y);
    return bad == 0 ? 0 : 1;
}
