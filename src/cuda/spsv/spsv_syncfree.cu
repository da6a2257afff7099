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
 * from a run of the solve's shape on integers in natural order (spsv_levels_kernel: a thread per
 * row, the level itself the ready flag, as in the solve below); a histogram of the levels and
 * two CUB max reductions give plan->levels and plan->max_level_rows, so nz_spsv_plan_info
 * reports what the CPU plan reports. A stable radix sort of the levels gives state->order (the
 * rows by level, ascending within a level), and E is rewritten in that order into P (position p
 * holds row order[p], its diagonal too), so a warp's rows sit side by side in memory. Cost: one
 * transpose for op T, O(nnz + n) work, a few small device-to-host copies (the triangle's size,
 * the bad rows, the level counts).
 *
 * Execute: the synchronisation-free SpTRSV of Liu, Li, Hogg and Vinter (Euro-Par 2016; CCPE
 * 2017, "A synchronization-free algorithm for parallel sparse triangular solves"), with the rows
 * taken in level order: no barrier between levels, each row waits only for the rows it reads.
 * One thread per row: it loads its entries and, at once, the published values of every row it
 * reads (rows of up to SPSV_SHORT_ROW entries; longer rows one entry after another), spins on
 * those still pending, accumulates e_ik y_k in double in E's column order, forms
 *     y_i = (alpha x_i - sum) / d_i        (d_i = 1 for NZ_UNIT)
 * rounds once to the value type and publishes it. Taken in level order, the rows in flight at
 * once are those of a few levels, independent of each other, so the solve runs at the memory
 * system's pace with one dependency latency per level. Taken in natural order instead, a window
 * of resident rows would hold whole chains (row i reads row i - 1 in a stencil's triangle) and
 * the solve would run one dependency latency per row of a chain (measured: 54.6 ms for the 128^3
 * Laplacian's lower triangle, against 0.8 ms for cuSPARSE; docs/dev/PERF_NOTES.md).
 *
 * Publishing: the value is its own ready flag. Before the launch the plan's array `solved` is
 * filled with SPSV_PENDING (all bits set: a NaN; cudaMemsetAsync 0xff, one pass over n values);
 * a row stores its y_i there by a relaxed device-scope store (an aligned 4- or 8-byte store is
 * single-copy atomic), and a reader spins with relaxed device-scope loads (served by L2, never a
 * stale L1 line) until the value is not SPSV_PENDING. No fence and no separate flag: nothing else
 * has to become visible with the value. A computed y_i whose bits happen to equal SPSV_PENDING
 * (a NaN) is published and returned as the canonical NaN. y itself gets a plain store.
 *
 * Progress: the solve runs persistent warps (at most SPSV_SOLVE_BLOCKS_PER_SM blocks an SM); a
 * warp takes tickets t from a global counter (one atomicAdd by lane 0, the next one asked for
 * before the current rows are solved), not from blockIdx, and its lanes take the positions
 * 32 t + lane, until the rows run out. A row reads only rows of lower levels, so at earlier
 * positions: taken by warps that took their tickets earlier and are running (a warp solves the
 * smaller of the two tickets it holds first, so the smallest unsolved ticket is always some
 * running warp's current one), or by lower lanes of the same warp, whose progress the
 * independent thread scheduling of sm_70 and later guarantees while a lane spins. By induction
 * every row finishes, whatever order the hardware schedules blocks in. Each warp takes exactly
 * one ticket past the rows; the warp that takes the last of those resets the counter to 0, so no
 * memset is needed before the next launch. Few threads are in flight: one block of 128 an SM
 * (16.9K threads on an H100). Waiting threads poll L2, and the more of them, the slower the
 * threads that are solving (docs/dev/PERF_NOTES.md: 1, 2, 4 blocks an SM; two or four rows a lane
 * were 2.3x and 4.8x slower).
 *
 * Determinism: each row's sum runs on one thread in E's column order, and waiting changes when
 * a sum is formed, never its value: y is bitwise the same run to run
 * (and does not depend on the device). It is not bitwise the CPU's result (the CPU sums in the
 * value type, in column order).
 *
 * Jacobi sweeps (NZ_SPSV_JACOBI(k), nonzero/spsv.h): the analysis stops after E (no levels, no
 * order, E in row order) and keeps a second vector `work`; execute runs k kernels, y_m =
 * D^-1 (alpha x - E y_{m-1}) alternating between `solved` and `work`, the last into y, the first
 * forming y_0 = D^-1 alpha x on the fly from x (spsv_jacobi_kernel: 1, 4 or 32 threads a row by
 * E's mean row length, a fixed shuffle tree, so bitwise reproducible). No thread waits for
 * another.
 *
 * In place (x == y): row i's x_i is read by row i's thread before it writes y_i, and no other
 * thread reads x_i or writes y_i; the solved rows are read from `solved`, never from y.
 * alpha == 0: y = 0 without reading x. Execute allocates nothing.
 */

#define SPSV_BLOCK 128       /* 4 warps = 4 rows per block: small blocks start rows in ticket
                                order with little slack, as the paper's 4-warp blocks do */
#define SPSV_SOLVE_BLOCKS_PER_SM 1 /* the solve's persistent blocks per SM (128 threads) */
#define SPSV_LEVELS_BLOCKS_PER_SM 16 /* the level analysis's: a full SM of 128-thread blocks */
#define SPSV_SHORT_ROW 8     /* rows of at most this many entries load all their dependencies
                                at once (the rest: one after another) */
#define SPSV_SETUP_BLOCK 256 /* the analysis's element-wise kernels: memory-bound */
#define SPSV_FULL_MASK 0xffffffffu

typedef struct spsv_cuda_state {
    /* E during the analysis (row i of E at row_offsets[i]); after it, P: the same rows in solve
     * order (position p holds row order[p]; columns stay row numbers) */
    int64_t *row_offsets;  /* rows + 1 (device) */
    int32_t *col_indices;  /* nnz (at least one element) */
    void *values;          /* nnz of T's value type */
    void *diagonal;        /* rows of T's value type, by position after the analysis; NULL for
                              NZ_UNIT */
    void *solved;          /* rows of T's value type: the solve's published y (SPSV_PENDING
                              until the row is solved) */
    uint32_t *ticket;      /* the row counter; 0 between launches */
    int32_t *order;        /* rows: the rows by level (stable: ascending within a level) */
    int lower;             /* 1: E is lower, rows solved first to last */
    /* NZ_SPSV_JACOBI(k): E stays in row order, no levels; `solved` and `work` hold the sweeps */
    int sweeps;            /* k (0: the exact solve) */
    int lanes;             /* threads per row of a sweep (1, 4 or 32, from E's mean row) */
    void *work;            /* rows of T's value type */
} spsv_cuda_state_t;

/* ---- device helpers ------------------------------------------------------------------------ */

/* Relaxed device-scope loads and stores: a published value is its own ready flag (see
 * "Publishing" in the opening comment), so no fence orders anything around it. */
template <typename T>
static __device__ __forceinline__ T load_relaxed(const T *p) {
    cuda::atomic_ref<T, cuda::thread_scope_device> ref(*const_cast<T *>(p));
    return ref.load(cuda::memory_order_relaxed);
}

template <typename T>
static __device__ __forceinline__ void store_relaxed(T *p, T value) {
    cuda::atomic_ref<T, cuda::thread_scope_device> ref(*p);
    ref.store(value, cuda::memory_order_relaxed);
}

/* SPSV_PENDING: the all-ones bit pattern cudaMemsetAsync(0xff) leaves, a NaN that the solve
 * never publishes (a computed value with these bits is stored as the canonical NaN instead). */
static __device__ __forceinline__ bool spsv_pending(double v) {
    return __double_as_longlong(v) == -1LL;
}
static __device__ __forceinline__ bool spsv_pending(float v) { return __float_as_int(v) == -1; }
static __device__ __forceinline__ double spsv_publishable(double v) {
    return spsv_pending(v) ? __longlong_as_double(0x7ff8000000000000LL) : v;
}
static __device__ __forceinline__ float spsv_publishable(float v) {
    return spsv_pending(v) ? __int_as_float(0x7fc00000) : v;
}

/* The warp's ticket (lane 0's atomicAdd, broadcast). Tickets run past the last one `tickets`
 * exactly once per warp (a warp stops at its first such ticket), so the warp that takes ticket
 * tickets + warps - 1 resets the counter to 0 for the next launch. Every lane must call it. */
static __device__ __forceinline__ uint32_t take_ticket(uint32_t *ticket, uint32_t tickets,
                                                       uint32_t warps) {
    uint32_t t = 0;
    if ((threadIdx.x & 31) == 0) {
        t = atomicAdd(ticket, 1u);
        if (t == tickets + warps - 1) atomicExch(ticket, 0u);
    }
    return t;
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

/* The solve's shape on levels, in natural order (lower: 0, 1, ...; upper: n - 1, n - 2, ...): a
 * thread per row, persistent warps taking tickets of 32 rows. Row i reads the rows of its
 * entries e_offsets[i] .. ends[i] (ends NULL: e_offsets[i + 1]). level_plus_one[i] = 1 + the
 * level of row i (0: not yet known, so the value is its own ready flag), the level 1 + the
 * highest level of the rows row i reads (0 when none); histogram[level]++. */
__global__ void __launch_bounds__(SPSV_BLOCK)
spsv_levels_kernel(int32_t n, int lower, uint32_t warps, const int64_t *__restrict__ e_offsets,
                   const int64_t *__restrict__ ends, const int32_t *__restrict__ e_cols,
                   uint32_t *level_plus_one, uint32_t *ticket, uint32_t *histogram) {
    const uint32_t tickets = (uint32_t)(((int64_t)n + 31) / 32);
    for (;;) {
        const uint32_t t = __shfl_sync(SPSV_FULL_MASK, take_ticket(ticket, tickets, warps), 0);
        if (t >= tickets) return;
        const int64_t position = (int64_t)t * 32 + (threadIdx.x & 31);
        if (position >= n) continue;
        const int32_t row = lower ? (int32_t)position : n - 1 - (int32_t)position;
        uint32_t highest = 0; /* the highest level + 1 of the rows read */
        const int64_t end = ends != NULL ? ends[row] : e_offsets[row + 1];
        for (int64_t k = e_offsets[row]; k < end; k++) {
            const int32_t col = e_cols[k];
            uint32_t l;
            while ((l = load_relaxed(level_plus_one + col)) == 0) {
            }
            highest = l > highest ? l : highest;
        }
        atomicAdd(histogram + highest, 1u);
        store_relaxed(level_plus_one + row, highest + 1);
    }
}

/* counts[p] = the entries of row order[p] of E. */
__global__ void __launch_bounds__(SPSV_SETUP_BLOCK)
spsv_permute_count_kernel(int32_t n, const int32_t *__restrict__ order,
                          const int64_t *__restrict__ e_offsets, int64_t *__restrict__ counts) {
    const int64_t p = (int64_t)blockIdx.x * SPSV_SETUP_BLOCK + threadIdx.x;
    if (p >= n) return;
    const int32_t row = order[p];
    counts[p] = e_offsets[row + 1] - e_offsets[row];
}

/* A warp per position p (grid-stride): row order[p] of E (and its diagonal) to position p of P. */
template <typename Value>
__global__ void __launch_bounds__(SPSV_SETUP_BLOCK)
spsv_permute_fill_kernel(int32_t n, const int32_t *__restrict__ order,
                         const int64_t *__restrict__ e_offsets, const int32_t *__restrict__ e_cols,
                         const Value *__restrict__ e_values, const Value *__restrict__ diagonal,
                         const int64_t *__restrict__ p_offsets, int32_t *__restrict__ p_cols,
                         Value *__restrict__ p_values, Value *__restrict__ p_diagonal) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (SPSV_SETUP_BLOCK / 32);
    for (int64_t p = ((int64_t)blockIdx.x * SPSV_SETUP_BLOCK + threadIdx.x) / 32; p < n;
         p += warps) {
        const int32_t row = order[p];
        const int64_t from = e_offsets[row], out = p_offsets[p];
        const int64_t count = p_offsets[p + 1] - out;
        for (int64_t k = lane; k < count; k += 32) {
            p_cols[out + k] = e_cols[from + k];
            p_values[out + k] = e_values[from + k];
        }
        if (lane == 0 && diagonal != NULL) p_diagonal[p] = diagonal[row];
    }
}

/* ---- the solve ----------------------------------------------------------------------------- */

/* One thread per row, the rows taken in level order (see the opening comment): a warp takes
 * ticket t and its lanes the positions 32 t + lane of P, and asks for its next ticket before it
 * solves these rows, so the atomic's latency hides behind the rows. x and y may be the same
 * array: neither is __restrict__. */
template <typename Value>
__global__ void __launch_bounds__(SPSV_BLOCK)
spsv_solve_kernel(int32_t n, uint32_t warps, const int32_t *__restrict__ order,
                  const int64_t *__restrict__ p_offsets, const int32_t *__restrict__ p_cols,
                  const Value *__restrict__ p_values, const Value *__restrict__ p_diagonal,
                  double alpha, const Value *x, Value *y, Value *solved, uint32_t *ticket) {
    const uint32_t tickets = (uint32_t)(((int64_t)n + 31) / 32);
    uint32_t t = __shfl_sync(SPSV_FULL_MASK, take_ticket(ticket, tickets, warps), 0);
    while (t < tickets) { /* a persistent warp: tickets until the rows run out */
        const uint32_t next = take_ticket(ticket, tickets, warps);
        const int64_t position = (int64_t)t * 32 + (threadIdx.x & 31);
        if (position < n) {
            const int32_t row = order[position];
            /* x_i before anything writes y_i (in place) */
            const double rhs = alpha * (double)x[row];
            const int64_t begin = p_offsets[position], end = p_offsets[position + 1];
            double sum = 0.0;
            if (end - begin <= SPSV_SHORT_ROW) {
                /* a short row: its entries, then every dependency's value, loaded at once; then
                 * the waits, and the sum in column order */
                const int len = (int)(end - begin);
                int32_t col[SPSV_SHORT_ROW];
                double e[SPSV_SHORT_ROW];
                Value v[SPSV_SHORT_ROW];
#pragma unroll
                for (int k = 0; k < SPSV_SHORT_ROW; k++)
                    if (k < len) {
                        col[k] = p_cols[begin + k];
                        e[k] = (double)p_values[begin + k];
                    }
#pragma unroll
                for (int k = 0; k < SPSV_SHORT_ROW; k++)
                    if (k < len) v[k] = load_relaxed(solved + col[k]);
#pragma unroll
                for (int k = 0; k < SPSV_SHORT_ROW; k++)
                    if (k < len) {
                        while (spsv_pending(v[k])) v[k] = load_relaxed(solved + col[k]);
                        sum += e[k] * (double)v[k];
                    }
            } else {
                for (int64_t k = begin; k < end; k++) {
                    const int32_t c = p_cols[k];
                    const double ek = (double)p_values[k];
                    Value vk;
                    while (spsv_pending(vk = load_relaxed(solved + c))) {
                    }
                    sum += ek * (double)vk;
                }
            }
            double yi = rhs - sum;
            if (p_diagonal != NULL) yi /= (double)p_diagonal[position];
            const Value out = spsv_publishable((Value)yi);
            store_relaxed(solved + row, out);
            y[row] = out;
        }
        t = __shfl_sync(SPSV_FULL_MASK, next, 0);
    }
}

/* One Jacobi sweep of NZ_SPSV_JACOBI(k) (see "Jacobi sweeps" in the opening comment), LANES
 * threads per row of E in row order: out_i = (alpha x_i - sum_k e_ik in_k) / d_i; with first = 1
 * the first sweep, in_k = y_0,k = alpha x_k / d_k formed on the fly (in not read). The lanes of
 * a row take its entries round-robin and their partial sums meet in a fixed shuffle tree:
 * bitwise reproducible. x and out may be the same array (the last sweep of an in-place solve)
 * only when first = 0: row i's x_i is then read by the thread that writes out_i, before it does,
 * and no thread reads out. */
template <typename Value, int LANES>
__global__ void __launch_bounds__(SPSV_SETUP_BLOCK)
spsv_jacobi_kernel(int32_t n, const int64_t *__restrict__ e_offsets,
                   const int32_t *__restrict__ e_cols, const Value *__restrict__ e_values,
                   const Value *__restrict__ diagonal, double alpha, const Value *x,
                   const Value *__restrict__ in, Value *out, int first) {
    const int64_t thread = (int64_t)blockIdx.x * SPSV_SETUP_BLOCK + threadIdx.x;
    const int64_t row = thread / LANES;
    const int lane = (int)(thread % LANES);
    /* no early exit: every lane of the warp takes part in the shuffles */
    double sum = 0.0;
    if (row < n) {
        const int64_t end = e_offsets[row + 1];
        if (first)
            for (int64_t k = e_offsets[row] + lane; k < end; k += LANES) {
                const int32_t c = e_cols[k];
                double y0 = alpha * (double)x[c];
                if (diagonal != NULL) y0 /= (double)diagonal[c];
                sum += (double)e_values[k] * y0;
            }
        else
            for (int64_t k = e_offsets[row] + lane; k < end; k += LANES)
                sum += (double)e_values[k] * (double)__ldg(in + e_cols[k]);
    }
#pragma unroll
    for (int offset = LANES / 2; offset > 0; offset /= 2)
        sum += __shfl_down_sync(SPSV_FULL_MASK, sum, offset, LANES);
    if (lane != 0 || row >= n) return;
    double yi = alpha * (double)x[row] - sum;
    if (diagonal != NULL) yi /= (double)diagonal[row];
    out[row] = (Value)yi;
}

/* ---- host side ----------------------------------------------------------------------------- */

static void state_free(nz_context_t *ctx, spsv_cuda_state_t *state) {
    if (state == NULL) return;
    nz_cuda_free(ctx, state->row_offsets, (size_t)-1);
    nz_cuda_free(ctx, state->col_indices, (size_t)-1);
    nz_cuda_free(ctx, state->values, (size_t)-1);
    nz_cuda_free(ctx, state->diagonal, (size_t)-1);
    nz_cuda_free(ctx, state->solved, (size_t)-1);
    nz_cuda_free(ctx, state->work, (size_t)-1);
    nz_cuda_free(ctx, state->ticket, (size_t)-1);
    nz_cuda_free(ctx, state->order, (size_t)-1);
    nzi_free(ctx, state);
}

/* Persistent blocks of SPSV_BLOCK threads for n rows: at most per_sm an SM (all resident at
 * once), at most one thread per row; *warps = the warps of that launch. */
static int64_t persistent_blocks(nz_context_t *ctx, int64_t n, int per_sm, uint32_t *warps) {
    int64_t blocks = (n + SPSV_BLOCK - 1) / SPSV_BLOCK;
    const int64_t resident = (int64_t)nzi_cuda(ctx)->sm_count * per_sm;
    if (blocks > resident) blocks = resident;
    if (blocks < 1) blocks = 1;
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

/* order (device, n entries) = the rows of the n-row CSR (offsets, cols) sorted by level, a
 * stable radix sort, so ascending within a level; *levels, *widest the number of levels and the
 * rows of the widest (see the opening comment). Row i reads the rows of its entries offsets[i]
 * .. ends[i] (ends NULL: offsets[i + 1]), all below i (lower) or all above (upper). Used by the
 * GPU factorisation too (factor_syncfree.cu: the strict lower part of its pattern). n > 0. */
nz_status_t nzi_cuda_level_order(nz_context_t *ctx, int64_t n, int lower, const int64_t *offsets,
                                 const int64_t *ends, const int32_t *cols, int32_t *order,
                                 int64_t *levels, int64_t *widest) {
    nz_status_t status = NZ_SUCCESS;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    uint32_t *level_plus_one = NULL, *histogram = NULL, *result = NULL, *sorted_levels = NULL;
    uint32_t *ticket = NULL;
    int32_t *rows = NULL;
    void *temp = NULL;
    size_t temp_bytes = 0, bytes = 0;
    uint32_t result_host[2] = {0, 0};
    uint32_t warps = 0;
    const int64_t blocks = persistent_blocks(ctx, n, SPSV_LEVELS_BLOCKS_PER_SM, &warps);

    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&ticket, sizeof(uint32_t),
                                    "the level analysis's row counter"));
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
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(ticket, 0, sizeof(uint32_t), stream));
    NZI_CUDA_CHECK(ctx, cub::DeviceReduce::Max(NULL, bytes, level_plus_one, result, (int)n, stream));
    temp_bytes = bytes;
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, bytes, level_plus_one,
                                                        sorted_levels, rows, order,
                                                        (int)n, 0, 32, stream));
    if (bytes > temp_bytes) temp_bytes = bytes;
    NZI_CHECK(nzi_cuda_malloc_async(ctx, &temp, temp_bytes > 0 ? temp_bytes : 1,
                                    "the SpSV reduction workspace"));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(level_plus_one, 0, (size_t)n * sizeof(uint32_t), stream));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(histogram, 0, (size_t)n * sizeof(uint32_t), stream));
    spsv_levels_kernel<<<(unsigned)blocks, SPSV_BLOCK, 0, stream>>>(
        (int32_t)n, lower, warps, offsets, ends, cols, level_plus_one, ticket, histogram);
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
                                                        sorted_levels, rows, order,
                                                        (int)n, 0, 32, stream));
    NZI_CHECK(nz_cuda_memcpy(ctx, result_host, result, sizeof result_host, NZI_D2H));
    *levels = result_host[0];
    *widest = result_host[1];
