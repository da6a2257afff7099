/* spsv_syncfree.cu: GPU sparse triangular solve: device analysis and the synchronisation-free solve. */
#include "cuda_internal.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/atomic>
#include <string.h>

/*
 * Analysis (plan setup, all on the device). S = T for op N; for op T, S = T^T built by the
 * device transpose (nz_cuda_csr_transpose: deterministic, columns ascending) and the opposite
 * triangle taken, since T's lower triangle is T^T's upper one. As on the CPU (spsv_cpu.c) the
 * strict triangle of S is copied into the plan's own CSR E (int64 offsets, columns ascending,
 * T's value type): one thread per row finds the row's first column >= i by binary search (the
 * columns of a CSR row are sorted), which splits the row into its strict lower part, the
 * diagonal and its strict upper part; the counts are scanned (CUB) into E's offsets, and a warp
 * per row copies the contiguous part. NZ_NON_UNIT: the same thread stores the diagonal and
 * records the first row whose diagonal is missing or zero (atomicMin), refused with the CPU's
 * message. The level of each row (1 + the highest level of the rows it reads, 0 for none) comes
 * from a run of the solve's own kernel shape on integers (spsv_levels_kernel); a histogram of
 * the levels and two CUB max reductions give plan->levels and plan->max_level_rows, so
 * nz_spsv_plan_info reports what the CPU plan reports. Cost: one transpose for op T, O(nnz + n)
 * work, a few small device-to-host copies (the triangle's size, the bad rows, the level counts).
 *
 * Execute: the synchronisation-free SpTRSV of Liu, Li, Hogg and Vinter (Euro-Par 2016; CCPE
 * 2017, "A synchronization-free algorithm for parallel sparse triangular solves"), with the rows
 * taken in level order: no barrier between levels, each row waits only for the rows it reads.
 * One thread per row: it waits (acquire load, spinning) until the row of each entry's column is
 * solved, accumulates e_ik y_k in double in E's column order, forms
 *     y_i = (alpha x_i - sum) / d_i        (d_i = 1 for NZ_UNIT)
 * rounds once to the value type, stores it, fences (__threadfence) and publishes the row (release
 * store of the ready flag). The analysis sorts the rows by level (state->order, a stable radix
 * sort of the levels), and the threads take them in that order: the rows in flight at once are
 * those of one or two levels, independent of each other, so the solve runs at the memory
 * system's pace with one dependency latency per level. Taken in natural order instead, a window
 * of resident rows would hold whole chains (row i reads row i - 1 in a stencil's triangle) and
 * the solve would run one dependency latency per row of a chain (measured: 54.6 ms for the 128^3
 * Laplacian's lower triangle, against 0.8 ms for cuSPARSE; bench/results).
 *
 * Progress: the solve runs persistent warps, all resident at once (at most
 * SPSV_SOLVE_BLOCKS_PER_SM blocks an SM); a warp takes tickets t from a global counter (one
 * atomicAdd by lane 0), not from blockIdx, and its lanes take the rows order[32 t + lane], until
 * the rows run out. A row reads only rows of lower
 * levels, so at earlier positions of `order`: taken by warps that took their tickets earlier and
 * are therefore resident and running, or by lower lanes of the same warp, whose progress the
 * independent thread scheduling of sm_70 and later guarantees while a lane spins. By induction
 * every row finishes, whatever order the hardware schedules blocks in. Each warp takes exactly
 * one ticket past the rows; the warp that takes the last of those resets the counter to 0, so no
 * memset is needed before the next launch. Few threads are in flight: one block of 128 an SM
 * (16.9K threads on an H100). Waiting threads poll L2, and the more of them, the slower the
 * threads that are solving: on the 128^3 / 200^3 Laplacian triangles (H100, f64) 1, 2, 4, 8 and
 * 16 blocks an SM took 2.4, 2.7, 4.0, 6.9 and 12.1 ms at 128^3, and 33 / 66 / 100 / 132 blocks in
 * all 11.9 / 6.5 / 5.0 / 4.4 ms at 200^3 (docs/PERF_NOTES.md); a __nanosleep backoff between
 * polls cost 5-10% at one block an SM and is not used.
 *
 * Ready flags: a generation counter rather than a memset per execute. Each execute draws the
 * next generation g (1, 2, ...; host side, in the plan's state) and a row is solved in this
 * execute when its flag equals g; flags left by earlier executes hold smaller values. When the
 * counter would wrap, the flags are cleared once (cudaMemsetAsync) and g restarts at 1.
 *
 * Determinism: each row's sum runs on one thread in E's column order, and waiting changes when
 * a sum is formed, never its value: y is bitwise the same run to run
 * (and does not depend on the device). It is not bitwise the CPU's result (the CPU sums in the
 * value type, in column order).
 *
 * In place (x == y): row i's x_i is read by row i's thread before it writes y_i, and no other
 * thread reads x_i or writes y_i; y_k of solved rows is read through L2 (__ldcg),
 * never through a stale L1 line that an earlier read of x may have brought in.
 * alpha == 0: y = 0 without reading x. Execute allocates nothing.
 */

