/* cg_kernels.cu: CG vector operations on the GPU: fused update + dot kernels, on-device scalars. */
#include "cuda_internal.h"
#include "cg_work.h"

#include <string.h>

/* ---- design -----------------------------------------------------------------------------------
 * One CG iteration is the SpMV q = A p (through the plan) plus three kernels:
 *   dot_pq     pq = p'q                                   reads 2n
 *   update_r   r -= alpha q, rr = r'r, rz = r'D^-1 r       reads 2n (3n Jacobi), writes n
 *   update_xp  x += alpha p, p = D^-1 r + beta p           reads 3n (4n Jacobi), writes 2n
 * 10n values moved besides the SpMV (12n Jacobi): x rides on the pass that reads p anyway, n
 * fewer than updating x beside r. x_pending (set by the update of r) tells update_xp to add
 * alpha p even when that update stopped the iteration; dot_pq clears it.
 * Every reduction is two-stage and deterministic: each block reduces its grid-stride slice with a
 * fixed shuffle tree and stores one partial; the last block to finish (a ticket counter, the only
 * atomic) sums the partials in block order and runs the scalar state machine of cg_work.h
 * (alpha, beta, convergence, breakdown) in its thread 0. So the scalars never leave the device,
 * the host reads them back only every check_interval iterations, and results are bitwise
 * reproducible run to run on a given device (the grid depends on the SM count). Once the state is
 * not RUNNING every kernel returns at once, so extra iterations of a batch change nothing.
 * z = D^-1 r is never stored: update_p recomputes it from r and dinv (one read instead of a
 * write and a read). The loop allocates nothing; all of it is capturable in a CUDA graph.
 * When the recursive residual meets the tolerance (state CHECK) the host issues q = A x and the
 * residual kernel in REPLACE mode, whose last block decides (cg_scalars.h) between converged,
 * stagnated and going on from the true residual; the graph of iterations replays unchanged.
 * Scaling (b of 1e160 or 1e-170): a max-abs reduction (the same two-stage shape; a maximum is
 * exact in any order), an in-place power-of-two scale of x, and bscale inside the residual and
 * the norm of b, so no scaled copy of b is stored. */

#define CG_THREADS 256 /* 8 warps; 2048-thread SMs hold 8 blocks, enough to saturate HBM */

typedef struct cg_cuda_state {
    int64_t grid;            /* blocks of every reduction kernel (fixed: reproducible sums) */
    double *partials;        /* device, 2 x grid */
    unsigned int *counter;   /* device, last-block ticket; back to 0 after each reduction */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
} cg_cuda_state_t;

static cg_cuda_state_t *cuda_state(const nzi_cg_work_t *w) { return (cg_cuda_state_t *)w->backend; }

/* ---- device helpers ------------------------------------------------------------------------ */

/* The reductions' combining operation: a sum, or (Max) the NaN-propagating maximum of
 * cg_scalars.h (max-abs of b and x0 for the scaling; exact and order-independent). */
template <bool Max>
static __device__ __forceinline__ double combine(double a, double b) {
    return Max ? nzi_cg_max(a, b) : a + b;
}

template <bool Max>
static __device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
        v = combine<Max>(v, __shfl_down_sync(0xffffffffu, v, offset));
    return v;
}

/* Block-wide sums of v[0..NV): warp shuffles, the warp sums through warp_sums, then thread 0
 * adds them in warp order into out[0..NV) (a fixed order). v is overwritten. */
template <int NV, bool Max>
static __device__ void block_sums(double (&v)[NV], double (&warp_sums)[NV][CG_THREADS / 32],
                                  double *out) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int k = 0; k < NV; k++) v[k] = warp_sum<Max>(v[k]);
    if (lane == 0)
        for (int k = 0; k < NV; k++) warp_sums[k][warp] = v[k];
    __syncthreads();
    if (threadIdx.x == 0)
        for (int k = 0; k < NV; k++) {
            double s = 0.0;
            for (int i = 0; i < CG_THREADS / 32; i++) s = combine<Max>(s, warp_sums[k][i]);
            out[k] = s;
        }
}

