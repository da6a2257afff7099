/* test_fault_all.c: allocation-failure injection over every public CPU-side function (k = 1, 2, ... until success). */
#include "testutil.h"

#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * For each case the driver fails the k-th allocation for k = 1, 2, ... and checks, after every
 * failed call: the status is NZ_ERR_OUT_OF_MEMORY and an injected failure really happened; the
 * context's live block count is back to what it was before the call (no leak); every output is
 * untouched (handles still NULL, caller buffers bitwise unchanged, no file left at an output
 * path); the last-error message is set; and the context still works (a small generator call
 * succeeds). The loop ends at the first k whose call succeeds without an injected failure; a
 * call that succeeds although an allocation failed (an optional allocation with a fallback) is
 * counted as "recovered" and the loop goes on. The final line gives the figures quoted in
 * docs/RELIABILITY.md: cases (function x variant), k values run, failures injected.
 *
 * nz_cg_solve with record_history allocates the history it returns before x is touched (it used
 * to allocate it after the iterations, leaving the solution in x behind an error status); the
 * test holds it to the same rule as every other call: x untouched on failure.
 *
 * nz_context_create is not covered: the context holds the counting allocator, so its own block
 * comes from calloc before any injection can be armed.
 */

typedef struct fault_case fault_case_t;
typedef nz_status_t (*case_fn)(fault_case_t *c);

struct fault_case {
    nz_context_t *ctx;
    /* parameters of the current case */
    int format, format2;
    nz_alg_t alg;
    nz_operation_t op;
    nz_value_type_t vt;
    const char *path;        /* input or output file */
    /* outputs: must be untouched when the call fails */
    nz_matrix_t *M;
    nz_spmv_plan_t *P;
    nz_spmm_plan_t *Q;
    void *p1, *p2;
    int64_t rows, cols;
    nz_cg_result_t result;
    nz_solve_result_t solve_result; /* nz_solve */
    nz_preconditioner_t *Mp;        /* nz_precond_create */
    void *buf;               /* caller array the call may write (y, x); restored before each try */
    const void *buf_init;
    size_t buf_bytes;
    bool output_file;        /* path is an output: it must not exist after a failure */
    bool buf_may_be_final;   /* known deviation: a failure may leave buf at the final result */
};

/* ---- fixtures ------------------------------------------------------------------------------ */

static nz_matrix_t *A;                      /* 40 x 33 random, f64, host CSR */
static nz_matrix_t *A32;                    /* the same in f32 */
static nz_matrix_t *AT;                     /* its transpose (for A * A^T) */
static double *spmm_x;                      /* 40 x 3 column-major block */
static nz_matrix_t *F[NZ_FORMAT_COUNT];     /* A in every format */
static nz_matrix_t *S;                      /* SPD: 2-D Laplacian 7 x 6 */
static nz_matrix_t *S_sell;                 /* S as SELL */
static nz_spmv_plan_t *P_exec;              /* a plan for the execute case */
static double *x_vec, *y_init, *y_buf, *b_vec, *x0_vec, *x_buf, *dense;
static char dir[64], path_mtx[128], path_gz[128], path_nzb[128], path_nzb32[128], path_dense[128],
    path_out[128], path_out_gz[128], path_out_nzb[128], path_sym[512];
static char *mm_text;
static size_t mm_text_size;
static nz_format_options_t loose; /* padding limit lifted so every format accepts A */

static int64_t n_cases, n_k, n_injected, n_recovered, n_deviations;

