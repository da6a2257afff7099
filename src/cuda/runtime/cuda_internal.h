/* cuda_internal.h: state and helpers shared by the CUDA backend's .cu files (C++ only). */
#ifndef NZI_CUDA_INTERNAL_H
#define NZI_CUDA_INTERNAL_H

#include "nzi.h"
#include "backend.h"

#include <cuda_runtime.h>
#include <stdlib.h>

#define NZI_SIDE_STREAMS 3

/* Per-context device state, created by nz_cuda_context_bind. Limits are read from the device,
 * never hard-coded. */
typedef struct nzi_cuda_state {
    int device;
    cudaStream_t stream;
    int sm_count;
    int max_threads_per_sm;
    int max_threads_per_block;
    size_t shared_per_block;        /* default per-block limit (48 KB) */
    size_t shared_per_block_optin;  /* opt-in maximum per block */
    size_t shared_per_sm;
    size_t l2_bytes;
    int warp_size;
    cudaEvent_t event_start, event_stop; /* for timing inside the library (plan tuning) */
    /* Every live allocation made through nz_cuda_malloc (public nz_device_malloc and internal
     * ones alike), so nz_cuda_free(ctx, p, (size_t)-1) finds the size, a foreign pointer is
     * ignored instead of freed, and nz_cuda_context_release can free what users leaked. */
    void **public_ptrs;
    size_t *public_sizes;
    unsigned char *public_pooled;   /* 1: from `pool` (nzi_cuda_malloc_async), freed in order */
    int public_count, public_capacity;
    /* The context's own stream-ordered memory pool for a call's temporary device memory (NULL
     * when the device has no memory pools: those allocations fall back to cudaMalloc). Up to
     * NZI_POOL_KEEP bytes stay cached between calls; the rest goes back at each synchronisation. */
    cudaMemPool_t pool;
    /* Side streams for independent launches that may overlap (nzi_cuda_fork / nzi_cuda_join),
     * created on first use; side_done[i] marks the end of side stream i's share. */
    cudaStream_t side[NZI_SIDE_STREAMS];
    cudaEvent_t side_done[NZI_SIDE_STREAMS], fork;
    bool side_ready;
    /* hySpMM's pipeline (streams, events, pinned staging) parked between calls, and the function
     * that frees it (src/cuda/spgemm/hyspmm_slots.cu); NULL when none is parked. */
    void *hyspmm_pool;
    void (*hyspmm_pool_free)(nz_context_t *ctx, void *pool);
} nzi_cuda_state_t;

#define NZI_POOL_KEEP ((uint64_t)256 << 20)
/* Larger blocks bypass the pool (cudaMalloc, freed with cudaFree): they would not stay cached,
 * and mapping fresh pool memory for them measured slower (H100: +30 ms for a 14 GB C). */
#define NZI_POOL_MAX_BLOCK ((size_t)64 << 20)

/* Fork: the side streams wait for the work queued so far on the context's stream (creating them
 * on first use). Join: the context's stream waits for everything queued on the side streams
 * since. Between the two, launches of independent work may go to nzi_cuda_stream_for(cs, k): k
 * = 0 is the context's stream, k > 0 a side stream (round robin). Memory allocated on the
 * context's stream before the fork may be used on the side streams and freed after the join. */
nz_status_t nzi_cuda_fork(nz_context_t *ctx);
nz_status_t nzi_cuda_join(nz_context_t *ctx);
static inline cudaStream_t nzi_cuda_stream_for(const nzi_cuda_state_t *cs, int k) {
    return k == 0 ? cs->stream : cs->side[(k - 1) % NZI_SIDE_STREAMS];
}

/* Temporary device memory for work on the context's stream: stream-ordered (from the context's
 * pool up to NZI_POOL_MAX_BLOCK; usable by that stream's later work, by the host or other streams
 * only after a synchronisation with it), counted and failure-injected like nz_cuda_malloc and
 * recorded in the same table, so nz_cuda_free frees it (in order, on the context's stream). */
nz_status_t nzi_cuda_malloc_async(nz_context_t *ctx, void **ptr, size_t bytes, const char *what);

static inline nzi_cuda_state_t *nzi_cuda(const nz_context_t *ctx) {
    return (nzi_cuda_state_t *)ctx->cuda;
}

/* Turn a CUDA error into a status with a message naming the call and the place. */
nz_status_t nzi_cuda_status(nz_context_t *ctx, cudaError_t err, const char *what, const char *file,
                            int line);
