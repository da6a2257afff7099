/* test_mm.c: Matrix Market reading: hand-computed files, number parsing, the invalid corpus, parallel parse, arguments, allocation failures. */
#include "testutil.h"
#include "nzi.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static nz_context_t *ctx;
static char tmpdir[256];

/* Read `text` from memory in both value types and compare with the expected row-major dense
 * matrix and stored-entry count. */
static void expect_matrix(const char *what, const char *text, int64_t rows, int64_t cols,
                          int64_t nnz, const double *expected) {
    for (int t = 0; t < 2; t++) {
        nz_value_type_t vt = t == 0 ? NZ_F64 : NZ_F32;
        nz_matrix_t *A = NULL;
        nz_status_t s = nz_mm_read_buffer(ctx, &A, text, strlen(text), what, vt);
        NZT_CHECK(s == NZ_SUCCESS, "%s: status %d: %s", what, (int)s, nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        int64_t r, c;
        double *d = nzt_dense_of(ctx, A, &r, &c);
        nz_matrix_info_t info;
        nz_matrix_info(ctx, &info, A);
        NZT_CHECK(r == rows && c == cols, "%s: shape %lld x %lld", what, (long long)r, (long long)c);
        NZT_CHECK(info.nnz == nnz, "%s: nnz %lld, expected %lld", what, (long long)info.nnz,
                  (long long)nnz);
        if (r == rows && c == cols)
            for (int64_t k = 0; k < rows * cols; k++)
                NZT_CHECK(d[k] == (vt == NZ_F32 ? (double)(float)expected[k] : expected[k]), "%s (%s): entry (%lld, %lld) = %g, expected %g",
                          what, t == 0 ? "double" : "float", (long long)(k / cols),
                          (long long)(k % cols), d[k], expected[k]);
        free(d);
        nz_matrix_destroy(&A);
    }
}

static void test_hand_computed(void) {
    /* coordinate real general, unsorted, a duplicate (summed), comments and blank lines */
    double g[] = {1, 0, 2.5, 0, 0, 0, -3, 0, 4e-3};
    expect_matrix("coord real general",
                  "%%MatrixMarket matrix coordinate real general\n% c\n\n3 3 5\n"
                  "3 3 4e-3\n1 3 2.5\n% mid comment\n\n3 1 -3\n1 1 0.5\n1 1 0.5\n",
                  3, 3, 4, g);
    /* integer general, rectangular */
    double ig[] = {0, 7, 0, 0, -2, 0, 0, 9};
    expect_matrix("coord integer general",
                  "%%MatrixMarket matrix coordinate integer general\n2 4 3\n1 2 7\n2 1 -2\n2 4 9\n",
                  2, 4, 3, ig);
    /* pattern general */
    double pg[] = {0, 1, 1, 0, 0, 1};
    expect_matrix("coord pattern general",
                  "%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 2\n1 3\n2 3\n", 2, 3,
                  3, pg);
    /* real symmetric: lower triangle, one entry given in the upper triangle (mirrored too) */
    double rs[] = {1, 2, 0, 2, 3, 5, 0, 5, 0};
    expect_matrix("coord real symmetric",
                  "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 1 2\n2 2 3\n2 3 5\n",
                  3, 3, 6, rs);
    /* both copies of an off-diagonal entry are summed (documented choice) */
    double both[] = {0, 3, 3, 0};
    expect_matrix("coord symmetric both triangles",
                  "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 2\n", 2, 2, 2,
                  both);
    double is[] = {4, -1, -1, 4};
    expect_matrix("coord integer symmetric",
                  "%%MatrixMarket matrix coordinate integer symmetric\n2 2 3\n1 1 4\n2 1 -1\n2 2 4\n",
                  2, 2, 4, is);
    double ps[] = {0, 1, 1, 1, 0, 0, 1, 0, 0};
    expect_matrix("coord pattern symmetric",
                  "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 1\n", 3, 3, 4,
                  ps);
    double sk[] = {0, -10, -20, 10, 0, -30, 20, 30, 0};
    expect_matrix("coord real skew",
                  "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 10\n3 1 20\n3 2 30\n",
                  3, 3, 6, sk);
    double isk[] = {0, -3, 3, 0};
    expect_matrix("coord integer skew",
                  "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n", 2, 2,
                  2, isk);
    double he[] = {2, 1.5, 1.5, 2};
    expect_matrix("coord real hermitian",
                  "%%MatrixMarket matrix coordinate real hermitian\n2 2 3\n1 1 2\n2 1 1.5\n2 2 2\n",
                  2, 2, 4, he);
    expect_matrix("coord integer hermitian",
                  "%%MatrixMarket matrix coordinate integer hermitian\n2 2 2\n2 1 -7\n1 1 1\n", 2,
                  2, 3, (double[]){1, -7, -7, 0});
    /* array general: column-major, zeros kept as stored entries */
    double ag[] = {10, 20, 11, 21, 0, 22};
    expect_matrix("array real general",
                  "%%MatrixMarket matrix array real general\n3 2\n10\n11\n0\n20\n21\n22\n", 3, 2, 6,
                  ag);
    expect_matrix("array integer general", "%%MatrixMarket matrix array integer general\n1 3\n1\n-2\n3\n",
                  1, 3, 3, (double[]){1, -2, 3});
    /* array symmetric: packed lower triangle by columns */
    double as[] = {1, 22, 33, 22, 2, 44, 33, 44, 3};
    expect_matrix("array real symmetric",
                  "%%MatrixMarket matrix array real symmetric\n3 3\n1\n22\n33\n2\n44\n3\n", 3, 3, 9,
                  as);
    expect_matrix("array integer symmetric", "%%MatrixMarket matrix array integer symmetric\n2 2\n5\n6\n7\n",
                  2, 2, 4, (double[]){5, 6, 6, 7});
    /* array skew: strictly lower triangle by columns; the diagonal is not stored */
    double ask[] = {0, -22, -33, 22, 0, -44, 33, 44, 0};
    expect_matrix("array real skew",
                  "%%MatrixMarket matrix array real skew-symmetric\n3 3\n22\n33\n44\n", 3, 3, 6, ask);
    expect_matrix("array real hermitian", "%%MatrixMarket matrix array real hermitian\n2 2\n1\n2\n3\n",
                  2, 2, 4, (double[]){1, 2, 2, 3});
    /* empty shapes */
    expect_matrix("0x0", "%%MatrixMarket matrix coordinate pattern general\n0 0 0\n", 0, 0, 0, NULL);
    expect_matrix("5x0 array", "%%MatrixMarket matrix array real general\n5 0\n", 5, 0, 0, NULL);
    expect_matrix("4x3 no entries", "%%MatrixMarket matrix coordinate real general\n4 3 0\n", 4, 3,
                  0, (double[12]){0});
}

static void test_free_format(void) {
    double e[] = {1, 0, 0, 0, 0.25, 0, 0, 0, -1.5e3};
    /* case-insensitive banner, extra blanks and tabs, CRLF, no final newline, leading '+' */
    expect_matrix("free format",
                  "%%matrixmarket   MATRIX\tCoordinate  REAL   General  \r\n%%extra banner-like "
                  "comment\r\n\r\n  \t3   3 \t 3 \r\n 1\t1 +1.0\r\n\r\n   2 2 2.5e-1   \r\n"
                  "%comment\r\n3 3 -1.5E+3",
                  3, 3, 3, e);
    /* double banner keyword alias, byte order mark */
    expect_matrix("bom", "\xef\xbb\xbf%%MatrixMarket matrix coordinate double general\n1 1 1\n1 1 7\n",
                  1, 1, 1, (double[]){7});
    /* number forms */
    expect_matrix("number forms",
                  "%%MatrixMarket matrix array real general\n8 1\n.5\n5.\n-0\n1e2\n0001.2500\n"
                  "0.000000000000000000000000000000000000000000000000000000000000000001e66\n"
                  "123456789012345678901234567890e-29\n-2E-0\n",
                  8, 1, 8, (double[]){0.5, 5, 0, 100, 1.25, 1, 1.2345678901234568, -2});
    /* nan and inf */
    const char *text = "%%MatrixMarket matrix array real general\n4 1\nnan\n-inf\nInfinity\n1e400\n";
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &A, text, strlen(text), "nan", NZ_F64));
    const double *v;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, NULL, NULL, (const void **)&v, A));
    NZT_CHECK(isnan(v[0]) && isinf(v[1]) && v[1] < 0 && isinf(v[2]) && isinf(v[3]), "nan / inf");
    nz_matrix_destroy(&A);
}

