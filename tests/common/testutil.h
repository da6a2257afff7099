/* testutil.h: shared test helpers: checks, the awkward-matrix zoo, double references, poisoning. */
#ifndef NZ_TESTUTIL_H
#define NZ_TESTUTIL_H

#include "nonzero.h"
#include "nzi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern int nzt_failures;
extern uint64_t nzt_seed;

/* Record a failure with file:line and the seed; the test continues. */
#define NZT_CHECK(cond, ...)                                                                    \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            nzt_failures++;                                                                     \
            fprintf(stderr, "%s:%d: check failed: %s (seed %llu): ", __FILE__, __LINE__, #cond, \
                    (unsigned long long)nzt_seed);                                              \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fputc('\n', stderr);                                                                \
        }                                                                                       \
    } while (0)

/* A call that must succeed; aborts the test (exit 1) otherwise, printing the last error. */
#define NZT_OK(ctx, call)                                                                       \
    do {                                                                                        \
        nz_status_t nzt_s_ = (call);                                                            \
        if (nzt_s_ != NZ_SUCCESS) {                                                             \
            fprintf(stderr, "%s:%d: %s returned %d (%s): %s\n", __FILE__, __LINE__, #call,       \
                    (int)nzt_s_, nz_status_string(nzt_s_), nz_context_last_error(ctx));         \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

/* Exit with ctest's skip code after printing why. */
#define NZT_SKIP(...)                                                                           \
    do {                                                                                        \
        fprintf(stdout, "SKIP: ");                                                              \
        fprintf(stdout, __VA_ARGS__);                                                           \
        fputc('\n', stdout);                                                                    \
        exit(77);                                                                               \
    } while (0)

/* Seed from NZ_TEST_SEED or a fixed default; printed on failure. */
void nzt_init(int argc, char **argv);
/* Print a summary and return the process exit status (0 iff no failures). */
int nzt_finish(const char *name);

/* The awkward-shape zoo: a deterministic matrix for case k = 0 .. nzt_zoo_count() - 1. */
int nzt_zoo_count(void);
const char *nzt_zoo_name(int k);
nz_status_t nzt_zoo_matrix(nz_context_t *ctx, nz_matrix_t **A, int k, nz_value_type_t vt,
                           uint64_t seed);

/* Double-precision reference y_ref = alpha op(A) x + beta y0 for a host CSR matrix (x, y0 in
 * double). Also returns per-row magnitude bound[i] = |alpha| sum |a_ij x_j| + |beta y0_i| and
 * row length, used to scale the tolerance. op: NZ_OP_N or NZ_OP_T. */
void nzt_reference_spmv(const nz_matrix_t *A, nz_operation_t op, double alpha, const double *x,
                        double beta, const double *y0, double *y_ref, double *bound,
                        int64_t *row_length);

/* Compare y (of type vt) against y_ref: |y - y_ref| <= tol_factor * eps(vt) * (len + 2) * bound
 * + tiny. Returns the number of bad entries (prints the first few with `what`). NaN fails. */
int64_t nzt_compare(const char *what, nz_value_type_t vt, const void *y, const double *y_ref,
                    const double *bound, const int64_t *row_length, int64_t n, double tol_factor);

/* Fill n values of type vt with a signalling pattern (NaN) so unwritten entries are caught. */
void nzt_poison(void *y, nz_value_type_t vt, int64_t n);
/* Random values in [-1, 1) as doubles, and the same converted into an array of type vt. */
void nzt_random_vector(double *xd, void *x, nz_value_type_t vt, int64_t n, uint64_t seed);
/* Convert n doubles to vt in dst. */
void nzt_from_double(void *dst, nz_value_type_t vt, const double *src, int64_t n);

/* The real-matrix directory (NZ_MATRIX_DIR) or NULL; tests/data (NZ_TEST_DATA_DIR). */
const char *nzt_matrix_dir(void);
const char *nzt_data_dir(void);
/* List *.mtx and *.mtx.gz names in dir (sorted); returns count, *names malloc'ed (free with
 * nzt_free_names). */
int nzt_list_matrices(const char *dir, char ***names);
void nzt_free_names(char **names, int count);

/* An environment switch (NZ_TEST_QUICK, NZ_TEST_SANITIZER, ...): set, non-empty and not "0". */
int nzt_env_flag(const char *name);
/* NZ_TEST_SHARD=I/N splits a test binary's cases over N processes (for slow compute-sanitizer
 * tools): the k-th call returns 1 when k % N == I, and always 1 without the variable. Call it at
 * the top of each case, before anything data-dependent, so every shard counts the same cases. */
int nzt_shard_take(void);

/* GPU tests: exit with ctest's skip code and the reason when there is no device (or no CUDA in
 * this build); otherwise a new context bound to device 0, whose name is printed with `note`. */
nz_context_t *nzt_gpu_context(const char *note);

/* The algorithms nz_spmv_list names for (backend, format), in its order, at most max of them in
 * algs; returns how many. */
int nzt_spmv_algs(nz_backend_t backend, nz_format_t format, nz_alg_t *algs, int max);

/* Set on ctx the tunables `base` (the context's own when NULL) with the NZ_TUNE_* assignments
 * settings[0 .. count) parsed onto it (NULL entries skipped), as the CLI maps its environment.
 * An assignment nz_tunables_parse refuses is a failure unless its text contains "junk" (a
 * deliberately invalid value, which leaves the field as it was, as in the CLI). */
void nzt_set_tunables(nz_context_t *ctx, const nz_tunables_t *base, const char *const *settings,
                      int count);

/* Small helpers shared by the tests (values are read and written with nzi_get / nzi_set and
 * sized with nzi_value_size from nzi.h). */
/* A new host CSR matrix with host CSR A's pattern and new values (nzt_random_vector(seed)). */
nz_matrix_t *nzt_new_values(nz_context_t *ctx, const nz_matrix_t *A, uint64_t seed);
/* ||x - y|| / ||y|| (||x - y|| when y = 0), in double. */
double nzt_rel_diff(const double *x, const double *y, int64_t n);
/* nz_precond_create(..., NZ_PRECOND_AMG) with the AMG options ao (NULL: defaults). */
nz_status_t nzt_amg(nz_context_t *ctx, nz_preconditioner_t **M, const nz_matrix_t *A,
                    const nz_amg_options_t *ao);

/* Host CSR A's pattern with every column shifted by `shift` (cyclically, rows re-sorted): the
 * same shape and nonzero count, another pattern; A's values. */
nz_matrix_t *nzt_shifted_pattern(nz_context_t *ctx, const nz_matrix_t *A, int32_t shift);
/* fn on up to `max` square CSR matrices of the test data (read as f64) with 0 < nnz < max_nnz;
 * the number it was called on. */
int nzt_each_square_data_matrix(nz_context_t *ctx, int max, int64_t max_nnz,
                                void (*fn)(nz_context_t *ctx, const char *name, nz_matrix_t *M,
                                           void *arg),
                                void *arg);

static inline const char *nzt_vt_name(nz_value_type_t vt) { return vt == NZ_F32 ? "f32" : "f64"; }
/* n as an allocation count, at least 1 (so empty shapes still get a valid buffer). */
static inline size_t nzt_at_least_one(int64_t n) { return n > 0 ? (size_t)n : 1; }
/* Dense operands: the index of (r, c), and the elements a rows x k operand with leading
 * dimension ld spans (at least 1). */
static inline int64_t nzt_dense_at(nz_dense_layout_t layout, int64_t ld, int64_t r, int64_t c) {
    return layout == NZ_ROW_MAJOR ? r * ld + c : c * ld + r;
}
static inline int64_t nzt_dense_span(nz_dense_layout_t layout, int64_t rows, int64_t k,
                                     int64_t ld) {
    int64_t n = layout == NZ_ROW_MAJOR ? rows * ld : k * ld;
    return n > 0 ? n : 1;
}

/* The dense operands of op(A) X with k columns in `layout`, each leading dimension `pad`
 * elements beyond the least (k row-major, the row count column-major): X has xrows rows, Y has
 * yrows; nx and ny are the elements they span (nzt_dense_span). */
typedef struct nzt_dense_shape {
    int64_t xrows, yrows, ldx, ldy, nx, ny;
} nzt_dense_shape_t;
nzt_dense_shape_t nzt_dense_shape(const nz_matrix_info_t *info, nz_operation_t op,
                                  nz_dense_layout_t layout, int64_t k, int64_t pad);

/* SpMM operands for case seeds: X (xrows x k) random, Y (yrows x k) y0 or NaN when beta == 0,
 * both in `layout` with leading dimensions ldx / ldy, every gap element NZT_SENTINEL; column c
 * of X and y0 from nzt_random_vector with seeds nzt_seed + 100 + c and nzt_seed + 200 + c,
 * left as doubles in xd / y0 (column k - 1 last). nx, ny: the elements X and Y span. */
#define NZT_SENTINEL 12345.0
void nzt_fill_dense_operands(nz_value_type_t vt, nz_dense_layout_t layout, int64_t k,
                             void *X, int64_t xrows, int64_t ldx, int64_t nx, double *xd,
                             void *Y, int64_t yrows, int64_t ldy, int64_t ny, double *y0,
                             double beta);

/* SpGEMM operands whose product has no nonzeros: A (40 x 20) uses only columns 0..9, B (20 x 40)
 * has entries only in rows 10..19. */
nz_status_t nzt_spgemm_empty_product(nz_context_t *ctx, nz_matrix_t **A, nz_matrix_t **B);

/* SpGEMM on the real matrices of nzt_matrix_dir() (files of at most max_bytes): check(ctx, what,
 * A, B, arg) with B = A for square matrices and B = A^T for the first four rectangular ones.
 * take(index) (NULL: every file) is asked once per file read, in order, and a file it refuses is
 * left out (a rectangular one still counts among the four). Prints what it did under `test`. */
typedef void (*nzt_product_check_fn)(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                                     const nz_matrix_t *B, void *arg);
void nzt_spgemm_real(nz_context_t *ctx, const char *test, long long max_bytes,
                     int (*take)(int index), nzt_product_check_fn check, void *arg);

/* 1 when host CSR matrices C and D have the same shape, row offsets and columns (and, with
 * values != 0, bitwise the same values), else 0 (and a line on stderr says what differs). */
int nzt_csr_identical(nz_context_t *ctx, const nz_matrix_t *C, const nz_matrix_t *D, int values);

/* Dense row-major copy (rows x cols, at least one element, duplicates summed) of a host CSR
 * matrix; free() it. */
double *nzt_dense_of(nz_context_t *ctx, const nz_matrix_t *A, int64_t *rows, int64_t *cols);

/* A whole file, NUL-terminated, its length in *size (NULL when it cannot be opened); free() it. */
char *nzt_read_file(const char *path, size_t *size);
/* Write size bytes to path, or exit with a message. */
void nzt_write_file(const char *path, const void *data, size_t size);

/* Checked malloc for tests (exits on failure). */
void *nzt_malloc(size_t bytes);

#endif /* NZ_TESTUTIL_H */
