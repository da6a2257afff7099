/* hyspmm_pipeline.c: hySpMM's driver: symbolic phase, the three-slot pipeline, C written in place. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#endif
#include "hyspmm.h"

#include <math.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

/*
 * The pipeline of thesis section 3.3.1 over NZI_HYSPMM_SLOTS slots (streams, pinned staging and
 * device blocks: src/cuda/spgemm/hyspmm_slots.cu; stages: hyspmm.cu). Iteration p of run_pipeline:
 *
 *     fetch(p - 1)     wait for panel p-1's entry count (its GPU stages ran during iteration
 *                      p - 1), queue the D2H of its C
 *     wait(p - 2)      panel p-2's C is in its slot's pinned output (D2H queued an iteration ago)
 *     CPU, at once     on one group of threads: pre-process panel p+1 into its slot's pinned input;
 *                      on the other: copy panel p-2's C from the pinned output into its final
 *                      place in C (thread groups sized by the bytes each job writes)
 *     enqueue(p + 1)   queue its H2D, multiply, sort, compress and the D2H of its counts
 *
 * so while the CPU pre-processes p+1 and copies out p-2, the GPU multiplies, sorts and
 * compresses p (queued at the end of iteration p-1) and the copy engine drains p-1. Panel p+1
 * takes the slot of p-2, whose input was consumed two iterations ago and whose output the
 * copy-out of this iteration has finished before the enqueue.
 *
 * C is written once: its row offsets exist from the start, its column and value arrays grow
 * (nzi_realloc: large blocks are remapped, not copied) by each panel's entry count, known from
 * fetch before the copy-out, and are trimmed at the end. There is no intermediate copy of C.
 *
 * Panel size: the products per panel come from the stage rates the context measured in its
 * previous hySpMM call (nzi_hyspmm_panel_target: fill and drain against the per-panel cost),
 * else from the fixed rule; the memory inequality bounds them either way.
 *
 * Host C, compiled in every build: without CUDA the device side is src/core/cuda_absent.c's, and
 * nothing reaches this driver (nz_cuda_spgemm answers NULL there).
 */

/* Largest number of products of one row hySpMM accepts (the int32 offsets of a panel). */
#define HYSPMM_MAX_ROW_PRODUCTS ((int64_t)1 << 30)
/* Bounds of the measured per-panel cost used for the panel size (seconds). */
#define HYSPMM_MIN_OVERHEAD 1e-4
#define HYSPMM_MAX_OVERHEAD 1e-2

/* Largest rows, nonzeros of A and products over the panels (the slots' sizes). */
static void panel_maxima(const nz_matrix_t *A, const nzi_spgemm_panel_t *panels, int64_t count,
                         int64_t *max_rows, int64_t *max_a_nnz, int64_t *max_products) {
    const int64_t *a_offsets = A->host.csr.row_offsets;
    *max_rows = *max_a_nnz = *max_products = 0;
    for (int64_t q = 0; q < count; q++) {
        const int64_t rows = panels[q].row_end - panels[q].row_begin;
        const int64_t a_nnz = a_offsets[panels[q].row_end] - a_offsets[panels[q].row_begin];
        if (rows > *max_rows) *max_rows = rows;
        if (a_nnz > *max_a_nnz) *max_a_nnz = a_nnz;
        if (panels[q].products > *max_products) *max_products = panels[q].products;
    }
}

/* Stage totals of a call, seconds; bytes the host stages wrote. host_wall: the CPU's share of
 * the iterations (expansion and copy-out side by side); loop_wall: the whole pipeline. */
typedef struct pipeline_times {
    double expand, h2d, multiply, d2h, copy_out, host_wall, loop_wall;
    double expand_bytes, copy_out_bytes;
} pipeline_times_t;

/* ---- C, built in place ------------------------------------------------------------------- */

typedef struct c_builder {
    nz_matrix_t *M;       /* rows x cols CSR; its arrays hold `capacity` entries, `used` filled */
    int64_t capacity, used;
    size_t vs;
} c_builder_t;

