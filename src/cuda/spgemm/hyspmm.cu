/* hyspmm.cu: hySpMM's GPU stages (multiply, per-row sort, compress) on a slot; their CUB workspace. */
#include "hyspmm_slots.cuh"
#include "owner_search.cuh"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cuda/std/functional>

#include <string.h>

/*
 * The device half of hySpMM (Wu, Georgia State 2015, sections 3.1-3.3; the host half and the
 * pipeline order are in hyspmm_host.c). One panel on one slot, all on the slot's own
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

nz_status_t nzi_hyspmm_temp_bytes(nz_context_t *ctx, nz_value_type_t vt, int64_t max_rows,
                                  int64_t max_products, size_t *bytes) {
    cudaError_t err = vt == NZ_F32 ? cub_temp_bytes<float>(max_rows, max_products, bytes)
                                   : cub_temp_bytes<double>(max_rows, max_products, bytes);
    if (err != cudaSuccess)
        return nzi_cuda_status(ctx, err, "CUB workspace query (hyspmm)", __FILE__, __LINE__);
    return NZ_SUCCESS;
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
