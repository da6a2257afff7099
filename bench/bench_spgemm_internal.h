/* bench_spgemm_internal.h: what the SpGEMM benchmark's files share: checks and the cuSPARSE side. */
#ifndef NZ_BENCH_SPGEMM_INTERNAL_H
#define NZ_BENCH_SPGEMM_INTERNAL_H

#include "bench_spgemm.h"

#include <cuda_runtime.h>
#include <cusparse.h>

#define VERIFY_FULL_LIMIT 500000000LL /* products up to which every row is verified */
#define VERIFY_SAMPLE_ROWS 2000
#define VERIFY_HEAVY_ROWS 8

/* ---- bench_spgemm_verify.cu ----------------------------------------------------------------- */

/* Products per row of A*A (*per_row, malloc'd) and their total, and sum_i min(products_i, cols):
 * an upper bound on nnz(C). */
void nzb_spgemm_count_products(nz_context_t *ctx, const nz_matrix_t *A, int64_t *products,
                               int64_t *c_bound, int64_t **per_row);
/* The rows to verify (malloc'd, *n_list of them): every row when the product has at most
 * VERIFY_FULL_LIMIT multiplications, else the VERIFY_HEAVY_ROWS with the most products (marked
 * -1 in per_row) and VERIFY_SAMPLE_ROWS pseudo-random ones. */
int64_t *nzb_spgemm_verify_list(int64_t rows, int64_t products, int64_t *per_row,
                                int64_t *n_list);
/* Verify rows `list` of C = A*A against the CPU algorithm (in double, from A's values): identical
 * columns, values within 4 eps (k + 2) (|A||A|)_ij in C's precision. Returns mismatches (-1 when
 * the reference could not be computed) and describes the first in note. */
int64_t nzb_spgemm_verify_rows(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *C,
                               const int64_t *list, int64_t count, char *note, size_t note_size);

/* ---- bench_spgemm_cusparse.cu --------------------------------------------------------------- */

#define NZB_SPGEMM_CUSPARSE_ALGS 3 /* cusparseSpGEMM ALG1, ALG2, ALG3 */

/* One cuSPARSE algorithm on one matrix: median seconds, nnz(C), peak device bytes, or a note. */
typedef struct nzb_spgemm_cusparse {
    int ok;
    double seconds;
    int64_t c_nnz;
    size_t peak_bytes;
    char note[128];
} nzb_spgemm_cusparse_t;

/* "alg1", "alg2", "alg3" for a = 0, 1, 2. */
const char *nzb_spgemm_cusparse_name(int a);
/* Each cuSPARSE algorithm on A*A, nruns times (median), on device copies of host CSR A with
 * 32-bit offsets uploaded once (*upload_seconds: that copy); res[NZB_SPGEMM_CUSPARSE_ALGS]. An
 * nnz(C) other than c_nnz (ours) is appended to notes. */
void nzb_spgemm_cusparse_all(cusparseHandle_t handle, cudaStream_t stream, nz_context_t *ctx,
                             const nz_matrix_t *A, nz_value_type_t vt, int nruns, int64_t c_nnz,
                             nzb_spgemm_cusparse_t *res, double *upload_seconds, char *notes,
                             size_t notes_size);
/* Seconds of a pageable device-to-host copy of `bytes` (0 when it could not be made). */
double nzb_spgemm_download_seconds(size_t bytes);

#endif /* NZ_BENCH_SPGEMM_INTERNAL_H */