#define NZI_CUDA_TRY(ctx, call)                                                                 \
    do {                                                                                        \
        cudaError_t nzi_err_ = (call);                                                          \
        if (nzi_err_ != cudaSuccess)                                                            \
            return nzi_cuda_status((ctx), nzi_err_, #call, __FILE__, __LINE__);                 \
    } while (0)
/* After every kernel launch. */
#define NZI_CUDA_LAUNCH_CHECK(ctx) NZI_CUDA_TRY(ctx, cudaGetLastError())
/* The same for functions with a `status` variable and a `cleanup:` label (like NZI_CHECK). */
#define NZI_CUDA_CHECK(ctx, call)                                                               \
    do {                                                                                        \
        cudaError_t nzi_err_ = (call);                                                          \
        if (nzi_err_ != cudaSuccess) {                                                          \
            status = nzi_cuda_status((ctx), nzi_err_, #call, __FILE__, __LINE__);               \
            goto cleanup;                                                                       \
        }                                                                                       \
    } while (0)

/* Make the context's device current for this host thread (cheap when it already is). */
nz_status_t nzi_cuda_enter(nz_context_t *ctx);

/* y[0..n) = beta * y on the context's stream; beta == 0 writes zeros without reading y (so NaN
 * in y does not propagate). n == 0 launches nothing. */
/* The rows of an n-row device CSR sorted by level (src/cuda/spsv/spsv_syncfree.cu): row i reads
 * the rows of its entries offsets[i] .. ends[i] (ends NULL: offsets[i + 1]), all below i
 * (lower) or all above; order has n entries (device). Queued on the context's stream, synchronised
 * at the end (the level counts come back). */
nz_status_t nzi_cuda_level_order(nz_context_t *ctx, int64_t n, int lower, const int64_t *offsets,
                                 const int64_t *ends, const int32_t *cols, int32_t *order,
                                 int64_t *levels, int64_t *widest);
nz_status_t nzi_cuda_scale(nz_context_t *ctx, nz_value_type_t value_type, int64_t n, double beta,
                           void *y);

/* A context tunable (nz_tunables_t, read at plan setup): its value, or `fallback` for
 * NZ_TUNE_AUTO. nz_context_set_tunables lets only the values the kernels implement through. */
static inline int nzi_tune_pick(int value, int fallback) {
    return value != NZ_TUNE_AUTO ? value : fallback;
}

/* Blocks for a grid-stride kernel of `block` threads: `waves` times the number of blocks the
 * device holds at once (at least 1), never more than `needed` (when needed > 0). */
int64_t nzi_cuda_grid_blocks(const nzi_cuda_state_t *cs, int block, int waves, int64_t needed);

/* One algorithm family's entry points for CSR SpMV. setup does all preprocessing and allocates
 * everything execute needs (plan->state, plan->workspace_bytes, plan->reproducible,
 * plan->vector_width); execute allocates nothing; release frees plan->state.
 * The dispatcher (spmv_cuda.cu) makes the context's device current, calls setup and execute only
 * for matrices with rows > 0 and nnz > 0 (it handles empty ones itself, y = beta y), and calls
 * release only when plan->state is not NULL. */
typedef struct nzi_cuda_spmv_ops {
    nz_alg_t alg;
    nz_status_t (*setup)(nz_spmv_plan_t *plan);
    nz_status_t (*execute)(const nz_spmv_plan_t *plan, double alpha, const void *x, double beta,
                           void *y);
    void (*release)(nz_spmv_plan_t *plan);
} nzi_cuda_spmv_ops_t;

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_scalar_ops;       /* spmv_csr_scalar.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_vector_ops;       /* spmv_csr_vector.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_light_vector_ops; /* spmv_lightspmv.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_light_warp_ops;   /* spmv_lightspmv.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_ipcsr_ops;        /* spmv_ipcsr.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_adaptive_ops;     /* spmv_csr_adaptive.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_merge_ops;        /* spmv_merge.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_tiles_ops;        /* spmv_csr_tiles.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_split_ops;        /* spmv_csr_split.cu */
/* CSR-vector's lanes per row for A (the context's vector_width tunable, else the smallest power
 * of two >= a quarter of the mean row length, in [2, 32]); spmv_csr_vector.cu, also used by the
 * 16-bit column segments (spmv_csr_layout.cu). Rows > 0. */
int nzi_cuda_vector_width(const nz_context_t *ctx, const nz_matrix_t *A);
/* CSR-vector's warps per row for A run with `width` lanes per row and the plan's flags: more than
 * one only for width 32, rows too few to fill the device and not mixed precision (the context's
 * vector_warps tunable overrides); spmv_csr_vector.cu. Plans with 16-bit column segments run the
 * same W. */
int nzi_cuda_vector_warps(const nz_context_t *ctx, const nz_matrix_t *A, int width,
                          unsigned flags);

/* The first i in [0, n) with (keys[i] >> shift) >= value in keys sorted ascending, n if none: the
 * start of bucket `value` in sorted keys, found without atomics or a scan (the device transpose's
 * column starts, csr/tiles' tile starts). */
template <typename Key, typename Index>
static __device__ __forceinline__ Index nzi_lower_bound(const Key *__restrict__ keys, Index n,
                                                        uint64_t value, int shift) {
    Index low = 0, high = n;
    while (low < high) {
        const Index mid = low + (high - low) / 2;
        if ((uint64_t)(keys[mid] >> shift) < value)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

/* ---- formats other than CSR ---------------------------------------------------------------- */
/* A device matrix of format F != CSR keeps the host layout of F (nzi_ell_t, nzi_sell_t, ...) with
 * device pointers in it. device_formats.cu copies and frees those arrays; one .cu per format has
 * the kernels. */

/* Copy host matrix A (COO, ELL, SELL, HYB, BSR or DIA) to the device as dA (same format, arrays
 * zeroed), pinned staging, timed into dA->transfer_seconds. On failure dA holds no device array. */
nz_status_t nzi_cuda_format_upload(nz_context_t *ctx, nz_matrix_t *dA, const nz_matrix_t *A);
/* Free the device arrays of a non-CSR device matrix (NULL ones are skipped). */
void nzi_cuda_format_release(nz_matrix_t *dA);
/* What every non-CSR plan needs: NZ_OP_N, no NZ_PLAN_MIXED, and a chunk height / block size the
 * kernels handle (SELL: C a multiple of 32; BSR: 2 <= b <= 8). */
nz_status_t nzi_cuda_format_plan_check(const nz_spmv_plan_t *plan);

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_coo_atomic_ops;    /* spmv_coo.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_coo_segmented_ops; /* spmv_coo.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_ell_scalar_ops;    /* spmv_ell.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_sell_scalar_ops;   /* spmv_sell.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_hyb_atomic_ops;    /* spmv_hyb.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_hyb_segmented_ops; /* spmv_hyb.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_bsr_row_ops;       /* spmv_bsr.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_bsr_col_ops;       /* spmv_bsr.cu */
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_dia_scalar_ops;    /* spmv_dia.cu */

/* y = alpha E x + beta y for a device ELL block E of `rows` rows (spmv_ell.cu; HYB's ELL part).
 * Every row is written, width 0 included; rows > 0. */
nz_status_t nzi_cuda_ell_launch(nz_context_t *ctx, nz_value_type_t value_type, int64_t rows,
                                const nzi_ell_t *ell, double alpha, const void *x, double beta,
                                void *y);

/* COO entries sorted by row on the device, as y += alpha C x (spmv_coo.cu; COO and HYB's
 * remainder). prepare makes the workspace of the segmented reduction (*state, its device bytes
 * in *bytes); segmented == false (atomic scatter) needs none and leaves *state NULL.
 * accumulate runs the segmented reduction when state is not NULL, the atomic scatter otherwise;
 * nnz > 0. */
nz_status_t nzi_cuda_coo_prepare(nz_context_t *ctx, const nzi_coo_t *coo, int64_t nnz,
                                 nz_value_type_t value_type, bool segmented, void **state,
                                 size_t *bytes);
nz_status_t nzi_cuda_coo_accumulate(nz_context_t *ctx, const void *state, const nzi_coo_t *coo,
                                    int64_t nnz, nz_value_type_t value_type, double alpha,
                                    const void *x, void *y);
void nzi_cuda_coo_free(nz_context_t *ctx, void *state);
/* Release of a plan whose state is such a workspace (COO plans, HYB plans). */
void nzi_cuda_coo_plan_release(nz_spmv_plan_t *plan);

/* The carry runs of a tiled CSR kernel whose tiles end inside rows (csr/merge, csr/split; the
 * fix-up kernel: carry_fixup.cuh). Tile t's carry goes to row host_row[t] (>= rows: none); a run
 * is a maximal set of consecutive tiles with the same row. Runs of up to NZI_FIXUP_SHORT_RUN
 * tiles are summed by one thread (run_length[t] at the run's first tile, else 0), longer ones by
 * a block (long_runs: first tile, length, row). nzi_carry_runs_build lists them on the host from
 * host_row (O(num_tiles); csr/merge) and copies them into one device block of its own (bytes: its
 * size; nzi_carry_runs_free frees it); csr/split builds the same arrays on the device. */
#define NZI_FIXUP_SHORT_RUN 16
typedef struct nzi_carry_runs {
    int32_t *run_length; /* device, num_tiles; NULL when there is no run */
    int32_t *long_runs;  /* device, 3 x num_long, after run_length; NULL when none */
    int64_t num_short, num_long;
    int32_t *owned;      /* the block nzi_carry_runs_build allocated, or NULL */
    size_t bytes;
} nzi_carry_runs_t;
nz_status_t nzi_carry_runs_build(nz_context_t *ctx, int64_t num_tiles, int64_t rows,
                                 const int32_t *host_row, nzi_carry_runs_t *runs);
void nzi_carry_runs_free(nz_context_t *ctx, nzi_carry_runs_t *runs);

#ifdef __CUDACC__
/* Threads an SM holds on the architecture being compiled: 2048 on sm_80, sm_90 and sm_100; 1536
 * on the others the default build compiles for (sm_86, sm_89, sm_120). For the minimum blocks of
 * __launch_bounds__, which ptxas ignores with a warning where they ask for more than the SM
 * holds; the host side plans with the device's own count (nzi_cuda_state_t.max_threads_per_sm). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 800 && __CUDA_ARCH__ != 900 && __CUDA_ARCH__ != 1000
#define NZI_SM_MAX_THREADS 1536
#else
#define NZI_SM_MAX_THREADS 2048
#endif

/* Sum over a block of T threads (T a multiple of 32, at most 1024) through warp_sums[T / 32] in
 * shared memory; the result is valid in thread 0. Every thread of the block must call it. Fixed
 * order: bitwise reproducible. Used by the row-block kernels (IPCSR, CSR-Adaptive). */
template <typename Value, int T>
static __device__ __forceinline__ Value nzi_cuda_block_sum(Value v, Value *warp_sums) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int delta = 16; delta > 0; delta >>= 1) v += __shfl_down_sync(0xffffffffu, v, delta);
    if ((tid & 31) == 0) warp_sums[tid >> 5] = v;
    __syncthreads();
    v = Value(0);
    if (tid < 32) {
        v = tid < T / 32 ? warp_sums[tid] : Value(0);
#pragma unroll
        for (int delta = 16; delta > 0; delta >>= 1) v += __shfl_down_sync(0xffffffffu, v, delta);
    }
    return v;
}

/* Thread t's share of a dot product over n entries starting at cols / vals: entries t, t + T,
 * ..., four independent loads in flight per step. */
template <typename Value, int T>
static __device__ __forceinline__ Value nzi_cuda_strided_dot(const int32_t *__restrict__ cols,
                                                             const Value *__restrict__ vals,
                                                             int n, const Value *__restrict__ x) {
    Value sum = Value(0);
    int k = threadIdx.x;
    for (; n - k > 3 * T; k += 4 * T) {
        const int32_t c0 = __ldg(cols + k), c1 = __ldg(cols + k + T);
        const int32_t c2 = __ldg(cols + k + 2 * T), c3 = __ldg(cols + k + 3 * T);
        const Value v0 = __ldg(vals + k), v1 = __ldg(vals + k + T);
        const Value v2 = __ldg(vals + k + 2 * T), v3 = __ldg(vals + k + 3 * T);
        sum += v0 * __ldg(x + c0);
        sum += v1 * __ldg(x + c1);
        sum += v2 * __ldg(x + c2);
        sum += v3 * __ldg(x + c3);
    }
    for (; k < n; k += T) sum += __ldg(vals + k) * __ldg(x + __ldg(cols + k));
    return sum;
}

/* y[row] = alpha sum + beta y[row], not reading y when beta == 0 (BLAS semantics). */
template <typename Value>
static __device__ __forceinline__ void nzi_cuda_store_row(Value *__restrict__ y, int row, Value sum,
                                                          Value alpha, Value beta) {
    if (beta == Value(0))
        y[row] = alpha * sum;
    else
        y[row] = alpha * sum + beta * y[row];
}

/* Sum of `value` over aligned groups of Width consecutive lanes (Width a power of two <= 32);
 * every lane of the warp must call it; the group's first lane gets the total. A fixed shuffle
 * tree, so the result is bitwise reproducible. */
template <int Width, typename Value>
static __device__ __forceinline__ Value nzi_cuda_group_sum(Value value) {
#pragma unroll
    for (int offset = Width / 2; offset > 0; offset /= 2)
        value += __shfl_down_sync(0xffffffffu, value, offset, Width);
    return value;
}

/* A load of a matrix array (row offsets, column indices, values): read once per SpMV. Stream =
 * true (NZ_PLAN_CACHE_HINTS) issues ld.global.cs, "cache streaming, likely accessed once", which
 * marks the line evict-first in L1 and L2, so the matrix stream does not push x out of L2 between
 * its reuses (issue 19: on random 4M x 16 f64 an H100 probe ran 15% faster). Stream = false: the
 * read-only path (__ldg), as before. The loaded value is the same either way. */
template <bool Stream, typename T>
static __device__ __forceinline__ T nzi_ld_matrix(const T *address) {
    if (Stream) return __ldcs(address);
    return __ldg(address);
}

/* counts[j] = the nonzeros of device CSR matrix A in column j, j < A->cols (zeroed first; one
 * integer atomic per nonzero, launched on the context's stream): plan_timing.cu. The planner's
 * hot-column share and the reordering layout count with it. */
nz_status_t nzi_cuda_column_counts(nz_context_t *ctx, const nz_matrix_t *A, uint32_t *counts);

/* A read-only load that does not allocate in L1 (ld.global.nc.L1::no_allocate), for arrays read
 * once, in full lines, whose lines would only push gathered x out of L1: COO's row, column and
 * value arrays (spmv_coo.cu), the row-block kernels' staging in double (row_blocks.cuh), csr/tiles'
 * entries (spmv_csr_tiles.cu). Not for partial-line loads (CSR-vector's narrow vectors): L1 merges
 * those. 16-, 32- and 64-bit types. */
template <typename T>
static __device__ __forceinline__ T nzi_ld_no_l1(const T *address) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "nzi_ld_no_l1: 16-, 32- or 64-bit types");
    T value;
    if (sizeof(T) == 2) {
        unsigned short bits;
        asm("ld.global.nc.L1::no_allocate.b16 %0, [%1];" : "=h"(bits) : "l"(address));
        memcpy(&value, &bits, sizeof value);
    } else if (sizeof(T) == 8) {
        unsigned long long bits;
        asm("ld.global.nc.L1::no_allocate.b64 %0, [%1];" : "=l"(bits) : "l"(address));
        memcpy(&value, &bits, sizeof value);
    } else {
        unsigned bits;
        asm("ld.global.nc.L1::no_allocate.b32 %0, [%1];" : "=r"(bits) : "l"(address));
        memcpy(&value, &bits, sizeof value);
    }
    return value;
}

