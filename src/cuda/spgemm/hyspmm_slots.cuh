/* hyspmm_slots.cuh: hySpMM's pipeline slots, shared by hyspmm.cu and hyspmm_slots.cu. */
#ifndef NZI_HYSPMM_SLOTS_CUH
#define NZI_HYSPMM_SLOTS_CUH

#include "cuda_internal.h"
#include "hyspmm_device.h"

/* Every array of a slot's device and pinned blocks starts on this many bytes. */
#define HYSPMM_ALIGN 256

typedef struct hyspmm_slot {
    cudaStream_t stream;
    cudaEvent_t ev_start, ev_h2d, ev_kernels, ev_count, ev_d2h_start, ev_d2h_end;
    /* device: one block carved into the arrays below */
    void *device_block;
    size_t device_bytes;
    void *a_values;
    int32_t *product_offsets, *row_products, *cols[2];
    void *values[2];
    int32_t *c_cols, *c_row_offsets, *num_runs;
    void *c_values;
    void *temp;
    size_t temp_bytes;
    /* pinned host: one input block and one output block */
    void *pinned_in, *pinned_out;
    size_t pinned_in_bytes, pinned_out_bytes;
    nzi_hyspmm_input_t in;
    nzi_hyspmm_output_t out;
    /* the panel in flight */
    int64_t rows, products, c_nnz;
} hyspmm_slot_t;

struct nzi_hyspmm_device {
    nz_value_type_t value_type;
    int slots;
    int64_t max_rows, max_a_nnz, max_products;
    double rates[3];           /* nzi_hyspmm_device_set_rates */
    /* what the pinned blocks were sized for (slack included): products of this value size */
    int64_t pinned_products;
    size_t pinned_value_size;
    hyspmm_slot_t slot[NZI_HYSPMM_SLOTS];
};

static inline size_t align_up(size_t bytes) { return (bytes + HYSPMM_ALIGN - 1) / HYSPMM_ALIGN * HYSPMM_ALIGN; }

/* The device layout of one slot: offsets of its arrays in the slot's block, and the block's size. */
typedef struct slot_layout {
    size_t a_values, product_offsets, row_products, cols[2], values[2], c_cols, c_values,
        c_row_offsets, num_runs, temp, total;
} slot_layout_t;

/* The layout of a slot for panels of at most these sizes with temp_bytes of CUB workspace. */
void nzi_hyspmm_slot_layout(size_t vs, int64_t max_rows, int64_t max_a_nnz, int64_t max_products,
                            size_t temp_bytes, slot_layout_t *l);
/* CUB workspace a slot needs for panels of at most these sizes (hyspmm.cu, where the CUB calls
 * are). */
nz_status_t nzi_hyspmm_temp_bytes(nz_context_t *ctx, nz_value_type_t vt, int64_t max_rows,
                                  int64_t max_products, size_t *bytes);

#endif /* NZI_HYSPMM_SLOTS_CUH */
