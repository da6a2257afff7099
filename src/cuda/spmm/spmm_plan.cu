/* spmm_plan.cu: the GPU SpMM plan: kernel shape from k and the row lengths, long rows cut into pieces, A^T for op T. */
#include "spmm_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the backend entry points --------------------------------------------------------------- */

/* The only SpMM algorithm of each format: the CSR vector kernel, the SELL slot kernel. */
nz_alg_t nz_cuda_spmm_default_alg(nz_format_t format) {
    return format == NZ_FORMAT_SELL ? NZ_ALG_SCALAR : NZ_ALG_VECTOR;
}

bool nz_cuda_spmm_supports(nz_format_t format, nz_alg_t alg) {
    return (format == NZ_FORMAT_CSR && alg == NZ_ALG_VECTOR) ||
           (format == NZ_FORMAT_SELL && alg == NZ_ALG_SCALAR);
}

void nz_cuda_spmm_plan_release(nz_spmm_plan_t *plan) {
    spmm_cuda_state_t *st = (spmm_cuda_state_t *)plan->state;
    if (st == NULL) return;
    if (plan->ctx->cuda != NULL) (void)cudaSetDevice(plan->ctx->device);
    /* (size_t)-1: the allocation registry knows each size */
    if (st->long_rows != NULL) nz_cuda_free(plan->ctx, st->long_rows, (size_t)-1);
    if (st->first_piece != NULL) nz_cuda_free(plan->ctx, st->first_piece, (size_t)-1);
    if (st->piece_rows != NULL) nz_cuda_free(plan->ctx, st->piece_rows, (size_t)-1);
    if (st->piece_starts != NULL) nz_cuda_free(plan->ctx, st->piece_starts, (size_t)-1);
    if (st->partials != NULL) nz_cuda_free(plan->ctx, st->partials, (size_t)-1);
    nzi_matrix_free(st->AT);
    nzi_free(plan->ctx, st);
    plan->state = NULL;
}

/*
 * Long rows: which rows the group kernels leave to the piece kernel, and how long a piece is.
 * A warp takes one piece of piece_len = S x (32 / L) nonzeros: S steps of its 32 / L nonzero
 * lanes. S is set so the pieces are at most half of an even share of the work among the warps
 * the device holds at once (steps in all / (2 x warp slots), at least 8 so a piece's partial sums
 * stay small next to its reads, at most 64). A row is long when its group would take more than
 * S steps: more than S x N nonzeros (row-major; N nonzero lanes) or S x V / column chunks
 * (column-major, whose group loops over the chunks), and at least 32. Uniform matrices
 * (Laplacian, FE, random rows) have no long rows, so this costs them only the row statistics;
 * power-law rows and a few very long rows are cut into pieces that the whole GPU shares.
 * The tunable spmm_long_row = m (0, 16, 64, 256, 1024, 4096, 16384; nz_tunables_t, the CLI's
 * NZ_TUNE_SPMM_LONG) fixes the threshold (0: no split).
 */
static void choose_long_rows(const nzi_cuda_state_t *cs, const nz_spmm_plan_t *plan,
                             const nz_matrix_t *M, spmm_cuda_state_t *st) {
    const int nonzero_lanes_per_warp = 32 / st->column_lanes;
    const double steps = (double)M->nnz / nonzero_lanes_per_warp;
    const double warp_slots = (double)cs->sm_count * (cs->max_threads_per_sm / 32);
    double S = steps / (2.0 * (warp_slots > 0 ? warp_slots : 1.0));
    S = S < 8.0 ? 8.0 : (S > 64.0 ? 64.0 : S);
    st->piece_len = (int64_t)S * nonzero_lanes_per_warp;
    double group_steps_limit;
    if (plan->layout == NZ_ROW_MAJOR) {
        group_steps_limit = S * st->nonzero_lanes;
    } else {
        const int chunks = (int)((plan->k + st->chunk - 1) / st->chunk);
        group_steps_limit = S * st->nonzero_lanes / chunks;
    }
    st->long_min = group_steps_limit < 32.0 ? 32 : (int64_t)group_steps_limit;
    const int forced = nzi_tune_pick(plan->ctx->tunables.spmm_long_row, -1);
    if (forced >= 0) st->long_min = forced;
}

