/* gen_rmat.c: R-MAT / Kronecker power-law graphs (Graph500 style) as a CSR adjacency matrix. */
#include "gen_internal.h"

#include <math.h>
#include <string.h>

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
 * Construction: edges come in blocks of NZI_RMAT_BLOCK, each from its own generator seeded from
 * (seed, block), and are stored as 64-bit keys row << 32 | column, so the edge list does not
 * depend on the thread count. A counting sort by row bucket (the top bits of the row; per-chunk
 * histograms, no atomics) groups the keys; each bucket is then finished by one thread: a local
 * counting sort by row, and a sort plus deduplication of every row. (A first version counted
 * rows with atomic increments: locked read-modify-writes on random rows serialise the cache
 * misses and cost 10x more.) Cost O(E scale) random bits, O(E) for the bucketing, O(sum d_i
 * log d_i) for the row sorts; temporary memory 16 E bytes plus 3 int64 arrays of 2^scale. */

#define NZI_STREAM_RMAT 0x524d4154u /* "RMAT" */
#define NZI_RMAT_BLOCK  65536       /* edges per generator stream: enough to amortise seeding */
#define NZI_RMAT_CHUNKS 64          /* edge chunks of the bucket histogram: the useful thread limit */
#define NZI_RMAT_BUCKET_BITS 14     /* up to 16384 row buckets: histogram 64 x 16384 x 8 = 8 MB */

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

/* One edge: 32 random bits per level, two levels per 64-bit draw. The quadrant is found without
 * branches (it is unpredictable by design): the row bit is set for c and d (r >= a + b), the
 * column bit for b and d. */
static inline void rmat_edge(const rmat_params_t *p, nzi_rng_t *rng, uint32_t *row,
                             uint32_t *col) {
    uint64_t u = 0, v = 0, bits = 0;
    const uint64_t t0 = p->threshold[0], t1 = p->threshold[1], t2 = p->threshold[2];
    for (int level = 0; level < p->scale; level++) {
        if ((level & 1) == 0) bits = nzi_rng_next(rng);
        uint64_t r = bits & 0xffffffffu;
        bits >>= 32;
        uint64_t row_bit = r >= t1;
        uint64_t col_bit = (uint64_t)((r >= t0) & (r < t1)) | (uint64_t)(r >= t2);
        u = u << 1 | row_bit;
        v = v << 1 | col_bit;
    }
    *row = rmat_scramble(p, u);
    *col = rmat_scramble(p, v);
}

static inline double rmat_value(uint64_t seed, uint32_t row, uint32_t col) {
    uint64_t h = nzi_gen_mix64(seed ^ nzi_gen_mix64(((uint64_t)row << 32 | col) ^ NZI_STREAM_RMAT));
    return (double)((h >> 11) + 1) * 0x1.0p-53;
}

/* Generate all edges as keys row << 32 | column: block b of NZI_RMAT_BLOCK edges comes from its
 * own generator, so key[e] does not depend on the thread count. */
static void rmat_generate(const rmat_params_t *p, int threads, uint64_t *keys) {
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
            keys[e] = (uint64_t)row << 32 | col;
        }
    }
}

static nz_status_t rmat_check_arguments(nz_context_t *ctx, nz_matrix_t **A, int scale,
                                        int edge_factor, double a, double b, double c,
                                        nz_value_type_t value_type, const char *what) {
    NZI_TRY(nzi_check_new_matrix(ctx, A, value_type, what));
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
    return NZ_SUCCESS;
}

/* The edge generator's parameters; a = b = c = 0 asks for Graph500's 0.57, 0.19, 0.19. */
static void rmat_params(rmat_params_t *p, int scale, int edge_factor, double a, double b,
                        double c, uint64_t seed) {
    if (a == 0 && b == 0 && c == 0) {
        a = 0.57;
        b = 0.19;
        c = 0.19;
    }
    const int64_t n = (int64_t)1 << scale;
    p->scale = scale;
    p->edges = (int64_t)edge_factor << scale;
    p->threshold[0] = (uint64_t)ldexp(a, 32);
    p->threshold[1] = (uint64_t)ldexp(a + b, 32);
    p->threshold[2] = (uint64_t)ldexp(fmin(a + b + c, 1.0), 32);
    p->mask = (uint64_t)n - 1;
    p->seed = seed;
    p->shift = scale / 2 > 0 ? scale / 2 : 1;
    for (int round = 0; round < 2; round++) {
        p->mul[round] = nzi_gen_mix64(seed ^ (0x6d756c00u + (uint64_t)round)) | 1u;
        p->add[round] = nzi_gen_mix64(seed ^ (0x61646400u + (uint64_t)round));
    }
}

/* The construction's temporary arrays and their shape. */
typedef struct rmat_work {
    int64_t n;                /* vertices, 2^scale */
    int row_shift;            /* a bucket holds 2^row_shift rows */
    int64_t buckets;
    int64_t chunk_edges, chunks; /* edge chunks of the bucket histogram */
    uint64_t *keys;           /* the edge list; then, as int32, the columns by row (edge_cols) */
    uint64_t *bucketed;       /* the keys by row bucket */
    int64_t *histogram;       /* chunks x buckets counts, then cursors */
    int64_t *bucket_start;    /* buckets + 1 */
    int64_t *edge_offsets;    /* n + 1: each row's first slot in edge_cols */
    int64_t *distinct;        /* n: each row's fill cursor, then its distinct columns */
} rmat_work_t;

