/* bench_summary.c: the benchmark report's summary per precision and the footnotes under its table. */
#include "bench_report_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Which of our rows a summary looks at: the CSR algorithms (with their plan-flag forms, e.g.
 * csr/vector:panels, which a caller gets with a flag and the planner picks), any format, or the
 * planner's choice (csr/auto). Tuning sweeps (kernel names with 'VAR=value') never count. */
enum { ROWS_CSR = 0, ROWS_ANY = 1, ROWS_AUTO = 2 };

static int row_kind_matches(const nzb_result_t *r, int kind) {
    if (r->is_cusparse) return 1;
    if (strchr(r->kernel, '=') != NULL) return 0;
    /* the planner's rows: csr/auto (the default plan) and csr/auto:reuse, neither a kernel */
    int is_auto = strcmp(r->kernel, "csr/auto") == 0;
    if (kind == ROWS_AUTO) return is_auto;
    if (strncmp(r->kernel, "csr/auto", 8) == 0) return 0;
    return kind == ROWS_ANY || strncmp(r->kernel, "csr/", 4) == 0;
}

/* Best (fastest verified) row of a matrix in one precision, among cuSPARSE rows or ours. */
static const nzb_result_t *best_row_of(const nzb_report_t *rep, const char *matrix,
                                       nz_value_type_t vt, int cusparse, int kind) {
    const nzb_result_t *best = NULL;
    for (int i = 0; i < rep->num_rows; i++) {
        const nzb_result_t *r = &rep->rows[i];
        if (r->status != NZB_OK || r->is_cusparse != cusparse || r->value_type != vt ||
            strcmp(r->matrix, matrix) != 0 || !(r->median_seconds > 0) ||
            !row_kind_matches(r, kind))
            continue;
        if (best == NULL || r->median_seconds < best->median_seconds) best = r;
    }
    return best;
}

static const nzb_result_t *best_row(const nzb_report_t *rep, const char *matrix,
                                    nz_value_type_t vt, int cusparse) {
    return best_row_of(rep, matrix, vt, cusparse, ROWS_CSR);
}

/* True if row i is the first row of its (matrix, precision). */
static int first_of_case(const nzb_report_t *rep, int i) {
    for (int j = 0; j < i; j++)
        if (rep->rows[j].value_type == rep->rows[i].value_type &&
            strcmp(rep->rows[j].matrix, rep->rows[i].matrix) == 0)
            return 0;
    return 1;
}

/* The planner's format and algorithm (nz_spmv_plan_choose with the format left open: the case's
 * `advice`) against the fastest kernel of any format, from the rows timed in this run. */
static void summary_advice(nzb_report_t *rep, nz_value_type_t vt) {
    int planned = 0, within = 0, missing = 0;
    double worst = 0;
    for (int i = 0; i < rep->num_rows; i++) {
        const nzb_result_t *r = &rep->rows[i];
        if (r->value_type != vt || !first_of_case(rep, i) || !r->generated || !r->advice[0])
            continue;
        const nzb_result_t *any = best_row_of(rep, r->matrix, vt, 0, ROWS_ANY), *advised = NULL;
        /* CSR advice: the planner's own plan on the CSR matrix is the csr/auto row where one was
         * timed (the advice names the algorithm only; the plan adds its layout and hint flags) */
        for (int pass = 0; pass < 2 && advised == NULL; pass++) {
            const char *kernel = pass == 0 && strncmp(r->advice, "csr/", 4) == 0 ? "csr/auto"
                                                                                 : r->advice;
            for (int j = 0; j < rep->num_rows; j++) {
                const nzb_result_t *q = &rep->rows[j];
                if (q->status == NZB_OK && !q->is_cusparse && q->value_type == vt &&
                    strcmp(q->matrix, r->matrix) == 0 && strcmp(q->kernel, kernel) == 0)
                    advised = q;
            }
        }
        if (any == NULL) continue;
        if (advised == NULL) {
            missing++;
            nzb_printf(rep, "%s%s: %s: the planner advises %s, not timed in this run\n",
                       bullet(rep), precision_name(vt), r->matrix, r->advice);
            continue;
        }
        double ratio = advised->median_seconds / any->median_seconds;
        planned++;
        within += ratio <= 1.10;
        if (ratio > worst) worst = ratio;
        nzb_printf(rep, "%s%s: %s: planner's format and algorithm %s: %.2fx the time of the "
                        "fastest kernel of any format (%s)\n",
                   bullet(rep), precision_name(vt), r->matrix, r->advice, ratio, any->kernel);
    }
    if (planned > 0)
        nzb_printf(rep, "%s%s: planner's format and algorithm within 10%% of the fastest kernel of "
                        "any format on %d of %d generated matrices, worst %.2fx%s\n",
                   bullet(rep), precision_name(vt), within, planned, worst,
                   missing ? " (advice not timed on some: see above)" : "");
}

