/* testutil.c: shared test helpers (see testutil.h). */
#include "testutil.h"
#include "nzi.h"

#include <dirent.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <float.h>
#include <math.h>
#include <string.h>

int nzt_failures = 0;
uint64_t nzt_seed = 20261121;

static long long shard_index = 0, shard_count = 1, shard_next = 0;

static void shard_parse(void) {
    const char *s = getenv("NZ_TEST_SHARD");
    long long i = 0, n = 1;
    if (s == NULL || !*s) return;
    if (sscanf(s, "%lld/%lld", &i, &n) != 2 || n < 1 || i < 0 || i >= n) {
        fprintf(stderr, "NZ_TEST_SHARD=%s: expected I/N with 0 <= I < N\n", s);
        exit(2);
    }
    shard_index = i;
    shard_count = n;
    printf("shard %lld of %lld (NZ_TEST_SHARD)\n", i, n);
}

int nzt_shard_take(void) { return shard_next++ % shard_count == shard_index; }

void nzt_init(int argc, char **argv) {
    (void)argc;
    (void)argv;
    const char *s = getenv("NZ_TEST_SEED");
    if (s != NULL && *s) nzt_seed = strtoull(s, NULL, 10);
    shard_parse();
}

int nzt_finish(const char *name) {
    if (nzt_failures) {
        fprintf(stderr, "%s: %d check(s) failed (seed %llu; rerun with NZ_TEST_SEED=%llu)\n", name,
                nzt_failures, (unsigned long long)nzt_seed, (unsigned long long)nzt_seed);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}


int nzt_env_flag(const char *name) {
    const char *v = getenv(name);
    return v != NULL && *v && strcmp(v, "0") != 0;
}

nz_context_t *nzt_gpu_context(const char *note) {
    if (nz_device_count() == 0) {
#ifdef NZ_HAVE_CUDA
        NZT_SKIP("no CUDA device");
#else
        NZT_SKIP("built without CUDA");
#endif
    }
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_set_device(ctx, 0, NULL));
    printf("device: %s%s\n", nz_context_device_name(ctx), note);
    return ctx;
}

void *nzt_malloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "test: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* ---- the zoo ----------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    int64_t rows, cols;
} zoo_case_t;

static const zoo_case_t zoo[] = {
    {"empty 0x0", 0, 0},
    {"no nonzeros 50x40", 50, 40},
    {"one column 1000x1", 1000, 1},
    {"one row 1x5000", 1, 5000},
    {"30% empty rows 2000x1500", 2000, 1500},
    {"one enormous row 300x60000", 300, 60000},
    {"tall 20000x30", 20000, 30},
    {"wide 40x50000", 40, 50000},
    {"uniform 3000x3000 mean 12", 3000, 3000},
    {"power-law rows 4000x4000", 4000, 4000},
    {"diagonal 777x777", 777, 777},
    {"dense 64x64", 64, 64},
    {"rows of 31..33 2048x2048", 2048, 2048},
    {"0 rows x 10 cols", 0, 10},
    {"10 rows x 0 cols", 10, 0},
};

int nzt_zoo_count(void) { return (int)(sizeof zoo / sizeof zoo[0]); }
const char *nzt_zoo_name(int k) { return zoo[k].name; }

