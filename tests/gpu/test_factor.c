/* test_factor.c: GPU ILU(0) / IC(0) factorisation against the host's (factors, shifts, attempts, errors), the device preconditioner apply, and nz_solve with ILU(0) on a device matrix. */
#include "testutil.h"
#include "backend.h"
#include "precond.h"

#include <math.h>
#include <string.h>

/*
 * For each matrix, kind, value type and row-offset width: nzi_factor_compute on the host copy
 * and nz_cuda_factor_compute on the device copy must give the same pattern, the same shift and
 * number of attempts, and factors equal entrywise to FACTOR_TOL_F64 (f64) or FACTOR_TOL_F32 (f32)
 * relative to max(|f_host|, 1e-3 max|F|) (ILU(0) rounds as the host does and should match bit for
 * bit; IC(0) sums each inner product in another order). Matrices: a non-symmetric
 * convection-diffusion operator, the 2-D Laplacian, a random dominant matrix with missing
 * diagonal entries, west0067 (zero diagonal: ILU(0) needs a shift) and the Laplacian minus 3 I
 * (indefinite: IC(0) needs a shift). Then the device preconditioner (nzi_factor_precond_create on
 * the device matrix) against the host one, and nz_solve BiCGSTAB + ILU(0) on a device matrix
 * (skipped, with a note, while nz_solve refuses device matrices with NZ_ERR_UNSUPPORTED).
 */

#define FACTOR_TOL_F64 1e-12
#define FACTOR_TOL_F32 1e-5

static nz_context_t *ctx;
static int64_t compared;

static nz_matrix_t *shifted(const nz_matrix_t *A, double s) {
    const int64_t *ro;
    const int32_t *ci;
    const void *vals;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &vals, A));
    double *v = nzt_malloc(nzt_at_least_one(A->nnz) * 8);
    for (int64_t i = 0; i < A->rows; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            v[k] = nzi_get(vals, A->value_type, k) + (ci[k] == i ? s : 0.0);
    nz_matrix_t *B = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &B, A->rows, A->cols, NZ_I64, ro, ci, NZ_F64, v));
    free(v);
    return B;
}

/* Random n x n, dominant, with every seventh row's diagonal missing (the factor adds it). */
static nz_matrix_t *random_missing_diagonal(int64_t n, uint64_t seed) {
    nzi_rng_t rng;
    nzi_rng_seed(&rng, seed);
    int32_t *ri = nzt_malloc((size_t)n * 8 * 4), *cj = nzt_malloc((size_t)n * 8 * 4);
    double *v = nzt_malloc((size_t)n * 8 * 8);
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int e = 0; e < 6; e++) {
            int64_t j = nzi_rng_below(&rng, n);
            if (j == i) continue;
            ri[nnz] = (int32_t)i, cj[nnz] = (int32_t)j, v[nnz++] = nzi_rng_uniform(&rng) - 0.5;
        }
        if (i % 7 != 3) ri[nnz] = (int32_t)i, cj[nnz] = (int32_t)i, v[nnz++] = 8.0;
    }
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &A, n, n, nnz, ri, cj, NZ_F64, v));
    free(ri);
    free(cj);
    free(v);
    return A;
}

/* Host vs GPU factors of H (host CSR of the value type under test). */
static void check_factors(const char *name, const nz_matrix_t *H, nz_precond_t kind, int bits) {
    const char *kn = kind == NZ_PRECOND_IC0 ? "IC(0)" : "ILU(0)";
    const nz_value_type_t vt = H->value_type;
    char what[300];
    snprintf(what, sizeof what, "%s %s %s off%d", name, kn, nzt_vt_name(vt), bits);
    nz_matrix_t *Fc = NULL, *dA = NULL, *dF = NULL, *Fg = NULL;
    double sc = -1, sg = -1;
    int ac = -1, ag = -1;
    nz_status_t s_host = nzi_factor_compute(ctx, H, kind, &Fc, &sc, &ac);
    char host_message[600];
    snprintf(host_message, sizeof host_message, "%s", nz_context_last_error(ctx));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, H, bits == 64 ? NZ_I64 : NZ_I32));
    nz_status_t s_gpu = nz_cuda_factor_compute(ctx, dA, kind, &dF, &sg, &ag);
    NZT_CHECK(s_gpu == s_host, "%s: GPU status %d (%s), host %d (%s)", what, (int)s_gpu,
              nz_context_last_error(ctx), (int)s_host, host_message);
    if (s_host != NZ_SUCCESS || s_gpu != NZ_SUCCESS) {
        NZT_CHECK(strcmp(nz_context_last_error(ctx), host_message) == 0,
                  "%s: GPU message '%s', host '%s'", what, nz_context_last_error(ctx),
                  host_message);
        goto done;
    }
    NZT_CHECK(sg == sc && ag == ac, "%s: GPU shift %g attempts %d, host %g %d", what, sg, ag, sc,
              ac);
    NZT_OK(ctx, nz_matrix_to_host(ctx, &Fg, dF));
    NZT_CHECK(nzt_csr_identical(ctx, Fc, Fg, 0), "%s: factor patterns differ", what);
    if (Fc->nnz == Fg->nnz) {
        double fmax = 0.0;
        for (int64_t k = 0; k < Fc->nnz; k++)
            fmax = fmax > fabs(nzi_get(Fc->host.csr.values, vt, k))
                       ? fmax
                       : fabs(nzi_get(Fc->host.csr.values, vt, k));
        const double tol = vt == NZ_F32 ? FACTOR_TOL_F32 : FACTOR_TOL_F64;
        int64_t bad = 0;
        for (int64_t k = 0; k < Fc->nnz; k++) {
            const double c = nzi_get(Fc->host.csr.values, vt, k);
            const double g = nzi_get(Fg->host.csr.values, vt, k);
            const double scale = fabs(c) > 1e-3 * fmax ? fabs(c) : 1e-3 * fmax;
            if (!(fabs(g - c) <= tol * scale)) {
                if (bad < 3)
                    fprintf(stderr, "  %s: F entry %lld = %.17g, host %.17g\n", what,
                            (long long)k, g, c);
                bad++;
            }
        }
        NZT_CHECK(bad == 0, "%s: %lld of %lld factor entries differ", what, (long long)bad,
                  (long long)Fc->nnz);
        compared++;
    }