cleanup:
    nz_cuda_free(ctx, ticket, (size_t)-1);
    nz_cuda_free(ctx, rows, (size_t)-1);
    nz_cuda_free(ctx, sorted_levels, (size_t)-1);
    nz_cuda_free(ctx, temp, (size_t)-1);
    nz_cuda_free(ctx, result, (size_t)-1);
    nz_cuda_free(ctx, histogram, (size_t)-1);
    nz_cuda_free(ctx, level_plus_one, (size_t)-1);
    return status;
}

/* E to P: the rows of E in the order of state->order (offsets by a scan of the permuted
 * counts), the diagonal by position; E's arrays are freed and P takes their place. n > 0. */
template <typename Value>
static nz_status_t permute_rows(nz_context_t *ctx, int64_t n, int64_t nnz,
                                spsv_cuda_state_t *state) {
    nz_status_t status = NZ_SUCCESS;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    int64_t *counts = NULL, *p_offsets = NULL;
    int32_t *p_cols = NULL;
    Value *p_values = NULL, *p_diagonal = NULL;
    void *temp = NULL;
    size_t temp_bytes = 0;
    const int64_t blocks = (n + SPSV_SETUP_BLOCK - 1) / SPSV_SETUP_BLOCK;
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&counts, (size_t)n * sizeof(int64_t),
                                    "the SpSV permuted row counts"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&p_offsets, ((size_t)n + 1) * sizeof(int64_t),
                             "the SpSV triangle's row offsets in solve order"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&p_cols, (size_t)(nnz > 0 ? nnz : 1) * sizeof(int32_t),
                             "the SpSV triangle's column indices in solve order"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&p_values, (size_t)(nnz > 0 ? nnz : 1) * sizeof(Value),
                             "the SpSV triangle's values in solve order"));
    if (state->diagonal != NULL)
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&p_diagonal, (size_t)n * sizeof(Value),
                                 "the SpSV diagonal in solve order"));
    spsv_permute_count_kernel<<<(unsigned)blocks, SPSV_SETUP_BLOCK, 0, stream>>>(
        (int32_t)n, state->order, state->row_offsets, counts);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(NULL, temp_bytes, counts, p_offsets + 1,
                                                      (int)n, stream));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, &temp, temp_bytes > 0 ? temp_bytes : 1,
                                    "the SpSV scan workspace"));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(p_offsets, 0, sizeof(int64_t), stream));
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(temp, temp_bytes, counts, p_offsets + 1,
                                                      (int)n, stream));
    {
        const int64_t fill_blocks = nzi_cuda_grid_blocks(nzi_cuda(ctx), SPSV_SETUP_BLOCK, 4,
                                                         (n + 7) / 8);
        spsv_permute_fill_kernel<Value><<<(unsigned)fill_blocks, SPSV_SETUP_BLOCK, 0, stream>>>(
            (int32_t)n, state->order, state->row_offsets, state->col_indices,
            (const Value *)state->values, (const Value *)state->diagonal, p_offsets, p_cols,
            p_values, p_diagonal);
        NZI_CUDA_CHECK(ctx, cudaGetLastError());
    }
    /* the kernels above read E on the stream; the frees below are stream-ordered or wait */
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(stream));
    nz_cuda_free(ctx, state->row_offsets, (size_t)-1);
    nz_cuda_free(ctx, state->col_indices, (size_t)-1);
    nz_cuda_free(ctx, state->values, (size_t)-1);
    nz_cuda_free(ctx, state->diagonal, (size_t)-1);
    state->row_offsets = p_offsets;
    state->col_indices = p_cols;
    state->values = p_values;
    state->diagonal = p_diagonal;
    p_offsets = NULL;
    p_cols = NULL;
    p_values = NULL;
    p_diagonal = NULL;
