/* spmv_cpu.c: the CPU backend's SpMV dispatch: which (format, algorithm) pairs exist, and calls. */
#include "nzi.h"
#include "backend.h"
#include "cpu_kernels.h"

#include <math.h>
#include <string.h>

/* Preprocessing of a CPU plan. For the transpose product op(A) = A^T the plan keeps A^T in CSR
 * and runs the row-parallel CSR kernel on it (no atomics, deterministic): for CSC the arrays of
 * A already are A^T in CSR, so `view` borrows them; for every other format A^T is built once
 * here (`owned`). */
typedef struct nzi_cpu_plan_state {
    nz_matrix_t *owned;       /* A^T in CSR, built at setup, or NULL */
    nz_matrix_t view;         /* CSR header over a CSC matrix's arrays (not owned) */
    const nz_matrix_t *run;   /* the CSR matrix the product runs on */
} nzi_cpu_plan_state_t;

bool nz_cpu_spmv_supports(nz_format_t format, nz_alg_t alg) {
    switch (format) {
    case NZ_FORMAT_CSR:
    case NZ_FORMAT_COO: return alg == NZ_ALG_SERIAL || alg == NZ_ALG_PARALLEL;
    case NZ_FORMAT_CSC: return alg == NZ_ALG_SERIAL;
    case NZ_FORMAT_SELL: return alg == NZ_ALG_PARALLEL || alg == NZ_ALG_SIMD;
    case NZ_FORMAT_ELL:
    case NZ_FORMAT_HYB:
    case NZ_FORMAT_BSR:
    case NZ_FORMAT_DIA: return alg == NZ_ALG_PARALLEL;
    default: return false;
    }
}

nz_status_t nz_cpu_spmv_plan_setup(nz_spmv_plan_t *plan) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    nzi_cpu_plan_state_t *state = NULL;
    nz_matrix_t *csr_copy = NULL;
    const nz_matrix_t *csr = NULL;
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION, "the CPU backend needs a host matrix");
    if (plan->flags & NZI_PLAN_LAYOUTS)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "nz_spmv_plan_create: the plan layouts (column "
                         "panels, reordering, compressed indices) are GPU csr plans; A is a host "
                         "matrix");
    if (plan->alg == NZ_ALG_SIMD && A->format == NZ_FORMAT_SELL && A->host.sell.chunk != 4 &&
        A->host.sell.chunk != 8)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "the SELL simd kernel needs chunk height 4 or 8, but this SELL matrix "
                         "has chunk height %d (convert with sell_chunk = 4 or 8, or use the "
                         "parallel algorithm)", A->host.sell.chunk);
    plan->reproducible = 1;
    if (plan->op == NZ_OP_N) return NZ_SUCCESS;

    state = (nzi_cpu_plan_state_t *)nzi_calloc(ctx, 1, sizeof *state);
    if (state == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate the CPU plan state");
    if (A->format == NZ_FORMAT_CSC) {
        state->view = *A;
        state->view.format = NZ_FORMAT_CSR;
        state->view.rows = A->cols;
        state->view.cols = A->rows;
        state->run = &state->view;
    } else {
        NZI_CHECK(nzi_as_csr(ctx, A, &csr, &csr_copy));
        NZI_CHECK(nzi_compressed_transpose(ctx, &state->owned, csr, NZ_FORMAT_CSR));
        state->run = state->owned;
        plan->workspace_bytes = ((size_t)state->owned->rows + 1) * 8 +
                                (size_t)state->owned->nnz * (4 + nzi_value_size(A->value_type));
    }
    plan->state = state;
    state = NULL;
cleanup:
    nzi_matrix_free(csr_copy);
    if (state != NULL) {
        nzi_matrix_free(state->owned);
        nzi_free(ctx, state);
    }
    return status;
}

void nz_cpu_spmv_plan_release(nz_spmv_plan_t *plan) {
    nzi_cpu_plan_state_t *state = (nzi_cpu_plan_state_t *)plan->state;
    if (state == NULL) return;
    nzi_matrix_free(state->owned);
    nzi_free(plan->ctx, state);
    plan->state = NULL;
}