#define SPSV_BLOCK 128       /* 4 warps = 4 rows per block: small blocks start rows in ticket
                                order with little slack, as the paper's 4-warp blocks do */
#define SPSV_SOLVE_BLOCKS_PER_SM 1 /* the solve's persistent blocks per SM (128 threads) */
#define SPSV_SETUP_BLOCK 256 /* the analysis's element-wise kernels: memory-bound */
#define SPSV_FULL_MASK 0xffffffffu

typedef struct spsv_cuda_state {
    int64_t *row_offsets;  /* E: rows + 1 (device) */
    int32_t *col_indices;  /* E: nnz (at least one element) */
    void *values;          /* E: nnz of T's value type */
    void *diagonal;        /* rows of T's value type; NULL for NZ_UNIT */
    uint32_t *ready;       /* rows: the generation of the execute that solved the row */
    uint32_t *ticket;      /* the row counter; 0 between launches */
    int32_t *order;        /* rows: the rows by level (stable: ascending within a level) */
    uint32_t generation;   /* of the last execute (0: none yet) */
    int lower;             /* 1: E is lower, rows solved first to last */
} spsv_cuda_state_t;

/* ---- device helpers ------------------------------------------------------------------------ */

static __device__ __forceinline__ uint32_t load_acquire(const uint32_t *flag) {
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device> ref(*const_cast<uint32_t *>(flag));
    return ref.load(cuda::memory_order_acquire);
}

static __device__ __forceinline__ void store_release(uint32_t *flag, uint32_t value) {
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device> ref(*flag);
    ref.store(value, cuda::memory_order_release);
}

/* The warp's row in solve order (see "Progress"), or -1 for a warp past the last row. Every lane
 * must call it. `warps` is the number of warps in the launch. */
static __device__ __forceinline__ int32_t take_row(uint32_t *ticket, uint32_t warps, int32_t n,
                                                   int lower) {
    uint32_t t = 0;
    if ((threadIdx.x & 31) == 0) {
        t = atomicAdd(ticket, 1u);
        if (t == warps - 1) atomicExch(ticket, 0u); /* the launch's last ticket: reset */
    }
    t = __shfl_sync(SPSV_FULL_MASK, t, 0);
    if (t >= (uint32_t)n) return -1;
    return lower ? (int32_t)t : n - 1 - (int32_t)t;
}

/* ---- analysis kernels ---------------------------------------------------------------------- */

/* Thread i: row i of S (columns sorted). counts[i] = the entries of its strict `lower_fill`
 * triangle; with non_unit, diagonal[i] = s_ii, and bad[0] / bad[1] = the smallest row whose
 * diagonal is missing / zero. */
