/* spgemm_reuse.cu: on the device, the numeric SpGEMM into a known pattern (plans), SpGEAM
 * (C = alpha A + beta B) and the transpose that keeps where its values came from. */
#include "cuda_internal.h"

#include <cub/device/device_scan.cuh>

#define REUSE_BLOCK 256
#define NO_BAD_ROW 0xffffffffffffffffull

/* Rounded multiply and add with no contraction into a fused multiply-add: the CPU's operations
 * (src/cpu), so device and host values agree bitwise. */
static __device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
static __device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
static __device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
static __device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

/* The first position in cols[lo, hi) whose column is >= c. */
static __device__ __forceinline__ int64_t lower_bound_col(const int32_t *__restrict__ cols,
                                                          int64_t lo, int64_t hi, int32_t c) {
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (__ldg(cols + mid) < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The lanes of this thread's group of G (a power of two <= 32) within its warp. */
template <int G>
static __device__ __forceinline__ unsigned group_mask() {
    const unsigned lane = threadIdx.x & 31u;
    const unsigned ones = G == 32 ? 0xffffffffu : (1u << (G & 31)) - 1u;
    return G == 32 ? ones : ones << (lane & ~(unsigned)(G - 1));
}

/* ---- the numeric SpGEMM into C's pattern ------------------------------------------------------- */

/*
 * A group of G lanes per row of C. The row's values start at -0.0 (the first product added keeps
 * its exact bits); then for each a_ij in A's row order, the lanes split row j of B, and each
 * lane adds its a_ij b_jc at c's position in C's row, found by a binary search of the row's
 * sorted columns. Within one a_ij the columns of B's row are distinct, so no two lanes touch
 * one value; between two a_ij the group synchronises (__syncwarp orders the memory too). Each
 * value thus receives its products in A's row order, B's row order within: the CPU's order and
 * operations, without atomics. A column missing from C's row records the row (atomicMin) and
 * the product is skipped. Grid-stride over the rows.
 */
template <typename Value, typename AOff, typename BOff, int G>
__global__ void __launch_bounds__(REUSE_BLOCK)
    spgemm_numeric_kernel(int64_t rows, const AOff *__restrict__ a_off,
                          const int32_t *__restrict__ a_col, const Value *__restrict__ a_val,
                          const BOff *__restrict__ b_off, const int32_t *__restrict__ b_col,
                          const Value *__restrict__ b_val, const int64_t *__restrict__ c_off,
                          const int32_t *__restrict__ c_col, Value *__restrict__ c_val,
                          unsigned long long *__restrict__ bad_row) {
    const unsigned mask = group_mask<G>();
    const int lane = (int)(threadIdx.x & (unsigned)(G - 1));
    const int64_t groups = (int64_t)gridDim.x * (REUSE_BLOCK / G);
    for (int64_t row = ((int64_t)blockIdx.x * REUSE_BLOCK + threadIdx.x) / G; row < rows;
         row += groups) {
        const int64_t begin = c_off[row], end = c_off[row + 1];
        for (int64_t k = begin + lane; k < end; k += G) c_val[k] = (Value)-0.0;
        __syncwarp(mask);
        const int64_t a_end = (int64_t)a_off[row + 1];
        for (int64_t ka = (int64_t)a_off[row]; ka < a_end; ka++) {
            const int32_t j = __ldg(a_col + ka);
            const Value a = __ldg(a_val + ka);
            const int64_t l_end = (int64_t)__ldg(b_off + j + 1);
            for (int64_t l = (int64_t)__ldg(b_off + j) + lane; l < l_end; l += G) {
                const int32_t c = __ldg(b_col + l);
                const int64_t p = lower_bound_col(c_col, begin, end, c);
                if (p < end && __ldg(c_col + p) == c)
                    c_val[p] = add_rn(c_val[p], mul_rn(a, __ldg(b_val + l)));
                else
                    atomicMin(bad_row, (unsigned long long)row);
            }
            __syncwarp(mask);
        }
    }
}

typedef struct numeric_state {
    int group;                    /* lanes per row: 4, 8, 16 or 32 */
    unsigned long long *bad_row;  /* device: the first row with a product outside C (or none) */
} numeric_state_t;

nz_status_t nz_cuda_spgemm_numeric_setup(nz_context_t *ctx, const nz_matrix_t *A,
                                         const nz_matrix_t *B, const nz_matrix_t *C, int threads,
                                         void **state) {
    nz_status_t status = NZ_SUCCESS;
    numeric_state_t *S = NULL;
    (void)A;
    (void)C;
    (void)threads;
    NZI_TRY(nzi_cuda_enter(ctx));
    S = (numeric_state_t *)nzi_calloc(ctx, 1, sizeof *S);
    if (S == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "SpGEMM plan: cannot allocate its state");
    /* the group matches B's mean row: its lanes mostly busy, few strides */
    {
        const double mean = B->rows > 0 ? (double)B->nnz / (double)B->rows : 0.0;
        S->group = mean <= 4.0 ? 4 : mean <= 8.0 ? 8 : mean <= 16.0 ? 16 : 32;
    }
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&S->bad_row, sizeof(unsigned long long),
                             "SpGEMM plan: pattern flag"));
    *state = S;
    return NZ_SUCCESS;
cleanup:
    nz_cuda_spgemm_numeric_release(ctx, S);
    return status;
}

