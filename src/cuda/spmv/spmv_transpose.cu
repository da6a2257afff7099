/* spmv_transpose.cu: y = alpha A^T x + beta y for device CSR: a cached device transpose, and the CSR atomic scatter. */
#include "cuda_internal.h"

#include <cub/device/device_radix_sort.cuh>

/*
 * Two ways to multiply by A^T without the user building it:
 *
 * Cached transpose (every CSR algorithm except atomic). Plan setup builds A^T in CSR (= A in
 * CSC) on the device, nz_cuda_csr_transpose, and makes an inner op-N plan of the requested
 * algorithm on it; execute runs that plan. Costs one transpose (a radix sort of nnz keys) and a
 * second copy of A, once; then every product is an ordinary CSR SpMV, atomic-free and as
 * reproducible as the chosen algorithm.
 *
 * Atomic scatter (NZ_ALG_ATOMIC, op N and op T). No preprocessing and no extra memory: y = beta y,
 * then the nonzeros are cut into equal tiles, one warp per tile, lane l taking nonzeros
 * tile + l, tile + l + 32, ... (coalesced loads of col_indices and values). For op T each
 * nonzero a_ij adds alpha a_ij x_i to y_j with atomicAdd; for op N a warp-wide segmented scan
 * of the products, keyed by row, leaves one atomicAdd per row piece of 32 nonzeros. Balanced
 * whatever the row lengths, but the order of the atomic additions varies from run to run: not
 * bitwise reproducible (refused under NZ_PLAN_DETERMINISTIC). Meant for a single product, where
 * building the transpose would not pay off.
 */

/* ---- the device transpose ------------------------------------------------------------------ */

#define TRANSPOSE_BLOCK 256

/* Thread t writes t to order[t]: the original position of each nonzero, the sort's payload. */
template <typename Offset>
__global__ void iota_kernel(int64_t n, Offset *__restrict__ order) {
    const int64_t stride = (int64_t)gridDim.x * TRANSPOSE_BLOCK;
    for (int64_t t = (int64_t)blockIdx.x * TRANSPOSE_BLOCK + threadIdx.x; t < n; t += stride)
        order[t] = (Offset)t;
}

/* Thread j (0 .. cols) writes the start of column j in the column-sorted keys: a lower-bound
 * search, so the offsets come without atomics or a scan. */
template <typename Offset>
__global__ void column_starts_kernel(int32_t cols, Offset nnz, const uint32_t *__restrict__ sorted,
                                     Offset *__restrict__ starts) {
    const int64_t j = (int64_t)blockIdx.x * TRANSPOSE_BLOCK + threadIdx.x;
    if (j > cols) return;
    starts[j] = nzi_lower_bound(sorted, nnz, (uint64_t)j, 0);
}

/* The row holding nonzero k: the smallest r in [low, high] with row_offsets[r + 1] > k (empty
 * rows are skipped because their end equals the next row's start). */
template <typename Offset>
static __device__ __forceinline__ int32_t row_search(const Offset *__restrict__ row_offsets,
                                                     int32_t low, int32_t high, Offset k) {
    while (low < high) {
        const int32_t mid = low + (high - low) / 2;
        if (__ldg(row_offsets + mid + 1) > k)
            high = mid;
        else
            low = mid + 1;
    }
    return low;
}

/* Output position p of A^T takes nonzero order[p] of A: its row becomes the column index and
 * its value moves along. Grid-stride over p; reads of values are gathers, writes coalesce. */
template <typename Value, typename Offset>
__global__ void transpose_gather_kernel(int32_t rows, Offset nnz, const Offset *__restrict__ row_offsets,
                                        const Value *__restrict__ values,
                                        const Offset *__restrict__ order,
                                        int32_t *__restrict__ at_col_indices,
                                        Value *__restrict__ at_values) {
    const int64_t stride = (int64_t)gridDim.x * TRANSPOSE_BLOCK;
    for (int64_t p = (int64_t)blockIdx.x * TRANSPOSE_BLOCK + threadIdx.x; p < (int64_t)nnz;
         p += stride) {
        const Offset k = order[p];
        at_col_indices[p] = row_search<Offset>(row_offsets, 0, rows - 1, k);
        at_values[p] = __ldg(values + k);
    }
}

