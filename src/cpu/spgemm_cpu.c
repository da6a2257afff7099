/* spgemm_cpu.c: CPU Gustavson SpGEMM (OpenMP) in one pass with sorted rows; the numeric phase
 * into a known pattern (SpGEMM plans); sparse addition C = alpha A + beta B. */
#include "spgemm_common.h"

#include <string.h>

/*
 * The product: Gustavson's row-by-row method (Gustavson 1978; as in CSparse's cs_multiply): row i
 * of C is the sum over a_ij of a_ij times row j of B, accumulated in a per-thread accumulator.
 * Two passes over the rows, both OpenMP-parallel with a dynamic schedule over chunks of
 * CHUNK_ROWS rows (power-law rows):
 *   1. symbolic: the number of distinct columns of every row of C -> C's exact row offsets;
 *   2. numeric: accumulate each row and write it, sorted, straight into C.
 * The accumulator is chosen once per product (accumulator_is_dense):
 *   - dense: per thread a bitmap of B's columns (a bit per column, n / 8 bytes: it stays in L1
 *     or L2 where a stamp array would not), a summary bitmap with a bit per non-zero bitmap word,
 *     and an array of n values. The symbolic pass only sets bits (no branch) and counts the
 *     set bits of the touched words. The numeric pass stores a product's value at first touch
 *     and adds later ones; walking the summary, then the words, yields the columns in ascending
 *     order, so no sort is needed, and clears both bitmaps for the next row. Chosen when the
 *     summary scan (n / 4096 words a row) is small against the row's work, and the values fit
 *     the thread's share of the caches, or when rows are dense relative to n;
 *   - hash: a linear-probing table per thread, sized per row to a power of two >= 2 x the row's
 *     bound min(products, B's columns) and reset over that prefix (as in Nagasaka et al.,
 *     "High-performance sparse matrix-matrix products on Intel KNL and multicore
 *     architectures", ICPP workshops 2018); the row's columns are then sorted (int32 keys only)
 *     and the values found again in the table in sorted order.
 * Cost: O(products) expected for the accumulation, plus O(n / 4096) a row (dense) or
 * O(nnz(C) log(row length)) for the sorts (hash); workspace O(threads x n / 8 + threads x n
 * values) (dense) or O(threads x longest row bound) (hash). Entries are summed in the value type
 * in the order of A's row then B's row (a product, then an addition: no fused multiply-add), so
 * the result is bitwise reproducible and independent of the thread count. Structural products
 * that cancel numerically stay as explicit zeros.
 */

#define CHUNK_ROWS 64
#define DENSE_CACHE_BYTES ((size_t)8 << 20)     /* a thread's dense values, at most */
#define DENSE_WORKSPACE_LIMIT ((size_t)256 << 20) /* all threads' dense arrays together */
#define INSERTION_SORT_MAX 24

typedef struct cpu_work {
    nz_context_t *ctx;
    int threads;
    bool dense;
    int64_t n;              /* B's columns */
    int64_t capacity;       /* per-thread entries: n (dense) or the largest table (hash) */
    size_t value_size;
    int32_t *keys;          /* hash: threads x capacity keys (-1 empty); dense: the symbolic
                               pass's row stamps (0: never) */
    void *values;           /* threads x capacity accumulators */
    uint64_t *bits;         /* dense: threads x bit_words, a bit per column (set: touched) */
    uint64_t *summary;      /* dense: threads x summary_words, a bit per non-zero bits word */
    int64_t bit_words, summary_words;
} cpu_work_t;

static int64_t next_pow2(int64_t x) {
    int64_t p = 16;
    while (p < x) p *= 2;
    return p;
}

