/* test_amg.c (gpu): the AMG preconditioner on device matrices against the same hierarchy on the host: the cycle, PCG iterations, the W-cycle and l1-Jacobi, re-setup, repeat bits, refusals, allocation failures; the time to solution against Jacobi-PCG printed. */
#include "testutil.h"
#include "nzi.h"
#include "amg.h"

#include <math.h>
#include <string.h>

/* The device cycle against the host one on the same matrix and options: one apply to a random
 * vector (poisoned output), the same hierarchy (info), and a second device apply with the same
 * bits. */
static void check_apply(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                        const nz_matrix_t *dA, const nz_amg_options_t *ao) {
    nz_preconditioner_t *M = NULL, *dM = NULL;
    const int64_t n = A->rows;
    const size_t bytes = (size_t)n * 8;
    double *r = nzt_malloc(bytes), *z = nzt_malloc(bytes), *dz_host = nzt_malloc(bytes);
    double *again = nzt_malloc(bytes);
    void *dr = NULL, *dz = NULL;
    nzt_random_vector(r, r, NZ_F64, n, 21);
    NZT_OK(ctx, nzt_amg(ctx, &M, A, ao));
    NZT_OK(ctx, nzt_amg(ctx, &dM, dA, ao));
    NZT_OK(ctx, nz_precond_apply(M, r, z));
    NZT_OK(ctx, nz_device_malloc(ctx, &dr, bytes));
    NZT_OK(ctx, nz_device_malloc(ctx, &dz, bytes));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dr, r, bytes));
    NZT_OK(ctx, nz_device_memset(ctx, dz, 0xff, bytes)); /* NaN poison */
    NZT_OK(ctx, nz_precond_apply(dM, dr, dz));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, dz_host, dz, bytes));
    const double d = nzt_rel_diff(dz_host, z, n);
    NZT_CHECK(d < 1e-11, "%s: device cycle differs from the host's by %.3e", what, d);
    NZT_OK(ctx, nz_precond_apply(dM, dr, dz));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, again, dz, bytes));
    if (ao != NULL && (ao->plan_flags & NZ_PLAN_DETERMINISTIC))
        NZT_CHECK(memcmp(again, dz_host, bytes) == 0, "%s: a second apply gave other bits", what);
    nz_amg_info_t hi, di;
    NZT_OK(ctx, nz_amg_info(M, &hi));
    NZT_OK(ctx, nz_amg_info(dM, &di));
    /* the same structure; in deterministic mode the same bits (the device estimates rho(D^-1 A)
     * in its own summation order otherwise) */
    const int det = ao != NULL && (ao->plan_flags & NZ_PLAN_DETERMINISTIC);
    int same = hi.levels == di.levels;
    for (int l = 0; same && l < hi.levels; l++)
        same = hi.rows[l] == di.rows[l] && hi.nnz[l] == di.nnz[l] &&
               fabs(hi.lambda_max[l] - di.lambda_max[l]) <= (det ? 0.0 : 1e-12) * hi.lambda_max[l];
    NZT_CHECK(same, "%s: the device hierarchy differs from the host's", what);
    /* bit for bit: every level operator (the device's copied down after its RAP) */
    for (int l = 0; det && same && l < hi.levels; l++) {
        const nz_matrix_t *Ah, *Ad, *Ph, *Pd;
        double rh, rd;
        nz_amg_options_t oh, od;
        NZT_OK(ctx, nzi_amg_level(nzi_precond_amg(M), l, &Ah, &Ph, &rh, &oh));
        NZT_OK(ctx, nzi_amg_level(nzi_precond_amg(dM), l, &Ad, &Pd, &rd, &od));
        NZT_CHECK(nzt_csr_identical(ctx, Ah, Ad, 1) && rh == rd,
                  "%s: level %d differs between the host and the device set-up", what, l);
    }
    printf("%-28s %d levels, device vs host cycle %.2e\n", what, di.levels, d);
    nz_device_free(ctx, dr);
    nz_device_free(ctx, dz);
    nz_precond_destroy(&M);
    nz_precond_destroy(&dM);
    free(r);
    free(z);
    free(dz_host);
    free(again);
}

/* PCG on the device with AMG (or Jacobi: M NULL) for b = A 1; returns the iterations, checks the
 * true residual on the host; *seconds the solve (and the set-up when the caller adds it). */
