/* device.cu: the CUDA backend's device binding, counted device memory, and CSR upload / validation. */
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

nz_status_t nz_cuda_synchronize(nz_context_t *ctx) {
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CUDA_TRY(ctx, cudaStreamSynchronize(nzi_cuda(ctx)->stream));
    return NZ_SUCCESS;
}

/* ---- counted device memory ---------------------------------------------------------------- */

/* Make room for one more entry in the allocation table (doubling; plain host memory: the
 * table is the context's bookkeeping, not an object's). */
static nz_status_t table_reserve(nz_context_t *ctx, nzi_cuda_state_t *cs) {
    if (cs->public_count < cs->public_capacity) return NZ_SUCCESS;
    nz_status_t status = NZ_SUCCESS;
    int capacity = 2 * cs->public_capacity;
    void **ptrs = NULL;
    size_t *sizes = NULL;
    unsigned char *pooled = NULL;
    if (capacity <= 0 || (size_t)capacity > SIZE_MAX / sizeof(void *))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "device allocation table: too many blocks");
    ptrs = (void **)malloc((size_t)capacity * sizeof(void *));
    sizes = (size_t *)malloc((size_t)capacity * sizeof(size_t));
    pooled = (unsigned char *)malloc((size_t)capacity);
    if (ptrs == NULL || sizes == NULL || pooled == NULL) {
        status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "device allocation table: out of memory");
        goto cleanup;
    }
    memcpy(ptrs, cs->public_ptrs, (size_t)cs->public_count * sizeof(void *));
    memcpy(sizes, cs->public_sizes, (size_t)cs->public_count * sizeof(size_t));
    memcpy(pooled, cs->public_pooled, (size_t)cs->public_count);
    free(cs->public_ptrs);
    free(cs->public_sizes);
    free(cs->public_pooled);
    cs->public_ptrs = ptrs;
    cs->public_sizes = sizes;
    cs->public_pooled = pooled;
    cs->public_capacity = capacity;
    return NZ_SUCCESS;
cleanup:
    free(ptrs);
    free(sizes);
    free(pooled);
    return status;
}

/* Accounting (and failure injection) comes before the allocation, so tests can fail any device
 * allocation; a real failure is counted too, and its error cleared. Zero bytes allocate one, so
 * every block has a distinct address in the table. pooled: from the context's pool on its
 * stream (cudaMallocFromPoolAsync), else cudaMalloc. */
static nz_status_t device_alloc(nz_context_t *ctx, void **ptr, size_t bytes, const char *what,
                                bool pooled) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    size_t size = bytes != 0 ? bytes : 1;
    void *p = NULL;
    int64_t peak = ctx->peak_device_bytes;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_TRY(table_reserve(ctx, cs));
    if (!nzi_account_alloc(ctx, size, true))
        return nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                         "%s: cannot allocate %zu bytes of device memory (injected failure)", what,
                         size);
    pooled = pooled && cs->pool != NULL && size <= NZI_POOL_MAX_BLOCK;
    cudaError_t err = pooled ? cudaMallocFromPoolAsync(&p, size, cs->pool, cs->stream)
                             : cudaMalloc(&p, size);
    if (err != cudaSuccess) {
        nzi_account_free(ctx, size, true);
        ctx->failed_allocs++;
        ctx->peak_device_bytes = peak; /* the high-water mark counts memory actually held */
        (void)cudaGetLastError();
        if (err == cudaErrorMemoryAllocation) {
            size_t free_bytes = 0, total_bytes = 0;
            if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) (void)cudaGetLastError();
            return nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                             "%s: cannot allocate %zu bytes of device memory (%zu of %zu free)",
                             what, size, free_bytes, total_bytes);
        }
        return nzi_cuda_status(ctx, err, what, __FILE__, __LINE__);
    }
    cs->public_ptrs[cs->public_count] = p;
    cs->public_sizes[cs->public_count] = size;
    cs->public_pooled[cs->public_count] = pooled ? 1 : 0;
    cs->public_count++;
    *ptr = p;
    return NZ_SUCCESS;
}

