/* device_budget.cu: how much device memory one call may use (the GPU SpGEMM algorithms' budget). */
#include "cuda_internal.h"
#include "spgemm_common.h"

/* The free memory less 1/NZI_DEVICE_BUDGET_MARGIN (the runtime's own allocations, fragmentation
 * of the pool), or the caller's limit when that is smaller. cudaMemGetInfo only: cheap, no
 * synchronisation with the context's stream. */
extern "C" nz_status_t nzi_device_memory_budget(nz_context_t *ctx, size_t limit, size_t *budget) {
    size_t free_bytes = 0, total_bytes = 0;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CUDA_TRY(ctx, cudaMemGetInfo(&free_bytes, &total_bytes));
    const size_t usable = free_bytes - free_bytes / NZI_DEVICE_BUDGET_MARGIN;
    *budget = limit != 0 && limit < usable ? limit : usable;
    return NZ_SUCCESS;
}
