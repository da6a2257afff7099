/* spgemm_esc.cu: GPU SpGEMM by expand, sort, compress (Bell, Dalton & Olson; CUSP), in row panels. */
#include "cuda_internal.h"
#include "owner_search.cuh"
#include "spgemm_common.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <string.h>

/*
 * ESC after Bell, Dalton & Olson, "Exposing fine-grained parallelism in algebraic multigrid
 * methods" (SISC 2012) and CUSP's generic multiply:
 *   setup     A and B go to the device once; each nonzero k of A gets its product offset
 *             (exclusive scan of nnz(row col(k) of B)) and its row;
 *   expand    every product a_ik b_kj of the panel becomes a pair (key, value) with the 64-bit
 *             key (i - row_begin) << col_bits | j. Block b takes a tile of TILE consecutive
 *             products; two threads find the tile's first and last nonzero of A by binary search
 *             over the product offsets, each thread then finds its own in that range: balanced
 *             whatever the row lengths, reads of B's rows contiguous within a row;
 *   sort      CUB's LSD radix sort of the pairs, only over the key bits in use (row bits of the
 *             panel + column bits of B), stable, so equal keys keep expansion order;
 *   compress  CUB's reduce-by-key sums equal keys; a thread per entry decodes its column, a
 *             thread per row finds its first entry by binary search over the sorted keys;
 *   copy      C's rows of the panel come back to host memory (pageable) after each panel.
 * Panels: when the expanded products do not fit the budget (nzi_device_memory_budget, less what
 * A, B and their offsets hold), rows are split with nzi_spgemm_split under
 * per_product = 2 x (8 + value bytes) (the key and value buffers and their alternates).
 * A panel holds fewer than 2^31 products (CUB's int item counts).
 * Cost: O(products) work and memory per panel plus the radix sort's passes over 8 + value bytes.
 * Reproducible: LSD radix sort is stable and the reduce-by-key order is fixed, so C is bitwise
 * identical run to run (on one device).
 */

#define ESC_BLOCK 256
#define ESC_TILE (ESC_BLOCK * 4)
/* Bytes for the small allocations outside the cost model (entry count, one-past-the-end
 * entries, one-byte minimum blocks). */
#define ESC_SLACK 256
/* Device bytes of a sort key (panel row bits | column bits). */
#define KEY_BYTES ((size_t)sizeof(uint64_t))

/* product_offsets[k + 1] = nnz of B's row col(k) (thread per nonzero of A). */
__global__ void esc_count_kernel(int64_t a_nnz, const int32_t *__restrict__ a_cols,
                                 const int64_t *__restrict__ b_offsets,
                                 int64_t *__restrict__ product_offsets) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < a_nnz;
         k += (int64_t)gridDim.x * blockDim.x) {
        const int32_t j = a_cols[k];
        product_offsets[k + 1] = b_offsets[j + 1] - b_offsets[j];
    }
}

/* a_row[k] = the row of nonzero k of A (thread per nonzero, binary search over row offsets). */
__global__ void esc_row_kernel(int64_t rows, int64_t a_nnz, const int64_t *__restrict__ a_offsets,
                               int32_t *__restrict__ a_row) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < a_nnz;
         k += (int64_t)gridDim.x * blockDim.x)
        a_row[k] = (int32_t)owner_search<int64_t>(a_offsets, 0, rows - 1, k);
}

/* Block b: the panel's products [b TILE, (b+1) TILE); thread t: t, t + BLOCK, ... of the tile.
 * Products are numbered globally (product_base = the panel's first); keys are panel-local. */
