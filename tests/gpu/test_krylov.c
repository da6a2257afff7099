/* test_krylov.c (gpu): nz_solve's BiCGSTAB, GMRES, FGMRES and MINRES on device matrices against the CPU: status, true residual, iterations, bitwise repeats, callbacks, refusals, allocation failures. */
#include "testutil.h"
#include "nzi.h"

#include <math.h>
#include <string.h>

/* ||b - A x|| / ||b|| in double from a host CSR A (b, x of A's value type). */
static double host_relres(nz_context_t *ctx, const nz_matrix_t *A, const void *b, const void *x) {
    nz_matrix_info_t info;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A));
    const nz_value_type_t vt = info.value_type;
    double rr = 0, bb = 0;
    for (int64_t i = 0; i < info.rows; i++) {
        double r = nzi_get(b, vt, i);
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) r -= nzi_get(v, vt, k) * nzi_get(x, vt, ci[k]);
        rr += r * r;
        bb += nzi_get(b, vt, i) * nzi_get(b, vt, i);
    }
    return sqrt(rr / bb);
}

static const char *precond_name(nz_precond_t p) {
    switch (p) {
    case NZ_PRECOND_NONE: return "none";
    case NZ_PRECOND_JACOBI: return "jacobi";
    case NZ_PRECOND_L1_JACOBI: return "l1-jacobi";
    case NZ_PRECOND_USER: return "user";
    default: return "other";
    }
}

/* A problem on both sides: the host matrix and its device copy, b on the host and the device,
 * a device x. */
typedef struct problem {
    const char *name;
    nz_matrix_t *A, *dA;
    nz_value_type_t vt;
    int64_t n;
    size_t bytes;
    void *b, *db, *dx;
    int spd;
} problem_t;

static void problem_open(nz_context_t *ctx, problem_t *p, const char *name, nz_matrix_t *A,
                         nz_value_type_t vt, int spd, uint64_t seed) {
    nz_matrix_info_t info;
    memset(p, 0, sizeof *p);
    p->name = name;
    p->A = A;
    p->vt = vt;
    p->spd = spd;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    p->n = info.rows;
    p->bytes = (size_t)p->n * nzi_value_size(vt);
    double *bd = (double *)nzt_malloc((size_t)p->n * sizeof(double));
    p->b = nzt_malloc(p->bytes);
    nzt_random_vector(bd, p->b, vt, p->n, seed);
    free(bd);
    NZT_OK(ctx, nz_matrix_to_device(ctx, &p->dA, A, NZ_INDEX_AUTO));
    NZT_OK(ctx, nz_device_malloc(ctx, &p->db, p->bytes));
    NZT_OK(ctx, nz_device_malloc(ctx, &p->dx, p->bytes));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, p->db, p->b, p->bytes));
}

static void problem_close(nz_context_t *ctx, problem_t *p) {
    nz_device_free(ctx, p->db);
    nz_device_free(ctx, p->dx);
    nz_matrix_destroy(&p->dA);
    nz_matrix_destroy(&p->A);
    free(p->b);
}

/* The message of the last gpu_solve (the copies after it clear the context's). */
static char gpu_message[512];

/* x = 0 on the device (x is the initial guess), the solve, x downloaded into x_host. */
static nz_status_t gpu_solve(nz_context_t *ctx, problem_t *p, const nz_solve_options_t *opt,
                             nz_solve_result_t *res, void *x_host) {
    NZT_OK(ctx, nz_device_memset(ctx, p->dx, 0, p->bytes));
    nz_status_t st = nz_solve(ctx, p->dA, p->db, p->dx, opt, res);
    snprintf(gpu_message, sizeof gpu_message, "%s", nz_context_last_error(ctx));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, x_host, p->dx, p->bytes));
    return st;
}

/* The solves' rtol, and the bound on the true relative residual recomputed here in double: f32
 * solves at half the bound, because the solver's own residual is computed in float (b - A x
 * rounded entrywise) and may sit a few percent below the exact one of the same x. */
static double solve_rtol(nz_value_type_t vt) { return vt == NZ_F32 ? 5e-5 : 1e-8; }
static double check_tol(nz_value_type_t vt) { return vt == NZ_F32 ? 1e-4 : 1.001e-8; }

static int iterations_close(int64_t gpu, int64_t cpu) {
    const int64_t slack = cpu / 10 > 2 ? cpu / 10 : 2;
    return llabs((long long)(gpu - cpu)) <= slack;
}

