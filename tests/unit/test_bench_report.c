/* test_bench_report.c: nz bench's report from made-up rows (no timing): the summary names the
 * fastest kernel of any format and the best CSR kernel, %copy above 100 is marked ('^' cache
 * effect, '+' format stores less) with a footnote, long notes are shortened in the table with a
 * footnote and stay whole in the CSV. The GPU summary's columns too (no device needed). */
#include "bench.h"
#include "testutil.h"

#include <string.h>
#include <unistd.h>

#define LONG_NOTE                                                                               \
    "refused: converting the 1000 x 1000 matrix (26000 nonzeros) to bsr needs 17674424 bytes, " \
    "more than max_padding_ratio 3 x its 2223400 CSR bytes"

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    char *text = calloc(1, 1 << 20);
    if (text != NULL) fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    return text;
}

/* A timed row: rates from the given GB/s (minimal and stored bytes) and copy bandwidth. */
static nzb_result_t timed_row(const char *kernel, double us, double gbs_min, double gbs_stored,
                              double copy_gbs, int cusparse) {
    nzb_result_t r;
    memset(&r, 0, sizeof r);
    snprintf(r.matrix, sizeof r.matrix, "fe3d-T");
    snprintf(r.kernel, sizeof r.kernel, "%s", kernel);
    r.generated = 1;
    r.rows = r.cols = 1000;
    r.nnz = 26000;
    r.value_type = NZ_F64;
    r.is_cusparse = cusparse;
    r.status = NZB_OK;
    r.runs = 10;
    r.batch = 1;
    r.median_seconds = r.min_seconds = us * 1e-6;
    r.bytes_min = 336000;
    r.bytes_stored = gbs_stored > 0 ? (size_t)(r.bytes_min * gbs_stored / gbs_min) : 0;
    r.gbs_min = gbs_min;
    r.gbs_stored = gbs_stored;
    r.bandwidth_gbs = copy_gbs;
    r.pct_bandwidth = 100.0 * gbs_min / copy_gbs;
    r.checked = 1;
    return r;
}

static void test_cpu(const char *dir) {
    char txt[512], csv[512];
    snprintf(txt, sizeof txt, "%s/cpu.txt", dir);
    snprintf(csv, sizeof csv, "%s/cpu.csv", dir);
    nzb_report_t *rep = nzb_report_open(txt, csv, 0, 0);
    NZT_CHECK(rep != NULL, "cannot open the report in %s", dir);
    if (rep == NULL) return;
    nzb_report_header(rep, 8);
    nzb_result_t serial = timed_row("csr/serial", 3.0, 90.0, 90.0, 100.0, 0);
    nzb_result_t parallel = timed_row("csr/parallel", 2.0, 120.0, 120.0, 100.0, 0); /* ^ */
    nzb_result_t dia = timed_row("dia/parallel", 1.0, 240.0, 80.0, 100.0, 0);      /* + */
    nzb_result_t bsr = timed_row("bsr/parallel", 0, 0, 0, 100.0, 0);
    bsr.status = NZB_REFUSED;
    bsr.median_seconds = bsr.min_seconds = 0;
    bsr.checked = 0;
    bsr.reason = NZ_ERR_TOO_MUCH_PADDING;
    snprintf(bsr.note, sizeof bsr.note, "%s", LONG_NOTE);
    nzb_report_row(rep, &serial);
    nzb_report_row(rep, &parallel);
    nzb_report_row(rep, &dia);
    nzb_report_row(rep, &bsr);
    nzb_summary_info_t info = {"cpu", "test CPU", "today", 100.0, 120.0, 2, (size_t)256 << 10};
    NZT_CHECK(nzb_report_finish(&rep, &info) == 0, "no row failed");
    NZT_CHECK(rep == NULL, "finish frees the report");

    char *text = read_all(txt), *table = read_all(csv);
    NZT_CHECK(text != NULL && table != NULL, "report files missing");
    if (text != NULL && table != NULL) {
        NZT_CHECK(strstr(text, " 120.0^ ") != NULL, "csr/parallel's %%copy is not marked ^");
        NZT_CHECK(strstr(text, " 240.0+ ") != NULL, "dia's %%copy is not marked +");
        NZT_CHECK(strstr(text, " 90.0 ") != NULL && strstr(text, "90.0^") == NULL &&
                      strstr(text, "90.0+") == NULL,
                  "csr/serial (below 100%%) is marked");
        NZT_CHECK(strstr(text, "^ %copy above 100 even on the bytes") != NULL, "no ^ legend");
        NZT_CHECK(strstr(text, "  fe3d-T double: minimal footprint 0.3 MiB, x 0.0 MiB, "
                               "last-level cache 0.2 MiB") != NULL,
                  "no footprint line for the ^ case");
        NZT_CHECK(strstr(text, "+ %copy above 100 on the minimal CSR bytes only") != NULL,
                  "no + legend");
        NZT_CHECK(strstr(text, "bsr/parallel") != NULL &&
                      strstr(text, " refused (too much padding) [1]\n") != NULL,
                  "the long note is not shortened to a reason code and footnote");
        NZT_CHECK(strstr(text, "[1] fe3d-T double bsr/parallel: " LONG_NOTE "\n") != NULL,
                  "the footnote does not hold the whole note");
        NZT_CHECK(strstr(table, "\"" LONG_NOTE "\"\n") != NULL, "the CSV note is not whole");
        /* The summary: fastest of any format (dia) and best CSR (csr/parallel) side by side. */
        NZT_CHECK(strstr(text, "fastest (any fmt)") != NULL && strstr(text, "best CSR") != NULL,
                  "summary columns are not named for what they hold");
        NZT_CHECK(strstr(text, "best kernel") == NULL, "the old 'best kernel' column is back");
        const char *row = strstr(text, "\nfe3d-T    dia/parallel ");
        NZT_CHECK(row != NULL, "the summary's fastest kernel is not dia/parallel");
        if (row != NULL) {
            const char *end = strchr(row + 1, '\n');
            const char *csr = strstr(row, "csr/parallel");
            NZT_CHECK(csr != NULL && end != NULL && csr < end,
                      "the summary's best CSR kernel is not csr/parallel on the same line");
        }
    }
    free(text);
    free(table);
}