/* Bits needed for keys 0 .. n - 1 (at least 1): the radix sort skips the constant high bits. */
static int key_bits(int64_t n) {
    int bits = 1;
    while (bits < 31 && ((int64_t)1 << bits) < n) bits++;
    return bits;
}

/*
 * A^T of device CSR A as a new device CSR matrix with A's offset width (stable counting order:
 * within each row of A^T the column indices, i.e. A's rows, increase, so A^T is canonical).
 * Algorithm: a stable LSD radix sort (CUB DeviceRadixSort::SortPairs) of A's column indices
 * over ceil(log2(cols)) bits with the nonzero positions as payload; row offsets of A^T by a
 * lower-bound search per column of the sorted keys; then one gather per nonzero (its row by a
 * binary search in A's row offsets, its value). Deterministic, no atomics.
 * Cost: O(nnz x key bits / 8) sort traffic, O(nnz log rows) for the row searches; temporary
 * device memory about nnz x (4 + 2 x offset width) bytes plus CUB's scratch (two more key and
 * payload buffers), freed before returning. keep_order (may be NULL): receives the sorted
 * positions (nnz Offsets of device memory, the caller's to nz_cuda_free): AT's entry p took A's
 * value at position order[p].
 */
template <typename Value, typename Offset>
static nz_status_t csr_transpose_typed(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t *AT,
                                       void **keep_order) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const Offset nnz = (Offset)A->nnz;
    const int64_t cols = A->cols;
    uint32_t *sorted_keys = NULL;
    Offset *order_in = NULL, *order = NULL;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    const unsigned grid =
        (unsigned)nzi_cuda_grid_blocks(cs, TRANSPOSE_BLOCK, 4,
                                       ((int64_t)nnz + TRANSPOSE_BLOCK - 1) / TRANSPOSE_BLOCK);

    NZI_CHECK(nz_cuda_malloc(ctx, &AT->device.row_offsets, ((size_t)cols + 1) * sizeof(Offset),
                             "device transpose: row offsets"));
    if (nnz == 0) {
        NZI_CHECK(nz_cuda_memset(ctx, AT->device.row_offsets, 0, ((size_t)cols + 1) * sizeof(Offset)));
        goto cleanup;
    }
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&AT->device.col_indices, (size_t)nnz * sizeof(int32_t),
                             "device transpose: column indices"));
    NZI_CHECK(nz_cuda_malloc(ctx, &AT->device.values, (size_t)nnz * sizeof(Value),
                             "device transpose: values"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&sorted_keys, (size_t)nnz * sizeof(uint32_t),
                             "device transpose: sorted keys"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&order_in, (size_t)nnz * sizeof(Offset),
                             "device transpose: positions"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&order, (size_t)nnz * sizeof(Offset),
                             "device transpose: sorted positions"));
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(
                            NULL, scratch_bytes, (const uint32_t *)A->device.col_indices,
                            sorted_keys, (const Offset *)order_in, order, nnz, 0,
                            key_bits(cols), cs->stream));
    NZI_CHECK(nz_cuda_malloc(ctx, &scratch, scratch_bytes, "device transpose: sort scratch"));

    iota_kernel<Offset><<<grid, TRANSPOSE_BLOCK, 0, cs->stream>>>(nnz, order_in);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    /* column indices are >= 0, so reading them as unsigned keeps their order */
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(
                            scratch, scratch_bytes, (const uint32_t *)A->device.col_indices,
                            sorted_keys, (const Offset *)order_in, order, nnz, 0,
                            key_bits(cols), cs->stream));
    column_starts_kernel<Offset>
        <<<(unsigned)((cols + 1 + TRANSPOSE_BLOCK - 1) / TRANSPOSE_BLOCK), TRANSPOSE_BLOCK, 0,
           cs->stream>>>((int32_t)cols, nnz, sorted_keys, (Offset *)AT->device.row_offsets);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    transpose_gather_kernel<Value, Offset><<<grid, TRANSPOSE_BLOCK, 0, cs->stream>>>(
        (int32_t)A->rows, nnz, nzi_dev_offsets<Offset>(A), (const Value *)A->device.values, order,
        AT->device.col_indices, (Value *)AT->device.values);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    /* the temporaries are freed below: wait for the kernels (this also surfaces their faults) */
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));

