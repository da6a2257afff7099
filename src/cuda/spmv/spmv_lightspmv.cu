/* spmv_lightspmv.cu: LightSpMV CSR SpMV, vector- and warp-level dynamic row distribution. */
/*
 * Design source: Y. Liu and B. Schmidt, "LightSpMV: faster CSR-based sparse matrix-vector
 * multiplication on CUDA-enabled GPUs", ASAP 2015 (and the GTC poster P5267 by Liu,
 * Gonzalez-Dominguez and Schmidt).
 *
 * Which thread handles which data: the warp is split into vectors of V lanes (V = 2, 4, 8 or
 * 32). Rows are handed out dynamically through one global row counter (a 64-bit unsigned in
 * device memory, reset with cudaMemsetAsync before every launch), in chunks:
 *   - vector level (light-vector): lane 0 of each vector does atomicAdd(counter, S), broadcasts
 *     the first row to its V lanes with a width-V __shfl_sync, and the vector computes the S rows
 *     first .. first + S - 1 in order, LIGHT_ROWS_IN_FLIGHT at a time (V < 32);
 *   - warp level (light-warp): lane 0 of each warp does atomicAdd(counter, S x 32 / V) and
 *     broadcasts the base to the whole warp; in step s = 0 .. S - 1, vector j of the warp takes
 *     row base + s x 32 / V + j (the warp's vectors take consecutive rows in every step, so the
 *     row-offset loads of a step coalesce).
 * S (rows per atomic per vector, "steps") is chosen at plan setup so one atomic hands a vector
 * about C nonzeros per lane: S = C x V / mean row length (C = LIGHT_CHUNK_ELEMENTS at warp
 * level, LIGHT_VECTOR_CHUNK_ELEMENTS at vector level),
 * clamped to [1, LIGHT_MAX_STEPS] and so that every resident vector (warp) can still take at
 * least LIGHT_MIN_GRABS chunks (the dynamic balance the paper relies on). The paper and the seed
 * take one row per atomic (S = 1): on an H100 the 8M-row 7-point Laplacian then spends ~1.9 ms
 * serialised on the counter against ~0.2 ms for CSR-vector (issue 19). NZ_PLAN_LIGHT_PER_ROW
 * keeps S = 1, the original distribution, for comparisons.
 * Within a row, lane l accumulates the entries row_start + l, row_start + l + V, ... (for V = 32
 * the start is rounded down to a multiple of 32 so that every warp-wide load is aligned), then
 * the V partial sums are combined by a fixed shuffle tree and lane 0 writes
 * y[row] = alpha * sum + beta * y[row] (y is not read when beta == 0).
 *
 * At vector level with V < 32, a vector's rows go LIGHT_ROWS_IN_FLIGHT at a time and, where
 * A's arrays are 16-byte aligned, as one range of entries read four a lane with 16-byte loads
 * (light_rows_dot).
 *
 * Reproducibility: bitwise reproducible run to run, with and without chunks. Which vector takes a
 * row changes from run to run, but a row's sum depends only on where the row lies (its start
 * offset, and at vector level its group of rows: chunks start at multiples of S, fixed for the
 * plan), V and the fixed shuffle tree, all fixed for the plan (S changes who computes a row,
 * never how; the paper's form, NZ_PLAN_LIGHT_PER_ROW, may have another V and so other
 * roundings).
 *
 * Launch: warp level, thread blocks of the device's maximum block size, grid = SMs x (max
 * threads per SM / threads per block), as in the paper's host driver; vector level, blocks of
 * 256 at the occupancy its registers allow (light_grid); V from the rounded mean row length: with
 * NZ_PLAN_LIGHT_PER_ROW the driver's thresholds (mean <= 2: 2, <= 4: 4, <= 64: 8, else 32, those
 * of the LightSpMV 1.0 source release), by default about four nonzeros per lane
 * (light_vector_width).
 */
#include "cuda_internal.h"

#include <math.h>

