/* device_csr.cu: device CSR matrices: pinned staged upload, validation of wrapped arrays, download, release. */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- matrix upload ----------------------------------------------------------------------- */

/* Double-buffered staging: host arrays are copied (or narrowed, int64 -> int32 offsets) into one
 * half of a pinned buffer while the other half's DMA runs; an event per half says when it may be
 * refilled. With a pageable fallback buffer cudaMemcpyAsync returns once the driver has taken
 * the data, so the same loop stays correct, just slower. */
typedef struct stager {
    unsigned char *buffer; /* 2 * half bytes */
    size_t half;
    bool pinned;
    cudaEvent_t done[2];
    int next;
} stager_t;

#define NZI_STAGING_HALF ((size_t)8 << 20) /* 8 MiB halves: large DMAs, small pinned footprint */
#define NZI_PINNED_MIN ((size_t)2 << 20)    /* smaller staging stays pageable */

static nz_status_t stage_array(nz_context_t *ctx, stager_t *st, void *dst, const void *src,
                               int64_t count, size_t elem, bool narrow_offsets) {
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    int64_t per_chunk = (int64_t)(st->half / elem);
    for (int64_t first = 0; first < count; first += per_chunk) {
        int64_t n = count - first < per_chunk ? count - first : per_chunk;
        unsigned char *chunk = st->buffer + (size_t)st->next * st->half;
        NZI_CUDA_TRY(ctx, cudaEventSynchronize(st->done[st->next]));
        if (narrow_offsets) {
            const int64_t *wide = (const int64_t *)src + first;
            int32_t *narrow = (int32_t *)chunk;
            for (int64_t i = 0; i < n; i++) narrow[i] = (int32_t)wide[i];
        } else {
            memcpy(chunk, (const unsigned char *)src + (size_t)first * elem, (size_t)n * elem);
        }
        NZI_CUDA_TRY(ctx, cudaMemcpyAsync((unsigned char *)dst + (size_t)first * elem, chunk,
                                          (size_t)n * elem, cudaMemcpyHostToDevice, stream));
        NZI_CUDA_TRY(ctx, cudaEventRecord(st->done[st->next], stream));
        st->next ^= 1;
    }
    return NZ_SUCCESS;
}

/* Copy host CSR A to the device as dA: row offsets narrowed to int32 when offset_bits is 32, or
 * 0 and nnz fits. The copy phase is timed with events (dA->transfer_seconds). Any failure frees
 * the device arrays already allocated and leaves dA's pointers NULL. */