/*
 * 16-bit column indices (NZ_PLAN_COMPRESS_INDICES; built by spmv_csr_segments.cu, read by
 * CSR-vector): offsets[k] = col[k] - base, 16 bits, for every nonzero, with one 32-bit base
 *  - per row when CSR-vector runs V < 32 lanes per row (short rows): the row's smallest column,
 *    loaded once per row beside its offsets, so a nonzero costs one 16-bit load and an add;
 *  - per aligned segment of NZI_SEGMENT nonzeros when V == 32 (long rows, which the kernel walks
 *    in aligned steps of 32: the whole warp reads one segment's base, a broadcast): the
 *    segment's smallest column.
 * A row or segment whose columns span more than 65535 has base -1 and reads A's own 32-bit
 * indices (its offsets are 0).
 */
#define NZI_SEGMENT_SHIFT 5
#define NZI_SEGMENT (1 << NZI_SEGMENT_SHIFT)
#define NZI_SEGMENT_MAX_SPAN 65535
typedef struct nzi_col_segments {
    const int32_t *base;     /* per row (V < 32) or per segment (V == 32): smallest column, -1 */
    const uint16_t *offsets; /* per nonzero: column - base */
} nzi_col_segments_t;

/* CSR-vector (spmv_csr_vector.cu) of plan->A with `width` lanes per row (and the plain kernel's
 * loads in flight and warps per row), columns from seg: the same sums, bit for bit, as the plain
 * kernel of that width. */