/* Ask for transparent huge pages on a large block of C (Linux, where THP is in "madvise" mode):
 * the copy-out writes C's pages for the first time, and a fault per 4 KB page measured as the
 * copy-out's limit (4-11 GB/s against a 34-54 GB/s memcpy between faulted pages). Only for
 * blocks that are never moved: mremap of huge-page memory (a growing realloc) measured slower
 * than the faults it saves. Advice only: failure changes nothing. */
static void advise_huge_pages(void *block, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || bytes < ((size_t)8 << 20)) return;
    const uintptr_t begin = ((uintptr_t)block + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    const uintptr_t end = ((uintptr_t)block + bytes) & ~((uintptr_t)page - 1);
    if (end > begin) (void)madvise((void *)begin, (size_t)(end - begin), MADV_HUGEPAGE);
#else
    (void)block;
    (void)bytes;
#endif
}

/* C's arrays at their upper bound, the product count: address space only (the C library maps
 * large blocks, and the kernel gives a page memory when it is first written), so C never moves
 * and may use huge pages; the untouched tail is returned by builder_finish. If the upper bound
 * cannot be had (a product far larger than memory), the arrays start empty and grow by half
 * again per step instead (builder_reserve; realloc remaps, no copy). */
static nz_status_t builder_reserve_upper_bound(nz_context_t *ctx, c_builder_t *b, int64_t products) {
    size_t col_bytes, value_bytes;
    if (products <= 0 || nzi_mul_overflow_size((size_t)products, sizeof(int32_t), &col_bytes) ||
        nzi_mul_overflow_size((size_t)products, b->vs, &value_bytes))
        return NZ_SUCCESS;
    /* an injected failure (the test hook) is an error like any other allocation's; a real one
     * only means the fallback */
    const int64_t countdown = ctx->fail_countdown;
    int32_t *cols = (int32_t *)nzi_realloc(ctx, b->M->host.csr.col_indices, col_bytes);
    if (cols != NULL) {
        b->M->host.csr.col_indices = cols;
        void *values = nzi_realloc(ctx, b->M->host.csr.values, value_bytes);
        if (values != NULL) {
            b->M->host.csr.values = values;
            b->capacity = products;
            advise_huge_pages(cols, col_bytes);
            advise_huge_pages(values, value_bytes);
            return NZ_SUCCESS;
        }
    } /* (a larger column array alone is harmless: the capacity is unchanged) */
    if (countdown > 0 && ctx->fail_countdown == 0)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                         "nz_spgemm (hyspmm): cannot reserve C's arrays (injected failure)");
    return NZ_SUCCESS;
}

/* Room for `more` entries after the used ones: the arrays grow by half again (at least to what
 * is needed). */
static nz_status_t builder_reserve(nz_context_t *ctx, c_builder_t *b, int64_t more) {
    int64_t need, grow;
    size_t col_bytes, value_bytes;
    if (nzi_add_overflow_i64(b->used, more, &need))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "nz_spgemm (hyspmm): the nonzeros of C overflow int64");
    if (need <= b->capacity) return NZ_SUCCESS;
    grow = b->capacity > INT64_MAX / 2 ? need : b->capacity + b->capacity / 2;
    if (grow < need) grow = need;
    if (nzi_mul_overflow_size((size_t)grow, sizeof(int32_t), &col_bytes) ||
        nzi_mul_overflow_size((size_t)grow, b->vs, &value_bytes))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "nz_spgemm (hyspmm): C of %lld entries overflows size_t",
                         (long long)grow);
    int32_t *cols = (int32_t *)nzi_realloc(ctx, b->M->host.csr.col_indices, col_bytes);
    if (cols == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                         "nz_spgemm (hyspmm): cannot grow C's column indices to %zu bytes", col_bytes);
    b->M->host.csr.col_indices = cols;
    void *values = nzi_realloc(ctx, b->M->host.csr.values, value_bytes);
    if (values == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                         "nz_spgemm (hyspmm): cannot grow C's values to %zu bytes", value_bytes);
    b->M->host.csr.values = values;
    b->capacity = grow;
    return NZ_SUCCESS;
}

/* Panel rows [row_begin, row_begin + rows)'s C from a slot's pinned output into place, with
 * `threads` threads (room reserved by builder_reserve). */
