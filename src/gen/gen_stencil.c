/* gen_stencil.c: 5- and 7-point grid stencils (Laplacians, convection-diffusion), banded. */
#include "gen_internal.h"

/* ---- grid stencils --------------------------------------------------------------------------
 * Grid point (x, y, z) is row x + nx (y + ny z) (x fastest). Row: `diagonal` on the diagonal,
 * `minus` for every grid neighbour at -x, -y or -z and `plus` for every one at +x, +y or +z
 * inside the grid; neighbours outside are dropped (homogeneous Dirichlet), so rows have
 * d + 1 .. 2 d + 1 entries. Columns come out ascending by visiting the neighbours in the order
 * -z, -y, -x, centre, +x, +y, +z. The 2-D case is the 3-D one with nz = 1. The Laplacians are
 * minus = plus = -1; convection-diffusion (gen_convdiff.c) has minus != plus. */

typedef struct stencil_params {
    int64_t nx, ny, nz;
    double diagonal, minus, plus;
} stencil_params_t;

static int64_t stencil_row_length(const void *params, int64_t row) {
    const stencil_params_t *p = (const stencil_params_t *)params;
    int64_t x = row % p->nx, y = (row / p->nx) % p->ny, z = row / (p->nx * p->ny);
    return 1 + (x > 0) + (x < p->nx - 1) + (y > 0) + (y < p->ny - 1) + (z > 0) +
           (z < p->nz - 1);
}

static void stencil_fill_row(const void *params, int64_t row, int64_t length,
                             int32_t *col_indices, void *values, nz_value_type_t value_type,
                             int64_t begin) {
    const stencil_params_t *p = (const stencil_params_t *)params;
    const int64_t plane = p->nx * p->ny;
    int64_t x = row % p->nx, y = (row / p->nx) % p->ny, z = row / plane;
    int64_t k = 0;
    (void)length;
#define NZI_PUT(col, v)                                                                          \
    do {                                                                                        \
        col_indices[k] = (int32_t)(col);                                                        \
        nzi_set(values, value_type, begin + k, (v));                                            \
        k++;                                                                                    \
    } while (0)
    if (z > 0) NZI_PUT(row - plane, p->minus);
    if (y > 0) NZI_PUT(row - p->nx, p->minus);
    if (x > 0) NZI_PUT(row - 1, p->minus);
    NZI_PUT(row, p->diagonal);
    if (x < p->nx - 1) NZI_PUT(row + 1, p->plus);
    if (y < p->ny - 1) NZI_PUT(row + p->nx, p->plus);
    if (z < p->nz - 1) NZI_PUT(row + plane, p->plus);
#undef NZI_PUT
}

/* Rows = nx ny nz, checked against int64 overflow and the 2^31 - 1 row limit. */
static nz_status_t grid_rows(nz_context_t *ctx, const char *what, int64_t nx, int64_t ny,
                             int64_t nz, int64_t *rows) {
    if (nx < 1 || ny < 1 || nz < 1)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: grid %lld x %lld x %lld: every extent must be >= 1", what,
                         (long long)nx, (long long)ny, (long long)nz);
    int64_t plane, total;
    if (nzi_mul_overflow_i64(nx, ny, &plane) || nzi_mul_overflow_i64(plane, nz, &total))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: grid %lld x %lld x %lld: point count overflows",
                         what, (long long)nx, (long long)ny, (long long)nz);
    NZI_TRY(nzi_check_dims(ctx, total, total, what));
    *rows = total;
    return NZ_SUCCESS;
}

nz_status_t nzi_gen_grid_stencil(nz_context_t *ctx, nz_matrix_t **A, const char *what,
                                 int64_t nx, int64_t ny, int64_t nz, double diagonal,
                                 double minus, double plus, nz_value_type_t value_type) {
    int64_t rows = 0;
    NZI_TRY(grid_rows(ctx, what, nx, ny, nz, &rows));
    stencil_params_t params = {nx, ny, nz, diagonal, minus, plus};
    nzi_gen_spec_t spec = {what, rows, rows, value_type, &params, stencil_row_length,
                           stencil_fill_row};
    return nzi_gen_build(ctx, A, &spec);
}

nz_status_t nz_gen_laplace2d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                             nz_value_type_t value_type) {
    const char *what = "nz_gen_laplace2d";
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    return nzi_gen_grid_stencil(ctx, A, what, nx, ny, 1, 4.0, -1.0, -1.0, value_type);
}

nz_status_t nz_gen_laplace3d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                             int64_t nz, nz_value_type_t value_type) {
    const char *what = "nz_gen_laplace3d";
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    return nzi_gen_grid_stencil(ctx, A, what, nx, ny, nz, 6.0, -1.0, -1.0, value_type);
}

/* ---- banded ----------------------------------------------------------------------------------
 * Row i holds columns max(0, i - lower) .. min(n - 1, i + upper). The entry at distance
 * d = j - i != 0 is -1 / (1 + |d|); the diagonal is 1 + the sum of the row's off-diagonal
 * magnitudes, so every row is strictly diagonally dominant (and the matrix is nonsingular).
 * With lower == upper the matrix is symmetric positive definite. */

typedef struct banded_params {
    int64_t n, lower, upper;
} banded_params_t;

static int64_t banded_row_length(const void *params, int64_t row) {
    const banded_params_t *p = (const banded_params_t *)params;
    int64_t first = row - p->lower < 0 ? 0 : row - p->lower;
    int64_t last = row + p->upper > p->n - 1 ? p->n - 1 : row + p->upper;
    return last - first + 1;
}

static void banded_fill_row(const void *params, int64_t row, int64_t length,
                            int32_t *col_indices, void *values, nz_value_type_t value_type,
                            int64_t begin) {
    const banded_params_t *p = (const banded_params_t *)params;
    int64_t first = row - p->lower < 0 ? 0 : row - p->lower;
    double off_sum = 0.0;
    int64_t diagonal_slot = row - first;
    for (int64_t k = 0; k < length; k++) {
        int64_t col = first + k;
        int64_t distance = col > row ? col - row : row - col;
        col_indices[k] = (int32_t)col;
        if (k != diagonal_slot) {
            double v = -1.0 / (1.0 + (double)distance);
            off_sum -= v;
            nzi_set(values, value_type, begin + k, v);
        }
    }
    nzi_set(values, value_type, begin + diagonal_slot, 1.0 + off_sum);
}

nz_status_t nz_gen_banded(nz_context_t *ctx, nz_matrix_t **A, int64_t n, int64_t lower,
                          int64_t upper, nz_value_type_t value_type) {
    const char *what = "nz_gen_banded";
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    if (n < 1)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: n = %lld must be >= 1", what,
                         (long long)n);
    NZI_TRY(nzi_check_dims(ctx, n, n, what));
    if (lower < 0 || upper < 0 || lower > n - 1 || upper > n - 1)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: lower = %lld and upper = %lld must lie in [0, n - 1 = %lld]", what,
                         (long long)lower, (long long)upper, (long long)(n - 1));
    banded_params_t params = {n, lower, upper};
    nzi_gen_spec_t spec = {what, n, n, value_type, &params, banded_row_length, banded_fill_row};
    return nzi_gen_build(ctx, A, &spec);
}
