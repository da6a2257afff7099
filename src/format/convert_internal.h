/* convert_internal.h: layouts measured from a CSR matrix, shared by the converters and the stats. */
#ifndef NZI_CONVERT_INTERNAL_H
#define NZI_CONVERT_INTERNAL_H

#include "nzi.h"

/* Conversion options with the defaults filled in and validated. */
typedef struct nzi_options {
    int chunk;                /* SELL C, 1 .. NZI_MAX_SELL_CHUNK */
    int sigma;                /* SELL sorting window, 1 or a multiple of chunk */
    int block;                /* BSR b, 1 .. 32 */
    int64_t hyb_width;        /* HYB ELL width; -1 = from the row-length histogram */
    double max_padding_ratio; /* > 0 */
} nzi_options_t;

#define NZI_MAX_SELL_CHUNK 1024
#define NZI_HYB_BREAKEVEN_ROWS 4096 /* CUSP's rule: an ELL column pays off from ~4096 rows */
#define NZI_HYB_RELATIVE_SPEED 3.0  /* ... or from a third of the rows (ELL ~3x faster than COO) */

/* Everything a converter needs to know before it allocates: the padded size and the shape
 * parameters of the target format. Workspace arrays (order, diagonals) are owned by the layout
 * and freed by nzi_layout_release. Sizes are kept in double as well so that an absurd padding
 * is refused with NZ_ERR_TOO_MUCH_PADDING instead of overflowing. */
typedef struct nzi_layout {
    nz_format_t format;
    nz_value_type_t value_type;
    double bytes;             /* bytes of the format's arrays, as nz_matrix_info reports them */
    int64_t stored;           /* entries including padding (valid when bytes fits) */
    int64_t width;            /* ELL width, or HYB's ELL width */
    int64_t coo_nnz;          /* HYB remainder */
    int chunk, sigma, block;
    int64_t num_chunks;       /* SELL */
    int64_t block_rows, block_cols, num_blocks; /* BSR */
    int64_t num_diagonals;    /* DIA */
    int32_t *order;           /* SELL: original row of each sorted position (NULL: identity) */
    int64_t *diagonals;       /* DIA: distinct j - i, ascending */
} nzi_layout_t;

/* Fill in defaults and validate the fields that matter for `format`. */
nz_status_t nzi_options_resolve(nz_context_t *ctx, const nz_format_options_t *options,
                                nz_format_t format, nzi_options_t *resolved);

/* Measure the layout of csr (a host CSR matrix) in `format`. */
nz_status_t nzi_layout_measure(nz_context_t *ctx, const nz_matrix_t *csr, nz_format_t format,
                               const nzi_options_t *options, nzi_layout_t *layout);
void nzi_layout_release(nz_context_t *ctx, nzi_layout_t *layout);

/* Bytes of csr in CSR form (the reference of the padding limit). */
double nzi_csr_bytes(const nz_matrix_t *csr);

/* NZ_ERR_TOO_MUCH_PADDING (message with both sizes) when layout->bytes exceeds the limit. */
nz_status_t nzi_check_padding(nz_context_t *ctx, const nz_matrix_t *csr,
                              const nzi_layout_t *layout, double max_padding_ratio);

/* Builders from a host CSR matrix and a measured layout (src/format/convert_ell.c,
 * convert_block.c), and the way back to CSR. */
nz_status_t nzi_build_ell(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                          const nzi_layout_t *layout);
nz_status_t nzi_build_sell(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                           const nzi_layout_t *layout);
nz_status_t nzi_build_hyb(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                          const nzi_layout_t *layout);
nz_status_t nzi_build_bsr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                          const nzi_layout_t *layout);
nz_status_t nzi_build_dia(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *csr,
                          const nzi_layout_t *layout);

nz_status_t nzi_ell_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A);
nz_status_t nzi_sell_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A);
nz_status_t nzi_hyb_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A);
nz_status_t nzi_bsr_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A);
nz_status_t nzi_dia_to_csr(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A);

/* Measurements per format (called through nzi_layout_measure). */
nz_status_t nzi_measure_ell_family(nz_context_t *ctx, const nz_matrix_t *csr,
                                   const nzi_options_t *options, nzi_layout_t *layout);
nz_status_t nzi_measure_bsr(nz_context_t *ctx, const nz_matrix_t *csr,
                            const nzi_options_t *options, nzi_layout_t *layout);
nz_status_t nzi_measure_dia(nz_context_t *ctx, const nz_matrix_t *csr, nzi_layout_t *layout);

/* Deep copy of a host matrix (any format) with values converted to value_type. */
nz_status_t nzi_matrix_clone(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                             nz_value_type_t value_type);

/* Row length of a CSR matrix. */
static inline int64_t nzi_row_length(const nz_matrix_t *csr, int64_t i) {
    return csr->host.csr.row_offsets[i + 1] - csr->host.csr.row_offsets[i];
}

#endif /* NZI_CONVERT_INTERNAL_H */