static void builder_add(c_builder_t *b, int64_t row_begin, int64_t rows,
                        const nzi_hyspmm_output_t *out, int64_t c_nnz, int threads) {
    int64_t *offsets = b->M->host.csr.row_offsets + row_begin;
    for (int64_t i = 0; i < rows; i++) offsets[i + 1] = b->used + out->row_offsets[i + 1];
    nzi_parallel_memcpy_threads(b->M->host.csr.col_indices + b->used, out->col_indices,
                                (size_t)c_nnz * sizeof(int32_t), threads);
    nzi_parallel_memcpy_threads((char *)b->M->host.csr.values + (size_t)b->used * b->vs,
                                out->values, (size_t)c_nnz * b->vs, threads);
    b->used += c_nnz;
}

/* Trim the arrays to the entries written (a refused trim keeps the larger block: harmless). */
static void builder_finish(nz_context_t *ctx, c_builder_t *b) {
    const size_t used = (size_t)(b->used > 0 ? b->used : 1);
    void *p = nzi_realloc(ctx, b->M->host.csr.col_indices, used * sizeof(int32_t));
    if (p != NULL) b->M->host.csr.col_indices = (int32_t *)p;
    p = nzi_realloc(ctx, b->M->host.csr.values, used * b->vs);
    if (p != NULL) b->M->host.csr.values = p;
    b->M->nnz = b->used;
}

/* ---- the pipeline ------------------------------------------------------------------------ */

typedef struct pipeline {
    nz_context_t *ctx;
    nzi_hyspmm_device_t *dev;
    const nz_matrix_t *A, *B;
    const nzi_spgemm_panel_t *panels;
    const int64_t *products;   /* per row of A */
    int64_t count;
    int slots, threads;
    c_builder_t *C;
    int64_t c_nnz[NZI_HYSPMM_SLOTS];
    /* bytes per second per thread of the last expansion and copy-out (0: none yet), for the
     * next iteration's thread split */
    double expand_thread_rate, copy_thread_rate;
    pipeline_times_t t;
} pipeline_t;

static int slot_of(const pipeline_t *pl, int64_t q) { return (int)(q % pl->slots); }

static void panel_sizes(const pipeline_t *pl, int64_t q, int64_t *rows, int64_t *a_nnz) {
    const int64_t *a_offsets = pl->A->host.csr.row_offsets;
    *rows = pl->panels[q].row_end - pl->panels[q].row_begin;
    *a_nnz = a_offsets[pl->panels[q].row_end] - a_offsets[pl->panels[q].row_begin];
}

static double expand(pipeline_t *pl, int64_t q, int threads) {
    const nzi_spgemm_panel_t *panel = &pl->panels[q];
    const double t = nzi_wtime();
    nzi_hyspmm_preprocess(pl->A, pl->B, panel, pl->products + panel->row_begin, threads,
                          nzi_hyspmm_slot_input(pl->dev, slot_of(pl, q)));
    return nzi_wtime() - t;
}

static double copy_out(pipeline_t *pl, int64_t q, int threads) {
    const nzi_spgemm_panel_t *panel = &pl->panels[q];
    const double t = nzi_wtime();
    builder_add(pl->C, panel->row_begin, panel->row_end - panel->row_begin,
                nzi_hyspmm_slot_output(pl->dev, slot_of(pl, q)), pl->c_nnz[slot_of(pl, q)], threads);
    return nzi_wtime() - t;
}

/* The CPU's share of an iteration: pre-process panel `next` and copy panel `done` out (either
 * may be -1: none) side by side, on two groups of threads sized so that both finish together:
 * in proportion to each job's bytes over its per-thread rate in the previous iteration (its
 * bytes alone at first). Nested OpenMP: the sections' teams need two active levels, set for the
 * call and restored. */
