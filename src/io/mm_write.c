/* mm_write.c: Matrix Market writer (coordinate real general and dense array), plain or gzip. */
#include "io_internal.h"
#include "safe_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef NZ_HAVE_ZLIB
#include <zlib.h>
#endif

/*
 * Entries are formatted in blocks of MM_WRITE_BLOCK entries: the block is cut into one slice per
 * thread, each thread formats its slice into its own region of one buffer (at most
 * MM_MAX_ENTRY_CHARS per entry), and the regions are written in order, so the output is the same
 * for any thread count. Indices are formatted by hand; values with %.17g (double) or %.9g
 * (float), the shortest printf precisions that always read back to the same bits.
 * Compressed output uses zlib level 1: numeric text compresses only a little better at higher
 * levels, several times more slowly.
 */

#define MM_WRITE_BLOCK ((int64_t)1 << 20)
#define MM_MAX_ENTRY_CHARS 64 /* "2147483647 2147483647 -1.2345678901234567e-308\n" is 47 */

typedef struct mm_out {
    nz_context_t *ctx;
    const char *path;
    nzu_output_t target; /* temporary file renamed over path on success (safe_output.h) */
    bool opened;
    FILE *file;
#ifdef NZ_HAVE_ZLIB
    gzFile gz;
#endif
} mm_out_t;

static nz_status_t out_open(mm_out_t *out, nz_context_t *ctx, const char *path) {
    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    out->path = path;
    out->target.fd = -1;
    bool gzip = nzi_io_has_suffix(path, ".gz");
#ifndef NZ_HAVE_ZLIB
    if (gzip)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: gzip output requested, but Nonzero was built without zlib", path);
#endif
    int err = nzu_output_open(&out->target, path);
    if (err != 0)
        return nzi_error(ctx, NZ_ERR_IO, "%s: cannot create: %s", path, strerror(err));
    out->opened = true;
    int fd = dup(out->target.fd);
    if (fd >= 0) {
#ifdef NZ_HAVE_ZLIB
        if (gzip) {
            out->gz = gzdopen(fd, "wb1");
            if (out->gz == NULL) close(fd);
        } else
#endif
        {
            out->file = fdopen(fd, "wb");
            if (out->file == NULL) close(fd);
        }
    }
    if (out->file == NULL
#ifdef NZ_HAVE_ZLIB
        && out->gz == NULL
#endif
    )
        return nzi_error(ctx, NZ_ERR_IO, "%s: cannot create: %s", path,
                         errno != 0 ? strerror(errno) : "out of memory");
#ifdef NZ_HAVE_ZLIB
    if (out->gz != NULL) gzbuffer(out->gz, 1u << 20);
#endif
    return NZ_SUCCESS;
}

static nz_status_t out_write(mm_out_t *out, const char *data, size_t size) {
#ifdef NZ_HAVE_ZLIB
    if (out->gz != NULL) {
        while (size > 0) {
            unsigned n = size > (1u << 30) ? (1u << 30) : (unsigned)size;
            if (gzwrite(out->gz, data, n) != (int)n) {
                int zerr = 0;
                const char *msg = gzerror(out->gz, &zerr);
                return nzi_error(out->ctx, NZ_ERR_IO, "%s: write failed: %s", out->path,
                                 zerr == Z_ERRNO ? strerror(errno) : msg);
            }
            data += n;
            size -= n;
        }
        return NZ_SUCCESS;
    }
#endif
    if (size > 0 && fwrite(data, 1, size, out->file) != size)
        return nzi_error(out->ctx, NZ_ERR_IO, "%s: write failed: %s", out->path, strerror(errno));
    return NZ_SUCCESS;
}

/* Close the stream; on success rename the temporary file over the target, on failure (or when
 * `failed`) remove only the temporary file: the target is never removed or truncated. */
static nz_status_t out_close(mm_out_t *out, bool failed) {
    nz_status_t status = NZ_SUCCESS;
#ifdef NZ_HAVE_ZLIB
    if (out->gz != NULL) {
        int zerr = gzclose(out->gz);
        if (zerr != Z_OK && !failed)
            status = nzi_error(out->ctx, NZ_ERR_IO, "%s: write failed: %s", out->path,
                               zerr == Z_ERRNO ? strerror(errno) : "zlib error");
        out->gz = NULL;
    }
#endif
    if (out->file != NULL) {
        if (fclose(out->file) != 0 && !failed)
            status = nzi_error(out->ctx, NZ_ERR_IO, "%s: write failed: %s", out->path,
                               strerror(errno));
        out->file = NULL;
    }
    if (!out->opened) return status;
    out->opened = false;
    if (failed || status < 0) {
        nzu_output_abort(&out->target);
        return status;
    }
    int err = nzu_output_commit(&out->target);
    if (err != 0)
        status = nzi_error(out->ctx, NZ_ERR_IO, "%s: write failed: %s", out->path, strerror(err));
    return status;
}

/* Append one value with round-trip precision. */
static inline size_t format_value(char *dst, const void *values, nz_value_type_t vt, int64_t k) {
    int n = vt == NZ_F32 ? snprintf(dst, 32, "%.9g", (double)((const float *)values)[k])
                         : snprintf(dst, 32, "%.17g", ((const double *)values)[k]);
    return n > 0 ? (size_t)n : 0;
}

