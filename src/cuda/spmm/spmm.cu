/* spmm.cu: SpMM on the GPU, Y = alpha op(A) X + beta Y for k <= 64 right-hand sides: CSR (a group per row, long rows cut into pieces) and SELL (a thread per slot). */
#include "spmm_internal.h"

/*
 * X is (op(A) cols) x k and Y (op(A) rows) x k, dense, row-major (element (r, c) at r ld + c) or
 * column-major (at c ld + r). Every kernel reads each nonzero of A once per chunk of columns and
 * gathers the matching row of X; Accum is the type of the sums and of alpha / beta (Value, or
 * double for float storage under NZ_PLAN_MIXED; Y is rounded once). No atomics, fixed orders:
 * every kernel is bitwise reproducible.
 *
 * CSR, row-major X (csr_spmm_rows_kernel): a group of G = L x N lanes per row, L lanes over the
 * columns of X (L = the power of two >= k, at most 32; with k > 32 each lane takes columns c and
 * c + 32) and N lanes over the row's nonzeros (N = the power of two >= the mean row length, at
 * most 32 / L). For a nonzero (j, a) the L column lanes read X[j, c .. c + L) contiguously, so a
 * warp's loads coalesce into N row segments of X. The N partial sums of each column are
 * combined by a fixed shuffle tree; the group's first N-lane writes Y[i, :] contiguously. With
 * k = 1 this is CSR-vector (Bell & Garland); with k >= 32 a warp per row, as in the row-major
 * CSR SpMM of Yang, Buluc and Owens ("Design principles for sparse matrix multiplication on the
 * GPU", Euro-Par 2018).
 *
 * CSR, column-major X (csr_spmm_cols_kernel): V lanes per row over its nonzeros (V as in
 * CSR-vector, from the mean row length); each lane keeps a chunk of CC columns' sums in
 * registers (CC = 1, 4, 8 or 16 from k), so a nonzero's index and value are loaded once per
 * chunk and used CC times; X[j, c] are gathers, as for SpMV. Chunks loop inside the row, so the
 * row's nonzeros are re-read from cache, not DRAM. Sums are combined over the V lanes by a fixed
 * shuffle tree; Y[i, c] is written by the row's first lane (consecutive rows of a warp write
 * consecutive addresses of each column).
 *
 * SELL-C-sigma (sell_spmm_kernel): the Uppsala scs mapping, one thread per slot of a chunk, the
 * chunk's columns walked in storage order (coalesced across the chunk's slots), padding (column
 * -1) skipped, the result written to the slot's original row (row_of_slot), so X and Y stay in
 * the user's order. Column-major: each thread takes a chunk of CC columns (slot-fastest thread
 * order). Row-major: L lanes per slot over the columns (as for CSR), so X row segments coalesce.
 *
 * Long rows (CSR; choose_long_rows says which and why): a row whose group would take many more
 * steps than the average is left out of the group kernels (they take it as empty and do not
 * write it) and cut into pieces of piece_len nonzeros; csr_spmm_piece_kernel gives each piece a
 * warp (L column lanes x 32 / L nonzero lanes) that writes the piece's partial sums to a
 * workspace, and csr_spmm_combine_kernel adds each row's pieces in piece order and applies
 * alpha / beta, so the result is still bitwise reproducible. This is the load balance that a
 * group per row lacks on power-law rows (one group would own a row of tens of thousands of
 * nonzeros while the rest of the GPU idles) and on matrices of few long rows (rail: a thousand
 * groups cannot fill the GPU). The cut is row-split rather than merge-path (Merrill and Garland,
 * SC16): pieces never cross rows, so no carry-out fix-up is needed, and the rows that stay with
 * the group kernels are bounded in length. The plan lists the long rows and pieces once (a copy
 * of the row offsets to the host, only when the row statistics show a long row).
 * op T (CSR only): the plan builds A^T on the device (nz_cuda_csr_transpose) and runs the op-N
 * kernels on it.
 * Cost: one pass over A per column chunk (column-major; usually from cache), nnz x k reads of X
 * and rows x k writes (and reads, beta != 0) of Y.
 */

