/* matrix.c: the matrix handle: create from caller CSR / COO arrays, validate, canonicalise, free. */
#include "nzi.h"
#include "backend.h"

#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

static const char *const format_names[NZ_FORMAT_COUNT] = {"csr", "csc", "coo", "ell",
                                                          "sell", "hyb", "bsr", "dia"};

const char *nz_format_name(nz_format_t format) {
    if ((int)format < 0 || format >= NZ_FORMAT_COUNT) return "unknown";
    return format_names[format];
}

nz_status_t nz_format_from_name(nz_format_t *format, const char *name) {
    if (format == NULL || name == NULL) return NZ_ERR_NULL_ARGUMENT;
    for (int f = 0; f < NZ_FORMAT_COUNT; f++)
        if (strcmp(name, format_names[f]) == 0) {
            *format = (nz_format_t)f;
            return NZ_SUCCESS;
        }
    return NZ_ERR_INVALID_ARGUMENT;
}

nz_status_t nzi_check_dims(nz_context_t *ctx, int64_t rows, int64_t cols, const char *what) {
    if (rows < 0 || cols < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: negative dimensions %lld x %lld", what,
                         (long long)rows, (long long)cols);
    if (rows > INT32_MAX || cols > INT32_MAX)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: %lld x %lld exceeds the 2^31-1 row/column limit", what,
                         (long long)rows, (long long)cols);
    return NZ_SUCCESS;
}

nz_status_t nzi_check_matrix(nz_context_t *ctx, const nz_matrix_t *A, const char *name) {
    if (A == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "matrix %s is NULL", name);
    if (A->magic != NZI_MATRIX_MAGIC)
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "matrix %s is not a valid handle", name);
    if (ctx != NULL && A->ctx != ctx)
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "matrix %s belongs to another context", name);
    return NZ_SUCCESS;
}

static _Atomic uint64_t next_serial;

nz_status_t nzi_matrix_new(nz_context_t *ctx, nz_matrix_t **A, nz_format_t format,
                           nz_value_type_t value_type, int64_t rows, int64_t cols, int64_t nnz) {
    nz_matrix_t *M = (nz_matrix_t *)nzi_calloc(ctx, 1, sizeof *M);
    if (M == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate a matrix object");
    M->magic = NZI_MATRIX_MAGIC;
    M->serial = atomic_fetch_add(&next_serial, 1) + 1;
    M->ctx = ctx;
    M->format = format;
    M->value_type = value_type;
    M->location = NZ_HOST;
    M->rows = rows;
    M->cols = cols;
    M->nnz = nnz;
    *A = M;
    return NZ_SUCCESS;
}

nz_status_t nzi_csr_alloc(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t value_type,
                          int64_t rows, int64_t cols, int64_t nnz) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    if (nnz < 0) return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "negative nonzero count");
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_CSR, value_type, rows, cols, nnz));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&M->host.csr.row_offsets, (size_t)rows + 1,
                              sizeof(int64_t), "CSR row offsets"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&M->host.csr.col_indices, (size_t)nnz,
                              sizeof(int32_t), "CSR column indices"));
    NZI_CHECK(nzi_alloc_array(ctx, &M->host.csr.values, (size_t)nnz, nzi_value_size(value_type),
                              "CSR values"));
    M->host.csr.row_offsets[0] = 0;
    *A = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* The host arrays of a COO matrix or of HYB's COO part, and of an ELL matrix or HYB's ELL part. */
static void free_coo(nz_context_t *ctx, const nzi_coo_t *coo) {
    nzi_free(ctx, coo->row_indices);
    nzi_free(ctx, coo->col_indices);
    nzi_free(ctx, coo->values);
}

static void free_ell(nz_context_t *ctx, const nzi_ell_t *ell) {
    nzi_free(ctx, ell->col_indices);
    nzi_free(ctx, ell->values);
}

