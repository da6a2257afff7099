/* dist_gen.c: each rank generates only its own rows of the 3-D Q1 FE problem (as nz_gen_fe3d)
 * and of the 7-point Laplacian (as nz_gen_laplace3d), for weak scaling without a global matrix. */
#include "dist_internal.h"
#include "fe3d_common.h" /* the library's FE row pattern (header-only) */

#include <math.h>
#include <string.h>

/* A row-range generator: the length of a row and its entries (ascending columns). */
typedef struct row_generator {
    const char *what;
    int64_t rows;
    int64_t (*length)(const void *params, int64_t row);
    int64_t (*fill)(const void *params, int64_t row, int32_t *cols, double *values);
    const void *params;
} row_generator_t;

/* ---- Q1 FE: the stencil of src/gen/gen_fe3d.c (h times the pure-number 27-point stencil; face
 * neighbours stored as explicit zeros), same numbering x + m (y + m z) and same visiting order,
 * so that every value is computed by the same expression and bitwise equal. ---- */
typedef struct fe3d_params {
    int64_t m;
    double stencil[4];
} fe3d_params_t;

static int64_t fe3d_length(const void *params, int64_t row) {
    return nzi_fe3d_row_length(((const fe3d_params_t *)params)->m, row);
}

static int64_t fe3d_fill(const void *params, int64_t row, int32_t *cols, double *values) {
    const fe3d_params_t *p = (const fe3d_params_t *)params;
    return nzi_fe3d_row(p->m, p->stencil, row, cols, values);
}

/* ---- 7-point Laplacian of src/gen/gen_stencil.c ---- */
typedef struct laplace_params {
    int64_t nx, ny, nz;
} laplace_params_t;

static int64_t laplace_length(const void *params, int64_t row) {
    const laplace_params_t *p = (const laplace_params_t *)params;
    int64_t x = row % p->nx, y = (row / p->nx) % p->ny, z = row / (p->nx * p->ny);
    return 1 + (x > 0) + (x < p->nx - 1) + (y > 0) + (y < p->ny - 1) + (z > 0) + (z < p->nz - 1);
}

static int64_t laplace_fill(const void *params, int64_t row, int32_t *cols, double *values) {
    const laplace_params_t *p = (const laplace_params_t *)params;
    const int64_t plane = p->nx * p->ny;
    int64_t x = row % p->nx, y = (row / p->nx) % p->ny, z = row / plane, k = 0;
#define NZD_PUT(col, v) (cols[k] = (int32_t)(col), values[k++] = (v))
    if (z > 0) NZD_PUT(row - plane, -1.0);
    if (y > 0) NZD_PUT(row - p->nx, -1.0);
    if (x > 0) NZD_PUT(row - 1, -1.0);
    NZD_PUT(row, 6.0);
    if (x < p->nx - 1) NZD_PUT(row + 1, -1.0);
    if (y < p->ny - 1) NZD_PUT(row + p->nx, -1.0);
    if (z < p->nz - 1) NZD_PUT(row + plane, -1.0);
#undef NZD_PUT
    return k;
}

/* This rank's rows of an even row split: lengths, then entries, then the distributed matrix. */
static nz_status_t generate(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                            const row_generator_t *gen, nz_value_type_t value_type,
                            const nz_dist_options_t *options) {
    nz_status_t status = NZ_SUCCESS;
    int64_t *part = NULL, *offsets = NULL;
    int32_t *cols = NULL;
    void *values = NULL;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (options != NULL && options->row_partition != NULL) {
        status = nz_malloc(ctx, (void **)&part, ((size_t)size + 1) * sizeof(int64_t));
        if (status == NZ_SUCCESS)
            memcpy(part, options->row_partition, ((size_t)size + 1) * sizeof(int64_t));
        for (int r = 0; r < size && status == NZ_SUCCESS; r++)
            if (part[0] != 0 || part[r + 1] < part[r] || part[size] != gen->rows)
                status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                                   "%s: row_partition must rise from 0 to %lld", gen->what,
                                   (long long)gen->rows);
    } else {
        status = nzd_even_partition(ctx, gen->rows, size, &part);
    }
    if (status != NZ_SUCCESS) goto cleanup;
    const int64_t begin = part[rank], rows = part[rank + 1] - begin;
    status = nzd_vec_alloc(ctx, NULL, (void **)&offsets, rows + 1, sizeof(int64_t), gen->what);
    if (status != NZ_SUCCESS) goto cleanup;
    offsets[0] = 0;
    for (int64_t i = 0; i < rows; i++) offsets[i + 1] = offsets[i] + gen->length(gen->params, begin + i);
    if ((status = nzd_vec_alloc(ctx, NULL, (void **)&cols, offsets[rows], sizeof(int32_t),
                                gen->what)) != NZ_SUCCESS ||
        (status = nzd_vec_alloc(ctx, NULL, &values, offsets[rows], nzd_value_size(value_type),
                                gen->what)) != NZ_SUCCESS)
        goto cleanup;
    for (int64_t i = 0; i < rows; i++) {
        double row_values[27];
        int64_t k = gen->fill(gen->params, begin + i, cols + offsets[i], row_values);
        for (int64_t j = 0; j < k; j++) nzd_set(values, value_type, offsets[i] + j, row_values[j]);
    }
