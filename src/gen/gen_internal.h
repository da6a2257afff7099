/* gen_internal.h: the row-by-row CSR builder and the random helpers shared by the generators. */
#ifndef NZI_GEN_INTERNAL_H
#define NZI_GEN_INTERNAL_H

#include "nzi.h"

#ifdef _OPENMP
#include <omp.h>
#define NZI_GEN_PRAGMA(x) _Pragma(#x)
#else
#define NZI_GEN_PRAGMA(x)
#endif

/* A 64-bit mixing function (the splitmix64 finaliser). Used to derive independent per-row or
 * per-block seeds from the user's seed, so that the output does not depend on which thread
 * generates which row. */
static inline uint64_t nzi_gen_mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Seed rng for item `index` of stream `stream` (a constant per generator) under `seed`. */
static inline void nzi_gen_seed_item(nzi_rng_t *rng, uint64_t seed, uint64_t stream,
                                     uint64_t index) {
    nzi_rng_seed(rng, nzi_gen_mix64(seed ^ nzi_gen_mix64(stream ^ nzi_gen_mix64(index))));
}

/* A value in [-1, 1) from rng. */
static inline double nzi_gen_signed_unit(nzi_rng_t *rng) {
    return 2.0 * nzi_rng_uniform(rng) - 1.0;
}

/* A row-by-row description of a CSR matrix: row_length(params, i) returns the number of stored
 * entries of row i, and fill_row(params, i, length, col_indices, values, begin) writes them
 * (columns strictly ascending) into col_indices[0 .. length) and values[begin .. begin + length)
 * of the given value type. Both must be pure functions of (params, i), which makes the result
 * independent of the thread count; both are called from OpenMP threads concurrently. */
typedef struct nzi_gen_spec {
    const char *what;  /* generator name, for messages */
    int64_t rows, cols;
    nz_value_type_t value_type;
    const void *params;
    int64_t (*row_length)(const void *params, int64_t row);
    void (*fill_row)(const void *params, int64_t row, int64_t length, int32_t *col_indices,
                     void *values, nz_value_type_t value_type, int64_t begin);
} nzi_gen_spec_t;

/* Build a host CSR matrix from spec: a parallel count pass, a prefix sum, one allocation, a
 * parallel fill pass. */
nz_status_t nzi_gen_build(nz_context_t *ctx, nz_matrix_t **A, const nzi_gen_spec_t *spec);

/* The 5-point (nz = 1) or 7-point stencil matrix of an nx x ny x nz grid (gen_stencil.c): rows in
 * natural order (x fastest), `diagonal` on the diagonal, `minus` for the neighbours at -x, -y, -z
 * and `plus` for those at +x, +y, +z that lie inside the grid (Dirichlet). Checks the extents
 * (>= 1; NZ_ERR_OVERFLOW, NZ_ERR_UNSUPPORTED past the row limit), not ctx, A or value_type. */
nz_status_t nzi_gen_grid_stencil(nz_context_t *ctx, nz_matrix_t **A, const char *what,
                                 int64_t nx, int64_t ny, int64_t nz, double diagonal,
                                 double minus, double plus, nz_value_type_t value_type);

/* Rows per dynamic-schedule chunk: small enough to balance rows of very different cost, large
 * enough that scheduling overhead is negligible for millions of cheap rows. */
int nzi_gen_chunk(int64_t rows, int threads);

/* Re-issue the context's last error prefixed with the generator's name (after a callee failed). */
nz_status_t nzi_gen_annotate(nz_context_t *ctx, nz_status_t status, const char *what);


/* Sort n int32 keys ascending in place (introsort; no extra memory). */
void nzi_gen_sort_i32(int32_t *keys, int64_t n);

/* Choose k distinct integers uniformly from [0, n) (0 <= k <= n <= 2^31 - 1) and write them to
 * out[0 .. k) in ascending order. Dense requests use selection sampling, sparse ones rejection
 * with a sort of the k draws. */
void nzi_gen_sample_sorted(nzi_rng_t *rng, int64_t k, int64_t n, int32_t *out);

#endif /* NZI_GEN_INTERNAL_H */
