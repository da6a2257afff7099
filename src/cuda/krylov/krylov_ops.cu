/* krylov_ops.cu: the Krylov methods' vector operations on the GPU: grid-stride update kernels and fixed-order two-stage reductions. */
#include "cuda_internal.h"
#include "krylov.h"
#include "cg_scalars.h"

#include <string.h>

/* ---- design -----------------------------------------------------------------------------------
 * The table of src/internal/krylov.h for vectors in device memory, of the space's value type
 * (float or double). BiCGSTAB, GMRES, FGMRES and MINRES (src/solver) run unchanged on it.
 *
 * Updates (axpby, axpbypcz, scale, fill, the Jacobi apply, multi_axpy) are one grid-stride kernel
 * each: arithmetic in double, each stored entry rounded once to the value type, as the CPU table
 * does. copy is one device-to-device copy on the context's stream.
 *
 * Reductions (dot, norm2, maxabs, multi_dot) are one kernel each, two-stage and deterministic as
 * CG's (src/cuda/cg/cg_kernels.cu): each block reduces its grid-stride slice with a fixed shuffle
 * tree into one partial sum per dot; the last block to finish (a ticket counter, the only atomic)
 * adds the partials in block order (a fixed strided split and tree) into `result`. The grid is a
 * function of n and the device's SM count only, so every scalar is bitwise identical run to run
 * on a given device. The scalar(s) then go to a pinned host buffer by one cudaMemcpyAsync on the
 * context's stream and one stream synchronisation: one host round trip per reduction call (the
 * methods branch on every scalar on the host).
 *
 * multi_dot reads w and the k vectors V[j] once: a thread keeps up to KRYLOV_FUSED partial dots
 * in registers, so k <= 32 (GMRES(m) with m <= 31: every CGS pass of the default GMRES(30)) is
 * one launch over w; larger k is ceil(k / 32) launches, each over w and its 32 vectors (w is
 * re-read once per 32 vectors, about 3% of the traffic) into the same partial buffer, and still
 * one copy and one synchronisation. multi_axpy is likewise one pass over y and V for k <= 32
 * (y += sum_j coef_j V_j in j order, one rounding per entry); larger k runs one pass per 32
 * vectors, each rounding y once. The pointers and coefficients travel as kernel parameters, so
 * nothing is copied to the device per call.
 *
 * multi_dot2 (GMRES's one reduction per step: gmres.c) keeps two partial dots per vector, V[j]'x
 * and V[j]'y, so a launch takes KRYLOV_FUSED2 = 16 vectors (the same 32 registers of partial
 * sums as multi_dot); k <= 16 is one launch reading x, y and the V[j] once, larger k one launch
 * per 16 vectors (x and y re-read per launch), each reducing its 32 slots (V'x in the first
 * 16, V'y in the next; the unused ones zero: fixed register indices) into 32 entries of
 * `result`; one copy and one synchronisation for all, the host picking them into out[j],
 * out[k + j]. multi_axpy2 updates y and z in one pass over the V[j] (16 per launch: the
 * pointers and both coefficient sets as parameters); a later launch of a large k adds to the
 * y and z the first one wrote (its own scalars 1, 1 and 0). */

#define KRYLOV_THREADS 256 /* 8 warps; 2048-thread SMs hold 8 blocks, enough to saturate HBM */
#define KRYLOV_WARPS (KRYLOV_THREADS / 32)
#define KRYLOV_FUSED 32 /* vectors per multi_dot / multi_axpy launch (register partial sums) */
#define KRYLOV_FUSED2 16 /* vectors per multi_dot2 / multi_axpy2 launch (two sums each) */

typedef struct krylov_cuda_state {
    int64_t grid;          /* blocks of every kernel (fixed for n: reproducible sums) */
    int64_t multi_grid;    /* multi_dot's blocks: at most one wave at its occupancy (it holds
                              32 partial dots in registers, so fewer blocks fit an SM) */
    int64_t multi2_grid;   /* multi_dot2's blocks, likewise */
    int width;             /* partial sums per block: KRYLOV_FUSED (multi_dot2 reduces all 32
                              slots of a launch) */
    int results;           /* max(max_dots, 1), rounded up to whole KRYLOV_FUSED2 chunks, x 2
                              (multi_dot2: 2 KRYLOV_FUSED2 slots per chunk) */
    double *partials;      /* device, grid x width */
    double *result;        /* device, results (precond_setup: the first bad row) */
    unsigned int *counter; /* device, last-block ticket; back to 0 after each reduction */
    double *host;          /* pinned host, results */
} krylov_cuda_state_t;

static krylov_cuda_state_t *cuda_state(const nzi_krylov_space_t *s) {
    return (krylov_cuda_state_t *)s->backend;
}