void nzb_summary_gpu(nzb_report_t *rep, nz_value_type_t vt) {
    const char *md = rep->markdown ? "| " : "";
    const char *sep = rep->markdown ? " | " : "  ";
    const char *end = rep->markdown ? " |" : "";
    double log_sum = 0;
    int count = 0, real_count = 0, real_wins = 0, printed_header = 0;
    double real_log_sum = 0;
    for (int i = 0; i < rep->num_rows; i++) {
        const nzb_result_t *r = &rep->rows[i];
        if (r->value_type != vt || !first_of_case(rep, i)) continue;
        const nzb_result_t *ours = best_row(rep, r->matrix, vt, 0);
        const nzb_result_t *theirs = best_row(rep, r->matrix, vt, 1);
        if (ours == NULL || theirs == NULL) continue;
        double speedup = theirs->median_seconds / ours->median_seconds;
        if (r->large) continue; /* their own summary: nzb_summary_large */
        if (!r->generated) {
            real_count++;
            real_wins += speedup >= 1.0;
            real_log_sum += log(speedup);
            continue;
        }
        if (!printed_header) {
            nzb_printf(rep, "\n%s precision, generated matrices: CSR against CSR (Nonzero's best "
                            "CSR algorithm, cuSPARSE's better one), and Nonzero's fastest kernel "
                            "of any format\n\n", precision_name(vt));
            nzb_printf(rep, "%s%-*s%s%-18s%s%8s%s%7s%s%-17s%s%8s%s%8s%s%-18s%s%-18s%s%8s%s%s%s\n",
                       md, rep->name_width, "matrix", sep, "best Nonzero CSR", sep, "GB/s", sep,
                       "%copy", sep, "best cuSPARSE CSR", sep, "GB/s", sep, "speedup", sep,
                       "CSR winner", sep, "fastest (any fmt)", sep, "GB/s", sep, "cache", end);
            if (rep->markdown)
                nzb_printf(rep, "|---|---|---:|---:|---|---:|---:|---|---|---:|---|\n");
            printed_header = 1;
        }
        const nzb_result_t *any = best_row_of(rep, r->matrix, vt, 0, ROWS_ANY);
        if (any == NULL) any = ours;
        char pct[32];
        format_pct(pct, sizeof pct, ours);
        nzb_printf(rep, "%s%-*s%s%-18s%s%8.1f%s%7s%s%-17s%s%8.1f%s%7.2fx%s%-18s%s%-18s%s%8.1f"
                        "%s%s%s\n",
                   md, rep->name_width, r->matrix, sep, ours->kernel, sep, ours->gbs_min, sep, pct,
                   sep, theirs->kernel, sep, theirs->gbs_min, sep, speedup, sep,
                   speedup >= 1.0 ? ours->kernel : theirs->kernel, sep, any->kernel, sep,
                   any->gbs_min, sep, r->resident ? "L2-res" : "-", end);
        if (!r->resident) {
            log_sum += log(speedup);
            count++;
        }
    }
    nzb_printf(rep, "\n");
    if (count > 0)
        nzb_printf(rep, "%s%s: geometric-mean speedup of the best Nonzero CSR algorithm over the "
                        "better cuSPARSE algorithm, %d generated matrices larger than L2: %.2fx\n",
                   bullet(rep), precision_name(vt), count, exp(log_sum / count));
    if (real_count > 0)
        nzb_printf(rep, "%s%s: real matrices (L2-resident, launch-bound): Nonzero faster on %d of "
                        "%d, geometric-mean speedup %.2fx\n",
                   bullet(rep), precision_name(vt), real_wins, real_count,
                   exp(real_log_sum / real_count));
    /* The planner (csr/auto) against the best CSR algorithm found by exhaustive timing, and the
     * best of every device format against the best CSR algorithm. */
    int planned = 0, within = 0;
    double worst = 0;
    for (int i = 0; i < rep->num_rows; i++) {
        const nzb_result_t *r = &rep->rows[i];
        if (r->value_type != vt || !first_of_case(rep, i) || !r->generated) continue;
        const nzb_result_t *best = best_row_of(rep, r->matrix, vt, 0, ROWS_CSR);
        const nzb_result_t *planner = best_row_of(rep, r->matrix, vt, 0, ROWS_AUTO);
        const nzb_result_t *any = best_row_of(rep, r->matrix, vt, 0, ROWS_ANY);
        if (best != NULL && planner != NULL) {
            double ratio = planner->median_seconds / best->median_seconds;
            planned++;
            within += ratio <= 1.10;
            if (ratio > worst) worst = ratio;
            nzb_printf(rep, "%s%s: %s: planner (%s) %.2fx the time of the best CSR algorithm "
                            "(%s)\n", bullet(rep), precision_name(vt), r->matrix, planner->note,
                       ratio, best->kernel);
        }
        if (best != NULL && any != NULL && any != best)
            nzb_printf(rep, "%s%s: %s: best of all device formats is %s (%.1f GB/s vs %.1f for "
                            "%s)\n", bullet(rep), precision_name(vt), r->matrix, any->kernel,
                       any->gbs_min, best->gbs_min, best->kernel);
    }
    if (planned > 0)
        nzb_printf(rep, "%s%s: planner within 10%% of the best CSR algorithm on %d of %d generated "
                        "matrices, worst %.2fx\n", bullet(rep), precision_name(vt), within,
                   planned, worst);
    summary_advice(rep, vt);
    for (int i = 0; i < rep->num_rows; i++) {
        const nzb_result_t *r = &rep->rows[i];
        if (r->value_type != vt || !first_of_case(rep, i) || !r->generated) continue;
        if (strncmp(r->matrix, "laplace3d", 9) != 0 && strncmp(r->matrix, "fe3d", 4) != 0) continue;
        const nzb_result_t *ours = best_row(rep, r->matrix, vt, 0);
        if (ours != NULL)
            nzb_printf(rep, "%s%s: %s: %s reaches %.1f GB/s = %.1f%% of the copy bandwidth%s\n",
                       bullet(rep), precision_name(vt), r->matrix, ours->kernel, ours->gbs_min,
                       ours->pct_bandwidth, r->resident ? " (L2-resident: not meaningful)" : "");
    }
}

