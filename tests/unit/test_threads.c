/* test_threads.c: 4 host threads, one context each, mixed operations at once; results bitwise equal to a single-threaded run. */
#include "testutil.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/*
 * Each worker owns a context and runs a fixed list of operations: generators (Laplacian, random,
 * R-MAT, FE, mixed), conversion to every format, transpose, stats, SpMV for every CPU (format,
 * algorithm) pair in both operations, Matrix Market (plain and gzip) and binary write + read of
 * its own temporary files, CG, and a provoked error whose message must name this worker's
 * object. Every result is folded into an FNV-1a digest. The lists run first one after another
 * on the main thread (the reference), then on NZT_THREADS (4) threads released together by a
 * barrier, twice; every concurrent digest must equal its reference bitwise (all CPU kernels and
 * CG reductions used here are deterministic for a fixed OpenMP thread count, which each context
 * fixes). Workers alternate between 1 and 2 OpenMP threads so that OpenMP teams inside
 * concurrent host threads are exercised too. Finally one CPU plan is executed by 4 threads at
 * once into distinct y arrays (what the header allows), each result equal to a serial execute.
 */

#define NZT_THREADS 4

typedef struct worker {
    int id;
    const char *dir;
    uint64_t digest;
    int failures;
    char failure[256];
} worker_t;

static pthread_barrier_t start_line;

static uint64_t fold(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t fold_i64(uint64_t h, int64_t v) { return fold(h, &v, sizeof v); }

static uint64_t fold_matrix(nz_context_t *ctx, uint64_t h, const nz_matrix_t *A) {
    nz_matrix_info_t info;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    nz_matrix_info(ctx, &info, A);
    h = fold_i64(h, info.rows);
    h = fold_i64(h, info.cols);
    h = fold_i64(h, info.nnz);
    if (nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A) == NZ_SUCCESS) {
        h = fold(h, ro, (size_t)(info.rows + 1) * 8);
        h = fold(h, ci, (size_t)info.nnz * 4);
        h = fold(h, v, (size_t)info.nnz * (info.value_type == NZ_F32 ? 4 : 8));
    }
    return h;
}

/* Record a failure in the worker (threads must not share the test's global counters). */
#define WCHECK(w, cond, ...)                                                                    \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            if ((w)->failures++ == 0) snprintf((w)->failure, sizeof (w)->failure, __VA_ARGS__); \
        }                                                                                       \
    } while (0)
