/* bench_report.c: the benchmark's output: aligned text or Markdown table, CSV, notes and summary. */
#include "bench.h"
#include "safe_output.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

struct nzb_report {
    FILE *txt, *csv;
    nzi_output_t txt_out, csv_out; /* replaced only when complete (safe_output.h) */
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

/* Table notes longer than this are shortened to their head ("refused", "WRONG RESULT"), a
 * reason code and a footnote number; the whole note is a footnote under the table (and in the
 * CSV, never shortened). */
#define TABLE_NOTE_MAX 40

/* Table columns; the GPU table swaps the stored-bytes rate for transfer time and speedup. */
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
    {"xfer_ms", 8, 0, COL_GPU},     {"vs_cusp", 7, 0, COL_GPU},    {"max_err", 8, 0, COL_BOTH},
    {"check", 5, 1, COL_BOTH},      {"note", 0, 1, COL_BOTH},
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

static FILE *open_output(nzi_output_t *target, const char *path) {
    make_parent_dirs(path);
    FILE *f = nzi_output_fopen(target, path);
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
                "note\n");
    return rep;
fail:
    if (rep->txt != NULL) nzi_output_fclose(&rep->txt_out, rep->txt);
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

static const char *precision_name(nz_value_type_t t) { return t == NZ_F32 ? "single" : "double"; }

/* Lines of prose are list items in Markdown so they do not run together. */
static const char *bullet(const nzb_report_t *rep) { return rep->markdown ? "- " : ""; }

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
            r->generated ? "generated" : "file", (long long)r->rows, (long long)r->cols,
            (long long)r->nnz, precision_name(r->value_type), r->kernel, status, r->runs, r->batch,
            r->median_seconds * 1e6, r->min_seconds * 1e6, r->gflops, r->bytes_min,
            r->bytes_stored, r->gbs_min, r->gbs_stored, r->bandwidth_gbs, r->pct_bandwidth,
            r->plan_seconds * 1e3, r->transfer_seconds * 1e3, r->speedup, r->max_error, check,
            r->resident);
    csv_string(f, r->note);
    fputc('\n', f);
    fflush(f);
}

/* A %copy above 100 outside the cache column's LLC-res / L2-res rows: '^' when even the bytes
 * the kernel stores and reads exceed the copy bandwidth (part of the matrix or x stays in the
 * cache between runs), '+' when only the minimal CSR count does (the format stores less, e.g.
 * DIA); 0 otherwise. */
static char over_copy_marker(const nzb_result_t *r) {
    if (r->status == NZB_REFUSED || !(r->median_seconds > 0) || r->resident ||
        !(r->bandwidth_gbs > 0) || !(r->pct_bandwidth > 100.0))
        return 0;
    double rate = r->bytes_stored > 0 ? r->gbs_stored : r->gbs_min;
    return rate > r->bandwidth_gbs ? '^' : '+';
}

static void format_pct(char *buf, size_t size, const nzb_result_t *r) {
    char marker = over_copy_marker(r);
    snprintf(buf, size, marker ? "%.1f%c" : "%.1f", r->pct_bandwidth, marker);
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
    if (r->transfer_seconds > 0) snprintf(f[12], sizeof f[12], "%.2f", r->transfer_seconds * 1e3);
    if (timed && r->speedup > 0) snprintf(f[13], sizeof f[13], "%.2fx", r->speedup);
    if (r->checked) snprintf(f[14], sizeof f[14], "%.1e", r->max_error);
    snprintf(f[15], sizeof f[15], "%s",
             r->status == NZB_FAILED ? "FAIL" : r->checked ? "ok" : "-");
    table_note(rep, f[16], sizeof f[16], r);
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

/* ---- summary -------------------------------------------------------------------------------- */

/* Which of our rows a summary looks at: the CSR algorithms (with their plan-flag forms, e.g.
 * csr/vector:panels, which a caller gets with a flag and the planner picks), any format, or the
 * planner's choice (csr/auto). Tuning sweeps (kernel names with 'VAR=value') never count. */
enum { ROWS_CSR = 0, ROWS_ANY = 1, ROWS_AUTO = 2 };

static int row_kind_matches(const nzb_result_t *r, int kind) {
    if (r->is_cusparse) return 1;
    if (strchr(r->kernel, '=') != NULL) return 0;
    int is_auto = strcmp(r->kernel, "csr/auto") == 0;
    if (kind == ROWS_AUTO) return is_auto;
    if (is_auto) return 0;
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
        for (int j = 0; j < rep->num_rows; j++) {
            const nzb_result_t *q = &rep->rows[j];
            if (q->status == NZB_OK && !q->is_cusparse && q->value_type == vt &&
                strcmp(q->matrix, r->matrix) == 0 && strcmp(q->kernel, r->advice) == 0)
                advised = q;
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

static void summary_gpu(nzb_report_t *rep, nz_value_type_t vt) {
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
static void summary_cpu(nzb_report_t *rep, nz_value_type_t vt, const nzb_summary_info_t *info) {
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

/* Under the table: what the %copy markers mean (with, for '^', each marked case's footprint
 * against the cache) and the whole text of every shortened note. */
static void print_table_footnotes(nzb_report_t *rep, const nzb_summary_info_t *info) {
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

int nzb_report_finish(nzb_report_t **report, const nzb_summary_info_t *info) {
    nzb_report_t *rep = *report;
    if (rep == NULL) return 1;
    print_table_footnotes(rep, info);
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
            summary_gpu(rep, (nz_value_type_t)precisions[p]);
        else
            summary_cpu(rep, (nz_value_type_t)precisions[p], info);
    }
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
    if (rep->txt != NULL && (err = nzi_output_fclose(&rep->txt_out, rep->txt)) != 0) {
        fprintf(stderr, "nz bench: cannot write %s: %s\n", rep->txt_out.final_path, strerror(err));
        failed++;
    }
    if (rep->csv != NULL && (err = nzi_output_fclose(&rep->csv_out, rep->csv)) != 0) {
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
