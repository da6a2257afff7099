/* device.cu: the CUDA backend's errors, device binding and release, side streams, synchronisation. */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and device selection ---------------------------------------------------------- */

#ifndef NZ_CUDA_ARCHITECTURES
#define NZ_CUDA_ARCHITECTURES ""
#endif

/* An empty kernel whose attributes tell whether this build's code loads on the device. */
__global__ void nzi_probe_kernel(void) {}

/* Refuse a device this build has no code for, naming its compute capability and the build flag
 * to add, before any real kernel could fail with "no kernel image". The list check catches the
 * plain case; the probe (which makes the driver load or JIT the code) every other one. */
static nz_status_t check_code_for_device(nz_context_t *ctx, int device, const char *name,
                                         int major, int minor) {
    int code = nzi_cuda_arch_code(NZ_CUDA_ARCHITECTURES, major, minor);
    cudaFuncAttributes attributes;
    cudaError_t err = code == 0 ? cudaErrorNoKernelImageForDevice
                                : cudaFuncGetAttributes(&attributes, nzi_probe_kernel);
    if (err == cudaSuccess) return NZ_SUCCESS;
    (void)cudaGetLastError();
    if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction ||
        err == cudaErrorUnsupportedPtxVersion || err == cudaErrorInvalidPtx)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_context_set_device: device %d (%s) has compute capability %d.%d, "
                         "for which this build of Nonzero has no code (built for CUDA "
                         "architectures \"%s\"); rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d%d "
                         "(or =native)", device, name, major, minor, NZ_CUDA_ARCHITECTURES, major,
                         minor);
    return nzi_cuda_status(ctx, err, "cudaFuncGetAttributes(probe kernel)", __FILE__, __LINE__);
}

/* Map a CUDA error to a status with a message naming the failing call and the source line.
 * cudaGetLastError() clears the error when it is not sticky, so the next call starts clean. */
nz_status_t nzi_cuda_status(nz_context_t *ctx, cudaError_t err, const char *what, const char *file,
                            int line) {
    (void)cudaGetLastError();
    nz_status_t status = NZ_ERR_DEVICE;
    if (err == cudaErrorMemoryAllocation)
        status = NZ_ERR_DEVICE_OUT_OF_MEMORY;
    else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)
        status = NZ_ERR_NO_DEVICE;
    const char *base = strrchr(file, '/');
    return nzi_error(ctx, status, "CUDA error %s (%s) from %s at %s:%d", cudaGetErrorName(err),
                     cudaGetErrorString(err), what, base != NULL ? base + 1 : file, line);
}

nz_status_t nzi_cuda_enter(nz_context_t *ctx) {
    if (ctx->cuda == NULL)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE,
                         "the context is not bound to a CUDA device (nz_context_set_device)");
    int current = -1;
    NZI_CUDA_TRY(ctx, cudaGetDevice(&current));
    if (current != ctx->device) NZI_CUDA_TRY(ctx, cudaSetDevice(ctx->device));
    return NZ_SUCCESS;
}