/* Values parsed by the fast path must equal strtod / strtof bit for bit. */
static void test_number_parsing(void) {
    nzi_rng_t rng;
    nzi_rng_seed(&rng, nzt_seed);
    const int n = 20000;
    size_t cap = (size_t)n * 48 + 128, len = 0;
    char *text = nzt_malloc(cap);
    len += (size_t)sprintf(text, "%%%%MatrixMarket matrix array real general\n%d 1\n", n);
    char **tokens = nzt_malloc((size_t)n * sizeof(char *));
    for (int k = 0; k < n; k++) {
        char tok[48];
        int m = 0;
        if (nzi_rng_below(&rng, 2)) tok[m++] = '-';
        int digits = 1 + (int)nzi_rng_below(&rng, k % 3 == 0 ? 25 : 17);
        int point = (int)nzi_rng_below(&rng, digits + 1);
        for (int d = 0; d < digits; d++) {
            if (d == point) tok[m++] = '.';
            tok[m++] = (char)('0' + nzi_rng_below(&rng, 10));
        }
        if (nzi_rng_below(&rng, 2)) m += sprintf(tok + m, "e%d", (int)nzi_rng_below(&rng, 90) - 45);
        if (k % 7 == 0) /* floats printed with %.9g sit close to float rounding boundaries */
            m = sprintf(tok, "%.9g", (double)(float)(nzi_rng_uniform(&rng) * 1e3));
        if (k % 11 == 0) /* exact binary halfway cases for float */
            m = sprintf(tok, "%.17g", 1.0 + (2 * nzi_rng_below(&rng, 1 << 20) + 1) * 0x1p-24);
        tok[m] = '\0';
        tokens[k] = nzt_malloc((size_t)m + 1);
        memcpy(tokens[k], tok, (size_t)m + 1);
        len += (size_t)sprintf(text + len, "%s\n", tok);
    }
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &A, text, len, "numbers", NZ_F64));
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &B, text, len, "numbers", NZ_F32));
    const double *d;
    const float *f;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, NULL, NULL, (const void **)&d, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, NULL, NULL, (const void **)&f, B));
    int bad = 0;
    for (int k = 0; k < n; k++) {
        double rd = strtod(tokens[k], NULL);
        float rf = strtof(tokens[k], NULL);
        if (memcmp(&rd, &d[k], 8) != 0 || memcmp(&rf, &f[k], 4) != 0) {
            if (bad++ < 5)
                NZT_CHECK(0, "'%s': double %.17g (strtod %.17g), float %.9g (strtof %.9g)",
                          tokens[k], d[k], rd, (double)f[k], (double)rf);
        }
        free(tokens[k]);
    }
    NZT_CHECK(bad == 0, "%d of %d values differ from strtod/strtof", bad, n);
    free(tokens);
    free(text);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
}

