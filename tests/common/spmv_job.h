/* spmv_job.h: what the GPU SpMV tests share: one matrix's operands and double references, a checked run, the matrix makers. */
#ifndef NZ_SPMV_JOB_H
#define NZ_SPMV_JOB_H

#include "testutil.h"

/* Tolerance factor of nzt_compare for every SpMV result (scaled by row length x eps). */
#define NZT_SPMV_TOL 4.0

/* Host and device vectors of one matrix in one precision for y = alpha op(A) x + beta y. Host
 * vectors are of type vt; the double copies are exactly what the kernels see, so the reference
 * is exact up to its own rounding. x has xn entries and y yn (cols and rows for NZ_OP_N, the
 * other way round for NZ_OP_T). */
typedef struct nzt_spmv_job {
    nz_context_t *ctx;
    const char *name;
    const nz_matrix_t *A; /* host CSR, value type vt */
    nz_operation_t op;
    nz_value_type_t vt;
    int64_t rows, cols, nnz, xn, yn;
    size_t vs;
    double *xd, *y0d;
    void *xh, *y0h, *yh, *yh2;
    double *ref_a, *bound_a; /* alpha = 1, beta = 0 */
    double *ref_b, *bound_b; /* alpha = -2.5, beta = 0.5 */
    int64_t *len;
    void *dx, *dy;
    /* with nan_x only: x with a NaN in entry 0 and an Inf in the last (NaN when xn == 1), its
     * reference for alpha = 1, beta = 0, and its device copy; NULL otherwise */
    double *xnd, *ref_n, *bound_n;
    void *xnh, *dxn;
} nzt_spmv_job_t;

/* Results nzt_spmv_run has compared, over the whole process. */
extern int64_t nzt_spmv_cases;

/* x from nzt_random_vector(seed), y0 from seed + 1; the references; x (and xn) on the device. */
void nzt_spmv_job_begin(nzt_spmv_job_t *j, nz_context_t *ctx, const char *name,
                        const nz_matrix_t *A, nz_operation_t op, uint64_t seed, int nan_x);
/* Checks that the device x is unchanged (the kernels must not write it), then frees everything. */
void nzt_spmv_job_end(nzt_spmv_job_t *j);

/* y = alpha op(A) dx + beta y once (y NaN-poisoned when beta == 0, else y0) and compared with
 * ref. Returns the number of bad entries (yn, at least 1, when the call itself failed); the
 * result stays in `out`. */
int64_t nzt_spmv_run(const nzt_spmv_job_t *j, nz_spmv_plan_t *plan, const char *label,
                     const void *dx, double alpha, double beta, const double *ref,
                     const double *bound, void *out);

/* The first of n elements of size vs where a and b differ bitwise, or -1. */
int64_t nzt_first_difference(const void *a, const void *b, int64_t n, size_t vs);

/* ---- matrix makers: a host CSR matrix of value type vt from arg ------------------------------ */
typedef nz_status_t (*nzt_make_fn)(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt,
                                   const void *arg);

/* arg: const int *, the zoo case (seed nzt_seed). */
nz_status_t nzt_make_zoo(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt, const void *arg);
/* arg: the Matrix Market path. */
nz_status_t nzt_make_file(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt, const void *arg);

/* A generator and its parameters (seeded generators take nzt_seed). */
typedef enum nzt_gen_kind {
    NZT_GEN_LAPLACE2D, /* p: nx, ny */
    NZT_GEN_LAPLACE3D, /* p: nx, ny, nz */
    NZT_GEN_RANDOM,    /* p: rows, cols, mean row length */
    NZT_GEN_RAIL,      /* p: rows, cols, row length */
    NZT_GEN_MIXED,     /* p: rows, short length, long rows, long length */
    NZT_GEN_RMAT,      /* p: scale, edge factor */
    NZT_GEN_BANDED,    /* p: n, lower, upper */
    NZT_GEN_FE3D       /* p: elements per side */
} nzt_gen_kind_t;
typedef struct nzt_gen_case {
    const char *name;
    nzt_gen_kind_t kind;
    int64_t p[4];
} nzt_gen_case_t;
/* arg: const nzt_gen_case_t *. */
nz_status_t nzt_make_gen(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt, const void *arg);

