/* binary.c: the .nzb binary CSR format (checksummed, validated on load) and nz_matrix_read. */
#include "io_internal.h"
#include "safe_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Layout (all integers in the writer's byte order, which must be little-endian-compatible with
 * the reader's: the endianness tag catches a mismatch):
 *
 *   offset  size  field
 *        0     8  magic "\x89NZB\r\n\x1a\n" (catches text-mode transfers, like PNG's)
 *        8     4  version (1)
 *       12     4  endianness tag 0x01020304
 *       16     4  value type (1 = float, 2 = double)
 *       20     4  bytes per row offset (8)
 *       24     4  bytes per column index (4)
 *       28     4  reserved (0)
 *       32     8  rows
 *       40     8  cols
 *       48     8  nnz
 *       56     8  checksum of the arrays
 *       64     8  checksum of bytes 0..63
 *       72        row offsets (rows + 1) x int64, column indices nnz x int32, values nnz x value
 *
 * The reader never trusts the header: the header checksum is verified first, then the file size
 * must equal exactly what rows and nnz imply before anything is allocated, then the array
 * checksum, then the CSR structure (offsets from 0, monotone, ending at nnz; column indices in
 * range, strictly increasing within each row).
 *
 * The checksum is a 64-bit multiply-rotate hash over four interleaved 8-byte lanes (the
 * construction of xxHash64), a few GB/s per core, so reloading stays at memory speed.
 */

#define NZB_HEADER_BYTES 72
#define NZB_VERSION 1u
#define NZB_ENDIAN_TAG 0x01020304u
static const unsigned char nzb_magic[8] = {0x89, 'N', 'Z', 'B', '\r', '\n', 0x1a, '\n'};

#define HASH_P1 0x9E3779B185EBCA87ull
#define HASH_P2 0xC2B2AE3D27D4EB4Full
#define HASH_P3 0x165667B19E3779F9ull
#define HASH_P4 0x85EBCA77C2B2AE63ull
#define HASH_P5 0x27D4EB2F165667C5ull

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline uint64_t hash_round(uint64_t acc, uint64_t word) {
    acc += word * HASH_P2;
    return rotl64(acc, 31) * HASH_P1;
}

/* Hash of `size` bytes with a seed. */
static uint64_t nzb_hash(const void *data, size_t size, uint64_t seed) {
    const unsigned char *p = (const unsigned char *)data, *end = p + size;
    uint64_t h;
    if (size >= 32) {
        uint64_t v1 = seed + HASH_P1 + HASH_P2, v2 = seed + HASH_P2, v3 = seed,
                 v4 = seed - HASH_P1;
        const unsigned char *limit = end - 32;
        do {
            v1 = hash_round(v1, load64(p));
            v2 = hash_round(v2, load64(p + 8));
            v3 = hash_round(v3, load64(p + 16));
            v4 = hash_round(v4, load64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        uint64_t lanes[4] = {v1, v2, v3, v4};
        for (int i = 0; i < 4; i++) h = (h ^ hash_round(0, lanes[i])) * HASH_P1 + HASH_P4;
    } else {
        h = seed + HASH_P5;
    }
    h += (uint64_t)size;
    for (; p + 8 <= end; p += 8) h = rotl64(h ^ hash_round(0, load64(p)), 27) * HASH_P1 + HASH_P4;
    for (; p < end; p++) h = rotl64(h ^ (*p * HASH_P5), 11) * HASH_P1;
    h ^= h >> 33;
    h *= HASH_P2;
    h ^= h >> 29;
    h *= HASH_P3;
    h ^= h >> 32;
    return h;
}

/* Checksum of the three CSR arrays, each hashed with its own seed, combined in order. */
static uint64_t nzb_arrays_hash(const nz_matrix_t *A) {
    size_t off_bytes = ((size_t)A->rows + 1) * sizeof(int64_t);
    size_t col_bytes = (size_t)A->nnz * sizeof(int32_t);
    size_t val_bytes = (size_t)A->nnz * nzi_value_size(A->value_type);
    uint64_t h1 = 0, h2 = 0, h3 = 0;
#ifdef _OPENMP
#pragma omp parallel sections num_threads(3) if (val_bytes > ((size_t)1 << 22))
#endif
    {
#ifdef _OPENMP
#pragma omp section
#endif
        h1 = nzb_hash(A->host.csr.row_offsets, off_bytes, 1);
#ifdef _OPENMP
#pragma omp section
#endif
        h2 = nzb_hash(A->host.csr.col_indices, col_bytes, 2);
#ifdef _OPENMP
#pragma omp section
#endif
        h3 = nzb_hash(A->host.csr.values, val_bytes, 3);
    }
    return (h1 * HASH_P1 + h2) * HASH_P1 + h3;
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t get64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static nz_status_t write_all(nz_context_t *ctx, int fd, const char *path, const void *data,
                             size_t size) {
    const char *p = (const char *)data;
    while (size > 0) {
        size_t n = size > ((size_t)1 << 30) ? ((size_t)1 << 30) : size;
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return nzi_error(ctx, NZ_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        }
        p += w;
        size -= (size_t)w;
    }
    return NZ_SUCCESS;
}

/* Reads exactly size bytes; a short read means the file changed under us. */
static nz_status_t read_all(nz_context_t *ctx, int fd, const char *path, void *data, size_t size) {
    char *p = (char *)data;
    while (size > 0) {
        size_t n = size > ((size_t)1 << 30) ? ((size_t)1 << 30) : size;
        ssize_t r = read(fd, p, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return nzi_error(ctx, NZ_ERR_IO, "%s: read failed: %s", path, strerror(errno));
        }
        if (r == 0) return nzi_error(ctx, NZ_ERR_PARSE, "%s: file is truncated", path);
        p += r;
        size -= (size_t)r;
    }
    return NZ_SUCCESS;
}

nz_status_t nz_binary_write(nz_context_t *ctx, const char *path, const nz_matrix_t *A) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (path == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_binary_write: path is NULL");
    NZI_TRY(nzi_io_check_extension(ctx, path, "nz_binary_write", true));
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "nz_binary_write: matrix A is on the device; copy it to the host first");
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *csr = NULL;
    nzu_output_t out;
    memset(&out, 0, sizeof out);
    out.fd = -1;
    int err = 0;
    if (A->format != NZ_FORMAT_CSR) {
        NZI_CHECK(nz_matrix_convert(ctx, &csr, A, NZ_FORMAT_CSR, NULL));
        A = csr;
    }
    unsigned char header[NZB_HEADER_BYTES];
    memset(header, 0, sizeof header);
    memcpy(header, nzb_magic, 8);
    put32(header + 8, NZB_VERSION);
    put32(header + 12, NZB_ENDIAN_TAG);
    put32(header + 16, (uint32_t)A->value_type);
    put32(header + 20, 8);
    put32(header + 24, 4);
    put64(header + 32, (uint64_t)A->rows);
    put64(header + 40, (uint64_t)A->cols);
    put64(header + 48, (uint64_t)A->nnz);
    put64(header + 56, nzb_arrays_hash(A));
    put64(header + 64, nzb_hash(header, 64, 0));
    err = nzu_output_open(&out, path);
    if (err != 0) {
        status = nzi_error(ctx, NZ_ERR_IO, "%s: cannot create: %s", path, strerror(err));
        goto cleanup;
    }
    int fd = out.fd;
    NZI_CHECK(write_all(ctx, fd, path, header, sizeof header));
    NZI_CHECK(write_all(ctx, fd, path, A->host.csr.row_offsets,
                        ((size_t)A->rows + 1) * sizeof(int64_t)));
    NZI_CHECK(write_all(ctx, fd, path, A->host.csr.col_indices, (size_t)A->nnz * sizeof(int32_t)));
    NZI_CHECK(write_all(ctx, fd, path, A->host.csr.values,
                        (size_t)A->nnz * nzi_value_size(A->value_type)));
cleanup:
    nz_matrix_destroy(&csr);
    /* the previous file at path is replaced only by a complete one (safe_output.h) */
    if (status < 0) {
        nzu_output_abort(&out);
    } else if (out.fd >= 0 && (err = nzu_output_commit(&out)) != 0) {
        status = nzi_error(ctx, NZ_ERR_IO, "%s: write failed: %s", path, strerror(err));
    }
    return status;
}

/* Structure check of a loaded CSR matrix; the first bad row is named. Rows are checked in
 * parallel; the smallest bad row is reported. */
static nz_status_t validate_csr(nz_context_t *ctx, const nz_matrix_t *M, const char *path) {
    const int64_t *off = M->host.csr.row_offsets;
    const int32_t *cols = M->host.csr.col_indices;
    if (off[0] != 0)
        return nzi_error(ctx, NZ_ERR_PARSE, "%s: row offsets start at %lld, not 0", path,
                         (long long)off[0]);
    if (off[M->rows] != M->nnz)
        return nzi_error(ctx, NZ_ERR_PARSE, "%s: row offsets end at %lld, not at nnz %lld", path,
                         (long long)off[M->rows], (long long)M->nnz);
    int64_t bad = M->rows;
    int threads = nzi_io_threads(ctx, (size_t)M->nnz * 4);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : bad) if (threads > 1)
#endif
    for (int64_t i = 0; i < M->rows; i++) {
        int64_t b = off[i], e = off[i + 1];
        if (e < b || b < 0 || e > M->nnz) {
            if (i < bad) bad = i;
            continue;
        }
        for (int64_t k = b; k < e; k++)
            if (cols[k] < 0 || cols[k] >= M->cols || (k > b && cols[k] <= cols[k - 1])) {
                if (i < bad) bad = i;
                break;
            }
    }
    (void)threads;
    if (bad < M->rows)
        return nzi_error(ctx, NZ_ERR_PARSE,
                         "%s: row %lld: offsets decrease or column indices are out of range or "
                         "not strictly increasing", path, (long long)bad);
    return NZ_SUCCESS;
}

nz_status_t nz_binary_read(nz_context_t *ctx, nz_matrix_t **A, const char *path) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (A == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_binary_read: A is NULL");
    if (path == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_binary_read: path is NULL");
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return nzi_error(ctx, NZ_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        status = nzi_error(ctx, NZ_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
        goto cleanup;
    }
    uint64_t file_size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    unsigned char header[NZB_HEADER_BYTES];
    if (file_size < NZB_HEADER_BYTES) {
        status = nzi_error(ctx, NZ_ERR_PARSE, "%s: %llu bytes is too short for a .nzb header",
                           path, (unsigned long long)file_size);
        goto cleanup;
    }
    NZI_CHECK(read_all(ctx, fd, path, header, sizeof header));
    if (memcmp(header, nzb_magic, 8) != 0) {
        status = nzi_error(ctx, NZ_ERR_PARSE, "%s: not a .nzb file (bad magic)", path);
        goto cleanup;
    }
    if (get32(header + 12) != NZB_ENDIAN_TAG) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                           "%s: written on a machine of the other byte order", path);
        goto cleanup;
    }
    if (get32(header + 8) != NZB_VERSION) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: .nzb version %u (this library reads %u)",
                           path, get32(header + 8), NZB_VERSION);
        goto cleanup;
    }
    if (get64(header + 64) != nzb_hash(header, 64, 0)) {
        status = nzi_error(ctx, NZ_ERR_PARSE, "%s: header checksum mismatch (corrupt file)", path);
        goto cleanup;
    }
    uint32_t vt = get32(header + 16);
    int64_t rows = (int64_t)get64(header + 32), cols = (int64_t)get64(header + 40),
            nnz = (int64_t)get64(header + 48);
    if (!nzi_valid_value_type((int)vt) || get32(header + 20) != 8 || get32(header + 24) != 4 ||
        rows < 0 || cols < 0 || nnz < 0 || rows > INT32_MAX || cols > INT32_MAX) {
        status = nzi_error(ctx, NZ_ERR_PARSE,
                           "%s: invalid header (value type %u, %lld x %lld, nnz %lld)", path, vt,
                           (long long)rows, (long long)cols, (long long)nnz);
        goto cleanup;
    }
    /* the size must match before anything is allocated */
    uint64_t expected = NZB_HEADER_BYTES + ((uint64_t)rows + 1) * 8;
    uint64_t per_entry = 4 + nzi_value_size((nz_value_type_t)vt);
    if ((uint64_t)nnz > (UINT64_MAX - expected) / per_entry) {
        status = nzi_error(ctx, NZ_ERR_PARSE, "%s: nnz %lld is impossible", path, (long long)nnz);
        goto cleanup;
    }
    expected += (uint64_t)nnz * per_entry;
    if (expected != file_size) {
        status = nzi_error(ctx, NZ_ERR_PARSE,
                           "%s: file is %llu bytes but its header implies %llu (%s)", path,
                           (unsigned long long)file_size, (unsigned long long)expected,
                           file_size < expected ? "truncated" : "trailing bytes");
        goto cleanup;
    }
    {
        char what[NZI_MESSAGE_SIZE / 2];
        snprintf(what, sizeof what, "%.200s: a %lld x %lld matrix with %lld nonzeros", path,
                 (long long)rows, (long long)cols, (long long)nnz);
        NZI_CHECK(nzi_check_budget(ctx, (double)(expected - NZB_HEADER_BYTES), what));
    }
    NZI_CHECK(nzi_csr_alloc(ctx, &M, (nz_value_type_t)vt, rows, cols, nnz));
    NZI_CHECK(read_all(ctx, fd, path, M->host.csr.row_offsets, ((size_t)rows + 1) * 8));
    NZI_CHECK(read_all(ctx, fd, path, M->host.csr.col_indices, (size_t)nnz * 4));
    NZI_CHECK(read_all(ctx, fd, path, M->host.csr.values,
                       (size_t)nnz * nzi_value_size((nz_value_type_t)vt)));
    if (nzb_arrays_hash(M) != get64(header + 56)) {
        status = nzi_error(ctx, NZ_ERR_PARSE, "%s: data checksum mismatch (corrupt file)", path);
        goto cleanup;
    }
    NZI_CHECK(validate_csr(ctx, M, path));
    *A = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    close(fd);
    return status;
}