/* ---- kernels -------------------------------------------------------------------------------- */

template <typename Value, typename Accum, typename Offset, int L, int N, int CPL>
__global__ void __launch_bounds__(SPMM_BLOCK)
    csr_spmm_rows_kernel(int32_t rows, int32_t k, const Offset *__restrict__ row_offsets,
                         const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                         const Value *__restrict__ X, int64_t ldx, Accum alpha, Accum beta,
                         bool beta_zero, Value *__restrict__ Y, int64_t ldy, int64_t long_min) {
    constexpr int G = L * N;
    constexpr int ROWS_PER_WARP = 32 / G;
    const int lane = threadIdx.x & 31;
    const int lane_in_group = lane & (G - 1);
    const int column_lane = lane_in_group & (L - 1);
    const int nonzero_lane = lane_in_group / L;
    const int64_t warp = (int64_t)blockIdx.x * SPMM_WARPS + (threadIdx.x >> 5);
    const int64_t stride = (int64_t)gridDim.x * SPMM_WARPS * ROWS_PER_WARP;

    /* uniform over the warp, so every lane reaches the shuffles */
    for (int64_t first_row = warp * ROWS_PER_WARP; first_row < rows; first_row += stride) {
        const int64_t row = first_row + lane / G;
        const Offset begin = row < rows ? __ldg(row_offsets + row) : Offset(0);
        const Offset end = row < rows ? __ldg(row_offsets + row + 1) : Offset(0);
        /* a long row belongs to the piece kernel (long_min 0: none) */
        const bool active = row < rows && (long_min == 0 || (int64_t)(end - begin) < long_min);
        Accum sums[CPL];
#pragma unroll
        for (int t = 0; t < CPL; t++) sums[t] = Accum(0);
        if (active) {
            for (Offset p = begin + nonzero_lane; p < end; p += N) {
                const Accum a = (Accum)__ldg(values + p);
                const Value *x = X + (int64_t)__ldg(col_indices + p) * ldx;
#pragma unroll
                for (int t = 0; t < CPL; t++) {
                    const int c = column_lane + t * L;
                    if (c < k) sums[t] += a * (Accum)__ldg(x + c);
                }
            }
        }
#pragma unroll
        for (int t = 0; t < CPL; t++)
#pragma unroll
            for (int offset = G / 2; offset >= L; offset /= 2)
                sums[t] += __shfl_down_sync(0xffffffffu, sums[t], offset, G);
        if (active && nonzero_lane == 0) {
            Value *y = Y + row * ldy;
#pragma unroll
            for (int t = 0; t < CPL; t++) {
                const int c = column_lane + t * L;
                if (c < k)
                    y[c] = (Value)(beta_zero ? alpha * sums[t]
                                             : alpha * sums[t] + beta * (Accum)y[c]);
            }
        }
    }
}