static void host_stages(pipeline_t *pl, int64_t next, int64_t done) {
    const size_t vs = nzi_value_size(pl->A->value_type);
    double expand_bytes = 0.0, copy_bytes = 0.0, te = 0.0, tc = 0.0;
    int threads_expand = 0, threads_copy = 0;
    const double t0 = nzi_wtime();
    int total = pl->threads;
#ifdef _OPENMP
    total = nzi_resolve_threads(total);
#else
    total = 1;
#endif
    if (next >= 0) {
        int64_t rows, a_nnz;
        panel_sizes(pl, next, &rows, &a_nnz);
        expand_bytes = nzi_hyspmm_input_bytes(pl->A->value_type, rows, a_nnz,
                                              pl->panels[next].products);
    }
    if (done >= 0) copy_bytes = (double)pl->c_nnz[slot_of(pl, done)] * (double)(sizeof(int32_t) + vs);
#ifdef _OPENMP
    if (next >= 0 && done >= 0 && total >= 2 && copy_bytes > 0.0) {
        double work_expand = expand_bytes, work_copy = copy_bytes;
        if (pl->expand_thread_rate > 0.0 && pl->copy_thread_rate > 0.0) {
            work_expand /= pl->expand_thread_rate;
            work_copy /= pl->copy_thread_rate;
        }
        threads_expand = (int)lround((double)total * work_expand / (work_expand + work_copy));
        if (threads_expand < 1) threads_expand = 1;
        if (threads_expand > total - 1) threads_expand = total - 1;
        threads_copy = total - threads_expand;
        const int levels = omp_get_max_active_levels();
        if (levels < 2) omp_set_max_active_levels(2);
#pragma omp parallel sections num_threads(2)
        {
#pragma omp section
            te = expand(pl, next, threads_expand);
#pragma omp section
            tc = copy_out(pl, done, threads_copy);
        }
        if (levels < 2) omp_set_max_active_levels(levels);
    } else
#endif
    {
        threads_expand = threads_copy = total;
        if (next >= 0) te = expand(pl, next, total);
        if (done >= 0) tc = copy_out(pl, done, total);
    }
    if (te > 0.0 && expand_bytes > 0.0) pl->expand_thread_rate = expand_bytes / (te * threads_expand);
    if (tc > 0.0 && copy_bytes > 0.0) pl->copy_thread_rate = copy_bytes / (tc * threads_copy);
    pl->t.expand += te;
    pl->t.copy_out += tc;
    pl->t.expand_bytes += expand_bytes;
    pl->t.copy_out_bytes += copy_bytes;
    pl->t.host_wall += nzi_wtime() - t0;
}

static nz_status_t enqueue(pipeline_t *pl, int64_t q) {
    int64_t rows, a_nnz;
    panel_sizes(pl, q, &rows, &a_nnz);
    return nzi_hyspmm_enqueue(pl->ctx, pl->dev, slot_of(pl, q), rows, a_nnz, pl->panels[q].products);
}

/* Iterations p = -1 .. count + 1 of the schedule in the file comment. */
static nz_status_t run_pipeline(pipeline_t *pl) {
    const double t0 = nzi_wtime();
    for (int64_t p = -1; p <= pl->count + 1; p++) {
        const int64_t fetched = p - 1, done = p - 2, next = p + 1 < pl->count ? p + 1 : -1;
        if (fetched >= 0 && fetched < pl->count)
            NZI_TRY(nzi_hyspmm_fetch(pl->ctx, pl->dev, slot_of(pl, fetched),
                                     &pl->c_nnz[slot_of(pl, fetched)]));
        const bool copying = done >= 0 && done < pl->count;
        if (copying) {
            nzi_hyspmm_times_t times;
            NZI_TRY(nzi_hyspmm_wait(pl->ctx, pl->dev, slot_of(pl, done), &times));
            pl->t.h2d += times.h2d;
            pl->t.multiply += times.multiply;
            pl->t.d2h += times.d2h;
            NZI_TRY(builder_reserve(pl->ctx, pl->C, pl->c_nnz[slot_of(pl, done)]));
        }
        if (next >= 0 || copying) host_stages(pl, next, copying ? done : -1);
        if (next >= 0) NZI_TRY(enqueue(pl, next));
    }
    pl->t.loop_wall = nzi_wtime() - t0;
    return NZ_SUCCESS;
}