template <typename Value, typename Offset>
__global__ void __launch_bounds__(SPSV_SETUP_BLOCK)
spsv_count_kernel(int32_t n, int lower_fill, int non_unit, const Offset *__restrict__ row_offsets,
                  const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                  int64_t *__restrict__ counts, Value *__restrict__ diagonal,
                  int32_t *__restrict__ bad) {
    const int64_t i = (int64_t)blockIdx.x * SPSV_SETUP_BLOCK + threadIdx.x;
    if (i >= n) return;
    const int64_t begin = (int64_t)row_offsets[i], end = (int64_t)row_offsets[i + 1];
    int64_t low = begin, high = end; /* the first position with column >= i */
    while (low < high) {
        const int64_t mid = low + (high - low) / 2;
        if (col_indices[mid] < i)
            low = mid + 1;
        else
            high = mid;
    }
    const bool has_diagonal = low < end && col_indices[low] == i;
    counts[i] = lower_fill ? low - begin : end - low - (has_diagonal ? 1 : 0);
    if (!non_unit) return;
    if (!has_diagonal) {
        atomicMin(bad, (int32_t)i);
        return;
    }
    const Value d = values[low];
    diagonal[i] = d;
    if (d == Value(0)) atomicMin(bad + 1, (int32_t)i);
}

/* A warp per row of S (grid-stride): copy its strict triangle, a contiguous run of the row (the
 * first entries for a lower triangle, the last ones for an upper), to E. */
template <typename Value, typename Offset>
__global__ void __launch_bounds__(SPSV_SETUP_BLOCK)
spsv_fill_kernel(int32_t n, int lower_fill, const Offset *__restrict__ row_offsets,
                 const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                 const int64_t *__restrict__ e_offsets, int32_t *__restrict__ e_cols,
                 Value *__restrict__ e_values) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (SPSV_SETUP_BLOCK / 32);
    for (int64_t i = ((int64_t)blockIdx.x * SPSV_SETUP_BLOCK + threadIdx.x) / 32; i < n;
         i += warps) {
        const int64_t out = e_offsets[i], count = e_offsets[i + 1] - out;
        const int64_t from = lower_fill ? (int64_t)row_offsets[i]
                                        : (int64_t)row_offsets[i + 1] - count;
        for (int64_t k = lane; k < count; k += 32) {
            e_cols[out + k] = col_indices[from + k];
            e_values[out + k] = values[from + k];
        }
    }
}

/* The solve's shape on levels: level_plus_one[i] = 1 + level of row i (0: not yet known), the
 * level 1 + the highest level of the rows row i reads (0 when none); histogram[level]++. */
__global__ void __launch_bounds__(SPSV_BLOCK)
spsv_levels_kernel(int32_t n, int lower, uint32_t warps, const int64_t *__restrict__ e_offsets,
                   const int32_t *__restrict__ e_cols, uint32_t *level_plus_one, uint32_t *ticket,
                   uint32_t *histogram) {
    const int32_t row = take_row(ticket, warps, n, lower);
    if (row < 0) return;
    const int lane = threadIdx.x & 31;
    uint32_t highest = 0; /* the highest level + 1 of the rows read */
    for (int64_t k = e_offsets[row] + lane; k < e_offsets[row + 1]; k += 32) {
        const int32_t col = e_cols[k];
        uint32_t l;
        while ((l = load_acquire(level_plus_one + col)) == 0) {
        }
        highest = l > highest ? l : highest;
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        const uint32_t other = __shfl_down_sync(SPSV_FULL_MASK, highest, offset);
        highest = other > highest ? other : highest;
    }
    if (lane == 0) {
        atomicAdd(histogram + highest, 1u);
        store_release(level_plus_one + row, highest + 1);
    }
}

/* ---- the solve ----------------------------------------------------------------------------- */

/* One thread per row of E, the rows taken in level order (see the opening comment): a warp
 * takes a ticket t (one atomicAdd by lane 0) and its lanes the rows order[32 t + lane]. x and y
 * may be the same array: neither is __restrict__. */