nz_status_t nzt_zoo_matrix(nz_context_t *ctx, nz_matrix_t **A, int k, nz_value_type_t vt,
                           uint64_t seed) {
    const zoo_case_t *z = &zoo[k];
    nzi_rng_t rng;
    nzi_rng_seed(&rng, seed * 1000003u + (uint64_t)k);
    int64_t cap = 16, nnz = 0;
    int32_t *ri = nzt_malloc((size_t)cap * 4), *ci = nzt_malloc((size_t)cap * 4);
    double *v = nzt_malloc((size_t)cap * 8);
#define PUSH(r, c)                                                                              \
    do {                                                                                        \
        if (nnz == cap) {                                                                       \
            cap *= 2;                                                                           \
            ri = realloc(ri, (size_t)cap * 4);                                                  \
            ci = realloc(ci, (size_t)cap * 4);                                                  \
            v = realloc(v, (size_t)cap * 8);                                                    \
            if (!ri || !ci || !v) exit(1);                                                      \
        }                                                                                       \
        ri[nnz] = (int32_t)(r);                                                                 \
        ci[nnz] = (int32_t)(c);                                                                 \
        v[nnz] = 2.0 * nzi_rng_uniform(&rng) - 1.0;                                             \
        nnz++;                                                                                  \
    } while (0)
    switch (k) {
    case 0: case 1: case 13: case 14: break;
    case 2:
        for (int64_t i = 0; i < z->rows; i++)
            if (nzi_rng_uniform(&rng) < 0.7) PUSH(i, 0);
        break;
    case 3:
        for (int64_t j = 0; j < z->cols; j++)
            if (nzi_rng_uniform(&rng) < 0.5) PUSH(0, j);
        break;
    case 4:
        for (int64_t i = 0; i < z->rows; i++) {
            if (nzi_rng_uniform(&rng) < 0.3) continue;
            int64_t len = 1 + nzi_rng_below(&rng, 20);
            for (int64_t t = 0; t < len; t++) PUSH(i, nzi_rng_below(&rng, z->cols));
        }
        break;
    case 5:
        for (int64_t i = 0; i < z->rows; i++) {
            if (i == 7) {
                for (int64_t j = 0; j < z->cols; j++)
                    if (nzi_rng_uniform(&rng) < 0.9) PUSH(i, j);
            } else {
                int64_t len = nzi_rng_below(&rng, 6);
                for (int64_t t = 0; t < len; t++) PUSH(i, nzi_rng_below(&rng, z->cols));
            }
        }
        break;
    case 6: case 7: case 8: {
        double mean = k == 8 ? 12 : (k == 6 ? 4 : 3000);
        for (int64_t i = 0; i < z->rows; i++) {
            int64_t len = nzi_rng_below(&rng, (int64_t)(2 * mean) + 1);
            for (int64_t t = 0; t < len; t++) PUSH(i, nzi_rng_below(&rng, z->cols));
        }
        break;
    }
    case 9:
        for (int64_t i = 0; i < z->rows; i++) {
            double u = nzi_rng_uniform(&rng);
            int64_t len = (int64_t)(1.0 / (0.0005 + u * u)) / 8; /* heavy tail, up to ~250 */
            if (len > z->cols) len = z->cols;
            for (int64_t t = 0; t < len; t++) PUSH(i, nzi_rng_below(&rng, z->cols));
        }
        break;
    case 10:
        for (int64_t i = 0; i < z->rows; i++) PUSH(i, i);
        break;
    case 11:
        for (int64_t i = 0; i < z->rows; i++)
            for (int64_t j = 0; j < z->cols; j++) PUSH(i, j);
        break;
    case 12:
        for (int64_t i = 0; i < z->rows; i++) {
            int64_t len = 31 + nzi_rng_below(&rng, 3), start = nzi_rng_below(&rng, z->cols - len);
            for (int64_t t = 0; t < len; t++) PUSH(i, start + t);
        }
        break;
    }
#undef PUSH
    nz_status_t s;
    if (vt == NZ_F64) {
        s = nz_matrix_create_coo(ctx, A, z->rows, z->cols, nnz, ri, ci, vt, v);
    } else {
        float *vf = nzt_malloc((size_t)(nnz ? nnz : 1) * 4);
        for (int64_t t = 0; t < nnz; t++) vf[t] = (float)v[t];
        s = nz_matrix_create_coo(ctx, A, z->rows, z->cols, nnz, ri, ci, vt, vf);
        free(vf);
    }
    free(ri);
    free(ci);
    free(v);
    return s;
}

/* ---- references ------------------------------------------------------------------------- */

