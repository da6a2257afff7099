/* spmv_csr_layout.cu: CSR plans that run on their own layout of A: column panels, columns
 * renumbered by degree, 16-bit column offsets (issue 19; flags NZ_PLAN_COLUMN_PANELS,
 * NZ_PLAN_REORDER, NZ_PLAN_COMPRESS_INDICES). The layouts' builders are in
 * spmv_csr_layout_build.cu and spmv_csr_segments.cu (csr_layout.cuh). */
#include "csr_layout.cuh"

/*
 * Why: on gather-bound matrices the SpMV's cost is the gathers of x, not the matrix stream. When
 * x is larger than L2 (random 4M x 16 f64: 32 MB against the H100's 50 MB, shared with ~0.85 GB of
 * matrix data streaming through), most gathers miss. Three layouts attack that, each built once
 * at plan creation on the device and owned by the plan (A itself is never modified):
 *
 *  - Column panels: A = A_0 + A_1 + ... + A_{P-1} by column ranges [p w, (p + 1) w), with w
 *    chosen so that w entries of x fill at most a sixth of L2. Each panel is a CSR matrix of the
 *    same rows (copied: same total nonzeros, P (rows + 1) offsets); the plan runs the chosen
 *    algorithm on each in turn, the first with the caller's beta, the rest with beta = 1, so
 *    while a panel streams only its slice of x is gathered and it stays resident. Cost per SpMV:
 *    P - 1 more passes over y and the offsets. Sums are formed panel by panel (a different order
 *    of additions from the unsplit plan), reproducibly.
 *  - Reordering: columns renumbered by descending nonzero count (a stable radix sort, so ties
 *    keep their order and the result is deterministic); the plan keeps the renumbered column
 *    indices and perm (new -> old) and gathers x_new[j] = x[perm[j]] before each SpMV. On
 *    power-law graphs the heavily read columns of x then share cache lines. Rows keep their
 *    order, so y needs no permutation. The products and their order per row are the original
 *    ones: results identical to the plain plan. With csr/atomic the plan also keeps each
 *    nonzero's row and runs COO's atomic scatter (spmv_coo.cu: 32 x 8 nonzeros a warp, balanced
 *    whatever the rows) on the renumbered columns. R-MAT 20 on an H200: L1 hits rise from 9.5%
 *    to 41.5% and L2 requests fall from 15.1 M to 8.2 M a product (single; ncu in
 *    bench/results/h200-2026-11-26-s13-hotx-probe.txt); 1.39x faster than coo/atomic in single,
 *    1.15x in double (h200-2026-11-26-s13-spmv.txt, docs/dev/PERF_NOTES.md).
 *  - Compressed indices (CSR-vector only): 16-bit column offsets from a 32-bit base per row
 *    (V < 32 lanes per row) or per aligned 32 nonzeros (V == 32); a row or segment whose columns
 *    span more than 65535 keeps A's 32-bit indices (base -1). About 2 bytes less per nonzero
 *    where they fit (12 -> 10 in double, 8 -> 6 in single); the same columns, so the same sums
 *    bit for bit as plain CSR-vector.
 * Layouts are for op N and one at a time; the dispatcher (spmv_cuda.cu) calls them for non-empty
 * matrices only, like the algorithms themselves.
 */

/* ---- the layout entry points (spmv_cuda.cu) ---------------------------------------------------- */

void nzi_cuda_layout_release(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops) {
    nzi_layout_state_t *st = (nzi_layout_state_t *)plan->state;
    nz_context_t *ctx = plan->ctx;
    if (st == NULL) return;
    for (int p = 0; p < LAYOUT_MAX_PANELS; p++) {
        if (st->inner_ready[p] && st->inner[p].state != NULL) ops->release(&st->inner[p]);
        if (!st->owns_arrays[p]) continue;
        if (st->layout == NZ_PLAN_COLUMN_PANELS) {
            nz_cuda_free(ctx, st->views[p].device.row_offsets, (size_t)-1);
            nz_cuda_free(ctx, st->views[p].device.values, (size_t)-1);
        }
        nz_cuda_free(ctx, st->views[p].device.col_indices, (size_t)-1);
    }
    nz_cuda_free(ctx, st->perm, (size_t)-1);
    nz_cuda_free(ctx, st->x_perm, (size_t)-1);
    nz_cuda_free(ctx, st->seg_base, (size_t)-1);
    nz_cuda_free(ctx, st->seg_offsets, (size_t)-1);
    nz_cuda_free(ctx, st->row_indices, (size_t)-1);
    nzi_free(ctx, st);
    plan->state = NULL;
}

/* The algorithm's plan on view p (flags without the layout; reproducible as it says). */
static nz_status_t inner_setup(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops,
                               nzi_layout_state_t *st, int p) {
    nz_spmv_plan_t *in = &st->inner[p];
    in->magic = NZI_PLAN_MAGIC;
    in->ctx = plan->ctx;
    in->A = &st->views[p];
    in->op = NZ_OP_N;
    in->alg = plan->alg;
    in->flags = plan->flags & ~NZI_PLAN_LAYOUTS;
    in->backend = NZ_BACKEND_CUDA;
    in->reproducible = 1;
    st->inner_ready[p] = true;
    if (st->views[p].nnz == 0) return NZ_SUCCESS; /* an empty panel: nothing to set up */
    return ops->setup(in);
}

