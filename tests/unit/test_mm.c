/* test_mm.c: Matrix Market reading and writing: hand-computed files, invalid corpus, round trips, real matrices. */
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

/* Dense row-major copy of a small host CSR matrix. */
static double *dense_of(const nz_matrix_t *A, int64_t *rows, int64_t *cols) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A));
    double *d = nzt_malloc((size_t)(info.rows * info.cols + 1) * sizeof(double));
    for (int64_t k = 0; k < info.rows * info.cols; k++) d[k] = 0;
    for (int64_t i = 0; i < info.rows; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            d[i * info.cols + ci[k]] += nzi_get(v, info.value_type, k);
    *rows = info.rows;
    *cols = info.cols;
    return d;
}

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
        double *d = dense_of(A, &r, &c);
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

static char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = nzt_malloc((size_t)n + 1);
    *size = fread(data, 1, (size_t)n, f);
    fclose(f);
    return data;
}

static void write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
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
        char *data = read_file(path, &size);
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

static bool same_matrix(const nz_matrix_t *A, const nz_matrix_t *B) {
    nz_matrix_info_t a, b;
    nz_matrix_info(ctx, &a, A);
    nz_matrix_info(ctx, &b, B);
    if (a.rows != b.rows || a.cols != b.cols || a.nnz != b.nnz || a.value_type != b.value_type)
        return false;
    const int64_t *ra, *rb;
    const int32_t *ca, *cb;
    const void *va, *vb;
    nz_matrix_csr_arrays(ctx, &ra, &ca, &va, A);
    nz_matrix_csr_arrays(ctx, &rb, &cb, &vb, B);
    size_t vs = a.value_type == NZ_F32 ? 4 : 8;
    return memcmp(ra, rb, (size_t)(a.rows + 1) * 8) == 0 &&
           (a.nnz == 0 || (memcmp(ca, cb, (size_t)a.nnz * 4) == 0 &&
                           memcmp(va, vb, (size_t)a.nnz * vs) == 0));
}

static void roundtrip(const char *what, const nz_matrix_t *A, const char *suffix) {
    char path[512];
    snprintf(path, sizeof path, "%s/roundtrip%s", tmpdir, suffix);
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    NZT_OK(ctx, nz_mm_write(ctx, path, A));
    nz_matrix_t *B = NULL;
    nz_status_t s = nz_mm_read(ctx, &B, path, info.value_type);
    NZT_CHECK(s == NZ_SUCCESS, "%s%s: reread failed: %s", what, suffix, nz_context_last_error(ctx));
    if (s == NZ_SUCCESS)
        NZT_CHECK(same_matrix(A, B), "%s%s: round trip changed the matrix", what, suffix);
    nz_matrix_destroy(&B);
    /* and the same bytes read from memory */
    size_t size = 0;
    char *data = read_file(path, &size);
    s = nz_mm_read_buffer(ctx, &B, data, size, path, info.value_type);
    NZT_CHECK(s == NZ_SUCCESS && same_matrix(A, B), "%s%s: buffer reread differs", what, suffix);
    nz_matrix_destroy(&B);
    free(data);
    unlink(path);
}

