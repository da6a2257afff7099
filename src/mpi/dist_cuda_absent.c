/* dist_cuda_absent.c: the distributed layer's CUDA interface in a build without CUDA (every call
 * fails; nz_dist_device_bind refuses before any of them is reached). */
#include "dist_cuda.h"

#define NZD_NO_CUDA 100 /* cudaErrorNoDevice */

int nzd_cuda_built(void) { return 0; }
const char *nzd_cuda_error_string(int error) {
    return error == 0 ? "no error" : "built without CUDA";
}
int nzd_stream_create(int device, void **stream) {
    (void)device;
    *stream = 0;
    return NZD_NO_CUDA;
}
int nzd_stream_destroy(void *stream) { return stream == 0 ? 0 : NZD_NO_CUDA; }
int nzd_stream_synchronize(void *stream) { return stream == 0 ? 0 : NZD_NO_CUDA; }
int nzd_event_create(void **event) {
    *event = 0;
    return NZD_NO_CUDA;
}
int nzd_event_destroy(void *event) { return event == 0 ? 0 : NZD_NO_CUDA; }
int nzd_event_record(void *event, void *stream) {
    (void)event, (void)stream;
    return NZD_NO_CUDA;
}
int nzd_event_synchronize(void *event) {
    (void)event;
    return NZD_NO_CUDA;
}
int nzd_stream_wait_event(void *stream, void *event) {
    (void)stream, (void)event;
    return NZD_NO_CUDA;
}
int nzd_pinned_alloc(void **ptr, size_t bytes) {
    (void)bytes;
    *ptr = 0;
    return NZD_NO_CUDA;
}
int nzd_pinned_free(void *ptr) { return ptr == 0 ? 0 : NZD_NO_CUDA; }
int nzd_device_alloc(void **ptr, size_t bytes) {
    (void)bytes;
    *ptr = 0;
    return NZD_NO_CUDA;
}
int nzd_device_free(void *ptr) { return ptr == 0 ? 0 : NZD_NO_CUDA; }
int nzd_copy_async(void *dst, const void *src, size_t bytes, int kind, void *stream) {
    (void)dst, (void)src, (void)bytes, (void)kind, (void)stream;
    return NZD_NO_CUDA;
}
int nzd_pack(nz_value_type_t value_type, void *send, const void *x, const int32_t *indices,
             int64_t count, void *stream) {
    (void)value_type, (void)send, (void)x, (void)indices, (void)count, (void)stream;
    return NZD_NO_CUDA;
}
int nzd_scale(nz_value_type_t value_type, void *y, int64_t n, double beta, void *stream) {
    (void)value_type, (void)y, (void)n, (void)beta, (void)stream;
    return NZD_NO_CUDA;
}