/* One (method, preconditioner) on one problem: the CPU solve, two GPU solves with the same
 * options (NZ_PLAN_DETERMINISTIC): the GPU converges, its true residual (recomputed here in
 * double) meets the tolerance, its iterations are within max(2, 10%) of the CPU's, and the two
 * GPU solutions are bitwise equal. */
static void check_method(nz_context_t *ctx, problem_t *p, nz_method_t method,
                         nz_precond_t precond) {
    if (!nzt_shard_take()) return;
    nz_solve_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.method = method;
    opt.precond = precond;
    opt.rtol = solve_rtol(p->vt);
    opt.restart = 30;
    opt.plan_flags = NZ_PLAN_DETERMINISTIC;
    void *xc = nzt_malloc(p->bytes), *xg = nzt_malloc(p->bytes), *xg2 = nzt_malloc(p->bytes);
    const char *mname = nz_method_name(method), *pname = precond_name(precond);
    nz_solve_result_t rc, rg, rg2;
    memset(xc, 0, p->bytes);
    nz_status_t sc = nz_solve(ctx, p->A, p->b, xc, &opt, &rc);
    NZT_CHECK(sc == NZ_SUCCESS, "%s %s %s cpu: status %d: %s", p->name, mname, pname, (int)sc,
              nz_context_last_error(ctx));
    nzt_poison(xg, p->vt, p->n);
    nz_status_t sg = gpu_solve(ctx, p, &opt, &rg, xg);
    NZT_CHECK(sg == NZ_SUCCESS && rg.reason == NZ_SOLVE_CONVERGED,
              "%s %s %s gpu: status %d, reason %d: %s", p->name, mname, pname, (int)sg,
              (int)rg.reason, gpu_message);
    const double relres = host_relres(ctx, p->A, p->b, xg);
    NZT_CHECK(relres <= check_tol(p->vt), "%s %s %s gpu: true relative residual %.3e > %.3e",
              p->name, mname, pname, relres, check_tol(p->vt));
    NZT_CHECK(fabs(rg.relative_residual - relres) <= (p->vt == NZ_F32 ? 0.25 : 0.01) * relres,
              "%s %s %s gpu: reported relative residual %.6e, recomputed %.6e", p->name, mname,
              pname, rg.relative_residual, relres);
    if (sc == NZ_SUCCESS)
        NZT_CHECK(iterations_close(rg.iterations, rc.iterations),
                  "%s %s %s: gpu %lld vs cpu %lld iterations", p->name, mname, pname,
                  (long long)rg.iterations, (long long)rc.iterations);
    nzt_poison(xg2, p->vt, p->n);
    nz_status_t sg2 = gpu_solve(ctx, p, &opt, &rg2, xg2);
    NZT_CHECK(sg2 == sg && rg2.iterations == rg.iterations && memcmp(xg, xg2, p->bytes) == 0,
              "%s %s %s gpu repeat: status %d vs %d, %lld vs %lld iterations, bits %s", p->name,
              mname, pname, (int)sg2, (int)sg, (long long)rg2.iterations,
              (long long)rg.iterations, memcmp(xg, xg2, p->bytes) == 0 ? "equal" : "differ");
    printf("%-16s %-8s %-9s cpu %5lld gpu %5lld iterations, true relres %.2e, %.1f us/iteration\n",
           p->name, mname, pname, (long long)rc.iterations, (long long)rg.iterations, relres,
           1e6 * rg.solve_seconds / (double)(rg.iterations > 0 ? rg.iterations : 1));
    free(xc);
    free(xg);
    free(xg2);
}

static void check_problem(nz_context_t *ctx, problem_t *p) {
    const nz_precond_t preconds[3] = {NZ_PRECOND_NONE, NZ_PRECOND_JACOBI, NZ_PRECOND_L1_JACOBI};
    const nz_method_t methods[4] = {NZ_METHOD_BICGSTAB, NZ_METHOD_GMRES, NZ_METHOD_FGMRES,
                                    NZ_METHOD_MINRES};
    for (int m = 0; m < 4; m++) {
        if (methods[m] == NZ_METHOD_MINRES && !p->spd) continue;
        for (int k = 0; k < 3; k++) check_method(ctx, p, methods[m], preconds[k]);
    }
}

/* ---- the user callback: Jacobi as an SpMV with the device diagonal matrix D^-1 ------------- */