static void rmat_work_free(nz_context_t *ctx, rmat_work_t *w) {
    nzi_free(ctx, w->keys);
    nzi_free(ctx, w->bucketed);
    nzi_free(ctx, w->histogram);
    nzi_free(ctx, w->bucket_start);
    nzi_free(ctx, w->edge_offsets);
    nzi_free(ctx, w->distinct);
}

/* The shape and the arrays, after checking the memory budget (edge keys twice, offsets and
 * counts, then at most every edge in the CSR matrix). */
static nz_status_t rmat_work_alloc(nz_context_t *ctx, const rmat_params_t *p,
                                   nz_value_type_t value_type, rmat_work_t *w) {
    nz_status_t status;
    const int bucket_bits = p->scale < NZI_RMAT_BUCKET_BITS ? p->scale : NZI_RMAT_BUCKET_BITS;
    const int64_t n = (int64_t)1 << p->scale;
    w->n = n;
    w->row_shift = p->scale - bucket_bits;
    w->buckets = (int64_t)1 << bucket_bits;
    w->chunk_edges = (p->edges + NZI_RMAT_CHUNKS - 1) / NZI_RMAT_CHUNKS;
    w->chunks = (p->edges + w->chunk_edges - 1) / w->chunk_edges;
    status = nzi_check_budget(ctx, (20.0 + (double)nzi_value_size(value_type)) * (double)p->edges +
                                       24.0 * ((double)n + 1.0),
                              "the matrix");
    if (status >= 0)
        status = nzi_alloc_array(ctx, (void **)&w->keys, (size_t)p->edges, sizeof(uint64_t),
                                 "edge list");
    if (status >= 0)
        status = nzi_alloc_array(ctx, (void **)&w->bucketed, (size_t)p->edges, sizeof(uint64_t),
                                 "edges by row bucket");
    if (status >= 0)
        status = nzi_alloc_array(ctx, (void **)&w->histogram, (size_t)(w->chunks * w->buckets),
                                 sizeof(int64_t), "bucket histogram");
    if (status >= 0)
        status = nzi_alloc_array(ctx, (void **)&w->bucket_start, (size_t)w->buckets + 1,
                                 sizeof(int64_t), "bucket offsets");
    if (status >= 0)
        status = nzi_alloc_array(ctx, (void **)&w->edge_offsets, (size_t)n + 1, sizeof(int64_t),
                                 "per-vertex edge offsets");
    if (status >= 0)
        status = nzi_alloc_array(ctx, (void **)&w->distinct, (size_t)n, sizeof(int64_t),
                                 "per-vertex distinct counts");
    return status;
}

/* Counting sort of the keys by row bucket (high bits of the row): histogram per fixed edge
 * chunk, exclusive scan bucket-major, scatter; no atomics, each chunk owns its cursors. */
static void rmat_bucket(const rmat_params_t *p, rmat_work_t *w, int threads) {
    const int64_t buckets = w->buckets, chunks = w->chunks, chunk_edges = w->chunk_edges;
    const int row_shift = w->row_shift;
    const uint64_t *keys = w->keys;
    int64_t *histogram = w->histogram;
    (void)threads;
    NZI_GEN_PRAGMA(omp parallel for schedule(static) num_threads(threads))
    for (int64_t c = 0; c < chunks; c++) {
        int64_t *count = histogram + c * buckets;
        int64_t end = (c + 1) * chunk_edges < p->edges ? (c + 1) * chunk_edges : p->edges;
        for (int64_t b = 0; b < buckets; b++) count[b] = 0;
        for (int64_t e = c * chunk_edges; e < end; e++) count[keys[e] >> (32 + row_shift)]++;
    }
    int64_t total = 0;
    for (int64_t b = 0; b < buckets; b++) {
        w->bucket_start[b] = total;
        for (int64_t c = 0; c < chunks; c++) {
            int64_t here = histogram[c * buckets + b];
            histogram[c * buckets + b] = total;
            total += here;
        }
    }
    w->bucket_start[buckets] = total;
    uint64_t *bucketed = w->bucketed;
    NZI_GEN_PRAGMA(omp parallel for schedule(static) num_threads(threads))
    for (int64_t c = 0; c < chunks; c++) {
        int64_t *cursor = histogram + c * buckets;
        int64_t end = (c + 1) * chunk_edges < p->edges ? (c + 1) * chunk_edges : p->edges;
        for (int64_t e = c * chunk_edges; e < end; e++)
            bucketed[cursor[keys[e] >> (32 + row_shift)]++] = keys[e];
    }
}