/* Up to KRYLOV_FUSED device vectors (and their coefficients) as a kernel parameter. */
template <typename T>
struct krylov_vectors {
    const T *v[KRYLOV_FUSED];
    double coef[KRYLOV_FUSED];
};

/* Up to KRYLOV_FUSED2 device vectors and two coefficient sets (multi_dot2 uses the pointers). */
template <typename T>
struct krylov_vectors2 {
    const T *v[KRYLOV_FUSED2];
    double a[KRYLOV_FUSED2];
    double b[KRYLOV_FUSED2];
};

/* ---- device helpers ------------------------------------------------------------------------ */

/* The combining operation: a sum, or (Max) the NaN-propagating maximum of cg_scalars.h (exact
 * and order-independent). */
template <bool Max>
static __device__ __forceinline__ double combine(double a, double b) {
    return Max ? nzi_cg_max(a, b) : a + b;
}

/* Block-wide reduction of v[0..NV) (every thread's contribution): warp shuffle trees, the warp
 * results through warp_sums, then thread k < NV adds the KRYLOV_WARPS warp results of value k in
 * warp order into out[k * stride]. A fixed order: bitwise reproducible. v is overwritten. Every
 * thread of the block must call it. */
template <int NV, bool Max>
static __device__ void block_reduce(double (&v)[NV], double (&warp_sums)[NV][KRYLOV_WARPS],
                                    int count, double *out, int64_t stride) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (k >= count) break; /* count is uniform over the block */
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2)
            v[k] = combine<Max>(v[k], __shfl_down_sync(0xffffffffu, v[k], offset));
        if (lane == 0) warp_sums[k][warp] = v[k];
    }
    __syncthreads();
    if (threadIdx.x < count) {
        double sum = 0.0;
        for (int i = 0; i < KRYLOV_WARPS; i++) sum = combine<Max>(sum, warp_sums[threadIdx.x][i]);
        out[threadIdx.x * stride] = sum;
    }
}

/* Grid-wide reduction of v[0..count) (count <= NV): block b stores its results in
 * partials[b * count + k]; the last block to take a ticket reduces them in a fixed order (thread
 * t takes blocks t, t + 256, ... in order, then the block tree) into result[k] and resets the
 * counter. Must be called by every thread of every block. */
template <int NV, bool Max>
static __device__ void grid_reduce(double (&v)[NV], int count, double *partials,
                                   unsigned int *counter, double *result) {
    __shared__ double warp_sums[NV][KRYLOV_WARPS];
    __shared__ bool last;
    block_reduce<NV, Max>(v, warp_sums, count, partials + (int64_t)blockIdx.x * count, 1);
    __threadfence(); /* this block's partials (written by threads < count) visible ... */
    __syncthreads(); /* ... before its ticket */
    if (threadIdx.x == 0) {
        const unsigned int ticket = atomicAdd(counter, 1u);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    const volatile double *vp = partials; /* written by other SMs: bypass L1 */
#pragma unroll
    for (int k = 0; k < NV; k++) {
        double s = 0.0;
        if (k < count)
            for (int64_t b = threadIdx.x; b < gridDim.x; b += blockDim.x)
                s = combine<Max>(s, vp[b * count + k]);
        v[k] = s;
    }
    __syncthreads(); /* warp_sums is reused */
    block_reduce<NV, Max>(v, warp_sums, count, result, 1);
    if (threadIdx.x == 0) *counter = 0u;
}

/* ---- kernels (thread t of the grid handles entries t, t + G, t + 2G, ...) ------------------ */

/* result[0] = x'y */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS)
krylov_dot_kernel(int64_t n, const T *__restrict__ x, const T *__restrict__ y, double *partials,
                  unsigned int *counter, double *result) {
    double v[1] = {0.0};
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        v[0] += (double)x[i] * (double)y[i];
    grid_reduce<1, false>(v, 1, partials, counter, result);
}

/* result[0] = max_i |x_i| (NaN when x holds one) */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS)
krylov_maxabs_kernel(int64_t n, const T *__restrict__ x, double *partials, unsigned int *counter,
                     double *result) {
    double m[1] = {0.0};
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        m[0] = nzi_cg_max(fabs((double)x[i]), m[0]);
    grid_reduce<1, true>(m, 1, partials, counter, result);
}

/* v[i] where `use`, else 0 without touching v (a predicated load). GMRES's kernels (multi_dot2,
 * multi_axpy2) load all their vectors' entries this way before using any: with a `break` out of
 * the unrolled loop instead, each load waited for the previous one's use and multi_dot2 ran at
 * 25-33% of the DRAM bandwidth (ncu, H100, bench/results/h100-2026-11-27-ncu-gmres.txt; GMRES(30)
 * 487 -> 432 us an iteration at convdiff3d 128^3). multi_dot and multi_axpy keep the `break`:
 * with their 32 vectors a launch the preloaded registers cost occupancy, and BiCGSTAB, whose
 * two-vector multi_dot runs every iteration, went from 391 to 463 us an iteration with them. */
