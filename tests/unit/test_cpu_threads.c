/* test_cpu_threads.c: thread counts are clamped to the machine, small work runs serial, and the process never dies for threads. */
#include "testutil.h"
#include "../../src/cpu/cpu_kernels.h"
#include "../../src/plan/plan_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Issue 36:
 * - nz_context_set_threads(ctx, 1024) is clamped to the online CPUs and nz_context_get_threads
 *   reads the clamped count back;
 * - in a child process under an address-space limit (RLIMIT_AS) that 1024 threads' stacks cannot
 *   fit but the clamped team can, parallel SpMV (CSR, COO, SELL), SpMM and SpGEMM (its own
 *   options.threads = 1024 too) with 1024 threads asked for finish: libgomp used to print
 *   "Thread creation failed" and exit the process;
 * - small work: the kernels' team is one thread below NZI_CPU_SERIAL_WORK (and the planner's
 *   cpu_serial_nnz is the same number), AUTO and TUNE plans of a small matrix are serial, and the
 *   parallel algorithm with 2 threads gives bitwise the serial result on small and large matrices.
 */

static long online(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > NZ_MAX_THREADS ? NZ_MAX_THREADS : n;
}

static void test_clamp(nz_context_t *ctx) {
    int got = -1;
    NZT_OK(ctx, nz_context_set_threads(ctx, 1024));
    NZT_OK(ctx, nz_context_get_threads(ctx, &got));
#ifdef _OPENMP
    NZT_CHECK(got == (int)online(), "1024 threads read back as %d, online CPUs %ld", got, online());
#else
    NZT_CHECK(got == 1, "without OpenMP: %d threads", got);
#endif
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    NZT_OK(ctx, nz_context_get_threads(ctx, &got));
    NZT_CHECK(got == 1, "1 thread read back as %d", got);
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    NZT_OK(ctx, nz_context_get_threads(ctx, &got));
    NZT_CHECK(got >= 1 && got <= online(), "the default read back as %d", got);
    NZT_CHECK(nz_context_set_threads(ctx, NZ_MAX_THREADS + 1) == NZ_ERR_INVALID_ARGUMENT,
              "NZ_MAX_THREADS + 1 accepted");
    NZT_CHECK(nz_context_get_threads(ctx, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL out accepted");
    NZT_CHECK(nz_context_get_threads(NULL, &got) == NZ_ERR_NULL_ARGUMENT, "NULL ctx accepted");
    /* every kernel team is within the limit, whatever is asked for */
    NZT_CHECK(nzi_cpu_team(1, 1024, 1e9) <= online(), "a team of %d", nzi_cpu_team(1, 1024, 1e9));
    NZT_CHECK(nzi_cpu_team(1, 0, 1e9) <= online(), "a default team of %d", nzi_cpu_team(1, 0, 1e9));
}

/* The child: everything parallel with 1024 threads asked for, under the address-space limit.
 * Exit 0 when every call succeeded. */
static int child_work(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *C = NULL, *S = NULL;
    nz_spmm_plan_t *mm = NULL;
    int failed = 0;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 10;
    if (nz_context_set_threads(ctx, 1024) != NZ_SUCCESS) return 11;
    if (nz_gen_laplace2d(ctx, &A, 200, 200, NZ_F64) != NZ_SUCCESS) return 12; /* 199200 nnz */
    const int64_t n = 200 * 200;
    double *x = malloc((size_t)n * 8 * 4), *y = malloc((size_t)n * 8 * 4);
    if (x == NULL || y == NULL) return 13;
    for (int64_t i = 0; i < n * 4; i++) x[i] = 1.0 + (double)(i % 5);
    failed |= nz_spmv(ctx, A, NZ_ALG_PARALLEL, 1.0, x, 0.0, y) != NZ_SUCCESS;
    failed |= nz_matrix_convert(ctx, &C, A, NZ_FORMAT_COO, NULL) != NZ_SUCCESS;
    if (C != NULL) failed |= nz_spmv(ctx, C, NZ_ALG_PARALLEL, 1.0, x, 0.0, y) != NZ_SUCCESS;
    failed |= nz_matrix_convert(ctx, &S, A, NZ_FORMAT_SELL, NULL) != NZ_SUCCESS;
    if (S != NULL) failed |= nz_spmv(ctx, S, NZ_ALG_PARALLEL, 1.0, x, 0.0, y) != NZ_SUCCESS;
    failed |= nz_spmm_plan_create(ctx, &mm, A, NZ_OP_N, 4, NZ_ROW_MAJOR, NZ_ALG_PARALLEL, 0) !=
              NZ_SUCCESS;
    if (mm != NULL) failed |= nz_spmm_execute(mm, 1.0, x, 4, 0.0, y, 4) != NZ_SUCCESS;
    nz_spmm_plan_destroy(&mm);
    /* SpGEMM with its own thread count, and with the context's */
    nz_spgemm_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.alg = NZ_SPGEMM_CPU;
    for (int own = 0; own < 2; own++) {
        nz_matrix_t *P = NULL;
        opt.threads = own ? 1024 : 0;
        failed |= nz_spgemm(ctx, &P, A, A, &opt, NULL) != NZ_SUCCESS;
        nz_matrix_destroy(&P);
    }
    nz_matrix_destroy(&S);
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    free(x);
    free(y);
    return failed ? 20 : 0;
}

/* Virtual memory of this process now (bytes), from /proc/self/statm; 0 if unknown. */
static size_t vm_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f == NULL) return 0;
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

static void test_address_space_limit(void) {
#if defined(__SANITIZE_ADDRESS__)
    printf("address-space limit: skipped (AddressSanitizer reserves terabytes of shadow)\n");
    return;
#else
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
    printf("address-space limit: skipped (AddressSanitizer reserves terabytes of shadow)\n");
    return;
#endif
#endif
#ifndef _OPENMP
    printf("address-space limit: skipped (no OpenMP)\n");
    return;
#endif
    if (online() > 64) {
        printf("address-space limit: skipped (%ld CPUs: the clamped team itself needs the space)\n",
               online());
        return;
    }
    const size_t vm = vm_bytes();
    if (vm == 0) {
        printf("address-space limit: skipped (no /proc/self/statm)\n");
        return;
    }
    /* 512 MB beyond what the process maps now: the clamped team's stacks (8 MB each by default)
     * and malloc arenas fit; 1024 threads' stacks (8 GB, or 2 GB at 2 MB each) do not */
    const size_t limit = vm + ((size_t)512 << 20);
    fflush(stdout);
    pid_t pid = fork();
    NZT_CHECK(pid >= 0, "fork failed");
    if (pid < 0) return;
    if (pid == 0) {
        struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
        if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(30);
        _exit(child_work());
    }
    int status = 0;
    NZT_CHECK(waitpid(pid, &status, 0) == pid, "waitpid failed");
    NZT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "with 1024 threads asked for under RLIMIT_AS = %zu MB the child %s %d (10-13: "
              "setup, 20: a call failed, 1: libgomp could not create the threads and exited)",
              limit >> 20, WIFEXITED(status) ? "exited with" : "died of signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    printf("address-space limit: %zu MB, 1024 threads asked for, child exit %d\n", limit >> 20,
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
#endif
}

/* One SpMV through a plan with the algorithm given; returns the plan's algorithm. */
static nz_alg_t spmv_with(nz_context_t *ctx, const nz_matrix_t *A, nz_alg_t alg, unsigned flags,
                          const double *x, double *y) {
    nz_spmv_plan_t *plan = NULL;
    nz_spmv_plan_info_t info;
    memset(&info, 0, sizeof info);
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, A, NZ_OP_N, alg, flags));
    if (plan == NULL) return NZ_ALG_AUTO;
    NZT_OK(ctx, nz_spmv_execute(plan, 1.5, x, 0.0, y));
    NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
    nz_spmv_plan_destroy(&plan);
    return info.alg;
}

