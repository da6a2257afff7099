/* spmv_coo.cu: COO SpMV on the GPU: atomic scatter, and a reproducible segmented reduction. */
#include "cuda_internal.h"

#include <string.h>

/*
 * Both algorithms cut the row-sorted entries into segments of SEGMENT = 32 x COO_ITEMS consecutive
 * entries, one warp per segment (grid-stride over segments). The warp reads its segment in
 * COO_ITEMS rounds of 32 consecutive entries (coalesced row, column and value loads, which skip
 * L1 so that it keeps gathered entries of x; all rounds' loads are issued before the first
 * product is formed, so many are in flight), and reduces the products of each round by a
 * segmented inclusive scan over the lanes keyed by row (a ballot marks where each row's run
 * starts, then a fixed shuffle tree of 5 steps moves the sums, Sengupta et al., "Scan
 * primitives for GPU computing", 2007), adding
 * the running sum of the row that continues from the previous round. The lane holding the last
 * entry of a row within the segment (a run end) then owns that row's segment sum.
 *
 * NZ_ALG_ATOMIC (Bell & Garland's COO idea with atomics instead of their carry pass): y = beta y
 * first (a separate kernel; zeros when beta == 0, y never read), then every run end does
 * atomicAdd(y[row], alpha * sum): one atomic per row per segment instead of one per entry. The
 * order in which segments reach a row shared by several segments varies from run to run, so the
 * result is NOT bitwise reproducible (plan->reproducible = 0).
 *
 * NZ_ALG_SEGMENTED: no floating-point atomics. A row that lies inside one segment is finished by
 * its run end: y[row] += alpha * sum (y was scaled by beta first, or written by HYB's ELL part).
 * A row that crosses segment boundaries ("chain" of segments a .. b) is split: segment a's last
 * run writes its sum to tail[a], every middle segment (all entries of that row) to tail[m], and
 * segment b's first run to head[b]. A second kernel then sums each chain in a fixed order (a warp
 * per chain: lane l takes tails a + l, a + l + 32, ... sequentially, a fixed shuffle tree, then
 * head[b]) and adds alpha times it to y[row]. The chains depend only on the structure, so plan
 * setup lists them (the rows at segment boundaries are gathered on the device and matched on the
 * host). Every row is written exactly once, by a fixed thread, with a fixed summation order:
 * bitwise reproducible.
 *
 * Cost: one pass over the entries (2 indices + value), nnz gathers from x, one pass over y for
 * the scaling; the segmented variant adds 2 x (nnz / SEGMENT) partial sums and one pass over the
 * chains. Setup: O(nnz / SEGMENT) device-to-host and host work.
 */

/* 256 threads = 8 warps (8 segments) per block; grid-stride with a few waves of blocks. */
#define COO_BLOCK 256
#define COO_WARPS (COO_BLOCK / 32)
#define COO_WAVES 4
/* Rounds of 32 entries per warp segment: 8 x 3 loads in flight per lane, and a chain of segments
 * is only needed for rows longer than about 256 entries. */
#define COO_ITEMS 8
#define COO_SEGMENT (32 * COO_ITEMS)
/* Blocks an SM the segment kernel is compiled for. Unbounded it takes 56 registers in single
 * precision (four blocks, half the SM's threads); at 48 it keeps everything in registers, so five.
 * Double precision needs 58-64 registers: five blocks spill (28-44 bytes a thread) and R-MAT 20
 * then ran 140 us against 125 (H100, bench/results/h100-2026-11-26-s15-coo-light-railprobe-
 * 8ff88ba.txt); single at five: 98.3 against 99.4 us. */
#ifndef COO_MIN_BLOCKS_F32
#define COO_MIN_BLOCKS_F32 5
#endif
#ifndef COO_MIN_BLOCKS_F64
#define COO_MIN_BLOCKS_F64 4
#endif
#define COO_MIN_BLOCKS(Value) (sizeof(Value) == 4 ? COO_MIN_BLOCKS_F32 : COO_MIN_BLOCKS_F64)
/* Rows never reach INT32_MAX (at most 2^31 - 1 rows, indices < rows): the key of empty lanes. */
#define COO_NO_ROW INT32_MAX