/* Per-plan state: the row counter and the rows per atomic. */
typedef struct light_state {
    unsigned long long *row_counter; /* device; 64-bit: with chunks, the counter overshoots the
                                        row count by up to one chunk per vector */
    unsigned int steps;              /* S: rows each vector computes per atomic */
} light_state_t;

/* The largest block size the kernels are compiled for (launch bounds); the launch uses
 * min(device maximum, this). */
#define LIGHT_MAX_THREADS 1024
/* The vector-level kernel's blocks: its rows in flight take 46-59 registers a thread unbounded,
 * so only one block of 1024 fit an SM (half its threads). 256-thread blocks, at least
 * LIGHT_VECTOR_MIN_BLOCKS of them per SM (at most 48 registers, no spills but 4 bytes in one
 * float / 64-bit-offset width): 1280 threads an SM. */
#define LIGHT_VECTOR_THREADS 256
#define LIGHT_VECTOR_MIN_BLOCKS 5
/* Nonzeros per lane one atomic should hand out: few enough that the chunk a vector may be left
 * finishing alone at the end is short, many enough that the counter's atomics (one per chunk
 * instead of one per row) stay far below the SpMV's own traffic. Warp level 32; vector level 16,
 * whose vectors walk a chunk's rows four at a time in sequence. H100
 * (bench/results/h100-2026-11-26-s15-light-chunks-54b16d4.txt), light-vector us at 16 / 32 / 64 /
 * 128 elements: Laplacian 200^3 single 256.9 / 266.4 / 317.9 / 356.7, FE 128 double 269.2 /
 * 302.5 / 351.1 / 373.7 (64 and 128 with 4 and 2 grabs a vector); light-warp at 16 ran FE single
 * 222.5 against 197.9 at 32. */
#ifndef LIGHT_CHUNK_ELEMENTS
#define LIGHT_CHUNK_ELEMENTS 32
#endif
#ifndef LIGHT_VECTOR_CHUNK_ELEMENTS
#define LIGHT_VECTOR_CHUNK_ELEMENTS 16
#endif
/* At most this many rows per vector per atomic (rows of ~0 nonzeros would otherwise ask for
 * huge chunks). */
#define LIGHT_MAX_STEPS 1024
/* Every resident vector (warp) should find at least this many chunks to take, or the dynamic
 * distribution degenerates into a static one on small matrices. */
#ifndef LIGHT_MIN_GRABS
#define LIGHT_MIN_GRABS 8
#endif

/* Mask of the V lanes of the vector the calling lane belongs to (V divides 32). */
template <int V>
__device__ __forceinline__ unsigned light_vector_mask(int lane_in_warp) {
    return (0xffffffffu >> (32 - V)) << (lane_in_warp & ~(V - 1));
}

/* Loads in flight per lane in light_row_dot: U column indices, then U values, then U gathers of
 * x, as CSR-vector does (a plain loop left one load chain per lane in flight). */
#define LIGHT_UNROLL 4

/* Dot product of one row by the V lanes of a vector, reduced to lane 0 of the vector (other lanes
 * return partial garbage). The V lanes must be converged with `mask` naming exactly them. Lane
 * l adds entries first + l, first + l + V, ... in order (LIGHT_UNROLL of them loaded at a time),
 * so a row's sum depends only on its start, its end and V. */