/* The host's own copy rate on the pipeline's pinned buffers (slot 0's duplicated B into slot
 * 1's, the size of the largest expansion up to HYSPMM_COPY_PROBE bytes): the reference for the
 * host stages' bandwidth, measured in the same call. */
#define HYSPMM_COPY_PROBE ((size_t)256 << 20)
static double host_copy_rate(nzi_hyspmm_device_t *dev, nz_value_type_t vt, int64_t max_products,
                             int slots, int threads) {
    size_t bytes = (size_t)max_products * nzi_value_size(vt);
    if (slots < 2 || bytes == 0) return 0.0;
    if (bytes > HYSPMM_COPY_PROBE) bytes = HYSPMM_COPY_PROBE;
    return nzi_hyspmm_copy_rate(nzi_hyspmm_slot_input(dev, 1)->dup_values,
                                nzi_hyspmm_slot_input(dev, 0)->dup_values, bytes, threads);
}

/* Bytes per second of the largest panel's expansion on all the call's threads, alone (after the
 * pipeline, into its slot's input again): what the expansion does at full width, for comparison
 * with host_copy_rate. */
static double expand_alone_rate(pipeline_t *pl) {
    int64_t q = -1, rows, a_nnz;
    for (int64_t i = 0; i < pl->count; i++)
        if (pl->panels[i].products > 0 && (q < 0 || pl->panels[i].products > pl->panels[q].products))
            q = i;
    if (q < 0) return 0.0;
    panel_sizes(pl, q, &rows, &a_nnz);
    const double seconds = expand(pl, q, pl->threads);
    const double bytes = nzi_hyspmm_input_bytes(pl->A->value_type, rows, a_nnz, pl->panels[q].products);
    return seconds > 0.0 ? bytes / seconds : 0.0;
}

/* What this call measured, for the next call's panel size: products per second of the host
 * expansion and of the GPU's stages (transfers included), and the per-panel cost: the pipeline's
 * time beyond its busiest side, less the fill and drain the model counts apart (an average
 * panel's expansion and GPU stages), per panel. */
static void remember_rates(pipeline_t *pl, int64_t total) {
    const double gpu = pl->t.h2d + pl->t.multiply + pl->t.d2h;
    const double busiest = pl->t.host_wall > gpu ? pl->t.host_wall : gpu;
    if (pl->t.expand <= 0.0 || gpu <= 0.0 || total <= 0 || pl->count <= 0) return;
    const double expand_rate = (double)total / pl->t.expand, gpu_rate = (double)total / gpu;
    const double fill_drain = (double)total / (double)pl->count * (1.0 / expand_rate + 1.0 / gpu_rate);
    double overhead = (pl->t.loop_wall - busiest - fill_drain) / (double)pl->count;
    if (overhead < HYSPMM_MIN_OVERHEAD) overhead = HYSPMM_MIN_OVERHEAD;
    if (overhead > HYSPMM_MAX_OVERHEAD) overhead = HYSPMM_MAX_OVERHEAD;
    nzi_hyspmm_device_set_rates(pl->dev, expand_rate, gpu_rate, overhead);
}

/* The split: panels aimed at the products the measured rates (or the fixed rule) ask for, under
 * the memory inequality; if the exact device bytes of the slots (CUB's workspace, which the
 * inequality leaves out, included) exceed the budget, split again against a proportionally
 * smaller budget (a few rounds at most). Then the ramp: the first and last panels in smaller
 * pieces (nzi_hyspmm_ramp). The maxima stay those of the split (the pieces are smaller). */
