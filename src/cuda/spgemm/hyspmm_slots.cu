/* hyspmm_slots.cu: hySpMM's slots: device layout, pooled host side (streams, events, pinned blocks). */
#include "hyspmm_slots.cuh"

#include <stdlib.h>
#include <string.h>

/*
 * A slot holds one panel in flight (src/cuda/spgemm/hyspmm.cu queues its stages): a stream,
 * timing events, a pinned input and output block on the host, and one device block carved into
 * the arrays of slot_layout_t. NZI_HYSPMM_SLOTS of them make the pipeline of
 * hyspmm_pipeline.c.
 */

void nzi_hyspmm_slot_layout(size_t vs, int64_t max_rows, int64_t max_a_nnz, int64_t max_products,
                            size_t temp_bytes, slot_layout_t *l) {
    size_t at = 0;
    const size_t P = (size_t)max_products, R = (size_t)max_rows + 1, K = (size_t)max_a_nnz;
#define HYSPMM_PLACE(field, bytes) (l->field = at, at += align_up(bytes))
    HYSPMM_PLACE(a_values, K * vs);
    HYSPMM_PLACE(product_offsets, (K + 1) * NZI_INDEX_BYTES);
    HYSPMM_PLACE(row_products, R * NZI_INDEX_BYTES);
    HYSPMM_PLACE(cols[0], P * NZI_INDEX_BYTES);
    HYSPMM_PLACE(cols[1], P * NZI_INDEX_BYTES);
    HYSPMM_PLACE(values[0], P * vs);
    HYSPMM_PLACE(values[1], P * vs);
    HYSPMM_PLACE(c_cols, P * NZI_INDEX_BYTES);
    HYSPMM_PLACE(c_values, P * vs);
    HYSPMM_PLACE(c_row_offsets, R * NZI_INDEX_BYTES);
    HYSPMM_PLACE(num_runs, NZI_INDEX_BYTES);
    HYSPMM_PLACE(temp, temp_bytes);
#undef HYSPMM_PLACE
    l->total = at;
}

extern "C" nz_status_t nzi_hyspmm_device_bytes(nz_context_t *ctx, nz_value_type_t vt, int slots,
                                               int64_t max_rows, int64_t max_a_nnz,
                                               int64_t max_products, size_t *bytes) {
    size_t temp = 0;
    slot_layout_t l;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_TRY(nzi_hyspmm_temp_bytes(ctx, vt, max_rows, max_products, &temp));
    nzi_hyspmm_slot_layout(nzi_value_size(vt), max_rows, max_a_nnz, max_products, temp, &l);
    *bytes = l.total * (size_t)slots;
    return NZ_SUCCESS;
}

/*
 * The slots' host side (streams, events, pinned input and output blocks) is pooled: cudaMallocHost
 * of a few GB takes about a second, longer than the GPU stages of a whole product. At the end of
 * a call (nzi_hyspmm_device_destroy) the pipeline is parked in the context's CUDA state
 * (cs->hyspmm_pool) instead of freed; the next call takes it if its pinned blocks are large
 * enough for the new panels (any value type: the blocks are carved again per call), or frees it
 * and allocates larger ones. Device blocks are allocated per call (cudaMalloc is fast, and held
 * device memory would shrink every other operation's budget). A parked pipeline is not counted
 * in the context's allocation statistics (it is the context's, not a call's) and is freed by
 * nz_cuda_context_release; its pinned memory is bounded by NZI_HYSPMM_SLOTS panels of at most
 * NZI_HYSPMM_MAX_PANEL_PRODUCTS products.
 */

/* Bytes of a slot's pinned input and output blocks for panels of these sizes. */
static size_t pinned_in_size(size_t vs, size_t K, size_t R, size_t P) {
    return align_up(K * vs) + align_up((K + 1) * NZI_INDEX_BYTES) + align_up(R * NZI_INDEX_BYTES) +
           align_up(P * NZI_INDEX_BYTES) + align_up(P * vs);
}
static size_t pinned_out_size(size_t vs, size_t R, size_t P) {
    return align_up(R * NZI_INDEX_BYTES) + align_up(P * NZI_INDEX_BYTES) + align_up(P * vs) +
           align_up(NZI_INDEX_BYTES);
}