static void test_roundtrip(void) {
    for (int k = 0; k < nzt_zoo_count(); k++) {
        for (int t = 0; t < 2; t++) {
            nz_value_type_t vt = t ? NZ_F32 : NZ_F64;
            nz_matrix_t *A = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, vt, nzt_seed));
            roundtrip(nzt_zoo_name(k), A, ".mtx");
            if (k % 4 == 0) roundtrip(nzt_zoo_name(k), A, ".mtx.gz");
            if (k % 3 == 0) { /* other formats are written through CSR */
                nz_matrix_t *C = NULL, *B = NULL;
                char path[512];
                snprintf(path, sizeof path, "%s/coo.mtx", tmpdir);
                NZT_OK(ctx, nz_matrix_convert(ctx, &C, A, NZ_FORMAT_COO, NULL));
                NZT_OK(ctx, nz_mm_write(ctx, path, C));
                NZT_OK(ctx, nz_mm_read(ctx, &B, path, vt));
                NZT_CHECK(same_matrix(A, B), "%s: COO written as Matrix Market", nzt_zoo_name(k));
                nz_matrix_destroy(&B);
                nz_matrix_destroy(&C);
                unlink(path);
            }
            nz_matrix_destroy(&A);
        }
    }
    /* extreme values survive */
    double v[6] = {DBL_MAX, -DBL_MIN, 5e-324, 1.0 / 3.0, -0.0, 123456789.123456789};
    int32_t r[6] = {0, 0, 1, 1, 2, 2}, c[6] = {0, 1, 0, 1, 0, 1};
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &A, 3, 2, 6, r, c, NZ_F64, v));
    roundtrip("extremes", A, ".mtx");
    nz_matrix_destroy(&A);
    float fv[6] = {FLT_MAX, -FLT_MIN, 1e-45f, 1.0f / 3.0f, -0.0f, 16777217.0f};
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &A, 3, 2, 6, r, c, NZ_F32, fv));
    roundtrip("float extremes", A, ".mtx");
    nz_matrix_destroy(&A);
    /* the real matrices copied into tests/data */
    char **names = NULL;
    int count = nzt_list_matrices(nzt_data_dir(), &names);
    NZT_CHECK(count >= 8, "only %d matrices in %s", count, nzt_data_dir());
    for (int i = 0; i < count; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", nzt_data_dir(), names[i]);
        for (int t = 0; t < 2; t++) {
            nz_matrix_t *M = NULL;
            nz_status_t s = nz_mm_read(ctx, &M, path, t ? NZ_F32 : NZ_F64);
            NZT_CHECK(s == NZ_SUCCESS, "%s: %s", names[i], nz_context_last_error(ctx));
            if (s == NZ_SUCCESS) roundtrip(names[i], M, t ? ".mtx.gz" : ".mtx");
            nz_matrix_destroy(&M);
        }
    }
    nzt_free_names(names, count);
}

/* Known contents of a few of the copied real matrices. */
static void test_real_files(void) {
    char path[1024];
    nz_matrix_t *A = NULL;
    snprintf(path, sizeof path, "%s/mmtest_fmm_coordinate_real_general.mtx.gz", nzt_data_dir());
    NZT_OK(ctx, nz_mm_read(ctx, &A, path, NZ_F64));
    int64_t r, c;
    double *d = dense_of(A, &r, &c);
    NZT_CHECK(r == 3 && c == 3 && d[0] == 1 && d[4] == 1 && d[8] == 1 && d[1] == 0, "gz identity");
    free(d);
    nz_matrix_destroy(&A);
    snprintf(path, sizeof path, "%s/mmtest_fmm_coordinate_real_skew.mtx", nzt_data_dir());
    NZT_OK(ctx, nz_mm_read(ctx, &A, path, NZ_F64));
    d = dense_of(A, &r, &c);
    NZT_CHECK(d[2 * 3 + 0] == 10 && d[0 * 3 + 2] == -10 && d[2 * 3 + 1] == 20 && d[1 * 3 + 2] == -20,
              "skew file");
    free(d);
    nz_matrix_destroy(&A);
    snprintf(path, sizeof path, "%s/bcsstk01.mtx", nzt_data_dir());
    NZT_OK(ctx, nz_mm_read(ctx, &A, path, NZ_F64));
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    NZT_CHECK(info.rows == 48 && info.nnz == 400, "bcsstk01: %lld x %lld nnz %lld", (long long)info.rows,
              (long long)info.cols, (long long)info.nnz);
    nz_matrix_destroy(&A);
    snprintf(path, sizeof path, "%s/illc1033.mtx", nzt_data_dir());
    NZT_OK(ctx, nz_mm_read(ctx, &A, path, NZ_F32));
    nz_matrix_info(ctx, &info, A);
    NZT_CHECK(info.rows == 1033 && info.cols == 320 && info.nnz == 4732, "illc1033 shape");
    nz_matrix_destroy(&A);
}