void nzi_matrix_free(nz_matrix_t *A) {
    if (A == NULL) return;
    nz_context_t *ctx = A->ctx;
    if (A->location == NZ_DEVICE) {
        nzi_backend_of(A)->matrix_release(A);
    } else {
        switch (A->format) {
        case NZ_FORMAT_CSR:
        case NZ_FORMAT_CSC:
            if (!A->host_offsets_borrowed) nzi_free(ctx, A->host.csr.row_offsets);
            if (!A->host_borrowed) {
                nzi_free(ctx, A->host.csr.col_indices);
                nzi_free(ctx, A->host.csr.values);
            }
            break;
        case NZ_FORMAT_COO: free_coo(ctx, &A->host.coo); break;
        case NZ_FORMAT_ELL: free_ell(ctx, &A->host.ell); break;
        case NZ_FORMAT_SELL:
            nzi_free(ctx, A->host.sell.chunk_offsets);
            nzi_free(ctx, A->host.sell.chunk_widths);
            nzi_free(ctx, A->host.sell.row_of_slot);
            nzi_free(ctx, A->host.sell.col_indices);
            nzi_free(ctx, A->host.sell.values);
            break;
        case NZ_FORMAT_HYB:
            free_ell(ctx, &A->host.hyb.ell);
            free_coo(ctx, &A->host.hyb.coo);
            break;
        case NZ_FORMAT_BSR:
            nzi_free(ctx, A->host.bsr.block_row_offsets);
            nzi_free(ctx, A->host.bsr.block_col_indices);
            nzi_free(ctx, A->host.bsr.values);
            break;
        case NZ_FORMAT_DIA:
            nzi_free(ctx, A->host.dia.offsets);
            nzi_free(ctx, A->host.dia.values);
            break;
        default: break;
        }
    }
    A->magic = NZI_DEAD_MAGIC;
    nzi_free(ctx, A);
}

nz_status_t nz_matrix_destroy(nz_matrix_t **A) {
    if (A == NULL || *A == NULL) return NZ_SUCCESS;
    if ((*A)->magic != NZI_MATRIX_MAGIC) return NZ_ERR_INVALID_HANDLE;
    nzi_matrix_free(*A);
    *A = NULL;
    return NZ_SUCCESS;
}

/* Sort (col, value) pairs of one row by column: insertion sort for short rows, heap sort for
 * long ones, so that a single enormous row costs O(n log n) without extra memory. */
static void sort_row(int32_t *cols, void *values, nz_value_type_t t, int64_t n) {
    if (n < 2) return;
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            int32_t c = cols[i];
            double v = nzi_get(values, t, i);
            int64_t j = i - 1;
            while (j >= 0 && cols[j] > c) {
                cols[j + 1] = cols[j];
                nzi_set(values, t, j + 1, nzi_get(values, t, j));
                j--;
            }
            cols[j + 1] = c;
            nzi_set(values, t, j + 1, v);
        }
        return;
    }
    /* heap sort */
    for (int64_t start = n / 2 - 1;; start--) {
        int64_t root = start;
        for (;;) {
            int64_t child = 2 * root + 1;
            if (child >= n) break;
            if (child + 1 < n && cols[child + 1] > cols[child]) child++;
            if (cols[root] >= cols[child]) break;
            int32_t tc = cols[root]; cols[root] = cols[child]; cols[child] = tc;
            double tv = nzi_get(values, t, root);
            nzi_set(values, t, root, nzi_get(values, t, child));
            nzi_set(values, t, child, tv);
            root = child;
        }
        if (start == 0) break;
    }
    for (int64_t end = n - 1; end > 0; end--) {
        int32_t tc = cols[0]; cols[0] = cols[end]; cols[end] = tc;
        double tv = nzi_get(values, t, 0);
        nzi_set(values, t, 0, nzi_get(values, t, end));
        nzi_set(values, t, end, tv);
        int64_t root = 0;
        for (;;) {
            int64_t child = 2 * root + 1;
            if (child >= end) break;
            if (child + 1 < end && cols[child + 1] > cols[child]) child++;
            if (cols[root] >= cols[child]) break;
            tc = cols[root]; cols[root] = cols[child]; cols[child] = tc;
            tv = nzi_get(values, t, root);
            nzi_set(values, t, root, nzi_get(values, t, child));
            nzi_set(values, t, child, tv);
            root = child;
        }
    }
}

nz_status_t nzi_csr_canonicalize(nz_context_t *ctx, nz_matrix_t *A) {
    (void)ctx;
    nzi_csr_t *csr = &A->host.csr;
    int64_t out = 0;
    for (int64_t i = 0; i < A->rows; i++) {
        int64_t begin = csr->row_offsets[i], end = csr->row_offsets[i + 1];
        bool sorted = true;
        for (int64_t k = begin + 1; k < end; k++)
            if (csr->col_indices[k] <= csr->col_indices[k - 1]) {
                sorted = false;
                break;
            }
        if (!sorted) {
            void *row_values = (char *)csr->values + (size_t)begin * nzi_value_size(A->value_type);
            sort_row(csr->col_indices + begin, row_values, A->value_type, end - begin);
        }
        csr->row_offsets[i] = out;
        for (int64_t k = begin; k < end; k++) {
            if (out > csr->row_offsets[i] && csr->col_indices[out - 1] == csr->col_indices[k]) {
                nzi_set(csr->values, A->value_type, out - 1,
                        nzi_get(csr->values, A->value_type, out - 1) +
                            nzi_get(csr->values, A->value_type, k));
            } else {
                csr->col_indices[out] = csr->col_indices[k];
                nzi_set(csr->values, A->value_type, out, nzi_get(csr->values, A->value_type, k));
                out++;
            }
        }
    }
    csr->row_offsets[A->rows] = out;
    A->nnz = out;
    return NZ_SUCCESS;
}

