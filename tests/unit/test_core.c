/* test_core.c: context, status strings, allocator accounting, CSR/COO creation and validation,
 * the parallel copy helper. */
#include "testutil.h"
#include "nzi.h"

#include <math.h>
#include <string.h>

static void test_status_and_names(void) {
    NZT_CHECK(strcmp(nz_status_string(NZ_SUCCESS), "success") == 0, "success string");
    NZT_CHECK(strcmp(nz_status_string((nz_status_t)-9999), "unknown status") == 0, "unknown");
    nz_alg_t alg;
    NZT_CHECK(nz_alg_from_name(&alg, "light-warp") == NZ_SUCCESS && alg == NZ_ALG_LIGHT_WARP,
              "alg name round trip");
    NZT_CHECK(nz_alg_from_name(&alg, "nonsense") == NZ_ERR_INVALID_ARGUMENT, "bad alg name");
    nz_format_t f;
    NZT_CHECK(nz_format_from_name(&f, "sell") == NZ_SUCCESS && f == NZ_FORMAT_SELL, "format name");
    NZT_CHECK(strcmp(nz_format_name(NZ_FORMAT_DIA), "dia") == 0, "dia name");
}

static void test_handles(void) {
    nz_context_t *ctx = NULL;
    NZT_CHECK(nz_context_create(NULL) == NZ_ERR_NULL_ARGUMENT, "NULL output");
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_matrix_t *A = NULL;
    NZT_CHECK(nz_matrix_destroy(&A) == NZ_SUCCESS, "destroy NULL handle");
    NZT_CHECK(nz_matrix_destroy(NULL) == NZ_SUCCESS, "destroy NULL pointer");
    uint64_t fake[128] = {0};
    NZT_CHECK(nz_context_set_threads((nz_context_t *)fake, 1) == NZ_ERR_INVALID_HANDLE,
              "foreign context");
    nz_context_destroy(&ctx);
    NZT_CHECK(ctx == NULL, "destroy sets NULL");
}

static void test_create_csr(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    /* 3 x 4, row 1 empty, row 2 unsorted with a duplicate */
    int32_t ro[] = {0, 2, 2, 5};
    int32_t ci[] = {0, 3, 2, 1, 2};
    double v[] = {1, 2, 3, 4, 5};
    int32_t ci_copy[5];
    double v_copy[5];
    memcpy(ci_copy, ci, sizeof ci);
    memcpy(v_copy, v, sizeof v);
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 3, 4, NZ_I32, ro, ci, NZ_F64, v));
    NZT_CHECK(memcmp(ci, ci_copy, sizeof ci) == 0 && memcmp(v, v_copy, sizeof v) == 0,
              "caller arrays unchanged");
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_CHECK(info.rows == 3 && info.cols == 4 && info.nnz == 4, "duplicates summed: nnz %lld",
              (long long)info.nnz);
    const int64_t *r;
    const int32_t *c;
    const void *vv;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &r, &c, &vv, A));
    const double *d = vv;
    NZT_CHECK(r[3] == 4 && c[2] == 1 && c[3] == 2 && d[2] == 4 && d[3] == 8, "sorted and summed");

    /* y = 2 A x - y */
    double x[4] = {1, 2, 3, 4}, y[3] = {1, 1, 1};
    NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_SERIAL, 2.0, x, -1.0, y));
    NZT_CHECK(y[0] == 2 * (1 + 8) - 1 && y[1] == -1 && y[2] == 2 * (8 + 24) - 1, "spmv %g %g %g",
              y[0], y[1], y[2]);
    /* beta = 0: NaN in y must not leak */
    y[0] = y[1] = y[2] = NAN;
    NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_PARALLEL, 1.0, x, 0.0, y));
    NZT_CHECK(y[0] == 9 && y[1] == 0 && y[2] == 32, "beta=0 ignores y");
    nz_matrix_destroy(&A);

    /* invalid structures name the row */
    int32_t bad_ro[] = {0, 2, 1, 5};
    NZT_CHECK(nz_matrix_create_csr(ctx, &A, 3, 4, NZ_I32, bad_ro, ci, NZ_F64, v) ==
                  NZ_ERR_INVALID_MATRIX, "decreasing offsets");
    NZT_CHECK(strstr(nz_context_last_error(ctx), "row 1") != NULL, "message names row: %s",
              nz_context_last_error(ctx));
    int32_t bad_ci[] = {0, 3, 2, 9, 2};
    NZT_CHECK(nz_matrix_create_csr(ctx, &A, 3, 4, NZ_I32, ro, bad_ci, NZ_F64, v) ==
                  NZ_ERR_INVALID_MATRIX, "column out of range");
    NZT_CHECK(strstr(nz_context_last_error(ctx), "row 2") != NULL, "message names row: %s",
              nz_context_last_error(ctx));
    NZT_CHECK(A == NULL, "no output on error");
    NZT_CHECK(nz_matrix_create_csr(ctx, &A, (int64_t)1 << 32, 4, NZ_I32, ro, ci, NZ_F64, v) ==
                  NZ_ERR_UNSUPPORTED, "too many rows refused");

    nz_alloc_stats_t st;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &st));
    NZT_CHECK(st.live_blocks == 0 && st.live_bytes == 0, "no leaks: %lld blocks",
              (long long)st.live_blocks);
    nz_context_destroy(&ctx);
}

