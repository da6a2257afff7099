/* factor_syncfree.cu: ILU(0) and IC(0) factorisation of a device CSR matrix, synchronisation-free, with the host's shift restarts. */
#include "cuda_internal.h"
#include "precond.h"

#include <cub/device/device_scan.cuh>
#include <cuda/atomic>
#include <math.h>
#include <string.h>

/*
 * The GPU form of nzi_factor_compute (src/solver/precond.c; the same contract, the factor F a
 * device CSR matrix with int64 offsets). Pattern (device): A's pattern with the diagonal added
 * where a row lacks it (a thread per row finds its first column >= i by binary search, a CUB
 * scan gives F's offsets, a warp per row copies the row as double into a, inserting the
 * diagonal, and records its position diag[i]); max|a_ij| and max|a_ii| by a max reduction (one
 * atomicMax per warp on the bits of a non-negative double: exact, order-free). The first
 * non-finite entry of A in row order (atomicMin on row << 32 | position) is refused with the
 * host's message.
 *
 * Factorisation (Liu et al.'s synchronisation-free dependency pattern, as in spsv_syncfree.cu):
 * one warp per row i, rows handed out in level order (nzi_cuda_level_order on the strict lower
 * part of the pattern: the levels of the L solve) by a global ticket counter, so a row waits
 * only for rows of lower levels, which earlier, running warps are computing (progress), and the
 * rows in flight are those of a few levels, not a chain (in ascending row order the resident
 * window held whole chains of a stencil: row i waits for row i - 1). Row i waits for the
 * ready flag of each row k < i of its lower part, in ascending order:
 *  - ILU(0) (Saad Alg. 10.4, IKJ): l_ik = f_ik / u_kk (lane 0), then the lanes take row k's
 *    entries j > k in parallel, find column j in row i's sorted columns by binary search and
 *    update f_ij -= l_ik u_kj (distinct positions per k, and the k's in ascending order: the
 *    CPU's order of updates for every entry).
 *  - IC(0) (row Cholesky): s = f_ik - sum over row k's lower entries j whose column row i also
 *    has (lanes in parallel, a fixed shuffle tree), l_ik = s / l_kk, d -= l_ik^2 (lane 0, in
 *    the CPU's order); finally l_ii = sqrt(d).
 * Products and differences are rounded separately (__dmul_rn, __dsub_rn: no fused multiply-add)
 * as the host computes them; ILU(0)'s factors then match the host's bit for bit, IC(0)'s differ
 * only by the order of each s's sum. A bad pivot (the host's thresholds: |u_ii| <= tiny or not
 * finite, or any non-finite entry of the row, for ILU(0); d <= tiny or not finite for IC(0))
 * records its row with atomicMin and the row still signals done, so no warp waits forever; the
 * smallest bad row is the host's (every row before it is computed exactly as the host does).
 * The flags carry the attempt number, so one memset serves every attempt. Then the values are
 * rounded to the value type, and as on the host a non-finite one fails the attempt (row 0) and
 * so does a diagonal that rounds to zero (its row). The host loop runs the shared shift sequence
 * (nzi_shift_sequence_t), so the shifts and attempts equal the host's.
 * Cost per attempt as on the host (ILU(0): sum over rows i of sum over k in row i of nnz(row k)
 * binary searches of log nnz(row i)), in parallel across rows whose dependencies are done.
 */

#define FACTOR_BLOCK 128        /* 4 rows per block, as the SpSV solve */
#define FACTOR_SETUP_BLOCK 256
#define FACTOR_FULL_MASK 0xffffffffu

static __device__ __forceinline__ uint32_t factor_load_acquire(const uint32_t *flag) {
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device> ref(*const_cast<uint32_t *>(flag));
    return ref.load(cuda::memory_order_acquire);
}

static __device__ __forceinline__ void factor_store_release(uint32_t *flag, uint32_t value) {
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device> ref(*flag);
    ref.store(value, cuda::memory_order_release);
}

