/* test_dist_solve.c: nz_dist_solve against nz_solve on the whole matrix (every method, block preconditioners), reproducibility, agreed failures of a rank's callback, refusals. */
#include "dist_test.h"

/* Rows of the partition of this rank. */
typedef struct part {
    int64_t n, begin, rows;
} part_t;

static part_t part_of(nz_context_t *ctx, nz_dist_matrix_t *dA) {
    nz_dist_layout_t L;
    DT_OK(ctx, nz_dist_matrix_layout(dA, &L));
    part_t p = {L.global_rows, L.row_begin, L.row_end - L.row_begin};
    return p;
}

/* One method / preconditioner: the distributed solve converges on the true residual, agrees
 * with the serial solve (iterations within `slack`, the same x to the tolerance), and a second
 * run gives bitwise the same x. */
static void solve_case(nz_context_t *ctx, const char *name, const nz_matrix_t *A,
                       nz_dist_matrix_t *dA, const double *b, nz_method_t method,
                       nz_precond_t pc, long long slack) {
    part_t p = part_of(ctx, dA);
    nz_solve_options_t opt;
    nz_solve_result_t serial, dist, again;
    memset(&opt, 0, sizeof opt);
    opt.method = method;
    opt.rtol = 1e-9;
    opt.precond = pc;
    double *x = calloc((size_t)p.n + 1, sizeof(double));
    double *xl = calloc((size_t)p.rows + 1, sizeof(double));
    double *xl2 = calloc((size_t)p.rows + 1, sizeof(double));
    nz_status_t ss = NZ_SUCCESS;
    if (pc == NZ_PRECOND_NONE || pc == NZ_PRECOND_JACOBI || dt_size == 1)
        ss = nz_solve(ctx, A, b, x, &opt, &serial);
    nz_status_t sd = nz_dist_solve(ctx, dA, b + p.begin, xl, &opt, &dist);
    nz_status_t s2 = nz_dist_solve(ctx, dA, b + p.begin, xl2, &opt, &again);
    DT_CHECK(sd == NZ_SUCCESS && dist.reason == NZ_SOLVE_CONVERGED &&
                 dist.relative_residual <= 1e-9,
             "%s %s/%s: status %d reason %d relres %g: %s", name, nz_method_name(method),
             nz_precond_name(pc), (int)sd, (int)dist.reason, dist.relative_residual,
             nz_context_last_error(ctx));
    DT_CHECK(s2 == sd && again.iterations == dist.iterations &&
                 memcmp(xl, xl2, (size_t)p.rows * sizeof(double)) == 0,
             "%s %s/%s: a second run differs", name, nz_method_name(method), nz_precond_name(pc));
    /* the true residual of the gathered x, in double from A's arrays, on every rank */
    double *xg = calloc((size_t)p.n + 1, sizeof(double));
    DT_OK(ctx, nz_dist_vector_gather(dA, 0, xl, 0, dt_rank == 0 ? xg : NULL));
    MPI_Bcast(xg, (int)p.n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double *r = calloc((size_t)p.n + 1, sizeof(double));
    DT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_SERIAL, 1.0, xg, 0.0, r));
    double rr = 0, bb = 0;
    for (int64_t i = 0; i < p.n; i++) {
        rr += (b[i] - r[i]) * (b[i] - r[i]);
        bb += b[i] * b[i];
    }
    DT_CHECK(sqrt(rr) <= 1.01e-9 * sqrt(bb) &&
                 fabs(sqrt(rr) - dist.residual_norm) <= 1e-3 * sqrt(rr) + 1e-300,
             "%s %s/%s: recomputed residual %g (reported %g, ||b|| %g)", name,
             nz_method_name(method), nz_precond_name(pc), sqrt(rr), dist.residual_norm,
             sqrt(bb));
    if (pc == NZ_PRECOND_NONE || pc == NZ_PRECOND_JACOBI || dt_size == 1) {
        long long di = (long long)dist.iterations, si = (long long)serial.iterations;
        DT_CHECK(ss == NZ_SUCCESS && di >= si - slack && di <= si + slack,
                 "%s %s/%s: %lld iterations, serial %lld", name, nz_method_name(method),
                 nz_precond_name(pc), di, si);
    }
    long long iters[2] = {(long long)dist.iterations, -(long long)dist.iterations}, range[2];
    MPI_Allreduce(iters, range, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    DT_CHECK(range[0] == -range[1], "%s: ranks disagree on the iterations", name);
    if (dt_rank == 0)
        printf("  %-9s %-8s %-12s %4lld iterations (serial %lld), relative residual %.2e\n",
               name, nz_method_name(method), nz_precond_name(pc), (long long)dist.iterations,
               pc == NZ_PRECOND_NONE || pc == NZ_PRECOND_JACOBI || dt_size == 1
                   ? (long long)serial.iterations : -1LL,
               dist.relative_residual);
    nz_free(ctx, serial.history);
    free(x);
    free(xl);
    free(xl2);
    free(xg);
    free(r);
}