static void test_alloc_failure(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    int32_t ri[] = {2, 0, 1, 2}, ci[] = {1, 0, 1, 1};
    float v[] = {1, 2, 3, 4};
    int succeeded = 0;
    for (int64_t k = 1; k < 50 && !succeeded; k++) {
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t s = nz_matrix_create_coo(ctx, &A, 3, 2, 4, ri, ci, NZ_F32, v);
        nz_alloc_stats_t st;
        if (s == NZ_SUCCESS) {
            succeeded = 1;
            NZT_CHECK(A != NULL && ((const float *)NULL == NULL), "output set");
            nz_matrix_destroy(&A);
        } else {
            NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY, "k=%lld: status %d", (long long)k, (int)s);
            NZT_CHECK(A == NULL, "k=%lld: output untouched", (long long)k);
        }
        nz_context_alloc_stats(ctx, &st);
        NZT_CHECK(st.live_blocks == 0, "k=%lld: leaked %lld blocks", (long long)k,
                  (long long)st.live_blocks);
    }
    NZT_CHECK(succeeded, "creation eventually succeeds");
    nz_context_fail_alloc_after(ctx, 0);
    nz_context_destroy(&ctx);
}

static void test_zoo_spmv(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    for (int vt_i = 0; vt_i < 2; vt_i++) {
        nz_value_type_t vt = vt_i ? NZ_F64 : NZ_F32;
        for (int k = 0; k < nzt_zoo_count(); k++) {
            nz_matrix_t *A = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, vt, nzt_seed));
            nz_matrix_info_t info;
            nz_matrix_info(ctx, &info, A);
            size_t vs = vt == NZ_F32 ? 4 : 8;
            double *xd = nzt_malloc((size_t)info.cols * 8 + 8), *y0 = nzt_malloc((size_t)info.rows * 8 + 8);
            double *yr = nzt_malloc((size_t)info.rows * 8 + 8), *bd = nzt_malloc((size_t)info.rows * 8 + 8);
            int64_t *len = nzt_malloc((size_t)info.rows * 8 + 8);
            void *x = nzt_malloc((size_t)info.cols * vs + 8), *y = nzt_malloc((size_t)info.rows * vs + 8);
            nzt_random_vector(xd, x, vt, info.cols, nzt_seed + 1);
            nzt_random_vector(y0, NULL, vt, info.rows, nzt_seed + 2);
            const double ab[3][2] = {{1, 0}, {-2.5, 0.5}, {1, 0}};
            for (int c = 0; c < 3; c++) {
                for (int alg = 0; alg < 2; alg++) {
                    if (c == 2)
                        nzt_poison(y, vt, info.rows);
                    else
                        nzt_from_double(y, vt, y0, info.rows);
                    NZT_OK(ctx, nz_spmv(ctx, A, alg ? NZ_ALG_PARALLEL : NZ_ALG_SERIAL, ab[c][0],
                                        x, ab[c][1], y));
                    nzt_reference_spmv(A, NZ_OP_N, ab[c][0], xd, ab[c][1], y0, yr, bd, len);
                    int64_t bad = nzt_compare(nzt_zoo_name(k), vt, y, yr, bd, len, info.rows, 2.0);
                    NZT_CHECK(bad == 0, "%s %s case %d alg %d: %lld bad", nzt_zoo_name(k),
                              vt == NZ_F32 ? "f32" : "f64", c, alg, (long long)bad);
                }
            }
            free(xd); free(y0); free(yr); free(bd); free(len); free(x); free(y);
            nz_matrix_destroy(&A);
        }
    }
    nz_context_destroy(&ctx);
}

