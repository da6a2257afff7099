/* device_formats.cu: upload and release of device matrices in COO, ELL, SELL, HYB, BSR and DIA; their plan checks. */
#include "cuda_internal.h"

#include <stdio.h>
#include <string.h>

/*
 * A device matrix of a format other than CSR keeps the host layout of that format (the same
 * union member, the same scalars) with every array replaced by a device copy: nothing is
 * converted, each array is copied as it is. The arrays of a format are listed once
 * (format_arrays), for the upload and for the release alike.
 * Upload: allocate every device array first (counted, failure injection included), then copy
 * through a double-buffered pinned staging buffer (the host arrays are pageable: a direct copy
 * would stage through the driver's small buffer and block), the whole copy timed with events
 * into dA->transfer_seconds. Any failure frees what was allocated and leaves dA without arrays.
 */

#define FORMAT_MAX_ARRAYS 5
/* Halves of the staging buffer: large DMAs, a small pinned footprint. */
#define FORMAT_STAGING_HALF ((size_t)8 << 20)

typedef struct format_array {
    void **device;          /* the field of the device matrix that holds the array */
    const void *host;       /* the host array (upload only) */
    int64_t count;          /* elements */
    size_t elem;            /* bytes per element */
    const char *what;       /* for messages */
} format_array_t;

/* The arrays of matrix M (device fields) and, when A is given, of the host matrix A with their
 * sizes. Returns how many there are (0 for CSR / CSC, which are not handled here). */
static int format_arrays(nz_matrix_t *M, const nz_matrix_t *A, format_array_t *arrays) {
    const size_t vs = nzi_value_size(M->value_type);
    const int64_t rows = M->rows, nnz = M->nnz;
    int n = 0;
#define ARRAY(field, elem_size, how_many, name)                                                 \
    do {                                                                                        \
        arrays[n].device = (void **)&M->host.field;                                             \
        arrays[n].host = A != NULL ? (const void *)A->host.field : NULL;                        \
        arrays[n].count = A != NULL ? (int64_t)(how_many) : 0;                                  \
        arrays[n].elem = (elem_size);                                                           \
        arrays[n].what = (name);                                                                \
        n++;                                                                                    \
    } while (0)
    switch (M->format) {
    case NZ_FORMAT_COO:
        ARRAY(coo.row_indices, 4, nnz, "COO row indices");
        ARRAY(coo.col_indices, 4, nnz, "COO column indices");
        ARRAY(coo.values, vs, nnz, "COO values");
        break;
    case NZ_FORMAT_ELL:
        ARRAY(ell.col_indices, 4, rows * A->host.ell.width, "ELL column indices");
        ARRAY(ell.values, vs, rows * A->host.ell.width, "ELL values");
        break;
    case NZ_FORMAT_SELL:
        ARRAY(sell.chunk_offsets, 8, A->host.sell.num_chunks + 1, "SELL chunk offsets");
        ARRAY(sell.chunk_widths, 4, A->host.sell.num_chunks, "SELL chunk widths");
        ARRAY(sell.row_of_slot, 4, A->host.sell.num_chunks * A->host.sell.chunk,
              "SELL row permutation");
        ARRAY(sell.col_indices, 4, A->host.sell.chunk_offsets[A->host.sell.num_chunks],
              "SELL column indices");
        ARRAY(sell.values, vs, A->host.sell.chunk_offsets[A->host.sell.num_chunks],
              "SELL values");
        break;
    case NZ_FORMAT_HYB:
        ARRAY(hyb.ell.col_indices, 4, rows * A->host.hyb.ell.width, "HYB ELL column indices");
        ARRAY(hyb.ell.values, vs, rows * A->host.hyb.ell.width, "HYB ELL values");
        ARRAY(hyb.coo.row_indices, 4, A->host.hyb.coo_nnz, "HYB COO row indices");
        ARRAY(hyb.coo.col_indices, 4, A->host.hyb.coo_nnz, "HYB COO column indices");
        ARRAY(hyb.coo.values, vs, A->host.hyb.coo_nnz, "HYB COO values");
        break;
    case NZ_FORMAT_BSR:
        ARRAY(bsr.block_row_offsets, 8, A->host.bsr.block_rows + 1, "BSR block row offsets");
        ARRAY(bsr.block_col_indices, 4, A->host.bsr.num_blocks, "BSR block column indices");
        ARRAY(bsr.values, vs,
              A->host.bsr.num_blocks * (int64_t)A->host.bsr.block * A->host.bsr.block,
              "BSR values");
        break;
    case NZ_FORMAT_DIA:
        ARRAY(dia.offsets, 8, A->host.dia.num_diagonals, "DIA offsets");
        ARRAY(dia.values, vs, A->host.dia.num_diagonals * rows, "DIA values");
        break;
    default: break;
    }
#undef ARRAY
    return n;
}

