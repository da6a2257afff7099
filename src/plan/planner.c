/* planner.c: the SpMV planner: the ranked choice, format advice, AUTO and TUNE. */
#include "plan_internal.h"

#include <stdio.h>
#include <string.h>

#define T nzi_plan_thresholds
#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- reproducibility --------------------------------------------------------------------- */

int nzi_plan_reproducible(nz_backend_t backend, nz_format_t format, nz_alg_t alg,
                          nz_operation_t op) {
    const nzi_backend_t *table = nzi_backend_get(backend);
    if (table == NULL) return -1;
    return table->spmv_reproducible(format, alg, op);
}

/* ---- format advice ------------------------------------------------------------------------- */

/* The backend has an algorithm for the format (a reproducible one under NZ_PLAN_DETERMINISTIC). */
static bool format_usable(const nzi_plan_request_t *r, const nzi_backend_t *t, nz_format_t format) {
    for (int i = 1; nzi_alg_at(i) != NZ_ALG_AUTO; i++)
        if (t->spmv_supports(format, nzi_alg_at(i)) &&
            (!(r->flags & NZ_PLAN_DETERMINISTIC) ||
             t->spmv_reproducible(format, nzi_alg_at(i), r->op) == 1))
            return true;
    return false;
}

/* The fewest bytes read wins if it saves at least 1 - format_gain over CSR. The formats tried
 * are the backend policy's (the GPU list has ELL and HYB, whose column-major layout the CPU
 * kernels walk with a large stride). */
static nz_format_t advise_format(const nz_matrix_stats_t *s, const nzi_plan_request_t *r,
                                 const nzi_backend_t *t, const nz_format_t *list, int n,
                                 char *why, size_t size) {
    double csr = (double)s->bytes[NZ_FORMAT_CSR];
    if (s->nnz <= 0 || csr <= 0) {
        nzi_plan_say(why, size, "format csr (%s); ",
                     s->nnz <= 0 ? "no nonzeros" : "no size information");
        return NZ_FORMAT_CSR;
    }
    nz_format_t best = NZ_FORMAT_CSR;
    double best_bytes = csr;
    char sizes[160] = "";
    for (int i = 0; i < n; i++) {
        nz_format_t f = list[i];
        if (!format_usable(r, t, f)) continue;
        if (s->bytes[f] == 0) {
            nzi_plan_say(sizes, sizeof sizes, "%s%s refused", sizes[0] ? ", " : "",
                         nz_format_name(f));
            continue;
        }
        double b = (double)s->bytes[f];
        nzi_plan_say(sizes, sizeof sizes, "%s%s %.2f", sizes[0] ? ", " : "", nz_format_name(f),
                     b / csr);
        if (b <= T.format_gain * csr && b < best_bytes) {
            best = f;
            best_bytes = b;
        }
    }
    if (best == NZ_FORMAT_CSR && !format_usable(r, t, NZ_FORMAT_CSR)) {
        nzi_plan_say(why, size,
                     "format csr (nothing else saves traffic, but the backend lacks csr); ");
        return NZ_FORMAT_CSR;
    }
    if (best == NZ_FORMAT_CSR)
        nzi_plan_say(why, size, "format csr (no format reads <= %.2fx its bytes: %s); ",
                     T.format_gain, sizes[0] ? sizes : "none usable");
    else
        nzi_plan_say(why, size, "format %s (reads %.2fx the csr bytes: %s); ",
                     nz_format_name(best), best_bytes / csr, sizes);
    return best;
}

/* ---- the choice ------------------------------------------------------------------------------ */

/* What the planner does differently per backend: the rules, the formats format advice tries,
 * the timed runs per tuning candidate. Indexed by nz_backend_t; which (format, algorithm) pairs
 * exist and are reproducible is the backend table's answer, not the planner's. */
typedef nzi_plan_rule_t (*rule_fn)(const nz_matrix_stats_t *s, const nzi_plan_request_t *r,
                                   nz_format_t format, char *why, size_t size);
static const nz_format_t gpu_formats[] = {NZ_FORMAT_DIA, NZ_FORMAT_BSR, NZ_FORMAT_ELL,
                                          NZ_FORMAT_SELL, NZ_FORMAT_HYB};