/* nzi_parallel_memcpy: every byte lands, none beyond, for sizes below, at and around the
 * threshold where it splits the copy, and for 1, 2, 3 and 8 threads (odd chunk edges). The
 * context clamps its count to the online CPUs, so the counts also go to
 * nzi_parallel_memcpy_threads directly. */
static void test_parallel_memcpy(void) {
    const size_t mb = (size_t)1 << 20;
    const size_t sizes[] = {0, 1, 4095, 8 * mb - 1, 8 * mb, 8 * mb + 4097, 33 * mb + 3};
    const int threads[] = {1, 2, 3, 8};
    const size_t cap = 33 * mb + 3 + 64;
    unsigned char *src = nzt_malloc(cap), *dst = nzt_malloc(cap);
    for (size_t i = 0; i < cap; i++) src[i] = (unsigned char)(i * 2654435761u >> 13);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        NZT_OK(ctx, nz_context_set_threads(ctx, threads[t]));
        for (size_t k = 0; k < 2 * (sizeof sizes / sizeof sizes[0]); k++) {
            const size_t n = sizes[k / 2];
            memset(dst, 0xA5, cap);
            if (k % 2)
                nzi_parallel_memcpy_threads(dst, src, n, threads[t]);
            else
                nzi_parallel_memcpy(ctx, dst, src, n);
            NZT_CHECK(memcmp(dst, src, n) == 0, "%d threads, %zu bytes: copy differs", threads[t], n);
            size_t beyond = 0;
            for (size_t i = n; i < n + 64; i++) beyond += dst[i] != 0xA5;
            NZT_CHECK(beyond == 0, "%d threads, %zu bytes: %zu bytes written past the end",
                      threads[t], n, beyond);
        }
    }
    nz_context_destroy(&ctx);
    free(src);
    free(dst);
}

/* nzi_realloc: contents kept when growing (small and mmap-sized blocks) and shrinking, one block
 * counted throughout with its new size, an injected failure leaves the old block and the counts
 * as they were, NULL behaves as nzi_malloc. */
