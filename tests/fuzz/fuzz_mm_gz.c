/* fuzz_mm_gz.c: libFuzzer target: the gzip layer of the Matrix Market reader (differential against the plain text, and corrupt streams). */
#include "nonzero.h"
#include "fuzz_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* Byte 0 chooses the compression level, the member split point and whether the rest is used as
 * the text to compress or as a raw (usually corrupt) gzip stream. Compressed text must read
 * exactly as the plain text does, from a buffer and from a .mtx.gz file, whatever the member
 * boundaries; a raw stream must fail cleanly or give a consistent matrix. */

static size_t gzip_member(const uint8_t *in, size_t n, int level, uint8_t *out, size_t cap) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) abort();
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) abort();
    size_t len = cap - zs.avail_out;
    deflateEnd(&zs);
    return len;
}

static int same(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B) {
    nz_matrix_info_t ia, ib;
    const int64_t *ra, *rb;
    const int32_t *ca, *cb;
    const void *va, *vb;
    nz_matrix_info(ctx, &ia, A);
    nz_matrix_info(ctx, &ib, B);
    if (ia.rows != ib.rows || ia.cols != ib.cols || ia.nnz != ib.nnz) return 0;
    nz_matrix_csr_arrays(ctx, &ra, &ca, &va, A);
    nz_matrix_csr_arrays(ctx, &rb, &cb, &vb, B);
    return memcmp(ra, rb, (size_t)(ia.rows + 1) * 8) == 0 &&
           memcmp(ca, cb, (size_t)ia.nnz * 4) == 0 && memcmp(va, vb, (size_t)ia.nnz * 8) == 0;
}

static nz_status_t read_file(nz_context_t *ctx, nz_matrix_t **A, const uint8_t *bytes, size_t n) {
    char path[] = "/tmp/nz_fuzz_gz_XXXXXX"; /* the reader sniffs gzip by its magic */
    int fd = mkstemp(path);
    if (fd < 0) return NZ_ERR_IO;
    nz_status_t s = NZ_ERR_IO;
    if (write(fd, bytes, n) == (ssize_t)n) s = nz_mm_read(ctx, A, path, NZ_F64);
    close(fd);
    unlink(path);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 65536) return 0;
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 0;
    const uint8_t *text = data + 1;
    size_t n = size - 1;
    int level = data[0] % 10;
    if (data[0] & 0x80) {
        /* raw stream behind the gzip magic */
        uint8_t *raw = malloc(n + 3);
        raw[0] = 0x1f;
        raw[1] = 0x8b;
        raw[2] = 8;
        memcpy(raw + 3, text, n);
        for (int where = 0; where < 2; where++) {
            nz_matrix_t *A = NULL;
            nz_status_t s = where ? read_file(ctx, &A, raw, n + 3)
                                  : nz_mm_read_buffer(ctx, &A, (const char *)raw, n + 3, "raw.gz", NZ_F64);
            if (s == NZ_SUCCESS) nz_matrix_destroy(&A);
            else if (A != NULL) abort();
        }
        free(raw);
    } else {
        size_t split = n == 0 ? 0 : (size_t)(data[0] >> 4) * n / 8;
        if (split > n) split = n;
        size_t cap = 2 * n + 256;
        uint8_t *gz = malloc(2 * cap);
        size_t len = gzip_member(text, split, level, gz, cap);
        len += gzip_member(text + split, n - split, level, gz + len, cap);
        nz_matrix_t *P = NULL, *G = NULL, *F = NULL;
        nz_status_t sp = nz_mm_read_buffer(ctx, &P, (const char *)text, n, "plain", NZ_F64);
        nz_status_t sg = nz_mm_read_buffer(ctx, &G, (const char *)gz, len, "member.gz", NZ_F64);
        nz_status_t sf = read_file(ctx, &F, gz, len);
        /* a text starting with the gzip magic would be sniffed as gzip itself */
        int magic = n >= 2 && text[0] == 0x1f && text[1] == 0x8b;
        if (!magic && (sp != sg || sp != sf)) abort();
        if (!magic && sp == NZ_SUCCESS && (!same(ctx, P, G) || !same(ctx, P, F))) abort();
        nz_matrix_destroy(&P);
        nz_matrix_destroy(&G);
        nz_matrix_destroy(&F);
        free(gz);
    }
    return fuzz_finish(ctx);
}
