/* test_spsv.c: GPU SpSV (synchronisation-free) against the CPU SpSV in double: every op / triangle / diagonal / precision, awkward shapes, real matrices, in place, alpha = 0, levels, errors. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/*
 * Every matrix is made on the host in double (diagonally dominant by rows and by columns, so
 * each triangle of either op solves stably), converted to the value type under test, uploaded
 * with 32- and 64-bit row offsets, and solved for op N / T x lower / upper x unit / non-unit.
 * The reference is the CPU nz_spsv in double on the same (rounded) values and the same rounded
 * x; the GPU result must lie within TOL_F64 (f64) or TOL_F32 (f32) of it relative to
 * max(1, max |y_ref|) (dominance bounds the error growth by a small factor). Every execute starts
 * from a NaN-poisoned y; a second execute and an in-place execute (x == y) must be bitwise the
 * first; the plan's levels, widest level and triangle size must equal the CPU plan's.
 */

#define TOL_F64 1e-12
#define TOL_F32 1e-4

static nz_context_t *ctx;
static int64_t solves;

/* ---- matrices (host CSR, f64, int64 offsets) ------------------------------------------------ */

/* A host CSR matrix from COO triplets (nz_matrix_create_coo sorts them and sums duplicates). */
static nz_matrix_t *from_triplets(int64_t n, int64_t nnz, const int32_t *ri, const int32_t *cj,
                                  const double *v) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &A, n, n, nnz, ri, cj, NZ_F64, v));
    return A;
}

/* A copy of host CSR A's off-diagonal pattern and values with the diagonal set to
 * 1 + (off-diagonal row sum + column sum of |a_ij|), alternating in sign: dominant by rows and
 * columns, so every triangle of either op is well conditioned. `drop_diagonal_row` >= 0 leaves
 * that row without a diagonal entry. */
static nz_matrix_t *dominant_of(const nz_matrix_t *A, int64_t drop_diagonal_row) {
    const int64_t n = A->rows;
    const int64_t *ro = A->host.csr.row_offsets;
    const int32_t *ci = A->host.csr.col_indices;
    const int64_t cap = A->nnz + n + 1;
    int32_t *ri = nzt_malloc((size_t)cap * 4), *cj = nzt_malloc((size_t)cap * 4);
    double *v = nzt_malloc((size_t)cap * 8);
    double *sum = nzt_malloc((size_t)nzt_at_least_one(n) * 8);
    memset(sum, 0, (size_t)nzt_at_least_one(n) * 8);
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) {
            if (ci[k] == i) continue;
            double a = nzi_get(A->host.csr.values, A->value_type, k);
            ri[nnz] = (int32_t)i;
            cj[nnz] = ci[k];
            v[nnz++] = a;
            sum[i] += fabs(a);
            sum[ci[k]] += fabs(a);
        }
    for (int64_t i = 0; i < n; i++) {
        if (i == drop_diagonal_row) continue;
        ri[nnz] = (int32_t)i;
        cj[nnz] = (int32_t)i;
        v[nnz++] = (1.0 + sum[i]) * (i % 2 ? -1.0 : 1.0);
    }
    nz_matrix_t *D = from_triplets(n, nnz, ri, cj, v);
    free(ri);
    free(cj);
    free(v);
    free(sum);
    return D;
}

/* n x n with about per_row off-diagonal entries a row in both triangles (a fifth of the rows
 * none: empty rows in every triangle), random values, then made dominant. */
static nz_matrix_t *random_matrix(int64_t n, int per_row, uint64_t seed) {
    nzi_rng_t rng;
    nzi_rng_seed(&rng, seed);
    const int64_t cap = n * (2 * per_row + 1) + 1;
    int32_t *ri = nzt_malloc((size_t)cap * 4), *cj = nzt_malloc((size_t)cap * 4);
    double *v = nzt_malloc((size_t)cap * 8);
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++) {
        int entries = nzi_rng_below(&rng, 5) == 0 ? 0 : (int)nzi_rng_below(&rng, 2 * per_row + 1);
        for (int e = 0; e < entries && n > 1; e++) {
            int64_t j = nzi_rng_below(&rng, n);
            if (j == i) continue;
            ri[nnz] = (int32_t)i;
            cj[nnz] = (int32_t)j;
            v[nnz++] = 2.0 * nzi_rng_uniform(&rng) - 1.0;
        }
    }
    nz_matrix_t *A = from_triplets(n, nnz, ri, cj, v);
    nz_matrix_t *D = dominant_of(A, -1);
    nz_matrix_destroy(&A);
    free(ri);
    free(cj);
    free(v);
    return D;
}

