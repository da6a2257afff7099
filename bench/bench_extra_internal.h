/* bench_extra_internal.h: what the transpose / SpMM benchmark's files share: the run, its rows, a case, timing and checks. */
#ifndef NZ_BENCH_EXTRA_INTERNAL_H
#define NZ_BENCH_EXTRA_INTERNAL_H

#include "bench_extra.h"
#include "safe_output.h"

#include <cuda_runtime.h>
#include <cusparse.h>

/*
 * Everything runs on one stream of our own: the Nonzero context is bound to it
 * (nz_context_set_device(ctx, 0, stream)) and so is the cuSPARSE handle, so a pair of events
 * around a call times exactly that call. Each kernel: 3 untimed runs, then `runs` runs each
 * between its own pair of events, median reported. cuSPARSE gets its own copy of the CSR arrays
 * (32-bit offsets when they fit), made with the CUDA runtime from nz_matrix_csr_arrays, so the
 * benchmark uses only the public API of Nonzero.
 */

#define EXTRA_WARMUP 3
#define EXTRA_MIN_RUNS 20
#define EXTRA_TOL_FACTOR 4.0

/* The run: output, context, stream, cuSPARSE handle, events, precision. */
typedef struct nzb_extra {
    FILE *out, *csv;
    nzu_output_t csv_out; /* replaced only when complete (safe_output.h) */
    nz_context_t *ctx;
    cudaStream_t stream;
    cusparseHandle_t handle;
    cudaEvent_t *starts, *stops;
    int runs;
    nz_value_type_t vt;
    size_t vs;
    int failures;
} nzb_extra_t;

/* One row of the report. */
typedef struct nzb_extra_row {
    const char *matrix;
    char op;
    int64_t k;
    const char *layout;
    char kernel[48];
    double seconds;     /* median; 0 = did not run */
    double gbs;
    double plan_seconds;
    char best[32];      /* best cuSPARSE kernel of the group ("" for cuSPARSE rows) */
    double best_seconds;
    const char *check;  /* "ok", "WRONG", "refused", "error" */
    char note[160];
} nzb_extra_row_t;

/* A host CSR matrix, its device copies (Nonzero's and cuSPARSE's). */
typedef struct nzb_extra_case {
    const char *name;
    nz_matrix_t *A;       /* host CSR */
    nz_matrix_t *dA;      /* Nonzero device copy */
    nz_matrix_t *dsell;   /* device SELL-32 copy, or NULL when device SELL is unavailable */
    int64_t rows, cols, nnz;
    const int64_t *offsets;
    const int32_t *columns;
    const void *values;
    void *c_offsets, *c_columns, *c_values; /* cuSPARSE's copy */
    cusparseIndexType_t c_offset_type;
    size_t matrix_bytes;  /* minimal CSR bytes: 32-bit offsets + nnz (index + value) */
} nzb_extra_case_t;

/* Where a kernel's result lands and how it is checked: the reference (n x kref, row-major, with
 * its bounds and term counts), Y copied back to `host` (copy_bytes from `device`), the part of Y
 * checked (n rows, k columns, layout, ld), and the bytes one run moves (for GB/s). */
typedef struct nzb_extra_output {
    const double *ref, *bound;
    const int64_t *len;
    int64_t kref;
    void *host;
    const void *device;
    size_t copy_bytes;
    int64_t n, k;
    int row_major;
    int64_t ld;
    size_t bytes;
} nzb_extra_output_t;

/* Enqueue one execution on the stream; 0 or non-zero with a reason in msg. */
typedef int (*nzb_extra_launch_fn)(void *arg, char *msg, size_t msg_size);

/* A cuSPARSE SpMV (vx, vy) or SpMM (mx, my) call on a case's matrix, with its buffer. */
typedef struct nzb_extra_cusparse {
    nzb_extra_t *b;
    int spmm;
    cusparseOperation_t op;
    cusparseConstSpMatDescr_t mat;
    cusparseConstDnVecDescr_t vx;
    cusparseDnVecDescr_t vy;
    cusparseConstDnMatDescr_t mx;
    cusparseDnMatDescr_t my;
    cusparseSpMVAlg_t spmv_alg;
    cusparseSpMMAlg_t spmm_alg;
    void *buffer;
} nzb_extra_cusparse_t;