/* The segmented plan's workspace (device arrays, except the struct itself). */
typedef struct coo_state {
    int64_t num_segments;
    int64_t num_chains;
    void *head, *tail;        /* Value[num_segments]: a segment's first / last run when partial */
    int32_t *chain_row;       /* num_chains: the row a chain of segments belongs to */
    int64_t *chain_first;     /* num_chains: its first segment a (tail[a] .. tail[b - 1]) */
    int64_t *chain_last;      /* num_chains: its last segment b (head[b]) */
    size_t bytes;             /* device bytes above */
} coo_state_t;

/* Reduce one segment (see the file comment). Atomic: run ends add to y with atomicAdd.
 * Segmented: run ends of rows inside the segment add to y, partial rows go to head / tail. */
template <typename Value, bool Atomic>
__global__ void __launch_bounds__(COO_BLOCK, COO_MIN_BLOCKS(Value))
    coo_segment_kernel(int64_t nnz, int64_t num_segments, const int32_t *__restrict__ row_indices,
                       const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                       const Value *__restrict__ x, Value alpha, Value *__restrict__ y,
                       Value *__restrict__ head, Value *__restrict__ tail) {
    const int lane = threadIdx.x & 31;
    const int64_t warp_stride = (int64_t)gridDim.x * COO_WARPS;
    for (int64_t s = (int64_t)blockIdx.x * COO_WARPS + (threadIdx.x >> 5); s < num_segments;
         s += warp_stride) {
        const int64_t begin = s * COO_SEGMENT;
        const int64_t end = begin + COO_SEGMENT < nnz ? begin + COO_SEGMENT : nnz;
        /* the rows just before and just after the segment (uniform over the warp) */
        const int32_t prev_row = s > 0 ? __ldg(row_indices + begin - 1) : -1;
        const int32_t next_row = end < nnz ? __ldg(row_indices + end) : -1;

        int32_t row[COO_ITEMS], col[COO_ITEMS];
        Value product[COO_ITEMS];
#pragma unroll
        for (int r = 0; r < COO_ITEMS; r++) {
            const int64_t k = begin + r * 32 + lane;
            row[r] = k < end ? nzi_ld_no_l1(row_indices + k) : COO_NO_ROW;
            col[r] = k < end ? nzi_ld_no_l1(col_indices + k) : -1;
            product[r] = k < end ? nzi_ld_no_l1(values + k) : Value(0);
        }
#pragma unroll
        for (int r = 0; r < COO_ITEMS; r++)
            if (col[r] >= 0) product[r] *= __ldg(x + col[r]);

        int32_t carry_row = -1;
        Value carry = Value(0);
#pragma unroll
        for (int r = 0; r < COO_ITEMS; r++) {
            if (begin + r * 32 >= end) break; /* uniform over the warp */
            const int64_t k = begin + r * 32 + lane;
            Value sum = product[r];
            /* segmented inclusive scan: rows are sorted, so equal rows are adjacent lanes; a
             * ballot marks where each run starts, so only the sums move between lanes */
            const int32_t up = __shfl_up_sync(0xffffffffu, row[r], 1);
            const unsigned starts = __ballot_sync(0xffffffffu, lane == 0 || up != row[r]);
            const int run_start = 31 - __clz(starts & (0xffffffffu >> (31 - lane)));
#pragma unroll
            for (int d = 1; d < 32; d *= 2) {
                const Value other = __shfl_up_sync(0xffffffffu, sum, d);
                if (lane - d >= run_start) sum = other + sum;
            }
            if (row[r] == carry_row) sum = carry + sum;
            /* does entry k + 1 (the next lane, the next round's first lane, or the entry after
             * the segment) belong to another row? */
            const int32_t next_round = __shfl_sync(0xffffffffu, row[r + 1 < COO_ITEMS ? r + 1 : r], 0);
            bool run_end = lane < 31 ? ((starts >> (lane + 1)) & 1u) != 0 : row[r] != next_round;
            if (k + 1 >= end) run_end = row[r] != next_row;
            carry_row = __shfl_sync(0xffffffffu, row[r], 31);
            carry = __shfl_sync(0xffffffffu, sum, 31);
            if (k >= end) continue;
            if (Atomic) {
                if (run_end || k + 1 == end) atomicAdd(y + row[r], alpha * sum);
            } else if (run_end) {
                if (row[r] == prev_row)
                    head[s] = sum; /* the end of a row that began in an earlier segment */
                else
                    y[row[r]] += alpha * sum;
            } else if (k + 1 == end) {
                tail[s] = sum; /* continues into the next segment */
            }
        }
    }
}

