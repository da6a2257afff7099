/* spgemm_reuse_cpu.c: on the host, the numeric SpGEMM into a known pattern (plans), SpGEAM
 * (C = alpha A + beta B) and the transpose that remembers where its values came from. */
#include "spgemm_common.h"

#include <string.h>

#define CHUNK_ROWS 64
#define POS_WORKSPACE_LIMIT ((size_t)64 << 20) /* all threads' dense position maps together */

/* ---- the numeric phase into C's pattern ---------------------------------------------------- */

/*
 * Row i of C is known (sorted columns, from the product the plan made). Each of its entries
 * starts at -0.0 (so the first product added gives that product's exact bits, signed zeros
 * included: -0.0 + x == x for every x), then every product a_ij b_jc is added at its column's
 * position in the row, in the order of A's row then B's row: the order and the operations of
 * the full product (spgemm_cpu.c), so the values are bitwise the same.
 * The position of a column is found in a per-thread map: dense (an int32 per B column, the
 * position within the row, written for the row's columns before its products; no reset is
 * needed: a stale entry of another row is caught because C's column at that position is not
 * the product's) unless the maps of all threads would exceed
 * POS_WORKSPACE_LIMIT, then a linear-probing hash table per row (sized to 2 x the longest row
 * of C). A product whose column is not in the row is outside C's pattern: an error.
 */
typedef struct numeric_state {
    int threads;
    bool dense;
    int64_t capacity;  /* per thread: B's columns (dense) or the table size (hash) */
    int32_t *pos;      /* threads x capacity positions within a row (dense: stale ones are caught
                          by checking the column at the position) */
    int32_t *keys;     /* hash: threads x capacity columns (-1 empty) */
} numeric_state_t;

static int64_t next_pow2(int64_t x) {
    int64_t p = 16;
    while (p < x) p *= 2;
    return p;
}

static inline int64_t hash_slot(int32_t c, int64_t size) {
    return (int64_t)(((uint64_t)(uint32_t)c * 2654435761u) & (uint64_t)(size - 1));
}

nz_status_t nz_cpu_spgemm_numeric_setup(nz_context_t *ctx, const nz_matrix_t *A,
                                        const nz_matrix_t *B, const nz_matrix_t *C, int threads,
                                        void **state) {
    nz_status_t status = NZ_SUCCESS;
    numeric_state_t *S = NULL;
    const int64_t n = B->cols;
    size_t entries;
    (void)A;
    S = (numeric_state_t *)nzi_calloc(ctx, 1, sizeof *S);
    if (S == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "SpGEMM plan: cannot allocate its state");
    S->threads = nzi_cpu_spgemm_threads(ctx, threads);
    S->dense = (double)n * sizeof(int64_t) * S->threads <= (double)POS_WORKSPACE_LIMIT;
    if (S->dense) {
        S->capacity = n > 0 ? n : 1;
    } else {
        int64_t longest = 0;
        for (int64_t i = 0; i < C->rows; i++) {
            int64_t len = C->host.csr.row_offsets[i + 1] - C->host.csr.row_offsets[i];
            if (len > longest) longest = len;
        }
        S->capacity = next_pow2(2 * longest);
    }
    if (nzi_mul_overflow_size((size_t)S->threads, (size_t)S->capacity, &entries)) {
        status = nzi_error(ctx, NZ_ERR_OVERFLOW, "SpGEMM plan: workspace size overflows");
        goto cleanup;
    }
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&S->pos, entries, sizeof(int32_t),
                              "SpGEMM plan: position maps"));
    if (S->dense) {
        memset(S->pos, 0xff, entries * sizeof(int32_t));
    } else {
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&S->keys, entries, sizeof(int32_t),
                                  "SpGEMM plan: hash keys"));
        memset(S->keys, 0xff, entries * sizeof(int32_t));
    }
    *state = S;
    return NZ_SUCCESS;
cleanup:
    nz_cpu_spgemm_numeric_release(ctx, S);
    return status;
}

void nz_cpu_spgemm_numeric_release(nz_context_t *ctx, void *state) {
    numeric_state_t *S = (numeric_state_t *)state;
    if (S == NULL) return;
    nzi_free(ctx, S->pos);
    nzi_free(ctx, S->keys);
    nzi_free(ctx, S);
}

