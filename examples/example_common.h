/* example_common.h: what the C examples share: CHECK, which stops the program with the status
 * and the context's message when a Nonzero call fails. Kept next to the examples (include it
 * with quotes); it needs only <nonzero.h>. */
#ifndef NZ_EXAMPLE_COMMON_H
#define NZ_EXAMPLE_COMMON_H

#include <nonzero.h>

#include <stdio.h>
#include <stdlib.h>

/* Every call returns a status (negative: an error); on error the context `ctx` in scope holds a
 * one-line message. */
#define CHECK(call)                                                                             \
    do {                                                                                        \
        nz_status_t status_ = (call);                                                           \
        if (status_ < 0) {                                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, nz_status_string(status_),   \
                    nz_context_last_error(ctx));                                                \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

#endif /* NZ_EXAMPLE_COMMON_H */
