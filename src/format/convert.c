/* convert.c: nz_matrix_convert / nz_matrix_convert_values: any host format to any other, via CSR. */
#include "nzi.h"
#include "convert_internal.h"

#include <string.h>

/*
 * Conversions go through CSR as the hub: A -> CSR (nzi_as_csr; free when A is CSR) -> target.
 * Every padded target (ELL, SELL, HYB, BSR, DIA) is first measured from the CSR row lengths
 * (nzi_layout_measure), and refused with NZ_ERR_TOO_MUCH_PADDING before anything big is
 * allocated when its bytes exceed max_padding_ratio x the CSR bytes.
 *
 * What survives a round trip back to CSR:
 * - COO, CSC, ELL, SELL, HYB keep the exact CSR pattern, explicit zeros included (padding is
 *   told apart by its column index -1).
 * - BSR and DIA cannot tell a stored zero of the original from the zero fill of a block or a
 *   diagonal, so converting them back to CSR drops every entry whose value is exactly zero
 *   (the products A*x are unchanged for finite x). Their nnz still counts the original entries.
 */

/* ---- options and layouts ------------------------------------------------------------------ */

nz_status_t nzi_options_resolve(nz_context_t *ctx, const nz_format_options_t *options,
                                nz_format_t format, nzi_options_t *resolved) {
    const char *name = nz_format_name(format);
    nzi_options_t r = {32, 1, 4, -1, 3.0};
    if (options != NULL) {
        if (options->sell_chunk != 0) r.chunk = options->sell_chunk;
        if (options->sell_sigma != 0) r.sigma = options->sell_sigma;
        if (options->bsr_block != 0) r.block = options->bsr_block;
        if (options->hyb_ell_width != 0) r.hyb_width = options->hyb_ell_width;
        if (options->max_padding_ratio != 0) r.max_padding_ratio = options->max_padding_ratio;
        if (options->hyb_ell_width < 0)
            return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                             "%s options: hyb_ell_width %lld is negative", name,
                             (long long)options->hyb_ell_width);
    }
    if (r.chunk < 1 || r.chunk > NZI_MAX_SELL_CHUNK)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s options: sell_chunk %d is outside 1..%d", name, r.chunk,
                         NZI_MAX_SELL_CHUNK);
    if (r.sigma < 1 || (r.sigma != 1 && r.sigma % r.chunk != 0))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s options: sell_sigma %d must be 1 or a positive multiple of the "
                         "chunk height %d", name, r.sigma, r.chunk);
    if (r.block < 1 || r.block > 32)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s options: bsr_block %d is outside 1..32", name, r.block);
    if (!(r.max_padding_ratio > 0))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s options: max_padding_ratio %g must be positive", name,
                         r.max_padding_ratio);
    *resolved = r;
    return NZ_SUCCESS;
}

double nzi_csr_bytes(const nz_matrix_t *csr) {
    return ((double)csr->rows + 1) * 8 + (double)csr->nnz * (4.0 + nzi_value_size(csr->value_type));
}

nz_status_t nzi_layout_measure(nz_context_t *ctx, const nz_matrix_t *csr, nz_format_t format,
                               const nzi_options_t *options, nzi_layout_t *layout) {
    double vs = (double)nzi_value_size(csr->value_type);
    memset(layout, 0, sizeof *layout);
    layout->format = format;
    layout->value_type = csr->value_type;
    layout->stored = csr->nnz;
    switch (format) {
    case NZ_FORMAT_CSR: layout->bytes = nzi_csr_bytes(csr); return NZ_SUCCESS;
    case NZ_FORMAT_CSC:
        layout->bytes = ((double)csr->cols + 1) * 8 + (double)csr->nnz * (4 + vs);
        return NZ_SUCCESS;
    case NZ_FORMAT_COO: layout->bytes = (double)csr->nnz * (8 + vs); return NZ_SUCCESS;
    case NZ_FORMAT_ELL:
    case NZ_FORMAT_SELL:
    case NZ_FORMAT_HYB: return nzi_measure_ell_family(ctx, csr, options, layout);
    case NZ_FORMAT_BSR: return nzi_measure_bsr(ctx, csr, options, layout);
    case NZ_FORMAT_DIA: return nzi_measure_dia(ctx, csr, layout);
    default:
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "invalid format %d", (int)format);
    }
}