/* Tridiagonal (a chain in each triangle: n levels) or diagonal (one level). */
static nz_matrix_t *band_matrix(int64_t n, int tridiagonal) {
    int32_t *ri = nzt_malloc((size_t)nzt_at_least_one(3 * n) * 4);
    int32_t *cj = nzt_malloc((size_t)nzt_at_least_one(3 * n) * 4);
    double *v = nzt_malloc((size_t)nzt_at_least_one(3 * n) * 8);
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++) {
        if (tridiagonal && i > 0) {
            ri[nnz] = (int32_t)i, cj[nnz] = (int32_t)(i - 1), v[nnz++] = -0.5 - 0.25 * (i % 3);
            ri[nnz] = (int32_t)(i - 1), cj[nnz] = (int32_t)i, v[nnz++] = 0.25 + 0.125 * (i % 5);
        }
        ri[nnz] = (int32_t)i, cj[nnz] = (int32_t)i, v[nnz++] = 2.0 + (double)(i % 7) / 7.0;
    }
    nz_matrix_t *A = from_triplets(n, nnz, ri, cj, v);
    free(ri);
    free(cj);
    free(v);
    return A;
}

/* ---- one solve ------------------------------------------------------------------------------ */

/* Bad entries of y against y_ref (see the opening comment). */
/* Entry i may differ from the reference by TOL (f32 / f64) times max(max |ref|, bound_i),
 * bound = M(T)^-1 |alpha x| with M(T) the comparison matrix (|diagonal|, -|off-diagonal|): the
 * componentwise forward-error bound of a triangular solve (Higham, Accuracy and Stability, 8.1),
 * which grows far above |ref| where the solve cancels (a unit-diagonal Laplacian triangle). */
static int64_t compare(const char *what, nz_value_type_t vt, const void *y, const double *ref,
                       const double *bound, int64_t n) {
    double scale = 1.0;
    for (int64_t i = 0; i < n; i++)
        if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const double v = nzi_get(y, vt, i);
        /* f32: where the bound leaves float's range (a unit-diagonal Laplacian triangle grows
         * like the number of lattice paths, past 1e38 within a few hundred levels) the float
         * solve overflows honestly (Inf), as the CPU's float solve does: nothing to compare */
        if (vt == NZ_F32 && !(bound[i] < 1e30)) continue;
        const double tol = (vt == NZ_F32 ? TOL_F32 : TOL_F64) * fmax(scale, bound[i]);
        if (!(fabs(v - ref[i]) <= tol)) {
            if (bad < 3)
                fprintf(stderr, "  %s: y[%lld] = %.17g, reference %.17g (tol %.3g)\n", what,
                        (long long)i, v, ref[i], tol);
            bad++;
        }
    }
    return bad;
}

/* H (host, f64) in value type vt on the device with `offsets` row offsets, against the CPU plan
 * on the rounded values in double, for one (op, fill, diag); sweeps > 0: both plans with
 * NZ_SPSV_JACOBI(sweeps) (the bound below holds for every Jacobi iterate too: each is a partial
 * sum of the series whose total the comparison solve gives). */
