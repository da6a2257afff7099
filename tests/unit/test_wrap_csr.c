/* test_wrap_csr.c: nz_matrix_wrap_csr borrows caller CSR arrays: same results as a copy, arrays untouched, bad input refused. */
#include "testutil.h"

#include <string.h>

/* Caller-owned CSR arrays (plain malloc, not the context's allocator) with a pristine copy of
 * each, to check afterwards that the library never wrote them. */
typedef struct caller_csr {
    int64_t rows, cols, nnz;
    nz_value_type_t vt;
    int64_t *offsets64;
    int32_t *offsets32;   /* NULL when nnz does not fit */
    int32_t *cols_;
    void *values;
    int64_t *offsets64_copy;
    int32_t *offsets32_copy;
    int32_t *cols_copy;
    void *values_copy;
} caller_csr_t;

static void *dup_bytes(const void *src, size_t bytes) {
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL) abort();
    if (bytes > 0) memcpy(p, src, bytes);
    return p;
}

/* The arrays of a created (canonical) host CSR matrix, copied into caller memory. */
static void caller_from(nz_context_t *ctx, caller_csr_t *c, const nz_matrix_t *A) {
    nz_matrix_info_t info;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A));
    memset(c, 0, sizeof *c);
    c->rows = info.rows;
    c->cols = info.cols;
    c->nnz = info.nnz;
    c->vt = info.value_type;
    size_t vs = nzi_value_size(c->vt);
    c->offsets64 = (int64_t *)dup_bytes(ro, ((size_t)c->rows + 1) * sizeof(int64_t));
    c->cols_ = (int32_t *)dup_bytes(ci, (size_t)c->nnz * sizeof(int32_t));
    c->values = dup_bytes(v, (size_t)c->nnz * vs);
    if (c->nnz <= INT32_MAX) {
        c->offsets32 = (int32_t *)malloc(((size_t)c->rows + 1) * sizeof(int32_t));
        if (c->offsets32 == NULL) abort();
        for (int64_t i = 0; i <= c->rows; i++) c->offsets32[i] = (int32_t)ro[i];
        c->offsets32_copy = (int32_t *)dup_bytes(c->offsets32, ((size_t)c->rows + 1) * 4);
    }
    c->offsets64_copy = (int64_t *)dup_bytes(c->offsets64, ((size_t)c->rows + 1) * 8);
    c->cols_copy = (int32_t *)dup_bytes(c->cols_, (size_t)c->nnz * 4);
    c->values_copy = dup_bytes(c->values, (size_t)c->nnz * vs);
}

static void caller_check_untouched(const caller_csr_t *c, const char *what) {
    size_t vs = nzi_value_size(c->vt);
    NZT_CHECK(memcmp(c->offsets64, c->offsets64_copy, ((size_t)c->rows + 1) * 8) == 0,
              "%s: int64 row offsets written", what);
    if (c->offsets32 != NULL)
        NZT_CHECK(memcmp(c->offsets32, c->offsets32_copy, ((size_t)c->rows + 1) * 4) == 0,
                  "%s: int32 row offsets written", what);
    NZT_CHECK(c->nnz == 0 || memcmp(c->cols_, c->cols_copy, (size_t)c->nnz * 4) == 0,
              "%s: column indices written", what);
    NZT_CHECK(c->nnz == 0 || memcmp(c->values, c->values_copy, (size_t)c->nnz * vs) == 0,
              "%s: values written", what);
}

static void caller_free(caller_csr_t *c) {
    free(c->offsets64);
    free(c->offsets32);
    free(c->cols_);
    free(c->values);
    free(c->offsets64_copy);
    free(c->offsets32_copy);
    free(c->cols_copy);
    free(c->values_copy);
    memset(c, 0, sizeof *c);
}

/* 1 if A and B (host CSR) hold bitwise identical arrays. */
static int same_csr(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B) {
    nz_matrix_info_t ia, ib;
    const int64_t *ra, *rb;
    const int32_t *ca, *cb;
    const void *va, *vb;
    NZT_OK(ctx, nz_matrix_info(ctx, &ia, A));
    NZT_OK(ctx, nz_matrix_info(ctx, &ib, B));
    if (ia.rows != ib.rows || ia.cols != ib.cols || ia.nnz != ib.nnz ||
        ia.value_type != ib.value_type || ia.format != ib.format)
        return 0;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ra, &ca, &va, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &rb, &cb, &vb, B));
    size_t vs = nzi_value_size(ia.value_type);
    return memcmp(ra, rb, ((size_t)ia.rows + 1) * 8) == 0 &&
           (ia.nnz == 0 || (memcmp(ca, cb, (size_t)ia.nnz * 4) == 0 &&
                            memcmp(va, vb, (size_t)ia.nnz * vs) == 0));
}

