/* hash_device_c.cu: the hash SpGEMM with device A and B in and a device C out (in core, no transfers). */
#include "hash.cuh"

__global__ void __launch_bounds__(BIN_BLOCK)
    widen_kernel(int64_t count, const int32_t *__restrict__ in, int64_t *__restrict__ out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

/* The row offsets of device matrix M as int64 (the kernels index with int64): M's own, or a
 * widened copy of its int32 ones in *wide (temporary, the caller frees it). */
nz_status_t hash_device_offsets(nz_context_t *ctx, const nz_matrix_t *M, const int64_t **off,
                                  int64_t **wide) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    if (M->device.offset_type == NZ_I64) {
        *off = (const int64_t *)M->device.row_offsets;
        return NZ_SUCCESS;
    }
    const int64_t count = M->rows + 1;
    NZI_TRY(nzi_cuda_malloc_async(ctx, (void **)wide, (size_t)count * NZI_OFFSET_BYTES,
                                  "nz_spgemm (hash): widened row offsets"));
    const int64_t blocks = nzi_cuda_grid_blocks(cs, BIN_BLOCK, 4, (count + BIN_BLOCK - 1) / BIN_BLOCK);
    widen_kernel<<<(unsigned)blocks, BIN_BLOCK, 0, cs->stream>>>(
        count, (const int32_t *)M->device.row_offsets, *wide);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    *off = *wide;
    return NZ_SUCCESS;
}

/* A new device CSR matrix for C (int64 row offsets): c_off, when given, becomes its row offsets
 * (on success only: on failure the caller still owns it), else they are allocated; columns and
 * values for nnz entries. Its arrays come from the context's pool (repeated products reuse the
 * memory; nz_matrix_destroy returns them in order on the context's stream). */
nz_status_t hash_device_result(nz_context_t *ctx, nz_matrix_t **C, nz_value_type_t vt,
                                 int64_t m, int64_t n, int64_t nnz, int64_t *c_off) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_CSR, vt, m, n, nnz));
    M->location = NZ_DEVICE;
    M->device.offset_type = NZ_I64;
    M->device.borrowed = false;
    if (c_off == NULL)
        NZI_CHECK(nzi_cuda_malloc_async(ctx, &M->device.row_offsets, (size_t)(m + 1) * NZI_OFFSET_BYTES,
                                        "nz_spgemm (hash): C row offsets"));
    if (nnz > 0) {
        NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&M->device.col_indices, (size_t)nnz * NZI_INDEX_BYTES,
                                        "nz_spgemm (hash): C column indices"));
        NZI_CHECK(nzi_cuda_malloc_async(ctx, &M->device.values, (size_t)nnz * nzi_value_size(vt),
                                        "nz_spgemm (hash): C values"));
    }
    if (c_off != NULL) M->device.row_offsets = c_off;
    *C = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* The numeric phase of a device C, after the symbolic one: C must fit in core (its columns and
 * values, the dense slots, with what is resident); the numeric binning (unless the symbolic
 * one serves, one_binning), then every bin straight into C's arrays. C takes st->c_off. */
template <typename Value>
nz_status_t hash_device_numeric(hash_state_t *st, nz_matrix_t **C, const nz_matrix_t *A,
                                  int64_t n, int64_t nnz, size_t budget, size_t used,
                                  bool one_binning, int max_bin, int dense_from,
                                  hash_args<Value> args, double *numeric_seconds) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t m = A->rows;
    const size_t c_bytes = (size_t)nnz * (sizeof(int32_t) + sizeof(Value));
    size_t avail = budget - used;
    int64_t dense_count = 0;
    float ms = 0.0f;
    if (c_bytes + BUDGET_SLACK_BYTES > avail)
        return nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                         "nz_spgemm (hash): C has %lld entries (%zu bytes), more than the %zu bytes "
                         "left in the device memory budget of %zu bytes; a device C must fit in "
                         "device memory (pass host matrices to stream C to the host in row panels)",
                         (long long)nnz, c_bytes, avail, budget);
    avail -= c_bytes;
    NZI_CUDA_TRY(ctx, cudaEventRecord(st->numeric_start[0], cs->stream));
    if (!one_binning) NZI_TRY(hash_bin_rows<true>(st, m, n, max_bin, dense_from, 1, NULL));
    if (st->h_counts[HUGE_BIN] > 0)
        NZI_TRY(hash_dense_slots<Value>(st, st->h_counts[HUGE_BIN], n, true, avail, &dense_count, NULL));
    mark(st, "numeric-binned");
    NZI_TRY(hash_device_result(ctx, C, A->value_type, m, n, nnz, st->c_off));
    st->c_off = NULL; /* C's now */
    mark(st, "C-allocated");
    args.c_base = 0;
    args.c_col = (*C)->device.col_indices;
    args.c_val = (Value *)(*C)->device.values;
    nz_status_t status = hash_run_bins<Value, true>(st, args, 0, n, dense_count);
    if (status == NZ_SUCCESS) {
        cudaError_t err = cudaEventRecord(st->numeric_stop[0], cs->stream);
        if (err == cudaSuccess) err = cudaEventSynchronize(st->numeric_stop[0]);
        if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, st->numeric_start[0], st->numeric_stop[0]);
        if (err != cudaSuccess) status = nzi_cuda_status(ctx, err, "nz_spgemm (hash): numeric phase", __FILE__, __LINE__);
    }
    if (status != NZ_SUCCESS) {
        (void)cudaStreamSynchronize(cs->stream);
        (void)cudaGetLastError();
        nzi_matrix_free(*C);
        *C = NULL;
        return status;
    }
    *numeric_seconds = 1e-3 * (double)ms;
    return NZ_SUCCESS;
}

template nz_status_t hash_device_numeric<float>(hash_state_t *, nz_matrix_t **, const nz_matrix_t *,
                                                int64_t, int64_t, size_t, size_t, bool, int, int,
                                                hash_args<float>, double *);
template nz_status_t hash_device_numeric<double>(hash_state_t *, nz_matrix_t **,
                                                 const nz_matrix_t *, int64_t, int64_t, size_t,
                                                 size_t, bool, int, int, hash_args<double>,
                                                 double *);