/* Point the slot's input and output arrays into its pinned blocks for panels of these sizes. */
static void carve_pinned(hyspmm_slot_t *sl, size_t vs, size_t K, size_t R, size_t P) {
    char *in = (char *)sl->pinned_in, *out = (char *)sl->pinned_out;
    sl->in.a_values = in;
    in += align_up(K * vs);
    sl->in.product_offsets = (int32_t *)in;
    in += align_up((K + 1) * NZI_INDEX_BYTES);
    sl->in.row_products = (int32_t *)in;
    in += align_up(R * NZI_INDEX_BYTES);
    sl->in.dup_cols = (int32_t *)in;
    in += align_up(P * NZI_INDEX_BYTES);
    sl->in.dup_values = in;
    sl->out.row_offsets = (int32_t *)out;
    out += align_up(R * NZI_INDEX_BYTES);
    sl->out.col_indices = (int32_t *)out;
    out += align_up(P * NZI_INDEX_BYTES);
    sl->out.values = out;
    out += align_up(P * vs);
    sl->out.c_nnz = (int32_t *)out;
}

/* Count (on = true) or uncount the pipeline's host blocks (struct and pinned) in the context's
 * statistics. Counting is an allocation for failure injection: if one is refused, the ones
 * counted so far are uncounted again and false is returned. */
static bool account_host(nz_context_t *ctx, nzi_hyspmm_device_t *d, bool on) {
    size_t sizes[1 + 2 * NZI_HYSPMM_SLOTS];
    int n = 0;
    sizes[n++] = sizeof *d;
    for (int s = 0; s < d->slots; s++) {
        if (d->slot[s].pinned_in != NULL) sizes[n++] = d->slot[s].pinned_in_bytes;
        if (d->slot[s].pinned_out != NULL) sizes[n++] = d->slot[s].pinned_out_bytes;
    }
    for (int i = 0; i < n; i++) {
        if (!on) {
            nzi_account_free(ctx, sizes[i], false);
        } else if (!nzi_account_alloc(ctx, sizes[i], false)) {
            while (i-- > 0) nzi_account_free(ctx, sizes[i], false);
            return false;
        }
    }
    return true;
}

/* Pinned host memory for a slot (counted by the caller through account_host). */
static nz_status_t pinned_alloc(nz_context_t *ctx, void **ptr, size_t bytes, const char *what) {
    void *p = NULL;
    cudaError_t err = cudaMallocHost(&p, bytes);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        ctx->failed_allocs++;
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                         "nz_spgemm (hyspmm): cannot allocate %zu bytes of pinned %s (%s)", bytes,
                         what, cudaGetErrorString(err));
    }
    *ptr = p;
    return NZ_SUCCESS;
}

/* Free the slots' device blocks (after their streams drained). */
static bool free_device_blocks(nz_context_t *ctx, nzi_hyspmm_device_t *d) {
    bool clean = true;
    for (int s = 0; s < d->slots; s++) {
        hyspmm_slot_t *sl = &d->slot[s];
        if (sl->stream != NULL && cudaStreamSynchronize(sl->stream) != cudaSuccess) clean = false;
        nz_cuda_free(ctx, sl->device_block, sl->device_bytes);
        sl->device_block = NULL;
        sl->device_bytes = 0;
    }
    return clean;
}

/* Free everything of an uncounted pipeline (streams, events, pinned blocks, the struct). */
static void pipeline_free(nz_context_t *ctx, void *object) {
    nzi_hyspmm_device_t *d = (nzi_hyspmm_device_t *)object;
    if (d == NULL) return;
    (void)free_device_blocks(ctx, d);
    for (int s = 0; s < d->slots; s++) {
        hyspmm_slot_t *sl = &d->slot[s];
        if (sl->pinned_in != NULL && cudaFreeHost(sl->pinned_in) != cudaSuccess)
            (void)cudaGetLastError();
        if (sl->pinned_out != NULL && cudaFreeHost(sl->pinned_out) != cudaSuccess)
            (void)cudaGetLastError();
        cudaEvent_t *events[] = {&sl->ev_start, &sl->ev_h2d, &sl->ev_kernels,
                                 &sl->ev_count, &sl->ev_d2h_start, &sl->ev_d2h_end};
        for (size_t e = 0; e < sizeof events / sizeof events[0]; e++)
            if (*events[e] != NULL) (void)cudaEventDestroy(*events[e]);
        if (sl->stream != NULL) (void)cudaStreamDestroy(sl->stream);
    }
    (void)cudaGetLastError();
    free(d);
}