/* Our SpMV / SpMM plan executions as launches (arg: the struct). */
typedef struct nzb_extra_spmv {
    nz_spmv_plan_t *plan;
    nz_context_t *ctx;
    const void *x;
    void *y;
} nzb_extra_spmv_t;
typedef struct nzb_extra_spmm {
    nz_spmm_plan_t *plan;
    nz_context_t *ctx;
    const void *X;
    int64_t ldx;
    void *Y;
    int64_t ldy;
} nzb_extra_spmm_t;
int nzb_extra_run_spmv(void *arg, char *msg, size_t n);
int nzb_extra_run_spmm(void *arg, char *msg, size_t n);

/* ---- bench_extra_common.cu ------------------------------------------------------------------ */

void nzb_extra_print_header(nzb_extra_t *b);
/* Print a row (table and CSV); a row that is neither ok nor refused counts as a failure. */
void nzb_extra_print_row(nzb_extra_t *b, const nzb_extra_row_t *r);
/* A fresh row of a case: op 'N' or 'T', k columns, layout ("row", "col", "-"), kernel name. */
void nzb_extra_row_start(nzb_extra_row_t *r, const nzb_extra_case_t *c, char op, int64_t k,
                         const char *layout, const char *kernel);
/* Time fn (warm-up, then b->runs runs between events), copy Y back and verify it: r->seconds,
 * r->gbs, r->check ("error" with the reason in r->note when a launch failed). Returns 1 when the
 * row is ok. */
int nzb_extra_measure(nzb_extra_t *b, nzb_extra_row_t *r, nzb_extra_launch_fn fn, void *arg,
                      const nzb_extra_output_t *out);
/* The case's CSR for cuSPARSE (its own device copy); non-zero on failure. */
int nzb_extra_cusparse_matrix(const nzb_extra_t *b, const nzb_extra_case_t *c,
                              cusparseConstSpMatDescr_t *mat);
/* One cuSPARSE row with call's descriptors made (made = 0: they could not be): buffer and
 * preprocessing (the plan time), timing and check; a verified row faster than *best becomes the
 * group's best (best_name: the kernel without "cusparse/"). Prints the row; frees the call. */
void nzb_extra_cusparse_row(nzb_extra_t *b, nzb_extra_row_t *r, nzb_extra_cusparse_t *call,
                            int made, const nzb_extra_output_t *out, double *best,
                            char *best_name, size_t best_name_size);
/* Deterministic values in [-1, 1) for row r of column c of a dense operand, rounded to vt. */
double nzb_extra_input_value(int64_t r, int64_t c, nz_value_type_t vt);
/* References in double for k columns (input column c = nzb_extra_input_value(., c)): op N,
 * ref[r k + c] = sum_j a_rj x_jc; op T, over the transpose. bound: sum |a x|, len: terms. */
void nzb_extra_reference(const nzb_extra_case_t *c, nz_value_type_t vt, int transpose, int64_t k,
                         double *ref, double *bound, int64_t *len);
/* Fill a case from host CSR A (owned by the case from here on): device copies for Nonzero and
 * cuSPARSE. Non-zero with a reason in msg on failure (nzb_extra_case_close still needed). */
int nzb_extra_case_open(nzb_extra_t *b, nzb_extra_case_t *c, const char *name, nz_matrix_t *A,
                        char *msg, size_t n);
void nzb_extra_case_close(nzb_extra_case_t *c);

/* ---- bench_transpose.cu, bench_spmm.cu ----------------------------------------------------- */

/* y = A^T x: cuSPARSE CSR_ALG1 / ALG2, then ours (cached A^T with merge and vector, scatter). */
void nzb_extra_transpose(nzb_extra_t *b, nzb_extra_case_t *c);
/* Y = A X for each k and both layouts: cuSPARSE CSR_ALG1..3, then ours on CSR and SELL. */
void nzb_extra_spmm(nzb_extra_t *b, nzb_extra_case_t *c, const int64_t *ks, int num_ks);

#endif /* NZ_BENCH_EXTRA_INTERNAL_H */