static const nz_format_t cpu_formats[] = {NZ_FORMAT_DIA, NZ_FORMAT_BSR, NZ_FORMAT_SELL};
static const struct policy {
    rule_fn rule;
    const nz_format_t *advice_formats;
    int advice_count;
    const int *tune_runs; /* timed executions per candidate */
    const double *serial_work; /* fewer multiply-adds run on one thread (NULL: no such rule) */
} policies[] = {
    [NZ_BACKEND_CPU] = {nzi_plan_cpu_rule, cpu_formats, COUNT_OF(cpu_formats), &T.tune_runs_cpu,
                        &T.cpu_serial_nnz},
    [NZ_BACKEND_CUDA] = {nzi_plan_cuda_rule, gpu_formats, COUNT_OF(gpu_formats),
                         &T.tune_runs_gpu, NULL},
};

nz_alg_t nzi_plan_spmm_alg(const nzi_backend_t *table, const nz_matrix_t *A, int64_t k) {
    const double *serial_work = policies[table->id].serial_work;
    if (serial_work != NULL && (double)A->nnz * (double)k < *serial_work &&
        table->spmm_supports(A->format, NZ_ALG_SERIAL))
        return NZ_ALG_SERIAL;
    return table->spmm_default_alg(A->format);
}

/* Append alg to the choice if the backend has it, it is not there yet and, under
 * NZ_PLAN_DETERMINISTIC, the backend says it is reproducible. */
static void add_candidate(nzi_plan_choice_t *c, const nzi_plan_request_t *r,
                          const nzi_backend_t *t, nz_alg_t alg) {
    if (c->count >= NZI_PLAN_MAX_CANDIDATES || !t->spmv_supports(c->format, alg)) return;
    if ((r->flags & NZ_PLAN_DETERMINISTIC) && t->spmv_reproducible(c->format, alg, r->op) != 1)
        return;
    for (int i = 0; i < c->count; i++)
        if (c->algs[i] == alg) return;
    c->algs[c->count++] = alg;
}

nz_status_t nzi_plan_choose(const nz_matrix_stats_t *stats, const nzi_plan_request_t *request,
                            nzi_plan_choice_t *choice) {
    if (stats == NULL || request == NULL || choice == NULL) return NZ_ERR_NULL_ARGUMENT;
    const nzi_plan_request_t *r = request;
    if (nzi_backend_get(r->backend) == NULL) return NZ_ERR_INVALID_ARGUMENT;
    const nzi_backend_t *t = r->table != NULL ? r->table : nzi_backend_get(r->backend);
    const struct policy *policy = &policies[r->backend];
    if ((int)r->format < 0 || (int)r->format > NZ_FORMAT_COUNT) return NZ_ERR_INVALID_ARGUMENT;
    if (r->op != NZ_OP_N && r->op != NZ_OP_T) return NZ_ERR_INVALID_ARGUMENT;

    memset(choice, 0, sizeof *choice);
    choice->format = r->format;
    if (r->format == NZ_FORMAT_COUNT)
        choice->format = advise_format(stats, r, t, policy->advice_formats, policy->advice_count,
                                       choice->why, sizeof choice->why);
    nzi_plan_say(choice->why, sizeof choice->why, "%s on the %s: ",
                 nz_format_name(choice->format), t->name);
    size_t head = strlen(choice->why);
    nzi_plan_rule_t rule = policy->rule(stats, r, choice->format, choice->why, sizeof choice->why);
    choice->rule = rule.name;
    for (int i = 0; i < rule.count; i++) add_candidate(choice, r, t, rule.rank[i]);
    for (int i = 1; nzi_alg_at(i) != NZ_ALG_AUTO; i++) add_candidate(choice, r, t, nzi_alg_at(i));
    choice->timed = rule.timed > 0 && rule.timed < choice->count ? rule.timed : choice->count;

    /* Name the winner in front of the reason: "csr on the GPU: vector (uniform rows ...)". */
    char reason[NZI_PLAN_WHY_SIZE];
    snprintf(reason, sizeof reason, "%s", choice->why + head);
    choice->why[head] = '\0';
    if (choice->count == 0)
        nzi_plan_say(choice->why, sizeof choice->why, "no %salgorithm available (%s)",
                     (r->flags & NZ_PLAN_DETERMINISTIC) ? "bitwise reproducible " : "", reason);
    else
        nzi_plan_say(choice->why, sizeof choice->why, "%s (%s)", nz_alg_name(choice->algs[0]),
                     reason);
    return NZ_SUCCESS;
}

