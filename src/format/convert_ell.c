/* convert_ell.c: the ELLPACK family (ELL, SELL-C-sigma, HYB): measure, build from CSR, back to CSR. */
#include "nzi.h"
#include "convert_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- measuring ---------------------------------------------------------------------------- */

typedef struct row_key {
    int64_t length;
    int32_t row;
} row_key_t;

/* Longer rows first; ties keep the original order, so the permutation is deterministic. */
static int compare_row_keys(const void *a, const void *b) {
    const row_key_t *x = (const row_key_t *)a, *y = (const row_key_t *)b;
    if (x->length != y->length) return x->length > y->length ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* SELL-C-sigma row order (Kreutzer et al., SIAM J. Sci. Comput. 36(5), 2014, section 2): rows
 * are sorted by length, longest first, inside windows of sigma consecutive rows, so that rows
 * of similar length share a chunk while x accesses stay local. O(rows log sigma). */
static nz_status_t sell_order(nz_context_t *ctx, const nz_matrix_t *csr, int sigma,
                              int32_t **order_out) {
    nz_status_t status;
    int32_t *order = NULL;
    row_key_t *keys = NULL;
    int64_t rows = csr->rows;
    int64_t window = sigma < rows ? sigma : rows;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&order, (size_t)rows, sizeof *order,
                              "SELL row order"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&keys, (size_t)window, sizeof *keys,
                              "SELL sorting window"));
    for (int64_t start = 0; start < rows; start += sigma) {
        int64_t n = rows - start < sigma ? rows - start : sigma;
        for (int64_t t = 0; t < n; t++) {
            keys[t].row = (int32_t)(start + t);
            keys[t].length = nzi_row_length(csr, start + t);
        }
        qsort(keys, (size_t)n, sizeof *keys, compare_row_keys);
        for (int64_t t = 0; t < n; t++) order[start + t] = keys[t].row;
    }
    *order_out = order;
    order = NULL;
    status = NZ_SUCCESS;
cleanup:
    nzi_free(ctx, order);
    nzi_free(ctx, keys);
    return status;
}

/* HYB's ELL width (Bell & Garland, SC'09, section 4.1, as in CUSP): the largest w such that at
 * least max(4096, rows / 3) rows have w or more entries; below that many rows a column of ELL
 * does not pay for its padding compared with COO. O(rows + max row length). */
static nz_status_t hyb_auto_width(nz_context_t *ctx, const nz_matrix_t *csr, int64_t max_length,
                                  int64_t *width) {
    int64_t *histogram = NULL;
    NZI_TRY(nzi_alloc_array(ctx, (void **)&histogram, (size_t)max_length + 1, sizeof *histogram,
                            "HYB row-length histogram"));
    memset(histogram, 0, ((size_t)max_length + 1) * sizeof *histogram);
    for (int64_t i = 0; i < csr->rows; i++) histogram[nzi_row_length(csr, i)]++;
    double threshold = (double)csr->rows / NZI_HYB_RELATIVE_SPEED;
    if (threshold < NZI_HYB_BREAKEVEN_ROWS) threshold = NZI_HYB_BREAKEVEN_ROWS;
    int64_t at_least = 0, w = 0;
    for (int64_t len = max_length; len >= 1; len--) {
        at_least += histogram[len];
        if ((double)at_least >= threshold) {
            w = len;
            break;
        }
    }
    nzi_free(ctx, histogram);
    *width = w;
    return NZ_SUCCESS;
}