template <typename Value, typename Offset, int V>
__device__ __forceinline__ Value light_row_dot(Offset row_start, Offset row_end, int lane,
                                               unsigned mask,
                                               const int32_t *__restrict__ col_indices,
                                               const Value *__restrict__ values,
                                               const Value *__restrict__ x) {
    constexpr int U = LIGHT_UNROLL;
    /* 64-bit positions: with 32-bit offsets near INT32_MAX, k + V must not overflow. */
    const int64_t start = (int64_t)row_start, end = (int64_t)row_end;
    /* V == 32 on a row longer than 32: the warp's loads start at a 32-entry boundary; lanes
     * before the row start skip the first step */
    const int64_t first = (V == 32 && end - start > 32) ? start - (start & 31) : start;
    Value sum = Value(0);
    for (int64_t k0 = first + lane; k0 < end; k0 += (int64_t)V * U) {
        int32_t col[U];
        Value val[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int64_t k = k0 + (int64_t)u * V;
            col[u] = k >= start && k < end ? __ldg(col_indices + k) : -1;
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            val[u] = col[u] >= 0 ? __ldg(values + k0 + (int64_t)u * V) : Value(0);
#pragma unroll
        for (int u = 0; u < U; u++)
            if (col[u] >= 0) sum += val[u] * __ldg(x + col[u]);
    }
#pragma unroll
    for (int delta = V / 2; delta > 0; delta >>= 1) sum += __shfl_down_sync(mask, sum, delta, V);
    return sum;
}

template <typename Value>
__device__ __forceinline__ void light_store(Value *__restrict__ y, int64_t row, Value sum,
                                            Value alpha, Value beta) {
    if (beta == Value(0))
        y[row] = alpha * sum;
    else
        y[row] = alpha * sum + beta * y[row];
}

/* LIGHT_ROWS_IN_FLIGHT rows at once, for vectors of V < 32 lanes at vector level: each lane
 * keeps one partial sum per row and issues the rows' loads side by side, so a vector has that
 * many rows' gathers in flight instead of one. H100, 7-point Laplacian 200^3 (V = 8): 581.7 ->
 * 294.4 us single, 1002.4 -> 370.4 us double (CSR-vector 205 / 307 us). The same at warp level
 * (four steps' rows at once) ran 4-8% slower than one step at a time there and on FE, so the
 * warp level keeps one row per vector per step. Row r is [starts[r], ends[r]) (empty for a row
 * past the end); the R rows are consecutive, so their entries [starts[0], ends[R - 1]) are too.
 *
 * Quad (the arrays are 16-byte aligned, light_quad_ok): the vector reads those entries as one
 * range, four consecutive columns and values a lane with 16-byte loads (lane l: entries
 * a + 4 l .. a + 4 l + 3, a = starts[0] rounded down to a multiple of 4, then 4 V further each
 * step), and adds each product to the sum of its row (the count of row ends at or below it). A
 * warp's load of columns is then four 128-byte lines for the four vectors' 32 entries each, not
 * four 32-byte pieces for one row of each: ncu, H100, Laplacian single, the row-by-row form made
 * 23.0 M L2 requests against CSR-vector's 8.7 M and ran 1.4x its time. Without Quad lane l adds
 * entries start + l, start + l + V, ... of each row. Either way a row's sum depends only on the
 * plan (the R-row groups start at fixed rows: chunks begin at multiples of S) and the fixed
 * shuffle tree: bitwise reproducible run to run. */
#ifndef LIGHT_ROWS_IN_FLIGHT
#define LIGHT_ROWS_IN_FLIGHT 4
#endif

/* Four consecutive columns and values at k (a multiple of 4: 16-byte aligned when the arrays
 * are), as 16-byte loads. */
__device__ __forceinline__ void light_load4(const int32_t *__restrict__ col_indices,
                                            const float *__restrict__ values, int64_t k,
                                            int32_t col[4], float val[4]) {
    const int4 c = __ldg((const int4 *)(col_indices + k));
    const float4 v = __ldg((const float4 *)(values + k));
    col[0] = c.x; col[1] = c.y; col[2] = c.z; col[3] = c.w;
    val[0] = v.x; val[1] = v.y; val[2] = v.z; val[3] = v.w;
}
__device__ __forceinline__ void light_load4(const int32_t *__restrict__ col_indices,
                                            const double *__restrict__ values, int64_t k,
                                            int32_t col[4], double val[4]) {
    const int4 c = __ldg((const int4 *)(col_indices + k));
    const double2 v0 = __ldg((const double2 *)(values + k));
    const double2 v1 = __ldg((const double2 *)(values + k + 2));
    col[0] = c.x; col[1] = c.y; col[2] = c.z; col[3] = c.w;
    val[0] = v0.x; val[1] = v0.y; val[2] = v1.x; val[3] = v1.y;
}

template <typename Value, typename Offset, int V, int R, bool Quad>
__device__ __forceinline__ void light_rows_dot(const Offset *starts, const Offset *ends, int lane,
                                               unsigned mask, int64_t nnz,
                                               const int32_t *__restrict__ col_indices,
                                               const Value *__restrict__ values,
                                               const Value *__restrict__ x, Value *sums) {
#pragma unroll
    for (int r = 0; r < R; r++) sums[r] = Value(0);
    if (Quad) {
        /* one step of 4 V entries at a time: two in flight ran FE single 6% faster but the
         * Laplacian 6% slower, and the double kernels spilled (H100,
         * bench/results/h100-2026-11-26-s15-light-quad-0e8452c.txt) */
        const int64_t first = (int64_t)starts[0], last = (int64_t)ends[R - 1];
        for (int64_t k0 = (first & ~(int64_t)3) + 4 * lane; k0 < last; k0 += 4 * V) {
            int32_t col[4];
            Value val[4];
            if (k0 + 4 <= nnz && k0 < last) {
                light_load4(col_indices, values, k0, col, val);
            } else { /* the last entries of A: no load past its end */
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const bool in = k0 + j < nnz && k0 + j < last;
                    col[j] = in ? __ldg(col_indices + k0 + j) : 0;
                    val[j] = in ? __ldg(values + k0 + j) : Value(0);
                }
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int64_t k = k0 + j;
                if (k < first || k >= last) continue;
                const Value p = val[j] * __ldg(x + col[j]);
                int row = 0; /* rows of the group ending at or before k */
#pragma unroll
                for (int r = 0; r + 1 < R; r++) row += k >= (int64_t)ends[r];
#pragma unroll
                for (int r = 0; r < R; r++)
                    if (row == r) sums[r] += p;
            }
        }
    } else {
        int64_t longest = 0;
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int64_t length = (int64_t)ends[r] - (int64_t)starts[r];
            if (length > longest) longest = length;
        }
        for (int64_t o = lane; o < longest; o += V) {
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int64_t k = (int64_t)starts[r] + o;
                if (k < (int64_t)ends[r])
                    sums[r] += __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
            }
        }
    }
}