template <typename T>
static __device__ __forceinline__ T krylov_load(const T *v, int64_t i, bool use) {
    return use ? v[i] : T(0);
}

/* result[j] = V[j]'w for j < k (k <= KRYLOV_FUSED): w and each V[j] read once; the k partial
 * dots stay in registers (the unrolled loop over the fixed KRYLOV_FUSED slots with a run-time
 * bound keeps them there). */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS)
krylov_multi_dot_kernel(int64_t n, int k, krylov_vectors<T> V, const T *__restrict__ w,
                        double *partials, unsigned int *counter, double *result) {
    double v[KRYLOV_FUSED];
#pragma unroll
    for (int j = 0; j < KRYLOV_FUSED; j++) v[j] = 0.0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double wi = (double)w[i];
#pragma unroll
        for (int j = 0; j < KRYLOV_FUSED; j++) {
            if (j >= k) break;
            v[j] += (double)V.v[j][i] * wi;
        }
    }
    grid_reduce<KRYLOV_FUSED, false>(v, k, partials, counter, result);
}

/* y += sum_j coef[j] V[j] for j < k (k <= KRYLOV_FUSED), summed in j order, rounded once. */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS)
krylov_multi_axpy_kernel(int64_t n, int k, krylov_vectors<T> V, T *__restrict__ y) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double sum = (double)y[i];
#pragma unroll
        for (int j = 0; j < KRYLOV_FUSED; j++) {
            if (j >= k) break;
            sum += V.coef[j] * (double)V.v[j][i];
        }
        y[i] = (T)sum;
    }
}

/* result[j] = V[j]'x, result[KRYLOV_FUSED2 + j] = V[j]'y for j < kc (kc <= KRYLOV_FUSED2; the
 * other slots zero): x, y and each V[j] read once, the partial dots in registers. x and y may be
 * among the V[j] (read only: no __restrict__ on them). */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS)
krylov_multi_dot2_kernel(int64_t n, int kc, krylov_vectors2<T> V, const T *x, const T *y,
                         double *partials, unsigned int *counter, double *result) {
    double v[2 * KRYLOV_FUSED2];
#pragma unroll
    for (int j = 0; j < 2 * KRYLOV_FUSED2; j++) v[j] = 0.0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double xi = (double)x[i], yi = (double)y[i];
        T loaded[KRYLOV_FUSED2];
#pragma unroll
        for (int j = 0; j < KRYLOV_FUSED2; j++) loaded[j] = krylov_load(V.v[j], i, j < kc);
#pragma unroll
        for (int j = 0; j < KRYLOV_FUSED2; j++)
            if (j < kc) {
                const double vj = (double)loaded[j];
                v[j] += vj * xi;
                v[KRYLOV_FUSED2 + j] += vj * yi;
            }
    }
    /* all 2 KRYLOV_FUSED2 slots reduced (unused ones are zero): compile-time indices only, so
     * the sums stay in registers; the host picks result[j] and result[KRYLOV_FUSED2 + j] */
    grid_reduce<2 * KRYLOV_FUSED2, false>(v, 2 * KRYLOV_FUSED2, partials, counter, result);
}

/* Per entry, with y's old value yo: y = ya yo + sum_j a[j] V[j], z = zz z + zy yo + sum_j b[j]
 * V[j] for j < kc (kc <= KRYLOV_FUSED2), in j order, each rounded once; a zero ya (zz, zy) term
 * is left out (a NaN there does not propagate: the CPU table's rule). */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS)
krylov_multi_axpy2_kernel(int64_t n, int kc, krylov_vectors2<T> V, double ya, T *__restrict__ y,
                          double zz, double zy, T *__restrict__ z) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double yo = (double)y[i];
        double sy = ya == 0.0 ? 0.0 : ya * yo;
        double sz = (zz == 0.0 ? 0.0 : zz * (double)z[i]) + (zy == 0.0 ? 0.0 : zy * yo);
        T loaded[KRYLOV_FUSED2];
#pragma unroll
        for (int j = 0; j < KRYLOV_FUSED2; j++) loaded[j] = krylov_load(V.v[j], i, j < kc);
#pragma unroll
        for (int j = 0; j < KRYLOV_FUSED2; j++)
            if (j < kc) {
                const double vj = (double)loaded[j];
                sy += V.a[j] * vj;
                sz += V.b[j] * vj;
            }
        y[i] = (T)sy;
        z[i] = (T)sz;
    }
}

