/* test_spgemm.c: CPU SpGEMM against hand-computed products and an independent expand-sort-compress
 * reference; shapes, argument errors, thread independence, allocation failures. */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

static int64_t checked_products;

/* ---- the reference: expand each row's products, sort by column, compress (in double) -------- */

typedef struct ref_entry {
    int32_t col;
    double value, bound; /* sum of a b, and sum of |a b| */
    int64_t count;       /* products summed into the entry */
} ref_entry_t;

typedef struct ref_matrix {
    int64_t rows, nnz;
    int64_t *row_offsets;
    ref_entry_t *entries;
} ref_matrix_t;

static int cmp_col(const void *x, const void *y) {
    int32_t a = ((const ref_entry_t *)x)->col, b = ((const ref_entry_t *)y)->col;
    return (a > b) - (a < b);
}

/* Expand-sort-compress per row, independent of the library's accumulators. */
static void reference_product(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B, ref_matrix_t *R) {
    const int64_t *ao, *bo;
    const int32_t *ac, *bc;
    const void *av, *bv;
    nz_matrix_info_t ia, ib;
    NZT_OK(NULL, nz_matrix_info(ctx, &ia, A));
    NZT_OK(NULL, nz_matrix_info(ctx, &ib, B));
    NZT_OK(NULL, nz_matrix_csr_arrays(ctx, &ao, &ac, &av, A));
    NZT_OK(NULL, nz_matrix_csr_arrays(ctx, &bo, &bc, &bv, B));
    int64_t total = 0;
    for (int64_t i = 0; i < ia.rows; i++)
        for (int64_t k = ao[i]; k < ao[i + 1]; k++) total += bo[ac[k] + 1] - bo[ac[k]];
    R->rows = ia.rows;
    R->row_offsets = nzt_malloc((size_t)(ia.rows + 1) * sizeof(int64_t));
    R->entries = nzt_malloc((size_t)(total > 0 ? total : 1) * sizeof(ref_entry_t));
    int64_t out = 0;
    R->row_offsets[0] = 0;
    for (int64_t i = 0; i < ia.rows; i++) {
        int64_t begin = out;
        for (int64_t k = ao[i]; k < ao[i + 1]; k++) {
            double a = ia.value_type == NZ_F32 ? ((const float *)av)[k] : ((const double *)av)[k];
            int32_t j = ac[k];
            for (int64_t l = bo[j]; l < bo[j + 1]; l++) {
                double b = ib.value_type == NZ_F32 ? ((const float *)bv)[l] : ((const double *)bv)[l];
                R->entries[out].col = bc[l];
                R->entries[out].value = a * b;
                R->entries[out].bound = fabs(a * b);
                R->entries[out].count = 1;
                out++;
            }
        }
        qsort(R->entries + begin, (size_t)(out - begin), sizeof(ref_entry_t), cmp_col);
        int64_t w = begin;
        for (int64_t x = begin; x < out; x++) {
            if (w > begin && R->entries[w - 1].col == R->entries[x].col) {
                R->entries[w - 1].value += R->entries[x].value;
                R->entries[w - 1].bound += R->entries[x].bound;
                R->entries[w - 1].count++;
            } else {
                R->entries[w++] = R->entries[x];
            }
        }
        out = w;
        R->row_offsets[i + 1] = out;
    }
    R->nnz = out;
}

static void reference_free(ref_matrix_t *R) {
    free(R->row_offsets);
    free(R->entries);
}

