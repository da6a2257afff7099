/* lower_bound.h: binary search for the first element not below a key in a sorted index array. */
#ifndef NZI_LOWER_BOUND_H
#define NZI_LOWER_BOUND_H

/* Header-only on <stdint.h> alone, so that the distributed layer (src/mpi, built on the public
 * API) uses it as the library does (as cg_scalars.h and fe3d_common.h are shared). */
#include <stdint.h>

/* The first k in [0, count) with sorted[k] >= key, or count if there is none (C++'s
 * std::lower_bound). O(log count). */
static inline int64_t nzi_lower_bound_i32(const int32_t *sorted, int64_t count, int64_t key) {
    int64_t lo = 0, hi = count;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline int64_t nzi_lower_bound_i64(const int64_t *sorted, int64_t count, int64_t key) {
    int64_t lo = 0, hi = count;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif /* NZI_LOWER_BOUND_H */