/* The R = 4 partial sums of each of a vector's V >= 4 lanes, reduced to four lanes at once
 * (a transposed butterfly: 4 + log2(V / 4) shuffles instead of 4 log2(V)): at the first level
 * lanes with bit V / 2 set keep rows 2 and 3 and hand rows 0 and 1 to their partner (the others
 * the reverse), at the second bit V / 4 splits the remaining pair, then plain butterflies finish.
 * Returns the sum of row *row (0..3), complete in every lane; lanes with no bit below V / 4 set
 * (0, V / 4, V / 2, 3 V / 4) hold the four rows once. A fixed tree: a row's sum depends only on
 * the lanes' partial sums. */
template <typename Value, int V>
__device__ __forceinline__ Value light_reduce4(const Value *sums, int lane, unsigned mask,
                                               int *row) {
    static_assert(V >= 4, "four rows need four lanes");
    const bool hi = (lane & (V / 2)) != 0;
    const Value t0 = (hi ? sums[2] : sums[0]) +
                     __shfl_xor_sync(mask, hi ? sums[0] : sums[2], V / 2, V);
    const Value t1 = (hi ? sums[3] : sums[1]) +
                     __shfl_xor_sync(mask, hi ? sums[1] : sums[3], V / 2, V);
    const bool odd = (lane & (V / 4)) != 0;
    Value u = (odd ? t1 : t0) + __shfl_xor_sync(mask, odd ? t0 : t1, V / 4, V);
#pragma unroll
    for (int delta = V / 8; delta > 0; delta >>= 1) u += __shfl_xor_sync(mask, u, delta, V);
    *row = 2 * (int)hi + (int)odd;
    return u;
}

/* Vector level: each vector fetches `steps` consecutive rows per atomic and computes them in
 * order, LIGHT_ROWS_IN_FLIGHT at a time where V < 32. A vector leaves the loop on its own, so
 * every shuffle names only the vector's lanes. */