/* tests/data/mm/{bad,unsupported}_NAME_lineN.mtx: the status and ":N:" in the message. */
static void test_invalid_corpus(void) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/mm", nzt_data_dir());
    DIR *d = opendir(dir);
    NZT_CHECK(d != NULL, "cannot open %s", dir);
    if (d == NULL) return;
    int checked = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        const char *name = ent->d_name;
        bool bad = strncmp(name, "bad_", 4) == 0, unsup = strncmp(name, "unsupported_", 12) == 0;
        const char *at = NULL;
        for (const char *q = strstr(name, "_line"); q != NULL; q = strstr(q + 1, "_line")) at = q;
        if ((!bad && !unsup) || at == NULL) continue;
        int line = atoi(at + 5);
        nz_status_t want = bad ? NZ_ERR_PARSE : NZ_ERR_UNSUPPORTED;
        char path[1400], needle[300];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        snprintf(needle, sizeof needle, "%s:%d:", name, line);
        size_t size = 0;
        char *data = nzt_read_file(path, &size);
        for (int t = 0; t < 4; t++) {
            nz_matrix_t *A = NULL;
            nz_value_type_t vt = t % 2 ? NZ_F32 : NZ_F64;
            nz_status_t s = t < 2 ? nz_mm_read(ctx, &A, path, vt)
                                  : nz_mm_read_buffer(ctx, &A, data, size, name, vt);
            const char *msg = nz_context_last_error(ctx);
            NZT_CHECK(s == want, "%s: status %d, expected %d (%s)", name, (int)s, (int)want, msg);
            NZT_CHECK(strstr(msg, needle) != NULL, "%s: message '%s' lacks '%s'", name, msg,
                      needle);
            NZT_CHECK(A == NULL, "%s: output set on failure", name);
            nz_matrix_destroy(&A);
        }
        free(data);
        checked++;
    }
    closedir(d);
    NZT_CHECK(checked >= 40, "only %d invalid files found", checked);
    nz_alloc_stats_t st;
    nz_context_alloc_stats(ctx, &st);
    NZT_CHECK(st.live_blocks == 0, "%lld blocks leaked by failed reads", (long long)st.live_blocks);
}

