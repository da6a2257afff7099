/* dist_cuda.cu: the distributed layer's kernels: halo pack, y = beta y, and CG's fused vector
 * updates with block dot products; C launchers for src/mpi (no MPI here). */
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

/* Sum a and b over the block (shared-memory tree, fixed order); thread 0 gets the totals. */
__device__ static void block_sum2(double &a, double &b) {
    __shared__ double sa[NZD_THREADS], sb[NZD_THREADS];
    sa[threadIdx.x] = a;
    sb[threadIdx.x] = b;
    __syncthreads();
    for (int stride = NZD_THREADS / 2; stride > 0; stride /= 2) {
        if ((int)threadIdx.x < stride) {
            sa[threadIdx.x] += sa[threadIdx.x + stride];
            sb[threadIdx.x] += sb[threadIdx.x + stride];
        }
        __syncthreads();
    }
    a = sa[0];
    b = sb[0];
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

/* op 0: a'b. op 1: r = b - q, z = dinv r, p = z, (r'r, r'z). op 2: r = b - q, (r'r).
 * op 3: x += alpha p, r -= alpha q, z = dinv r, (r'r, r'z). Thread i handles entries
 * i, i + grid, ...; block partials go to partials[2 blockIdx.x + {0, 1}]. */
template <typename T>
__global__ static void vector_kernel(int op, T *x, T *r, T *p, const T *a, const T *b,
                                     const T *q, const T *dinv, double alpha, int64_t n,
                                     double *partials) {
    double s0 = 0.0, s1 = 0.0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (op == 0) {
            s0 += (double)a[i] * (double)b[i];
            continue;
        }
        T ri;
        if (op == 3) {
            x[i] = (T)((double)x[i] + alpha * (double)p[i]);
            ri = (T)((double)r[i] - alpha * (double)q[i]);
        } else {
            ri = (T)((double)b[i] - (double)q[i]);
        }
        r[i] = ri;
        s0 += (double)ri * (double)ri;
        if (op == 2) continue;
        double zi = dinv != NULL ? (double)ri * (double)dinv[i] : (double)ri;
        if (op == 1) p[i] = (T)zi;
        s1 += (double)ri * zi;
    }
    block_sum2(s0, s1);
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = s0;
        partials[2 * blockIdx.x + 1] = s1;
    }
}

/* One block sums the partials of `blocks` blocks in a fixed order into sums[0..1]. */
__global__ static void finish_kernel(const double *partials, int blocks, double *sums) {
    double s0 = 0.0, s1 = 0.0;
    for (int k = threadIdx.x; k < blocks; k += blockDim.x) {
        s0 += partials[2 * k];
        s1 += partials[2 * k + 1];
    }
    block_sum2(s0, s1);
    if (threadIdx.x == 0) {
        sums[0] = s0;
        sums[1] = s1;
    }
}

template <typename T>
__global__ static void update_p_kernel(T *p, const T *r, const T *dinv, double beta, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double zi = dinv != NULL ? (double)r[i] * (double)dinv[i] : (double)r[i];
        p[i] = (T)(zi + beta * (double)p[i]);
    }
}

template <typename T>
static int reduce(int op, T *x, T *r, T *p, const T *a, const T *b, const T *q, const T *dinv,
                  double alpha, int64_t n, void *scratch, double *sums_host, cudaStream_t stream) {
    const int blocks = grid_for(n);
    double *partials = (double *)scratch, *sums = partials + 2 * NZD_MAX_BLOCKS;
    vector_kernel<T><<<blocks, NZD_THREADS, 0, stream>>>(op, x, r, p, a, b, q, dinv, alpha, n,
                                                         partials);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return (int)err;
    finish_kernel<<<1, NZD_THREADS, 0, stream>>>(partials, blocks, sums);
    if ((err = cudaGetLastError()) != cudaSuccess) return (int)err;
    if ((err = cudaMemcpyAsync(sums_host, sums, 2 * sizeof(double), cudaMemcpyDeviceToHost,
                               stream)) != cudaSuccess)
        return (int)err;
    return (int)cudaStreamSynchronize(stream);
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

size_t nzd_cg_scratch_bytes(int64_t n) {
    (void)n;
    return (2 * NZD_MAX_BLOCKS + 2) * sizeof(double);
}

#define NZD_DISPATCH(call_f32, call_f64) (value_type == NZ_F32 ? (call_f32) : (call_f64))

int nzd_cg_dot(nz_value_type_t value_type, const void *a, const void *b, int64_t n, void *scratch,
               double *sums_host, void *stream) {
    cudaStream_t s = (cudaStream_t)stream;
    return NZD_DISPATCH(
        reduce<float>(0, NULL, NULL, NULL, (const float *)a, (const float *)b, NULL, NULL, 0.0,
                      n, scratch, sums_host, s),
        reduce<double>(0, NULL, NULL, NULL, (const double *)a, (const double *)b, NULL, NULL,
                       0.0, n, scratch, sums_host, s));
}

int nzd_cg_residual(nz_value_type_t value_type, void *r, void *p, const void *b, const void *q,
                    const void *dinv, int64_t n, int init, void *scratch, double *sums_host,
                    void *stream) {
    cudaStream_t s = (cudaStream_t)stream;
    const int op = init ? 1 : 2;
    return NZD_DISPATCH(
        reduce<float>(op, NULL, (float *)r, (float *)p, NULL, (const float *)b, (const float *)q,
                      (const float *)dinv, 0.0, n, scratch, sums_host, s),
        reduce<double>(op, NULL, (double *)r, (double *)p, NULL, (const double *)b,
                       (const double *)q, (const double *)dinv, 0.0, n, scratch, sums_host, s));
}

int nzd_cg_update(nz_value_type_t value_type, void *x, void *r, const void *p, const void *q,
                  const void *dinv, double alpha, int64_t n, void *scratch, double *sums_host,
                  void *stream) {
    cudaStream_t s = (cudaStream_t)stream;
    return NZD_DISPATCH(
        reduce<float>(3, (float *)x, (float *)r, (float *)p, NULL, NULL, (const float *)q,
                      (const float *)dinv, alpha, n, scratch, sums_host, s),
        reduce<double>(3, (double *)x, (double *)r, (double *)p, NULL, NULL, (const double *)q,
                       (const double *)dinv, alpha, n, scratch, sums_host, s));
}

int nzd_cg_update_p(nz_value_type_t value_type, void *p, const void *r, const void *dinv,
                    double beta, int64_t n, void *stream) {
    if (n <= 0) return 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (value_type == NZ_F32)
        update_p_kernel<float><<<grid_for(n), NZD_THREADS, 0, s>>>(
            (float *)p, (const float *)r, (const float *)dinv, beta, n);
    else
        update_p_kernel<double><<<grid_for(n), NZD_THREADS, 0, s>>>(
            (double *)p, (const double *)r, (const double *)dinv, beta, n);
    return (int)cudaGetLastError();
}

} /* extern "C" */