/* The warp's row: order[t] for its ticket t (ascending ticket order), -1 past the last; the
 * launch's last ticket resets the counter. Every lane must call it. */
static __device__ __forceinline__ int32_t factor_take_row(uint32_t *ticket, uint32_t warps,
                                                          int32_t n, const int32_t *order) {
    uint32_t t = 0;
    if ((threadIdx.x & 31) == 0) {
        t = atomicAdd(ticket, 1u);
        if (t == warps - 1) atomicExch(ticket, 0u);
    }
    t = __shfl_sync(FACTOR_FULL_MASK, t, 0);
    return t < (uint32_t)n ? order[t] : -1;
}

/* Position of column `col` in cols[low, high) (sorted), or -1. */
static __device__ __forceinline__ int64_t find_column(const int32_t *cols, int64_t low,
                                                      int64_t high, int32_t col) {
    while (low < high) {
        const int64_t mid = low + (high - low) / 2;
        const int32_t c = cols[mid];
        if (c == col) return mid;
        if (c < col)
            low = mid + 1;
        else
            high = mid;
    }
    return -1;
}

/* Non-negative double maximum through its bits (valid for values >= 0, NaN excluded). */
static __device__ __forceinline__ void atomic_max_nonnegative(unsigned long long *bits, double v) {
    atomicMax(bits, (unsigned long long)__double_as_longlong(v));
}

/* ---- pattern kernels ----------------------------------------------------------------------- */

/* Thread i: row i of A. counts[i] = its length plus one when the diagonal is missing;
 * *first_nonfinite = the smallest (row << 32 | position in the row) of a non-finite entry, the
 * first in the host's row-by-row order (left as is when none). */
template <typename Value, typename Offset>
__global__ void __launch_bounds__(FACTOR_SETUP_BLOCK)
factor_count_kernel(int32_t n, const Offset *__restrict__ row_offsets,
                    const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                    int64_t *__restrict__ counts, unsigned long long *first_nonfinite) {
    const int64_t i = (int64_t)blockIdx.x * FACTOR_SETUP_BLOCK + threadIdx.x;
    if (i >= n) return;
    const int64_t begin = (int64_t)row_offsets[i], end = (int64_t)row_offsets[i + 1];
    bool has_diagonal = false;
    for (int64_t k = begin; k < end; k++) {
        if (!isfinite((double)values[k])) {
            atomicMin(first_nonfinite, ((unsigned long long)i << 32) | (unsigned long long)(k - begin));
            break;
        }
        if (col_indices[k] == i) has_diagonal = true;
    }
    counts[i] = end - begin + (has_diagonal ? 0 : 1);
}

/* A warp per row (grid-stride): row i of A into F's pattern (cols, a in double) with the
 * diagonal inserted where missing; diag[i] its position; the maxima of |a_ij| and |a_ii|
 * (maxima[0], maxima[1], as bits). */
