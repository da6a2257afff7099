/* bench_report.c: the benchmark report: the aligned table (or Markdown), the CSV, notes; the summary is bench_summary.c. */
#include "bench_report_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Table notes longer than this are shortened to their head ("refused", "WRONG RESULT"), a
 * reason code and a footnote number; the whole note is a footnote under the table (and in the
 * CSV, never shortened). */
#define TABLE_NOTE_MAX 40

/* Table columns; the GPU table swaps the stored-bytes rate for transfer time and speedup.
 * plan_spmv: the plan's setup (plan_ms) in SpMVs of the same kernel (plan time / median time),
 * what a caller who runs the product once pays on top of it. */
enum { COL_CPU = 1, COL_GPU = 2, COL_BOTH = 3 };
static const struct {
    const char *title;
    int width;      /* minimum width in the aligned table */
    int left;       /* left-aligned */
    int which;
} columns[] = {
    {"matrix", 0, 1, COL_BOTH},     {"rows", 9, 0, COL_BOTH},      {"nnz", 10, 0, COL_BOTH},
    {"prec", 6, 1, COL_BOTH},       {"kernel", 18, 1, COL_BOTH},   {"time_us", 10, 0, COL_BOTH},
    {"GFLOP/s", 8, 0, COL_BOTH},    {"GB/s", 7, 0, COL_BOTH},      {"GB/s_st", 7, 0, COL_CPU},
    {"%copy", 7, 0, COL_BOTH},      {"cache", 7, 1, COL_BOTH},     {"plan_ms", 8, 0, COL_BOTH},
    {"plan_spmv", 9, 0, COL_BOTH},  {"xfer_ms", 8, 0, COL_GPU},    {"vs_cusp", 7, 0, COL_GPU},
    {"max_err", 8, 0, COL_BOTH},    {"check", 5, 1, COL_BOTH},     {"note", 0, 1, COL_BOTH},
};
#define NUM_COLUMNS ((int)(sizeof columns / sizeof columns[0]))

static void emit(nzb_report_t *rep, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    vfprintf(stdout, fmt, ap);
    if (rep != NULL && rep->txt != NULL) vfprintf(rep->txt, fmt, ap2);
    va_end(ap2);
}

void nzb_printf(nzb_report_t *rep, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    emit(rep, fmt, ap);
    va_end(ap);
}

/* mkdir -p of the directory part of path. */
static void make_parent_dirs(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return;
        *p = '/';
    }
}