#define WOK(w, ctx, call)                                                                       \
    do {                                                                                        \
        nz_status_t s_ = (call);                                                                \
        WCHECK(w, s_ == NZ_SUCCESS, "%s: %d %s", #call, (int)s_, nz_context_last_error(ctx));   \
        if (s_ != NZ_SUCCESS) goto done;                                                        \
    } while (0)

/* SpMV in every CPU pair for both operations on matrix A (in every format it converts to). */
static uint64_t spmv_all(worker_t *w, nz_context_t *ctx, const nz_matrix_t *A, uint64_t h) {
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    int64_t len = (info.rows > info.cols ? info.rows : info.cols) + 1;
    size_t vs = info.value_type == NZ_F32 ? 4 : 8;
    void *x = nzt_malloc((size_t)len * vs), *y = nzt_malloc((size_t)len * vs);
    double *xd = (double *)nzt_malloc((size_t)len * sizeof(double));
    nzt_random_vector(xd, x, info.value_type, len, 1000u + (uint64_t)w->id);
    for (int f = 0; f < NZ_FORMAT_COUNT; f++) {
        nz_matrix_t *B = NULL, *T = NULL;
        nz_status_t s = nz_matrix_convert(ctx, &B, A, (nz_format_t)f, NULL);
        h = fold_i64(h, s);
        if (s != NZ_SUCCESS) continue;
        nz_matrix_stats_t st;
        WOK(w, ctx, nz_matrix_stats(ctx, &st, B));
        h = fold_i64(h, st.nnz);
        h = fold_i64(h, st.num_diagonals);
        h = fold_i64(h, st.lower_bandwidth);
        h = fold_i64(h, st.symmetric);
        WOK(w, ctx, nz_matrix_transpose(ctx, &T, B));
        h = fold_matrix(ctx, h, T);
        nz_matrix_destroy(&T);
        const nz_format_t lf = (nz_format_t)f;
        nz_alg_t algs[32];
        const int num_algs = nzt_spmv_algs(NZ_BACKEND_CPU, lf, algs, 32);
        for (int a = 0; a < num_algs; a++) {
            const nz_alg_t alg = algs[a];
            for (int op = 0; op < 2; op++) {
                nz_spmv_plan_t *P = NULL;
                if (nz_spmv_plan_create(ctx, &P, B, (nz_operation_t)op, alg, 0) != NZ_SUCCESS)
                    continue;
                int64_t out = op ? info.cols : info.rows;
                memset(y, 0, (size_t)len * vs);
                s = nz_spmv_execute(P, 1.0, x, 0.0, y);
                WCHECK(w, s == NZ_SUCCESS, "spmv %s/%s: %s", nz_format_name(lf), nz_alg_name(alg),
                       nz_context_last_error(ctx));
                s = nz_spmv_execute(P, -0.5, x, 0.25, y);
                h = fold(h, y, (size_t)out * vs);
                nz_spmv_plan_destroy(&P);
            }
        }
    done:
        nz_matrix_destroy(&T);
        nz_matrix_destroy(&B);
    }
    free(x);
    free(y);
    free(xd);
    return h;
}

static void *run_worker(void *arg) {
    worker_t *w = (worker_t *)arg;
    const int id = w->id;
    nz_context_t *ctx = NULL;
    nz_matrix_t *M[5] = {NULL, NULL, NULL, NULL, NULL};
    nz_matrix_t *R = NULL;
    void *b = NULL, *u = NULL;
    double *x = NULL;
    uint64_t h = 0xcbf29ce484222325ull;
    w->failures = 0;
    w->failure[0] = '\0';
    if (nz_context_create(&ctx) != NZ_SUCCESS) {
        w->failures = 1;
        snprintf(w->failure, sizeof w->failure, "nz_context_create failed");
        return NULL;
    }
    WOK(w, ctx, nz_context_set_threads(ctx, 1 + w->id % 2));
    pthread_barrier_wait(&start_line);
    nz_value_type_t vt = id % 2 ? NZ_F32 : NZ_F64;
    WOK(w, ctx, nz_gen_laplace3d(ctx, &M[0], 9 + id, 8, 7, vt));
    WOK(w, ctx, nz_gen_random(ctx, &M[1], 500 + 37 * id, 400, 5.0, 77u + (uint64_t)id, vt));
    WOK(w, ctx, nz_gen_rmat(ctx, &M[2], 9, 6, 0, 0, 0, 5u + (uint64_t)id, vt));
    WOK(w, ctx, nz_gen_mixed(ctx, &M[3], 400, 4, 3, 200, 9u + (uint64_t)id, vt));
    WOK(w, ctx, nz_gen_fe3d(ctx, &M[4], &b, &u, 7 + id % 2, NZ_F64));
    for (int i = 0; i < 5; i++) h = fold_matrix(ctx, h, M[i]);
    for (int i = 0; i < 4; i++) h = spmv_all(w, ctx, M[i], h);

    /* file round trips through this worker's own files */
    char path[512];
    static const char *const suffix[] = {"mtx", "mtx.gz", "nzb"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/w%d.%s", w->dir, id, suffix[i]);
        if (i == 2)
            WOK(w, ctx, nz_binary_write(ctx, path, M[1]));
        else
            WOK(w, ctx, nz_mm_write(ctx, path, M[1]));
        WOK(w, ctx, nz_matrix_read(ctx, &R, path, vt));
        h = fold_matrix(ctx, h, R);
        nz_matrix_destroy(&R);
        remove(path);
    }

    /* SpGEMM on the CPU: M[0] squared and M[1] times its transpose (issue 17: SpMV, SpGEMM and
     * CG from several threads, each with its own context, at once) */
    for (int g = 0; g < 2; g++) {
        nz_matrix_t *C = NULL, *T = NULL;
        nz_spgemm_options_t sopt;
        memset(&sopt, 0, sizeof sopt);
        sopt.alg = NZ_SPGEMM_CPU;
        if (g == 0) {
            WOK(w, ctx, nz_spgemm(ctx, &C, M[0], M[0], &sopt, NULL));
        } else {
            WOK(w, ctx, nz_matrix_transpose(ctx, &T, M[1]));
            WOK(w, ctx, nz_spgemm(ctx, &C, M[1], T, &sopt, NULL));
        }
        h = fold_matrix(ctx, h, C);
        nz_matrix_destroy(&C);
        nz_matrix_destroy(&T);
    }

    /* CG on the FE matrix, Jacobi, from x = 0 */
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, M[4]);
    x = (double *)calloc((size_t)info.rows, sizeof(double));
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = 1e-10;
    opt.precond = NZ_PRECOND_JACOBI;
    nz_cg_result_t res;
    WOK(w, ctx, nz_cg_solve(ctx, M[4], b, x, &opt, &res));
    h = fold(h, x, (size_t)info.rows * sizeof(double));
    h = fold_i64(h, res.iterations);

    /* the last-error message is per context: name something only this worker knows */
    char name[64];
    snprintf(name, sizeof name, "%s/no-such-file-of-worker-%d.mtx", w->dir, id);
    nz_status_t s = nz_mm_read(ctx, &R, name, vt);
    WCHECK(w, s == NZ_ERR_IO && strstr(nz_context_last_error(ctx), name) != NULL,
           "worker %d: error message \"%s\" does not name its own file", id,
           nz_context_last_error(ctx));
    h = fold_i64(h, s);
done:
    free(x);
    nz_free(ctx, b);
    nz_free(ctx, u);
    nz_matrix_destroy(&R);
    for (int i = 0; i < 5; i++) nz_matrix_destroy(&M[i]);
    nz_alloc_stats_t st;
    nz_context_alloc_stats(ctx, &st);
    WCHECK(w, st.live_blocks == 0, "worker %d: %lld blocks leak", id, (long long)st.live_blocks);
    nz_context_destroy(&ctx);
    w->digest = h;
    return NULL;
}

