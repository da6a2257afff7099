/* gen_random.c: random sparse matrices: uniform rows, rail-like clustered rows, mixed short and huge rows. */
#include "gen_internal.h"

#include <math.h>

/* Every row draws from its own generator, seeded from (seed, stream, row), first its length,
 * then its columns, then its values in [-1, 1). The count pass and the fill pass replay the same
 * draws, and no row depends on another, so the matrix is the same for any thread count. */
#define NZI_STREAM_RANDOM 0x52414e44u /* "RAND" */
#define NZI_STREAM_RAIL   0x5241494cu /* "RAIL" */
#define NZI_STREAM_MIXED  0x4d495844u /* "MIXD" */

static void fill_values(nzi_rng_t *rng, void *values, nz_value_type_t value_type, int64_t begin,
                        int64_t length) {
    for (int64_t k = 0; k < length; k++)
        nzi_set(values, value_type, begin + k, nzi_gen_signed_unit(rng));
}

/* ---- uniform random --------------------------------------------------------------------------
 * Row length floor(U (2 mean + 1)) for U uniform in [0, 1): uniform on the integers
 * 0 .. floor(2 mean), with mean exactly `mean` when 2 mean is an integer. Columns uniform
 * without replacement (nzi_gen_sample_sorted). */

typedef struct random_params {
    int64_t cols, max_length;
    double span; /* 2 mean + 1 */
    uint64_t seed;
} random_params_t;

static int64_t random_draw_length(const random_params_t *p, nzi_rng_t *rng, int64_t row) {
    nzi_gen_seed_item(rng, p->seed, NZI_STREAM_RANDOM, (uint64_t)row);
    int64_t length = (int64_t)(nzi_rng_uniform(rng) * p->span);
    return length > p->max_length ? p->max_length : length;
}

static int64_t random_row_length(const void *params, int64_t row) {
    nzi_rng_t rng;
    return random_draw_length((const random_params_t *)params, &rng, row);
}

static void random_fill_row(const void *params, int64_t row, int64_t length,
                            int32_t *col_indices, void *values, nz_value_type_t value_type,
                            int64_t begin) {
    const random_params_t *p = (const random_params_t *)params;
    nzi_rng_t rng;
    random_draw_length(p, &rng, row);
    nzi_gen_sample_sorted(&rng, length, p->cols, col_indices);
    fill_values(&rng, values, value_type, begin, length);
}

/* Rows and columns both >= 1 and within the 2^31 - 1 limit. */
static nz_status_t check_shape(nz_context_t *ctx, const char *what, int64_t rows, int64_t cols) {
    if (rows < 1 || cols < 1)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: shape %lld x %lld: need rows, cols >= 1",
                         what, (long long)rows, (long long)cols);
    return nzi_check_dims(ctx, rows, cols, what);
}

nz_status_t nz_gen_random(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                          double mean_row_length, uint64_t seed, nz_value_type_t value_type) {
    const char *what = "nz_gen_random";
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    NZI_TRY(check_shape(ctx, what, rows, cols));
    if (!(mean_row_length >= 0.0) || !isfinite(mean_row_length))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: mean_row_length %g must be finite and >= 0", what, mean_row_length);
    if (floor(2.0 * mean_row_length) > (double)cols)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: mean_row_length %g: rows of up to %g entries do not fit in %lld "
                         "columns", what, mean_row_length, floor(2.0 * mean_row_length),
                         (long long)cols);
    random_params_t params = {cols, (int64_t)floor(2.0 * mean_row_length),
                              2.0 * mean_row_length + 1.0, seed};
    nzi_gen_spec_t spec = {what, rows, cols, value_type, &params, random_row_length,
                           random_fill_row};
    return nzi_gen_build(ctx, A, &spec);
}

/* ---- rail-like -----------------------------------------------------------------------------
 * Models the constraint matrices of crew-scheduling set-covering LPs (rail507, rail4284): few
 * rows, very many columns, long rows whose columns bunch together. Row length L uniform in
 * [max(1, row_length / 2), min(cols, row_length + row_length / 2)]. The row's columns lie in
 * c (1..8, random) disjoint windows of total width W = min(cols, 4 L), so about a quarter of
 * each window is filled: the window widths are fixed, the free space cols - W is split among
 * the gaps by c sorted uniform cut points, and L of the W window positions are chosen by
 * selection sampling and mapped to columns, which keeps them sorted and distinct. O(W) per row. */

#define NZI_RAIL_MAX_CLUSTERS 8

typedef struct rail_params {
    int64_t cols, min_length, max_length;
    uint64_t seed;
} rail_params_t;

static int64_t rail_draw_length(const rail_params_t *p, nzi_rng_t *rng, int64_t row) {
    nzi_gen_seed_item(rng, p->seed, NZI_STREAM_RAIL, (uint64_t)row);
    return p->min_length + nzi_rng_below(rng, p->max_length - p->min_length + 1);
}

static int64_t rail_row_length(const void *params, int64_t row) {
    nzi_rng_t rng;
    return rail_draw_length((const rail_params_t *)params, &rng, row);
}

