/* gen_fe3d.c: trilinear (Q1) finite-element Poisson matrix on the unit cube, with a manufactured load. */
#include "gen_internal.h"
#include "fe3d_common.h"

#include <math.h>

/* ---- the stencil -----------------------------------------------------------------------------
 * The cube [0, h]^3 carries the trilinear shape functions phi_a(x) = prod_d psi_{a_d}(x_d) for
 * the corners a in {0, 1}^3 with psi_0(t) = 1 - t/h, psi_1(t) = t/h. The element stiffness
 * K_ab = integral of grad phi_a . grad phi_b is a sum of tensor products of the 1-D stiffness
 * S = (1/h) [1 -1; -1 1] and mass M = h [1/3 1/6; 1/6 1/3]:
 *     K = S x M x M + M x S x M + M x M x S.
 * It depends only on how many coordinates of a and b differ:
 *     same corner    3 (1/h)(h/3)^2                                     =  h / 3
 *     one differs    (-1/h)(h/3)^2 + 2 (1/h)(h/6)(h/3)                  =  0
 *     two differ     2 (-1/h)(h/6)(h/3) + (1/h)(h/6)^2                  = -h / 12
 *     three differ   3 (-1/h)(h/6)^2                                    = -h / 12
 * (row sum h/3 + 3 * 0 - 3 h/12 - h/12 = 0). Assembling, an interior node lies in 8 elements;
 * a neighbour at offset o in {-1, 0, 1}^3 shares 2^(3 - |o|_1) of them, in each of which the
 * two nodes differ in |o|_1 coordinates. The assembled 27-point stencil is therefore
 *     centre 8 h / 3,  6 face neighbours 0,  12 edge neighbours 2 (-h/12) = -h / 6,
 *     8 corner neighbours -h / 12       (sum 8h/3 - 2h - 2h/3 = 0),
 * i.e. the matrix is h times a pure-number stencil. The zero face-neighbour entries are stored
 * explicitly, so an unknown has 2 or 3 candidates per axis and its row 8, 12, 18 or 27 entries.
 * tests/unit/test_gen_fe3d.c checks the table against Gauss quadrature of the element matrix.
 *
 * ---- the load -----------------------------------------------------------------------------
 * For u = sin(pi x) sin(pi y) sin(pi z) (zero on the boundary, so eliminated Dirichlet nodes
 * contribute nothing), f = -Δu = 3 pi^2 u and b_i = integral of f phi_i, computed with 3 x 3 x 3
 * Gauss-Legendre points per element. Because f, phi_i and the tensor Gauss rule all factor by
 * coordinate, this equals 3 pi^2 g(i_x) g(i_y) g(i_z) exactly, where g(k) is the 3-point Gauss
 * rule applied to sin(pi t) times the 1-D hat function of node k on its two intervals; b costs
 * O(n) sines plus O(n^3) products. b_i is about h^3 f(x_i); with A = h * stencil,
 * (A u_exact - b)_i / h^3 = O(h^2). */

typedef struct fe3d_params {
    int64_t m;                /* unknowns per axis: n - 1 */
    double stencil[4];        /* value by the number of nonzero offset coordinates */
} fe3d_params_t;

static int64_t fe3d_row_length(const void *params, int64_t row) {
    return nzi_fe3d_row_length(((const fe3d_params_t *)params)->m, row);
}

static void fe3d_fill_row(const void *params, int64_t row, int64_t length, int32_t *col_indices,
                          void *values, nz_value_type_t value_type, int64_t begin) {
    const fe3d_params_t *p = (const fe3d_params_t *)params;
    (void)length; /* nzi_fe3d_row_length(m, row) entries, as row_length said */
    if (value_type == NZ_F32)
        nzi_fe3d_row_typed(p->m, p->stencil, row, col_indices, (float *)values + begin, 1);
    else
        nzi_fe3d_row_typed(p->m, p->stencil, row, col_indices, (double *)values + begin, 0);
}

/* The load and the nodal solution: b = 3 pi^2 g x g x g and u = s x s x s (see above). */
static nz_status_t fe3d_vectors(nz_context_t *ctx, int64_t n, nz_value_type_t value_type,
                                void **b_out, void **u_out) {
    nz_status_t status = NZ_SUCCESS;
    const int64_t m = n - 1;
    const size_t unknowns = (size_t)(m * m * m);
    const double pi = 3.14159265358979323846;
    double *g = NULL, *s = NULL;
    void *b = NULL, *u = NULL;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&g, (size_t)m, sizeof(double), "nz_gen_fe3d: load factors"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&s, (size_t)m, sizeof(double), "nz_gen_fe3d: nodal factors"));
    nzi_fe3d_axis_factors(n, g, s);
    const int threads = nzi_context_threads(ctx);
    (void)threads;
    if (b_out != NULL) {
        NZI_CHECK(nzi_alloc_array(ctx, &b, unknowns, nzi_value_size(value_type),
                                  "nz_gen_fe3d: load vector b"));
        NZI_GEN_PRAGMA(omp parallel for schedule(static) num_threads(threads))
        for (int64_t i = 0; i < (int64_t)unknowns; i++)
            nzi_set(b, value_type, i, 3.0 * pi * pi * g[i % m] * g[(i / m) % m] * g[i / (m * m)]);
    }
    if (u_out != NULL) {
        NZI_CHECK(nzi_alloc_array(ctx, &u, unknowns, nzi_value_size(value_type),
                                  "nz_gen_fe3d: exact solution"));
        NZI_GEN_PRAGMA(omp parallel for schedule(static) num_threads(threads))
        for (int64_t i = 0; i < (int64_t)unknowns; i++)
            nzi_set(u, value_type, i, s[i % m] * s[(i / m) % m] * s[i / (m * m)]);
    }
    if (b_out != NULL) *b_out = b;
    if (u_out != NULL) *u_out = u;
    b = u = NULL;
cleanup:
    nzi_free(ctx, g);
    nzi_free(ctx, s);
    nzi_free(ctx, b);
    nzi_free(ctx, u);
    return status;
}

nz_status_t nzi_fe3d_unknowns(nz_context_t *ctx, int64_t n, const char *what, int64_t *rows) {
    if (n < 2)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: n = %lld elements per side; need n >= 2 for an interior node", what,
                         (long long)n);
    int64_t m = n - 1, plane;
    if (nzi_mul_overflow_i64(m, m, &plane) || nzi_mul_overflow_i64(plane, m, rows))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: n = %lld: unknown count (n-1)^3 overflows",
                         what, (long long)n);
    return nzi_check_dims(ctx, *rows, *rows, what);
}

nz_status_t nz_gen_fe3d(nz_context_t *ctx, nz_matrix_t **A, void **b, void **u_exact, int64_t n,
                        nz_value_type_t value_type) {
    const char *what = "nz_gen_fe3d";
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    int64_t m = n - 1, rows = 0;
    NZI_TRY(nzi_fe3d_unknowns(ctx, n, what, &rows));
    const double h = 1.0 / (double)n;
    fe3d_params_t params = {m, {8.0 * h / 3.0, 0.0, -h / 6.0, -h / 12.0}};
    nzi_gen_spec_t spec = {what, rows, rows, value_type, &params, fe3d_row_length, fe3d_fill_row};
    NZI_CHECK(nzi_gen_build(ctx, &M, &spec));
    if (b != NULL || u_exact != NULL) NZI_CHECK(fe3d_vectors(ctx, n, value_type, b, u_exact));
    *A = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    return status;
}
