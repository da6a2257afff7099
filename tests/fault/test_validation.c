/* test_validation.c: hostile arguments: malformed CSR/COO (error names the first bad row), absurd sizes refused before anything big is allocated. */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/*
 * Two kinds of cases.
 * 1. Malformed structure handed to the constructors: every validation rule, each with the status
 *    and the row (or entry) the message must name, and no allocation made (the allocator's
 *    total_allocs does not move: validation comes before allocation).
 * 2. Absurd sizes (2^31 rows, 2^62-byte products, INT64_MAX parameters) to every constructor,
 *    generator, converter and dense routine. Outside sanitizer builds the address space is
 *    capped at 4 GiB, so a call that tried to allocate the absurd size gets a clean
 *    out-of-memory status instead of swapping; the test asserts the expected refusal status,
 *    that it arrives quickly, and that nothing leaks.
 */

#if defined(__SANITIZE_ADDRESS__)
#define NZT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NZT_ASAN 1
#endif
#endif
#ifdef NZT_ASAN
/* Huge requests must return NULL (as malloc does) instead of aborting the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

static nz_context_t *ctx;
static int64_t n_cases;

static int64_t total_allocs(void) {
    nz_alloc_stats_t st;
    nz_context_alloc_stats(ctx, &st);
    return st.total_allocs;
}
static int64_t live_blocks(void) {
    nz_alloc_stats_t st;
    nz_context_alloc_stats(ctx, &st);
    return st.live_blocks;
}

/* A refused call: status as expected (or one of two), message containing `needle`, output NULL,
 * no leak; `no_alloc`: not a single allocation made. */
static void expect(const char *what, nz_status_t got, nz_status_t want, nz_status_t also,
                   const char *needle, const void *out, int64_t allocs0, int64_t live0,
                   int no_alloc) {
    n_cases++;
    const char *msg = nz_context_last_error(ctx);
    NZT_CHECK(got == want || got == also, "%s: status %d (%s), expected %d: %s", what, (int)got,
              nz_status_string(got), (int)want, msg);
    NZT_CHECK(needle == NULL || strstr(msg, needle) != NULL, "%s: message \"%s\" lacks \"%s\"",
              what, msg, needle);
    NZT_CHECK(out == NULL, "%s: output set on failure", what);
    NZT_CHECK(live_blocks() == live0, "%s: %lld blocks leak", what,
              (long long)(live_blocks() - live0));
    if (no_alloc)
        NZT_CHECK(total_allocs() == allocs0, "%s: %lld allocations before the refusal", what,
                  (long long)(total_allocs() - allocs0));
}

#define EXPECT(what, call, want, also, needle, out, no_alloc)                                   \
    do {                                                                                        \
        int64_t a0_ = total_allocs(), l0_ = live_blocks();                                      \
        nz_status_t s_ = (call);                                                                \
        expect(what, s_, want, also, needle, out, a0_, l0_, no_alloc);                          \
        nz_matrix_destroy(&(out)); /* an unexpected success must not spoil the next case */     \
    } while (0)

/* ---- 1. malformed CSR / COO ---------------------------------------------------------------- */