/* z = a x + b y + c z (y may be NULL: z = a x + c z); c = 0 overwrites z without reading it, so a
 * NaN in z does not propagate (the CPU table's rule). x, y and z may alias (no __restrict__). */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS)
krylov_axpbypcz_kernel(int64_t n, double a, const T *x, double b, const T *y, double c, T *z) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double v = c == 0.0 ? 0.0 : c * (double)z[i];
        if (y != NULL) v += b * (double)y[i];
        z[i] = (T)(a * (double)x[i] + v);
    }
}

/* x = a x */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS) krylov_scale_kernel(int64_t n, double a, T *x) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] = (T)(a * (double)x[i]);
}

/* x = value */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS) krylov_fill_kernel(int64_t n, double value, T *x) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const T stored = (T)value;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] = stored;
}

/* z = dinv .* r (Jacobi, l1-Jacobi) */
template <typename T>
__global__ void __launch_bounds__(KRYLOV_THREADS)
krylov_jacobi_kernel(int64_t n, const T *__restrict__ dinv, const T *__restrict__ r,
                     T *__restrict__ z) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        z[i] = (T)((double)dinv[i] * (double)r[i]);
}

/* dinv[i] = 1 / d_i for a device CSR matrix, one thread per row (rows are short next to the
 * vector passes this setup is amortised over): d_i the diagonal entry (L1 false; duplicates
 * summed, as the CPU's extraction does) or the l1 row norm sum_j |a_ij| (L1 true). A row whose
 * d_i is zero or not finite, or whose inverse is not finite in T, stores 0 and puts its index
 * into bad_row by atomicMin (the smallest such row: the CPU's first one). */
template <typename T, typename Offset, bool L1>
__global__ void __launch_bounds__(KRYLOV_THREADS)
krylov_dinv_kernel(int64_t n, const Offset *__restrict__ row_offsets,
                   const int32_t *__restrict__ col_indices, const T *__restrict__ values,
                   T *__restrict__ dinv, unsigned long long *bad_row) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double d = 0.0;
        for (int64_t k = (int64_t)row_offsets[i]; k < (int64_t)row_offsets[i + 1]; k++) {
            if (L1)
                d += fabs((double)values[k]);
            else if (col_indices[k] == i)
                d += (double)values[k];
        }
        T stored = (T)(1.0 / d);
        if (!(d != 0.0) || !nzi_cg_finite(d) || !nzi_cg_finite((double)stored)) {
            atomicMin(bad_row, (unsigned long long)i);
            stored = (T)0;
        }
        dinv[i] = stored;
    }
}

/* ---- launchers ------------------------------------------------------------------------------ */

/* Dispatch on the value type into a templated launch; LAUNCH is parenthesised (it holds commas)
 * and unwrapped by KRYLOV_UNPAREN. */
#define KRYLOV_UNPAREN(...) __VA_ARGS__
#define KRYLOV_DISPATCH_T(s, LAUNCH)                                                            \
    do {                                                                                        \
        if ((s)->value_type == NZ_F32) {                                                        \
            typedef float T;                                                                    \
            KRYLOV_UNPAREN LAUNCH;                                                              \
        } else {                                                                                \
            typedef double T;                                                                   \
            KRYLOV_UNPAREN LAUNCH;                                                              \
        }                                                                                       \
    } while (0)

static void cuda_destroy(nzi_krylov_space_t *s) {
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = cuda_state(s);
    if (st != NULL) {
        nz_cuda_free(ctx, st->partials, (size_t)-1);
        nz_cuda_free(ctx, st->result, (size_t)-1);
        nz_cuda_free(ctx, st->counter, (size_t)-1);
        if (st->host != NULL) {
            if (cudaFreeHost(st->host) != cudaSuccess) (void)cudaGetLastError();
            nzi_account_free(ctx, (size_t)st->results * sizeof(double), false);
        }
        nzi_free(ctx, st);
    }
    nz_cuda_free(ctx, s->dinv, (size_t)-1);
    s->backend = NULL;
    s->dinv = NULL;
}

/* The reduction state: the grid (one wave of KRYLOV_THREADS blocks, at most one block per 256
 * entries; multi_dot's and multi_dot2's the part of it that one wave at that kernel's occupancy
 * holds), partial sums for KRYLOV_FUSED dots per block, the device and pinned host results
 * (multi_dot2's 2 KRYLOV_FUSED2 slots per chunk of max_dots), the ticket counter. Every
 * allocation is counted by the context (the pinned buffer through nzi_account_alloc), so failure
 * injection reaches each of them. */