template <typename Value, typename Offset>
__global__ void __launch_bounds__(FACTOR_SETUP_BLOCK)
factor_pattern_kernel(int32_t n, const Offset *__restrict__ row_offsets,
                      const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                      const int64_t *__restrict__ f_offsets, int32_t *__restrict__ f_cols,
                      double *__restrict__ a, int64_t *__restrict__ diag,
                      unsigned long long *maxima) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (FACTOR_SETUP_BLOCK / 32);
    double amax = 0.0, dmax = 0.0;
    for (int64_t i = ((int64_t)blockIdx.x * FACTOR_SETUP_BLOCK + threadIdx.x) / 32; i < n;
         i += warps) {
        const int64_t begin = (int64_t)row_offsets[i], end = (int64_t)row_offsets[i + 1];
        const int64_t out = f_offsets[i];
        const bool inserted = f_offsets[i + 1] - out > end - begin;
        /* the first position with column >= i */
        int64_t low = begin, high = end;
        while (low < high) {
            const int64_t mid = low + (high - low) / 2;
            if (col_indices[mid] < i)
                low = mid + 1;
            else
                high = mid;
        }
        const int64_t split = low - begin;
        for (int64_t k = lane; k < end - begin; k += 32) {
            const int64_t to = out + k + (inserted && k >= split ? 1 : 0);
            const int32_t col = col_indices[begin + k];
            const double v = (double)values[begin + k];
            f_cols[to] = col;
            a[to] = v;
            amax = fmax(amax, fabs(v));
            if (col == i) dmax = fmax(dmax, fabs(v));
        }
        if (lane == 0) {
            diag[i] = out + split;
            if (inserted) {
                f_cols[out + split] = (int32_t)i;
                a[out + split] = 0.0;
            }
        }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        amax = fmax(amax, __shfl_down_sync(FACTOR_FULL_MASK, amax, offset));
        dmax = fmax(dmax, __shfl_down_sync(FACTOR_FULL_MASK, dmax, offset));
    }
    if (lane == 0) {
        atomic_max_nonnegative(maxima, amax);
        atomic_max_nonnegative(maxima + 1, dmax);
    }
}

/* f = a with shift added on the diagonal (thread per entry, then per row). */
__global__ void __launch_bounds__(FACTOR_SETUP_BLOCK)
factor_shift_kernel(int32_t n, const int64_t *__restrict__ diag, double shift,
                    double *__restrict__ f) {
    const int64_t i = (int64_t)blockIdx.x * FACTOR_SETUP_BLOCK + threadIdx.x;
    if (i < n) f[diag[i]] += shift;
}

/* ---- the factorisations -------------------------------------------------------------------- */

__global__ void __launch_bounds__(FACTOR_BLOCK)
ilu0_kernel(int32_t n, uint32_t warps, const int64_t *__restrict__ offsets,
            const int32_t *__restrict__ cols, const int64_t *__restrict__ diag, double *f,
            double tiny, uint32_t *ready, uint32_t *ticket, uint32_t attempt, int32_t *bad,
            const int32_t *__restrict__ order) {
    const int32_t i = factor_take_row(ticket, warps, n, order);
    if (i < 0) return;
    const int lane = threadIdx.x & 31;
    const int64_t begin = offsets[i], end = offsets[i + 1], di = diag[i];
    for (int64_t k = begin; k < di; k++) {
        const int32_t row = cols[k];
        if (lane == 0)
            while (factor_load_acquire(ready + row) != attempt) {
            }
        __syncwarp();
        /* row k is final: read it through L2 (written by another SM) */
        const int64_t dk = diag[row], row_end = offsets[row + 1];
        double l = 0.0;
        if (lane == 0) {
            l = __ddiv_rn(f[k], __ldcg(f + dk));
            f[k] = l;
        }
        l = __shfl_sync(FACTOR_FULL_MASK, l, 0);
        for (int64_t j = dk + 1 + lane; j < row_end; j += 32) {
            const int64_t at = find_column(cols, begin, end, cols[j]);
            if (at >= 0) f[at] = __dsub_rn(f[at], __dmul_rn(l, __ldcg(f + j)));
        }
        __syncwarp();
    }
    /* the pivot and the row's values, as the host checks them */
    bool row_bad = false;
    for (int64_t k = begin + lane; k < end; k += 32) row_bad |= !isfinite(f[k]);
    row_bad = __any_sync(FACTOR_FULL_MASK, row_bad);
    if (lane == 0) {
        const double pivot = f[di];
        if (row_bad || !(fabs(pivot) > tiny) || !isfinite(pivot)) atomicMin(bad, i);
        __threadfence();
        factor_store_release(ready + i, attempt);
    }
}