template <typename Value, typename Accum, typename Offset, int V, int CC>
__global__ void __launch_bounds__(SPMM_BLOCK)
    csr_spmm_cols_kernel(int32_t rows, int32_t k, const Offset *__restrict__ row_offsets,
                         const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                         const Value *__restrict__ X, int64_t ldx, Accum alpha, Accum beta,
                         bool beta_zero, Value *__restrict__ Y, int64_t ldy, int64_t long_min) {
    constexpr int ROWS_PER_WARP = 32 / V;
    const int lane = threadIdx.x & 31;
    const int lane_in_vector = lane & (V - 1);
    const int64_t warp = (int64_t)blockIdx.x * SPMM_WARPS + (threadIdx.x >> 5);
    const int64_t stride = (int64_t)gridDim.x * SPMM_WARPS * ROWS_PER_WARP;

    for (int64_t first_row = warp * ROWS_PER_WARP; first_row < rows; first_row += stride) {
        const int64_t row = first_row + lane / V;
        Offset begin = row < rows ? __ldg(row_offsets + row) : Offset(0);
        Offset end = row < rows ? __ldg(row_offsets + row + 1) : Offset(0);
        /* a long row belongs to the piece kernel: walk it as empty, do not write it */
        const bool active = row < rows && (long_min == 0 || (int64_t)(end - begin) < long_min);
        if (!active) begin = end;
        for (int first_column = 0; first_column < k; first_column += CC) {
            const int count = k - first_column < CC ? k - first_column : CC;
            const Value *x = X + (int64_t)first_column * ldx;
            Accum sums[CC];
#pragma unroll
            for (int t = 0; t < CC; t++) sums[t] = Accum(0);
            for (Offset p = begin + lane_in_vector; p < end; p += V) {
                const Accum a = (Accum)__ldg(values + p);
                const int32_t j = __ldg(col_indices + p);
#pragma unroll
                for (int t = 0; t < CC; t++)
                    if (t < count) sums[t] += a * (Accum)__ldg(x + t * ldx + j);
            }
#pragma unroll
            for (int t = 0; t < CC; t++) sums[t] = nzi_cuda_group_sum<V>(sums[t]);
            if (active && lane_in_vector == 0) {
                Value *y = Y + (int64_t)first_column * ldy + row;
#pragma unroll
                for (int t = 0; t < CC; t++)
                    if (t < count)
                        y[t * ldy] = (Value)(beta_zero ? alpha * sums[t]
                                                       : alpha * sums[t] + beta * (Accum)y[t * ldy]);
            }
        }
    }
}

/* Pieces of long rows: warp w takes piece q = w, w + warps, ... Lane: column lane lane mod L,
 * nonzero lane lane / L (32 / L of them); CPL columns per lane (column_lane + {0, L}); X read in
 * either layout. Each lane loads U nonzeros (indices and values), then their X entries, before it
 * adds any, so a lane has U gathers in flight (the loop bound is data-dependent, so the compiler
 * would not overlap iterations on its own). The warp's partial sums for the piece's L x CPL
 * columns go to partials[q][.], combined over the nonzero lanes by a fixed shuffle tree. */
template <typename Value, typename Accum, typename Offset, int L, int CPL>
__global__ void __launch_bounds__(SPMM_BLOCK)
    csr_spmm_piece_kernel(int64_t num_pieces, const int32_t *__restrict__ piece_rows,
                          const int64_t *__restrict__ piece_starts, int64_t piece_len, int32_t k,
                          bool row_major, const Offset *__restrict__ row_offsets,
                          const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                          const Value *__restrict__ X, int64_t ldx, Accum *__restrict__ partials) {
    constexpr int NL = 32 / L; /* nonzero lanes of the warp */
    constexpr int U = 4;       /* nonzeros in flight per lane */
    const int lane = threadIdx.x & 31;
    const int column_lane = lane & (L - 1), nonzero_lane = lane / L;
    const int64_t warps = (int64_t)gridDim.x * SPMM_WARPS;
    for (int64_t q = (int64_t)blockIdx.x * SPMM_WARPS + (threadIdx.x >> 5); q < num_pieces;
         q += warps) {
        const int64_t row = __ldg(piece_rows + q);
        const int64_t start = __ldg(piece_starts + q);
        const int64_t row_end = (int64_t)__ldg(row_offsets + row + 1);
        const int64_t end = start + piece_len < row_end ? start + piece_len : row_end;
        Accum sums[CPL];
#pragma unroll
        for (int t = 0; t < CPL; t++) sums[t] = Accum(0);
        for (int64_t base = start + nonzero_lane; base < end; base += (int64_t)NL * U) {
            int64_t j[U];
            Accum a[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int64_t p = base + (int64_t)u * NL;
                j[u] = p < end ? (int64_t)__ldg(col_indices + p) : -1;
                a[u] = p < end ? (Accum)__ldg(values + p) : Accum(0);
            }
            Accum xv[U][CPL];
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int t = 0; t < CPL; t++) {
                    const int64_t c = column_lane + t * L;
                    xv[u][t] = j[u] >= 0 && c < k ? (Accum)__ldg(X + (row_major ? j[u] * ldx + c
                                                                               : c * ldx + j[u]))
                                                  : Accum(0);
                }
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int t = 0; t < CPL; t++)
                    if (j[u] >= 0) sums[t] += a[u] * xv[u][t];
        }
        /* lanes L apart hold the same columns */
