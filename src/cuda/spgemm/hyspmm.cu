/* hyspmm.cu: hySpMM's GPU stages (multiply, per-row sort, compress) and its streams and pinned slots. */
#include "cuda_internal.h"
#include "hyspmm_device.h"
#include "owner_search.cuh"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cuda/std/functional>

#include <string.h>

/*
 * The device half of hySpMM (Wu, Georgia State 2015, sections 3.1-3.3; the host half and the
 * pipeline order are in src/spgemm/hyspmm_host.c). One panel on one slot, all on the slot's own
 * stream:
 *   H2D        the panel's structure from pinned memory: A's values, the repeat counts in
 *              prefix form, the row segments, the duplicated B (columns, values);
 *   multiply   product p = a[k] * dup_values[p] in place, where k is the nonzero of A whose
 *              repeat range holds p (algorithm 3). Block b takes a tile of TILE consecutive
 *              products; two threads find the tile's first and last k by binary search over the
 *              offsets, then each thread finds its k inside that (short) range. All reads and
 *              writes of the products are contiguous and coalesced;
 *   sort       per-row one-key partial sort (section 3.2): CUB's segmented sort of the columns
 *              (values alongside) with one segment per row of C, stable, so duplicates keep the
 *              order of A's nonzeros. CUB picks a different sort per segment size (warp, block
 *              or radix), which is the thesis's "different sorting algorithm for each group";
 *   compress   head[p] = 1 where a row starts or the column changes; an inclusive scan gives
 *              each product its entry of C; C's row offsets are read off the scan at the row
 *              starts; the heads write C's columns; a reduce-by-key sums each entry's values;
 *   D2H        C's row offsets and entry count (small), then, after the host has read the
 *              count, C's columns and values.
 * Device bytes per product: duplicated B and the sort's alternate buffers (2 x (4 + value)),
 * C's entries (4 + value): 3 x (4 + value). The multiplication-ordered layout replaces ESC's
 * gathers from B with the CPU's copies, and B itself is never on the device.
 * Reproducible: the partition, the stable sort and CUB's scan and reduce-by-key do not depend
 * on timing, so C is bitwise identical run to run (on one device).
 */

#define HYSPMM_BLOCK 256
/* Products per multiply tile: 4 per thread keeps the two boundary searches per block cheap
 * against the tile's work. */
#define HYSPMM_TILE (HYSPMM_BLOCK * 4)
#define HYSPMM_ALIGN 256

typedef struct hyspmm_slot {
    cudaStream_t stream;
    cudaEvent_t ev_start, ev_h2d, ev_kernels, ev_count, ev_d2h_start, ev_d2h_end;
    /* device: one block carved into the arrays below */
    void *device_block;
    size_t device_bytes;
    void *a_values;
    int32_t *product_offsets, *row_products, *cols[2];
    void *values[2];
    int32_t *c_cols, *c_row_offsets, *num_runs;
    void *c_values;
    void *temp;
    size_t temp_bytes;
    /* pinned host: one input block and one output block */
    void *pinned_in, *pinned_out;
    size_t pinned_in_bytes, pinned_out_bytes;
    nzi_hyspmm_input_t in;
    nzi_hyspmm_output_t out;
    /* the panel in flight */
    int64_t rows, products, c_nnz;
} hyspmm_slot_t;

struct nzi_hyspmm_device {
    nz_value_type_t value_type;
    int slots;
    int64_t max_rows, max_a_nnz, max_products;
    double rates[3];           /* nzi_hyspmm_device_set_rates */
    /* what the pinned blocks were sized for (slack included): products of this value size */
    int64_t pinned_products;
    size_t pinned_value_size;
    hyspmm_slot_t slot[NZI_HYSPMM_SLOTS];
};

static size_t align_up(size_t bytes) { return (bytes + HYSPMM_ALIGN - 1) / HYSPMM_ALIGN * HYSPMM_ALIGN; }

/* Block b: products [b TILE, (b+1) TILE); thread t: products t, t + BLOCK, ... of the tile. */
template <typename Value>
__global__ void __launch_bounds__(HYSPMM_BLOCK)
hyspmm_multiply_kernel(int32_t products, int32_t a_nnz, const int32_t *__restrict__ offsets,
                       const Value *__restrict__ a_values, Value *__restrict__ dup_values) {
    __shared__ int32_t range[2];
    const int64_t tile_begin = (int64_t)blockIdx.x * HYSPMM_TILE;
    const int64_t tile_end = tile_begin + HYSPMM_TILE < products ? tile_begin + HYSPMM_TILE
                                                                 : (int64_t)products;
    if (threadIdx.x < 2) {
        const int32_t target = (int32_t)(threadIdx.x == 0 ? tile_begin : tile_end - 1);
        range[threadIdx.x] = owner_search<int32_t>(offsets, 0, a_nnz - 1, target);
    }
    __syncthreads();
    for (int64_t p = tile_begin + threadIdx.x; p < tile_end; p += HYSPMM_BLOCK) {
        const int32_t k = owner_search<int32_t>(offsets, range[0], range[1], (int32_t)p);
        dup_values[p] = a_values[k] * dup_values[p];
    }
}

