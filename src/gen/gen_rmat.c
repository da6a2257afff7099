/* gen_rmat.c: R-MAT / Kronecker power-law graphs (Graph500 style) as a CSR adjacency matrix. */
#include "gen_internal.h"

#include <math.h>

/* R-MAT (Chakrabarti, Zhan and Faloutsos, SDM 2004; Graph500 specification 3.2): each edge
 * descends `scale` levels of the adjacency matrix, choosing at every level the top-left,
 * top-right, bottom-left or bottom-right quadrant with probabilities a, b, c, d = 1 - a - b - c,
 * which sets one bit of the row and one bit of the column. As in Graph500, vertex labels are
 * then scrambled by a seeded bijection of [0, 2^scale) (applied to rows and columns alike, a
 * symmetric permutation), so that the heavy vertices are not all at the top-left corner; the
 * per-level noise of some Graph500 versions is not applied. Edges are directed (row = source);
 * self loops are kept; duplicate edges are merged into one entry whose value is a hash of
 * (seed, row, column) in (0, 1], so it does not depend on the order in which duplicates meet.
 *
 * Construction without storing the edge list: edges come in blocks of NZI_RMAT_BLOCK, each with
 * its own generator seeded from (seed, block), so pass 1 (count edges per row, atomically) and
 * pass 2 (regenerate and scatter columns through atomic per-row cursors) see the same edges on
 * any number of threads. Scatter order within a row varies between runs, but every row is then
 * sorted and deduplicated on its own, which makes the result deterministic. Cost:
 * O(E scale) random bits twice, O(sum d_i log d_i) for the per-row sorts; temporary memory
 * 4 E bytes plus two int64 arrays of 2^scale + 1. */

#define NZI_STREAM_RMAT 0x524d4154u /* "RMAT" */
#define NZI_RMAT_BLOCK  65536       /* edges per generator stream: enough to amortise seeding */

typedef struct rmat_params {
    int scale;
    int64_t edges;
    uint64_t threshold[3];   /* a, a + b, a + b + c scaled to 2^32 */
    uint64_t mask;           /* 2^scale - 1 */
    uint64_t mul[2], add[2]; /* the scrambling bijection */
    int shift;
    uint64_t seed;
} rmat_params_t;

/* Two rounds of (odd multiply + add mod 2^scale, then xor with a right shift): each step is
 * a bijection of [0, 2^scale), hence so is the composition. */
static inline uint32_t rmat_scramble(const rmat_params_t *p, uint64_t x) {
    for (int round = 0; round < 2; round++) {
        x = (x * p->mul[round] + p->add[round]) & p->mask;
        x ^= x >> p->shift;
    }
    return (uint32_t)x;
}

/* One edge: 32 random bits per level, two levels per 64-bit draw. */
static inline void rmat_edge(const rmat_params_t *p, nzi_rng_t *rng, uint32_t *row,
                             uint32_t *col) {
    uint64_t u = 0, v = 0, bits = 0;
    for (int level = 0; level < p->scale; level++) {
        if ((level & 1) == 0) bits = nzi_rng_next(rng);
        uint64_t r = bits & 0xffffffffu;
        bits >>= 32;
        u <<= 1;
        v <<= 1;
        if (r >= p->threshold[0]) {
            if (r < p->threshold[1])
                v |= 1;
            else if (r < p->threshold[2])
                u |= 1;
            else {
                u |= 1;
                v |= 1;
            }
        }
    }
    *row = rmat_scramble(p, u);
    *col = rmat_scramble(p, v);
}

static inline double rmat_value(uint64_t seed, uint32_t row, uint32_t col) {
    uint64_t h = nzi_gen_mix64(seed ^ nzi_gen_mix64(((uint64_t)row << 32 | col) ^ NZI_STREAM_RMAT));
    return (double)((h >> 11) + 1) * 0x1.0p-53;
}

/* Pass 1 (scatter == NULL): count[row + 1]++ for every edge. Pass 2: scatter[cursor[row]++] = col. */
static void rmat_edges_pass(const rmat_params_t *p, int threads, int64_t *count, int64_t *cursor,
                            int32_t *scatter) {
    const int64_t blocks = (p->edges + NZI_RMAT_BLOCK - 1) / NZI_RMAT_BLOCK;
    (void)threads;
    NZI_GEN_PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(threads))
    for (int64_t block = 0; block < blocks; block++) {
        nzi_rng_t rng;
        nzi_gen_seed_item(&rng, p->seed, NZI_STREAM_RMAT, (uint64_t)block);
        int64_t end = (block + 1) * NZI_RMAT_BLOCK;
        if (end > p->edges) end = p->edges;
        for (int64_t e = block * NZI_RMAT_BLOCK; e < end; e++) {
            uint32_t row, col;
            rmat_edge(p, &rng, &row, &col);
            if (scatter == NULL) {
                NZI_GEN_PRAGMA(omp atomic)
                count[row + 1]++;
            } else {
                int64_t slot;
                NZI_GEN_PRAGMA(omp atomic capture)
                slot = cursor[row]++;
                scatter[slot] = (int32_t)col;
            }
        }
    }
}

