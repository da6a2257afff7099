/* spmv_dia.cu: DIA SpMV on the GPU for banded matrices: one thread per row, looping over the diagonals. */
#include "cuda_internal.h"

/*
 * DIA (Bell & Garland, SC09, section 3.1): diagonal d (column offset offsets[d] = j - i) is stored
 * as a full column of `rows` values, row i at d * rows + i. Thread i of the grid owns row i and
 * visits the diagonals in ascending offset order (the row's column order): at each diagonal the
 * threads of a warp read consecutive values (coalesced) and consecutive entries of x. Columns
 * outside [0, cols) are skipped, so x is never read out of range; inside the matrix the zero fill
 * of a diagonal is multiplied like any stored value, as the CPU kernel and cuSPARSE do (a
 * documented property of DIA: 0 * Inf = NaN).
 * The offsets are read by every thread of a block at the same address (a broadcast served by the
 * cache). y[i] is written once, by its own thread.
 * Bitwise reproducible (fixed sequential order per row, no atomics).
 * Cost: num_diagonals x rows values read, rows x num_diagonals gathers (contiguous) from x.
 */

/* 256 threads: 8 warps per block, a whole number of blocks fills an SM of 2048 threads. */
#define DIA_BLOCK 256
/* Diagonals whose values are loaded before the first is used (loads in flight per thread). */
#define DIA_UNROLL 4

template <typename Value, bool BetaZero>
__global__ void __launch_bounds__(DIA_BLOCK)
    dia_kernel(int64_t rows, int64_t cols, int64_t num_diagonals,
               const int64_t *__restrict__ offsets, const Value *__restrict__ values,
               const Value *__restrict__ x, Value alpha, Value beta, Value *__restrict__ y) {
    const int64_t row = (int64_t)blockIdx.x * DIA_BLOCK + threadIdx.x;
    if (row >= rows) return;
    Value sum = Value(0);
    for (int64_t d = 0; d < num_diagonals; d += DIA_UNROLL) {
        int64_t col[DIA_UNROLL];
        Value val[DIA_UNROLL];
#pragma unroll
        for (int u = 0; u < DIA_UNROLL; u++) {
            col[u] = d + u < num_diagonals ? row + __ldg(offsets + d + u) : -1;
            if (col[u] >= cols) col[u] = -1;
        }
#pragma unroll
        for (int u = 0; u < DIA_UNROLL; u++)
            val[u] = col[u] >= 0 ? __ldg(values + (d + u) * rows + row) : Value(0);
#pragma unroll
        for (int u = 0; u < DIA_UNROLL; u++)
            if (col[u] >= 0) sum += val[u] * __ldg(x + col[u]);
    }
    y[row] = BetaZero ? alpha * sum : alpha * sum + beta * y[row];
}

template <typename Value>
static nz_status_t dia_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                              double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const nzi_dia_t *m = &A->host.dia;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const unsigned blocks = (unsigned)((A->rows + DIA_BLOCK - 1) / DIA_BLOCK);
    const Value *values = (const Value *)m->values;
    if (beta == 0.0)
        dia_kernel<Value, true><<<blocks, DIA_BLOCK, 0, stream>>>(
            A->rows, A->cols, m->num_diagonals, m->offsets, values, (const Value *)x,
            (Value)alpha, Value(0), (Value *)y);
    else
        dia_kernel<Value, false><<<blocks, DIA_BLOCK, 0, stream>>>(
            A->rows, A->cols, m->num_diagonals, m->offsets, values, (const Value *)x,
            (Value)alpha, (Value)beta, (Value *)y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* No preprocessing: the plan holds nothing beyond the matrix. */
static nz_status_t dia_setup(nz_spmv_plan_t *plan) {
    plan->state = NULL;
    plan->workspace_bytes = 0;
    plan->reproducible = 1;
    plan->vector_width = 1;
    return NZ_SUCCESS;
}

static nz_status_t dia_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                               double beta, void *y) {
    return plan->A->value_type == NZ_F32 ? dia_launch<float>(plan, alpha, x, beta, y)
                                         : dia_launch<double>(plan, alpha, x, beta, y);
}

static void dia_release(nz_spmv_plan_t *plan) { plan->state = NULL; }

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_dia_scalar_ops = {NZ_ALG_SCALAR, dia_setup,
                                                                dia_execute, dia_release};

template nz_status_t dia_launch<float>(const nz_spmv_plan_t *, double, const void *, double,
                                       void *);
template nz_status_t dia_launch<double>(const nz_spmv_plan_t *, double, const void *, double,
                                        void *);