/* SpMV (op N and T, serial and parallel), every conversion and back, transpose and SpGEMM on the
 * wrapped matrix W must give bitwise what they give on the created copy A. */
static void compare_operations(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *W,
                               const char *what) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    size_t vs = nzi_value_size(info.value_type);
    int64_t n_max = (info.rows > info.cols ? info.rows : info.cols) + 1;
    double *xd = (double *)malloc((size_t)n_max * sizeof(double));
    void *x = malloc((size_t)n_max * vs);
    void *ya = malloc((size_t)n_max * vs), *yw = malloc((size_t)n_max * vs);
    if (xd == NULL || x == NULL || ya == NULL || yw == NULL) abort();
    nzt_random_vector(xd, x, info.value_type, n_max, nzt_seed + 17);

    const nz_alg_t algs[] = {NZ_ALG_SERIAL, NZ_ALG_PARALLEL};
    for (int op = 0; op <= 1; op++) {
        int64_t out = op == NZ_OP_N ? info.rows : info.cols;
        for (int a = 0; a < 2; a++) {
            nz_spmv_plan_t *pa = NULL, *pw = NULL;
            nz_status_t sa = nz_spmv_plan_create(ctx, &pa, A, (nz_operation_t)op, algs[a], 0);
            nz_status_t sw = nz_spmv_plan_create(ctx, &pw, W, (nz_operation_t)op, algs[a], 0);
            NZT_CHECK(sa == sw, "%s: spmv plan %s op %d: status %d on the copy, %d wrapped", what,
                      nz_alg_name(algs[a]), op, (int)sa, (int)sw);
            if (sa == NZ_SUCCESS && sw == NZ_SUCCESS) {
                nzt_random_vector(xd, ya, info.value_type, out, nzt_seed + 3);
                memcpy(yw, ya, (size_t)out * vs);
                NZT_OK(ctx, nz_spmv_execute(pa, 1.5, x, -0.5, ya));
                NZT_OK(ctx, nz_spmv_execute(pw, 1.5, x, -0.5, yw));
                NZT_CHECK(out == 0 || memcmp(ya, yw, (size_t)out * vs) == 0,
                          "%s: spmv %s op %d differs on the wrapped matrix", what,
                          nz_alg_name(algs[a]), op);
            }
            nz_spmv_plan_destroy(&pa);
            nz_spmv_plan_destroy(&pw);
        }
    }

    for (int f = 0; f < NZ_FORMAT_COUNT; f++) {
        nz_matrix_t *Ca = NULL, *Cw = NULL, *Ba = NULL, *Bw = NULL;
        nz_status_t sa = nz_matrix_convert(ctx, &Ca, A, (nz_format_t)f, NULL);
        nz_status_t sw = nz_matrix_convert(ctx, &Cw, W, (nz_format_t)f, NULL);
        NZT_CHECK(sa == sw, "%s: convert to %s: status %d on the copy, %d wrapped", what,
                  nz_format_name((nz_format_t)f), (int)sa, (int)sw);
        if (sa == NZ_SUCCESS && sw == NZ_SUCCESS) {
            NZT_OK(ctx, nz_matrix_convert(ctx, &Ba, Ca, NZ_FORMAT_CSR, NULL));
            NZT_OK(ctx, nz_matrix_convert(ctx, &Bw, Cw, NZ_FORMAT_CSR, NULL));
            NZT_CHECK(same_csr(ctx, Ba, Bw), "%s: convert to %s and back differs", what,
                      nz_format_name((nz_format_t)f));
        }
        nz_matrix_destroy(&Ca);
        nz_matrix_destroy(&Cw);
        nz_matrix_destroy(&Ba);
        nz_matrix_destroy(&Bw);
    }

    /* C = A A^T or A^T A, whichever is smaller (shapes always agree), and, for square
     * matrices, A A; the wrapped matrix as either operand */
    nz_matrix_t *Ta = NULL, *Tw = NULL, *Ca = NULL, *Cw = NULL;
    NZT_OK(ctx, nz_matrix_transpose(ctx, &Ta, A));
    NZT_OK(ctx, nz_matrix_transpose(ctx, &Tw, W));
    NZT_CHECK(same_csr(ctx, Ta, Tw), "%s: transpose differs", what);
    nz_spgemm_options_t options;
    memset(&options, 0, sizeof options);
    options.alg = NZ_SPGEMM_CPU;
    if (info.rows <= info.cols) {
        NZT_OK(ctx, nz_spgemm(ctx, &Ca, A, Ta, &options, NULL));
        NZT_OK(ctx, nz_spgemm(ctx, &Cw, W, Tw, &options, NULL));
    } else {
        NZT_OK(ctx, nz_spgemm(ctx, &Ca, Ta, A, &options, NULL));
        NZT_OK(ctx, nz_spgemm(ctx, &Cw, Tw, W, &options, NULL));
    }
    NZT_CHECK(same_csr(ctx, Ca, Cw), "%s: spgemm with A^T differs", what);
    nz_matrix_destroy(&Ca);
    nz_matrix_destroy(&Cw);
    if (info.rows == info.cols) {
        NZT_OK(ctx, nz_spgemm(ctx, &Ca, A, A, &options, NULL));
        NZT_OK(ctx, nz_spgemm(ctx, &Cw, W, W, &options, NULL));
        NZT_CHECK(same_csr(ctx, Ca, Cw), "%s: spgemm A A differs", what);
        nz_matrix_destroy(&Ca);
        nz_matrix_destroy(&Cw);
    }
    nz_matrix_destroy(&Ta);
    nz_matrix_destroy(&Tw);
    free(xd);
    free(x);
    free(ya);
    free(yw);
}