static void test_small_work(nz_context_t *ctx) {
    NZT_CHECK(nzi_plan_thresholds.cpu_serial_nnz == NZI_CPU_SERIAL_WORK,
              "planner cpu_serial_nnz %g != kernel threshold %g",
              nzi_plan_thresholds.cpu_serial_nnz, NZI_CPU_SERIAL_WORK);
    NZT_CHECK(nzi_cpu_team(1, 2, NZI_CPU_SERIAL_WORK - 1) == 1, "a team for small work");
    NZT_CHECK(nzi_cpu_team(0, 2, 1e9) == 1, "a team for a serial plan");
#ifdef _OPENMP
    if (online() >= 2)
        NZT_CHECK(nzi_cpu_team(1, 2, NZI_CPU_SERIAL_WORK) == 2, "no team at the threshold");
#endif
    NZT_OK(ctx, nz_context_set_threads(ctx, 2));
    /* 60 x 60 Laplacian: 17760 nonzeros, above the old 4096 cut (parallel then), below 32768 */
    const int sides[] = {60, 120};
    for (int s = 0; s < 2; s++) {
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, sides[s], sides[s], NZ_F64));
        nz_matrix_info_t mi;
        NZT_OK(ctx, nz_matrix_info(ctx, &mi, A));
        const int64_t n = mi.rows;
        const bool small = (double)mi.nnz < NZI_CPU_SERIAL_WORK;
        double *x = nzt_malloc((size_t)n * 8), *ys = nzt_malloc((size_t)n * 8),
               *yp = nzt_malloc((size_t)n * 8);
        nzt_random_vector(x, NULL, NZ_F64, n, nzt_seed + (uint64_t)s);
        const nz_alg_t chosen = spmv_with(ctx, A, NZ_ALG_AUTO, 0, x, yp);
        const nz_alg_t tuned = spmv_with(ctx, A, NZ_ALG_AUTO, NZ_PLAN_TUNE, x, yp);
        if (small) {
            NZT_CHECK(chosen == NZ_ALG_SERIAL, "%lld nonzeros: AUTO chose %s", (long long)mi.nnz,
                      nz_alg_name(chosen));
            NZT_CHECK(tuned == NZ_ALG_SERIAL, "%lld nonzeros: TUNE chose %s", (long long)mi.nnz,
                      nz_alg_name(tuned));
        } else {
            NZT_CHECK(chosen == NZ_ALG_PARALLEL, "%lld nonzeros: AUTO chose %s",
                      (long long)mi.nnz, nz_alg_name(chosen));
        }
        /* bitwise: parallel with 2 threads against serial, every CPU format */
        const nz_format_t formats[] = {NZ_FORMAT_CSR, NZ_FORMAT_COO, NZ_FORMAT_ELL,
                                       NZ_FORMAT_SELL, NZ_FORMAT_HYB, NZ_FORMAT_BSR,
                                       NZ_FORMAT_DIA};
        spmv_with(ctx, A, NZ_ALG_SERIAL, 0, x, ys);
        for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
            nz_matrix_t *B = NULL;
            NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, formats[f], NULL));
            if (B == NULL) continue;
            for (int64_t i = 0; i < n; i++) yp[i] = -1.0;
            spmv_with(ctx, B, NZ_ALG_PARALLEL, 0, x, yp);
            NZT_CHECK(memcmp(ys, yp, (size_t)n * 8) == 0,
                      "%s, %lld nonzeros: parallel on 2 threads differs from serial",
                      nz_format_name(formats[f]), (long long)mi.nnz);
            nz_matrix_destroy(&B);
        }
        /* SpMM: AUTO serial below nnz x k = threshold, parallel bitwise equal */
        const int64_t k = 2;
        double *X = nzt_malloc((size_t)(n * k) * 8), *Ys = nzt_malloc((size_t)(n * k) * 8),
               *Yp = nzt_malloc((size_t)(n * k) * 8);
        for (int64_t i = 0; i < n * k; i++) X[i] = x[i % n] * (double)(1 + i / n);
        nz_spmm_plan_t *mm = NULL;
        nz_spmm_plan_info_t info;
        NZT_OK(ctx, nz_spmm_plan_create(ctx, &mm, A, NZ_OP_N, k, NZ_COL_MAJOR, NZ_ALG_AUTO, 0));
        NZT_OK(ctx, nz_spmm_plan_info(mm, &info));
        NZT_CHECK(info.alg == ((double)mi.nnz * k < NZI_CPU_SERIAL_WORK ? NZ_ALG_SERIAL
                                                                         : NZ_ALG_PARALLEL),
                  "SpMM k = 2, %lld nonzeros: AUTO chose %s", (long long)mi.nnz,
                  nz_alg_name(info.alg));
        nz_spmm_plan_destroy(&mm);
        const nz_alg_t algs[] = {NZ_ALG_SERIAL, NZ_ALG_PARALLEL};
        for (int a = 0; a < 2; a++) {
            NZT_OK(ctx, nz_spmm_plan_create(ctx, &mm, A, NZ_OP_N, k, NZ_COL_MAJOR, algs[a], 0));
            NZT_OK(ctx, nz_spmm_execute(mm, 1.5, X, n, 0.0, a ? Yp : Ys, n));
            nz_spmm_plan_destroy(&mm);
        }
        NZT_CHECK(memcmp(Ys, Yp, (size_t)(n * k) * 8) == 0,
                  "SpMM %lld nonzeros: parallel on 2 threads differs from serial",
                  (long long)mi.nnz);
        free(X);
        free(Ys);
        free(Yp);
        free(x);
        free(ys);
        free(yp);
        nz_matrix_destroy(&A);
    }
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    /* first, before this process starts any OpenMP team (the child inherits none) */
    test_address_space_limit();
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    test_clamp(ctx);
    test_small_work(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_cpu_threads");
}