template <typename Value>
__global__ void __launch_bounds__(ESC_BLOCK)
esc_expand_kernel(int64_t products, int64_t product_base, int64_t k_begin, int64_t k_end,
                  const int64_t *__restrict__ product_offsets, const int32_t *__restrict__ a_row,
                  int32_t row_begin, const int32_t *__restrict__ a_cols,
                  const Value *__restrict__ a_values, const int64_t *__restrict__ b_offsets,
                  const int32_t *__restrict__ b_cols, const Value *__restrict__ b_values,
                  int col_bits, uint64_t *__restrict__ keys, Value *__restrict__ values) {
    __shared__ int64_t range[2];
    const int64_t tile_begin = (int64_t)blockIdx.x * ESC_TILE;
    const int64_t tile_end = tile_begin + ESC_TILE < products ? tile_begin + ESC_TILE : products;
    if (threadIdx.x < 2) {
        const int64_t target = product_base + (threadIdx.x == 0 ? tile_begin : tile_end - 1);
        range[threadIdx.x] = owner_search<int64_t>(product_offsets, k_begin, k_end - 1, target);
    }
    __syncthreads();
    for (int64_t p = tile_begin + threadIdx.x; p < tile_end; p += ESC_BLOCK) {
        const int64_t g = product_base + p;
        const int64_t k = owner_search<int64_t>(product_offsets, range[0], range[1], g);
        const int64_t b = b_offsets[a_cols[k]] + (g - product_offsets[k]);
        keys[p] = ((uint64_t)(uint32_t)(a_row[k] - row_begin) << col_bits) | (uint32_t)b_cols[b];
        values[p] = a_values[k] * b_values[b];
    }
}

/* C's column of entry u from its key (thread per entry). */
__global__ void esc_columns_kernel(int64_t entries, const uint64_t *__restrict__ keys, uint64_t mask,
                                   int32_t *__restrict__ cols) {
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < entries;
         u += (int64_t)gridDim.x * blockDim.x)
        cols[u] = (int32_t)(keys[u] & mask);
}

/* row_offsets[i] = the entries whose key is below row i's first key (thread per row, rows + 1;
 * binary search over the sorted unique keys), empty rows included. */
__global__ void esc_row_offsets_kernel(int32_t rows, int64_t entries,
                                       const uint64_t *__restrict__ keys, int col_bits,
                                       int32_t *__restrict__ row_offsets) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= rows;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t first = (uint64_t)i << col_bits;
        int64_t low = 0, high = entries;
        while (low < high) {
            const int64_t mid = low + (high - low) / 2;
            if (keys[mid] < first)
                low = mid + 1;
            else
                high = mid;
        }
        row_offsets[i] = (int32_t)low;
    }
}

static int bits_for(int64_t max_value) {
    int bits = 1;
    while (bits < 62 && ((int64_t)1 << bits) <= max_value) bits++;
    return bits;
}

/* CUB workspace for the largest panel (sort and reduce-by-key share it). */
template <typename Value>
static cudaError_t esc_temp_bytes(int64_t a_nnz, int64_t max_products, size_t *bytes) {
    size_t sort = 0, reduce = 0, scan = 0;
    cub::DoubleBuffer<uint64_t> keys(NULL, NULL);
    cub::DoubleBuffer<Value> values(NULL, NULL);
    uint64_t *k = NULL;
    Value *v = NULL;
    int32_t *runs = NULL;
    int64_t *offsets = NULL;
    cudaError_t err = cub::DeviceRadixSort::SortPairs(NULL, sort, keys, values, (int)max_products,
                                                      0, 64);
    if (err != cudaSuccess) return err;
    err = cub::DeviceReduce::ReduceByKey(NULL, reduce, k, k, v, v, runs,
                                         ::cuda::std::plus<Value>(), (int)max_products);
    if (err != cudaSuccess) return err;
    err = cub::DeviceScan::InclusiveSum(NULL, scan, offsets, offsets, a_nnz);
    if (err != cudaSuccess) return err;
    *bytes = sort > reduce ? sort : reduce;
    if (scan > *bytes) *bytes = scan;
    return cudaSuccess;
}

typedef struct esc_work {
    /* inputs on the device */
    int64_t *a_offsets, *b_offsets, *product_offsets;
    int32_t *a_cols, *b_cols, *a_row;
    void *a_values, *b_values;
    /* per panel */
    uint64_t *keys[2];
    void *values[2];
    int32_t *row_offsets, *num_runs;
    void *temp;
    size_t temp_bytes;
    /* host staging of one panel's C */
    int32_t *h_row_offsets, *h_cols;
    void *h_values;
} esc_work_t;

static void esc_work_free(nz_context_t *ctx, esc_work_t *w) {
    void *device[] = {w->a_offsets, w->b_offsets, w->product_offsets, w->a_cols, w->b_cols,
                      w->a_row, w->a_values, w->b_values, w->keys[0], w->keys[1], w->values[0],
                      w->values[1], w->row_offsets, w->num_runs, w->temp};
    for (size_t i = 0; i < sizeof device / sizeof device[0]; i++)
        nz_cuda_free(ctx, device[i], (size_t)-1);
    nzi_free(ctx, w->h_row_offsets);
    nzi_free(ctx, w->h_cols);
    nzi_free(ctx, w->h_values);
    memset(w, 0, sizeof *w);
}