nz_status_t nzi_cuda_csr_vector_segments(const nz_spmv_plan_t *plan, int width,
                                         nzi_col_segments_t seg, double alpha, const void *x,
                                         double beta, void *y);

/* CSR-vector's row bounds (spmv_csr_vector.cu):
 * lanes 0 and 1 of each group of V lanes load the row's two offsets (none when the row is past
 * the end, !active), the other lanes get them by shuffle. Every lane of the warp must call it. */
template <int V, bool Hints, typename Offset>
static __device__ __forceinline__ void nzi_cuda_vector_row_bounds(
    const Offset *__restrict__ row_offsets, int64_t row, bool active, Offset *begin, Offset *end) {
    const int lane = threadIdx.x & 31;
    const int lane_in_vector = lane & (V - 1);
    const int vector_base = lane & ~(V - 1);
    Offset bound = 0;
    if (active && lane_in_vector < 2)
        bound = nzi_ld_matrix<Hints>(row_offsets + row + lane_in_vector);
    *begin = __shfl_sync(0xffffffffu, bound, vector_base);
    *end = __shfl_sync(0xffffffffu, bound, vector_base + 1);
}

/* CSR-vector's end of a row: the group's sum (nzi_cuda_group_sum) to its first lane, which writes
 * y[row] = alpha sum (+ beta y[row]) in Accum, rounded once to Value. Every lane must call it. */
