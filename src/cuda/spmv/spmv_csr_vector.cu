/* spmv_csr_vector.cu: CSR-vector SpMV on the GPU: V threads per row (Bell & Garland, CUSP). */
#include "cuda_internal.h"

/*
 * Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
 * processors" (SC09), CSR (vector) kernel, with CUSP's refinements: a warp is split into 32 / V
 * aligned vectors of V lanes; vector j of the warp owns one row at a time and its lane l reads
 * the row's nonzeros l, l + V, l + 2V, ... (consecutive lanes read consecutive elements, so the
 * loads of col_indices and values coalesce). The V partial sums are combined by a fixed shuffle
 * tree and the vector's first lane writes y. Warps stride over the rows (grid-stride), so the
 * grid is sized to the device, not to the matrix.
 * When V == 32 and a row is longer than 32, the loop starts at the row start rounded down to a
 * multiple of 32 elements (lanes before the row start skip the first step) so every later load
 * is aligned to a 32-element (128 / 256-byte) segment.
 * V is the smallest power of two >= a quarter of the mean row length, clamped to [2, 32], and
 * each lane keeps U = 4 loads in flight, 8 on rows of mean >= 256 (see csr_vector_kernel and
 * vector_unroll).
 * Tunables (nz_tunables_t, by the names nz_tunables_parse and the CLI give them; read once at
 * plan setup; NZ_TUNE_AUTO = the rule above):
 *   NZ_TUNE_VECTOR_WIDTH=2|4|8|16|32   lanes per row
 *   NZ_TUNE_VECTOR_UNROLL=1|2|4|8      loads in flight per lane (mixed precision always uses 4;
 *                                      hints and compressed indices 4 or 8)
 *   NZ_TUNE_VECTOR_WARPS=1|2|4|8       warps per row where V = 32 (mixed precision always 1)
 * With V = 32 and fewer rows than the device holds warps, W warps share each row (vector_run):
 * warp p of a row takes the p-th of W contiguous shares of the row's 32-element units (their
 * lengths within one unit of each other); the W sums meet in shared memory.
 * NZ_PLAN_COMPRESS_INDICES reads the columns as 16-bit offsets from a base per row (V < 32) or
 * per aligned 32 nonzeros (V == 32) (the plan's layout, spmv_csr_segments.cu): 2 bytes less per
 * nonzero where they fit. On rows split over warps that form runs its own kernel
 * (csr_vector_split_packed_kernel: U = 4, eight blocks an SM in single).
 * NZ_PLAN_CACHE_HINTS loads row_offsets, col_indices and values as streaming (ld.global.cs,
 * evict-first; nzi_ld_matrix) so the matrix stream does not evict x from L2; x stays on the
 * read-only path. The hints change no value: results are identical with and without them.
 * Each row is summed by the same lanes in the same order every run: bitwise reproducible.
 * Cost: one pass over A, nnz gathers from x; rows much longer than V * 32 leave a warp busy
 * while others idle (merge-path balances those).
 */

/* 256 threads = 8 warps: enough independent warps per block to hide latency, and 8 blocks fill
 * an SM of 2048 threads. */
#define VECTOR_BLOCK 256
#define VECTOR_WARPS (VECTOR_BLOCK / 32)
/* Grid-stride grid: this many times what the device holds at once, to smooth the tail. */
#define VECTOR_WAVES 4
/* 16-bit columns on rows split over warps: U = 4 (csr_vector_launch_width) and eight blocks an
 * SM (32 registers, no spill) for float values and 32-bit offsets, six (40 registers) for double
 * or 64-bit offsets, which spill at 32: the form measured fastest for them (H100, rail probes,
 * bench/results/h100-2026-11-26-s16-rail-probes.txt). */
#define VECTOR_SPLIT_PACKED_UNROLL 4
#define VECTOR_SPLIT_PACKED_MIN_BLOCKS 8
#define VECTOR_SPLIT_PACKED_MIN_BLOCKS_WIDE 6