/* Is the file a .nzb by its first bytes? */
static bool sniff_nzb(const char *path) {
    unsigned char head[8];
    FILE *f = fopen(path, "rb");
    if (f == NULL) return false;
    bool yes = fread(head, 1, 8, f) == 8 && memcmp(head, nzb_magic, 8) == 0;
    fclose(f);
    return yes;
}

nz_status_t nz_matrix_read(nz_context_t *ctx, nz_matrix_t **A, const char *path,
                           nz_value_type_t value_type) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (A == NULL || path == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_matrix_read: A or path is NULL");
    if (!nzi_valid_value_type(value_type))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_matrix_read: invalid value type %d",
                         (int)value_type);
    bool mm = nzi_io_has_suffix(path, ".mtx") || nzi_io_has_suffix(path, ".mtx.gz");
    bool binary = nzi_io_has_suffix(path, ".nzb") || (!mm && sniff_nzb(path));
    if (!binary) return nz_mm_read(ctx, A, path, value_type);
    nz_matrix_t *M = NULL;
    NZI_TRY(nz_binary_read(ctx, &M, path));
    if (M->value_type != value_type) {
        nz_matrix_t *converted = NULL;
        nz_status_t status = nz_matrix_convert_values(ctx, &converted, M, value_type);
        nzi_matrix_free(M);
        if (status < 0) return status;
        M = converted;
    }
    *A = M;
    return NZ_SUCCESS;
}
