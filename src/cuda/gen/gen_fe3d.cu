/* gen_fe3d.cu: the Q1 finite-element Poisson problem of nz_gen_fe3d, assembled directly on the GPU. */
#include "cuda_internal.h"
#include "fe3d_common.h"

#include <math.h>

/* ---- what is computed ------------------------------------------------------------------------
 * Bit for bit the matrix, load and nodal solution of src/gen/gen_fe3d.c (whose comment derives
 * the 27-point stencil 8h/3, 0, -h/6, -h/12 by the number of differing coordinates, and the
 * factored load 3 pi^2 g(x) g(y) g(z)): the Uppsala report's suggested remedy for the
 * host-to-device transfer that dominates a one-off solve.
 *
 * Row offsets come in closed form (nzi_fe3d_row_begin of fe3d_common.h), so there is no count
 * pass and no scan; nnz = S^3 with S = 3m - 2 on an m^3 grid of unknowns. One thread per row
 * writes its 8 / 12 / 18 / 27 entries by the host's own row pattern (nzi_fe3d_row_typed:
 * columns ascending, values rounded from double).
 * The O(m) factors g and s hold sines; they are computed on the host by the same expressions as
 * the host generator (the device sin may differ from glibc's in the last bit) and uploaded
 * (16 m bytes); the O(m^3) products are formed on the device in the host's order, so b and
 * u_exact match exactly too. Cost: one pass writing the matrix (about 27 x 12 bytes per row in
 * double); no host memory of size nnz is touched. */

#define FE3D_THREADS 256

/* Thread i assembles row i. */
template <typename T, typename Offset>
__global__ void __launch_bounds__(FE3D_THREADS)
fe3d_matrix_kernel(int64_t m, double centre, double face, double edge, double corner,
                   Offset *row_offsets, int32_t *col_indices, T *values) {
    const int64_t rows = m * m * m, S = 3 * m - 2;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const double stencil[4] = {centre, face, edge, corner};
    for (int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; row < rows; row += stride) {
        const int64_t k = nzi_fe3d_row_begin(m, row);
        row_offsets[row] = (Offset)k;
        if (row == rows - 1) row_offsets[rows] = (Offset)(S * S * S);
        nzi_fe3d_row_typed(m, stencil, row, col_indices + k, values + k,
                           sizeof(T) == sizeof(float));
    }
}

/* Thread i forms b_i and u_i from the per-axis factors (same operation order as the host). */
template <typename T>
__global__ void __launch_bounds__(FE3D_THREADS)
fe3d_vectors_kernel(int64_t m, const double *g, const double *s, T *b, T *u) {
    const double pi = 3.14159265358979323846;
    const int64_t rows = m * m * m;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += stride) {
        if (b != NULL) b[i] = (T)(3.0 * pi * pi * g[i % m] * g[(i / m) % m] * g[i / (m * m)]);
        if (u != NULL) u[i] = (T)(s[i % m] * s[(i / m) % m] * s[i / (m * m)]);
    }
}

template <typename T>
static nz_status_t fe3d_launch(nz_context_t *ctx, nz_matrix_t *M, int64_t n, const double *d_g,
                               const double *d_s, void *d_b, void *d_u) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t m = n - 1, rows = m * m * m;
    const double h = 1.0 / (double)n;
    const int64_t needed = (rows + FE3D_THREADS - 1) / FE3D_THREADS;
    const int64_t grid = nzi_cuda_grid_blocks(cs, FE3D_THREADS, 4, needed);
    if (M->device.offset_type == NZ_I32)
        fe3d_matrix_kernel<T, int32_t><<<(unsigned)grid, FE3D_THREADS, 0, cs->stream>>>(
            m, 8.0 * h / 3.0, 0.0, -h / 6.0, -h / 12.0, (int32_t *)M->device.row_offsets,
            M->device.col_indices, (T *)M->device.values);
    else
        fe3d_matrix_kernel<T, int64_t><<<(unsigned)grid, FE3D_THREADS, 0, cs->stream>>>(
            m, 8.0 * h / 3.0, 0.0, -h / 6.0, -h / 12.0, (int64_t *)M->device.row_offsets,
            M->device.col_indices, (T *)M->device.values);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    if (d_b != NULL || d_u != NULL) {
        fe3d_vectors_kernel<T><<<(unsigned)grid, FE3D_THREADS, 0, cs->stream>>>(
            m, d_g, d_s, (T *)d_b, (T *)d_u);
        NZI_CUDA_LAUNCH_CHECK(ctx);
    }
    return NZ_SUCCESS;
}

