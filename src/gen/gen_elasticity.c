/* gen_elasticity.c: trilinear (Q1) finite-element linear elasticity on the unit cube, clamped at x = 0, with its rigid-body modes. */
#include "gen_internal.h"

#include <math.h>

/* ---- the problem ----------------------------------------------------------------------------
 * Find u: [0,1]^3 -> R^3 with -div sigma(u) = f, sigma = lambda tr(eps) I + 2 mu eps,
 * eps = (grad u + grad u^T) / 2, u = 0 on the face x = 0 and sigma n = 0 on the other five
 * faces. Young's modulus E = 1 and Poisson ratio nu give the Lame constants
 *     lambda = nu / ((1 + nu)(1 - 2 nu)),   mu = 1 / (2 (1 + nu)).
 * The mesh is n x n x n cubes of side h = 1/n with nodes (i, j, k) h, 0 <= i, j, k <= n. The
 * nodes with i = 0 are clamped and eliminated; node (i, j, k), i >= 1, is number
 *     p = (i - 1) + n (j + (n + 1) k)            (x fastest),
 * and its displacement components (ux, uy, uz) are unknowns 3p, 3p + 1, 3p + 2.
 *
 * ---- the element matrix ---------------------------------------------------------------------
 * On the reference cube [-1, 1]^3 corner a = a0 + 2 a1 + 4 a2 (a_d in {0, 1}, sign s_d = 2 a_d - 1)
 * has N_a = prod_d (1 + s_d xi_d) / 2, and on the element of side h dN_a/dx_d = (2/h) dN_a/dxi_d.
 * With the strain-displacement matrix B (6 x 24, Voigt order xx, yy, zz, yz, xz, xy with
 * engineering shears) and the isotropic D (6 x 6), K = integral of B^T D B, computed by the
 * 2 x 2 x 2 Gauss rule (points +-1/sqrt(3), weights 1, Jacobian (h/2)^3), which is exact: the
 * integrand is at most quadratic in each coordinate. K is h times a matrix independent of h.
 * The mesh is uniform, so K is computed once, its upper triangle mirrored so that it is exactly
 * symmetric.
 *
 * ---- assembly -------------------------------------------------------------------------------
 * Unknown (p, c) couples with unknown (q, d) for every node q at an offset o in {-1, 0, 1}^3
 * that is not clamped; the value is the sum over the elements e containing both nodes of
 * K[3 a + c][3 b + d], with a = p - e and b = q - e their corners in e. The elements are
 * visited in ascending (ez, ey, ex), the same order from either end of the pair, and K is
 * exactly symmetric, so A == A^T bit for bit. Every 3 x 3 block of a node pair that shares an
 * element is stored in full, zeros included (some entries cancel, e.g. the xy coupling of two
 * nodes on an x-line): a row has 3 cx cy cz entries, cx = 1 + [i > 1] + [i < n] and
 * cy, cz = 1 + [j > 0] + [j < n] (likewise k), 81 for a node none of whose neighbours is
 * clamped or missing. Summing over each axis, nnz = 9 (3n - 2) (3n + 1)^2. A row costs
 * O(27 x 8) operations; the matrix is independent of the thread count.
 *
 * ---- the vectors ----------------------------------------------------------------------------
 * The load is a unit body force in -z, f = (0, 0, -1): b = integral of N_p f, and since the
 * integral of N_a over an element is h^3 / 8 exactly, b_{3p+2} = -(elements at p) h^3 / 8 and
 * the x, y entries are 0. Its entries sum to -(1 - h/2): the whole load less the share of the
 * clamped nodes.
 * The rigid-body modes are the three translations and the rotations (-y, x, 0), (0, -z, y),
 * (z, 0, -x) with (x, y, z) measured from the cube's centre (1/2, 1/2, 1/2), evaluated at the
 * nodes. The unconstrained stiffness annihilates them exactly; clamping removes only the
 * columns of the nodes at i = 0, so A r = 0 (up to rounding) in every row of a node with i >= 2. */

typedef struct elasticity_params {
    int64_t n;              /* elements per side */
    double K[24][24];       /* element stiffness, unknown 3 a + c of corner a, component c */
} elasticity_params_t;