/* One warp per chain of segments: y[row] += alpha * (tail[a] + ... + tail[b - 1] + head[b]),
 * lanes taking the tails in a fixed stride and a fixed shuffle tree combining them. */
template <typename Value>
__global__ void __launch_bounds__(COO_BLOCK)
    coo_chain_kernel(int64_t num_chains, const int32_t *__restrict__ chain_row,
                     const int64_t *__restrict__ chain_first, const int64_t *__restrict__ chain_last,
                     const Value *__restrict__ head, const Value *__restrict__ tail, Value alpha,
                     Value *__restrict__ y) {
    const int lane = threadIdx.x & 31;
    const int64_t warp_stride = (int64_t)gridDim.x * COO_WARPS;
    for (int64_t c = (int64_t)blockIdx.x * COO_WARPS + (threadIdx.x >> 5); c < num_chains;
         c += warp_stride) {
        const int64_t first = __ldg(chain_first + c), last = __ldg(chain_last + c);
        Value sum = Value(0);
        for (int64_t m = first + lane; m < last; m += 32) sum += __ldg(tail + m);
        sum = nzi_cuda_group_sum<32>(sum);
        if (lane == 0) {
            const int32_t row = __ldg(chain_row + c);
            y[row] += alpha * (sum + __ldg(head + last));
        }
    }
}

/* first[s] = the row of segment s's first entry, last[s] = the row of its last entry. */
__global__ void coo_boundary_kernel(int64_t nnz, int64_t num_segments,
                                    const int32_t *__restrict__ row_indices,
                                    int32_t *__restrict__ first, int32_t *__restrict__ last) {
    const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= num_segments) return;
    const int64_t begin = s * COO_SEGMENT;
    const int64_t end = begin + COO_SEGMENT < nnz ? begin + COO_SEGMENT : nnz;
    first[s] = row_indices[begin];
    last[s] = row_indices[end - 1];
}

void nzi_cuda_coo_free(nz_context_t *ctx, void *state) {
    coo_state_t *st = (coo_state_t *)state;
    if (st == NULL) return;
    nz_cuda_free(ctx, st->head, (size_t)-1);
    nz_cuda_free(ctx, st->tail, (size_t)-1);
    nz_cuda_free(ctx, st->chain_row, (size_t)-1);
    nz_cuda_free(ctx, st->chain_first, (size_t)-1);
    nz_cuda_free(ctx, st->chain_last, (size_t)-1);
    nzi_free(ctx, st);
}

/* Segmented workspace: partial sums per segment, and the chains of segments that share a row
 * (consecutive boundaries s | s + 1 with last[s] == first[s + 1] and the same row merge into one
 * chain). O(num_segments) device and host memory and time. */
