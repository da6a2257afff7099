/* bench_suite.h: nz bench's suite: generated matrices, named files, NZ_MATRIX_DIR, the large
 * real matrices in a table of their own. */
#ifndef NZB_SUITE_H
#define NZB_SUITE_H

#include "bench.h"

#define NZB_SEED 20240611u

typedef enum source_kind {
    GEN_LAPLACE3D, GEN_FE3D, GEN_RANDOM, GEN_RMAT, GEN_RAIL, GEN_MIXED, FROM_FILE
} source_kind_t;

typedef struct suite_entry {
    char name[NZB_NAME_SIZE];
    source_kind_t kind;
    int64_t p[4];             /* generator parameters, in the generator's order */
    char path[4096];          /* FROM_FILE */
    int large;                /* from the large directory: the second table */
} suite_entry_t;

/* The suite of a run: entries [0, num_small) for the main table, the large real matrices after
 * them; large_line says what became of the large ones, large_error why an asked-for table is
 * missing (empty: none). */
typedef struct nzb_suite {
    suite_entry_t *entries;     /* free() it */
    int num_entries, capacity, num_small;
    int name_width;             /* the longest name, at least 6 */
    char large_dir[4096], large_line[4400], large_error[4400];
} nzb_suite_t;

/* The suite for opt's size (opt->size resolved): generated matrices unless --only-large, the
 * files of the command line, NZ_MATRIX_DIR's (with --real), then the large directory's.
 * Returns 0, or 2 when out of memory. */
int nzb_suite_build(nzb_suite_t *suite, const nzb_options_t *opt);

/* An entry's matrix in double: generated with NZB_SEED, or read from its file. */
nz_status_t nzb_suite_load(nz_context_t *ctx, nz_matrix_t **A, const suite_entry_t *e);

#endif /* NZB_SUITE_H */