/* End of a call: device blocks freed, the rest parked in the context for the next call (or
 * freed, if the streams reported an error or a pipeline is parked already). */
extern "C" void nzi_hyspmm_device_destroy(nz_context_t *ctx, nzi_hyspmm_device_t **dev) {
    if (dev == NULL || *dev == NULL) return;
    nzi_hyspmm_device_t *d = *dev;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    *dev = NULL;
    (void)nzi_cuda_enter(ctx);
    const bool clean = free_device_blocks(ctx, d);
    account_host(ctx, d, false);
    if (clean && cs != NULL && cs->hyspmm_pool == NULL) {
        cs->hyspmm_pool = d;
        cs->hyspmm_pool_free = pipeline_free;
        return;
    }
    (void)cudaGetLastError();
    pipeline_free(ctx, d);
}

/* The parked pipeline if its pinned blocks hold panels of these sizes (then counted again and
 * handed over), else NULL (a parked one too small is freed). */
static nz_status_t take_parked(nz_context_t *ctx, int slots, size_t in_bytes, size_t out_bytes,
                               nzi_hyspmm_device_t **taken) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    nzi_hyspmm_device_t *d = (nzi_hyspmm_device_t *)cs->hyspmm_pool;
    *taken = NULL;
    if (d == NULL) return NZ_SUCCESS;
    bool fits = d->slots == slots;
    for (int s = 0; fits && s < slots; s++)
        fits = d->slot[s].pinned_in_bytes >= in_bytes && d->slot[s].pinned_out_bytes >= out_bytes;
    if (!fits) { /* free it first: its pinned memory would otherwise sit beside the new one */
        cs->hyspmm_pool = NULL;
        pipeline_free(ctx, d);
        return NZ_SUCCESS;
    }
    if (!account_host(ctx, d, true))
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                         "nz_spgemm (hyspmm): cannot take the pinned staging (injected failure)");
    cs->hyspmm_pool = NULL;
    *taken = d;
    return NZ_SUCCESS;
}

/* A new pipeline's host side: per slot a non-blocking stream, timing events and two pinned
 * blocks (input, output). Fewer, larger allocations: cudaMallocHost is slow. Counted. */
static nz_status_t create_host_side(nz_context_t *ctx, int slots, size_t in_bytes,
                                    size_t out_bytes, nzi_hyspmm_device_t **created) {
    nz_status_t status = NZ_SUCCESS;
    nzi_hyspmm_device_t *d = (nzi_hyspmm_device_t *)calloc(1, sizeof *d);
    if (d == NULL) {
        ctx->failed_allocs++;
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "nz_spgemm (hyspmm): cannot allocate the pipeline");
    }
    d->slots = slots;
    for (int s = 0; s < slots; s++) {
        hyspmm_slot_t *sl = &d->slot[s];
        NZI_CUDA_CHECK(ctx, cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking));
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&sl->ev_start));
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&sl->ev_h2d));
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&sl->ev_kernels));
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&sl->ev_count));
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&sl->ev_d2h_start));
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&sl->ev_d2h_end));
        sl->pinned_in_bytes = in_bytes;
        sl->pinned_out_bytes = out_bytes;
        NZI_CHECK(pinned_alloc(ctx, &sl->pinned_in, in_bytes, "staging input"));
        NZI_CHECK(pinned_alloc(ctx, &sl->pinned_out, out_bytes, "staging output"));
    }
    if (!account_host(ctx, d, true)) {
        status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                           "nz_spgemm (hyspmm): cannot allocate the pinned staging (injected failure)");
        goto cleanup;
    }
    *created = d;
    return NZ_SUCCESS;
cleanup:
    pipeline_free(ctx, d);
    return status;
}

/* Every slot gets its own stream, events and pinned blocks (pooled, above) and one device block
 * (per call) sized for the largest panel. */