nz_status_t nzi_measure_ell_family(nz_context_t *ctx, const nz_matrix_t *csr,
                                   const nzi_options_t *options, nzi_layout_t *layout) {
    double vs = (double)nzi_value_size(csr->value_type);
    int64_t rows = csr->rows, max_length = 0;
    for (int64_t i = 0; i < rows; i++)
        if (nzi_row_length(csr, i) > max_length) max_length = nzi_row_length(csr, i);
    switch (layout->format) {
    case NZ_FORMAT_ELL:
        layout->width = max_length;
        layout->bytes = (double)rows * (double)max_length * (4 + vs);
        layout->stored = rows * max_length; /* < 2^31 * 2^31, no overflow */
        return NZ_SUCCESS;
    case NZ_FORMAT_HYB: {
        int64_t w = options->hyb_width;
        if (w < 0)
            NZI_TRY(hyb_auto_width(ctx, csr, max_length, &w));
        else if (w > max_length)
            w = max_length;
        int64_t rest = 0;
        for (int64_t i = 0; i < rows; i++)
            if (nzi_row_length(csr, i) > w) rest += nzi_row_length(csr, i) - w;
        layout->width = w;
        layout->coo_nnz = rest;
        layout->stored = rows * w + rest;
        layout->bytes = (double)rows * (double)w * (4 + vs) + (double)rest * (8 + vs);
        return NZ_SUCCESS;
    }
    default: {
        int C = options->chunk;
        int64_t num_chunks = (rows + C - 1) / C, stored = 0;
        layout->chunk = C;
        layout->sigma = options->sigma;
        layout->num_chunks = num_chunks;
        if (options->sigma > 1 && rows > 1)
            NZI_TRY(sell_order(ctx, csr, options->sigma, &layout->order));
        for (int64_t c = 0; c < num_chunks; c++) {
            int64_t width = 0, end = (c + 1) * C < rows ? (c + 1) * C : rows;
            for (int64_t p = c * C; p < end; p++) {
                int64_t row = layout->order != NULL ? layout->order[p] : p;
                if (nzi_row_length(csr, row) > width) width = nzi_row_length(csr, row);
            }
            stored += width * C;
        }
        layout->stored = stored;
        layout->bytes = (double)stored * (4 + vs) + (double)num_chunks * (8 + 4) + 8 +
                        (double)num_chunks * C * 4;
        return NZ_SUCCESS;
    }
    }
}

/* ---- building --------------------------------------------------------------------------------- */

static inline void copy_value(void *dst, int64_t d, const void *src, int64_t s, size_t vs) {
    memcpy((char *)dst + (size_t)d * vs, (const char *)src + (size_t)s * vs, vs);
}

/* Fill an ELL block (rows x width, column-major) with the first `width` entries of each row.
 * Padding: column -1, value 0. */
static void fill_ell(const nz_matrix_t *csr, int64_t width, int32_t *col_indices, void *values) {
    size_t vs = nzi_value_size(csr->value_type);
    int64_t rows = csr->rows;
    const int64_t *offsets = csr->host.csr.row_offsets;
    if (rows * width > 0) memset(values, 0, (size_t)(rows * width) * vs);
    for (int64_t k = 0; k < width; k++)
        for (int64_t i = 0; i < rows; i++) {
            int64_t dst = k * rows + i;
            if (k < offsets[i + 1] - offsets[i]) {
                col_indices[dst] = csr->host.csr.col_indices[offsets[i] + k];
                copy_value(values, dst, csr->host.csr.values, offsets[i] + k, vs);
            } else {
                col_indices[dst] = -1;
            }
        }
}

/* An ELL matrix or HYB's ELL part: `width` entries a row in `stored` = rows x width slots,
 * allocated (labelled for the messages) and filled from csr. */
static nz_status_t build_ell_part(nz_context_t *ctx, const nz_matrix_t *csr, int64_t width,
                                  size_t stored, nzi_ell_t *ell, const char *cols_label,
                                  const char *values_label) {
    ell->width = width;
    NZI_TRY(nzi_alloc_array(ctx, (void **)&ell->col_indices, stored, sizeof *ell->col_indices,
                            cols_label));
    NZI_TRY(nzi_alloc_array(ctx, &ell->values, stored, nzi_value_size(csr->value_type),
                            values_label));
    fill_ell(csr, width, ell->col_indices, ell->values);
    return NZ_SUCCESS;
}

nz_status_t nzi_build_ell(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                          const nzi_layout_t *layout) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_ELL, csr->value_type, csr->rows, csr->cols,
                             csr->nnz));
    NZI_CHECK(build_ell_part(ctx, csr, layout->width, (size_t)layout->stored, &M->host.ell,
                             "ELL column indices", "ELL values"));
    *B = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* SELL-C-sigma: chunk c holds sorted positions c*C .. c*C + C-1 (slot s = position - c*C);
 * within a chunk entry k of slot s is at chunk_offsets[c] + k*C + s. row_of_slot maps slots
 * back to original rows (-1 for the slots past the last row). */
