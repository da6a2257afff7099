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

static double file_mb(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0.0;
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
    double t = now();
    CHECK(nz_mm_read(ctx, &A, path, NZ_F64));
    double read_s = now() - t;
    nz_matrix_info_t info;
    nz_matrix_info(A, &info);
    double mnz = (double)info.nnz / 1e6;
    printf("matrix: %lld x %lld, %lld nonzeros, %.1f MB of text\n", (long long)info.rows,
           (long long)info.cols, (long long)info.nnz, text_mb);
    printf("read  .mtx     %7.2f s  %7.1f MB/s  %6.2f Mnz/s\n", read_s, text_mb / read_s,
           mnz / read_s);

    t = now();
    CHECK(nz_mm_write(ctx, A, out));
    double write_s = now() - t;
    printf("write .mtx     %7.2f s  %7.1f MB/s  %6.2f Mnz/s\n", write_s, file_mb(out) / write_s,
           mnz / write_s);
    remove(out);

    if (!skip_gz) {
        t = now();
        CHECK(nz_mm_write(ctx, A, gz));
        double gzw_s = now() - t;
        printf("write .mtx.gz  %7.2f s  %7.1f MB/s (text)  %6.2f Mnz/s  (%.1f MB compressed)\n",
               gzw_s, text_mb / gzw_s, mnz / gzw_s, file_mb(gz));
        nz_matrix_t *B = NULL;
        t = now();
        CHECK(nz_mm_read(ctx, &B, gz, NZ_F64));
        double gzr_s = now() - t;
        printf("read  .mtx.gz  %7.2f s  %7.1f MB/s (text)  %6.2f Mnz/s\n", gzr_s, text_mb / gzr_s,
               mnz / gzr_s);
        nz_matrix_destroy(&B);
        remove(gz);
    }

    t = now();
    CHECK(nz_binary_write(ctx, A, nzb));
    double bw_s = now() - t;
    double nzb_mb = file_mb(nzb);
    printf("write .nzb     %7.2f s  %7.1f MB/s  %6.2f Mnz/s\n", bw_s, nzb_mb / bw_s, mnz / bw_s);
    nz_matrix_t *C = NULL;
    t = now();
    CHECK(nz_binary_read(ctx, &C, nzb));
    double br_s = now() - t;
    printf("read  .nzb     %7.2f s  %7.1f MB/s  %6.2f Mnz/s\n", br_s, nzb_mb / br_s, mnz / br_s);
    nz_matrix_destroy(&C);
    remove(nzb);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return 0;
}