static FILE *open_output(nzu_output_t *target, const char *path) {
    make_parent_dirs(path);
    FILE *f = nzu_output_fopen(target, path);
    if (f == NULL) fprintf(stderr, "nz bench: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

nzb_report_t *nzb_report_open(const char *txt_path, const char *csv_path, int markdown, int gpu) {
    nzb_report_t *rep = calloc(1, sizeof *rep);
    if (rep == NULL) return NULL;
    rep->markdown = markdown;
    rep->gpu = gpu;
    rep->name_width = 6;
    if (txt_path != NULL && (rep->txt = open_output(&rep->txt_out, txt_path)) == NULL) goto fail;
    if (csv_path != NULL && (rep->csv = open_output(&rep->csv_out, csv_path)) == NULL) goto fail;
    if (rep->csv != NULL)
        fprintf(rep->csv,
                "backend,matrix,source,rows,cols,nnz,precision,kernel,status,runs,batch,"
                "median_us,min_us,gflops,bytes_min,bytes_stored,gbs_min,gbs_stored,copy_gbs,"
                "pct_copy,plan_ms,transfer_ms,speedup_vs_cusparse,max_rel_error,check,resident,"
                "plan_spmvs,note\n");
    return rep;
fail:
    if (rep->txt != NULL) nzu_output_fclose(&rep->txt_out, rep->txt);
    free(rep);
    return NULL;
}

/* Append a copy of line to a growing list; returns its index, or -1 out of memory. */
static int append_line(char ***list, int *count, int *capacity, const char *line) {
    if (*count == *capacity) {
        int grown_capacity = *capacity ? 2 * *capacity : 16;
        char **grown = realloc(*list, (size_t)grown_capacity * sizeof *grown);
        if (grown == NULL) return -1;
        *list = grown;
        *capacity = grown_capacity;
    }
    size_t n = strlen(line) + 1;
    char *copy = malloc(n);
    if (copy == NULL) return -1;
    memcpy(copy, line, n);
    (*list)[*count] = copy;
    return (*count)++;
}

static int column_shown(const nzb_report_t *rep, int k) {
    return (columns[k].which & (rep->gpu ? COL_GPU : COL_CPU)) != 0;
}

static void print_fields(nzb_report_t *rep, char fields[][NZB_NOTE_SIZE]) {
    char line[1024];
    size_t len = 0;
    for (int k = 0; k < NUM_COLUMNS && len < sizeof line; k++) {
        if (!column_shown(rep, k)) continue;
        int width = k == 0 ? rep->name_width : columns[k].width;
        int n;
        if (rep->markdown)
            n = snprintf(line + len, sizeof line - len, "| %s ", fields[k]);
        else if (k == NUM_COLUMNS - 1)
            n = snprintf(line + len, sizeof line - len, "%s", fields[k]);
        else
            n = snprintf(line + len, sizeof line - len, columns[k].left ? "%-*s " : "%*s ", width,
                         fields[k]);
        if (n < 0) break;
        len += (size_t)n;
    }
    if (len >= sizeof line) len = sizeof line - 1;
    while (len > 0 && line[len - 1] == ' ') len--;
    line[len] = '\0';
    nzb_printf(rep, "%s%s\n", line, rep->markdown ? " |" : "");
}

void nzb_report_header(nzb_report_t *rep, int name_width) {
    rep->name_width = name_width > 6 ? name_width : 6;
    char fields[NUM_COLUMNS][NZB_NOTE_SIZE];
    for (int k = 0; k < NUM_COLUMNS; k++) snprintf(fields[k], sizeof fields[k], "%s", columns[k].title);
    print_fields(rep, fields);
    if (rep->markdown) {
        char line[512];
        size_t len = 0;
        for (int k = 0; k < NUM_COLUMNS; k++) {
            if (!column_shown(rep, k)) continue;
            len += (size_t)snprintf(line + len, sizeof line - len, "|%s",
                                    columns[k].left ? "---" : "---:");
        }
        nzb_printf(rep, "%s|\n", line);
    }
}

static void csv_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(nzb_report_t *rep, const nzb_result_t *r) {
    FILE *f = rep->csv;
    if (f == NULL) return;
    const char *status = r->status == NZB_OK ? "ok" : r->status == NZB_REFUSED ? "refused" : "failed";
    const char *check = !r->checked ? "none" : r->status == NZB_FAILED ? "FAIL" : "pass";
    fprintf(f, "%s,", rep->gpu ? "gpu" : "cpu");
    csv_string(f, r->matrix);
    fprintf(f, ",%s,%lld,%lld,%lld,%s,%s,%s,%d,%d,%.4f,%.4f,%.4f,%zu,%zu,%.3f,%.3f,%.3f,%.2f,%.4f,"
               "%.4f,%.4f,%.3e,%s,%d,",
            r->generated ? "generated" : r->large ? "large" : "file", (long long)r->rows, (long long)r->cols,
            (long long)r->nnz, precision_name(r->value_type), r->kernel, status, r->runs, r->batch,
            r->median_seconds * 1e6, r->min_seconds * 1e6, r->gflops, r->bytes_min,
            r->bytes_stored, r->gbs_min, r->gbs_stored, r->bandwidth_gbs, r->pct_bandwidth,
            r->plan_seconds * 1e3, r->transfer_seconds * 1e3, r->speedup, r->max_error, check,
            r->resident);
    if (plan_spmvs(r) > 0) fprintf(f, "%.2f", plan_spmvs(r));
    fputc(',', f);
    csv_string(f, r->note);
    fputc('\n', f);
    fflush(f);
}

/* A short reason for the table: the library status behind a refusal or failure. */
static const char *reason_code(nz_status_t s) {
    return s == NZ_ERR_TOO_MUCH_PADDING ? "too much padding" : nz_status_string(s);
}

/* The table's note: the whole note when short; else its head (the text before the first ':'),
 * the reason code and a footnote number, with the whole note kept as the footnote. */
static void table_note(nzb_report_t *rep, char *buf, size_t size, const nzb_result_t *r) {
    size_t length = strlen(r->note);
    if (length <= TABLE_NOTE_MAX) {
        snprintf(buf, size, "%s", r->note);
        return;
    }
    char line[NZB_NOTE_SIZE + 2 * NZB_NAME_SIZE + 32];
    snprintf(line, sizeof line, "[%d] %s %s %s: %s", rep->num_footnotes + 1, r->matrix,
             precision_name(r->value_type), r->kernel, r->note);
    int index = append_line(&rep->footnotes, &rep->num_footnotes, &rep->footnotes_capacity, line);
    size_t head = strcspn(r->note, ":");
    if (head > 24) head = 24;
    char number[16] = "";
    if (index >= 0) snprintf(number, sizeof number, " [%d]", index + 1);
    if (r->reason != NZ_SUCCESS)
        snprintf(buf, size, "%.*s (%s)%s", (int)head, r->note, reason_code(r->reason), number);
    else
        snprintf(buf, size, "%.*s%s", (int)head, r->note, number);
}

void nzb_report_row(nzb_report_t *rep, const nzb_result_t *r) {
    if (rep->num_rows == rep->capacity) {
        int capacity = rep->capacity ? 2 * rep->capacity : 256;
        nzb_result_t *rows = realloc(rep->rows, (size_t)capacity * sizeof *rows);
        if (rows != NULL) {
            rep->rows = rows;
            rep->capacity = capacity;
        }
    }
    if (rep->num_rows < rep->capacity) rep->rows[rep->num_rows++] = *r;
    if (r->status == NZB_FAILED) rep->failed++;

    char f[NUM_COLUMNS][NZB_NOTE_SIZE];
    for (int k = 0; k < NUM_COLUMNS; k++) snprintf(f[k], sizeof f[k], "-");
    int timed = r->status != NZB_REFUSED && r->median_seconds > 0;
    snprintf(f[0], sizeof f[0], "%s", r->matrix);
    snprintf(f[1], sizeof f[1], "%lld", (long long)r->rows);
    snprintf(f[2], sizeof f[2], "%lld", (long long)r->nnz);
    snprintf(f[3], sizeof f[3], "%s", precision_name(r->value_type));
    snprintf(f[4], sizeof f[4], "%s", r->kernel);
    if (timed) {
        snprintf(f[5], sizeof f[5], "%.2f", r->median_seconds * 1e6);
        snprintf(f[6], sizeof f[6], "%.2f", r->gflops);
        snprintf(f[7], sizeof f[7], "%.1f", r->gbs_min);
        snprintf(f[8], sizeof f[8], "%.1f", r->gbs_stored);
        format_pct(f[9], sizeof f[9], r);
        rep->marked_cache |= over_copy_marker(r) == '^';
        rep->marked_less |= over_copy_marker(r) == '+';
    }
    if (r->resident) snprintf(f[10], sizeof f[10], "%s", rep->gpu ? "L2-res" : "LLC-res");
    if (r->status != NZB_REFUSED) snprintf(f[11], sizeof f[11], "%.3f", r->plan_seconds * 1e3);
    if (timed && plan_spmvs(r) > 0) snprintf(f[12], sizeof f[12], "%.1f", plan_spmvs(r));
    if (r->transfer_seconds > 0) snprintf(f[13], sizeof f[13], "%.2f", r->transfer_seconds * 1e3);
    if (timed && r->speedup > 0) snprintf(f[14], sizeof f[14], "%.2fx", r->speedup);
    if (r->checked) snprintf(f[15], sizeof f[15], "%.1e", r->max_error);
    snprintf(f[16], sizeof f[16], "%s",
             r->status == NZB_FAILED ? "FAIL" : r->checked ? "ok" : "-");
    table_note(rep, f[17], sizeof f[17], r);
    print_fields(rep, f);
    if (r->status == NZB_FAILED)
        fprintf(stderr, "nz bench: FAILED: %s %s %s: %s\n", r->matrix,
                precision_name(r->value_type), r->kernel, r->note);
    write_csv(rep, r);
    fflush(stdout);
}

void nzb_report_note(nzb_report_t *rep, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "nz bench: %s\n", buf);
    append_line(&rep->notes, &rep->num_notes, &rep->notes_capacity, buf);
}

int nzb_report_finish(nzb_report_t **report, const nzb_summary_info_t *info) {
    nzb_report_t *rep = *report;
    if (rep == NULL) return 1;
    nzb_report_footnotes(rep, info);
    if (rep->num_notes > 0) {
        nzb_printf(rep, "\nNotes:\n");
        for (int i = 0; i < rep->num_notes; i++) nzb_printf(rep, "- %s\n", rep->notes[i]);
    }
    nzb_printf(rep, "\n%sSummary (%s, %s): %s\n\n", rep->markdown ? "### " : "", info->backend,
               info->date, info->device);
    if (rep->gpu)
        nzb_printf(rep, "%sCopy bandwidth (device-to-device cudaMemcpy, read + write): %.1f GB/s\n",
                   bullet(rep), info->copy_gbs);
    else
        nzb_printf(rep, "%sSTREAM-like bandwidth (%d threads, read + write): copy %.1f GB/s, triad "
                        "%.1f GB/s\n",
                   bullet(rep), info->threads, info->copy_gbs, info->triad_gbs);
    int precisions[2] = {NZ_F32, NZ_F64};
    for (int p = 0; p < 2; p++) {
        if (rep->gpu)
            nzb_summary_gpu(rep, (nz_value_type_t)precisions[p]);
        else
            nzb_summary_cpu(rep, (nz_value_type_t)precisions[p], info);
    }
    for (int p = 0; p < 2; p++) nzb_summary_large(rep, (nz_value_type_t)precisions[p]);
    int failed = rep->failed;
    if (failed > 0)
        nzb_printf(rep, "\n%d kernel run(s) FAILED (wrong result or error): see the rows marked "
                        "FAIL.\n",
                   failed);
    else {
        int ok = 0, refused = 0;
        for (int i = 0; i < rep->num_rows; i++) {
            ok += rep->rows[i].status == NZB_OK;
            refused += rep->rows[i].status == NZB_REFUSED;
        }
        nzb_printf(rep, "\nAll %d timed kernels verified against the double-precision reference "
                        "(%d refused).\n",
                   ok, refused);
    }
    int err;
    if (rep->txt != NULL && (err = nzu_output_fclose(&rep->txt_out, rep->txt)) != 0) {
        fprintf(stderr, "nz bench: cannot write %s: %s\n", rep->txt_out.final_path, strerror(err));
        failed++;
    }
    if (rep->csv != NULL && (err = nzu_output_fclose(&rep->csv_out, rep->csv)) != 0) {
        fprintf(stderr, "nz bench: cannot write %s: %s\n", rep->csv_out.final_path, strerror(err));
        failed++;
    }
    for (int i = 0; i < rep->num_notes; i++) free(rep->notes[i]);
    free(rep->notes);
    for (int i = 0; i < rep->num_footnotes; i++) free(rep->footnotes[i]);
    free(rep->footnotes);
    free(rep->rows);
    free(rep);
    *report = NULL;
    return failed;
}