/* Per generated matrix: the fastest kernel of any format and the best CSR kernel (they differ
 * when DIA, SELL, ... beat CSR), each with its time and rates. */
void nzb_summary_cpu(nzb_report_t *rep, nz_value_type_t vt, const nzb_summary_info_t *info) {
    const char *md = rep->markdown ? "| " : "";
    const char *sep = rep->markdown ? " | " : "  ";
    const char *end = rep->markdown ? " |" : "";
    int printed_header = 0, count = 0;
    double log_any = 0, log_csr = 0;
    for (int i = 0; i < rep->num_rows; i++) {
        const nzb_result_t *r = &rep->rows[i];
        if (r->value_type != vt || !first_of_case(rep, i) || !r->generated) continue;
        const nzb_result_t *any = best_row_of(rep, r->matrix, vt, 0, ROWS_ANY);
        const nzb_result_t *csr = best_row(rep, r->matrix, vt, 0);
        if (any == NULL || csr == NULL) continue;
        if (!printed_header) {
            nzb_printf(rep, "\n%s precision, generated matrices: the fastest kernel of any format "
                            "and the best CSR kernel\n\n", precision_name(vt));
            nzb_printf(rep, "%s%-*s%s%-18s%s%9s%s%8s%s%8s%s%7s%s%7s%s%-16s%s%9s%s%8s%s%7s%s%s%s\n",
                       md, rep->name_width, "matrix", sep, "fastest (any fmt)", sep, "time_us",
                       sep, "GFLOP/s", sep, "GB/s", sep, "%copy", sep, "%triad", sep, "best CSR",
                       sep, "time_us", sep, "GB/s", sep, "%copy", sep, "cache", end);
            if (rep->markdown)
                nzb_printf(rep, "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n");
            printed_header = 1;
        }
        char any_pct[32], csr_pct[32];
        format_pct(any_pct, sizeof any_pct, any);
        format_pct(csr_pct, sizeof csr_pct, csr);
        nzb_printf(rep, "%s%-*s%s%-18s%s%9.1f%s%8.2f%s%8.1f%s%7s%s%7.1f%s%-16s%s%9.1f%s%8.1f%s%7s%s"
                        "%s%s\n",
                   md, rep->name_width, r->matrix, sep, any->kernel, sep, any->median_seconds * 1e6,
                   sep, any->gflops, sep, any->gbs_min, sep, any_pct, sep,
                   info->triad_gbs > 0 ? 100.0 * any->gbs_min / info->triad_gbs : 0.0, sep,
                   csr->kernel, sep, csr->median_seconds * 1e6, sep, csr->gbs_min, sep, csr_pct,
                   sep, r->resident ? "LLC-res" : "-", end);
        if (!r->resident) {
            log_any += log(any->pct_bandwidth > 0 ? any->pct_bandwidth : 1e-9);
            log_csr += log(csr->pct_bandwidth > 0 ? csr->pct_bandwidth : 1e-9);
            count++;
        }
    }
    if (count > 0)
        nzb_printf(rep, "\n%s%s: on the %d generated matrices larger than the last-level cache, "
                        "the fastest kernel of any format reaches on average (geometric mean) "
                        "%.1f%% of the STREAM copy bandwidth, the best CSR kernel %.1f%% (minimal "
                        "CSR bytes: formats that store less, such as DIA, can exceed 100%%, "
                        "marked +; ^ marks a cache effect, see under the table)\n",
                   bullet(rep), precision_name(vt), count, exp(log_any / count),
                   exp(log_csr / count));
    summary_advice(rep, vt);
}

