/* vector_check.cu: whether a caller's vector is device memory the context's kernels may use. */
#include "cuda_internal.h"

#include <string.h>

/* Where a caller's vector lives (nzi_backend_t.vector_check): device memory of the context's
 * device, or managed memory, is accepted; host memory (pageable or pinned) is refused with
 * NZ_ERR_WRONG_LOCATION, as is device memory of another device. One cudaPointerGetAttributes. */
extern "C" nz_status_t nz_cuda_vector_check(nz_context_t *ctx, const void *ptr, const char *what) {
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaPointerAttributes attr;
    memset(&attr, 0, sizeof attr);
    const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "%s is not device memory (%s); a device matrix takes device vectors "
                         "(nz_device_malloc)", what, cudaGetErrorString(err));
    }
    if (attr.type == cudaMemoryTypeManaged) return NZ_SUCCESS;
    if (attr.type != cudaMemoryTypeDevice)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "%s is host memory; a device matrix takes device vectors "
                         "(nz_device_malloc)", what);
    if (attr.device != ctx->device)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "%s is memory of device %d; the context computes on device %d", what,
                         attr.device, ctx->device);
    return NZ_SUCCESS;
}