nz_status_t nz_cuda_malloc(nz_context_t *ctx, void **ptr, size_t bytes, const char *what) {
    return device_alloc(ctx, ptr, bytes, what, false);
}

nz_status_t nzi_cuda_malloc_async(nz_context_t *ctx, void **ptr, size_t bytes, const char *what) {
    return device_alloc(ctx, ptr, bytes, what, true);
}

/* The size comes from the table (bytes may be (size_t)-1); pointers not in the table (foreign,
 * or already freed) are ignored rather than freed twice. Pooled blocks are freed stream-ordered
 * on the context's stream: after its earlier work (other streams' uses must be synchronised
 * first). */
void nz_cuda_free(nz_context_t *ctx, void *ptr, size_t bytes) {
    (void)bytes;
    if (ptr == NULL || ctx == NULL || ctx->cuda == NULL) return;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    int i = cs->public_count - 1;
    while (i >= 0 && cs->public_ptrs[i] != ptr) i--;
    if (i < 0) return;
    size_t size = cs->public_sizes[i];
    const bool pooled = cs->public_pooled[i] != 0;
    cs->public_count--;
    cs->public_ptrs[i] = cs->public_ptrs[cs->public_count];
    cs->public_sizes[i] = cs->public_sizes[cs->public_count];
    cs->public_pooled[i] = cs->public_pooled[cs->public_count];
    (void)cudaSetDevice(cs->device);
    if ((pooled ? cudaFreeAsync(ptr, cs->stream) : cudaFree(ptr)) != cudaSuccess)
        (void)cudaGetLastError();
    nzi_account_free(ctx, size, true);
}

/* Copies run on the context's stream; host-to-device and device-to-host copies are complete
 * when the call returns (the host may reuse or read its buffer), device-to-device ones are
 * stream-ordered. */
nz_status_t nz_cuda_memcpy(nz_context_t *ctx, void *dst, const void *src, size_t bytes, int kind) {
    cudaMemcpyKind cuda_kind;
    switch (kind) {
    case NZI_H2D: cuda_kind = cudaMemcpyHostToDevice; break;
    case NZI_D2H: cuda_kind = cudaMemcpyDeviceToHost; break;
    case NZI_D2D: cuda_kind = cudaMemcpyDeviceToDevice; break;
    default: return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "copy kind %d is invalid", kind);
    }
    if (bytes == 0) return NZ_SUCCESS;
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    NZI_CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, cuda_kind, stream));
    if (kind != NZI_D2D) NZI_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
    return NZ_SUCCESS;
}

nz_status_t nz_cuda_memset(nz_context_t *ctx, void *dst, int byte, size_t bytes) {
    if (bytes == 0) return NZ_SUCCESS;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CUDA_TRY(ctx, cudaMemsetAsync(dst, byte, bytes, nzi_cuda(ctx)->stream));
    return NZ_SUCCESS;
}

/* ---- matrix upload ----------------------------------------------------------------------- */

/* Double-buffered staging: host arrays are copied (or narrowed, int64 -> int32 offsets) into one
 * half of a pinned buffer while the other half's DMA runs; an event per half says when it may be
 * refilled. With a pageable fallback buffer cudaMemcpyAsync returns once the driver has taken
 * the data, so the same loop stays correct, just slower. */
typedef struct stager {
    unsigned char *buffer; /* 2 * half bytes */
    size_t half;
    bool pinned;
    cudaEvent_t done[2];
    int next;
} stager_t;

#define NZI_STAGING_HALF ((size_t)8 << 20) /* 8 MiB halves: large DMAs, small pinned footprint */
#define NZI_PINNED_MIN ((size_t)2 << 20)    /* smaller staging stays pageable */