void nzi_layout_release(nz_context_t *ctx, nzi_layout_t *layout) {
    nzi_free(ctx, layout->order);
    nzi_free(ctx, layout->diagonals);
    layout->order = NULL;
    layout->diagonals = NULL;
}

nz_status_t nzi_check_padding(nz_context_t *ctx, const nz_matrix_t *csr,
                              const nzi_layout_t *layout, double max_padding_ratio) {
    double csr_bytes = nzi_csr_bytes(csr);
    if (layout->bytes > max_padding_ratio * csr_bytes)
        return nzi_error(ctx, NZ_ERR_TOO_MUCH_PADDING,
                         "converting the %lld x %lld matrix (%lld nonzeros) to %s needs %.0f "
                         "bytes, more than max_padding_ratio %g x its %.0f CSR bytes",
                         (long long)csr->rows, (long long)csr->cols, (long long)csr->nnz,
                         nz_format_name(layout->format), layout->bytes, max_padding_ratio,
                         csr_bytes);
    if (layout->bytes >= 0x1p62)
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s storage of %.0f bytes is not addressable",
                         nz_format_name(layout->format), layout->bytes);
    return NZ_SUCCESS;
}

/* ---- copies ------------------------------------------------------------------------------- */

static nz_status_t dup_array(nz_context_t *ctx, void **dst, const void *src, int64_t count,
                             size_t size, const char *what) {
    nz_status_t status = nzi_alloc_array(ctx, dst, (size_t)count, size, what);
    if (status == NZ_SUCCESS && count > 0) memcpy(*dst, src, (size_t)count * size);
    return status;
}

static nz_status_t dup_values(nz_context_t *ctx, void **dst, nz_value_type_t dst_type,
                              const void *src, nz_value_type_t src_type, int64_t count,
                              const char *what) {
    if (dst_type == src_type)
        return dup_array(ctx, dst, src, count, nzi_value_size(dst_type), what);
    nz_status_t status = nzi_alloc_array(ctx, dst, (size_t)count, nzi_value_size(dst_type), what);
    if (status < 0) return status;
    if (dst_type == NZ_F32)
        for (int64_t k = 0; k < count; k++) ((float *)*dst)[k] = (float)((const double *)src)[k];
    else
        for (int64_t k = 0; k < count; k++) ((double *)*dst)[k] = ((const float *)src)[k];
    return NZ_SUCCESS;
}

/* The clone's arrays, one helper per format. Each fills M's arrays in the order listed and stops
 * at the first failed allocation; nzi_matrix_clone frees whatever M already holds. */

/* CSR and CSC: offsets over the major dimension, then indices and values. */
static nz_status_t clone_compressed(nz_context_t *ctx, nz_matrix_t *M, const nz_matrix_t *A,
                                    nz_value_type_t value_type) {
    const nzi_csr_t *a = &A->host.csr;
    nzi_csr_t *m = &M->host.csr;
    int64_t major = A->format == NZ_FORMAT_CSR ? A->rows : A->cols;
    int64_t nnz = a->row_offsets[major];
    NZI_TRY(dup_array(ctx, (void **)&m->row_offsets, a->row_offsets, major + 1,
                      sizeof *m->row_offsets, "offsets"));
    NZI_TRY(dup_array(ctx, (void **)&m->col_indices, a->col_indices, nnz, sizeof *m->col_indices,
                      "indices"));
    return dup_values(ctx, &m->values, value_type, a->values, A->value_type, nnz, "values");
}

static nz_status_t clone_coo(nz_context_t *ctx, nz_matrix_t *M, const nz_matrix_t *A,
                             nz_value_type_t value_type) {
    const nzi_coo_t *a = &A->host.coo;
    nzi_coo_t *m = &M->host.coo;
    NZI_TRY(dup_array(ctx, (void **)&m->row_indices, a->row_indices, A->nnz,
                      sizeof *m->row_indices, "COO row indices"));
    NZI_TRY(dup_array(ctx, (void **)&m->col_indices, a->col_indices, A->nnz,
                      sizeof *m->col_indices, "COO column indices"));
    return dup_values(ctx, &m->values, value_type, a->values, A->value_type, A->nnz,
                      "COO values");
}