static void test_methods(nz_context_t *ctx) {
    /* non-symmetric: convection-diffusion scattered from rank 0 */
    nz_matrix_t *A = NULL;
    nz_dist_matrix_t *dA = NULL;
    DT_OK(ctx, nz_gen_convdiff3d(ctx, &A, 10, 9, 8, 0.7, NZ_F64));
    DT_OK(ctx, nz_dist_matrix_scatter(ctx, &dA, MPI_COMM_WORLD, 0, dt_rank == 0 ? A : NULL,
                                      NULL));
    const int64_t n = 10 * 9 * 8;
    double *b = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) b[i] = dt_value(i, 11);
    const nz_method_t nonsym[] = {NZ_METHOD_BICGSTAB, NZ_METHOD_GMRES, NZ_METHOD_FGMRES};
    const nz_precond_t pcs[] = {NZ_PRECOND_NONE, NZ_PRECOND_JACOBI, NZ_PRECOND_ILU0,
                                NZ_PRECOND_BLOCK_JACOBI};
    for (int m = 0; m < 3; m++)
        for (int k = 0; k < 4; k++)
            solve_case(ctx, "convdiff", A, dA, b, nonsym[m], pcs[k], 2);
    nz_dist_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
    /* SPD: the Laplacian generated per rank; CG and MINRES */
    DT_OK(ctx, nz_gen_laplace3d(ctx, &A, 9, 8, 7, NZ_F64));
    DT_OK(ctx, nz_dist_gen_laplace3d(ctx, &dA, MPI_COMM_WORLD, 9, 8, 7, NZ_F64, NULL));
    const nz_precond_t spd[] = {NZ_PRECOND_NONE, NZ_PRECOND_JACOBI, NZ_PRECOND_IC0,
                                NZ_PRECOND_CHEBYSHEV};
    for (int k = 0; k < 4; k++) {
        solve_case(ctx, "laplace", A, dA, b, NZ_METHOD_CG, spd[k], 1);
        solve_case(ctx, "laplace", A, dA, b, NZ_METHOD_MINRES, spd[k], 1);
    }
    nz_dist_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
    free(b);
}

/* A preconditioner callback that fails on the last rank only, at its third call: every rank
 * returns that status with the failing rank's message, nothing hangs. */
typedef struct failing {
    int calls;
    int64_t rows;
} failing_t;

static nz_status_t failing_apply(void *user, const void *r, void *z) {
    failing_t *f = (failing_t *)user;
    if (++f->calls == 3 && dt_rank == dt_size - 1) return NZ_ERR_IO;
    memcpy(z, r, (size_t)f->rows * sizeof(double)); /* host arrays of the rank's rows */
    return NZ_SUCCESS;
}

static nz_status_t copy_apply(void *user, const void *r, void *z) {
    memcpy(z, r, (size_t)(*(const int64_t *)user) * sizeof(double));
    return NZ_SUCCESS;
}