cleanup:
    /* after a failure, work may still be queued on the buffers about to be freed */
    if (status < 0 && cudaStreamSynchronize(cs->stream) != cudaSuccess) (void)cudaGetLastError();
    nz_cuda_free(ctx, scratch, (size_t)-1);
    if (status == NZ_SUCCESS && keep_order != NULL)
        *keep_order = order; /* NULL when nnz == 0 */
    else
        nz_cuda_free(ctx, order, (size_t)-1);
    nz_cuda_free(ctx, order_in, (size_t)-1);
    nz_cuda_free(ctx, sorted_keys, (size_t)-1);
    return status;
}

/* A^T of device CSR A; *order (when keep_order is not NULL) as csr_transpose_typed says. */
nz_status_t nzi_cuda_csr_transpose_order(nz_context_t *ctx, const nz_matrix_t *A,
                                         nz_matrix_t **AT, void **keep_order) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    if (A->location != NZ_DEVICE || A->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "device transpose: needs a device CSR matrix, not %s on the %s",
                         nz_format_name(A->format), A->location == NZ_DEVICE ? "device" : "host");
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_TRY(nzi_matrix_new(ctx, &M, NZ_FORMAT_CSR, A->value_type, A->cols, A->rows, A->nnz));
    M->location = NZ_DEVICE;
    M->device.offset_type = A->device.offset_type;
    M->device.borrowed = false;
    if (A->device.offset_type == NZ_I64)
        NZI_CHECK((A->value_type == NZ_F32 ? csr_transpose_typed<float, int64_t>(ctx, A, M, keep_order)
                                           : csr_transpose_typed<double, int64_t>(ctx, A, M, keep_order)));
    else
        NZI_CHECK((A->value_type == NZ_F32 ? csr_transpose_typed<float, int32_t>(ctx, A, M, keep_order)
                                           : csr_transpose_typed<double, int32_t>(ctx, A, M, keep_order)));
    *AT = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

nz_status_t nz_cuda_csr_transpose(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t **AT) {
    return nzi_cuda_csr_transpose_order(ctx, A, AT, NULL);
}

/* ---- the CSR atomic scatter ---------------------------------------------------------------- */

/* 256 threads = 8 warps per block; each warp takes tiles of 32 x ATOMIC_ITEMS nonzeros, enough
 * per tile to amortise the two row searches that locate it. */
#define ATOMIC_BLOCK 256
#define ATOMIC_WARPS (ATOMIC_BLOCK / 32)
#define ATOMIC_ITEMS 8
#define ATOMIC_TILE (32 * ATOMIC_ITEMS)

/* Move `row` forward to the row of nonzero k (k never decreases for a lane): a few linear steps
 * for the common case of short rows, then a binary search up to the tile's last row. */
template <typename Offset>
static __device__ __forceinline__ int32_t advance_row(const Offset *__restrict__ row_offsets,
                                                      int32_t row, int32_t last_row, Offset k) {
#pragma unroll
    for (int step = 0; step < 4; step++) {
        if (row >= last_row || __ldg(row_offsets + row + 1) > k) return row;
        row++;
    }
    return row_search<Offset>(row_offsets, row, last_row, k);
}