void nz_cuda_spgemm_numeric_release(nz_context_t *ctx, void *state) {
    numeric_state_t *S = (numeric_state_t *)state;
    if (S == NULL) return;
    if (nzi_cuda_enter(ctx) == NZ_SUCCESS) nz_cuda_free(ctx, S->bad_row, sizeof(unsigned long long));
    nzi_free(ctx, S);
}

template <typename Value, typename AOff, typename BOff, int G>
static void launch_numeric(nzi_cuda_state_t *cs, const nz_matrix_t *A, const nz_matrix_t *B,
                           nz_matrix_t *C, unsigned long long *bad_row) {
    const int64_t rows = C->rows;
    const int64_t blocks = nzi_cuda_grid_blocks(cs, REUSE_BLOCK, 8,
                                                (rows * G + REUSE_BLOCK - 1) / REUSE_BLOCK);
    spgemm_numeric_kernel<Value, AOff, BOff, G><<<(unsigned)blocks, REUSE_BLOCK, 0, cs->stream>>>(
        rows, nzi_dev_offsets<AOff>(A), A->device.col_indices, (const Value *)A->device.values,
        nzi_dev_offsets<BOff>(B), B->device.col_indices, (const Value *)B->device.values,
        nzi_dev_offsets<int64_t>(C), C->device.col_indices, (Value *)C->device.values, bad_row);
}

template <typename Value, typename AOff, typename BOff>
static void launch_numeric_group(nzi_cuda_state_t *cs, int group, const nz_matrix_t *A,
                                 const nz_matrix_t *B, nz_matrix_t *C, unsigned long long *bad) {
    switch (group) {
    case 4: launch_numeric<Value, AOff, BOff, 4>(cs, A, B, C, bad); break;
    case 8: launch_numeric<Value, AOff, BOff, 8>(cs, A, B, C, bad); break;
    case 16: launch_numeric<Value, AOff, BOff, 16>(cs, A, B, C, bad); break;
    default: launch_numeric<Value, AOff, BOff, 32>(cs, A, B, C, bad); break;
    }
}

template <typename Value>
static void launch_numeric_offsets(nzi_cuda_state_t *cs, int group, const nz_matrix_t *A,
                                   const nz_matrix_t *B, nz_matrix_t *C, unsigned long long *bad) {
    const bool a64 = A->device.offset_type == NZ_I64, b64 = B->device.offset_type == NZ_I64;
    if (a64 && b64)
        launch_numeric_group<Value, int64_t, int64_t>(cs, group, A, B, C, bad);
    else if (a64)
        launch_numeric_group<Value, int64_t, int32_t>(cs, group, A, B, C, bad);
    else if (b64)
        launch_numeric_group<Value, int32_t, int64_t>(cs, group, A, B, C, bad);
    else
        launch_numeric_group<Value, int32_t, int32_t>(cs, group, A, B, C, bad);
}