/* ELL, and HYB: its ELL part, then its COO part. */
static nz_status_t clone_ell_hyb(nz_context_t *ctx, nz_matrix_t *M, const nz_matrix_t *A,
                                 nz_value_type_t value_type) {
    const nz_value_type_t vt = A->value_type;
    const nzi_ell_t *a = A->format == NZ_FORMAT_ELL ? &A->host.ell : &A->host.hyb.ell;
    nzi_ell_t *m = A->format == NZ_FORMAT_ELL ? &M->host.ell : &M->host.hyb.ell;
    int64_t stored = A->rows * a->width;
    m->width = a->width;
    NZI_TRY(dup_array(ctx, (void **)&m->col_indices, a->col_indices, stored,
                      sizeof *m->col_indices, "ELL column indices"));
    NZI_TRY(dup_values(ctx, &m->values, value_type, a->values, vt, stored, "ELL values"));
    if (A->format == NZ_FORMAT_HYB) {
        const nzi_hyb_t *ha = &A->host.hyb;
        nzi_hyb_t *hm = &M->host.hyb;
        hm->coo_nnz = ha->coo_nnz;
        NZI_TRY(dup_array(ctx, (void **)&hm->coo.row_indices, ha->coo.row_indices, ha->coo_nnz,
                          sizeof *hm->coo.row_indices, "HYB COO row indices"));
        NZI_TRY(dup_array(ctx, (void **)&hm->coo.col_indices, ha->coo.col_indices, ha->coo_nnz,
                          sizeof *hm->coo.col_indices, "HYB COO column indices"));
        NZI_TRY(dup_values(ctx, &hm->coo.values, value_type, ha->coo.values, vt, ha->coo_nnz,
                           "HYB COO values"));
    }
    return NZ_SUCCESS;
}

static nz_status_t clone_sell(nz_context_t *ctx, nz_matrix_t *M, const nz_matrix_t *A,
                              nz_value_type_t value_type) {
    const nzi_sell_t *a = &A->host.sell;
    nzi_sell_t *m = &M->host.sell;
    int64_t stored = a->chunk_offsets[a->num_chunks];
    m->chunk = a->chunk;
    m->sigma = a->sigma;
    m->num_chunks = a->num_chunks;
    NZI_TRY(dup_array(ctx, (void **)&m->chunk_offsets, a->chunk_offsets, a->num_chunks + 1,
                      sizeof *m->chunk_offsets, "SELL chunk offsets"));
    NZI_TRY(dup_array(ctx, (void **)&m->chunk_widths, a->chunk_widths, a->num_chunks,
                      sizeof *m->chunk_widths, "SELL chunk widths"));
    NZI_TRY(dup_array(ctx, (void **)&m->row_of_slot, a->row_of_slot, a->num_chunks * a->chunk,
                      sizeof *m->row_of_slot, "SELL row permutation"));
    NZI_TRY(dup_array(ctx, (void **)&m->col_indices, a->col_indices, stored,
                      sizeof *m->col_indices, "SELL column indices"));
    return dup_values(ctx, &m->values, value_type, a->values, A->value_type, stored,
                      "SELL values");
}

static nz_status_t clone_bsr(nz_context_t *ctx, nz_matrix_t *M, const nz_matrix_t *A,
                             nz_value_type_t value_type) {
    const nzi_bsr_t *a = &A->host.bsr;
    nzi_bsr_t *m = &M->host.bsr;
    m->block = a->block;
    m->block_rows = a->block_rows;
    m->block_cols = a->block_cols;
    m->num_blocks = a->num_blocks;
    NZI_TRY(dup_array(ctx, (void **)&m->block_row_offsets, a->block_row_offsets,
                      a->block_rows + 1, sizeof *m->block_row_offsets, "BSR block row offsets"));
    NZI_TRY(dup_array(ctx, (void **)&m->block_col_indices, a->block_col_indices, a->num_blocks,
                      sizeof *m->block_col_indices, "BSR block column indices"));
    return dup_values(ctx, &m->values, value_type, a->values, A->value_type,
                      a->num_blocks * a->block * a->block, "BSR values");
}

