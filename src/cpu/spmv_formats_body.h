/* spmv_formats_body.h: CPU SpMV kernels for CSC, COO, ELL, SELL, HYB, BSR, DIA in one value type. */
/* Included by spmv_formats.c once per value type with NZI_T (float / double) and NZI_NAME(f)
 * (f##_f32 / f##_f64) defined, as CXSparse builds its int / long / complex variants. No
 * include guard on purpose. */

/* y[i] = alpha * sum + beta * y[i]; y[i] is not read when beta == 0. */
static inline void NZI_NAME(finish)(NZI_T *y, int64_t i, NZI_T alpha, NZI_T sum, NZI_T beta) {
    y[i] = beta == 0 ? alpha * sum : alpha * sum + beta * y[i];
}

/* CSC: the arrays hold A^T in CSR, so A x is a scatter of column j times x[j]. Serial (a
 * parallel scatter needs atomics or per-thread copies of y); the transpose product on CSC runs
 * the CSR kernel on the same arrays instead. O(nnz + rows + cols). */
void NZI_NAME(nzi_cpu_csc_spmv)(const nz_matrix_t *A, NZI_T alpha, const NZI_T *x, NZI_T beta,
                                NZI_T *y, int parallel, int threads) {
    const int64_t *col_offsets = A->host.csr.row_offsets;
    const int32_t *row_indices = A->host.csr.col_indices;
    const NZI_T *values = (const NZI_T *)A->host.csr.values;
    (void)parallel;
    (void)threads;
    for (int64_t i = 0; i < A->rows; i++) y[i] = beta == 0 ? (NZI_T)0 : beta * y[i];
    if (alpha == 0) return;
    for (int64_t j = 0; j < A->cols; j++) {
        NZI_T ax = alpha * x[j];
        for (int64_t k = col_offsets[j]; k < col_offsets[j + 1]; k++)
            y[row_indices[k]] += values[k] * ax;
    }
}

/* COO sorted by row: each thread takes a contiguous range of rows (rows * t / T ..) and finds
 * its first entry by binary search, then walks the entries like CSR. Serial: one range. */
void NZI_NAME(nzi_cpu_coo_spmv)(const nz_matrix_t *A, NZI_T alpha, const NZI_T *x, NZI_T beta,
                                NZI_T *y, int parallel, int threads) {
    const int32_t *row_indices = A->host.coo.row_indices;
    const int32_t *col_indices = A->host.coo.col_indices;
    const NZI_T *values = (const NZI_T *)A->host.coo.values;
    const int64_t rows = A->rows, nnz = A->nnz;
    const int nthreads = nzi_cpu_team(parallel, threads, (double)nnz);
    (void)nthreads;
#ifdef _OPENMP
#pragma omp parallel if (nthreads > 1) num_threads(nthreads)
#endif
    {
        int64_t tid = 0, team = 1;
#ifdef _OPENMP
        tid = omp_get_thread_num();
        team = omp_get_num_threads();
#endif
        int64_t begin = rows * tid / team, end = rows * (tid + 1) / team;
        int64_t k = alpha != 0 ? nzi_lower_bound_i32(row_indices, nnz, begin) : 0;
        for (int64_t i = begin; i < end; i++) {
            NZI_T sum = 0;
            if (alpha != 0)
                for (; k < nnz && row_indices[k] == i; k++) sum += values[k] * x[col_indices[k]];
            NZI_NAME(finish)(y, i, alpha, sum, beta);
        }
    }
}

/* sum[t] = row i0 + t of an ELL block (column-major, padding -1 at the end of each row) for
 * t < n. Sweeping entry k across NZI_ROW_BLOCK consecutive rows reads the arrays contiguously;
 * the sweep stops once every row of the block has reached its padding. */
static void NZI_NAME(ell_rows)(const nzi_ell_t *ell, int64_t rows, int64_t i0, int64_t n,
                               const NZI_T *x, NZI_T *sum) {
    const NZI_T *values = (const NZI_T *)ell->values;
    for (int64_t t = 0; t < n; t++) sum[t] = 0;
    for (int64_t k = 0; k < ell->width; k++) {
        const int32_t *cols = ell->col_indices + k * rows + i0;
        const NZI_T *vals = values + k * rows + i0;
        int live = 0;
        for (int64_t t = 0; t < n; t++)
            if (cols[t] >= 0) {
                sum[t] += vals[t] * x[cols[t]];
                live = 1;
            }
        if (!live) break;
    }
}

