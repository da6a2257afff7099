/* spmv_cpu.c: the CPU backend's SpMV dispatch: which (format, algorithm) pairs exist, and calls. */
#include "nzi.h"
#include "backend.h"
#include "cpu_kernels.h"

bool nz_cpu_spmv_supports(nz_format_t format, nz_alg_t alg) {
    switch (format) {
    case NZ_FORMAT_CSR: return alg == NZ_ALG_SERIAL || alg == NZ_ALG_PARALLEL;
    default: return false;
    }
}

nz_alg_t nz_cpu_spmv_default_alg(nz_format_t format) {
    (void)format;
    return NZ_ALG_PARALLEL;
}

nz_status_t nz_cpu_spmv_plan_setup(nz_spmv_plan_t *plan) {
    if (plan->op != NZ_OP_N)
        return nzi_error(plan->ctx, NZ_ERR_UNSUPPORTED, "transpose SpMV is not supported on the CPU yet");
    plan->reproducible = 1;
    return NZ_SUCCESS;
}

void nz_cpu_spmv_plan_release(nz_spmv_plan_t *plan) { (void)plan; }

nz_status_t nz_cpu_spmv_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    int parallel = plan->alg != NZ_ALG_SERIAL;
    int threads = plan->ctx->threads;
    switch (A->format) {
    case NZ_FORMAT_CSR:
        if (A->value_type == NZ_F32)
            nzi_cpu_csr_spmv_f32(A, (float)alpha, (const float *)x, (float)beta, (float *)y,
                                 parallel, threads);
        else
            nzi_cpu_csr_spmv_f64(A, alpha, (const double *)x, beta, (double *)y, parallel,
                                 threads);
        return NZ_SUCCESS;
    default:
        return nzi_error(plan->ctx, NZ_ERR_UNSUPPORTED, "no CPU SpMV kernel for %s",
                         nz_format_name(A->format));
    }
}
