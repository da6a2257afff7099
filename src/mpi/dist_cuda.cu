/* dist_cuda.cu: the distributed layer's kernels: halo pack and y = beta y; C launchers for
 * src/mpi (no MPI here). The solvers' vector operations are the library's (nz_dist_solve). */
#include "dist_cuda.h"

#include <cuda_runtime.h>

/* 256 threads per block; at most 1024 blocks for the reductions (a grid-stride loop covers the
 * rest): the partial sums are then at most 2 x 1024 doubles, summed by one block in a fixed
 * order, so that every reduction is bitwise reproducible run to run for a given n. */
#define NZD_THREADS 256
#define NZD_MAX_BLOCKS 1024

static int grid_for(int64_t n) {
    int64_t blocks = (n + NZD_THREADS - 1) / NZD_THREADS;
    if (blocks < 1) blocks = 1;
    return blocks > NZD_MAX_BLOCKS ? NZD_MAX_BLOCKS : (int)blocks;
}

template <typename T>
__global__ static void pack_kernel(T *send, const T *x, const int32_t *indices, int64_t count) {
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < count;
         k += (int64_t)gridDim.x * blockDim.x)
        send[k] = x[indices[k]];
}

template <typename T> __global__ static void scale_kernel(T *y, int64_t n, double beta) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = beta == 0.0 ? (T)0 : (T)(beta * (double)y[i]);
}

extern "C" {

int nzd_cuda_built(void) { return 1; }

const char *nzd_cuda_error_string(int error) { return cudaGetErrorString((cudaError_t)error); }

int nzd_stream_create(int device, void **stream) {
    cudaStream_t s = NULL;
    *stream = NULL;
    cudaError_t err = cudaSetDevice(device);
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (err == cudaSuccess) *stream = (void *)s;
    return (int)err;
}

int nzd_stream_destroy(void *stream) { return (int)cudaStreamDestroy((cudaStream_t)stream); }

int nzd_stream_synchronize(void *stream) {
    return (int)cudaStreamSynchronize((cudaStream_t)stream);
}

int nzd_event_create(void **event) {
    cudaEvent_t e = NULL;
    *event = NULL;
    cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    if (err == cudaSuccess) *event = (void *)e;
    return (int)err;
}
int nzd_event_destroy(void *event) { return (int)cudaEventDestroy((cudaEvent_t)event); }
int nzd_event_record(void *event, void *stream) {
    return (int)cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream);
}
int nzd_event_synchronize(void *event) { return (int)cudaEventSynchronize((cudaEvent_t)event); }
int nzd_stream_wait_event(void *stream, void *event) {
    return (int)cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0);
}

int nzd_pinned_alloc(void **ptr, size_t bytes) { return (int)cudaMallocHost(ptr, bytes); }
int nzd_pinned_free(void *ptr) { return (int)cudaFreeHost(ptr); }
int nzd_device_alloc(void **ptr, size_t bytes) { return (int)cudaMalloc(ptr, bytes); }
int nzd_device_free(void *ptr) { return (int)cudaFree(ptr); }

int nzd_copy_async(void *dst, const void *src, size_t bytes, int kind, void *stream) {
    if (bytes == 0) return 0;
    return (int)cudaMemcpyAsync(dst, src, bytes,
                                kind == 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                (cudaStream_t)stream);
}

int nzd_pack(nz_value_type_t value_type, void *send, const void *x, const int32_t *indices,
             int64_t count, void *stream) {
    if (count <= 0) return 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (value_type == NZ_F32)
        pack_kernel<float><<<grid_for(count), NZD_THREADS, 0, s>>>((float *)send,
                                                                  (const float *)x, indices, count);
    else
        pack_kernel<double><<<grid_for(count), NZD_THREADS, 0, s>>>(
            (double *)send, (const double *)x, indices, count);
    return (int)cudaGetLastError();
}

int nzd_scale(nz_value_type_t value_type, void *y, int64_t n, double beta, void *stream) {
    if (n <= 0) return 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (value_type == NZ_F32)
        scale_kernel<float><<<grid_for(n), NZD_THREADS, 0, s>>>((float *)y, n, beta);
    else
        scale_kernel<double><<<grid_for(n), NZD_THREADS, 0, s>>>((double *)y, n, beta);
    return (int)cudaGetLastError();
}

} /* extern "C" */