static void test_csr_rules(void) {
    nz_matrix_t *A = NULL;
    const int32_t ci[] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0};
    /* offsets not starting at 0 */
    const int64_t r1[] = {1, 2, 3};
    EXPECT("offsets[0] != 0", nz_matrix_create_csr(ctx, &A, 2, 3, NZ_I64, r1, ci, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "row_offsets[0]", A, 1);
    /* decreasing at row 3 (both widths) */
    const int64_t r2[] = {0, 1, 3, 5, 4, 6};
    const int32_t r2i[] = {0, 1, 3, 5, 4, 6};
    EXPECT("decreasing i64", nz_matrix_create_csr(ctx, &A, 5, 3, NZ_I64, r2, ci, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "row 3", A, 1);
    EXPECT("decreasing i32", nz_matrix_create_csr(ctx, &A, 5, 3, NZ_I32, r2i, ci, NZ_F32, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "row 3", A, 1);
    /* negative offset right after 0 (would be a huge unsigned count) */
    const int64_t r3[] = {0, -5, 2};
    EXPECT("negative offset", nz_matrix_create_csr(ctx, &A, 2, 3, NZ_I64, r3, ci, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "row 0", A, 1);
    /* column out of range in row 2, and negative column in row 1 */
    const int64_t r4[] = {0, 2, 4, 6};
    const int32_t c4[] = {0, 1, 0, 2, 1, 3};
    EXPECT("column >= cols", nz_matrix_create_csr(ctx, &A, 3, 3, NZ_I64, r4, c4, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "row 2", A, 1);
    const int32_t c5[] = {0, 1, -1, 2, 1, 2};
    EXPECT("negative column", nz_matrix_create_csr(ctx, &A, 3, 3, NZ_I64, r4, c5, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "row 1", A, 1);
    const int32_t c6[] = {0, 1, 0, 2, 1, INT32_MIN};
    EXPECT("INT32_MIN column", nz_matrix_create_csr(ctx, &A, 3, 3, NZ_I64, r4, c6, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "row 2", A, 1);
    /* NULL arrays, bad enums, negative and oversized dimensions */
    EXPECT("NULL offsets", nz_matrix_create_csr(ctx, &A, 3, 3, NZ_I64, NULL, c4, NZ_F64, NULL),
           NZ_ERR_NULL_ARGUMENT, NZ_ERR_NULL_ARGUMENT, "row_offsets", A, 1);
    EXPECT("NULL columns", nz_matrix_create_csr(ctx, &A, 3, 3, NZ_I64, r4, NULL, NZ_F64, NULL),
           NZ_ERR_NULL_ARGUMENT, NZ_ERR_NULL_ARGUMENT, "col_indices", A, 1);
    EXPECT("offset type 3", nz_matrix_create_csr(ctx, &A, 3, 3, (nz_index_type_t)3, r4, c4, NZ_F64, NULL),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, "offset type", A, 1);
    EXPECT("value type 0", nz_matrix_create_csr(ctx, &A, 3, 3, NZ_I64, r4, c4, (nz_value_type_t)0, NULL),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, "value type", A, 1);
    EXPECT("negative rows", nz_matrix_create_csr(ctx, &A, -1, 3, NZ_I64, r4, c4, NZ_F64, NULL),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, "negative", A, 1);
    EXPECT("2^31 rows", nz_matrix_create_csr(ctx, &A, (int64_t)1 << 31, 3, NZ_I64, r4, c4, NZ_F64, NULL),
           NZ_ERR_UNSUPPORTED, NZ_ERR_UNSUPPORTED, "2^31", A, 1);
    EXPECT("2^31 cols", nz_matrix_create_csr(ctx, &A, 3, (int64_t)1 << 31, NZ_I64, r4, c4, NZ_F64, NULL),
           NZ_ERR_UNSUPPORTED, NZ_ERR_UNSUPPORTED, "2^31", A, 1);
    EXPECT("INT64_MAX rows", nz_matrix_create_csr(ctx, &A, INT64_MAX, 3, NZ_I64, r4, c4, NZ_F64, NULL),
           NZ_ERR_UNSUPPORTED, NZ_ERR_UNSUPPORTED, NULL, A, 1);
    /* INT32_MAX rows with a tiny array whose second offset is already wrong: refused at row 0
     * without allocating the 16 GiB of row offsets first */
    const int64_t r7[] = {0, -1};
    EXPECT("INT32_MAX rows, bad row 0",
           nz_matrix_create_csr(ctx, &A, INT32_MAX, INT32_MAX, NZ_I64, r7, c4, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "row 0", A, 1);
    /* empty matrices are fine; unsorted + duplicate columns are accepted and canonicalised */
    const int64_t r8[] = {0, 3, 3};
    const int32_t c8[] = {2, 0, 2};
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 2, 3, NZ_I64, r8, c8, NZ_F64, NULL));
    const int64_t *ro;
    const int32_t *cc;
    const void *vv;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &cc, &vv, A));
    NZT_CHECK(ro[1] == 2 && cc[0] == 0 && cc[1] == 2 && ((const double *)vv)[1] == 2.0,
              "unsorted duplicate row not canonicalised");
    nz_matrix_destroy(&A);
    const int64_t r9[] = {0};
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 0, 0, NZ_I64, r9, NULL, NZ_F64, NULL));
    nz_matrix_destroy(&A);
}

static void test_coo_rules(void) {
    nz_matrix_t *A = NULL;
    const int32_t ri[] = {0, 1, 2, 5, 1};
    const int32_t cj[] = {0, 1, 2, 0, 9};
    EXPECT("COO row out of range", nz_matrix_create_coo(ctx, &A, 3, 3, 5, ri, cj, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "entry 3", A, 1);
    EXPECT("COO column out of range", nz_matrix_create_coo(ctx, &A, 6, 3, 5, ri, cj, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "row 1", A, 1);
    const int32_t rn[] = {0, -1};
    EXPECT("COO negative row", nz_matrix_create_coo(ctx, &A, 3, 3, 2, rn, cj, NZ_F64, NULL),
           NZ_ERR_INVALID_MATRIX, NZ_ERR_INVALID_MATRIX, "entry 1", A, 1);
    EXPECT("COO negative nnz", nz_matrix_create_coo(ctx, &A, 3, 3, -1, ri, cj, NZ_F64, NULL),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, "negative", A, 1);
    EXPECT("COO NULL rows", nz_matrix_create_coo(ctx, &A, 3, 3, 2, NULL, cj, NZ_F64, NULL),
           NZ_ERR_NULL_ARGUMENT, NZ_ERR_NULL_ARGUMENT, NULL, A, 1);
    EXPECT("COO 2^31 rows", nz_matrix_create_coo(ctx, &A, (int64_t)1 << 31, 3, 1, ri, cj, NZ_F64, NULL),
           NZ_ERR_UNSUPPORTED, NZ_ERR_UNSUPPORTED, "2^31", A, 1);
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &A, 3, 3, 0, NULL, NULL, NZ_F64, NULL));
    nz_matrix_destroy(&A);
}

/* ---- 2. absurd sizes ------------------------------------------------------------------------ */

static void test_generators(void) {
    nz_matrix_t *A = NULL;
    const int64_t big = INT64_MAX;
    /* more than 2^31 - 1 rows: refused as unsupported before allocating */
    EXPECT("laplace2d 2^16 x 2^16", nz_gen_laplace2d(ctx, &A, 1 << 16, 1 << 16, NZ_F64),
           NZ_ERR_UNSUPPORTED, NZ_ERR_UNSUPPORTED, NULL, A, 1);
    EXPECT("laplace2d INT64_MAX x 2", nz_gen_laplace2d(ctx, &A, big, 2, NZ_F64),
           NZ_ERR_UNSUPPORTED, NZ_ERR_OVERFLOW, NULL, A, 1);
    EXPECT("laplace2d INT64_MAX^2", nz_gen_laplace2d(ctx, &A, big, big, NZ_F64),
           NZ_ERR_UNSUPPORTED, NZ_ERR_OVERFLOW, NULL, A, 1);
    EXPECT("laplace3d 2^11 x 2^11 x 2^10", nz_gen_laplace3d(ctx, &A, 1 << 11, 1 << 11, 1 << 10, NZ_F64),
           NZ_ERR_UNSUPPORTED, NZ_ERR_UNSUPPORTED, NULL, A, 1);
    EXPECT("laplace3d INT64_MAX^3", nz_gen_laplace3d(ctx, &A, big, big, big, NZ_F64),
           NZ_ERR_UNSUPPORTED, NZ_ERR_OVERFLOW, NULL, A, 1);
    EXPECT("laplace2d negative", nz_gen_laplace2d(ctx, &A, -3, 4, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, NULL, A, 1);
    EXPECT("fe3d n = 2^11", nz_gen_fe3d(ctx, &A, NULL, NULL, 1 << 11, NZ_F64),
           NZ_ERR_UNSUPPORTED, NZ_ERR_UNSUPPORTED, NULL, A, 1);
    EXPECT("fe3d n = INT64_MAX", nz_gen_fe3d(ctx, &A, NULL, NULL, big, NZ_F64),
           NZ_ERR_UNSUPPORTED, NZ_ERR_OVERFLOW, NULL, A, 1);
    EXPECT("rmat scale 31", nz_gen_rmat(ctx, &A, 31, 16, 0, 0, 0, 1, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_UNSUPPORTED, NULL, A, 1);
    /* 2^61 edges: representable, so refused by the memory budget (56 EiB; issue 17) before
     * malloc is asked for the edge list */
    EXPECT("rmat scale 30 x INT_MAX edges", nz_gen_rmat(ctx, &A, 30, INT32_MAX, 0, 0, 0, 1, NZ_F64),
           NZ_ERR_OUT_OF_MEMORY, NZ_ERR_OVERFLOW, "memory budget", A, 1);
    EXPECT("rmat probabilities > 1", nz_gen_rmat(ctx, &A, 4, 4, 0.9, 0.9, 0.9, 1, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, NULL, A, 1);
    EXPECT("rmat NaN probability", nz_gen_rmat(ctx, &A, 4, 4, NAN, 0.1, 0.1, 1, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, NULL, A, 1);
    EXPECT("random 2^31 rows", nz_gen_random(ctx, &A, (int64_t)1 << 31, 10, 1.0, 1, NZ_F64),
           NZ_ERR_UNSUPPORTED, NZ_ERR_UNSUPPORTED, NULL, A, 1);
    EXPECT("random mean 1e300", nz_gen_random(ctx, &A, 1000, 1000, 1e300, 1, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_OVERFLOW, NULL, A, 1);
    EXPECT("random mean NaN", nz_gen_random(ctx, &A, 10, 10, NAN, 1, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, NULL, A, 1);
    EXPECT("random mean Inf", nz_gen_random(ctx, &A, 10, 10, INFINITY, 1, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_OVERFLOW, NULL, A, 1);
    EXPECT("rail row length INT64_MAX", nz_gen_rail(ctx, &A, 4, 100, big, 1, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_OVERFLOW, NULL, A, 1);
    EXPECT("mixed long rows INT64_MAX", nz_gen_mixed(ctx, &A, 100, 3, big, 10, 1, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_OVERFLOW, NULL, A, 1);
    /* a long row longer than the matrix is clamped to full rows */
    NZT_OK(ctx, nz_gen_mixed(ctx, &A, 100, 3, 2, big, 1, NZ_F64));
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_CHECK(info.nnz <= 100 * 100, "mixed: %lld entries in a 100 x 100 matrix", (long long)info.nnz);
    nz_matrix_destroy(&A);
    EXPECT("mixed short length INT64_MAX", nz_gen_mixed(ctx, &A, 100, big, 2, 10, 1, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_OVERFLOW, NULL, A, 1);
    EXPECT("banded bands INT64_MAX", nz_gen_banded(ctx, &A, 100, big, big, NZ_F64),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_OVERFLOW, NULL, A, 1);
    EXPECT("banded 2^31", nz_gen_banded(ctx, &A, (int64_t)1 << 31, 1, 1, NZ_F64),
           NZ_ERR_UNSUPPORTED, NZ_ERR_UNSUPPORTED, NULL, A, 1);
}

static void test_dense_and_io(const char *dir) {
    char path[256];
    snprintf(path, sizeof path, "%s/dense.mtx", dir);
    double tiny[4] = {1, 2, 3, 4};
    int64_t a0 = total_allocs();
    nz_status_t s = nz_mm_write_dense(ctx, path, NZ_F64, INT64_MAX / 2, 4, tiny);
    NZT_CHECK(s == NZ_ERR_OVERFLOW || s == NZ_ERR_UNSUPPORTED || s == NZ_ERR_INVALID_ARGUMENT,
              "write_dense INT64_MAX/2 x 4: status %d: %s", (int)s, nz_context_last_error(ctx));
    s = nz_mm_write_dense(ctx, path, NZ_F64, (int64_t)1 << 32, (int64_t)1 << 32, tiny);
    NZT_CHECK(s == NZ_ERR_OVERFLOW || s == NZ_ERR_UNSUPPORTED || s == NZ_ERR_INVALID_ARGUMENT,
              "write_dense 2^32 x 2^32: status %d: %s", (int)s, nz_context_last_error(ctx));
    s = nz_mm_write_dense(ctx, path, NZ_F64, -1, 4, tiny);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "write_dense -1 rows: status %d", (int)s);
    NZT_CHECK(total_allocs() == a0, "write_dense refusals allocated");
    n_cases += 3;
    remove(path);

    /* Matrix Market headers announcing absurd sizes */
    static const struct {
        const char *text;
        nz_status_t want, also;
    } headers[] = {
        {"%%MatrixMarket matrix coordinate real general\n2147483648 1 0\n", NZ_ERR_UNSUPPORTED, NZ_ERR_PARSE},
        {"%%MatrixMarket matrix coordinate real general\n1 1 99999999999999999999\n", NZ_ERR_PARSE, NZ_ERR_OVERFLOW},
        {"%%MatrixMarket matrix coordinate real general\n3 3 9223372036854775807\n1 1 1\n", NZ_ERR_PARSE, NZ_ERR_PARSE},
        /* refused by the memory budget before reading (issue 17); a parse error without one */
        {"%%MatrixMarket matrix array real general\n2147483647 2147483647\n1\n", NZ_ERR_OUT_OF_MEMORY, NZ_ERR_PARSE},
        {"%%MatrixMarket matrix coordinate real symmetric\n2147483647 2147483647 1\n2147483648 1 1\n", NZ_ERR_PARSE, NZ_ERR_PARSE},
    };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        nz_matrix_t *A = NULL;
        char what[64];
        snprintf(what, sizeof what, "mm header %zu", i);
        EXPECT(what, nz_mm_read_buffer(ctx, &A, headers[i].text, strlen(headers[i].text), "h",
                                       NZ_F64),
               headers[i].want, headers[i].also, NULL, A, 0);
        /* the dense reader of the same text from a file */
        FILE *fp = fopen(path, "wb");
        fputs(headers[i].text, fp);
        fclose(fp);
        int64_t r = -7, c = -7;
        void *d = NULL;
        int64_t l0 = live_blocks();
        s = nz_mm_read_dense(ctx, &d, &r, &c, path, NZ_F64);
        NZT_CHECK(s < 0 && d == NULL && live_blocks() == l0, "%s (dense): status %d", what, (int)s);
        n_cases++;
    }
    remove(path);
}

static void test_convert_sizes(void) {
    /* one full row in a 2^20 x 2^20 matrix: ELL would be 2^40 slots (12 TiB) */
    const int64_t n = (int64_t)1 << 20;
    int32_t *ri = (int32_t *)nzt_malloc((size_t)n * 4), *cj = (int32_t *)nzt_malloc((size_t)n * 4);
    for (int64_t k = 0; k < n; k++) {
        ri[k] = 5;
        cj[k] = (int32_t)k;
    }
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &A, n, n, n, ri, cj, NZ_F64, NULL));
    free(ri);
    free(cj);
    nz_format_options_t opt;
    memset(&opt, 0, sizeof opt);
    static const nz_format_t padded[] = {NZ_FORMAT_ELL, NZ_FORMAT_HYB, NZ_FORMAT_DIA};
    for (int i = 0; i < 3; i++) {
        opt.hyb_ell_width = padded[i] == NZ_FORMAT_HYB ? n : 0; /* HYB with an ELL part 2^20 wide */
        char what[64];
        opt.max_padding_ratio = 0; /* default: refused by the padding limit */
        snprintf(what, sizeof what, "%s of a 2^20 row", nz_format_name(padded[i]));
        EXPECT(what, nz_matrix_convert(ctx, &B, A, padded[i], &opt), NZ_ERR_TOO_MUCH_PADDING,
               NZ_ERR_TOO_MUCH_PADDING, "max_padding_ratio", B, 0);
        /* limit lifted: the allocation itself must fail cleanly (12 TiB / 8 TiB) */
        opt.max_padding_ratio = 1e30;
        snprintf(what, sizeof what, "%s of a 2^20 row, no padding limit", nz_format_name(padded[i]));
        EXPECT(what, nz_matrix_convert(ctx, &B, A, padded[i], &opt), NZ_ERR_OUT_OF_MEMORY,
               NZ_ERR_OVERFLOW, NULL, B, 0);
    }
    /* invalid options */
    opt.hyb_ell_width = 0;
    opt.max_padding_ratio = NAN;
    EXPECT("NaN padding ratio", nz_matrix_convert(ctx, &B, A, NZ_FORMAT_ELL, &opt),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, "max_padding_ratio", B, 1);
    opt.max_padding_ratio = -1;
    EXPECT("negative padding ratio", nz_matrix_convert(ctx, &B, A, NZ_FORMAT_ELL, &opt),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, "max_padding_ratio", B, 1);
    memset(&opt, 0, sizeof opt);
    opt.bsr_block = 33;
    EXPECT("bsr block 33", nz_matrix_convert(ctx, &B, A, NZ_FORMAT_BSR, &opt),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, "bsr_block", B, 1);
    opt.bsr_block = 0;
    opt.sell_chunk = -4;
    EXPECT("sell chunk -4", nz_matrix_convert(ctx, &B, A, NZ_FORMAT_SELL, &opt),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, "sell_chunk", B, 1);
    opt.sell_chunk = 0;
    opt.hyb_ell_width = -1;
    EXPECT("hyb width -1", nz_matrix_convert(ctx, &B, A, NZ_FORMAT_HYB, &opt),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, "hyb_ell_width", B, 1);
    EXPECT("format 99", nz_matrix_convert(ctx, &B, A, (nz_format_t)99, NULL),
           NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, NULL, B, 1);
    nz_matrix_destroy(&A);

    /* allocations the allocator itself must refuse */
    static const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 8, (size_t)1 << 50};
    for (int i = 0; i < 3; i++) {
        void *p = NULL;
        int64_t l0 = live_blocks(), a0 = total_allocs();
        nz_status_t s = nz_malloc(ctx, &p, sizes[i]);
        expect("nz_malloc huge", s, NZ_ERR_OUT_OF_MEMORY, NZ_ERR_OVERFLOW, "cannot allocate", p, a0,
               l0, 0);
        nz_free(ctx, p);
    }
}

/* SpGEMM and SpMM argument checks (their size arithmetic: product counts are summed with
 * overflow checks in src/spgemm/spgemm_panels.c; not reachable with test-sized matrices). */
static void test_products(void) {
    nz_matrix_t *A = NULL, *B = NULL, *B32 = NULL, *C = NULL;
    NZT_OK(ctx, nz_gen_random(ctx, &A, 30, 20, 3.0, 1, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &B, 20, 25, 3.0, 2, NZ_F64));
    NZT_OK(ctx, nz_matrix_convert_values(ctx, &B32, B, NZ_F32));
    EXPECT("spgemm A A (30x20 x 30x20)", nz_spgemm(ctx, &C, A, A, NULL, NULL),
           NZ_ERR_DIMENSION_MISMATCH, NZ_ERR_DIMENSION_MISMATCH, NULL, C, 1);
    EXPECT("spgemm f64 x f32", nz_spgemm(ctx, &C, A, B32, NULL, NULL), NZ_ERR_INVALID_ARGUMENT,
           NZ_ERR_UNSUPPORTED, NULL, C, 1);
    EXPECT("spgemm NULL B", nz_spgemm(ctx, &C, A, NULL, NULL, NULL), NZ_ERR_NULL_ARGUMENT,
           NZ_ERR_NULL_ARGUMENT, NULL, C, 1);
    NZT_OK(ctx, nz_spgemm(ctx, &C, A, B, NULL, NULL));
    nz_matrix_destroy(&C);
    static const int64_t ks[] = {0, -1, 65, INT64_MAX};
    for (int i = 0; i < 4; i++) {
        nz_spmm_plan_t *Q = NULL;
        int64_t a0 = total_allocs(), l0 = live_blocks();
        nz_status_t s = nz_spmm_plan_create(ctx, &Q, A, NZ_OP_N, ks[i], NZ_COL_MAJOR, NZ_ALG_AUTO, 0);
        expect("spmm k out of 1..64", s, NZ_ERR_INVALID_ARGUMENT, NZ_ERR_INVALID_ARGUMENT, NULL, Q,
               a0, l0, 1);
        nz_spmm_plan_destroy(&Q);
    }
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&B32);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
#ifndef NZT_ASAN
    /* 4 GiB of address space: an absurd allocation fails at once instead of being overcommitted */
    struct rlimit rl = {(rlim_t)4 << 30, (rlim_t)4 << 30};
    struct rlimit old;
    if (getrlimit(RLIMIT_AS, &old) == 0 && (old.rlim_cur == RLIM_INFINITY || old.rlim_cur > rl.rlim_cur)) {
        rl.rlim_max = old.rlim_max;
        setrlimit(RLIMIT_AS, &rl);
    }
#endif
    NZT_OK(ctx, nz_context_create(&ctx));
    char dir[] = "/tmp/nz_valid_XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_csr_rules();
    test_coo_rules();
    test_generators();
    test_dense_and_io(dir);
    test_convert_sizes();
    test_products();
    rmdir(dir);
    NZT_CHECK(live_blocks() == 0, "%lld blocks leak", (long long)live_blocks());
    /* the context is still usable after all of it */
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 4, 4, NZ_F64));
    nz_matrix_destroy(&A);
    printf("validation: %lld hostile cases\n", (long long)n_cases);
    nz_context_destroy(&ctx);
    return nzt_finish("test_validation");
}