static uint64_t fnv1a(const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void release_outputs(fault_case_t *c) {
    nz_matrix_destroy(&c->M);
    nz_spmv_plan_destroy(&c->P);
    nz_spmm_plan_destroy(&c->Q);
    nz_free(c->ctx, c->p1);
    nz_free(c->ctx, c->p2);
    nz_free(c->ctx, c->result.history);
    nz_free(c->ctx, c->solve_result.history);
    nz_precond_destroy(&c->Mp);
    c->p1 = c->p2 = NULL;
    c->result.history = NULL;
    c->solve_result.history = NULL;
}

static void reset_outputs(fault_case_t *c) {
    c->M = NULL;
    c->P = NULL;
    c->Q = NULL;
    c->Mp = NULL;
    c->p1 = c->p2 = NULL;
    c->rows = c->cols = -7;
    memset(&c->result, 0, sizeof c->result);
    memset(&c->solve_result, 0, sizeof c->solve_result);
    if (c->buf != NULL) memcpy(c->buf, c->buf_init, c->buf_bytes);
    if (c->output_file) remove(c->path);
}

static void drive(const char *name, case_fn fn, fault_case_t *c) {
    nz_context_t *ctx = c->ctx;
    int64_t k, injected = 0, recovered = 0, deferred = 0;
    uint64_t deferred_hash = 0;
    bool done = false;
    for (k = 1; k <= 100000 && !done; k++) {
        reset_outputs(c);
        uint64_t h0 = c->buf != NULL ? fnv1a(c->buf, c->buf_bytes) : 0;
        nz_alloc_stats_t s0, s1;
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t st = fn(c);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
        bool fired = s1.failed_allocs > s0.failed_allocs;
        if (st >= 0) {
            if (deferred > 0)
                NZT_CHECK(fnv1a(c->buf, c->buf_bytes) == deferred_hash,
                          "%s: a failed call left the caller array neither untouched nor final",
                          name);
            release_outputs(c);
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
            NZT_CHECK(s1.live_blocks == s0.live_blocks, "%s k=%lld: success, but %lld blocks leak",
                      name, (long long)k, (long long)(s1.live_blocks - s0.live_blocks));
            if (fired)
                recovered++;
            else
                done = true;
            continue;
        }
        injected++;
        NZT_CHECK(fired, "%s k=%lld: status %d (%s) without an injected failure: %s", name,
                  (long long)k, (int)st, nz_status_string(st), nz_context_last_error(ctx));
        NZT_CHECK(st == NZ_ERR_OUT_OF_MEMORY, "%s k=%lld: status %d (%s), not out of memory: %s",
                  name, (long long)k, (int)st, nz_status_string(st), nz_context_last_error(ctx));
        NZT_CHECK(s1.live_blocks == s0.live_blocks, "%s k=%lld: %lld blocks leak after failure",
                  name, (long long)k, (long long)(s1.live_blocks - s0.live_blocks));
        NZT_CHECK(c->M == NULL && c->P == NULL && c->Q == NULL && c->p1 == NULL && c->p2 == NULL &&
                      c->Mp == NULL,
                  "%s k=%lld: an output handle was set on failure", name, (long long)k);
        NZT_CHECK(c->rows == -7 && c->cols == -7, "%s k=%lld: dimension outputs written on failure",
                  name, (long long)k);
        NZT_CHECK(c->result.history == NULL && c->solve_result.history == NULL,
                  "%s k=%lld: solver history set on failure", name, (long long)k);
        if (c->buf != NULL && c->buf_may_be_final && fnv1a(c->buf, c->buf_bytes) != h0) {
            NZT_CHECK(deferred == 0 || fnv1a(c->buf, c->buf_bytes) == deferred_hash,
                      "%s k=%lld: caller array left in two different states", name, (long long)k);
            deferred_hash = fnv1a(c->buf, c->buf_bytes);
            deferred++;
        } else if (c->buf != NULL) {
            NZT_CHECK(fnv1a(c->buf, c->buf_bytes) == h0, "%s k=%lld: caller array written on failure",
                      name, (long long)k);
        }
        if (c->output_file)
            NZT_CHECK(!file_exists(c->path), "%s k=%lld: partial output file %s left behind", name,
                      (long long)k, c->path);
        NZT_CHECK(nz_context_last_error(ctx)[0] != '\0', "%s k=%lld: no error message", name,
                  (long long)k);
        /* the context is still usable */
        nz_matrix_t *T = NULL;
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &T, 3, 3, NZ_F64));
        nz_matrix_destroy(&T);
        if (!fired) break; /* a genuine error: reported above, do not loop forever */
        if (nzt_failures > 50) break;
    }
    if (!done) NZT_CHECK(done, "%s: never succeeded (last k = %lld)", name, (long long)(k - 1));
    release_outputs(c);
    reset_outputs(c);
    c->buf = NULL;
    c->output_file = false;
    c->buf_may_be_final = false;
    n_deviations += deferred;
    n_cases++;
    n_k += k - 1;
    n_injected += injected;
    n_recovered += recovered;
    if (getenv("NZ_FAULT_VERBOSE") != NULL)
        printf("  %-44s k = 1..%lld (%lld injected, %lld recovered)\n", name, (long long)(k - 1),
               (long long)injected, (long long)recovered);
}

