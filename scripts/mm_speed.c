/* mm_speed.c: measure Matrix Market (.mtx, .mtx.gz) and .nzb read/write throughput on one file.
 *
 * Build (not part of the CMake build; from the repository root, after building the library):
 *   cc -O2 -fopenmp -Iinclude scripts/mm_speed.c BUILD/libnonzero.a -lz -lm -o mm_speed
 * Run:   ./mm_speed FILE.mtx [threads]
 * Generate a test file (50 million nonzeros, ~1.4 GB):  python3 scripts/mm_gen.py /tmp/big.mtx 50000000
 * It reads FILE.mtx, writes FILE.mtx.gz and FILE.nzb next to it (in /tmp if given as the
 * directory), reads them back and prints MB/s (text bytes per second for Matrix Market, file
 * bytes per second for .nzb) and million nonzeros per second. */
#include "nonzero.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double file_mb(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0.0;
}

/* One line: wall seconds, MB/s and Mnz/s on the wall clock, and MB per CPU-second (the figure
 * that does not depend on other load on the machine). */
static void report(const char *what, double wall, double cpu, double mb, double mnz) {
    printf("%-14s %7.2f s  %8.1f MB/s  %7.2f Mnz/s   cpu %7.2f s  %8.1f MB/cpu-s\n", what, wall,
           mb / wall, mnz / wall, cpu, mb / cpu);
}

#define CHECK(call)                                                                             \
    do {                                                                                        \
        nz_status_t s_ = (call);                                                                \
        if (s_ != NZ_SUCCESS) {                                                                 \
            fprintf(stderr, "%s: %s\n", #call, nz_context_last_error(ctx));                     \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.mtx [threads] [skip-gz]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    if (argc > 2) CHECK(nz_context_set_threads(ctx, atoi(argv[2])));
    int skip_gz = argc > 3 && atoi(argv[3]) != 0;
    char gz[4096], nzb[4096], out[4096];
    snprintf(gz, sizeof gz, "%s.gz", path);
    snprintf(nzb, sizeof nzb, "%s.nzb", path);
    snprintf(out, sizeof out, "%s.out.mtx", path);
    double text_mb = file_mb(path);

    nz_matrix_t *A = NULL;
    double c = cpu_now();
    double t = now();
    CHECK(nz_mm_read(ctx, &A, path, NZ_F64));
    double read_s = now() - t, read_s_cpu = cpu_now() - c;
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    double mnz = (double)info.nnz / 1e6;
    printf("matrix: %lld x %lld, %lld nonzeros, %.1f MB of text\n", (long long)info.rows,
           (long long)info.cols, (long long)info.nnz, text_mb);
    report("read .mtx", read_s, read_s_cpu, text_mb, mnz);

    c = cpu_now();
    t = now();
    CHECK(nz_mm_write(ctx, out, A));
    double write_s = now() - t, write_s_cpu = cpu_now() - c;
    report("write .mtx", write_s, write_s_cpu, file_mb(out), mnz);
    remove(out);

    if (!skip_gz) {
        c = cpu_now();
        t = now();
        CHECK(nz_mm_write(ctx, gz, A));
        double gzw_s = now() - t, gzw_s_cpu = cpu_now() - c;
        report("write .mtx.gz", gzw_s, gzw_s_cpu, text_mb, mnz);
        printf("  (%.1f MB compressed; MB/s are of text)\n", file_mb(gz));
        nz_matrix_t *B = NULL;
        c = cpu_now();
        t = now();
        CHECK(nz_mm_read(ctx, &B, gz, NZ_F64));
        double gzr_s = now() - t, gzr_s_cpu = cpu_now() - c;
        report("read .mtx.gz", gzr_s, gzr_s_cpu, text_mb, mnz);
        nz_matrix_destroy(&B);
        remove(gz);
    }

    c = cpu_now();
    t = now();
    CHECK(nz_binary_write(ctx, nzb, A));
    double bw_s = now() - t, bw_s_cpu = cpu_now() - c;
    double nzb_mb = file_mb(nzb);
    report("write .nzb", bw_s, bw_s_cpu, nzb_mb, mnz);
    nz_matrix_t *C = NULL;
    c = cpu_now();
    t = now();
    CHECK(nz_binary_read(ctx, &C, nzb));
    double br_s = now() - t, br_s_cpu = cpu_now() - c;
    report("read .nzb", br_s, br_s_cpu, nzb_mb, mnz);
    nz_matrix_destroy(&C);
    remove(nzb);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return 0;
}
