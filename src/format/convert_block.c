/* convert_block.c: BSR (square blocks) and DIA (diagonals): measure, build from CSR, back to CSR. */
#include "nzi.h"
#include "convert_internal.h"
#include "lower_bound.h"

#include <stdlib.h>
#include <string.h>

static inline void copy_value(void *dst, int64_t d, const void *src, int64_t s, size_t vs) {
    memcpy((char *)dst + (size_t)d * vs, (const char *)src + (size_t)s * vs, vs);
}

static inline bool value_is_zero(const void *values, nz_value_type_t t, int64_t k) {
    return t == NZ_F32 ? ((const float *)values)[k] == 0.0f : ((const double *)values)[k] == 0.0;
}

/* ---- BSR ------------------------------------------------------------------------------------ */

/* Count the distinct b x b blocks touched by the nonzeros, one block row at a time, with a
 * marker per block column holding the last block row that touched it. O(nnz + block_cols).
 * The last block row / column is padded when rows / cols are not multiples of b. */
nz_status_t nzi_measure_bsr(nz_context_t *ctx, const nz_matrix_t *csr,
                            const nzi_options_t *options, nzi_layout_t *layout) {
    int64_t b = options->block;
    int64_t block_rows = (csr->rows + b - 1) / b, block_cols = (csr->cols + b - 1) / b;
    int32_t *last = NULL;
    NZI_TRY(nzi_alloc_array(ctx, (void **)&last, (size_t)block_cols, sizeof *last,
                            "BSR block column markers"));
    for (int64_t j = 0; j < block_cols; j++) last[j] = -1;
    const int64_t *offsets = csr->host.csr.row_offsets;
    int64_t blocks = 0;
    for (int64_t i = 0; i < csr->rows; i++) {
        int32_t br = (int32_t)(i / b);
        for (int64_t k = offsets[i]; k < offsets[i + 1]; k++) {
            int64_t bc = csr->host.csr.col_indices[k] / b;
            if (last[bc] != br) {
                last[bc] = br;
                blocks++;
            }
        }
    }
    nzi_free(ctx, last);
    double vs = (double)nzi_value_size(csr->value_type);
    layout->block = (int)b;
    layout->block_rows = block_rows;
    layout->block_cols = block_cols;
    layout->num_blocks = blocks;
    layout->stored = blocks * b * b;
    layout->bytes = ((double)block_rows + 1) * 8 + (double)blocks * 4 + (double)blocks * b * b * vs;
    return NZ_SUCCESS;
}

static int compare_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* For each block row: gather its distinct block columns, sort them, give each a slot, then drop
 * every nonzero into its block (row-major inside the block). Entries of a block that are not
 * nonzeros of A stay 0. O(nnz + sum over block rows of k log k) for k blocks per block row. */
nz_status_t nzi_build_bsr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                          const nzi_layout_t *layout) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    int32_t *last = NULL;
    int64_t *slot = NULL;
    size_t vs = nzi_value_size(csr->value_type);
    int64_t b = layout->block, block_rows = layout->block_rows, block_cols = layout->block_cols;
    const int64_t *offsets = csr->host.csr.row_offsets;
    const int32_t *cols = csr->host.csr.col_indices;
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_BSR, csr->value_type, csr->rows, csr->cols,
                             csr->nnz));
    nzi_bsr_t *m = &M->host.bsr;
    m->block = (int)b;
    m->block_rows = block_rows;
    m->block_cols = block_cols;
    m->num_blocks = layout->num_blocks;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&m->block_row_offsets, (size_t)block_rows + 1,
                              sizeof *m->block_row_offsets, "BSR block row offsets"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&m->block_col_indices, (size_t)layout->num_blocks,
                              sizeof *m->block_col_indices, "BSR block column indices"));
    NZI_CHECK(nzi_alloc_array(ctx, &m->values, (size_t)layout->stored, vs, "BSR values"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&last, (size_t)block_cols, sizeof *last,
                              "BSR block column markers"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&slot, (size_t)block_cols, sizeof *slot,
                              "BSR block slots"));
    if (layout->stored > 0) memset(m->values, 0, (size_t)layout->stored * vs);
    for (int64_t j = 0; j < block_cols; j++) last[j] = -1;
    m->block_row_offsets[0] = 0;
    for (int64_t br = 0; br < block_rows; br++) {
        int64_t first = m->block_row_offsets[br], count = first;
        int64_t row_end = (br + 1) * b < csr->rows ? (br + 1) * b : csr->rows;
        for (int64_t i = br * b; i < row_end; i++)
            for (int64_t k = offsets[i]; k < offsets[i + 1]; k++) {
                int32_t bc = (int32_t)(cols[k] / b);
                if (last[bc] != (int32_t)br) {
                    last[bc] = (int32_t)br;
                    m->block_col_indices[count++] = bc;
                }
            }
        qsort(m->block_col_indices + first, (size_t)(count - first), sizeof(int32_t),
              compare_int32);
        for (int64_t q = first; q < count; q++) slot[m->block_col_indices[q]] = q;
        for (int64_t i = br * b; i < row_end; i++)
            for (int64_t k = offsets[i]; k < offsets[i + 1]; k++) {
                int64_t bc = cols[k] / b;
                int64_t dst = (slot[bc] * b + (i - br * b)) * b + (cols[k] - bc * b);
                copy_value(m->values, dst, csr->host.csr.values, k, vs);
            }
        m->block_row_offsets[br + 1] = count;
    }
    *B = M;
    M = NULL;
    status = NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    nzi_free(ctx, last);
    nzi_free(ctx, slot);
    return status;
}