/* head[p] = 1 where the column differs from the previous product's (thread per product). */
__global__ void hyspmm_head_kernel(int32_t products, const int32_t *__restrict__ cols,
                                   int32_t *__restrict__ head) {
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < products;
         p += (int64_t)gridDim.x * blockDim.x)
        head[p] = (p == 0 || cols[p] != cols[p - 1]) ? 1 : 0;
}

/* Every non-empty row starts a new entry of C (thread per row; runs after the head kernel). */
__global__ void hyspmm_row_head_kernel(int32_t rows, const int32_t *__restrict__ row_products,
                                       int32_t *__restrict__ head) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
         i += (int64_t)gridDim.x * blockDim.x)
        if (row_products[i] < row_products[i + 1]) head[row_products[i]] = 1;
}

/* C's local row offsets from the inclusive scan of the heads: the entries before row i's first
 * product (a head, or the end, for every row including empty ones). Thread per row, rows + 1. */
__global__ void hyspmm_row_offsets_kernel(int32_t rows, int32_t products,
                                          const int32_t *__restrict__ row_products,
                                          const int32_t *__restrict__ entry,
                                          int32_t *__restrict__ c_row_offsets) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= rows;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int32_t p = row_products[i];
        c_row_offsets[i] = p < products ? entry[p] - 1 : entry[products - 1];
    }
}

/* The head of each entry writes its column (thread per product). */
__global__ void hyspmm_columns_kernel(int32_t products, const int32_t *__restrict__ cols,
                                      const int32_t *__restrict__ head,
                                      const int32_t *__restrict__ entry,
                                      int32_t *__restrict__ c_cols) {
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < products;
         p += (int64_t)gridDim.x * blockDim.x)
        if (head[p]) c_cols[entry[p] - 1] = cols[p];
}

/* CUB workspace for a slot: the largest of the three CUB calls at the largest panel. */
template <typename Value>
static cudaError_t cub_temp_bytes(int64_t max_rows, int64_t max_products, size_t *bytes) {
    size_t sort = 0, scan = 0, reduce = 0;
    cub::DoubleBuffer<int32_t> keys(NULL, NULL);
    cub::DoubleBuffer<Value> values(NULL, NULL);
    const int32_t *offsets = NULL;
    int32_t *ints = NULL;
    Value *vals = NULL;
    cudaError_t err = cub::DeviceSegmentedSort::StableSortPairs(
        NULL, sort, keys, values, (int64_t)max_products, (int64_t)max_rows, offsets, offsets + 1);
    if (err != cudaSuccess) return err;
    err = cub::DeviceScan::InclusiveSum(NULL, scan, ints, ints, (int)max_products);
    if (err != cudaSuccess) return err;
    err = cub::DeviceReduce::ReduceByKey(NULL, reduce, ints, ints, vals, vals, ints,
                                         ::cuda::std::plus<Value>(), (int)max_products);
    if (err != cudaSuccess) return err;
    *bytes = sort > scan ? sort : scan;
    if (reduce > *bytes) *bytes = reduce;
    return cudaSuccess;
}

/* The device layout of one slot (offsets into its block); returns the block's size. */
typedef struct slot_layout {
    size_t a_values, product_offsets, row_products, cols[2], values[2], c_cols, c_values,
        c_row_offsets, num_runs, temp, total;
} slot_layout_t;

