/* gen_common.c: the row-by-row CSR builder, argument checks, sorting and sampling for generators. */
#include "gen_internal.h"

#include <stdio.h>
#include <string.h>

nz_status_t nzi_gen_annotate(nz_context_t *ctx, nz_status_t status, const char *what) {
    char inner[NZI_MESSAGE_SIZE];
    snprintf(inner, sizeof inner, "%s", ctx->message);
    return nzi_error(ctx, status, "%s: %s", what, inner);
}

int nzi_gen_chunk(int64_t rows, int threads) {
    int64_t chunk = rows / ((int64_t)threads * 64);
    if (chunk > 4096) chunk = 4096;
    if (chunk < 1) chunk = 1;
    return (int)chunk;
}

/* Two passes over the rows, both parallel with a dynamic schedule (row costs may differ by
 * orders of magnitude, e.g. the mixed generator's enormous rows): first the row lengths, then,
 * after a serial prefix sum and a single allocation of the CSR arrays, the entries. Cost
 * O(rows + nnz) plus what the callbacks spend; the temporary lengths array is rows + 1 int64. */
nz_status_t nzi_gen_build(nz_context_t *ctx, nz_matrix_t **A, const nzi_gen_spec_t *spec) {
    nz_status_t status = NZ_SUCCESS;
    int64_t *offsets = NULL;
    nz_matrix_t *M = NULL;
    const int64_t rows = spec->rows;
    const int threads = nzi_context_threads(ctx);
    const int chunk = nzi_gen_chunk(rows, threads);
    (void)threads;
    (void)chunk;

    /* the row offsets first, the whole matrix once its size is known (memory budget) */
    status = nzi_check_budget(ctx, 2.0 * 8.0 * ((double)rows + 1.0), "the row offsets");
    if (status == NZ_SUCCESS)
        status = nzi_alloc_array(ctx, (void **)&offsets, (size_t)rows + 1, sizeof(int64_t),
                                 "row lengths");
    if (status < 0) {
        status = nzi_gen_annotate(ctx, status, spec->what);
        goto cleanup;
    }
    offsets[0] = 0;
    NZI_GEN_PRAGMA(omp parallel for schedule(dynamic, chunk) num_threads(threads))
    for (int64_t i = 0; i < rows; i++) offsets[i + 1] = spec->row_length(spec->params, i);
    for (int64_t i = 0; i < rows; i++)
        if (nzi_add_overflow_i64(offsets[i + 1], offsets[i], &offsets[i + 1])) {
            status = nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: nonzero count overflows at row %lld",
                               spec->what, (long long)i);
            goto cleanup;
        }

    status = nzi_check_budget(ctx, 16.0 * ((double)rows + 1.0) +
                                       (4.0 + (double)nzi_value_size(spec->value_type)) *
                                           (double)offsets[rows],
                              "the matrix");
    if (status == NZ_SUCCESS)
        status = nzi_csr_alloc(ctx, &M, spec->value_type, rows, spec->cols, offsets[rows]);
    if (status < 0) {
        status = nzi_gen_annotate(ctx, status, spec->what);
        goto cleanup;
    }
    int64_t *row_offsets = M->host.csr.row_offsets;
    int32_t *col_indices = M->host.csr.col_indices;
    void *values = M->host.csr.values;
    NZI_GEN_PRAGMA(omp parallel for schedule(dynamic, chunk) num_threads(threads))
    for (int64_t i = 0; i < rows; i++) {
        row_offsets[i + 1] = offsets[i + 1];
        spec->fill_row(spec->params, i, offsets[i + 1] - offsets[i], col_indices + offsets[i],
                       values, spec->value_type, offsets[i]);
    }
    *A = M;
    M = NULL;
cleanup:
    nzi_free(ctx, offsets);
    nzi_matrix_free(M);
    return status;
}

/* ---- sorting --------------------------------------------------------------------------- */

static void insertion_sort_i32(int32_t *keys, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        int32_t key = keys[i];
        int64_t j = i - 1;
        while (j >= 0 && keys[j] > key) {
            keys[j + 1] = keys[j];
            j--;
        }
        keys[j + 1] = key;
    }
}