nz_status_t nzi_check_new_matrix(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t value_type,
                                 const char *what) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (A == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: output handle is NULL", what);
    if (!nzi_valid_value_type(value_type))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: invalid value type %d", what,
                         (int)value_type);
    return NZ_SUCCESS;
}

static nz_status_t check_common(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                                nz_value_type_t value_type, const char *what) {
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    return nzi_check_dims(ctx, rows, cols, what);
}

/* Entry i of caller row offsets of either width, widened. */
static inline int64_t offset_at(nz_index_type_t offset_type, const void *row_offsets, int64_t i) {
    return offset_type == NZ_I32 ? (int64_t)((const int32_t *)row_offsets)[i]
                                 : ((const int64_t *)row_offsets)[i];
}

/* Caller row offsets (int32 or int64): the type is known, the array is given, starts at 0 and
 * never decreases; *nnz = row_offsets[rows]. The first bad row is named. */
static nz_status_t check_offsets(nz_context_t *ctx, int64_t rows, nz_index_type_t offset_type,
                                 const void *row_offsets, const char *what, int64_t *nnz) {
    if (offset_type != NZ_I32 && offset_type != NZ_I64)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: invalid offset type %d", what,
                         (int)offset_type);
    if (row_offsets == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: row_offsets is NULL", what);
    if (offset_at(offset_type, row_offsets, 0) != 0)
        return nzi_error(ctx, NZ_ERR_INVALID_MATRIX, "%s: row_offsets[0] is %lld, not 0", what,
                         (long long)offset_at(offset_type, row_offsets, 0));
    for (int64_t i = 0; i < rows; i++)
        if (offset_at(offset_type, row_offsets, i + 1) < offset_at(offset_type, row_offsets, i))
            return nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                             "%s: row %lld: row_offsets decrease (%lld then %lld)", what,
                             (long long)i, (long long)offset_at(offset_type, row_offsets, i),
                             (long long)offset_at(offset_type, row_offsets, i + 1));
    *nnz = offset_at(offset_type, row_offsets, rows);
    return NZ_SUCCESS;
}

nz_status_t nz_matrix_create_csr(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                                 nz_index_type_t offset_type, const void *row_offsets,
                                 const int32_t *col_indices, nz_value_type_t value_type,
                                 const void *values) {
    const char *what = "nz_matrix_create_csr";
    NZI_TRY(check_common(ctx, A, rows, cols, value_type, what));
    int64_t nnz = 0;
    NZI_TRY(check_offsets(ctx, rows, offset_type, row_offsets, what, &nnz));
    if (nnz > 0 && col_indices == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: col_indices is NULL", what);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t k = offset_at(offset_type, row_offsets, i),
                     end = offset_at(offset_type, row_offsets, i + 1);
             k < end; k++)
            if (col_indices[k] < 0 || col_indices[k] >= cols)
                return nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                                 "%s: row %lld: column index %d out of range [0, %lld)", what,
                                 (long long)i, col_indices[k], (long long)cols);
    nz_matrix_t *M = NULL;
    NZI_TRY(nzi_csr_alloc(ctx, &M, value_type, rows, cols, nnz));
    for (int64_t i = 0; i <= rows; i++)
        M->host.csr.row_offsets[i] = offset_at(offset_type, row_offsets, i);
    if (nnz > 0) memcpy(M->host.csr.col_indices, col_indices, (size_t)nnz * sizeof(int32_t));
    if (values != NULL) {
        if (nnz > 0) memcpy(M->host.csr.values, values, (size_t)nnz * nzi_value_size(value_type));
    } else {
        for (int64_t k = 0; k < nnz; k++) nzi_set(M->host.csr.values, value_type, k, 1.0);
    }
    nzi_csr_canonicalize(ctx, M);
    *A = M;
    return NZ_SUCCESS;
}

/* Validates the structure in one pass over the arrays, O(rows + nnz), without writing them:
 * offsets from 0 and non-decreasing, column indices in [0, cols) and strictly increasing within
 * each row (sorted, no duplicates: borrowed arrays cannot be canonicalised). Then a matrix object
 * points at the caller's arrays; only int32 offsets are copied (widened to the int64 offsets
 * every host kernel reads). */