done:
    nz_matrix_destroy(&Fg);
    nz_matrix_destroy(&dF);
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&Fc);
}

/* Both value types and offset widths of H64 (host, f64). */
static void check_all(const char *name, const nz_matrix_t *H64, nz_precond_t kind) {
    for (int p = 0; p < 2; p++) {
        nz_matrix_t *H = (nz_matrix_t *)H64;
        if (p == 1) {
            H = NULL;
            NZT_OK(ctx, nz_matrix_convert_values(ctx, &H, H64, NZ_F32));
        }
        check_factors(name, H, kind, 64);
        check_factors(name, H, kind, 32);
        if (p == 1) nz_matrix_destroy(&H);
    }
}

/* z = M^-1 r through the device preconditioner against the host one (sweeps > 0: both with
 * Jacobi-sweep triangular solves). */
static void check_apply(const char *name, const nz_matrix_t *H, nz_precond_t kind, int sweeps) {
    const int64_t n = H->rows;
    const nz_value_type_t vt = H->value_type;
    const size_t vs = nzi_value_size(vt), bytes = nzt_at_least_one(n) * vs;
    nzi_factor_precond_t *hp = NULL, *dp = NULL;
    nz_matrix_t *dA = NULL;
    NZT_OK(ctx, nzi_factor_precond_create(ctx, H, kind, sweeps, &hp));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, H, NZ_INDEX_AUTO));
    NZT_OK(ctx, nzi_factor_precond_create(ctx, dA, kind, sweeps, &dp));
    NZT_CHECK(dp->shift == hp->shift && dp->attempts == hp->attempts,
              "%s apply: device shift %g attempts %d, host %g %d", name, dp->shift, dp->attempts,
              hp->shift, hp->attempts);
    double *rd = nzt_malloc(nzt_at_least_one(n) * 8);
    void *r = nzt_malloc(bytes), *zh = nzt_malloc(bytes), *zg = nzt_malloc(bytes);
    void *dr = NULL, *dz = NULL;
    nzt_random_vector(rd, r, vt, n, nzt_seed + 3);
    NZT_OK(ctx, nzi_factor_precond_apply(hp, r, zh));
    NZT_OK(ctx, nz_device_malloc(ctx, &dr, bytes));
    NZT_OK(ctx, nz_device_malloc(ctx, &dz, bytes));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dr, r, (size_t)n * vs));
    nzt_poison(zg, vt, n);
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dz, zg, (size_t)n * vs));
    NZT_OK(ctx, nzi_factor_precond_apply(dp, dr, dz));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, zg, dz, (size_t)n * vs));
    double scale = 1.0;
    for (int64_t i = 0; i < n; i++)
        if (fabs(nzi_get(zh, vt, i)) > scale) scale = fabs(nzi_get(zh, vt, i));
    const double tol = (vt == NZ_F32 ? 1e-4 : 1e-10) * scale;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += !(fabs(nzi_get(zg, vt, i) - nzi_get(zh, vt, i)) <= tol);
    NZT_CHECK(bad == 0, "%s %s apply (%d sweeps): %lld of %lld entries differ from the host's",
              name, nzt_vt_name(vt), sweeps, (long long)bad, (long long)n);
    NZT_OK(ctx, nz_device_free(ctx, dr));
    NZT_OK(ctx, nz_device_free(ctx, dz));
    nzi_factor_precond_destroy(&dp);
    nzi_factor_precond_destroy(&hp);
    nz_matrix_destroy(&dA);
    free(rd);
    free(r);
    free(zh);
    free(zg);
}

/* BiCGSTAB + ILU(0) on a device convection-diffusion matrix, against the same solve on the
 * host (iterations within a few, both converged); sweeps > 0: with Jacobi-sweep triangular
 * solves. */
