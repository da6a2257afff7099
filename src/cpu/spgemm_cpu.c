/* spgemm_cpu.c: CPU Gustavson SpGEMM (OpenMP): symbolic count, then numeric fill, sorted rows. */
#include "spgemm_common.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The calling thread's accumulator: its number in the enclosing parallel region (0 without
 * OpenMP). */
static int thread_id(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/*
 * Gustavson's row-by-row product (Gustavson 1978; as in CSparse's cs_multiply): row i of C is
 * the sum over a_ij of a_ij times row j of B, accumulated in a per-thread sparse accumulator.
 * Two passes over the rows, both OpenMP-parallel with a dynamic schedule (power-law rows):
 *   1. symbolic: count the distinct columns of every row of C -> exact row offsets;
 *   2. numeric: accumulate the values into exactly-sized arrays, then sort each row by column.
 * The accumulator is chosen once per product (accumulator_is_dense): a dense array of B's
 * column count per thread, stamped with the row index so it is never cleared, when B is narrow
 * or the rows are dense relative to it; otherwise a linear-probing hash table per thread, sized
 * per row to a power of two >= 2 x the row's bound (products in pass 1, exact count in pass 2)
 * and reset over just that prefix (as in Nagasaka et al., "High-performance sparse matrix-matrix
 * products on Intel KNL and multicore architectures", ICPP workshops 2018).
 * Cost: O(products) expected for the accumulation plus O(nnz(C) log(row length)) for the sorts;
 * workspace O(threads x min(B cols, longest row bound)). Entries are summed in the value type in
 * the order of A's row then B's row, so the result is bitwise reproducible and independent of the
 * thread count. Structural products that cancel numerically stay as explicit zeros.
 */

#define DENSE_ALWAYS_COLS 65536            /* dense accumulators of this width fit in L2 */
#define DENSE_WORKSPACE_LIMIT ((size_t)256 << 20) /* all threads' dense arrays together */

typedef struct cpu_work {
    int threads;
    bool dense;
    int64_t n;              /* B's columns */
    int64_t capacity;       /* per-thread entries: n (dense) or the largest table (hash) */
    int32_t *keys;          /* dense: row stamps; hash: keys (-1 empty); threads x capacity */
    void *values;           /* threads x capacity accumulators */
} cpu_work_t;

static int64_t next_pow2(int64_t x) {
    int64_t p = 16;
    while (p < x) p *= 2;
    return p;
}

static bool accumulator_is_dense(int64_t n, int64_t rows, int64_t total_products, int threads,
                                 size_t value_size) {
    double per_thread = (double)n * (double)(sizeof(int32_t) + value_size);
    if (per_thread * threads > (double)DENSE_WORKSPACE_LIMIT) return false;
    if (n <= DENSE_ALWAYS_COLS) return true;
    /* rows whose products cover a sixteenth of the columns on average make a dense sweep cheap */
    return rows > 0 && (double)total_products / (double)rows * 16.0 >= (double)n;
}

/* Hash slot of column c in a table of `size` (a power of two): Knuth's multiplicative hash. */
static inline int64_t hash_slot(int32_t c, int64_t size) {
    return (int64_t)(((uint64_t)(uint32_t)c * 2654435761u) & (uint64_t)(size - 1));
}

/* Symbolic pass for row i: the number of distinct columns. */
static int64_t row_count(const nz_matrix_t *A, const nz_matrix_t *B, const cpu_work_t *w, int t,
                         int64_t i, int64_t products) {
    const int64_t *a_off = A->host.csr.row_offsets, *b_off = B->host.csr.row_offsets;
    const int32_t *a_col = A->host.csr.col_indices, *b_col = B->host.csr.col_indices;
    int32_t *keys = w->keys + (size_t)t * (size_t)w->capacity;
    int64_t count = 0;
    if (w->dense) {
        for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {
            int32_t j = a_col[k];
            for (int64_t l = b_off[j]; l < b_off[j + 1]; l++) {
                int32_t c = b_col[l];
                if (keys[c] != (int32_t)i) {
                    keys[c] = (int32_t)i;
                    count++;
                }
            }
        }
        return count;
    }
    int64_t size = next_pow2(2 * (products < w->n ? products : w->n));
    for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {
        int32_t j = a_col[k];
        for (int64_t l = b_off[j]; l < b_off[j + 1]; l++) {
            int32_t c = b_col[l];
            int64_t s = hash_slot(c, size);
            while (keys[s] != c && keys[s] != -1) s = (s + 1) & (size - 1);
            if (keys[s] == -1) {
                keys[s] = c;
                count++;
            }
        }
    }
    memset(keys, 0xff, (size_t)size * sizeof(int32_t));
    return count;
}

/* Numeric pass and per-row sort, one instance per value type. The row's (column, value) pairs
 * are written unsorted into C's row, then sorted in place (insertion sort below 16 entries,
 * otherwise quicksort with a median-of-three pivot, recursing on the smaller side). */
#define NZI_SPGEMM_CPU_NUMERIC(T, SUFFIX)                                                       \
    static void sort_pairs_##SUFFIX(int32_t *cols, T *vals, int64_t n) {                         \
        while (n > 16) {                                                                        \
            int64_t mid = n / 2, last = n - 1;                                                  \
            int32_t a = cols[0], b = cols[mid], c = cols[last];                                 \
            int32_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b)); \
            int64_t lo = 0, hi = last;                                                          \
            while (lo <= hi) {                                                                  \
                while (cols[lo] < pivot) lo++;                                                  \
                while (cols[hi] > pivot) hi--;                                                  \
                if (lo <= hi) {                                                                 \
                    int32_t tc = cols[lo]; cols[lo] = cols[hi]; cols[hi] = tc;                  \
                    T tv = vals[lo]; vals[lo] = vals[hi]; vals[hi] = tv;                        \
                    lo++;                                                                       \
                    hi--;                                                                       \
                }                                                                               \
            }                                                                                   \
            if (hi + 1 < n - lo) {                                                              \
                sort_pairs_##SUFFIX(cols, vals, hi + 1);                                        \
                cols += lo;                                                                     \
                vals += lo;                                                                     \
                n -= lo;                                                                        \
            } else {                                                                            \
                sort_pairs_##SUFFIX(cols + lo, vals + lo, n - lo);                              \
                n = hi + 1;                                                                     \
            }                                                                                   \
        }                                                                                       \
        for (int64_t x = 1; x < n; x++) {                                                       \
            int32_t c = cols[x];                                                                \
            T v = vals[x];                                                                      \
            int64_t y = x - 1;                                                                  \
            while (y >= 0 && cols[y] > c) {                                                     \
                cols[y + 1] = cols[y];                                                          \
                vals[y + 1] = vals[y];                                                          \
                y--;                                                                            \
            }                                                                                   \
            cols[y + 1] = c;                                                                    \
            vals[y + 1] = v;                                                                    \
        }                                                                                       \
    }                                                                                           \
                                                                                                \
    static void row_fill_##SUFFIX(const nz_matrix_t *A, const nz_matrix_t *B, nz_matrix_t *C,   \
                                  const cpu_work_t *w, int t, int64_t i) {                      \
        const int64_t *a_off = A->host.csr.row_offsets, *b_off = B->host.csr.row_offsets;       \
        const int32_t *a_col = A->host.csr.col_indices, *b_col = B->host.csr.col_indices;       \
        const T *a_val = (const T *)A->host.csr.values, *b_val = (const T *)B->host.csr.values; \
        int32_t *keys = w->keys + (size_t)t * (size_t)w->capacity;                              \
        T *acc = (T *)w->values + (size_t)t * (size_t)w->capacity;                              \
        int64_t begin = C->host.csr.row_offsets[i], nnz = C->host.csr.row_offsets[i + 1] - begin; \
        int32_t *c_col = C->host.csr.col_indices + begin;                                       \
        T *c_val = (T *)C->host.csr.values + begin;                                             \
        int64_t count = 0;                                                                      \
        if (nnz == 0) return;                                                                   \
        if (w->dense) {                                                                         \
            for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {                                 \
                int32_t j = a_col[k];                                                           \
                T a = a_val[k];                                                                 \
                for (int64_t l = b_off[j]; l < b_off[j + 1]; l++) {                             \
                    int32_t c = b_col[l];                                                       \
                    if (keys[c] != (int32_t)i) {                                                \
                        keys[c] = (int32_t)i;                                                   \
                        acc[c] = a * b_val[l];                                                  \
                        c_col[count++] = c;                                                     \
                    } else {                                                                    \
                        acc[c] += a * b_val[l];                                                 \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
            for (int64_t x = 0; x < count; x++) c_val[x] = acc[c_col[x]];                       \
        } else {                                                                                \
            int64_t size = next_pow2(2 * nnz);                                                  \
            for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {                                 \
                int32_t j = a_col[k];                                                           \
                T a = a_val[k];                                                                 \
                for (int64_t l = b_off[j]; l < b_off[j + 1]; l++) {                             \
                    int32_t c = b_col[l];                                                       \
                    int64_t s = hash_slot(c, size);                                             \
                    while (keys[s] != c && keys[s] != -1) s = (s + 1) & (size - 1);             \
                    if (keys[s] == -1) {                                                        \
                        keys[s] = c;                                                            \
                        acc[s] = a * b_val[l];                                                  \
                    } else {                                                                    \
                        acc[s] += a * b_val[l];                                                 \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
            for (int64_t s = 0; s < size; s++)                                                  \
                if (keys[s] != -1) {                                                            \
                    c_col[count] = keys[s];                                                     \
                    c_val[count++] = acc[s];                                                    \
                    keys[s] = -1;                                                               \
                }                                                                               \
        }                                                                                       \
        sort_pairs_##SUFFIX(c_col, c_val, count);                                               \
    }

NZI_SPGEMM_CPU_NUMERIC(float, f32)
NZI_SPGEMM_CPU_NUMERIC(double, f64)

nz_status_t nzi_spgemm_cpu(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                           const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                           nz_spgemm_info_t *info, nz_spgemm_profile_t *profile) {
    nz_status_t status = NZ_SUCCESS;
    const int64_t m = A->rows, n = B->cols;
    const size_t value_size = nzi_value_size(A->value_type);
    int64_t *products = NULL, *row_nnz = NULL, total = 0, longest = 0;
    nz_matrix_t *M = NULL;
    cpu_work_t w;
    double t0 = nzi_wtime(), t1;

    memset(&w, 0, sizeof w);
    w.threads = opt->threads > 0 ? opt->threads : ctx->threads;
#ifdef _OPENMP
    w.threads = nzi_resolve_threads(w.threads);
#else
    w.threads = 1;
#endif
    if (w.threads < 1) w.threads = 1;
    w.n = n;

    NZI_CHECK(nzi_alloc_array(ctx, (void **)&products, (size_t)m + 1, sizeof(int64_t),
                              "nz_spgemm (cpu): row products"));
    NZI_CHECK(nzi_spgemm_count_products(ctx, A, B, 0, m, products, &total));
    info->products = total;
    for (int64_t i = 0; i < m; i++)
        if (products[i] > longest) longest = products[i];
    if (longest > n) longest = n;
    w.dense = accumulator_is_dense(n, m, total, w.threads, value_size);
    w.capacity = w.dense ? (n > 0 ? n : 1) : next_pow2(2 * longest);
    {
        size_t entries;
        if (nzi_mul_overflow_size((size_t)w.threads, (size_t)w.capacity, &entries)) {
            status = nzi_error(ctx, NZ_ERR_OVERFLOW, "nz_spgemm (cpu): workspace size overflows");
            goto cleanup;
        }
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&w.keys, entries, sizeof(int32_t),
                                  "nz_spgemm (cpu): accumulator keys"));
        NZI_CHECK(nzi_alloc_array(ctx, &w.values, entries, value_size,
                                  "nz_spgemm (cpu): accumulator values"));
        memset(w.keys, 0xff, entries * sizeof(int32_t));
    }
    row_nnz = products; /* the symbolic pass overwrites each row's bound with its count */

#ifdef _OPENMP
#pragma omp parallel for num_threads(w.threads) schedule(dynamic, 64)
#endif
    for (int64_t i = 0; i < m; i++) row_nnz[i] = row_count(A, B, &w, thread_id(), i, products[i]);
    t1 = nzi_wtime();
    info->symbolic_seconds = t1 - t0;

    NZI_CHECK(nzi_spgemm_alloc_output(ctx, &M, A->value_type, m, n, row_nnz));
    if (w.dense) memset(w.keys, 0xff, (size_t)w.threads * (size_t)w.capacity * sizeof(int32_t));
#ifdef _OPENMP
#pragma omp parallel for num_threads(w.threads) schedule(dynamic, 64)
#endif
    for (int64_t i = 0; i < m; i++) {
        if (A->value_type == NZ_F32)
            row_fill_f32(A, B, M, &w, thread_id(), i);
        else
            row_fill_f64(A, B, M, &w, thread_id(), i);
    }
    info->numeric_seconds = nzi_wtime() - t1;
    nzi_spgemm_profile_stage(profile, "symbolic", info->symbolic_seconds);
    nzi_spgemm_profile_stage(profile, "numeric", info->numeric_seconds);
    info->stage_seconds_sum = info->symbolic_seconds + info->numeric_seconds;
    info->panels = 1;
    *C = M;
    M = NULL;

cleanup:
    nzi_matrix_free(M);
    nzi_free(ctx, products);
    nzi_free(ctx, w.keys);
    nzi_free(ctx, w.values);
    return status;
}

nzi_spgemm_entry_t nz_cpu_spgemm(nz_spgemm_alg_t alg) {
    return alg == NZ_SPGEMM_CPU ? nzi_spgemm_cpu : NULL;
}