/* The 24 x 24 element stiffness of the cube of side h (see above). */
static void elasticity_element_matrix(double h, double nu, double K[24][24]) {
    const double lambda = nu / ((1.0 + nu) * (1.0 - 2.0 * nu)), mu = 1.0 / (2.0 * (1.0 + nu));
    const double D[6][6] = {
        {lambda + 2.0 * mu, lambda, lambda, 0.0, 0.0, 0.0},
        {lambda, lambda + 2.0 * mu, lambda, 0.0, 0.0, 0.0},
        {lambda, lambda, lambda + 2.0 * mu, 0.0, 0.0, 0.0},
        {0.0, 0.0, 0.0, mu, 0.0, 0.0},
        {0.0, 0.0, 0.0, 0.0, mu, 0.0},
        {0.0, 0.0, 0.0, 0.0, 0.0, mu},
    };
    const double point = 0.57735026918962576451; /* 1/sqrt(3) */
    const double jacobian = 0.125 * h * h * h;
    double upper[24][24] = {{0.0}};
    for (int q = 0; q < 8; q++) {
        const double xi[3] = {(q & 1) ? point : -point, (q & 2) ? point : -point,
                              (q & 4) ? point : -point};
        double B[6][24] = {{0.0}}, DB[6][24];
        for (int a = 0; a < 8; a++) {
            double grad[3];
            for (int d = 0; d < 3; d++) {
                double v = (2.0 / h) * 0.5 * (((a >> d) & 1) ? 1.0 : -1.0);
                for (int e = 0; e < 3; e++)
                    if (e != d) v *= 0.5 * (1.0 + (((a >> e) & 1) ? xi[e] : -xi[e]));
                grad[d] = v;
            }
            B[0][3 * a + 0] = grad[0];
            B[1][3 * a + 1] = grad[1];
            B[2][3 * a + 2] = grad[2];
            B[3][3 * a + 1] = grad[2];
            B[3][3 * a + 2] = grad[1];
            B[4][3 * a + 0] = grad[2];
            B[4][3 * a + 2] = grad[0];
            B[5][3 * a + 0] = grad[1];
            B[5][3 * a + 1] = grad[0];
        }
        for (int r = 0; r < 6; r++)
            for (int j = 0; j < 24; j++) {
                double s = 0.0;
                for (int l = 0; l < 6; l++) s += D[r][l] * B[l][j];
                DB[r][j] = s;
            }
        for (int i = 0; i < 24; i++)
            for (int j = i; j < 24; j++) {
                double s = 0.0;
                for (int r = 0; r < 6; r++) s += B[r][i] * DB[r][j];
                upper[i][j] += jacobian * s;
            }
    }
    for (int i = 0; i < 24; i++)
        for (int j = i; j < 24; j++) K[i][j] = K[j][i] = upper[i][j];
}

/* Neighbour candidates of a node coordinate along one axis: x runs over the unknowns 1..n,
 * y and z over 0..n. */
static inline int64_t axis_candidates(int64_t coordinate, int64_t lowest, int64_t n) {
    return 1 + (coordinate > lowest) + (coordinate < n);
}

static int64_t elasticity_row_length(const void *params, int64_t row) {
    const int64_t n = ((const elasticity_params_t *)params)->n, node = row / 3;
    const int64_t i = 1 + node % n, j = (node / n) % (n + 1), k = node / (n * (n + 1));
    return 3 * axis_candidates(i, 1, n) * axis_candidates(j, 0, n) * axis_candidates(k, 0, n);
}

/* The elements along one axis that contain both node coordinate p and p + offset:
 * e in [max(0, p - 1, p + offset - 1), min(n - 1, p, p + offset)]. */
static inline void shared_elements(int64_t p, int offset, int64_t n, int64_t *first,
                                   int64_t *last) {
    int64_t lo = p - 1, hi = p;
    if (offset < 0) hi = p - 1;
    if (offset > 0) lo = p;
    *first = lo < 0 ? 0 : lo;
    *last = hi > n - 1 ? n - 1 : hi;
}

static void elasticity_fill_row(const void *params, int64_t row, int64_t length,
                                int32_t *col_indices, void *values, nz_value_type_t value_type,
                                int64_t begin) {
    const elasticity_params_t *prm = (const elasticity_params_t *)params;
    const int64_t n = prm->n, node = row / 3;
    const int c = (int)(row % 3);
    const int64_t i = 1 + node % n, j = (node / n) % (n + 1), k = node / (n * (n + 1));
    int64_t entry = 0;
    (void)length; /* elasticity_row_length(row) entries, as row_length said */
    for (int dz = -1; dz <= 1; dz++) {
        if (k + dz < 0 || k + dz > n) continue;
        for (int dy = -1; dy <= 1; dy++) {
            if (j + dy < 0 || j + dy > n) continue;
            for (int dx = -1; dx <= 1; dx++) {
                if (i + dx < 1 || i + dx > n) continue;
                const int64_t q = (i + dx - 1) + n * ((j + dy) + (n + 1) * (k + dz));
                int64_t ex0, ex1, ey0, ey1, ez0, ez1;
                shared_elements(i, dx, n, &ex0, &ex1);
                shared_elements(j, dy, n, &ey0, &ey1);
                shared_elements(k, dz, n, &ez0, &ez1);
                double sum[3] = {0.0, 0.0, 0.0};
                for (int64_t ez = ez0; ez <= ez1; ez++)
                    for (int64_t ey = ey0; ey <= ey1; ey++)
                        for (int64_t ex = ex0; ex <= ex1; ex++) {
                            const int a = (int)((i - ex) + 2 * (j - ey) + 4 * (k - ez));
                            const int b = (int)((i + dx - ex) + 2 * (j + dy - ey) +
                                                4 * (k + dz - ez));
                            for (int d = 0; d < 3; d++) sum[d] += prm->K[3 * a + c][3 * b + d];
                        }
                for (int d = 0; d < 3; d++) {
                    col_indices[entry] = (int32_t)(3 * q + d);
                    nzi_set(values, value_type, begin + entry, sum[d]);
                    entry++;
                }
            }
        }
    }
}

