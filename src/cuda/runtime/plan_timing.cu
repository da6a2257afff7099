/* plan_timing.cu: GPU support for the SpMV planner: timing a plan's execution, row-length statistics. */
#include "cuda_internal.h"

#include <cub/device/device_radix_sort.cuh>

#include <limits.h>
#include <math.h>
#include <string.h>

/* ---- timing a plan ----------------------------------------------------------------------- */

/*
 * One untimed warm-up execution (first-launch costs, x and A into L2 as they would be in a loop),
 * then `runs` executions, each between the context's two events on its stream; the median of the
 * elapsed times. Event time includes the gaps between the launches of a multi-launch algorithm
 * (a counter reset, a fix-up kernel), which a caller pays too. Synchronises once per run.
 */
nz_status_t nz_cuda_time_plan(const nz_spmv_plan_t *plan, const void *x, void *y, int runs,
                              double *median_seconds) {
    nz_context_t *ctx = plan->ctx;
    float ms[NZI_TIME_MAX_RUNS];
    if (runs < 1 || runs > NZI_TIME_MAX_RUNS)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "plan timing: %d runs (1..%d)", runs,
                         NZI_TIME_MAX_RUNS);
    NZI_TRY(nzi_cuda_enter(ctx));
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    NZI_TRY(nz_cuda_spmv_execute(plan, 1.0, x, 0.0, y));
    for (int r = 0; r < runs; r++) {
        NZI_CUDA_TRY(ctx, cudaEventRecord(cs->event_start, cs->stream));
        NZI_TRY(nz_cuda_spmv_execute(plan, 1.0, x, 0.0, y));
        NZI_CUDA_TRY(ctx, cudaEventRecord(cs->event_stop, cs->stream));
        NZI_CUDA_TRY(ctx, cudaEventSynchronize(cs->event_stop));
        NZI_CUDA_TRY(ctx, cudaEventElapsedTime(&ms[r], cs->event_start, cs->event_stop));
    }
    /* insertion sort: runs is small */
    for (int i = 1; i < runs; i++) {
        float v = ms[i];
        int j = i - 1;
        while (j >= 0 && ms[j] > v) {
            ms[j + 1] = ms[j];
            j--;
        }
        ms[j + 1] = v;
    }
    double median = runs % 2 ? ms[runs / 2] : 0.5 * ((double)ms[runs / 2 - 1] + ms[runs / 2]);
    *median_seconds = median * 1e-3;
    return NZ_SUCCESS;
}

/* ---- row-length statistics of a device CSR matrix ----------------------------------------- */

/* 256 threads, at most 256 blocks: the per-block partials fit a small host array, and 64 K
 * threads striding over the lengths read them at full bandwidth for any matrix worth planning. */
#define STATS_THREADS 256
#define STATS_MAX_BLOCKS 256

typedef struct row_partial {
    double sum_squares;  /* sum of len^2 over the block's rows */
    long long min_len, max_len, empty;
    long long lower, upper; /* max (i - j), max (j - i) (op N: from each row's first and last
                               column, exact for sorted rows) */
} row_partial_t;

/* Length of row i: from row offsets, or a count array (Counts). */
template <typename Data, bool Counts>
static __device__ __forceinline__ long long row_length(const Data *__restrict__ data, int64_t i) {
    if (Counts) return (long long)__ldg(data + i);
    return (long long)(__ldg(data + i + 1) - __ldg(data + i));
}

/*
 * Thread t of the grid takes rows t, t + T, ... (T the grid's threads) and keeps the sum of
 * squared lengths, the minimum, the maximum and the count of empty rows; the block combines its
 * threads' values by a fixed shared-memory tree and thread 0 writes the block's partial. The host
 * adds the partials in block order, so the result does not change from run to run.
 */
