/* bench_cuda.cu: the GPU side of nz bench: device setup, copy bandwidth, timing and checking one launch. */
#include "bench_cuda_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sample shorter than this launches the kernel several times between its pair of events, so
 * the events' resolution (about 0.5 us) and launch jitter do not dominate tiny matrices. Larger
 * kernels get one launch per pair of events. */
#define GPU_MIN_SAMPLE_SECONDS 20e-6
#define GPU_MAX_BATCH 256

/* ---- setup ----------------------------------------------------------------------------------- */

int nzb_gpu_open(nzb_gpu_t **gpu, nz_context_t *ctx, char *msg, size_t msg_size) {
    nzb_gpu_t *g = (nzb_gpu_t *)calloc(1, sizeof *g);
    cudaError_t err;
    cusparseStatus_t cs;
    int driver = 0, runtime = 0, l2 = 0, cusparse_version = 0;
    *gpu = NULL;
    if (g == NULL) {
        snprintf(msg, msg_size, "out of host memory");
        return 1;
    }
    g->ctx = ctx;
    if ((err = cudaSetDevice(0)) != cudaSuccess ||
        (err = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        snprintf(msg, msg_size, "%s", cudaGetErrorString(err));
        goto fail;
    }
    if ((cs = cusparseCreate(&g->handle)) != CUSPARSE_STATUS_SUCCESS ||
        (cs = cusparseSetStream(g->handle, g->stream)) != CUSPARSE_STATUS_SUCCESS) {
        snprintf(msg, msg_size, "cuSPARSE: %s", cusparseGetErrorString(cs));
        goto fail;
    }
    /* Last, so a failure above leaves the context unbound for the CPU fallback. */
    if (nz_context_set_device(ctx, 0, (void *)g->stream) != NZ_SUCCESS) {
        snprintf(msg, msg_size, "nz_context_set_device: %s", nz_context_last_error(ctx));
        goto fail;
    }
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    cusparseGetVersion(g->handle, &cusparse_version);
    g->l2_bytes = (size_t)l2;
    snprintf(g->description, sizeof g->description,
             "%s; driver %d.%d, runtime %d.%d, cuSPARSE %d.%d.%d", nz_context_device_name(ctx),
             driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10,
             cusparse_version / 1000, cusparse_version % 1000 / 100, cusparse_version % 100);
    *gpu = g;
    return 0;
fail:
    nzb_gpu_close(&g);
    (void)cudaGetLastError();
    return 1;
}

/* Call after the context is destroyed (it synchronises the stream it was bound to). */
void nzb_gpu_close(nzb_gpu_t **gpu) {
    nzb_gpu_t *g = *gpu;
    if (g == NULL) return;
    for (int i = 0; i < g->num_events; i++) {
        cudaEventDestroy(g->starts[i]);
        cudaEventDestroy(g->stops[i]);
    }
    free(g->starts);
    free(g->stops);
    if (g->handle != NULL) cusparseDestroy(g->handle);
    if (g->stream != NULL) cudaStreamDestroy(g->stream);
    free(g);
    *gpu = NULL;
}

const char *nzb_gpu_description(const nzb_gpu_t *gpu) { return gpu->description; }
size_t nzb_gpu_l2_bytes(const nzb_gpu_t *gpu) { return gpu->l2_bytes; }

/* At least n pairs of events. */
static int ensure_events(nzb_gpu_t *g, int n) {
    if (n <= g->num_events) return 0;
    cudaEvent_t *starts = (cudaEvent_t *)realloc(g->starts, (size_t)n * sizeof *starts);
    if (starts == NULL) return 1;
    g->starts = starts;
    cudaEvent_t *stops = (cudaEvent_t *)realloc(g->stops, (size_t)n * sizeof *stops);
    if (stops == NULL) return 1;
    g->stops = stops;
    while (g->num_events < n) {
        if (cudaEventCreate(&g->starts[g->num_events]) != cudaSuccess) return 1;
        if (cudaEventCreate(&g->stops[g->num_events]) != cudaSuccess) {
            cudaEventDestroy(g->starts[g->num_events]);
            return 1;
        }
        g->num_events++;
    }
    return 0;
}

/* Device-to-device cudaMemcpy of the largest power-of-two buffer up to 1 GiB for which two
 * buffers take at most half the free memory; bytes counted as read + written = 2 x size;
 * median over reps after one warm-up copy. */
double nzb_gpu_copy_bandwidth(nzb_gpu_t *g, int reps, size_t *buffer_bytes) {
    size_t free_bytes = 0, total_bytes = 0, size = (size_t)1 << 30;
    void *src = NULL, *dst = NULL;
    double *samples = (double *)malloc((size_t)reps * sizeof(double));
    double gbs = 0;
    *buffer_bytes = 0;
    if (samples == NULL || ensure_events(g, reps) != 0) goto cleanup;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) goto cleanup;
    while (size > ((size_t)16 << 20) && 4 * size > free_bytes) size /= 2;
    if (cudaMalloc(&src, size) != cudaSuccess || cudaMalloc(&dst, size) != cudaSuccess) goto cleanup;
    if (cudaMemsetAsync(src, 1, size, g->stream) != cudaSuccess ||
        cudaMemsetAsync(dst, 0, size, g->stream) != cudaSuccess ||
        cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, g->stream) != cudaSuccess)
        goto cleanup;
    for (int r = 0; r < reps; r++) {
        cudaEventRecord(g->starts[r], g->stream);
        cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, g->stream);
        cudaEventRecord(g->stops[r], g->stream);
    }
    if (cudaStreamSynchronize(g->stream) != cudaSuccess) goto cleanup;
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, g->starts[r], g->stops[r]) != cudaSuccess) goto cleanup;
        samples[r] = ms * 1e-3;
    }
    gbs = 2.0 * (double)size / nzb_median(samples, reps) * 1e-9;
    *buffer_bytes = size;