/* ---- the cases ------------------------------------------------------------------------------ */

static nz_status_t c_malloc(fault_case_t *c) { return nz_malloc(c->ctx, &c->p1, 1000); }

static nz_status_t c_create_csr(fault_case_t *c) {
    /* unsorted rows with a duplicate, in both offset widths */
    static const int32_t ro32[] = {0, 3, 3, 6, 7};
    static const int64_t ro64[] = {0, 3, 3, 6, 7};
    static const int32_t ci[] = {4, 0, 4, 2, 1, 0, 3};
    static const double v[] = {1, 2, 3, 4, 5, 6, 7};
    if (c->format == 0)
        return nz_matrix_create_csr(c->ctx, &c->M, 4, 5, NZ_I32, ro32, ci, NZ_F64, v);
    return nz_matrix_create_csr(c->ctx, &c->M, 4, 5, NZ_I64, ro64, ci, NZ_F64, NULL);
}

static nz_status_t c_create_coo(fault_case_t *c) {
    static const int32_t ri[] = {3, 0, 3, 1, 0, 3};
    static const int32_t ci[] = {2, 1, 2, 0, 4, 0};
    static const float v[] = {1, 2, 3, 4, 5, 6};
    return nz_matrix_create_coo(c->ctx, &c->M, 4, 5, 6, ri, ci, NZ_F32, c->format ? v : NULL);
}

static nz_status_t c_convert(fault_case_t *c) {
    return nz_matrix_convert(c->ctx, &c->M, F[c->format], (nz_format_t)c->format2, &loose);
}
static nz_status_t c_convert_values(fault_case_t *c) {
    return nz_matrix_convert_values(c->ctx, &c->M, F[c->format], c->vt);
}
static nz_status_t c_transpose(fault_case_t *c) {
    return nz_matrix_transpose(c->ctx, &c->M, F[c->format]);
}
static nz_status_t c_stats(fault_case_t *c) {
    nz_matrix_stats_t st;
    return nz_matrix_stats(c->ctx, &st, F[c->format]);
}
static nz_status_t c_mm_read(fault_case_t *c) { return nz_mm_read(c->ctx, &c->M, c->path, c->vt); }
static nz_status_t c_mm_read_buffer(fault_case_t *c) {
    return nz_mm_read_buffer(c->ctx, &c->M, mm_text, mm_text_size, "buffer", c->vt);
}
static nz_status_t c_mm_read_dense(fault_case_t *c) {
    return nz_mm_read_dense(c->ctx, &c->p1, &c->rows, &c->cols, c->path, c->vt);
}
static nz_status_t c_mm_write(fault_case_t *c) { return nz_mm_write(c->ctx, c->path, F[c->format]); }
static nz_status_t c_mm_write_dense(fault_case_t *c) {
    return nz_mm_write_dense(c->ctx, c->path, NZ_F64, 9, 4, dense);
}
static nz_status_t c_binary_write(fault_case_t *c) {
    return nz_binary_write(c->ctx, c->path, F[c->format]);
}
static nz_status_t c_binary_read(fault_case_t *c) { return nz_binary_read(c->ctx, &c->M, c->path); }
static nz_status_t c_matrix_read(fault_case_t *c) {
    return nz_matrix_read(c->ctx, &c->M, c->path, c->vt);
}