/* rows x cols with the given row lengths; row i's columns spread evenly over [0, cols); values
 * from nzt_random_vector(nzt_seed + 7). */
typedef struct nzt_long_rows {
    int64_t rows, cols;
    const int64_t *lengths;
} nzt_long_rows_t;
/* arg: const nzt_long_rows_t *. */
nz_status_t nzt_make_long_rows(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt,
                               const void *arg);

/* Both precisions (f32, then f64) of the matrix made by make(make_arg), each handed to
 * check(name, A, check_arg) and reported in a line of `width` columns. Takes one shard slot
 * (NZ_TEST_SHARD); a file this build cannot read (NZ_ERR_UNSUPPORTED from nzt_make_file, e.g. a
 * .mtx.gz without zlib) is noted and skipped. */
typedef void (*nzt_matrix_check_fn)(const char *name, const nz_matrix_t *A, const void *arg);
void nzt_both_precisions(nz_context_t *ctx, const char *name, nzt_make_fn make,
                         const void *make_arg, nzt_matrix_check_fn check, const void *check_arg,
                         int width);
/* "zoo:", then nzt_both_precisions on every matrix of the zoo. */
void nzt_both_precisions_zoo(nz_context_t *ctx, nzt_matrix_check_fn check, const void *check_arg,
                             int width);
/* "real matrices ...", then nzt_both_precisions on the real matrices of nzt_matrix_dir() (read
 * with nzt_make_file): every step-th, or, with wanted > 0, about `wanted` of them. Returns 0,
 * after a line saying so, when NZ_MATRIX_DIR is not set; else 1. */
int nzt_both_precisions_real(nz_context_t *ctx, int step, int wanted, nzt_matrix_check_fn check,
                             const void *check_arg, int width);

/* ---- the CUDA CSR tests (test_spmv_csr*.c) ------------------------------------------------- */

/* A context on device 0 (nzt_gpu_context) whose tunables ask for 3 column panels, so that small
 * test matrices are split too (auto splits only x wider than L2 / 6), and the CSR algorithms of
 * nz_spmv_list(NZ_BACKEND_CUDA), at most max, in algs (printed; at least 3 are expected). */
nz_context_t *nzt_csr_gpu_context(const char *note, nz_alg_t *algs, int max, int *num_algs);

/* The job of host CSR A (op N, x from nzt_seed + 11) and A on the device with 32-bit, then
 * 64-bit, row offsets: check(j, dA, bits) on each. */
typedef void (*nzt_device_check_fn)(const nzt_spmv_job_t *j, const nz_matrix_t *dA, int bits);
void nzt_csr_each_offset_width(nz_context_t *ctx, const char *name, const nz_matrix_t *A,
                               nzt_device_check_fn check);

/* The plan flags each algorithm is checked with: 0, plus, with with_forms, the flag that switches
 * its other form (NZ_PLAN_LIGHT_PER_ROW: LightSpMV's one row per atomic instead of chunks;
 * NZ_PLAN_CACHE_HINTS: streaming loads in vector and merge) and the plan layouts (column panels
 * and reordering on vector, merge and adaptive; compressed indices on vector). Returns the
 * number of settings written to flags[]. */
#define NZT_CSR_MAX_FLAG_SETTINGS 5
int nzt_csr_flag_settings(nz_alg_t alg, int with_forms, unsigned flags[NZT_CSR_MAX_FLAG_SETTINGS]);
/* " hints", " panels+", ...: the flags in a label ("" for none). */
const char *nzt_csr_flags_label(unsigned flags);

#endif /* NZ_SPMV_JOB_H */
