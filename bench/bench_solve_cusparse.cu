/* bench_solve_cusparse.cu: the solver benchmark's CUDA side: its stream and events, and cuSPARSE SpSV on Nonzero's device CSR arrays. */
#include "bench_solve_internal.h"
#include "bench.h"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nzb_solve_gpu {
    cudaStream_t stream;
    cusparseHandle_t handle;
    cudaEvent_t start, stop;
};

void nzb_solve_gpu_close(nzb_solve_gpu_t **gpu) {
    if (gpu == NULL || *gpu == NULL) return;
    nzb_solve_gpu_t *g = *gpu;
    if (g->start != NULL) cudaEventDestroy(g->start);
    if (g->stop != NULL) cudaEventDestroy(g->stop);
    if (g->handle != NULL) cusparseDestroy(g->handle);
    if (g->stream != NULL) cudaStreamDestroy(g->stream);
    free(g);
    *gpu = NULL;
}

int nzb_solve_gpu_open(nzb_solve_gpu_t **gpu, nz_context_t *ctx, char *msg, size_t msg_size) {
    nzb_solve_gpu_t *g = (nzb_solve_gpu_t *)calloc(1, sizeof *g);
    cudaError_t err = cudaSuccess;
    *gpu = NULL;
    if (g == NULL) {
        snprintf(msg, msg_size, "out of host memory");
        return 1;
    }
    if ((err = cudaSetDevice(0)) != cudaSuccess ||
        (err = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (err = cudaEventCreate(&g->start)) != cudaSuccess ||
        (err = cudaEventCreate(&g->stop)) != cudaSuccess) {
        snprintf(msg, msg_size, "%s", cudaGetErrorString(err));
        nzb_solve_gpu_close(&g);
        return 1;
    }
    if (cusparseCreate(&g->handle) != CUSPARSE_STATUS_SUCCESS ||
        cusparseSetStream(g->handle, g->stream) != CUSPARSE_STATUS_SUCCESS) {
        snprintf(msg, msg_size, "cannot create the cuSPARSE handle");
        nzb_solve_gpu_close(&g);
        return 1;
    }
    if (nz_context_set_device(ctx, 0, (void *)g->stream) != NZ_SUCCESS) {
        snprintf(msg, msg_size, "%s", nz_context_last_error(ctx));
        nzb_solve_gpu_close(&g);
        return 1;
    }
    *gpu = g;
    return 0;
}

void nzb_solve_gpu_start(nzb_solve_gpu_t *gpu) { cudaEventRecord(gpu->start, gpu->stream); }

double nzb_solve_gpu_stop(nzb_solve_gpu_t *gpu) {
    float ms = 0;
    if (cudaEventRecord(gpu->stop, gpu->stream) != cudaSuccess ||
        cudaEventSynchronize(gpu->stop) != cudaSuccess ||
        cudaEventElapsedTime(&ms, gpu->start, gpu->stop) != cudaSuccess)
        return -1;
    return 1e3 * (double)ms;
}

/* The fill mode and the stored diagonal are set as matrix attributes; cuSPARSE reads only that
 * triangle. Every status is checked; the first failure names its call in the note. */
int nzb_solve_cusparse_spsv(nzb_solve_gpu_t *gpu, nz_context_t *ctx, const nz_matrix_t *dT,
                            nz_fill_mode_t fill, const void *d_x, void *d_y, int runs,
                            double *analysis_ms, double *solve_us, char *note, size_t note_size) {
    const void *d_off = NULL, *d_val = NULL;
    const int32_t *d_col = NULL;
    nz_index_type_t offset_type;
    nz_matrix_info_t info;
    cusparseSpMatDescr_t mat = NULL;
    cusparseDnVecDescr_t vx = NULL, vy = NULL;
    cusparseSpSVDescr_t desc = NULL;
    void *buffer = NULL;
    size_t bytes = 0;
    double *times = NULL;
    const double one_d = 1.0;
    const float one_f = 1.0f;
    const char *where = "";
    int rc = 1;
    cusparseStatus_t cs = CUSPARSE_STATUS_SUCCESS;
    cudaError_t ce = cudaSuccess;
    *analysis_ms = *solve_us = 0;
    note[0] = '\0';
    if (nz_matrix_info(ctx, &info, dT) != NZ_SUCCESS ||
        nz_matrix_csr_device_arrays(ctx, &d_off, &offset_type, &d_col, &d_val, dT) != NZ_SUCCESS) {
        snprintf(note, note_size, "cuSPARSE: no device CSR arrays: %s", nz_context_last_error(ctx));
        return 1;
    }
    const cudaDataType type = info.value_type == NZ_F32 ? CUDA_R_32F : CUDA_R_64F;
    const void *alpha = info.value_type == NZ_F32 ? (const void *)&one_f : (const void *)&one_d;
    const cusparseIndexType_t off_type =
        offset_type == NZ_I32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
    cusparseFillMode_t fill_mode = fill == NZ_LOWER ? CUSPARSE_FILL_MODE_LOWER : CUSPARSE_FILL_MODE_UPPER;
    cusparseDiagType_t diag_type = CUSPARSE_DIAG_TYPE_NON_UNIT;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpSVAlg_t alg = CUSPARSE_SPSV_ALG_DEFAULT;

#define CS(call)                                                                                \
    do {                                                                                        \
        where = #call;                                                                          \
        if ((cs = (call)) != CUSPARSE_STATUS_SUCCESS) goto cleanup;                             \
    } while (0)
#define CE(call)                                                                                \
    do {                                                                                        \
        where = #call;                                                                          \
        if ((ce = (call)) != cudaSuccess) goto cleanup;                                         \
    } while (0)

    times = (double *)malloc((size_t)(runs > 0 ? runs : 1) * sizeof *times);
    if (times == NULL) {
        snprintf(note, note_size, "cuSPARSE: out of host memory");
        return 1;
    }
    CS(cusparseCreateCsr(&mat, info.rows, info.cols, info.nnz, (void *)d_off, (void *)d_col,
                         (void *)d_val, off_type, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                         type));
    CS(cusparseSpMatSetAttribute(mat, CUSPARSE_SPMAT_FILL_MODE, &fill_mode, sizeof fill_mode));
    CS(cusparseSpMatSetAttribute(mat, CUSPARSE_SPMAT_DIAG_TYPE, &diag_type, sizeof diag_type));
    CS(cusparseCreateDnVec(&vx, info.rows, (void *)d_x, type));
    CS(cusparseCreateDnVec(&vy, info.rows, d_y, type));
    CS(cusparseSpSV_createDescr(&desc));
    CE(cudaStreamSynchronize(gpu->stream));
    {
        double t0 = nzb_wtime();
        CS(cusparseSpSV_bufferSize(gpu->handle, op, alpha, mat, vx, vy, type, alg, desc, &bytes));
        CE(cudaMalloc(&buffer, bytes > 0 ? bytes : 1));
        CS(cusparseSpSV_analysis(gpu->handle, op, alpha, mat, vx, vy, type, alg, desc, buffer));
        CE(cudaStreamSynchronize(gpu->stream));
        *analysis_ms = 1e3 * (nzb_wtime() - t0);
    }
    CS(cusparseSpSV_solve(gpu->handle, op, alpha, mat, vx, vy, type, alg, desc)); /* warm-up */
    for (int k = 0; k < runs; k++) {
        nzb_solve_gpu_start(gpu);
        CS(cusparseSpSV_solve(gpu->handle, op, alpha, mat, vx, vy, type, alg, desc));
        where = "cudaEventElapsedTime";
        if ((times[k] = nzb_solve_gpu_stop(gpu)) < 0) goto cleanup;
    }
    CE(cudaGetLastError());
    *solve_us = nzb_median(times, runs);
    rc = 0;
#undef CS
#undef CE

cleanup:
    if (rc != 0)
        snprintf(note, note_size, "cuSPARSE: %.80s failed: %s", where,
                 cs != CUSPARSE_STATUS_SUCCESS ? cusparseGetErrorString(cs)
                 : ce != cudaSuccess          ? cudaGetErrorString(ce)
                                              : "CUDA event error");
    if (desc != NULL) cusparseSpSV_destroyDescr(desc);
    if (vx != NULL) cusparseDestroyDnVec(vx);
    if (vy != NULL) cusparseDestroyDnVec(vy);
    if (mat != NULL) cusparseDestroySpMat(mat);
    if (buffer != NULL) cudaFree(buffer);
    free(times);
    return rc;
}