static nz_status_t c_gen(fault_case_t *c) {
    nz_context_t *ctx = c->ctx;
    switch (c->format) {
    case 0: return nz_gen_laplace2d(ctx, &c->M, 9, 7, c->vt);
    case 1: return nz_gen_laplace3d(ctx, &c->M, 4, 3, 5, c->vt);
    case 2: return nz_gen_fe3d(ctx, &c->M, NULL, NULL, 4, c->vt);
    case 3: return nz_gen_fe3d(ctx, &c->M, &c->p1, &c->p2, 4, c->vt);
    case 4: return nz_gen_rmat(ctx, &c->M, 6, 4, 0, 0, 0, 11, c->vt);
    case 5: return nz_gen_rmat(ctx, &c->M, 5, 3, 0.45, 0.15, 0.15, 12, c->vt);
    case 6: return nz_gen_random(ctx, &c->M, 50, 37, 3.5, 13, c->vt);
    case 7: return nz_gen_rail(ctx, &c->M, 6, 300, 40, 14, c->vt);
    case 8: return nz_gen_mixed(ctx, &c->M, 80, 3, 2, 40, 15, c->vt);
    default: return nz_gen_banded(ctx, &c->M, 30, 2, 3, c->vt);
    }
}
static const char *const gen_names[] = {"laplace2d", "laplace3d", "fe3d", "fe3d+b+u", "rmat graph500",
                                        "rmat custom", "random", "rail", "mixed", "banded"};

static nz_status_t c_plan(fault_case_t *c) {
    return nz_spmv_plan_create(c->ctx, &c->P, F[c->format], c->op, c->alg, 0);
}
static nz_status_t c_execute(fault_case_t *c) {
    return nz_spmv_execute(P_exec, 1.5, x_vec, c->format ? 0.5 : 0.0, c->buf);
}
static nz_status_t c_spmv(fault_case_t *c) {
    return nz_spmv(c->ctx, F[c->format], c->alg, -1.0, x_vec, 2.0, c->buf);
}
static nz_status_t c_spmm_plan(fault_case_t *c) {
    return nz_spmm_plan_create(c->ctx, &c->Q, F[c->format], c->op, 3,
                               c->format2 ? NZ_ROW_MAJOR : NZ_COL_MAJOR, c->alg, 0);
}
static nz_status_t c_spmm_execute(fault_case_t *c) {
    nz_spmm_plan_t *Q = NULL;
    nz_status_t s = nz_spmm_plan_create(c->ctx, &Q, A, NZ_OP_N, 3, NZ_COL_MAJOR, NZ_ALG_PARALLEL, 0);
    if (s < 0) return s;
    s = nz_spmm_execute(Q, 1.0, spmm_x, 40, 0.5, c->buf, 40);
    nz_spmm_plan_destroy(&Q);
    return s;
}
static nz_status_t c_spgemm(fault_case_t *c) {
    nz_spgemm_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.alg = c->format ? NZ_SPGEMM_CPU : NZ_SPGEMM_AUTO;
    nz_spgemm_info_t info;
    return nz_spgemm(c->ctx, &c->M, c->format2 ? S : A, c->format2 ? S : AT, &opt, &info);
}

static nz_status_t c_cg(fault_case_t *c) {
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = 1e-10;
    opt.precond = c->format & 1 ? NZ_PRECOND_JACOBI : NZ_PRECOND_NONE;
    opt.record_history = (c->format & 2) != 0;
    return nz_cg_solve(c->ctx, c->format & 4 ? S_sell : S, b_vec, c->buf, &opt, &c->result);
}

/* nz_solve with BiCGSTAB / GMRES(5) / FGMRES(5) / MINRES (format >> 1) on the Laplacian S,
 * Jacobi by bit 0, with history */
static nz_status_t c_solve(fault_case_t *c) {
    nz_solve_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.method = (nz_method_t)(1 + (c->format >> 1));
    opt.rtol = 1e-10;
    opt.restart = 5;
    opt.precond = c->format & 1 ? NZ_PRECOND_JACOBI : NZ_PRECOND_NONE;
    opt.record_history = 1;
    return nz_solve(c->ctx, S, b_vec, c->buf, &opt, &c->solve_result);
}

/* Preconditioner objects: kind = format on S (USER: a copy callback); the apply of a made one
 * (it allocates nothing, so k = 1 succeeds); nz_solve with an object or the object-only kinds. */
