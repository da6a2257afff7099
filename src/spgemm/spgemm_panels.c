/* spgemm_panels.c: SpGEMM helpers shared by every algorithm: product counts, the row-panel splitter, output. */
#include "spgemm_common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Products per row, O(nnz of A's rows) with one look-up of B's row offsets per entry of A, and
 * their total in the same pass. Each row's count is overflow-checked; the first overflowing row
 * (in row order) is reported, so the message does not depend on the thread count. The total is
 * summed on all threads as an unsigned and a double: while the double stays below 2^62 the
 * unsigned sum is exact; otherwise a serial pass in row order names the row where int64
 * overflows. */
nz_status_t nzi_spgemm_count_products(nz_context_t *ctx, const nz_matrix_t *A,
                                      const nz_matrix_t *B, int64_t row_begin, int64_t row_end,
                                      int64_t *products, int64_t *total) {
    const int64_t *a_offsets = A->host.csr.row_offsets, *b_offsets = B->host.csr.row_offsets;
    const int32_t *a_cols = A->host.csr.col_indices;
    int64_t sum = 0, bad_row = INT64_MAX;
    uint64_t usum = 0;
    double dsum = 0.0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 4096) reduction(min : bad_row) reduction(+ : usum, dsum)
#endif
    for (int64_t i = row_begin; i < row_end; i++) {
        int64_t count = 0;
        for (int64_t k = a_offsets[i]; k < a_offsets[i + 1]; k++) {
            int32_t j = a_cols[k];
            if (nzi_add_overflow_i64(count, b_offsets[j + 1] - b_offsets[j], &count)) {
                if (i < bad_row) bad_row = i;
                break;
            }
        }
        if (products != NULL) products[i - row_begin] = count;
        usum += (uint64_t)count;
        dsum += (double)count;
    }
    if (bad_row != INT64_MAX)
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "nz_spgemm: the products of row %lld overflow int64",
                         (long long)bad_row);
    if (total == NULL) return NZ_SUCCESS;
    if (dsum < 0x1p62) {
        *total = (int64_t)usum;
        return NZ_SUCCESS;
    }
    for (int64_t i = row_begin; i < row_end; i++) {
        int64_t count;
        if (products != NULL) {
            count = products[i - row_begin];
        } else {
            count = 0;
            for (int64_t k = a_offsets[i]; k < a_offsets[i + 1]; k++)
                count += b_offsets[a_cols[k] + 1] - b_offsets[a_cols[k]];
        }
        if (nzi_add_overflow_i64(sum, count, &sum))
            return nzi_error(ctx, NZ_ERR_OVERFLOW,
                             "nz_spgemm: the total number of products overflows int64 at row %lld",
                             (long long)i);
    }
    *total = sum;
    return NZ_SUCCESS;
}

void nzi_spgemm_profile_stage(nz_spgemm_profile_t *profile, const char *name, double seconds) {
    if (profile == NULL || !(profile->flags & NZ_SPGEMM_PROFILE_STAGES) ||
        profile->stage_count >= NZ_SPGEMM_PROFILE_MAX_STAGES)
        return;
    profile->stage_names[profile->stage_count] = name;
    profile->stage_seconds[profile->stage_count++] = seconds;
}

/* Cost of a panel under the model, in double (exact enough for a budget; an overflowing size_t
 * is simply "too large"). */
static double panel_cost(const nzi_spgemm_panel_cost_t *cost, int64_t rows, int64_t a_nnz,
                         int64_t products, int64_t c_nnz) {
    return cost->fixed + cost->per_row * (double)rows + cost->per_a_nonzero * (double)a_nnz +
           cost->per_product * (double)products + cost->per_output * (double)c_nnz;
}

/* Greedy in row order: a panel grows while its cost stays within the budget and its products
 * within the cap. One pass; the panel list grows by doubling (a few entries per million rows). */
nz_status_t nzi_spgemm_split(nz_context_t *ctx, const nzi_spgemm_split_input_t *in,
                             const nzi_spgemm_panel_cost_t *cost, double budget,
                             nzi_spgemm_panel_t **panels, int64_t *count) {
    nz_status_t status = NZ_SUCCESS;
    nzi_spgemm_panel_t *list = NULL;
    const int64_t rows = in->rows, cap = in->max_products > 0 ? in->max_products : INT64_MAX;
    int64_t n = 0, capacity = 0, begin = 0, panel_products = 0, panel_out = 0, panel_a = 0;

    for (int64_t i = 0; i <= rows; i++) {
        int64_t p = 0, out = 0, a = 0;
        bool close = i == rows;
        if (!close) {
            p = in->products != NULL ? in->products[i] : 0;
            if (in->c_row_nnz != NULL)
                out = in->c_row_nnz[i];
            else if (in->c_offsets != NULL)
                out = in->c_offsets[i + 1] - in->c_offsets[i];
            else
                out = p < in->b_cols ? p : in->b_cols;
            a = in->a_offsets != NULL ? in->a_offsets[i + 1] - in->a_offsets[i] : 0;
            const double alone = panel_cost(cost, 1, a, p, out);
            if (alone > budget) {
                status = nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                                   "nz_spgemm (%s): row %lld alone needs %.0f bytes of device "
                                   "memory, more than the budget of %.0f bytes",
                                   in->who, (long long)i, alone, budget);
                goto cleanup;
            }
            close = i > begin &&
                    (panel_products + p > cap ||
                     panel_cost(cost, i - begin + 1, panel_a + a, panel_products + p,
                                panel_out + out) > budget);
        }
        if (close && (i > begin || (rows == 0 && n == 0))) {
            if (n == capacity) {
                const int64_t grown = capacity > 0 ? 2 * capacity : 16;
                nzi_spgemm_panel_t *more = (nzi_spgemm_panel_t *)nzi_realloc(
                    ctx, list, (size_t)grown * sizeof *list);
                if (more == NULL) {
                    status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                                       "nz_spgemm: cannot allocate %lld row panels", (long long)grown);
                    goto cleanup;
                }
                list = more;
                capacity = grown;
            }
            list[n].row_begin = begin;
            list[n].row_end = i;
            list[n].products = panel_products;
            list[n].c_nnz = panel_out;
            n++;
            begin = i;
            panel_products = panel_out = panel_a = 0;
        }
        panel_products += p;
        panel_out += out;
        panel_a += a;
    }
    *panels = list;
    *count = n;
    list = NULL;
cleanup:
    nzi_free(ctx, list);
    return status;
}

nz_status_t nzi_spgemm_alloc_output(nz_context_t *ctx, nz_matrix_t **C, nz_value_type_t vt,
                                    int64_t rows, int64_t cols, const int64_t *row_nnz) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    int64_t total = 0;
    for (int64_t i = 0; i < rows; i++)
        if (nzi_add_overflow_i64(total, row_nnz[i], &total))
            return nzi_error(ctx, NZ_ERR_OVERFLOW,
                             "nz_spgemm: the nonzeros of C overflow int64 at row %lld",
                             (long long)i);
    NZI_CHECK(nzi_csr_alloc(ctx, &M, vt, rows, cols, total));
    for (int64_t i = 0; i < rows; i++)
        M->host.csr.row_offsets[i + 1] = M->host.csr.row_offsets[i] + row_nnz[i];
    *C = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    return status;
}
