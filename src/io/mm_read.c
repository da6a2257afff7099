/* mm_read.c: Matrix Market reader: public entry points, CSR and dense outputs (input, header, entries: mm_source.c, mm_header.c, mm_entries.c). */
#include "mm_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * How a file is read
 * ------------------
 * The input is consumed in large blocks (32 MiB of text; the whole buffer for in-memory input),
 * never token by token through stdio. The header (banner, comments, size line) is read line by
 * line. Each block of entry lines is then cut at newlines into one part per thread and parsed in
 * two parallel passes: the first counts lines and data lines of each part, so that a prefix sum
 * gives every part the index of its first entry and the line number of its first line; the
 * second parses the entries straight into their final slots. Each part keeps only its first
 * error; the error with the smallest line number is reported, so the message is the one a
 * sequential reader would give. Numbers are parsed by hand: indices as decimal integers, values
 * with Clinger's exact fast path (at most 19 significant digits, |decimal exponent| <= 22, the
 * mantissa below 2^53: one correctly rounded multiplication or division by an exact power of ten;
 * W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990), falling back to
 * strtod for everything else, so every value is correctly rounded.
 *
 * Choices the Matrix Market specification leaves open
 * ---------------------------------------------------
 * - Symmetric, skew-symmetric and hermitian (real: treated as symmetric) coordinate files may
 *   store either triangle; every off-diagonal entry is mirrored (negated for skew-symmetric), and
 *   duplicates, including an entry stored in both triangles, are summed by CSR canonicalisation.
 *   A diagonal entry in a skew-symmetric file is an error.
 * - Array files keep every stored entry, zeros included; the diagonal of a skew-symmetric array
 *   file (not stored, zero by definition) is left out.
 * - Integer values are read with the floating-point parser (so 3.0 is accepted).
 * - Comment lines (first non-blank character %) and blank lines may appear anywhere after the
 *   banner; spaces, tabs and carriage returns separate tokens; one entry per line.
 */

/* ---- building the outputs ------------------------------------------------------------------ */

/* Counting sort of the coordinate entries by row into a new CSR matrix, mirroring off-diagonal
 * entries of symmetric files (negated for skew-symmetric), then canonicalisation (sort within
 * rows, sum duplicates). Entries within a row keep their file order, so the usual row- or
 * column-sorted files need no sorting; O(entries + rows). */
static nz_status_t coordinate_to_csr(nz_context_t *ctx, nz_matrix_t **A, const mm_header_t *h,
                                     const mm_entries_t *e, nz_value_type_t vt) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    const int32_t *ri = e->row_indices, *ci = e->col_indices;
    const bool mirror = h->symmetry != MM_GENERAL;
    int64_t n = e->count, total = n;
    if (mirror)
        for (int64_t k = 0; k < n; k++) total += ri[k] != ci[k];
    NZI_CHECK(nzi_csr_alloc(ctx, &M, vt, h->rows, h->cols, total));
    int64_t *offsets = M->host.csr.row_offsets;
    memset(offsets, 0, ((size_t)h->rows + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < n; k++) {
        offsets[ri[k] + 1]++;
        if (mirror && ri[k] != ci[k]) offsets[ci[k] + 1]++;
    }
    for (int64_t i = 0; i < h->rows; i++) offsets[i + 1] += offsets[i];
    int32_t *cols = M->host.csr.col_indices;
    const double sign = h->symmetry == MM_SKEW ? -1.0 : 1.0;
#define SCATTER(T)                                                                              \
    do {                                                                                        \
        T *vals = (T *)M->host.csr.values;                                                      \
        const T *src = (const T *)e->values;                                                    \
        for (int64_t k = 0; k < n; k++) {                                                       \
            int32_t r = ri[k], c = ci[k];                                                       \
            T v = src != NULL ? src[k] : (T)1;                                                  \
            int64_t dst = offsets[r]++;                                                         \
            cols[dst] = c;                                                                      \
            vals[dst] = v;                                                                      \
            if (mirror && r != c) {                                                             \
                dst = offsets[c]++;                                                             \
                cols[dst] = r;                                                                  \
                vals[dst] = (T)(sign * v);                                                      \
            }                                                                                   \
        }                                                                                       \
    } while (0)
    if (vt == NZ_F32)
        SCATTER(float);
    else
        SCATTER(double);
#undef SCATTER
    for (int64_t i = h->rows; i > 0; i--) offsets[i] = offsets[i - 1];
    offsets[0] = 0;
    NZI_CHECK(nzi_csr_canonicalize(ctx, M));
    *A = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* rows x cols of a dense result, or an overflow error. */
static nz_status_t dense_cells(nz_context_t *ctx, const mm_header_t *h, size_t *cells) {
    if (nzi_mul_overflow_size((size_t)h->rows, (size_t)h->cols, cells))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "dense %lld x %lld array overflows",
                         (long long)h->rows, (long long)h->cols);
    return NZ_SUCCESS;
}

