/* test_binary.c: the .nzb format: round trips, corrupted / truncated files rejected, nz_matrix_read dispatch. */
#include "testutil.h"

#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static nz_context_t *ctx;
static char tmpdir[256];

static void test_roundtrip(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/a.nzb", tmpdir);
    for (int k = 0; k < nzt_zoo_count(); k++)
        for (int t = 0; t < 2; t++) {
            nz_value_type_t vt = t ? NZ_F32 : NZ_F64;
            nz_matrix_t *A = NULL, *B = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, vt, nzt_seed));
            NZT_OK(ctx, nz_binary_write(ctx, path, A));
            nz_status_t s = nz_binary_read(ctx, &B, path);
            NZT_CHECK(s == NZ_SUCCESS && nzt_csr_identical(ctx, A, B, 1),
                      "%s: binary round trip (%s)", nzt_zoo_name(k), nz_context_last_error(ctx));
            nz_matrix_destroy(&B);
            /* nz_matrix_read picks the format by extension */
            s = nz_matrix_read(ctx, &B, path, vt);
            NZT_CHECK(s == NZ_SUCCESS && nzt_csr_identical(ctx, A, B, 1), "%s: nz_matrix_read",
                      nzt_zoo_name(k));
            nz_matrix_destroy(&B);
            nz_matrix_destroy(&A);
        }
    unlink(path);
}

/* Every single-byte corruption at a sample of positions, every truncation length near the
 * boundaries, and trailing bytes are rejected with NZ_ERR_PARSE (or UNSUPPORTED for the version
 * and byte-order fields), never crash, never leak. */
static void test_corruption(void) {
    char path[512], bad[512];
    snprintf(path, sizeof path, "%s/c.nzb", tmpdir);
    snprintf(bad, sizeof bad, "%s/bad.nzb", tmpdir);
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 4, NZ_F64, nzt_seed));
    NZT_OK(ctx, nz_binary_write(ctx, path, A));
    size_t size = 0;
    unsigned char *data = (unsigned char *)nzt_read_file(path, &size);
    NZT_CHECK(data != NULL && size > 100, "no .nzb written");
    for (size_t pos = 0; pos < size; pos += (pos < 80 ? 1 : 997)) {
        for (int bit = 0; bit < 8; bit += 3) {
            data[pos] ^= (unsigned char)(1u << bit);
            nzt_write_file(bad, data, size);
            nz_status_t s = nz_binary_read(ctx, &B, bad);
            NZT_CHECK(s == NZ_ERR_PARSE || (s == NZ_ERR_UNSUPPORTED && pos >= 8 && pos < 16),
                      "byte %zu bit %d flipped: status %d (%s)", pos, bit, (int)s,
                      nz_context_last_error(ctx));
            NZT_CHECK(B == NULL, "output set on failure");
            data[pos] ^= (unsigned char)(1u << bit);
        }
    }
    size_t cuts[] = {0, 1, 7, 8, 71, 72, 73, 80, size / 2, size - 9, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        nzt_write_file(bad, data, cuts[i]);
        nz_status_t s = nz_binary_read(ctx, &B, bad);
        NZT_CHECK(s == NZ_ERR_PARSE && strstr(nz_context_last_error(ctx), "bad.nzb") != NULL,
                  "truncated to %zu: status %d (%s)", cuts[i], (int)s, nz_context_last_error(ctx));
    }
    unsigned char *longer = nzt_malloc(size + 3);
    memcpy(longer, data, size);
    memset(longer + size, 0, 3);
    nzt_write_file(bad, longer, size + 3);
    NZT_CHECK(nz_binary_read(ctx, &B, bad) == NZ_ERR_PARSE, "trailing bytes accepted");
    free(longer);
    /* a hostile header with a valid header checksum cannot make the reader allocate: the file
     * size check comes first (rows 2^31-1 would need 16 GiB of offsets) */
    NZT_CHECK(nz_binary_read(ctx, &B, "/nonexistent/x.nzb") == NZ_ERR_IO, "missing file");
    /* a text file is not a .nzb */
    const char *text = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n";
    nzt_write_file(bad, text, strlen(text));
    NZT_CHECK(nz_binary_read(ctx, &B, bad) == NZ_ERR_PARSE, "text as nzb");
    /* ...and without the .nzb extension nz_matrix_read sniffs it as Matrix Market */
    char txt[600];
    snprintf(txt, sizeof txt, "%s/text.txt", tmpdir);
    nzt_write_file(txt, text, strlen(text));
    NZT_OK(ctx, nz_matrix_read(ctx, &B, txt, NZ_F64));
    nz_matrix_destroy(&B);
    unlink(txt);
    free(data);
    nz_matrix_destroy(&A);
    nz_alloc_stats_t st;
    nz_context_alloc_stats(ctx, &st);
    NZT_CHECK(st.live_blocks == 0, "%lld blocks leaked", (long long)st.live_blocks);
    unlink(bad);
    unlink(path);
}