cleanup:
    nz_cuda_free(ctx, temp, (size_t)-1);
    nz_cuda_free(ctx, counts, (size_t)-1);
    nz_cuda_free(ctx, p_offsets, (size_t)-1);
    nz_cuda_free(ctx, p_cols, (size_t)-1);
    nz_cuda_free(ctx, p_values, (size_t)-1);
    nz_cuda_free(ctx, p_diagonal, (size_t)-1);
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
    state->sweeps = nzi_spsv_sweeps(plan->flags);
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
        NZI_CHECK(nz_cuda_malloc(ctx, &state->solved, (size_t)n * vs,
                                 "the SpSV published values"));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&state->ticket, sizeof(uint32_t),
                                 "the SpSV row counter"));
        NZI_CHECK(nz_cuda_memset(ctx, state->ticket, 0, sizeof(uint32_t)));
        /* the strict triangle of S that is E: for op T, T's `fill` triangle is S's other one */
        const int lower_fill = (plan->fill == NZ_LOWER) == (plan->op == NZ_OP_N);
        if (T->value_type == NZ_F32)
            NZI_CHECK(take_triangle_of<float>(ctx, S, lower_fill, non_unit, state, &nnz));
        else
            NZI_CHECK(take_triangle_of<double>(ctx, S, lower_fill, non_unit, state, &nnz));
        if (state->sweeps > 0) {
            /* Jacobi sweeps: E as it is, a second buffer, the lanes per row */
            NZI_CHECK(nz_cuda_malloc(ctx, &state->work, (size_t)n * vs,
                                     "the SpSV sweeps' second vector"));
            const int64_t mean = nnz / n;
            state->lanes = mean <= 4 ? 1 : mean <= 24 ? 4 : 32;
        } else {
            NZI_CHECK(nz_cuda_malloc(ctx, (void **)&state->order, (size_t)n * sizeof(int32_t),
                                     "the SpSV rows by level"));
            NZI_CHECK(nzi_cuda_level_order(ctx, n, state->lower, state->row_offsets, NULL,
                                           state->col_indices, state->order, &levels, &widest));
            if (T->value_type == NZ_F32)
                NZI_CHECK(permute_rows<float>(ctx, n, nnz, state));
            else
                NZI_CHECK(permute_rows<double>(ctx, n, nnz, state));
        }
        NZI_CHECK(nz_cuda_synchronize(ctx));
    }
    plan->nnz = nnz;
    plan->levels = levels;
    plan->max_level_rows = widest;
    plan->workspace_bytes = n > 0 ? ((size_t)n + 1) * sizeof(int64_t) +
                                        (size_t)nnz * (sizeof(int32_t) + vs) +
                                        (non_unit ? (size_t)n * vs : 0) +
                                        (size_t)n * vs + sizeof(uint32_t) +
                                        (state->sweeps > 0 ? (size_t)n * vs
                                                           : (size_t)n * sizeof(int32_t))
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