static void rail_fill_row(const void *params, int64_t row, int64_t length, int32_t *col_indices,
                          void *values, nz_value_type_t value_type, int64_t begin) {
    const rail_params_t *p = (const rail_params_t *)params;
    nzi_rng_t rng;
    rail_draw_length(p, &rng, row);
    int64_t window = length * 4 < p->cols ? length * 4 : p->cols;
    int64_t clusters = 1 + nzi_rng_below(&rng, NZI_RAIL_MAX_CLUSTERS);
    if (clusters > window) clusters = window;
    int64_t start[NZI_RAIL_MAX_CLUSTERS], first_slot[NZI_RAIL_MAX_CLUSTERS + 1];
    for (int64_t c = 0; c < clusters; c++) {
        int64_t cut = nzi_rng_below(&rng, p->cols - window + 1), j = c - 1;
        while (j >= 0 && start[j] > cut) {
            start[j + 1] = start[j];
            j--;
        }
        start[j + 1] = cut;
    }
    first_slot[0] = 0;
    for (int64_t c = 0; c < clusters; c++) {
        int64_t width = window / clusters + (c < window % clusters);
        start[c] += first_slot[c]; /* gap cut point + the widths of the windows before */
        first_slot[c + 1] = first_slot[c] + width;
    }
    nzi_gen_sample_sorted(&rng, length, window, col_indices);
    int64_t c = 0;
    for (int64_t k = 0; k < length; k++) {
        int64_t slot = col_indices[k];
        while (slot >= first_slot[c + 1]) c++;
        col_indices[k] = (int32_t)(start[c] + slot - first_slot[c]);
    }
    fill_values(&rng, values, value_type, begin, length);
}

nz_status_t nz_gen_rail(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                        int64_t row_length, uint64_t seed, nz_value_type_t value_type) {
    const char *what = "nz_gen_rail";
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    NZI_TRY(check_shape(ctx, what, rows, cols));
    if (row_length < 1 || row_length > cols)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: row_length %lld must lie in [1, cols = %lld]",
                         what, (long long)row_length, (long long)cols);
    int64_t min_length = row_length / 2 < 1 ? 1 : row_length / 2;
    int64_t max_length = row_length + row_length / 2;
    if (max_length > cols) max_length = cols;
    rail_params_t params = {cols, min_length, max_length, seed};
    nzi_gen_spec_t spec = {what, rows, cols, value_type, &params, rail_row_length, rail_fill_row};
    return nzi_gen_build(ctx, A, &spec);
}

/* ---- mixed -----------------------------------------------------------------------------------
 * rows x rows. Long row k (0 <= k < long_rows) is row floor((2k + 1) rows / (2 long_rows)), the
 * midpoints of long_rows equal slices, so long rows are distinct and evenly spread; each has
 * min(long_length, rows) uniform columns. Every other row has a length uniform in
 * [1, 2 short_length - 1] (mean short_length) and uniform columns. */

typedef struct mixed_params {
    int64_t rows, short_length, long_rows, long_length;
    uint64_t seed;
} mixed_params_t;

static int64_t long_row_index(const mixed_params_t *p, int64_t k) {
    return (int64_t)(((uint64_t)(2 * k + 1) * (uint64_t)p->rows) / (2u * (uint64_t)p->long_rows));
}

/* Long row k satisfies k in [i L / R - 1/2, i L / R + 1/2), so only floor(i L / R) and its
 * successor can map to row i. */
static bool is_long_row(const mixed_params_t *p, int64_t row) {
    if (p->long_rows == 0) return false;
    int64_t k = (int64_t)(((uint64_t)row * (uint64_t)p->long_rows) / (uint64_t)p->rows);
    for (int64_t cand = k; cand <= k + 1; cand++)
        if (cand < p->long_rows && long_row_index(p, cand) == row) return true;
    return false;
}

static int64_t mixed_draw_length(const mixed_params_t *p, nzi_rng_t *rng, int64_t row) {
    nzi_gen_seed_item(rng, p->seed, NZI_STREAM_MIXED, (uint64_t)row);
    if (is_long_row(p, row)) return p->long_length;
    return 1 + nzi_rng_below(rng, 2 * p->short_length - 1);
}

static int64_t mixed_row_length(const void *params, int64_t row) {
    nzi_rng_t rng;
    return mixed_draw_length((const mixed_params_t *)params, &rng, row);
}

static void mixed_fill_row(const void *params, int64_t row, int64_t length, int32_t *col_indices,
                           void *values, nz_value_type_t value_type, int64_t begin) {
    const mixed_params_t *p = (const mixed_params_t *)params;
    nzi_rng_t rng;
    mixed_draw_length(p, &rng, row);
    nzi_gen_sample_sorted(&rng, length, p->rows, col_indices);
    fill_values(&rng, values, value_type, begin, length);
}

nz_status_t nz_gen_mixed(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t short_length,
                         int64_t long_rows, int64_t long_length, uint64_t seed,
                         nz_value_type_t value_type) {
    const char *what = "nz_gen_mixed";
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
    NZI_TRY(check_shape(ctx, what, rows, rows));
    if (short_length < 1 || short_length > (rows + 1) / 2)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: short_length %lld must lie in [1, %lld] so that rows of up to "
                         "2 short_length - 1 fit in %lld columns",
                         what, (long long)short_length, (long long)((rows + 1) / 2), (long long)rows);
    if (long_rows < 0 || long_rows > rows)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: long_rows %lld must lie in [0, rows = %lld]",
                         what, (long long)long_rows, (long long)rows);
    if (long_rows > 0 && long_length < 1)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: long_length %lld must be >= 1", what,
                         (long long)long_length);
    mixed_params_t params = {rows, short_length, long_rows,
                             long_length > rows ? rows : long_length, seed};
    nzi_gen_spec_t spec = {what, rows, rows, value_type, &params, mixed_row_length,
                           mixed_fill_row};
    return nzi_gen_build(ctx, A, &spec);
}