/* A large buffer is parsed by several threads; an error deep inside must still report the
 * exact line, and the result must not depend on the thread count. */
static void test_parallel_parse(void) {
    const int n = 400000;
    size_t cap = (size_t)n * 40 + 256, len = 0;
    char *text = nzt_malloc(cap);
    len += (size_t)sprintf(text, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", n, n, n);
    nzi_rng_t rng;
    nzi_rng_seed(&rng, nzt_seed + 1);
    for (int k = 0; k < n; k++) {
        if (k % 1000 == 999) len += (size_t)sprintf(text + len, "%% comment %d\n\n", k);
        len += (size_t)sprintf(text + len, "%d %d %.17g\n", k + 1,
                               (int)nzi_rng_below(&rng, n) + 1, nzi_rng_uniform(&rng));
    }
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &A, text, len, "big", NZ_F64));
    NZT_OK(ctx, nz_context_set_threads(ctx, 7));
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &B, text, len, "big", NZ_F64));
    const int64_t *ra, *rb;
    const int32_t *ca, *cb;
    const void *va, *vb;
    nz_matrix_csr_arrays(ctx, &ra, &ca, &va, A);
    nz_matrix_csr_arrays(ctx, &rb, &cb, &vb, B);
    NZT_CHECK(memcmp(ra, rb, (size_t)(n + 1) * 8) == 0 && memcmp(ca, cb, (size_t)n * 4) == 0 &&
                  memcmp(va, vb, (size_t)n * 8) == 0,
              "1 thread and 7 threads differ");
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    /* corrupt the entry on a known line in the last part: count lines up to it */
    size_t pos = len * 6 / 7;
    while (text[pos - 1] != '\n') pos++;
    while (text[pos] == '%' || text[pos] == '\n') pos = (size_t)(strchr(text + pos, '\n') - text) + 1;
    int64_t line = 1;
    for (size_t k = 0; k < pos; k++) line += text[k] == '\n';
    text[pos] = 'x';
    /* and an earlier error in the second part, found first */
    size_t pos2 = len * 2 / 7;
    while (text[pos2 - 1] != '\n') pos2++;
    while (text[pos2] == '%' || text[pos2] == '\n') pos2 = (size_t)(strchr(text + pos2, '\n') - text) + 1;
    int64_t line2 = 1;
    for (size_t k = 0; k < pos2; k++) line2 += text[k] == '\n';
    for (int round = 0; round < 2; round++) {
        int64_t want = round == 0 ? line : line2;
        if (round == 1) text[pos2] = 'y';
        char needle[64];
        snprintf(needle, sizeof needle, "big:%lld:", (long long)want);
        nz_status_t s = nz_mm_read_buffer(ctx, &A, text, len, "big", NZ_F64);
        NZT_CHECK(s == NZ_ERR_PARSE && strstr(nz_context_last_error(ctx), needle) != NULL,
                  "parallel error: status %d, '%s', expected line %lld", (int)s,
                  nz_context_last_error(ctx), (long long)want);
    }
    nz_context_set_threads(ctx, 0);
    free(text);
}

