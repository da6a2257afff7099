/* bench_spgemm.cu: `nz bench --spgemm`: C = A*A with Nonzero's hash SpGEMM and cuSPARSE's three. */
#include "bench_spgemm.h"
#include "safe_output.h"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VERIFY_FULL_LIMIT 500000000LL /* products up to which every row is verified */
#define VERIFY_SAMPLE_ROWS 2000
#define VERIFY_HEAVY_ROWS 8

typedef struct spgemm_case {
    char name[96];
    int kind;          /* 0 laplace3d, 1 fe3d, 2 random, 3 rmat, 4 file */
    int64_t size;      /* grid n, FE n, rows, R-MAT scale */
    const char *path;
} spgemm_case_t;

typedef struct cusparse_result {
    int ok;
    double seconds;
    int64_t c_nnz;
    size_t peak_bytes;
    char note[128];
} cusparse_result_t;

static const struct {
    cusparseSpGEMMAlg_t alg;
    const char *name;
} cusparse_algs[] = {{CUSPARSE_SPGEMM_ALG1, "alg1"}, {CUSPARSE_SPGEMM_ALG2, "alg2"},
                     {CUSPARSE_SPGEMM_ALG3, "alg3"}};
#define NUM_CUSPARSE 3

static double wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static nz_status_t make_matrix(nz_context_t *ctx, nz_matrix_t **A, const spgemm_case_t *c,
                               nz_value_type_t vt, int edge_factor) {
    switch (c->kind) {
    case 0: return nz_gen_laplace3d(ctx, A, c->size, c->size, c->size, vt);
    case 1: return nz_gen_fe3d(ctx, A, NULL, NULL, c->size, vt);
    case 2: return nz_gen_random(ctx, A, c->size, c->size, 8.0, 7, vt);
    case 3: return nz_gen_rmat(ctx, A, (int)c->size, edge_factor, 0, 0, 0, 1, vt);
    default: return nz_matrix_read(ctx, A, c->path, vt);
    }
}

/* Products per row and their total, and sum_i min(products_i, cols): an upper bound on nnz(C). */
static void count_products(nz_context_t *ctx, const nz_matrix_t *A, int64_t *products,
                           int64_t *c_bound, int64_t **per_row) {
    const int64_t *o;
    const int32_t *c;
    const void *v;
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    nz_matrix_csr_arrays(ctx, &o, &c, &v, A);
    int64_t *rows = (int64_t *)malloc((size_t)(info.rows > 0 ? info.rows : 1) * sizeof(int64_t));
    *products = 0;
    *c_bound = 0;
    for (int64_t i = 0; i < info.rows; i++) {
        int64_t p = 0;
        for (int64_t k = o[i]; k < o[i + 1]; k++) p += o[c[k] + 1] - o[c[k]];
        rows[i] = p;
        *products += p;
        *c_bound += p < info.cols ? p : info.cols;
    }
    *per_row = rows;
}

/* Rows `list` of A as a new host CSR matrix, values in double, absolute or not. */
static nz_status_t select_rows(nz_context_t *ctx, nz_matrix_t **S, const nz_matrix_t *A,
                               const int64_t *list, int64_t count, int absolute) {
    const int64_t *o;
    const int32_t *c;
    const void *v;
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    nz_matrix_csr_arrays(ctx, &o, &c, &v, A);
    int64_t nnz = 0;
    for (int64_t r = 0; r < count; r++) nnz += o[list[r] + 1] - o[list[r]];
    int64_t *so = (int64_t *)malloc((size_t)(count + 1) * sizeof(int64_t));
    int32_t *sc = (int32_t *)malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int32_t));
    double *sv = (double *)malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(double));
    nz_status_t status = NZ_ERR_OUT_OF_MEMORY;
    if (so != NULL && sc != NULL && sv != NULL) {
        so[0] = 0;
        for (int64_t r = 0; r < count; r++) {
            int64_t at = so[r];
            for (int64_t k = o[list[r]]; k < o[list[r] + 1]; k++, at++) {
                double x = info.value_type == NZ_F32 ? (double)((const float *)v)[k]
                                                     : ((const double *)v)[k];
                sc[at] = c[k];
                sv[at] = absolute ? fabs(x) : x;
            }
            so[r + 1] = at;
        }
        status = nz_matrix_create_csr(ctx, S, count, info.cols, NZ_I64, so, sc, NZ_F64, sv);
    }
    free(so);
    free(sc);
    free(sv);
    return status;
}

/* Verify rows `list` of C = A*A against the CPU algorithm (in double, from A's values): identical
 * columns, values within 4 eps (k + 2) (|A||A|)_ij in C's precision. Returns mismatches (-1 when
 * the reference could not be computed) and describes the first in note. */
