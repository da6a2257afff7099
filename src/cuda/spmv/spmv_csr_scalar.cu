/* spmv_csr_scalar.cu: CSR-scalar SpMV on the GPU: one thread per row. */
#include "cuda_internal.h"

/*
 * Thread i of the grid computes row i alone: it walks the row's nonzeros in order, so the sum
 * order is the CPU serial kernel's and the result is bitwise reproducible run to run. Good for
 * short, even rows; a warp waits for its longest row and its loads are not coalesced (adjacent
 * threads read different rows), which is why CSR-vector and merge-path exist.
 * Cost: one pass over A (rows x 2 offsets, nnz x (index + value)), nnz gathers from x.
 */

/* 256 threads: 8 warps per block, and a whole number of blocks fills an SM of 2048 threads. */
#define SCALAR_BLOCK 256

/* Accum is the type of the row sum and of alpha / beta: Value, or double for mixed precision
 * (NZ_PLAN_MIXED: float storage, each product and the sum in double, y rounded once). */
template <typename Value, typename Offset, bool BetaZero, typename Accum = Value>
__global__ void __launch_bounds__(SCALAR_BLOCK)
    csr_scalar_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                      const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                      const Value *__restrict__ x, Accum alpha, Accum beta,
                      Value *__restrict__ y) {
    const int64_t row = (int64_t)blockIdx.x * SCALAR_BLOCK + threadIdx.x;
    if (row >= rows) return;
    const Offset begin = __ldg(row_offsets + row), end = __ldg(row_offsets + row + 1);
    Accum sum = Accum(0);
#pragma unroll 4
    for (Offset k = begin; k < end; k++)
        sum += (Accum)__ldg(values + k) * (Accum)__ldg(x + __ldg(col_indices + k));
    y[row] = (Value)(BetaZero ? alpha * sum : alpha * sum + beta * (Accum)y[row]);
}

template <typename Value, typename Offset, typename Accum = Value>
static nz_status_t csr_scalar_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                     double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const unsigned blocks = (unsigned)((A->rows + SCALAR_BLOCK - 1) / SCALAR_BLOCK);
    const int32_t rows = (int32_t)A->rows;
    const Offset *offsets = nzi_dev_offsets<Offset>(A);
    const Value *values = (const Value *)A->device.values;
    if (beta == 0.0)
        csr_scalar_kernel<Value, Offset, true, Accum><<<blocks, SCALAR_BLOCK, 0, stream>>>(
            rows, offsets, A->device.col_indices, values, (const Value *)x, (Accum)alpha, Accum(0),
            (Value *)y);
    else
        csr_scalar_kernel<Value, Offset, false, Accum><<<blocks, SCALAR_BLOCK, 0, stream>>>(
            rows, offsets, A->device.col_indices, values, (const Value *)x, (Accum)alpha,
            (Accum)beta, (Value *)y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* No preprocessing: the plan holds nothing beyond the matrix. */
static nz_status_t csr_scalar_setup(nz_spmv_plan_t *plan) {
    plan->state = NULL;
    plan->workspace_bytes = 0;
    plan->reproducible = 1;
    plan->vector_width = 1;
    return NZ_SUCCESS;
}

static nz_status_t csr_scalar_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                      double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    const bool wide = A->device.offset_type == NZ_I64;
    if (A->value_type == NZ_F32 && (plan->flags & NZ_PLAN_MIXED))
        return wide ? csr_scalar_launch<float, int64_t, double>(plan, alpha, x, beta, y)
                    : csr_scalar_launch<float, int32_t, double>(plan, alpha, x, beta, y);
    if (A->value_type == NZ_F32)
        return wide ? csr_scalar_launch<float, int64_t>(plan, alpha, x, beta, y)
                    : csr_scalar_launch<float, int32_t>(plan, alpha, x, beta, y);
    return wide ? csr_scalar_launch<double, int64_t>(plan, alpha, x, beta, y)
                : csr_scalar_launch<double, int32_t>(plan, alpha, x, beta, y);
}

static void csr_scalar_release(nz_spmv_plan_t *plan) { plan->state = NULL; }

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_scalar_ops = {
    NZ_ALG_SCALAR, csr_scalar_setup, csr_scalar_execute, csr_scalar_release};

template nz_status_t csr_scalar_launch<float, int32_t>(const nz_spmv_plan_t *, double, const void *,
                                                       double, void *);
template nz_status_t csr_scalar_launch<float, int64_t>(const nz_spmv_plan_t *, double, const void *,
                                                       double, void *);
template nz_status_t csr_scalar_launch<double, int32_t>(const nz_spmv_plan_t *, double,
                                                        const void *, double, void *);
template nz_status_t csr_scalar_launch<double, int64_t>(const nz_spmv_plan_t *, double,
                                                        const void *, double, void *);
template nz_status_t csr_scalar_launch<float, int32_t, double>(const nz_spmv_plan_t *, double,
                                                               const void *, double, void *);
template nz_status_t csr_scalar_launch<float, int64_t, double>(const nz_spmv_plan_t *, double,
                                                               const void *, double, void *);