nz_status_t nz_spmv_plan_choose(nz_format_t *chosen_format, nz_alg_t *alg, char *why,
                                size_t why_size, const nz_matrix_stats_t *stats,
                                nz_backend_t backend, nz_format_t format, unsigned flags) {
    nzi_plan_choice_t choice;
    if (why != NULL && why_size > 0) why[0] = '\0';
    if (stats == NULL || chosen_format == NULL || alg == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (flags & ~NZI_SPMV_PLAN_FLAGS)
        return NZ_ERR_INVALID_ARGUMENT;
    nzi_plan_request_t request = {backend, format, NZ_OP_N, flags, NULL, 0, 0, 0};
    NZI_TRY(nzi_plan_choose(stats, &request, &choice));
    if (why != NULL && why_size > 0) snprintf(why, why_size, "%s", choice.why);
    if (choice.count == 0) return NZ_ERR_UNSUPPORTED;
    *chosen_format = choice.format;
    *alg = choice.algs[0];
    return NZ_SUCCESS;
}

/* ---- statistics for a plan ----------------------------------------------------------------- */

/* request NULL: hot_share wherever the rule's size thresholds hold; otherwise only where the
 * renumbering could also pay for that request (a column count and a sort, ~1-1.5 ms on an H100
 * at 10M nonzeros: 30 products of rail 4096 x 1M, which a default plan no longer spends). */
static nz_status_t row_stats(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                             const nzi_plan_request_t *request, nz_matrix_stats_t *stats) {
    nz_matrix_stats_t s;
    if (A->format == NZ_FORMAT_CSR) {
        const nzi_backend_t *b = nzi_backend_of(A);
        NZI_TRY(b->csr_row_stats(ctx, A, op, stats));
        /* the column counts only where the hot-columns rule could hold (its other thresholds) */
        if (b->csr_hot_share != NULL && op == NZ_OP_N && (double)stats->nnz >= NZI_HOT_NNZ_MIN &&
            (double)stats->cols >= T.hot_cols_min &&
            (request == NULL || (nzi_plan_may_pick_atomics(request) &&
                                 nzi_plan_reorder_pays(stats, request->flags,
                                                       request->value_size, request->l2_bytes))))
            return b->csr_hot_share(ctx, A, &stats->hot_share);
        return NZ_SUCCESS;
    }
    memset(&s, 0, sizeof s);
    s.rows = op == NZ_OP_N ? A->rows : A->cols;
    s.cols = op == NZ_OP_N ? A->cols : A->rows;
    s.nnz = A->nnz;
    if (s.rows > 0) s.row_mean = (double)A->nnz / (double)s.rows;
    *stats = s;
    return NZ_SUCCESS;
}

nz_status_t nzi_plan_row_stats(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                               nz_matrix_stats_t *stats) {
    return row_stats(ctx, A, op, NULL, stats);
}

/* ---- AUTO and TUNE ------------------------------------------------------------------------- */

static nz_status_t backend_setup(nz_spmv_plan_t *plan) {
    plan->state = NULL;
    plan->impl = NULL;
    plan->workspace_bytes = 0;
    plan->vector_width = 0;
    plan->vector_warps = 0;
    plan->reproducible = 0;
    return plan->ops->spmv_plan_setup(plan);
}

static void backend_release(nz_spmv_plan_t *plan) {
    if (plan->state == NULL) return;
    plan->ops->spmv_plan_release(plan);
    plan->state = NULL;
}

/* Set the plan up with alg; a plan that is not reproducible under NZ_PLAN_DETERMINISTIC is
 * released and refused (NZ_ERR_UNSUPPORTED, so the caller moves on to the next candidate).
 * With layout_stats (GPU CSR, op N, the caller chose no layout), the candidate runs with the
 * layout and hint flags nzi_plan_layout_flags gives it, on top of the caller's flags; a layout
 * asked for only if it pays (NZI_PLAN_IF_PAYS) that the backend refuses is dropped and the
 * candidate set up without it. */
static nz_status_t try_candidate(nz_spmv_plan_t *plan, nz_alg_t alg, unsigned caller_flags,
                                 const nz_matrix_stats_t *layout_stats) {
    plan->alg = alg;
    plan->flags = caller_flags;
    if (layout_stats != NULL)
        plan->flags |= nzi_plan_layout_flags(layout_stats, alg, caller_flags,
                                             nzi_value_size(plan->A->value_type),
                                             plan->ops->l2_bytes(plan->ctx));
    nz_status_t status = backend_setup(plan);
    if (status == NZ_ERR_UNSUPPORTED && (plan->flags & NZI_PLAN_IF_PAYS)) {
        backend_release(plan);
        plan->flags &= ~(NZI_PLAN_LAYOUTS | NZI_PLAN_IF_PAYS);
        status = backend_setup(plan);
    }
    plan->flags &= ~NZI_PLAN_IF_PAYS;
    if (status < 0) {
        backend_release(plan);
        return status;
    }
    if ((plan->flags & NZ_PLAN_DETERMINISTIC) && !plan->reproducible) {
        backend_release(plan);
        return nzi_error(plan->ctx, NZ_ERR_UNSUPPORTED,
                         "nz_spmv_plan_create: %s is not bitwise reproducible for this matrix",
                         nz_alg_name(alg));
    }
    return NZ_SUCCESS;
}

/* Out of host or device memory: a candidate that fails so gives way to the next one on the list,
 * whose plan may need less (csr/tiles builds with about 38 bytes a nonzero of device memory,
 * CSR-vector with none), instead of failing the whole plan. The first such failure is kept (its
 * status and message) for when no candidate fits. */
typedef struct oom_note {
    nz_status_t status; /* NZ_SUCCESS until a candidate runs out of memory */
    char message[NZI_MESSAGE_SIZE];
} oom_note_t;

/* true (and the first failure noted) when status is out of host or device memory */
static bool note_out_of_memory(oom_note_t *note, nz_status_t status, const nz_context_t *ctx) {
    if (status != NZ_ERR_OUT_OF_MEMORY && status != NZ_ERR_DEVICE_OUT_OF_MEMORY) return false;
    if (note->status == NZ_SUCCESS) {
        note->status = status;
        snprintf(note->message, sizeof note->message, "%s", ctx->message);
    }
    return true;
}

static nz_status_t no_candidate_fits(nz_context_t *ctx, const oom_note_t *note) {
    return nzi_error(ctx, note->status, "nz_spmv_plan_create: no candidate fits in memory (the "
                     "first: %s)", note->message);
}

/* Median seconds of a set-up candidate: CUDA events on the GPU, the wall clock on the CPU (one
 * warm-up run either way). */
static nz_status_t time_candidate(const nz_spmv_plan_t *plan, const void *x, void *y,
                                  double *seconds) {
    return plan->ops->spmv_time(plan, x, y, *policies[plan->backend].tune_runs, seconds);
}

/* Zeroed scratch of n values where the plan's backend keeps its vectors. */
static nz_status_t scratch_alloc(nz_spmv_plan_t *plan, void **ptr, int64_t n, const char *what) {
    size_t bytes;
    if (nzi_mul_overflow_size((size_t)(n > 0 ? n : 1), nzi_value_size(plan->A->value_type), &bytes))
        return nzi_error(plan->ctx, NZ_ERR_OVERFLOW, "plan tuning: %s of %lld entries", what,
                         (long long)n);
    NZI_TRY(plan->ops->mem_alloc(plan->ctx, ptr, bytes, what));
    return plan->ops->mem_set(plan->ctx, *ptr, 0, bytes);
}

static void scratch_free(nz_spmv_plan_t *plan, void *ptr) {
    if (ptr != NULL) plan->ops->mem_free(plan->ctx, ptr, (size_t)-1);
}

/*
 * NZ_PLAN_TUNE: walk the ranked list, set up each candidate on a copy of the plan, time it on
 * zero scratch vectors (y = A x, beta 0), keep the fastest plan's state and release the others,
 * until tune_candidates candidates have been timed. Candidates the backend refuses, or that run
 * out of memory, are skipped; when no candidate could be set up and one ran out of memory, the
 * first out-of-memory status is returned.
 * Cost: tune_candidates set-ups plus (runs + 1) products each. A backend's plan state must not
 * point into the plan object itself: the winner's state moves into `plan`.
 */
static nz_status_t tune(nz_spmv_plan_t *plan, const nzi_plan_choice_t *choice,
                        const nz_matrix_stats_t *layout_stats) {
    const unsigned caller_flags = plan->flags;
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    void *x = NULL, *y = NULL;
    nz_spmv_plan_t best, trial;
    bool have_best = false;
    double best_seconds = 0;
    int timed = 0;
    char last[NZI_MESSAGE_SIZE] = "";
    oom_note_t oom = {NZ_SUCCESS, ""};
    int64_t xlen = plan->op == NZ_OP_N ? A->cols : A->rows;
    int64_t ylen = plan->op == NZ_OP_N ? A->rows : A->cols;
    memset(&best, 0, sizeof best);
    NZI_CHECK(scratch_alloc(plan, &x, xlen, "tuning x"));
    NZI_CHECK(scratch_alloc(plan, &y, ylen, "tuning y"));
    for (int i = 0; i < choice->timed && timed < T.tune_candidates; i++) {
        trial = *plan;
        status = try_candidate(&trial, choice->algs[i], caller_flags, layout_stats);
        if (status == NZ_ERR_UNSUPPORTED) {
            snprintf(last, sizeof last, "%s", ctx->message);
            status = NZ_SUCCESS;
            continue;
        }
        if (note_out_of_memory(&oom, status, ctx)) {
            status = NZ_SUCCESS;
            continue;
        }
        if (status < 0) goto cleanup;
        double seconds = 0;
        status = time_candidate(&trial, x, y, &seconds);
        if (status < 0) {
            backend_release(&trial);
            goto cleanup;
        }
        timed++;
        if (!have_best || seconds < best_seconds) {
            if (have_best) backend_release(&best);
            best = trial;
            best_seconds = seconds;
            have_best = true;
        } else {
            backend_release(&trial);
        }
    }
    if (!have_best && oom.status != NZ_SUCCESS) {
        status = no_candidate_fits(ctx, &oom);
        goto cleanup;
    }
    if (!have_best) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                           "nz_spmv_plan_create: tuning found no usable algorithm for %s on the "
                           "%s (last refusal: %s)", nz_format_name(A->format),
                           plan->ops->name, last);
        goto cleanup;
    }
    plan->alg = best.alg;
    plan->flags = best.flags;
    plan->layout_parts = best.layout_parts;
    plan->impl = best.impl;
    plan->state = best.state;
    plan->reproducible = best.reproducible;
    plan->vector_width = best.vector_width;
    plan->vector_warps = best.vector_warps;
    plan->workspace_bytes = best.workspace_bytes;
    have_best = false;
    nzi_clear_error(ctx);