__global__ void __launch_bounds__(FACTOR_BLOCK)
ic0_kernel(int32_t n, uint32_t warps, const int64_t *__restrict__ offsets,
           const int32_t *__restrict__ cols, const int64_t *__restrict__ diag, double *f,
           double tiny, uint32_t *ready, uint32_t *ticket, uint32_t attempt, int32_t *bad,
           const int32_t *__restrict__ order) {
    const int32_t i = factor_take_row(ticket, warps, n, order);
    if (i < 0) return;
    const int lane = threadIdx.x & 31;
    const int64_t begin = offsets[i], di = diag[i];
    double d = f[di];
    for (int64_t k = begin; k < di; k++) {
        const int32_t row = cols[k];
        if (lane == 0)
            while (factor_load_acquire(ready + row) != attempt) {
            }
        __syncwarp();
        const int64_t rb = offsets[row], dk = diag[row];
        /* sum over row k's lower entries j whose column row i has (before k: columns < row) */
        double sum = 0.0;
        for (int64_t j = rb + lane; j < dk; j += 32) {
            const int64_t at = find_column(cols, begin, k, cols[j]);
            if (at >= 0) sum += __dmul_rn(f[at], __ldcg(f + j));
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2)
            sum += __shfl_down_sync(FACTOR_FULL_MASK, sum, offset);
        if (lane == 0) {
            const double l = __ddiv_rn(__dsub_rn(f[k], sum), __ldcg(f + dk));
            f[k] = l;
            d = __dsub_rn(d, __dmul_rn(l, l));
        }
        __syncwarp();
    }
    if (lane == 0) {
        if (!(d > tiny) || !isfinite(d))
            atomicMin(bad, i);
        else
            f[di] = sqrt(d);
        __threadfence();
        factor_store_release(ready + i, attempt);
    }
}

/* values = f rounded to Value; status[0] = 1 when one is not finite, status[1] = the smallest
 * row whose diagonal rounds to zero (left as is when none). */
template <typename Value>
__global__ void __launch_bounds__(FACTOR_SETUP_BLOCK)
factor_store_kernel(int32_t n, int64_t nnz, const int64_t *__restrict__ diag,
                    const double *__restrict__ f, Value *__restrict__ values, int32_t *status) {
    const int64_t stride = (int64_t)gridDim.x * FACTOR_SETUP_BLOCK;
    for (int64_t k = (int64_t)blockIdx.x * FACTOR_SETUP_BLOCK + threadIdx.x; k < nnz; k += stride) {
        const Value v = (Value)f[k];
        values[k] = v;
        if (!isfinite((double)v)) status[0] = 1;
    }
    for (int64_t i = (int64_t)blockIdx.x * FACTOR_SETUP_BLOCK + threadIdx.x; i < n; i += stride)
        if ((Value)f[diag[i]] == Value(0)) atomicMin(status + 1, (int32_t)i);
}

/* ---- host side ----------------------------------------------------------------------------- */

typedef struct factor_device {
    int64_t n, nnz;
    int64_t *offsets;   /* F's, owned by F once it exists */
    int32_t *cols;      /* F's, owned by F once it exists */
    int64_t *diag;
    double *a, *f;
    uint32_t *ready, *ticket;
    int32_t *order;     /* the rows by level of the strict lower part (nzi_cuda_level_order) */
    int32_t *flags;     /* [1] bad row, [2] a non-finite factor, [3] a diagonal rounding to 0 */
    unsigned long long *maxima; /* max|a_ij|, max|a_ii| as bits; [2] the first non-finite entry */
} factor_device_t;

static void factor_device_free(nz_context_t *ctx, factor_device_t *w) {
    nz_cuda_free(ctx, w->offsets, (size_t)-1);
    nz_cuda_free(ctx, w->cols, (size_t)-1);
    nz_cuda_free(ctx, w->diag, (size_t)-1);
    nz_cuda_free(ctx, w->a, (size_t)-1);
    nz_cuda_free(ctx, w->f, (size_t)-1);
    nz_cuda_free(ctx, w->ready, (size_t)-1);
    nz_cuda_free(ctx, w->ticket, (size_t)-1);
    nz_cuda_free(ctx, w->order, (size_t)-1);
    nz_cuda_free(ctx, w->flags, (size_t)-1);
    nz_cuda_free(ctx, w->maxima, (size_t)-1);
}