/* Read the flag back (synchronising the stream) and turn a recorded row into the error. */
static nz_status_t report_bad_row(nz_context_t *ctx, const unsigned long long *d_bad,
                                  const char *what) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    unsigned long long bad = NO_BAD_ROW;
    NZI_CUDA_TRY(ctx, cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, cs->stream));
    NZI_CUDA_TRY(ctx, cudaStreamSynchronize(cs->stream));
    if (bad != NO_BAD_ROW)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "row %llu of %s has an entry outside C's pattern (A's or B's pattern "
                         "differs from the plan's); C's values are unspecified",
                         bad, what);
    return NZ_SUCCESS;
}

nz_status_t nz_cuda_spgemm_numeric(nz_context_t *ctx, void *state, const nz_matrix_t *A,
                                   const nz_matrix_t *B, nz_matrix_t *C) {
    numeric_state_t *S = (numeric_state_t *)state;
    NZI_TRY(nzi_cuda_enter(ctx));
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    NZI_CUDA_TRY(ctx, cudaMemsetAsync(S->bad_row, 0xff, sizeof(unsigned long long), cs->stream));
    if (C->rows > 0) {
        if (C->value_type == NZ_F32)
            launch_numeric_offsets<float>(cs, S->group, A, B, C, S->bad_row);
        else
            launch_numeric_offsets<double>(cs, S->group, A, B, C, S->bad_row);
        NZI_CUDA_LAUNCH_CHECK(ctx);
    }
    return report_bad_row(ctx, S->bad_row, "the product");
}

/* ---- SpGEAM ------------------------------------------------------------------------------------ */

/*
 * Rows of A and B are merged by ranks instead of a sequential merge, a warp per row. The union's
 * entries below column c are A's below c, plus B's below c, less the common ones below c. For
 * A's entry k of the row (column c): B's entries below c come from a binary search of B's row,
 * and the common ones below c are A's entries before k that B has too: an exclusive prefix count
 * of a per-entry flag over the row (a ballot per 32 entries and a running carry). B's entries
 * are placed the same way, those A has too being left to A's lane (which writes the sum). Long
 * rows split over the warp; the result is the sequential merge's, bitwise. The symbolic count
 * is |A row| + |B row| - |common|.
 */
#define GEAM_WARPS (REUSE_BLOCK / 32)

template <typename AOff, typename BOff>
__global__ void __launch_bounds__(REUSE_BLOCK)
    spgeam_count_kernel(int64_t rows, const AOff *__restrict__ a_off,
                        const int32_t *__restrict__ a_col, const BOff *__restrict__ b_off,
                        const int32_t *__restrict__ b_col, int64_t *__restrict__ c_count) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * GEAM_WARPS;
    for (int64_t row = (int64_t)blockIdx.x * GEAM_WARPS + threadIdx.x / 32; row < rows; row += warps) {
        const int64_t a0 = (int64_t)a_off[row], a1 = (int64_t)a_off[row + 1];
        const int64_t b0 = (int64_t)b_off[row], b1 = (int64_t)b_off[row + 1];
        int64_t common = 0;
        for (int64_t k = a0 + lane; k < a1; k += 32) {
            const int32_t c = __ldg(a_col + k);
            const int64_t p = lower_bound_col(b_col, b0, b1, c);
            common += p < b1 && __ldg(b_col + p) == c;
        }
        for (int off = 16; off > 0; off >>= 1) common += __shfl_xor_sync(0xffffffffu, common, off);
        if (lane == 0) c_count[row + 1] = (a1 - a0) + (b1 - b0) - common;
    }
}

/* Numeric == false: write C's columns. Numeric == true: write C's values and check that C's
 * columns and row length are those of the union (else record the row). */