static bool accumulator_is_dense(int64_t n, int64_t rows, int64_t total_products, int threads,
                                 size_t value_size) {
    /* a value, a symbolic stamp and a bit per column */
    const double per_thread = (double)n * ((double)value_size + sizeof(int32_t) + 0.125);
    const double mean = rows > 0 ? (double)total_products / (double)rows : 0.0;
    if (per_thread * threads > (double)DENSE_WORKSPACE_LIMIT) return false;
    /* rows whose products cover a sixteenth of the columns: a dense sweep is cheap */
    if (mean * 16.0 >= (double)n) return true;
    /* the summary scan (n / 4096 words) is small against the row's products, and the values
     * stay in the thread's share of the last-level cache */
    return (double)n / 4096.0 <= 2.0 * mean && per_thread <= (double)DENSE_CACHE_BYTES;
}

/* Hash slot of column c in a table of `size` (a power of two): Knuth's multiplicative hash. */
static inline int64_t hash_slot(int32_t c, int64_t size) {
    return (int64_t)(((uint64_t)(uint32_t)c * 2654435761u) & (uint64_t)(size - 1));
}

/* Sort distinct int32 keys ascending: insertion sort up to INSERTION_SORT_MAX keys (rows of
 * stencil and FE products arrive nearly sorted, which insertion sort finishes in about one
 * pass), else quicksort with a median-of-three pivot, recursing on the smaller side. */
static void sort_columns(int32_t *c, int64_t n) {
    while (n > INSERTION_SORT_MAX) {
        int64_t mid = n / 2, last = n - 1;
        int32_t a = c[0], b = c[mid], d = c[last];
        int32_t pivot = a < b ? (b < d ? b : (a < d ? d : a)) : (a < d ? a : (b < d ? d : b));
        int64_t lo = 0, hi = last;
        while (lo <= hi) {
            while (c[lo] < pivot) lo++;
            while (c[hi] > pivot) hi--;
            if (lo <= hi) {
                int32_t t = c[lo];
                c[lo] = c[hi];
                c[hi] = t;
                lo++;
                hi--;
            }
        }
        if (hi + 1 < n - lo) {
            sort_columns(c, hi + 1);
            c += lo;
            n -= lo;
        } else {
            sort_columns(c + lo, n - lo);
            n = hi + 1;
        }
    }
    for (int64_t x = 1; x < n; x++) {
        int32_t v = c[x];
        int64_t y = x - 1;
        while (y >= 0 && c[y] > v) {
            c[y + 1] = c[y];
            y--;
        }
        c[y + 1] = v;
    }
}

/* Rows of B are visited in A's column order, mostly far apart: a miss each. While row j of A's
 * nonzero k is processed, B's row for nonzero k + PREFETCH_AHEAD (of this row of A or the next,
 * which the same thread takes next) is requested, its offsets PREFETCH_AHEAD further on. */
#define PREFETCH_AHEAD 4
static inline void prefetch_b(const int32_t *a_col, int64_t a_nnz, const int64_t *b_off,
                              const int32_t *b_col, const char *b_val, size_t value_size,
                              int64_t k) {
    if (k + 2 * PREFETCH_AHEAD < a_nnz) __builtin_prefetch(b_off + a_col[k + 2 * PREFETCH_AHEAD]);
    if (k + PREFETCH_AHEAD < a_nnz) {
        const int64_t l = b_off[a_col[k + PREFETCH_AHEAD]];
        __builtin_prefetch(b_col + l);
        if (b_val != NULL) __builtin_prefetch(b_val + (size_t)l * value_size);
    }
}