/* The loop index of csr_vector_kernel's steps (see Step there). */
template <bool Split, typename Offset> struct step_index { typedef Offset type; };
template <typename Offset> struct step_index<true, Offset> { typedef int64_t type; };

/* W warps per row (Split): each warp's sum (the shuffle tree) to shared memory, then the row's
 * first warp adds the W partial sums in warp order and writes y[row] as nzi_cuda_vector_store
 * does. Every thread of the block must call it (two barriers). */
template <bool BetaZero, typename Value, typename Accum>
static __device__ __forceinline__ void split_store(Accum sum, bool active, int64_t row, int part,
                                                   int W, Accum alpha, Accum beta,
                                                   Value *__restrict__ y) {
    __shared__ Accum partial[VECTOR_WARPS];
    const int warp_in_block = threadIdx.x >> 5;
    sum = nzi_cuda_group_sum<32>(sum);
    if ((threadIdx.x & 31) == 0) partial[warp_in_block] = sum;
    __syncthreads();
    if (active && part == 0 && (threadIdx.x & 31) == 0) {
        Accum total = partial[warp_in_block];
        for (int w = 1; w < W; w++) total += partial[warp_in_block + w];
        y[row] = (Value)(BetaZero ? alpha * total : alpha * total + beta * (Accum)y[row]);
    }
    __syncthreads(); /* partial[] is rewritten by the next rows */
}

/* Accum: the type of the partial sums and of alpha / beta (Value, or double for NZ_PLAN_MIXED:
 * float storage, products and sums in double, y rounded once).
 * U: loads in flight per lane. Each lane walks its row in steps of V * U elements; a step first
 * loads its U column indices, then its U values, then gathers the U x entries, so a lane has U
 * independent memory requests outstanding instead of one (short rows on wide vectors otherwise
 * leave the memory system idle). Elements past the row end are never multiplied.
 * Packed: columns from the 16-bit segments (NZ_PLAN_COMPRESS_INDICES, nzi_col_segments_t);
 * the same columns, so the same sums bit for bit. */
template <typename Value, typename Offset, int V, int U, bool BetaZero, bool Hints,
          bool Packed, bool Split, typename Accum>