nz_status_t nz_cuda_matrix_upload(nz_context_t *ctx, nz_matrix_t *dA, const nz_matrix_t *A,
                                  int offset_bits) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t rows = A->rows, nnz = A->nnz;
    const size_t value_size = nzi_value_size(A->value_type);
    const bool narrow = offset_bits == 32 || (offset_bits == 0 && nnz <= INT32_MAX);
    const size_t offset_size = narrow ? sizeof(int32_t) : sizeof(int64_t);
    const char *what = "nz_matrix_to_device";
    size_t offset_bytes = 0, index_bytes = 0, value_bytes = 0, largest;
    stager_t st;
    float ms = 0.0f;
    cudaError_t err;

    memset(&st, 0, sizeof st);
    if (A->format != NZ_FORMAT_CSR && A->location == NZ_HOST)
        return nzi_cuda_format_upload(ctx, dA, A); /* device_formats.cu: other layouts as they are */
    if (A->format != NZ_FORMAT_CSR || A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: only host CSR matrices can be uploaded", what);
    if (narrow && nnz > INT32_MAX)
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: %lld nonzeros do not fit 32-bit row offsets",
                         what, (long long)nnz);
    if (nzi_mul_overflow_size((size_t)rows + 1, offset_size, &offset_bytes) ||
        nzi_mul_overflow_size((size_t)nnz, sizeof(int32_t), &index_bytes) ||
        nzi_mul_overflow_size((size_t)nnz, value_size, &value_bytes))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: %lld x %lld with %lld nonzeros overflows size_t",
                         what, (long long)rows, (long long)A->cols, (long long)nnz);
    NZI_TRY(nzi_cuda_enter(ctx));
    dA->device.offset_type = narrow ? NZ_I32 : NZ_I64;
    dA->device.borrowed = false;
    NZI_CHECK(nz_cuda_malloc(ctx, &dA->device.row_offsets, offset_bytes,
                             "nz_matrix_to_device: row offsets"));
    if (nnz > 0) {
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&dA->device.col_indices, index_bytes,
                                 "nz_matrix_to_device: column indices"));
        NZI_CHECK(nz_cuda_malloc(ctx, &dA->device.values, value_bytes,
                                 "nz_matrix_to_device: values"));
    }

    largest = offset_bytes > index_bytes ? offset_bytes : index_bytes;
    if (value_bytes > largest) largest = value_bytes;
    st.half = largest < NZI_STAGING_HALF ? (largest + 15) & ~(size_t)15 : NZI_STAGING_HALF;
    NZI_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&st.done[0], cudaEventDisableTiming));
    NZI_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&st.done[1], cudaEventDisableTiming));
    /* small arrays go through a pageable buffer: pinning and unpinning cost more than their copy */
    if (2 * st.half > NZI_PINNED_MIN && nzi_account_alloc(ctx, 2 * st.half, false)) {
        err = cudaMallocHost((void **)&st.buffer, 2 * st.half);
        if (err == cudaSuccess) {
            st.pinned = true;
        } else {
            (void)cudaGetLastError();
            nzi_account_free(ctx, 2 * st.half, false);
            ctx->failed_allocs++;
            st.buffer = NULL;
        }
    }
    if (!st.pinned)
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&st.buffer, 2, st.half,
                                  "nz_matrix_to_device: staging buffer"));

    NZI_CUDA_CHECK(ctx, cudaEventRecord(cs->event_start, cs->stream));
    NZI_CHECK(stage_array(ctx, &st, dA->device.row_offsets, A->host.csr.row_offsets, rows + 1,
                          offset_size, narrow));
    if (nnz > 0) {
        NZI_CHECK(stage_array(ctx, &st, dA->device.col_indices, A->host.csr.col_indices, nnz,
                              sizeof(int32_t), false));
        NZI_CHECK(stage_array(ctx, &st, dA->device.values, A->host.csr.values, nnz, value_size,
                              false));
    }
    NZI_CUDA_CHECK(ctx, cudaEventRecord(cs->event_stop, cs->stream));
    NZI_CUDA_CHECK(ctx, cudaEventSynchronize(cs->event_stop));
    NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, cs->event_start, cs->event_stop));
    dA->transfer_seconds = 1e-3 * (double)ms;

cleanup:
    if (st.buffer != NULL) {
        /* a failed copy may still have DMA in flight from the buffer */
        if (cudaStreamSynchronize(cs->stream) != cudaSuccess) (void)cudaGetLastError();
        if (st.pinned) {
            cudaFreeHost(st.buffer);
            nzi_account_free(ctx, 2 * st.half, false);
        } else {
            nzi_free(ctx, st.buffer);
        }
    }
    if (st.done[0] != NULL) cudaEventDestroy(st.done[0]);
    if (st.done[1] != NULL) cudaEventDestroy(st.done[1]);
    if (status < 0) nz_cuda_matrix_release(dA);
    return status;
}

/* ---- validation of wrapped arrays -------------------------------------------------------- */

/* Copy the wrapped structure to the host and check it as nz_matrix_create_csr does (offsets
 * start at 0, never decrease, end at nnz; columns in range) plus the device contract (columns
 * strictly increasing within a row). The message names the first bad row. O(rows + nnz) host
 * memory and time. */