/* Grid-wide sum of v[0..NV) (each thread's contribution). Every block stores its block sum in
 * partials[NV * block + k]; the last block to take a ticket sums them in block order into
 * total[] (valid in its thread 0) and resets the counter. Returns true in the last block.
 * Must be called by all threads of every block, or by none (the early-exit state test is uniform
 * over the grid). */
template <int NV, bool Max = false>
static __device__ bool grid_sum(double (&v)[NV], double *partials, unsigned int *counter,
                                double (&total)[NV]) {
    __shared__ double warp_sums[NV][CG_THREADS / 32];
    __shared__ bool last;
    block_sums<NV, Max>(v, warp_sums, partials + NV * (int64_t)blockIdx.x);
    if (threadIdx.x == 0) {
        __threadfence(); /* partials visible before the ticket */
        unsigned int ticket = atomicAdd(counter, 1u);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return false;
    __threadfence();
    const volatile double *vp = partials; /* written by other SMs: bypass L1 */
#pragma unroll
    for (int k = 0; k < NV; k++) {
        double s = 0.0;
        for (int64_t b = threadIdx.x; b < gridDim.x; b += blockDim.x)
            s = combine<Max>(s, vp[NV * b + k]);
        v[k] = s;
    }
    __syncthreads(); /* warp_sums is reused */
    block_sums<NV, Max>(v, warp_sums, total);
    if (threadIdx.x == 0) *counter = 0u;
    return true;
}

/* ---- kernels (thread t of the grid handles entries t, t + G, t + 2G, ...) ------------------ */

/* mode 0: pq = a'b then the step length (skipped unless RUNNING); mode 1: result =
 * (scale a)'(scale b) (scale a power of two, 1.0 for the plain dot: the same bits). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS)
cg_dot_kernel(int64_t n, const T *a, const T *b, double scale, nzi_cg_scalars_t *s,
              double *partials, unsigned int *counter, int mode) {
    /* every block of the previous update_xp has read x_pending (stream order) */
    if (mode == 0 && blockIdx.x == 0 && threadIdx.x == 0) s->x_pending = 0;
    if (mode == 0 && s->state != NZI_CG_RUNNING) return;
    double v[1] = {0.0}, total[1];
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        v[0] += (scale * (double)a[i]) * (scale * (double)b[i]);
    if (grid_sum<1>(v, partials, counter, total) && threadIdx.x == 0) {
        if (mode == 0)
            nzi_cg_after_pq(s, total[0]);
        else
            s->result = total[0];
    }
}

template <typename T, bool Jacobi>
__global__ void __launch_bounds__(CG_THREADS)
cg_update_r_kernel(int64_t n, T *r, const T *q, const T *dinv, nzi_cg_scalars_t *s,
                   double *partials, unsigned int *counter) {
    if (s->state != NZI_CG_RUNNING) return;
    const double alpha = s->alpha;
    double v[2] = {0.0, 0.0}, total[2];
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const T ri = (T)((double)r[i] - alpha * (double)q[i]);
        r[i] = ri;
        const double zi = Jacobi ? (double)ri * (double)dinv[i] : (double)ri;
        v[0] += (double)ri * (double)ri;
        v[1] += (double)ri * zi;
    }
    if (grid_sum<2>(v, partials, counter, total) && threadIdx.x == 0)
        nzi_cg_after_update(s, total[0], total[1]);
}

/* x += alpha p where x_pending, then p = D^-1 r + beta p while RUNNING (both tests uniform). */
template <typename T, bool Jacobi>
__global__ void __launch_bounds__(CG_THREADS)
cg_update_xp_kernel(int64_t n, T *x, T *p, const T *r, const T *dinv, const nzi_cg_scalars_t *s) {
    const bool update_x = s->x_pending != 0, update_p = s->state == NZI_CG_RUNNING;
    if (!update_x && !update_p) return;
    const double alpha = s->alpha, beta = s->beta;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double pi = (double)p[i];
        if (update_x) x[i] = (T)((double)x[i] + alpha * pi);
        if (update_p) {
            const double zi = Jacobi ? (double)r[i] * (double)dinv[i] : (double)r[i];
            p[i] = (T)(zi + beta * pi);
        }
    }
}