/* The symbolic pass for row i: the number of distinct columns of row i of C. */
static int64_t row_count(const nz_matrix_t *A, const nz_matrix_t *B, const cpu_work_t *w, int t,
                         int64_t i, int64_t bound, int32_t *stamp) {
    const int64_t *a_off = A->host.csr.row_offsets, *b_off = B->host.csr.row_offsets;
    const int32_t *a_col = A->host.csr.col_indices, *b_col = B->host.csr.col_indices;
    const int64_t a_nnz = a_off[A->rows];
    int64_t count = 0;
    if (bound == 0) return 0;
    if (w->dense) {
        /* a stamp per column (the thread's row count, in its own array): a load, a compare and
         * a store at first touch, no dependency between repeated products */
        int32_t *stamps = w->keys + (size_t)t * (size_t)w->capacity;
        if (*stamp == INT32_MAX) { /* wrapped: start the array afresh */
            memset(stamps, 0, (size_t)w->capacity * sizeof(int32_t));
            *stamp = 0;
        }
        const int32_t s = ++*stamp;
        for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {
            const int32_t j = a_col[k];
            const int64_t l_end = b_off[j + 1];
            prefetch_b(a_col, a_nnz, b_off, b_col, NULL, 0, k);
            for (int64_t l = b_off[j]; l < l_end; l++) {
                const int32_t c = b_col[l];
                if (stamps[c] != s) {
                    stamps[c] = s;
                    count++;
                }
            }
        }
        return count;
    }
    int32_t *keys = w->keys + (size_t)t * (size_t)w->capacity;
    const int64_t size = next_pow2(2 * bound);
    for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {
        const int32_t j = a_col[k];
        prefetch_b(a_col, a_nnz, b_off, b_col, NULL, 0, k);
        for (int64_t l = b_off[j]; l < b_off[j + 1]; l++) {
            const int32_t c = b_col[l];
            int64_t h = hash_slot(c, size);
            while (keys[h] != c && keys[h] != -1) h = (h + 1) & (size - 1);
            if (keys[h] == -1) {
                keys[h] = c;
                count++;
            }
        }
    }
    memset(keys, 0xff, (size_t)size * sizeof(int32_t));
    return count;
}

/* One row of C, per value type: accumulate, sort the columns, gather the values. Writes the
 * row to cols / vals (room for `bound` entries) and returns its length. */