/* Every matrix in NZ_MATRIX_DIR reads, and its shape matches MANIFEST.tsv. */
static void test_manifest(void) {
    const char *dir = nzt_matrix_dir();
    if (dir == NULL) {
        printf("NZ_MATRIX_DIR not set: manifest check skipped\n");
        return;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    NZT_CHECK(f != NULL, "cannot open %s", path);
    if (f == NULL) return;
    char line[4096];
    int checked = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char file[512], group[512];
        long long rows, cols, stored;
        if (sscanf(line, "%511[^\t]\t%511[^\t]\t%lld\t%lld\t%lld", file, group, &rows, &cols,
                   &stored) != 5)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, file);
        nz_matrix_t *A = NULL;
        nz_status_t s = nz_mm_read(ctx, &A, path, NZ_F64);
        NZT_CHECK(s == NZ_SUCCESS, "%s: %s", file, nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        nz_matrix_info_t info;
        nz_matrix_info(ctx, &info, A);
        bool symmetric = strstr(line, "\tsymmetric\t") != NULL || strstr(line, "skew") != NULL;
        NZT_CHECK(info.rows == rows && info.cols == cols, "%s: %lld x %lld, manifest %lld x %lld",
                  file, (long long)info.rows, (long long)info.cols, rows, cols);
        NZT_CHECK(symmetric ? info.nnz >= stored : info.nnz <= stored,
                  "%s: nnz %lld vs stored %lld", file, (long long)info.nnz, stored);
        nz_matrix_destroy(&A);
        checked++;
    }
    fclose(f);
    NZT_CHECK(checked > 0, "no matrices checked from the manifest");
    printf("manifest: %d matrices read\n", checked);
}

/* .gz and plain files (and a gzip buffer) give identical matrices; gzip corruption is caught. */
static void test_gzip(void) {
    nz_matrix_t *A = NULL, *B = NULL, *C = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 8, NZ_F64, nzt_seed));
    char plain[512], gz[512], odd[512];
    snprintf(plain, sizeof plain, "%s/g.mtx", tmpdir);
    snprintf(gz, sizeof gz, "%s/g.mtx.gz", tmpdir);
    snprintf(odd, sizeof odd, "%s/g_gzip_without_extension.mtx", tmpdir);
    NZT_OK(ctx, nz_mm_write(ctx, plain, A));
    NZT_OK(ctx, nz_mm_write(ctx, gz, A));
    NZT_OK(ctx, nz_mm_read(ctx, &B, plain, NZ_F64));
    NZT_OK(ctx, nz_mm_read(ctx, &C, gz, NZ_F64));
    NZT_CHECK(same_matrix(B, C) && same_matrix(A, B), "plain and gz differ");
    nz_matrix_destroy(&C);
    size_t size = 0;
    char *data = read_file(gz, &size);
    NZT_CHECK(size > 20 && (unsigned char)data[0] == 0x1f, "gz output is not gzip");
    write_file(odd, data, size);
    NZT_OK(ctx, nz_mm_read(ctx, &C, odd, NZ_F64)); /* detected by magic bytes */
    NZT_CHECK(same_matrix(B, C), "gzip detected by magic differs");
    nz_matrix_destroy(&C);
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &C, data, size, "gzbuf", NZ_F64));
    NZT_CHECK(same_matrix(B, C), "gzip buffer differs");
    nz_matrix_destroy(&C);
    /* two concatenated members read as one stream */
    size_t psize = 0;
    char *ptext = read_file(plain, &psize);
    /* truncated gzip */
    for (size_t cut = 10; cut < size; cut += size / 7 + 1) {
        write_file(odd, data, cut);
        nz_status_t s = nz_mm_read(ctx, &C, odd, NZ_F64);
        NZT_CHECK(s == NZ_ERR_PARSE && C == NULL, "truncated gzip at %zu: status %d (%s)", cut,
                  (int)s, nz_context_last_error(ctx));
        s = nz_mm_read_buffer(ctx, &C, data, cut, "cut", NZ_F64);
        NZT_CHECK(s == NZ_ERR_PARSE && C == NULL, "truncated gzip buffer at %zu: status %d", cut,
                  (int)s);
    }
    /* corrupted deflate data */
    data[size / 2] ^= 0x55;
    data[size / 2 + 1] ^= 0xaa;
    nz_status_t s = nz_mm_read_buffer(ctx, &C, data, size, "corrupt", NZ_F64);
    NZT_CHECK(s < 0 && C == NULL, "corrupt gzip accepted");
    nz_matrix_destroy(&C);
    free(data);
    free(ptext);
    unlink(plain);
    unlink(gz);
    unlink(odd);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
}