void NZI_NAME(nzi_cpu_ell_spmv)(const nz_matrix_t *A, NZI_T alpha, const NZI_T *x, NZI_T beta,
                                NZI_T *y, int parallel, int threads) {
    const int64_t rows = A->rows, blocks = (rows + NZI_ROW_BLOCK - 1) / NZI_ROW_BLOCK;
    const int team = nzi_cpu_team(parallel, threads, (double)rows * (double)A->host.ell.width);
    NZI_OMP_FOR(team)
    for (int64_t b = 0; b < blocks; b++) {
        NZI_T sum[NZI_ROW_BLOCK] = {0};
        int64_t i0 = b * NZI_ROW_BLOCK, n = rows - i0 < NZI_ROW_BLOCK ? rows - i0 : NZI_ROW_BLOCK;
        if (alpha != 0) NZI_NAME(ell_rows)(&A->host.ell, rows, i0, n, x, sum);
        for (int64_t t = 0; t < n; t++) NZI_NAME(finish)(y, i0 + t, alpha, sum[t], beta);
    }
}

/* HYB: the ELL part of a block of rows, then the COO entries of the same rows (found by binary
 * search), so every y[i] is written once and in CSR order. */
void NZI_NAME(nzi_cpu_hyb_spmv)(const nz_matrix_t *A, NZI_T alpha, const NZI_T *x, NZI_T beta,
                                NZI_T *y, int parallel, int threads) {
    const nzi_hyb_t *h = &A->host.hyb;
    const NZI_T *coo_values = (const NZI_T *)h->coo.values;
    const int64_t rows = A->rows, blocks = (rows + NZI_ROW_BLOCK - 1) / NZI_ROW_BLOCK;
    const int team = nzi_cpu_team(parallel, threads,
                                  (double)rows * (double)h->ell.width + (double)h->coo_nnz);
    NZI_OMP_FOR(team)
    for (int64_t b = 0; b < blocks; b++) {
        NZI_T sum[NZI_ROW_BLOCK] = {0};
        int64_t i0 = b * NZI_ROW_BLOCK, n = rows - i0 < NZI_ROW_BLOCK ? rows - i0 : NZI_ROW_BLOCK;
        if (alpha != 0) {
            NZI_NAME(ell_rows)(&h->ell, rows, i0, n, x, sum);
            for (int64_t k = nzi_lower_bound_i32(h->coo.row_indices, h->coo_nnz, i0);
                 k < h->coo_nnz && h->coo.row_indices[k] < i0 + n; k++)
                sum[h->coo.row_indices[k] - i0] += coo_values[k] * x[h->coo.col_indices[k]];
        }
        for (int64_t t = 0; t < n; t++) NZI_NAME(finish)(y, i0 + t, alpha, sum[t], beta);
    }
}

/* Slots (entries and padding) of a SELL matrix: the work of its kernels. */
static inline double NZI_NAME(sell_slots)(const nzi_sell_t *s) {
    return s->num_chunks > 0 ? (double)s->chunk_offsets[s->num_chunks] : 0.0;
}

/* SELL-C-sigma, any C: chunks in parallel; inside a chunk, groups of up to NZI_ROW_BLOCK slots
 * swept entry position by entry position, so values and columns are read contiguously as they
 * are stored. Padding (-1) is skipped, never multiplied. Results go to y[row_of_slot[slot]]. */
