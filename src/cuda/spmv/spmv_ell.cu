/* spmv_ell.cu: ELLPACK SpMV on the GPU: one thread per row of the column-major padded block. */
#include "cuda_internal.h"

/*
 * ELL (Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
 * processors", SC09, section 3.2): entry k of row i is stored at k * rows + i, so thread i of the
 * grid owns row i and, at every step k, the 32 threads of a warp read 32 consecutive column
 * indices and values: fully coalesced loads without any preprocessing.
 * Each thread walks its row in column order and stops at the row's first padding entry (column
 * -1, always at the end of the row); padding is never multiplied, so an Inf or NaN in x does not
 * reach rows that do not use it. y[i] is written once, by its own thread.
 * Bitwise reproducible (fixed sequential order per row, no atomics).
 * Cost: rows x width column indices and values read (padding included, up to each row's end),
 * nnz gathers from x. The host conversion refuses widths whose padding would explode.
 */

/* 256 threads: 8 warps per block, and a whole number of blocks fills an SM of 2048 threads. */
#define ELL_BLOCK 256
/* Entries of a row loaded before the first is used: 4 independent index + value loads per
 * thread keep enough bytes in flight to cover DRAM latency at full occupancy. */
#define ELL_UNROLL 4

template <typename Value, bool BetaZero>
__global__ void __launch_bounds__(ELL_BLOCK)
    ell_kernel(int64_t rows, int64_t width, const int32_t *__restrict__ col_indices,
               const Value *__restrict__ values, const Value *__restrict__ x, Value alpha,
               Value beta, Value *__restrict__ y) {
    const int64_t row = (int64_t)blockIdx.x * ELL_BLOCK + threadIdx.x;
    if (row >= rows) return;
    const Value sum = nzi_cuda_padded_row_sum<ELL_UNROLL, Value>(col_indices + row, values + row,
                                                                 rows, width, x);
    y[row] = BetaZero ? alpha * sum : alpha * sum + beta * y[row];
}

template <typename Value>
static nz_status_t ell_launch_typed(nz_context_t *ctx, int64_t rows, const nzi_ell_t *ell,
                                    double alpha, const void *x, double beta, void *y) {
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const unsigned blocks = (unsigned)((rows + ELL_BLOCK - 1) / ELL_BLOCK);
    const Value *values = (const Value *)ell->values;
    if (beta == 0.0)
        ell_kernel<Value, true><<<blocks, ELL_BLOCK, 0, stream>>>(
            rows, ell->width, ell->col_indices, values, (const Value *)x, (Value)alpha, Value(0),
            (Value *)y);
    else
        ell_kernel<Value, false><<<blocks, ELL_BLOCK, 0, stream>>>(
            rows, ell->width, ell->col_indices, values, (const Value *)x, (Value)alpha,
            (Value)beta, (Value *)y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

nz_status_t nzi_cuda_ell_launch(nz_context_t *ctx, nz_value_type_t value_type, int64_t rows,
                                const nzi_ell_t *ell, double alpha, const void *x, double beta,
                                void *y) {
    if (rows <= 0) return NZ_SUCCESS;
    return value_type == NZ_F32 ? ell_launch_typed<float>(ctx, rows, ell, alpha, x, beta, y)
                                : ell_launch_typed<double>(ctx, rows, ell, alpha, x, beta, y);
}

/* No preprocessing: the plan holds nothing beyond the matrix. */
static nz_status_t ell_setup(nz_spmv_plan_t *plan) {
    plan->state = NULL;
    plan->workspace_bytes = 0;
    plan->reproducible = 1;
    plan->vector_width = 1;
    return NZ_SUCCESS;
}

static nz_status_t ell_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                               double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    return nzi_cuda_ell_launch(plan->ctx, A->value_type, A->rows, &A->host.ell, alpha, x, beta, y);
}

static void ell_release(nz_spmv_plan_t *plan) { plan->state = NULL; }

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_ell_scalar_ops = {NZ_ALG_SCALAR, ell_setup,
                                                                ell_execute, ell_release};

template nz_status_t ell_launch_typed<float>(nz_context_t *, int64_t, const nzi_ell_t *, double,
                                             const void *, double, void *);
template nz_status_t ell_launch_typed<double>(nz_context_t *, int64_t, const nzi_ell_t *, double,
                                              const void *, double, void *);