/* C must have R's exact structure and values within (count + 2) eps |bound| (+ a tiny floor). */
static int64_t compare_with_reference(nz_context_t *ctx, const char *what, const nz_matrix_t *C, const ref_matrix_t *R) {
    const int64_t *co;
    const int32_t *cc;
    const void *cv;
    nz_matrix_info_t ic;
    NZT_OK(NULL, nz_matrix_info(ctx, &ic, C));
    NZT_OK(NULL, nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C));
    if (ic.rows != R->rows || ic.nnz != R->nnz) {
        NZT_CHECK(0, "%s: C has %lld rows / %lld nonzeros, the reference %lld / %lld", what,
                  (long long)ic.rows, (long long)ic.nnz, (long long)R->rows, (long long)R->nnz);
        return 1;
    }
    double eps = ic.value_type == NZ_F32 ? 1.2e-7 : 2.3e-16;
    int64_t bad = 0;
    for (int64_t i = 0; i < R->rows; i++) {
        if (co[i + 1] != R->row_offsets[i + 1]) {
            if (bad++ < 3)
                NZT_CHECK(0, "%s: row %lld ends at %lld, reference %lld", what, (long long)i,
                          (long long)co[i + 1], (long long)R->row_offsets[i + 1]);
            continue;
        }
        for (int64_t k = co[i]; k < co[i + 1]; k++) {
            const ref_entry_t *e = &R->entries[k];
            double v = ic.value_type == NZ_F32 ? ((const float *)cv)[k] : ((const double *)cv)[k];
            double tol = (double)(e->count + 2) * eps * e->bound + 1e-300;
            /* NaN and Inf in the input (real matrices with NaN entries) must reappear as such */
            int same = (isnan(v) && isnan(e->value)) || v == e->value || fabs(v - e->value) <= tol;
            if (cc[k] != e->col || !same) {
                if (bad++ < 3)
                    NZT_CHECK(0, "%s: row %lld entry %lld: (%d, %.17g), reference (%d, %.17g)",
                              what, (long long)i, (long long)(k - co[i]), cc[k], v, e->col,
                              e->value);
            }
        }
    }
    checked_products += R->nnz;
    return bad;
}

/* Products of A B (the reference's cost). */
static int64_t count_products(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B) {
    const int64_t *ao, *bo;
    const int32_t *ac, *bc;
    const void *av, *bv;
    nz_matrix_info_t ia;
    NZT_OK(NULL, nz_matrix_info(ctx, &ia, A));
    NZT_OK(NULL, nz_matrix_csr_arrays(ctx, &ao, &ac, &av, A));
    NZT_OK(NULL, nz_matrix_csr_arrays(ctx, &bo, &bc, &bv, B));
    int64_t total = 0;
    for (int64_t k = 0; k < ao[ia.rows]; k++) total += bo[ac[k] + 1] - bo[ac[k]];
    return total;
}

#define REFERENCE_PRODUCT_LIMIT 1500000 /* keeps the sorted reference fast under ASan */
static int skipped_products;

static void check_product(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                          const nz_matrix_t *B, int threads) {
    nz_spgemm_options_t opt;
    nz_spgemm_info_t info;
    nz_matrix_t *C = NULL;
    ref_matrix_t R;
    nz_matrix_t *A_csr = NULL;
    nz_matrix_info_t ia;
    NZT_OK(ctx, nz_matrix_info(ctx, &ia, A));
    if (ia.format != NZ_FORMAT_CSR) { /* the reference reads CSR arrays */
        NZT_OK(ctx, nz_matrix_convert(ctx, &A_csr, A, NZ_FORMAT_CSR, NULL));
    }
    const nz_matrix_t *A_ref = A_csr != NULL ? A_csr : A;
    if (count_products(ctx, A_ref, B) > REFERENCE_PRODUCT_LIMIT) {
        skipped_products++;
        nz_matrix_destroy(&A_csr);
        return;
    }
    memset(&opt, 0, sizeof opt);
    opt.alg = NZ_SPGEMM_CPU;
    opt.threads = threads;
    NZT_OK(ctx, nz_spgemm(ctx, &C, A, B, &opt, &info));
    reference_product(ctx, A_ref, B, &R);
    compare_with_reference(ctx, what, C, &R);
    int64_t products = 0;
    for (int64_t e = 0; e < R.nnz; e++) products += R.entries[e].count;
    NZT_CHECK(info.products == products, "%s: info.products %lld, expected %lld", what,
              (long long)info.products, (long long)products);
    NZT_CHECK(info.alg == NZ_SPGEMM_CPU && info.panels == 1 && info.seconds >= 0.0,
              "%s: info alg %d panels %lld", what, (int)info.alg, (long long)info.panels);
    reference_free(&R);
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&A_csr);
}

/* ---- hand-computed products ----------------------------------------------------------------- */