/* The pattern of F into w (see the opening comment); a non-finite entry of A is
 * NZ_ERR_INVALID_MATRIX naming it, as the host factorisation says. */
template <typename Value, typename Offset>
static nz_status_t build_pattern(nz_context_t *ctx, const nz_matrix_t *A, const char *name,
                                 factor_device_t *w, double *amax, double *dmax) {
    nz_status_t status = NZ_SUCCESS;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const int32_t n = (int32_t)w->n;
    const Offset *row_offsets = (const Offset *)A->device.row_offsets;
    const Value *values = (const Value *)A->device.values;
    int64_t *counts = NULL;
    void *temp = NULL;
    size_t temp_bytes = 0;
    unsigned long long maxima[3] = {0, 0, ~0ull};
    const int64_t blocks = ((int64_t)n + FACTOR_SETUP_BLOCK - 1) / FACTOR_SETUP_BLOCK;
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&counts, (size_t)n * sizeof(int64_t),
                                    "the factor row counts"));
    NZI_CHECK(nz_cuda_memcpy(ctx, w->maxima, maxima, sizeof maxima, NZI_H2D));
    factor_count_kernel<Value, Offset><<<(unsigned)blocks, FACTOR_SETUP_BLOCK, 0, stream>>>(
        n, row_offsets, A->device.col_indices, values, counts, w->maxima + 2);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CHECK(nz_cuda_memcpy(ctx, maxima + 2, w->maxima + 2, sizeof maxima[2], NZI_D2H));
    if (maxima[2] != ~0ull) {
        const int64_t row = (int64_t)(maxima[2] >> 32), in_row = (int64_t)(maxima[2] & 0xffffffffu);
        Offset begin = 0;
        int32_t col = 0;
        Value v = Value(0);
        NZI_CHECK(nz_cuda_memcpy(ctx, &begin, row_offsets + row, sizeof begin, NZI_D2H));
        NZI_CHECK(nz_cuda_memcpy(ctx, &col, A->device.col_indices + (int64_t)begin + in_row,
                                 sizeof col, NZI_D2H));
        NZI_CHECK(nz_cuda_memcpy(ctx, &v, values + (int64_t)begin + in_row, sizeof v, NZI_D2H));
        status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                           "nz_solve: %s preconditioner: A(%lld, %lld) is %g (not finite)", name,
                           (long long)row + 1, (long long)col + 1, (double)v);
        goto cleanup;
    }
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(NULL, temp_bytes, counts, w->offsets + 1,
                                                      n, stream));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, &temp, temp_bytes > 0 ? temp_bytes : 1,
                                    "the factor scan workspace"));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(w->offsets, 0, sizeof(int64_t), stream));
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(temp, temp_bytes, counts, w->offsets + 1,
                                                      n, stream));
    NZI_CHECK(nz_cuda_memcpy(ctx, &w->nnz, w->offsets + n, sizeof(int64_t), NZI_D2H));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w->cols, (size_t)w->nnz * sizeof(int32_t),
                             "the factor column indices"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w->a, (size_t)w->nnz * sizeof(double),
                             "the factor values in double"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w->f, (size_t)w->nnz * sizeof(double),
                             "the factors in double"));
    {
        const int64_t pattern_blocks = nzi_cuda_grid_blocks(nzi_cuda(ctx), FACTOR_SETUP_BLOCK, 4,
                                                            ((int64_t)n + 7) / 8);
        factor_pattern_kernel<Value, Offset>
            <<<(unsigned)pattern_blocks, FACTOR_SETUP_BLOCK, 0, stream>>>(
                n, row_offsets, A->device.col_indices, values, w->offsets, w->cols, w->a,
                w->diag, w->maxima);
        NZI_CUDA_CHECK(ctx, cudaGetLastError());
    }
    NZI_CHECK(nz_cuda_memcpy(ctx, maxima, w->maxima, 2 * sizeof maxima[0], NZI_D2H));
    memcpy(amax, &maxima[0], sizeof(double));
    memcpy(dmax, &maxima[1], sizeof(double));