static void test_dispatch(void) {
    char mtx[512], nzb[512], odd[512];
    snprintf(mtx, sizeof mtx, "%s/d.mtx", tmpdir);
    snprintf(nzb, sizeof nzb, "%s/d.nzb", tmpdir);
    snprintf(odd, sizeof odd, "%s/d.matrix", tmpdir);
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 8, NZ_F32, nzt_seed));
    NZT_OK(ctx, nz_mm_write(ctx, mtx, A));
    NZT_OK(ctx, nz_binary_write(ctx, nzb, A));
    NZT_OK(ctx, nz_binary_write(ctx, odd, A));
    NZT_OK(ctx, nz_matrix_read(ctx, &B, mtx, NZ_F32));
    NZT_CHECK(nzt_csr_identical(ctx, A, B, 1), ".mtx through nz_matrix_read");
    nz_matrix_destroy(&B);
    NZT_OK(ctx, nz_matrix_read(ctx, &B, odd, NZ_F32));
    NZT_CHECK(nzt_csr_identical(ctx, A, B, 1), ".nzb detected by magic");
    nz_matrix_destroy(&B);
    /* the other value type: converted, or refused while conversion is unavailable */
    nz_status_t s = nz_matrix_read(ctx, &B, nzb, NZ_F64);
    NZT_CHECK(s == NZ_SUCCESS, "type change: %d (%s)", (int)s, nz_context_last_error(ctx));
    if (s == NZ_SUCCESS) {
        nz_matrix_info_t info, ainfo;
        nz_matrix_info(ctx, &info, B);
        nz_matrix_info(ctx, &ainfo, A);
        NZT_CHECK(info.value_type == NZ_F64 && info.nnz == ainfo.nnz, "converted type");
        const void *va, *vb;
        nz_matrix_csr_arrays(ctx, NULL, NULL, &va, A);
        nz_matrix_csr_arrays(ctx, NULL, NULL, &vb, B);
        for (int64_t k = 0; k < info.nnz; k++)
            NZT_CHECK(((const double *)vb)[k] == (double)((const float *)va)[k], "value %lld",
                      (long long)k);
    }
    nz_matrix_destroy(&B);
    /* a matrix in another format is written through CSR */
    nz_matrix_t *E = NULL;
    NZT_OK(ctx, nz_matrix_convert(ctx, &E, A, NZ_FORMAT_ELL, NULL));
    NZT_OK(ctx, nz_binary_write(ctx, nzb, E));
    NZT_OK(ctx, nz_binary_read(ctx, &B, nzb));
    NZT_CHECK(nzt_csr_identical(ctx, A, B, 1), "ELL written as .nzb");
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&E);
    NZT_CHECK(nz_binary_write(ctx, "/nonexistent/dir/x.nzb", A) == NZ_ERR_IO, "unwritable");
    NZT_CHECK(nz_binary_write(ctx, nzb, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL matrix");
    NZT_CHECK(nz_binary_read(ctx, NULL, nzb) == NZ_ERR_NULL_ARGUMENT, "NULL output");
    NZT_CHECK(nz_matrix_read(ctx, &B, nzb, (nz_value_type_t)0) == NZ_ERR_INVALID_ARGUMENT,
              "bad type");
    nz_matrix_destroy(&A);
    unlink(mtx);
    unlink(nzb);
    unlink(odd);
}

static void test_alloc_failures(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/f.nzb", tmpdir);
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 4, NZ_F32, 5));
    NZT_OK(ctx, nz_binary_write(ctx, path, A));
    nz_matrix_destroy(&A);
    for (int64_t k = 1; k < 100; k++) {
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t s = nz_binary_read(ctx, &A, path);
        nz_context_fail_alloc_after(ctx, 0);
        if (s == NZ_SUCCESS) {
            nz_matrix_destroy(&A);
            break;
        }
        NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY && A == NULL, "k=%lld: status %d", (long long)k, (int)s);
        nz_alloc_stats_t st;
        nz_context_alloc_stats(ctx, &st);
        NZT_CHECK(st.live_blocks == 0, "k=%lld: leak", (long long)k);
    }
    unlink(path);
}