template <typename Data, bool Counts>
__global__ void __launch_bounds__(STATS_THREADS)
    length_stats_kernel(int64_t rows, const Data *__restrict__ data,
                        const int32_t *__restrict__ col_indices,
                        row_partial_t *__restrict__ partials) {
    __shared__ double sum_squares[STATS_THREADS];
    __shared__ long long min_len[STATS_THREADS], max_len[STATS_THREADS], empty[STATS_THREADS];
    __shared__ long long lower[STATS_THREADS], upper[STATS_THREADS];
    const int t = threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * STATS_THREADS;
    double squares = 0;
    long long lo = LLONG_MAX, hi = 0, zeros = 0, below = 0, above = 0;
    for (int64_t i = (int64_t)blockIdx.x * STATS_THREADS + t; i < rows; i += stride) {
        const long long len = row_length<Data, Counts>(data, i);
        squares += (double)len * (double)len;
        lo = len < lo ? len : lo;
        hi = len > hi ? len : hi;
        zeros += len == 0;
        if (!Counts && len > 0) {
            const long long first = __ldg(col_indices + __ldg(data + i));
            const long long last = __ldg(col_indices + __ldg(data + i + 1) - 1);
            below = i - first > below ? i - first : below;
            above = last - i > above ? last - i : above;
        }
    }
    sum_squares[t] = squares;
    min_len[t] = lo;
    max_len[t] = hi;
    empty[t] = zeros;
    lower[t] = below;
    upper[t] = above;
    __syncthreads();
    for (int half = STATS_THREADS / 2; half > 0; half /= 2) {
        if (t < half) {
            sum_squares[t] += sum_squares[t + half];
            min_len[t] = min_len[t + half] < min_len[t] ? min_len[t + half] : min_len[t];
            max_len[t] = max_len[t + half] > max_len[t] ? max_len[t + half] : max_len[t];
            empty[t] += empty[t + half];
            lower[t] = lower[t + half] > lower[t] ? lower[t + half] : lower[t];
            upper[t] = upper[t + half] > upper[t] ? upper[t + half] : upper[t];
        }
        __syncthreads();
    }
    if (t == 0) {
        partials[blockIdx.x].sum_squares = sum_squares[0];
        partials[blockIdx.x].min_len = min_len[0];
        partials[blockIdx.x].max_len = max_len[0];
        partials[blockIdx.x].empty = empty[0];
        partials[blockIdx.x].lower = lower[0];
        partials[blockIdx.x].upper = upper[0];
    }
}

/* counts[j] = nonzeros in column j (grid-stride over the nonzeros, one integer atomic each: the
 * counts are exact whatever the order). */
template <typename Offset, typename Count>
__global__ void __launch_bounds__(STATS_THREADS)
    column_count_kernel(Offset nnz, const int32_t *__restrict__ col_indices,
                        Count *__restrict__ counts) {
    const int64_t stride = (int64_t)gridDim.x * STATS_THREADS;
    for (int64_t k = (int64_t)blockIdx.x * STATS_THREADS + threadIdx.x; k < (int64_t)nnz;
         k += stride)
        atomicAdd(counts + __ldg(col_indices + k), (Count)1);
}

nz_status_t nzi_cuda_column_counts(nz_context_t *ctx, const nz_matrix_t *A, uint32_t *counts) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    NZI_TRY(nz_cuda_memset(ctx, counts, 0, (size_t)A->cols * sizeof *counts));
    if (A->nnz <= 0) return NZ_SUCCESS;
    const unsigned grid = (unsigned)nzi_cuda_grid_blocks(
        cs, STATS_THREADS, 4, (A->nnz + STATS_THREADS - 1) / STATS_THREADS);
    column_count_kernel<int64_t, uint32_t><<<grid, STATS_THREADS, 0, cs->stream>>>(
        A->nnz, A->device.col_indices, counts);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* Cost: one pass over the column indices, a sort of cols 32-bit keys, 12 x cols bytes of device
 * workspace. */
nz_status_t nz_cuda_csr_hot_share(nz_context_t *ctx, const nz_matrix_t *dA, double *share) {
    nz_status_t status = NZ_SUCCESS;
    const int32_t cols = (int32_t)dA->cols;
    const int32_t head = cols < NZ_STATS_HOT_COLUMNS ? cols : NZ_STATS_HOT_COLUMNS;
    uint32_t *counts = NULL, *sorted = NULL, *top = NULL;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    *share = 0;
    if (dA->format != NZ_FORMAT_CSR || dA->location != NZ_DEVICE)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "hot-column share: the matrix is not a device CSR matrix");
    if (dA->nnz <= 0 || cols <= 0) return NZ_SUCCESS;
    NZI_TRY(nzi_cuda_enter(ctx));
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&counts, (size_t)cols * sizeof *counts,
                             "hot-column share: column counts"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&sorted, (size_t)cols * sizeof *sorted,
                             "hot-column share: sorted column counts"));
    NZI_CHECK(nzi_cuda_column_counts(ctx, dA, counts));
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortKeysDescending(NULL, scratch_bytes, counts,
                                                                 sorted, cols, 0, 32, cs->stream));
    NZI_CHECK(nz_cuda_malloc(ctx, &scratch, scratch_bytes, "hot-column share: sort scratch"));
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortKeysDescending(scratch, scratch_bytes, counts,
                                                                 sorted, cols, 0, 32, cs->stream));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&top, (size_t)head, sizeof *top,
                              "hot-column share: the most-read columns' counts"));
    NZI_CHECK(nz_cuda_memcpy(ctx, top, sorted, (size_t)head * sizeof *top, NZI_D2H));
    {
        uint64_t sum = 0;
        for (int32_t j = 0; j < head; j++) sum += top[j];
        *share = (double)sum / (double)dA->nnz;
    }
cleanup:
    if (status < 0 && cudaStreamSynchronize(nzi_cuda(ctx)->stream) != cudaSuccess)
        (void)cudaGetLastError();
    nz_cuda_free(ctx, scratch, (size_t)-1);
    nz_cuda_free(ctx, sorted, (size_t)-1);
    nz_cuda_free(ctx, counts, (size_t)-1);
    nzi_free(ctx, top);
    return status;
}