cleanup:
    nz_cuda_free(ctx, temp, (size_t)-1);
    nz_cuda_free(ctx, counts, (size_t)-1);
    return status;
}

/* One attempt with shift seq->shift: *bad = the first bad row, or n. */
template <typename Value>
static nz_status_t factor_attempt(nz_context_t *ctx, nz_precond_t kind, factor_device_t *w,
                                  const nzi_shift_sequence_t *seq, Value *values, int64_t *bad) {
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const int32_t n = (int32_t)w->n;
    int32_t flags[4] = {0, n, 0, n};
    NZI_TRY(nz_cuda_memcpy(ctx, w->flags, flags, sizeof flags, NZI_H2D));
    NZI_CUDA_TRY(ctx, cudaMemcpyAsync(w->f, w->a, (size_t)w->nnz * sizeof(double),
                                      cudaMemcpyDeviceToDevice, stream));
    const int64_t blocks = ((int64_t)n + FACTOR_SETUP_BLOCK - 1) / FACTOR_SETUP_BLOCK;
    if (seq->shift != 0.0) {
        factor_shift_kernel<<<(unsigned)blocks, FACTOR_SETUP_BLOCK, 0, stream>>>(n, w->diag,
                                                                                 seq->shift, w->f);
        NZI_CUDA_LAUNCH_CHECK(ctx);
    }
    const int64_t row_blocks = ((int64_t)n + FACTOR_BLOCK / 32 - 1) / (FACTOR_BLOCK / 32);
    const uint32_t warps = (uint32_t)(row_blocks * (FACTOR_BLOCK / 32));
    const uint32_t attempt = (uint32_t)seq->attempt;
    if (kind == NZ_PRECOND_IC0)
        ic0_kernel<<<(unsigned)row_blocks, FACTOR_BLOCK, 0, stream>>>(
            n, warps, w->offsets, w->cols, w->diag, w->f, seq->tiny, w->ready, w->ticket,
            attempt, w->flags + 1, w->order);
    else
        ilu0_kernel<<<(unsigned)row_blocks, FACTOR_BLOCK, 0, stream>>>(
            n, warps, w->offsets, w->cols, w->diag, w->f, seq->tiny, w->ready, w->ticket,
            attempt, w->flags + 1, w->order);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    const int64_t store_blocks = nzi_cuda_grid_blocks(
        nzi_cuda(ctx), FACTOR_SETUP_BLOCK, 4,
        (w->nnz + FACTOR_SETUP_BLOCK - 1) / FACTOR_SETUP_BLOCK);
    factor_store_kernel<Value><<<(unsigned)store_blocks, FACTOR_SETUP_BLOCK, 0, stream>>>(
        n, w->nnz, w->diag, w->f, values, w->flags + 2);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    NZI_TRY(nz_cuda_memcpy(ctx, flags, w->flags, sizeof flags, NZI_D2H));
    /* the host's order: the factorisation's bad row, else any non-finite value (row 0), else
     * the first diagonal that rounds to zero */
    *bad = flags[1] < n ? flags[1] : flags[2] != 0 ? 0 : flags[3];
    return NZ_SUCCESS;
}