static void test_arguments(void) {
    nz_matrix_t *A = NULL;
    NZT_CHECK(nz_mm_read(NULL, &A, "x", NZ_F64) == NZ_ERR_NULL_ARGUMENT, "NULL ctx");
    NZT_CHECK(nz_mm_read(ctx, NULL, "x", NZ_F64) == NZ_ERR_NULL_ARGUMENT, "NULL out");
    NZT_CHECK(nz_mm_read(ctx, &A, NULL, NZ_F64) == NZ_ERR_NULL_ARGUMENT, "NULL path");
    NZT_CHECK(nz_mm_read(ctx, &A, "x", (nz_value_type_t)3) == NZ_ERR_INVALID_ARGUMENT, "bad type");
    nz_status_t s = nz_mm_read(ctx, &A, "/nonexistent/file.mtx", NZ_F64);
    NZT_CHECK(s == NZ_ERR_IO && strstr(nz_context_last_error(ctx), "/nonexistent/file.mtx") != NULL,
              "missing file: %d %s", (int)s, nz_context_last_error(ctx));
    NZT_CHECK(nz_mm_read(ctx, &A, "/tmp", NZ_F64) == NZ_ERR_IO, "directory");
    NZT_CHECK(nz_mm_read_buffer(ctx, &A, NULL, 5, "b", NZ_F64) == NZ_ERR_NULL_ARGUMENT, "NULL data");
    NZT_CHECK(nz_mm_read_buffer(ctx, &A, NULL, 0, NULL, NZ_F64) == NZ_ERR_PARSE, "empty buffer");
    NZT_CHECK(strstr(nz_context_last_error(ctx), "<buffer>:1:") != NULL, "default buffer name");
    NZT_CHECK(nz_mm_write(ctx, "x", NULL) == NZ_ERR_NULL_ARGUMENT, "write NULL matrix");
    nz_matrix_t *B = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &B, 10, NZ_F64, 1));
    NZT_CHECK(nz_mm_write(ctx, "/nonexistent/dir/x.mtx", B) == NZ_ERR_IO, "unwritable path");
    nz_matrix_destroy(&B);
}