static void slot_layout(size_t vs, int64_t max_rows, int64_t max_a_nnz, int64_t max_products,
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

static nz_status_t temp_bytes_for(nz_context_t *ctx, nz_value_type_t vt, int64_t max_rows,
                                  int64_t max_products, size_t *bytes) {
    cudaError_t err = vt == NZ_F32 ? cub_temp_bytes<float>(max_rows, max_products, bytes)
                                   : cub_temp_bytes<double>(max_rows, max_products, bytes);
    if (err != cudaSuccess)
        return nzi_cuda_status(ctx, err, "CUB workspace query (hyspmm)", __FILE__, __LINE__);
    return NZ_SUCCESS;
}

extern "C" nz_status_t nzi_hyspmm_device_bytes(nz_context_t *ctx, nz_value_type_t vt, int slots,
                                               int64_t max_rows, int64_t max_a_nnz,
                                               int64_t max_products, size_t *bytes) {
    size_t temp = 0;
    slot_layout_t l;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_TRY(temp_bytes_for(ctx, vt, max_rows, max_products, &temp));
    slot_layout(nzi_value_size(vt), max_rows, max_a_nnz, max_products, temp, &l);
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
    NZI_TRY(temp_bytes_for(ctx, vt, max_rows, max_products, &temp));
    slot_layout(vs, max_rows, max_a_nnz, max_products, temp, &l);
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

/* The GPU stages of one panel (see the file comment), queued on the slot's stream. */
template <typename Value>
static nz_status_t enqueue_stages(nz_context_t *ctx, hyspmm_slot_t *sl, int32_t rows,
                                  int32_t a_nnz, int32_t products) {
    nz_status_t status = NZ_SUCCESS;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    cudaStream_t stream = sl->stream;
    size_t temp = 0;
    const int block = HYSPMM_BLOCK;
    const int64_t product_blocks = nzi_cuda_grid_blocks(cs, block, 4, (products + block - 1) / block);
    const int64_t row_blocks = nzi_cuda_grid_blocks(cs, block, 4, ((int64_t)rows + block) / block);
    cub::DoubleBuffer<int32_t> keys(sl->cols[0], sl->cols[1]);
    cub::DoubleBuffer<Value> values((Value *)sl->values[0], (Value *)sl->values[1]);
    int32_t *cols, *head, *entry;
    Value *sorted;

    hyspmm_multiply_kernel<Value><<<(unsigned)((products + HYSPMM_TILE - 1) / HYSPMM_TILE),
                                    HYSPMM_BLOCK, 0, stream>>>(
        products, a_nnz, sl->product_offsets, (const Value *)sl->a_values, (Value *)sl->values[0]);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());

    NZI_CUDA_CHECK(ctx, cub::DeviceSegmentedSort::StableSortPairs(
                            NULL, temp, keys, values, (int64_t)products, (int64_t)rows,
                            sl->row_products, sl->row_products + 1, stream));
    if (temp > sl->temp_bytes) {
        status = nzi_error(ctx, NZ_ERR_DEVICE, "nz_spgemm (hyspmm): the sort needs %zu bytes of "
                           "workspace, %zu reserved", temp, sl->temp_bytes);
        goto cleanup;
    }
    temp = sl->temp_bytes;
    NZI_CUDA_CHECK(ctx, cub::DeviceSegmentedSort::StableSortPairs(
                            sl->temp, temp, keys, values, (int64_t)products, (int64_t)rows,
                            sl->row_products, sl->row_products + 1, stream));
    cols = keys.Current();
    head = keys.Alternate();
    sorted = values.Current();
    entry = (int32_t *)values.Alternate(); /* free after the sort; value size >= 4 */

    hyspmm_head_kernel<<<(unsigned)product_blocks, block, 0, stream>>>(products, cols, head);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    hyspmm_row_head_kernel<<<(unsigned)row_blocks, block, 0, stream>>>(rows, sl->row_products, head);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    temp = sl->temp_bytes;
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(sl->temp, temp, head, entry, (int)products,
                                                      stream));
    hyspmm_row_offsets_kernel<<<(unsigned)row_blocks, block, 0, stream>>>(
        rows, products, sl->row_products, entry, sl->c_row_offsets);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    hyspmm_columns_kernel<<<(unsigned)product_blocks, block, 0, stream>>>(products, cols, head,
                                                                         entry, sl->c_cols);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    /* head is dead now; it receives the reduce-by-key's (unused) unique keys. */
    temp = sl->temp_bytes;
    NZI_CUDA_CHECK(ctx, cub::DeviceReduce::ReduceByKey(sl->temp, temp, entry, head, sorted,
                                                       (Value *)sl->c_values, sl->num_runs,
                                                       ::cuda::std::plus<Value>(), (int)products,
                                                       stream));
cleanup:
    return status;
}