static __device__ __forceinline__ void
    csr_vector_body(int32_t rows, const Offset *__restrict__ row_offsets,
                    const int32_t *__restrict__ col_indices, nzi_col_segments_t segments,
                    const Value *__restrict__ values, const Value *__restrict__ x, Accum alpha,
                    Accum beta, Value *__restrict__ y, int warps) {
    static_assert(!Split || V == 32, "warps per row only with 32 lanes per row");
    constexpr int ROWS_PER_WARP = 32 / V;
    const int W = Split ? warps : 1; /* warps per row: a power of two dividing VECTOR_WARPS */
    const int lane = threadIdx.x & 31;
    const int lane_in_vector = lane & (V - 1);
    const int warp_in_block = threadIdx.x >> 5;
    const int part = Split ? (warp_in_block & (W - 1)) : 0; /* this warp's share of its row */
    const int64_t block_rows = (int64_t)(VECTOR_WARPS / W) * ROWS_PER_WARP;
    const int64_t block_stride = (int64_t)gridDim.x * block_rows;
    /* the loop index: Offset when one warp walks the row, 64 bits when W warps share it */
    typedef typename step_index<Split, Offset>::type Step;

    /* The loop bound is uniform over the block (the split store's barriers need that), so all
     * 32 lanes of a warp reach the shuffles together. */
    for (int64_t block_row = (int64_t)blockIdx.x * block_rows; block_row < rows;
         block_row += block_stride) {
        const int64_t first_row = block_row + (int64_t)(warp_in_block / W) * ROWS_PER_WARP;
        const int64_t row = first_row + lane / V;
        const bool active = row < rows;
        Offset begin, end;
        nzi_cuda_vector_row_bounds<V, Hints>(row_offsets, row, active, &begin, &end);
        /* compressed indices with V < 32: the row's base, loaded by the vector's first lane */
        int32_t row_base = 0;
        if (Packed && V < 32) {
            if (active && lane_in_vector == 0) row_base = __ldg(segments.base + row);
            row_base = __shfl_sync(0xffffffffu, row_base, lane & ~(V - 1));
        }

        /* V == 32 on a row longer than 32: start at a 32-element boundary (aligned segments) */
        Offset start = (V == 32 && end - begin > 32) ? begin - (begin & 31) : begin;
        Offset lo = begin, hi = end; /* the elements this warp (vector) sums */
        if (Split) {
            /* warp `part` of W: a contiguous share of the row's 32-element units (one stream
             * per warp, the W shares within one unit of each other in length) */
            const int64_t units = ((int64_t)end - start + 31) >> 5;
            const int64_t first = (int64_t)start + ((units * part / W) << 5);
            const int64_t last = (int64_t)start + ((units * (part + 1) / W) << 5);
            lo = (Offset)(first > (int64_t)begin ? first : (int64_t)begin);
            hi = (Offset)(last < (int64_t)end ? last : (int64_t)end);
            start = (Offset)(first < (int64_t)hi ? first : (int64_t)hi);
        }
        Accum sum = Accum(0);
        for (Step base = (Step)start + lane_in_vector; base < (Step)hi; base += (Step)(V * U)) {
            int32_t col[U];
            Value val[U];
            if (Packed) {
                /* all U bases and offsets first, then the values, and only then the columns
                 * (a wide row's or segment's 32-bit index last): a load that waits on a base
                 * must not hold back the other U - 1 requests */
                int32_t seg_base[U], offset[U];
                bool in[U];
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const int64_t k = (int64_t)base + u * V;
                    in[u] = k >= (int64_t)lo && k < (int64_t)hi;
                    seg_base[u] = V < 32 ? row_base
                                  : in[u] ? __ldg(segments.base + (k >> NZI_SEGMENT_SHIFT))
                                          : 0;
                    offset[u] = in[u] ? (int32_t)nzi_ld_matrix<Hints>(segments.offsets + k) : 0;
                }
#pragma unroll
                for (int u = 0; u < U; u++)
                    val[u] = in[u] ? nzi_ld_matrix<Hints>(values + (int64_t)base + u * V)
                                   : Value(0);
#pragma unroll
                for (int u = 0; u < U; u++)
                    col[u] = !in[u]            ? -1
                             : seg_base[u] >= 0 ? seg_base[u] + offset[u]
                                                : nzi_ld_matrix<Hints>(col_indices + (int64_t)base +
                                                                       u * V);
            } else {
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const int64_t k = (int64_t)base + u * V; /* no Offset overflow near 2^31 */
                    col[u] = (k >= (int64_t)lo && k < (int64_t)hi)
                                 ? nzi_ld_matrix<Hints>(col_indices + k)
                                 : -1;
                }
#pragma unroll
                for (int u = 0; u < U; u++)
                    val[u] = col[u] >= 0 ? nzi_ld_matrix<Hints>(values + (int64_t)base + u * V)
                                         : Value(0);
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (col[u] >= 0) sum += (Accum)val[u] * (Accum)__ldg(x + col[u]);
        }
        if (Split)
            split_store<BetaZero>(sum, active, row, part, W, alpha, beta, y);
        else
            nzi_cuda_vector_store<V, BetaZero>(sum, active, row, alpha, beta, y);
    }
}

#define VECTOR_KERNEL_PARAMS                                                                      \
    int32_t rows, const Offset *__restrict__ row_offsets, const int32_t *__restrict__ col_indices, \
        nzi_col_segments_t segments, const Value *__restrict__ values,                             \
        const Value *__restrict__ x, Accum alpha, Accum beta, Value *__restrict__ y, int warps
#define VECTOR_KERNEL_ARGS rows, row_offsets, col_indices, segments, values, x, alpha, beta, y, warps