void nzt_reference_spmv(const nz_matrix_t *A, nz_operation_t op, double alpha, const double *x,
                        double beta, const double *y0, double *y_ref, double *bound,
                        int64_t *row_length) {
    nz_context_t *ctx = A->ctx; /* the test helper may look inside: A's own context */
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    const int64_t *ro;
    const int32_t *ci;
    const void *vals;
    if (nz_matrix_csr_arrays(ctx, &ro, &ci, &vals, A) != NZ_SUCCESS) {
        fprintf(stderr, "nzt_reference_spmv: needs a host CSR matrix\n");
        exit(1);
    }
    int64_t n = op == NZ_OP_N ? info.rows : info.cols;
    for (int64_t i = 0; i < n; i++) {
        y_ref[i] = 0;
        bound[i] = 0;
        row_length[i] = 0;
    }
    for (int64_t i = 0; i < info.rows; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) {
            double a = nzi_get(vals, info.value_type, k);
            int64_t out = op == NZ_OP_N ? i : ci[k];
            int64_t in = op == NZ_OP_N ? ci[k] : i;
            y_ref[out] += a * x[in];
            bound[out] += fabs(a * x[in]);
            row_length[out]++;
        }
    for (int64_t i = 0; i < n; i++) {
        y_ref[i] = alpha * y_ref[i] + (beta != 0 ? beta * y0[i] : 0.0);
        bound[i] = fabs(alpha) * bound[i] + (beta != 0 ? fabs(beta * y0[i]) : 0.0);
    }
}

int64_t nzt_compare(const char *what, nz_value_type_t vt, const void *y, const double *y_ref,
                    const double *bound, const int64_t *row_length, int64_t n, double tol_factor) {
    double eps = vt == NZ_F32 ? FLT_EPSILON : DBL_EPSILON;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double yi = vt == NZ_F32 ? (double)((const float *)y)[i] : ((const double *)y)[i];
        double tol = tol_factor * eps * (double)(row_length[i] + 2) * bound[i] +
                     (vt == NZ_F32 ? 1e-30 : 1e-300);
        bool ok;
        if (!isfinite(y_ref[i]) || !isfinite(bound[i]))
            /* NaN / Inf in the data (real matrices carry some): the kernel must produce the same
             * class of value, NaN for NaN and the same infinity. */
            ok = isnan(y_ref[i]) ? isnan(yi) : (isinf(y_ref[i]) ? yi == y_ref[i] : isnan(yi) || isinf(yi));
        else
            ok = fabs(yi - y_ref[i]) <= tol;
        if (!ok) {
            if (bad < 5)
                fprintf(stderr, "  %s: y[%lld] = %.17g, reference %.17g (tol %.3g)\n", what,
                        (long long)i, yi, y_ref[i], tol);
            bad++;
        }
    }
    return bad;
}

void nzt_poison(void *y, nz_value_type_t vt, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (vt == NZ_F32)
            ((float *)y)[i] = NAN;
        else
            ((double *)y)[i] = NAN;
    }
}

void nzt_from_double(void *dst, nz_value_type_t vt, const double *src, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (vt == NZ_F32)
            ((float *)dst)[i] = (float)src[i];
        else
            ((double *)dst)[i] = src[i];
    }
}

void nzt_random_vector(double *xd, void *x, nz_value_type_t vt, int64_t n, uint64_t seed) {
    nzi_rng_t rng;
    nzi_rng_seed(&rng, seed);
    for (int64_t i = 0; i < n; i++) {
        double v = 2.0 * nzi_rng_uniform(&rng) - 1.0;
        if (vt == NZ_F32) v = (double)(float)v; /* the reference sees exactly what the kernel sees */
        xd[i] = v;
    }
    if (x != NULL) nzt_from_double(x, vt, xd, n);
}

const char *nzt_matrix_dir(void) {
    const char *d = getenv("NZ_MATRIX_DIR");
    return d != NULL && *d ? d : NULL;
}

const char *nzt_data_dir(void) {
    const char *d = getenv("NZ_TEST_DATA_DIR");
    return d != NULL && *d ? d : NZ_TEST_DATA_DIR;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int nzt_list_matrices(const char *dir, char ***names) {
    *names = NULL;
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    int count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        int mtx = len > 4 && strcmp(e->d_name + len - 4, ".mtx") == 0;
        int gz = len > 7 && strcmp(e->d_name + len - 7, ".mtx.gz") == 0;
        if (!mtx && !gz) continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            *names = realloc(*names, (size_t)cap * sizeof(char *));
            if (*names == NULL) exit(1);
        }
        (*names)[count] = nzt_malloc(len + 1);
        memcpy((*names)[count], e->d_name, len + 1);
        count++;
    }
    closedir(d);
    if (count > 1) qsort(*names, (size_t)count, sizeof(char *), cmp_names);
    return count;
}