static void test_gpu(const char *dir) {
    char txt[512], csv[512];
    snprintf(txt, sizeof txt, "%s/gpu.txt", dir);
    snprintf(csv, sizeof csv, "%s/gpu.csv", dir);
    nzb_report_t *rep = nzb_report_open(txt, csv, 0, 1);
    NZT_CHECK(rep != NULL, "cannot open the GPU report");
    if (rep == NULL) return;
    nzb_report_header(rep, 8);
    nzb_result_t cusp = timed_row("cusparse/alg2", 4.0, 60.0, 0, 100.0, 1);
    nzb_result_t merge = timed_row("csr/merge", 3.0, 80.0, 0, 100.0, 0);
    nzb_result_t dia = timed_row("dia/-", 1.5, 160.0, 50.0, 100.0, 0);
    nzb_report_row(rep, &cusp);
    nzb_report_row(rep, &merge);
    nzb_report_row(rep, &dia);
    nzb_summary_info_t info = {"gpu", "test GPU", "today", 100.0, 0, 0, (size_t)50 << 20};
    NZT_CHECK(nzb_report_finish(&rep, &info) == 0, "no row failed");
    char *text = read_all(txt);
    NZT_CHECK(text != NULL, "GPU report missing");
    if (text != NULL) {
        NZT_CHECK(strstr(text, "best Nonzero CSR") != NULL &&
                      strstr(text, "best cuSPARSE CSR") != NULL &&
                      strstr(text, "fastest (any fmt)") != NULL,
                  "GPU summary columns are not named for what they hold");
        const char *row = strstr(text, "\nfe3d-T    csr/merge ");
        NZT_CHECK(row != NULL, "no GPU summary row with csr/merge as the best Nonzero CSR");
        if (row != NULL) {
            const char *end = strchr(row + 1, '\n');
            const char *any = strstr(row, "dia/-");
            NZT_CHECK(any != NULL && end != NULL && any < end,
                      "the GPU summary does not show dia/- as the fastest of any format");
            NZT_CHECK(strstr(row, "1.33x") != NULL, "speedup over cuSPARSE not 1.33x");
        }
    }
    free(text);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    char dir[] = "/tmp/nz_bench_report_XXXXXX";
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    test_cpu(dir);
    test_gpu(dir);
    const char *files[] = {"cpu.txt", "cpu.csv", "gpu.txt", "gpu.csv"};
    for (int i = 0; i < 4; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        remove(path);
    }
    rmdir(dir);
    return nzt_finish("test_bench_report");
}