template <typename Value, typename Offset, int V, int U, bool BetaZero, bool Hints,
          bool Packed, bool Split, typename Accum = Value>
__global__ void __launch_bounds__(VECTOR_BLOCK) csr_vector_kernel(VECTOR_KERNEL_PARAMS) {
    csr_vector_body<Value, Offset, V, U, BetaZero, Hints, Packed, Split, Accum>(VECTOR_KERNEL_ARGS);
}

/* The index type of csr_vector_split_packed_kernel's walk: 32-bit unsigned where the offsets are
 * 32-bit (an index stays below 2^31 + 32 U, so it cannot wrap), 64 bits otherwise. */
template <typename Offset> struct split_index { typedef int64_t type; };
template <> struct split_index<int32_t> { typedef uint32_t type; };

/* 16-bit columns on rows split over warps: csr_vector_body's Packed and Split path written out
 * with the walk in 32-bit indices (split_index) and W's divisions as shifts, the form the rail
 * probes ran: rail 4096 x 1M 4% faster in single and 2% in double than through the body's 64-bit
 * walk (H100, bench/results/h100-2026-11-26-s17-vector-030e833.txt; eight blocks an SM leave 32
 * registers, and the 64-bit walk spends them and instructions). The same shares, the same lanes
 * and the same order of additions as the plain kernel: the same sums bit for bit. It has its own
 * register bound (a minimum of blocks an SM in the plain kernel's bounds made ptxas give every
 * other instantiation more registers). */