static nz_status_t clone_dia(nz_context_t *ctx, nz_matrix_t *M, const nz_matrix_t *A,
                             nz_value_type_t value_type) {
    const nzi_dia_t *a = &A->host.dia;
    nzi_dia_t *m = &M->host.dia;
    m->num_diagonals = a->num_diagonals;
    NZI_TRY(dup_array(ctx, (void **)&m->offsets, a->offsets, a->num_diagonals, sizeof *m->offsets,
                      "DIA offsets"));
    return dup_values(ctx, &m->values, value_type, a->values, A->value_type,
                      a->num_diagonals * A->rows, "DIA values");
}

/* A deep copy of host matrix A (any format) with values converted to value_type. The shape
 * parameters are copied first and every array pointer starts NULL, so a failed allocation
 * leaves an object nzi_matrix_free can take apart. */
nz_status_t nzi_matrix_clone(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                             nz_value_type_t value_type) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    NZI_CHECK(nzi_matrix_new(ctx, &M, A->format, value_type, A->rows, A->cols, A->nnz));
    switch (A->format) {
    case NZ_FORMAT_CSR:
    case NZ_FORMAT_CSC: NZI_CHECK(clone_compressed(ctx, M, A, value_type)); break;
    case NZ_FORMAT_COO: NZI_CHECK(clone_coo(ctx, M, A, value_type)); break;
    case NZ_FORMAT_ELL:
    case NZ_FORMAT_HYB: NZI_CHECK(clone_ell_hyb(ctx, M, A, value_type)); break;
    case NZ_FORMAT_SELL: NZI_CHECK(clone_sell(ctx, M, A, value_type)); break;
    case NZ_FORMAT_BSR: NZI_CHECK(clone_bsr(ctx, M, A, value_type)); break;
    case NZ_FORMAT_DIA: NZI_CHECK(clone_dia(ctx, M, A, value_type)); break;
    default:
        NZI_CHECK(nzi_error(ctx, NZ_ERR_INVALID_MATRIX, "matrix has an invalid format %d",
                            (int)A->format));
    }
    *B = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* ---- COO <-> CSR ---------------------------------------------------------------------------- */

/* COO is sorted by (row, column) without duplicates, so CSR is a row count plus two copies. */
static nz_status_t coo_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A) {
    nz_matrix_t *M = NULL;
    NZI_TRY(nzi_csr_alloc(ctx, &M, A->value_type, A->rows, A->cols, A->nnz));
    int64_t *offsets = M->host.csr.row_offsets;
    memset(offsets, 0, ((size_t)A->rows + 1) * sizeof *offsets);
    for (int64_t k = 0; k < A->nnz; k++) offsets[A->host.coo.row_indices[k] + 1]++;
    for (int64_t i = 0; i < A->rows; i++) offsets[i + 1] += offsets[i];
    if (A->nnz > 0) {
        memcpy(M->host.csr.col_indices, A->host.coo.col_indices,
               (size_t)A->nnz * sizeof *M->host.csr.col_indices);
        memcpy(M->host.csr.values, A->host.coo.values,
               (size_t)A->nnz * nzi_value_size(A->value_type));
    }
    *B = M;
    return NZ_SUCCESS;
}

static nz_status_t csr_to_coo(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    int64_t nnz = csr->nnz;
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_COO, csr->value_type, csr->rows, csr->cols, nnz));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&M->host.coo.row_indices, (size_t)nnz,
                              sizeof *M->host.coo.row_indices, "COO row indices"));
    NZI_CHECK(dup_array(ctx, (void **)&M->host.coo.col_indices, csr->host.csr.col_indices, nnz,
                        sizeof *M->host.coo.col_indices, "COO column indices"));
    NZI_CHECK(dup_array(ctx, &M->host.coo.values, csr->host.csr.values, nnz,
                        nzi_value_size(csr->value_type), "COO values"));
    for (int64_t i = 0; i < csr->rows; i++)
        for (int64_t k = csr->host.csr.row_offsets[i]; k < csr->host.csr.row_offsets[i + 1]; k++)
            M->host.coo.row_indices[k] = (int32_t)i;
    *B = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* ---- the hub -------------------------------------------------------------------------------- */

