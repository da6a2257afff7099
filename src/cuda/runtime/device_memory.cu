/* device_memory.cu: counted device memory (plain or from the context's pool), copies, memset. */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