static void test_hand_computed(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    /* A = [1 0 2; 0 3 0; 0 0 0] (3 x 3 with an empty row), B = [1 2; 0 1; 4 0] (3 x 2):
     * C = [9 2; 0 3; 0 0] with row 1 holding only column 1. */
    const int64_t ao[] = {0, 2, 3, 3};
    const int32_t ac[] = {0, 2, 1};
    const double av[] = {1, 2, 3};
    const int64_t bo[] = {0, 2, 3, 4};
    const int32_t bc[] = {0, 1, 1, 0};
    const double bv[] = {1, 2, 1, 4};
    for (int p = 0; p < 2; p++) {
        nz_value_type_t vt = p == 0 ? NZ_F64 : NZ_F32;
        nz_matrix_t *A = NULL, *B = NULL, *A64 = NULL, *B64 = NULL, *C = NULL;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &A64, 3, 3, NZ_I64, ao, ac, NZ_F64, av));
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &B64, 3, 2, NZ_I64, bo, bc, NZ_F64, bv));
        NZT_OK(ctx, nz_matrix_convert_values(ctx, &A, A64, vt));
        NZT_OK(ctx, nz_matrix_convert_values(ctx, &B, B64, vt));
        NZT_OK(ctx, nz_spgemm(ctx, &C, A, B, NULL, NULL));
        const int64_t *co;
        const int32_t *cc;
        const void *cv;
        NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C));
        nz_matrix_info_t ic;
        NZT_OK(ctx, nz_matrix_info(ctx, &ic, C));
        NZT_CHECK(ic.rows == 3 && ic.cols == 2 && ic.nnz == 3 && ic.value_type == vt,
                  "C is %lld x %lld nnz %lld", (long long)ic.rows, (long long)ic.cols,
                  (long long)ic.nnz);
        if (ic.nnz == 3) {
            const int64_t eo[] = {0, 2, 3, 3};
            const int32_t ec[] = {0, 1, 1};
            const double ev[] = {9, 2, 3};
            for (int i = 0; i < 4; i++) NZT_CHECK(co[i] == eo[i], "offset %d = %lld", i, (long long)co[i]);
            for (int k = 0; k < 3; k++) {
                double v = vt == NZ_F32 ? ((const float *)cv)[k] : ((const double *)cv)[k];
                NZT_CHECK(cc[k] == ec[k] && v == ev[k], "entry %d: (%d, %g)", k, cc[k], v);
            }
        }
        nz_matrix_destroy(&C);
        /* Cancellation keeps an explicit zero: [1 1] [1; -1] = [0] with one stored entry. */
        const int64_t xo[] = {0, 2}, yo[] = {0, 1, 2};
        const int32_t xc[] = {0, 1}, yc[] = {0, 0};
        const double xv[] = {1, 1}, yv[] = {1, -1};
        nz_matrix_t *X = NULL, *Y = NULL;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &X, 1, 2, NZ_I64, xo, xc, vt == NZ_F32 ? NZ_F64 : vt, xv));
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &Y, 2, 1, NZ_I64, yo, yc, NZ_F64, yv));
        if (vt == NZ_F64) {
            NZT_OK(ctx, nz_spgemm(ctx, &C, X, Y, NULL, NULL));
            NZT_OK(ctx, nz_matrix_info(ctx, &ic, C));
            NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C));
            NZT_CHECK(ic.nnz == 1 && cc[0] == 0 && ((const double *)cv)[0] == 0.0,
                      "cancelled entry: nnz %lld", (long long)ic.nnz);
            nz_matrix_destroy(&C);
        }
        nz_matrix_destroy(&X);
        nz_matrix_destroy(&Y);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&B);
        nz_matrix_destroy(&A64);
        nz_matrix_destroy(&B64);
    }
    nz_context_destroy(&ctx);
}

/* ---- argument errors, names ---------------------------------------------------------------- */