template <typename Value>
__global__ void __launch_bounds__(SPSV_BLOCK)
spsv_solve_kernel(int32_t n, uint32_t warps, const int32_t *__restrict__ order,
                  const int64_t *__restrict__ e_offsets, const int32_t *__restrict__ e_cols,
                  const Value *__restrict__ e_values, const Value *__restrict__ diagonal,
                  double alpha, const Value *x, Value *y, uint32_t *ready, uint32_t *ticket,
                  uint32_t generation) {
    const uint32_t tickets = (uint32_t)(((int64_t)n + 31) / 32);
    for (;;) { /* a persistent warp: tickets until the rows run out */
        uint32_t t = 0;
        if ((threadIdx.x & 31) == 0) {
            t = atomicAdd(ticket, 1u);
            /* every warp takes exactly one ticket past the rows: the last of those resets */
            if (t == tickets + warps - 1) atomicExch(ticket, 0u);
        }
        t = __shfl_sync(SPSV_FULL_MASK, t, 0);
        if (t >= tickets) return;
        const int64_t position = (int64_t)t * 32 + (threadIdx.x & 31);
        if (position < n) {
            const int32_t row = order[position];
            /* x_i before anything writes y_i (in place) */
            const double rhs = alpha * (double)x[row];
            double sum = 0.0;
            const int64_t end = e_offsets[row + 1];
            for (int64_t k = e_offsets[row]; k < end; k++) {
                const int32_t col = e_cols[k];
                const double e = (double)e_values[k];
                while (load_acquire(ready + col) != generation) {
                }
                sum += e * (double)__ldcg(y + col);
            }
            double yi = rhs - sum;
            if (diagonal != NULL) yi /= (double)diagonal[row];
            y[row] = (Value)yi;
            __threadfence();
            store_release(ready + row, generation);
        }
    }
}

/* ---- host side ----------------------------------------------------------------------------- */

static void state_free(nz_context_t *ctx, spsv_cuda_state_t *state) {
    if (state == NULL) return;
    nz_cuda_free(ctx, state->row_offsets, (size_t)-1);
    nz_cuda_free(ctx, state->col_indices, (size_t)-1);
    nz_cuda_free(ctx, state->values, (size_t)-1);
    nz_cuda_free(ctx, state->diagonal, (size_t)-1);
    nz_cuda_free(ctx, state->ready, (size_t)-1);
    nz_cuda_free(ctx, state->ticket, (size_t)-1);
    nz_cuda_free(ctx, state->order, (size_t)-1);
    nzi_free(ctx, state);
}

/* Blocks for one warp per row of n rows, and the warps of that launch. */
static int64_t solve_blocks(int64_t n, uint32_t *warps) {
    const int64_t blocks = (n + SPSV_BLOCK / 32 - 1) / (SPSV_BLOCK / 32);
    *warps = (uint32_t)(blocks * (SPSV_BLOCK / 32));
    return blocks;
}

/* E (offsets, columns, values) and the diagonal from S, the strict `lower_fill` triangle. */
template <typename Value, typename Offset>
static nz_status_t take_triangle(nz_context_t *ctx, const nz_matrix_t *S, int lower_fill,
                                 int non_unit, spsv_cuda_state_t *state, int64_t *nnz) {
    nz_status_t status = NZ_SUCCESS;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const int32_t n = (int32_t)S->rows;
    const Offset *row_offsets = (const Offset *)S->device.row_offsets;
    const int32_t *col_indices = S->device.col_indices;
    const Value *values = (const Value *)S->device.values;
    int64_t *counts = NULL;
    int32_t *bad = NULL;
    void *temp = NULL;
    size_t temp_bytes = 0;
    int32_t bad_host[2] = {INT32_MAX, INT32_MAX};
    const int64_t blocks = ((int64_t)n + SPSV_SETUP_BLOCK - 1) / SPSV_SETUP_BLOCK;

    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&counts, (size_t)n * sizeof(int64_t),
                                    "the SpSV row counts"));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&bad, 2 * sizeof(int32_t), "the SpSV bad rows"));
    NZI_CHECK(nz_cuda_memcpy(ctx, bad, bad_host, sizeof bad_host, NZI_H2D));
    spsv_count_kernel<Value, Offset><<<(unsigned)blocks, SPSV_SETUP_BLOCK, 0, stream>>>(
        n, lower_fill, non_unit, row_offsets, col_indices, values, counts,
        (Value *)state->diagonal, bad);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(NULL, temp_bytes, counts,
                                                      state->row_offsets + 1, n, stream));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, &temp, temp_bytes > 0 ? temp_bytes : 1,
                                    "the SpSV scan workspace"));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(state->row_offsets, 0, sizeof(int64_t), stream));
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(temp, temp_bytes, counts,
                                                      state->row_offsets + 1, n, stream));
    NZI_CHECK(nz_cuda_memcpy(ctx, bad_host, bad, sizeof bad_host, NZI_D2H));
    if (bad_host[0] != INT32_MAX || bad_host[1] != INT32_MAX) {
        /* the first bad row, as the CPU's row-by-row check finds it */
        if (bad_host[0] < bad_host[1])
            status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                               "nz_spsv_plan_create: row %lld of T has no diagonal entry "
                               "(singular with NZ_NON_UNIT)", (long long)bad_host[0]);
        else
            status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                               "nz_spsv_plan_create: row %lld of T has a zero diagonal entry "
                               "(singular with NZ_NON_UNIT)", (long long)bad_host[1]);
        goto cleanup;
    }
    NZI_CHECK(nz_cuda_memcpy(ctx, nnz, state->row_offsets + n, sizeof(int64_t), NZI_D2H));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&state->col_indices,
                             (size_t)(*nnz > 0 ? *nnz : 1) * sizeof(int32_t),
                             "the SpSV triangle's column indices"));
    NZI_CHECK(nz_cuda_malloc(ctx, &state->values, (size_t)(*nnz > 0 ? *nnz : 1) * sizeof(Value),
                             "the SpSV triangle's values"));
    if (*nnz > 0) {
        const int64_t fill_blocks = nzi_cuda_grid_blocks(nzi_cuda(ctx), SPSV_SETUP_BLOCK, 4,
                                                         ((int64_t)n + 7) / 8);
        spsv_fill_kernel<Value, Offset><<<(unsigned)fill_blocks, SPSV_SETUP_BLOCK, 0, stream>>>(
            n, lower_fill, row_offsets, col_indices, values, state->row_offsets,
            state->col_indices, (Value *)state->values);
        NZI_CUDA_CHECK(ctx, cudaGetLastError());
    }