/* Array entries (column-major, packed lower triangle for symmetric / skew-symmetric files) to a
 * full column-major rows x cols array. */
static nz_status_t array_to_dense(nz_context_t *ctx, void **dense, const mm_header_t *h,
                                  const mm_entries_t *e, nz_value_type_t vt) {
    size_t vs = nzi_value_size(vt);
    size_t cells = 0;
    NZI_TRY(dense_cells(ctx, h, &cells));
    void *full = NULL;
    NZI_TRY(nzi_alloc_array(ctx, &full, cells, vs, "dense Matrix Market array"));
    if (h->symmetry == MM_GENERAL) {
        if (cells > 0) memcpy(full, e->values, cells * vs);
    } else {
        int64_t n = h->rows, k = 0;
        double sign = h->symmetry == MM_SKEW ? -1.0 : 1.0;
        for (int64_t j = 0; j < n; j++) {
            if (h->symmetry == MM_SKEW) nzi_set(full, vt, j * n + j, 0.0);
            for (int64_t i = h->symmetry == MM_SKEW ? j + 1 : j; i < n; i++, k++) {
                double v = nzi_get(e->values, vt, k);
                nzi_set(full, vt, j * n + i, v);
                if (i != j) nzi_set(full, vt, i * n + j, sign * v);
            }
        }
    }
    *dense = full;
    return NZ_SUCCESS;
}

/* A full column-major array to CSR with every entry stored (the diagonal of skew-symmetric files
 * left out). */
static nz_status_t dense_to_csr(nz_context_t *ctx, nz_matrix_t **A, const mm_header_t *h,
                                const void *dense, nz_value_type_t vt) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    bool skip_diagonal = h->symmetry == MM_SKEW;
    int64_t rows = h->rows, cols = h->cols;
    int64_t total = rows * cols - (skip_diagonal ? rows : 0);
    NZI_CHECK(nzi_csr_alloc(ctx, &M, vt, rows, cols, total));
    int64_t k = 0;
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++) {
            if (skip_diagonal && i == j) continue;
            M->host.csr.col_indices[k] = (int32_t)j;
            nzi_set(M->host.csr.values, vt, k, nzi_get(dense, vt, j * rows + i));
            k++;
        }
        M->host.csr.row_offsets[i + 1] = k;
    }
    *A = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* Coordinate entries summed into a zeroed full column-major array (symmetric ones mirrored). */
static nz_status_t coordinate_to_dense(nz_context_t *ctx, void **dense, const mm_header_t *h,
                                       const mm_entries_t *e, nz_value_type_t vt) {
    size_t cells = 0;
    NZI_TRY(dense_cells(ctx, h, &cells));
#ifdef NZI_IO_FUZZ_DIM_LIMIT
    if (ctx->memory_budget == 0 && cells > (size_t)NZI_IO_FUZZ_DIM_LIMIT * 16)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "dense array over the fuzzing limit");
#endif
    void *full = nzi_calloc(ctx, cells, nzi_value_size(vt));
    if (full == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate a dense %lld x %lld array",
                         (long long)h->rows, (long long)h->cols);
    int64_t rows = h->rows;
    double sign = h->symmetry == MM_SKEW ? -1.0 : 1.0;
    for (int64_t k = 0; k < e->count; k++) {
        int64_t r = e->row_indices[k], c = e->col_indices[k];
        double v = e->values != NULL ? nzi_get(e->values, vt, k) : 1.0;
        nzi_set(full, vt, c * rows + r, nzi_get(full, vt, c * rows + r) + v);
        if (h->symmetry != MM_GENERAL && r != c)
            nzi_set(full, vt, r * rows + c, nzi_get(full, vt, r * rows + c) + sign * v);
    }
    *dense = full;
    return NZ_SUCCESS;
}

/* ---- public entry points ------------------------------------------------------------------ */