static void test_errors(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *B = NULL, *A32 = NULL, *C = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_gen_random(ctx, &A, 20, 30, 3, 1, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &B, 20, 30, 3, 2, NZ_F64));
    NZT_OK(ctx, nz_matrix_convert_values(ctx, &A32, A, NZ_F32));
    NZT_CHECK(nz_spgemm(ctx, &C, A, B, NULL, NULL) == NZ_ERR_DIMENSION_MISMATCH && C == NULL,
              "20x30 times 20x30");
    NZT_CHECK(strstr(nz_context_last_error(ctx), "20 x 30") != NULL, "message: %s",
              nz_context_last_error(ctx));
    NZT_CHECK(nz_spgemm(ctx, NULL, A, A, NULL, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL C");
    NZT_CHECK(nz_spgemm(ctx, &C, NULL, A, NULL, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL A");
    NZT_CHECK(nz_spgemm(NULL, &C, A, A, NULL, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL context");
    nz_matrix_t *T = NULL;
    NZT_OK(ctx, nz_matrix_transpose(ctx, &T, B));
    NZT_CHECK(nz_spgemm(ctx, &C, A32, T, NULL, NULL) == NZ_ERR_INVALID_ARGUMENT && C == NULL,
              "mixed value types");
    nz_spgemm_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.alg = (nz_spgemm_alg_t)99;
    NZT_CHECK(nz_spgemm(ctx, &C, A, T, &opt, NULL) == NZ_ERR_INVALID_ARGUMENT, "alg 99");
    opt.alg = NZ_SPGEMM_CPU;
    opt.threads = -1;
    NZT_CHECK(nz_spgemm(ctx, &C, A, T, &opt, NULL) == NZ_ERR_INVALID_ARGUMENT, "threads -1");
    /* GPU algorithms on an unbound context */
    nz_spgemm_alg_t gpu_algs[] = {NZ_SPGEMM_HASH, NZ_SPGEMM_ESC, NZ_SPGEMM_HYSPMM};
    for (int g = 0; g < 3; g++) {
        memset(&opt, 0, sizeof opt);
        opt.alg = gpu_algs[g];
        NZT_CHECK(nz_spgemm(ctx, &C, A, T, &opt, NULL) == NZ_ERR_NO_DEVICE && C == NULL,
                  "%s without a device", nz_spgemm_alg_name(gpu_algs[g]));
    }
    /* copying a device C back needs a device */
    NZT_CHECK(nz_matrix_to_host(ctx, &C, A) == NZ_ERR_NO_DEVICE && C == NULL,
              "nz_matrix_to_host without a device");
    /* AUTO without a device is the CPU */
    nz_spgemm_info_t info;
    memset(&opt, 0, sizeof opt);
    NZT_OK(ctx, nz_spgemm(ctx, &C, A, T, &opt, &info));
    NZT_CHECK(info.alg == NZ_SPGEMM_CPU, "auto chose %s", nz_spgemm_alg_name(info.alg));
    nz_matrix_destroy(&C);
    /* names */
    for (int a = 0; a <= 4; a++) {
        nz_spgemm_alg_t back = (nz_spgemm_alg_t)-1;
        NZT_CHECK(nz_spgemm_alg_from_name(&back, nz_spgemm_alg_name((nz_spgemm_alg_t)a)) ==
                          NZ_SUCCESS && back == (nz_spgemm_alg_t)a,
                  "name round trip %d", a);
    }
    NZT_CHECK(strcmp(nz_spgemm_alg_name(NZ_SPGEMM_HASH), "hash") == 0, "hash name");
    NZT_CHECK(strcmp(nz_spgemm_alg_name((nz_spgemm_alg_t)17), "unknown") == 0, "unknown name");
    nz_spgemm_alg_t dummy;
    NZT_CHECK(nz_spgemm_alg_from_name(&dummy, "bogus") == NZ_ERR_INVALID_ARGUMENT, "bogus name");
    nz_matrix_destroy(&T);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&A32);
    nz_matrix_destroy(&B);
    nz_context_destroy(&ctx);
}

/* ---- shapes: the zoo, generated matrices, empty products ------------------------------------ */

static void test_zoo(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    for (int k = 0; k < nzt_zoo_count(); k++) {
        for (int p = 0; p < 2; p++) {
            nz_value_type_t vt = p == 0 ? NZ_F64 : NZ_F32;
            nz_matrix_t *A = NULL, *T = NULL;
            char what[128];
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, vt, nzt_seed + (uint64_t)k));
            NZT_OK(ctx, nz_matrix_transpose(ctx, &T, A));
            nz_matrix_info_t ia;
            NZT_OK(ctx, nz_matrix_info(ctx, &ia, A));
            if (ia.rows > 3000 || ia.nnz > 200000) { /* keep the reference cheap */
                nz_matrix_destroy(&A);
                nz_matrix_destroy(&T);
                continue;
            }
            snprintf(what, sizeof what, "zoo %s A*A^T %s", nzt_zoo_name(k), p ? "f32" : "f64");
            check_product(ctx, what, A, T, 0);
            snprintf(what, sizeof what, "zoo %s A^T*A %s", nzt_zoo_name(k), p ? "f32" : "f64");
            check_product(ctx, what, T, A, 2);
            if (ia.rows == ia.cols) {
                snprintf(what, sizeof what, "zoo %s A*A %s", nzt_zoo_name(k), p ? "f32" : "f64");
                check_product(ctx, what, A, A, 1);
            }
            nz_matrix_destroy(&A);
            nz_matrix_destroy(&T);
        }
    }
    nz_context_destroy(&ctx);
}

static void test_generated(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *B = NULL, *T = NULL, *W = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 9, 8, 7, NZ_F64));
    check_product(ctx, "laplace3d 9x8x7 squared", A, A, 0);
    nz_matrix_destroy(&A);
    for (int scale = 8; scale <= 10; scale++) {
        char what[64];
        NZT_OK(ctx, nz_gen_rmat(ctx, &A, scale, 8, 0, 0, 0, nzt_seed + (uint64_t)scale, NZ_F64));
        snprintf(what, sizeof what, "rmat scale %d squared", scale);
        check_product(ctx, what, A, A, 0);
        nz_matrix_destroy(&A);
    }
    /* rectangular: (200 x 50) (50 x 300), float, with empty rows (mean 1.5 gives zero-length rows) */
    NZT_OK(ctx, nz_gen_random(ctx, &A, 200, 50, 1.5, nzt_seed + 11, NZ_F32));
    NZT_OK(ctx, nz_gen_random(ctx, &B, 50, 300, 4, nzt_seed + 12, NZ_F32));
    check_product(ctx, "random 200x50 times 50x300 f32", A, B, 3);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    /* wide B, few products a row (hash accumulator: the dense one's summary scan of 300000 / 4096
     * words would outweigh about 20 products) */
    NZT_OK(ctx, nz_gen_random(ctx, &A, 100, 2000, 2, nzt_seed + 16, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &W, 2000, 300000, 10, nzt_seed + 17, NZ_F64));
    check_product(ctx, "random 100x2000 times 2000x300000 (wide, sparse rows: hash)", A, W, 0);
    nz_matrix_destroy(&W);
    nz_matrix_destroy(&A);
    /* wide B, hundreds of products a row (dense bitmap accumulator) */
    NZT_OK(ctx, nz_gen_random(ctx, &A, 100, 2000, 20, nzt_seed + 13, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &W, 2000, 300000, 30, nzt_seed + 14, NZ_F64));
    check_product(ctx, "random 100x2000 times 2000x300000 (wide, dense)", A, W, 0);
    nz_matrix_destroy(&W);
    /* wide and dense-ish rows (dense accumulator) */
    NZT_OK(ctx, nz_gen_random(ctx, &W, 2000, 70000, 400, nzt_seed + 15, NZ_F64));
    check_product(ctx, "random 100x2000 times 2000x70000 (wide, dense rows)", A, W, 2);
    nz_matrix_destroy(&W);
    nz_matrix_destroy(&A);
    /* a product with no nonzeros: A uses only columns 0..9, B's rows 0..9 are empty */
    {
        NZT_OK(ctx, nzt_spgemm_empty_product(ctx, &A, &B));
        nz_matrix_t *C = NULL;
        nz_spgemm_info_t info;
        NZT_OK(ctx, nz_spgemm(ctx, &C, A, B, NULL, &info));
        nz_matrix_info_t ic;
        NZT_OK(ctx, nz_matrix_info(ctx, &ic, C));
        NZT_CHECK(ic.rows == 40 && ic.cols == 40 && ic.nnz == 0 && info.products == 0,
                  "empty product: %lld x %lld nnz %lld", (long long)ic.rows, (long long)ic.cols,
                  (long long)ic.nnz);
        nz_matrix_destroy(&C);
        check_product(ctx, "no-nonzero product", A, B, 0);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&B);
    }
    /* 0-row and 0-column shapes */
    {
        const int64_t zo[] = {0};
        const int64_t eo[] = {0, 0, 0, 0};
        nz_matrix_t *Z = NULL, *E = NULL, *C = NULL;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &Z, 0, 3, NZ_I64, zo, NULL, NZ_F64, NULL));
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &E, 3, 0, NZ_I64, eo, NULL, NZ_F64, NULL));
        NZT_OK(ctx, nz_spgemm(ctx, &C, Z, E, NULL, NULL)); /* 0x3 times 3x0 */
        nz_matrix_info_t ic;
        NZT_OK(ctx, nz_matrix_info(ctx, &ic, C));
        NZT_CHECK(ic.rows == 0 && ic.cols == 0 && ic.nnz == 0, "0x3 * 3x0");
        nz_matrix_destroy(&C);
        NZT_OK(ctx, nz_spgemm(ctx, &C, E, Z, NULL, NULL)); /* 3x0 times 0x3 */
        NZT_OK(ctx, nz_matrix_info(ctx, &ic, C));
        NZT_CHECK(ic.rows == 3 && ic.cols == 3 && ic.nnz == 0, "3x0 * 0x3");
        nz_matrix_destroy(&C);
        nz_matrix_destroy(&Z);
        nz_matrix_destroy(&E);
    }
    /* non-CSR input (COO) gives the same product as CSR */
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 12, 9, NZ_F64));
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_COO, NULL));
    NZT_OK(ctx, nz_matrix_transpose(ctx, &T, A));
    check_product(ctx, "laplace2d COO times CSR", B, T, 0);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&T);
    nz_context_destroy(&ctx);
}