/* Row i of C = A B into C's pattern; false when a product falls outside the row. */
#define NZI_NUMERIC_ROW(T, SUFFIX)                                                              \
    static bool numeric_row_##SUFFIX(const numeric_state_t *S, int t, const nz_matrix_t *A,     \
                                     const nz_matrix_t *B, nz_matrix_t *C, int64_t i) {          \
        const int64_t *a_off = A->host.csr.row_offsets, *b_off = B->host.csr.row_offsets;       \
        const int32_t *a_col = A->host.csr.col_indices, *b_col = B->host.csr.col_indices;       \
        const T *a_val = (const T *)A->host.csr.values, *b_val = (const T *)B->host.csr.values; \
        const int64_t begin = C->host.csr.row_offsets[i], end = C->host.csr.row_offsets[i + 1]; \
        const int32_t *c_col = C->host.csr.col_indices;                                         \
        T *c_val = (T *)C->host.csr.values;                                                     \
        int32_t *pos = S->pos + (size_t)t * (size_t)S->capacity;                                \
        const uint32_t len = (uint32_t)(end - begin); /* <= B's columns: fits */                \
        for (int64_t k = begin; k < end; k++) c_val[k] = (T)-0.0;                               \
        if (S->dense) {                                                                         \
            for (int64_t k = begin; k < end; k++) pos[c_col[k]] = (int32_t)(k - begin);         \
            for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {                                 \
                const int32_t j = a_col[k];                                                     \
                const T a = a_val[k];                                                           \
                const int64_t l_end = b_off[j + 1];                                             \
                for (int64_t l = b_off[j]; l < l_end; l++) {                                    \
                    const int32_t c = b_col[l];                                                 \
                    const uint32_t r = (uint32_t)pos[c];                                        \
                    if (r >= len || c_col[begin + r] != c) return false;                        \
                    c_val[begin + r] += a * b_val[l];                                           \
                }                                                                               \
            }                                                                                   \
            return true;                                                                        \
        }                                                                                       \
        int32_t *keys = S->keys + (size_t)t * (size_t)S->capacity;                              \
        const int64_t size = next_pow2(2 * (end - begin));                                      \
        bool ok = true;                                                                         \
        for (int64_t k = begin; k < end; k++) {                                                 \
            int64_t h = hash_slot(c_col[k], size);                                              \
            while (keys[h] != -1) h = (h + 1) & (size - 1);                                     \
            keys[h] = c_col[k];                                                                 \
            pos[h] = (int32_t)(k - begin);                                                      \
        }                                                                                       \
        for (int64_t k = a_off[i]; k < a_off[i + 1] && ok; k++) {                               \
            const int32_t j = a_col[k];                                                         \
            const T a = a_val[k];                                                               \
            for (int64_t l = b_off[j]; l < b_off[j + 1]; l++) {                                 \
                const int32_t c = b_col[l];                                                     \
                int64_t h = hash_slot(c, size);                                                 \
                while (keys[h] != c && keys[h] != -1) h = (h + 1) & (size - 1);                 \
                if (keys[h] == -1) {                                                            \
                    ok = false;                                                                 \
                    break;                                                                      \
                }                                                                               \
                c_val[begin + pos[h]] += a * b_val[l];                                          \
            }                                                                                   \
        }                                                                                       \
        memset(keys, 0xff, (size_t)size * sizeof(int32_t));                                     \
        return ok;                                                                              \
    }

NZI_NUMERIC_ROW(float, f32)
NZI_NUMERIC_ROW(double, f64)

nz_status_t nz_cpu_spgemm_numeric(nz_context_t *ctx, void *state, const nz_matrix_t *A,
                                  const nz_matrix_t *B, nz_matrix_t *C) {
    const numeric_state_t *S = (const numeric_state_t *)state;
    const int64_t m = C->rows, chunks = (m + CHUNK_ROWS - 1) / CHUNK_ROWS;
    int64_t bad_row = INT64_MAX;
#ifdef _OPENMP
#pragma omp parallel for num_threads(S->threads) schedule(dynamic, 1) reduction(min : bad_row)
#endif
    for (int64_t c = 0; c < chunks; c++) {
        const int t = nzi_cpu_thread_id();
        const int64_t end = (c + 1) * CHUNK_ROWS < m ? (c + 1) * CHUNK_ROWS : m;
        for (int64_t i = c * CHUNK_ROWS; i < end; i++) {
            bool ok = C->value_type == NZ_F32 ? numeric_row_f32(S, t, A, B, C, i)
                                              : numeric_row_f64(S, t, A, B, C, i);
            if (!ok && i < bad_row) bad_row = i;
        }
    }
    if (bad_row != INT64_MAX)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "row %lld of the product has an entry outside C's pattern (A's or B's "
                         "pattern differs from the plan's); C's values are unspecified",
                         (long long)bad_row);
    return NZ_SUCCESS;
}

