/* fuzz_csr.c: libFuzzer target: nz_matrix_create_csr / nz_matrix_create_coo on arbitrary arrays. */
#include "nonzero.h"
#include "fuzz_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Layout of an input: byte 0 selects CSR/COO, offset width and value type; then rows and cols
 * (uint16 each, small so arrays stay small), then int32 / int64 offsets or COO rows, int32
 * column indices and values, taken from the remaining bytes (missing bytes read as zero). */
static size_t take(const uint8_t *data, size_t size, size_t *pos, void *dst, size_t n) {
    memset(dst, 0, n);
    size_t avail = *pos < size ? size - *pos : 0;
    size_t m = avail < n ? avail : n;
    if (m > 0) memcpy(dst, data + *pos, m);
    *pos += n;
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 5) return 0;
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 0;
    size_t pos = 0;
    uint8_t mode = 0;
    uint16_t r16 = 0, c16 = 0;
    take(data, size, &pos, &mode, 1);
    take(data, size, &pos, &r16, 2);
    take(data, size, &pos, &c16, 2);
    int64_t rows = (mode & 0x10) ? -(int64_t)r16 : (int64_t)(r16 % 4096);
    int64_t cols = (mode & 0x20) ? (int64_t)INT32_MAX + c16 : (int64_t)(c16 % 4096);
    nz_value_type_t vt = (mode & 2) ? NZ_F32 : NZ_F64;
    size_t vs = vt == NZ_F32 ? 4 : 8;
    nz_matrix_t *A = NULL;
    nz_status_t s;
    if (mode & 1) {
        /* COO: nnz from the remaining size */
        int64_t nnz = (int64_t)((size - pos) / (8 + vs));
        if (mode & 0x40) nnz = -nnz - 1;
        int64_t n = nnz > 0 ? nnz : 0;
        int32_t *ri = malloc((size_t)n * 4 + 4), *ci = malloc((size_t)n * 4 + 4);
        void *v = malloc((size_t)n * vs + 8);
        take(data, size, &pos, ri, (size_t)n * 4);
        take(data, size, &pos, ci, (size_t)n * 4);
        take(data, size, &pos, v, (size_t)n * vs);
        s = nz_matrix_create_coo(ctx, &A, rows, cols, nnz, ri, ci, vt, (mode & 4) ? NULL : v);
        free(ri);
        free(ci);
        free(v);
    } else {
        nz_index_type_t ot = (mode & 8) ? NZ_I64 : NZ_I32;
        size_t os = ot == NZ_I64 ? 8 : 4;
        int64_t n = rows > 0 ? rows : 0;
        void *ro = malloc((size_t)(n + 1) * os);
        take(data, size, &pos, ro, (size_t)(n + 1) * os);
        /* entries available after the offsets; the offsets themselves may claim more */
        size_t rest = pos < size ? (size - pos) / (4 + vs) : 0;
        int64_t last = ot == NZ_I64 ? ((int64_t *)ro)[n] : ((int32_t *)ro)[n];
        if (last < 0 || (uint64_t)last > rest) {
            /* keep the arrays as long as the offsets say, so a valid structure can be read */
            if (last > 0 && last < 65536) rest = (size_t)last;
        }
        int32_t *ci = malloc(rest * 4 + 4);
        void *v = malloc(rest * vs + 8);
        take(data, size, &pos, ci, rest * 4);
        take(data, size, &pos, v, rest * vs);
        if (last >= 0 && (uint64_t)last <= rest)
            s = nz_matrix_create_csr(ctx, &A, rows, cols, ot, ro, ci, vt, (mode & 4) ? NULL : v);
        else
            s = NZ_ERR_INVALID_ARGUMENT; /* would read past the caller's arrays: not a library bug */
        free(ro);
        free(ci);
        free(v);
    }
    if (s == NZ_SUCCESS) {
        nz_matrix_info_t info;
        const int64_t *ro;
        const int32_t *ci;
        if (nz_matrix_info(ctx, &info, A) != NZ_SUCCESS ||
            nz_matrix_csr_arrays(ctx, &ro, &ci, NULL, A) != NZ_SUCCESS || ro[0] != 0 ||
            ro[info.rows] != info.nnz)
            abort();
        for (int64_t i = 0; i < info.rows; i++)
            for (int64_t k = ro[i]; k < ro[i + 1]; k++)
                if (ci[k] < 0 || ci[k] >= info.cols || (k > ro[i] && ci[k] <= ci[k - 1])) abort();
        nz_matrix_destroy(&A);
    } else if (A != NULL) {
        abort();
    }
    return fuzz_finish(ctx);
}