void nzt_free_names(char **names, int count) {
    for (int i = 0; i < count; i++) free(names[i]);
    free(names);
}

void nzt_fill_dense_operands(nz_value_type_t vt, nz_dense_layout_t layout, int64_t k,
                             void *X, int64_t xrows, int64_t ldx, int64_t nx, double *xd,
                             void *Y, int64_t yrows, int64_t ldy, int64_t ny, double *y0,
                             double beta) {
    for (int64_t i = 0; i < nx; i++) nzi_set(X, vt, i, NZT_SENTINEL);
    for (int64_t i = 0; i < ny; i++) nzi_set(Y, vt, i, NZT_SENTINEL);
    for (int64_t c = 0; c < k; c++) {
        nzt_random_vector(xd, NULL, vt, xrows, nzt_seed + 100 + (uint64_t)c);
        for (int64_t r = 0; r < xrows; r++) nzi_set(X, vt, nzt_dense_at(layout, ldx, r, c), xd[r]);
        nzt_random_vector(y0, NULL, vt, yrows, nzt_seed + 200 + (uint64_t)c);
        for (int64_t r = 0; r < yrows; r++)
            nzi_set(Y, vt, nzt_dense_at(layout, ldy, r, c), beta == 0 ? NAN : y0[r]);
    }
}

nz_status_t nzt_spgemm_empty_product(nz_context_t *ctx, nz_matrix_t **A, nz_matrix_t **B) {
    int32_t ri[40], ci[40];
    for (int e = 0; e < 40; e++) {
        ri[e] = e;
        ci[e] = e % 10;
    }
    nz_status_t status = nz_matrix_create_coo(ctx, A, 40, 20, 40, ri, ci, NZ_F64, NULL);
    if (status != NZ_SUCCESS) return status;
    for (int e = 0; e < 40; e++) {
        ri[e] = 10 + e % 10;
        ci[e] = e;
    }
    status = nz_matrix_create_coo(ctx, B, 20, 40, 40, ri, ci, NZ_F64, NULL);
    if (status != NZ_SUCCESS) nz_matrix_destroy(A);
    return status;
}

void nzt_spgemm_real(nz_context_t *ctx, const char *test, long long max_bytes,
                     int (*take)(int index), nzt_product_check_fn check, void *arg) {
    const char *dir = nzt_matrix_dir();
    if (dir == NULL) {
        printf("%s: NZ_MATRIX_DIR not set, real matrices skipped\n", test);
        return;
    }
    char **names = NULL;
    int count = nzt_list_matrices(dir, &names), used = 0, rectangular = 0;
    for (int i = 0; i < count; i++) {
        char path[4096], what[300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) != 0 || (long long)st.st_size > max_bytes) continue;
        nz_matrix_t *A = NULL, *T = NULL;
        if (nz_matrix_read(ctx, &A, path, NZ_F64) != NZ_SUCCESS) {
            printf("%s: %s not read (%s), skipped\n", test, names[i], nz_context_last_error(ctx));
            continue;
        }
        nz_matrix_info_t ia;
        NZT_OK(ctx, nz_matrix_info(ctx, &ia, A));
        if (take != NULL && !take(i)) {
            if (ia.rows != ia.cols && rectangular < 4) rectangular++;
        } else if (ia.rows == ia.cols) {
            snprintf(what, sizeof what, "%s A*A", names[i]);
            check(ctx, what, A, A, arg);
            used++;
        } else if (rectangular < 4) {
            NZT_OK(ctx, nz_matrix_transpose(ctx, &T, A));
            snprintf(what, sizeof what, "%s A*A^T", names[i]);
            check(ctx, what, A, T, arg);
            nz_matrix_destroy(&T);
            rectangular++;
            used++;
        }
        nz_matrix_destroy(&A);
    }
    printf("%s: %d real matrices (%d rectangular)\n", test, used, rectangular);
    nzt_free_names(names, count);
}