/* The kernels' limits, checked where a device matrix is made (upload) and again at plan time. */
static nz_status_t check_kernel_limits(nz_context_t *ctx, const nz_matrix_t *A, const char *what) {
    if (A->format == NZ_FORMAT_SELL && (A->host.sell.chunk <= 0 || A->host.sell.chunk % 32 != 0))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: SELL chunk height C = %d: C must be a multiple of 32 on the GPU "
                         "(a warp works inside one chunk); convert with sell_chunk = 32 or 64",
                         what, A->host.sell.chunk);
    if (A->format == NZ_FORMAT_BSR && (A->host.bsr.block < 2 || A->host.bsr.block > 8))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: BSR block size b = %d: the GPU kernels handle b = 2 .. 8", what,
                         A->host.bsr.block);
    return NZ_SUCCESS;
}

void nzi_cuda_format_release(nz_matrix_t *dA) {
    format_array_t arrays[FORMAT_MAX_ARRAYS];
    if (dA == NULL) return;
    const int n = format_arrays(dA, NULL, arrays);
    for (int i = 0; i < n; i++) {
        if (*arrays[i].device != NULL) nz_cuda_free(dA->ctx, *arrays[i].device, (size_t)-1);
        *arrays[i].device = NULL;
    }
}

/* Double-buffered copy of arrays[0 .. n) through `buffer` (2 x half bytes): while one half's DMA
 * runs, the other half is filled; an event per half says when it may be refilled. With a
 * pageable buffer (pinned allocation failed) cudaMemcpyAsync returns once the driver holds the
 * data, so the loop stays correct, only slower. */
static nz_status_t stage_arrays(nz_context_t *ctx, const format_array_t *arrays, int n,
                                unsigned char *buffer, size_t half, cudaEvent_t done[2]) {
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    int next = 0;
    for (int i = 0; i < n; i++) {
        const size_t bytes = (size_t)arrays[i].count * arrays[i].elem;
        for (size_t first = 0; first < bytes; first += half) {
            const size_t chunk = bytes - first < half ? bytes - first : half;
            unsigned char *stage = buffer + (size_t)next * half;
            NZI_CUDA_TRY(ctx, cudaEventSynchronize(done[next]));
            memcpy(stage, (const unsigned char *)arrays[i].host + first, chunk);
            NZI_CUDA_TRY(ctx, cudaMemcpyAsync((unsigned char *)*arrays[i].device + first, stage,
                                              chunk, cudaMemcpyHostToDevice, stream));
            NZI_CUDA_TRY(ctx, cudaEventRecord(done[next], stream));
            next ^= 1;
        }
    }
    return NZ_SUCCESS;
}