/* result = max_i |v_i| (NaN if any; Inf if any and no NaN). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS)
cg_maxabs_kernel(int64_t n, const T *v, nzi_cg_scalars_t *s, double *partials,
                 unsigned int *counter) {
    double m[1] = {0.0}, total[1];
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        m[0] = nzi_cg_max(fabs((double)v[i]), m[0]);
    if (grid_sum<1, true>(m, partials, counter, total) && threadIdx.x == 0) s->result = total[0];
}

/* v *= factor (a power of two) */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_scale_kernel(int64_t n, T *v, double factor) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        v[i] = (T)(factor * (double)v[i]);
}

/* r = bscale b - q (q = A x), p = D^-1 r; then by mode (NZI_CG_RESIDUAL_*): the starting
 * scalars, a residual replacement's check, or result = r'r. */
template <typename T, bool Jacobi>
__global__ void __launch_bounds__(CG_THREADS)
cg_residual_kernel(int64_t n, T *r, T *p, const T *b, double bscale, const T *q, const T *dinv,
                   nzi_cg_scalars_t *s, double *partials, unsigned int *counter, int mode) {
    double v[2] = {0.0, 0.0}, total[2];
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const T ri = (T)(bscale * (double)b[i] - (double)q[i]);
        r[i] = ri;
        const double zi = Jacobi ? (double)ri * (double)dinv[i] : (double)ri;
        p[i] = (T)zi;
        v[0] += (double)ri * (double)ri;
        v[1] += (double)ri * zi;
    }
    if (grid_sum<2>(v, partials, counter, total) && threadIdx.x == 0) {
        if (mode == NZI_CG_RESIDUAL_INIT)
            nzi_cg_after_init(s, total[0], total[1]);
        else if (mode == NZI_CG_RESIDUAL_REPLACE)
            nzi_cg_after_replace(s, total[0], total[1]);
        else
            s->result = total[0];
    }
}

/* dinv[i] = 1 / a_ii for a device CSR matrix (one thread per row; duplicates cannot occur).
 * Missing, non-positive or non-finite diagonals give 0 and the smallest such row in bad_row. */
template <typename T, typename Offset>
__global__ void cg_jacobi_kernel(int64_t n, const Offset *row_offsets, const int32_t *col_indices,
                                 const T *values, T *dinv, unsigned long long *bad_row) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double d = 0.0;
        for (int64_t k = row_offsets[i]; k < (int64_t)row_offsets[i + 1]; k++)
            if (col_indices[k] == i) d += (double)values[k];
        double inv = 1.0 / d;
        if (!(d > 0.0) || !nzi_cg_finite(d) || !nzi_cg_finite(inv)) {
            atomicMin(bad_row, (unsigned long long)i);
            inv = 0.0;
        }
        dinv[i] = (T)inv;
    }
}

/* ---- launchers ------------------------------------------------------------------------------ */

static void cuda_destroy(nzi_cg_work_t *w) {
    nz_context_t *ctx = w->ctx;
    cg_cuda_state_t *st = cuda_state(w);
    if (st != NULL) {
        if (st->exec != NULL) (void)cudaGraphExecDestroy(st->exec);
        if (st->graph != NULL) (void)cudaGraphDestroy(st->graph);
        nz_cuda_free(ctx, st->partials, (size_t)-1);
        nz_cuda_free(ctx, st->counter, (size_t)-1);
        nzi_free(ctx, st);
    }
    nz_cuda_free(ctx, w->r, (size_t)-1);
    nz_cuda_free(ctx, w->p, (size_t)-1);
    nz_cuda_free(ctx, w->q, (size_t)-1);
    nz_cuda_free(ctx, w->dinv, (size_t)-1);
    nz_cuda_free(ctx, w->scalars, (size_t)-1);
    nz_cuda_free(ctx, w->history, (size_t)-1);
    w->backend = NULL;
    w->r = w->p = w->q = w->dinv = NULL;
    w->scalars = NULL;
    w->history = NULL;
}