nz_status_t nz_gen_rmat(nz_context_t *ctx, nz_matrix_t **A, int scale, int edge_factor, double a,
                        double b, double c, uint64_t seed, nz_value_type_t value_type) {
    const char *what = "nz_gen_rmat";
    nz_status_t status = NZ_SUCCESS;
    int64_t *edge_offsets = NULL, *cursor = NULL;
    int32_t *edge_cols = NULL;
    nz_matrix_t *M = NULL;
    NZI_TRY(nzi_gen_begin(ctx, A, value_type, what));
    if (scale < 1 || scale > 30)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: scale %d must lie in [1, 30]", what,
                         scale);
    if (edge_factor < 1)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: edge_factor %d must be >= 1", what,
                         edge_factor);
    if (!isfinite(a) || !isfinite(b) || !isfinite(c) || a < 0 || b < 0 || c < 0 ||
        a + b + c > 1.0 + 1e-12)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: probabilities a = %g, b = %g, c = %g must be >= 0 with "
                         "a + b + c <= 1", what, a, b, c);
    if (a == 0 && b == 0 && c == 0) {
        a = 0.57;
        b = 0.19;
        c = 0.19;
    }
    const int64_t n = (int64_t)1 << scale;
    rmat_params_t p;
    p.scale = scale;
    p.edges = (int64_t)edge_factor << scale;
    p.threshold[0] = (uint64_t)ldexp(a, 32);
    p.threshold[1] = (uint64_t)ldexp(a + b, 32);
    p.threshold[2] = (uint64_t)ldexp(fmin(a + b + c, 1.0), 32);
    p.mask = (uint64_t)n - 1;
    p.seed = seed;
    p.shift = scale / 2 > 0 ? scale / 2 : 1;
    for (int round = 0; round < 2; round++) {
        p.mul[round] = nzi_gen_mix64(seed ^ (0x6d756c00u + (uint64_t)round)) | 1u;
        p.add[round] = nzi_gen_mix64(seed ^ (0x61646400u + (uint64_t)round));
    }
    const int threads = nzi_gen_threads(ctx);
    const int chunk = nzi_gen_chunk(n, threads);
    (void)chunk;

    status = nzi_alloc_array(ctx, (void **)&edge_offsets, (size_t)n + 1, sizeof(int64_t),
                             "per-vertex edge offsets");
    if (status >= 0)
        status = nzi_alloc_array(ctx, (void **)&cursor, (size_t)n + 1, sizeof(int64_t),
                                 "per-vertex cursors");
    if (status >= 0)
        status = nzi_alloc_array(ctx, (void **)&edge_cols, (size_t)p.edges, sizeof(int32_t),
                                 "edge list");
    if (status < 0) {
        status = nzi_gen_annotate(ctx, status, what);
        goto cleanup;
    }

    NZI_GEN_PRAGMA(omp parallel for schedule(static) num_threads(threads))
    for (int64_t i = 0; i <= n; i++) edge_offsets[i] = 0;
    rmat_edges_pass(&p, threads, edge_offsets, NULL, NULL);
    for (int64_t i = 0; i < n; i++) edge_offsets[i + 1] += edge_offsets[i];
    NZI_GEN_PRAGMA(omp parallel for schedule(static) num_threads(threads))
    for (int64_t i = 0; i < n; i++) cursor[i] = edge_offsets[i];
    rmat_edges_pass(&p, threads, NULL, cursor, edge_cols);

    /* Sort each row, drop duplicates in place; cursor[i + 1] becomes the distinct count. */
    NZI_GEN_PRAGMA(omp parallel for schedule(dynamic, chunk) num_threads(threads))
    for (int64_t i = 0; i < n; i++) {
        int32_t *row = edge_cols + edge_offsets[i];
        int64_t length = edge_offsets[i + 1] - edge_offsets[i], distinct = 0;
        nzi_gen_sort_i32(row, length);
        for (int64_t k = 0; k < length; k++)
            if (distinct == 0 || row[k] != row[distinct - 1]) row[distinct++] = row[k];
        cursor[i + 1] = distinct;
    }
    cursor[0] = 0;
    for (int64_t i = 0; i < n; i++) cursor[i + 1] += cursor[i];

    status = nzi_csr_alloc(ctx, &M, value_type, n, n, cursor[n]);
    if (status < 0) {
        status = nzi_gen_annotate(ctx, status, what);
        goto cleanup;
    }
    int64_t *row_offsets = M->host.csr.row_offsets;
    int32_t *col_indices = M->host.csr.col_indices;
    void *values = M->host.csr.values;
    NZI_GEN_PRAGMA(omp parallel for schedule(dynamic, chunk) num_threads(threads))
    for (int64_t i = 0; i < n; i++) {
        const int32_t *row = edge_cols + edge_offsets[i];
        int64_t begin = cursor[i], length = cursor[i + 1] - cursor[i];
        row_offsets[i + 1] = cursor[i + 1];
        for (int64_t k = 0; k < length; k++) {
            col_indices[begin + k] = row[k];
            nzi_set(values, value_type, begin + k,
                    rmat_value(seed, (uint32_t)i, (uint32_t)row[k]));
        }
    }
    *A = M;
    M = NULL;
cleanup:
    nzi_free(ctx, edge_offsets);
    nzi_free(ctx, cursor);
    nzi_free(ctx, edge_cols);
    nzi_matrix_free(M);
    return status;
}