static nz_status_t stage_array(nz_context_t *ctx, stager_t *st, void *dst, const void *src,
                               int64_t count, size_t elem, bool narrow_offsets) {
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    int64_t per_chunk = (int64_t)(st->half / elem);
    for (int64_t first = 0; first < count; first += per_chunk) {
        int64_t n = count - first < per_chunk ? count - first : per_chunk;
        unsigned char *chunk = st->buffer + (size_t)st->next * st->half;
        NZI_CUDA_TRY(ctx, cudaEventSynchronize(st->done[st->next]));
        if (narrow_offsets) {
            const int64_t *wide = (const int64_t *)src + first;
            int32_t *narrow = (int32_t *)chunk;
            for (int64_t i = 0; i < n; i++) narrow[i] = (int32_t)wide[i];
        } else {
            memcpy(chunk, (const unsigned char *)src + (size_t)first * elem, (size_t)n * elem);
        }
        NZI_CUDA_TRY(ctx, cudaMemcpyAsync((unsigned char *)dst + (size_t)first * elem, chunk,
                                          (size_t)n * elem, cudaMemcpyHostToDevice, stream));
        NZI_CUDA_TRY(ctx, cudaEventRecord(st->done[st->next], stream));
        st->next ^= 1;
    }
    return NZ_SUCCESS;
}

/* Copy host CSR A to the device as dA: row offsets narrowed to int32 when offset_bits is 32, or
 * 0 and nnz fits. The copy phase is timed with events (dA->transfer_seconds). Any failure frees
 * the device arrays already allocated and leaves dA's pointers NULL. */
nz_status_t nz_cuda_matrix_upload(nz_context_t *ctx, nz_matrix_t *dA, const nz_matrix_t *A,
                                  int offset_bits) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t rows = A->rows, nnz = A->nnz;
    const size_t value_size = nzi_value_size(A->value_type);
    const bool narrow = offset_bits == 32 || (offset_bits == 0 && nnz <= INT32_MAX);
    const size_t offset_size = narrow ? sizeof(int32_t) : sizeof(int64_t);
    const char *what = "nz_matrix_to_device";
    size_t offset_bytes = 0, index_bytes = 0, value_bytes = 0, largest;
    stager_t st;
    float ms = 0.0f;
    cudaError_t err;

    memset(&st, 0, sizeof st);
    if (A->format != NZ_FORMAT_CSR && A->location == NZ_HOST)
        return nzi_cuda_format_upload(ctx, dA, A); /* device_formats.cu: other layouts as they are */
    if (A->format != NZ_FORMAT_CSR || A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: only host CSR matrices can be uploaded", what);
    if (narrow && nnz > INT32_MAX)
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: %lld nonzeros do not fit 32-bit row offsets",
                         what, (long long)nnz);
    if (nzi_mul_overflow_size((size_t)rows + 1, offset_size, &offset_bytes) ||
        nzi_mul_overflow_size((size_t)nnz, sizeof(int32_t), &index_bytes) ||
        nzi_mul_overflow_size((size_t)nnz, value_size, &value_bytes))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: %lld x %lld with %lld nonzeros overflows size_t",
                         what, (long long)rows, (long long)A->cols, (long long)nnz);
    NZI_TRY(nzi_cuda_enter(ctx));
    dA->device.offset_type = narrow ? NZ_I32 : NZ_I64;
    dA->device.borrowed = false;
    NZI_CHECK(nz_cuda_malloc(ctx, &dA->device.row_offsets, offset_bytes,
                             "nz_matrix_to_device: row offsets"));
    if (nnz > 0) {
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&dA->device.col_indices, index_bytes,
                                 "nz_matrix_to_device: column indices"));
        NZI_CHECK(nz_cuda_malloc(ctx, &dA->device.values, value_bytes,
                                 "nz_matrix_to_device: values"));
    }

    largest = offset_bytes > index_bytes ? offset_bytes : index_bytes;
    if (value_bytes > largest) largest = value_bytes;
    st.half = largest < NZI_STAGING_HALF ? (largest + 15) & ~(size_t)15 : NZI_STAGING_HALF;
    NZI_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&st.done[0], cudaEventDisableTiming));
    NZI_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&st.done[1], cudaEventDisableTiming));
    /* small arrays go through a pageable buffer: pinning and unpinning cost more than their copy */
    if (2 * st.half > NZI_PINNED_MIN && nzi_account_alloc(ctx, 2 * st.half, false)) {
        err = cudaMallocHost((void **)&st.buffer, 2 * st.half);
        if (err == cudaSuccess) {
            st.pinned = true;
        } else {
            (void)cudaGetLastError();
            nzi_account_free(ctx, 2 * st.half, false);
            ctx->failed_allocs++;
            st.buffer = NULL;
        }
    }
    if (!st.pinned)
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&st.buffer, 2, st.half,
                                  "nz_matrix_to_device: staging buffer"));

    NZI_CUDA_CHECK(ctx, cudaEventRecord(cs->event_start, cs->stream));
    NZI_CHECK(stage_array(ctx, &st, dA->device.row_offsets, A->host.csr.row_offsets, rows + 1,
                          offset_size, narrow));
    if (nnz > 0) {
        NZI_CHECK(stage_array(ctx, &st, dA->device.col_indices, A->host.csr.col_indices, nnz,
                              sizeof(int32_t), false));
        NZI_CHECK(stage_array(ctx, &st, dA->device.values, A->host.csr.values, nnz, value_size,
                              false));
    }
    NZI_CUDA_CHECK(ctx, cudaEventRecord(cs->event_stop, cs->stream));
    NZI_CUDA_CHECK(ctx, cudaEventSynchronize(cs->event_stop));
    NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, cs->event_start, cs->event_stop));
    dA->transfer_seconds = 1e-3 * (double)ms;

