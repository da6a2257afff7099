/* transpose.c: re-compressing CSR along columns (CSR <-> CSC, A^T) and the host side of
 * nz_matrix_transpose (the public entry is in src/ops/spgemm_plan.c: it also reaches the device
 * transpose through the backend table). */
#include "nzi.h"
#include "convert_internal.h"

#include <string.h>

/* Counting sort of the entries by their minor index (Gustavson, ACM TOMS 4(3), 1978): count
 * per minor index, prefix-sum into offsets, then scatter the entries in major order, so the
 * indices of each output line come out sorted. O(nnz + rows + cols), serial and deterministic.
 * CSR A -> CSR of A^T (format CSR) or CSC of A (format CSC); CSC A -> CSR of A. */
nz_status_t nzi_compressed_transpose(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                                     nz_format_t format) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    bool from_csr = A->format == NZ_FORMAT_CSR;
    if (A->location != NZ_HOST || (A->format != NZ_FORMAT_CSR && A->format != NZ_FORMAT_CSC) ||
        (format != NZ_FORMAT_CSR && format != NZ_FORMAT_CSC) || (!from_csr && format != NZ_FORMAT_CSR))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "cannot re-compress a %s matrix as %s", nz_format_name(A->format),
                         nz_format_name(format));
    int64_t in_major = from_csr ? A->rows : A->cols, out_major = from_csr ? A->cols : A->rows;
    const int64_t *in_offsets = A->host.csr.row_offsets;
    const int32_t *in_indices = A->host.csr.col_indices;
    int64_t nnz = in_offsets[in_major];
    size_t vs = nzi_value_size(A->value_type);
    NZI_CHECK(nzi_csr_alloc(ctx, &M, A->value_type, out_major, in_major, nnz));
    bool transposed = A->format == format; /* CSR -> CSR of A^T */
    M->format = format;
    M->rows = transposed ? A->cols : A->rows;
    M->cols = transposed ? A->rows : A->cols;
    int64_t *offsets = M->host.csr.row_offsets;
    memset(offsets, 0, ((size_t)out_major + 1) * sizeof *offsets);
    for (int64_t k = 0; k < nnz; k++) offsets[in_indices[k] + 1]++;
    for (int64_t j = 0; j < out_major; j++) offsets[j + 1] += offsets[j];
    /* offsets[j] serves as the insertion cursor of line j and is shifted back afterwards */
    for (int64_t i = 0; i < in_major; i++)
        for (int64_t k = in_offsets[i]; k < in_offsets[i + 1]; k++) {
            int64_t dst = offsets[in_indices[k]]++;
            M->host.csr.col_indices[dst] = (int32_t)i;
            memcpy((char *)M->host.csr.values + (size_t)dst * vs,
                   (const char *)A->host.csr.values + (size_t)k * vs, vs);
        }
    for (int64_t j = out_major; j > 0; j--) offsets[j] = offsets[j - 1];
    offsets[0] = 0;
    *B = M;
    return NZ_SUCCESS;
cleanup:
    return status;
}

nz_status_t nzi_host_transpose(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A) {
    nz_status_t status;
    nz_matrix_t *owned = NULL, *M = NULL;
    const nz_matrix_t *csr = NULL;
    if (A->format == NZ_FORMAT_CSC) {
        /* CSC arrays of A are exactly the CSR arrays of A^T */
        NZI_CHECK(nzi_matrix_clone(ctx, &M, A, A->value_type));
        M->format = NZ_FORMAT_CSR;
        M->rows = A->cols;
        M->cols = A->rows;
    } else {
        NZI_CHECK(nzi_as_csr(ctx, A, &csr, &owned));
        NZI_CHECK(nzi_compressed_transpose(ctx, &M, csr, NZ_FORMAT_CSR));
    }
    *B = M;
    status = NZ_SUCCESS;
cleanup:
    nzi_matrix_free(owned);
    return status;
}