static void check_one(const char *name, const nz_matrix_t *Href, const nz_matrix_t *dT,
                      nz_value_type_t vt, int bits, nz_operation_t op, nz_fill_mode_t fill,
                      nz_diag_type_t diag, double alpha, int with_alpha_zero, int sweeps) {
    const unsigned jacobi = sweeps > 0 ? NZ_SPSV_JACOBI(sweeps) : 0;
    const int64_t n = Href->rows;
    const size_t vs = nzi_value_size(vt), bytes = nzt_at_least_one(n) * vs;
    char what[400];
    snprintf(what, sizeof what, "%s %s off%d op %c %s %s alpha %g sweeps %d", name,
             nzt_vt_name(vt), bits, op == NZ_OP_N ? 'N' : 'T', fill == NZ_LOWER ? "lower" : "upper",
             diag == NZ_UNIT ? "unit" : "non-unit", alpha, sweeps);
    double *xd = nzt_malloc(nzt_at_least_one(n) * 8), *ref = nzt_malloc(nzt_at_least_one(n) * 8);
    void *x = nzt_malloc(bytes), *y = nzt_malloc(bytes), *again = nzt_malloc(bytes);
    nzt_random_vector(xd, x, vt, n, nzt_seed + 7 + (uint64_t)n);
    for (int64_t i = 0; i < n; i++) xd[i] = nzi_get(x, vt, i);

    /* the CPU reference and its plan's levels */
    nz_spsv_plan_t *cpu = NULL, *gpu = NULL;
    NZT_OK(ctx, nz_spsv_plan_create(ctx, &cpu, Href, op, fill, diag, jacobi));
    NZT_OK(ctx, nz_spsv_execute(cpu, alpha, xd, ref));
    nz_spsv_plan_info_t ci, gi;
    NZT_OK(ctx, nz_spsv_plan_info(cpu, &ci));
    nz_spsv_plan_destroy(&cpu);
    /* the error bound: the same solve on the comparison matrix with |alpha x| */
    double *bound = nzt_malloc(nzt_at_least_one(n) * 8);
    {
        const int64_t *ro;
        const int32_t *ci32;
        const void *hv;
        NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci32, &hv, Href));
        double *cv = nzt_malloc(nzt_at_least_one(ro[n]) * 8);
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = ro[i]; k < ro[i + 1]; k++) {
                const double a = fabs(((const double *)hv)[k]);
                cv[k] = ci32[k] == i ? a : -a;
            }
        nz_matrix_t *C = NULL;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &C, n, n, NZ_I64, ro, ci32, NZ_F64, cv));
        double *ax = nzt_malloc(nzt_at_least_one(n) * 8);
        for (int64_t i = 0; i < n; i++) ax[i] = fabs(alpha * xd[i]);
        NZT_OK(ctx, nz_spsv_plan_create(ctx, &cpu, C, op, fill, diag, 0));
        NZT_OK(ctx, nz_spsv_execute(cpu, 1.0, ax, bound));
        nz_spsv_plan_destroy(&cpu);
        nz_matrix_destroy(&C);
        free(cv);
        free(ax);
    }

    void *dx = NULL, *dy = NULL;
    NZT_OK(ctx, nz_device_malloc(ctx, &dx, bytes));
    NZT_OK(ctx, nz_device_malloc(ctx, &dy, bytes));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dx, x, (size_t)n * vs));
    nz_status_t s = nz_spsv_plan_create(ctx, &gpu, dT, op, fill, diag,
                                        NZ_PLAN_DETERMINISTIC | jacobi);
    NZT_CHECK(s == NZ_SUCCESS, "%s: plan returned %d (%s): %s", what, (int)s,
              nz_status_string(s), nz_context_last_error(ctx));
    if (s != NZ_SUCCESS) goto done;
    NZT_OK(ctx, nz_spsv_plan_info(gpu, &gi));
    NZT_CHECK(gi.backend == NZ_BACKEND_CUDA && gi.reproducible == 1 && gi.rows == n,
              "%s: info backend %d reproducible %d rows %lld", what, (int)gi.backend,
              gi.reproducible, (long long)gi.rows);
    NZT_CHECK(gi.levels == ci.levels && gi.max_level_rows == ci.max_level_rows &&
                  gi.nnz == ci.nnz,
              "%s: GPU plan levels %lld widest %lld nnz %lld, CPU %lld %lld %lld", what,
              (long long)gi.levels, (long long)gi.max_level_rows, (long long)gi.nnz,
              (long long)ci.levels, (long long)ci.max_level_rows, (long long)ci.nnz);
    NZT_CHECK(gi.analysis_seconds >= 0 && (n == 0 || gi.workspace_bytes > 0),
              "%s: analysis %g s, workspace %zu", what, gi.analysis_seconds, gi.workspace_bytes);

    /* NaN-poisoned y, solve, compare */
    nzt_poison(y, vt, n);
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dy, y, (size_t)n * vs));
    NZT_OK(ctx, nz_spsv_execute(gpu, alpha, dx, dy));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, y, dy, (size_t)n * vs));
    solves++;
    int64_t bad = compare(what, vt, y, ref, bound, n);
    NZT_CHECK(bad == 0, "%s: %lld of %lld entries wrong", what, (long long)bad, (long long)n);
    /* again from NaN: bitwise the same */
    nzt_poison(again, vt, n);
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dy, again, (size_t)n * vs));
    NZT_OK(ctx, nz_spsv_execute(gpu, alpha, dx, dy));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, again, dy, (size_t)n * vs));
    NZT_CHECK(memcmp(again, y, (size_t)n * vs) == 0, "%s: second execute differs", what);
    /* in place: x == y */
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dy, x, (size_t)n * vs));
    NZT_OK(ctx, nz_spsv_execute(gpu, alpha, dy, dy));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, again, dy, (size_t)n * vs));
    NZT_CHECK(memcmp(again, y, (size_t)n * vs) == 0, "%s: in-place execute differs", what);
    if (with_alpha_zero && n > 0) {
        /* alpha = 0: y = 0 exactly, x (all NaN) not read */
        nzt_poison(again, vt, n);
        NZT_OK(ctx, nz_device_copy_from_host(ctx, dx, again, (size_t)n * vs));
        NZT_OK(ctx, nz_device_copy_from_host(ctx, dy, again, (size_t)n * vs));
        NZT_OK(ctx, nz_spsv_execute(gpu, 0.0, dx, dy));
        NZT_OK(ctx, nz_device_copy_to_host(ctx, again, dy, (size_t)n * vs));
        int64_t nonzero = 0;
        for (int64_t i = 0; i < n; i++) nonzero += !(nzi_get(again, vt, i) == 0.0);
        NZT_CHECK(nonzero == 0, "%s: alpha = 0 left %lld entries not zero", what,
                  (long long)nonzero);
    }