cleanup:
    if (st.buffer != NULL) {
        /* a failed copy may still have DMA in flight from the buffer */
        if (cudaStreamSynchronize(cs->stream) != cudaSuccess) (void)cudaGetLastError();
        if (st.pinned) {
            cudaFreeHost(st.buffer);
            nzi_account_free(ctx, 2 * st.half, false);
        } else {
            nzi_free(ctx, st.buffer);
        }
    }
    if (st.done[0] != NULL) cudaEventDestroy(st.done[0]);
    if (st.done[1] != NULL) cudaEventDestroy(st.done[1]);
    if (status < 0) nz_cuda_matrix_release(dA);
    return status;
}

/* ---- validation of wrapped arrays -------------------------------------------------------- */

/* Copy the wrapped structure to the host and check it as nz_matrix_create_csr does (offsets
 * start at 0, never decrease, end at nnz; columns in range) plus the device contract (columns
 * strictly increasing within a row). The message names the first bad row. O(rows + nnz) host
 * memory and time. */
nz_status_t nz_cuda_matrix_validate(nz_context_t *ctx, const nz_matrix_t *dA) {
    nz_status_t status = NZ_SUCCESS;
    const char *what = "nz_matrix_wrap_csr_device";
    const int64_t rows = dA->rows, cols = dA->cols, nnz = dA->nnz;
    const bool narrow = dA->device.offset_type == NZ_I32;
    void *offsets = NULL;
    int32_t *columns = NULL;
    int64_t i, k;

    NZI_CHECK(nzi_alloc_array(ctx, &offsets, (size_t)rows + 1, narrow ? 4 : 8,
                              "nz_matrix_wrap_csr_device: row offsets copy"));
    NZI_CHECK(nz_cuda_memcpy(ctx, offsets, dA->device.row_offsets,
                             ((size_t)rows + 1) * (narrow ? 4 : 8), NZI_D2H));
#define OFFSET(i) (narrow ? (int64_t)((const int32_t *)offsets)[i] : ((const int64_t *)offsets)[i])
    if (OFFSET(0) != 0) {
        status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX, "%s: row 0: row_offsets[0] is %lld, not 0",
                           what, (long long)OFFSET(0));
        goto cleanup;
    }
    for (i = 0; i < rows; i++)
        if (OFFSET(i + 1) < OFFSET(i)) {
            status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                               "%s: row %lld: row_offsets decrease (%lld then %lld)", what,
                               (long long)i, (long long)OFFSET(i), (long long)OFFSET(i + 1));
            goto cleanup;
        }
    if (OFFSET(rows) != nnz) {
        status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                           "%s: row_offsets[%lld] is %lld but nnz is %lld", what, (long long)rows,
                           (long long)OFFSET(rows), (long long)nnz);
        goto cleanup;
    }
    if (nnz > 0) {
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&columns, (size_t)nnz, sizeof(int32_t),
                                  "nz_matrix_wrap_csr_device: column indices copy"));
        NZI_CHECK(nz_cuda_memcpy(ctx, columns, dA->device.col_indices, (size_t)nnz * 4, NZI_D2H));
        for (i = 0; i < rows; i++)
            for (k = OFFSET(i); k < OFFSET(i + 1); k++) {
                if (columns[k] < 0 || columns[k] >= cols) {
                    status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                                       "%s: row %lld: column index %d out of range [0, %lld)",
                                       what, (long long)i, columns[k], (long long)cols);
                    goto cleanup;
                }
                if (k > OFFSET(i) && columns[k] <= columns[k - 1]) {
                    status = nzi_error(ctx, NZ_ERR_NOT_SORTED,
                                       "%s: row %lld: column indices not strictly increasing "
                                       "(%d after %d)", what, (long long)i, columns[k],
                                       columns[k - 1]);
                    goto cleanup;
                }
            }
    }