int nz_cuda_device_count(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

/* Bind ctx to `device`: read the limits the kernels size themselves by (never hard-coded), make
 * or adopt a stream, create the timing events and the allocation table. On failure nothing is
 * left behind and the context stays unbound. */
nz_status_t nz_cuda_context_bind(nz_context_t *ctx, int device, void *stream) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = NULL;
    cudaStream_t own_stream = NULL;
    cudaDeviceProp prop;
    int count = nz_cuda_device_count(), major = 0, minor = 0, value = 0;
    const char *what = "nz_context_set_device";

    if (count == 0)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE, "%s: no CUDA device is visible (no GPU or driver)",
                         what);
    if (device >= count)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: device %d does not exist (%d visible)",
                         what, device, count);
    /* The context's own bookkeeping (this state and the allocation table) is plain, uncounted
     * memory: live_blocks counts what objects made from the context hold. */
    cs = (nzi_cuda_state_t *)calloc(1, sizeof *cs);
    if (cs == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the device state", what);
    cs->device = device;
    NZI_CUDA_CHECK(ctx, cudaSetDevice(device));
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&cs->sm_count, cudaDevAttrMultiProcessorCount, device));
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&cs->max_threads_per_sm,
                                               cudaDevAttrMaxThreadsPerMultiProcessor, device));
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&cs->max_threads_per_block,
                                               cudaDevAttrMaxThreadsPerBlock, device));
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlock, device));
    cs->shared_per_block = (size_t)value;
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                               device));
    cs->shared_per_block_optin = (size_t)value;
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                               device));
    cs->shared_per_sm = (size_t)value;
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&value, cudaDevAttrL2CacheSize, device));
    cs->l2_bytes = (size_t)value;
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&cs->warp_size, cudaDevAttrWarpSize, device));
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    NZI_CUDA_CHECK(ctx, cudaGetDeviceProperties(&prop, device));
    if (cs->warp_size != 32) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: device %d has warp size %d, not 32", what,
                           device, cs->warp_size);
        goto cleanup;
    }
    status = check_code_for_device(ctx, device, prop.name, major, minor);
    if (status != NZ_SUCCESS) goto cleanup;
    if (stream == NULL) {
        NZI_CUDA_CHECK(ctx, cudaStreamCreateWithFlags(&own_stream, cudaStreamNonBlocking));
        cs->stream = own_stream;
    } else {
        cs->stream = (cudaStream_t)stream;
    }
    NZI_CUDA_CHECK(ctx, cudaEventCreate(&cs->event_start));
    NZI_CUDA_CHECK(ctx, cudaEventCreate(&cs->event_stop));
    cs->public_capacity = 32;
    cs->public_ptrs = (void **)malloc((size_t)cs->public_capacity * sizeof(void *));
    cs->public_sizes = (size_t *)malloc((size_t)cs->public_capacity * sizeof(size_t));
    cs->public_pooled = (unsigned char *)malloc((size_t)cs->public_capacity);
    if (cs->public_ptrs == NULL || cs->public_sizes == NULL || cs->public_pooled == NULL) {
        status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the allocation table", what);
        goto cleanup;
    }
    /* a pool of the context's own, so caching never changes the device's default pool */
    NZI_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&value, cudaDevAttrMemoryPoolsSupported, device));
    if (value != 0) {
        cudaMemPoolProps props;
        uint64_t keep = NZI_POOL_KEEP;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        NZI_CUDA_CHECK(ctx, cudaMemPoolCreate(&cs->pool, &props));
        NZI_CUDA_CHECK(ctx, cudaMemPoolSetAttribute(cs->pool, cudaMemPoolAttrReleaseThreshold, &keep));
    }

    ctx->device = device;
    ctx->stream = (void *)cs->stream;
    ctx->owns_stream = own_stream != NULL;
    ctx->cuda = cs;
    snprintf(ctx->device_name, sizeof ctx->device_name, "%.96s (sm_%d%d, %d SMs, %zu MB L2, %.0f GB)",
             prop.name, major, minor, cs->sm_count, cs->l2_bytes >> 20,
             (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    return NZ_SUCCESS;

cleanup:
    if (cs->pool != NULL) cudaMemPoolDestroy(cs->pool);
    if (cs->event_start != NULL) cudaEventDestroy(cs->event_start);
    if (cs->event_stop != NULL) cudaEventDestroy(cs->event_stop);
    if (own_stream != NULL) cudaStreamDestroy(own_stream);
    (void)cudaGetLastError();
    free(cs->public_ptrs);
    free(cs->public_sizes);
    free(cs->public_pooled);
    free(cs);
    return status;
}

/* Unbind: wait for queued work, free device blocks still live (the user's leaks; matrices and
 * plans must already be destroyed), destroy what bind created. Errors are ignored: this runs on
 * teardown paths that cannot report them. */
void nz_cuda_context_release(nz_context_t *ctx) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    if (cs == NULL) return;
    (void)cudaSetDevice(cs->device);
    (void)cudaStreamSynchronize(cs->stream);
    if (cs->hyspmm_pool != NULL) cs->hyspmm_pool_free(ctx, cs->hyspmm_pool);
    cs->hyspmm_pool = NULL;
    for (int i = 0; i < cs->public_count; i++) {
        if (cs->public_pooled[i])
            (void)cudaFreeAsync(cs->public_ptrs[i], cs->stream);
        else
            (void)cudaFree(cs->public_ptrs[i]);
        nzi_account_free(ctx, cs->public_sizes[i], true);
    }
    (void)cudaStreamSynchronize(cs->stream);
    if (cs->pool != NULL) (void)cudaMemPoolDestroy(cs->pool);
    if (cs->side_ready) {
        for (int i = 0; i < NZI_SIDE_STREAMS; i++) {
            (void)cudaStreamDestroy(cs->side[i]);
            (void)cudaEventDestroy(cs->side_done[i]);
        }
        (void)cudaEventDestroy(cs->fork);
    }
    free(cs->public_ptrs);
    free(cs->public_sizes);
    free(cs->public_pooled);
    cudaEventDestroy(cs->event_start);
    cudaEventDestroy(cs->event_stop);
    if (ctx->owns_stream) cudaStreamDestroy(cs->stream);
    (void)cudaGetLastError();
    free(cs);
    ctx->cuda = NULL;
    ctx->device = -1;
    ctx->stream = NULL;
    ctx->owns_stream = 0;
    snprintf(ctx->device_name, sizeof ctx->device_name, "cpu");
}