typedef struct user_jacobi {
    nz_context_t *ctx;
    nz_matrix_t *dDinv;
    int calls;
    int fail_at; /* > 0: the fail_at-th call returns an error */
} user_jacobi_t;

static nz_status_t user_jacobi_apply(void *user, const void *r, void *z) {
    user_jacobi_t *u = (user_jacobi_t *)user;
    u->calls++;
    if (u->fail_at > 0 && u->calls >= u->fail_at) return NZ_ERR_INVALID_ARGUMENT;
    /* r and z are device pointers; nz_spmv queues on the context's stream, after r */
    return nz_spmv(u->ctx, u->dDinv, NZ_ALG_AUTO, 1.0, r, 0.0, z);
}

/* D^-1 of a host CSR matrix as a device diagonal CSR matrix (1 / a_ii rounded once). */
static nz_matrix_t *device_inverse_diagonal(nz_context_t *ctx, const nz_matrix_t *A,
                                            nz_value_type_t vt) {
    nz_matrix_info_t info;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A));
    const int64_t n = info.rows;
    int64_t *dro = (int64_t *)nzt_malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *dci = (int32_t *)nzt_malloc(nzt_at_least_one(n) * sizeof(int32_t));
    void *dv = nzt_malloc(nzt_at_least_one(n) * nzi_value_size(vt));
    for (int64_t i = 0; i < n; i++) {
        double d = 0.0;
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            if (ci[k] == i) d += nzi_get(v, vt, k);
        dro[i] = i;
        dci[i] = (int32_t)i;
        nzi_set(dv, vt, i, 1.0 / d);
    }
    dro[n] = n;
    nz_matrix_t *D = NULL, *dD = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &D, n, n, NZ_I64, dro, dci, vt, dv));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dD, D, NZ_INDEX_AUTO));
    nz_matrix_destroy(&D);
    free(dro);
    free(dci);
    free(dv);
    return dD;
}

/* A USER callback on device pointers converges like the built-in Jacobi (iterations within
 * max(2, 10%)); a failing callback ends the solve with its status and NZ_SOLVE_PRECOND_FAILED. */
static void test_user_callback(nz_context_t *ctx, problem_t *p) {
    if (!nzt_shard_take()) return;
    user_jacobi_t u;
    memset(&u, 0, sizeof u);
    u.ctx = ctx;
    u.dDinv = device_inverse_diagonal(ctx, p->A, p->vt);
    void *xg = nzt_malloc(p->bytes), *xu = nzt_malloc(p->bytes);
    const nz_method_t methods[3] = {NZ_METHOD_BICGSTAB, NZ_METHOD_GMRES, NZ_METHOD_FGMRES};
    for (int m = 0; m < 3; m++) {
        nz_solve_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.method = methods[m];
        opt.rtol = solve_rtol(p->vt);
        opt.precond = NZ_PRECOND_JACOBI;
        opt.plan_flags = NZ_PLAN_DETERMINISTIC;
        nz_solve_result_t rj, ru;
        nz_status_t sj = gpu_solve(ctx, p, &opt, &rj, xg);
        opt.precond = NZ_PRECOND_USER;
        opt.precond_apply = user_jacobi_apply;
        opt.precond_user = &u;
        u.calls = 0;
        u.fail_at = 0;
        nz_status_t su = gpu_solve(ctx, p, &opt, &ru, xu);
        const double relres = host_relres(ctx, p->A, p->b, xu);
        NZT_CHECK(sj == NZ_SUCCESS && su == NZ_SUCCESS && ru.reason == NZ_SOLVE_CONVERGED &&
                      relres <= check_tol(p->vt) && u.calls > 0,
                  "%s %s user Jacobi: status %d (built-in %d), true relres %.3e, %d calls: %s",
                  p->name, nz_method_name(methods[m]), (int)su, (int)sj, relres, u.calls,
                  gpu_message);
        NZT_CHECK(iterations_close(ru.iterations, rj.iterations),
                  "%s %s: user Jacobi %lld vs built-in %lld iterations", p->name,
                  nz_method_name(methods[m]), (long long)ru.iterations, (long long)rj.iterations);
        u.calls = 0;
        u.fail_at = 3;
        su = gpu_solve(ctx, p, &opt, &ru, xu);
        NZT_CHECK(su == NZ_ERR_INVALID_ARGUMENT && ru.reason == NZ_SOLVE_PRECOND_FAILED,
                  "%s %s failing callback: status %d, reason %d: %s", p->name,
                  nz_method_name(methods[m]), (int)su, (int)ru.reason, gpu_message);
    }
    free(xg);
    free(xu);
    nz_matrix_destroy(&u.dDinv);
}

