/* solve.c: solve a non-symmetric system A x = b with BiCGSTAB and an ILU(0) preconditioner, on
 * the GPU when one is present (the matrix copied there), else on the CPU; then check the true
 * residual ourselves.
 *   solve [n]    A: the upwind 3-D convection-diffusion matrix on an n^3 grid (default 32),
 *                b = A * ones, so x should come back as ones. */
#include "example_common.h"

#include <math.h>

int main(int argc, char **argv) {
    const int64_t n = argc > 1 ? atoll(argv[1]) : 32;
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *dA = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    const int gpu = nz_device_count() > 0;
    if (gpu) CHECK(nz_context_set_device(ctx, 0, NULL)); /* its own stream on device 0 */
    CHECK(nz_gen_convdiff3d(ctx, &A, n, n, n, 1.0, NZ_F64));
    nz_matrix_info_t info;
    CHECK(nz_matrix_info(ctx, &info, A));
    const int64_t rows = info.rows;
    double *ones = malloc((size_t)rows * sizeof *ones), *b = malloc((size_t)rows * sizeof *b);
    double *x = malloc((size_t)rows * sizeof *x), *r = malloc((size_t)rows * sizeof *r);
    if (ones == NULL || b == NULL || x == NULL || r == NULL) return 1;
    for (int64_t i = 0; i < rows; i++) ones[i] = 1.0;
    nz_spmv_plan_t *plan = NULL;                       /* b = A * ones on the host */
    CHECK(nz_spmv_plan_create(ctx, &plan, A, NZ_OP_N, NZ_ALG_AUTO, 0));
    CHECK(nz_spmv_execute(plan, 1.0, ones, 0.0, b));

    nz_solve_options_t opt = {0};                     /* zeros: the defaults */
    opt.method = NZ_METHOD_BICGSTAB;
    opt.precond = NZ_PRECOND_ILU0;
    opt.rtol = 1e-10;                                 /* on the TRUE residual ||b - A x|| */
    nz_solve_result_t res;
    nz_status_t st;
    if (gpu) {
        /* vectors live where the matrix does: device arrays for a device matrix; on the GPU
         * two Jacobi sweeps per triangular solve make ILU(0) much cheaper per iteration */
        opt.precond_sweeps = 2;
        void *db = NULL, *dx = NULL;
        CHECK(nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
        CHECK(nz_device_malloc(ctx, &db, (size_t)rows * sizeof(double)));
        CHECK(nz_device_malloc(ctx, &dx, (size_t)rows * sizeof(double)));
        CHECK(nz_device_copy_from_host(ctx, db, b, (size_t)rows * sizeof(double)));
        CHECK(nz_device_memset(ctx, dx, 0, (size_t)rows * sizeof(double)));  /* x0 = 0 */
        st = nz_solve(ctx, dA, db, dx, &opt, &res);
        CHECK(nz_device_copy_to_host(ctx, x, dx, (size_t)rows * sizeof(double)));
        CHECK(nz_device_free(ctx, db));
        CHECK(nz_device_free(ctx, dx));
    } else {
        for (int64_t i = 0; i < rows; i++) x[i] = 0.0;                       /* x0 = 0 */
        st = nz_solve(ctx, A, b, x, &opt, &res);
    }
    /* NZ_SUCCESS only when the true residual met the tolerance; a positive status is a caveat
     * (iteration limit, stagnation), a negative one an error or a breakdown */
    printf("%s, %s + %s%s: %lld iterations, true relative residual %.3e, status %s\n",
           gpu ? "GPU" : "CPU", nz_method_name(opt.method), nz_precond_name(opt.precond),
           opt.precond_sweeps ? " (2 sweeps)" : "", (long long)res.iterations,
           res.relative_residual, nz_status_string(st));
    if (st != NZ_SUCCESS) {
        fprintf(stderr, "not converged: %s\n", nz_context_last_error(ctx));
        return 1;
    }
    /* our own check: ||b - A x|| / ||b|| on the host, and max |x - 1| */
    CHECK(nz_spmv_execute(plan, -1.0, x, 0.0, r));
    double rr = 0, bb = 0, err = 0;
    for (int64_t i = 0; i < rows; i++) {
        rr += (b[i] + r[i]) * (b[i] + r[i]);
        bb += b[i] * b[i];
        err = fmax(err, fabs(x[i] - 1.0));
    }
    printf("checked: ||b - A x|| / ||b|| = %.3e, max |x - 1| = %.3e\n", sqrt(rr / bb), err);
    nz_free(ctx, res.history);
    nz_spmv_plan_destroy(&plan);
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
    free(ones);
    free(b);
    free(x);
    free(r);
    nz_context_destroy(&ctx);
    return 0;
}