/* ---- SpGEAM: C = alpha A + beta B ---------------------------------------------------------- */

/* Symbolic: the union of the sorted rows, counted by a merge, then written by a second merge. */
nz_status_t nz_cpu_spgeam_symbolic(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B,
                                   nz_matrix_t **C) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    const int64_t m = A->rows;
    const int64_t *a_off = A->host.csr.row_offsets, *b_off = B->host.csr.row_offsets;
    const int32_t *a_col = A->host.csr.col_indices, *b_col = B->host.csr.col_indices;
    int64_t *row_nnz = NULL, total = 0;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&row_nnz, (size_t)m + 1, sizeof(int64_t),
                              "SpGEAM: row counts"));
#ifdef _OPENMP
#pragma omp parallel for num_threads(nzi_context_threads(ctx)) schedule(static, 1024)
#endif
    for (int64_t i = 0; i < m; i++) {
        int64_t ia = a_off[i], ib = b_off[i], count = 0;
        const int64_t ae = a_off[i + 1], be = b_off[i + 1];
        while (ia < ae && ib < be) {
            const int32_t x = a_col[ia], y = b_col[ib];
            ia += x <= y;
            ib += y <= x;
            count++;
        }
        row_nnz[i] = count + (ae - ia) + (be - ib);
    }
    for (int64_t i = 0; i < m; i++) total += row_nnz[i]; /* <= nnz(A) + nnz(B): no overflow */
    NZI_CHECK(nzi_csr_alloc(ctx, &M, A->value_type, m, A->cols, total));
    for (int64_t i = 0; i < m; i++)
        M->host.csr.row_offsets[i + 1] = M->host.csr.row_offsets[i] + row_nnz[i];
    {
        int32_t *c_col = M->host.csr.col_indices;
        const int64_t *c_off = M->host.csr.row_offsets;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nzi_context_threads(ctx)) schedule(static, 1024)
#endif
        for (int64_t i = 0; i < m; i++) {
            int64_t ia = a_off[i], ib = b_off[i], k = c_off[i];
            const int64_t ae = a_off[i + 1], be = b_off[i + 1];
            while (ia < ae && ib < be) {
                const int32_t x = a_col[ia], y = b_col[ib];
                c_col[k++] = x < y ? x : y;
                ia += x <= y;
                ib += y <= x;
            }
            while (ia < ae) c_col[k++] = a_col[ia++];
            while (ib < be) c_col[k++] = b_col[ib++];
        }
    }
    *C = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    nzi_free(ctx, row_nnz);
    return status;
}

/* Numeric: C's row and A's and B's rows walked together; an entry of A or B that C's row does
 * not have is outside the pattern. An entry of C with neither is 0. */
#define NZI_SPGEAM_ROW(T, SUFFIX)                                                               \
    static bool spgeam_row_##SUFFIX(T alpha, const nz_matrix_t *A, T beta, const nz_matrix_t *B, \
                                    nz_matrix_t *C, int64_t i) {                                \
        const int32_t *a_col = A->host.csr.col_indices, *b_col = B->host.csr.col_indices;       \
        const int32_t *c_col = C->host.csr.col_indices;                                         \
        const T *a_val = (const T *)A->host.csr.values, *b_val = (const T *)B->host.csr.values; \
        T *c_val = (T *)C->host.csr.values;                                                     \
        int64_t ia = A->host.csr.row_offsets[i], ib = B->host.csr.row_offsets[i];               \
        const int64_t ae = A->host.csr.row_offsets[i + 1], be = B->host.csr.row_offsets[i + 1]; \
        for (int64_t k = C->host.csr.row_offsets[i]; k < C->host.csr.row_offsets[i + 1]; k++) {  \
            const int32_t col = c_col[k];                                                       \
            T v = 0;                                                                            \
            bool have = false;                                                                  \
            if ((ia < ae && a_col[ia] < col) || (ib < be && b_col[ib] < col)) return false;     \
            if (ia < ae && a_col[ia] == col) {                                                  \
                if (alpha != 0) v = alpha * a_val[ia];                                          \
                have = alpha != 0;                                                              \
                ia++;                                                                           \
            }                                                                                   \
            if (ib < be && b_col[ib] == col) {                                                  \
                if (beta != 0) v = have ? v + beta * b_val[ib] : beta * b_val[ib];              \
                ib++;                                                                           \
            }                                                                                   \
            c_val[k] = v;                                                                       \
        }                                                                                       \
        return ia == ae && ib == be;                                                            \
    }