extern "C" nz_status_t nzi_hyspmm_enqueue(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                                          int64_t rows, int64_t a_nnz, int64_t products) {
    nz_status_t status = NZ_SUCCESS;
    hyspmm_slot_t *sl = &dev->slot[slot];
    const size_t vs = nzi_value_size(dev->value_type);
    cudaStream_t stream = sl->stream;
    if (rows > dev->max_rows || a_nnz > dev->max_a_nnz || products > dev->max_products)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_spgemm (hyspmm): panel larger than its slot");
    NZI_TRY(nzi_cuda_enter(ctx));
    sl->rows = rows;
    sl->products = products;
    sl->c_nnz = 0;
    NZI_CUDA_CHECK(ctx, cudaEventRecord(sl->ev_start, stream));
    if (products > 0) {
        NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(sl->a_values, sl->in.a_values, (size_t)a_nnz * vs,
                                            cudaMemcpyHostToDevice, stream));
        NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(sl->product_offsets, sl->in.product_offsets,
                                            ((size_t)a_nnz + 1) * NZI_INDEX_BYTES, cudaMemcpyHostToDevice,
                                            stream));
        NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(sl->row_products, sl->in.row_products,
                                            ((size_t)rows + 1) * NZI_INDEX_BYTES, cudaMemcpyHostToDevice,
                                            stream));
        NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(sl->cols[0], sl->in.dup_cols, (size_t)products * NZI_INDEX_BYTES,
                                            cudaMemcpyHostToDevice, stream));
        NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(sl->values[0], sl->in.dup_values,
                                            (size_t)products * vs, cudaMemcpyHostToDevice, stream));
    }
    NZI_CUDA_CHECK(ctx, cudaEventRecord(sl->ev_h2d, stream));
    if (products > 0) {
        if (dev->value_type == NZ_F32)
            NZI_CHECK(enqueue_stages<float>(ctx, sl, (int32_t)rows, (int32_t)a_nnz,
                                            (int32_t)products));
        else
            NZI_CHECK(enqueue_stages<double>(ctx, sl, (int32_t)rows, (int32_t)a_nnz,
                                             (int32_t)products));
    } else {
        /* No products: every row of the panel is empty in C. */
        NZI_CUDA_CHECK(ctx, cudaMemsetAsync(sl->c_row_offsets, 0, ((size_t)rows + 1) * NZI_INDEX_BYTES, stream));
        NZI_CUDA_CHECK(ctx, cudaMemsetAsync(sl->num_runs, 0, NZI_INDEX_BYTES, stream));
    }
    NZI_CUDA_CHECK(ctx, cudaEventRecord(sl->ev_kernels, stream));
    NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(sl->out.row_offsets, sl->c_row_offsets,
                                        ((size_t)rows + 1) * NZI_INDEX_BYTES, cudaMemcpyDeviceToHost, stream));
    NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(sl->out.c_nnz, sl->num_runs, NZI_INDEX_BYTES, cudaMemcpyDeviceToHost,
                                        stream));
    NZI_CUDA_CHECK(ctx, cudaEventRecord(sl->ev_count, stream));
cleanup:
    return status;
}

extern "C" nz_status_t nzi_hyspmm_fetch(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                                        int64_t *c_nnz) {
    nz_status_t status = NZ_SUCCESS;
    hyspmm_slot_t *sl = &dev->slot[slot];
    const size_t vs = nzi_value_size(dev->value_type);
    int64_t n;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CUDA_CHECK(ctx, cudaEventSynchronize(sl->ev_count));
    n = *sl->out.c_nnz;
    if (n < 0 || n > sl->products || sl->out.row_offsets[sl->rows] != n) {
        status = nzi_error(ctx, NZ_ERR_DEVICE,
                           "nz_spgemm (hyspmm): the panel's entry count %lld is inconsistent "
                           "(products %lld, row offsets end %d)",
                           (long long)n, (long long)sl->products, sl->out.row_offsets[sl->rows]);
        goto cleanup;
    }
    sl->c_nnz = n;
    NZI_CUDA_CHECK(ctx, cudaEventRecord(sl->ev_d2h_start, sl->stream));
    if (n > 0) {
        NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(sl->out.col_indices, sl->c_cols, (size_t)n * NZI_INDEX_BYTES,
                                            cudaMemcpyDeviceToHost, sl->stream));
        NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(sl->out.values, sl->c_values, (size_t)n * vs,
                                            cudaMemcpyDeviceToHost, sl->stream));
    }
    NZI_CUDA_CHECK(ctx, cudaEventRecord(sl->ev_d2h_end, sl->stream));
    *c_nnz = n;
cleanup:
    return status;
}

extern "C" nz_status_t nzi_hyspmm_wait(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                                       nzi_hyspmm_times_t *times) {
    nz_status_t status = NZ_SUCCESS;
    hyspmm_slot_t *sl = &dev->slot[slot];
    float h2d = 0.0f, multiply = 0.0f, small = 0.0f, large = 0.0f;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CUDA_CHECK(ctx, cudaEventSynchronize(sl->ev_d2h_end));
    NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&h2d, sl->ev_start, sl->ev_h2d));
    NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&multiply, sl->ev_h2d, sl->ev_kernels));
    NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&small, sl->ev_kernels, sl->ev_count));
    NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&large, sl->ev_d2h_start, sl->ev_d2h_end));
    times->h2d = 1e-3 * h2d;
    times->multiply = 1e-3 * multiply;
    times->d2h = 1e-3 * ((double)small + (double)large);
cleanup:
    return status;
}