nz_status_t nzi_cuda_fork(nz_context_t *ctx) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    if (!cs->side_ready) {
        int made = 0;
        cudaError_t err = cudaEventCreateWithFlags(&cs->fork, cudaEventDisableTiming);
        for (; err == cudaSuccess && made < NZI_SIDE_STREAMS; made++) {
            err = cudaStreamCreateWithFlags(&cs->side[made], cudaStreamNonBlocking);
            if (err != cudaSuccess) break;
            err = cudaEventCreateWithFlags(&cs->side_done[made], cudaEventDisableTiming);
            if (err != cudaSuccess) {
                (void)cudaStreamDestroy(cs->side[made]);
                break;
            }
        }
        if (err != cudaSuccess) {
            for (int i = 0; i < made; i++) {
                (void)cudaStreamDestroy(cs->side[i]);
                (void)cudaEventDestroy(cs->side_done[i]);
            }
            if (cs->fork != NULL) (void)cudaEventDestroy(cs->fork);
            cs->fork = NULL;
            return nzi_cuda_status(ctx, err, "creating the side streams", __FILE__, __LINE__);
        }
        cs->side_ready = true;
    }
    NZI_CUDA_TRY(ctx, cudaEventRecord(cs->fork, cs->stream));
    for (int i = 0; i < NZI_SIDE_STREAMS; i++)
        NZI_CUDA_TRY(ctx, cudaStreamWaitEvent(cs->side[i], cs->fork, 0));
    return NZ_SUCCESS;
}

nz_status_t nzi_cuda_join(nz_context_t *ctx) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    for (int i = 0; i < NZI_SIDE_STREAMS; i++) {
        NZI_CUDA_TRY(ctx, cudaEventRecord(cs->side_done[i], cs->side[i]));
        NZI_CUDA_TRY(ctx, cudaStreamWaitEvent(cs->stream, cs->side_done[i], 0));
    }
    return NZ_SUCCESS;
}

size_t nz_cuda_l2_bytes(const nz_context_t *ctx) {
    const nzi_cuda_state_t *cs = ctx != NULL ? nzi_cuda(ctx) : NULL;
    return cs != NULL ? cs->l2_bytes : 0;
}

int64_t nz_cuda_resident_threads(const nz_context_t *ctx) {
    const nzi_cuda_state_t *cs = ctx != NULL ? nzi_cuda(ctx) : NULL;
    return cs != NULL ? (int64_t)cs->sm_count * (int64_t)cs->max_threads_per_sm : 0;
}

nz_status_t nz_cuda_synchronize(nz_context_t *ctx) {
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CUDA_TRY(ctx, cudaStreamSynchronize(nzi_cuda(ctx)->stream));
    return NZ_SUCCESS;
}