static void test_realloc(void) {
    nz_context_t *ctx = NULL;
    nz_alloc_stats_t s0, s1;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
    unsigned char *p = (unsigned char *)nzi_realloc(ctx, NULL, 100);
    NZT_CHECK(p != NULL, "nzi_realloc(NULL, 100) failed");
    for (int i = 0; i < 100; i++) p[i] = (unsigned char)(i * 7 + 1);
    const size_t sizes[] = {4000, (size_t)40 << 20, (size_t)64 << 20, 50, 100};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && p != NULL; k++) {
        unsigned char *q = (unsigned char *)nzi_realloc(ctx, p, sizes[k]);
        NZT_CHECK(q != NULL, "grow / shrink to %zu bytes failed", sizes[k]);
        if (q == NULL) break;
        p = q;
        const size_t keep = sizes[k] < 50 ? sizes[k] : 50;
        int bad = 0;
        for (size_t i = 0; i < keep; i++) bad += p[i] != (unsigned char)(i * 7 + 1);
        NZT_CHECK(bad == 0, "%zu bytes: %d of the first %zu bytes changed", sizes[k], bad, keep);
        if (sizes[k] > 100) p[sizes[k] - 1] = 0x5A; /* the new tail is writable */
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
        NZT_CHECK(s1.live_blocks == s0.live_blocks + 1 &&
                      s1.live_bytes == s0.live_bytes + (int64_t)sizes[k],
                  "%zu bytes: %lld blocks / %lld bytes counted", sizes[k],
                  (long long)(s1.live_blocks - s0.live_blocks),
                  (long long)(s1.live_bytes - s0.live_bytes));
    }
    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 1));
    NZT_CHECK(nzi_realloc(ctx, p, 1000000) == NULL, "an injected failure was not reported");
    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
    NZT_CHECK(s1.live_blocks == s0.live_blocks + 1 && s1.live_bytes == s0.live_bytes + 100,
              "a failed nzi_realloc changed the counts");
    NZT_CHECK(p != NULL && p[0] == 1 && p[49] == (unsigned char)(49 * 7 + 1),
              "a failed nzi_realloc changed the block");
    nzi_free(ctx, p);
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
    NZT_CHECK(s1.live_blocks == s0.live_blocks && s1.live_bytes == s0.live_bytes, "leak after free");
    nz_context_destroy(&ctx);
}