/* Wrap with int64 and int32 offsets; check the views, operations, and that destroy frees only
 * what the library allocated. */
static void check_wrap(nz_context_t *ctx, const nz_matrix_t *A, const char *what) {
    caller_csr_t c;
    caller_from(ctx, &c, A);
    nz_alloc_stats_t s0, s1;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
    for (int width = 8; width >= 4; width -= 4) {
        if (width == 4 && c.offsets32 == NULL) continue;
        char label[160];
        snprintf(label, sizeof label, "%s [%s offsets]", what, width == 8 ? "int64" : "int32");
        nz_matrix_t *W = NULL;
        const void *offsets = width == 8 ? (const void *)c.offsets64 : (const void *)c.offsets32;
        NZT_OK(ctx, nz_matrix_wrap_csr(ctx, &W, c.rows, c.cols, width == 8 ? NZ_I64 : NZ_I32,
                                       offsets, c.cols_, c.vt, c.values));
        const int64_t *ro;
        const int32_t *ci;
        const void *v;
        NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, W));
        NZT_CHECK(ci == c.cols_ && v == c.values, "%s: column indices / values were copied",
                  label);
        if (width == 8)
            NZT_CHECK(ro == c.offsets64, "%s: int64 row offsets were copied", label);
        else
            NZT_CHECK(ro != NULL && memcmp(ro, c.offsets64, ((size_t)c.rows + 1) * 8) == 0,
                      "%s: widened row offsets differ", label);
        NZT_CHECK(same_csr(ctx, A, W), "%s: wrapped arrays differ from the copy", label);
        compare_operations(ctx, A, W, label);
        nz_matrix_destroy(&W);
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
        NZT_CHECK(s1.live_blocks == s0.live_blocks && s1.live_bytes == s0.live_bytes,
                  "%s: %lld blocks live after destroy", label,
                  (long long)(s1.live_blocks - s0.live_blocks));
        caller_check_untouched(&c, label);
    }
    caller_free(&c);
}