void NZI_NAME(nzi_cpu_sell_spmv)(const nz_matrix_t *A, NZI_T alpha, const NZI_T *x, NZI_T beta,
                                 NZI_T *y, int parallel, int threads) {
    const nzi_sell_t *s = &A->host.sell;
    const NZI_T *values = (const NZI_T *)s->values;
    const int64_t C = s->chunk;
    const int team = nzi_cpu_team(parallel, threads, NZI_NAME(sell_slots)(s));
    NZI_OMP_FOR(team)
    for (int64_t c = 0; c < s->num_chunks; c++) {
        const int64_t base = s->chunk_offsets[c], width = s->chunk_widths[c];
        for (int64_t g = 0; g < C; g += NZI_ROW_BLOCK) {
            const int64_t n = C - g < NZI_ROW_BLOCK ? C - g : NZI_ROW_BLOCK;
            NZI_T sum[NZI_ROW_BLOCK] = {0};
            if (alpha != 0)
                for (int64_t k = 0; k < width; k++) {
                    const int32_t *cols = s->col_indices + base + k * C + g;
                    const NZI_T *vals = values + base + k * C + g;
                    for (int64_t t = 0; t < n; t++)
                        if (cols[t] >= 0) sum[t] += vals[t] * x[cols[t]];
                }
            for (int64_t t = 0; t < n; t++) {
                int32_t row = s->row_of_slot[c * C + g + t];
                if (row >= 0) NZI_NAME(finish)(y, row, alpha, sum[t], beta);
            }
        }
    }
}

/* SELL-C-sigma with C a compile-time W (4 or 8), after the Uppsala CPU kernel (N. Wik,
 * "Accelerator-based programming" project report, 2021): W independent accumulators, one per
 * row of the chunk, and for each entry position k one W-wide step over the chunk's rows, which
 * `omp simd` turns into a masked gather + FMA where the target has them (AVX2 / AVX-512
 * builds). Padding is skipped by the mask, never multiplied: 0 * x would let an Inf or NaN in x
 * leak into rows that do not touch it, and x[-1] is never read. */
#define NZI_SELL_SIMD_CHUNKS(W)                                                                 \
    static void NZI_NAME(sell_simd_##W)(const nz_matrix_t *A, NZI_T alpha, const NZI_T *x,      \
                                        NZI_T beta, NZI_T *y, int parallel, int threads) {      \
        const nzi_sell_t *s = &A->host.sell;                                                    \
        const NZI_T *values = (const NZI_T *)s->values;                                         \
        const int team = nzi_cpu_team(parallel, threads, NZI_NAME(sell_slots)(s));              \
        NZI_OMP_FOR(team)                                                                       \
        for (int64_t c = 0; c < s->num_chunks; c++) {                                           \
            const int64_t base = s->chunk_offsets[c], width = s->chunk_widths[c];               \
            NZI_T sum[W] = {0};                                                                 \
            if (alpha != 0)                                                                     \
                for (int64_t k = 0; k < width; k++) {                                           \
                    const int32_t *cols = s->col_indices + base + k * W;                        \
                    const NZI_T *vals = values + base + k * W;                                  \
                    NZI_OMP_SIMD                                                                \
                    for (int t = 0; t < W; t++)                                                 \
                        if (cols[t] >= 0) sum[t] += vals[t] * x[cols[t]];                       \
                }                                                                               \
            for (int t = 0; t < W; t++) {                                                       \
                int32_t row = s->row_of_slot[c * W + t];                                        \
                if (row >= 0) NZI_NAME(finish)(y, row, alpha, sum[t], beta);                    \
            }                                                                                   \
        }                                                                                       \
    }

NZI_SELL_SIMD_CHUNKS(4)
NZI_SELL_SIMD_CHUNKS(8)
#undef NZI_SELL_SIMD_CHUNKS

/* The plan refuses other chunk heights; the generic kernel is the safe fallback here. */
void NZI_NAME(nzi_cpu_sell_simd_spmv)(const nz_matrix_t *A, NZI_T alpha, const NZI_T *x,
                                      NZI_T beta, NZI_T *y, int parallel, int threads) {
    switch (A->host.sell.chunk) {
    case 4: NZI_NAME(sell_simd_4)(A, alpha, x, beta, y, parallel, threads); break;
    case 8: NZI_NAME(sell_simd_8)(A, alpha, x, beta, y, parallel, threads); break;
    default: NZI_NAME(nzi_cpu_sell_spmv)(A, alpha, x, beta, y, parallel, threads); break;
    }
}

/* One block row of BSR: sum[r] for its nr real rows. Inlined with b a constant for the common
 * block sizes so the block loops unroll. */