static int64_t verify_rows(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *C,
                           const int64_t *list, int64_t count, char *note, size_t note_size) {
    nz_matrix_t *S = NULL, *absS = NULL, *A64 = NULL, *absA = NULL, *R = NULL, *bound = NULL;
    nz_spgemm_options_t cpu;
    int64_t bad = -1;
    memset(&cpu, 0, sizeof cpu);
    cpu.alg = NZ_SPGEMM_CPU;
    nz_matrix_info_t ai;
    nz_matrix_info(ctx, &ai, A);
    int64_t *all = (int64_t *)malloc((size_t)(ai.rows > 0 ? ai.rows : 1) * sizeof(int64_t));
    for (int64_t i = 0; i < ai.rows; i++) all[i] = i;
    if (select_rows(ctx, &S, A, list, count, 0) == NZ_SUCCESS &&
        select_rows(ctx, &absS, A, list, count, 1) == NZ_SUCCESS &&
        select_rows(ctx, &A64, A, all, ai.rows, 0) == NZ_SUCCESS &&
        select_rows(ctx, &absA, A, all, ai.rows, 1) == NZ_SUCCESS &&
        nz_spgemm(ctx, &R, S, A64, &cpu, NULL) == NZ_SUCCESS &&
        nz_spgemm(ctx, &bound, absS, absA, &cpu, NULL) == NZ_SUCCESS) {
        const int64_t *ao, *co, *ro, *bo;
        const int32_t *ac, *cc, *rc, *bc;
        const void *av, *cv, *rv, *bv;
        nz_matrix_info_t ci;
        nz_matrix_info(ctx, &ci, C);
        nz_matrix_csr_arrays(ctx, &ao, &ac, &av, A);
        nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C);
        nz_matrix_csr_arrays(ctx, &ro, &rc, &rv, R);
        nz_matrix_csr_arrays(ctx, &bo, &bc, &bv, bound);
        const double eps = ci.value_type == NZ_F32 ? 1.1920929e-7 : 2.220446049250313e-16;
        bad = 0;
        for (int64_t r = 0; r < count; r++) {
            const int64_t i = list[r];
            if (co[i + 1] - co[i] != ro[r + 1] - ro[r]) {
                if (bad++ == 0)
                    snprintf(note, note_size, "row %lld has %lld entries, CPU %lld", (long long)i,
                             (long long)(co[i + 1] - co[i]), (long long)(ro[r + 1] - ro[r]));
                continue;
            }
            const double k = (double)(ao[i + 1] - ao[i]);
            for (int64_t e = 0; e < ro[r + 1] - ro[r]; e++) {
                const int64_t ce = co[i] + e, re = ro[r] + e;
                double x = ci.value_type == NZ_F32 ? (double)((const float *)cv)[ce]
                                                   : ((const double *)cv)[ce];
                double y = ((const double *)rv)[re];
                double tol = 4.0 * eps * (k + 2.0) * ((const double *)bv)[re];
                if (ci.value_type == NZ_F32) tol += 1.2e-7 * fabs(y); /* the CPU result is double */
                if (cc[ce] != rc[re] || !((isnan(x) && isnan(y)) || x == y || fabs(x - y) <= tol)) {
                    if (bad++ == 0)
                        snprintf(note, note_size, "row %lld: (%d, %.17g), CPU (%d, %.17g)",
                                 (long long)i, cc[ce], x, rc[re], y);
                }
            }
        }
    } else {
        snprintf(note, note_size, "CPU reference failed: %s", nz_context_last_error(ctx));
    }
    free(all);
    nz_matrix_destroy(&S);
    nz_matrix_destroy(&absS);
    nz_matrix_destroy(&A64);
    nz_matrix_destroy(&absA);
    nz_matrix_destroy(&R);
    nz_matrix_destroy(&bound);
    return bad;
}

/* One cuSPARSE SpGEMM C = A*A on device arrays (int32 offsets), timed from work estimation to
 * the copy, allocations included; every status is caught and becomes a note. */