/* The rows of M with at least st->long_min nonzeros and their pieces, listed on the device, and
 * the partial-sum workspace. Skipped (no host copy) when the row statistics show no long row. */
static nz_status_t build_pieces(nz_context_t *ctx, nz_spmm_plan_t *plan, const nz_matrix_t *M,
                                spmm_cuda_state_t *st) {
    nz_status_t status = NZ_SUCCESS;
    const bool wide = M->device.offset_type == NZ_I64;
    const size_t offset_size = wide ? 8 : 4;
    const char *what = "nz_spmm_plan_create";
    void *offsets = NULL;
    int32_t *rows_list = NULL, *piece_rows = NULL;
    int64_t *first_piece = NULL, *piece_starts = NULL;
    int64_t count = 0, pieces = 0;
    nz_matrix_stats_t stats;
    NZI_CHECK(nz_cuda_csr_row_stats(ctx, M, NZ_OP_N, &stats));
    if (stats.row_max < st->long_min) goto cleanup;
    NZI_CHECK(nzi_alloc_array(ctx, &offsets, (size_t)M->rows + 1, offset_size,
                              "nz_spmm_plan_create: host row offsets"));
    NZI_CHECK(nz_cuda_memcpy(ctx, offsets, M->device.row_offsets, ((size_t)M->rows + 1) * offset_size,
                             NZI_D2H));
    NZI_CHECK(nz_cuda_synchronize(ctx));
#define ROW_BEGIN(i) (wide ? ((const int64_t *)offsets)[i] : (int64_t)((const int32_t *)offsets)[i])
    for (int64_t i = 0; i < M->rows; i++) {
        const int64_t len = ROW_BEGIN(i + 1) - ROW_BEGIN(i);
        if (len >= st->long_min && len > 0) {
            count++;
            pieces += (len + st->piece_len - 1) / st->piece_len;
        }
    }
    if (count == 0) goto cleanup;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&rows_list, (size_t)count, sizeof(int32_t), what));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&first_piece, (size_t)count + 1, sizeof(int64_t), what));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&piece_rows, (size_t)pieces, sizeof(int32_t), what));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&piece_starts, (size_t)pieces, sizeof(int64_t), what));
    {
        int64_t c = 0, q = 0;
        for (int64_t i = 0; i < M->rows; i++) {
            const int64_t begin = ROW_BEGIN(i), end = ROW_BEGIN(i + 1);
            if (end - begin < st->long_min || end == begin) continue;
            rows_list[c] = (int32_t)i;
            first_piece[c++] = q;
            for (int64_t p = begin; p < end; p += st->piece_len) {
                piece_rows[q] = (int32_t)i;
                piece_starts[q++] = p;
            }
        }
        first_piece[c] = q;
    }
#undef ROW_BEGIN
    {
        const size_t lc = (size_t)st->column_lanes * (plan->k > 32 ? 2 : 1);
        const size_t accum = (M->value_type == NZ_F64 || (plan->flags & NZ_PLAN_MIXED)) ? 8 : 4;
        size_t partial_bytes = 0;
        if (nzi_mul_overflow_size((size_t)pieces, lc * accum, &partial_bytes)) {
            status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                               "%s: %lld pieces of long rows need too much workspace", what,
                               (long long)pieces);
            goto cleanup;
        }
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->long_rows, (size_t)count * sizeof(int32_t),
                                 "nz_spmm_plan_create: long rows"));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->first_piece, ((size_t)count + 1) * sizeof(int64_t),
                                 "nz_spmm_plan_create: long-row pieces"));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->piece_rows, (size_t)pieces * sizeof(int32_t),
                                 "nz_spmm_plan_create: piece rows"));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->piece_starts, (size_t)pieces * sizeof(int64_t),
                                 "nz_spmm_plan_create: piece starts"));
        NZI_CHECK(nz_cuda_malloc(ctx, &st->partials, partial_bytes,
                                 "nz_spmm_plan_create: partial sums of long rows"));
        NZI_CHECK(nz_cuda_memcpy(ctx, st->long_rows, rows_list, (size_t)count * sizeof(int32_t), NZI_H2D));
        NZI_CHECK(nz_cuda_memcpy(ctx, st->first_piece, first_piece,
                                 ((size_t)count + 1) * sizeof(int64_t), NZI_H2D));
        NZI_CHECK(nz_cuda_memcpy(ctx, st->piece_rows, piece_rows, (size_t)pieces * sizeof(int32_t),
                                 NZI_H2D));
        NZI_CHECK(nz_cuda_memcpy(ctx, st->piece_starts, piece_starts,
                                 (size_t)pieces * sizeof(int64_t), NZI_H2D));
        /* the copies read pageable host memory: done before the host arrays are freed */
        NZI_CHECK(nz_cuda_synchronize(ctx));
        st->num_long = count;
        st->num_pieces = pieces;
        plan->workspace_bytes += (size_t)count * (sizeof(int32_t) + sizeof(int64_t)) + sizeof(int64_t) +
                                 (size_t)pieces * (sizeof(int32_t) + sizeof(int64_t)) + partial_bytes;
    }