static nz_status_t upload(nz_context_t *ctx, void **dst, const void *src, size_t bytes,
                          const char *what) {
    NZI_TRY(nz_cuda_malloc(ctx, dst, bytes, what));
    return nz_cuda_memcpy(ctx, *dst, src, bytes, NZI_H2D);
}

/* One panel: expand, sort, compress on the device, then C's rows into w's host staging.
 * *entries receives the panel's C entries. */
template <typename Value>
static nz_status_t esc_panel(nz_context_t *ctx, esc_work_t *w, const nz_matrix_t *A,
                             const nz_matrix_t *B, const nzi_spgemm_panel_t *panel,
                             int64_t product_base, int64_t *entries) {
    nz_status_t status = NZ_SUCCESS;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    cudaStream_t stream = cs->stream;
    const int64_t products = panel->products, rows = panel->row_end - panel->row_begin;
    const int col_bits = bits_for(B->cols - 1), row_bits = bits_for(rows - 1);
    const int64_t *a_host_offsets = A->host.csr.row_offsets;
    cub::DoubleBuffer<uint64_t> keys(w->keys[0], w->keys[1]);
    cub::DoubleBuffer<Value> values((Value *)w->values[0], (Value *)w->values[1]);
    const int block = ESC_BLOCK;
    size_t temp = w->temp_bytes;
    int32_t runs = 0;

    *entries = 0;
    if (products == 0) {
        memset(w->h_row_offsets, 0, ((size_t)rows + 1) * sizeof(int32_t));
        return NZ_SUCCESS;
    }
    esc_expand_kernel<Value><<<(unsigned)((products + ESC_TILE - 1) / ESC_TILE), ESC_BLOCK, 0,
                               stream>>>(
        products, product_base, a_host_offsets[panel->row_begin], a_host_offsets[panel->row_end],
        w->product_offsets, w->a_row, (int32_t)panel->row_begin, w->a_cols,
        (const Value *)w->a_values, w->b_offsets, w->b_cols, (const Value *)w->b_values, col_bits,
        keys.Current(), values.Current());
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(w->temp, temp, keys, values, (int)products,
                                                        0, col_bits + row_bits, stream));
    temp = w->temp_bytes;
    NZI_CUDA_CHECK(ctx, cub::DeviceReduce::ReduceByKey(
                            w->temp, temp, keys.Current(), keys.Alternate(), values.Current(),
                            values.Alternate(), w->num_runs, ::cuda::std::plus<Value>(),
                            (int)products, stream));
    NZI_CHECK(nz_cuda_memcpy(ctx, &runs, w->num_runs, sizeof runs, NZI_D2H));
    if (runs < 0 || runs > products) {
        status = nzi_error(ctx, NZ_ERR_DEVICE, "nz_spgemm (esc): entry count %d out of range", runs);
        goto cleanup;
    }
    {
        int32_t *cols = (int32_t *)keys.Current(); /* free after the reduce-by-key */
        const uint64_t *unique = keys.Alternate();
        esc_columns_kernel<<<(unsigned)nzi_cuda_grid_blocks(cs, block, 4, (runs + block - 1) / block),
                             block, 0, stream>>>(runs, unique, ((uint64_t)1 << col_bits) - 1, cols);
        NZI_CUDA_CHECK(ctx, cudaGetLastError());
        esc_row_offsets_kernel<<<(unsigned)nzi_cuda_grid_blocks(cs, block, 4, (rows + block) / block),
                                 block, 0, stream>>>((int32_t)rows, runs, unique, col_bits,
                                                     w->row_offsets);
        NZI_CUDA_CHECK(ctx, cudaGetLastError());
        NZI_CHECK(nz_cuda_memcpy(ctx, w->h_row_offsets, w->row_offsets,
                                 ((size_t)rows + 1) * sizeof(int32_t), NZI_D2H));
        NZI_CHECK(nz_cuda_memcpy(ctx, w->h_cols, cols, (size_t)runs * sizeof(int32_t), NZI_D2H));
        NZI_CHECK(nz_cuda_memcpy(ctx, w->h_values, values.Alternate(), (size_t)runs * sizeof(Value),
                                 NZI_D2H));
    }
    *entries = runs;
