/* backend.c: the CPU and CUDA backend tables, and the one place that chooses between them. */
#include "nzi.h"
#include "backend.h"
#include "cg_work.h"
#include "krylov.h"

#include <string.h>

/*
 * Each table points at its backend's entry points (src/cpu; src/cuda, or the stubs of
 * src/core/cuda_absent.c in a build without CUDA, whose spmv_supports / spmm_supports answer
 * false, so nothing above ever reaches the rest). The small adapters below give the CPU backend
 * the same shape as the GPU one: memory from the context's counting allocator, the CPU CG
 * operations (src/cpu/cg_cpu.c) and Krylov vector operations (src/cpu/krylov_cpu.c).
 */

static int cpu_spmv_reproducible(nz_format_t format, nz_alg_t alg, nz_operation_t op) {
    (void)format;
    (void)alg;
    (void)op;
    return 1; /* every CPU kernel sums each row in a fixed order */
}

static const struct nzi_cg_ops *cpu_cg_ops(void) { return &nzi_cg_cpu_ops; }
static const struct nzi_krylov_ops *cpu_krylov_ops(void) { return &nzi_krylov_cpu_ops; }

static nz_status_t cpu_mem_alloc(nz_context_t *ctx, void **ptr, size_t bytes, const char *what) {
    *ptr = nzi_calloc(ctx, 1, bytes > 0 ? bytes : 1);
    if (*ptr == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate %s (%zu bytes)", what, bytes);
    return NZ_SUCCESS;
}

static void cpu_mem_free(nz_context_t *ctx, void *ptr, size_t bytes) {
    (void)bytes;
    nzi_free(ctx, ptr);
}

static nz_status_t cpu_mem_set(nz_context_t *ctx, void *dst, int byte, size_t bytes) {
    (void)ctx;
    if (bytes > 0) memset(dst, byte, bytes);
    return NZ_SUCCESS;
}

static const nzi_backend_t cpu_backend = {
    .id = NZ_BACKEND_CPU,
    .name = "CPU",
    .spmv_supports = nz_cpu_spmv_supports,
    .spmv_reproducible = cpu_spmv_reproducible,
    .spmv_plan_setup = nz_cpu_spmv_plan_setup,
    .spmv_execute = nz_cpu_spmv_execute,
    .spmv_plan_release = nz_cpu_spmv_plan_release,
    .spmv_time = nz_cpu_spmv_time,
    .csr_row_stats = nz_cpu_csr_row_stats,
    .spmm_default_alg = nz_cpu_spmm_default_alg,
    .spmm_supports = nz_cpu_spmm_supports,
    .spmm_plan_setup = nz_cpu_spmm_plan_setup,
    .spmm_execute = nz_cpu_spmm_execute,
    .spmm_plan_release = nz_cpu_spmm_plan_release,
    .spgemm = nz_cpu_spgemm,
    .spgemm_default_alg = NZ_SPGEMM_CPU,
    .spgemm_numeric_setup = nz_cpu_spgemm_numeric_setup,
    .spgemm_numeric = nz_cpu_spgemm_numeric,
    .spgemm_numeric_release = nz_cpu_spgemm_numeric_release,
    .spgeam_symbolic = nz_cpu_spgeam_symbolic,
    .spgeam_numeric = nz_cpu_spgeam_numeric,
    .transpose = nz_cpu_transpose,
    .transpose_values = nz_cpu_transpose_values,
    .transpose_release = nz_cpu_transpose_release,
    .spsv_plan_setup = nz_cpu_spsv_plan_setup,
    .spsv_execute = nz_cpu_spsv_execute,
    .spsv_plan_release = nz_cpu_spsv_plan_release,
    .cg_ops = cpu_cg_ops,
    .krylov_ops = cpu_krylov_ops,
    .mem_alloc = cpu_mem_alloc,
    .mem_free = cpu_mem_free,
    .mem_set = cpu_mem_set,
};

static const nzi_backend_t cuda_backend = {
    .id = NZ_BACKEND_CUDA,
    .name = "GPU",
    .spmv_supports = nz_cuda_spmv_supports,
    .spmv_reproducible = nz_cuda_spmv_reproducible,
    .spmv_plan_setup = nz_cuda_spmv_plan_setup,
    .spmv_execute = nz_cuda_spmv_execute,
    .spmv_plan_release = nz_cuda_spmv_plan_release,
    .spmv_time = nz_cuda_time_plan,
    .csr_row_stats = nz_cuda_csr_row_stats,
    .csr_hot_share = nz_cuda_csr_hot_share,
    .spmm_default_alg = nz_cuda_spmm_default_alg,
    .spmm_supports = nz_cuda_spmm_supports,
    .spmm_plan_setup = nz_cuda_spmm_plan_setup,
    .spmm_execute = nz_cuda_spmm_execute,
    .spmm_plan_release = nz_cuda_spmm_plan_release,
    .spgemm = nz_cuda_spgemm,
    /* the hash algorithm handles every shape and, through row panels, every size; device
     * operands exist only with a device, and only it takes them */
    .spgemm_default_alg = NZ_SPGEMM_HASH,
    .spgemm_numeric_setup = nz_cuda_spgemm_numeric_setup,
    .spgemm_numeric = nz_cuda_spgemm_numeric,
    .spgemm_numeric_release = nz_cuda_spgemm_numeric_release,
    .spgeam_symbolic = nz_cuda_spgeam_symbolic,
    .spgeam_numeric = nz_cuda_spgeam_numeric,
    .transpose = nz_cuda_transpose,
    .transpose_values = nz_cuda_transpose_values,
    .transpose_release = nz_cuda_transpose_release,
    .spsv_plan_setup = nz_cuda_spsv_plan_setup,
    .spsv_execute = nz_cuda_spsv_execute,
    .spsv_plan_release = nz_cuda_spsv_plan_release,
    .factor_compute = nz_cuda_factor_compute,
    .cg_ops = nz_cuda_cg_ops,
    .krylov_ops = nz_cuda_krylov_ops,
    .vector_check = nz_cuda_vector_check,
    .mem_alloc = nz_cuda_malloc,
    .mem_free = nz_cuda_free,
    .mem_set = nz_cuda_memset,
    .device_count = nz_cuda_device_count,
    .context_bind = nz_cuda_context_bind,
    .context_release = nz_cuda_context_release,
    .synchronize = nz_cuda_synchronize,
    .mem_copy = nz_cuda_memcpy,
    .matrix_upload = nz_cuda_matrix_upload,
    .matrix_validate = nz_cuda_matrix_validate,
    .matrix_download = nz_cuda_matrix_download,
    .matrix_release = nz_cuda_matrix_release,
    .gen_fe3d = nz_cuda_gen_fe3d,
    .l2_bytes = nz_cuda_l2_bytes,
    .resident_threads = nz_cuda_resident_threads,
};

const nzi_backend_t *nzi_backend_get(nz_backend_t id) {
    switch (id) {
    case NZ_BACKEND_CPU: return &cpu_backend;
    case NZ_BACKEND_CUDA: return &cuda_backend;
    default: return NULL;
    }
}

const nzi_backend_t *nzi_backend_of(const nz_matrix_t *A) {
    return A->location == NZ_DEVICE ? &cuda_backend : &cpu_backend;
}

const nzi_backend_t *nzi_backend_of_context(const nz_context_t *ctx) {
    return ctx->cuda != NULL ? &cuda_backend : &cpu_backend;
}