cleanup:
    status = nz_dist_agree(ctx, comm, status);
    if (status == NZ_SUCCESS) {
        int64_t *col_part = NULL;
        status = nz_malloc(ctx, (void **)&col_part, ((size_t)size + 1) * sizeof(int64_t));
        if (status == NZ_SUCCESS) memcpy(col_part, part, ((size_t)size + 1) * sizeof(int64_t));
        status = nz_dist_agree(ctx, comm, status);
        if (status == NZ_SUCCESS) {
            status = nzd_build(ctx, dA, comm, gen->rows, gen->rows, part, col_part, offsets, cols,
                               value_type, values, options);
            part = NULL; /* both owned by nzd_build */
        } else {
            nz_free(ctx, col_part);
        }
    }
    nz_free(ctx, part);
    nz_free(ctx, offsets);
    nz_free(ctx, cols);
    nz_free(ctx, values);
    return status;
}

/* Arguments checked identically on every rank (same values), so no agreement is needed. */
static nz_status_t check_begin(nz_context_t *ctx, nz_dist_matrix_t **dA, nz_value_type_t vt,
                               const char *what) {
    if (ctx == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (dA == NULL) return nzd_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: dA is NULL", what);
    *dA = NULL;
    if (vt != NZ_F32 && vt != NZ_F64)
        return nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: value type %d", what, (int)vt);
    return NZ_SUCCESS;
}

/* This rank's part of b and u_exact: the formulas of nz_gen_fe3d (O(n) sines for the factors,
 * then products), in the matrix's location. */
static nz_status_t fe3d_vectors(nz_dist_matrix_t *M, int64_t n, void **b_local, void **u_local) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = M->ctx;
    const int64_t m = n - 1, begin = M->row_part[M->rank], rows = M->rows;
    const nz_value_type_t vt = M->value_type;
    const size_t vs = M->value_size;
    const double pi = 3.14159265358979323846;
    double *g = NULL, *s = NULL;
    void *host[2] = {NULL, NULL}, *out[2] = {NULL, NULL};
    void **want[2] = {b_local, u_local};
    if ((status = nzd_vec_alloc(ctx, NULL, (void **)&g, m, sizeof(double), "nz_dist_gen_fe3d")) !=
            NZ_SUCCESS ||
        (status = nzd_vec_alloc(ctx, NULL, (void **)&s, m, sizeof(double), "nz_dist_gen_fe3d")) !=
            NZ_SUCCESS)
        goto cleanup;
    nzi_fe3d_axis_factors(n, g, s);
    for (int v = 0; v < 2; v++) {
        if (want[v] == NULL) continue;
        const double *f = v == 0 ? g : s;
        const double scale = v == 0 ? 3.0 * pi * pi : 1.0;
        status = nzd_vec_alloc(ctx, NULL, &host[v], rows, vs, "nz_dist_gen_fe3d: vector");
        if (status != NZ_SUCCESS) goto cleanup;
        for (int64_t r = 0; r < rows; r++) {
            const int64_t i = begin + r;
            double value = v == 0 ? scale * f[i % m] * f[(i / m) % m] * f[i / (m * m)]
                                  : f[i % m] * f[(i / m) % m] * f[i / (m * m)];
            nzd_set(host[v], vt, r, value);
        }
        if (M->device == NULL) {
            out[v] = host[v];
            host[v] = NULL;
        } else {
            if ((status = nzd_vec_alloc(ctx, M->device, &out[v], rows, vs,
                                        "nz_dist_gen_fe3d: vector")) != NZ_SUCCESS ||
                (status = nzd_copy_to_device(ctx, out[v], host[v], (size_t)rows * vs)) != NZ_SUCCESS)
                goto cleanup;
        }
    }
    for (int v = 0; v < 2; v++)
        if (want[v] != NULL) {
            *want[v] = out[v];
            out[v] = NULL;
        }
cleanup:
    nz_free(ctx, g);
    nz_free(ctx, s);
    for (int v = 0; v < 2; v++) {
        nz_free(ctx, host[v]);
        nzd_vec_free(ctx, M->device, out[v]);
    }
    return status;
}