static int64_t device_pcg(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *dA,
                          const nz_preconditioner_t *M, const char *what, double *seconds) {
    const int64_t n = A->rows;
    const size_t bytes = (size_t)n * 8;
    double *one = nzt_malloc(bytes), *b = nzt_malloc(bytes), *x = nzt_malloc(bytes);
    void *db = NULL, *dx = NULL;
    for (int64_t i = 0; i < n; i++) one[i] = 1.0;
    NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, one, 0.0, b));
    NZT_OK(ctx, nz_device_malloc(ctx, &db, bytes));
    NZT_OK(ctx, nz_device_malloc(ctx, &dx, bytes));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, db, b, bytes));
    NZT_OK(ctx, nz_device_memset(ctx, dx, 0, bytes));
    nz_solve_options_t so;
    memset(&so, 0, sizeof so);
    so.method = NZ_METHOD_CG;
    if (M != NULL)
        so.preconditioner = M;
    else
        so.precond = NZ_PRECOND_JACOBI;
    nz_solve_result_t res;
    const nz_status_t st = nz_solve(ctx, dA, db, dx, &so, &res);
    NZT_CHECK(st == NZ_SUCCESS, "%s: status %d: %s", what, (int)st, nz_context_last_error(ctx));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, x, dx, bytes));
    NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, -1.0, x, 1.0, b));
    double rn = 0.0, bn = 0.0;
    NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, one, 0.0, x)); /* b again, into x */
    for (int64_t i = 0; i < n; i++) rn += b[i] * b[i], bn += x[i] * x[i];
    NZT_CHECK(sqrt(rn / bn) <= 1e-8 * (1 + 1e-9), "%s: true relative residual %.3e", what,
              sqrt(rn / bn));
    *seconds = res.setup_seconds + res.solve_seconds;
    nz_free(ctx, res.history);
    nz_device_free(ctx, db);
    nz_device_free(ctx, dx);
    free(one);
    free(b);
    free(x);
    return res.iterations;
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = nzt_gpu_context("the AMG preconditioner on device matrices");
    nz_matrix_t *A = NULL, *dA = NULL;
    nz_amg_options_t ao;

    /* the cycle: device against host, several option sets */
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 23, 21, 19, NZ_F64));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
    memset(&ao, 0, sizeof ao);
    check_apply(ctx, "laplace3d V chebyshev", A, dA, &ao);
    ao.plan_flags = NZ_PLAN_DETERMINISTIC;
    ao.cycle = NZ_AMG_CYCLE_W;
    ao.max_coarse = 40;
    check_apply(ctx, "laplace3d W deterministic", A, dA, &ao);
    ao.smoother = NZ_AMG_SMOOTHER_L1_JACOBI;
    ao.smoother_degree = 3;
    check_apply(ctx, "laplace3d W l1-jacobi", A, dA, &ao);
    /* re-setup on the device: 2A halves the cycle's output */
    {
        nz_preconditioner_t *dM = NULL;
        nz_matrix_t *A2 = nzt_new_values(ctx, A, 3), *dA2 = NULL;
        for (int64_t k = 0; k < A->nnz; k++)
            ((double *)A2->host.csr.values)[k] = 2.0 * ((double *)A->host.csr.values)[k];
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dA2, A2, NZ_INDEX_AUTO));
        memset(&ao, 0, sizeof ao);
        ao.plan_flags = NZ_PLAN_DETERMINISTIC;
        NZT_OK(ctx, nzt_amg(ctx, &dM, dA, &ao));
        const int64_t n = A->rows;
        const size_t bytes = (size_t)n * 8;
        double *r = nzt_malloc(bytes), *z1 = nzt_malloc(bytes), *z2 = nzt_malloc(bytes);
        void *dr = NULL, *dz = NULL;
        nzt_random_vector(r, r, NZ_F64, n, 5);
        NZT_OK(ctx, nz_device_malloc(ctx, &dr, bytes));
        NZT_OK(ctx, nz_device_malloc(ctx, &dz, bytes));
        NZT_OK(ctx, nz_device_copy_from_host(ctx, dr, r, bytes));
        NZT_OK(ctx, nz_precond_apply(dM, dr, dz));
        NZT_OK(ctx, nz_device_copy_to_host(ctx, z1, dz, bytes));
        NZT_OK(ctx, nz_precond_update(dM, dA2));
        NZT_OK(ctx, nz_precond_apply(dM, dr, dz));
        NZT_OK(ctx, nz_device_copy_to_host(ctx, z2, dz, bytes));
        double worst = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const double e = fabs(z2[i] - 0.5 * z1[i]) / (fabs(z1[i]) + 1e-300);
            if (e > worst) worst = e;
        }
        NZT_CHECK(worst <= 1e-13, "device update with 2A: worst relative error %.3e", worst);
        /* a host matrix is refused by a device object */
        NZT_CHECK(nz_precond_update(dM, A2) == NZ_ERR_INVALID_ARGUMENT, "host update accepted");
        nz_device_free(ctx, dr);
        nz_device_free(ctx, dz);
        free(r);
        free(z1);
        free(z2);
        nz_precond_destroy(&dM);
        nz_matrix_destroy(&dA2);
        nz_matrix_destroy(&A2);
    }
    /* allocation failures (host and device) over the device set-up */
    {
        nz_preconditioner_t *dM = NULL;
        int64_t k = 1;
        for (;; k += 3) {
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            const nz_status_t s = nzt_amg(ctx, &dM, dA, NULL);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            if (s == NZ_SUCCESS) break;
            NZT_CHECK((s == NZ_ERR_OUT_OF_MEMORY || s == NZ_ERR_DEVICE_OUT_OF_MEMORY) && dM == NULL,
                      "allocation %lld failed: status %d", (long long)k, (int)s);
        }
        nz_precond_destroy(&dM);
    }
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&A);

    /* PCG on the device: AMG against Jacobi, fe3d and laplace3d, set-up included */
    const struct {
        const char *name;
        int fe;
        int64_t n, max_iterations;
    } cases[] = {{"fe3d 33", 1, 33, 13},
                 {"fe3d 65", 1, 65, 13},
                 {"laplace3d 64", 0, 64, 14},
                 {"fe3d 129", 1, 129, 13}};
    /* under compute-sanitizer (NZ_TEST_QUICK) the smallest only */
    const size_t ncases = nzt_env_flag("NZ_TEST_QUICK") ? 1 : sizeof cases / sizeof cases[0];
    for (size_t c = 0; c < ncases; c++) {
        nz_preconditioner_t *dM = NULL;
        if (cases[c].fe)
            NZT_OK(ctx, nz_gen_fe3d(ctx, &A, NULL, NULL, cases[c].n, NZ_F64));
        else
            NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, cases[c].n, cases[c].n, cases[c].n, NZ_F64));
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
        double t_setup = nzi_wtime(), t_amg, t_jac;
        NZT_OK(ctx, nzt_amg(ctx, &dM, dA, NULL));
        t_setup = nzi_wtime() - t_setup;
        const int64_t it_amg = device_pcg(ctx, A, dA, dM, cases[c].name, &t_amg);
        const int64_t it_jac = device_pcg(ctx, A, dA, NULL, cases[c].name, &t_jac);
        nz_amg_info_t info;
        NZT_OK(ctx, nz_amg_info(dM, &info));
        printf("%-13s rows %9lld  AMG-PCG %2lld it, setup %.3f s + solve %.3f s (strength %.3f "
               "aggregate %.3f tentative %.3f smooth %.3f rap %.3f transfer %.3f), opc %.3f | "
               "Jacobi-PCG %4lld it, %.3f s\n",
               cases[c].name, (long long)A->rows, (long long)it_amg, t_setup, t_amg,
               info.strength_seconds, info.aggregate_seconds, info.tentative_seconds,
               info.smooth_seconds, info.rap_seconds, info.transfer_seconds,
               info.operator_complexity, (long long)it_jac, t_jac);
        NZT_CHECK(it_amg <= cases[c].max_iterations, "%s: %lld AMG-PCG iterations",
                  cases[c].name, (long long)it_amg);
        nz_precond_destroy(&dM);
        nz_matrix_destroy(&dA);
        nz_matrix_destroy(&A);
    }
    nz_context_destroy(&ctx);
    return nzt_finish("test_amg (gpu)");
}