template <int V, bool BetaZero, typename Value, typename Accum>
static __device__ __forceinline__ void nzi_cuda_vector_store(Accum sum, bool active, int64_t row,
                                                             Accum alpha, Accum beta,
                                                             Value *__restrict__ y) {
    sum = nzi_cuda_group_sum<V>(sum);
    if (active && (threadIdx.x & (V - 1)) == 0)
        y[row] = (Value)(BetaZero ? alpha * sum : alpha * sum + beta * (Accum)y[row]);
}

/* Sum of one padded row (ELL, SELL, HYB's ELL part): entry k at cols[k * stride], vals[k * stride]
 * for k < width, padding (column -1, value 0) only at the end of the row. Unroll entries are
 * loaded before any is used, so that many loads are in flight; padding is never multiplied (an
 * Inf or NaN in x cannot leak through it) and the row's first padding ends the loop. The sum runs
 * in the row's column order, as CSR-scalar does: bitwise reproducible. */
template <int Unroll, typename Value>
static __device__ __forceinline__ Value nzi_cuda_padded_row_sum(const int32_t *__restrict__ cols,
                                                                const Value *__restrict__ vals,
                                                                int64_t stride, int64_t width,
                                                                const Value *__restrict__ x) {
    Value sum = Value(0);
    for (int64_t k = 0; k < width; k += Unroll) {
        int32_t col[Unroll];
        Value val[Unroll];
#pragma unroll
        for (int u = 0; u < Unroll; u++) col[u] = k + u < width ? __ldg(cols + (k + u) * stride) : -1;
#pragma unroll
        for (int u = 0; u < Unroll; u++)
            val[u] = col[u] >= 0 ? __ldg(vals + (k + u) * stride) : Value(0);
#pragma unroll
        for (int u = 0; u < Unroll; u++)
            if (col[u] >= 0) sum += val[u] * __ldg(x + col[u]);
        if (col[Unroll - 1] < 0) break;
    }
    return sum;
}
#endif

/* A^T of a device CSR matrix (src/cuda/spmv/spmv_transpose.cu); keep_order (may be NULL)
 * receives the positions in A of A^T's values: nnz entries of A's offset type, device memory
 * from nz_cuda_malloc (NULL when nnz == 0). */
nz_status_t nzi_cuda_csr_transpose_order(nz_context_t *ctx, const nz_matrix_t *A,
                                         nz_matrix_t **AT, void **keep_order);

/* Device arrays of the plan's matrix, typed. */
template <typename Offset>
static inline const Offset *nzi_dev_offsets(const nz_matrix_t *A) {
    return (const Offset *)A->device.row_offsets;
}

#endif /* NZI_CUDA_INTERNAL_H */