#pragma unroll
        for (int t = 0; t < CPL; t++)
#pragma unroll
            for (int offset = 16; offset >= L; offset /= 2)
                sums[t] += __shfl_down_sync(0xffffffffu, sums[t], offset);
        if (lane < L)
#pragma unroll
            for (int t = 0; t < CPL; t++) partials[q * (L * CPL) + t * L + lane] = sums[t];
    }
}

/* Long row i, column c (thread i k + c): the row's pieces' partial sums added in piece order
 * (so the result does not depend on which warp finished first), then alpha / beta. */
template <typename Value, typename Accum>
__global__ void __launch_bounds__(SPMM_BLOCK)
    csr_spmm_combine_kernel(int64_t num_long, const int32_t *__restrict__ long_rows,
                            const int64_t *__restrict__ first_piece, int32_t k, int lc,
                            bool row_major, const Accum *__restrict__ partials, Accum alpha,
                            Accum beta, bool beta_zero, Value *__restrict__ Y, int64_t ldy) {
    const int64_t total = num_long * k;
    const int64_t stride = (int64_t)gridDim.x * SPMM_BLOCK;
    for (int64_t t = (int64_t)blockIdx.x * SPMM_BLOCK + threadIdx.x; t < total; t += stride) {
        const int64_t i = t / k;
        const int c = (int)(t - i * k);
        const int64_t row = __ldg(long_rows + i);
        const int64_t last = __ldg(first_piece + i + 1);
        Accum sum = Accum(0);
        for (int64_t q = __ldg(first_piece + i); q < last; q++) sum += partials[q * lc + c];
        Value *y = Y + (row_major ? row * ldy + c : (int64_t)c * ldy + row);
        *y = (Value)(beta_zero ? alpha * sum : alpha * sum + beta * (Accum)*y);
    }
}

/* SELL: thread -> (slot, columns). Column-major (RowMajor false): slot = t mod slots, columns
 * [CC (t / slots), + CC). Row-major: slot = t / L, columns column_lane + {0, L} (CPL of them). */
template <typename Value, typename Accum, bool RowMajor, int L, int CPL>
__global__ void __launch_bounds__(SPMM_BLOCK)
    sell_spmm_kernel(int64_t slots, int chunk, int32_t k, const int64_t *__restrict__ chunk_offsets,
                     const int32_t *__restrict__ chunk_widths,
                     const int32_t *__restrict__ row_of_slot,
                     const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                     const Value *__restrict__ X, int64_t ldx, Accum alpha, Accum beta,
                     bool beta_zero, Value *__restrict__ Y, int64_t ldy) {
    const int64_t column_groups = RowMajor ? 1 : (k + CPL - 1) / CPL;
    const int64_t total = RowMajor ? slots * L : slots * column_groups;
    const int64_t stride = (int64_t)gridDim.x * SPMM_BLOCK;
    for (int64_t t = (int64_t)blockIdx.x * SPMM_BLOCK + threadIdx.x; t < total; t += stride) {
        const int64_t slot = RowMajor ? t / L : t % slots;
        const int first_column = RowMajor ? (int)(t % L) : (int)(t / slots) * CPL;
        const int32_t row = __ldg(row_of_slot + slot);
        if (row < 0) continue;
        const int64_t c_index = slot / chunk;
        const int s = (int)(slot - c_index * chunk);
        const int64_t base = __ldg(chunk_offsets + c_index) + s;
        const int32_t width = __ldg(chunk_widths + c_index);
        Accum sums[CPL];
#pragma unroll
        for (int u = 0; u < CPL; u++) sums[u] = Accum(0);
        for (int32_t w = 0; w < width; w++) {
            const int64_t e = base + (int64_t)w * chunk;
            const int32_t j = __ldg(col_indices + e);
            if (j < 0) continue;
            const Accum a = (Accum)__ldg(values + e);
#pragma unroll
            for (int u = 0; u < CPL; u++) {
                const int c = RowMajor ? first_column + u * L : first_column + u;
                if (c < k)
                    sums[u] += a * (Accum)__ldg(X + (RowMajor ? (int64_t)j * ldx + c
                                                             : (int64_t)c * ldx + j));
            }
        }
#pragma unroll
        for (int u = 0; u < CPL; u++) {
            const int c = RowMajor ? first_column + u * L : first_column + u;
            if (c < k) {
                Value *y = Y + (RowMajor ? (int64_t)row * ldy + c : (int64_t)c * ldy + row);
                *y = (Value)(beta_zero ? alpha * sums[u] : alpha * sums[u] + beta * (Accum)*y);
            }
        }
    }
}