template <typename Value>
static nz_status_t factor_typed(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                                nz_matrix_t **F, double *shift, int *attempts) {
    nz_status_t status = NZ_SUCCESS;
    const char *name = kind == NZ_PRECOND_IC0 ? "IC(0)" : "ILU(0)";
    factor_device_t w;
    nz_matrix_t *M = NULL;
    Value *values = NULL;
    double amax = 0.0, dmax = 0.0;
    memset(&w, 0, sizeof w);
    w.n = A->rows;
    const size_t rows = w.n > 0 ? (size_t)w.n : 1;
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w.offsets, (rows + 1) * sizeof(int64_t),
                             "the factor row offsets"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w.diag, rows * sizeof(int64_t),
                             "the factor diagonal positions"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w.ready, rows * sizeof(uint32_t),
                             "the factor ready flags"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w.ticket, sizeof(uint32_t), "the factor row counter"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w.flags, 4 * sizeof(int32_t), "the factor status"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w.maxima, 3 * sizeof(unsigned long long),
                             "the factor maxima"));
    NZI_CHECK(nz_cuda_memset(ctx, w.ready, 0, rows * sizeof(uint32_t)));
    NZI_CHECK(nz_cuda_memset(ctx, w.ticket, 0, sizeof(uint32_t)));
    NZI_CHECK(nz_cuda_memset(ctx, w.offsets, 0, sizeof(int64_t)));
    if (w.n > 0) {
        if (A->device.offset_type == NZ_I64)
            NZI_CHECK((build_pattern<Value, int64_t>(ctx, A, name, &w, &amax, &dmax)));
        else
            NZI_CHECK((build_pattern<Value, int32_t>(ctx, A, name, &w, &amax, &dmax)));
        /* the rows by level: row i reads the rows of its entries before its diagonal */
        int64_t levels = 0, widest = 0;
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w.order, rows * sizeof(int32_t),
                                 "the factor rows by level"));
        NZI_CHECK(nzi_cuda_level_order(ctx, w.n, 1, w.offsets, w.diag, w.cols, w.order, &levels,
                                       &widest));
    } else {
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w.cols, sizeof(int32_t),
                                 "the factor column indices"));
    }
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&values,
                             (size_t)(w.nnz > 0 ? w.nnz : 1) * sizeof(Value),
                             "the factor values"));
    {
        nzi_shift_sequence_t seq;
        nzi_shift_start(&seq, amax, dmax);
        int64_t bad = w.n;
        do {
            if (w.n == 0) break;
            NZI_CHECK(factor_attempt<Value>(ctx, kind, &w, &seq, values, &bad));
            *attempts = seq.attempt;
            if (bad == w.n) break;
        } while (nzi_shift_next(&seq));
        if (w.n == 0) *attempts = 1;
        if (bad < w.n) {
            status = nzi_shift_breakdown(ctx, name, bad, &seq);
            goto cleanup;
        }
        *shift = seq.shift;
    }
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_CSR, A->value_type, w.n, w.n, w.nnz));
    M->location = NZ_DEVICE;
    M->device.offset_type = NZ_I64;
    M->device.borrowed = false;
    M->device.row_offsets = w.offsets;
    M->device.col_indices = w.cols;
    M->device.values = values;
    w.offsets = NULL;
    w.cols = NULL;
    values = NULL;
    *F = M;
cleanup:
    nz_cuda_free(ctx, values, (size_t)-1);
    factor_device_free(ctx, &w);
    return status;
}

extern "C" nz_status_t nz_cuda_factor_compute(nz_context_t *ctx, const nz_matrix_t *A,
                                              nz_precond_t kind, nz_matrix_t **F, double *shift,
                                              int *attempts) {
    *F = NULL;
    *shift = 0.0;
    *attempts = 0;
    if (A->location != NZ_DEVICE || A->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "the GPU factorisation needs a device csr matrix");
    NZI_TRY(nzi_cuda_enter(ctx));
    return A->value_type == NZ_F32 ? factor_typed<float>(ctx, A, kind, F, shift, attempts)
                                   : factor_typed<double>(ctx, A, kind, F, shift, attempts);
}