static inline void NZI_NAME(bsr_block_row)(const nzi_bsr_t *m, int64_t br, const int64_t b,
                                           int64_t nr, int64_t cols, const NZI_T *x,
                                           NZI_T *sum) {
    const NZI_T *values = (const NZI_T *)m->values;
    for (int64_t q = m->block_row_offsets[br]; q < m->block_row_offsets[br + 1]; q++) {
        const int64_t j0 = (int64_t)m->block_col_indices[q] * b;
        const NZI_T *block = values + q * b * b;
        if (nr == b && j0 + b <= cols) {
            for (int64_t r = 0; r < b; r++)
                for (int64_t c = 0; c < b; c++) sum[r] += block[r * b + c] * x[j0 + c];
        } else {
            const int64_t nc = cols - j0 < b ? cols - j0 : b;
            for (int64_t r = 0; r < nr; r++)
                for (int64_t c = 0; c < nc; c++) sum[r] += block[r * b + c] * x[j0 + c];
        }
    }
}

/* BSR: block rows in parallel, b partial sums per block row; the padded rows and columns of
 * the last block row / column are skipped (x and y are not padded). Stored zeros inside a
 * block are multiplied like any value (as cuSPARSE does). */
void NZI_NAME(nzi_cpu_bsr_spmv)(const nz_matrix_t *A, NZI_T alpha, const NZI_T *x, NZI_T beta,
                                NZI_T *y, int parallel, int threads) {
    const nzi_bsr_t *m = &A->host.bsr;
    const int64_t b = m->block, rows = A->rows, cols = A->cols;
    const int team = nzi_cpu_team(parallel, threads, (double)m->num_blocks * (double)(b * b));
    NZI_OMP_FOR(team)
    for (int64_t br = 0; br < m->block_rows; br++) {
        NZI_T sum[32] = {0};
        const int64_t i0 = br * b, nr = rows - i0 < b ? rows - i0 : b;
        if (alpha != 0) switch (b) {
            case 2: NZI_NAME(bsr_block_row)(m, br, 2, nr, cols, x, sum); break;
            case 3: NZI_NAME(bsr_block_row)(m, br, 3, nr, cols, x, sum); break;
            case 4: NZI_NAME(bsr_block_row)(m, br, 4, nr, cols, x, sum); break;
            case 8: NZI_NAME(bsr_block_row)(m, br, 8, nr, cols, x, sum); break;
            default: NZI_NAME(bsr_block_row)(m, br, b, nr, cols, x, sum); break;
            }
        for (int64_t r = 0; r < nr; r++) NZI_NAME(finish)(y, i0 + r, alpha, sum[r], beta);
    }
}

/* DIA: blocks of rows in parallel; for each diagonal (ascending, so each row is summed in
 * column order) the rows of the block whose column i + offset lies inside the matrix. Stored
 * zeros on a diagonal are multiplied like any value. */
void NZI_NAME(nzi_cpu_dia_spmv)(const nz_matrix_t *A, NZI_T alpha, const NZI_T *x, NZI_T beta,
                                NZI_T *y, int parallel, int threads) {
    const nzi_dia_t *m = &A->host.dia;
    const NZI_T *values = (const NZI_T *)m->values;
    const int64_t rows = A->rows, cols = A->cols;
    const int64_t blocks = (rows + NZI_ROW_BLOCK - 1) / NZI_ROW_BLOCK;
    const int team = nzi_cpu_team(parallel, threads, (double)m->num_diagonals * (double)rows);
    NZI_OMP_FOR(team)
    for (int64_t b = 0; b < blocks; b++) {
        NZI_T sum[NZI_ROW_BLOCK] = {0};
        const int64_t i0 = b * NZI_ROW_BLOCK;
        const int64_t i1 = rows - i0 < NZI_ROW_BLOCK ? rows : i0 + NZI_ROW_BLOCK;
        if (alpha != 0)
            for (int64_t d = 0; d < m->num_diagonals; d++) {
                const int64_t offset = m->offsets[d];
                const int64_t lo = i0 > -offset ? i0 : -offset;
                const int64_t hi = i1 < cols - offset ? i1 : cols - offset;
                const NZI_T *diagonal = values + d * rows;
                for (int64_t i = lo; i < hi; i++) sum[i - i0] += diagonal[i] * x[i + offset];
            }
        for (int64_t i = i0; i < i1; i++) NZI_NAME(finish)(y, i, alpha, sum[i - i0], beta);
    }
}