template <typename Value, typename Offset, int U, bool BetaZero, bool Hints, typename Accum = Value>
__global__ void __launch_bounds__(VECTOR_BLOCK, sizeof(Value) == 4 && sizeof(Offset) == 4
                                                    ? VECTOR_SPLIT_PACKED_MIN_BLOCKS
                                                    : VECTOR_SPLIT_PACKED_MIN_BLOCKS_WIDE)
    csr_vector_split_packed_kernel(VECTOR_KERNEL_PARAMS) {
    typedef typename split_index<Offset>::type Index;
    const int W = warps; /* a power of two dividing VECTOR_WARPS */
    const int shift = __ffs(W) - 1;
    const int lane = threadIdx.x & 31;
    const int warp_in_block = threadIdx.x >> 5;
    const int part = warp_in_block & (W - 1);
    const int64_t block_rows = VECTOR_WARPS >> shift;
    const int64_t block_stride = (int64_t)gridDim.x * block_rows;
    for (int64_t block_row = (int64_t)blockIdx.x * block_rows; block_row < rows;
         block_row += block_stride) {
        const int64_t row = block_row + (warp_in_block >> shift);
        const bool active = row < rows;
        Index begin = 0, end = 0;
        if (active) {
            begin = (Index)nzi_ld_matrix<Hints>(row_offsets + row);
            end = (Index)nzi_ld_matrix<Hints>(row_offsets + row + 1);
        }
        /* csr_vector_body's shares: from the row start rounded down to 32 elements (rows longer
         * than 32), warp `part` takes units [units part / W, units (part + 1) / W) */
        const Index start = end - begin > 32 ? begin & ~(Index)31 : begin;
        const Index units = (end - start + 31) >> 5;
        const Index first = start + (((units * (Index)part) >> shift) << 5);
        const Index last = start + (((units * (Index)(part + 1)) >> shift) << 5);
        const Index lo = first > begin ? first : begin;
        const Index hi = last < end ? last : end;
        Accum sum = Accum(0);
        for (Index base = (first < hi ? first : hi) + (Index)lane; base < hi; base += 32 * U) {
            int32_t seg_base[U], offset[U], col[U];
            Value val[U];
            bool in[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const Index k = base + (Index)(32 * u);
                in[u] = k >= lo && k < hi;
                seg_base[u] = in[u] ? __ldg(segments.base + (k >> NZI_SEGMENT_SHIFT)) : 0;
                offset[u] = in[u] ? (int32_t)nzi_ld_matrix<Hints>(segments.offsets + k) : 0;
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                val[u] = in[u] ? nzi_ld_matrix<Hints>(values + base + (Index)(32 * u)) : Value(0);
#pragma unroll
            for (int u = 0; u < U; u++)
                col[u] = !in[u]            ? -1
                         : seg_base[u] >= 0 ? seg_base[u] + offset[u]
                                            : nzi_ld_matrix<Hints>(col_indices + base +
                                                                   (Index)(32 * u));
#pragma unroll
            for (int u = 0; u < U; u++)
                if (col[u] >= 0) sum += (Accum)val[u] * (Accum)__ldg(x + col[u]);
        }
        split_store<BetaZero>(sum, active, row, part, W, alpha, beta, y);
    }
}
#undef VECTOR_KERNEL_PARAMS
#undef VECTOR_KERNEL_ARGS

template <typename Value, typename Offset, int V, int U, bool Hints, bool Packed, bool Split,
          typename Accum>
static void csr_vector_launch_kernel(const nzi_cuda_state_t *cs, const nz_matrix_t *A,
                                     nzi_col_segments_t seg, int warps, Accum alpha,
                                     const Value *x, double beta, Value *y) {
    const int64_t rows_per_block = (int64_t)(VECTOR_WARPS / warps) * (32 / V);
    const int64_t needed = (A->rows + rows_per_block - 1) / rows_per_block;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(cs, VECTOR_BLOCK, VECTOR_WAVES, needed);
    const Offset *offsets = nzi_dev_offsets<Offset>(A);
    const Value *values = (const Value *)A->device.values;
    const int32_t rows = (int32_t)A->rows;
    if constexpr (Packed && Split) {
        static_assert(V == 32, "warps per row only with 32 lanes per row");
        if (beta == 0.0)
            csr_vector_split_packed_kernel<Value, Offset, U, true, Hints, Accum>
                <<<blocks, VECTOR_BLOCK, 0, cs->stream>>>(rows, offsets, A->device.col_indices,
                                                          seg, values, x, alpha, Accum(0), y,
                                                          warps);
        else
            csr_vector_split_packed_kernel<Value, Offset, U, false, Hints, Accum>
                <<<blocks, VECTOR_BLOCK, 0, cs->stream>>>(rows, offsets, A->device.col_indices,
                                                          seg, values, x, alpha, (Accum)beta, y,
                                                          warps);
    } else if (beta == 0.0) {
        csr_vector_kernel<Value, Offset, V, U, true, Hints, Packed, Split, Accum>
            <<<blocks, VECTOR_BLOCK, 0, cs->stream>>>(rows, offsets, A->device.col_indices, seg,
                                                      values, x, alpha, Accum(0), y, warps);
    } else {
        csr_vector_kernel<Value, Offset, V, U, false, Hints, Packed, Split, Accum>
            <<<blocks, VECTOR_BLOCK, 0, cs->stream>>>(rows, offsets, A->device.col_indices, seg,
                                                      values, x, alpha, (Accum)beta, y, warps);
    }
}

/* Several warps per row (warps > 1) are compiled for V = 32 without mixed precision only;
 * otherwise one warp (or vector) per row. */
template <typename Value, typename Offset, int V, int U, bool Hints, bool Packed, typename Accum>
static void csr_vector_launch_width(const nzi_cuda_state_t *cs, const nz_matrix_t *A,
                                    nzi_col_segments_t seg, int warps, Accum alpha,
                                    const Value *x, double beta, Value *y) {
    if constexpr (V == 32 && sizeof(Accum) == sizeof(Value)) {
        if (warps > 1) {
            /* a lane adds its elements in order whatever U: the same sums as the plain kernel */
            constexpr int SplitU = Packed ? VECTOR_SPLIT_PACKED_UNROLL : U;
            csr_vector_launch_kernel<Value, Offset, V, SplitU, Hints, Packed, true, Accum>(
                cs, A, seg, warps, alpha, x, beta, y);
            return;
        }
    }
    csr_vector_launch_kernel<Value, Offset, V, U, Hints, Packed, false, Accum>(cs, A, seg, 1,
                                                                              alpha, x, beta, y);
}

/* The plan's unroll (vector_state_t.unroll); mixed precision compiles only the default one. */
#define VECTOR_UNROLL_DEFAULT 4
/* Rows of at least this mean length (a full step of 32 lanes x 8) run U = 8: with few long rows
 * (rail 4096 x 1M: 4096 warps, a third of what the device holds) the loads in flight per lane
 * are what keeps memory busy. H200, ncu, CSR-vector on rail: U = 4 45.9 / 60.9 us, U = 8 38.1 /
 * 52.7 us (single / double). */
#define VECTOR_LONG_ROW_UNROLL 8
#define VECTOR_LONG_ROW_MIN (32.0 * VECTOR_LONG_ROW_UNROLL)
/* How the plan runs CSR-vector beyond V: U (1, 2, 4 or 8) and W (warps per row, 1, 2, 4 or 8;
 * more than one only with V = 32). */
typedef struct vector_state {
    int unroll;
    int warps;
} vector_state_t;

/* Cache hints (NZ_PLAN_CACHE_HINTS) and 16-bit column offsets (NZ_PLAN_COMPRESS_INDICES) are
 * compiled for U = 4 and 8 only (another tuned unroll runs 4), mixed precision for U = 4 and one
 * warp per row only. The unroll changes no sum: a lane adds its elements in order. */
template <typename Value, typename Offset, int V, typename Accum>
static void csr_vector_launch_unroll(const nzi_cuda_state_t *cs, const nz_matrix_t *A,
                                     vector_state_t run, bool hints, nzi_col_segments_t seg,
                                     Accum alpha, const Value *x, double beta, Value *y) {
#define VECTOR_LAUNCH(U, H, P)                                                                    \
    csr_vector_launch_width<Value, Offset, V, U, H, P, Accum>(cs, A, seg, run.warps, alpha, x,     \
                                                              beta, y)
    if constexpr (sizeof(Accum) != sizeof(Value)) {
        if (seg.base != NULL && hints) VECTOR_LAUNCH(4, true, true);
        else if (seg.base != NULL) VECTOR_LAUNCH(4, false, true);
        else if (hints) VECTOR_LAUNCH(4, true, false);
        else VECTOR_LAUNCH(4, false, false);
    } else if (seg.base != NULL || hints) {
        const bool packed = seg.base != NULL, eight = run.unroll == 8;
        if (packed && hints) eight ? VECTOR_LAUNCH(8, true, true) : VECTOR_LAUNCH(4, true, true);
        else if (packed) eight ? VECTOR_LAUNCH(8, false, true) : VECTOR_LAUNCH(4, false, true);
        else eight ? VECTOR_LAUNCH(8, true, false) : VECTOR_LAUNCH(4, true, false);
    } else {
        switch (run.unroll) {
        case 1: VECTOR_LAUNCH(1, false, false); break;
        case 2: VECTOR_LAUNCH(2, false, false); break;
        case 8: VECTOR_LAUNCH(8, false, false); break;
        default: VECTOR_LAUNCH(4, false, false); break;
        }
    }
#undef VECTOR_LAUNCH
}

/* y = alpha A x + beta y with `width` lanes per row, run.unroll loads in flight, run.warps warps
 * per row, the plan's hint flag and, when seg.base is not NULL, columns read from the 16-bit
 * segments. */
template <typename Value, typename Offset, typename Accum = Value>
static nz_status_t csr_vector_launch(const nz_spmv_plan_t *plan, int width, vector_state_t run,
                                     nzi_col_segments_t seg, double alpha, const void *x,
                                     double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const nz_matrix_t *A = plan->A;
    const Accum a = (Accum)alpha;
    const Value *xv = (const Value *)x;
    Value *yv = (Value *)y;
    const bool h = (plan->flags & NZ_PLAN_CACHE_HINTS) != 0;
    switch (width) {
    case 2: csr_vector_launch_unroll<Value, Offset, 2, Accum>(cs, A, run, h, seg, a, xv, beta, yv); break;
    case 4: csr_vector_launch_unroll<Value, Offset, 4, Accum>(cs, A, run, h, seg, a, xv, beta, yv); break;
    case 8: csr_vector_launch_unroll<Value, Offset, 8, Accum>(cs, A, run, h, seg, a, xv, beta, yv); break;
    case 16: csr_vector_launch_unroll<Value, Offset, 16, Accum>(cs, A, run, h, seg, a, xv, beta, yv); break;
    case 32: csr_vector_launch_unroll<Value, Offset, 32, Accum>(cs, A, run, h, seg, a, xv, beta, yv); break;
    default:
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "CSR-vector plan has vector width %d",
                         width);
    }
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* The value and offset types of A (and mixed precision) to csr_vector_launch. */
static nz_status_t csr_vector_dispatch(const nz_spmv_plan_t *plan, int width, vector_state_t run,
                                       nzi_col_segments_t seg, double alpha, const void *x,
                                       double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    const bool wide = A->device.offset_type == NZ_I64;
    if (A->value_type == NZ_F32 && (plan->flags & NZ_PLAN_MIXED))
        return wide ? csr_vector_launch<float, int64_t, double>(plan, width, run, seg, alpha, x, beta, y)
                    : csr_vector_launch<float, int32_t, double>(plan, width, run, seg, alpha, x, beta, y);
    if (A->value_type == NZ_F32)
        return wide ? csr_vector_launch<float, int64_t>(plan, width, run, seg, alpha, x, beta, y)
                    : csr_vector_launch<float, int32_t>(plan, width, run, seg, alpha, x, beta, y);
    return wide ? csr_vector_launch<double, int64_t>(plan, width, run, seg, alpha, x, beta, y)
                : csr_vector_launch<double, int32_t>(plan, width, run, seg, alpha, x, beta, y);
}

/* V = smallest power of two >= mean row length / VECTOR_ELEMENTS_PER_LANE, clamped to [2, 32]:
 * each lane then handles about that many elements of its row (U of them in flight at once), and
 * several short rows share a warp. CUSP's rule (V >= mean row length) gives V = 32 on 27-long FE
 * rows: one element per lane and a fifth of the lanes idle. Setting NZ_TUNE_VECTOR_WIDTH,
 * NZ_TUNE_VECTOR_UNROLL and NZ_TUNE_VECTOR_WARPS overrides the choices (for tuning sweeps). */
#define VECTOR_ELEMENTS_PER_LANE 4
int nzi_cuda_vector_width(const nz_context_t *ctx, const nz_matrix_t *A) {
    const double mean = (double)A->nnz / (double)A->rows;
    int width = 2;
    while (width < 32 && (double)width * VECTOR_ELEMENTS_PER_LANE < mean) width *= 2;
    return nzi_tune_pick(ctx->tunables.vector_width, width);
}

/* U: 4, and 8 on rows of mean >= VECTOR_LONG_ROW_MIN (the vector_unroll tunable overrides). */
static int vector_unroll(const nz_context_t *ctx, const nz_matrix_t *A) {
    const double mean = A->rows > 0 ? (double)A->nnz / (double)A->rows : 0.0;
    const int unroll = mean >= VECTOR_LONG_ROW_MIN ? VECTOR_LONG_ROW_UNROLL : VECTOR_UNROLL_DEFAULT;
    return nzi_tune_pick(ctx->tunables.vector_unroll, unroll);
}

/* W (V = 32 only): with one warp per row, fewer rows than the device holds warps leave it part
 * empty (rail 4096 x 1M: 4096 warps, ncu "warps active" 35%). W doubles, up to VECTOR_MAX_WARPS,
 * while rows x W is below twice the warps the device holds at once and each of the 2W warps
 * would still get a full step (32 x U elements) of the mean row. H200, rail 4096 x 1M, U = 8,
 * `nz bench --alg vector` with NZ_TUNE_VECTOR_WARPS = 1 / 2 / 4 / 8: single 34.5 / 37.2 / 34.0 /
 * 33.5 us, double 48.4 / 47.3 / 46.3 / 45.0 us (bench/results/h200-2026-11-26-s12-warps.txt).
 * Split rows sum in another order (each warp's share, then the W partial sums in warp order):
 * reproducible, not bitwise those of W = 1. */
#define VECTOR_MAX_WARPS 8
static int vector_warps_auto(const nz_context_t *ctx, const nz_matrix_t *A, int width, int unroll) {
    if (width != 32 || A->rows <= 0) return 1;
    const double mean = (double)A->nnz / (double)A->rows;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const double device_warps = (double)cs->sm_count * (cs->max_threads_per_sm / 32);
    int warps = 1;
    while (warps < VECTOR_MAX_WARPS && (double)A->rows * warps < 2.0 * device_warps &&
           mean >= 32.0 * unroll * (2 * warps))
        warps *= 2;
    return warps;
}

int nzi_cuda_vector_warps(const nz_context_t *ctx, const nz_matrix_t *A, int width,
                          unsigned flags) {
    if (width != 32 || (A->value_type == NZ_F32 && (flags & NZ_PLAN_MIXED))) return 1;
    return nzi_tune_pick(ctx->tunables.vector_warps,
                         vector_warps_auto(ctx, A, width, vector_unroll(ctx, A)));
}

/* The plain kernel's U and W. */
static vector_state_t vector_run(const nz_context_t *ctx, const nz_matrix_t *A, int width,
                                 unsigned flags) {
    vector_state_t run;
    run.unroll = vector_unroll(ctx, A);
    run.warps = nzi_cuda_vector_warps(ctx, A, width, flags);
    return run;
}

/* 16-bit column segments run with the plain kernel's W (and U, but U = 4 on split rows, which
 * changes no sum), so the sums are bit for bit the plain kernel's. */
nz_status_t nzi_cuda_csr_vector_segments(const nz_spmv_plan_t *plan, int width,
                                         nzi_col_segments_t seg, double alpha, const void *x,
                                         double beta, void *y) {
    const vector_state_t run = vector_run(plan->ctx, plan->A, width, plan->flags);
    return csr_vector_dispatch(plan, width, run, seg, alpha, x, beta, y);
}

static nz_status_t csr_vector_setup(nz_spmv_plan_t *plan) {
    plan->state = NULL;
    plan->workspace_bytes = 0;
    plan->reproducible = 1;
    plan->vector_width = nzi_cuda_vector_width(plan->ctx, plan->A);
    vector_state_t *state = (vector_state_t *)nzi_malloc(plan->ctx, sizeof *state);
    if (state == NULL)
        return nzi_error(plan->ctx, NZ_ERR_OUT_OF_MEMORY, "CSR-vector plan: out of host memory");
    *state = vector_run(plan->ctx, plan->A, plan->vector_width, plan->flags);
    plan->state = state;
    plan->vector_warps = state->warps;
    return NZ_SUCCESS;
}

static nz_status_t csr_vector_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                      double beta, void *y) {
    const nzi_col_segments_t plain = {NULL, NULL};
    return csr_vector_dispatch(plan, plan->vector_width, *(const vector_state_t *)plan->state,
                               plain, alpha, x, beta, y);
}

static void csr_vector_release(nz_spmv_plan_t *plan) {
    if (plan->state != NULL) nzi_free(plan->ctx, plan->state);
    plan->state = NULL;
}

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_vector_ops = {
    NZ_ALG_VECTOR, csr_vector_setup, csr_vector_execute, csr_vector_release};