static int64_t precond_n = 42;
static nz_status_t copy_callback(void *user, const void *r, void *z) {
    memcpy(z, r, (size_t)*(const int64_t *)user * sizeof(double));
    return NZ_SUCCESS;
}
static nz_preconditioner_t *P_precond; /* the object the apply and solve cases use */
static nz_status_t c_precond_create(fault_case_t *c) {
    nz_precond_options_t o;
    memset(&o, 0, sizeof o);
    o.apply = copy_callback;
    o.user = &precond_n;
    return nz_precond_create(c->ctx, &c->Mp, c->format2 ? S_sell : S, (nz_precond_t)c->format, &o);
}
static nz_status_t c_precond_apply(fault_case_t *c) {
    return nz_precond_apply(P_precond, b_vec, c->buf);
}
static nz_status_t c_solve_precond(fault_case_t *c) {
    nz_solve_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_GMRES;
    opt.rtol = 1e-10;
    opt.restart = 5;
    opt.precond = (nz_precond_t)c->format;
    opt.preconditioner = c->format2 ? P_precond : NULL;
    opt.record_history = 1;
    return nz_solve(c->ctx, S, b_vec, c->buf, &opt, &c->solve_result);
}

/* ---- setup --------------------------------------------------------------------------------- */

static void make_fixtures(nz_context_t *ctx) {
    memset(&loose, 0, sizeof loose);
    loose.max_padding_ratio = 1e6;
    loose.sell_chunk = 8;
    loose.bsr_block = 3;
    NZT_OK(ctx, nz_gen_random(ctx, &A, 40, 33, 4.0, 2024, NZ_F64));
    NZT_OK(ctx, nz_matrix_convert_values(ctx, &A32, A, NZ_F32));
    NZT_OK(ctx, nz_matrix_transpose(ctx, &AT, A));
    spmm_x = (double *)nzt_malloc(120 * sizeof(double));
    for (int i = 0; i < 120; i++) spmm_x[i] = 0.5 - 0.01 * i;
    for (int f = 0; f < NZ_FORMAT_COUNT; f++)
        NZT_OK(ctx, nz_matrix_convert(ctx, &F[f], A, (nz_format_t)f, &loose));
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &S, 7, 6, NZ_F64));
    NZT_OK(ctx, nz_matrix_convert(ctx, &S_sell, S, NZ_FORMAT_SELL, NULL));
    snprintf(dir, sizeof dir, "/tmp/nz_fault_XXXXXX");
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(path_mtx, sizeof path_mtx, "%s/a.mtx", dir);
    snprintf(path_gz, sizeof path_gz, "%s/a.mtx.gz", dir);
    snprintf(path_nzb, sizeof path_nzb, "%s/a.nzb", dir);
    snprintf(path_nzb32, sizeof path_nzb32, "%s/a32.nzb", dir);
    snprintf(path_dense, sizeof path_dense, "%s/d.mtx", dir);
    snprintf(path_out, sizeof path_out, "%s/out.mtx", dir);
    snprintf(path_out_gz, sizeof path_out_gz, "%s/out.mtx.gz", dir);
    snprintf(path_out_nzb, sizeof path_out_nzb, "%s/out.nzb", dir);
    snprintf(path_sym, sizeof path_sym, "%s/bcsstk01.mtx", nzt_data_dir());
    NZT_OK(ctx, nz_mm_write(ctx, path_mtx, A));
    NZT_OK(ctx, nz_mm_write(ctx, path_gz, A));
    NZT_OK(ctx, nz_binary_write(ctx, path_nzb, A));
    NZT_OK(ctx, nz_binary_write(ctx, path_nzb32, A32));
    dense = (double *)nzt_malloc(36 * sizeof(double));
    for (int i = 0; i < 36; i++) dense[i] = 0.25 * i - 3.0;
    NZT_OK(ctx, nz_mm_write_dense(ctx, path_dense, NZ_F64, 9, 4, dense));
    FILE *fp = fopen(path_mtx, "rb");
    if (fp == NULL) exit(1);
    fseek(fp, 0, SEEK_END);
    mm_text_size = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    mm_text = (char *)nzt_malloc(mm_text_size + 1);
    if (fread(mm_text, 1, mm_text_size, fp) != mm_text_size) exit(1);
    fclose(fp);
    x_vec = (double *)nzt_malloc(64 * sizeof(double));
    y_init = (double *)nzt_malloc(128 * sizeof(double));
    y_buf = (double *)nzt_malloc(128 * sizeof(double));
    for (int i = 0; i < 64; i++) x_vec[i] = 1.0 / (i + 1);
    for (int i = 0; i < 128; i++) y_init[i] = 0.5 * i - 7.0;
    int64_t n = 42;
    b_vec = (double *)nzt_malloc((size_t)n * sizeof(double));
    x0_vec = (double *)nzt_malloc((size_t)n * sizeof(double));
    x_buf = (double *)nzt_malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        b_vec[i] = 1.0 + (double)(i % 5);
        x0_vec[i] = 0.01 * (double)i;
    }
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &P_exec, A, NZ_OP_N, NZ_ALG_PARALLEL, 0));
}