template <typename Value, typename AOff, typename BOff, bool Numeric>
__global__ void __launch_bounds__(REUSE_BLOCK)
    spgeam_fill_kernel(int64_t rows, Value alpha, const AOff *__restrict__ a_off,
                       const int32_t *__restrict__ a_col, const Value *__restrict__ a_val,
                       Value beta, const BOff *__restrict__ b_off,
                       const int32_t *__restrict__ b_col, const Value *__restrict__ b_val,
                       const int64_t *__restrict__ c_off, int32_t *__restrict__ c_col,
                       Value *__restrict__ c_val, unsigned long long *__restrict__ bad_row) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * GEAM_WARPS;
    for (int64_t row = (int64_t)blockIdx.x * GEAM_WARPS + threadIdx.x / 32; row < rows; row += warps) {
        const int64_t a0 = (int64_t)a_off[row], a1 = (int64_t)a_off[row + 1];
        const int64_t b0 = (int64_t)b_off[row], b1 = (int64_t)b_off[row + 1];
        const int64_t c0 = c_off[row], c1 = c_off[row + 1];
        const unsigned below = (1u << lane) - 1u; /* lanes before this one */
        bool bad = false;
        int64_t carry = 0; /* A's entries so far (whole warp-steps) that B has too */
        for (int64_t base = a0; base < a1; base += 32) {
            const int64_t k = base + lane;
            const bool valid = k < a1;
            int32_t c = 0;
            int64_t p = b0;
            bool both = false;
            if (valid) {
                c = __ldg(a_col + k);
                p = lower_bound_col(b_col, b0, b1, c);
                both = p < b1 && __ldg(b_col + p) == c;
            }
            const unsigned m = __ballot_sync(0xffffffffu, both);
            const int64_t common_below = carry + __popc(m & below);
            carry += __popc(m);
            if (!valid) continue;
            const int64_t at = c0 + (k - a0) + (p - b0) - common_below;
            if (!Numeric) {
                c_col[at] = c;
            } else if (at >= c1 || c_col[at] != c) {
                bad = true;
            } else {
                Value v = 0;
                bool have = false;
                if (alpha != (Value)0) {
                    v = mul_rn(alpha, __ldg(a_val + k));
                    have = true;
                }
                if (both && beta != (Value)0) {
                    const Value w = mul_rn(beta, __ldg(b_val + p));
                    v = have ? add_rn(v, w) : w;
                }
                c_val[at] = v;
            }
        }
        const int64_t common = carry;
        carry = 0; /* B's entries so far that A has too */
        for (int64_t base = b0; base < b1; base += 32) {
            const int64_t k = base + lane;
            const bool valid = k < b1;
            int32_t c = 0;
            int64_t p = a0;
            bool both = false;
            if (valid) {
                c = __ldg(b_col + k);
                p = lower_bound_col(a_col, a0, a1, c);
                both = p < a1 && __ldg(a_col + p) == c;
            }
            const unsigned m = __ballot_sync(0xffffffffu, both);
            const int64_t common_below = carry + __popc(m & below);
            carry += __popc(m);
            if (!valid || both) continue; /* A's lane wrote it */
            const int64_t at = c0 + (k - b0) + (p - a0) - common_below;
            if (!Numeric) {
                c_col[at] = c;
            } else if (at >= c1 || c_col[at] != c) {
                bad = true;
            } else {
                c_val[at] = beta != (Value)0 ? mul_rn(beta, __ldg(b_val + k)) : (Value)0;
            }
        }
        if (Numeric) {
            if ((a1 - a0) + (b1 - b0) - common != c1 - c0) bad = true;
            if (bad) atomicMin(bad_row, (unsigned long long)row);
        }
    }
}

template <typename AOff, typename BOff>
static void launch_count(nzi_cuda_state_t *cs, const nz_matrix_t *A, const nz_matrix_t *B,
                         int64_t *c_off) {
    const int64_t rows = A->rows;
    const int64_t blocks =
        nzi_cuda_grid_blocks(cs, REUSE_BLOCK, 8, (rows + GEAM_WARPS - 1) / GEAM_WARPS);
    spgeam_count_kernel<AOff, BOff><<<(unsigned)blocks, REUSE_BLOCK, 0, cs->stream>>>(
        rows, nzi_dev_offsets<AOff>(A), A->device.col_indices, nzi_dev_offsets<BOff>(B),
        B->device.col_indices, c_off);
}

template <typename Value, typename AOff, typename BOff, bool Numeric>
static void launch_fill(nzi_cuda_state_t *cs, double alpha, const nz_matrix_t *A, double beta,
                        const nz_matrix_t *B, nz_matrix_t *C, unsigned long long *bad) {
    const int64_t rows = A->rows;
    const int64_t blocks =
        nzi_cuda_grid_blocks(cs, REUSE_BLOCK, 8, (rows + GEAM_WARPS - 1) / GEAM_WARPS);
    spgeam_fill_kernel<Value, AOff, BOff, Numeric><<<(unsigned)blocks, REUSE_BLOCK, 0, cs->stream>>>(
        rows, (Value)alpha, nzi_dev_offsets<AOff>(A), A->device.col_indices,
        (const Value *)A->device.values, (Value)beta, nzi_dev_offsets<BOff>(B),
        B->device.col_indices, (const Value *)B->device.values, nzi_dev_offsets<int64_t>(C),
        C->device.col_indices, (Value *)C->device.values, bad);
}

