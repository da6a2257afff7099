/* test_huge.c: scale: SpMV with more than 2^31 nonzeros (64-bit offsets) on the GPU against the CPU; more than 2^31 rows refused by every constructor. */
#include "testutil.h"

#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/*
 * The big case runs only with NZ_TEST_HUGE=1 (it needs ~40 GB of host memory, ~19 GB of device
 * memory and about a minute). The matrix is square with R = 2^26 rows of L = 33 entries:
 * 2 214 592 512 nonzeros (> 2^31 = 2 147 483 648), float values, so it needs 64-bit row offsets
 * everywhere. Row i holds columns base(i) + k G (k = 0 .. L-1, G = R / L, base(i) = 13 i mod G),
 * sorted and spread over the whole of x; values 1 + ((i + k) mod 7) / 8 and x_j = 1 + (j mod 5) / 4
 * are multiples of 1/8 and 1/4, so every product is a multiple of 1/32 and every row sum (< 2^7)
 * is exact in float whatever the summation order: the GPU, the CPU and the closed form must agree
 * bitwise. The host arrays are filled by one thread per core; the matrix goes through
 * nz_matrix_create_csr (validated, copied), nz_matrix_to_device (NZ_INDEX_AUTO: must choose 64)
 * and every CUDA CSR algorithm; results are compared with the CPU SpMV on every row and with the
 * closed form on sampled rows. Peak host RSS, peak device bytes and times are printed.
 *
 * Without NZ_TEST_HUGE the cheap half still runs: a matrix with 2^31 rows is refused with
 * NZ_ERR_UNSUPPORTED by every constructor that can be asked for one (CSR, COO, device wrap,
 * generators on host and device, the Matrix Market reader).
 */

#ifndef HUGE_ROWS
#define HUGE_ROWS ((int64_t)1 << 26) /* overridable for a dry run of the host half */
#endif
#define HUGE_LEN 33

static nz_context_t *ctx;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_rss_gib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / (1024.0 * 1024.0); /* ru_maxrss is in KiB on Linux */
}

/* ---- more than 2^31 rows: refused ----------------------------------------------------------- */

static void expect_unsupported(const char *what, nz_status_t s, const nz_matrix_t *out) {
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED, "%s: status %d (%s), expected unsupported: %s", what, (int)s,
              nz_status_string(s), nz_context_last_error(ctx));
    NZT_CHECK(out == NULL, "%s: output set", what);
    printf("  refused: %-34s %s\n", what, nz_context_last_error(ctx));
}

static void test_too_many_rows(void) {
    const int64_t rows = (int64_t)1 << 31;
    const int64_t ro[2] = {0, 0};
    const int32_t idx[1] = {0};
    nz_matrix_t *A = NULL;
    expect_unsupported("nz_matrix_create_csr", nz_matrix_create_csr(ctx, &A, rows, 1, NZ_I64, ro, idx, NZ_F32, NULL), A);
    expect_unsupported("nz_matrix_create_coo", nz_matrix_create_coo(ctx, &A, rows, 1, 1, idx, idx, NZ_F32, NULL), A);
    void *d = NULL;
    NZT_OK(ctx, nz_device_malloc(ctx, &d, 64));
    NZT_OK(ctx, nz_device_memset(ctx, d, 0, 64));
    expect_unsupported("nz_matrix_wrap_csr_device", nz_matrix_wrap_csr_device(ctx, &A, rows, 4, 0, NZ_I64, d, (const int32_t *)d, NZ_F32, d, 1), A);
    NZT_OK(ctx, nz_device_free(ctx, d));
    expect_unsupported("nz_gen_laplace2d 2^16 x 2^15", nz_gen_laplace2d(ctx, &A, 1 << 16, 1 << 15, NZ_F32), A);
    expect_unsupported("nz_gen_laplace3d 2^11 x 2^10 x 2^10", nz_gen_laplace3d(ctx, &A, 1 << 11, 1 << 10, 1 << 10, NZ_F32), A);
    expect_unsupported("nz_gen_fe3d n = 1292", nz_gen_fe3d(ctx, &A, NULL, NULL, 1292, NZ_F32), A);
    expect_unsupported("nz_gen_fe3d_device n = 1292", nz_gen_fe3d_device(ctx, &A, NULL, NULL, 1292,
                                                                         NZ_F32), A);
    expect_unsupported("nz_gen_random 2^31 rows", nz_gen_random(ctx, &A, rows, 10, 1.0, 1, NZ_F32), A);
    expect_unsupported("nz_gen_banded 2^31", nz_gen_banded(ctx, &A, rows, 1, 1, NZ_F32), A);
    expect_unsupported("nz_gen_mixed 2^31", nz_gen_mixed(ctx, &A, rows, 2, 0, 1, 1, NZ_F32), A);
    expect_unsupported("nz_gen_rail 2^31 cols", nz_gen_rail(ctx, &A, 2, rows, 4, 1, NZ_F32), A);
    const char *mm = "%%MatrixMarket matrix coordinate real general\n2147483648 2 1\n1 1 1\n";
    expect_unsupported("nz_mm_read_buffer 2^31 rows", nz_mm_read_buffer(ctx, &A, mm, strlen(mm), "huge", NZ_F32), A);
}