#define NZI_SPGEMM_CPU_ROW(T, SUFFIX)                                                           \
    static int64_t row_product_##SUFFIX(const nz_matrix_t *A, const nz_matrix_t *B,             \
                                        const cpu_work_t *w, int t, int64_t i, int64_t bound,   \
                                        int32_t *cols, T *vals) {                               \
        const int64_t *a_off = A->host.csr.row_offsets, *b_off = B->host.csr.row_offsets;       \
        const int32_t *a_col = A->host.csr.col_indices, *b_col = B->host.csr.col_indices;       \
        const T *a_val = (const T *)A->host.csr.values, *b_val = (const T *)B->host.csr.values; \
        const int64_t a_nnz = a_off[A->rows];                                                   \
        T *acc = (T *)w->values + (size_t)t * (size_t)w->capacity;                              \
        int64_t count = 0;                                                                      \
        if (bound == 0) return 0;                                                               \
        if (w->dense) {                                                                         \
            uint64_t *bits = w->bits + (size_t)t * (size_t)w->bit_words;                        \
            uint64_t *summary = w->summary + (size_t)t * (size_t)w->summary_words;              \
            for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {                                 \
                const int32_t j = a_col[k];                                                     \
                const T a = a_val[k];                                                           \
                prefetch_b(a_col, a_nnz, b_off, b_col, (const char *)b_val, sizeof(T), k);      \
                const int64_t l_end = b_off[j + 1];                                             \
                for (int64_t l = b_off[j]; l < l_end; l++) {                                    \
                    const int32_t c = b_col[l];                                                 \
                    const T v = a * b_val[l];                                                   \
                    const uint64_t bit = (uint64_t)1 << (c & 63);                               \
                    uint64_t *word = bits + (c >> 6);                                           \
                    if (*word & bit) {                                                          \
                        acc[c] += v;                                                            \
                    } else {                                                                    \
                        acc[c] = v;                                                             \
                        if (*word == 0) summary[c >> 12] |= (uint64_t)1 << ((c >> 6) & 63);     \
                        *word |= bit;                                                           \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
            /* the set bits in ascending order are the row's sorted columns; clear as we go */  \
            for (int64_t s = 0; s < w->summary_words; s++) {                                    \
                uint64_t sw = summary[s];                                                       \
                if (sw == 0) continue;                                                          \
                summary[s] = 0;                                                                 \
                while (sw != 0) {                                                               \
                    const int64_t wi = s * 64 + __builtin_ctzll(sw);                            \
                    uint64_t bw = bits[wi];                                                     \
                    sw &= sw - 1;                                                               \
                    bits[wi] = 0;                                                               \
                    while (bw != 0) {                                                           \
                        const int32_t c = (int32_t)(wi * 64 + __builtin_ctzll(bw));             \
                        bw &= bw - 1;                                                           \
                        cols[count] = c;                                                        \
                        vals[count++] = acc[c];                                                 \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
            return count;                                                                       \
        }                                                                                       \
        int32_t *keys = w->keys + (size_t)t * (size_t)w->capacity;                              \
        const int64_t size = next_pow2(2 * bound);                                              \
        for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {                                     \
            const int32_t j = a_col[k];                                                         \
            const T a = a_val[k];                                                               \
            prefetch_b(a_col, a_nnz, b_off, b_col, (const char *)b_val, sizeof(T), k);          \
            for (int64_t l = b_off[j]; l < b_off[j + 1]; l++) {                                 \
                const int32_t c = b_col[l];                                                     \
                const T v = a * b_val[l];                                                       \
                int64_t h = hash_slot(c, size);                                                 \
                while (keys[h] != c && keys[h] != -1) h = (h + 1) & (size - 1);                 \
                if (keys[h] == -1) {                                                            \
                    keys[h] = c;                                                                \
                    acc[h] = v;                                                                 \
                    cols[count++] = c;                                                          \
                } else {                                                                        \
                    acc[h] += v;                                                                \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        sort_columns(cols, count);                                                              \
        for (int64_t x = 0; x < count; x++) {                                                   \
            int64_t h = hash_slot(cols[x], size);                                               \
            while (keys[h] != cols[x]) h = (h + 1) & (size - 1);                                \
            vals[x] = acc[h];                                                                   \
        }                                                                                       \
        memset(keys, 0xff, (size_t)size * sizeof(int32_t));                                     \
        return count;                                                                           \
    }

NZI_SPGEMM_CPU_ROW(float, f32)
NZI_SPGEMM_CPU_ROW(double, f64)

/* The accumulator workspace of a product (w->n, threads, value_size and dense set): dense
 * bitmaps and values, or hash keys and values for rows up to `longest` entries. */
static nz_status_t work_alloc(nz_context_t *ctx, cpu_work_t *w, int64_t longest) {
    nz_status_t status = NZ_SUCCESS;
    size_t entries;
    w->capacity = w->dense ? (w->n > 0 ? w->n : 1) : next_pow2(2 * longest);
    if (nzi_mul_overflow_size((size_t)w->threads, (size_t)w->capacity, &entries))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "nz_spgemm (cpu): workspace size overflows");
    NZI_CHECK(nzi_alloc_array(ctx, &w->values, entries, w->value_size,
                              "nz_spgemm (cpu): accumulator values"));
    if (w->dense) {
        w->bit_words = (w->n + 63) / 64;
        w->summary_words = (w->bit_words + 63) / 64;
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&w->bits, (size_t)w->threads * (size_t)w->bit_words,
                                  sizeof(uint64_t), "nz_spgemm (cpu): accumulator bitmaps"));
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&w->summary,
                                  (size_t)w->threads * (size_t)w->summary_words, sizeof(uint64_t),
                                  "nz_spgemm (cpu): bitmap summaries"));
        memset(w->bits, 0, (size_t)w->threads * (size_t)w->bit_words * sizeof(uint64_t));
        memset(w->summary, 0, (size_t)w->threads * (size_t)w->summary_words * sizeof(uint64_t));
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&w->keys, entries, sizeof(int32_t),
                                  "nz_spgemm (cpu): symbolic stamps"));
        memset(w->keys, 0, entries * sizeof(int32_t));
    } else {
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&w->keys, entries, sizeof(int32_t),
                                  "nz_spgemm (cpu): accumulator keys"));
        memset(w->keys, 0xff, entries * sizeof(int32_t));
    }
cleanup:
    return status;
}