/* Y = beta Y on a rows x k dense block (ld gaps untouched; beta == 0 writes zeros unread). */
template <typename Value>
__global__ void __launch_bounds__(SPMM_BLOCK)
    dense_scale_kernel(int64_t rows, int32_t k, bool row_major, int64_t ld, Value beta,
                       bool beta_zero, Value *__restrict__ Y) {
    const int64_t total = rows * k;
    const int64_t stride = (int64_t)gridDim.x * SPMM_BLOCK;
    for (int64_t t = (int64_t)blockIdx.x * SPMM_BLOCK + threadIdx.x; t < total; t += stride) {
        /* consecutive threads take consecutive elements of the layout */
        const int64_t outer = row_major ? t / k : t / rows, inner = row_major ? t % k : t % rows;
        Value *y = Y + outer * ld + inner;
        *y = beta_zero ? Value(0) : beta * *y;
    }
}

/* ---- launchers ------------------------------------------------------------------------------ */

/* Everything a launch needs, typed once. */
template <typename Value, typename Accum>
struct spmm_args {
    const nzi_cuda_state_t *cs;
    const nz_matrix_t *M;
    int32_t k;
    const Value *X;
    int64_t ldx;
    Accum alpha, beta;
    bool beta_zero;
    Value *Y;
    int64_t ldy;
    int64_t long_min; /* 0: no long-row split */
};

template <typename Value, typename Accum, typename Offset, int L, int N, int CPL>
static void csr_rows_launch(const spmm_args<Value, Accum> &g) {
    constexpr int rows_per_block = SPMM_BLOCK / (L * N);
    const int64_t needed = (g.M->rows + rows_per_block - 1) / rows_per_block;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(g.cs, SPMM_BLOCK, SPMM_WAVES, needed);
    csr_spmm_rows_kernel<Value, Accum, Offset, L, N, CPL><<<blocks, SPMM_BLOCK, 0, g.cs->stream>>>(
        (int32_t)g.M->rows, g.k, nzi_dev_offsets<Offset>(g.M), g.M->device.col_indices,
        (const Value *)g.M->device.values, g.X, g.ldx, g.alpha, g.beta, g.beta_zero, g.Y, g.ldy,
        g.long_min);
}

template <typename Value, typename Accum, typename Offset, int L>
static void csr_rows_by_lanes(const spmm_args<Value, Accum> &g, int nonzero_lanes) {
    if constexpr (L == 32) {
        if (g.k > 32)
            csr_rows_launch<Value, Accum, Offset, 32, 1, 2>(g);
        else
            csr_rows_launch<Value, Accum, Offset, 32, 1, 1>(g);
    } else {
        switch (nonzero_lanes) {
        case 1: csr_rows_launch<Value, Accum, Offset, L, 1, 1>(g); break;
        case 2: csr_rows_launch<Value, Accum, Offset, L, 2, 1>(g); break;
        case 4: if constexpr (L <= 8) csr_rows_launch<Value, Accum, Offset, L, 4, 1>(g); break;
        case 8: if constexpr (L <= 4) csr_rows_launch<Value, Accum, Offset, L, 8, 1>(g); break;
        case 16: if constexpr (L <= 2) csr_rows_launch<Value, Accum, Offset, L, 16, 1>(g); break;
        default: if constexpr (L == 1) csr_rows_launch<Value, Accum, Offset, 1, 32, 1>(g); break;
        }
    }
}

