/* spmv_formats.c: CPU SpMV for CSC, COO, ELL, SELL, HYB, BSR, DIA in float and double. */
#include "nzi.h"
#include "cpu_kernels.h"
#include "lower_bound.h"

/* Rows per block in the ELL, HYB and DIA kernels: the partial sums live on the stack and each
 * entry position is swept across the block with contiguous loads. */
#define NZI_ROW_BLOCK 64

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