template <typename Value, typename Offset, int V, bool Quad>
__global__ void __launch_bounds__(LIGHT_VECTOR_THREADS, LIGHT_VECTOR_MIN_BLOCKS)
light_vector_kernel(unsigned long long *__restrict__ row_counter, unsigned int rows,
                    unsigned int steps, int64_t nnz, const Offset *__restrict__ row_offsets,
                    const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                    const Value *__restrict__ x, Value *__restrict__ y, Value alpha, Value beta) {
    const int lane_in_warp = threadIdx.x & 31;
    const int lane = threadIdx.x & (V - 1);
    const unsigned mask = light_vector_mask<V>(lane_in_warp);
    for (;;) {
        unsigned long long first = 0;
        if (lane == 0) first = atomicAdd(row_counter, (unsigned long long)steps);
        first = __shfl_sync(mask, first, 0, V);
        if (first >= rows) break;
        const unsigned long long last =
            first + steps < (unsigned long long)rows ? first + steps : (unsigned long long)rows;
        /* consecutive rows: each row's end is the next row's start */
        Offset row_start = __ldg(row_offsets + first);
        unsigned long long row = first;
        if (V < 32) {
            constexpr int R = LIGHT_ROWS_IN_FLIGHT;
            for (; row + R <= last; row += R) {
                Offset starts[R], ends[R];
                Value sums[R];
#pragma unroll
                for (int r = 0; r < R; r++) {
                    starts[r] = r == 0 ? row_start : ends[r - 1];
                    ends[r] = __ldg(row_offsets + row + r + 1);
                }
                light_rows_dot<Value, Offset, V, R, Quad>(starts, ends, lane, mask, nnz,
                                                          col_indices, values, x, sums);
                if constexpr (V >= 4 && R == 4) {
                    int r = 0;
                    const Value sum = light_reduce4<Value, V>(sums, lane, mask, &r);
                    if ((lane & (V / 4 - 1)) == 0)
                        light_store(y, (int64_t)(row + r), sum, alpha, beta);
                } else {
#pragma unroll
                    for (int r = 0; r < R; r++)
#pragma unroll
                        for (int delta = V / 2; delta > 0; delta >>= 1)
                            sums[r] += __shfl_down_sync(mask, sums[r], delta, V);
                    if (lane == 0) {
#pragma unroll
                        for (int r = 0; r < R; r++)
                            light_store(y, (int64_t)(row + r), sums[r], alpha, beta);
                    }
                }
                row_start = ends[R - 1];
            }
        }
        for (; row < last; row++) {
            const Offset row_end = __ldg(row_offsets + row + 1);
            Value sum = light_row_dot<Value, Offset, V>(row_start, row_end, lane, mask,
                                                        col_indices, values, x);
            if (lane == 0) light_store(y, (int64_t)row, sum, alpha, beta);
            row_start = row_end;
        }
    }
}

/* Warp level: lane 0 of the warp fetches steps x 32 / V rows at once; in each step the warp's
 * vectors take 32 / V consecutive rows. The loop conditions depend only on the broadcast base
 * and the step, so the whole warp runs the same iterations and the full-warp shuffle at the top
 * is always reached by all 32 lanes. */
template <typename Value, typename Offset, int V>
__global__ void __launch_bounds__(LIGHT_MAX_THREADS)
light_warp_kernel(unsigned long long *__restrict__ row_counter, unsigned int rows,
                  unsigned int steps, const Offset *__restrict__ row_offsets,
                  const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                  const Value *__restrict__ x, Value *__restrict__ y, Value alpha, Value beta) {
    constexpr unsigned ROWS_PER_STEP = 32u / V;
    const int lane_in_warp = threadIdx.x & 31;
    const int lane = threadIdx.x & (V - 1);
    const unsigned vector_in_warp = (unsigned)(lane_in_warp / V);
    const unsigned mask = light_vector_mask<V>(lane_in_warp);
    for (;;) {
        unsigned long long base = 0;
        __syncwarp();
        if (lane_in_warp == 0)
            base = atomicAdd(row_counter, (unsigned long long)steps * ROWS_PER_STEP);
        base = __shfl_sync(0xffffffffu, base, 0);
        if (base >= rows) break;
        for (unsigned step = 0; step < steps; step++) {
            const unsigned long long step_base = base + (unsigned long long)step * ROWS_PER_STEP;
            if (step_base >= rows) break;
            const unsigned long long row = step_base + vector_in_warp;
            if (row < rows) {
                const Offset row_start = __ldg(row_offsets + row);
                const Offset row_end = __ldg(row_offsets + row + 1);
                Value sum = light_row_dot<Value, Offset, V>(row_start, row_end, lane, mask,
                                                            col_indices, values, x);
                if (lane == 0) light_store(y, (int64_t)row, sum, alpha, beta);
            }
        }
    }
}