static void test_dense(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/dense.mtx", tmpdir);
    double x[6] = {1, 2, 3, -4.5, 1e-300, 1.0 / 7};
    NZT_OK(ctx, nz_mm_write_dense(ctx, path, NZ_F64, 3, 2, x));
    int64_t rows = 0, cols = 0;
    void *data = NULL;
    NZT_OK(ctx, nz_mm_read_dense(ctx, &data, &rows, &cols, path, NZ_F64));
    NZT_CHECK(rows == 3 && cols == 2 && memcmp(data, x, sizeof x) == 0, "dense round trip");
    NZT_OK(ctx, nz_free(ctx, data));
    float xf[6] = {1, 2, 3, -4.5f, 1e-30f, 1.0f / 7};
    NZT_OK(ctx, nz_mm_write_dense(ctx, path, NZ_F32, 6, 1, xf));
    NZT_OK(ctx, nz_mm_read_dense(ctx, &data, &rows, &cols, path, NZ_F32));
    NZT_CHECK(rows == 6 && cols == 1 && memcmp(data, xf, sizeof xf) == 0, "float dense round trip");
    NZT_OK(ctx, nz_free(ctx, data));
    /* symmetric array expanded */
    const char *sym = "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n";
    write_file(path, sym, strlen(sym));
    NZT_OK(ctx, nz_mm_read_dense(ctx, &data, &rows, &cols, path, NZ_F64));
    double es[9] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
    NZT_CHECK(rows == 3 && cols == 3 && memcmp(data, es, sizeof es) == 0, "symmetric dense");
    NZT_OK(ctx, nz_free(ctx, data));
    /* coordinate densified (column-major), skew mirrored, duplicates summed */
    const char *co = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 1\n3 2 4\n3 2 1\n";
    write_file(path, co, strlen(co));
    NZT_OK(ctx, nz_mm_read_dense(ctx, &data, &rows, &cols, path, NZ_F64));
    double ec[9] = {0, 1, 0, -1, 0, 5, 0, -5, 0};
    NZT_CHECK(rows == 3 && cols == 3 && memcmp(data, ec, sizeof ec) == 0, "coordinate densified");
    NZT_OK(ctx, nz_free(ctx, data));
    /* errors */
    NZT_CHECK(nz_mm_read_dense(ctx, &data, &rows, &cols, "/nonexistent/x.mtx", NZ_F64) == NZ_ERR_IO,
              "missing file");
    NZT_CHECK(nz_mm_write_dense(ctx, path, NZ_F64, -1, 2, x) == NZ_ERR_INVALID_ARGUMENT, "neg dims");
    NZT_CHECK(nz_mm_write_dense(ctx, path, NZ_F64, 2, 2, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL data");
    NZT_CHECK(nz_mm_write_dense(ctx, "/nonexistent/dir/x.mtx", NZ_F64, 1, 1, x) == NZ_ERR_IO,
              "unwritable");
    unlink(path);
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
    char *data = read_file(path, &size);
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
    write_file(path, text, len);
    NZT_CHECK(len > ((size_t)32 << 20), "large file is only %zu bytes", len);
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nz_mm_read(ctx, &A, path, NZ_F64));
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &B, text, len, "large", NZ_F64));
    NZT_CHECK(same_matrix(A, B), "large file: file and buffer reads differ");
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    /* an error far into the second block */
    text[len - 5] = '#';
    write_file(path, text, len);
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
    test_roundtrip();
    test_real_files();
    test_manifest();
    test_gzip();
    test_dense();
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