done:
    nz_spsv_plan_destroy(&gpu);
    NZT_OK(ctx, nz_device_free(ctx, dx));
    NZT_OK(ctx, nz_device_free(ctx, dy));
    free(xd);
    free(ref);
    free(bound);
    free(x);
    free(y);
    free(again);
}

/* Every (precision, offset width, op, fill, diag) of H (host, f64, dominant). wide: also 32-bit
 * offsets (small matrices); all_combinations 0: only op N lower and op T upper non-unit. */
static void check_matrix(const char *name, const nz_matrix_t *H, int wide, int all_combinations) {
    for (int p = 0; p < 2; p++) {
        const nz_value_type_t vt = p == 0 ? NZ_F64 : NZ_F32;
        nz_matrix_t *Hv = NULL, *Href = NULL;
        if (vt == NZ_F64) {
            Href = (nz_matrix_t *)H;
            Hv = (nz_matrix_t *)H;
        } else {
            NZT_OK(ctx, nz_matrix_convert_values(ctx, &Hv, H, NZ_F32));
            NZT_OK(ctx, nz_matrix_convert_values(ctx, &Href, Hv, NZ_F64));
        }
        for (int b = 0; b < (wide ? 2 : 1); b++) {
            const int bits = b == 0 ? 64 : 32;
            nz_matrix_t *dT = NULL;
            NZT_OK(ctx, nz_matrix_to_device(ctx, &dT, Hv, bits == 64 ? NZ_I64 : NZ_I32));
            int first = 1;
            for (int c = 0; c < 8; c++) {
                const nz_operation_t op = (c & 1) ? NZ_OP_T : NZ_OP_N;
                const nz_fill_mode_t fill = (c & 2) ? NZ_UPPER : NZ_LOWER;
                const nz_diag_type_t diag = (c & 4) ? NZ_UNIT : NZ_NON_UNIT;
                if (!all_combinations && c != 0 && c != 3) continue;
                check_one(name, Href, dT, vt, bits, op, fill, diag, c == 5 ? -2.5 : 1.0, first,
                          0);
                /* Jacobi sweeps: 1 and 3 on two of the combinations */
                if (c == 0 || c == 3)
                    for (int sweeps = 1; sweeps <= 3; sweeps += 2)
                        check_one(name, Href, dT, vt, bits, op, fill, diag, 1.0, first, sweeps);
                first = 0;
            }
            nz_matrix_destroy(&dT);
        }
        if (vt == NZ_F32) {
            nz_matrix_destroy(&Hv);
            nz_matrix_destroy(&Href);
        }
    }
}

/* ---- cases ---------------------------------------------------------------------------------- */

static void test_shapes(void) {
    int64_t zero = 0;
    nz_matrix_t *E = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &E, 0, 0, NZ_I64, &zero, NULL, NZ_F64, NULL));
    check_matrix("0x0", E, 1, 1);
    nz_matrix_destroy(&E);
    const int64_t sizes[] = {1, 31, 33, 1000, 100000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        char name[64];
        nz_matrix_t *A = random_matrix(sizes[k], 3, nzt_seed + (uint64_t)k);
        snprintf(name, sizeof name, "random %lld", (long long)sizes[k]);
        check_matrix(name, A, sizes[k] <= 1000, 1);
        nz_matrix_destroy(&A);
    }
    /* rows of more than 32 entries in each triangle: several strides of every lane */
    nz_matrix_t *L = random_matrix(3000, 60, nzt_seed + 99);
    check_matrix("random 3000 long rows", L, 1, 1);
    nz_matrix_destroy(&L);
    nz_matrix_t *C = band_matrix(2000, 1);
    check_matrix("tridiagonal chain 2000", C, 1, 1);
    nz_matrix_destroy(&C);
    nz_matrix_t *D = band_matrix(777, 0);
    check_matrix("diagonal 777", D, 1, 1);
    nz_matrix_destroy(&D);
}