static nz_status_t check_read_args(nz_context_t *ctx, const void *out, const void *input,
                                   nz_value_type_t vt, const char *what) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (out == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: output is NULL", what);
    if (input == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: input is NULL", what);
    if (!nzi_valid_value_type(vt))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: invalid value type %d", what, (int)vt);
    return NZ_SUCCESS;
}

static void source_init(mm_source_t *src, nz_context_t *ctx, const char *name) {
    memset(src, 0, sizeof *src);
    src->ctx = ctx;
    src->name = name;
    src->fd = -1;
    src->line = 1;
}

/* Parse the whole input and build a CSR matrix. */
static nz_status_t read_sparse(mm_source_t *src, nz_matrix_t **A, nz_value_type_t vt) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = src->ctx;
    mm_header_t h;
    mm_entries_t e;
    void *dense = NULL;
    memset(&h, 0, sizeof h);
    memset(&e, 0, sizeof e);
    NZI_CHECK(nzi_mm_parse(src, &h, &e, vt, false));
    nzi_mm_source_close(src);
    source_init(src, ctx, src->name);
    if (h.format == MM_COORDINATE) {
        NZI_CHECK(coordinate_to_csr(ctx, A, &h, &e, vt));
    } else {
        NZI_CHECK(array_to_dense(ctx, &dense, &h, &e, vt));
        nzi_mm_entries_free(ctx, &e);
        NZI_CHECK(dense_to_csr(ctx, A, &h, dense, vt));
    }
cleanup:
    nzi_free(ctx, dense);
    nzi_mm_entries_free(ctx, &e);
    return status;
}

nz_status_t nz_mm_read(nz_context_t *ctx, nz_matrix_t **A, const char *path,
                       nz_value_type_t value_type) {
    NZI_TRY(check_read_args(ctx, A, path, value_type, "nz_mm_read"));
    nz_status_t status = NZ_SUCCESS;
    mm_source_t src;
    source_init(&src, ctx, path);
    NZI_CHECK(nzi_mm_source_open_file(&src, path));
    NZI_CHECK(read_sparse(&src, A, value_type));
cleanup:
    nzi_mm_source_close(&src);
    return status;
}

nz_status_t nz_mm_read_buffer(nz_context_t *ctx, nz_matrix_t **A, const char *data, size_t size,
                              const char *name, nz_value_type_t value_type) {
    NZI_TRY(check_read_args(ctx, A, size > 0 ? (const void *)data : (const void *)"", value_type,
                            "nz_mm_read_buffer"));
    if (data == NULL) data = "";
    nz_status_t status = NZ_SUCCESS;
    mm_source_t src;
    source_init(&src, ctx, name != NULL ? name : "<buffer>");
    NZI_CHECK(nzi_mm_source_open_memory(&src, data, size));
    NZI_CHECK(read_sparse(&src, A, value_type));
cleanup:
    nzi_mm_source_close(&src);
    return status;
}

nz_status_t nz_mm_read_dense(nz_context_t *ctx, void **data, int64_t *rows, int64_t *cols,
                             const char *path, nz_value_type_t value_type) {
    NZI_TRY(check_read_args(ctx, data, path, value_type, "nz_mm_read_dense"));
    if (rows == NULL || cols == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_mm_read_dense: rows or cols is NULL");
    nz_status_t status = NZ_SUCCESS;
    mm_source_t src;
    mm_header_t h;
    mm_entries_t e;
    void *dense = NULL;
    memset(&h, 0, sizeof h);
    memset(&e, 0, sizeof e);
    source_init(&src, ctx, path);
    NZI_CHECK(nzi_mm_source_open_file(&src, path));
    NZI_CHECK(nzi_mm_parse(&src, &h, &e, value_type, true));
    if (h.format == MM_ARRAY)
        NZI_CHECK(array_to_dense(ctx, &dense, &h, &e, value_type));
    else
        NZI_CHECK(coordinate_to_dense(ctx, &dense, &h, &e, value_type));
    *rows = h.rows;
    *cols = h.cols;
    *data = dense;
    dense = NULL;
cleanup:
    nzi_free(ctx, dense);
    nzi_mm_entries_free(ctx, &e);
    nzi_mm_source_close(&src);
    return status;
}

bool nzi_io_has_suffix(const char *path, const char *suffix) {
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcasecmp(path + n - m, suffix) == 0;
}

nz_status_t nzi_io_check_extension(nz_context_t *ctx, const char *path, const char *what,
                                   bool binary) {
    if (!binary && nzi_io_has_suffix(path, ".nzb"))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: %s ends in .nzb, the binary format's extension, but this writes "
                         "Matrix Market text (write sparse matrices to .nzb with nz_binary_write, "
                         "or name the file .mtx / .mtx.gz)", what, path);
    if (binary && (nzi_io_has_suffix(path, ".mtx") || nzi_io_has_suffix(path, ".gz")))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: %s ends in %s, a Matrix Market extension, but this writes the "
                         "binary format (write Matrix Market with nz_mm_write, or name the file "
                         ".nzb)", what, path, nzi_io_has_suffix(path, ".mtx") ? ".mtx" :
                         nzi_io_has_suffix(path, ".mtx.gz") ? ".mtx.gz" : ".gz");
    return NZ_SUCCESS;
}