static nz_status_t plan_panels(nz_context_t *ctx, const nz_matrix_t *A, const int64_t *products,
                               int64_t total, size_t budget, int slots, nzi_spgemm_panel_t **panels,
                               int64_t *count, int64_t *max_rows, int64_t *max_a_nnz,
                               int64_t *max_products) {
    nzi_hyspmm_sizes_t sizes;
    double rates[3] = {0.0, 0.0, 0.0};
    double plan_budget = (double)budget;
    nzi_hyspmm_sizes(A->value_type, &sizes);
    int64_t pooled = 0;
    nzi_hyspmm_pooled(ctx, A->value_type, rates, &pooled);
    int64_t target = nzi_hyspmm_panel_target(total, rates[0], rates[1], rates[2],
                                             NZI_HYSPMM_MAX_PANEL_PRODUCTS);
    /* A parked pipeline within a factor two of the target is used as it is: a new one would
     * cost more (cudaMallocHost) than panels somewhat off the model's optimum. */
    if (pooled > 0 && target > pooled && target <= 2 * pooled) target = pooled;
    for (int round = 0;; round++) {
        size_t exact = 0;
        nzi_free(ctx, *panels);
        *panels = NULL;
        NZI_TRY(nzi_hyspmm_split(ctx, A, products, &sizes, plan_budget, NZI_HYSPMM_BUDGET_FRACTION,
                                 slots, target, panels, count));
        panel_maxima(A, *panels, *count, max_rows, max_a_nnz, max_products);
        NZI_TRY(nzi_hyspmm_device_bytes(ctx, A->value_type, slots, *max_rows, *max_a_nnz,
                                        *max_products, &exact));
        if (exact <= budget) /* the ramp's pieces are smaller: the slots still fit */
            return nzi_hyspmm_ramp(ctx, products, panels, count);
        if (round == 4)
            return nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                             "nz_spgemm (hyspmm): the pipeline needs %zu bytes of device memory, "
                             "more than the budget of %zu bytes",
                             exact, budget);
        plan_budget *= 0.95 * (double)budget / (double)exact;
    }
}

/* The most products of any row (all threads). */
static int64_t longest_row(const int64_t *products, int64_t rows) {
    int64_t max_row = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 16384) reduction(max : max_row)
#endif
    for (int64_t i = 0; i < rows; i++)
        if (products[i] > max_row) max_row = products[i];
    return max_row;
}

/* The call's stages into the profile: the symbolic part by step (t_symbolic: the ends of its
 * steps, from the call's start), then the pipeline's stages and the assembly. */
static void profile_stages(nz_spgemm_profile_t *profile, const double *t_symbolic,
                           const pipeline_times_t *t, double assemble) {
    nzi_spgemm_profile_stage(profile, "count", t_symbolic[1]);
    nzi_spgemm_profile_stage(profile, "split", t_symbolic[2] - t_symbolic[1]);
    nzi_spgemm_profile_stage(profile, "reserve-c", t_symbolic[3] - t_symbolic[2]);
    nzi_spgemm_profile_stage(profile, "slots", t_symbolic[4] - t_symbolic[3]);
    nzi_spgemm_profile_stage(profile, "expand", t->expand);
    nzi_spgemm_profile_stage(profile, "h2d", t->h2d);
    nzi_spgemm_profile_stage(profile, "multiply", t->multiply);
    nzi_spgemm_profile_stage(profile, "d2h", t->d2h);
    nzi_spgemm_profile_stage(profile, "copy-out", t->copy_out);
    nzi_spgemm_profile_stage(profile, "assemble", assemble);
}

/* With NZ_SPGEMM_PROFILE_STAGES: the host stages' bandwidths and the probes that give them a
 * reference (the expansion alone, the host's own copy rate); the probes' time goes to the
 * context's profile_probe_seconds. */
static void profile_rates(pipeline_t *pl, nz_spgemm_profile_t *profile, int64_t max_products) {
    if (profile == NULL || !(profile->flags & NZ_SPGEMM_PROFILE_STAGES)) return;
    const double probe = nzi_wtime();
    profile->expand_bytes_per_second = pl->t.expand > 0.0 ? pl->t.expand_bytes / pl->t.expand : 0.0;
    profile->copy_out_bytes_per_second =
        pl->t.copy_out > 0.0 ? pl->t.copy_out_bytes / pl->t.copy_out : 0.0;
    profile->expand_alone_bytes_per_second = expand_alone_rate(pl);
    profile->host_copy_bytes_per_second =
        host_copy_rate(pl->dev, pl->A->value_type, max_products, pl->slots, pl->threads);
    pl->ctx->profile_probe_seconds += nzi_wtime() - probe;
}