nz_status_t nz_matrix_wrap_csr(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                               nz_index_type_t offset_type, const void *row_offsets,
                               const int32_t *col_indices, nz_value_type_t value_type,
                               const void *values) {
    const char *what = "nz_matrix_wrap_csr";
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    NZI_TRY(check_common(ctx, A, rows, cols, value_type, what));
    int64_t nnz = 0;
    NZI_TRY(check_offsets(ctx, rows, offset_type, row_offsets, what, &nnz));
    if (nnz > 0 && col_indices == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: col_indices is NULL", what);
    if (nnz > 0 && values == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT,
                         "%s: values is NULL (a wrapped matrix needs its values)", what);
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t k = offset_at(offset_type, row_offsets, i),
                     end = offset_at(offset_type, row_offsets, i + 1);
             k < end; k++) {
            if (col_indices[k] < 0 || col_indices[k] >= cols)
                return nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                                 "%s: row %lld: column index %d out of range [0, %lld)", what,
                                 (long long)i, col_indices[k], (long long)cols);
            if (k > offset_at(offset_type, row_offsets, i) && col_indices[k] <= col_indices[k - 1])
                return nzi_error(ctx, NZ_ERR_NOT_SORTED,
                                 "%s: row %lld: column %d after column %d (columns must be "
                                 "strictly increasing in a wrapped matrix; nz_matrix_create_csr "
                                 "sorts and sums duplicates)", what, (long long)i,
                                 col_indices[k], col_indices[k - 1]);
        }
    }
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_CSR, value_type, rows, cols, nnz));
    M->host_borrowed = true;
    M->host.csr.col_indices = (int32_t *)col_indices;
    M->host.csr.values = (void *)values;
    if (offset_type == NZ_I64) {
        M->host_offsets_borrowed = true;
        M->host.csr.row_offsets = (int64_t *)row_offsets;
    } else {
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&M->host.csr.row_offsets, (size_t)rows + 1,
                                  sizeof(int64_t), "CSR row offsets"));
        for (int64_t i = 0; i <= rows; i++)
            M->host.csr.row_offsets[i] = offset_at(offset_type, row_offsets, i);
    }
    *A = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

nz_status_t nz_matrix_create_coo(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                                 int64_t nnz, const int32_t *row_indices,
                                 const int32_t *col_indices, nz_value_type_t value_type,
                                 const void *values) {
    const char *what = "nz_matrix_create_coo";
    NZI_TRY(check_common(ctx, A, rows, cols, value_type, what));
    if (nnz < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: negative nnz %lld", what,
                         (long long)nnz);
    if (nnz > 0 && (row_indices == NULL || col_indices == NULL))
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: index array is NULL", what);
    for (int64_t k = 0; k < nnz; k++) {
        if (row_indices[k] < 0 || row_indices[k] >= rows)
            return nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                             "%s: entry %lld: row index %d out of range [0, %lld)", what,
                             (long long)k, row_indices[k], (long long)rows);
        if (col_indices[k] < 0 || col_indices[k] >= cols)
            return nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                             "%s: entry %lld (row %d): column index %d out of range [0, %lld)",
                             what, (long long)k, row_indices[k], col_indices[k], (long long)cols);
    }
    nz_matrix_t *M = NULL;
    NZI_TRY(nzi_csr_alloc(ctx, &M, value_type, rows, cols, nnz));
    int64_t *offsets = M->host.csr.row_offsets;
    memset(offsets, 0, ((size_t)rows + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < nnz; k++) offsets[row_indices[k] + 1]++;
    for (int64_t i = 0; i < rows; i++) offsets[i + 1] += offsets[i];
    /* counting sort by row; offsets[i] is used as the insertion cursor and restored after */
    for (int64_t k = 0; k < nnz; k++) {
        int64_t dst = offsets[row_indices[k]]++;
        M->host.csr.col_indices[dst] = col_indices[k];
        nzi_set(M->host.csr.values, value_type, dst,
                values != NULL ? nzi_get(values, value_type, k) : 1.0);
    }
    for (int64_t i = rows; i > 0; i--) offsets[i] = offsets[i - 1];
    offsets[0] = 0;
    nzi_csr_canonicalize(ctx, M);
    *A = M;
    return NZ_SUCCESS;
}

