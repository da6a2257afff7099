/* hash_state.cu: the hash SpGEMM call's state: its release, operand upload, events, pinned staging and the drain of C's panels through it, the profile. */
#include "hash.cuh"

#include <string.h>

#define STAGE_HALF ((size_t)16 << 20) /* pinned staging halves: large DMAs, small footprint */

/* Everything the call holds, released in one place (also after an error: copies may still be in
 * flight, so the streams are drained first). */
void hash_state_release(hash_state_t *st) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    /* copies may still be in flight after an error */
    if (cudaStreamSynchronize(cs->stream) != cudaSuccess) (void)cudaGetLastError();
    if (st->own_copy_stream && cudaStreamSynchronize(st->copy_stream) != cudaSuccess)
        (void)cudaGetLastError();
    if (st->dB != st->dA) nzi_matrix_free(st->dB);
    nzi_matrix_free(st->dA);
    free_device(ctx, (void **)&st->a_wide);
    free_device(ctx, (void **)&st->b_wide);
    free_device(ctx, (void **)&st->c_off);
    free_device(ctx, (void **)&st->lists);
    free_device(ctx, (void **)&st->scan_work);
    free_device(ctx, (void **)&st->counters);
    free_device(ctx, (void **)&st->panel_starts);
    free_device(ctx, (void **)&st->bitmaps);
    free_device(ctx, &st->dense);
    for (int s = 0; s < 2; s++) {
        free_device(ctx, &st->slot_col[s]);
        free_device(ctx, &st->slot_val[s]);
    }
    nzi_free(ctx, st->h_counts);
    nzi_free(ctx, st->h_panel_starts);
    if (st->staging != NULL) {
        cudaFreeHost(st->staging);
        nzi_account_free(ctx, 2 * STAGE_HALF, false);
    }
    cudaEvent_t *events[] = {&st->computed[0], &st->computed[1], &st->numeric_start[0],
                             &st->numeric_start[1], &st->numeric_stop[0], &st->numeric_stop[1],
                             &st->staged[0], &st->staged[1], &st->sym_start, &st->sym_stop,
                             &st->prof_start, &st->prof_stop};
    for (size_t e = 0; e < sizeof events / sizeof events[0]; e++)
        if (*events[e] != NULL) cudaEventDestroy(*events[e]);
    if (st->own_copy_stream) cudaStreamDestroy(st->copy_stream);
    (void)cudaGetLastError();
}

/* Device copy of a host CSR matrix with 64-bit row offsets (the kernels index with int64). */
nz_status_t hash_upload(nz_context_t *ctx, nz_matrix_t **dM, const nz_matrix_t *M) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *D = NULL;
    NZI_CHECK(nzi_matrix_new(ctx, &D, NZ_FORMAT_CSR, M->value_type, M->rows, M->cols, M->nnz));
    D->location = NZ_DEVICE;
    NZI_CHECK(nz_cuda_matrix_upload(ctx, D, M, 64));
    *dM = D;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(D);
    return status;
}

/* Copy count elements of `size` bytes from a device slot to host memory through the two pinned
 * halves: the DMA of one half (copy stream) overlaps the host's copy out of the other. */
nz_status_t hash_drain_array(hash_state_t *st, void *host, const void *device, int64_t count,
                             size_t size) {
    nz_context_t *ctx = st->ctx;
    const size_t bytes = (size_t)count * size;
    if (bytes == 0) return NZ_SUCCESS;
    if (st->staging == NULL) {
        NZI_CUDA_TRY(ctx, cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                                          st->copy_stream));
        NZI_CUDA_TRY(ctx, cudaStreamSynchronize(st->copy_stream));
        return NZ_SUCCESS;
    }
    size_t previous_offset = 0, previous_len = 0;
    int half = 0;
    for (size_t offset = 0; offset < bytes; offset += STAGE_HALF) {
        const size_t len = bytes - offset < STAGE_HALF ? bytes - offset : STAGE_HALF;
        NZI_CUDA_TRY(ctx, cudaMemcpyAsync(st->staging + (size_t)half * STAGE_HALF,
                                          (const unsigned char *)device + offset, len,
                                          cudaMemcpyDeviceToHost, st->copy_stream));
        NZI_CUDA_TRY(ctx, cudaEventRecord(st->staged[half], st->copy_stream));
        if (previous_len != 0) {
            NZI_CUDA_TRY(ctx, cudaEventSynchronize(st->staged[half ^ 1]));
            nzi_parallel_memcpy(ctx, (unsigned char *)host + previous_offset,
                                st->staging + (size_t)(half ^ 1) * STAGE_HALF, previous_len);
        }
        previous_offset = offset;
        previous_len = len;
        half ^= 1;
    }
    NZI_CUDA_TRY(ctx, cudaEventSynchronize(st->staged[half ^ 1]));
    nzi_parallel_memcpy(ctx, (unsigned char *)host + previous_offset,
                        st->staging + (size_t)(half ^ 1) * STAGE_HALF, previous_len);
    return NZ_SUCCESS;
}