/* The result does not depend on the thread count (fixed summation order per entry). */
static void test_thread_independence(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *C1 = NULL, *C4 = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 10, 16, 0, 0, 0, nzt_seed + 5, NZ_F32));
    nz_spgemm_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.alg = NZ_SPGEMM_CPU;
    opt.threads = 1;
    NZT_OK(ctx, nz_spgemm(ctx, &C1, A, A, &opt, NULL));
    opt.threads = 4;
    NZT_OK(ctx, nz_spgemm(ctx, &C4, A, A, &opt, NULL));
    const int64_t *o1, *o4;
    const int32_t *c1, *c4;
    const void *v1, *v4;
    nz_matrix_info_t i1, i4;
    NZT_OK(ctx, nz_matrix_info(ctx, &i1, C1));
    NZT_OK(ctx, nz_matrix_info(ctx, &i4, C4));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &o1, &c1, &v1, C1));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &o4, &c4, &v4, C4));
    NZT_CHECK(i1.nnz == i4.nnz && memcmp(o1, o4, (size_t)(i1.rows + 1) * 8) == 0 &&
                  memcmp(c1, c4, (size_t)i1.nnz * 4) == 0 &&
                  memcmp(v1, v4, (size_t)i1.nnz * 4) == 0,
              "1 and 4 threads differ");
    nz_matrix_destroy(&C1);
    nz_matrix_destroy(&C4);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