/* Back to CSR in two passes over the rows (count, allocate, fill): emit(A, i, M, out) visits row
 * i's entries in column order and returns out plus their count, storing them from position out
 * of M's arrays when M is not NULL (the fill pass). */
typedef int64_t (*csr_row_emit_t)(const nz_matrix_t *A, int64_t i, nz_matrix_t *M, int64_t out);

static nz_status_t to_csr_two_pass(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                                   csr_row_emit_t emit) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    for (int pass = 0; pass < 2; pass++) {
        int64_t out = 0;
        for (int64_t i = 0; i < A->rows; i++) {
            out = emit(A, i, pass == 1 ? M : NULL, out);
            if (pass == 1) M->host.csr.row_offsets[i + 1] = out;
        }
        if (pass == 0) NZI_CHECK(nzi_csr_alloc(ctx, &M, A->value_type, A->rows, A->cols, out));
    }
    *B = M;
    return NZ_SUCCESS;
cleanup:
    return status;
}

/* Row i of a BSR matrix: every in-range entry of its blocks whose value is not exactly zero. */
static int64_t bsr_row_emit(const nz_matrix_t *A, int64_t i, nz_matrix_t *M, int64_t out) {
    const nzi_bsr_t *a = &A->host.bsr;
    nz_value_type_t vt = A->value_type;
    size_t vs = nzi_value_size(vt);
    int64_t b = a->block, cols = A->cols;
    int64_t br = i / b, r = i - br * b;
    for (int64_t q = a->block_row_offsets[br]; q < a->block_row_offsets[br + 1]; q++) {
        int64_t col0 = (int64_t)a->block_col_indices[q] * b;
        for (int64_t c = 0; c < b && col0 + c < cols; c++) {
            int64_t src = (q * b + r) * b + c;
            if (value_is_zero(a->values, vt, src)) continue;
            if (M != NULL) {
                M->host.csr.col_indices[out] = (int32_t)(col0 + c);
                copy_value(M->host.csr.values, out, a->values, src, vs);
            }
            out++;
        }
    }
    return out;
}

/* Back to CSR: every in-range entry of every block whose value is not exactly zero. */
nz_status_t nzi_bsr_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A) {
    return to_csr_two_pass(ctx, B, A, bsr_row_emit);
}

/* ---- DIA ------------------------------------------------------------------------------------ */

static int compare_int64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The distinct diagonals j - i, ascending. With a diagonal span (rows + cols - 1) comparable to
 * nnz a byte marker per diagonal is used, O(nnz + rows + cols); for hypersparse matrices with
 * huge dimensions the nnz offsets are sorted instead, O(nnz log nnz), so the workspace stays
 * proportional to the matrix. */