/* ---- more than 2^31 nonzeros ----------------------------------------------------------------- */

typedef struct fill_job {
    int64_t row_begin, row_end;
    int64_t *row_offsets;
    int32_t *col_indices;
    float *values;
} fill_job_t;

static inline int64_t huge_gap(void) { return HUGE_ROWS / HUGE_LEN; }
static inline int64_t huge_col(int64_t i, int k) { return (13 * i) % huge_gap() + (int64_t)k * huge_gap(); }
static inline float huge_val(int64_t i, int k) { return 1.0f + (float)((i + k) % 7) * 0.125f; }
static inline float huge_x(int64_t j) { return 1.0f + (float)(j % 5) * 0.25f; }

static void *fill_rows(void *arg) {
    fill_job_t *job = (fill_job_t *)arg;
    for (int64_t i = job->row_begin; i < job->row_end; i++) {
        int64_t base = i * HUGE_LEN;
        job->row_offsets[i + 1] = base + HUGE_LEN;
        for (int k = 0; k < HUGE_LEN; k++) {
            job->col_indices[base + k] = (int32_t)huge_col(i, k);
            job->values[base + k] = huge_val(i, k);
        }
    }
    return NULL;
}

static void test_huge_spmv(void) {
    const int64_t rows = HUGE_ROWS, nnz = HUGE_ROWS * HUGE_LEN;
    printf("huge: %lld x %lld, %lld nonzeros (2^31 = %lld), float\n", (long long)rows,
           (long long)rows, (long long)nnz, (long long)1 << 31);
    NZT_CHECK(nnz > ((int64_t)1 << 31), "the test matrix is not above 2^31 nonzeros");
    double t0 = now();
    int64_t *ro = (int64_t *)nzt_malloc((size_t)(rows + 1) * sizeof(int64_t));
    int32_t *ci = (int32_t *)nzt_malloc((size_t)nnz * sizeof(int32_t));
    float *v = (float *)nzt_malloc((size_t)nnz * sizeof(float));
    ro[0] = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cores < 1 ? 1 : (cores > 64 ? 64 : (int)cores);
    pthread_t th[64];
    fill_job_t jobs[64];
    for (int t = 0; t < threads; t++) {
        jobs[t].row_begin = rows * t / threads;
        jobs[t].row_end = rows * (t + 1) / threads;
        jobs[t].row_offsets = ro;
        jobs[t].col_indices = ci;
        jobs[t].values = v;
        if (pthread_create(&th[t], NULL, fill_rows, &jobs[t]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    double t_fill = now() - t0;

    nz_matrix_t *A = NULL, *dA = NULL;
    t0 = now();
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, rows, rows, NZ_I64, ro, ci, NZ_F32, v));
    double t_create = now() - t0;
    free(ro);
    free(ci);
    free(v);
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_CHECK(info.nnz == nnz, "host matrix has %lld nonzeros", (long long)info.nnz);

    float *x = (float *)nzt_malloc((size_t)rows * sizeof(float));
    float *y_cpu = (float *)nzt_malloc((size_t)rows * sizeof(float));
    float *y_gpu = (float *)nzt_malloc((size_t)rows * sizeof(float));
    for (int64_t j = 0; j < rows; j++) x[j] = huge_x(j);
    t0 = now();
    NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_PARALLEL, 1.0, x, 0.0, y_cpu));
    double t_cpu = now() - t0;
    /* the closed form on sampled rows (every 4099th row, the first and the last) */
    int64_t bad = 0, sampled = 0;
    for (int64_t step = 0; step <= rows / 4099 + 1; step++) {
        int64_t i = step * 4099 < rows ? step * 4099 : rows - 1;
        double s = 0;
        for (int k = 0; k < HUGE_LEN; k++) s += (double)huge_val(i, k) * (double)huge_x(huge_col(i, k));
        if ((double)y_cpu[i] != s) {
            if (bad++ < 5) fprintf(stderr, "row %lld: CPU %.9g, closed form %.9g\n", (long long)i, y_cpu[i], s);
        }
        sampled++;
    }
    NZT_CHECK(bad == 0, "CPU SpMV differs from the closed form on %lld of %lld sampled rows",
              (long long)bad, (long long)sampled);

    t0 = now();
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
    double t_upload = now() - t0;
    nz_matrix_info_t dinfo;
    NZT_OK(ctx, nz_matrix_info(ctx, &dinfo, dA));
    NZT_CHECK(dinfo.offset_type == NZ_I64, "device offsets are %d-byte for %lld nonzeros",
              (int)dinfo.offset_type, (long long)dinfo.nnz);
    void *dx = NULL, *dy = NULL;
    NZT_OK(ctx, nz_device_malloc(ctx, &dx, (size_t)rows * sizeof(float)));
    NZT_OK(ctx, nz_device_malloc(ctx, &dy, (size_t)rows * sizeof(float)));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dx, x, (size_t)rows * sizeof(float)));
    printf("  fill %.1f s (%d threads), create_csr %.1f s, CPU SpMV %.2f s, upload %.1f s "
           "(%.1f GB/s)\n", t_fill, threads, t_create, t_cpu, t_upload,
           (double)info.bytes / t_upload * 1e-9);

    nz_format_t f;
    nz_alg_t alg;
    int ran = 0;
    for (int i = 0; nz_spmv_list(&f, &alg, NZ_BACKEND_CUDA, i) == NZ_SUCCESS; i++) {
        if (f != NZ_FORMAT_CSR) continue;
        nz_spmv_plan_t *P = NULL;
        t0 = now();
        nz_status_t s = nz_spmv_plan_create(ctx, &P, dA, NZ_OP_N, alg, 0);
        double t_plan = now() - t0;
        if (s == NZ_ERR_UNSUPPORTED) {
            printf("  %-13s refused: %s\n", nz_alg_name(alg), nz_context_last_error(ctx));
            continue;
        }
        NZT_CHECK(s == NZ_SUCCESS, "%s plan: %d %s", nz_alg_name(alg), (int)s, nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        NZT_OK(ctx, nz_device_memset(ctx, dy, 0xff, (size_t)rows * sizeof(float))); /* NaN */
        NZT_OK(ctx, nz_spmv_execute(P, 1.0, dx, 0.0, dy)); /* warm-up */
        NZT_OK(ctx, nz_context_synchronize(ctx));
        t0 = now();
        NZT_OK(ctx, nz_spmv_execute(P, 1.0, dx, 0.0, dy));
        NZT_OK(ctx, nz_context_synchronize(ctx));
        double t_gpu = now() - t0;
        NZT_OK(ctx, nz_device_copy_to_host(ctx, y_gpu, dy, (size_t)rows * sizeof(float)));
        int64_t diff = 0, first = -1;
        for (int64_t r = 0; r < rows; r++)
            if (y_gpu[r] != y_cpu[r]) {
                if (first < 0) first = r;
                diff++;
            }
        NZT_CHECK(diff == 0, "%s: %lld rows differ from the CPU (first row %lld: %.9g vs %.9g)",
                  nz_alg_name(alg), (long long)diff, (long long)first,
                  first >= 0 ? y_gpu[first] : 0.0f, first >= 0 ? y_cpu[first] : 0.0f);
        printf("  %-13s plan %.3f s, SpMV %.2f ms (%.0f GB/s of matrix), %s\n", nz_alg_name(alg),
               t_plan, t_gpu * 1e3, (double)dinfo.bytes / t_gpu * 1e-9,
               diff == 0 ? "equal to the CPU on every row" : "WRONG");
        nz_spmv_plan_destroy(&P);
        ran++;
    }
    NZT_CHECK(ran > 0, "no CUDA CSR algorithm ran the 2^31-nonzero matrix");
    nz_alloc_stats_t st;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &st));
    printf("  peak device %.2f GiB, peak host RSS %.2f GiB, host matrix %.2f GiB\n",
           (double)st.peak_device_bytes / (1u << 30), peak_rss_gib(), (double)info.bytes / (1u << 30));
    nz_device_free(ctx, dx);
    nz_device_free(ctx, dy);
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
    free(x);
    free(y_cpu);
    free(y_gpu);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    ctx = nzt_gpu_context("");
    test_too_many_rows();
    const char *huge = getenv("NZ_TEST_HUGE");
    if (huge == NULL || strcmp(huge, "1") != 0) {
        nz_context_destroy(&ctx);
        if (nzt_failures > 0) return nzt_finish("gpu/test_huge");
        NZT_SKIP("the 2^31-nonzero SpMV runs only with NZ_TEST_HUGE=1 (~40 GB host, ~19 GB device); "
                 "the 2^31-row refusals passed");
    }
    test_huge_spmv();
    nz_context_destroy(&ctx);
    return nzt_finish("gpu/test_huge");
}
