/* row_blocks.cu: plan setup the row-block CSR algorithms share (CSR-Adaptive, IPCSR): checks, the host block scan, upload. */
/*
 * Both algorithms cut the rows into blocks on the host from one copy of the row offsets
 * (Greathouse and Daga, SC14, for CSR-Adaptive; Gao, Qi and He 2016, Algorithms 4 and 6, for
 * IPCSR): consecutive rows share a block while their nonzeros fit the block's shared-memory tile,
 * and a row too long for the tile gets blocks of its own. They differ only in the tile, the row
 * limit and where a long row starts being split, which are the parameters here.
 */
#include "row_blocks.cuh"

static nz_status_t plan_start(nz_spmv_plan_t *plan, const char *plan_name, int threads,
                              size_t state_bytes) {
    nz_context_t *ctx = plan->ctx;
    if (plan->op != NZ_OP_N)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: only op = N is implemented", plan_name);
    if (plan->A->rows > (int64_t)INT32_MAX)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: %lld rows exceed int32", plan_name,
                         (long long)plan->A->rows);
    if (nzi_cuda(ctx)->max_threads_per_block < threads)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: the device allows %d threads per block, %d needed", plan_name,
                         nzi_cuda(ctx)->max_threads_per_block, threads);
    void *state = nzi_calloc(ctx, 1, state_bytes);
    if (state == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the state", plan_name);
    plan->state = state; /* from here on, nzi_row_blocks_plan_release frees whatever is set */
    plan->reproducible = 1;
    plan->vector_width = 0;
    plan->workspace_bytes = 0;
    return NZ_SUCCESS;
}

nz_status_t nzi_row_blocks_setup(nz_spmv_plan_t *plan, const nzi_row_block_names_t *names,
                                 int threads, size_t state_bytes, nzi_row_blocks_sizes_fn sizes,
                                 const nzi_row_blocks_launchers_t *launch) {
    nz_status_t status = NZ_SUCCESS;
    int64_t tile_nnz = 0, max_rows = 0, piece_length = 0;
    NZI_CHECK(plan_start(plan, names->plan, threads, state_bytes));
    ((nzi_row_blocks_t *)plan->state)->launch = launch;
    if (plan->A->rows == 0) goto cleanup;
    NZI_CHECK(sizes(plan->ctx, plan->A, plan->state, &tile_nnz, &max_rows, &piece_length));
    NZI_CHECK(nzi_row_blocks_build(plan->ctx, plan->A, tile_nnz, max_rows, piece_length, names,
                                   (nzi_row_blocks_t *)plan->state, &plan->workspace_bytes));
cleanup:
    if (status < 0) nzi_row_blocks_plan_release(plan);
    return status;
}

void nzi_row_blocks_plan_release(nz_spmv_plan_t *plan) {
    nzi_row_blocks_t *rb = (nzi_row_blocks_t *)plan->state; /* the state's first member */
    if (rb == NULL) return;
    nzi_row_blocks_free(plan->ctx, plan->A->value_type, rb);
    nzi_free(plan->ctx, plan->state);
    plan->state = NULL;
}

nz_status_t nzi_row_blocks_shared_per_block(nz_context_t *ctx, int resident, size_t *per_block) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    int reserved = 0;
    NZI_CUDA_TRY(ctx, cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock,
                                             cs->device));
    size_t bytes = cs->shared_per_sm / (size_t)resident;
    bytes = bytes > (size_t)reserved ? bytes - (size_t)reserved : 0;
    if (bytes > cs->shared_per_block) bytes = cs->shared_per_block;
    *per_block = bytes;
    return NZ_SUCCESS;
}

/* The scan: one pass over the rows. A row longer than tile_nnz closes the open block and is a
 * block of its own (at most piece_length nonzeros) or ceil(length / piece_length) pieces, each
 * with its slot; otherwise a row that would overflow the tile, or the (max_rows + 1)-th row,
 * starts a new block. Descriptors: (first row, end row, 0, 1) for rows, (row, first slot, piece,
 * pieces) for pieces. With out == NULL only counts. Returns false if a count exceeds int32. */
template <typename Offset>
static bool row_blocks_scan(const Offset *offsets, int64_t rows, int64_t tile_nnz,
                            int64_t max_rows, int64_t piece_length, int4 *out,
                            int64_t *num_blocks, int64_t *num_slots) {
    int64_t count = 0, slots = 0, start = 0, block_nnz = 0;
    for (int64_t i = 0; i < rows; i++) {
        const int64_t length = (int64_t)offsets[i + 1] - (int64_t)offsets[i];
        if (length > tile_nnz) {
            if (i > start) {
                if (out) out[count] = make_int4((int)start, (int)i, 0, 1);
                count++;
            }
            if (length <= piece_length) {
                if (out) out[count] = make_int4((int)i, (int)(i + 1), 0, 1);
                count++;
            } else {
                const int64_t pieces = (length + piece_length - 1) / piece_length;
                if (pieces > INT32_MAX || slots + pieces > INT32_MAX) return false;
                for (int64_t p = 0; p < pieces; p++) {
                    if (out) out[count] = make_int4((int)i, (int)slots, (int)p, (int)pieces);
                    count++;
                }
                slots += pieces;
            }
            start = i + 1;
            block_nnz = 0;
        } else if (block_nnz + length > tile_nnz || i - start == max_rows) {
            if (out) out[count] = make_int4((int)start, (int)i, 0, 1);
            count++;
            start = i;
            block_nnz = length;
        } else {
            block_nnz += length;
        }
        if (count > INT32_MAX) return false;
    }
    if (rows > start) {
        if (out) out[count] = make_int4((int)start, (int)rows, 0, 1);
        count++;
    }
    if (count > INT32_MAX) return false;
    *num_blocks = count;
    *num_slots = slots;
    return true;
}