nz_status_t nzi_build_sell(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                           const nzi_layout_t *layout) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    size_t vs = nzi_value_size(csr->value_type);
    int64_t rows = csr->rows, num_chunks = layout->num_chunks;
    int C = layout->chunk;
    const int64_t *offsets = csr->host.csr.row_offsets;
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_SELL, csr->value_type, rows, csr->cols,
                             csr->nnz));
    nzi_sell_t *s = &M->host.sell;
    s->chunk = C;
    s->sigma = layout->sigma;
    s->num_chunks = num_chunks;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&s->chunk_offsets, (size_t)num_chunks + 1,
                              sizeof *s->chunk_offsets, "SELL chunk offsets"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&s->chunk_widths, (size_t)num_chunks,
                              sizeof *s->chunk_widths, "SELL chunk widths"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&s->row_of_slot, (size_t)(num_chunks * C),
                              sizeof *s->row_of_slot, "SELL row permutation"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&s->col_indices, (size_t)layout->stored,
                              sizeof *s->col_indices, "SELL column indices"));
    NZI_CHECK(nzi_alloc_array(ctx, &s->values, (size_t)layout->stored, vs, "SELL values"));
    if (layout->stored > 0) memset(s->values, 0, (size_t)layout->stored * vs);
    s->chunk_offsets[0] = 0;
    for (int64_t c = 0; c < num_chunks; c++) {
        int64_t width = 0;
        for (int64_t p = c * C; p < (c + 1) * C; p++) {
            int32_t row = p >= rows ? -1 : layout->order != NULL ? layout->order[p] : (int32_t)p;
            s->row_of_slot[p] = row;
            if (row >= 0 && nzi_row_length(csr, row) > width) width = nzi_row_length(csr, row);
        }
        s->chunk_widths[c] = (int32_t)width;
        int64_t base = s->chunk_offsets[c];
        for (int slot = 0; slot < C; slot++) {
            int32_t row = s->row_of_slot[c * C + slot];
            int64_t length = row >= 0 ? nzi_row_length(csr, row) : 0;
            for (int64_t k = 0; k < width; k++) {
                int64_t dst = base + k * C + slot;
                if (k < length) {
                    s->col_indices[dst] = csr->host.csr.col_indices[offsets[row] + k];
                    copy_value(s->values, dst, csr->host.csr.values, offsets[row] + k, vs);
                } else {
                    s->col_indices[dst] = -1;
                }
            }
        }
        s->chunk_offsets[c + 1] = base + width * C;
    }
    *B = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* HYB: the first `width` entries of every row in ELL, the rest in COO sorted by (row, column). */
nz_status_t nzi_build_hyb(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                          const nzi_layout_t *layout) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    size_t vs = nzi_value_size(csr->value_type);
    int64_t rows = csr->rows, width = layout->width;
    const int64_t *offsets = csr->host.csr.row_offsets;
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_HYB, csr->value_type, rows, csr->cols,
                             csr->nnz));
    nzi_hyb_t *h = &M->host.hyb;
    h->coo_nnz = layout->coo_nnz;
    NZI_CHECK(build_ell_part(ctx, csr, width, (size_t)(rows * width), &h->ell,
                             "HYB ELL column indices", "HYB ELL values"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&h->coo.row_indices, (size_t)h->coo_nnz,
                              sizeof *h->coo.row_indices, "HYB COO row indices"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&h->coo.col_indices, (size_t)h->coo_nnz,
                              sizeof *h->coo.col_indices, "HYB COO column indices"));
    NZI_CHECK(nzi_alloc_array(ctx, &h->coo.values, (size_t)h->coo_nnz, vs, "HYB COO values"));
    int64_t out = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t k = offsets[i] + width; k < offsets[i + 1]; k++, out++) {
            h->coo.row_indices[out] = (int32_t)i;
            h->coo.col_indices[out] = csr->host.csr.col_indices[k];
            copy_value(h->coo.values, out, csr->host.csr.values, k, vs);
        }
    *B = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* ---- back to CSR (padding, column -1, dropped; stored zeros kept) --------------------------- */

/* Turn per-row counts in offsets[1..rows] into offsets, in place. */
static void counts_to_offsets(int64_t *offsets, int64_t rows) {
    offsets[0] = 0;
    for (int64_t i = 0; i < rows; i++) offsets[i + 1] += offsets[i];
}

/* Count the entries of an ELL block per row (adding to offsets[i + 1]). */
static void count_ell(const nzi_ell_t *ell, int64_t rows, int64_t *offsets) {
    for (int64_t k = 0; k < ell->width; k++)
        for (int64_t i = 0; i < rows; i++)
            if (ell->col_indices[k * rows + i] >= 0) offsets[i + 1]++;
}

/* Append the ELL entries of each row at cursor[i], sweeping the arrays in storage order; each
 * row still receives its entries in the order k = 0, 1, ..., which keeps columns sorted. */
static void scatter_ell(const nzi_ell_t *ell, int64_t rows, size_t vs, int64_t *cursor,
                        nz_matrix_t *M) {
    for (int64_t k = 0; k < ell->width; k++)
        for (int64_t i = 0; i < rows; i++) {
            int64_t src = k * rows + i;
            if (ell->col_indices[src] < 0) continue;
            int64_t dst = cursor[i]++;
            M->host.csr.col_indices[dst] = ell->col_indices[src];
            copy_value(M->host.csr.values, dst, ell->values, src, vs);
        }
}