static nz_status_t cuda_create(nzi_krylov_space_t *s) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = NULL;
    NZI_TRY(nzi_cuda_enter(ctx));
    st = (krylov_cuda_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "nz_solve: GPU workspace");
    s->backend = st;
    {
        const int64_t needed = (s->n + KRYLOV_THREADS - 1) / KRYLOV_THREADS;
        st->grid = nzi_cuda_grid_blocks(nzi_cuda(ctx), KRYLOV_THREADS, 1, needed > 0 ? needed : 1);
    }
    {
        int per_sm = 0;
        KRYLOV_DISPATCH_T(s, (NZI_CUDA_CHECK(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                                      &per_sm, krylov_multi_dot_kernel<T>,
                                                      KRYLOV_THREADS, 0))));
        const int64_t wave = (int64_t)(per_sm > 0 ? per_sm : 1) * nzi_cuda(ctx)->sm_count;
        st->multi_grid = st->grid < wave ? st->grid : wave;
    }
    {
        int per_sm = 0;
        KRYLOV_DISPATCH_T(s, (NZI_CUDA_CHECK(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                                      &per_sm, krylov_multi_dot2_kernel<T>,
                                                      KRYLOV_THREADS, 0))));
        const int64_t wave = (int64_t)(per_sm > 0 ? per_sm : 1) * nzi_cuda(ctx)->sm_count;
        st->multi2_grid = st->grid < wave ? st->grid : wave;
    }
    {
        const int dots = s->max_dots > 1 ? s->max_dots : 1;
        st->results = 2 * KRYLOV_FUSED2 * ((dots + KRYLOV_FUSED2 - 1) / KRYLOV_FUSED2);
    }
    st->width = KRYLOV_FUSED;
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->partials,
                             (size_t)st->grid * (size_t)st->width * sizeof(double),
                             "nz_solve: partial sums"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->result, (size_t)st->results * sizeof(double),
                             "nz_solve: reduction results"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->counter, sizeof(unsigned int),
                             "nz_solve: reduction counter"));
    NZI_CHECK(nz_cuda_memset(ctx, st->counter, 0, sizeof(unsigned int)));
    {
        const size_t bytes = (size_t)st->results * sizeof(double);
        if (!nzi_account_alloc(ctx, bytes, false)) {
            status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                               "nz_solve: cannot allocate %zu bytes of pinned reduction results "
                               "(injected failure)", bytes);
            goto cleanup;
        }
        void *p = NULL;
        const cudaError_t err = cudaMallocHost(&p, bytes);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            nzi_account_free(ctx, bytes, false);
            ctx->failed_allocs++;
            status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                               "nz_solve: cannot allocate %zu bytes of pinned reduction results "
                               "(%s)", bytes, cudaGetErrorString(err));
            goto cleanup;
        }
        st->host = (double *)p;
    }
cleanup:
    if (status < 0) cuda_destroy(s);
    return status;
}

/* A zero-filled device vector (n > 0 entries, one for n = 0), counted by the context. */
static nz_status_t cuda_vec_create(nzi_krylov_space_t *s, void **v, const char *what) {
    const size_t bytes = (size_t)(s->n > 0 ? s->n : 1) * nzi_value_size(s->value_type);
    *v = NULL;
    NZI_TRY(nz_cuda_malloc(s->ctx, v, bytes, what));
    const nz_status_t status = nz_cuda_memset(s->ctx, *v, 0, bytes);
    if (status != NZ_SUCCESS) {
        nz_cuda_free(s->ctx, *v, (size_t)-1);
        *v = NULL;
    }
    return status;
}

static void cuda_vec_destroy(nzi_krylov_space_t *s, void *v) { nz_cuda_free(s->ctx, v, (size_t)-1); }

/* The scalars of the last reduction kernel (count of them) to the host: one copy into the pinned
 * buffer, one synchronisation of the context's stream (which also surfaces a failed kernel). */
static nz_status_t read_results(nzi_krylov_space_t *s, int count, double *out) {
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = cuda_state(s);
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    NZI_CUDA_TRY(ctx, cudaMemcpyAsync(st->host, st->result, (size_t)count * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream));
    NZI_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
    memcpy(out, st->host, (size_t)count * sizeof(double));
    return NZ_SUCCESS;
}

/* JACOBI: 1 / a_ii; L1_JACOBI: 1 / sum_j |a_ij| (krylov_dinv_kernel), A a device CSR matrix
 * (solve.c refuses other device formats for these preconditioners). One pass over A, then one
 * copy of the first bad row (n when none) to the host. */