#undef OFFSET
cleanup:
    nzi_free(ctx, offsets);
    nzi_free(ctx, columns);
    return status;
}

/* Copy device CSR dA into a new host CSR matrix (int64 row offsets; int32 ones widened). */
nz_status_t nz_cuda_matrix_download(nz_context_t *ctx, nz_matrix_t **H, const nz_matrix_t *dA) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    const int64_t rows = dA->rows, nnz = dA->nnz;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CHECK(nzi_csr_alloc(ctx, &M, dA->value_type, rows, dA->cols, nnz));
    if (dA->device.offset_type == NZ_I64) {
        NZI_CHECK(nz_cuda_memcpy(ctx, M->host.csr.row_offsets, dA->device.row_offsets,
                                 (size_t)(rows + 1) * sizeof(int64_t), NZI_D2H));
    } else {
        /* the int32 offsets land in the upper half of the int64 array, then widen in place
         * from the front (entry i is read at byte 4 (rows + 1 + i) before it is overwritten) */
        int64_t *wide = M->host.csr.row_offsets;
        int32_t *narrow = (int32_t *)wide + (rows + 1);
        NZI_CHECK(nz_cuda_memcpy(ctx, narrow, dA->device.row_offsets,
                                 (size_t)(rows + 1) * sizeof(int32_t), NZI_D2H));
        for (int64_t i = 0; i <= rows; i++) wide[i] = (int64_t)narrow[i];
    }
    if (nnz > 0) {
        NZI_CHECK(nz_cuda_memcpy(ctx, M->host.csr.col_indices, dA->device.col_indices,
                                 (size_t)nnz * sizeof(int32_t), NZI_D2H));
        NZI_CHECK(nz_cuda_memcpy(ctx, M->host.csr.values, dA->device.values,
                                 (size_t)nnz * nzi_value_size(dA->value_type), NZI_D2H));
    }
    *H = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

void nz_cuda_matrix_release(nz_matrix_t *dA) {
    if (dA == NULL) return;
    if (dA->format != NZ_FORMAT_CSR) {
        nzi_cuda_format_release(dA); /* device_formats.cu */
        return;
    }
    if (!dA->device.borrowed) {
        nz_cuda_free(dA->ctx, dA->device.row_offsets, (size_t)-1);
        nz_cuda_free(dA->ctx, dA->device.col_indices, (size_t)-1);
        nz_cuda_free(dA->ctx, dA->device.values, (size_t)-1);
    }
    dA->device.row_offsets = NULL;
    dA->device.col_indices = NULL;
    dA->device.values = NULL;
}