nz_status_t nzi_cuda_layout_setup(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const unsigned layout = plan->flags & NZI_PLAN_LAYOUTS;
    const char *what = "nz_spmv_plan_create";
    nzi_layout_state_t *st = NULL;
    size_t bytes = 0;
    int parts = 1;

    if (layout != NZ_PLAN_COLUMN_PANELS && layout != NZ_PLAN_REORDER &&
        layout != NZ_PLAN_COMPRESS_INDICES)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: one plan layout at a time "
                         "(column panels, reordering or compressed indices), flags 0x%x", what,
                         layout);
    if (layout == NZ_PLAN_COMPRESS_INDICES && plan->alg != NZ_ALG_VECTOR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: compressed indices are implemented for "
                         "csr/vector, not csr/%s", what, nz_alg_name(plan->alg));
    if (layout == NZ_PLAN_COLUMN_PANELS) parts = nzi_layout_panel_count(ctx, A);

    st = (nzi_layout_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the layout state", what);
    plan->state = st;
    st->layout = layout;
    st->parts = parts;
    for (int p = 0; p < parts; p++) st->views[p] = *A; /* shape, types; arrays replaced below */

    if (layout == NZ_PLAN_COLUMN_PANELS && parts > 1) {
        NZI_CHECK(nzi_layout_panels_build(ctx, A, st, parts, &bytes));
    } else if (layout == NZ_PLAN_REORDER) {
        NZI_CHECK(nzi_layout_reorder_build(ctx, A, st, &bytes));
        if (plan->alg == NZ_ALG_ATOMIC) {
            size_t row_bytes = 0;
            NZI_CHECK(nzi_layout_rows_build(ctx, A, st, &row_bytes));
            plan->layout_parts = 1;
            plan->workspace_bytes = bytes + row_bytes;
            plan->reproducible = 0; /* atomics: no inner plan */
            return NZ_SUCCESS;
        }
    } else if (layout == NZ_PLAN_COMPRESS_INDICES) {
        st->width = nzi_cuda_vector_width(ctx, A); /* CSR-vector's V: per-row or segment bases */
        NZI_CHECK(nzi_layout_compress_build(ctx, A, st, &bytes));
        if ((plan->flags & NZI_PLAN_IF_PAYS) &&
            (double)st->narrow_nnz < NZI_SEGMENTS_MIN_NARROW_SHARE * (double)A->nnz) {
            status = nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: only %lld of %lld nonzeros have "
                               "16-bit column offsets: compressed indices would not pay", what,
                               (long long)st->narrow_nnz, (long long)A->nnz);
            goto cleanup;
        }
        plan->vector_width = st->width;
        plan->vector_warps = nzi_cuda_vector_warps(ctx, A, st->width, plan->flags);
        plan->layout_parts = 1;
        plan->workspace_bytes = bytes;
        plan->reproducible = 1; /* CSR-vector's sums: no inner plan */
        return NZ_SUCCESS;
    }
    plan->reproducible = 1;
    plan->workspace_bytes = bytes;
    for (int p = 0; p < parts; p++) {
        NZI_CHECK(inner_setup(plan, ops, st, p));
        plan->reproducible &= st->inner[p].reproducible;
        plan->workspace_bytes += st->inner[p].workspace_bytes;
        if (st->inner[p].vector_width > plan->vector_width)
            plan->vector_width = st->inner[p].vector_width;
        if (st->inner[p].vector_warps > plan->vector_warps)
            plan->vector_warps = st->inner[p].vector_warps;
    }
    plan->layout_parts = parts;
cleanup:
    if (status < 0) nzi_cuda_layout_release(plan, ops);
    return status;
}

nz_status_t nzi_cuda_layout_execute(const nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops,
                                    double alpha, const void *x, double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const nzi_layout_state_t *st = (const nzi_layout_state_t *)plan->state;
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "nz_spmv_execute: the plan has no layout");
    if (st->layout == NZ_PLAN_COMPRESS_INDICES)
        return nzi_layout_segments_execute(plan, alpha, x, beta, y);
    if (st->layout == NZ_PLAN_REORDER) {
        NZI_TRY(nzi_layout_reorder_gather(ctx, A, st, x));
        if (st->row_indices != NULL) { /* csr/atomic: the COO scatter on the renumbered columns */
            const nzi_coo_t coo = {st->row_indices, st->views[0].device.col_indices,
                                   A->device.values};
            NZI_TRY(nzi_cuda_scale(ctx, A->value_type, A->rows, beta, y));
            return nzi_cuda_coo_accumulate(ctx, NULL, &coo, A->nnz, A->value_type, alpha,
                                           st->x_perm, y);
        }
        return ops->execute(&st->inner[0], alpha, st->x_perm, beta, y);
    }
    /* column panels: the first non-empty panel applies beta, the others add */
    bool first = true;
    for (int p = 0; p < st->parts; p++) {
        if (st->views[p].nnz == 0) continue;
        NZI_TRY(ops->execute(&st->inner[p], alpha, x, first ? beta : 1.0, y));
        first = false;
    }
    return first ? nzi_cuda_scale(ctx, A->value_type, A->rows, beta, y) : NZ_SUCCESS;
}