/* NZ_SPSV_JACOBI(k): k sweeps alternating between `solved` and `work`, the last one into y, the
 * first forming y_0 = D^-1 alpha x as it reads it (see the opening comment). In place (x == y)
 * with k = 1: x is copied to `work` first, since that sweep reads x at other rows. */
template <typename Value>
static nz_status_t jacobi_sweeps(nz_context_t *ctx, const spsv_cuda_state_t *state, int64_t n,
                                 double alpha, const void *x, void *y) {
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const int64_t blocks = (n * state->lanes + SPSV_SETUP_BLOCK - 1) / SPSV_SETUP_BLOCK;
    const Value *in = NULL;
    Value *buffers[2] = {(Value *)state->solved, (Value *)state->work};
    if (x == y && state->sweeps == 1) {
        NZI_CUDA_TRY(ctx, cudaMemcpyAsync(state->work, x, (size_t)n * sizeof(Value),
                                          cudaMemcpyDeviceToDevice, stream));
        x = state->work;
    }
    for (int m = 1; m <= state->sweeps; m++) {
        Value *out = m == state->sweeps ? (Value *)y : buffers[m & 1];
#define SPSV_JACOBI_LAUNCH(L)                                                                    \
    spsv_jacobi_kernel<Value, L><<<(unsigned)blocks, SPSV_SETUP_BLOCK, 0, stream>>>(              \
        (int32_t)n, state->row_offsets, state->col_indices, (const Value *)state->values,        \
        (const Value *)state->diagonal, alpha, (const Value *)x, in, out, m == 1)
        if (state->lanes == 32)
            SPSV_JACOBI_LAUNCH(32);
        else if (state->lanes == 4)
            SPSV_JACOBI_LAUNCH(4);
        else
            SPSV_JACOBI_LAUNCH(1);
#undef SPSV_JACOBI_LAUNCH
        NZI_CUDA_LAUNCH_CHECK(ctx);
        in = out;
    }
    return NZ_SUCCESS;
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
    if (state->sweeps > 0) {
        if (T->value_type == NZ_F32)
            return jacobi_sweeps<float>(ctx, state, n, alpha, x, y);
        return jacobi_sweeps<double>(ctx, state, n, alpha, x, y);
    }
    /* every row pending (SPSV_PENDING) */
    NZI_CUDA_TRY(ctx, cudaMemsetAsync(state->solved, 0xff, (size_t)n * nzi_value_size(T->value_type),
                                      stream));
    /* one thread per row, persistent warps: few enough that the waiting threads do not crowd the
     * memory system (see the opening comment) */
    uint32_t warps = 0;
    const int64_t blocks = persistent_blocks(ctx, n, SPSV_SOLVE_BLOCKS_PER_SM,
                                             &warps);
    if (T->value_type == NZ_F32)
        spsv_solve_kernel<float><<<(unsigned)blocks, SPSV_BLOCK, 0, stream>>>(
            (int32_t)n, warps, state->order, state->row_offsets, state->col_indices,
            (const float *)state->values, (const float *)state->diagonal, alpha,
            (const float *)x, (float *)y, (float *)state->solved, state->ticket);
    else
        spsv_solve_kernel<double><<<(unsigned)blocks, SPSV_BLOCK, 0, stream>>>(
            (int32_t)n, warps, state->order, state->row_offsets, state->col_indices,
            (const double *)state->values, (const double *)state->diagonal, alpha,
            (const double *)x, (double *)y, (double *)state->solved, state->ticket);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}