nz_status_t nzi_measure_dia(nz_context_t *ctx, const nz_matrix_t *csr, nzi_layout_t *layout) {
    nz_status_t status = NZ_SUCCESS;
    uint8_t *marker = NULL;
    int64_t *diagonals = NULL, count = 0;
    int64_t rows = csr->rows, nnz = csr->nnz;
    const int64_t *offsets = csr->host.csr.row_offsets;
    const int32_t *cols = csr->host.csr.col_indices;
    if (nnz > 0) {
        int64_t span = rows + csr->cols - 1;
        if (span <= 8 * nnz + 4096) {
            NZI_CHECK(nzi_alloc_array(ctx, (void **)&marker, (size_t)span, 1, "DIA markers"));
            memset(marker, 0, (size_t)span);
            for (int64_t i = 0; i < rows; i++)
                for (int64_t k = offsets[i]; k < offsets[i + 1]; k++)
                    marker[cols[k] - i + rows - 1] = 1;
            for (int64_t d = 0; d < span; d++) count += marker[d];
            NZI_CHECK(nzi_alloc_array(ctx, (void **)&diagonals, (size_t)count,
                                      sizeof *diagonals, "DIA offsets"));
            count = 0;
            for (int64_t d = 0; d < span; d++)
                if (marker[d]) diagonals[count++] = d - (rows - 1);
        } else {
            NZI_CHECK(nzi_alloc_array(ctx, (void **)&diagonals, (size_t)nnz, sizeof *diagonals,
                                      "DIA offsets"));
            for (int64_t i = 0; i < rows; i++)
                for (int64_t k = offsets[i]; k < offsets[i + 1]; k++)
                    diagonals[k] = (int64_t)cols[k] - i;
            qsort(diagonals, (size_t)nnz, sizeof *diagonals, compare_int64);
            for (int64_t k = 0; k < nnz; k++)
                if (count == 0 || diagonals[count - 1] != diagonals[k])
                    diagonals[count++] = diagonals[k];
        }
    }
    double vs = (double)nzi_value_size(csr->value_type);
    layout->num_diagonals = count;
    layout->diagonals = diagonals;
    diagonals = NULL;
    layout->stored = count * rows;
    layout->bytes = (double)count * 8 + (double)count * (double)rows * vs;
cleanup:
    nzi_free(ctx, marker);
    nzi_free(ctx, diagonals);
    return status;
}

/* Diagonal d, row i at d * rows + i (column i + offsets[d]); positions outside the matrix and
 * positions that are not nonzeros of A hold 0. O(stored + nnz log num_diagonals). */
nz_status_t nzi_build_dia(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                          const nzi_layout_t *layout) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    size_t vs = nzi_value_size(csr->value_type);
    int64_t rows = csr->rows, count = layout->num_diagonals;
    const int64_t *offsets = csr->host.csr.row_offsets;
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_DIA, csr->value_type, rows, csr->cols,
                             csr->nnz));
    nzi_dia_t *m = &M->host.dia;
    m->num_diagonals = count;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&m->offsets, (size_t)count, sizeof *m->offsets,
                              "DIA offsets"));
    NZI_CHECK(nzi_alloc_array(ctx, &m->values, (size_t)layout->stored, vs, "DIA values"));
    if (count > 0) memcpy(m->offsets, layout->diagonals, (size_t)count * sizeof *m->offsets);
    if (layout->stored > 0) memset(m->values, 0, (size_t)layout->stored * vs);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t k = offsets[i]; k < offsets[i + 1]; k++) {
            /* the entry's diagonal is in the ascending list by construction */
            int64_t d = nzi_lower_bound_i64(m->offsets, count, csr->host.csr.col_indices[k] - i);
            copy_value(m->values, d * rows + i, csr->host.csr.values, k, vs);
        }
    *B = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* Row i of a DIA matrix: every in-range position whose value is not exactly zero; diagonals
 * ascend, so columns come out sorted. */
static int64_t dia_row_emit(const nz_matrix_t *A, int64_t i, nz_matrix_t *M, int64_t out) {
    const nzi_dia_t *a = &A->host.dia;
    nz_value_type_t vt = A->value_type;
    size_t vs = nzi_value_size(vt);
    int64_t rows = A->rows, cols = A->cols;
    for (int64_t d = 0; d < a->num_diagonals; d++) {
        int64_t j = i + a->offsets[d], src = d * rows + i;
        if (j < 0 || j >= cols || value_is_zero(a->values, vt, src)) continue;
        if (M != NULL) {
            M->host.csr.col_indices[out] = (int32_t)j;
            copy_value(M->host.csr.values, out, a->values, src, vs);
        }
        out++;
    }
    return out;
}

/* Back to CSR: every in-range position whose value is not exactly zero. */
nz_status_t nzi_dia_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A) {
    return to_csr_two_pass(ctx, B, A, dia_row_emit);
}