template <typename Value, bool Numeric>
static void launch_fill_offsets(nzi_cuda_state_t *cs, double alpha, const nz_matrix_t *A,
                                double beta, const nz_matrix_t *B, nz_matrix_t *C,
                                unsigned long long *bad) {
    const bool a64 = A->device.offset_type == NZ_I64, b64 = B->device.offset_type == NZ_I64;
    if (a64 && b64)
        launch_fill<Value, int64_t, int64_t, Numeric>(cs, alpha, A, beta, B, C, bad);
    else if (a64)
        launch_fill<Value, int64_t, int32_t, Numeric>(cs, alpha, A, beta, B, C, bad);
    else if (b64)
        launch_fill<Value, int32_t, int64_t, Numeric>(cs, alpha, A, beta, B, C, bad);
    else
        launch_fill<Value, int32_t, int32_t, Numeric>(cs, alpha, A, beta, B, C, bad);
}

nz_status_t nz_cuda_spgeam_symbolic(nz_context_t *ctx, const nz_matrix_t *A,
                                    const nz_matrix_t *B, nz_matrix_t **C) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    int64_t nnz = 0;
    const int64_t rows = A->rows;
    NZI_TRY(nzi_cuda_enter(ctx));
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_CSR, A->value_type, rows, A->cols, 0));
    M->location = NZ_DEVICE;
    M->device.offset_type = NZ_I64;
    M->device.borrowed = false;
    NZI_CHECK(nz_cuda_malloc(ctx, &M->device.row_offsets, (size_t)(rows + 1) * sizeof(int64_t),
                             "SpGEAM: C row offsets"));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(M->device.row_offsets, 0, sizeof(int64_t), cs->stream));
    if (rows > 0) {
        int64_t *off = (int64_t *)M->device.row_offsets;
        const bool a64 = A->device.offset_type == NZ_I64, b64 = B->device.offset_type == NZ_I64;
        if (a64 && b64)
            launch_count<int64_t, int64_t>(cs, A, B, off);
        else if (a64)
            launch_count<int64_t, int32_t>(cs, A, B, off);
        else if (b64)
            launch_count<int32_t, int64_t>(cs, A, B, off);
        else
            launch_count<int32_t, int32_t>(cs, A, B, off);
        NZI_CUDA_CHECK(ctx, cudaGetLastError());
        NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(NULL, scratch_bytes, off + 1, off + 1,
                                                          rows, cs->stream));
        NZI_CHECK(nzi_cuda_malloc_async(ctx, &scratch, scratch_bytes, "SpGEAM: scan scratch"));
        NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(scratch, scratch_bytes, off + 1, off + 1,
                                                          rows, cs->stream));
        NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(&nnz, off + rows, sizeof nnz, cudaMemcpyDeviceToHost,
                                            cs->stream));
        NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
    }
    M->nnz = nnz;
    if (nnz > 0) {
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&M->device.col_indices, (size_t)nnz * sizeof(int32_t),
                                 "SpGEAM: C column indices"));
        NZI_CHECK(nz_cuda_malloc(ctx, &M->device.values, (size_t)nnz * nzi_value_size(A->value_type),
                                 "SpGEAM: C values"));
        if (A->value_type == NZ_F32)
            launch_fill_offsets<float, false>(cs, 0.0, A, 0.0, B, M, NULL);
        else
            launch_fill_offsets<double, false>(cs, 0.0, A, 0.0, B, M, NULL);
        NZI_CUDA_CHECK(ctx, cudaGetLastError());
    }
    *C = M;
    M = NULL;
cleanup:
    nz_cuda_free(ctx, scratch, (size_t)-1);
    nzi_matrix_free(M);
    return status;
}