/* Real matrices: A*A for square ones, A*A^T for a few rectangular ones (small files only). */
static void real_check(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                       const nz_matrix_t *B, void *arg) {
    (void)arg;
    check_product(ctx, what, A, B, 0);
}

static void test_real_matrices(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nzt_spgemm_real(ctx, "test_spgemm", 400000, NULL, real_check, NULL);
    nz_context_destroy(&ctx);
}

/* Fail the k-th allocation for k = 1, 2, ... until the call succeeds; nothing may leak and C must
 * stay NULL on failure. Narrow B (dense accumulator) and wide B (hash). */
static void test_allocation_failures(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *B = NULL, *W = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_gen_random(ctx, &A, 60, 40, 4, nzt_seed + 21, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &B, 40, 50, 4, nzt_seed + 22, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &W, 40, 300000, 4, nzt_seed + 23, NZ_F64));
    nz_matrix_t *Bs[2] = {B, W};
    nz_matrix_t *Acoo = NULL;
    NZT_OK(ctx, nz_matrix_convert(ctx, &Acoo, A, NZ_FORMAT_COO, NULL));
    for (int which = 0; which < 3; which++) {
        const nz_matrix_t *left = which == 2 ? Acoo : A, *right = Bs[which == 1];
        nz_alloc_stats_t before, after;
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
        int k, succeeded = 0;
        for (k = 1; k < 200 && !succeeded; k++) {
            nz_matrix_t *C = NULL;
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            nz_status_t s = nz_spgemm(ctx, &C, left, right, NULL, NULL);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            if (s == NZ_SUCCESS) {
                succeeded = 1;
                nz_matrix_destroy(&C);
            } else {
                NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY && C == NULL, "case %d k %d: status %d", which,
                          k, (int)s);
            }
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            NZT_CHECK(after.live_blocks == before.live_blocks && after.live_bytes == before.live_bytes,
                      "case %d k %d: %lld blocks leaked", which, k,
                      (long long)(after.live_blocks - before.live_blocks));
        }
        NZT_CHECK(succeeded && k > 3, "case %d: succeeded after %d injected failures", which, k - 1);
    }
    nz_matrix_destroy(&Acoo);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&W);
    nz_context_destroy(&ctx);
}