/* The load (unit body force in -z) and the six rigid-body modes, column-major (see above). */
static nz_status_t elasticity_vectors(nz_context_t *ctx, int64_t n, int64_t rows,
                                      nz_value_type_t value_type, void **b_out, void **modes_out) {
    nz_status_t status = NZ_SUCCESS;
    void *b = NULL, *modes = NULL;
    const double h = 1.0 / (double)n, element_share = 0.125 * h * h * h;
    const int64_t nodes = rows / 3;
    const int threads = nzi_context_threads(ctx);
    (void)threads;
    if (b_out != NULL) {
        NZI_CHECK(nzi_alloc_array(ctx, &b, (size_t)rows, nzi_value_size(value_type),
                                  "nz_gen_elasticity3d: load vector b"));
        NZI_GEN_PRAGMA(omp parallel for schedule(static) num_threads(threads))
        for (int64_t p = 0; p < nodes; p++) {
            const int64_t i = 1 + p % n, j = (p / n) % (n + 1), k = p / (n * (n + 1));
            const int64_t elements = (i < n ? 2 : 1) * (j > 0 && j < n ? 2 : 1) *
                                     (k > 0 && k < n ? 2 : 1);
            nzi_set(b, value_type, 3 * p, 0.0);
            nzi_set(b, value_type, 3 * p + 1, 0.0);
            nzi_set(b, value_type, 3 * p + 2, -(double)elements * element_share);
        }
    }
    if (modes_out != NULL) {
        NZI_CHECK(nzi_alloc_array(ctx, &modes, (size_t)rows * 6, nzi_value_size(value_type),
                                  "nz_gen_elasticity3d: rigid-body modes"));
        NZI_GEN_PRAGMA(omp parallel for schedule(static) num_threads(threads))
        for (int64_t p = 0; p < nodes; p++) {
            const int64_t i = 1 + p % n, j = (p / n) % (n + 1), k = p / (n * (n + 1));
            const double x = (double)i * h - 0.5, y = (double)j * h - 0.5,
                         z = (double)k * h - 0.5;
            const double mode[6][3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0},
                                       {-y, x, 0.0},    {0.0, -z, y},    {z, 0.0, -x}};
            for (int m = 0; m < 6; m++)
                for (int c = 0; c < 3; c++)
                    nzi_set(modes, value_type, (int64_t)m * rows + 3 * p + c, mode[m][c]);
        }
    }
    if (b_out != NULL) *b_out = b;
    if (modes_out != NULL) *modes_out = modes;
    b = modes = NULL;
cleanup:
    nzi_free(ctx, b);
    nzi_free(ctx, modes);
    return status;
}

nz_status_t nz_gen_elasticity3d(nz_context_t *ctx, nz_matrix_t **A, void **b,
                                void **rigid_body_modes, int64_t n, double poisson_ratio,
                                nz_value_type_t value_type) {
    const char *what = "nz_gen_elasticity3d";
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    if (n < 1)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: n = %lld elements per side; need n >= 1", what, (long long)n);
    if (!(poisson_ratio >= 0.0 && poisson_ratio < 0.5))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: Poisson ratio %g must be in [0, 0.5) (0: the default 0.3)", what,
                         poisson_ratio);
    const double nu = poisson_ratio == 0.0 ? 0.3 : poisson_ratio;
    int64_t side, plane, nodes, rows;
    if (nzi_add_overflow_i64(n, 1, &side) || nzi_mul_overflow_i64(side, side, &plane) ||
        nzi_mul_overflow_i64(plane, n, &nodes) || nzi_mul_overflow_i64(nodes, 3, &rows))
        return nzi_error(ctx, NZ_ERR_OVERFLOW,
                         "%s: n = %lld: unknown count 3 n (n+1)^2 overflows", what, (long long)n);
    NZI_TRY(nzi_check_dims(ctx, rows, rows, what));

    elasticity_params_t params;
    params.n = n;
    elasticity_element_matrix(1.0 / (double)n, nu, params.K);
    nzi_gen_spec_t spec = {what, rows, rows, value_type, &params, elasticity_row_length,
                           elasticity_fill_row};
    NZI_CHECK(nzi_gen_build(ctx, &M, &spec));
    if (b != NULL || rigid_body_modes != NULL)
        NZI_CHECK(elasticity_vectors(ctx, n, rows, value_type, b, rigid_body_modes));
    *A = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    return status;
}