extern "C" nz_status_t nzi_hyspmm_device_create(nz_context_t *ctx, nzi_hyspmm_device_t **dev,
                                                nz_value_type_t vt, int slots, int64_t max_rows,
                                                int64_t max_a_nnz, int64_t max_products,
                                                size_t *device_bytes) {
    nz_status_t status = NZ_SUCCESS;
    nzi_hyspmm_device_t *d = NULL;
    const size_t vs = nzi_value_size(vt);
    const size_t P = (size_t)max_products, R = (size_t)max_rows + 1, K = (size_t)max_a_nnz;
    size_t temp = 0;
    slot_layout_t l;

    if (slots < 1 || slots > NZI_HYSPMM_SLOTS || max_products > INT32_MAX || max_rows > INT32_MAX ||
        max_a_nnz >= INT32_MAX)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_spgemm (hyspmm): pipeline sizes out of range (%d slots, %lld rows, "
                         "%lld nonzeros, %lld products)",
                         slots, (long long)max_rows, (long long)max_a_nnz, (long long)max_products);
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_TRY(nzi_hyspmm_temp_bytes(ctx, vt, max_rows, max_products, &temp));
    nzi_hyspmm_slot_layout(vs, max_rows, max_a_nnz, max_products, temp, &l);
    const size_t in_bytes = pinned_in_size(vs, K, R, P), out_bytes = pinned_out_size(vs, R, P);
    NZI_TRY(take_parked(ctx, slots, in_bytes, out_bytes, &d));
    if (d == NULL) {
        /* a quarter more than this call needs, so that the next call's panels (sized from
         * measured rates, or from another product) still fit the parked blocks */
        const size_t P2 = P + P / 4, R2 = R + R / 4, K2 = K + K / 4;
        NZI_TRY(create_host_side(ctx, slots, pinned_in_size(vs, K2, R2, P2),
                                 pinned_out_size(vs, R2, P2), &d));
        d->pinned_products = (int64_t)P2;
        d->pinned_value_size = vs;
    }
    d->value_type = vt;
    d->max_rows = max_rows;
    d->max_a_nnz = max_a_nnz;
    d->max_products = max_products;
    for (int s = 0; s < slots; s++) {
        hyspmm_slot_t *sl = &d->slot[s];
        char *base;
        carve_pinned(sl, vs, K, R, P);
        NZI_CHECK(nz_cuda_malloc(ctx, &sl->device_block, l.total, "nz_spgemm (hyspmm): slot"));
        sl->device_bytes = l.total;
        base = (char *)sl->device_block;
        sl->a_values = base + l.a_values;
        sl->product_offsets = (int32_t *)(base + l.product_offsets);
        sl->row_products = (int32_t *)(base + l.row_products);
        sl->cols[0] = (int32_t *)(base + l.cols[0]);
        sl->cols[1] = (int32_t *)(base + l.cols[1]);
        sl->values[0] = base + l.values[0];
        sl->values[1] = base + l.values[1];
        sl->c_cols = (int32_t *)(base + l.c_cols);
        sl->c_values = base + l.c_values;
        sl->c_row_offsets = (int32_t *)(base + l.c_row_offsets);
        sl->num_runs = (int32_t *)(base + l.num_runs);
        sl->temp = base + l.temp;
        sl->temp_bytes = temp;
    }
    *device_bytes = l.total * (size_t)slots;
    *dev = d;
    return NZ_SUCCESS;
cleanup:
    nzi_hyspmm_device_destroy(ctx, &d);
    return status;
}

extern "C" void nzi_hyspmm_device_set_rates(nzi_hyspmm_device_t *dev, double expand_rate,
                                            double gpu_rate, double panel_overhead) {
    dev->rates[0] = expand_rate;
    dev->rates[1] = gpu_rate;
    dev->rates[2] = panel_overhead;
}

extern "C" void nzi_hyspmm_pooled(nz_context_t *ctx, nz_value_type_t vt, double rates[3],
                                  int64_t *products) {
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const nzi_hyspmm_device_t *d = cs != NULL ? (const nzi_hyspmm_device_t *)cs->hyspmm_pool : NULL;
    for (int i = 0; i < 3; i++) rates[i] = d != NULL ? d->rates[i] : 0.0;
    *products = d != NULL && d->pinned_value_size == nzi_value_size(vt) ? d->pinned_products : 0;
}

extern "C" nzi_hyspmm_input_t *nzi_hyspmm_slot_input(nzi_hyspmm_device_t *dev, int slot) {
    return &dev->slot[slot].in;
}

extern "C" nzi_hyspmm_output_t *nzi_hyspmm_slot_output(nzi_hyspmm_device_t *dev, int slot) {
    return &dev->slot[slot].out;
}
