/* spmm_cpu.c: CPU SpMM, Y = alpha op(A) X + beta Y for k right-hand sides, over CSR (OpenMP rows). */
#include "nzi.h"
#include "backend.h"
#include "cpu_kernels.h"

/*
 * The plan keeps the CSR matrix the product runs on: A itself (host CSR, op N), a CSR copy of A
 * (other formats, op N) or A^T in CSR (op T, by the counting-sort transpose), so execute is one
 * kernel: row i of the run matrix owns row i of Y. For each row the k sums live in a local array
 * (k <= 64); each nonzero a_ij adds a_ij X[j, :] to them, so a row-major X row is read
 * contiguously, a column-major one with stride ldx. Sums are in the storage type, or in double
 * for float storage under NZ_PLAN_MIXED. BLAS rules: beta == 0 never reads Y, alpha == 0 never
 * reads A or X. Rows are independent, so the parallel kernel is bitwise identical to the serial
 * one for any thread count.
 * Cost: one pass over A, nnz x k reads of X, rows x k writes of Y.
 */

typedef struct spmm_cpu_state {
    nz_matrix_t *owned;     /* CSR copy or transpose made by the plan, or NULL */
    const nz_matrix_t *run; /* the CSR matrix the kernel runs on */
} spmm_cpu_state_t;

/* Row-parallel for every format. */
nz_alg_t nz_cpu_spmm_default_alg(nz_format_t format) {
    (void)format;
    return NZ_ALG_PARALLEL;
}

bool nz_cpu_spmm_supports(nz_format_t format, nz_alg_t alg) {
    return format >= 0 && format < NZ_FORMAT_COUNT &&
           (alg == NZ_ALG_SERIAL || alg == NZ_ALG_PARALLEL);
}

nz_status_t nz_cpu_spmm_plan_setup(nz_spmm_plan_t *plan) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A, *csr = NULL;
    nz_matrix_t *copy = NULL;
    spmm_cpu_state_t *state = NULL;
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION, "the CPU SpMM needs a host matrix");
    state = (spmm_cpu_state_t *)nzi_calloc(ctx, 1, sizeof *state);
    if (state == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate the CPU SpMM plan state");
    NZI_CHECK(nzi_as_csr(ctx, A, &csr, &copy));
    if (plan->op == NZ_OP_T) {
        NZI_CHECK(nzi_compressed_transpose(ctx, &state->owned, csr, NZ_FORMAT_CSR));
    } else {
        state->owned = copy;
        copy = NULL;
    }
    state->run = state->owned != NULL ? state->owned : csr;
    if (state->owned != NULL)
        plan->workspace_bytes = ((size_t)state->owned->rows + 1) * sizeof(int64_t) +
                                (size_t)state->owned->nnz *
                                    (sizeof(int32_t) + nzi_value_size(A->value_type));
    plan->reproducible = 1;
    plan->vector_width = 0;
    plan->state = state;
    state = NULL;
cleanup:
    nzi_matrix_free(copy);
    if (state != NULL) {
        nzi_matrix_free(state->owned);
        nzi_free(ctx, state);
    }
    return status;
}

void nz_cpu_spmm_plan_release(nz_spmm_plan_t *plan) {
    spmm_cpu_state_t *state = (spmm_cpu_state_t *)plan->state;
    if (state == NULL) return;
    nzi_matrix_free(state->owned);
    nzi_free(plan->ctx, state);
    plan->state = NULL;
}

/* One kernel per (storage type T, sum type S); the X and Y element (row r, column c) sits at
 * r * row_stride + c * col_stride, which covers both layouts. */
#define NZI_DEFINE_SPMM(T, S, SUFFIX)                                                           \
    static void spmm_csr_##SUFFIX(const nz_matrix_t *A, int64_t k, S alpha, const T *X,        \
                                  int64_t x_row_stride, int64_t x_col_stride, S beta, T *Y,     \
                                  int64_t y_row_stride, int64_t y_col_stride, int parallel,     \
                                  int threads) {                                                \
        const int64_t *row_offsets = A->host.csr.row_offsets;                                   \
        const int32_t *col_indices = A->host.csr.col_indices;                                   \
        const T *values = (const T *)A->host.csr.values;                                        \
        const int64_t rows = A->rows;                                                           \
        const int team = nzi_cpu_team(parallel, threads, (double)A->nnz * (double)k);           \
        NZI_OMP_FOR(team)                                                                       \
        for (int64_t i = 0; i < rows; i++) {                                                    \
            S sums[NZI_SPMM_MAX_K];                                                             \
            for (int64_t c = 0; c < k; c++) sums[c] = 0;                                        \
            if (alpha != 0)                                                                     \
                for (int64_t p = row_offsets[i]; p < row_offsets[i + 1]; p++) {                 \
                    const S a = (S)values[p];                                                   \
                    const T *x = X + (int64_t)col_indices[p] * x_row_stride;                    \
                    for (int64_t c = 0; c < k; c++) sums[c] += a * (S)x[c * x_col_stride];      \
                }                                                                               \
            T *y = Y + i * y_row_stride;                                                        \
            for (int64_t c = 0; c < k; c++) {                                                   \
                T *out = y + c * y_col_stride;                                                  \
                *out = (T)(beta == 0 ? alpha * sums[c] : alpha * sums[c] + beta * (S)*out);     \
            }                                                                                   \
        }                                                                                       \
    }

NZI_DEFINE_SPMM(float, float, f32)
NZI_DEFINE_SPMM(float, double, f32_mixed)
NZI_DEFINE_SPMM(double, double, f64)

nz_status_t nz_cpu_spmm_execute(const nz_spmm_plan_t *plan, double alpha, const void *X,
                                int64_t ldx, double beta, void *Y, int64_t ldy) {
    const spmm_cpu_state_t *state = (const spmm_cpu_state_t *)plan->state;
    if (state == NULL)
        return nzi_error(plan->ctx, NZ_ERR_INVALID_HANDLE, "nz_spmm_execute: the plan is corrupted");
    const nz_matrix_t *M = state->run;
    const bool row_major = plan->layout == NZ_ROW_MAJOR;
    const int64_t xr = row_major ? ldx : 1, xc = row_major ? 1 : ldx;
    const int64_t yr = row_major ? ldy : 1, yc = row_major ? 1 : ldy;
    const int parallel = plan->alg == NZ_ALG_PARALLEL;
    const int threads = plan->ctx->threads;
    if (M->value_type == NZ_F64)
        spmm_csr_f64(M, plan->k, alpha, (const double *)X, xr, xc, beta, (double *)Y, yr, yc,
                     parallel, threads);
    else if (plan->flags & NZ_PLAN_MIXED)
        spmm_csr_f32_mixed(M, plan->k, alpha, (const float *)X, xr, xc, beta, (float *)Y, yr, yc,
                           parallel, threads);
    else
        spmm_csr_f32(M, plan->k, (float)alpha, (const float *)X, xr, xc, (float)beta, (float *)Y,
                     yr, yc, parallel, threads);
    return NZ_SUCCESS;
}
