/* io_internal.h: helpers shared by the Matrix Market and binary readers and writers. */
#ifndef NZI_IO_INTERNAL_H
#define NZI_IO_INTERNAL_H

#include "nzi.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Most threads one reader or writer splits a block across (fixed-size per-part bookkeeping). */
#define NZI_IO_MAX_THREADS 64

/* Fuzzing builds refuse dimensions that would make a tiny input allocate gigabytes (row offsets
 * of an empty 2^31-row matrix, a densified coordinate file); normal builds accept every size up
 * to the documented 2^31 - 1 limit. A context with an explicit memory budget is not capped
 * (fuzz_mm_budget: realistic dimensions, bounded by the budget instead). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define NZI_IO_FUZZ_DIM_LIMIT ((int64_t)1 << 20)
#endif

/* Threads for an I/O loop over `work` bytes: one for small inputs, else the context's setting
 * (0 = the OpenMP default), at most NZI_IO_MAX_THREADS. */
static inline int nzi_io_threads(const nz_context_t *ctx, size_t work) {
    int t = work >= ((size_t)1 << 18) ? nzi_context_threads(ctx) : 1;
    if (t < 1) t = 1;
    if (t > NZI_IO_MAX_THREADS) t = NZI_IO_MAX_THREADS;
    return t;
}

/* True if `path` ends with `suffix` (ASCII case-insensitive). */
bool nzi_io_has_suffix(const char *path, const char *suffix);

/* A writer's output path must not carry the other format's extension: Matrix Market text into a
 * `.nzb` (binary = false), or the binary format into a `.mtx`, `.mtx.gz` or `.gz` (binary =
 * true) would give a file whose name lies about its contents. NZ_ERR_INVALID_ARGUMENT naming
 * the function `what`, the path and the writer to use instead. */
nz_status_t nzi_io_check_extension(nz_context_t *ctx, const char *path, const char *what,
                                   bool binary);

/* Format a non-negative integer in decimal at dst; returns the number of characters. */
static inline size_t nzi_io_format_u64(char *dst, uint64_t v) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++) dst[i] = tmp[n - 1 - i];
    return n;
}

#endif /* NZI_IO_INTERNAL_H */