static nz_status_t cuda_precond_setup(nzi_krylov_space_t *s, const nz_matrix_t *A,
                                      int64_t *bad_row) {
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = cuda_state(s);
    *bad_row = s->n;
    NZI_TRY(nzi_cuda_enter(ctx));
    if (A->location != NZ_DEVICE || A->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_solve: the GPU %s preconditioner needs a device CSR matrix, not a "
                         "%s %s matrix",
                         s->precond == NZ_PRECOND_L1_JACOBI ? "l1-Jacobi" : "Jacobi",
                         A->location == NZ_DEVICE ? "device" : "host", nz_format_name(A->format));
    NZI_TRY(cuda_vec_create(s, &s->dinv, "nz_solve: inverse diagonal"));
    if (s->n == 0) return NZ_SUCCESS;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    /* the first bad row lives in the result buffer (8 bytes, free outside reductions) */
    unsigned long long *bad = (unsigned long long *)st->result, host_bad = 0;
    NZI_CUDA_TRY(ctx, cudaMemsetAsync(bad, 0xff, sizeof *bad, stream));
    const unsigned grid = (unsigned)st->grid;
    const bool l1 = s->precond == NZ_PRECOND_L1_JACOBI;
#define KRYLOV_DINV(Offset, L1)                                                                 \
    KRYLOV_DISPATCH_T(s, (krylov_dinv_kernel<T, Offset, L1><<<grid, KRYLOV_THREADS, 0, stream>>>( \
                             s->n, (const Offset *)A->device.row_offsets, A->device.col_indices, \
                             (const T *)A->device.values, (T *)s->dinv, bad)))
    if (A->device.offset_type == NZ_I32) {
        if (l1)
            KRYLOV_DINV(int32_t, true);
        else
            KRYLOV_DINV(int32_t, false);
    } else {
        if (l1)
            KRYLOV_DINV(int64_t, true);
        else
            KRYLOV_DINV(int64_t, false);
    }
#undef KRYLOV_DINV
    NZI_CUDA_LAUNCH_CHECK(ctx);
    NZI_CUDA_TRY(ctx, cudaMemcpyAsync(st->host, bad, sizeof *bad, cudaMemcpyDeviceToHost, stream));
    NZI_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
    memcpy(&host_bad, st->host, sizeof host_bad);
    if (host_bad < (unsigned long long)s->n) *bad_row = (int64_t)host_bad;
    return NZ_SUCCESS;
}

/* y = A x through the plan (its CUDA SpMV, on the context's stream). */
static nz_status_t cuda_apply(nzi_krylov_space_t *s, const void *x, void *y) {
    return s->plan->ops->spmv_execute(s->plan, 1.0, x, 0.0, y);
}

static nz_status_t cuda_copy(nzi_krylov_space_t *s, const void *x, void *y) {
    nz_context_t *ctx = s->ctx;
    if (s->n <= 0 || x == y) return NZ_SUCCESS;
    NZI_CUDA_TRY(ctx, cudaMemcpyAsync(y, x, (size_t)s->n * nzi_value_size(s->value_type),
                                      cudaMemcpyDeviceToDevice, nzi_cuda(ctx)->stream));
    return NZ_SUCCESS;
}

/* z = M^-1 r. USER / ILU0 / IC0: the callback gets device pointers, r complete in the order of
 * the context's stream; its work must be queued on that stream or synchronised with it (the
 * contract in include/nonzero/solver.h, nz_precond_apply_t). */
static nz_status_t cuda_precond(nzi_krylov_space_t *s, const void *r, void *z) {
    nz_context_t *ctx = s->ctx;
    switch (s->precond) {
    case NZ_PRECOND_JACOBI:
    case NZ_PRECOND_L1_JACOBI: {
        if (s->n <= 0) return NZ_SUCCESS;
        cudaStream_t stream = nzi_cuda(ctx)->stream;
        const unsigned grid = (unsigned)cuda_state(s)->grid;
        KRYLOV_DISPATCH_T(s, (krylov_jacobi_kernel<T><<<grid, KRYLOV_THREADS, 0, stream>>>(
                                 s->n, (const T *)s->dinv, (const T *)r, (T *)z)));
        NZI_CUDA_LAUNCH_CHECK(ctx);
        return NZ_SUCCESS;
    }
    case NZ_PRECOND_ILU0:
    case NZ_PRECOND_IC0: return s->user_apply(s->user, r, z);
    case NZ_PRECOND_USER: {
        const nz_status_t status = s->user_apply(s->user, r, z);
        if (status != NZ_SUCCESS)
            return nzi_error(ctx, status < 0 ? status : NZ_ERR_INVALID_ARGUMENT,
                             "nz_solve: the preconditioner callback returned %d (%s)",
                             (int)status, nz_status_string(status));
        return NZ_SUCCESS;
    }
    default: return cuda_copy(s, r, z);
    }
}