/* The large real matrices' summary: per matrix, the planner's default plan (the csr/auto row:
 * what it chose, its time, its setup in ms and in SpMVs of its own kernel) against the fastest
 * kernel of any format and, on the GPU, cuSPARSE's better CSR algorithm; then the counts against
 * issue 37's targets (within 10% of the fastest, setup at most 20 SpMVs, 1.10x cuSPARSE). */
void nzb_summary_large(nzb_report_t *rep, nz_value_type_t vt) {
    const char *md = rep->markdown ? "| " : "";
    const char *sep = rep->markdown ? " | " : "  ";
    const char *end = rep->markdown ? " |" : "";
    int count = 0, within = 0, cheap = 0, ahead = 0;
    for (int i = 0; i < rep->num_rows; i++) {
        const nzb_result_t *r = &rep->rows[i];
        if (r->value_type != vt || !r->large || !first_of_case(rep, i)) continue;
        const nzb_result_t *planner = best_row_of(rep, r->matrix, vt, 0, ROWS_AUTO);
        const nzb_result_t *any = best_row_of(rep, r->matrix, vt, 0, ROWS_ANY);
        const nzb_result_t *theirs =
            rep->gpu ? best_row_of(rep, r->matrix, vt, 1, ROWS_CSR) : NULL;
        if (count == 0) {
            nzb_printf(rep, "\n%s precision, large real matrices: the planner's default plan "
                            "(csr/auto) with its setup, against the fastest kernel of any format%s"
                            "\n\n", precision_name(vt),
                       rep->gpu ? " and cuSPARSE's better CSR algorithm" : "");
            nzb_printf(rep, "%s%-*s%s%9s%s%-20s%s%9s%s%9s%s%9s%s%-18s%s%9s%s%8s", md,
                       rep->name_width, "matrix", sep, "nnz", sep, "planner chose", sep,
                       "time_us", sep, "plan_ms", sep, "plan_spmv", sep, "fastest (any fmt)", sep,
                       "time_us", sep, "vs_fast");
            if (rep->gpu)
                nzb_printf(rep, "%s%-17s%s%9s%s%8s%s%8s", sep, "best cuSPARSE CSR", sep,
                           "time_us", sep, "planner", sep, "fastest");
            nzb_printf(rep, "%s\n", end);
            if (rep->markdown)
                nzb_printf(rep, "|---|---:|---|---:|---:|---:|---|---:|---:|%s\n",
                           rep->gpu ? "---|---:|---:|---:|" : "");
        }
        count++;
        const char *chose = planner == NULL ? "not timed"
                            : strncmp(planner->note, "planner chose ", 14) == 0 ? planner->note + 14
                                                                                 : planner->note;
        double planner_us = planner != NULL ? planner->median_seconds * 1e6 : 0;
        double vs_fastest = planner != NULL && any != NULL ? planner->median_seconds /
                                                                 any->median_seconds : 0;
        within += vs_fastest > 0 && vs_fastest <= 1.10;
        cheap += planner != NULL && plan_spmvs(planner) <= 20.0;
        nzb_printf(rep, "%s%-*s%s%9lld%s%-20s%s%9.2f%s%9.3f%s%9.1f%s%-18s%s%9.2f%s%7.2fx", md,
                   rep->name_width, r->matrix, sep, (long long)r->nnz, sep, chose, sep, planner_us,
                   sep, planner != NULL ? planner->plan_seconds * 1e3 : 0.0, sep,
                   planner != NULL ? plan_spmvs(planner) : 0.0, sep,
                   any != NULL ? any->kernel : "-", sep,
                   any != NULL ? any->median_seconds * 1e6 : 0.0, sep, vs_fastest);
        if (rep->gpu) {
            double t = theirs != NULL ? theirs->median_seconds : 0;
            double vs_planner = planner != NULL && t > 0 ? t / planner->median_seconds : 0;
            ahead += vs_planner >= 1.10;
            nzb_printf(rep, "%s%-17s%s%9.2f%s%7.2fx%s%7.2fx", sep,
                       theirs != NULL ? theirs->kernel : "-", sep, t * 1e6, sep, vs_planner, sep,
                       any != NULL && t > 0 ? t / any->median_seconds : 0.0);
        }
        nzb_printf(rep, "%s\n", end);
    }
    if (count == 0) return;
    nzb_printf(rep, "\n%s%s: plan_ms, plan_spmv = the default plan's setup, in ms and in SpMVs "
                    "of its own kernel; vs_fast = its time / the fastest kernel's%s\n",
               bullet(rep), precision_name(vt),
               rep->gpu ? "; planner, fastest = cuSPARSE's time / theirs" : "");
    nzb_printf(rep, "%s%s: on %d large real matrices the default plan is within 10%% of the "
                    "fastest kernel on %d, sets up in at most 20 SpMVs on %d",
               bullet(rep), precision_name(vt), count, within, cheap);
    if (rep->gpu) nzb_printf(rep, ", is at least 1.10x cuSPARSE's best on %d", ahead);
    nzb_printf(rep, "\n");
}