NZI_SPGEAM_ROW(float, f32)
NZI_SPGEAM_ROW(double, f64)

nz_status_t nz_cpu_spgeam_numeric(nz_context_t *ctx, double alpha, const nz_matrix_t *A,
                                  double beta, const nz_matrix_t *B, nz_matrix_t *C) {
    const int64_t m = C->rows;
    int64_t bad_row = INT64_MAX;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nzi_context_threads(ctx)) schedule(static, 1024) reduction(min : bad_row)
#endif
    for (int64_t i = 0; i < m; i++) {
        bool ok = C->value_type == NZ_F32
                      ? spgeam_row_f32((float)alpha, A, (float)beta, B, C, i)
                      : spgeam_row_f64(alpha, A, beta, B, C, i);
        if (!ok && i < bad_row) bad_row = i;
    }
    if (bad_row != INT64_MAX)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "row %lld of A or B has an entry outside C's pattern (A's or B's pattern "
                         "differs from the plan's); C's values are unspecified",
                         (long long)bad_row);
    return NZ_SUCCESS;
}

/* ---- the transpose with its value map ------------------------------------------------------ */

/* A^T by a counting sort (columns of A in row order, so A^T's rows come out sorted); perm[p] is
 * the position in A of A^T's entry p (perm NULL: not kept). Serial: O(nnz + rows + cols). */
nz_status_t nz_cpu_transpose(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t **AT,
                             void **perm) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    int64_t *map = NULL;
    const int64_t rows = A->rows, cols = A->cols, nnz = A->host.csr.row_offsets[A->rows];
    const size_t vs = nzi_value_size(A->value_type);
    NZI_CHECK(nzi_csr_alloc(ctx, &M, A->value_type, cols, rows, nnz));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&map, (size_t)nnz, sizeof(int64_t),
                              "transpose: value positions"));
    {
        int64_t *off = M->host.csr.row_offsets;
        const int64_t *a_off = A->host.csr.row_offsets;
        const int32_t *a_col = A->host.csr.col_indices;
        memset(off, 0, ((size_t)cols + 1) * sizeof(int64_t));
        for (int64_t k = 0; k < nnz; k++) off[a_col[k] + 1]++;
        for (int64_t j = 0; j < cols; j++) off[j + 1] += off[j];
        /* the next free slot of each row of A^T, kept in off[j] and shifted back afterwards */
        for (int64_t i = 0; i < rows; i++)
            for (int64_t k = a_off[i]; k < a_off[i + 1]; k++) {
                const int64_t p = off[a_col[k]]++;
                M->host.csr.col_indices[p] = (int32_t)i;
                map[p] = k;
            }
        for (int64_t j = cols; j > 0; j--) off[j] = off[j - 1];
        off[0] = 0;
    }
    for (int64_t p = 0; p < nnz; p++)
        memcpy((char *)M->host.csr.values + (size_t)p * vs,
               (const char *)A->host.csr.values + (size_t)map[p] * vs, vs);
    *AT = M;
    if (perm != NULL)
        *perm = map;
    else
        nzi_free(ctx, map);
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    nzi_free(ctx, map);
    return status;
}

nz_status_t nz_cpu_transpose_values(nz_context_t *ctx, const void *perm, const nz_matrix_t *A,
                                    nz_matrix_t *AT) {
    const int64_t *map = (const int64_t *)perm;
    const int64_t nnz = AT->nnz;
    (void)ctx; /* its threads, with OpenMP */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nzi_context_threads(ctx)) schedule(static)
#endif
    for (int64_t p = 0; p < nnz; p++) {
        if (AT->value_type == NZ_F32)
            ((float *)AT->host.csr.values)[p] = ((const float *)A->host.csr.values)[map[p]];
        else
            ((double *)AT->host.csr.values)[p] = ((const double *)A->host.csr.values)[map[p]];
    }
    return NZ_SUCCESS;
}

void nz_cpu_transpose_release(nz_context_t *ctx, void *perm) { nzi_free(ctx, perm); }