/* Allocate the CSR result once the caller has counted the entries of each row into
 * counts[1..rows]: counts become the row offsets, copied to the result and to cursor. */
static nz_status_t alloc_counted_csr(nz_context_t *ctx, nz_matrix_t **M, const nz_matrix_t *A,
                                     int64_t *counts, int64_t *cursor) {
    nz_status_t status;
    nz_matrix_t *C = NULL;
    int64_t rows = A->rows;
    counts_to_offsets(counts, rows);
    NZI_CHECK(nzi_csr_alloc(ctx, &C, A->value_type, rows, A->cols, counts[rows]));
    memcpy(C->host.csr.row_offsets, counts, ((size_t)rows + 1) * sizeof *counts);
    memcpy(cursor, counts, ((size_t)rows + 1) * sizeof *counts);
    *M = C;
    return NZ_SUCCESS;
cleanup:
    return status;
}

/* ELL part plus an optional row-sorted COO remainder back to CSR: count per row, allocate
 * exactly, then scatter the ELL entries (padding skipped) followed by the COO ones, so each row
 * keeps its column order. Used for ELL (no remainder) and HYB. */
static nz_status_t ell_coo_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                                  const nzi_ell_t *ell, int64_t coo_nnz, const nzi_coo_t *coo) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    int64_t *counts = NULL, *cursor = NULL;
    int64_t rows = A->rows;
    size_t vs = nzi_value_size(A->value_type);
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&counts, (size_t)rows + 1, sizeof *counts,
                              "row counts"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&cursor, (size_t)rows + 1, sizeof *cursor,
                              "row cursors"));
    memset(counts, 0, ((size_t)rows + 1) * sizeof *counts);
    count_ell(ell, rows, counts);
    for (int64_t k = 0; k < coo_nnz; k++) counts[coo->row_indices[k] + 1]++;
    NZI_CHECK(alloc_counted_csr(ctx, &M, A, counts, cursor));
    scatter_ell(ell, rows, vs, cursor, M);
    for (int64_t k = 0; k < coo_nnz; k++) {
        int64_t dst = cursor[coo->row_indices[k]]++;
        M->host.csr.col_indices[dst] = coo->col_indices[k];
        copy_value(M->host.csr.values, dst, coo->values, k, vs);
    }
    *B = M;
    M = NULL;
    status = NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    nzi_free(ctx, counts);
    nzi_free(ctx, cursor);
    return status;
}

nz_status_t nzi_ell_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A) {
    return ell_coo_to_csr(ctx, B, A, &A->host.ell, 0, NULL);
}

nz_status_t nzi_hyb_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A) {
    return ell_coo_to_csr(ctx, B, A, &A->host.hyb.ell, A->host.hyb.coo_nnz, &A->host.hyb.coo);
}

nz_status_t nzi_sell_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    int64_t *counts = NULL, *cursor = NULL;
    int64_t rows = A->rows;
    const nzi_sell_t *s = &A->host.sell;
    size_t vs = nzi_value_size(A->value_type);
    int C = s->chunk;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&counts, (size_t)rows + 1, sizeof *counts,
                              "row counts"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&cursor, (size_t)rows + 1, sizeof *cursor,
                              "row cursors"));
    memset(counts, 0, ((size_t)rows + 1) * sizeof *counts);
    for (int64_t c = 0; c < s->num_chunks; c++)
        for (int slot = 0; slot < C; slot++) {
            int32_t row = s->row_of_slot[c * C + slot];
            if (row < 0) continue;
            for (int64_t k = 0; k < s->chunk_widths[c]; k++)
                if (s->col_indices[s->chunk_offsets[c] + k * C + slot] >= 0) counts[row + 1]++;
        }
    NZI_CHECK(alloc_counted_csr(ctx, &M, A, counts, cursor));
    for (int64_t c = 0; c < s->num_chunks; c++)
        for (int slot = 0; slot < C; slot++) {
            int32_t row = s->row_of_slot[c * C + slot];
            if (row < 0) continue;
            for (int64_t k = 0; k < s->chunk_widths[c]; k++) {
                int64_t src = s->chunk_offsets[c] + k * C + slot;
                if (s->col_indices[src] < 0) continue;
                int64_t dst = cursor[row]++;
                M->host.csr.col_indices[dst] = s->col_indices[src];
                copy_value(M->host.csr.values, dst, s->values, src, vs);
            }
        }
    *B = M;
    M = NULL;
    status = NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    nzi_free(ctx, counts);
    nzi_free(ctx, cursor);
    return status;
}