nz_status_t nzi_cuda_coo_prepare(nz_context_t *ctx, const nzi_coo_t *coo, int64_t nnz,
                                 nz_value_type_t value_type, bool segmented, void **state,
                                 size_t *bytes) {
    nz_status_t status = NZ_SUCCESS;
    const char *what = "nz_spmv_plan_create: COO segmented reduction";
    const size_t vs = nzi_value_size(value_type);
    coo_state_t *st = NULL;
    int32_t *d_bounds = NULL, *bounds = NULL, *rows = NULL;
    int64_t *firsts = NULL, *lasts = NULL;
    int64_t num_segments = (nnz + COO_SEGMENT - 1) / COO_SEGMENT, n = 0;

    *state = NULL;
    *bytes = 0;
    if (!segmented || nnz <= 0) return NZ_SUCCESS;
    st = (coo_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the plan", what);
    st->num_segments = num_segments;
    NZI_CHECK(nz_cuda_malloc(ctx, &st->head, (size_t)num_segments * vs,
                             "nz_spmv_plan_create: COO head sums"));
    NZI_CHECK(nz_cuda_malloc(ctx, &st->tail, (size_t)num_segments * vs,
                             "nz_spmv_plan_create: COO tail sums"));
    st->bytes = 2 * (size_t)num_segments * vs;

    /* the rows at the segment boundaries, on the host */
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&d_bounds, 2 * (size_t)num_segments * sizeof(int32_t),
                             "nz_spmv_plan_create: COO segment boundaries"));
    coo_boundary_kernel<<<(unsigned)((num_segments + 255) / 256), 256, 0, nzi_cuda(ctx)->stream>>>(
        nnz, num_segments, coo->row_indices, d_bounds, d_bounds + num_segments);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&bounds, 2 * (size_t)num_segments, sizeof(int32_t),
                              "COO segment boundaries"));
    NZI_CHECK(nz_cuda_memcpy(ctx, bounds, d_bounds, 2 * (size_t)num_segments * sizeof(int32_t),
                             NZI_D2H));
    {
        const int32_t *first = bounds, *last = bounds + num_segments;
        /* pass 0 counts the chains, pass 1 fills them */
        for (int pass = 0; pass < 2; pass++) {
            int32_t chain_row = -1;
            int64_t chain_end = -1;
            n = 0;
            for (int64_t s = 0; s + 1 < num_segments; s++) {
                if (last[s] != first[s + 1]) continue;
                if (n > 0 && chain_row == last[s] && chain_end == s) {
                    chain_end = s + 1; /* segment s is a middle segment of this chain */
                    if (pass == 1) lasts[n - 1] = chain_end;
                    continue;
                }
                chain_row = last[s];
                chain_end = s + 1;
                if (pass == 1) {
                    rows[n] = chain_row;
                    firsts[n] = s;
                    lasts[n] = chain_end;
                }
                n++;
            }
            if (pass == 0) {
                st->num_chains = n;
                if (n == 0) break;
                NZI_CHECK(nzi_alloc_array(ctx, (void **)&rows, (size_t)n, sizeof *rows,
                                          "COO chain rows"));
                NZI_CHECK(nzi_alloc_array(ctx, (void **)&firsts, (size_t)n, sizeof *firsts,
                                          "COO chain starts"));
                NZI_CHECK(nzi_alloc_array(ctx, (void **)&lasts, (size_t)n, sizeof *lasts,
                                          "COO chain ends"));
            }
        }
    }
    if (st->num_chains > 0) {
        const size_t chains = (size_t)st->num_chains;
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->chain_row, chains * sizeof(int32_t),
                                 "nz_spmv_plan_create: COO chain rows"));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->chain_first, chains * sizeof(int64_t),
                                 "nz_spmv_plan_create: COO chain starts"));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->chain_last, chains * sizeof(int64_t),
                                 "nz_spmv_plan_create: COO chain ends"));
        NZI_CHECK(nz_cuda_memcpy(ctx, st->chain_row, rows, chains * sizeof(int32_t), NZI_H2D));
        NZI_CHECK(nz_cuda_memcpy(ctx, st->chain_first, firsts, chains * sizeof(int64_t), NZI_H2D));
        NZI_CHECK(nz_cuda_memcpy(ctx, st->chain_last, lasts, chains * sizeof(int64_t), NZI_H2D));
        st->bytes += chains * (sizeof(int32_t) + 2 * sizeof(int64_t));
    }
    *state = st;
    *bytes = st->bytes;
    st = NULL;

cleanup:
    nz_cuda_free(ctx, d_bounds, (size_t)-1);
    nzi_free(ctx, bounds);
    nzi_free(ctx, rows);
    nzi_free(ctx, firsts);
    nzi_free(ctx, lasts);
    nzi_cuda_coo_free(ctx, st);
    return status;
}