static void work_free(nz_context_t *ctx, cpu_work_t *w) {
    nzi_free(ctx, w->keys);
    nzi_free(ctx, w->values);
    nzi_free(ctx, w->bits);
    nzi_free(ctx, w->summary);
    memset(w, 0, sizeof *w);
}

nz_status_t nzi_spgemm_cpu(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                           const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                           nz_spgemm_info_t *info, nz_spgemm_profile_t *profile) {
    nz_status_t status = NZ_SUCCESS;
    const int64_t m = A->rows, n = B->cols;
    const int64_t chunks = (m + CHUNK_ROWS - 1) / CHUNK_ROWS;
    int64_t *row_nnz = NULL, total = 0, longest = 0;
    nz_matrix_t *M = NULL;
    cpu_work_t w;
    double t0 = nzi_wtime(), t1, t2;

    memset(&w, 0, sizeof w);
    w.threads = nzi_cpu_spgemm_threads(ctx, opt->threads);
    w.n = n;
    w.value_size = nzi_value_size(A->value_type);

    /* row_nnz first holds each row's products, clamped to B's columns: the row's bound */
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&row_nnz, (size_t)m + 1, sizeof(int64_t),
                              "nz_spgemm (cpu): row products"));
    NZI_CHECK(nzi_spgemm_count_products(ctx, A, B, 0, m, row_nnz, &total));
    info->products = total;
    for (int64_t i = 0; i < m; i++) {
        if (row_nnz[i] > n) row_nnz[i] = n;
        if (row_nnz[i] > longest) longest = row_nnz[i];
    }
    w.dense = accumulator_is_dense(n, m, total, w.threads, w.value_size);
    NZI_CHECK(work_alloc(ctx, &w, longest));

#ifdef _OPENMP
#pragma omp parallel num_threads(w.threads)
#endif
    {
        const int t = nzi_cpu_thread_id();
        int32_t stamp = 0;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t end = (c + 1) * CHUNK_ROWS < m ? (c + 1) * CHUNK_ROWS : m;
            for (int64_t i = c * CHUNK_ROWS; i < end; i++)
                row_nnz[i] = row_count(A, B, &w, t, i, row_nnz[i], &stamp);
        }
    }
    t1 = nzi_wtime();
    info->symbolic_seconds = t1 - t0;
    NZI_CHECK(nzi_spgemm_alloc_output(ctx, &M, A->value_type, m, n, row_nnz));
#ifdef _OPENMP
#pragma omp parallel for num_threads(w.threads) schedule(dynamic, 1)
#endif
    for (int64_t c = 0; c < chunks; c++) {
        const int t = nzi_cpu_thread_id();
        const int64_t end = (c + 1) * CHUNK_ROWS < m ? (c + 1) * CHUNK_ROWS : m;
        const int64_t *off = M->host.csr.row_offsets;
        for (int64_t i = c * CHUNK_ROWS; i < end; i++) {
            const int64_t len = off[i + 1] - off[i];
            int32_t *cols = M->host.csr.col_indices + off[i];
            if (A->value_type == NZ_F32)
                (void)row_product_f32(A, B, &w, t, i, len, cols, (float *)M->host.csr.values + off[i]);
            else
                (void)row_product_f64(A, B, &w, t, i, len, cols, (double *)M->host.csr.values + off[i]);
        }
    }
    t2 = nzi_wtime();
    info->numeric_seconds = t2 - t1;
    nzi_spgemm_profile_stage(profile, "symbolic", info->symbolic_seconds);
    nzi_spgemm_profile_stage(profile, "numeric", info->numeric_seconds);
    info->stage_seconds_sum = t2 - t0;
    info->panels = 1;
    *C = M;
    M = NULL;

cleanup:
    nzi_matrix_free(M);
    nzi_free(ctx, row_nnz);
    work_free(ctx, &w);
    return status;
}

nzi_spgemm_entry_t nz_cpu_spgemm(nz_spgemm_alg_t alg) {
    return alg == NZ_SPGEMM_CPU ? nzi_spgemm_cpu : NULL;
}