cleanup:
    (void)cudaGetLastError();
    if (src != NULL) cudaFree(src);
    if (dst != NULL) cudaFree(dst);
    free(samples);
    return gbs;
}

/* ---- timing ------------------------------------------------------------------------------------ */

static int launch_once(nzb_gpu_launch_t *l, nz_context_t *ctx) {
    if (l->plan != NULL) {
        nz_status_t s = nz_spmv_execute(l->plan, 1.0, l->x, 0.0, l->y);
        if (s != NZ_SUCCESS) {
            const char *msg = nz_context_last_error(ctx);
            snprintf(l->error, sizeof l->error, "nz_spmv_execute: %s",
                     msg[0] ? msg : nz_status_string(s));
            return 1;
        }
        return 0;
    }
    float one_f = 1.0f, zero_f = 0.0f;
    double one_d = 1.0, zero_d = 0.0;
    int single = l->data_type == CUDA_R_32F;
    cusparseStatus_t cs = cusparseSpMV(l->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       single ? (const void *)&one_f : (const void *)&one_d,
                                       l->mat, l->vec_x,
                                       single ? (const void *)&zero_f : (const void *)&zero_d,
                                       l->vec_y, l->data_type, l->alg, l->buffer);
    if (cs != CUSPARSE_STATUS_SUCCESS) {
        snprintf(l->error, sizeof l->error, "cusparseSpMV: %s", cusparseGetErrorString(cs));
        l->unsupported = cs == CUSPARSE_STATUS_NOT_SUPPORTED;
        return 1;
    }
    return 0;
}

/* Median and minimum of `runs` samples, each a pair of events on the stream around `batch`
 * launches (batch = 1 unless one launch is shorter than GPU_MIN_SAMPLE_SECONDS), after a
 * warm-up launch and a single timed launch that sizes the batch. */
int nzb_gpu_time_launch(nzb_gpu_t *g, nzb_gpu_launch_t *l, int runs, nzb_result_t *r) {
    double *samples = NULL;
    float ms = 0;
    int batch = 1, rc = 1;
    cudaError_t err;
    if (ensure_events(g, runs) != 0) {
        snprintf(l->error, sizeof l->error, "cannot create CUDA events");
        return 1;
    }
    if (launch_once(l, g->ctx) != 0) return 1;
    cudaEventRecord(g->starts[0], g->stream);
    if (launch_once(l, g->ctx) != 0) return 1;
    cudaEventRecord(g->stops[0], g->stream);
    if ((err = cudaEventSynchronize(g->stops[0])) != cudaSuccess ||
        (err = cudaEventElapsedTime(&ms, g->starts[0], g->stops[0])) != cudaSuccess) {
        snprintf(l->error, sizeof l->error, "timing: %s", cudaGetErrorString(err));
        return 1;
    }
    double once = ms * 1e-3;
    if (once < GPU_MIN_SAMPLE_SECONDS)
        batch = once > 0 ? (int)ceil(GPU_MIN_SAMPLE_SECONDS / once) : GPU_MAX_BATCH;
    if (batch > GPU_MAX_BATCH) batch = GPU_MAX_BATCH;
    samples = (double *)malloc((size_t)runs * sizeof *samples);
    if (samples == NULL) {
        snprintf(l->error, sizeof l->error, "out of host memory");
        return 1;
    }
    for (int k = 0; k < runs; k++) {
        cudaEventRecord(g->starts[k], g->stream);
        for (int b = 0; b < batch; b++)
            if (launch_once(l, g->ctx) != 0) goto cleanup;
        cudaEventRecord(g->stops[k], g->stream);
    }
    if ((err = cudaStreamSynchronize(g->stream)) != cudaSuccess) {
        snprintf(l->error, sizeof l->error, "kernel: %s", cudaGetErrorString(err));
        goto cleanup;
    }
    for (int k = 0; k < runs; k++) {
        if ((err = cudaEventElapsedTime(&ms, g->starts[k], g->stops[k])) != cudaSuccess) {
            snprintf(l->error, sizeof l->error, "timing: %s", cudaGetErrorString(err));
            goto cleanup;
        }
        samples[k] = ms * 1e-3 / batch;
    }
    r->min_seconds = samples[0];
    for (int k = 1; k < runs; k++)
        if (samples[k] < r->min_seconds) r->min_seconds = samples[k];
    r->median_seconds = nzb_median(samples, runs);
    r->runs = runs;
    r->batch = batch;
    rc = 0;
cleanup:
    free(samples);
    return rc;
}

/* Poison y (all bits set: NaN in both precisions), launch once, copy y back and verify. */
int nzb_gpu_verify_launch(nzb_gpu_t *g, nzb_gpu_launch_t *l, const nzb_case_t *c, void *host_y,
                          size_t y_bytes, nzb_result_t *r) {
    cudaError_t err;
    if ((err = cudaMemsetAsync(l->y, 0xff, y_bytes, g->stream)) != cudaSuccess) {
        snprintf(l->error, sizeof l->error, "cudaMemsetAsync: %s", cudaGetErrorString(err));
        return 1;
    }
    if (launch_once(l, g->ctx) != 0) return 1;
    if ((err = cudaMemcpyAsync(host_y, l->y, y_bytes, cudaMemcpyDeviceToHost, g->stream)) !=
            cudaSuccess ||
        (err = cudaStreamSynchronize(g->stream)) != cudaSuccess) {
        snprintf(l->error, sizeof l->error, "kernel or copy: %s", cudaGetErrorString(err));
        return 1;
    }
    nzb_verify(r, c, host_y);
    return 0;
}