nz_status_t nz_dist_gen_fe3d(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm, int64_t n,
                             nz_value_type_t value_type, const nz_dist_options_t *options,
                             void **b_local, void **u_local) {
    const char *what = "nz_dist_gen_fe3d";
    nz_status_t status = check_begin(ctx, dA, value_type, what);
    if (b_local != NULL) *b_local = NULL;
    if (u_local != NULL) *u_local = NULL;
    if (status == NZ_SUCCESS && (n < 2 || n > 1291))
        status = nzd_error(ctx, n < 2 ? NZ_ERR_INVALID_ARGUMENT : NZ_ERR_UNSUPPORTED,
                           "%s: n = %lld elements per side; need 2 <= n and (n-1)^3 < 2^31",
                           what, (long long)n);
    status = nz_dist_agree(ctx, comm, status);
    if (status != NZ_SUCCESS) return status;
    const double h = 1.0 / (double)n;
    fe3d_params_t params = {n - 1, {8.0 * h / 3.0, 0.0, -h / 6.0, -h / 12.0}};
    row_generator_t gen = {what, (n - 1) * (n - 1) * (n - 1), fe3d_length, fe3d_fill, &params};
    status = generate(ctx, dA, comm, &gen, value_type, options);
    if (status != NZ_SUCCESS || (b_local == NULL && u_local == NULL)) return status;
    status = nz_dist_agree(ctx, comm, fe3d_vectors(*dA, n, b_local, u_local));
    if (status != NZ_SUCCESS) {
        nz_dist_device_t *device = (*dA)->device;
        if (b_local != NULL) nzd_vec_free(ctx, device, *b_local);
        if (u_local != NULL) nzd_vec_free(ctx, device, *u_local);
        if (b_local != NULL) *b_local = NULL;
        if (u_local != NULL) *u_local = NULL;
        nz_dist_matrix_destroy(dA);
    }
    return status;
}

nz_status_t nz_dist_gen_laplace3d(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                                  int64_t nx, int64_t ny, int64_t nz, nz_value_type_t value_type,
                                  const nz_dist_options_t *options) {
    const char *what = "nz_dist_gen_laplace3d";
    nz_status_t status = check_begin(ctx, dA, value_type, what);
    if (status == NZ_SUCCESS && (nx < 1 || ny < 1 || nz < 1))
        status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                           "%s: grid %lld x %lld x %lld: every extent must be >= 1", what,
                           (long long)nx, (long long)ny, (long long)nz);
    if (status == NZ_SUCCESS &&
        (nx > INT32_MAX || ny > INT32_MAX || nz > INT32_MAX || nx * ny > INT32_MAX ||
         nx * ny * nz > INT32_MAX))
        status = nzd_error(ctx, NZ_ERR_UNSUPPORTED, "%s: grid %lld x %lld x %lld: 2^31 rows or more",
                           what, (long long)nx, (long long)ny, (long long)nz);
    status = nz_dist_agree(ctx, comm, status);
    if (status != NZ_SUCCESS) return status;
    laplace_params_t params = {nx, ny, nz};
    row_generator_t gen = {what, nx * ny * nz, laplace_length, laplace_fill, &params};
    return generate(ctx, dA, comm, &gen, value_type, options);
}
