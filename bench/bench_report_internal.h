/* bench_report_internal.h: the report object and the helpers the table (bench_report.c) and the summary (bench_summary.c) share. */
#ifndef NZB_REPORT_INTERNAL_H
#define NZB_REPORT_INTERNAL_H

#include "bench.h"
#include "safe_output.h"

#include <stdio.h>

struct nzb_report {
    FILE *txt, *csv;
    nzu_output_t txt_out, csv_out; /* replaced only when complete (safe_output.h) */
    int markdown, gpu;
    int name_width;
    nzb_result_t *rows;
    int num_rows, capacity;
    char **notes;
    int num_notes, notes_capacity;
    char **footnotes;        /* "[k] matrix precision kernel: the whole note" */
    int num_footnotes, footnotes_capacity;
    int marked_cache, marked_less; /* a %copy above 100 was marked '^' / '+' */
    int failed;
};

static inline const char *precision_name(nz_value_type_t t) { return t == NZ_F32 ? "single" : "double"; }

/* Lines of prose are list items in Markdown so they do not run together. */
static inline const char *bullet(const nzb_report_t *rep) { return rep->markdown ? "- " : ""; }

/* A %copy above 100 outside the cache column's LLC-res / L2-res rows: '^' when even the bytes
 * the kernel stores and reads exceed the copy bandwidth (part of the matrix or x stays in the
 * cache between runs), '+' when only the minimal CSR count does (the format stores less, e.g.
 * DIA); 0 otherwise. */
static inline char over_copy_marker(const nzb_result_t *r) {
    if (r->status == NZB_REFUSED || !(r->median_seconds > 0) || r->resident ||
        !(r->bandwidth_gbs > 0) || !(r->pct_bandwidth > 100.0))
        return 0;
    double rate = r->bytes_stored > 0 ? r->gbs_stored : r->gbs_min;
    return rate > r->bandwidth_gbs ? '^' : '+';
}

/* The plan's setup in SpMVs of its own kernel (0 when the row was not timed). */
static inline double plan_spmvs(const nzb_result_t *r) {
    return r->status == NZB_OK && r->median_seconds > 0 ? r->plan_seconds / r->median_seconds : 0;
}

static inline void format_pct(char *buf, size_t size, const nzb_result_t *r) {
    char marker = over_copy_marker(r);
    snprintf(buf, size, marker ? "%.1f%c" : "%.1f", r->pct_bandwidth, marker);
}

/* bench_summary.c: the per-precision summary (GPU: ours vs cuSPARSE, the planner; CPU: the
 * bandwidth reached), the large real matrices' planner summary, and the footnotes under the
 * table. */
void nzb_summary_gpu(nzb_report_t *rep, nz_value_type_t vt);
void nzb_summary_cpu(nzb_report_t *rep, nz_value_type_t vt, const nzb_summary_info_t *info);
void nzb_summary_large(nzb_report_t *rep, nz_value_type_t vt);
void nzb_report_footnotes(nzb_report_t *rep, const nzb_summary_info_t *info);

#endif /* NZB_REPORT_INTERNAL_H */