template <typename Value, typename Accum, typename Offset, int V, int CC>
static void csr_cols_launch(const spmm_args<Value, Accum> &g) {
    constexpr int rows_per_block = SPMM_BLOCK / V;
    const int64_t needed = (g.M->rows + rows_per_block - 1) / rows_per_block;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(g.cs, SPMM_BLOCK, SPMM_WAVES, needed);
    csr_spmm_cols_kernel<Value, Accum, Offset, V, CC><<<blocks, SPMM_BLOCK, 0, g.cs->stream>>>(
        (int32_t)g.M->rows, g.k, nzi_dev_offsets<Offset>(g.M), g.M->device.col_indices,
        (const Value *)g.M->device.values, g.X, g.ldx, g.alpha, g.beta, g.beta_zero, g.Y, g.ldy,
        g.long_min);
}

template <typename Value, typename Accum, typename Offset, int V>
static void csr_cols_by_chunk(const spmm_args<Value, Accum> &g, int chunk) {
    switch (chunk) {
    case 1: csr_cols_launch<Value, Accum, Offset, V, 1>(g); break;
    case 4: csr_cols_launch<Value, Accum, Offset, V, 4>(g); break;
    case 8: csr_cols_launch<Value, Accum, Offset, V, 8>(g); break;
    default: csr_cols_launch<Value, Accum, Offset, V, 16>(g); break;
    }
}

template <typename Value, typename Accum, typename Offset, int L, int CPL>
static void csr_pieces_launch(const spmm_args<Value, Accum> &g, const spmm_cuda_state_t *st,
                              bool row_major) {
    Accum *partials = (Accum *)st->partials;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(
        g.cs, SPMM_BLOCK, SPMM_WAVES, (st->num_pieces + SPMM_WARPS - 1) / SPMM_WARPS);
    csr_spmm_piece_kernel<Value, Accum, Offset, L, CPL><<<blocks, SPMM_BLOCK, 0, g.cs->stream>>>(
        st->num_pieces, st->piece_rows, st->piece_starts, st->piece_len, g.k, row_major,
        nzi_dev_offsets<Offset>(g.M), g.M->device.col_indices, (const Value *)g.M->device.values,
        g.X, g.ldx, partials);
    const int64_t total = st->num_long * g.k;
    const unsigned combine_blocks = (unsigned)nzi_cuda_grid_blocks(
        g.cs, SPMM_BLOCK, SPMM_WAVES, (total + SPMM_BLOCK - 1) / SPMM_BLOCK);
    csr_spmm_combine_kernel<Value, Accum><<<combine_blocks, SPMM_BLOCK, 0, g.cs->stream>>>(
        st->num_long, st->long_rows, st->first_piece, g.k, L * CPL, row_major, partials, g.alpha,
        g.beta, g.beta_zero, g.Y, g.ldy);
}

template <typename Value, typename Accum, typename Offset>
static void csr_long_rows(const spmm_args<Value, Accum> &g, const spmm_cuda_state_t *st,
                          bool row_major) {
    switch (st->column_lanes) {
    case 1: csr_pieces_launch<Value, Accum, Offset, 1, 1>(g, st, row_major); break;
    case 2: csr_pieces_launch<Value, Accum, Offset, 2, 1>(g, st, row_major); break;
    case 4: csr_pieces_launch<Value, Accum, Offset, 4, 1>(g, st, row_major); break;
    case 8: csr_pieces_launch<Value, Accum, Offset, 8, 1>(g, st, row_major); break;
    case 16: csr_pieces_launch<Value, Accum, Offset, 16, 1>(g, st, row_major); break;
    default:
        if (g.k > 32)
            csr_pieces_launch<Value, Accum, Offset, 32, 2>(g, st, row_major);
        else
            csr_pieces_launch<Value, Accum, Offset, 32, 1>(g, st, row_major);
        break;
    }
}

