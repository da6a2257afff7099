/* hyspmm_device.h: hySpMM's pipeline interface between its host driver and its device side. */
#ifndef NZI_HYSPMM_DEVICE_H
#define NZI_HYSPMM_DEVICE_H

#include "spgemm_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The multiplication-ordered structure of a row panel is described in src/cuda/spgemm/hyspmm.h. All
 * its indices are int32: a panel never holds more than NZI_HYSPMM_MAX_PANEL_PRODUCTS products. */

/* Upper limit of products in one panel: keeps the int32 offsets valid and the pinned staging
 * buffers (two slots, input and output) to a few GB of host memory. */
#define NZI_HYSPMM_MAX_PANEL_PRODUCTS ((int64_t)1 << 26)
/* Fraction of the budget the inequality may plan for (thesis eq. 3-5: 0.9 M). */
#define NZI_HYSPMM_BUDGET_FRACTION 0.9
/* Pipeline depth: panels resident at once (np in the thesis's eq. 5): one being pre-processed
 * into its pinned input, one on the GPU, one whose C drains and is copied out. */
#define NZI_HYSPMM_SLOTS 3

/* One panel's pre-processed input, in (pinned) host buffers sized for the largest panel. */
typedef struct nzi_hyspmm_input {
    void *a_values;            /* a_nnz values of A */
    int32_t *product_offsets;  /* a_nnz + 1: repeat counts in prefix form */
    int32_t *row_products;     /* rows + 1: first product of each row of the panel */
    int32_t *dup_cols;         /* products: duplicated B columns, in multiplication order */
    void *dup_values;          /* products: duplicated B values */
} nzi_hyspmm_input_t;

/* One panel's result in (pinned) host buffers: C's rows of the panel with local offsets. */
typedef struct nzi_hyspmm_output {
    int32_t *row_offsets;      /* rows + 1, local (row_offsets[0] = 0) */
    int32_t *col_indices;      /* c_nnz */
    void *values;              /* c_nnz */
    int32_t *c_nnz;            /* one int32: the panel's C entries */
} nzi_hyspmm_output_t;

/* ---- the device side (src/cuda/spgemm/hyspmm.cu, hyspmm_slots.cu; CUDA builds only) ------- */

typedef struct nzi_hyspmm_device nzi_hyspmm_device_t;

/* Stage times of one panel, seconds (CUDA events on the panel's stream). */
typedef struct nzi_hyspmm_times {
    double h2d, multiply, d2h;
} nzi_hyspmm_times_t;

/* Device bytes nzi_hyspmm_device_create would hold for these sizes (CUB workspace included). */
nz_status_t nzi_hyspmm_device_bytes(nz_context_t *ctx, nz_value_type_t vt, int slots,
                                    int64_t max_rows, int64_t max_a_nnz, int64_t max_products,
                                    size_t *bytes);
/* Create the pipeline: `slots` CUDA streams, and per slot device buffers and pinned host
 * input / output buffers sized for panels of at most max_rows rows, max_a_nnz nonzeros of A
 * and max_products products. *device_bytes receives the device memory it holds. */
nz_status_t nzi_hyspmm_device_create(nz_context_t *ctx, nzi_hyspmm_device_t **dev,
                                     nz_value_type_t vt, int slots, int64_t max_rows,
                                     int64_t max_a_nnz, int64_t max_products,
                                     size_t *device_bytes);
void nzi_hyspmm_device_destroy(nz_context_t *ctx, nzi_hyspmm_device_t **dev);
/* The pinned buffers of a slot: the CPU writes the input, reads the output. */
nzi_hyspmm_input_t *nzi_hyspmm_slot_input(nzi_hyspmm_device_t *dev, int slot);
nzi_hyspmm_output_t *nzi_hyspmm_slot_output(nzi_hyspmm_device_t *dev, int slot);
/* Queue on the slot's stream: H2D of the input, multiplication, per-row sort, compression, and
 * the D2H of C's row offsets and entry count. Returns at once. */
nz_status_t nzi_hyspmm_enqueue(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                               int64_t rows, int64_t a_nnz, int64_t products);
/* Wait for the slot's entry count, then queue the D2H of C's entries. Returns the count. */
nz_status_t nzi_hyspmm_fetch(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                             int64_t *c_nnz);
/* The stage rates a call measured (products per second of the host expansion and of the GPU
 * stages with their transfers, seconds per panel beyond them), kept with the pipeline when it is
 * parked in the context. */
void nzi_hyspmm_device_set_rates(nzi_hyspmm_device_t *dev, double expand_rate, double gpu_rate,
                                 double panel_overhead);
/* What the context's parked pipeline offers the next call: the rates its last call measured
 * into rates[0..2] (zeros when none is parked or it measured none) and the products per panel
 * its pinned blocks were sized for at value type vt (0: none parked, or another value size). */
void nzi_hyspmm_pooled(nz_context_t *ctx, nz_value_type_t vt, double rates[3], int64_t *products);
/* Wait until the slot's output is in host memory; the panel's stage times. */
nz_status_t nzi_hyspmm_wait(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                            nzi_hyspmm_times_t *times);

#ifdef __cplusplus
}
#endif

#endif /* NZI_HYSPMM_DEVICE_H */