nz_status_t nz_cuda_spgeam_numeric(nz_context_t *ctx, double alpha, const nz_matrix_t *A,
                                   double beta, const nz_matrix_t *B, nz_matrix_t *C) {
    nz_status_t status = NZ_SUCCESS;
    unsigned long long *bad = NULL;
    NZI_TRY(nzi_cuda_enter(ctx));
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    if (C->rows == 0) return NZ_SUCCESS;
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&bad, sizeof *bad, "SpGEAM: pattern flag"));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(bad, 0xff, sizeof *bad, cs->stream));
    if (C->value_type == NZ_F32)
        launch_fill_offsets<float, true>(cs, alpha, A, beta, B, C, bad);
    else
        launch_fill_offsets<double, true>(cs, alpha, A, beta, B, C, bad);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    status = report_bad_row(ctx, bad, "A or B");
cleanup:
    nz_cuda_free(ctx, bad, (size_t)-1);
    return status;
}

/* ---- the transpose with its value map ---------------------------------------------------------- */

typedef struct transpose_map {
    void *order;                /* device: AT's entry p took A's value order[p] */
    nz_index_type_t offset_type; /* the type of order's entries (A's offsets) */
} transpose_map_t;

template <typename Value, typename Offset>
__global__ void __launch_bounds__(REUSE_BLOCK)
    gather_kernel(int64_t n, const Offset *__restrict__ order, const Value *__restrict__ in,
                  Value *__restrict__ out) {
    for (int64_t p = (int64_t)blockIdx.x * REUSE_BLOCK + threadIdx.x; p < n;
         p += (int64_t)gridDim.x * REUSE_BLOCK)
        out[p] = __ldg(in + __ldg(order + p));
}

nz_status_t nz_cuda_transpose(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t **AT,
                              void **perm) {
    nz_status_t status = NZ_SUCCESS;
    transpose_map_t *T = NULL;
    if (perm == NULL) return nz_cuda_csr_transpose(ctx, A, AT);
    T = (transpose_map_t *)nzi_calloc(ctx, 1, sizeof *T);
    if (T == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "transpose: cannot allocate its map");
    T->offset_type = A->device.offset_type;
    NZI_CHECK(nzi_cuda_csr_transpose_order(ctx, A, AT, &T->order));
    *perm = T;
    return NZ_SUCCESS;
cleanup:
    nzi_free(ctx, T);
    return status;
}

nz_status_t nz_cuda_transpose_values(nz_context_t *ctx, const void *perm, const nz_matrix_t *A,
                                     nz_matrix_t *AT) {
    const transpose_map_t *T = (const transpose_map_t *)perm;
    const int64_t n = AT->nnz;
    NZI_TRY(nzi_cuda_enter(ctx));
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    if (n == 0) return NZ_SUCCESS;
    const unsigned blocks =
        (unsigned)nzi_cuda_grid_blocks(cs, REUSE_BLOCK, 8, (n + REUSE_BLOCK - 1) / REUSE_BLOCK);
    if (T->offset_type == NZ_I64) {
        if (AT->value_type == NZ_F32)
            gather_kernel<float, int64_t><<<blocks, REUSE_BLOCK, 0, cs->stream>>>(
                n, (const int64_t *)T->order, (const float *)A->device.values, (float *)AT->device.values);
        else
            gather_kernel<double, int64_t><<<blocks, REUSE_BLOCK, 0, cs->stream>>>(
                n, (const int64_t *)T->order, (const double *)A->device.values, (double *)AT->device.values);
    } else {
        if (AT->value_type == NZ_F32)
            gather_kernel<float, int32_t><<<blocks, REUSE_BLOCK, 0, cs->stream>>>(
                n, (const int32_t *)T->order, (const float *)A->device.values, (float *)AT->device.values);
        else
            gather_kernel<double, int32_t><<<blocks, REUSE_BLOCK, 0, cs->stream>>>(
                n, (const int32_t *)T->order, (const double *)A->device.values, (double *)AT->device.values);
    }
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

void nz_cuda_transpose_release(nz_context_t *ctx, void *perm) {
    transpose_map_t *T = (transpose_map_t *)perm;
    if (T == NULL) return;
    if (T->order != NULL && nzi_cuda_enter(ctx) == NZ_SUCCESS) nz_cuda_free(ctx, T->order, (size_t)-1);
    nzi_free(ctx, T);
}