cleanup:
    if (have_best) backend_release(&best);
    scratch_free(plan, x);
    scratch_free(plan, y);
    return status;
}

nz_status_t nzi_plan_auto(nz_spmv_plan_t *plan) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const char *where = plan->ops->name;
    nz_matrix_stats_t stats;
    nzi_plan_choice_t choice;
    nzi_plan_request_t request = {plan->backend, A->format, plan->op, plan->flags, NULL,
                                  nzi_value_size(A->value_type),
                                  plan->ops->l2_bytes != NULL ? plan->ops->l2_bytes(ctx) : 0,
                                  plan->ops->resident_threads != NULL
                                      ? plan->ops->resident_threads(ctx)
                                      : 0};
    char last[NZI_MESSAGE_SIZE] = "";
    oom_note_t oom = {NZ_SUCCESS, ""};
    NZI_TRY(row_stats(ctx, A, plan->op, &request, &stats));
    nz_status_t status = nzi_plan_choose(&stats, &request, &choice);
    if (status < 0)
        return nzi_error(ctx, status, "nz_spmv_plan_create: the planner cannot handle this request");
    if (choice.count == 0)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_spmv_plan_create: no %salgorithm for %s matrices on the %s",
                         (plan->flags & NZ_PLAN_DETERMINISTIC) ? "bitwise reproducible " : "",
                         nz_format_name(A->format), where);
    /* GPU CSR, op N, no layout asked for: each candidate gets the layout and hints the rule
     * gives it (nzi_plan_layout_flags) */
    const nz_matrix_stats_t *layout_stats =
        plan->ops->l2_bytes != NULL && A->format == NZ_FORMAT_CSR &&
                nzi_plan_adds_layouts(plan->op, plan->flags)
            ? &stats
            : NULL;
    const unsigned caller_flags = plan->flags;
    if ((plan->flags & NZ_PLAN_TUNE) && choice.timed > 1 && A->rows > 0 && A->cols > 0 &&
        A->nnz > 0)
        return tune(plan, &choice, layout_stats);
    for (int i = 0; i < choice.count; i++) {
        status = try_candidate(plan, choice.algs[i], caller_flags, layout_stats);
        if (status == NZ_SUCCESS) {
            nzi_clear_error(ctx);
            return NZ_SUCCESS;
        }
        if (note_out_of_memory(&oom, status, ctx)) continue; /* the next may need less */
        if (status != NZ_ERR_UNSUPPORTED) return status;
        snprintf(last, sizeof last, "%s", ctx->message);
    }
    if (oom.status != NZ_SUCCESS) return no_candidate_fits(ctx, &oom);
    return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                     "nz_spmv_plan_create: the %s refused every candidate for %s (last: %s)",
                     where, nz_format_name(A->format), last);
}