cleanup:
    nz_cuda_free(ctx, temp, (size_t)-1);
    nz_cuda_free(ctx, bad, (size_t)-1);
    nz_cuda_free(ctx, counts, (size_t)-1);
    return status;
}

/* rows[i] = i */
__global__ void spsv_iota_kernel(int32_t n, int32_t *rows) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        rows[i] = (int32_t)i;
}

/* plan->levels and plan->max_level_rows of E, and state->order: the rows sorted by level, a
 * stable radix sort, so ascending within a level (see the opening comment). n > 0. */
static nz_status_t take_levels(nz_context_t *ctx, int64_t n, spsv_cuda_state_t *state,
                               int64_t *levels, int64_t *widest) {
    nz_status_t status = NZ_SUCCESS;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    uint32_t *level_plus_one = NULL, *histogram = NULL, *result = NULL, *sorted_levels = NULL;
    int32_t *rows = NULL;
    void *temp = NULL;
    size_t temp_bytes = 0, bytes = 0;
    uint32_t result_host[2] = {0, 0};
    uint32_t warps = 0;
    const int64_t blocks = solve_blocks(n, &warps);

    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&level_plus_one, (size_t)n * sizeof(uint32_t),
                                    "the SpSV row levels"));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&histogram, (size_t)n * sizeof(uint32_t),
                                    "the SpSV level sizes"));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&result, 2 * sizeof(uint32_t),
                                    "the SpSV level counts"));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&sorted_levels, (size_t)n * sizeof(uint32_t),
                                    "the SpSV sorted levels"));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&rows, (size_t)n * sizeof(int32_t),
                                    "the SpSV row numbers"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&state->order, (size_t)n * sizeof(int32_t),
                             "the SpSV rows by level"));
    NZI_CUDA_CHECK(ctx, cub::DeviceReduce::Max(NULL, bytes, level_plus_one, result, (int)n, stream));
    temp_bytes = bytes;
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, bytes, level_plus_one,
                                                        sorted_levels, rows, state->order,
                                                        (int)n, 0, 32, stream));
    if (bytes > temp_bytes) temp_bytes = bytes;
    NZI_CHECK(nzi_cuda_malloc_async(ctx, &temp, temp_bytes > 0 ? temp_bytes : 1,
                                    "the SpSV reduction workspace"));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(level_plus_one, 0, (size_t)n * sizeof(uint32_t), stream));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(histogram, 0, (size_t)n * sizeof(uint32_t), stream));
    spsv_levels_kernel<<<(unsigned)blocks, SPSV_BLOCK, 0, stream>>>(
        (int32_t)n, state->lower, warps, state->row_offsets, state->col_indices, level_plus_one,
        state->ticket, histogram);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    /* the deepest level + 1 is the number of levels; the largest histogram bin the widest */
    bytes = temp_bytes;
    NZI_CUDA_CHECK(ctx, cub::DeviceReduce::Max(temp, bytes, level_plus_one, result, (int)n, stream));
    bytes = temp_bytes;
    NZI_CUDA_CHECK(ctx, cub::DeviceReduce::Max(temp, bytes, histogram, result + 1, (int)n, stream));
    spsv_iota_kernel<<<(unsigned)((n + SPSV_SETUP_BLOCK - 1) / SPSV_SETUP_BLOCK),
                       SPSV_SETUP_BLOCK, 0, stream>>>((int32_t)n, rows);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    bytes = temp_bytes;
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(temp, bytes, level_plus_one,
                                                        sorted_levels, rows, state->order,
                                                        (int)n, 0, 32, stream));
    NZI_CHECK(nz_cuda_memcpy(ctx, result_host, result, sizeof result_host, NZI_D2H));
    *levels = result_host[0];
    *widest = result_host[1];