static nz_status_t cuda_create(nzi_cg_work_t *w) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = w->ctx;
    const size_t vs = nzi_value_size(w->value_type);
    size_t vector_bytes, history_bytes = 0;
    cg_cuda_state_t *st = NULL;
    NZI_TRY(nzi_cuda_enter(ctx));
    if (nzi_mul_overflow_size((size_t)w->n, vs, &vector_bytes) ||
        nzi_mul_overflow_size((size_t)w->history_capacity, sizeof(double), &history_bytes))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "nz_cg_solve: workspace size overflows");
    st = (cg_cuda_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "nz_cg_solve: GPU workspace");
    w->backend = st;
    {
        const int64_t needed = (w->n + CG_THREADS - 1) / CG_THREADS;
        st->grid = nzi_cuda_grid_blocks(nzi_cuda(ctx), CG_THREADS, 1, needed > 0 ? needed : 1);
    }
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->partials, 2 * (size_t)st->grid * sizeof(double),
                             "nz_cg_solve: partial sums"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->counter, sizeof(unsigned int),
                             "nz_cg_solve: reduction counter"));
    NZI_CHECK(nz_cuda_memset(ctx, st->counter, 0, sizeof(unsigned int)));
    NZI_CHECK(nz_cuda_malloc(ctx, &w->r, vector_bytes, "nz_cg_solve: residual r"));
    NZI_CHECK(nz_cuda_malloc(ctx, &w->p, vector_bytes, "nz_cg_solve: direction p"));
    NZI_CHECK(nz_cuda_malloc(ctx, &w->q, vector_bytes, "nz_cg_solve: product q = A p"));
    if (w->jacobi)
        NZI_CHECK(nz_cuda_malloc(ctx, &w->dinv, vector_bytes, "nz_cg_solve: inverse diagonal"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w->scalars, sizeof(nzi_cg_scalars_t),
                             "nz_cg_solve: scalars"));
    if (w->history_capacity > 0)
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&w->history, history_bytes,
                                 "nz_cg_solve: residual history"));
cleanup:
    if (status < 0) cuda_destroy(w);
    return status;
}

/* Dispatch on the value type into a templated launch; LAUNCH is parenthesised (it holds commas)
 * and unwrapped by CG_UNPAREN. */
#define CG_UNPAREN(...) __VA_ARGS__
#define CG_DISPATCH_T(w, LAUNCH)                                                                \
    do {                                                                                        \
        if ((w)->value_type == NZ_F32) {                                                        \
            typedef float T;                                                                    \
            CG_UNPAREN LAUNCH;                                                                  \
        } else {                                                                                \
            typedef double T;                                                                   \
            CG_UNPAREN LAUNCH;                                                                  \
        }                                                                                       \
    } while (0)