/* Under the table: what the %copy markers mean (with, for '^', each marked case's footprint
 * against the cache) and the whole text of every shortened note. */
void nzb_report_footnotes(nzb_report_t *rep, const nzb_summary_info_t *info) {
    const char *cache = rep->gpu ? "L2" : "last-level cache";
    if (rep->marked_cache || rep->marked_less || rep->num_footnotes > 0) nzb_printf(rep, "\n");
    if (rep->marked_cache) {
        nzb_printf(rep, "%s^ %%copy above 100 even on the bytes the kernel stores and reads: "
                        "part of the matrix or x stays in the %s between runs, so this is not "
                        "a memory-bandwidth rate. Footprints:\n",
                   bullet(rep), cache);
        for (int i = 0; i < rep->num_rows; i++) {
            const nzb_result_t *r = &rep->rows[i];
            if (over_copy_marker(r) != '^') continue;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = over_copy_marker(&rep->rows[j]) == '^' &&
                       rep->rows[j].value_type == r->value_type &&
                       strcmp(rep->rows[j].matrix, r->matrix) == 0;
            if (seen) continue;
            double mib = 1024.0 * 1024.0;
            double x_bytes = (double)r->cols * (r->value_type == NZ_F32 ? 4 : 8);
            char cache_size[64] = "size unknown";
            if (info->cache_bytes > 0)
                snprintf(cache_size, sizeof cache_size, "%.1f MiB",
                         (double)info->cache_bytes / mib);
            nzb_printf(rep, "%s%s %s: minimal footprint %.1f MiB, x %.1f MiB, %s %s\n",
                       rep->markdown ? "  - " : "  ", r->matrix, precision_name(r->value_type),
                       (double)r->bytes_min / mib, x_bytes / mib, cache, cache_size);
        }
    }
    if (rep->marked_less)
        nzb_printf(rep, "%s+ %%copy above 100 on the minimal CSR bytes only: the format stores "
                        "fewer bytes than CSR%s; not a cache effect\n",
                   bullet(rep), rep->gpu ? "" : " (GB/s_st counts them)");
    for (int i = 0; i < rep->num_footnotes; i++)
        nzb_printf(rep, "%s%s\n", bullet(rep), rep->footnotes[i]);
}