/* Writers refuse the other format's extension (issue 36): Matrix Market text into a .nzb
 * (nz_mm_write, nz_mm_write_dense), the binary format into .mtx / .mtx.gz / .gz
 * (nz_binary_write), any case; NZ_ERR_INVALID_ARGUMENT naming the path and the right writer, and
 * no file appears (an existing one is left as it was). */
static void test_wrong_extension(void) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 3, NZ_F64, nzt_seed));
    const double dense[4] = {1, 2, 3, 4};
    const char *mm_names[] = {"t.nzb", "t.NZB"};
    const char *binary_names[] = {"t.mtx", "t.mtx.gz", "t.MTX", "t.gz"};
    char path[512];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, mm_names[i]);
        for (int dense_writer = 0; dense_writer < 2; dense_writer++) {
            nz_status_t s = dense_writer ? nz_mm_write_dense(ctx, path, NZ_F64, 2, 2, dense)
                                         : nz_mm_write(ctx, path, A);
            const char *msg = nz_context_last_error(ctx);
            NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "%s to %s returned %d",
                      dense_writer ? "nz_mm_write_dense" : "nz_mm_write", path, (int)s);
            NZT_CHECK(strstr(msg, path) != NULL && strstr(msg, "nz_binary_write") != NULL,
                      "message for %s: %s", path, msg);
            NZT_CHECK(access(path, F_OK) != 0, "%s was written", path);
        }
    }
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, binary_names[i]);
        nz_status_t s = nz_binary_write(ctx, path, A);
        const char *msg = nz_context_last_error(ctx);
        NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "nz_binary_write to %s returned %d", path, (int)s);
        NZT_CHECK(strstr(msg, path) != NULL && strstr(msg, "nz_mm_write") != NULL,
                  "message for %s: %s", path, msg);
        NZT_CHECK(access(path, F_OK) != 0, "%s was written", path);
    }
    /* an existing .nzb stays binary */
    snprintf(path, sizeof path, "%s/keep.nzb", tmpdir);
    NZT_OK(ctx, nz_binary_write(ctx, path, A));
    NZT_CHECK(nz_mm_write(ctx, path, A) == NZ_ERR_INVALID_ARGUMENT, "text over keep.nzb");
    nz_matrix_t *B = NULL;
    NZT_OK(ctx, nz_binary_read(ctx, &B, path));
    NZT_CHECK(B != NULL && nzt_csr_identical(ctx, A, B, 1), "keep.nzb changed");
    nz_matrix_destroy(&B);
    unlink(path);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    NZT_OK(ctx, nz_context_create(&ctx));
    snprintf(tmpdir, sizeof tmpdir, "/tmp/nz_test_binary_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) return 1;
    test_roundtrip();
    test_corruption();
    test_dispatch();
    test_wrong_extension();
    test_alloc_failures();
    nz_context_destroy(&ctx);
    rmdir(tmpdir);
    return nzt_finish("test_binary");
}