cleanup:
    return status;
}

/* The panels under the budget: C's rows split so that a panel's products fit what A, B and
 * their offsets (fixed) and CUB's workspace leave; the workspace is sized for the largest panel,
 * which shrinks the room, so the split is redone (a few rounds at most) until the workspace it
 * needs fits the one assumed. *temp: the workspace bytes; *max_products, *max_rows: the largest
 * panel's (the per-panel buffers' sizes). */
static nz_status_t esc_plan_panels(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B,
                                   const int64_t *products, size_t budget,
                                   nzi_spgemm_panel_t **panels, int64_t *count,
                                   int64_t *max_products, int64_t *max_rows, size_t *temp) {
    const nz_value_type_t vt = A->value_type;
    const size_t vs = nzi_value_size(vt);
    const int64_t rows = A->rows, a_nnz = A->nnz, b_nnz = B->nnz;
    nzi_spgemm_panel_cost_t cost;
    nzi_spgemm_split_input_t split;
    size_t fixed = 0;
    cudaError_t err;

    /* A, B, A's product offsets and rows stay on the device for the whole call, with room for
     * C's local row offsets of any panel (4 bytes per row of A). */
    fixed = ((size_t)rows + 1) * NZI_OFFSET_BYTES + (size_t)a_nnz * (NZI_INDEX_BYTES + vs) +
            ((size_t)B->rows + 1) * NZI_OFFSET_BYTES + (size_t)b_nnz * (NZI_INDEX_BYTES + vs) +
            ((size_t)a_nnz + 1) * NZI_OFFSET_BYTES + (size_t)a_nnz * NZI_INDEX_BYTES +
            ((size_t)rows + 1) * NZI_INDEX_BYTES + ESC_SLACK;
    cost.fixed = 0.0;
    cost.per_row = 0.0;
    cost.per_a_nonzero = 0.0;
    cost.per_product = 2.0 * ((double)KEY_BYTES + (double)vs);
    cost.per_output = 0.0;
    memset(&split, 0, sizeof split);
    split.products = products;
    split.rows = rows;
    split.b_cols = B->cols;
    split.who = "esc";
    for (int round = 0;; round++) {
        double room = (double)budget - (double)fixed - (double)*temp;
        const double cap = (double)(INT32_MAX - 1) * cost.per_product;
        if (room < 0.0) room = 0.0;
        if (room > cap) room = cap;
        nzi_free(ctx, *panels);
        *panels = NULL;
        NZI_TRY(nzi_spgemm_split(ctx, &split, &cost, room, panels, count));
        *max_products = *max_rows = 0;
        for (int64_t q = 0; q < *count; q++) {
            if ((*panels)[q].products > *max_products) *max_products = (*panels)[q].products;
            if ((*panels)[q].row_end - (*panels)[q].row_begin > *max_rows)
                *max_rows = (*panels)[q].row_end - (*panels)[q].row_begin;
        }
        size_t need = 0;
        err = vt == NZ_F32 ? esc_temp_bytes<float>(a_nnz, *max_products, &need)
                           : esc_temp_bytes<double>(a_nnz, *max_products, &need);
        NZI_CUDA_TRY(ctx, err);
        if (need <= *temp) return NZ_SUCCESS;
        if (round == 3)
            return nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                             "nz_spgemm (esc): the sort workspace does not fit the budget of "
                             "%zu bytes",
                             budget);
        *temp = need + need / 4;
    }
}

/* The call's device memory, in w: A and B uploaded (*transfer: their copy time), A's product
 * offsets and rows, the panels' keys, values, row offsets and entry count, CUB's workspace of
 * temp bytes; and the host staging of one panel's C. A failure leaves w for esc_work_free. */