nz_status_t nzi_as_csr(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t **csr,
                       nz_matrix_t **owned) {
    nz_matrix_t *M = NULL;
    *owned = NULL;
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "the %s matrix is on the device; a host matrix is needed",
                         nz_format_name(A->format));
    switch (A->format) {
    case NZ_FORMAT_CSR: *csr = A; return NZ_SUCCESS;
    case NZ_FORMAT_CSC: NZI_TRY(nzi_compressed_transpose(ctx, &M, A, NZ_FORMAT_CSR)); break;
    case NZ_FORMAT_COO: NZI_TRY(coo_to_csr(ctx, &M, A)); break;
    case NZ_FORMAT_ELL: NZI_TRY(nzi_ell_to_csr(ctx, &M, A)); break;
    case NZ_FORMAT_SELL: NZI_TRY(nzi_sell_to_csr(ctx, &M, A)); break;
    case NZ_FORMAT_HYB: NZI_TRY(nzi_hyb_to_csr(ctx, &M, A)); break;
    case NZ_FORMAT_BSR: NZI_TRY(nzi_bsr_to_csr(ctx, &M, A)); break;
    case NZ_FORMAT_DIA: NZI_TRY(nzi_dia_to_csr(ctx, &M, A)); break;
    default:
        return nzi_error(ctx, NZ_ERR_INVALID_MATRIX, "matrix has an invalid format %d",
                         (int)A->format);
    }
    *csr = M;
    *owned = M;
    return NZ_SUCCESS;
}

nz_status_t nz_matrix_convert(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                              nz_format_t format, const nz_format_options_t *options) {
    nz_status_t status;
    nz_matrix_t *owned = NULL, *M = NULL;
    const nz_matrix_t *csr = NULL;
    nzi_options_t opts;
    nzi_layout_t layout;
    memset(&layout, 0, sizeof layout);
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (B == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_matrix_convert: B is NULL");
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "nz_matrix_convert: A is on the device; convert host matrices");
    if ((int)format < 0 || format >= NZ_FORMAT_COUNT)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_matrix_convert: invalid format %d",
                         (int)format);
    NZI_TRY(nzi_options_resolve(ctx, options, format, &opts));

    if (A->format == format && (format == NZ_FORMAT_CSR || format == NZ_FORMAT_CSC ||
                                format == NZ_FORMAT_COO)) {
        NZI_CHECK(nzi_matrix_clone(ctx, &M, A, A->value_type));
        goto done;
    }
    NZI_CHECK(nzi_as_csr(ctx, A, &csr, &owned));
    switch (format) {
    case NZ_FORMAT_CSR:
        if (owned != NULL) {
            M = owned;
            owned = NULL;
        } else {
            NZI_CHECK(nzi_matrix_clone(ctx, &M, csr, csr->value_type));
        }
        break;
    case NZ_FORMAT_CSC: NZI_CHECK(nzi_compressed_transpose(ctx, &M, csr, NZ_FORMAT_CSC)); break;
    case NZ_FORMAT_COO: NZI_CHECK(csr_to_coo(ctx, &M, csr)); break;
    default:
        NZI_CHECK(nzi_layout_measure(ctx, csr, format, &opts, &layout));
        NZI_CHECK(nzi_check_padding(ctx, csr, &layout, opts.max_padding_ratio));
        switch (format) {
        case NZ_FORMAT_ELL: NZI_CHECK(nzi_build_ell(ctx, &M, csr, &layout)); break;
        case NZ_FORMAT_SELL: NZI_CHECK(nzi_build_sell(ctx, &M, csr, &layout)); break;
        case NZ_FORMAT_HYB: NZI_CHECK(nzi_build_hyb(ctx, &M, csr, &layout)); break;
        case NZ_FORMAT_BSR: NZI_CHECK(nzi_build_bsr(ctx, &M, csr, &layout)); break;
        default: NZI_CHECK(nzi_build_dia(ctx, &M, csr, &layout)); break;
        }
        break;
    }
done:
    *B = M;
    M = NULL;
    status = NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    nzi_matrix_free(owned);
    nzi_layout_release(ctx, &layout);
    return status;
}

nz_status_t nz_matrix_convert_values(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                                     nz_value_type_t value_type) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (B == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_matrix_convert_values: B is NULL");
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "nz_matrix_convert_values: A is on the device; convert host matrices");
    if (!nzi_valid_value_type(value_type))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_matrix_convert_values: invalid value type %d", (int)value_type);
    return nzi_matrix_clone(ctx, B, A, value_type);
}