extern "C" nz_status_t nz_cuda_gen_fe3d(nz_context_t *ctx, nz_matrix_t **dA, int64_t n,
                                        nz_value_type_t value_type, void **d_b,
                                        void **d_u_exact) {
    const char *what = "nz_gen_fe3d_device";
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    double *factors = NULL, *d_factors = NULL;
    void *b = NULL, *u = NULL;
    const int64_t m = n - 1, rows = m * m * m, S = 3 * m - 2;
    int64_t nnz;
    size_t vs = nzi_value_size(value_type), offset_bytes, index_bytes, value_bytes, vector_bytes;
    NZI_TRY(nzi_cuda_enter(ctx));
    if (nzi_mul_overflow_i64(S * S, S, &nnz))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: n = %lld: nonzero count overflows", what,
                         (long long)n);
    const bool narrow = nnz <= INT32_MAX;
    if (nzi_mul_overflow_size((size_t)rows + 1, narrow ? 4 : 8, &offset_bytes) ||
        nzi_mul_overflow_size((size_t)nnz, 4, &index_bytes) ||
        nzi_mul_overflow_size((size_t)nnz, vs, &value_bytes) ||
        nzi_mul_overflow_size((size_t)rows, vs, &vector_bytes))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: n = %lld: array sizes overflow", what,
                         (long long)n);
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_CSR, value_type, rows, rows, nnz));
    M->location = NZ_DEVICE;
    M->device.offset_type = narrow ? NZ_I32 : NZ_I64;
    M->device.borrowed = false;
    NZI_CHECK(nz_cuda_malloc(ctx, &M->device.row_offsets, offset_bytes,
                             "nz_gen_fe3d_device: row offsets"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&M->device.col_indices, index_bytes,
                             "nz_gen_fe3d_device: column indices"));
    NZI_CHECK(nz_cuda_malloc(ctx, &M->device.values, value_bytes, "nz_gen_fe3d_device: values"));
    if (d_b != NULL || d_u_exact != NULL) {
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&factors, 2 * (size_t)m, sizeof(double),
                                  "nz_gen_fe3d_device: axis factors"));
        nzi_fe3d_axis_factors(n, factors, factors + m);
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&d_factors, 2 * (size_t)m * sizeof(double),
                                 "nz_gen_fe3d_device: axis factors"));
        NZI_CHECK(nz_cuda_memcpy(ctx, d_factors, factors, 2 * (size_t)m * sizeof(double), NZI_H2D));
        if (d_b != NULL)
            NZI_CHECK(nz_cuda_malloc(ctx, &b, vector_bytes, "nz_gen_fe3d_device: load vector b"));
        if (d_u_exact != NULL)
            NZI_CHECK(nz_cuda_malloc(ctx, &u, vector_bytes, "nz_gen_fe3d_device: exact solution"));
    }
    {
        const double *d_s = d_factors != NULL ? d_factors + m : NULL;
        if (value_type == NZ_F32)
            NZI_CHECK(fe3d_launch<float>(ctx, M, n, d_factors, d_s, b, u));
        else
            NZI_CHECK(fe3d_launch<double>(ctx, M, n, d_factors, d_s, b, u));
    }
    /* The factors are freed below: wait for the kernels that read them. */
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(nzi_cuda(ctx)->stream));
    *dA = M;
    M = NULL;
    if (d_b != NULL) *d_b = b;
    if (d_u_exact != NULL) *d_u_exact = u;
    b = u = NULL;
cleanup:
    nz_cuda_free(ctx, d_factors, (size_t)-1);
    nz_cuda_free(ctx, b, (size_t)-1);
    nz_cuda_free(ctx, u, (size_t)-1);
    nzi_free(ctx, factors);
    nzi_matrix_free(M);
    return status;
}