/* b with a NaN is refused (x untouched); b = 0 gives x = 0 exactly over a NaN guess; host
 * vectors with a device matrix and device non-CSR matrices with Jacobi are refused. */
static void test_edges(nz_context_t *ctx, problem_t *p) {
    if (!nzt_shard_take()) return;
    void *x = nzt_malloc(p->bytes), *b = nzt_malloc(p->bytes), *guess = nzt_malloc(p->bytes);
    nz_solve_options_t opt;
    nz_solve_result_t res;
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_BICGSTAB;
    /* NaN in b: NZ_ERR_BREAKDOWN, x as it was */
    memcpy(b, p->b, p->bytes);
    nzi_set(b, p->vt, p->n / 2, NAN);
    for (int64_t i = 0; i < p->n; i++) nzi_set(guess, p->vt, i, 0.25);
    NZT_OK(ctx, nz_device_copy_from_host(ctx, p->db, b, p->bytes));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, p->dx, guess, p->bytes));
    nz_status_t st = nz_solve(ctx, p->dA, p->db, p->dx, &opt, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && strstr(nz_context_last_error(ctx), "NaN") != NULL,
              "%s NaN in b: status %d: %s", p->name, (int)st, nz_context_last_error(ctx));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, x, p->dx, p->bytes));
    NZT_CHECK(memcmp(x, guess, p->bytes) == 0, "%s NaN in b: x changed", p->name);
    /* b = 0 over a NaN guess: x = 0, converged, every method */
    const nz_method_t methods[4] = {NZ_METHOD_BICGSTAB, NZ_METHOD_GMRES, NZ_METHOD_FGMRES,
                                    NZ_METHOD_MINRES};
    NZT_OK(ctx, nz_device_memset(ctx, p->db, 0, p->bytes));
    for (int m = 0; m < 4; m++) {
        opt.method = methods[m];
        nzt_poison(guess, p->vt, p->n);
        NZT_OK(ctx, nz_device_copy_from_host(ctx, p->dx, guess, p->bytes));
        st = nz_solve(ctx, p->dA, p->db, p->dx, &opt, &res);
        NZT_OK(ctx, nz_device_copy_to_host(ctx, x, p->dx, p->bytes));
        int zeros = 1;
        for (int64_t i = 0; i < p->n; i++) zeros &= nzi_get(x, p->vt, i) == 0.0;
        NZT_CHECK(st == NZ_SUCCESS && res.reason == NZ_SOLVE_CONVERGED && zeros,
                  "%s %s b = 0: status %d, x zero %d", p->name, nz_method_name(methods[m]),
                  (int)st, zeros);
    }
    NZT_OK(ctx, nz_device_copy_from_host(ctx, p->db, p->b, p->bytes));
    /* host vectors with a device matrix */
    opt.method = NZ_METHOD_GMRES;
    memset(x, 0, p->bytes);
    st = nz_solve(ctx, p->dA, p->b, p->dx, &opt, &res);
    NZT_CHECK(st == NZ_ERR_WRONG_LOCATION, "%s host b: status %d", p->name, (int)st);
    st = nz_solve(ctx, p->dA, p->db, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_WRONG_LOCATION, "%s host x: status %d", p->name, (int)st);
    /* a device ELL matrix: no preconditioner solves, Jacobi is refused */
    nz_matrix_t *E = NULL, *dE = NULL;
    if (nz_matrix_convert(ctx, &E, p->A, NZ_FORMAT_ELL, NULL) == NZ_SUCCESS &&
        nz_matrix_to_device(ctx, &dE, E, NZ_INDEX_AUTO) == NZ_SUCCESS) {
        opt.method = NZ_METHOD_BICGSTAB;
        opt.precond = NZ_PRECOND_JACOBI;
        st = nz_solve(ctx, dE, p->db, p->dx, &opt, &res);
        NZT_CHECK(st == NZ_ERR_UNSUPPORTED, "%s device ELL + Jacobi: status %d", p->name,
                  (int)st);
        opt.precond = NZ_PRECOND_NONE;
        opt.rtol = solve_rtol(p->vt);
        NZT_OK(ctx, nz_device_memset(ctx, p->dx, 0, p->bytes));
        st = nz_solve(ctx, dE, p->db, p->dx, &opt, &res);
        NZT_OK(ctx, nz_device_copy_to_host(ctx, x, p->dx, p->bytes));
        const double relres = host_relres(ctx, p->A, p->b, x);
        NZT_CHECK(st == NZ_SUCCESS && relres <= check_tol(p->vt),
                  "%s device ELL BiCGSTAB: status %d, true relres %.3e", p->name, (int)st, relres);
    }
    nz_matrix_destroy(&E);
    nz_matrix_destroy(&dE);
    free(x);
    free(b);
    free(guess);
}

