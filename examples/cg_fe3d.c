/* cg_fe3d.c: solve the 3-D finite-element Poisson problem -Δu = f on the unit cube (trilinear
 * elements, manufactured solution u = sin(πx) sin(πy) sin(πz)) by Jacobi-preconditioned
 * conjugate gradients, on the GPU when one is present, else on the CPU.
 *
 *   cc cg_fe3d.c $(pkg-config --cflags --libs nonzero) -lm -o cg_fe3d && ./cg_fe3d 32
 *
 * Prints the iterations, the final relative residual and the largest nodal error against the
 * exact solution, which falls as h² when the grid is refined (try 16, 32, 64). */
#include <nonzero.h>
#include "example_common.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 24; /* elements per side; (n-1)^3 unknowns */
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *dA = NULL;
    void *b = NULL, *u_exact = NULL;
    nz_cg_options_t options;
    nz_cg_result_t result;

    if (n < 2) {
        fprintf(stderr, "usage: cg_fe3d [n >= 2]\n");
        return 2;
    }
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    CHECK(nz_gen_fe3d(ctx, &A, &b, &u_exact, n, NZ_F64));
    nz_matrix_info_t info;
    CHECK(nz_matrix_info(ctx, &info, A));
    size_t bytes = (size_t)info.rows * sizeof(double);
    /* Initial guess: a fixed pseudo-random vector. (From x = 0 CG would finish in one step
     * here: the load vector of this manufactured solution is a discrete eigenvector.) */
    double *x = malloc((size_t)info.rows * sizeof *x);
    if (x == NULL) return 1;
    uint64_t seed = 42;
    for (int64_t i = 0; i < info.rows; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (double)(seed >> 11) / 9007199254740992.0;
    }

    memset(&options, 0, sizeof options); /* zero = defaults */
    options.rtol = 1e-10;
    options.precond = NZ_PRECOND_JACOBI;

    int on_gpu = nz_device_count() > 0 && nz_context_set_device(ctx, 0, NULL) == NZ_SUCCESS;
    nz_status_t status;
    if (on_gpu) {
        void *db = NULL, *dx = NULL;
        CHECK(nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
        CHECK(nz_device_malloc(ctx, &db, bytes));
        CHECK(nz_device_malloc(ctx, &dx, bytes));
        CHECK(nz_device_copy_from_host(ctx, db, b, bytes));
        CHECK(nz_device_copy_from_host(ctx, dx, x, bytes));
        status = nz_cg_solve(ctx, dA, db, dx, &options, &result);
        CHECK(status);
        CHECK(nz_device_copy_to_host(ctx, x, dx, bytes));
        CHECK(nz_device_free(ctx, db));
        CHECK(nz_device_free(ctx, dx));
        CHECK(nz_matrix_destroy(&dA));
    } else {
        status = nz_cg_solve(ctx, A, b, x, &options, &result);
        CHECK(status);
    }

    double error = 0;
    for (int64_t i = 0; i < info.rows; i++)
        error = fmax(error, fabs(x[i] - ((const double *)u_exact)[i]));
    printf("FE %lld^3 elements, %lld unknowns, %lld nonzeros on %s\n", (long long)n,
           (long long)info.rows, (long long)info.nnz, on_gpu ? nz_context_device_name(ctx) : "cpu");
    printf("%s after %lld iterations: relative residual %.2e, %.3f ms per iteration\n",
           status == NZ_SUCCESS ? "converged" : "stopped", (long long)result.iterations,
           result.relative_residual, 1e3 * result.seconds_per_iteration);
    printf("max |x - u_exact| = %.3e\n", error);
    free(x);
    nz_free(ctx, b);
    nz_free(ctx, u_exact);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return status == NZ_SUCCESS ? 0 : 1;
}
