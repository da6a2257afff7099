/* fuzz_common.h: what the fuzzers share: the end of one input's run. */
#ifndef NZ_FUZZ_COMMON_H
#define NZ_FUZZ_COMMON_H

#include "nonzero.h"

#include <stdlib.h>

/* Nothing may be left allocated through the context's allocator (a leak aborts, so libFuzzer
 * reports it); then the context goes. Returns 0, the fuzz target's result. */
static inline int fuzz_finish(nz_context_t *ctx) {
    nz_alloc_stats_t st;
    nz_context_alloc_stats(ctx, &st);
    if (st.live_blocks != 0) abort();
    nz_context_destroy(&ctx);
    return 0;
}

#endif /* NZ_FUZZ_COMMON_H */
