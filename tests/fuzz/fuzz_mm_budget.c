/* fuzz_mm_budget.c: libFuzzer target: the Matrix Market reader at realistic dimensions (no 2^20
 * cap), bounded by a context memory budget instead; run with -rss_limit_mb / -malloc_limit_mb. */
#include "nonzero.h"
#include "fuzz_common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 256 MiB: under libFuzzer's -malloc_limit_mb=2048 with room for the reader's buffers, so a
 * header that slips past the budget check shows up as a malloc-limit crash. */
#define FUZZ_BUDGET ((size_t)256 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 0;
    if (nz_context_set_memory_budget(ctx, FUZZ_BUDGET) != NZ_SUCCESS) abort();
    /* byte 0 picks the value type; the rest is the file */
    nz_value_type_t vt = size > 0 && (data[0] & 1) ? NZ_F32 : NZ_F64;
    nz_matrix_t *A = NULL;
    nz_status_t s = nz_mm_read_buffer(ctx, &A, (const char *)data + (size > 0),
                                      size > 0 ? size - 1 : 0, "fuzz", vt);
    if (s == NZ_SUCCESS) {
        nz_matrix_info_t info;
        const int64_t *ro;
        const int32_t *ci;
        const void *v;
        if (nz_matrix_info(ctx, &info, A) != NZ_SUCCESS ||
            nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A) != NZ_SUCCESS || ro[0] != 0 ||
            ro[info.rows] != info.nnz)
            abort();
        nz_matrix_destroy(&A);
    } else if (A != NULL || nz_context_last_error(ctx)[0] == '\0') {
        abort();
    }
    return fuzz_finish(ctx);
}
