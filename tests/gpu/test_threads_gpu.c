/* test_threads_gpu.c: several host threads, each with its own context bound to device 0, run
 * SpMV, SpGEMM and CG on the GPU at once; every result must equal the same thread's serial run
 * (issue 17, thread safety). Skips (77) without a device. */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#define WORKERS 4

typedef struct worker {
    int id;
    int failures;
    char message[512];
    double spmv_sum, cg_x_sum;
    int64_t spgemm_nnz, cg_iterations;
    double spgemm_sum;
} worker_t;

static pthread_barrier_t start_line;
static int use_barrier;

#define WOK(w, ctx, call)                                                                       \
    do {                                                                                        \
        nz_status_t s_ = (call);                                                                \
        if (s_ != NZ_SUCCESS) {                                                                 \
            snprintf((w)->message, sizeof (w)->message, "worker %d: %s: %d %s", (w)->id, #call,  \
                     (int)s_, nz_context_last_error(ctx));                                      \
            (w)->failures++;                                                                    \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

static void *run(void *arg) {
    worker_t *w = (worker_t *)arg;
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *dA = NULL, *C = NULL, *hC = NULL;
    void *dx = NULL, *dy = NULL, *db = NULL;
    double *x = NULL, *y = NULL;
    if (use_barrier) pthread_barrier_wait(&start_line);
    WOK(w, ctx, nz_context_create(&ctx));
    WOK(w, ctx, nz_context_set_device(ctx, 0, NULL));
    const int64_t n = 24 + 2 * w->id; /* each worker its own problem */
    const int64_t rows = n * n * n;
    WOK(w, ctx, nz_gen_laplace3d(ctx, &A, n, n, n, NZ_F64));
    WOK(w, ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
    x = (double *)malloc((size_t)rows * sizeof *x);
    y = (double *)malloc((size_t)rows * sizeof *y);
    for (int64_t i = 0; i < rows; i++) x[i] = 1.0 + (double)(i % 7) / 8.0;
    const size_t bytes = (size_t)rows * sizeof(double);
    WOK(w, ctx, nz_device_malloc(ctx, &dx, bytes));
    WOK(w, ctx, nz_device_malloc(ctx, &dy, bytes));
    WOK(w, ctx, nz_device_malloc(ctx, &db, bytes));
    WOK(w, ctx, nz_device_copy_from_host(ctx, dx, x, bytes));
    /* SpMV (values and x are multiples of 1/8: every sum is exact, any order) */
    for (int rep = 0; rep < 10; rep++) WOK(w, ctx, nz_spmv(ctx, dA, NZ_ALG_AUTO, 1.0, dx, 0.0, dy));
    WOK(w, ctx, nz_device_copy_to_host(ctx, y, dy, bytes));
    w->spmv_sum = 0;
    for (int64_t i = 0; i < rows; i++) w->spmv_sum += y[i];
    /* the aliasing refusal on device pointers */
    if (nz_spmv(ctx, dA, NZ_ALG_AUTO, 1.0, dx, 0.0, dx) != NZ_ERR_INVALID_ARGUMENT) {
        snprintf(w->message, sizeof w->message, "worker %d: device x == y not refused", w->id);
        w->failures++;
    }
    /* SpGEMM A * A on the device (device operands, device C) */
    nz_spgemm_options_t sopt;
    memset(&sopt, 0, sizeof sopt);
    sopt.alg = NZ_SPGEMM_HASH;
    WOK(w, ctx, nz_spgemm(ctx, &C, dA, dA, &sopt, NULL));
    WOK(w, ctx, nz_matrix_to_host(ctx, &hC, C));
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, hC);
    w->spgemm_nnz = info.nnz;
    const void *values = NULL;
    nz_matrix_csr_arrays(ctx, NULL, NULL, &values, hC);
    w->spgemm_sum = 0;
    for (int64_t k = 0; k < info.nnz; k++) w->spgemm_sum += ((const double *)values)[k];
    /* CG with b = y (= A x), from 0 */
    WOK(w, ctx, nz_device_copy_from_host(ctx, db, y, bytes));
    WOK(w, ctx, nz_device_memset(ctx, dx, 0, bytes));
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = 1e-10;
    opt.precond = NZ_PRECOND_JACOBI;
    nz_cg_result_t res;
    WOK(w, ctx, nz_cg_solve(ctx, dA, db, dx, &opt, &res));
    WOK(w, ctx, nz_device_copy_to_host(ctx, y, dx, bytes));
    w->cg_iterations = res.iterations;
    w->cg_x_sum = 0;
    for (int64_t i = 0; i < rows; i++) w->cg_x_sum += y[i];
done:
    free(x);
    free(y);
    if (ctx != NULL) {
        nz_device_free(ctx, dx);
        nz_device_free(ctx, dy);
        nz_device_free(ctx, db);
    }
    nz_matrix_destroy(&hC);
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return NULL;
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    if (nz_device_count() == 0) NZT_SKIP("no CUDA device");
    worker_t ref[WORKERS], par[WORKERS];
    /* serial reference: one worker after the other */
    for (int i = 0; i < WORKERS; i++) {
        memset(&ref[i], 0, sizeof ref[i]);
        ref[i].id = i;
        run(&ref[i]);
        NZT_CHECK(ref[i].failures == 0, "serial %s", ref[i].message);
    }
    for (int round = 0; round < 3; round++) {
        pthread_t th[WORKERS];
        use_barrier = 1;
        pthread_barrier_init(&start_line, NULL, WORKERS);
        for (int i = 0; i < WORKERS; i++) {
            memset(&par[i], 0, sizeof par[i]);
            par[i].id = i;
            if (pthread_create(&th[i], NULL, run, &par[i]) != 0) exit(1);
        }
        for (int i = 0; i < WORKERS; i++) pthread_join(th[i], NULL);
        pthread_barrier_destroy(&start_line);
        use_barrier = 0;
        for (int i = 0; i < WORKERS; i++) {
            NZT_CHECK(par[i].failures == 0, "round %d: %s", round, par[i].message);
            NZT_CHECK(par[i].spmv_sum == ref[i].spmv_sum, "round %d worker %d: spmv %.17g vs %.17g",
                      round, i, par[i].spmv_sum, ref[i].spmv_sum);
            NZT_CHECK(par[i].spgemm_nnz == ref[i].spgemm_nnz &&
                          par[i].spgemm_sum == ref[i].spgemm_sum,
                      "round %d worker %d: spgemm differs", round, i);
            /* CG dots are bitwise reproducible run to run (nonzero.h) */
            NZT_CHECK(par[i].cg_iterations == ref[i].cg_iterations &&
                          par[i].cg_x_sum == ref[i].cg_x_sum,
                      "round %d worker %d: cg %lld its %.17g vs %lld its %.17g", round, i,
                      (long long)par[i].cg_iterations, par[i].cg_x_sum,
                      (long long)ref[i].cg_iterations, ref[i].cg_x_sum);
        }
    }
    printf("threads_gpu: %d workers x 3 rounds, each its own context on device 0: equal to serial\n",
           WORKERS);
    return nzt_finish("test_threads_gpu");
}