cleanup:
    nz_cuda_free(ctx, rows, (size_t)-1);
    nz_cuda_free(ctx, sorted_levels, (size_t)-1);
    nz_cuda_free(ctx, temp, (size_t)-1);
    nz_cuda_free(ctx, result, (size_t)-1);
    nz_cuda_free(ctx, histogram, (size_t)-1);
    nz_cuda_free(ctx, level_plus_one, (size_t)-1);
    return status;
}

template <typename Value>
static nz_status_t take_triangle_of(nz_context_t *ctx, const nz_matrix_t *S, int lower_fill,
                                    int non_unit, spsv_cuda_state_t *state, int64_t *nnz) {
    return S->device.offset_type == NZ_I64
               ? take_triangle<Value, int64_t>(ctx, S, lower_fill, non_unit, state, nnz)
               : take_triangle<Value, int32_t>(ctx, S, lower_fill, non_unit, state, nnz);
}

extern "C" nz_status_t nz_cuda_spsv_plan_setup(nz_spsv_plan_t *plan) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *T = plan->T;
    nz_matrix_t *transposed = NULL;
    spsv_cuda_state_t *state = NULL;
    const int64_t n = T->rows;
    const size_t vs = nzi_value_size(T->value_type);
    const int non_unit = plan->diag == NZ_NON_UNIT;
    if (T->location != NZ_DEVICE || T->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "the GPU SpSV needs a device csr matrix");
    NZI_TRY(nzi_cuda_enter(ctx));
    state = (spsv_cuda_state_t *)nzi_calloc(ctx, 1, sizeof *state);
    if (state == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate the GPU SpSV plan state");
    /* op(T)'s triangle: T's own for op N, the other one for op T */
    state->lower = (plan->fill == NZ_LOWER) == (plan->op == NZ_OP_N);
    int64_t nnz = 0, levels = 0, widest = 0;
    if (n > 0) {
        const nz_matrix_t *S = T;
        if (plan->op == NZ_OP_T && T->nnz > 0) {
            NZI_CHECK(nz_cuda_csr_transpose(ctx, T, &transposed));
            S = transposed;
        }
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&state->row_offsets,
                                 ((size_t)n + 1) * sizeof(int64_t),
                                 "the SpSV triangle's row offsets"));
        if (non_unit)
            NZI_CHECK(nz_cuda_malloc(ctx, &state->diagonal, (size_t)n * vs, "the SpSV diagonal"));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&state->ready, (size_t)n * sizeof(uint32_t),
                                 "the SpSV ready flags"));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&state->ticket, sizeof(uint32_t),
                                 "the SpSV row counter"));
        NZI_CHECK(nz_cuda_memset(ctx, state->ready, 0, (size_t)n * sizeof(uint32_t)));
        NZI_CHECK(nz_cuda_memset(ctx, state->ticket, 0, sizeof(uint32_t)));
        /* the strict triangle of S that is E: for op T, T's `fill` triangle is S's other one */
        const int lower_fill = (plan->fill == NZ_LOWER) == (plan->op == NZ_OP_N);
        if (T->value_type == NZ_F32)
            NZI_CHECK(take_triangle_of<float>(ctx, S, lower_fill, non_unit, state, &nnz));
        else
            NZI_CHECK(take_triangle_of<double>(ctx, S, lower_fill, non_unit, state, &nnz));
        NZI_CHECK(take_levels(ctx, n, state, &levels, &widest));
        NZI_CHECK(nz_cuda_synchronize(ctx));
    }
    plan->nnz = nnz;
    plan->levels = levels;
    plan->max_level_rows = widest;
    plan->workspace_bytes = n > 0 ? ((size_t)n + 1) * sizeof(int64_t) +
                                        (size_t)nnz * (sizeof(int32_t) + vs) +
                                        (non_unit ? (size_t)n * vs : 0) +
                                        ((size_t)n + 1) * sizeof(uint32_t) +
                                        (size_t)n * sizeof(int32_t)
                                  : 0;
    plan->state = state;
    state = NULL;