/* V. The paper's host driver rule (vector level, and NZ_PLAN_LIGHT_PER_ROW): from
 * rint(nnz / rows), <= 2: 2, <= 4: 4, <= 64: 8, else 32. The chunked warp-level form gives each
 * lane about four nonzeros of a row as CSR-vector does (<= 8: 2, <= 16: 4, <= 64: 8, else 32;
 * the kernels exist for V = 2, 4, 8, 32): on the 7-point Laplacian V = 8 left one lane in eight
 * idle and four rows per warp in flight where CSR-vector has sixteen. */
static int light_vector_width(int64_t rows, int64_t nnz, unsigned flags, bool warp_level) {
    if (rows <= 0) return 2;
    double mean = rint((double)nnz / (double)rows);
    /* Vector level keeps the paper's V: its vectors take chunks far apart, so narrower vectors
     * only split a warp's loads over more segments (H100, Laplacian 200^3 f32: V = 2 ran 1371 us
     * against 582 us with V = 8). Warp level's vectors take consecutive rows: V = 2 ran 231 us
     * against 328 us (CSR-vector 205 us). */
    const bool paper = (flags & NZ_PLAN_LIGHT_PER_ROW) != 0 || !warp_level;
    if (mean <= (paper ? 2.0 : 8.0)) return 2;
    if (mean <= (paper ? 4.0 : 16.0)) return 4;
    if (mean <= 64.0) return 8;
    return 32;
}

/* The launch shape: warp level, blocks of the device's maximum block size (at most
 * LIGHT_MAX_THREADS), as many as the device holds at once (the paper's host driver); vector
 * level, LIGHT_VECTOR_THREADS a block and the LIGHT_VECTOR_MIN_BLOCKS per SM its registers
 * allow; either way no more vectors than rows. */
static void light_grid(const nzi_cuda_state_t *cs, int64_t rows, int vector_width,
                       bool warp_level, int *threads, int64_t *blocks) {
    const int limit = warp_level ? LIGHT_MAX_THREADS : LIGHT_VECTOR_THREADS;
    int t = cs->max_threads_per_block < limit ? cs->max_threads_per_block : limit;
    t &= ~31;
    if (t < 32) t = 32;
    int blocks_per_sm = cs->max_threads_per_sm / t;
    if (!warp_level && blocks_per_sm > LIGHT_VECTOR_MIN_BLOCKS)
        blocks_per_sm = LIGHT_VECTOR_MIN_BLOCKS;
    if (blocks_per_sm < 1) blocks_per_sm = 1;
    int64_t grid_blocks = (int64_t)cs->sm_count * blocks_per_sm;
    const int64_t vectors_per_block = t / vector_width;
    const int64_t needed = (rows + vectors_per_block - 1) / vectors_per_block;
    if (grid_blocks > needed) grid_blocks = needed;
    if (grid_blocks < 1) grid_blocks = 1;
    *threads = t;
    *blocks = grid_blocks;
}

/* S, the rows per vector per atomic (see the file header): about LIGHT_CHUNK_ELEMENTS (warp level)
 * or LIGHT_VECTOR_CHUNK_ELEMENTS (vector level) nonzeros
 * per lane, at most LIGHT_MAX_STEPS, and small enough that each of the `units` resident vectors
 * (vector level) or warps (warp level, rows_per_step = 32 / V rows a step) finds
 * LIGHT_MIN_GRABS chunks. 1 under NZ_PLAN_LIGHT_PER_ROW. */