template <typename Value>
static nz_status_t coo_accumulate_typed(nz_context_t *ctx, const coo_state_t *st,
                                        const nzi_coo_t *coo, int64_t nnz, double alpha,
                                        const void *x, void *y) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t num_segments = (nnz + COO_SEGMENT - 1) / COO_SEGMENT;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(
        cs, COO_BLOCK, COO_WAVES, (num_segments + COO_WARPS - 1) / COO_WARPS);
    if (st == NULL) {
        coo_segment_kernel<Value, true><<<blocks, COO_BLOCK, 0, cs->stream>>>(
            nnz, num_segments, coo->row_indices, coo->col_indices, (const Value *)coo->values,
            (const Value *)x, (Value)alpha, (Value *)y, NULL, NULL);
        NZI_CUDA_LAUNCH_CHECK(ctx);
        return NZ_SUCCESS;
    }
    coo_segment_kernel<Value, false><<<blocks, COO_BLOCK, 0, cs->stream>>>(
        nnz, num_segments, coo->row_indices, coo->col_indices, (const Value *)coo->values,
        (const Value *)x, (Value)alpha, (Value *)y, (Value *)st->head, (Value *)st->tail);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    if (st->num_chains > 0) {
        const unsigned chain_blocks = (unsigned)nzi_cuda_grid_blocks(
            cs, COO_BLOCK, COO_WAVES, (st->num_chains + COO_WARPS - 1) / COO_WARPS);
        coo_chain_kernel<Value><<<chain_blocks, COO_BLOCK, 0, cs->stream>>>(
            st->num_chains, st->chain_row, st->chain_first, st->chain_last,
            (const Value *)st->head, (const Value *)st->tail, (Value)alpha, (Value *)y);
        NZI_CUDA_LAUNCH_CHECK(ctx);
    }
    return NZ_SUCCESS;
}

nz_status_t nzi_cuda_coo_accumulate(nz_context_t *ctx, const void *state, const nzi_coo_t *coo,
                                    int64_t nnz, nz_value_type_t value_type, double alpha,
                                    const void *x, void *y) {
    const coo_state_t *st = (const coo_state_t *)state;
    if (nnz <= 0) return NZ_SUCCESS;
    return value_type == NZ_F32 ? coo_accumulate_typed<float>(ctx, st, coo, nnz, alpha, x, y)
                                : coo_accumulate_typed<double>(ctx, st, coo, nnz, alpha, x, y);
}

/* ---- the COO plans ------------------------------------------------------------------------- */

static nz_status_t coo_setup(nz_spmv_plan_t *plan, bool segmented) {
    const nz_matrix_t *A = plan->A;
    plan->vector_width = 0;
    plan->reproducible = segmented ? 1 : 0;
    return nzi_cuda_coo_prepare(plan->ctx, &A->host.coo, A->nnz, A->value_type, segmented,
                                &plan->state, &plan->workspace_bytes);
}

static nz_status_t coo_atomic_setup(nz_spmv_plan_t *plan) { return coo_setup(plan, false); }
static nz_status_t coo_segmented_setup(nz_spmv_plan_t *plan) { return coo_setup(plan, true); }

/* y = beta y (zeros without reading y when beta == 0), then y += alpha A x. */
static nz_status_t coo_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                               double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    NZI_TRY(nzi_cuda_scale(plan->ctx, A->value_type, A->rows, beta, y));
    return nzi_cuda_coo_accumulate(plan->ctx, plan->state, &A->host.coo, A->nnz, A->value_type,
                                   alpha, x, y);
}

void nzi_cuda_coo_plan_release(nz_spmv_plan_t *plan) {
    nzi_cuda_coo_free(plan->ctx, plan->state);
    plan->state = NULL;
}

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_coo_atomic_ops = {
    NZ_ALG_ATOMIC, coo_atomic_setup, coo_execute, nzi_cuda_coo_plan_release};
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_coo_segmented_ops = {
    NZ_ALG_SEGMENTED, coo_segmented_setup, coo_execute, nzi_cuda_coo_plan_release};

template nz_status_t coo_accumulate_typed<float>(nz_context_t *, const coo_state_t *,
                                                 const nzi_coo_t *, int64_t, double, const void *,
                                                 void *);
template nz_status_t coo_accumulate_typed<double>(nz_context_t *, const coo_state_t *,
                                                  const nzi_coo_t *, int64_t, double, const void *,
                                                  void *);