static nz_status_t cuda_dot(nzi_krylov_space_t *s, const void *x, const void *y, double *out) {
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = cuda_state(s);
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    KRYLOV_DISPATCH_T(s, (krylov_dot_kernel<T><<<(unsigned)st->grid, KRYLOV_THREADS, 0, stream>>>(
                             s->n, (const T *)x, (const T *)y, st->partials, st->counter,
                             st->result)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return read_results(s, 1, out);
}

static nz_status_t cuda_norm2(nzi_krylov_space_t *s, const void *x, double *out) {
    double sum;
    NZI_TRY(cuda_dot(s, x, x, &sum));
    *out = sqrt(sum);
    return NZ_SUCCESS;
}

static nz_status_t cuda_maxabs(nzi_krylov_space_t *s, const void *x, double *out) {
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = cuda_state(s);
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    KRYLOV_DISPATCH_T(s, (krylov_maxabs_kernel<T><<<(unsigned)st->grid, KRYLOV_THREADS, 0,
                                                     stream>>>(s->n, (const T *)x, st->partials,
                                                               st->counter, st->result)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return read_results(s, 1, out);
}

/* k dots against w: ceil(k / KRYLOV_FUSED) launches (one for k <= 32) writing result[j0 .. j0 +
 * kc), then one copy and one synchronisation for all k. */
static nz_status_t cuda_multi_dot(nzi_krylov_space_t *s, int k, void *const *V, const void *w,
                                  double *out) {
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = cuda_state(s);
    if (k <= 0) return NZ_SUCCESS;
    if (k > s->max_dots)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_solve: %d dots > %d", k, s->max_dots);
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    for (int j0 = 0; j0 < k; j0 += KRYLOV_FUSED) {
        const int kc = k - j0 < KRYLOV_FUSED ? k - j0 : KRYLOV_FUSED;
        KRYLOV_DISPATCH_T(s, ({
            krylov_vectors<T> vs;
            memset(&vs, 0, sizeof vs);
            for (int j = 0; j < kc; j++) vs.v[j] = (const T *)V[j0 + j];
            krylov_multi_dot_kernel<T><<<(unsigned)st->multi_grid, KRYLOV_THREADS, 0, stream>>>(
                s->n, kc, vs, (const T *)w, st->partials, st->counter, st->result + j0);
        }));
        NZI_CUDA_LAUNCH_CHECK(ctx);
    }
    return read_results(s, k, out);
}

static nz_status_t cuda_multi_axpy(nzi_krylov_space_t *s, int k, const double *coef,
                                   void *const *V, void *y) {
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = cuda_state(s);
    if (k <= 0 || s->n <= 0) return NZ_SUCCESS;
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    for (int j0 = 0; j0 < k; j0 += KRYLOV_FUSED) {
        const int kc = k - j0 < KRYLOV_FUSED ? k - j0 : KRYLOV_FUSED;
        KRYLOV_DISPATCH_T(s, ({
            krylov_vectors<T> vs;
            memset(&vs, 0, sizeof vs);
            for (int j = 0; j < kc; j++) {
                vs.v[j] = (const T *)V[j0 + j];
                vs.coef[j] = coef[j0 + j];
            }
            krylov_multi_axpy_kernel<T><<<(unsigned)st->grid, KRYLOV_THREADS, 0, stream>>>(
                s->n, kc, vs, (T *)y);
        }));
        NZI_CUDA_LAUNCH_CHECK(ctx);
    }
    return NZ_SUCCESS;
}

/* V[j]'x and V[j]'y: ceil(k / KRYLOV_FUSED2) launches (one for k <= 16), chunk c writing its
 * 2 KRYLOV_FUSED2 slots to result[2 KRYLOV_FUSED2 c ..]; one copy and one synchronisation, then
 * the host puts them in out[j] (x) and out[k + j] (y) order. */
static nz_status_t cuda_multi_dot2(nzi_krylov_space_t *s, int k, void *const *V, const void *x,
                                   const void *y, double *out) {
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = cuda_state(s);
    if (k <= 0) return NZ_SUCCESS;
    if (k > s->max_dots)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_solve: %d dots > %d", k, s->max_dots);
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    for (int j0 = 0; j0 < k; j0 += KRYLOV_FUSED2) {
        const int kc = k - j0 < KRYLOV_FUSED2 ? k - j0 : KRYLOV_FUSED2;
        KRYLOV_DISPATCH_T(s, ({
            krylov_vectors2<T> vs;
            memset(&vs, 0, sizeof vs);
            for (int j = 0; j < kc; j++) vs.v[j] = (const T *)V[j0 + j];
            const unsigned grid = (unsigned)st->multi2_grid;
            krylov_multi_dot2_kernel<T><<<grid, KRYLOV_THREADS, 0, stream>>>(
                s->n, kc, vs, (const T *)x, (const T *)y, st->partials, st->counter,
                st->result + 2 * j0);
        }));
        NZI_CUDA_LAUNCH_CHECK(ctx);
    }
    const int chunks = (k + KRYLOV_FUSED2 - 1) / KRYLOV_FUSED2;
    NZI_CUDA_TRY(ctx, cudaMemcpyAsync(st->host, st->result,
                                      (size_t)chunks * 2 * KRYLOV_FUSED2 * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream));
    NZI_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
    for (int j0 = 0; j0 < k; j0 += KRYLOV_FUSED2) {
        const int kc = k - j0 < KRYLOV_FUSED2 ? k - j0 : KRYLOV_FUSED2;
        for (int j = 0; j < kc; j++) {
            out[j0 + j] = st->host[2 * j0 + j];
            out[k + j0 + j] = st->host[2 * j0 + KRYLOV_FUSED2 + j];
        }
    }
    return NZ_SUCCESS;
}

/* y and z in one pass per KRYLOV_FUSED2 vectors (one for k <= 16, k = 0 included); a later
 * chunk adds to what the first wrote. */
static nz_status_t cuda_multi_axpy2(nzi_krylov_space_t *s, int k, const double *a,
                                    const double *b, void *const *V, double ya, void *y,
                                    double zz, double zy, void *z) {
    nz_context_t *ctx = s->ctx;
    krylov_cuda_state_t *st = cuda_state(s);
    if (s->n <= 0) return NZ_SUCCESS;
    if (k < 0) k = 0;
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    int j0 = 0;
    do {
        const int kc = k - j0 < KRYLOV_FUSED2 ? k - j0 : KRYLOV_FUSED2;
        const bool first = j0 == 0;
        KRYLOV_DISPATCH_T(s, ({
            krylov_vectors2<T> vs;
            memset(&vs, 0, sizeof vs);
            for (int j = 0; j < kc; j++) {
                vs.v[j] = (const T *)V[j0 + j];
                vs.a[j] = a[j0 + j];
                vs.b[j] = b[j0 + j];
            }
            krylov_multi_axpy2_kernel<T><<<(unsigned)st->grid, KRYLOV_THREADS, 0, stream>>>(
                s->n, kc, vs, first ? ya : 1.0, (T *)y, first ? zz : 1.0, first ? zy : 0.0,
                (T *)z);
        }));
        NZI_CUDA_LAUNCH_CHECK(ctx);
        j0 += KRYLOV_FUSED2;
    } while (j0 < k);
    return NZ_SUCCESS;
}

static nz_status_t cuda_axpbypcz(nzi_krylov_space_t *s, double a, const void *x, double b,
                                 const void *y, double c, void *z) {
    nz_context_t *ctx = s->ctx;
    if (s->n <= 0) return NZ_SUCCESS;
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const unsigned grid = (unsigned)cuda_state(s)->grid;
    KRYLOV_DISPATCH_T(s, (krylov_axpbypcz_kernel<T><<<grid, KRYLOV_THREADS, 0, stream>>>(
                             s->n, a, (const T *)x, b, (const T *)y, c, (T *)z)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t cuda_axpby(nzi_krylov_space_t *s, double a, const void *x, double b, void *y) {
    return cuda_axpbypcz(s, a, x, 0.0, NULL, b, y);
}

static nz_status_t cuda_scale(nzi_krylov_space_t *s, double a, void *x) {
    nz_context_t *ctx = s->ctx;
    if (s->n <= 0) return NZ_SUCCESS;
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const unsigned grid = (unsigned)cuda_state(s)->grid;
    KRYLOV_DISPATCH_T(s, (krylov_scale_kernel<T><<<grid, KRYLOV_THREADS, 0, stream>>>(
                             s->n, a, (T *)x)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t cuda_fill(nzi_krylov_space_t *s, double value, void *x) {
    nz_context_t *ctx = s->ctx;
    if (s->n <= 0) return NZ_SUCCESS;
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const unsigned grid = (unsigned)cuda_state(s)->grid;
    KRYLOV_DISPATCH_T(s, (krylov_fill_kernel<T><<<grid, KRYLOV_THREADS, 0, stream>>>(
                             s->n, value, (T *)x)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static const nzi_krylov_ops_t krylov_cuda_ops = {
    cuda_create,     cuda_destroy,   cuda_vec_create, cuda_vec_destroy, cuda_precond_setup,
    cuda_apply,      cuda_precond,   cuda_dot,        cuda_norm2,       cuda_maxabs,
    cuda_multi_dot,  cuda_multi_axpy, cuda_multi_dot2, cuda_multi_axpy2, cuda_axpby,
    cuda_axpbypcz,   cuda_copy,       cuda_scale,      cuda_fill,
};

extern "C" const struct nzi_krylov_ops *nz_cuda_krylov_ops(void) { return &krylov_cuda_ops; }