template <typename Value, typename Accum, typename Offset>
static void csr_launch(const spmm_args<Value, Accum> &g, const spmm_cuda_state_t *st,
                       bool row_major) {
    if (st->num_long > 0) csr_long_rows<Value, Accum, Offset>(g, st, row_major);
    if (row_major) {
        switch (st->column_lanes) {
        case 1: csr_rows_by_lanes<Value, Accum, Offset, 1>(g, st->nonzero_lanes); break;
        case 2: csr_rows_by_lanes<Value, Accum, Offset, 2>(g, st->nonzero_lanes); break;
        case 4: csr_rows_by_lanes<Value, Accum, Offset, 4>(g, st->nonzero_lanes); break;
        case 8: csr_rows_by_lanes<Value, Accum, Offset, 8>(g, st->nonzero_lanes); break;
        case 16: csr_rows_by_lanes<Value, Accum, Offset, 16>(g, st->nonzero_lanes); break;
        default: csr_rows_by_lanes<Value, Accum, Offset, 32>(g, st->nonzero_lanes); break;
        }
        return;
    }
    switch (st->nonzero_lanes) {
    case 1: csr_cols_by_chunk<Value, Accum, Offset, 1>(g, st->chunk); break;
    case 2: csr_cols_by_chunk<Value, Accum, Offset, 2>(g, st->chunk); break;
    case 4: csr_cols_by_chunk<Value, Accum, Offset, 4>(g, st->chunk); break;
    case 8: csr_cols_by_chunk<Value, Accum, Offset, 8>(g, st->chunk); break;
    case 16: csr_cols_by_chunk<Value, Accum, Offset, 16>(g, st->chunk); break;
    default: csr_cols_by_chunk<Value, Accum, Offset, 32>(g, st->chunk); break;
    }
}

template <typename Value, typename Accum, bool RowMajor, int L, int CPL>
static void sell_launch_typed(const spmm_args<Value, Accum> &g) {
    const nzi_sell_t *sell = &g.M->host.sell;
    const int64_t slots = sell->num_chunks * (int64_t)sell->chunk;
    const int64_t threads = RowMajor ? slots * L : slots * ((g.k + CPL - 1) / CPL);
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(g.cs, SPMM_BLOCK, SPMM_WAVES,
                                                           (threads + SPMM_BLOCK - 1) / SPMM_BLOCK);
    sell_spmm_kernel<Value, Accum, RowMajor, L, CPL><<<blocks, SPMM_BLOCK, 0, g.cs->stream>>>(
        slots, sell->chunk, g.k, sell->chunk_offsets, sell->chunk_widths, sell->row_of_slot,
        sell->col_indices, (const Value *)sell->values, g.X, g.ldx, g.alpha, g.beta, g.beta_zero,
        g.Y, g.ldy);
}

template <typename Value, typename Accum>
static void sell_launch(const spmm_args<Value, Accum> &g, const spmm_cuda_state_t *st,
                        bool row_major) {
    if (!row_major) {
        switch (st->chunk) {
        case 1: sell_launch_typed<Value, Accum, false, 1, 1>(g); break;
        case 4: sell_launch_typed<Value, Accum, false, 1, 4>(g); break;
        case 8: sell_launch_typed<Value, Accum, false, 1, 8>(g); break;
        default: sell_launch_typed<Value, Accum, false, 1, 16>(g); break;
        }
        return;
    }
    switch (st->column_lanes) {
    case 1: sell_launch_typed<Value, Accum, true, 1, 1>(g); break;
    case 2: sell_launch_typed<Value, Accum, true, 2, 1>(g); break;
    case 4: sell_launch_typed<Value, Accum, true, 4, 1>(g); break;
    case 8: sell_launch_typed<Value, Accum, true, 8, 1>(g); break;
    case 16: sell_launch_typed<Value, Accum, true, 16, 1>(g); break;
    default:
        if (g.k > 32)
            sell_launch_typed<Value, Accum, true, 32, 2>(g);
        else
            sell_launch_typed<Value, Accum, true, 32, 1>(g);
        break;
    }
}