static nz_status_t esc_work_alloc(nz_context_t *ctx, esc_work_t *w, const nz_matrix_t *A,
                                  const nz_matrix_t *B, int64_t max_products, int64_t max_rows,
                                  size_t temp, double *transfer) {
    const size_t vs = nzi_value_size(A->value_type);
    const int64_t rows = A->rows, a_nnz = A->nnz, b_nnz = B->nnz;
    const double t = nzi_wtime();
    NZI_TRY(upload(ctx, (void **)&w->a_offsets, A->host.csr.row_offsets,
                   ((size_t)rows + 1) * NZI_OFFSET_BYTES, "nz_spgemm (esc): A row offsets"));
    NZI_TRY(upload(ctx, (void **)&w->a_cols, A->host.csr.col_indices,
                   (size_t)a_nnz * NZI_INDEX_BYTES, "nz_spgemm (esc): A column indices"));
    NZI_TRY(upload(ctx, &w->a_values, A->host.csr.values, (size_t)a_nnz * vs,
                   "nz_spgemm (esc): A values"));
    NZI_TRY(upload(ctx, (void **)&w->b_offsets, B->host.csr.row_offsets,
                   ((size_t)B->rows + 1) * NZI_OFFSET_BYTES, "nz_spgemm (esc): B row offsets"));
    NZI_TRY(upload(ctx, (void **)&w->b_cols, B->host.csr.col_indices,
                   (size_t)b_nnz * NZI_INDEX_BYTES, "nz_spgemm (esc): B column indices"));
    NZI_TRY(upload(ctx, &w->b_values, B->host.csr.values, (size_t)b_nnz * vs,
                   "nz_spgemm (esc): B values"));
    *transfer += nzi_wtime() - t;
    NZI_TRY(nz_cuda_malloc(ctx, (void **)&w->product_offsets,
                           ((size_t)a_nnz + 1) * NZI_OFFSET_BYTES,
                           "nz_spgemm (esc): product offsets"));
    NZI_TRY(nz_cuda_malloc(ctx, (void **)&w->a_row, ((size_t)a_nnz + 1) * NZI_INDEX_BYTES,
                           "nz_spgemm (esc): rows of A's nonzeros"));
    NZI_TRY(nz_cuda_malloc(ctx, (void **)&w->keys[0], (size_t)max_products * KEY_BYTES,
                           "nz_spgemm (esc): keys"));
    NZI_TRY(nz_cuda_malloc(ctx, (void **)&w->keys[1], (size_t)max_products * KEY_BYTES,
                           "nz_spgemm (esc): keys"));
    NZI_TRY(nz_cuda_malloc(ctx, &w->values[0], (size_t)max_products * vs,
                           "nz_spgemm (esc): values"));
    NZI_TRY(nz_cuda_malloc(ctx, &w->values[1], (size_t)max_products * vs,
                           "nz_spgemm (esc): values"));
    NZI_TRY(nz_cuda_malloc(ctx, (void **)&w->row_offsets, ((size_t)rows + 1) * NZI_INDEX_BYTES,
                           "nz_spgemm (esc): panel row offsets"));
    NZI_TRY(nz_cuda_malloc(ctx, (void **)&w->num_runs, sizeof(int32_t),
                           "nz_spgemm (esc): entry count"));
    NZI_TRY(nz_cuda_malloc(ctx, &w->temp, temp, "nz_spgemm (esc): CUB workspace"));
    w->temp_bytes = temp;
    NZI_TRY(nzi_alloc_array(ctx, (void **)&w->h_row_offsets, (size_t)max_rows + 1, 4,
                            "nz_spgemm (esc): panel row offsets"));
    NZI_TRY(nzi_alloc_array(ctx, (void **)&w->h_cols, (size_t)max_products, 4,
                            "nz_spgemm (esc): panel columns"));
    return nzi_alloc_array(ctx, &w->h_values, (size_t)max_products, vs,
                           "nz_spgemm (esc): panel values");
}

/* Queues the setup kernels on the context's stream: each nonzero k of A gets its product offset
 * (the inclusive scan, in CUB's workspace, of nnz(row col(k) of B) behind a leading 0) and its
 * row. The caller synchronises. */
static nz_status_t esc_product_offsets(nz_context_t *ctx, esc_work_t *w, int64_t rows,
                                       int64_t a_nnz) {
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    cudaStream_t stream = cs->stream;
    const unsigned grid =
        (unsigned)nzi_cuda_grid_blocks(cs, ESC_BLOCK, 4, (a_nnz + ESC_BLOCK - 1) / ESC_BLOCK);
    size_t scan = w->temp_bytes;
    NZI_CUDA_TRY(ctx, cudaMemsetAsync(w->product_offsets, 0, sizeof(int64_t), stream));
    esc_count_kernel<<<grid, ESC_BLOCK, 0, stream>>>(a_nnz, w->a_cols, w->b_offsets,
                                                     w->product_offsets);
    NZI_CUDA_TRY(ctx, cudaGetLastError());
    NZI_CUDA_TRY(ctx, cub::DeviceScan::InclusiveSum(w->temp, scan, w->product_offsets + 1,
                                                    w->product_offsets + 1, a_nnz, stream));
    esc_row_kernel<<<grid, ESC_BLOCK, 0, stream>>>(rows, a_nnz, w->a_offsets, w->a_row);
    NZI_CUDA_TRY(ctx, cudaGetLastError());
    return NZ_SUCCESS;
}