template <typename Value, typename Offset, bool Transpose>
__global__ void __launch_bounds__(ATOMIC_BLOCK)
    csr_atomic_kernel(int32_t rows, Offset nnz, const Offset *__restrict__ row_offsets,
                      const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                      const Value *__restrict__ x, Value alpha, Value *__restrict__ y) {
    const int lane = threadIdx.x & 31;
    const int64_t warp = (int64_t)blockIdx.x * ATOMIC_WARPS + (threadIdx.x >> 5);
    const int64_t warps = (int64_t)gridDim.x * ATOMIC_WARPS;
    for (int64_t tile = warp; tile * ATOMIC_TILE < (int64_t)nnz; tile += warps) {
        const int64_t first = tile * ATOMIC_TILE;
        const int64_t last = first + ATOMIC_TILE <= (int64_t)nnz ? first + ATOMIC_TILE - 1
                                                                 : (int64_t)nnz - 1;
        /* lane 0 finds the tile's first row, lane 1 its last; the warp shares them */
        int32_t found = 0;
        if (lane < 2)
            found = row_search<Offset>(row_offsets, 0, rows - 1, (Offset)(lane == 0 ? first : last));
        const int32_t first_row = __shfl_sync(0xffffffffu, found, 0);
        const int32_t last_row = __shfl_sync(0xffffffffu, found, 1);
        int32_t row = first_row;
#pragma unroll 2
        for (int item = 0; item < ATOMIC_ITEMS; item++) {
            const int64_t position = first + item * 32 + lane;
            const bool valid = position <= last;
            const Offset k = valid ? (Offset)position : Offset(0);
            if (valid) row = advance_row<Offset>(row_offsets, row, last_row, k);
            if (Transpose) {
                if (valid) atomicAdd(y + __ldg(col_indices + k), alpha * __ldg(values + k) * __ldg(x + row));
            } else {
                /* the lanes' rows never decrease: an inclusive scan of the products within runs of
                 * equal rows leaves each run's sum in its last lane */
                Value sum = valid ? __ldg(values + k) * __ldg(x + __ldg(col_indices + k)) : Value(0);
                const int key = valid ? row : -1;
#pragma unroll
                for (int offset = 1; offset < 32; offset *= 2) {
                    const int other_key = __shfl_up_sync(0xffffffffu, key, offset);
                    const Value other = __shfl_up_sync(0xffffffffu, sum, offset);
                    if (lane >= offset && other_key == key) sum += other;
                }
                const int next_key = __shfl_down_sync(0xffffffffu, key, 1);
                if (valid && (lane == 31 || next_key != key)) atomicAdd(y + row, alpha * sum);
            }
        }
    }
}

template <typename Value, typename Offset>
static nz_status_t csr_atomic_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                     double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const nz_matrix_t *A = plan->A;
    const bool transpose = plan->op == NZ_OP_T;
    NZI_TRY(nzi_cuda_scale(ctx, A->value_type, transpose ? A->cols : A->rows, beta, y));
    const int64_t tiles = (A->nnz + ATOMIC_TILE - 1) / ATOMIC_TILE;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(cs, ATOMIC_BLOCK, 4,
                                                           (tiles + ATOMIC_WARPS - 1) / ATOMIC_WARPS);
    const Offset *offsets = nzi_dev_offsets<Offset>(A);
    const Value *values = (const Value *)A->device.values;
    if (transpose)
        csr_atomic_kernel<Value, Offset, true><<<blocks, ATOMIC_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, (Offset)A->nnz, offsets, A->device.col_indices, values,
            (const Value *)x, (Value)alpha, (Value *)y);
    else
        csr_atomic_kernel<Value, Offset, false><<<blocks, ATOMIC_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, (Offset)A->nnz, offsets, A->device.col_indices, values,
            (const Value *)x, (Value)alpha, (Value *)y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* No preprocessing and no state. */
static nz_status_t csr_atomic_setup(nz_spmv_plan_t *plan) {
    plan->state = NULL;
    plan->workspace_bytes = 0;
    plan->reproducible = 0;
    plan->vector_width = 0;
    return NZ_SUCCESS;
}

static nz_status_t csr_atomic_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                      double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    const bool wide = A->device.offset_type == NZ_I64;
    if (A->value_type == NZ_F32)
        return wide ? csr_atomic_launch<float, int64_t>(plan, alpha, x, beta, y)
                    : csr_atomic_launch<float, int32_t>(plan, alpha, x, beta, y);
    return wide ? csr_atomic_launch<double, int64_t>(plan, alpha, x, beta, y)
                : csr_atomic_launch<double, int32_t>(plan, alpha, x, beta, y);
}

static void csr_atomic_release(nz_spmv_plan_t *plan) { plan->state = NULL; }

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_atomic_ops = {
    NZ_ALG_ATOMIC, csr_atomic_setup, csr_atomic_execute, csr_atomic_release};

/* ---- op(A) = A^T through the dispatcher (spmv_cuda.cu) ------------------------------------- */

/* The cached-transpose plan: A^T on the device and an op-N plan of the chosen family on it. */
typedef struct transpose_state {
    nz_matrix_t *AT;
    nz_spmv_plan_t inner;
} transpose_state_t;