/* The 7-point Laplacian on 40^3: triangles of up to 3 entries a row, 118 levels. */
static void test_laplacian(void) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 40, 40, 40, NZ_F64));
    check_matrix("laplace3d 40^3", A, 0, 1);
    nz_matrix_destroy(&A);
}

/* The square matrices of tests/data, their diagonal made dominant. */
static void test_real(void) {
    const char *dir = nzt_data_dir();
    if (dir == NULL) return;
    char **names = NULL;
    int count = nzt_list_matrices(dir, &names), used = 0;
    for (int k = 0; k < count; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        nz_matrix_t *A = NULL;
        if (nz_matrix_read(ctx, &A, path, NZ_F64) != NZ_SUCCESS) continue;
        nz_matrix_info_t info;
        NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
        if (info.rows == info.cols && info.format == NZ_FORMAT_CSR) {
            nz_matrix_t *D = dominant_of(A, -1);
            check_matrix(names[k], D, 1, 1);
            nz_matrix_destroy(&D);
            used++;
        }
        nz_matrix_destroy(&A);
    }
    printf("test_spsv: %d square matrices of %s\n", used, dir);
    nzt_free_names(names, count);
}

/* A missing diagonal (row 3) and a zero one (row 2): NZ_NON_UNIT refuses the first bad row
 * with the CPU's message; NZ_UNIT takes the matrix. */
static void test_errors(void) {
    nz_matrix_t *A = random_matrix(10, 2, nzt_seed + 5);
    nz_matrix_t *M = dominant_of(A, 3);
    nz_matrix_destroy(&A);
    nz_matrix_t *dM = NULL;
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dM, M, NZ_INDEX_AUTO));
    nz_spsv_plan_t *plan = NULL;
    for (int op = 0; op < 2; op++) {
        nz_status_t s = nz_spsv_plan_create(ctx, &plan, dM, (nz_operation_t)op, NZ_LOWER,
                                            NZ_NON_UNIT, 0);
        NZT_CHECK(s == NZ_ERR_INVALID_MATRIX && plan == NULL &&
                      strstr(nz_context_last_error(ctx), "row 3 of T has no diagonal") != NULL,
                  "missing diagonal op %d: %d (%s)", op, (int)s, nz_context_last_error(ctx));
        s = nz_spsv_plan_create(ctx, &plan, dM, (nz_operation_t)op, NZ_UPPER, NZ_UNIT, 0);
        NZT_CHECK(s == NZ_SUCCESS, "missing diagonal, unit: %d (%s)", (int)s,
                  nz_context_last_error(ctx));
        if (s == NZ_SUCCESS) {
            /* host vectors with a device T are refused */
            double hx[10] = {0}, hy[10] = {0};
            s = nz_spsv_execute(plan, 1.0, hx, hy);
            NZT_CHECK(s == NZ_ERR_WRONG_LOCATION, "host x, y with a device T: %d (%s)", (int)s,
                      nz_context_last_error(ctx));
        }
        nz_spsv_plan_destroy(&plan);
    }
    nz_matrix_destroy(&dM);
    /* a zero diagonal in row 2 (an explicit stored zero) before the missing one in row 3 */
    nz_matrix_t *Z = NULL;
    const int64_t *ro;
    const int32_t *ci;
    const void *vals;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &vals, M));
    double *v = nzt_malloc((size_t)nzt_at_least_one(M->nnz) * 8);
    memcpy(v, vals, (size_t)M->nnz * 8);
    for (int64_t k = ro[2]; k < ro[3]; k++)
        if (ci[k] == 2) v[k] = 0.0;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &Z, 10, 10, NZ_I64, ro, ci, NZ_F64, v));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dM, Z, NZ_I32));
    nz_status_t s = nz_spsv_plan_create(ctx, &plan, dM, NZ_OP_N, NZ_UPPER, NZ_NON_UNIT, 0);
    NZT_CHECK(s == NZ_ERR_INVALID_MATRIX &&
                  strstr(nz_context_last_error(ctx), "row 2 of T has a zero diagonal") != NULL,
              "zero diagonal: %d (%s)", (int)s, nz_context_last_error(ctx));
    nz_matrix_destroy(&dM);
    nz_matrix_destroy(&Z);
    nz_matrix_destroy(&M);
    free(v);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    ctx = nzt_gpu_context("");
    test_errors();
    test_shapes();
    test_laplacian();
    test_real();
    printf("test_spsv: %lld GPU solves checked\n", (long long)solves);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spsv");
}
