/* test_immutability.c: every caller array and every input matrix is bitwise unchanged by every public call that reads it. */
#include "testutil.h"
#include "nzi.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

/*
 * Each caller array (and each input matrix, through its internal arrays) is hashed with FNV-1a
 * 64 before and after the call. Inputs are chosen to make a careless implementation write to
 * them: unsorted columns with duplicates (a copy-then-sort that sorted the caller's array instead),
 * COO in reverse order, x aliasing nothing, NaN in y with beta = 0, text buffers without a final
 * newline.
 */

static int64_t n_hashed;

static uint64_t fnv1a(const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t mix(uint64_t h, const void *data, size_t n) {
    if (data == NULL || n == 0) return h * 31 + n;
    return (h ^ fnv1a(data, n)) * 0x100000001b3ull;
}

/* Hash of everything a host matrix stores (the library's own layouts, src/internal/nzi.h). */
static uint64_t hash_matrix(const nz_matrix_t *M) {
    size_t vs = nzi_value_size(M->value_type);
    uint64_t h = fnv1a(M, offsetof(nz_matrix_t, host));
    switch (M->format) {
    case NZ_FORMAT_CSR:
    case NZ_FORMAT_CSC: {
        int64_t n = M->format == NZ_FORMAT_CSR ? M->rows : M->cols;
        const nzi_csr_t *a = &M->host.csr;
        h = mix(h, a->row_offsets, (size_t)(n + 1) * 8);
        h = mix(h, a->col_indices, (size_t)a->row_offsets[n] * 4);
        h = mix(h, a->values, (size_t)a->row_offsets[n] * vs);
        break;
    }
    case NZ_FORMAT_COO:
        h = mix(h, M->host.coo.row_indices, (size_t)M->nnz * 4);
        h = mix(h, M->host.coo.col_indices, (size_t)M->nnz * 4);
        h = mix(h, M->host.coo.values, (size_t)M->nnz * vs);
        break;
    case NZ_FORMAT_ELL: {
        size_t n = (size_t)(M->rows * M->host.ell.width);
        h = mix(h, &M->host.ell.width, 8);
        h = mix(h, M->host.ell.col_indices, n * 4);
        h = mix(h, M->host.ell.values, n * vs);
        break;
    }
    case NZ_FORMAT_SELL: {
        const nzi_sell_t *a = &M->host.sell;
        size_t stored = (size_t)a->chunk_offsets[a->num_chunks];
        h = mix(h, a->chunk_offsets, (size_t)(a->num_chunks + 1) * 8);
        h = mix(h, a->chunk_widths, (size_t)a->num_chunks * 4);
        h = mix(h, a->row_of_slot, (size_t)a->num_chunks * (size_t)a->chunk * 4);
        h = mix(h, a->col_indices, stored * 4);
        h = mix(h, a->values, stored * vs);
        break;
    }
    case NZ_FORMAT_HYB: {
        const nzi_hyb_t *a = &M->host.hyb;
        size_t n = (size_t)(M->rows * a->ell.width);
        h = mix(h, a->ell.col_indices, n * 4);
        h = mix(h, a->ell.values, n * vs);
        h = mix(h, a->coo.row_indices, (size_t)a->coo_nnz * 4);
        h = mix(h, a->coo.col_indices, (size_t)a->coo_nnz * 4);
        h = mix(h, a->coo.values, (size_t)a->coo_nnz * vs);
        break;
    }
    case NZ_FORMAT_BSR: {
        const nzi_bsr_t *a = &M->host.bsr;
        h = mix(h, a->block_row_offsets, (size_t)(a->block_rows + 1) * 8);
        h = mix(h, a->block_col_indices, (size_t)a->num_blocks * 4);
        h = mix(h, a->values, (size_t)a->num_blocks * (size_t)a->block * (size_t)a->block * vs);
        break;
    }
    case NZ_FORMAT_DIA: {
        const nzi_dia_t *a = &M->host.dia;
        h = mix(h, a->offsets, (size_t)a->num_diagonals * 8);
        h = mix(h, a->values, (size_t)(a->num_diagonals * M->rows) * vs);
        break;
    }
    default: break;
    }
    return h;
}

#define SAME(what, before, after)                                                               \
    do {                                                                                        \
        n_hashed++;                                                                             \
        NZT_CHECK((before) == (after), "%s was modified", what);                                \
    } while (0)

/* ---- creation from caller arrays ----------------------------------------------------------- */

static void test_create(nz_context_t *ctx) {
    /* unsorted with duplicates, both offset widths, both value types, values NULL */
    int32_t ro32[] = {0, 4, 4, 9, 11};
    int64_t ro64[] = {0, 4, 4, 9, 11};
    int32_t ci[] = {5, 1, 5, 0, 3, 3, 2, 0, 6, 1, 0};
    double vd[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    float vf[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    for (int variant = 0; variant < 6; variant++) {
        uint64_t h_ro32 = fnv1a(ro32, sizeof ro32), h_ro64 = fnv1a(ro64, sizeof ro64);
        uint64_t h_ci = fnv1a(ci, sizeof ci), h_vd = fnv1a(vd, sizeof vd), h_vf = fnv1a(vf, sizeof vf);
        nz_matrix_t *A = NULL;
        nz_index_type_t ot = variant & 1 ? NZ_I64 : NZ_I32;
        const void *ro = variant & 1 ? (const void *)ro64 : (const void *)ro32;
        nz_value_type_t vt = variant & 2 ? NZ_F32 : NZ_F64;
        const void *v = variant >= 4 ? NULL : (vt == NZ_F32 ? (const void *)vf : (const void *)vd);
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 4, 7, ot, ro, ci, vt, v));
        nz_matrix_info_t info;
        nz_matrix_info(ctx, &info, A);
        NZT_CHECK(info.nnz == 9, "create_csr: %lld entries after summing duplicates", (long long)info.nnz);
        nz_matrix_destroy(&A);
        SAME("create_csr row_offsets (int32)", h_ro32, fnv1a(ro32, sizeof ro32));
        SAME("create_csr row_offsets (int64)", h_ro64, fnv1a(ro64, sizeof ro64));
        SAME("create_csr col_indices", h_ci, fnv1a(ci, sizeof ci));
        SAME("create_csr values (f64)", h_vd, fnv1a(vd, sizeof vd));
        SAME("create_csr values (f32)", h_vf, fnv1a(vf, sizeof vf));
    }
    /* COO: reverse order with duplicates; also a failing call (index out of range) */
    int32_t ri[] = {3, 3, 2, 2, 1, 0, 0, 3};
    int32_t cj[] = {6, 0, 5, 5, 1, 4, 2, 0};
    for (int variant = 0; variant < 4; variant++) {
        uint64_t h_ri = fnv1a(ri, sizeof ri), h_cj = fnv1a(cj, sizeof cj);
        uint64_t h_vd = fnv1a(vd, sizeof vd), h_vf = fnv1a(vf, sizeof vf);
        nz_matrix_t *A = NULL;
        nz_value_type_t vt = variant & 1 ? NZ_F32 : NZ_F64;
        const void *v = variant & 2 ? NULL : (vt == NZ_F32 ? (const void *)vf : (const void *)vd);
        NZT_OK(ctx, nz_matrix_create_coo(ctx, &A, 4, 7, 8, ri, cj, vt, v));
        nz_matrix_destroy(&A);
        NZT_CHECK(nz_matrix_create_coo(ctx, &A, 4, 6, 8, ri, cj, vt, v) == NZ_ERR_INVALID_MATRIX,
                  "create_coo: column 6 of 6 accepted");
        SAME("create_coo row_indices", h_ri, fnv1a(ri, sizeof ri));
        SAME("create_coo col_indices", h_cj, fnv1a(cj, sizeof cj));
        SAME("create_coo values (f64)", h_vd, fnv1a(vd, sizeof vd));
        SAME("create_coo values (f32)", h_vf, fnv1a(vf, sizeof vf));
    }
}

/* ---- matrices as inputs: convert, transpose, stats, SpMV, write ------------------------- */

static void test_matrix_inputs(nz_context_t *ctx, nz_matrix_t *A, const char *label, const char *dir) {
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    nz_format_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.max_padding_ratio = 40.0; /* most shapes in every format, without DIA of 10^7 entries */
    opt.sell_chunk = 4;
    opt.bsr_block = 2;
    uint64_t h_opt = fnv1a(&opt, sizeof opt);
    int64_t len = (info.rows > info.cols ? info.rows : info.cols) + 1;
    size_t vs = nzi_value_size(info.value_type);
    void *x = nzt_malloc((size_t)len * vs), *y = nzt_malloc((size_t)len * vs);
    double *xd = (double *)nzt_malloc((size_t)len * sizeof(double));
    nzt_random_vector(xd, x, info.value_type, len, 99);
    char path[256];
    snprintf(path, sizeof path, "%s/m.mtx", dir);
    for (int f = 0; f < NZ_FORMAT_COUNT; f++) {
        nz_matrix_t *B = NULL, *C = NULL;
        uint64_t h_a = hash_matrix(A);
        nz_status_t s = nz_matrix_convert(ctx, &B, A, (nz_format_t)f, &opt);
        SAME("convert: input matrix", h_a, hash_matrix(A));
        SAME("convert: options", h_opt, fnv1a(&opt, sizeof opt));
        if (s != NZ_SUCCESS) continue;
        uint64_t h_b = hash_matrix(B);
        NZT_OK(ctx, nz_matrix_convert(ctx, &C, B, NZ_FORMAT_CSR, NULL));
        nz_matrix_destroy(&C);
        NZT_OK(ctx, nz_matrix_convert_values(ctx, &C, B, info.value_type == NZ_F32 ? NZ_F64 : NZ_F32));
        nz_matrix_destroy(&C);
        NZT_OK(ctx, nz_matrix_transpose(ctx, &C, B));
        nz_matrix_destroy(&C);
        nz_matrix_stats_t st;
        NZT_OK(ctx, nz_matrix_stats(ctx, &st, B));
        NZT_OK(ctx, nz_mm_write(ctx, path, B));
        SAME("convert back / convert_values / transpose / stats / mm_write: input", h_b, hash_matrix(B));
        const nz_format_t lf = (nz_format_t)f;
        nz_alg_t algs[32];
        const int num_algs = nzt_spmv_algs(NZ_BACKEND_CPU, lf, algs, 32);
        for (int a = 0; a < num_algs; a++) {
            const nz_alg_t alg = algs[a];
            for (int op = 0; op < 2; op++) {
                nz_spmv_plan_t *P = NULL;
                if (nz_spmv_plan_create(ctx, &P, B, (nz_operation_t)op, alg, 0) != NZ_SUCCESS) continue;
                uint64_t h_x = fnv1a(x, (size_t)len * vs);
                nzt_poison(y, info.value_type, len); /* beta = 0: y is output only */
                NZT_OK(ctx, nz_spmv_execute(P, 1.25, x, 0.0, y));
                NZT_OK(ctx, nz_spmv_execute(P, -0.5, x, 2.0, y));
                SAME("spmv: x", h_x, fnv1a(x, (size_t)len * vs));
                SAME("spmv: matrix", h_b, hash_matrix(B));
                int64_t out = op ? info.cols : info.rows;
                int bad = 0;
                for (int64_t i = 0; i < out; i++)
                    if (isnan(nzi_get(y, info.value_type, i))) bad++;
                NZT_CHECK(bad == 0, "%s %s/%s op %d: NaN in y propagated with beta = 0", label,
                          nz_format_name(lf), nz_alg_name(alg), op);
                nz_spmv_plan_destroy(&P);
            }
        }
        nz_matrix_destroy(&B);
    }
    remove(path);
    free(x);
    free(y);
    free(xd);
}

/* ---- text and dense inputs -------------------------------------------------------------- */

static void test_io_inputs(nz_context_t *ctx, const char *dir) {
    /* no final newline; symmetric so the reader expands */
    char text[] = "%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 4\n1 1 2.5\n2 1 -1\n"
                  "3 2 4e-3\n3 3 7";
    uint64_t h = fnv1a(text, sizeof text);
    nz_matrix_t *A = NULL;
    for (int t = 0; t < 2; t++) {
        NZT_OK(ctx, nz_mm_read_buffer(ctx, &A, text, strlen(text), "text", t ? NZ_F32 : NZ_F64));
        nz_matrix_destroy(&A);
    }
    /* a failing parse must not write the buffer either */
    char bad[] = "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n";
    uint64_t hb = fnv1a(bad, sizeof bad);
    NZT_CHECK(nz_mm_read_buffer(ctx, &A, bad, strlen(bad), "bad", NZ_F64) == NZ_ERR_PARSE,
              "row 3 of 2 accepted");
    SAME("mm_read_buffer: data", h, fnv1a(text, sizeof text));
    SAME("mm_read_buffer (failing): data", hb, fnv1a(bad, sizeof bad));

    char path[256];
    snprintf(path, sizeof path, "%s/dense.mtx", dir);
    double dd[15];
    float df[15];
    for (int i = 0; i < 15; i++) {
        dd[i] = 1.0 / (i + 3);
        df[i] = (float)dd[i];
    }
    uint64_t hd = fnv1a(dd, sizeof dd), hf = fnv1a(df, sizeof df);
    NZT_OK(ctx, nz_mm_write_dense(ctx, path, NZ_F64, 5, 3, dd));
    NZT_OK(ctx, nz_mm_write_dense(ctx, path, NZ_F32, 3, 5, df));
    SAME("mm_write_dense: data (f64)", hd, fnv1a(dd, sizeof dd));
    SAME("mm_write_dense: data (f32)", hf, fnv1a(df, sizeof df));
    remove(path);

    /* binary write of every format */
    nz_matrix_t *G = NULL;
    NZT_OK(ctx, nz_gen_random(ctx, &G, 30, 20, 3.0, 5, NZ_F64));
    snprintf(path, sizeof path, "%s/m.nzb", dir);
    uint64_t hg = hash_matrix(G);
    NZT_OK(ctx, nz_binary_write(ctx, path, G));
    SAME("binary_write: matrix", hg, hash_matrix(G));
    remove(path);
    nz_matrix_destroy(&G);
}

/* ---- CG: b, A and the options are inputs; x is input/output --------------------------- */

static void test_cg_inputs(nz_context_t *ctx) {
    nz_matrix_t *S = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &S, 9, 8, NZ_F64));
    int64_t n = 72;
    double *b = (double *)nzt_malloc((size_t)n * 8), *x = (double *)nzt_malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) b[i] = sin((double)i);
    for (int variant = 0; variant < 4; variant++) {
        nz_matrix_t *M = S;
        nz_matrix_t *Ms = NULL;
        if (variant & 2) {
            NZT_OK(ctx, nz_matrix_convert(ctx, &Ms, S, NZ_FORMAT_SELL, NULL));
            M = Ms;
        }
        nz_cg_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.rtol = 1e-9;
        opt.precond = variant & 1 ? NZ_PRECOND_JACOBI : NZ_PRECOND_NONE;
        opt.record_history = 1;
        memset(x, 0, (size_t)n * 8);
        uint64_t hb = fnv1a(b, (size_t)n * 8), ho = fnv1a(&opt, sizeof opt), hm = hash_matrix(M);
        nz_cg_result_t res;
        NZT_OK(ctx, nz_cg_solve(ctx, M, b, x, &opt, &res));
        nz_free(ctx, res.history);
        SAME("cg: b", hb, fnv1a(b, (size_t)n * 8));
        SAME("cg: options", ho, fnv1a(&opt, sizeof opt));
        SAME("cg: A", hm, hash_matrix(M));
        nz_matrix_destroy(&Ms);
    }
    free(b);
    free(x);
    nz_matrix_destroy(&S);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    char dir[] = "/tmp/nz_immut_XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_create(ctx);
    /* one thread for the zoo (quick on a loaded CI machine); the OpenMP default for the rest */
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    /* small zoo shapes (empty, one row / column, empty rows, diagonal, dense) and a random one */
    static const int zoo_cases[] = {0, 1, 2, 3, 4, 10, 11, 13, 14};
    for (size_t i = 0; i < sizeof zoo_cases / sizeof zoo_cases[0]; i++)
        for (int t = 0; t < 2; t++) {
            nz_matrix_t *A = NULL;
            nz_value_type_t vt = t ? NZ_F32 : NZ_F64;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, zoo_cases[i], vt, nzt_seed));
            test_matrix_inputs(ctx, A, nzt_zoo_name(zoo_cases[i]), dir);
            nz_matrix_destroy(&A);
        }
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    nz_matrix_t *R = NULL;
    NZT_OK(ctx, nz_gen_random(ctx, &R, 57, 43, 5.0, nzt_seed, NZ_F64));
    test_matrix_inputs(ctx, R, "random 57x43", dir);
    nz_matrix_destroy(&R);
    test_io_inputs(ctx, dir);
    test_cg_inputs(ctx);
    rmdir(dir);
    nz_alloc_stats_t st;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &st));
    NZT_CHECK(st.live_blocks == 0, "%lld blocks leak", (long long)st.live_blocks);
    printf("immutability: %lld hash comparisons\n", (long long)n_hashed);
    nz_context_destroy(&ctx);
    return nzt_finish("test_immutability");
}