nz_status_t nzi_spgemm_hyspmm(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                              const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                              nz_spgemm_info_t *info, nz_spgemm_profile_t *profile) {
    nz_status_t status = NZ_SUCCESS;
    const nz_value_type_t vt = A->value_type;
    const int64_t rows = A->rows;
    const int slots = NZI_HYSPMM_SLOTS;
    int64_t *products = NULL, total = 0, count = 0, max_row = 0;
    int64_t max_rows = 0, max_a_nnz = 0, max_products = 0;
    nzi_spgemm_panel_t *panels = NULL;
    nzi_hyspmm_device_t *dev = NULL;
    c_builder_t builder;
    pipeline_t pl;
    size_t budget = 0, device_bytes = 0;
    double t, t_start = nzi_wtime(), assemble = 0.0;
    double t_symbolic[5] = {0.0, 0.0, 0.0, 0.0, 0.0}; /* ends of its steps, from t_start */

    memset(&builder, 0, sizeof builder);
    memset(&pl, 0, sizeof pl);

    /* Symbolic part: products per row (all threads), the budget, the panels, the slots (pinned
     * staging from the context's pool, device blocks for this call), C's row offsets. */
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&products, (size_t)rows, sizeof(int64_t),
                              "nz_spgemm (hyspmm): products per row"));
    NZI_CHECK(nzi_spgemm_count_products(ctx, A, B, 0, rows, products, &total));
    info->products = total;
    max_row = longest_row(products, rows);
    t_symbolic[1] = nzi_wtime() - t_start;
    if (max_row > HYSPMM_MAX_ROW_PRODUCTS) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                           "nz_spgemm (hyspmm): a row of A B has %lld products, more than the "
                           "%lld one panel can index",
                           (long long)max_row, (long long)HYSPMM_MAX_ROW_PRODUCTS);
        goto cleanup;
    }
    NZI_CHECK(nzi_device_memory_budget(ctx, opt->gpu_memory_limit, &budget));
    NZI_CHECK(plan_panels(ctx, A, products, total, budget, slots, &panels, &count, &max_rows,
                          &max_a_nnz, &max_products));
    info->panels = count;
    t_symbolic[2] = nzi_wtime() - t_start;
    builder.vs = nzi_value_size(vt);
    NZI_CHECK(nzi_csr_alloc(ctx, &builder.M, vt, rows, B->cols, 0));
    NZI_CHECK(builder_reserve_upper_bound(ctx, &builder, total));
    t_symbolic[3] = nzi_wtime() - t_start;
    NZI_CHECK(nzi_hyspmm_device_create(ctx, &dev, vt, slots, max_rows, max_a_nnz, max_products,
                                       &device_bytes));
    t_symbolic[4] = nzi_wtime() - t_start;
    info->symbolic_seconds = t_symbolic[4];

    pl.ctx = ctx;
    pl.dev = dev;
    pl.A = A;
    pl.B = B;
    pl.panels = panels;
    pl.products = products;
    pl.count = count;
    pl.slots = slots;
    pl.threads = opt->threads;
    pl.C = &builder;
    NZI_CHECK(run_pipeline(&pl));
    t = nzi_wtime();
    builder_finish(ctx, &builder);
    assemble = nzi_wtime() - t;
    remember_rates(&pl, total);

    /* the profile: the symbolic part by step (products per row, the panels, C's arrays, the
     * slots), the pipeline's stages, the host stages' rates */
    profile_stages(profile, t_symbolic, &pl.t, assemble);
    profile_rates(&pl, profile, max_products);
    info->numeric_seconds = pl.t.multiply;
    info->transfer_seconds = pl.t.h2d + pl.t.d2h;
    info->stage_seconds_sum = info->symbolic_seconds + pl.t.expand + pl.t.h2d + pl.t.multiply +
                              pl.t.d2h + pl.t.copy_out + assemble;
    *C = builder.M;
    builder.M = NULL;
cleanup:
    nzi_hyspmm_device_destroy(ctx, &dev);
    nzi_matrix_free(builder.M);
    nzi_free(ctx, panels);
    nzi_free(ctx, products);
    (void)device_bytes;
    return status;
}