/* Call kernel NAME in the matrix's value type. */
#define NZI_CALL(NAME, M)                                                                       \
    do {                                                                                        \
        if ((M)->value_type == NZ_F32)                                                          \
            NAME##_f32((M), (float)alpha, (const float *)x, (float)beta, (float *)y, parallel,  \
                       threads);                                                                \
        else                                                                                    \
            NAME##_f64((M), alpha, (const double *)x, beta, (double *)y, parallel, threads);    \
    } while (0)

nz_status_t nz_cpu_spmv_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    const nzi_cpu_plan_state_t *state = (const nzi_cpu_plan_state_t *)plan->state;
    int parallel = plan->alg != NZ_ALG_SERIAL;
    int threads = plan->ctx->threads;
    if (plan->op == NZ_OP_T) {
        if (state == NULL || state->run == NULL)
            return nzi_error(plan->ctx, NZ_ERR_INVALID_HANDLE,
                             "the transpose plan has no prepared A^T");
        NZI_CALL(nzi_cpu_csr_spmv, state->run);
        return NZ_SUCCESS;
    }
    switch (A->format) {
    case NZ_FORMAT_CSR: NZI_CALL(nzi_cpu_csr_spmv, A); break;
    case NZ_FORMAT_CSC: NZI_CALL(nzi_cpu_csc_spmv, A); break;
    case NZ_FORMAT_COO: NZI_CALL(nzi_cpu_coo_spmv, A); break;
    case NZ_FORMAT_ELL: NZI_CALL(nzi_cpu_ell_spmv, A); break;
    case NZ_FORMAT_SELL:
        if (plan->alg == NZ_ALG_SIMD)
            NZI_CALL(nzi_cpu_sell_simd_spmv, A);
        else
            NZI_CALL(nzi_cpu_sell_spmv, A);
        break;
    case NZ_FORMAT_HYB: NZI_CALL(nzi_cpu_hyb_spmv, A); break;
    case NZ_FORMAT_BSR: NZI_CALL(nzi_cpu_bsr_spmv, A); break;
    case NZ_FORMAT_DIA: NZI_CALL(nzi_cpu_dia_spmv, A); break;
    default:
        return nzi_error(plan->ctx, NZ_ERR_UNSUPPORTED, "no CPU SpMV kernel for %s",
                         nz_format_name(A->format));
    }
    return NZ_SUCCESS;
}

/* Insertion sort of the few timings, then the middle one (mean of the two middle ones). */
static double median(double *v, int n) {
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

nz_status_t nz_cpu_spmv_time(const nz_spmv_plan_t *plan, const void *x, void *y, int runs,
                             double *median_seconds) {
    double times[NZI_TIME_MAX_RUNS];
    if (runs > NZI_TIME_MAX_RUNS) runs = NZI_TIME_MAX_RUNS;
    if (runs < 1) runs = 1;
    NZI_TRY(nz_cpu_spmv_execute(plan, 1.0, x, 0.0, y));
    for (int r = 0; r < runs; r++) {
        double t0 = nzi_wtime();
        NZI_TRY(nz_cpu_spmv_execute(plan, 1.0, x, 0.0, y));
        times[r] = nzi_wtime() - t0;
    }
    *median_seconds = median(times, runs);
    return NZ_SUCCESS;
}

nz_status_t nz_cpu_csr_row_stats(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                                 nz_matrix_stats_t *stats) {
    nz_matrix_stats_t s;
    (void)ctx;
    memset(&s, 0, sizeof s);
    s.rows = op == NZ_OP_N ? A->rows : A->cols;
    s.cols = op == NZ_OP_N ? A->cols : A->rows;
    s.nnz = A->nnz;
    if (op == NZ_OP_N && A->rows > 0) {
        const int64_t *offsets = A->host.csr.row_offsets;
        double sum_squares = 0;
        s.row_min = INT64_MAX;
        for (int64_t i = 0; i < A->rows; i++) {
            int64_t len = offsets[i + 1] - offsets[i];
            if (len < s.row_min) s.row_min = len;
            if (len > s.row_max) s.row_max = len;
            if (len == 0) s.empty_rows++;
            sum_squares += (double)len * (double)len;
        }
        s.row_mean = (double)A->nnz / (double)A->rows;
        double variance = sum_squares / (double)A->rows - s.row_mean * s.row_mean;
        s.row_std = variance > 0 ? sqrt(variance) : 0;
    } else if (s.rows > 0) {
        s.row_mean = (double)A->nnz / (double)s.rows;
    }
    *stats = s;
    return NZ_SUCCESS;
}