static void test_failures(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    nz_dist_matrix_t *dA = NULL;
    DT_OK(ctx, nz_gen_laplace3d(ctx, &A, 6, 6, 6, NZ_F64));
    DT_OK(ctx, nz_dist_gen_laplace3d(ctx, &dA, MPI_COMM_WORLD, 6, 6, 6, NZ_F64, NULL));
    part_t p = part_of(ctx, dA);
    double *b = malloc((size_t)p.n * sizeof(double));
    for (int64_t i = 0; i < p.n; i++) b[i] = dt_value(i, 5);
    double *xl = calloc((size_t)p.rows + 1, sizeof(double));
    nz_solve_options_t opt;
    nz_solve_result_t res;
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_GMRES;
    failing_t f = {0, p.rows};
    opt.precond = NZ_PRECOND_USER;
    opt.precond_apply = failing_apply;
    opt.precond_user = &f;
    nz_status_t st = nz_dist_solve(ctx, dA, b + p.begin, xl, &opt, &res);
    DT_CHECK(st == NZ_ERR_IO, "a failing callback on one rank: status %d: %s", (int)st,
             nz_context_last_error(ctx));
    int agreed = st == NZ_ERR_IO, all;
    MPI_Allreduce(&agreed, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    DT_CHECK(all == 1, "the ranks did not all see the failure");
    /* a user callback that works: the block-identity (no preconditioner) */
    opt.precond_apply = copy_apply;
    opt.precond_user = &p.rows;
    memset(xl, 0, (size_t)p.rows * sizeof(double));
    st = nz_dist_solve(ctx, dA, b + p.begin, xl, &opt, &res);
    DT_CHECK(st == NZ_SUCCESS && res.reason == NZ_SOLVE_CONVERGED, "copy callback: %d: %s",
             (int)st, nz_context_last_error(ctx));
    /* CG with an indefinite preconditioner: every rank reports the breakdown */
    opt.method = NZ_METHOD_CG;
    opt.precond = NZ_PRECOND_NONE;
    nz_matrix_t *N = NULL;
    nz_dist_matrix_t *dN = NULL;
    DT_OK(ctx, nz_gen_convdiff2d(ctx, &N, 8, 8, 0.0, NZ_F64));
    /* a negative multiple of the Laplacian: negative definite */
    {
        nz_matrix_t *M = NULL;
        const int64_t *ro;
        const int32_t *ci;
        const void *v;
        DT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, N));
        double *neg = malloc((size_t)ro[64] * sizeof(double));
        for (int64_t k = 0; k < ro[64]; k++) neg[k] = -((const double *)v)[k];
        DT_OK(ctx, nz_matrix_create_csr(ctx, &M, 64, 64, NZ_I64, ro, ci, NZ_F64, neg));
        free(neg);
        DT_OK(ctx, nz_dist_matrix_scatter(ctx, &dN, MPI_COMM_WORLD, 0, dt_rank == 0 ? M : NULL,
                                          NULL));
        nz_matrix_destroy(&M);
    }
    part_t q = part_of(ctx, dN);
    double *xn = calloc((size_t)q.rows + 1, sizeof(double));
    st = nz_dist_solve(ctx, dN, b + q.begin, xn, &opt, &res);
    DT_CHECK(st == NZ_ERR_BREAKDOWN && res.reason == NZ_SOLVE_BREAKDOWN_INDEFINITE,
             "CG on a negative definite matrix: status %d reason %d", (int)st, (int)res.reason);
    /* refusals: another context, an unknown method */
    nz_context_t *other = NULL;
    DT_OK(other, nz_context_create(&other));
    DT_CHECK(nz_dist_solve(other, dA, b + p.begin, xl, &opt, &res) == NZ_ERR_INVALID_ARGUMENT,
             "a foreign context accepted");
    nz_context_destroy(&other);
    opt.method = (nz_method_t)42;
    DT_CHECK(nz_dist_solve(ctx, dA, b + p.begin, xl, &opt, &res) == NZ_ERR_INVALID_ARGUMENT,
             "an unknown method accepted");
    DT_CHECK(nz_dist_solve(ctx, NULL, b, xl, &opt, &res) == NZ_ERR_NULL_ARGUMENT,
             "a NULL matrix accepted");
    free(xn);
    nz_dist_matrix_destroy(&dN);
    nz_matrix_destroy(&N);
    free(b);
    free(xl);
    nz_dist_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nz_context_t *ctx = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &dt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dt_size);
    DT_OK(ctx, nz_context_create(&ctx));
    DT_OK(ctx, nz_context_set_threads(ctx, 1));
    test_methods(ctx);
    test_failures(ctx);
    nz_alloc_stats_t stats;
    DT_OK(ctx, nz_context_alloc_stats(ctx, &stats));
    DT_CHECK(stats.live_blocks == 0, "%lld blocks leaked", (long long)stats.live_blocks);
    nz_context_destroy(&ctx);
    int status = dt_finish("test_dist_solve");
    MPI_Finalize();
    return status;
}