static void sift_down_i32(int32_t *keys, int64_t root, int64_t n) {
    for (;;) {
        int64_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && keys[child + 1] > keys[child]) child++;
        if (keys[root] >= keys[child]) return;
        int32_t t = keys[root];
        keys[root] = keys[child];
        keys[child] = t;
        root = child;
    }
}

static void heap_sort_i32(int32_t *keys, int64_t n) {
    for (int64_t start = n / 2 - 1; start >= 0; start--) sift_down_i32(keys, start, n);
    for (int64_t end = n - 1; end > 0; end--) {
        int32_t t = keys[0];
        keys[0] = keys[end];
        keys[end] = t;
        sift_down_i32(keys, 0, end);
    }
}

/* Introsort (Musser 1997): quicksort with a median-of-three pivot and Hoare partitioning,
 * recursing into the smaller part only, switching to heap sort when the depth budget (about
 * 2 log2 n) runs out and to insertion sort below 24 keys. O(n log n) worst case, O(log n) stack.
 * After the median-of-three step keys[0] <= pivot = keys[mid] <= keys[n-1], which keeps both
 * scans in bounds and both parts non-empty. */
static void intro_sort_i32(int32_t *keys, int64_t n, int depth) {
    while (n > 24) {
        if (depth-- == 0) {
            heap_sort_i32(keys, n);
            return;
        }
        int64_t mid = n / 2;
        int32_t t;
        if (keys[mid] < keys[0]) { t = keys[mid]; keys[mid] = keys[0]; keys[0] = t; }
        if (keys[n - 1] < keys[0]) { t = keys[n - 1]; keys[n - 1] = keys[0]; keys[0] = t; }
        if (keys[n - 1] < keys[mid]) { t = keys[n - 1]; keys[n - 1] = keys[mid]; keys[mid] = t; }
        const int32_t pivot = keys[mid];
        int64_t i = -1, j = n;
        for (;;) {
            do i++; while (keys[i] < pivot);
            do j--; while (keys[j] > pivot);
            if (i >= j) break;
            t = keys[i];
            keys[i] = keys[j];
            keys[j] = t;
        }
        /* parts [0, j] and [j + 1, n) */
        int64_t left = j + 1, right = n - left;
        if (left < right) {
            intro_sort_i32(keys, left, depth);
            keys += left;
            n = right;
        } else {
            intro_sort_i32(keys + left, right, depth);
            n = left;
        }
    }
    insertion_sort_i32(keys, n);
}

void nzi_gen_sort_i32(int32_t *keys, int64_t n) {
    int depth = 0;
    for (int64_t m = n; m > 1; m >>= 1) depth += 2;
    intro_sort_i32(keys, n, depth);
}

/* ---- sampling without replacement -------------------------------------------------------- */

/* Sort keys[0 .. n) and squeeze out duplicates; returns the number of distinct keys. */
static int64_t sort_unique_i32(int32_t *keys, int64_t n) {
    nzi_gen_sort_i32(keys, n);
    int64_t out = 0;
    for (int64_t k = 0; k < n; k++)
        if (out == 0 || keys[k] != keys[out - 1]) keys[out++] = keys[k];
    return out;
}

/* When k is at least 1/16 of n: selection sampling (Knuth, TAOCP vol. 2, 3.4.2, Algorithm S),
 * one uniform per candidate, output already sorted, O(n). Otherwise draw k values, sort, drop
 * duplicates and redraw the missing ones until k are distinct: expected O(k log k), and with
 * k <= n / 16 fewer than k / 32 duplicates are expected per round. Both are exactly uniform
 * over the k-subsets. */
void nzi_gen_sample_sorted(nzi_rng_t *rng, int64_t k, int64_t n, int32_t *out) {
    if (k <= 0) return;
    if (n <= 16 * k) {
        int64_t chosen = 0;
        for (int64_t j = 0; j < n && chosen < k; j++)
            if (nzi_rng_uniform(rng) * (double)(n - j) < (double)(k - chosen))
                out[chosen++] = (int32_t)j;
        return;
    }
    int64_t have = 0;
    while (have < k) {
        for (int64_t m = have; m < k; m++) out[m] = (int32_t)nzi_rng_below(rng, n);
        have = sort_unique_i32(out, k);
    }
}