static void free_fixtures(void) {
    nz_spmv_plan_destroy(&P_exec);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&A32);
    nz_matrix_destroy(&AT);
    free(spmm_x);
    for (int f = 0; f < NZ_FORMAT_COUNT; f++) nz_matrix_destroy(&F[f]);
    nz_matrix_destroy(&S);
    nz_matrix_destroy(&S_sell);
    const char *files[] = {path_mtx, path_gz, path_nzb, path_nzb32, path_dense, path_out, path_out_gz,
                           path_out_nzb};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) remove(files[i]);
    rmdir(dir);
    free(mm_text);
    free(dense);
    free(x_vec);
    free(y_init);
    free(y_buf);
    free(b_vec);
    free(x0_vec);
    free(x_buf);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    /* one OpenMP thread: allocation counts do not depend on it, and a loaded CI machine makes
     * thousands of small parallel regions slow */
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    make_fixtures(ctx);
    nz_alloc_stats_t base, end;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &base));
    fault_case_t c;
    memset(&c, 0, sizeof c);
    c.ctx = ctx;
    char name[96];

    drive("nz_malloc", c_malloc, &c);
    for (c.format = 0; c.format < 2; c.format++)
        drive(c.format ? "nz_matrix_create_csr i64 pattern" : "nz_matrix_create_csr i32",
              c_create_csr, &c);
    for (c.format = 0; c.format < 2; c.format++)
        drive(c.format ? "nz_matrix_create_coo values" : "nz_matrix_create_coo pattern",
              c_create_coo, &c);

    /* every format to every format */
    for (c.format = 0; c.format < NZ_FORMAT_COUNT; c.format++)
        for (c.format2 = 0; c.format2 < NZ_FORMAT_COUNT; c.format2++) {
            snprintf(name, sizeof name, "nz_matrix_convert %s -> %s", nz_format_name(c.format),
                     nz_format_name(c.format2));
            drive(name, c_convert, &c);
        }
    for (c.format = 0; c.format < NZ_FORMAT_COUNT; c.format++) {
        c.vt = NZ_F32;
        snprintf(name, sizeof name, "nz_matrix_convert_values %s", nz_format_name(c.format));
        drive(name, c_convert_values, &c);
        snprintf(name, sizeof name, "nz_matrix_transpose %s", nz_format_name(c.format));
        drive(name, c_transpose, &c);
        snprintf(name, sizeof name, "nz_matrix_stats %s", nz_format_name(c.format));
        drive(name, c_stats, &c);
    }

    /* Matrix Market and binary I/O */
    const char *reads[] = {path_mtx, path_gz, path_sym, path_dense};
    for (int i = 0; i < 4; i++)
        for (int t = 0; t < 2; t++) {
            c.path = reads[i];
            c.vt = t ? NZ_F32 : NZ_F64;
            snprintf(name, sizeof name, "nz_mm_read %s %s", strrchr(reads[i], '/') + 1,
                     t ? "f32" : "f64");
            drive(name, c_mm_read, &c);
        }
    c.vt = NZ_F64;
    drive("nz_mm_read_buffer", c_mm_read_buffer, &c);
    c.path = path_dense;
    drive("nz_mm_read_dense array", c_mm_read_dense, &c);
    c.path = path_mtx;
    drive("nz_mm_read_dense coordinate", c_mm_read_dense, &c);
    for (c.format = 0; c.format < NZ_FORMAT_COUNT; c.format++)
        for (int gz = 0; gz < 2; gz++) {
            c.path = gz ? path_out_gz : path_out;
            c.output_file = true;
            snprintf(name, sizeof name, "nz_mm_write %s%s", nz_format_name(c.format), gz ? " .gz" : "");
            drive(name, c_mm_write, &c);
        }
    c.path = path_out;
    c.output_file = true;
    drive("nz_mm_write_dense", c_mm_write_dense, &c);
    for (c.format = 0; c.format < NZ_FORMAT_COUNT; c.format++) {
        c.path = path_out_nzb;
        c.output_file = true;
        snprintf(name, sizeof name, "nz_binary_write %s", nz_format_name(c.format));
        drive(name, c_binary_write, &c);
    }
    c.path = path_nzb;
    drive("nz_binary_read", c_binary_read, &c);
    const char *any[] = {path_mtx, path_gz, path_nzb, path_nzb32};
    for (int i = 0; i < 4; i++) {
        c.path = any[i];
        c.vt = NZ_F64;
        snprintf(name, sizeof name, "nz_matrix_read %s", strrchr(any[i], '/') + 1);
        drive(name, c_matrix_read, &c);
    }

    /* generators */
    for (c.format = 0; c.format < 10; c.format++)
        for (int t = 0; t < 2; t++) {
            c.vt = t ? NZ_F32 : NZ_F64;
            snprintf(name, sizeof name, "nz_gen_%s %s", gen_names[c.format], t ? "f32" : "f64");
            drive(name, c_gen, &c);
        }

    /* SpMV: every CPU (format, algorithm) pair, op N and T */
    for (int idx = 0;; idx++) {
        nz_format_t f;
        nz_alg_t alg;
        if (nz_spmv_list(&f, &alg, NZ_BACKEND_CPU, idx) != NZ_SUCCESS) break;
        for (int op = 0; op < 2; op++) {
            nz_spmv_plan_t *probe = NULL;
            if (nz_spmv_plan_create(ctx, &probe, F[f], (nz_operation_t)op, alg, 0) != NZ_SUCCESS)
                continue; /* not offered for this operation */
            nz_spmv_plan_destroy(&probe);
            c.format = f;
            c.alg = alg;
            c.op = (nz_operation_t)op;
            snprintf(name, sizeof name, "nz_spmv_plan_create %s/%s op %s", nz_format_name(f),
                     nz_alg_name(alg), op ? "T" : "N");
            drive(name, c_plan, &c);
            if (op == 0) {
                c.buf = y_buf;
                c.buf_init = y_init;
                c.buf_bytes = 40 * sizeof(double);
                snprintf(name, sizeof name, "nz_spmv %s/%s", nz_format_name(f), nz_alg_name(alg));
                drive(name, c_spmv, &c);
            }
        }
    }
    for (c.format = 0; c.format < 2; c.format++) {
        c.buf = y_buf;
        c.buf_init = y_init;
        c.buf_bytes = 40 * sizeof(double);
        drive(c.format ? "nz_spmv_execute beta 0.5" : "nz_spmv_execute beta 0", c_execute, &c);
    }

    /* SpMM: every format, serial and parallel, op N and T, both layouts; one execute */
    for (c.format = 0; c.format < NZ_FORMAT_COUNT; c.format++)
        for (int alg = 0; alg < 2; alg++)
            for (int op = 0; op < 2; op++)
                for (c.format2 = 0; c.format2 < 2; c.format2++) {
                    c.alg = alg ? NZ_ALG_PARALLEL : NZ_ALG_SERIAL;
                    c.op = (nz_operation_t)op;
                    snprintf(name, sizeof name, "nz_spmm_plan_create %s/%s op %s %s",
                             nz_format_name(c.format), nz_alg_name(c.alg), op ? "T" : "N",
                             c.format2 ? "row-major" : "col-major");
                    drive(name, c_spmm_plan, &c);
                }
    c.buf = y_buf;
    c.buf_init = y_init;
    c.buf_bytes = 120 * sizeof(double); /* Y: 40 x 3, column-major, ldy 40 */
    drive("nz_spmm_plan_create + nz_spmm_execute", c_spmm_execute, &c);

    /* SpGEMM on the CPU (no device bound: AUTO is the CPU too): A A^T and S S */
    for (c.format = 0; c.format < 2; c.format++)
        for (c.format2 = 0; c.format2 < 2; c.format2++) {
            snprintf(name, sizeof name, "nz_spgemm %s %s", c.format ? "cpu" : "auto",
                     c.format2 ? "S S" : "A A^T");
            drive(name, c_spgemm, &c);
        }

    /* CG on the CPU: plain / Jacobi, with / without history, CSR / SELL */
    for (c.format = 0; c.format < 8; c.format++) {
        c.buf = x_buf;
        c.buf_init = x0_vec;
        c.buf_bytes = 42 * sizeof(double);
        c.buf_may_be_final = false;
        snprintf(name, sizeof name, "nz_cg_solve %s%s%s", c.format & 4 ? "sell" : "csr",
                 c.format & 1 ? " jacobi" : "", c.format & 2 ? " history" : "");
        drive(name, c_cg, &c);
    }

    /* BiCGSTAB, GMRES(5), FGMRES(5), MINRES through nz_solve: plain / Jacobi, with history */
    for (c.format = 0; c.format < 8; c.format++) {
        c.buf = x_buf;
        c.buf_init = x0_vec;
        c.buf_bytes = 42 * sizeof(double);
        c.buf_may_be_final = false;
        snprintf(name, sizeof name, "nz_solve %s%s",
                 nz_method_name((nz_method_t)(1 + (c.format >> 1))),
                 c.format & 1 ? " jacobi" : "");
        drive(name, c_solve, &c);
    }

    /* preconditioner objects: every kind (CSR and SELL), the apply, nz_solve with them */
    for (c.format = NZ_PRECOND_NONE; c.format <= NZ_PRECOND_CHEBYSHEV; c.format++)
        for (c.format2 = 0; c.format2 < 2; c.format2++) {
            snprintf(name, sizeof name, "nz_precond_create %s%s",
                     nz_precond_name((nz_precond_t)c.format), c.format2 ? " sell" : "");
            drive(name, c_precond_create, &c);
        }
    for (c.format = NZ_PRECOND_NONE; c.format <= NZ_PRECOND_CHEBYSHEV; c.format++) {
        if (c.format == NZ_PRECOND_USER) continue;
        NZT_OK(ctx, nz_precond_create(ctx, &P_precond, S, (nz_precond_t)c.format, NULL));
        c.buf = x_buf;
        c.buf_init = x0_vec;
        c.buf_bytes = 42 * sizeof(double);
        snprintf(name, sizeof name, "nz_precond_apply %s", nz_precond_name((nz_precond_t)c.format));
        drive(name, c_precond_apply, &c);
        c.format2 = 1;
        c.buf = x_buf;
        c.buf_init = x0_vec;
        c.buf_bytes = 42 * sizeof(double);
        snprintf(name, sizeof name, "nz_solve gmres with a %s object",
                 nz_precond_name((nz_precond_t)c.format));
        drive(name, c_solve_precond, &c);
        c.format2 = 0;
        nz_precond_destroy(&P_precond);
    }
    for (c.format = NZ_PRECOND_BLOCK_JACOBI; c.format <= NZ_PRECOND_CHEBYSHEV; c.format++) {
        c.buf = x_buf;
        c.buf_init = x0_vec;
        c.buf_bytes = 42 * sizeof(double);
        snprintf(name, sizeof name, "nz_solve gmres precond %s",
                 nz_precond_name((nz_precond_t)c.format));
        drive(name, c_solve_precond, &c);
    }

    NZT_OK(ctx, nz_context_alloc_stats(ctx, &end));
    NZT_CHECK(end.live_blocks == base.live_blocks, "%lld blocks leak over the whole test",
              (long long)(end.live_blocks - base.live_blocks));
    printf("fault injection: %lld cases (function x variant), %lld k values, %lld injected failures, "
           "%lld recovered; %lld known deviation(s)\n",
           (long long)n_cases, (long long)n_k, (long long)n_injected, (long long)n_recovered,
           (long long)n_deviations);
    free_fixtures();
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &end));
    NZT_CHECK(end.live_blocks == 0, "%lld blocks live after freeing the fixtures",
              (long long)end.live_blocks);
    nz_context_destroy(&ctx);
    return nzt_finish("test_fault_all");
}