static nz_status_t cuda_jacobi(nzi_cg_work_t *w, const nz_matrix_t *A) {
    nz_context_t *ctx = w->ctx;
    NZI_TRY(nzi_cuda_enter(ctx));
    if (A->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_cg_solve: the GPU Jacobi preconditioner needs a CSR device matrix, "
                         "not %s", nz_format_name(A->format));
    if (w->n == 0) return NZ_SUCCESS;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const int64_t grid = cuda_state(w)->grid;
    unsigned long long *bad = (unsigned long long *)&w->scalars->bad_row;
    if (A->device.offset_type == NZ_I32)
        CG_DISPATCH_T(w, (cg_jacobi_kernel<T, int32_t><<<(unsigned)grid, CG_THREADS, 0, stream>>>(
                             w->n, (const int32_t *)A->device.row_offsets, A->device.col_indices,
                             (const T *)A->device.values, (T *)w->dinv, bad)));
    else
        CG_DISPATCH_T(w, (cg_jacobi_kernel<T, int64_t><<<(unsigned)grid, CG_THREADS, 0, stream>>>(
                             w->n, (const int64_t *)A->device.row_offsets, A->device.col_indices,
                             (const T *)A->device.values, (T *)w->dinv, bad)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t launch_dot(nzi_cg_work_t *w, const void *a, const void *b, double scale,
                              int mode) {
    nz_context_t *ctx = w->ctx;
    cg_cuda_state_t *st = cuda_state(w);
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    CG_DISPATCH_T(w, (cg_dot_kernel<T><<<(unsigned)st->grid, CG_THREADS, 0, stream>>>(
                         w->n, (const T *)a, (const T *)b, scale, w->scalars, st->partials,
                         st->counter, mode)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t cuda_norm2(nzi_cg_work_t *w, const void *v, double scale) {
    NZI_TRY(nzi_cuda_enter(w->ctx));
    return launch_dot(w, v, v, scale, 1);
}

static nz_status_t cuda_dot_pq(nzi_cg_work_t *w) { return launch_dot(w, w->p, w->q, 1.0, 0); }

static nz_status_t cuda_maxabs(nzi_cg_work_t *w, const void *v) {
    nz_context_t *ctx = w->ctx;
    cg_cuda_state_t *st = cuda_state(w);
    NZI_TRY(nzi_cuda_enter(ctx));
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    CG_DISPATCH_T(w, (cg_maxabs_kernel<T><<<(unsigned)st->grid, CG_THREADS, 0, stream>>>(
                         w->n, (const T *)v, w->scalars, st->partials, st->counter)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t cuda_scale(nzi_cg_work_t *w, void *v, double factor) {
    nz_context_t *ctx = w->ctx;
    cg_cuda_state_t *st = cuda_state(w);
    NZI_TRY(nzi_cuda_enter(ctx));
    if (w->n == 0) return NZ_SUCCESS;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    CG_DISPATCH_T(w, (cg_scale_kernel<T><<<(unsigned)st->grid, CG_THREADS, 0, stream>>>(
                         w->n, (T *)v, factor)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t cuda_zero(nzi_cg_work_t *w, void *x) {
    nz_context_t *ctx = w->ctx;
    NZI_CUDA_TRY(ctx, cudaMemsetAsync(x, 0, (size_t)w->n * nzi_value_size(w->value_type),
                                      nzi_cuda(ctx)->stream));
    return NZ_SUCCESS;
}

static nz_status_t cuda_residual(nzi_cg_work_t *w, const void *b, double bscale, int mode) {
    nz_context_t *ctx = w->ctx;
    cg_cuda_state_t *st = cuda_state(w);
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    if (w->jacobi)
        CG_DISPATCH_T(w, (cg_residual_kernel<T, true><<<(unsigned)st->grid, CG_THREADS, 0, stream>>>(
                             w->n, (T *)w->r, (T *)w->p, (const T *)b, bscale,
                             (const T *)w->q, (const T *)w->dinv, w->scalars, st->partials,
                             st->counter, mode)));
    else
        CG_DISPATCH_T(w, (cg_residual_kernel<T, false><<<(unsigned)st->grid, CG_THREADS, 0, stream>>>(
                             w->n, (T *)w->r, (T *)w->p, (const T *)b, bscale,
                             (const T *)w->q, (const T *)w->dinv, w->scalars, st->partials,
                             st->counter, mode)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t cuda_update_r(nzi_cg_work_t *w) {
    nz_context_t *ctx = w->ctx;
    cg_cuda_state_t *st = cuda_state(w);
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    if (w->jacobi)
        CG_DISPATCH_T(w, (cg_update_r_kernel<T, true><<<(unsigned)st->grid, CG_THREADS, 0, stream>>>(
                             w->n, (T *)w->r, (const T *)w->q, (const T *)w->dinv, w->scalars,
                             st->partials, st->counter)));
    else
        CG_DISPATCH_T(w, (cg_update_r_kernel<T, false><<<(unsigned)st->grid, CG_THREADS, 0, stream>>>(
                             w->n, (T *)w->r, (const T *)w->q, (const T *)w->dinv, w->scalars,
                             st->partials, st->counter)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t cuda_update_xp(nzi_cg_work_t *w, void *x) {
    nz_context_t *ctx = w->ctx;
    cg_cuda_state_t *st = cuda_state(w);
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    if (w->jacobi)
        CG_DISPATCH_T(w, (cg_update_xp_kernel<T, true><<<(unsigned)st->grid, CG_THREADS, 0, stream>>>(
                             w->n, (T *)x, (T *)w->p, (const T *)w->r, (const T *)w->dinv,
                             w->scalars)));
    else
        CG_DISPATCH_T(w, (cg_update_xp_kernel<T, false><<<(unsigned)st->grid, CG_THREADS, 0, stream>>>(
                             w->n, (T *)x, (T *)w->p, (const T *)w->r, (const T *)w->dinv,
                             w->scalars)));
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t cuda_get_scalars(nzi_cg_work_t *w, nzi_cg_scalars_t *host) {
    return nz_cuda_memcpy(w->ctx, host, w->scalars, sizeof *host, NZI_D2H);
}

static nz_status_t cuda_set_scalars(nzi_cg_work_t *w, const nzi_cg_scalars_t *host) {
    return nz_cuda_memcpy(w->ctx, w->scalars, host, sizeof *host, NZI_H2D);
}

static nz_status_t cuda_get_history(nzi_cg_work_t *w, double *host, int64_t count) {
    if (count <= 0) return NZ_SUCCESS;
    return nz_cuda_memcpy(w->ctx, host, w->history, (size_t)count * sizeof(double), NZI_D2H);
}

static nz_status_t cuda_synchronize(nzi_cg_work_t *w) { return nz_cuda_synchronize(w->ctx); }

static nz_status_t cuda_capture_begin(nzi_cg_work_t *w) {
    nz_context_t *ctx = w->ctx;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CUDA_TRY(ctx, cudaStreamBeginCapture(nzi_cuda(ctx)->stream,
                                             cudaStreamCaptureModeThreadLocal));
    return NZ_SUCCESS;
}

/* Ends the capture whatever happened inside it; a failed capture or instantiation is not an
 * error (the caller falls back to plain launches), only reported through *ok. */
static nz_status_t cuda_capture_end(nzi_cg_work_t *w, int *ok) {
    nz_context_t *ctx = w->ctx;
    cg_cuda_state_t *st = cuda_state(w);
    cudaGraph_t graph = NULL;
    *ok = 0;
    cudaError_t err = cudaStreamEndCapture(nzi_cuda(ctx)->stream, &graph);
    if (err != cudaSuccess || graph == NULL) {
        (void)cudaGetLastError();
        if (graph != NULL) (void)cudaGraphDestroy(graph);
        return NZ_SUCCESS;
    }
    err = cudaGraphInstantiate(&st->exec, graph, 0);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        (void)cudaGraphDestroy(graph);
        st->exec = NULL;
        return NZ_SUCCESS;
    }
    st->graph = graph;
    *ok = 1;
    return NZ_SUCCESS;
}

static nz_status_t cuda_replay(nzi_cg_work_t *w) {
    nz_context_t *ctx = w->ctx;
    NZI_CUDA_TRY(ctx, cudaGraphLaunch(cuda_state(w)->exec, nzi_cuda(ctx)->stream));
    return NZ_SUCCESS;
}

static const nzi_cg_ops_t cg_cuda_ops = {
    cuda_create,        cuda_destroy,     cuda_jacobi,      cuda_norm2,       cuda_maxabs,
    cuda_scale,         cuda_zero,        cuda_residual,    cuda_dot_pq,      cuda_update_r,
    cuda_update_xp,     cuda_get_scalars, cuda_set_scalars, cuda_get_history, cuda_synchronize,
    cuda_capture_begin, cuda_capture_end, cuda_replay,
};

extern "C" const struct nzi_cg_ops *nz_cuda_cg_ops(void) { return &cg_cuda_ops; }