static void run_cusparse(cusparseHandle_t handle, cudaStream_t stream, cusparseSpGEMMAlg_t alg,
                         int64_t n, int64_t nnz, const int32_t *d_off, const int32_t *d_col,
                         const void *d_val, nz_value_type_t vt, size_t a_bytes,
                         cusparse_result_t *res) {
    cudaDataType type = vt == NZ_F32 ? CUDA_R_32F : CUDA_R_64F;
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    const void *alpha = vt == NZ_F32 ? (const void *)&one_f : (const void *)&one_d;
    const void *beta = vt == NZ_F32 ? (const void *)&zero_f : (const void *)&zero_d;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    cusparseSpMatDescr_t matA = NULL, matC = NULL;
    cusparseSpGEMMDescr_t desc = NULL;
    void *buf1 = NULL, *buf2 = NULL, *buf3 = NULL, *c_off = NULL, *c_col = NULL, *c_val = NULL;
    size_t size1 = 0, size2 = 0, size3 = 0, held = a_bytes;
    int64_t c_rows = 0, c_cols = 0, c_nnz = 0;
    cusparseStatus_t st = CUSPARSE_STATUS_SUCCESS;
    cudaError_t err = cudaSuccess;
    const char *where = "";
    memset(res, 0, sizeof *res);
    res->peak_bytes = a_bytes;

#define CS(call, name)                                                                          \
    do {                                                                                        \
        where = name;                                                                           \
        if ((st = (call)) != CUSPARSE_STATUS_SUCCESS) goto done;                                \
    } while (0)
#define CM(ptr, bytes, name)                                                                    \
    do {                                                                                        \
        where = name;                                                                           \
        if ((err = cudaMalloc(&(ptr), (bytes) > 0 ? (bytes) : 1)) != cudaSuccess) goto done;    \
        held += (bytes);                                                                        \
        if (held > res->peak_bytes) res->peak_bytes = held;                                     \
    } while (0)

    cudaStreamSynchronize(stream);
    double t0 = wtime();
    CS(cusparseCreateCsr(&matA, n, n, nnz, (void *)d_off, (void *)d_col, (void *)d_val,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
       "cusparseCreateCsr");
    CS(cusparseCreateCsr(&matC, n, n, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, type),
       "cusparseCreateCsr");
    CS(cusparseSpGEMM_createDescr(&desc), "cusparseSpGEMM_createDescr");
    CS(cusparseSpGEMM_workEstimation(handle, op, op, alpha, matA, matA, beta, matC, type, alg, desc,
                                     &size1, NULL),
       "cusparseSpGEMM_workEstimation");
    CM(buf1, size1, "cudaMalloc(buffer1)");
    CS(cusparseSpGEMM_workEstimation(handle, op, op, alpha, matA, matA, beta, matC, type, alg, desc,
                                     &size1, buf1),
       "cusparseSpGEMM_workEstimation");
    if (alg != CUSPARSE_SPGEMM_ALG1) {
        CS(cusparseSpGEMM_estimateMemory(handle, op, op, alpha, matA, matA, beta, matC, type, alg,
                                         desc, 0.2f, &size3, NULL, NULL),
           "cusparseSpGEMM_estimateMemory");
        CM(buf3, size3, "cudaMalloc(buffer3)");
        CS(cusparseSpGEMM_estimateMemory(handle, op, op, alpha, matA, matA, beta, matC, type, alg,
                                         desc, 0.2f, &size3, buf3, &size2),
           "cusparseSpGEMM_estimateMemory");
        cudaFree(buf3);
        buf3 = NULL;
        held -= size3;
    } else {
        CS(cusparseSpGEMM_compute(handle, op, op, alpha, matA, matA, beta, matC, type, alg, desc,
                                  &size2, NULL),
           "cusparseSpGEMM_compute");
    }
    CM(buf2, size2, "cudaMalloc(buffer2)");
    CS(cusparseSpGEMM_compute(handle, op, op, alpha, matA, matA, beta, matC, type, alg, desc,
                              &size2, buf2),
       "cusparseSpGEMM_compute");
    CS(cusparseSpMatGetSize(matC, &c_rows, &c_cols, &c_nnz), "cusparseSpMatGetSize");
    CM(c_off, (size_t)(n + 1) * 4, "cudaMalloc(C offsets)");
    CM(c_col, (size_t)c_nnz * 4, "cudaMalloc(C columns)");
    CM(c_val, (size_t)c_nnz * (vt == NZ_F32 ? 4 : 8), "cudaMalloc(C values)");
    CS(cusparseCsrSetPointers(matC, c_off, c_col, c_val), "cusparseCsrSetPointers");
    CS(cusparseSpGEMM_copy(handle, op, op, alpha, matA, matA, beta, matC, type, alg, desc),
       "cusparseSpGEMM_copy");
    where = "cudaStreamSynchronize";
    if ((err = cudaStreamSynchronize(stream)) != cudaSuccess) goto done;
    res->seconds = wtime() - t0;
    res->c_nnz = c_nnz;
    res->ok = 1;
done:
    if (!res->ok) {
        if (st != CUSPARSE_STATUS_SUCCESS)
            snprintf(res->note, sizeof res->note, "%s: %s", where, cusparseGetErrorString(st));
        else
            snprintf(res->note, sizeof res->note, "%s: %s", where, cudaGetErrorString(err));
        (void)cudaGetLastError();
    }
    cudaStreamSynchronize(stream);
    (void)cudaGetLastError();
    cudaFree(buf1);
    cudaFree(buf2);
    cudaFree(buf3);
    cudaFree(c_off);
    cudaFree(c_col);
    cudaFree(c_val);
    if (desc != NULL) cusparseSpGEMM_destroyDescr(desc);
    if (matA != NULL) cusparseDestroySpMat(matA);
    if (matC != NULL) cusparseDestroySpMat(matC);
#undef CS
#undef CM
}

static int list_real(spgemm_case_t **cases, int *count, int *capacity) {
    const char *dir = getenv("NZ_MATRIX_DIR");
    if (dir == NULL) return 0;
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (!((len > 4 && strcmp(e->d_name + len - 4, ".mtx") == 0) ||
              (len > 7 && strcmp(e->d_name + len - 7, ".mtx.gz") == 0)))
            continue;
        if (*count == *capacity) {
            *capacity *= 2;
            *cases = (spgemm_case_t *)realloc(*cases, (size_t)*capacity * sizeof(spgemm_case_t));
        }
        spgemm_case_t *c = &(*cases)[(*count)++];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%.90s", e->d_name);
        c->kind = 4;
        size_t plen = strlen(dir) + len + 2;
        char *path = (char *)malloc(plen);
        snprintf(path, plen, "%s/%s", dir, e->d_name);
        c->path = path;
    }
    closedir(d);
    return 0;
}