/* One length kernel (after a column count for op T), one copy of at most STATS_MAX_BLOCKS
 * partials back, a fixed-order sum on the host. The mean is nnz / rows exactly; the standard
 * deviation is sqrt(E[len^2] - mean^2) as in nz_matrix_stats, so host and device statistics of
 * one matrix agree up to rounding of the sum of squares (and the planner's choice with them).
 * Cost: a pass over rows + 1 offsets (op T: over the nnz column indices and cols counts, and
 * 8 x cols bytes of device workspace). */
nz_status_t nz_cuda_csr_row_stats(nz_context_t *ctx, const nz_matrix_t *dA, nz_operation_t op,
                                  nz_matrix_stats_t *stats) {
    nz_status_t status = NZ_SUCCESS;
    row_partial_t host[STATS_MAX_BLOCKS];
    row_partial_t *partials = NULL;
    unsigned long long *counts = NULL;
    nz_matrix_stats_t s;
    memset(&s, 0, sizeof s);
    const bool transpose = op == NZ_OP_T;
    s.rows = transpose ? dA->cols : dA->rows;
    s.cols = transpose ? dA->rows : dA->cols;
    s.nnz = dA->nnz;
    if (dA->format != NZ_FORMAT_CSR || dA->location != NZ_DEVICE)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "row statistics: the matrix is not a device CSR matrix");
    if (s.rows > 0) {
        NZI_TRY(nzi_cuda_enter(ctx));
        nzi_cuda_state_t *cs = nzi_cuda(ctx);
        const bool wide = dA->device.offset_type == NZ_I64;
        int64_t blocks = nzi_cuda_grid_blocks(cs, STATS_THREADS, 1,
                                              (s.rows + STATS_THREADS - 1) / STATS_THREADS);
        if (blocks > STATS_MAX_BLOCKS) blocks = STATS_MAX_BLOCKS;
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&partials, (size_t)blocks * sizeof *partials,
                                 "row statistics partials"));
        if (transpose) {
            size_t count_bytes = (size_t)s.rows * sizeof *counts;
            NZI_CHECK(nz_cuda_malloc(ctx, (void **)&counts, count_bytes, "column counts"));
            NZI_CHECK(nz_cuda_memset(ctx, counts, 0, count_bytes));
            if (dA->nnz > 0) {
                int64_t count_blocks = nzi_cuda_grid_blocks(
                    cs, STATS_THREADS, 4, (dA->nnz + STATS_THREADS - 1) / STATS_THREADS);
                typedef unsigned long long count_t;
                if (wide)
                    column_count_kernel<int64_t, count_t>
                        <<<(unsigned)count_blocks, STATS_THREADS, 0, cs->stream>>>(
                            dA->nnz, dA->device.col_indices, counts);
                else
                    column_count_kernel<int32_t, count_t>
                        <<<(unsigned)count_blocks, STATS_THREADS, 0, cs->stream>>>(
                            (int32_t)dA->nnz, dA->device.col_indices, counts);
                NZI_CUDA_CHECK(ctx, cudaGetLastError());
            }
            length_stats_kernel<unsigned long long, true>
                <<<(unsigned)blocks, STATS_THREADS, 0, cs->stream>>>(s.rows, counts, NULL,
                                                                     partials);
        } else if (wide) {
            length_stats_kernel<int64_t, false><<<(unsigned)blocks, STATS_THREADS, 0, cs->stream>>>(
                s.rows, (const int64_t *)dA->device.row_offsets, dA->device.col_indices, partials);
        } else {
            length_stats_kernel<int32_t, false><<<(unsigned)blocks, STATS_THREADS, 0, cs->stream>>>(
                s.rows, (const int32_t *)dA->device.row_offsets, dA->device.col_indices, partials);
        }
        NZI_CUDA_CHECK(ctx, cudaGetLastError());
        NZI_CHECK(nz_cuda_memcpy(ctx, host, partials, (size_t)blocks * sizeof *partials, NZI_D2H));
        double sum_squares = 0;
        s.row_min = INT64_MAX;
        for (int64_t b = 0; b < blocks; b++) {
            sum_squares += host[b].sum_squares;
            if (host[b].min_len < s.row_min) s.row_min = host[b].min_len;
            if (host[b].max_len > s.row_max) s.row_max = host[b].max_len;
            s.empty_rows += host[b].empty;
            if (!transpose && host[b].lower > s.lower_bandwidth) s.lower_bandwidth = host[b].lower;
            if (!transpose && host[b].upper > s.upper_bandwidth) s.upper_bandwidth = host[b].upper;
        }
        s.row_mean = (double)s.nnz / (double)s.rows;
        double variance = sum_squares / (double)s.rows - s.row_mean * s.row_mean;
        s.row_std = variance > 0 ? sqrt(variance) : 0;
    }
    *stats = s;
cleanup:
    nz_cuda_free(ctx, counts, (size_t)-1);
    nz_cuda_free(ctx, partials, (size_t)-1);
    return status;
}