static void check_solve(const nz_matrix_t *H, int sweeps) {
    const int64_t n = H->rows;
    const size_t bytes = (size_t)n * 8;
    double *b = nzt_malloc(bytes), *x = nzt_malloc(bytes);
    for (int64_t i = 0; i < n; i++) b[i] = 1.0 + (double)(i % 5);
    nz_solve_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_BICGSTAB;
    opt.precond = NZ_PRECOND_ILU0;
    opt.precond_sweeps = sweeps;
    opt.rtol = 1e-9;
    nz_solve_result_t hr, gr;
    memset(&hr, 0, sizeof hr);
    memset(&gr, 0, sizeof gr);
    memset(x, 0, bytes);
    NZT_OK(ctx, nz_solve(ctx, H, b, x, &opt, &hr));
    nz_matrix_t *dA = NULL;
    void *db = NULL, *dx = NULL;
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, H, NZ_INDEX_AUTO));
    NZT_OK(ctx, nz_device_malloc(ctx, &db, bytes));
    NZT_OK(ctx, nz_device_malloc(ctx, &dx, bytes));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, db, b, bytes));
    NZT_OK(ctx, nz_device_memset(ctx, dx, 0, bytes));
    nz_status_t s = nz_solve(ctx, dA, db, dx, &opt, &gr);
    if (s == NZ_ERR_UNSUPPORTED) {
        printf("test_factor: note: nz_solve with a device matrix is not available yet (%s); "
               "the BiCGSTAB + ILU(0) device solve is skipped\n", nz_context_last_error(ctx));
    } else {
        NZT_CHECK(s == NZ_SUCCESS && gr.reason == hr.reason && gr.reason == NZ_SOLVE_CONVERGED,
                  "device BiCGSTAB + ILU(0) (%d sweeps): status %d (%s), reason %d (host %d)",
                  sweeps, (int)s, nz_context_last_error(ctx), (int)gr.reason, (int)hr.reason);
        NZT_CHECK(gr.precond_shift == hr.precond_shift &&
                      gr.precond_attempts == hr.precond_attempts &&
                      llabs((long long)(gr.iterations - hr.iterations)) <= 3,
                  "device BiCGSTAB + ILU(0) (%d sweeps): %lld iterations, shift %g (%d), host "
                  "%lld, %g (%d)", sweeps, (long long)gr.iterations, gr.precond_shift, gr.precond_attempts,
                  (long long)hr.iterations, hr.precond_shift, hr.precond_attempts);
    }
    nz_free(ctx, hr.history);
    nz_free(ctx, gr.history);
    NZT_OK(ctx, nz_device_free(ctx, db));
    NZT_OK(ctx, nz_device_free(ctx, dx));
    nz_matrix_destroy(&dA);
    free(b);
    free(x);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    ctx = nzt_gpu_context("");
    nz_matrix_t *cd = NULL, *lap = NULL, *west = NULL;
    NZT_OK(ctx, nz_gen_convdiff2d(ctx, &cd, 32, 32, 2.0, NZ_F64));
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &lap, 24, 24, NZ_F64));
    nz_matrix_t *indefinite = shifted(lap, -3.0);
    nz_matrix_t *missing = random_missing_diagonal(2000, nzt_seed + 1);
    check_all("convdiff2d 32x32", cd, NZ_PRECOND_ILU0);
    check_all("laplace2d 24x24", lap, NZ_PRECOND_ILU0);
    check_all("laplace2d 24x24", lap, NZ_PRECOND_IC0);
    check_all("random 2000 missing diagonals", missing, NZ_PRECOND_ILU0);
    check_all("laplace2d - 3I (shifted IC)", indefinite, NZ_PRECOND_IC0);
    const char *data = nzt_data_dir();
    if (data != NULL) {
        char path[1024];
        snprintf(path, sizeof path, "%s/west0067.mtx", data);
        if (nz_matrix_read(ctx, &west, path, NZ_F64) == NZ_SUCCESS)
            check_all("west0067 (shifted ILU)", west, NZ_PRECOND_ILU0);
    }
    /* a non-finite entry: the same error, naming the same entry */
    nz_matrix_t *bad = shifted(lap, 0.0);
    ((double *)bad->host.csr.values)[bad->host.csr.row_offsets[5] + 1] = NAN;
    check_factors("laplace2d with NaN", bad, NZ_PRECOND_ILU0, 64);
    check_factors("laplace2d with NaN", bad, NZ_PRECOND_IC0, 32);
    nz_matrix_destroy(&bad);

    for (int sweeps = 0; sweeps <= 3; sweeps += 3) {
        check_apply("convdiff2d ILU(0)", cd, NZ_PRECOND_ILU0, sweeps);
        check_apply("laplace2d IC(0)", lap, NZ_PRECOND_IC0, sweeps);
        check_solve(cd, sweeps);
    }
    printf("test_factor: %lld factorisations compared\n", (long long)compared);
    nz_matrix_destroy(&cd);
    nz_matrix_destroy(&lap);
    nz_matrix_destroy(&west);
    nz_matrix_destroy(&indefinite);
    nz_matrix_destroy(&missing);
    nz_context_destroy(&ctx);
    return nzt_finish("test_factor");
}