/* The scan over host offsets of either width. */
static bool row_blocks_scan_any(const void *offsets, size_t offset_size, int64_t rows,
                                int64_t tile_nnz, int64_t max_rows, int64_t piece_length,
                                int4 *out, int64_t *num_blocks, int64_t *num_slots) {
    if (offset_size == 8)
        return row_blocks_scan((const int64_t *)offsets, rows, tile_nnz, max_rows, piece_length,
                               out, num_blocks, num_slots);
    return row_blocks_scan((const int32_t *)offsets, rows, tile_nnz, max_rows, piece_length, out,
                           num_blocks, num_slots);
}

nz_status_t nzi_row_blocks_build(nz_context_t *ctx, const nz_matrix_t *A, int64_t tile_nnz,
                                 int64_t max_rows, int64_t piece_length,
                                 const nzi_row_block_names_t *names, nzi_row_blocks_t *rb,
                                 size_t *workspace_bytes) {
    nz_status_t status = NZ_SUCCESS;
    void *host_offsets = NULL;
    int4 *host_blocks = NULL;
    size_t offset_size = A->device.offset_type == NZ_I64 ? 8u : 4u;
    size_t value_size = nzi_value_size(A->value_type);
    size_t offsets_bytes = 0, blocks_bytes = 0;

    if (nzi_mul_overflow_size((size_t)A->rows + 1, offset_size, &offsets_bytes)) {
        status = nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: row offsets of %lld rows overflow",
                           names->plan, (long long)A->rows);
        goto cleanup;
    }
    NZI_CHECK(nzi_alloc_array(ctx, &host_offsets, (size_t)A->rows + 1, offset_size,
                              names->host_offsets));
    NZI_CHECK(nz_cuda_memcpy(ctx, host_offsets, A->device.row_offsets, offsets_bytes, NZI_D2H));
    NZI_CHECK(nz_cuda_synchronize(ctx));

    if (!row_blocks_scan_any(host_offsets, offset_size, A->rows, tile_nnz, max_rows,
                             piece_length, NULL, &rb->num_blocks, &rb->num_slots)) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                           "%s: more than 2^31 - 1 row blocks for %lld rows, %lld nonzeros",
                           names->plan, (long long)A->rows, (long long)A->nnz);
        goto cleanup;
    }
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&host_blocks, (size_t)rb->num_blocks, sizeof(int4),
                              names->blocks));
    row_blocks_scan_any(host_offsets, offset_size, A->rows, tile_nnz, max_rows, piece_length,
                        host_blocks, &rb->num_blocks, &rb->num_slots);

    blocks_bytes = (size_t)rb->num_blocks * sizeof(int4);
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&rb->blocks, blocks_bytes, names->blocks));
    NZI_CHECK(nz_cuda_memcpy(ctx, rb->blocks, host_blocks, blocks_bytes, NZI_H2D));
    *workspace_bytes = blocks_bytes;
    if (rb->num_slots > 0) {
        size_t slots = (size_t)rb->num_slots;
        NZI_CHECK(nz_cuda_malloc(ctx, &rb->partials, slots * value_size, names->partials));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&rb->tickets, slots * sizeof(unsigned int),
                                 names->tickets));
        NZI_CHECK(nz_cuda_memset(ctx, rb->tickets, 0, slots * sizeof(unsigned int)));
        *workspace_bytes += slots * (value_size + sizeof(unsigned int));
    }
    NZI_CHECK(nz_cuda_synchronize(ctx));

cleanup:
    if (host_blocks) nzi_free(ctx, host_blocks);
    if (host_offsets) nzi_free(ctx, host_offsets);
    return status;
}

void nzi_row_blocks_free(nz_context_t *ctx, nz_value_type_t value_type, nzi_row_blocks_t *rb) {
    size_t value_size = nzi_value_size(value_type);
    if (rb->blocks) nz_cuda_free(ctx, rb->blocks, (size_t)rb->num_blocks * sizeof(int4));
    if (rb->partials) nz_cuda_free(ctx, rb->partials, (size_t)rb->num_slots * value_size);
    if (rb->tickets) nz_cuda_free(ctx, rb->tickets, (size_t)rb->num_slots * sizeof(unsigned int));
    rb->blocks = NULL;
    rb->partials = NULL;
    rb->tickets = NULL;
}

nz_status_t nzi_row_blocks_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                   double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const nzi_row_blocks_t *rb = (const nzi_row_blocks_t *)plan->state; /* its first member */
    const nzi_row_blocks_launchers_t *launch = rb->launch;
    if (rb->num_blocks == 0) return NZ_SUCCESS;
    const bool f64 = A->value_type == NZ_F64, o64 = A->device.offset_type == NZ_I64;
    const nzi_row_blocks_launch_fn fn =
        f64 ? (o64 ? launch->f64_i64 : launch->f64_i32) : (o64 ? launch->f32_i64 : launch->f32_i32);
    fn(plan->state, nzi_cuda(ctx)->stream, A, x, y, alpha, beta);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}