int nzt_csr_identical(nz_context_t *ctx, const nz_matrix_t *C, const nz_matrix_t *D, int values) {
    const int64_t *co, *dof;
    const int32_t *cc, *dc;
    const void *cv, *dv;
    nz_matrix_info_t ci, di;
    if (nz_matrix_info(ctx, &ci, C) != NZ_SUCCESS || nz_matrix_info(ctx, &di, D) != NZ_SUCCESS ||
        nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C) != NZ_SUCCESS ||
        nz_matrix_csr_arrays(ctx, &dof, &dc, &dv, D) != NZ_SUCCESS)
        return 0;
    const char *differ = NULL;
    if (ci.rows != di.rows || ci.cols != di.cols || ci.nnz != di.nnz ||
        ci.value_type != di.value_type)
        differ = "shape, nnz or value type";
    else if (memcmp(co, dof, (size_t)(ci.rows + 1) * sizeof *co) != 0)
        differ = "row offsets";
    else if (memcmp(cc, dc, (size_t)ci.nnz * sizeof *cc) != 0)
        differ = "columns";
    else if (values && memcmp(cv, dv, (size_t)ci.nnz * nzi_value_size(ci.value_type)) != 0)
        differ = "values";
    if (differ != NULL) fprintf(stderr, "  CSR matrices differ: %s\n", differ);
    return differ == NULL;
}

double *nzt_dense_of(nz_context_t *ctx, const nz_matrix_t *A, int64_t *rows, int64_t *cols) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    const int64_t *offsets;
    const int32_t *columns;
    const void *values;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &offsets, &columns, &values, A));
    double *d = nzt_malloc((size_t)(info.rows * info.cols + 1) * sizeof(double));
    for (int64_t k = 0; k < info.rows * info.cols; k++) d[k] = 0;
    for (int64_t i = 0; i < info.rows; i++)
        for (int64_t k = offsets[i]; k < offsets[i + 1]; k++)
            d[i * info.cols + columns[k]] += nzi_get(values, info.value_type, k);
    *rows = info.rows;
    *cols = info.cols;
    return d;
}

char *nzt_read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = nzt_malloc((size_t)(n > 0 ? n : 0) + 1);
    *size = fread(data, 1, (size_t)(n > 0 ? n : 0), f);
    data[*size] = '\0';
    fclose(f);
    return data;
}

void nzt_write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

void nzt_set_tunables(nz_context_t *ctx, const nz_tunables_t *base, const char *const *settings,
                      int count) {
    nz_tunables_t tunables;
    if (base != NULL)
        tunables = *base;
    else
        NZT_OK(ctx, nz_context_get_tunables(ctx, &tunables));
    for (int i = 0; i < count; i++) {
        if (settings[i] == NULL) continue;
        nz_status_t s = nz_tunables_parse(&tunables, settings[i]);
        NZT_CHECK(s == NZ_SUCCESS || strstr(settings[i], "junk") != NULL,
                  "nz_tunables_parse %s returned %d", settings[i], (int)s);
    }
    NZT_OK(ctx, nz_context_set_tunables(ctx, &tunables));
}

int nzt_spmv_algs(nz_backend_t backend, nz_format_t format, nz_alg_t *algs, int max) {
    nz_format_t f;
    nz_alg_t alg;
    int n = 0;
    for (int i = 0; nz_spmv_list(&f, &alg, backend, i) == NZ_SUCCESS; i++)
        if (f == format && n < max) algs[n++] = alg;
    return n;
}

