/* dist_cuda.h: the C interface of the distributed layer's CUDA kernels (no MPI, no CUDA types). */
#ifndef NZD_CUDA_H
#define NZD_CUDA_H

#include "nonzero.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every function returns 0 on success or a CUDA error code; nzd_cuda_error_string names it.
 * stream is a cudaStream_t. Vectors hold values of value_type (float or double); sums are in
 * double. Built from dist_cuda.cu with CUDA, else from dist_cuda_absent.c (every call fails). */
int nzd_cuda_built(void);
const char *nzd_cuda_error_string(int error);
int nzd_stream_create(int device, void **stream);
int nzd_stream_destroy(void *stream);
int nzd_stream_synchronize(void *stream);
int nzd_pinned_alloc(void **ptr, size_t bytes);
int nzd_pinned_free(void *ptr);
int nzd_device_alloc(void **ptr, size_t bytes);
int nzd_device_free(void *ptr);
/* Events without timing (cudaEventDisableTiming): record on a stream, wait on the host, or make
 * a stream wait for one. */
int nzd_event_create(void **event);
int nzd_event_destroy(void *event);
int nzd_event_record(void *event, void *stream);
int nzd_event_synchronize(void *event);
int nzd_stream_wait_event(void *stream, void *event);
/* kind: 0 host to device, 1 device to host. */
int nzd_copy_async(void *dst, const void *src, size_t bytes, int kind, void *stream);

/* send[k] = x[indices[k]], k < count. */
int nzd_pack(nz_value_type_t value_type, void *send, const void *x, const int32_t *indices,
             int64_t count, void *stream);
/* y = beta y (beta == 0: y = 0 without reading y). */
int nzd_scale(nz_value_type_t value_type, void *y, int64_t n, double beta, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* NZD_CUDA_H */
