/* gen_convdiff.c: upwind finite-difference convection-diffusion (2-D 5-point, 3-D 7-point). */
#include "gen_internal.h"

#include <float.h>
#include <math.h>

/* -Δu + w·∇u on a uniform grid of width h in every direction (the unit square or cube when
 * every extent is n, h = 1 / (n + 1)), homogeneous Dirichlet boundary, constant wind
 * w = |w| (1, ..., 1) / sqrt(d) along the diagonal. Diffusion is the standard 2d + 1 point
 * stencil, convection first-order upwind: the wind is positive in every component, so
 * w_i du/dx_i ~ w_i (u - u[-e_i]) / h, a backward difference. The matrix is h^2 times the
 * discrete operator, the scaling of nz_gen_laplace2d/3d (integer Laplacian 2d / -1), which makes
 * the entries depend on h only through the mesh Péclet number P = |w| h / 2:
 *     diagonal            2 d + d c        (c = h w_i = 2 P / sqrt(d))
 *     -x, -y, -z (upwind) -1 - c
 *     +x, +y, +z          -1
 * P = 0 gives the Laplacian bit for bit. For every P >= 0 the off-diagonals are <= 0, the
 * diagonal is positive and equals minus the sum of the full stencil's off-diagonals (interior
 * rows sum to zero up to rounding, boundary rows are strictly dominant): an irreducibly
 * diagonally dominant, hence nonsingular, M-matrix, non-symmetric for P > 0. (Central
 * differences would lose the sign pattern for P > 1; that is why upwinding.) Cost as for the
 * Laplacians, O(rows) after the O(1) coefficients; the result is independent of the threads. */
static nz_status_t convdiff(nz_context_t *ctx, nz_matrix_t **A, const char *what, int dims,
                            int64_t nx, int64_t ny, int64_t nz, double peclet,
                            nz_value_type_t value_type) {
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    if (!isfinite(peclet) || peclet < 0.0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: peclet = %g must be finite and >= 0", what, peclet);
    const double upwind = 2.0 * peclet / sqrt((double)dims);
    const double diagonal = (double)dims * (2.0 + upwind);
    const double largest = value_type == NZ_F32 ? (double)FLT_MAX : DBL_MAX;
    if (!(diagonal <= largest))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: peclet = %g is too large: the diagonal (%g) overflows %s", what,
                         peclet, diagonal, value_type == NZ_F32 ? "single precision" : "double");
    return nzi_gen_grid_stencil(ctx, A, what, nx, ny, nz, diagonal, -1.0 - upwind, -1.0,
                                value_type);
}

nz_status_t nz_gen_convdiff2d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                              double peclet, nz_value_type_t value_type) {
    return convdiff(ctx, A, "nz_gen_convdiff2d", 2, nx, ny, 1, peclet, value_type);
}

nz_status_t nz_gen_convdiff3d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                              int64_t nz, double peclet, nz_value_type_t value_type) {
    return convdiff(ctx, A, "nz_gen_convdiff3d", 3, nx, ny, nz, peclet, value_type);
}