void nzi_cuda_transpose_release(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops) {
    if (ops->alg == NZ_ALG_ATOMIC) {
        ops->release(plan);
        return;
    }
    transpose_state_t *st = (transpose_state_t *)plan->state;
    if (st == NULL) return;
    if (st->inner.state != NULL) ops->release(&st->inner);
    nzi_matrix_free(st->AT);
    nzi_free(plan->ctx, st);
    plan->state = NULL;
}

/* Called with the context's device current. Matrices without columns or nonzeros need no
 * state: execute reduces them to y = beta y. */
nz_status_t nzi_cuda_transpose_setup(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    transpose_state_t *st = NULL;

    if (A->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_spmv_plan_create: op(A) = A^T is implemented on the GPU for csr "
                         "matrices, not %s (convert to csr, or transpose on the host)",
                         nz_format_name(A->format));
    if (A->rows == 0 || A->cols == 0 || A->nnz == 0) return NZ_SUCCESS;
    if (ops->alg == NZ_ALG_ATOMIC) return ops->setup(plan);

    st = (transpose_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "nz_spmv_plan_create: cannot allocate the "
                         "transpose plan state");
    plan->state = st;
    NZI_CHECK(nz_cuda_csr_transpose(ctx, A, &st->AT));
    st->inner.magic = NZI_PLAN_MAGIC;
    st->inner.ctx = ctx;
    st->inner.A = st->AT;
    st->inner.op = NZ_OP_N;
    st->inner.alg = plan->alg;
    st->inner.flags = plan->flags;
    st->inner.backend = plan->backend;
    st->inner.ops = plan->ops;
    st->inner.impl = ops;
    st->inner.reproducible = 1;
    NZI_CHECK(ops->setup(&st->inner));
    plan->reproducible = st->inner.reproducible;
    plan->vector_width = st->inner.vector_width;
    plan->vector_warps = st->inner.vector_warps;
    plan->workspace_bytes = ((size_t)A->cols + 1) * (A->device.offset_type == NZ_I64 ? 8u : 4u) +
                            (size_t)A->nnz * (sizeof(int32_t) + nzi_value_size(A->value_type)) +
                            st->inner.workspace_bytes;
cleanup:
    if (status < 0) nzi_cuda_transpose_release(plan, ops);
    return status;
}

nz_status_t nzi_cuda_transpose_execute(const nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops,
                                       double alpha, const void *x, double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    if (A->cols == 0) return NZ_SUCCESS;
    if (A->rows == 0 || A->nnz == 0 || alpha == 0.0)
        return nzi_cuda_scale(plan->ctx, A->value_type, A->cols, beta, y);
    if (ops->alg == NZ_ALG_ATOMIC) return ops->execute(plan, alpha, x, beta, y);
    const transpose_state_t *st = (const transpose_state_t *)plan->state;
    if (st == NULL)
        return nzi_error(plan->ctx, NZ_ERR_INVALID_HANDLE, "nz_spmv_execute: the transpose plan "
                         "has no transpose");
    return ops->execute(&st->inner, alpha, x, beta, y);
}

template nz_status_t csr_transpose_typed<float, int32_t>(nz_context_t *, const nz_matrix_t *,
                                                         nz_matrix_t *, void **);
template nz_status_t csr_transpose_typed<float, int64_t>(nz_context_t *, const nz_matrix_t *,
                                                         nz_matrix_t *, void **);
template nz_status_t csr_transpose_typed<double, int32_t>(nz_context_t *, const nz_matrix_t *,
                                                          nz_matrix_t *, void **);
template nz_status_t csr_transpose_typed<double, int64_t>(nz_context_t *, const nz_matrix_t *,
                                                          nz_matrix_t *, void **);
template nz_status_t csr_atomic_launch<float, int32_t>(const nz_spmv_plan_t *, double, const void *,
                                                       double, void *);
template nz_status_t csr_atomic_launch<float, int64_t>(const nz_spmv_plan_t *, double, const void *,
                                                       double, void *);
template nz_status_t csr_atomic_launch<double, int32_t>(const nz_spmv_plan_t *, double,
                                                        const void *, double, void *);
template nz_status_t csr_atomic_launch<double, int64_t>(const nz_spmv_plan_t *, double,
                                                        const void *, double, void *);
