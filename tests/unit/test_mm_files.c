/* test_mm_files.c: Matrix Market files: write / read round trips, gzip, dense arrays, the copied and the real matrices. */
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
        NZT_CHECK(nzt_csr_identical(ctx, A, B, 1), "%s%s: round trip changed the matrix", what,
                  suffix);
    nz_matrix_destroy(&B);
    /* and the same bytes read from memory */
    size_t size = 0;
    char *data = nzt_read_file(path, &size);
    s = nz_mm_read_buffer(ctx, &B, data, size, path, info.value_type);
    NZT_CHECK(s == NZ_SUCCESS && nzt_csr_identical(ctx, A, B, 1), "%s%s: buffer reread differs",
              what, suffix);
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
                NZT_CHECK(nzt_csr_identical(ctx, A, B, 1), "%s: COO written as Matrix Market",
                          nzt_zoo_name(k));
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
    double *d = nzt_dense_of(ctx, A, &r, &c);
    NZT_CHECK(r == 3 && c == 3 && d[0] == 1 && d[4] == 1 && d[8] == 1 && d[1] == 0, "gz identity");
    free(d);
    nz_matrix_destroy(&A);
    snprintf(path, sizeof path, "%s/mmtest_fmm_coordinate_real_skew.mtx", nzt_data_dir());
    NZT_OK(ctx, nz_mm_read(ctx, &A, path, NZ_F64));
    d = nzt_dense_of(ctx, A, &r, &c);
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

/* Zero bytes after the last gzip member (tape / block padding: `head -c 1024 /dev/zero >>
 * f.mtx.gz`), which gzip -d accepts, read as the file without them, from a file and a buffer,
 * also when the padding spans several read blocks (issue 36); a non-zero byte after the zeros,
 * or garbage right after the member, is a parse error naming the file. */
static void test_gzip_padding(const nz_matrix_t *B, const char *gz_data, size_t gz_size) {
    const size_t pads[] = {1, 1024, (size_t)3 << 20};
    char path[512];
    snprintf(path, sizeof path, "%s/padded.mtx.gz", tmpdir);
    for (size_t p = 0; p < sizeof pads / sizeof pads[0]; p++)
        for (int garbage = 0; garbage < 2; garbage++) {
            const size_t total = gz_size + pads[p] + (size_t)garbage;
            char *padded = nzt_malloc(total);
            memcpy(padded, gz_data, gz_size);
            memset(padded + gz_size, 0, pads[p]);
            if (garbage) padded[total - 1] = 'x';
            nzt_write_file(path, padded, total);
            for (int where = 0; where < 2; where++) {
                nz_matrix_t *C = NULL;
                nz_status_t s = where ? nz_mm_read_buffer(ctx, &C, padded, total, "padded.gz",
                                                          NZ_F64)
                                      : nz_mm_read(ctx, &C, path, NZ_F64);
                if (!garbage) {
                    NZT_CHECK(s == NZ_SUCCESS && nzt_csr_identical(ctx, B, C, 1),
                              "%s with %zu zero bytes after the gzip data: status %d (%s)",
                              where ? "buffer" : "file", pads[p], (int)s,
                              nz_context_last_error(ctx));
                } else {
                    NZT_CHECK(s == NZ_ERR_PARSE && C == NULL,
                              "%s with %zu zero bytes and an 'x' after the gzip data: status %d",
                              where ? "buffer" : "file", pads[p], (int)s);
                    NZT_CHECK(strstr(nz_context_last_error(ctx), "non-zero") != NULL &&
                                  strstr(nz_context_last_error(ctx), where ? "padded.gz" : path),
                              "garbage after padding: message %s", nz_context_last_error(ctx));
                }
                nz_matrix_destroy(&C);
            }
            free(padded);
        }
    /* garbage right after the member (no zeros first) */
    char *junk = nzt_malloc(gz_size + 4);
    memcpy(junk, gz_data, gz_size);
    memcpy(junk + gz_size, "junk", 4);
    nz_matrix_t *C = NULL;
    nz_status_t s = nz_mm_read_buffer(ctx, &C, junk, gz_size + 4, "junk.gz", NZ_F64);
    NZT_CHECK(s == NZ_ERR_PARSE && C == NULL, "garbage after the gzip data: status %d", (int)s);
    free(junk);
    unlink(path);
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
    NZT_CHECK(nzt_csr_identical(ctx, B, C, 1) && nzt_csr_identical(ctx, A, B, 1),
              "plain and gz differ");
    nz_matrix_destroy(&C);
    size_t size = 0;
    char *data = nzt_read_file(gz, &size);
    NZT_CHECK(size > 20 && (unsigned char)data[0] == 0x1f, "gz output is not gzip");
    nzt_write_file(odd, data, size);
    NZT_OK(ctx, nz_mm_read(ctx, &C, odd, NZ_F64)); /* detected by magic bytes */
    NZT_CHECK(nzt_csr_identical(ctx, B, C, 1), "gzip detected by magic differs");
    nz_matrix_destroy(&C);
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &C, data, size, "gzbuf", NZ_F64));
    NZT_CHECK(nzt_csr_identical(ctx, B, C, 1), "gzip buffer differs");
    nz_matrix_destroy(&C);
    test_gzip_padding(B, data, size);
    /* two concatenated members read as one stream */
    size_t psize = 0;
    char *ptext = nzt_read_file(plain, &psize);
    /* truncated gzip */
    for (size_t cut = 10; cut < size; cut += size / 7 + 1) {
        nzt_write_file(odd, data, cut);
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
    nzt_write_file(path, sym, strlen(sym));
    NZT_OK(ctx, nz_mm_read_dense(ctx, &data, &rows, &cols, path, NZ_F64));
    double es[9] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
    NZT_CHECK(rows == 3 && cols == 3 && memcmp(data, es, sizeof es) == 0, "symmetric dense");
    NZT_OK(ctx, nz_free(ctx, data));
    /* coordinate densified (column-major), skew mirrored, duplicates summed */
    const char *co = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 1\n3 2 4\n3 2 1\n";
    nzt_write_file(path, co, strlen(co));
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

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    NZT_OK(ctx, nz_context_create(&ctx));
    snprintf(tmpdir, sizeof tmpdir, "/tmp/nz_test_mm_files_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_roundtrip();
    test_real_files();
    test_manifest();
    test_gzip();
    test_dense();
    nz_alloc_stats_t st;
    nz_context_alloc_stats(ctx, &st);
    NZT_CHECK(st.live_blocks == 0, "%lld blocks leaked", (long long)st.live_blocks);
    nz_context_destroy(&ctx);
    rmdir(tmpdir);
    return nzt_finish("test_mm_files");
}