cleanup:
    nzi_free(ctx, offsets);
    nzi_free(ctx, rows_list);
    nzi_free(ctx, first_piece);
    nzi_free(ctx, piece_rows);
    nzi_free(ctx, piece_starts);
    return status;
}

static int power_of_two_at_least(double n, int cap) {
    int p = 1;
    while (p < cap && (double)p < n) p *= 2;
    return p;
}

/* Lane shapes from k and the mean row length (see the file comment); op T builds A^T first. */
nz_status_t nz_cuda_spmm_plan_setup(nz_spmm_plan_t *plan) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const char *what = "nz_spmm_plan_create";
    spmm_cuda_state_t *st = NULL;

    if (A->location != NZ_DEVICE)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION, "%s: matrix A is not on the device", what);
    if (!nz_cuda_spmm_supports(A->format, plan->alg))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: SpMM algorithm %s is not available for %s "
                         "on the GPU (csr: vector; sell: scalar)", what, nz_alg_name(plan->alg),
                         nz_format_name(A->format));
    if (A->format == NZ_FORMAT_SELL && plan->op == NZ_OP_T)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: op(A) = A^T is not implemented for sell "
                         "SpMM on the GPU; use a csr matrix (its plan builds A^T on the device)",
                         what);
    NZI_TRY(nzi_cuda_enter(ctx));
    st = (spmm_cuda_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the plan state", what);
    plan->state = st;
    st->run = A;
    if (plan->op == NZ_OP_T && A->rows > 0 && A->cols > 0 && A->nnz > 0) {
        NZI_CHECK(nz_cuda_csr_transpose(ctx, A, &st->AT));
        st->run = st->AT;
        plan->workspace_bytes = ((size_t)A->cols + 1) * (A->device.offset_type == NZ_I64 ? 8u : 4u) +
                                (size_t)A->nnz * (sizeof(int32_t) + nzi_value_size(A->value_type));
    }
    {
        const nz_matrix_t *M = st->run;
        const double mean = M->rows > 0 ? (double)M->nnz / (double)M->rows : 0.0;
        const int k = (int)plan->k;
        st->column_lanes = power_of_two_at_least((double)k, 32);
        st->chunk = k == 1 ? 1 : (k <= 4 ? 4 : (k <= 8 ? 8 : 16));
        if (A->format == NZ_FORMAT_SELL) {
            st->nonzero_lanes = 1;
            plan->vector_width = plan->layout == NZ_ROW_MAJOR ? st->column_lanes : 1;
        } else if (plan->layout == NZ_ROW_MAJOR) {
            st->nonzero_lanes = power_of_two_at_least(mean, 32 / st->column_lanes);
            plan->vector_width = st->column_lanes * st->nonzero_lanes;
        } else {
            st->nonzero_lanes = power_of_two_at_least(mean, 32);
            plan->vector_width = st->nonzero_lanes;
        }
        if (M->format == NZ_FORMAT_CSR && M->rows > 0 && M->nnz > 0) {
            choose_long_rows(nzi_cuda(ctx), plan, M, st);
            if (st->long_min > 0) NZI_CHECK(build_pieces(ctx, plan, M, st));
        }
    }
    plan->reproducible = 1;
cleanup:
    if (status < 0) {
        nz_cuda_spmm_plan_release(plan);
        plan->workspace_bytes = 0;
    }
    return status;
}
