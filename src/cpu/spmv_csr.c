/* spmv_csr.c: CPU CSR SpMV, serial reference and OpenMP row-parallel, float and double. */
#include "nzi.h"
#include "cpu_kernels.h"

/* Row i of y = alpha A x + beta y: one dot product over the row, accumulated in the storage type
 * (the reference tests compare against a separate double computation). BLAS semantics: beta == 0
 * means y is not read; alpha == 0 means A and x are not read. Rows are independent, so the
 * parallel kernel is bitwise identical to the serial one for any thread count. */
#define NZI_DEFINE_CSR(T, SUFFIX)                                                               \
    void nzi_cpu_csr_spmv_##SUFFIX(const nz_matrix_t *A, T alpha, const T *x, T beta, T *y,     \
                                   int parallel, int threads) {                                \
        const int64_t *row_offsets = A->host.csr.row_offsets;                                   \
        const int32_t *col_indices = A->host.csr.col_indices;                                   \
        const T *values = (const T *)A->host.csr.values;                                        \
        const int64_t rows = A->rows;                                                           \
        const int team = nzi_cpu_team(parallel, threads, (double)A->nnz);                       \
        NZI_OMP_FOR(team)                                                                       \
        for (int64_t i = 0; i < rows; i++) {                                                    \
            T sum = 0;                                                                          \
            if (alpha != 0)                                                                     \
                for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++)                   \
                    sum += values[k] * x[col_indices[k]];                                       \
            y[i] = beta == 0 ? alpha * sum : alpha * sum + beta * y[i];                         \
        }                                                                                       \
    }

NZI_DEFINE_CSR(float, f32)
NZI_DEFINE_CSR(double, f64)