static unsigned int light_steps(int64_t rows, int64_t nnz, int vector_width, int64_t units,
                                int64_t rows_per_step, bool warp_level, unsigned flags) {
    if (flags & NZ_PLAN_LIGHT_PER_ROW) return 1;
    const double mean = rows > 0 ? (double)nnz / (double)rows : 0.0;
    /* at least 8 lanes' worth per atomic: narrow vectors (V = 2, 4) would otherwise take 4x or
     * 2x as many atomics as V = 8 did for the same rows */
    const int lanes = vector_width > 8 ? vector_width : 8;
    const int chunk = warp_level ? LIGHT_CHUNK_ELEMENTS : LIGHT_VECTOR_CHUNK_ELEMENTS;
    double steps = mean > 0 ? (double)chunk * lanes / mean : LIGHT_MAX_STEPS;
    const double balanced = (double)rows / ((double)units * rows_per_step * LIGHT_MIN_GRABS);
    if (steps > balanced) steps = balanced;
    if (steps > LIGHT_MAX_STEPS) steps = LIGHT_MAX_STEPS;
    return steps < 1.0 ? 1u : (unsigned int)steps;
}

static nz_status_t light_setup(nz_spmv_plan_t *plan) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    light_state_t *state = NULL;
    if (plan->op != NZ_OP_N) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                           "LightSpMV plan: only op = N is implemented (matrix %lld x %lld)",
                           (long long)A->rows, (long long)A->cols);
        goto cleanup;
    }
    if (A->rows > (int64_t)INT32_MAX) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED, "LightSpMV plan: %lld rows exceed int32",
                           (long long)A->rows);
        goto cleanup;
    }
    state = (light_state_t *)nzi_calloc(ctx, 1, sizeof *state);
    if (state == NULL) {
        status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "LightSpMV plan: cannot allocate the state");
        goto cleanup;
    }
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&state->row_counter, sizeof(unsigned long long),
                             "LightSpMV row counter"));
    {
        const bool warp_level = plan->alg == NZ_ALG_LIGHT_WARP;
        const int width = light_vector_width(A->rows, A->nnz, plan->flags, warp_level);
        int threads = 0;
        int64_t blocks = 0;
        light_grid(nzi_cuda(ctx), A->rows, width, warp_level, &threads, &blocks);
        const int64_t units = blocks * (threads / (warp_level ? 32 : width));
        state->steps = light_steps(A->rows, A->nnz, width, units, warp_level ? 32 / width : 1,
                                   warp_level, plan->flags);
        plan->vector_width = width;
    }
    plan->state = state;
    plan->reproducible = 1;
    plan->workspace_bytes = sizeof(unsigned long long);
    state = NULL;
cleanup:
    if (state != NULL) nzi_free(ctx, state);
    return status;
}

static void light_release(nz_spmv_plan_t *plan) {
    light_state_t *state = (light_state_t *)plan->state;
    if (state == NULL) return;
    if (state->row_counter != NULL)
        nz_cuda_free(plan->ctx, state->row_counter, sizeof(unsigned long long));
    nzi_free(plan->ctx, state);
    plan->state = NULL;
}

/* Launch arguments shared by every instantiation. */
typedef struct light_args {
    unsigned long long *counter;
    unsigned int rows, steps;
    bool quad; /* light_quad_ok */
    const nz_matrix_t *A;
    const void *x;
    void *y;
} light_args_t;