nz_status_t nzi_cuda_format_upload(nz_context_t *ctx, nz_matrix_t *dA, const nz_matrix_t *A) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const char *what = "nz_matrix_to_device";
    format_array_t arrays[FORMAT_MAX_ARRAYS];
    unsigned char *buffer = NULL;
    size_t half = 0, largest = 0;
    bool pinned = false;
    cudaEvent_t done[2] = {NULL, NULL};
    float ms = 0.0f;
    char name[96];
    int n;

    if (A->location != NZ_HOST || dA->format != A->format)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: internal: bad upload request", what);
    NZI_TRY(check_kernel_limits(ctx, A, what));
    n = format_arrays(dA, A, arrays);
    if (n == 0)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: %s matrices cannot be copied to the device",
                         what, nz_format_name(A->format));
    for (int i = 0; i < n; i++) {
        size_t bytes = 0;
        if (arrays[i].count < 0 ||
            nzi_mul_overflow_size((size_t)arrays[i].count, arrays[i].elem, &bytes))
            return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: the %s of a %lld x %lld matrix overflow "
                             "size_t", what, arrays[i].what, (long long)A->rows, (long long)A->cols);
        if (bytes > largest) largest = bytes;
    }
    NZI_TRY(nzi_cuda_enter(ctx));
    /* the scalars of the layout (width, chunk, block, counts) come with the struct copy */
    memcpy(&dA->host, &A->host, sizeof dA->host);
    for (int i = 0; i < n; i++) *arrays[i].device = NULL;
    if (A->format == NZ_FORMAT_SELL)
        dA->device_stored = A->host.sell.chunk_offsets[A->host.sell.num_chunks];
    for (int i = 0; i < n; i++) {
        if (arrays[i].count == 0) continue;
        snprintf(name, sizeof name, "%s: %s", what, arrays[i].what);
        NZI_CHECK(nz_cuda_malloc(ctx, arrays[i].device, (size_t)arrays[i].count * arrays[i].elem,
                                 name));
    }

    half = largest < FORMAT_STAGING_HALF ? (largest + 15) & ~(size_t)15 : FORMAT_STAGING_HALF;
    if (half == 0) half = 16;
    NZI_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&done[0], cudaEventDisableTiming));
    NZI_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&done[1], cudaEventDisableTiming));
    if (nzi_account_alloc(ctx, 2 * half, false)) {
        if (cudaMallocHost((void **)&buffer, 2 * half) == cudaSuccess) {
            pinned = true;
        } else {
            (void)cudaGetLastError();
            nzi_account_free(ctx, 2 * half, false);
            ctx->failed_allocs++;
            buffer = NULL;
        }
    }
    if (!pinned)
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&buffer, 2, half,
                                  "nz_matrix_to_device: staging buffer"));

    NZI_CUDA_CHECK(ctx, cudaEventRecord(cs->event_start, cs->stream));
    NZI_CHECK(stage_arrays(ctx, arrays, n, buffer, half, done));
    NZI_CUDA_CHECK(ctx, cudaEventRecord(cs->event_stop, cs->stream));
    NZI_CUDA_CHECK(ctx, cudaEventSynchronize(cs->event_stop));
    NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, cs->event_start, cs->event_stop));
    dA->transfer_seconds = 1e-3 * (double)ms;

cleanup:
    if (buffer != NULL) {
        /* a failed copy may still have DMA in flight from the buffer */
        if (cudaStreamSynchronize(cs->stream) != cudaSuccess) (void)cudaGetLastError();
        if (pinned) {
            cudaFreeHost(buffer);
            nzi_account_free(ctx, 2 * half, false);
        } else {
            nzi_free(ctx, buffer);
        }
    }
    if (done[0] != NULL) cudaEventDestroy(done[0]);
    if (done[1] != NULL) cudaEventDestroy(done[1]);
    if (status < 0) nzi_cuda_format_release(dA);
    return status;
}

nz_status_t nzi_cuda_format_plan_check(const nz_spmv_plan_t *plan) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const char *what = "nz_spmv_plan_create";
    if (A->format == NZ_FORMAT_CSR) return NZ_SUCCESS;
    if (plan->op != NZ_OP_N)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: op(A) = A^T is not implemented for %s matrices on the GPU; use a CSR "
                         "device matrix, or transpose A on the host (nz_matrix_transpose)", what,
                         nz_format_name(A->format));
    if (plan->flags & NZ_PLAN_MIXED)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: NZ_PLAN_MIXED (single storage, double accumulation) is not "
                         "implemented for %s matrices on the GPU", what, nz_format_name(A->format));
    return check_kernel_limits(ctx, A, what);
}