/* CG on a wrapped SPD matrix: same iterations, bitwise the same solution. */
static void check_cg(nz_context_t *ctx, nz_value_type_t vt) {
    nz_matrix_t *A = NULL, *W = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 12, 9, vt));
    caller_csr_t c;
    caller_from(ctx, &c, A);
    NZT_OK(ctx, nz_matrix_wrap_csr(ctx, &W, c.rows, c.cols, NZ_I32, c.offsets32, c.cols_, vt,
                                   c.values));
    size_t vs = nzi_value_size(vt);
    double *bd = (double *)malloc((size_t)c.rows * sizeof(double));
    void *b = malloc((size_t)c.rows * vs);
    void *xa = calloc((size_t)c.rows, vs), *xw = calloc((size_t)c.rows, vs);
    if (bd == NULL || b == NULL || xa == NULL || xw == NULL) abort();
    nzt_random_vector(bd, b, vt, c.rows, nzt_seed + 5);
    nz_cg_options_t options;
    memset(&options, 0, sizeof options);
    options.rtol = vt == NZ_F32 ? 1e-5 : 1e-10;
    options.alg = NZ_ALG_PARALLEL;
    nz_cg_result_t ra, rw;
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, xa, &options, &ra));
    NZT_OK(ctx, nz_cg_solve(ctx, W, b, xw, &options, &rw));
    NZT_CHECK(ra.iterations == rw.iterations, "cg %s: %lld iterations on the copy, %lld wrapped",
              nzt_vt_name(vt), (long long)ra.iterations, (long long)rw.iterations);
    NZT_CHECK(memcmp(xa, xw, (size_t)c.rows * vs) == 0, "cg %s: solutions differ",
              nzt_vt_name(vt));
    nz_matrix_destroy(&W);
    nz_matrix_destroy(&A);
    caller_check_untouched(&c, "cg");
    caller_free(&c);
    free(bd);
    free(b);
    free(xa);
    free(xw);
}

/* Hand-made edge cases: 0 x 0, 0 nonzeros (NULL arrays allowed), empty rows. */
static void check_edges(nz_context_t *ctx) {
    nz_matrix_t *W = NULL;
    nz_matrix_info_t info;
    const int64_t zero64[1] = {0};
    const int32_t zero32[4] = {0, 0, 0, 0};
    NZT_OK(ctx, nz_matrix_wrap_csr(ctx, &W, 0, 0, NZ_I64, zero64, NULL, NZ_F64, NULL));
    NZT_OK(ctx, nz_matrix_info(ctx, &info, W));
    NZT_CHECK(info.rows == 0 && info.cols == 0 && info.nnz == 0, "0x0: info %lld x %lld, %lld",
              (long long)info.rows, (long long)info.cols, (long long)info.nnz);
    nz_matrix_destroy(&W);
    NZT_CHECK(W == NULL, "destroy left the handle set");

    NZT_OK(ctx, nz_matrix_wrap_csr(ctx, &W, 3, 5, NZ_I32, zero32, NULL, NZ_F32, NULL));
    NZT_OK(ctx, nz_matrix_info(ctx, &info, W));
    NZT_CHECK(info.rows == 3 && info.cols == 5 && info.nnz == 0, "3x5 empty: info wrong");
    float x[5] = {1, 2, 3, 4, 5}, y[3] = {7, 7, 7};
    NZT_OK(ctx, nz_spmv(ctx, W, NZ_ALG_AUTO, 1.0, x, 2.0, y));
    NZT_CHECK(y[0] == 14 && y[1] == 14 && y[2] == 14, "3x5 empty: y = 2 y expected");
    nz_matrix_destroy(&W);

    /* rows 0 and 2 empty: [0 0 0; 1 0 2; 0 0 0; 0 3 0] */
    const int64_t ro[5] = {0, 0, 2, 2, 3};
    const int32_t ci[3] = {0, 2, 1};
    const double v[3] = {1, 2, 3};
    double xd[3] = {1, 10, 100}, yd[4];
    NZT_OK(ctx, nz_matrix_wrap_csr(ctx, &W, 4, 3, NZ_I64, ro, ci, NZ_F64, v));
    NZT_OK(ctx, nz_spmv(ctx, W, NZ_ALG_SERIAL, 1.0, xd, 0.0, yd));
    NZT_CHECK(yd[0] == 0 && yd[1] == 201 && yd[2] == 0 && yd[3] == 30,
              "empty rows: y = (%g %g %g %g)", yd[0], yd[1], yd[2], yd[3]);
    nz_matrix_destroy(&W);
}