/* Tunables: defaults, set / get, refusal leaves them unchanged, parse by name. */
static void test_tunables(void) {
    nz_context_t *ctx = NULL;
    nz_tunables_t t, got;
    NZT_CHECK(nz_context_create(&ctx) == NZ_SUCCESS, "context");
    NZT_CHECK(nz_context_get_tunables(ctx, &got) == NZ_SUCCESS, "get");
    NZT_CHECK(got.vector_width == NZ_TUNE_AUTO && got.vector_unroll == NZ_TUNE_AUTO &&
                  got.vector_warps == NZ_TUNE_AUTO && got.adaptive_nnz_per_thread == NZ_TUNE_AUTO && got.spmm_long_row == NZ_TUNE_AUTO,
              "a new context's tunables are automatic");
    NZT_CHECK(nz_tunables_default(&t) == NZ_SUCCESS, "default");
    t.vector_width = 8;
    t.spmm_long_row = 0;
    NZT_CHECK(nz_context_set_tunables(ctx, &t) == NZ_SUCCESS, "set");
    NZT_CHECK(nz_context_get_tunables(ctx, &got) == NZ_SUCCESS && got.vector_width == 8 &&
                  got.spmm_long_row == 0, "get after set");
    t.vector_unroll = 3;
    NZT_CHECK(nz_context_set_tunables(ctx, &t) == NZ_ERR_INVALID_ARGUMENT &&
                  strstr(nz_context_last_error(ctx), "NZ_TUNE_VECTOR_UNROLL") != NULL,
              "unroll 3 refused: %s", nz_context_last_error(ctx));
    NZT_CHECK(nz_context_get_tunables(ctx, &got) == NZ_SUCCESS &&
                  got.vector_unroll == NZ_TUNE_AUTO && got.vector_width == 8,
              "a refused set changes nothing");
    NZT_CHECK(nz_tunables_parse(&t, "NZ_TUNE_VECTOR_UNROLL=2") == NZ_SUCCESS &&
                  t.vector_unroll == 2, "parse unroll");
    NZT_CHECK(nz_tunables_parse(&t, "NZ_TUNE_VECTOR_WARPS=4") == NZ_SUCCESS &&
                  t.vector_warps == 4 && t.vector_unroll == 2, "parse warps, unroll kept");
    NZT_CHECK(nz_tunables_parse(&t, "NZ_TUNE_VECTOR_WARPS=3") == NZ_ERR_INVALID_ARGUMENT &&
                  nz_tunables_parse(&t, "NZ_TUNE_VECTOR_WARPS=16") == NZ_ERR_INVALID_ARGUMENT &&
                  t.vector_warps == 4, "warps 3 and 16 refused, unchanged");
    t.vector_warps = 0;
    NZT_CHECK(nz_context_set_tunables(ctx, &t) == NZ_ERR_INVALID_ARGUMENT &&
                  strstr(nz_context_last_error(ctx), "NZ_TUNE_VECTOR_WARPS") != NULL,
              "warps 0 refused by set: %s", nz_context_last_error(ctx));
    t.vector_warps = NZ_TUNE_AUTO;
    NZT_CHECK(nz_tunables_parse(&t, "NZ_TUNE_VECTOR_WIDTH=auto") == NZ_SUCCESS &&
                  t.vector_width == NZ_TUNE_AUTO, "parse auto");
    NZT_CHECK(nz_tunables_parse(&t, "NZ_TUNE_VECTOR_WIDTH=3") == NZ_ERR_INVALID_ARGUMENT &&
                  t.vector_width == NZ_TUNE_AUTO, "width 3 refused, unchanged");
    NZT_CHECK(nz_tunables_parse(&t, "NZ_TUNE_VECTOR_WIDTH=") == NZ_ERR_INVALID_ARGUMENT &&
                  nz_tunables_parse(&t, "NZ_TUNE_VECTOR=4") == NZ_ERR_INVALID_ARGUMENT &&
                  nz_tunables_parse(&t, "NZ_TUNE_SPGEMM=4") == NZ_ERR_INVALID_ARGUMENT &&
                  nz_tunables_parse(&t, "NZ_TUNE_VECTOR_WIDTH") == NZ_ERR_INVALID_ARGUMENT,
              "empty value, unknown names, no '='");
    NZT_CHECK(nz_tunables_parse(&t, "NZ_TUNE_SPMM_LONG=0") == NZ_SUCCESS && t.spmm_long_row == 0,
              "spmm long 0 (no split)");
    NZT_CHECK(nz_context_set_tunables(ctx, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL tunables");
    nz_backend_t backend = NZ_BACKEND_CUDA;
    NZT_CHECK(nz_spgemm_alg_backend(&backend, NZ_SPGEMM_CPU) == NZ_SUCCESS &&
                  backend == NZ_BACKEND_CPU, "spgemm cpu runs on the CPU");
    NZT_CHECK(nz_spgemm_alg_backend(&backend, NZ_SPGEMM_HASH) == NZ_SUCCESS &&
                  backend == NZ_BACKEND_CUDA, "spgemm hash runs on the GPU");
    NZT_CHECK(nz_spgemm_alg_backend(&backend, NZ_SPGEMM_AUTO) == NZ_SUCCESS &&
                  backend == (nz_device_count() > 0 ? NZ_BACKEND_CUDA : NZ_BACKEND_CPU),
              "spgemm auto follows the device count");
    NZT_CHECK(nz_spgemm_alg_backend(&backend, (nz_spgemm_alg_t)99) == NZ_ERR_INVALID_ARGUMENT,
              "unknown spgemm algorithm");
    nz_context_destroy(&ctx);
}

/* The hash SpGEMM's tunables: automatic in a new context, every allowed value parses into its
 * own field (and only there), the values between them are refused, and set checks them too. */
static void test_tunables_spgemm(void) {
    static const struct {
        const char *name;
        int allowed[8], count, refused[3];
    } names[] = {
        {"NZ_TUNE_SPGEMM_DENSE", {0, 1, 2, 4, 8, 16, 32, 64}, 8, {3, 128, -2}},
        {"NZ_TUNE_SPGEMM_RANK", {0, 1, 2}, 3, {3, -2, 4}},
        {"NZ_TUNE_SPGEMM_SWEEP", {0, 1, 2, 4, 8, 16, 32}, 7, {3, 64, -2}},
        {"NZ_TUNE_SPGEMM_SYMDENSE", {0, 1, 2}, 3, {3, -2, 4}},
        {"NZ_TUNE_SPGEMM_ONEBIN", {0, 1}, 2, {2, -2, 3}},
    };
    nz_context_t *ctx = NULL;
    nz_tunables_t t, got, before;
    char text[64];
    NZT_CHECK(nz_context_create(&ctx) == NZ_SUCCESS, "context");
    NZT_CHECK(nz_context_get_tunables(ctx, &got) == NZ_SUCCESS, "get");
    NZT_CHECK(got.spgemm_dense == NZ_TUNE_AUTO && got.spgemm_rank == NZ_TUNE_AUTO &&
                  got.spgemm_sweep == NZ_TUNE_AUTO && got.spgemm_symdense == NZ_TUNE_AUTO &&
                  got.spgemm_onebin == NZ_TUNE_AUTO,
              "a new context's SpGEMM tunables are automatic");
    for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++) {
        int *const fields[] = {&t.spgemm_dense, &t.spgemm_rank, &t.spgemm_sweep,
                               &t.spgemm_symdense, &t.spgemm_onebin};
        for (int i = 0; i < names[k].count; i++) {
            NZT_CHECK(nz_tunables_default(&t) == NZ_SUCCESS, "default");
            snprintf(text, sizeof text, "%s=%d", names[k].name, names[k].allowed[i]);
            NZT_CHECK(nz_tunables_parse(&t, text) == NZ_SUCCESS && *fields[k] == names[k].allowed[i],
                      "parse %s", text);
            for (int j = 0; j < 5; j++)
                NZT_CHECK(j == k || *fields[j] == NZ_TUNE_AUTO, "%s sets field %d only", text, k);
            NZT_CHECK(nz_context_set_tunables(ctx, &t) == NZ_SUCCESS, "set %s", text);
            NZT_CHECK(nz_context_get_tunables(ctx, &got) == NZ_SUCCESS &&
                          memcmp(&got, &t, sizeof t) == 0, "get after set %s", text);
        }
        snprintf(text, sizeof text, "%s=auto", names[k].name);
        NZT_CHECK(nz_tunables_parse(&t, text) == NZ_SUCCESS && *fields[k] == NZ_TUNE_AUTO,
                  "parse %s", text);
        for (int r = 0; r < 3; r++) {
            snprintf(text, sizeof text, "%s=%d", names[k].name, names[k].refused[r]);
            before = t;
            NZT_CHECK(nz_tunables_parse(&t, text) == NZ_ERR_INVALID_ARGUMENT &&
                          memcmp(&t, &before, sizeof t) == 0, "%s refused, unchanged", text);
            NZT_CHECK(nz_context_get_tunables(ctx, &before) == NZ_SUCCESS, "get");
            *fields[k] = names[k].refused[r];
            NZT_CHECK(nz_context_set_tunables(ctx, &t) == NZ_ERR_INVALID_ARGUMENT &&
                          strstr(nz_context_last_error(ctx), names[k].name) != NULL,
                      "set refuses %s: %s", text, nz_context_last_error(ctx));
            NZT_CHECK(nz_context_get_tunables(ctx, &got) == NZ_SUCCESS &&
                          memcmp(&got, &before, sizeof got) == 0, "refused set of %s changes nothing",
                      text);
            *fields[k] = NZ_TUNE_AUTO;
        }
    }
    nz_context_destroy(&ctx);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_parallel_memcpy();
    test_realloc();
    test_status_and_names();
    test_handles();
    test_create_csr();
    test_alloc_failure();
    test_zoo_spmv();
    test_tunables();
    test_tunables_spgemm();
    return nzt_finish("test_core");
}
