/* cpu_serial_threshold.c: measure where one thread beats an OpenMP team for the CPU SpMV / SpMM loops.
 *
 * Build (not part of the CMake build; needs only a C compiler with OpenMP):
 *   cc -O2 -fopenmp scripts/cpu_serial_threshold.c -o /tmp/cpu_serial_threshold
 * Run:   /tmp/cpu_serial_threshold [threads] [k]
 * and again with every core busy, e.g. (bash, 2 cores):
 *   for i in 1 2; do (while :; do :; done) & done; /tmp/cpu_serial_threshold; kill %1 %2
 *
 * For 5-point Laplacians of growing size (nonzeros from ~100 to ~1M) it times the row loop of
 * the library's CSR kernels (src/cpu/spmv_csr.c, src/cpu/spmm_cpu.c: one dot product per row,
 * static schedule) on one thread and as an OpenMP `parallel for` of `threads` threads, and prints
 * the median and the 90th percentile of many runs (the tail is what a loaded machine hurts: a
 * team waits for its slowest thread). docs/PLANNER.md records the numbers and the threshold
 * (NZI_CPU_SERIAL_WORK in src/cpu/cpu_kernels.h) chosen from them. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct csr {
    int64_t rows;
    int64_t *row_offsets;
    int32_t *col_indices;
    double *values;
} csr_t;

/* 5-point Laplacian on an m x m grid */
static csr_t laplacian(int64_t m) {
    csr_t A;
    A.rows = m * m;
    A.row_offsets = malloc((size_t)(A.rows + 1) * sizeof(int64_t));
    A.col_indices = malloc((size_t)A.rows * 5 * sizeof(int32_t));
    A.values = malloc((size_t)A.rows * 5 * sizeof(double));
    int64_t p = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++) {
            int64_t r = i * m + j;
            A.row_offsets[r] = p;
            if (i > 0) { A.col_indices[p] = (int32_t)(r - m); A.values[p++] = -1; }
            if (j > 0) { A.col_indices[p] = (int32_t)(r - 1); A.values[p++] = -1; }
            A.col_indices[p] = (int32_t)r; A.values[p++] = 4;
            if (j < m - 1) { A.col_indices[p] = (int32_t)(r + 1); A.values[p++] = -1; }
            if (i < m - 1) { A.col_indices[p] = (int32_t)(r + m); A.values[p++] = -1; }
        }
    A.row_offsets[A.rows] = p;
    return A;
}

/* the SpMM row loop of spmm_cpu.c for row-major X / Y (k columns), team of `threads` (1: no
 * OpenMP region at all, as the kernels' if clause gives) */
static void spmm(const csr_t *A, int64_t k, const double *X, double *Y, int threads) {
#pragma omp parallel for schedule(static) if (threads > 1) num_threads(threads)
    for (int64_t i = 0; i < A->rows; i++) {
        double sums[64];
        for (int64_t c = 0; c < k; c++) sums[c] = 0;
        for (int64_t p = A->row_offsets[i]; p < A->row_offsets[i + 1]; p++) {
            const double a = A->values[p];
            const double *x = X + (int64_t)A->col_indices[p] * k;
            for (int64_t c = 0; c < k; c++) sums[c] += a * x[c];
        }
        for (int64_t c = 0; c < k; c++) Y[i * k + c] = sums[c];
    }
}

/* median and 90th percentile of `runs` timings (after a warm-up) */
static void time_it(const csr_t *A, int64_t k, const double *X, double *Y, int threads, int runs,
                    double *median, double *p90) {
    double *t = malloc((size_t)runs * sizeof *t);
    spmm(A, k, X, Y, threads);
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        spmm(A, k, X, Y, threads);
        t[r] = now() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, compare);
    *median = t[runs / 2];
    *p90 = t[(runs * 9) / 10];
    free(t);
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : omp_get_num_procs();
    int64_t k = argc > 2 ? atoll(argv[2]) : 1;
    if (threads < 2 || k < 1 || k > 64) {
        fprintf(stderr, "usage: %s [threads >= 2] [k 1..64]\n", argv[0]);
        return 2;
    }
    const int64_t sides[] = {5, 8, 12, 16, 23, 32, 45, 64, 90, 128, 181, 256, 362, 448};
    printf("# threads %d, k %lld; times in microseconds: serial median / p90, team median / p90\n",
           threads, (long long)k);
    printf("%10s %12s %10s %10s %10s %10s %8s\n", "nnz", "nnz*k", "ser_med", "ser_p90",
           "par_med", "par_p90", "par/ser");
    for (size_t s = 0; s < sizeof sides / sizeof sides[0]; s++) {
        csr_t A = laplacian(sides[s]);
        const int64_t nnz = A.row_offsets[A.rows];
        double *X = malloc((size_t)(A.rows * k) * sizeof(double));
        double *Y = malloc((size_t)(A.rows * k) * sizeof(double));
        for (int64_t i = 0; i < A.rows * k; i++) X[i] = 1.0 + (double)(i % 7);
        /* about 0.2 s per point, at least 21 runs */
        double probe = now();
        spmm(&A, k, X, Y, 1);
        probe = now() - probe;
        int runs = (int)(0.1 / (probe > 1e-7 ? probe : 1e-7));
        if (runs < 21) runs = 21;
        if (runs > 20001) runs = 20001;
        double sm, sp, pm, pp;
        time_it(&A, k, X, Y, 1, runs, &sm, &sp);
        time_it(&A, k, X, Y, threads, runs, &pm, &pp);
        printf("%10lld %12lld %10.2f %10.2f %10.2f %10.2f %8.2f\n", (long long)nnz,
               (long long)(nnz * k), 1e6 * sm, 1e6 * sp, 1e6 * pm, 1e6 * pp, pm / sm);
        free(X);
        free(Y);
        free(A.row_offsets);
        free(A.col_indices);
        free(A.values);
    }
    return 0;
}