/* Format entries [begin, end) of a CSR matrix as "row col value\n" lines (1-based). */
static size_t format_csr_slice(char *dst, const nz_matrix_t *A, int64_t begin, int64_t end) {
    const int64_t *offsets = A->host.csr.row_offsets;
    const int32_t *cols = A->host.csr.col_indices;
    /* the row holding entry `begin`: last row whose offset is <= begin with a non-empty span */
    int64_t lo = 0, hi = A->rows;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (offsets[mid + 1] <= begin)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t row = lo;
    size_t n = 0;
    for (int64_t k = begin; k < end; k++) {
        while (offsets[row + 1] <= k) row++;
        n += nzi_io_format_u64(dst + n, (uint64_t)row + 1);
        dst[n++] = ' ';
        n += nzi_io_format_u64(dst + n, (uint64_t)cols[k] + 1);
        dst[n++] = ' ';
        n += format_value(dst + n, A->host.csr.values, A->value_type, k);
        dst[n++] = '\n';
    }
    return n;
}

/* Format values [begin, end) one per line. */
static size_t format_dense_slice(char *dst, const void *values, nz_value_type_t vt, int64_t begin,
                                 int64_t end) {
    size_t n = 0;
    for (int64_t k = begin; k < end; k++) {
        n += format_value(dst + n, values, vt, k);
        dst[n++] = '\n';
    }
    return n;
}

/* Write `count` entries formatted by the CSR (A != NULL) or dense formatter, block by block. */
static nz_status_t write_entries(mm_out_t *out, const nz_matrix_t *A, const void *dense,
                                 nz_value_type_t vt, int64_t count) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = out->ctx;
    char *buffer = NULL;
    int64_t block = count < MM_WRITE_BLOCK ? count : MM_WRITE_BLOCK;
    if (block == 0) return NZ_SUCCESS;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&buffer, (size_t)block, MM_MAX_ENTRY_CHARS,
                              "Matrix Market output buffer"));
    int threads = nzi_io_threads(ctx, (size_t)block * 16);
    for (int64_t first = 0; first < count; first += block) {
        int64_t last = first + block < count ? first + block : count;
        int64_t span = last - first;
        size_t lengths[NZI_IO_MAX_THREADS];
        int parts = threads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
#endif
        for (int t = 0; t < parts; t++) {
            int64_t b = first + span * t / parts, e = first + span * (t + 1) / parts;
            char *dst = buffer + (size_t)(b - first) * MM_MAX_ENTRY_CHARS;
            lengths[t] = A != NULL ? format_csr_slice(dst, A, b, e)
                                   : format_dense_slice(dst, dense, vt, b, e);
        }
        for (int t = 0; t < parts; t++) {
            int64_t b = first + span * t / parts;
            NZI_CHECK(out_write(out, buffer + (size_t)(b - first) * MM_MAX_ENTRY_CHARS,
                                lengths[t]));
        }
    }
cleanup:
    nzi_free(ctx, buffer);
    return status;
}

nz_status_t nz_mm_write(nz_context_t *ctx, const char *path, const nz_matrix_t *A) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (path == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_mm_write: path is NULL");
    NZI_TRY(nzi_io_check_extension(ctx, path, "nz_mm_write", false));
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "nz_mm_write: matrix A is on the device; copy it to the host first");
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *csr = NULL;
    mm_out_t out;
    memset(&out, 0, sizeof out);
    if (A->format != NZ_FORMAT_CSR) {
        NZI_CHECK(nz_matrix_convert(ctx, &csr, A, NZ_FORMAT_CSR, NULL));
        A = csr;
    }
    NZI_CHECK(out_open(&out, ctx, path));
    char header[160];
    int n = snprintf(header, sizeof header,
                     "%%%%MatrixMarket matrix coordinate real general\n"
                     "%% written by Nonzero\n%lld %lld %lld\n",
                     (long long)A->rows, (long long)A->cols, (long long)A->nnz);
    NZI_CHECK(out_write(&out, header, (size_t)n));
    NZI_CHECK(write_entries(&out, A, NULL, A->value_type, A->nnz));
cleanup:
    nz_matrix_destroy(&csr);
    if (status < 0) {
        out_close(&out, true);
        return status;
    }
    return out_close(&out, false);
}

nz_status_t nz_mm_write_dense(nz_context_t *ctx, const char *path, nz_value_type_t value_type,
                              int64_t rows, int64_t cols, const void *data) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (path == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_mm_write_dense: path is NULL");
    NZI_TRY(nzi_io_check_extension(ctx, path, "nz_mm_write_dense", false));
    if (!nzi_valid_value_type(value_type))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_mm_write_dense: invalid value type %d",
                         (int)value_type);
    if (rows < 0 || cols < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_mm_write_dense: negative dimensions %lld x %lld", (long long)rows,
                         (long long)cols);
    int64_t count;
    if (nzi_mul_overflow_i64(rows, cols, &count))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "nz_mm_write_dense: %lld x %lld overflows",
                         (long long)rows, (long long)cols);
    if (count > 0 && data == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_mm_write_dense: data is NULL");
    nz_status_t status = NZ_SUCCESS;
    mm_out_t out;
    memset(&out, 0, sizeof out);
    NZI_CHECK(out_open(&out, ctx, path));
    char header[160];
    int n = snprintf(header, sizeof header,
                     "%%%%MatrixMarket matrix array real general\n"
                     "%% written by Nonzero\n%lld %lld\n",
                     (long long)rows, (long long)cols);
    NZI_CHECK(out_write(&out, header, (size_t)n));
    NZI_CHECK(write_entries(&out, NULL, data, value_type, count));
cleanup:
    if (status < 0) {
        out_close(&out, true);
        return status;
    }
    return out_close(&out, false);
}
