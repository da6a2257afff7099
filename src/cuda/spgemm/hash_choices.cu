/* hash_choices.cu: the hash SpGEMM's choices of kernel variant: dense rule, row sort, sweep width, one binning. */
#include "hash.cuh"

/* Each choice has a measured default and an override in the context's tunables (nz_tunables_t
 * spgemm_*, named NZ_TUNE_SPGEMM_* by nz_tunables_parse; docs/dev/SPGEMM.md). nz_context_set_tunables
 * lets only the allowed values through, so the fields are taken as they are. */
#define DENSE_FACTOR 4  /* see dense_from_bin */
#define DENSE_MIN_BIN 4
#define RANK_SORT 2     /* see rank_sort_mode: 2 measured 1.6x faster than 1 on random 10^6 x 8 (H100) */
#define SWEEP_DEFAULT 2 /* see sweep_width: 2 lanes per row of B, measured fastest (H100) */

/* The first shared bin whose numeric rows go to the dense path instead: sorting a table of
 * P = 32 << b keys costs about P log2(P)^2 / 2 compare-exchanges with a barrier per step, the
 * dense path passes over cols / 32 bitmap words (plus a second sweep of the products and global
 * atomics into C's row, which the factor DENSE_FACTOR weighs; 4 measured best or level on R-MAT
 * 16-20 with the ranked dense path, docs/dev/SPGEMM.md). Never below bin DENSE_MIN_BIN: short rows
 * waste a 1024-thread block. NZ_TUNE_SPGEMM_DENSE=0|1|2|4|8|16|32|64 sets the factor (0: only
 * rows too long for shared memory go dense). */
int hash_dense_from_bin(const nz_context_t *ctx, int64_t cols, int max_bin) {
    const int factor = nzi_tune_pick(ctx->tunables.spgemm_dense, DENSE_FACTOR);
    if (factor == 0) return SHARED_BINS;
    const double words = (double)((cols + 31) / 32);
    for (int b = DENSE_MIN_BIN; b <= max_bin; b++) {
        const double p = (double)(32 << b), lg = 5.0 + b;
        if (p * lg * lg / 2.0 > factor * words) return b;
    }
    return SHARED_BINS;
}

/* Sort of the small numeric bins, NZ_TUNE_SPGEMM_RANK=0|1|2 (default RANK_SORT): 0 the block's
 * bitonic sort; 1 by counting in bins 0 .. 2, every entry rescanning its row's keys; 2 by
 * counting in bins 0 .. 3 with each lane's entries in registers (rank_sort_owned), one pass over
 * the keys per lane. */
int hash_rank_sort_mode(const nz_context_t *ctx) {
    return nzi_tune_pick(ctx->tunables.spgemm_rank, RANK_SORT);
}

/* Sweep width of the small bins, NZ_TUNE_SPGEMM_SWEEP=0|1|2|4|8|16|32 (default SWEEP_DEFAULT):
 * 0 keeps SWEEP = min(group, 32) everywhere; w >= 2 gives the bins of groups up to 32 a sweep
 * of min(w, group) lanes and group / min(w, group) sweepers; 1 picks w as the power of two at
 * or above B's mean row length nnz(B) / rows(B) rounded to an integer (a mean of 8.001 is 8),
 * within [2, 32]. Why: rows of B of about 8 entries leave half of a 16-lane sweep idle in both
 * phases (uniform random A*A, mean 8, whose C rows fall mostly in bins 1 .. 3). */
int hash_sweep_width(const nz_context_t *ctx, const nz_matrix_t *B) {
    int w = nzi_tune_pick(ctx->tunables.spgemm_sweep, SWEEP_DEFAULT);
    if (w == 1) {
        const int64_t mean = B->rows > 0 ? (B->nnz + B->rows / 2) / B->rows : 0;
        w = 2;
        while (w < 32 && w < mean) w <<= 1;
    }
    return w;
}


/* The symbolic phase's dense rule, NZ_TUNE_SPGEMM_SYMDENSE=0|1|2 (default 1): 0 sends only the
 * rows too long for shared memory to the dense path; 2 applies the numeric phase's rule
 * (dense_from_bin) to the rows' products; 1 the same but never below bin SYM_DENSE_MIN_BIN
 * (products above 1365). Measured on an H100 (symbolic ms, 0 -> 2): R-MAT 20 (ef 4) 30.2 -> 18.6,
 * R-MAT 18 33.8 -> 23.9, R-MAT 16 11.0 -> 8.3, but FE 64^3 6.2 -> 10.3, random 5.6 -> 7.2,
 * Laplacian 5.3 -> 6.1: products overstate the length of rows that compress (FE: ~700 products,
 * ~120 entries), whose hash tables stay small; the floor keeps such rows hashed. */
#define SYM_DENSE_MIN_BIN 7
int hash_symbolic_dense_from(const nz_context_t *ctx, int dense_from) {
    const int rule = nzi_tune_pick(ctx->tunables.spgemm_symdense, 1);
    if (rule == 0) return SHARED_BINS;
    if (rule == 1 && dense_from < SYM_DENSE_MIN_BIN) return SYM_DENSE_MIN_BIN;
    return dense_from;
}

/* Small products (NZ_TUNE_SPGEMM_ONEBIN=1, the default): the symbolic phase bins rows by their
 * products with the numeric phase's bins and dense rule, and a single-panel numeric phase runs
 * on those lists, skipping its own binning (a memset, three kernels and a synchronisation: a
 * fifth of the time of a product of a few thousand rows). The tables are then sized by the
 * products rather than the exact lengths, which only costs where rows compress a lot, so only
 * below ONEBIN_MAX_PRODUCTS (counted on the host when nnz(A) <= ONEBIN_MAX_NNZ). */
bool hash_small_product(const nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B) {
    if (nzi_tune_pick(ctx->tunables.spgemm_onebin, 1) != 1 || A->nnz > ONEBIN_MAX_NNZ)
        return false;
    if (A->location == NZ_DEVICE) /* no host arrays to count: B's mean row length instead */
        return (double)A->nnz * ((double)B->nnz / (double)(B->rows > 0 ? B->rows : 1)) <=
               (double)ONEBIN_MAX_PRODUCTS;
    const int32_t *a_col = A->host.csr.col_indices;
    const int64_t *b_off = B->host.csr.row_offsets;
    int64_t products = 0;
    for (int64_t k = 0; k < A->nnz && products <= ONEBIN_MAX_PRODUCTS; k++)
        products += b_off[a_col[k] + 1] - b_off[a_col[k]];
    return products <= ONEBIN_MAX_PRODUCTS;
}