/* Malformed input is refused with the documented status, no output and a message naming the row. */
static void check_refusals(nz_context_t *ctx) {
    struct {
        const char *name;
        int64_t rows, cols;
        int64_t offsets[4];
        int32_t cols_[4];
        int null_values;
        nz_status_t expected;
        const char *message; /* must appear in the last error */
    } cases[] = {
        {"unsorted", 2, 4, {0, 2, 3}, {3, 1, 0}, 0, NZ_ERR_NOT_SORTED, "row 0"},
        {"duplicate", 2, 4, {0, 1, 3}, {0, 2, 2}, 0, NZ_ERR_NOT_SORTED, "row 1"},
        {"column out of range", 2, 4, {0, 1, 3}, {0, 1, 4}, 0, NZ_ERR_INVALID_MATRIX, "row 1"},
        {"negative column", 2, 4, {0, 1, 3}, {-1, 1, 2}, 0, NZ_ERR_INVALID_MATRIX, "row 0"},
        {"offsets decrease", 3, 4, {0, 2, 1, 3}, {0, 1, 2}, 0, NZ_ERR_INVALID_MATRIX, "row 1"},
        {"offsets start at 1", 2, 4, {1, 2, 3}, {0, 1, 2}, 0, NZ_ERR_INVALID_MATRIX,
         "row_offsets[0]"},
        {"NULL values", 2, 4, {0, 1, 3}, {0, 1, 2}, 1, NZ_ERR_NULL_ARGUMENT, "values"},
    };
    const double values[4] = {1, 2, 3, 4};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        for (int width = 4; width <= 8; width += 4) {
            int32_t off32[4];
            for (int i = 0; i < 4; i++) off32[i] = (int32_t)cases[t].offsets[i];
            nz_matrix_t *W = (nz_matrix_t *)&W; /* must come back NULL or untouched */
            nz_matrix_t *before = W;
            nz_status_t s = nz_matrix_wrap_csr(
                ctx, &W, cases[t].rows, cases[t].cols, width == 8 ? NZ_I64 : NZ_I32,
                width == 8 ? (const void *)cases[t].offsets : (const void *)off32,
                cases[t].cols_, NZ_F64, cases[t].null_values ? NULL : values);
            NZT_CHECK(s == cases[t].expected, "%s (int%d offsets): status %d (%s), expected %d",
                      cases[t].name, width * 8, (int)s, nz_context_last_error(ctx),
                      (int)cases[t].expected);
            NZT_CHECK(W == before, "%s: output handle written on failure", cases[t].name);
            NZT_CHECK(strstr(nz_context_last_error(ctx), cases[t].message) != NULL,
                      "%s: message \"%s\" does not name \"%s\"", cases[t].name,
                      nz_context_last_error(ctx), cases[t].message);
        }
    }
    /* the copy path accepts and canonicalises what the wrap refuses */
    nz_matrix_t *A = NULL;
    const int64_t ro[3] = {0, 2, 3};
    const int32_t ci[3] = {3, 1, 0};
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 2, 4, NZ_I64, ro, ci, NZ_F64, values));
    nz_matrix_destroy(&A);

    nz_matrix_t *W = NULL;
    NZT_CHECK(nz_matrix_wrap_csr(ctx, &W, 2, 4, NZ_INDEX_AUTO, ro, ci, NZ_F64, values) ==
                  NZ_ERR_INVALID_ARGUMENT, "NZ_INDEX_AUTO accepted as a host offset type");
    NZT_CHECK(nz_matrix_wrap_csr(ctx, &W, 2, 4, NZ_I64, NULL, ci, NZ_F64, values) ==
                  NZ_ERR_NULL_ARGUMENT, "NULL row offsets accepted");
    NZT_CHECK(nz_matrix_wrap_csr(ctx, NULL, 2, 4, NZ_I64, ro, ci, NZ_F64, values) ==
                  NZ_ERR_NULL_ARGUMENT, "NULL output accepted");
    NZT_CHECK(nz_matrix_wrap_csr(NULL, &W, 2, 4, NZ_I64, ro, ci, NZ_F64, values) ==
                  NZ_ERR_NULL_ARGUMENT || W == NULL, "NULL context accepted");
    NZT_CHECK(W == NULL, "output set on failure");
}

/* The matrix queries take the context first and check it. */
static void check_queries(nz_context_t *ctx) {
    nz_context_t *other = NULL;
    nz_matrix_t *A = NULL;
    nz_matrix_info_t info;
    nz_matrix_stats_t stats;
    const int64_t *ro = NULL;
    NZT_OK(ctx, nz_context_create(&other));
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 3, 3, NZ_F64));
    NZT_CHECK(nz_matrix_info(NULL, &info, A) == NZ_ERR_NULL_ARGUMENT, "info: NULL ctx accepted");
    NZT_CHECK(nz_matrix_info(other, &info, A) == NZ_ERR_INVALID_HANDLE,
              "info: foreign context accepted");
    NZT_CHECK(strstr(nz_context_last_error(other), "another context") != NULL,
              "info: error not recorded on the context");
    NZT_CHECK(nz_matrix_info(ctx, NULL, A) == NZ_ERR_NULL_ARGUMENT, "info: NULL output accepted");
    NZT_CHECK(nz_matrix_csr_arrays(NULL, &ro, NULL, NULL, A) == NZ_ERR_NULL_ARGUMENT,
              "csr_arrays: NULL ctx accepted");
    NZT_CHECK(nz_matrix_csr_arrays(other, &ro, NULL, NULL, A) == NZ_ERR_INVALID_HANDLE,
              "csr_arrays: foreign context accepted");
    NZT_CHECK(nz_matrix_stats(other, &stats, A) == NZ_ERR_INVALID_HANDLE,
              "stats: foreign context accepted");
    NZT_OK(ctx, nz_matrix_stats(ctx, &stats, A));
    NZT_CHECK(stats.rows == 9 && stats.nnz == 33, "stats of laplace2d(3, 3) wrong");
    nz_matrix_destroy(&A);
    nz_context_destroy(&other);
}