template <typename Value, typename Offset, int V>
static void light_launch(bool warp_level, dim3 grid, dim3 block, cudaStream_t stream,
                         const light_args_t *g, Value alpha, Value beta) {
    const Offset *row_offsets = nzi_dev_offsets<Offset>(g->A);
    const Value *values = (const Value *)g->A->device.values;
    if (warp_level)
        light_warp_kernel<Value, Offset, V><<<grid, block, 0, stream>>>(
            g->counter, g->rows, g->steps, row_offsets, g->A->device.col_indices, values,
            (const Value *)g->x, (Value *)g->y, alpha, beta);
    else if constexpr (V < 32) {
        if (g->quad)
            light_vector_kernel<Value, Offset, V, true><<<grid, block, 0, stream>>>(
                g->counter, g->rows, g->steps, g->A->nnz, row_offsets, g->A->device.col_indices,
                values, (const Value *)g->x, (Value *)g->y, alpha, beta);
        else
            light_vector_kernel<Value, Offset, V, false><<<grid, block, 0, stream>>>(
                g->counter, g->rows, g->steps, g->A->nnz, row_offsets, g->A->device.col_indices,
                values, (const Value *)g->x, (Value *)g->y, alpha, beta);
    } else
        light_vector_kernel<Value, Offset, V, false><<<grid, block, 0, stream>>>(
            g->counter, g->rows, g->steps, g->A->nnz, row_offsets, g->A->device.col_indices,
            values, (const Value *)g->x, (Value *)g->y, alpha, beta);
}

template <typename Value, typename Offset>
static void light_dispatch(int V, bool warp_level, dim3 grid, dim3 block, cudaStream_t stream,
                           const light_args_t *g, double alpha, double beta) {
    Value a = (Value)alpha, b = (Value)beta;
    switch (V) {
    case 2: light_launch<Value, Offset, 2>(warp_level, grid, block, stream, g, a, b); break;
    case 4: light_launch<Value, Offset, 4>(warp_level, grid, block, stream, g, a, b); break;
    case 8: light_launch<Value, Offset, 8>(warp_level, grid, block, stream, g, a, b); break;
    default: light_launch<Value, Offset, 32>(warp_level, grid, block, stream, g, a, b); break;
    }
}

/* The vector level reads four entries a lane with 16-byte loads where A's columns and values
 * start 16-byte aligned (always for arrays the library allocates; a wrapped array may start
 * anywhere, and then the entries are read one at a time). */
static bool light_quad_ok(const nz_matrix_t *A) {
    return (((uintptr_t)A->device.col_indices | (uintptr_t)A->device.values) & 15u) == 0;
}

/* Reset the counter on the stream, then one kernel over all rows. */
static nz_status_t light_execute_common(const nz_spmv_plan_t *plan, bool warp_level, double alpha,
                                        const void *x, double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const light_state_t *state = (const light_state_t *)plan->state;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    if (A->rows == 0) return NZ_SUCCESS;
    if (state == NULL)
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "LightSpMV plan has no row counter");
    int threads = 0;
    int64_t grid_blocks = 0;
    light_grid(cs, A->rows, plan->vector_width, warp_level, &threads, &grid_blocks);
    NZI_CUDA_TRY(ctx, cudaMemsetAsync(state->row_counter, 0, sizeof(unsigned long long),
                                      cs->stream));
    dim3 grid((unsigned)grid_blocks), block((unsigned)threads);
    const light_args_t g = {state->row_counter, (unsigned int)A->rows, state->steps,
                            light_quad_ok(A), A, x, y};
    bool f64 = A->value_type == NZ_F64, o64 = A->device.offset_type == NZ_I64;
    int V = plan->vector_width;
    if (f64 && o64)
        light_dispatch<double, int64_t>(V, warp_level, grid, block, cs->stream, &g, alpha, beta);
    else if (f64)
        light_dispatch<double, int32_t>(V, warp_level, grid, block, cs->stream, &g, alpha, beta);
    else if (o64)
        light_dispatch<float, int64_t>(V, warp_level, grid, block, cs->stream, &g, alpha, beta);
    else
        light_dispatch<float, int32_t>(V, warp_level, grid, block, cs->stream, &g, alpha, beta);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t light_vector_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                        double beta, void *y) {
    return light_execute_common(plan, false, alpha, x, beta, y);
}

static nz_status_t light_warp_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                      double beta, void *y) {
    return light_execute_common(plan, true, alpha, x, beta, y);
}

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_light_vector_ops = {
    NZ_ALG_LIGHT_VECTOR, light_setup, light_vector_execute, light_release};
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_light_warp_ops = {
    NZ_ALG_LIGHT_WARP, light_setup, light_warp_execute, light_release};