nzt_dense_shape_t nzt_dense_shape(const nz_matrix_info_t *info, nz_operation_t op,
                                  nz_dense_layout_t layout, int64_t k, int64_t pad) {
    nzt_dense_shape_t d;
    d.xrows = op == NZ_OP_N ? info->cols : info->rows;
    d.yrows = op == NZ_OP_N ? info->rows : info->cols;
    d.ldx = (layout == NZ_ROW_MAJOR ? k : (d.xrows > 1 ? d.xrows : 1)) + pad;
    d.ldy = (layout == NZ_ROW_MAJOR ? k : (d.yrows > 1 ? d.yrows : 1)) + pad;
    d.nx = nzt_dense_span(layout, d.xrows, k, d.ldx);
    d.ny = nzt_dense_span(layout, d.yrows, k, d.ldy);
    return d;
}

/* A matrix with A's pattern and new values (from seed), a copy. */
nz_matrix_t *nzt_new_values(nz_context_t *ctx, const nz_matrix_t *A, uint64_t seed) {
    const int64_t *rp;
    const int32_t *ci;
    const void *vp;
    nz_matrix_info_t info;
    nz_matrix_t *M = NULL;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &rp, &ci, &vp, A));
    double *xd = malloc(nzt_at_least_one(info.nnz) * sizeof(double));
    void *x = malloc(nzt_at_least_one(info.nnz) * sizeof(double));
    nzt_random_vector(xd, x, info.value_type, info.nnz, seed);
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &M, info.rows, info.cols, NZ_I64, rp, ci,
                                     info.value_type, x));
    free(xd);
    free(x);
    return M;
}

double nzt_rel_diff(const double *x, const double *y, int64_t n) {
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) {
        num += (x[i] - y[i]) * (x[i] - y[i]);
        den += y[i] * y[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

nz_status_t nzt_amg(nz_context_t *ctx, nz_preconditioner_t **M, const nz_matrix_t *A,
                    const nz_amg_options_t *ao) {
    nz_precond_options_t po;
    memset(&po, 0, sizeof po);
    po.amg = ao;
    return nz_precond_create(ctx, M, A, NZ_PRECOND_AMG, &po);
}

/* A's pattern with every column shifted by `shift` (cyclically, rows re-sorted): the same
 * shape and nonzero count, another pattern. */
nz_matrix_t *nzt_shifted_pattern(nz_context_t *ctx, const nz_matrix_t *A, int32_t shift) {
    const int64_t *rp;
    const int32_t *ci;
    const void *vp;
    nz_matrix_info_t info;
    nz_matrix_t *S = NULL;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &rp, &ci, &vp, A));
    const int64_t n = info.rows;
    int32_t *cols = malloc(nzt_at_least_one(info.nnz) * sizeof(int32_t));
    for (int64_t i = 0; i < n; i++) {
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) cols[k] = (int32_t)((ci[k] + shift) % info.cols);
        for (int64_t x = rp[i] + 1; x < rp[i + 1]; x++)
            for (int64_t y = x; y > rp[i] && cols[y - 1] > cols[y]; y--) {
                int32_t t = cols[y];
                cols[y] = cols[y - 1];
                cols[y - 1] = t;
            }
    }
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &S, n, info.cols, NZ_I64, rp, cols, info.value_type, vp));
    free(cols);
    return S;
}

int nzt_each_square_data_matrix(nz_context_t *ctx, int max, int64_t max_nnz,
                                void (*fn)(nz_context_t *ctx, const char *name, nz_matrix_t *M,
                                           void *arg),
                                void *arg) {
    char **names = NULL;
    int count = nzt_list_matrices(nzt_data_dir(), &names), done = 0;
    for (int k = 0; k < count && done < max; k++) {
        char path[4096];
        nz_matrix_t *M = NULL;
        nz_matrix_info_t mi;
        snprintf(path, sizeof path, "%s/%s", nzt_data_dir(), names[k]);
        if (nz_mm_read(ctx, &M, path, NZ_F64) != NZ_SUCCESS) continue;
        NZT_OK(ctx, nz_matrix_info(ctx, &mi, M));
        if (mi.rows == mi.cols && mi.format == NZ_FORMAT_CSR && mi.nnz > 0 && mi.nnz < max_nnz) {
            fn(ctx, names[k], M, arg);
            done++;
        }
        nz_matrix_destroy(&M);
    }
    nzt_free_names(names, count);
    return done;
}