/* ---- one CPU plan, executed by several threads at once (distinct y) ------------------------ */

typedef struct shared_exec {
    nz_spmv_plan_t *plan;
    const double *x;
    double *y;
    nz_status_t status;
} shared_exec_t;

static void *execute_shared(void *arg) {
    shared_exec_t *e = (shared_exec_t *)arg;
    pthread_barrier_wait(&start_line);
    e->status = NZ_SUCCESS;
    for (int rep = 0; rep < 20 && e->status == NZ_SUCCESS; rep++)
        e->status = nz_spmv_execute(e->plan, 1.0, e->x, 0.0, e->y);
    return NULL;
}

static void test_shared_plan(void) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    NZT_OK(ctx, nz_gen_random(ctx, &A, 3000, 2000, 8.0, 31, NZ_F64));
    double *x = (double *)nzt_malloc(3000 * sizeof(double));
    double *y_ref = (double *)nzt_malloc(3000 * sizeof(double));
    for (int j = 0; j < 3000; j++) x[j] = 1.0 / (1 + j % 11);
    for (int op = 0; op < 2; op++) {
        nz_spmv_plan_t *P = NULL;
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &P, A, (nz_operation_t)op, NZ_ALG_PARALLEL, 0));
        NZT_OK(ctx, nz_spmv_execute(P, 1.0, x, 0.0, y_ref));
        int64_t len = op ? 2000 : 3000;
        shared_exec_t e[NZT_THREADS];
        pthread_t th[NZT_THREADS];
        pthread_barrier_init(&start_line, NULL, NZT_THREADS);
        for (int i = 0; i < NZT_THREADS; i++) {
            e[i].plan = P;
            e[i].x = x;
            e[i].y = (double *)nzt_malloc(3000 * sizeof(double));
            if (pthread_create(&th[i], NULL, execute_shared, &e[i]) != 0) exit(1);
        }
        for (int i = 0; i < NZT_THREADS; i++) pthread_join(th[i], NULL);
        pthread_barrier_destroy(&start_line);
        for (int i = 0; i < NZT_THREADS; i++) {
            NZT_CHECK(e[i].status == NZ_SUCCESS, "shared plan op %d thread %d: %d", op, i,
                      (int)e[i].status);
            NZT_CHECK(memcmp(e[i].y, y_ref, (size_t)len * sizeof(double)) == 0,
                      "shared plan op %d thread %d: result differs", op, i);
            free(e[i].y);
        }
        nz_spmv_plan_destroy(&P);
    }
    free(x);
    free(y_ref);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    char dir[] = "/tmp/nz_threads_XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    worker_t ref[NZT_THREADS], par[NZT_THREADS];
    /* reference: one list after another on this thread */
    pthread_barrier_init(&start_line, NULL, 1);
    for (int i = 0; i < NZT_THREADS; i++) {
        memset(&ref[i], 0, sizeof ref[i]);
        ref[i].id = i;
        ref[i].dir = dir;
        run_worker(&ref[i]);
        NZT_CHECK(ref[i].failures == 0, "reference worker %d: %s", i, ref[i].failure);
    }
    pthread_barrier_destroy(&start_line);
    for (int round = 0; round < 2; round++) {
        pthread_t th[NZT_THREADS];
        pthread_barrier_init(&start_line, NULL, NZT_THREADS);
        for (int i = 0; i < NZT_THREADS; i++) {
            memset(&par[i], 0, sizeof par[i]);
            par[i].id = i;
            par[i].dir = dir;
            if (pthread_create(&th[i], NULL, run_worker, &par[i]) != 0) {
                fprintf(stderr, "pthread_create failed\n");
                return 1;
            }
        }
        for (int i = 0; i < NZT_THREADS; i++) pthread_join(th[i], NULL);
        pthread_barrier_destroy(&start_line);
        for (int i = 0; i < NZT_THREADS; i++) {
            NZT_CHECK(par[i].failures == 0, "round %d worker %d: %s", round, i, par[i].failure);
            NZT_CHECK(par[i].digest == ref[i].digest,
                      "round %d worker %d: digest %016llx differs from the single-threaded %016llx",
                      round, i, (unsigned long long)par[i].digest, (unsigned long long)ref[i].digest);
        }
    }
    test_shared_plan();
    rmdir(dir);
    printf("threads: %d workers x 2 rounds, digests equal to the single-threaded run\n", NZT_THREADS);
    return nzt_finish("test_threads");
}