/* Fail the k-th allocation for k = 1, 2, ... until the read succeeds; nothing may leak. */
static void alloc_loop(const char *what, const char *data, size_t size, const char *path) {
    for (int64_t k = 1; k < 10000; k++) {
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_matrix_t *A = NULL;
        nz_status_t s = path != NULL ? nz_mm_read(ctx, &A, path, NZ_F32)
                                     : nz_mm_read_buffer(ctx, &A, data, size, what, NZ_F32);
        nz_context_fail_alloc_after(ctx, 0);
        nz_alloc_stats_t st;
        if (s == NZ_SUCCESS) {
            nz_matrix_destroy(&A);
            nz_context_alloc_stats(ctx, &st);
            NZT_CHECK(st.live_blocks == 0, "%s: leak after success", what);
            NZT_CHECK(k > 1, "%s: no allocation was ever failed", what);
            return;
        }
        NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY, "%s: k=%lld: status %d (%s)", what, (long long)k,
                  (int)s, nz_context_last_error(ctx));
        NZT_CHECK(A == NULL, "%s: output set on failure", what);
        nz_context_alloc_stats(ctx, &st);
        NZT_CHECK(st.live_blocks == 0, "%s: k=%lld: %lld blocks leaked", what, (long long)k,
                  (long long)st.live_blocks);
        if (st.live_blocks != 0) return;
    }
    NZT_CHECK(0, "%s: never succeeded", what);
}

static void test_alloc_failures(void) {
    const char *texts[] = {
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n3 3 1\n1 1 2\n2 1 3\n",
        "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n",
        "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
    };
    for (int i = 0; i < 3; i++) alloc_loop(texts[i], texts[i], strlen(texts[i]), NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/alloc.mtx.gz", tmpdir);
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 4, NZ_F32, 3));
    NZT_OK(ctx, nz_mm_write(ctx, path, A));
    nz_matrix_destroy(&A);
    size_t size = 0;
    char *data = nzt_read_file(path, &size);
    alloc_loop("gzip buffer", data, size, NULL);
    alloc_loop("gzip file", NULL, 0, path);
    free(data);
    unlink(path);
}

/* A file larger than one 32 MiB read block, with a long comment line: block boundaries. */
static void test_large_file(void) {
    const int n = 1500000;
    char path[512];
    snprintf(path, sizeof path, "%s/large.mtx", tmpdir);
    size_t cap = (size_t)n * 40 + 300000, len = 0;
    char *text = nzt_malloc(cap);
    len += (size_t)sprintf(text, "%%%%MatrixMarket matrix coordinate real general\n%%");
    memset(text + len, 'c', 200000);
    len += 200000;
    len += (size_t)sprintf(text + len, "\n%d %d %d\n", n, 1000, n);
    for (int k = 0; k < n; k++)
        len += (size_t)sprintf(text + len, "%d %d %.17g\n", k + 1, (int)(((int64_t)k * 7919) % 1000) + 1,
                               k * 1.0000001);
    nzt_write_file(path, text, len);
    NZT_CHECK(len > ((size_t)32 << 20), "large file is only %zu bytes", len);
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nz_mm_read(ctx, &A, path, NZ_F64));
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &B, text, len, "large", NZ_F64));
    NZT_CHECK(nzt_csr_identical(ctx, A, B, 1), "large file: file and buffer reads differ");
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    /* an error far into the second block */
    text[len - 5] = '#';
    nzt_write_file(path, text, len);
    char needle[64];
    snprintf(needle, sizeof needle, "large.mtx:%d:", n + 3); /* banner, comment, size line */
    nz_status_t s = nz_mm_read(ctx, &A, path, NZ_F64);
    NZT_CHECK(s == NZ_ERR_PARSE && strstr(nz_context_last_error(ctx), needle) != NULL,
              "large file error: %d '%s', expected '%s'", (int)s, nz_context_last_error(ctx), needle);
    free(text);
    unlink(path);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    NZT_OK(ctx, nz_context_create(&ctx));
    snprintf(tmpdir, sizeof tmpdir, "/tmp/nz_test_mm_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_hand_computed();
    test_free_format();
    test_number_parsing();
    test_invalid_corpus();
    test_parallel_parse();
    test_arguments();
    test_alloc_failures();
    test_large_file();
    nz_alloc_stats_t st;
    nz_context_alloc_stats(ctx, &st);
    NZT_CHECK(st.live_blocks == 0, "%lld blocks leaked", (long long)st.live_blocks);
    nz_context_destroy(&ctx);
    rmdir(tmpdir);
    return nzt_finish("test_mm");
}