/* esc / hyspmm: what each stage of the last run took, its wall time and the overlap (wall / sum
 * of the stages: below 1 where stages ran at the same time), and hySpMM's host bandwidths
 * against a plain host copy measured in the same call. */
static void print_stages(FILE *out, const nz_spgemm_profile_t *p) {
    double sum = 0.0;
    fprintf(out, "    stages ms:");
    for (int i = 0; i < p->stage_count; i++) {
        fprintf(out, " %s %.2f", p->stage_names[i], 1e3 * p->stage_seconds[i]);
        sum += p->stage_seconds[i];
    }
    fprintf(out, " | sum %.2f wall %.2f overlap %.3f\n", 1e3 * sum, 1e3 * p->wall_seconds,
            sum > 0.0 ? p->wall_seconds / sum : 0.0);
    if (p->host_copy_bytes_per_second > 0.0)
        fprintf(out, "    host GB/s: expand %.2f copy-out %.2f memcpy %.2f (expand %.0f%% of memcpy)\n",
                1e-9 * p->expand_bytes_per_second, 1e-9 * p->copy_out_bytes_per_second,
                1e-9 * p->host_copy_bytes_per_second,
                100.0 * p->expand_bytes_per_second / p->host_copy_bytes_per_second);
}

int nzb_bench_spgemm(const nzb_spgemm_options_t *options) {
    nzb_spgemm_options_t o = *options;
    FILE *out = o.out != NULL ? o.out : stdout;
    const nz_value_type_t vt = o.single ? NZ_F32 : NZ_F64;
    const size_t vs = o.single ? 4 : 8;
    const int runs = o.runs > 0 ? o.runs : 3;
    const int edge_factor = o.rmat_edge_factor > 0 ? o.rmat_edge_factor : 16;
    int capacity = 32, count = 0, exit_status = 0;
    spgemm_case_t *cases = (spgemm_case_t *)calloc((size_t)capacity, sizeof(spgemm_case_t));
    FILE *csv = NULL;
    nzu_output_t csv_out; /* replaced only when complete (safe_output.h) */
    nz_context_t *ctx = NULL;
    cusparseHandle_t handle = NULL;
    cudaStream_t stream = NULL;
    double log_speedup_device = 0.0, log_speedup_e2e = 0.0;
    int compared = 0, cusparse_failed_all = 0, ours_correct_there = 0;
    const double host_bytes = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
    /* ours: hash unless --alg named ESC or hySpMM (the CLI refuses cpu; AUTO is hash) */
    const nz_spgemm_alg_t ours_alg =
        o.alg == NZ_SPGEMM_ESC || o.alg == NZ_SPGEMM_HYSPMM ? o.alg : NZ_SPGEMM_HASH;

    if (o.num_files > 0) {
        for (int f = 0; f < o.num_files; f++) {
            if (count == capacity) {
                capacity *= 2;
                cases = (spgemm_case_t *)realloc(cases, (size_t)capacity * sizeof(spgemm_case_t));
            }
            spgemm_case_t *c = &cases[count++];
            memset(c, 0, sizeof *c);
            const char *base = strrchr(o.files[f], '/');
            snprintf(c->name, sizeof c->name, "%.90s", base != NULL ? base + 1 : o.files[f]);
            c->kind = 4;
            c->path = o.files[f];
        }
    } else {
        const struct { int kind; int64_t full, quick; const char *fmt; } suite[] = {
            {0, 100, 40, "laplace3d %lld^3"}, {1, 64, 24, "fe3d %lld^3"},
            {2, 1000000, 100000, "random %lld x mean 8"}, {3, 16, 12, "rmat scale %lld"},
            {3, 18, 13, "rmat scale %lld"}, {3, 20, 14, "rmat scale %lld"}};
        for (size_t s = 0; s < sizeof suite / sizeof suite[0]; s++) {
            spgemm_case_t *c = &cases[count++];
            memset(c, 0, sizeof *c);
            c->kind = suite[s].kind;
            c->size = o.quick ? suite[s].quick : suite[s].full;
            snprintf(c->name, sizeof c->name, suite[s].fmt, (long long)c->size);
        }
        if (o.real) list_real(&cases, &count, &capacity);
    }

    if (nz_device_count() == 0) {
        fprintf(out, "nz bench --spgemm: no CUDA device\n");
        exit_status = 1;
        goto cleanup;
    }
    if (nz_context_create(&ctx) != NZ_SUCCESS || nz_context_set_device(ctx, 0, NULL) != NZ_SUCCESS ||
        cudaStreamCreate(&stream) != cudaSuccess || cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS ||
        cusparseSetStream(handle, stream) != CUSPARSE_STATUS_SUCCESS) {
        fprintf(out, "nz bench --spgemm: cannot set up the device: %s\n",
                ctx != NULL ? nz_context_last_error(ctx) : "no context");
        exit_status = 1;
        goto cleanup;
    }
    if (o.csv_path != NULL && (csv = nzu_output_fopen(&csv_out, o.csv_path)) != NULL)
        fprintf(csv, "matrix,precision,rows,nnz,products,c_nnz,ours_seconds,ours_device_seconds,"
                     "ours_device_resident,ours_kernel_seconds,ours_symbolic_seconds,ours_gflops,panels,overlap,ours_peak_bytes,verified,alg1_seconds,alg2_seconds,"
                     "alg3_seconds,cusparse_best_seconds,cusparse_peak_bytes,speedup_device,"
                     "speedup_end_to_end,notes\n");
    fprintf(out, "# SpGEMM C = A*A, %s precision, %s, median of %d runs\n", o.single ? "single" : "double",
            nz_context_device_name(ctx), runs);
    fprintf(out, "# R-MAT edge factor %d (halved, shown as 'ef N', where C would not fit in host memory)\n",
            edge_factor);
    fprintf(out, "# ours: nz_spgemm %s; ours s = host A in, host C out; kern s = symbolic + numeric phases\n"
                 "# %s; sym s = symbolic phase;\n",
            nz_spgemm_alg_name(ours_alg),
            ours_alg == NZ_SPGEMM_HASH
                ? "(events); device s = the call on device A (int32 offsets) with C left on the\n"
                  "# device, wall clock, every allocation included (cuSPARSE's window)"
                : "(for esc and hyspmm the symbolic phase is host wall clock with the uploads,\n"
                  "# counts and allocations in it, and esc's numeric phase host wall clock with\n"
                  "# its copies back: device s = kern s overstates their device time)");
    fprintf(out,
                 "# cuSPARSE: cusparseSpGEMM work estimation .. copy, allocations included, device "
                 "arrays in and out;\n# end-to-end speedup adds cuSPARSE's copies of A in and C out.\n");
    fprintf(out, "%-24s %9s %11s %11s %9s %9s %9s %9s %7s %6s %7s %10s %-8s %9s %9s %9s %8s %8s\n", "matrix",
            "rows", "products", "nnz(C)", "ours s", "device s", "kern s", "sym s", "GFLOP/s", "panels", "overlap",
            "peak MB", "verified", "alg1 s", "alg2 s", "alg3 s", "x device", "x e2e");

    for (int ci = 0; ci < count; ci++) {
        spgemm_case_t *c = &cases[ci];
        nz_matrix_t *A = NULL, *C = NULL;
        int64_t products = 0, c_bound = 0, *per_row = NULL;
        double times[64], kernel_times[64], sym_times[64];
        nz_spgemm_info_t info;
        char verify_note[200] = "", notes[600] = "";
        int verified = 0;
        memset(&info, 0, sizeof info);
        if (make_matrix(ctx, &A, c, vt, edge_factor) != NZ_SUCCESS) {
            fprintf(out, "%-24s not available: %s\n", c->name, nz_context_last_error(ctx));
            continue;
        }
        nz_matrix_info_t ai;
        nz_matrix_info(ctx, &ai, A);
        if (ai.rows != ai.cols) {
            nz_matrix_destroy(&A);
            continue;
        }
        count_products(ctx, A, &products, &c_bound, &per_row);
        /* an R-MAT product whose C cannot fit in host memory: fewer edges per vertex, said so */
        for (int ef = edge_factor / 2; c->kind == 3 && ef >= 2 &&
                                       (double)c_bound * (double)(4 + vs) * 2.5 > 0.6 * host_bytes;
             ef /= 2) {
            free(per_row);
            per_row = NULL;
            nz_matrix_destroy(&A);
            if (make_matrix(ctx, &A, c, vt, ef) != NZ_SUCCESS) break;
            nz_matrix_info(ctx, &ai, A);
            count_products(ctx, A, &products, &c_bound, &per_row);
            snprintf(c->name, sizeof c->name, "rmat scale %lld ef %d", (long long)c->size, ef);
        }
        if (A == NULL) {
            fprintf(out, "%-24s not available: %s\n", c->name, nz_context_last_error(ctx));
            continue;
        }
        if ((double)c_bound * (double)(4 + vs) * 2.5 > 0.6 * host_bytes) {
            fprintf(out, "%-24s skipped: C may need %.1f GB of host memory\n", c->name,
                    (double)c_bound * (double)(4 + vs) * 1e-9);
            free(per_row);
            nz_matrix_destroy(&A);
            continue;
        }

        /* ours */
        nz_spgemm_options_t opt;
        nz_spgemm_profile_t profile; /* the last run's stages (host wall clock, no extra sync) */
        memset(&opt, 0, sizeof opt);
        memset(&profile, 0, sizeof profile);
        opt.alg = ours_alg;
        opt.gpu_memory_limit = o.gpu_memory_limit;
        int ok = 1, nruns = runs < 64 ? runs : 64;
        for (int r = 0; r < nruns && ok; r++) {
            nz_matrix_destroy(&C);
            nz_status_t s = nz_spgemm_profile(ctx, &C, &profile, A, A, &opt,
                                              NZ_SPGEMM_PROFILE_STAGES, &info);
            if (s != NZ_SUCCESS) {
                snprintf(notes, sizeof notes, "ours failed: %s", nz_context_last_error(ctx));
                ok = 0;
                break;
            }
            times[r] = info.seconds;
            kernel_times[r] = info.symbolic_seconds + info.numeric_seconds;
            sym_times[r] = info.symbolic_seconds;
        }
        double ours = ok ? median(times, nruns) : 0.0, ours_kernels = ok ? median(kernel_times, nruns) : 0.0;
        /* hash: the device-resident call below (or the host one if C does not fit the device);
         * esc / hyspmm: their phase times, as documented in the header */
        double ours_device = ours_alg == NZ_SPGEMM_HASH ? ours : ours_kernels;
        int device_resident = 0;
        double ours_sym = ok ? median(sym_times, nruns) : 0.0;
        if (ok) {
            /* verify once: every row, or a sample plus the heaviest rows */
            int64_t n_list = ai.rows, *list = (int64_t *)malloc((size_t)(ai.rows > 0 ? ai.rows : 1) * sizeof(int64_t));
            if (products <= VERIFY_FULL_LIMIT) {
                for (int64_t i = 0; i < ai.rows; i++) list[i] = i;
            } else {
                uint64_t x = 88172645463325252ull;
                n_list = 0;
                for (int h = 0; h < VERIFY_HEAVY_ROWS; h++) {
                    int64_t best = 0;
                    for (int64_t i = 1; i < ai.rows; i++)
                        if (per_row[i] > per_row[best]) best = i;
                    list[n_list++] = best;
                    per_row[best] = -1;
                }
                for (int s = 0; s < VERIFY_SAMPLE_ROWS; s++) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    list[n_list++] = (int64_t)(x % (uint64_t)ai.rows);
                }
            }
            int64_t bad = verify_rows(ctx, A, C, list, n_list, verify_note, sizeof verify_note);
            verified = bad == 0;
            if (!verified) {
                exit_status = 1;
                snprintf(notes, sizeof notes, "WRONG: %lld mismatches (%s)", (long long)bad, verify_note);
            } else if (products > VERIFY_FULL_LIMIT) {
                snprintf(notes, sizeof notes, "verified on %d sampled + %d heaviest rows; ",
                         VERIFY_SAMPLE_ROWS, VERIFY_HEAVY_ROWS);
            }
            /* ours device resident (hash): A on the device once, with int32 row offsets like
             * cuSPARSE's; C stays on the device. The wall time of the whole call, every
             * allocation and the symbolic phase included: cuSPARSE's window. Its C is checked
             * on the same rows. */
            if (ours_alg == NZ_SPGEMM_HASH) {
                nz_matrix_t *dA = NULL, *dC = NULL, *hC = NULL;
                nz_spgemm_info_t dinfo;
                double dts[64];
                nz_status_t ds =
                    nz_matrix_to_device(ctx, &dA, A, ai.nnz <= INT32_MAX ? NZ_I32 : NZ_I64);
                for (int r = 0; r < nruns && ds == NZ_SUCCESS; r++) {
                    nz_matrix_destroy(&dC);
                    ds = nz_spgemm(ctx, &dC, dA, dA, &opt, &dinfo);
                    dts[r] = dinfo.seconds;
                }
                size_t l = strlen(notes);
                if (ds == NZ_SUCCESS && (ds = nz_matrix_to_host(ctx, &hC, dC)) == NZ_SUCCESS) {
                    ours_device = median(dts, nruns);
                    device_resident = 1;
                    bad = verify_rows(ctx, A, hC, list, n_list, verify_note, sizeof verify_note);
                    if (bad != 0) {
                        verified = 0;
                        exit_status = 1;
                        snprintf(notes + l, sizeof notes - l, "device C WRONG: %lld mismatches (%s); ",
                                 (long long)bad, verify_note);
                    }
                } else {
                    snprintf(notes + l, sizeof notes - l,
                             "device C: %s (x device from the host-in/host-out time); ",
                             nz_context_last_error(ctx));
                }
                nz_matrix_destroy(&hC);
                nz_matrix_destroy(&dC);
                nz_matrix_destroy(&dA);
            }
            free(list);
        } else {
            exit_status = 1;
        }
        nz_matrix_info_t cinfo;
        memset(&cinfo, 0, sizeof cinfo);
        if (C != NULL) nz_matrix_info(ctx, &cinfo, C);

        /* cuSPARSE on device copies with 32-bit offsets (uploaded once; the copy is timed) */
        cusparse_result_t cres[NUM_CUSPARSE];
        memset(cres, 0, sizeof cres);
        double upload_seconds = 0.0, download_seconds = 0.0;
        int32_t *d_off = NULL, *d_col = NULL;
        void *d_val = NULL;
        const int64_t *ho;
        const int32_t *hc;
        const void *hv;
        nz_matrix_csr_arrays(ctx, &ho, &hc, &hv, A);
        size_t a_bytes = (size_t)(ai.rows + 1) * 4 + (size_t)ai.nnz * (4 + vs);
        if (ai.nnz <= INT32_MAX) {
            int32_t *off32 = (int32_t *)malloc((size_t)(ai.rows + 1) * 4);
            for (int64_t i = 0; i <= ai.rows; i++) off32[i] = (int32_t)ho[i];
            double t = wtime();
            if (cudaMalloc((void **)&d_off, (size_t)(ai.rows + 1) * 4) == cudaSuccess &&
                cudaMalloc((void **)&d_col, (size_t)ai.nnz * 4 + 4) == cudaSuccess &&
                cudaMalloc(&d_val, (size_t)ai.nnz * vs + 8) == cudaSuccess &&
                cudaMemcpy(d_off, off32, (size_t)(ai.rows + 1) * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
                cudaMemcpy(d_col, hc, (size_t)ai.nnz * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
                cudaMemcpy(d_val, hv, (size_t)ai.nnz * vs, cudaMemcpyHostToDevice) == cudaSuccess) {
                upload_seconds = wtime() - t;
                for (int a = 0; a < NUM_CUSPARSE; a++) {
                    double ts[64];
                    int good = 1;
                    for (int r = 0; r < nruns && good; r++) {
                        run_cusparse(handle, stream, cusparse_algs[a].alg, ai.rows, ai.nnz, d_off,
                                     d_col, d_val, vt, a_bytes, &cres[a]);
                        good = cres[a].ok;
                        ts[r] = cres[a].seconds;
                    }
                    if (good) cres[a].seconds = median(ts, nruns);
                    if (good && cres[a].c_nnz != cinfo.nnz) {
                        size_t l = strlen(notes);
                        snprintf(notes + l, sizeof notes - l, "cusparse/%s nnz(C) %lld differs; ",
                                 cusparse_algs[a].name, (long long)cres[a].c_nnz);
                    }
                }
            } else {
                for (int a = 0; a < NUM_CUSPARSE; a++)
                    snprintf(cres[a].note, sizeof cres[a].note, "cannot upload A: %s",
                             cudaGetErrorString(cudaGetLastError()));
            }
            free(off32);
        } else {
            for (int a = 0; a < NUM_CUSPARSE; a++)
                snprintf(cres[a].note, sizeof cres[a].note, "nnz above 2^31 (int32 offsets)");
        }
        cudaFree(d_off);
        cudaFree(d_col);
        cudaFree(d_val);
        /* the download of C that an end-to-end cuSPARSE user pays: the same bytes, pageable */
        if (cinfo.nnz > 0) {
            size_t bytes = (size_t)cinfo.nnz * (4 + vs) + (size_t)(ai.rows + 1) * 4;
            void *dbuf = NULL, *hbuf = malloc(bytes);
            if (hbuf != NULL && cudaMalloc(&dbuf, bytes) == cudaSuccess) {
                double t = wtime();
                if (cudaMemcpy(hbuf, dbuf, bytes, cudaMemcpyDeviceToHost) == cudaSuccess)
                    download_seconds = wtime() - t;
            }
            (void)cudaGetLastError();
            cudaFree(dbuf);
            free(hbuf);
        }

        int best = -1;
        for (int a = 0; a < NUM_CUSPARSE; a++)
            if (cres[a].ok && (best < 0 || cres[a].seconds < cres[best].seconds)) best = a;
        double speedup_device = 0.0, speedup_e2e = 0.0;
        if (best >= 0 && ok) {
            speedup_device = ours_device > 0.0 ? cres[best].seconds / ours_device : 0.0;
            speedup_e2e = ours > 0.0 ? (cres[best].seconds + upload_seconds + download_seconds) / ours : 0.0;
            if (speedup_device > 0.0 && speedup_e2e > 0.0) {
                log_speedup_device += log(speedup_device);
                log_speedup_e2e += log(speedup_e2e);
                compared++;
            }
        } else if (best < 0) {
            cusparse_failed_all++;
            if (ok && verified) ours_correct_there++;
        }
        char col[NUM_CUSPARSE][16];
        for (int a = 0; a < NUM_CUSPARSE; a++) {
            if (cres[a].ok)
                snprintf(col[a], sizeof col[a], "%.4f", cres[a].seconds);
            else
                snprintf(col[a], sizeof col[a], "failed");
            if (!cres[a].ok) {
                size_t l = strlen(notes);
                snprintf(notes + l, sizeof notes - l, "cusparse/%s: %s; ", cusparse_algs[a].name,
                         cres[a].note);
            }
        }
        double overlap = info.stage_seconds_sum > 0.0 ? info.seconds / info.stage_seconds_sum : 0.0;
        fprintf(out, "%-24s %9lld %11lld %11lld %9.4f %9.4f %9.4f %9.4f %7.2f %6lld %7.3f %10.1f %-8s %9s %9s %9s %8.2f %8.2f\n",
                c->name, (long long)ai.rows, (long long)products, (long long)cinfo.nnz, ours,
                ours_device, ours_kernels, ours_sym, ours > 0.0 ? 2.0 * (double)products / ours * 1e-9 : 0.0,
                (long long)info.panels, overlap, (double)info.peak_device_bytes / 1048576.0,
                !ok ? "failed" : verified ? "yes" : "WRONG", col[0], col[1], col[2], speedup_device,
                speedup_e2e);
        if (notes[0] != '\0') fprintf(out, "    note: %s\n", notes);
        if (ok && ours_alg != NZ_SPGEMM_HASH) print_stages(out, &profile);
        fflush(out);
        if (csv != NULL)
            fprintf(csv, "%s,%s,%lld,%lld,%lld,%lld,%.6g,%.6g,%d,%.6g,%.6g,%.6g,%lld,%.4f,%lld,%d,%.6g,%.6g,%.6g,%.6g,%zu,%.4f,%.4f,\"%s\"\n",
                    c->name, o.single ? "single" : "double", (long long)ai.rows, (long long)ai.nnz,
                    (long long)products, (long long)cinfo.nnz, ours, ours_device, device_resident,
                    ours_kernels, ours_sym,
                    ours > 0.0 ? 2.0 * (double)products / ours * 1e-9 : 0.0, (long long)info.panels,
                    overlap, (long long)info.peak_device_bytes, verified,
                    cres[0].ok ? cres[0].seconds : -1.0, cres[1].ok ? cres[1].seconds : -1.0,
                    cres[2].ok ? cres[2].seconds : -1.0, best >= 0 ? cres[best].seconds : -1.0,
                    best >= 0 ? cres[best].peak_bytes : (size_t)0, speedup_device, speedup_e2e, notes);
        free(per_row);
        nz_matrix_destroy(&C);
        nz_matrix_destroy(&A);
    }
    fprintf(out, "# summary: %d matrices where cuSPARSE succeeds: geometric-mean speedup vs its best "
                 "%.2fx on the device, %.2fx end to end; %d where every cuSPARSE algorithm failed, "
                 "ours correct on %d of them\n",
            compared, compared > 0 ? exp(log_speedup_device / compared) : 0.0,
            compared > 0 ? exp(log_speedup_e2e / compared) : 0.0, cusparse_failed_all,
            ours_correct_there);

cleanup:
    if (csv != NULL && nzu_output_fclose(&csv_out, csv) != 0) {
        fprintf(stderr, "nz bench: cannot write %s\n", o.csv_path);
        exit_status = 1;
    }
    if (handle != NULL) cusparseDestroy(handle);
    if (stream != NULL) cudaStreamDestroy(stream);
    nz_context_destroy(&ctx);
    if (o.num_files == 0)
        for (int ci = 0; ci < count; ci++)
            if (cases[ci].kind == 4) free((void *)cases[ci].path);
    free(cases);
    return exit_status;
}