/* Setup (upload, product offsets and rows of A's nonzeros), the panel split against the budget,
 * then panel by panel; C is assembled on the host from the panels' rows. */
extern "C" nz_status_t nzi_spgemm_esc(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                                      const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                                      nz_spgemm_info_t *info, nz_spgemm_profile_t *profile) {
    nz_status_t status = NZ_SUCCESS;
    const nz_value_type_t vt = A->value_type;
    const int64_t rows = A->rows, a_nnz = A->nnz;
    int64_t *products = NULL, total = 0, count = 0, max_products = 0, max_rows = 0;
    nzi_spgemm_panel_t *panels = NULL;
    nzi_spgemm_chunks_t chunks;
    esc_work_t w;
    size_t budget = 0, temp = 0;
    double t_start = nzi_wtime(), t, transfer = 0.0, numeric = 0.0;
    nz_matrix_t *M = NULL;
    cudaStream_t stream;

    memset(&w, 0, sizeof w);
    memset(&chunks, 0, sizeof chunks);
    NZI_CHECK(nzi_cuda_enter(ctx));
    stream = nzi_cuda(ctx)->stream;

    NZI_CHECK(nzi_alloc_array(ctx, (void **)&products, (size_t)rows, sizeof(int64_t),
                              "nz_spgemm (esc): products per row"));
    NZI_CHECK(nzi_spgemm_count_products(ctx, A, B, 0, rows, products, &total));
    info->products = total;
    NZI_CHECK(nzi_device_memory_budget(ctx, opt->gpu_memory_limit, &budget));
    NZI_CHECK(esc_plan_panels(ctx, A, B, products, budget, &panels, &count, &max_products,
                              &max_rows, &temp));
    info->panels = count;

    /* Device setup. */
    NZI_CHECK(esc_work_alloc(ctx, &w, A, B, max_products, max_rows, temp, &transfer));
    NZI_CHECK(nzi_spgemm_chunks_init(ctx, &chunks, vt, rows, B->cols, count));
    if (a_nnz > 0) NZI_CHECK(esc_product_offsets(ctx, &w, rows, a_nnz));
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(stream));
    info->symbolic_seconds = nzi_wtime() - t_start;
    nzi_spgemm_profile_stage(profile, "setup", info->symbolic_seconds);

    {
        int64_t product_base = 0;
        for (int64_t q = 0; q < count; q++) {
            int64_t entries = 0;
            t = nzi_wtime();
            if (vt == NZ_F32)
                NZI_CHECK(esc_panel<float>(ctx, &w, A, B, &panels[q], product_base, &entries));
            else
                NZI_CHECK(esc_panel<double>(ctx, &w, A, B, &panels[q], product_base, &entries));
            numeric += nzi_wtime() - t;
            NZI_CHECK(nzi_spgemm_chunks_add(ctx, &chunks, panels[q].row_begin, panels[q].row_end,
                                            w.h_row_offsets, w.h_cols, w.h_values));
            product_base += panels[q].products;
        }
    }
    nzi_spgemm_profile_stage(profile, "panels", numeric);
    t = nzi_wtime();
    NZI_CHECK(nzi_spgemm_chunks_finish(ctx, &chunks, &M));
    nzi_spgemm_profile_stage(profile, "assemble", nzi_wtime() - t);
    info->numeric_seconds = numeric;
    info->transfer_seconds = transfer;
    info->stage_seconds_sum = nzi_wtime() - t_start; /* no pipelining: the stages run in turn */
    *C = M;
    M = NULL;
cleanup:
    if (ctx->cuda != NULL && cudaStreamSynchronize(nzi_cuda(ctx)->stream) != cudaSuccess)
        (void)cudaGetLastError();
    esc_work_free(ctx, &w);
    nzi_spgemm_chunks_free(ctx, &chunks);
    nzi_free(ctx, panels);
    nzi_free(ctx, products);
    return status;
}
