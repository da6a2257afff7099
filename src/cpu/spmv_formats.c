/* spmv_formats.c: CPU SpMV for CSC, COO, ELL, SELL, HYB, BSR, DIA in float and double. */
#include "nzi.h"
#include "cpu_kernels.h"

/* Rows per block in the ELL, HYB and DIA kernels: the partial sums live on the stack and each
 * entry position is swept across the block with contiguous loads. */
#define NZI_ROW_BLOCK 64

/* First k in the sorted row_indices[0 .. nnz) with row_indices[k] >= row (lower bound). */
static int64_t nzi_first_entry_of_row(const int32_t *row_indices, int64_t nnz, int64_t row) {
    int64_t lo = 0, hi = nnz;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (row_indices[mid] < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#define NZI_T float
#define NZI_NAME(f) f##_f32
#include "spmv_formats_body.h"
#undef NZI_T
#undef NZI_NAME

#define NZI_T double
#define NZI_NAME(f) f##_f64
#include "spmv_formats_body.h"
#undef NZI_T
#undef NZI_NAME