template <typename Value, typename Accum>
static nz_status_t spmm_launch(const nz_spmm_plan_t *plan, double alpha, const void *X,
                               int64_t ldx, double beta, void *Y, int64_t ldy) {
    nz_context_t *ctx = plan->ctx;
    const spmm_cuda_state_t *st = (const spmm_cuda_state_t *)plan->state;
    const bool row_major = plan->layout == NZ_ROW_MAJOR;
    spmm_args<Value, Accum> g;
    g.cs = nzi_cuda(ctx);
    g.M = st->run;
    g.k = (int32_t)plan->k;
    g.X = (const Value *)X;
    g.ldx = ldx;
    g.alpha = (Accum)alpha;
    g.beta = (Accum)beta;
    g.beta_zero = beta == 0.0;
    g.Y = (Value *)Y;
    g.ldy = ldy;
    g.long_min = st->num_long > 0 ? st->long_min : 0;
    if (g.M->format == NZ_FORMAT_SELL)
        sell_launch<Value, Accum>(g, st, row_major);
    else if (g.M->device.offset_type == NZ_I64)
        csr_launch<Value, Accum, int64_t>(g, st, row_major);
    else
        csr_launch<Value, Accum, int32_t>(g, st, row_major);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

template <typename Value>
static nz_status_t dense_scale(nz_context_t *ctx, int64_t rows, int64_t k, bool row_major,
                               int64_t ld, double beta, void *Y) {
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t total = rows * k;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(cs, SPMM_BLOCK, 2,
                                                           (total + SPMM_BLOCK - 1) / SPMM_BLOCK);
    dense_scale_kernel<Value><<<blocks, SPMM_BLOCK, 0, cs->stream>>>(
        rows, (int32_t)k, row_major, ld, (Value)beta, beta == 0.0, (Value *)Y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* ---- execution ------------------------------------------------------------------------------ */

/* BLAS rules: alpha == 0, no nonzeros or an empty X reduce to Y = beta Y (X is not read);
 * beta == 0 never reads Y. */
nz_status_t nz_cuda_spmm_execute(const nz_spmm_plan_t *plan, double alpha, const void *X,
                                 int64_t ldx, double beta, void *Y, int64_t ldy) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const spmm_cuda_state_t *st = (const spmm_cuda_state_t *)plan->state;
    const bool row_major = plan->layout == NZ_ROW_MAJOR;
    const int64_t yrows = plan->op == NZ_OP_N ? A->rows : A->cols;
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "nz_spmm_execute: the plan is corrupted");
    NZI_TRY(nzi_cuda_enter(ctx));
    if (yrows == 0) return NZ_SUCCESS;
    if (A->nnz == 0 || A->rows == 0 || A->cols == 0 || alpha == 0.0) {
        if (beta == 1.0) return NZ_SUCCESS;
        return A->value_type == NZ_F32
                   ? dense_scale<float>(ctx, yrows, plan->k, row_major, ldy, beta, Y)
                   : dense_scale<double>(ctx, yrows, plan->k, row_major, ldy, beta, Y);
    }
    if (A->value_type == NZ_F64) return spmm_launch<double, double>(plan, alpha, X, ldx, beta, Y, ldy);
    if (plan->flags & NZ_PLAN_MIXED)
        return spmm_launch<float, double>(plan, alpha, X, ldx, beta, Y, ldy);
    return spmm_launch<float, float>(plan, alpha, X, ldx, beta, Y, ldy);
}