/* Per bucket, on one thread: counting sort by row into edge_cols (which reuses the memory of
 * the now dead keys: bucket b writes only int32 slots [bucket_start[b], bucket_start[b+1])),
 * then sort each row and drop duplicates. Bucket b sets edge_offsets[r + 1] for its own rows
 * r only, so buckets never write the same element. Returns the distinct entries in all. */
static int64_t rmat_rows(rmat_work_t *w, int threads) {
    const int64_t buckets = w->buckets;
    const int row_shift = w->row_shift;
    const uint64_t *bucketed = w->bucketed;
    const int64_t *bucket_start = w->bucket_start;
    int64_t *edge_offsets = w->edge_offsets, *distinct = w->distinct;
    int32_t *edge_cols = (int32_t *)w->keys;
    (void)threads;
    edge_offsets[0] = 0;
    NZI_GEN_PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(threads))
    for (int64_t b = 0; b < buckets; b++) {
        const int64_t first_row = b << row_shift, last_row = (b + 1) << row_shift;
        const int64_t begin = bucket_start[b], end = bucket_start[b + 1];
        for (int64_t r = first_row; r < last_row; r++) distinct[r] = 0;
        for (int64_t k = begin; k < end; k++) distinct[bucketed[k] >> 32]++;
        int64_t position = begin;
        for (int64_t r = first_row; r < last_row; r++) {
            edge_offsets[r + 1] = position + distinct[r];
            distinct[r] = position; /* now the row's fill cursor */
            position = edge_offsets[r + 1];
        }
        for (int64_t k = begin; k < end; k++)
            edge_cols[distinct[bucketed[k] >> 32]++] = (int32_t)(bucketed[k] & 0xffffffffu);
        int64_t row_begin = begin;
        for (int64_t r = first_row; r < last_row; r++) {
            int32_t *row = edge_cols + row_begin;
            int64_t length = edge_offsets[r + 1] - row_begin, unique = 0;
            nzi_gen_sort_i32(row, length);
            for (int64_t k = 0; k < length; k++)
                if (unique == 0 || row[k] != row[unique - 1]) row[unique++] = row[k];
            distinct[r] = unique;
            row_begin = edge_offsets[r + 1];
        }
    }
    int64_t nnz = 0;
    for (int64_t i = 0; i < w->n; i++) nnz += distinct[i];
    return nnz;
}

/* The CSR matrix M (allocated for the distinct entries) from the deduplicated rows, each value a
 * hash of (seed, row, column). */
static void rmat_fill(nz_matrix_t *M, const rmat_work_t *w, uint64_t seed,
                      nz_value_type_t value_type, int threads) {
    const int64_t n = w->n;
    const int32_t *edge_cols = (const int32_t *)w->keys;
    const int64_t *edge_offsets = w->edge_offsets, *distinct = w->distinct;
    int64_t *row_offsets = M->host.csr.row_offsets;
    int32_t *col_indices = M->host.csr.col_indices;
    void *values = M->host.csr.values;
    for (int64_t i = 0; i < n; i++) row_offsets[i + 1] = row_offsets[i] + distinct[i];
    const int chunk = nzi_gen_chunk(n, threads);
    (void)chunk;
    (void)threads;
    NZI_GEN_PRAGMA(omp parallel for schedule(dynamic, chunk) num_threads(threads))
    for (int64_t i = 0; i < n; i++) {
        const int32_t *row = edge_cols + edge_offsets[i];
        int64_t begin = row_offsets[i];
        for (int64_t k = 0; k < distinct[i]; k++) {
            col_indices[begin + k] = row[k];
            nzi_set(values, value_type, begin + k,
                    rmat_value(seed, (uint32_t)i, (uint32_t)row[k]));
        }
    }
}

/* Check, generate the edges, bucket them, sort and deduplicate the rows, build the matrix. */
nz_status_t nz_gen_rmat(nz_context_t *ctx, nz_matrix_t **A, int scale, int edge_factor, double a,
                        double b, double c, uint64_t seed, nz_value_type_t value_type) {
    const char *what = "nz_gen_rmat";
    nz_status_t status = NZ_SUCCESS;
    rmat_work_t w;
    rmat_params_t p;
    nz_matrix_t *M = NULL;
    memset(&w, 0, sizeof w);
    NZI_TRY(rmat_check_arguments(ctx, A, scale, edge_factor, a, b, c, value_type, what));
    rmat_params(&p, scale, edge_factor, a, b, c, seed);
    const int threads = nzi_context_threads(ctx);
    status = rmat_work_alloc(ctx, &p, value_type, &w);
    if (status < 0) {
        status = nzi_gen_annotate(ctx, status, what);
        goto cleanup;
    }
    rmat_generate(&p, threads, w.keys);
    rmat_bucket(&p, &w, threads);
    const int64_t nnz = rmat_rows(&w, threads);
    status = nzi_csr_alloc(ctx, &M, value_type, w.n, w.n, nnz);
    if (status < 0) {
        status = nzi_gen_annotate(ctx, status, what);
        goto cleanup;
    }
    rmat_fill(M, &w, seed, value_type, threads);
    *A = M;
    M = NULL;
cleanup:
    rmat_work_free(ctx, &w);
    nzi_matrix_free(M);
    return status;
}
