/* fuzz_mm.c: libFuzzer target: the Matrix Market reader on arbitrary bytes (sparse and dense, both value types, gzip by magic). */
#include "nonzero.h"
#include "fuzz_common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Checks that must hold for any input: a successful read gives a consistent CSR matrix, a failed
 * one sets no output and leaks nothing. */
static void check_matrix(nz_context_t *ctx, nz_matrix_t *A) {
    nz_matrix_info_t info;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    if (nz_matrix_info(ctx, &info, A) != NZ_SUCCESS || nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A) != NZ_SUCCESS)
        abort();
    if (ro[0] != 0 || ro[info.rows] != info.nnz) abort();
    for (int64_t i = 0; i < info.rows; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            if (ci[k] < 0 || ci[k] >= info.cols || (k > ro[i] && ci[k] <= ci[k - 1])) abort();
    (void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 0;
    for (int t = 0; t < 2; t++) {
        nz_matrix_t *A = NULL;
        nz_status_t s = nz_mm_read_buffer(ctx, &A, (const char *)data, size, "fuzz",
                                          t ? NZ_F32 : NZ_F64);
        if (s == NZ_SUCCESS) {
            check_matrix(ctx, A);
            nz_matrix_destroy(&A);
        } else if (A != NULL || nz_context_last_error(ctx)[0] == '\0') {
            abort(); /* failures must leave the output alone and explain themselves */
        }
    }
    /* the dense reader and the file path, through a temporary file (small inputs only) */
    if (size < 4096) {
        char path[] = "/tmp/nz_fuzz_mm_XXXXXX";
        int fd = mkstemp(path);
        if (fd >= 0) {
            if (write(fd, data, size) == (ssize_t)size) {
                int64_t rows = 0, cols = 0;
                void *dense = NULL;
                if (nz_mm_read_dense(ctx, &dense, &rows, &cols, path, NZ_F64) == NZ_SUCCESS)
                    nz_free(ctx, dense);
            }
            close(fd);
            unlink(path);
        }
    }
    return fuzz_finish(ctx);
}