nz_status_t nz_matrix_info(nz_context_t *ctx, nz_matrix_info_t *info, const nz_matrix_t *A) {
    NZI_TRY(nzi_check_context(ctx));
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (info == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_matrix_info: info is NULL");
    memset(info, 0, sizeof *info);
    info->rows = A->rows;
    info->cols = A->cols;
    info->nnz = A->nnz;
    info->stored = A->nnz;
    info->format = A->format;
    info->value_type = A->value_type;
    info->offset_type = NZ_I64;
    info->location = A->location;
    info->transfer_seconds = A->transfer_seconds;
    size_t vs = nzi_value_size(A->value_type);
    if (A->location == NZ_DEVICE && A->format == NZ_FORMAT_CSR) {
        info->offset_type = A->device.offset_type;
        info->bytes = ((size_t)A->rows + 1) * (size_t)A->device.offset_type +
                      (size_t)A->nnz * (4 + vs);
        return NZ_SUCCESS;
    }
    switch (A->format) {
    case NZ_FORMAT_CSR:
        info->bytes = ((size_t)A->rows + 1) * 8 + (size_t)A->nnz * (4 + vs);
        break;
    case NZ_FORMAT_CSC:
        info->bytes = ((size_t)A->cols + 1) * 8 + (size_t)A->nnz * (4 + vs);
        break;
    case NZ_FORMAT_COO: info->bytes = (size_t)A->nnz * (8 + vs); break;
    case NZ_FORMAT_ELL:
        info->ell_width = A->host.ell.width;
        info->stored = A->rows * A->host.ell.width;
        info->bytes = (size_t)info->stored * (4 + vs);
        break;
    case NZ_FORMAT_SELL:
        info->sell_chunk = A->host.sell.chunk;
        info->sell_sigma = A->host.sell.sigma;
        /* other device formats keep the host layout; only this count sits in a device array */
        info->stored = A->location == NZ_DEVICE
                           ? A->device_stored
                           : A->host.sell.chunk_offsets[A->host.sell.num_chunks];
        info->bytes = (size_t)info->stored * (4 + vs) +
                      (size_t)A->host.sell.num_chunks * (8 + 4) + 8 +
                      (size_t)A->host.sell.num_chunks * (size_t)A->host.sell.chunk * 4;
        break;
    case NZ_FORMAT_HYB:
        info->ell_width = A->host.hyb.ell.width;
        info->stored = A->rows * A->host.hyb.ell.width + A->host.hyb.coo_nnz;
        info->bytes = (size_t)(A->rows * A->host.hyb.ell.width) * (4 + vs) +
                      (size_t)A->host.hyb.coo_nnz * (8 + vs);
        break;
    case NZ_FORMAT_BSR: {
        int64_t b = A->host.bsr.block;
        info->bsr_block = (int)b;
        info->stored = A->host.bsr.num_blocks * b * b;
        info->bytes = ((size_t)A->host.bsr.block_rows + 1) * 8 +
                      (size_t)A->host.bsr.num_blocks * 4 + (size_t)info->stored * vs;
        break;
    }
    case NZ_FORMAT_DIA:
        info->num_diagonals = A->host.dia.num_diagonals;
        info->stored = A->host.dia.num_diagonals * A->rows;
        info->bytes = (size_t)A->host.dia.num_diagonals * 8 + (size_t)info->stored * vs;
        break;
    default: break;
    }
    return NZ_SUCCESS;
}

nz_status_t nz_matrix_csr_arrays(nz_context_t *ctx, const int64_t **row_offsets,
                                 const int32_t **col_indices, const void **values,
                                 const nz_matrix_t *A) {
    NZI_TRY(nzi_check_context(ctx));
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION, "nz_matrix_csr_arrays: matrix is on the device");
    if (A->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "nz_matrix_csr_arrays: matrix is %s, not csr",
                         nz_format_name(A->format));
    if (row_offsets) *row_offsets = A->host.csr.row_offsets;
    if (col_indices) *col_indices = A->host.csr.col_indices;
    if (values) *values = A->host.csr.values;
    return NZ_SUCCESS;
}

nz_status_t nz_matrix_csr_device_arrays(nz_context_t *ctx, const void **row_offsets,
                                        nz_index_type_t *offset_type,
                                        const int32_t **col_indices, const void **values,
                                        const nz_matrix_t *A) {
    NZI_TRY(nzi_check_context(ctx));
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->location != NZ_DEVICE)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "nz_matrix_csr_device_arrays: matrix is on the host");
    if (A->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "nz_matrix_csr_device_arrays: matrix is %s, not csr",
                         nz_format_name(A->format));
    if (row_offsets) *row_offsets = A->device.row_offsets;
    if (offset_type) *offset_type = A->device.offset_type;
    if (col_indices) *col_indices = A->device.col_indices;
    if (values) *values = A->device.values;
    return NZ_SUCCESS;
}