cleanup:
    nzi_matrix_free(transposed);
    state_free(ctx, state);
    return status;
}

extern "C" void nz_cuda_spsv_plan_release(nz_spsv_plan_t *plan) {
    if (plan->state == NULL) return;
    if (plan->ctx->cuda != NULL) (void)cudaSetDevice(plan->ctx->device);
    state_free(plan->ctx, (spsv_cuda_state_t *)plan->state);
    plan->state = NULL;
}

extern "C" nz_status_t nz_cuda_spsv_execute(const nz_spsv_plan_t *plan, double alpha,
                                            const void *x, void *y) {
    nz_context_t *ctx = plan->ctx;
    spsv_cuda_state_t *state = (spsv_cuda_state_t *)plan->state;
    const nz_matrix_t *T = plan->T;
    const int64_t n = T->rows;
    if (state == NULL)
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "the SpSV plan has no analysis");
    NZI_TRY(nzi_cuda_enter(ctx));
    if (n == 0) return NZ_SUCCESS;
    /* y = op(T)^-1 0 = 0 exactly; x is not read (NaN in x does not propagate) */
    if (alpha == 0.0) return nzi_cuda_scale(ctx, T->value_type, n, 0.0, y);
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    if (state->generation == UINT32_MAX) {
        NZI_CUDA_TRY(ctx, cudaMemsetAsync(state->ready, 0, (size_t)n * sizeof(uint32_t), stream));
        state->generation = 0;
    }
    const uint32_t generation = ++state->generation;
    /* one thread per row, persistent warps: SPSV_SOLVE_BLOCKS_PER_SM blocks an SM, all resident
     * at once (so every ticket taken is being worked on), few enough that the waiting threads do
     * not crowd the memory system (see the opening comment) */
    int64_t blocks = (n + SPSV_BLOCK - 1) / SPSV_BLOCK;
    const int64_t resident = (int64_t)nzi_cuda(ctx)->sm_count * SPSV_SOLVE_BLOCKS_PER_SM;
    if (blocks > resident) blocks = resident;
    const uint32_t warps = (uint32_t)(blocks * (SPSV_BLOCK / 32));
    if (T->value_type == NZ_F32)
        spsv_solve_kernel<float><<<(unsigned)blocks, SPSV_BLOCK, 0, stream>>>(
            (int32_t)n, warps, state->order, state->row_offsets, state->col_indices,
            (const float *)state->values, (const float *)state->diagonal, alpha,
            (const float *)x, (float *)y, state->ready, state->ticket, generation);
    else
        spsv_solve_kernel<double><<<(unsigned)blocks, SPSV_BLOCK, 0, stream>>>(
            (int32_t)n, warps, state->order, state->row_offsets, state->col_indices,
            (const double *)state->values, (const double *)state->diagonal, alpha,
            (const double *)x, (double *)y, state->ready, state->ticket, generation);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}