nz_status_t nz_cuda_matrix_validate(nz_context_t *ctx, const nz_matrix_t *dA) {
    nz_status_t status = NZ_SUCCESS;
    const char *what = "nz_matrix_wrap_csr_device";
    const int64_t rows = dA->rows, cols = dA->cols, nnz = dA->nnz;
    const bool narrow = dA->device.offset_type == NZ_I32;
    void *offsets = NULL;
    int32_t *columns = NULL;
    int64_t i, k;

    NZI_CHECK(nzi_alloc_array(ctx, &offsets, (size_t)rows + 1, narrow ? 4 : 8,
                              "nz_matrix_wrap_csr_device: row offsets copy"));
    NZI_CHECK(nz_cuda_memcpy(ctx, offsets, dA->device.row_offsets,
                             ((size_t)rows + 1) * (narrow ? 4 : 8), NZI_D2H));
#define OFFSET(i) (narrow ? (int64_t)((const int32_t *)offsets)[i] : ((const int64_t *)offsets)[i])
    if (OFFSET(0) != 0) {
        status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX, "%s: row 0: row_offsets[0] is %lld, not 0",
                           what, (long long)OFFSET(0));
        goto cleanup;
    }
    for (i = 0; i < rows; i++)
        if (OFFSET(i + 1) < OFFSET(i)) {
            status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                               "%s: row %lld: row_offsets decrease (%lld then %lld)", what,
                               (long long)i, (long long)OFFSET(i), (long long)OFFSET(i + 1));
            goto cleanup;
        }
    if (OFFSET(rows) != nnz) {
        status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                           "%s: row_offsets[%lld] is %lld but nnz is %lld", what, (long long)rows,
                           (long long)OFFSET(rows), (long long)nnz);
        goto cleanup;
    }
    if (nnz > 0) {
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&columns, (size_t)nnz, sizeof(int32_t),
                                  "nz_matrix_wrap_csr_device: column indices copy"));
        NZI_CHECK(nz_cuda_memcpy(ctx, columns, dA->device.col_indices, (size_t)nnz * 4, NZI_D2H));
        for (i = 0; i < rows; i++)
            for (k = OFFSET(i); k < OFFSET(i + 1); k++) {
                if (columns[k] < 0 || columns[k] >= cols) {
                    status = nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                                       "%s: row %lld: column index %d out of range [0, %lld)",
                                       what, (long long)i, columns[k], (long long)cols);
                    goto cleanup;
                }
                if (k > OFFSET(i) && columns[k] <= columns[k - 1]) {
                    status = nzi_error(ctx, NZ_ERR_NOT_SORTED,
                                       "%s: row %lld: column indices not strictly increasing "
                                       "(%d after %d)", what, (long long)i, columns[k],
                                       columns[k - 1]);
                    goto cleanup;
                }
            }
    }
#undef OFFSET
cleanup:
    nzi_free(ctx, offsets);
    nzi_free(ctx, columns);
    return status;
}

/* Copy device CSR dA into a new host CSR matrix (int64 row offsets; int32 ones widened). */
nz_status_t nz_cuda_matrix_download(nz_context_t *ctx, nz_matrix_t **H, const nz_matrix_t *dA) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    const int64_t rows = dA->rows, nnz = dA->nnz;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CHECK(nzi_csr_alloc(ctx, &M, dA->value_type, rows, dA->cols, nnz));
    if (dA->device.offset_type == NZ_I64) {
        NZI_CHECK(nz_cuda_memcpy(ctx, M->host.csr.row_offsets, dA->device.row_offsets,
                                 (size_t)(rows + 1) * sizeof(int64_t), NZI_D2H));
    } else {
        /* the int32 offsets land in the upper half of the int64 array, then widen in place
         * from the front (entry i is read at byte 4 (rows + 1 + i) before it is overwritten) */
        int64_t *wide = M->host.csr.row_offsets;
        int32_t *narrow = (int32_t *)wide + (rows + 1);
        NZI_CHECK(nz_cuda_memcpy(ctx, narrow, dA->device.row_offsets,
                                 (size_t)(rows + 1) * sizeof(int32_t), NZI_D2H));
        for (int64_t i = 0; i <= rows; i++) wide[i] = (int64_t)narrow[i];
    }
    if (nnz > 0) {
        NZI_CHECK(nz_cuda_memcpy(ctx, M->host.csr.col_indices, dA->device.col_indices,
                                 (size_t)nnz * sizeof(int32_t), NZI_D2H));
        NZI_CHECK(nz_cuda_memcpy(ctx, M->host.csr.values, dA->device.values,
                                 (size_t)nnz * nzi_value_size(dA->value_type), NZI_D2H));
    }
    *H = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

void nz_cuda_matrix_release(nz_matrix_t *dA) {
    if (dA == NULL) return;
    if (dA->format != NZ_FORMAT_CSR) {
        nzi_cuda_format_release(dA); /* device_formats.cu */
        return;
    }
    if (!dA->device.borrowed) {
        nz_cuda_free(dA->ctx, dA->device.row_offsets, (size_t)-1);
        nz_cuda_free(dA->ctx, dA->device.col_indices, (size_t)-1);
        nz_cuda_free(dA->ctx, dA->device.values, (size_t)-1);
    }
    dA->device.row_offsets = NULL;
    dA->device.col_indices = NULL;
    dA->device.values = NULL;
}