/* Allocation failures (host, device and pinned, all counted by the context): fail the k-th for
 * k = 1, 2, ... until the solve succeeds; nothing leaks. */
static void test_allocation_failures(nz_context_t *ctx, problem_t *p) {
    if (!nzt_shard_take()) return;
    const nz_method_t methods[2] = {NZ_METHOD_BICGSTAB, NZ_METHOD_GMRES};
    for (int m = 0; m < 2; m++) {
        nz_solve_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.method = methods[m];
        opt.precond = m == 0 ? NZ_PRECOND_JACOBI : NZ_PRECOND_L1_JACOBI;
        opt.rtol = solve_rtol(p->vt);
        opt.record_history = 1;
        int k;
        for (k = 1; k < 300; k++) {
            nz_alloc_stats_t before, after;
            nz_solve_result_t res;
            NZT_OK(ctx, nz_device_memset(ctx, p->dx, 0, p->bytes));
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            nz_status_t st = nz_solve(ctx, p->dA, p->db, p->dx, &opt, &res);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            nz_free(ctx, res.history);
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            NZT_CHECK(after.live_blocks == before.live_blocks, "%s %s failing allocation %d: leak",
                      p->name, nz_method_name(methods[m]), k);
            const int fired = after.failed_allocs > before.failed_allocs;
            if (!fired) {
                NZT_CHECK(st == NZ_SUCCESS, "%s %s allocation %d, none failing: status %d",
                          p->name, nz_method_name(methods[m]), k, (int)st);
                break;
            }
            NZT_CHECK(st == NZ_SUCCESS || st == NZ_ERR_OUT_OF_MEMORY ||
                          st == NZ_ERR_DEVICE_OUT_OF_MEMORY,
                      "%s %s failing allocation %d: status %d", p->name,
                      nz_method_name(methods[m]), k, (int)st);
        }
        NZT_CHECK(k > 3 && k < 300, "%s %s: allocation loop ended at %d", p->name,
                  nz_method_name(methods[m]), k);
    }
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    if (nz_device_count() == 0) NZT_SKIP("no CUDA device");
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    NZT_OK(ctx, nz_context_set_device(ctx, 0, NULL));
    const int quick = nzt_env_flag("NZ_TEST_QUICK");
    const int64_t m = quick ? 10 : 20;
    for (int t = 0; t < 2; t++) {
        const nz_value_type_t vt = t == 0 ? NZ_F64 : NZ_F32;
        problem_t p;
        nz_matrix_t *A = NULL;
        /* non-symmetric: 3-D upwind convection-diffusion, mesh Peclet 1 */
        NZT_OK(ctx, nz_gen_convdiff3d(ctx, &A, m, m, m, 1.0, vt));
        problem_open(ctx, &p, vt == NZ_F64 ? "convdiff3d f64" : "convdiff3d f32", A, vt, 0,
                     nzt_seed + 10 + (uint64_t)t);
        check_problem(ctx, &p);
        test_user_callback(ctx, &p);
        test_edges(ctx, &p);
        if (vt == NZ_F64) test_allocation_failures(ctx, &p);
        problem_close(ctx, &p);
        /* SPD: the 3-D Laplacian (MINRES too) */
        A = NULL;
        NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, m, m, m - 2, vt));
        problem_open(ctx, &p, vt == NZ_F64 ? "laplace3d f64" : "laplace3d f32", A, vt, 1,
                     nzt_seed + 20 + (uint64_t)t);
        check_problem(ctx, &p);
        problem_close(ctx, &p);
    }
    nz_context_destroy(&ctx);
    return nzt_finish("gpu/test_krylov");
}
