/* spgemm_chunks.c: panel results of C collected on the host and assembled into C (ESC, hySpMM). */
#include "spgemm_common.h"

#include <string.h>

nz_status_t nzi_spgemm_chunks_init(nz_context_t *ctx, nzi_spgemm_chunks_t *chunks,
                                   nz_value_type_t vt, int64_t rows, int64_t cols,
                                   int64_t capacity) {
    nz_status_t status = NZ_SUCCESS;
    memset(chunks, 0, sizeof *chunks);
    chunks->value_type = vt;
    chunks->rows = rows;
    chunks->cols = cols;
    chunks->capacity = capacity;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&chunks->row_nnz, (size_t)rows, sizeof(int64_t),
                              "nz_spgemm: C row counts"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&chunks->col_indices, (size_t)capacity,
                              sizeof(int32_t *), "nz_spgemm: panel list"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&chunks->values, (size_t)capacity, sizeof(void *),
                              "nz_spgemm: panel list"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&chunks->nnz, (size_t)capacity, sizeof(int64_t),
                              "nz_spgemm: panel list"));
    return NZ_SUCCESS;
cleanup:
    nzi_spgemm_chunks_free(ctx, chunks);
    return status;
}

nz_status_t nzi_spgemm_chunks_add(nz_context_t *ctx, nzi_spgemm_chunks_t *chunks,
                                  int64_t row_begin, int64_t row_end,
                                  const int32_t *local_offsets, const int32_t *col_indices,
                                  const void *values) {
    nz_status_t status = NZ_SUCCESS;
    const int64_t rows = row_end - row_begin, nnz = local_offsets[rows];
    const size_t vs = nzi_value_size(chunks->value_type);
    int32_t *cols = NULL;
    void *vals = NULL;
    if (chunks->count >= chunks->capacity)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_spgemm: more panels than planned (%lld)",
                         (long long)chunks->capacity);
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&cols, (size_t)nnz, sizeof(int32_t),
                              "nz_spgemm: C panel column indices"));
    NZI_CHECK(nzi_alloc_array(ctx, &vals, (size_t)nnz, vs, "nz_spgemm: C panel values"));
    if (nnz > 0) { /* fresh pages: the first touch dominates, so copy with several threads */
        nzi_parallel_memcpy(ctx, cols, col_indices, (size_t)nnz * sizeof(int32_t));
        nzi_parallel_memcpy(ctx, vals, values, (size_t)nnz * vs);
    }
    for (int64_t i = 0; i < rows; i++)
        chunks->row_nnz[row_begin + i] = (int64_t)local_offsets[i + 1] - local_offsets[i];
    chunks->col_indices[chunks->count] = cols;
    chunks->values[chunks->count] = vals;
    chunks->nnz[chunks->count] = nnz;
    chunks->count++;
    return NZ_SUCCESS;
cleanup:
    nzi_free(ctx, cols);
    nzi_free(ctx, vals);
    return status;
}

nz_status_t nzi_spgemm_chunks_finish(nz_context_t *ctx, nzi_spgemm_chunks_t *chunks,
                                     nz_matrix_t **C) {
    nz_matrix_t *M = NULL;
    const size_t vs = nzi_value_size(chunks->value_type);
    int64_t place = 0;
    NZI_TRY(nzi_spgemm_alloc_output(ctx, &M, chunks->value_type, chunks->rows, chunks->cols,
                                    chunks->row_nnz));
    for (int64_t c = 0; c < chunks->count; c++) {
        const int64_t nnz = chunks->nnz[c];
        if (nnz > 0) {
            nzi_parallel_memcpy(ctx, M->host.csr.col_indices + place, chunks->col_indices[c],
                                (size_t)nnz * sizeof(int32_t));
            nzi_parallel_memcpy(ctx, (char *)M->host.csr.values + (size_t)place * vs,
                                chunks->values[c], (size_t)nnz * vs);
        }
        place += nnz;
    }
    *C = M;
    return NZ_SUCCESS;
}

void nzi_spgemm_chunks_free(nz_context_t *ctx, nzi_spgemm_chunks_t *chunks) {
    for (int64_t c = 0; c < chunks->count; c++) {
        nzi_free(ctx, chunks->col_indices[c]);
        nzi_free(ctx, chunks->values[c]);
    }
    nzi_free(ctx, chunks->row_nnz);
    nzi_free(ctx, chunks->col_indices);
    nzi_free(ctx, chunks->values);
    nzi_free(ctx, chunks->nnz);
    memset(chunks, 0, sizeof *chunks);
}