/* Fail the k-th allocation (k = 1, 2, ...) of the wrap and of operations on a wrapped matrix
 * until they succeed: out of memory, no output, no leak; the caller's arrays untouched. */
static void check_alloc_failures(nz_context_t *ctx, const nz_matrix_t *A) {
    caller_csr_t c;
    caller_from(ctx, &c, A);
    nz_alloc_stats_t base, now;
    for (int op = 0; op < 4; op++) {
        nz_matrix_t *W = NULL;
        if (op >= 2)
            NZT_OK(ctx, nz_matrix_wrap_csr(ctx, &W, c.rows, c.cols, NZ_I32, c.offsets32, c.cols_,
                                           c.vt, c.values));
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &base));
        int failures = 0;
        for (int64_t k = 1; k < 1000; k++) {
            nz_matrix_t *out = NULL;
            nz_spmv_plan_t *plan = NULL;
            nz_status_t s;
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            if (op == 0)
                s = nz_matrix_wrap_csr(ctx, &out, c.rows, c.cols, NZ_I64, c.offsets64, c.cols_,
                                       c.vt, c.values);
            else if (op == 1)
                s = nz_matrix_wrap_csr(ctx, &out, c.rows, c.cols, NZ_I32, c.offsets32, c.cols_,
                                       c.vt, c.values);
            else if (op == 2)
                s = nz_matrix_convert(ctx, &out, W, NZ_FORMAT_SELL, NULL);
            else
                s = nz_spmv_plan_create(ctx, &plan, W, NZ_OP_T, NZ_ALG_PARALLEL, 0);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            if (s == NZ_SUCCESS) {
                nz_matrix_destroy(&out);
                nz_spmv_plan_destroy(&plan);
                break;
            }
            failures++;
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &now));
            NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY, "op %d: failing allocation %lld gave %d (%s)", op,
                      (long long)k, (int)s, nz_context_last_error(ctx));
            NZT_CHECK(out == NULL && plan == NULL, "op %d: output set on failure", op);
            NZT_CHECK(now.live_blocks == base.live_blocks && now.live_bytes == base.live_bytes,
                      "op %d: failing allocation %lld leaked %lld blocks", op, (long long)k,
                      (long long)(now.live_blocks - base.live_blocks));
        }
        NZT_CHECK(failures > 0, "op %d: no allocation was ever failed", op);
        nz_matrix_destroy(&W);
    }
    caller_check_untouched(&c, "allocation failures");
    caller_free(&c);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_set_threads(ctx, 2));
    for (int vt = NZ_F32; vt <= NZ_F64; vt++) {
        for (int k = 0; k < nzt_zoo_count(); k++) {
            nz_matrix_t *A = NULL;
            char what[96];
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, (nz_value_type_t)vt, nzt_seed));
            snprintf(what, sizeof what, "zoo %s %s", nzt_zoo_name(k),
                     nzt_vt_name((nz_value_type_t)vt));
            check_wrap(ctx, A, what);
            nz_matrix_destroy(&A);
        }
        check_cg(ctx, (nz_value_type_t)vt);
    }
    check_edges(ctx);
    check_refusals(ctx);
    check_queries(ctx);
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_random(ctx, &A, 40, 30, 4.0, 11, NZ_F64));
    check_alloc_failures(ctx, A);
    nz_matrix_destroy(&A);
    nz_alloc_stats_t s;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s));
    NZT_CHECK(s.live_blocks == 0, "%lld blocks live at the end", (long long)s.live_blocks);
    nz_context_destroy(&ctx);
    return nzt_finish("test_wrap_csr");
}