/* The profile the caller asked for: the marks as stages, and with NZ_SPGEMM_PROFILE_BINS the
 * time and rows of every bin per phase (and, for a host C, C's entries in each numeric bin, from
 * its row offsets by the binning rule). */
void hash_fill_profile(const hash_state_t *st, const int64_t *off, int64_t m, int max_bin,
                       int dense_from) {
    nz_spgemm_profile_t *pr = st->profile;
    if (pr == NULL) return;
    for (int i = 1; i < st->marks; i++)
        nzi_spgemm_profile_stage(pr, st->mark_name[i], st->mark_time[i] - st->mark_time[i - 1]);
    if (!st->profile_bins) return;
    pr->bin_count = NUM_BINS;
    pr->dense_from_bin = dense_from;
    pr->max_shared_bin = max_bin;
    for (int64_t i = 0; off != NULL && i < m; i++) {
        const int b = bin_of_length(off[i + 1] - off[i], max_bin, dense_from);
        if (b >= 0) pr->numeric_entries[b] += off[i + 1] - off[i];
    }
    for (int b = 0; b < NUM_BINS; b++) {
        pr->bin_threads[b] = b < SHARED_BINS ? bin_group[b] : DENSE_BLOCK;
        pr->symbolic_rows[b] = st->prof_rows[0][b];
        pr->numeric_rows[b] = st->prof_rows[1][b];
        pr->symbolic_bin_seconds[b] = 1e-3 * st->prof_ms[0][b];
        pr->numeric_bin_seconds[b] = 1e-3 * st->prof_ms[1][b];
    }
}

/* The call's events: per slot the numeric phase's timing and completion, the drain's staging
 * halves; the symbolic phase; the bins' (NZ_SPGEMM_PROFILE_BINS). */
nz_status_t hash_create_events(hash_state_t *st) {
    nz_context_t *ctx = st->ctx;
    for (int s = 0; s < 2; s++) {
        NZI_CUDA_TRY(ctx, cudaEventCreateWithFlags(&st->computed[s], cudaEventDisableTiming));
        NZI_CUDA_TRY(ctx, cudaEventCreateWithFlags(&st->staged[s], cudaEventDisableTiming));
        NZI_CUDA_TRY(ctx, cudaEventCreate(&st->numeric_start[s]));
        NZI_CUDA_TRY(ctx, cudaEventCreate(&st->numeric_stop[s]));
    }
    NZI_CUDA_TRY(ctx, cudaEventCreate(&st->sym_start));
    NZI_CUDA_TRY(ctx, cudaEventCreate(&st->sym_stop));
    if (st->profile_bins) {
        NZI_CUDA_TRY(ctx, cudaEventCreate(&st->prof_start));
        NZI_CUDA_TRY(ctx, cudaEventCreate(&st->prof_stop));
    }
    return NZ_SUCCESS;
}

/* Pinned staging only where it pays: a small C comes back in one pageable copy (pinning
 * 32 MB costs milliseconds, more than such a copy); a failed pinning falls back to pageable
 * copies too (slower, still correct). */
nz_status_t hash_staging_alloc(hash_state_t *st, size_t c_bytes) {
    nz_context_t *ctx = st->ctx;
    st->staging = NULL;
    if (c_bytes <= STAGE_HALF) return NZ_SUCCESS;
    if (!nzi_account_alloc(ctx, 2 * STAGE_HALF, false))
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                         "nz_spgemm (hash): cannot allocate the pinned staging buffers (injected)");
    if (cudaMallocHost((void **)&st->staging, 2 * STAGE_HALF) != cudaSuccess) {
        (void)cudaGetLastError();
        nzi_account_free(ctx, 2 * STAGE_HALF, false);
        ctx->failed_allocs++;
        st->staging = NULL;
    }
    return NZ_SUCCESS;
}