/* nz_spgemm_profile: the CPU algorithm's stages, the flags recorded, the profile zeroed on every
 * call (also a refused one), bad flags and a NULL profile refused; C the same as nz_spgemm's. */
static void test_profile(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *C = NULL, *D = NULL;
    nz_spgemm_profile_t profile;
    nz_spgemm_info_t info;
    nz_spgemm_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.alg = NZ_SPGEMM_CPU;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_gen_random(ctx, &A, 300, 300, 12, nzt_seed + 61, NZ_F64));
    memset(&profile, 0xff, sizeof profile);
    NZT_OK(ctx, nz_spgemm_profile(ctx, &C, &profile, A, A, &opt, NZ_SPGEMM_PROFILE_STAGES, &info));
    NZT_CHECK(profile.alg == NZ_SPGEMM_CPU && profile.flags == NZ_SPGEMM_PROFILE_STAGES,
              "alg %d flags %u", (int)profile.alg, profile.flags);
    NZT_CHECK(profile.stage_count == 2 && strcmp(profile.stage_names[0], "symbolic") == 0 &&
                  strcmp(profile.stage_names[1], "numeric") == 0,
              "stages %d", profile.stage_count);
    NZT_CHECK(profile.wall_seconds == info.seconds && profile.wall_seconds > 0.0 &&
                  profile.stage_seconds[0] + profile.stage_seconds[1] <= profile.wall_seconds,
              "wall %g, stages %g + %g", profile.wall_seconds, profile.stage_seconds[0],
              profile.stage_seconds[1]);
    NZT_CHECK(profile.bin_count == 0 && profile.host_copy_bytes_per_second == 0.0,
              "nothing else filled");
    NZT_OK(ctx, nz_spgemm(ctx, &D, A, A, &opt, NULL));
    NZT_CHECK(nzt_csr_identical(ctx, C, D, 1), "profiled C differs from nz_spgemm's");
    nz_matrix_destroy(&C);
    /* no flags: nothing recorded but the algorithm and the wall time */
    NZT_OK(ctx, nz_spgemm_profile(ctx, &C, &profile, A, A, &opt, 0, NULL));
    NZT_CHECK(profile.stage_count == 0 && profile.alg == NZ_SPGEMM_CPU, "flags 0: %d stages",
              profile.stage_count);
    nz_matrix_destroy(&C);
    nz_status_t s = nz_spgemm_profile(ctx, &C, &profile, A, A, &opt, 0x80u, NULL);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT && C == NULL && profile.stage_count == 0 &&
                  profile.flags == 0,
              "unknown flag: status %d", (int)s);
    s = nz_spgemm_profile(ctx, &C, NULL, A, A, &opt, NZ_SPGEMM_PROFILE_STAGES, NULL);
    NZT_CHECK(s == NZ_ERR_NULL_ARGUMENT && C == NULL, "NULL profile: status %d", (int)s);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&D);
    nz_context_destroy(&ctx);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_profile();
    test_hand_computed();
    test_errors();
    test_zoo();
    test_generated();
    test_thread_independence();
    test_real_matrices();
    test_allocation_failures();
    printf("test_spgemm: %lld entries of C checked, %d products above %d skipped\n",
           (long long)checked_products, skipped_products, REFERENCE_PRODUCT_LIMIT);
    return nzt_finish("test_spgemm");
}
