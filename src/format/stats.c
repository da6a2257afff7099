/* stats.c: nz_matrix_stats: row-length statistics, bandwidth, diagonals, symmetry, format sizes. */
#include "nzi.h"
#include "convert_internal.h"

#include <math.h>
#include <string.h>

/* A == A^T in pattern and values: compare A's CSR arrays with those of its transpose (both
 * have sorted columns, so equality is element-wise). O(nnz + rows) time and one transpose. */
static nz_status_t is_symmetric(nz_context_t *ctx, const nz_matrix_t *csr, int *symmetric) {
    nz_matrix_t *T = NULL;
    if (csr->rows != csr->cols) {
        *symmetric = -1;
        return NZ_SUCCESS;
    }
    NZI_TRY(nzi_compressed_transpose(ctx, &T, csr, NZ_FORMAT_CSR));
    size_t vs = nzi_value_size(csr->value_type);
    size_t nnz = (size_t)csr->nnz;
    *symmetric =
        memcmp(T->host.csr.row_offsets, csr->host.csr.row_offsets,
               ((size_t)csr->rows + 1) * sizeof *csr->host.csr.row_offsets) == 0 &&
        (nnz == 0 ||
         (memcmp(T->host.csr.col_indices, csr->host.csr.col_indices,
                 nnz * sizeof *csr->host.csr.col_indices) == 0 &&
          memcmp(T->host.csr.values, csr->host.csr.values, nnz * vs) == 0));
    nzi_matrix_free(T);
    return NZ_SUCCESS;
}

/* The sum of the k largest of counts[0 .. n): a radix select of the k-th largest value t (four
 * passes of a byte histogram over the counts whose higher bytes match), then the counts above t
 * and as many copies of t as the top k still need. O(n) time, no allocation. */
static uint64_t top_count_sum(const uint32_t *counts, int64_t n, int64_t k) {
    uint64_t sum = 0;
    if (k >= n) {
        for (int64_t j = 0; j < n; j++) sum += counts[j];
        return sum;
    }
    uint32_t prefix = 0, mask = 0;
    int64_t need = k; /* entries equal to the prefix so far still to take */
    for (int shift = 24; shift >= 0; shift -= 8) {
        int64_t histogram[256] = {0};
        for (int64_t j = 0; j < n; j++)
            if ((counts[j] & mask) == prefix) histogram[(counts[j] >> shift) & 255u]++;
        int bin = 255;
        while (bin > 0 && histogram[bin] < need) need -= histogram[bin--];
        prefix |= (uint32_t)bin << shift;
        mask |= 255u << shift;
    }
    for (int64_t j = 0; j < n; j++)
        if (counts[j] > prefix) sum += counts[j];
    return sum + (uint64_t)need * prefix;
}

/* stats->hot_share of CSR arrays: a count per column, then top_count_sum. */
static nz_status_t hot_share(nz_context_t *ctx, const nz_matrix_t *csr, double *share) {
    uint32_t *counts = NULL;
    *share = 0;
    if (csr->nnz <= 0) return NZ_SUCCESS;
    NZI_TRY(nzi_alloc_array(ctx, (void **)&counts, (size_t)csr->cols, sizeof *counts,
                            "nz_matrix_stats: column counts"));
    memset(counts, 0, (size_t)csr->cols * sizeof *counts);
    for (int64_t k = 0; k < csr->nnz; k++) counts[csr->host.csr.col_indices[k]]++;
    *share = (double)top_count_sum(counts, csr->cols, NZ_STATS_HOT_COLUMNS) / (double)csr->nnz;
    nzi_free(ctx, counts);
    return NZ_SUCCESS;
}

/* Statistics of the CSR pattern of A (for BSR and DIA: without stored zeros, see convert.c).
 * Bandwidths are max(0, max(i - j)) and max(0, max(j - i)). bytes[f] is what nz_matrix_info
 * would report after nz_matrix_convert(f) with default options, measured from the row lengths
 * and the pattern without converting, or 0 when that conversion would be refused (a padded
 * format over the default max_padding_ratio) or the matrix is empty. Values
 * compare bitwise for symmetry (a stored -0.0 differs from 0.0). */
nz_status_t nz_matrix_stats(nz_context_t *ctx, nz_matrix_stats_t *stats, const nz_matrix_t *A) {
    nz_status_t status;
    nz_matrix_t *owned = NULL;
    const nz_matrix_t *csr = NULL;
    nzi_layout_t layout;
    nz_matrix_stats_t s;
    memset(&layout, 0, sizeof layout);
    memset(&s, 0, sizeof s);
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (stats == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_matrix_stats: stats is NULL");
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "nz_matrix_stats: A is on the device; use the host matrix");
    NZI_CHECK(nzi_as_csr(ctx, A, &csr, &owned));
    const int64_t *offsets = csr->host.csr.row_offsets;
    const int32_t *cols = csr->host.csr.col_indices;
    s.rows = csr->rows;
    s.cols = csr->cols;
    s.nnz = csr->nnz;
    s.row_min = csr->rows > 0 ? INT64_MAX : 0;
    double sum = 0, sum_sq = 0;
    for (int64_t i = 0; i < csr->rows; i++) {
        int64_t len = offsets[i + 1] - offsets[i];
        if (len < s.row_min) s.row_min = len;
        if (len > s.row_max) s.row_max = len;
        if (len == 0) s.empty_rows++;
        sum += (double)len;
        sum_sq += (double)len * (double)len;
        if (len > 0) {
            /* columns are sorted: the extremes of j - i are at the ends of the row */
            int64_t lower = i - cols[offsets[i]], upper = cols[offsets[i + 1] - 1] - i;
            if (lower > s.lower_bandwidth) s.lower_bandwidth = lower;
            if (upper > s.upper_bandwidth) s.upper_bandwidth = upper;
        }
    }
    if (csr->rows > 0) {
        s.row_mean = sum / (double)csr->rows;
        double variance = sum_sq / (double)csr->rows - s.row_mean * s.row_mean;
        s.row_std = variance > 0 ? sqrt(variance) : 0;
    }
    NZI_CHECK(is_symmetric(ctx, csr, &s.symmetric));
    NZI_CHECK(hot_share(ctx, csr, &s.hot_share));

    nzi_options_t defaults;
    NZI_CHECK(nzi_options_resolve(ctx, NULL, NZ_FORMAT_CSR, &defaults));
    for (int f = 0; f < NZ_FORMAT_COUNT; f++) {
        NZI_CHECK(nzi_layout_measure(ctx, csr, (nz_format_t)f, &defaults, &layout));
        if (f == NZ_FORMAT_DIA) s.num_diagonals = layout.num_diagonals;
        bool padded = f != NZ_FORMAT_CSR && f != NZ_FORMAT_CSC && f != NZ_FORMAT_COO;
        if ((!padded || layout.bytes <= defaults.max_padding_ratio * nzi_csr_bytes(csr)) &&
            layout.bytes < 0x1p62)
            s.bytes[f] = (size_t)layout.bytes;
        nzi_layout_release(ctx, &layout);
    }
    *stats = s;
    status = NZ_SUCCESS;
cleanup:
    nzi_layout_release(ctx, &layout);
    nzi_matrix_free(owned);
    return status;
}
