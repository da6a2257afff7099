/* test_issue17.c: the library side of issue 17: safe writers, bounded reading, memory budget,
 * thread limit, aliasing refusals and the messages of section 5. */
#define _DEFAULT_SOURCE 1 /* mknod, makedev, mkdtemp */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char dir[256];

static void path_in(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", dir, name);
}

static void write_text(const char *path, const char *text, size_t size) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(text, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

static char *read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *size = n;
    return buf;
}

/* No ".tmp-" file left in the directory. */
static int temp_files_left(void) {
    int count = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) count += strstr(e->d_name, ".tmp-") != NULL;
    if (d != NULL) closedir(d);
    return count;
}

/* ---- 1. writers: a failed write leaves the previous file intact; special files stay ---------- */
typedef enum { W_MM, W_MM_GZ, W_DENSE, W_NZB } writer_t;
static const char *writer_name[] = {"mm", "mm.gz", "dense", "nzb"};
static const char *writer_file[] = {"out.mtx", "out.mtx.gz", "vec.mtx", "out.nzb"};

static nz_status_t run_writer(nz_context_t *ctx, writer_t w, const nz_matrix_t *A,
                              const double *v, int64_t n, const char *path) {
    switch (w) {
    case W_MM:
    case W_MM_GZ: return nz_mm_write(ctx, path, A);
    case W_DENSE: return nz_mm_write_dense(ctx, path, NZ_F64, n, 1, v);
    default: return nz_binary_write(ctx, path, A);
    }
}

static void test_writers(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 16, 16, 16, NZ_F64)); /* ~27k entries: > 64 KiB out */
    int64_t n = 16 * 16 * 16;
    double *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = 1.0 / (double)(i + 3);
    const char old_text[] = "previous contents: must survive a failed write\n";
    for (int w = 0; w < 4; w++) {
        char path[512];
        path_in(path, sizeof path, writer_file[w]);
        /* success replaces the file and keeps its permission bits */
        write_text(path, old_text, sizeof old_text - 1);
        chmod(path, 0640);
        NZT_OK(ctx, run_writer(ctx, (writer_t)w, A, v, n, path));
        struct stat st;
        NZT_CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640,
                  "%s: permissions not kept (%o)", writer_name[w], (unsigned)st.st_mode & 07777);
        /* failure half-way (file size limit: EFBIG) leaves the old file byte for byte */
        write_text(path, old_text, sizeof old_text - 1);
        struct rlimit old_limit, limit;
        getrlimit(RLIMIT_FSIZE, &old_limit);
        limit = old_limit;
        limit.rlim_cur = 16384;
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &limit);
        nz_status_t s = run_writer(ctx, (writer_t)w, A, v, n, path);
        setrlimit(RLIMIT_FSIZE, &old_limit);
        NZT_CHECK(s == NZ_ERR_IO, "%s: write past the size limit returned %d", writer_name[w],
                  (int)s);
        NZT_CHECK(strstr(nz_context_last_error(ctx), writer_file[w]) != NULL,
                  "%s: message does not name the file: %s", writer_name[w],
                  nz_context_last_error(ctx));
        size_t size = 0;
        char *now = read_all(path, &size);
        NZT_CHECK(now != NULL && size == sizeof old_text - 1 && memcmp(now, old_text, size) == 0,
                  "%s: a failed write changed or removed the previous file", writer_name[w]);
        free(now);
        NZT_CHECK(temp_files_left() == 0, "%s: temporary file left behind", writer_name[w]);
        /* a character device (our own /dev/full) is written in place and never removed */
        char dev[512];
        path_in(dev, sizeof dev, w == W_NZB ? "full.nzb" : w == W_MM_GZ ? "full.mtx.gz" : "full.mtx");
        unlink(dev);
        if (mknod(dev, S_IFCHR | 0666, makedev(1, 7)) == 0) {
            s = run_writer(ctx, (writer_t)w, A, v, n, dev);
            NZT_CHECK(s == NZ_ERR_IO, "%s: writing to a full device returned %d", writer_name[w],
                      (int)s);
            NZT_CHECK(stat(dev, &st) == 0 && S_ISCHR(st.st_mode),
                      "%s: the character device was removed", writer_name[w]);
            unlink(dev);
        } else if (w == 0) {
            printf("note: mknod not permitted; character-device checks skipped\n");
        }
    }
    /* a missing directory: a clean error, nothing created */
    NZT_CHECK(nz_mm_write(ctx, "/nonexistent-dir-nz/out.mtx", A) == NZ_ERR_IO, "missing dir");
    free(v);
    nz_matrix_destroy(&A);
}


/* ---- 3. bounded reading: line cap, NUL bytes, long values, gzip truncation, memory budget ---- */
static void expect_error(nz_context_t *ctx, nz_status_t got, nz_status_t want, const char *needle,
                         const char *what) {
    NZT_CHECK(got == want, "%s: status %d, expected %d (%s)", what, (int)got, (int)want,
              nz_context_last_error(ctx));
    NZT_CHECK(strstr(nz_context_last_error(ctx), needle) != NULL, "%s: message '%s' lacks '%s'",
              what, nz_context_last_error(ctx), needle);
}

static void test_reading(nz_context_t *ctx) {
    const char *head = "%%MatrixMarket matrix coordinate real general\n";
    nz_matrix_t *A = NULL;
    char path[512];
    /* a line over NZ_MM_MAX_LINE_BYTES: buffer, plain file (in the header and among the entries) */
    size_t long_size = NZ_MM_MAX_LINE_BYTES + 4096;
    char *text = malloc(long_size + 256);
    int n = snprintf(text, 256, "%s2 2 1\n", head);
    memset(text + n, ' ', long_size);
    memcpy(text + n + long_size, "1 1 1\n", 6);
    size_t total = (size_t)n + long_size + 6;
    expect_error(ctx, nz_mm_read_buffer(ctx, &A, text, total, "long.mtx", NZ_F64), NZ_ERR_PARSE,
                 "long.mtx:3: line longer than", "buffer: long line");
    path_in(path, sizeof path, "long.mtx");
    write_text(path, text, total);
    expect_error(ctx, nz_mm_read(ctx, &A, path, NZ_F64), NZ_ERR_PARSE, "long.mtx:3: line longer",
                 "file: long entry line");
    memset(text, '%', long_size); /* one endless comment line */
    text[0] = '%';
    write_text(path, text, long_size);
    expect_error(ctx, nz_mm_read(ctx, &A, path, NZ_F64), NZ_ERR_PARSE, "long.mtx:1: line longer",
                 "file: long first line");
    free(text);
    NZT_CHECK(A == NULL, "output set on failure");
    /* /dev/zero: fails fast naming the file (it used to grow a buffer to 4 GiB) */
    nz_alloc_stats_t before, after;
    nz_context_alloc_stats(ctx, &before);
    expect_error(ctx, nz_mm_read(ctx, &A, "/dev/zero", NZ_F64), NZ_ERR_PARSE, "/dev/zero:1:",
                 "/dev/zero");
    nz_context_alloc_stats(ctx, &after);
    NZT_CHECK(after.total_allocs - before.total_allocs <= 2, "/dev/zero: %lld allocations (the "
              "buffer grew)", (long long)(after.total_allocs - before.total_allocs));
    /* NUL bytes are named, not quoted as a valid-looking token */
    static const char nul_value[] = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\0x\n";
    expect_error(ctx, nz_mm_read_buffer(ctx, &A, nul_value, sizeof nul_value - 1, "nul.mtx", NZ_F64),
                 NZ_ERR_PARSE, "nul.mtx:3: NUL byte", "NUL in a value");
    static const char nul_banner[] = "%%MatrixMarket matrix coordinate real general\0\n2 2 1\n1 1 1\n";
    expect_error(ctx, nz_mm_read_buffer(ctx, &A, nul_banner, sizeof nul_banner - 1, "nul.mtx", NZ_F64),
                 NZ_ERR_PARSE, "nul.mtx:1: NUL byte", "NUL in the banner");
    /* values of more than 511 characters are valid Matrix Market and correctly rounded */
    char *big = malloc(8192);
    n = snprintf(big, 8192, "%s2 2 2\n1 1 1", head);
    for (int i = 0; i < 700; i++) big[n++] = '0';
    n += snprintf(big + n, 8192 - (size_t)n, ".5e-700\n2 2 0.");
    for (int i = 0; i < 1200; i++) big[n++] = '0';
    n += snprintf(big + n, 8192 - (size_t)n, "3333333333333333333333333333333333e1201\n");
    nz_status_t s = nz_mm_read_buffer(ctx, &A, big, (size_t)n, "big.mtx", NZ_F64);
    NZT_CHECK(s == NZ_SUCCESS, "long values refused: %s", nz_context_last_error(ctx));
    if (s == NZ_SUCCESS) {
        const void *values = NULL;
        nz_matrix_csr_arrays(ctx, NULL, NULL, &values, A);
        const double *v = (const double *)values;
        NZT_CHECK(v[0] == 1.0 && v[1] == 3.333333333333333333333333333, "values %.17g %.17g",
                  v[0], v[1]);
        nz_matrix_destroy(&A);
    }
    free(big);
    /* memory budget: the 86-byte header declaring 10^9 rows is refused before allocating */
    static const char huge[] = "%%MatrixMarket matrix coordinate real general\n"
                               "1000000000 1000000000 2\n1 1 1.0\n2 2 2.0\n";
    NZT_CHECK(sizeof huge - 1 == 86, "header is %zu bytes", sizeof huge - 1);
    NZT_OK(ctx, nz_context_set_memory_budget(ctx, (size_t)1 << 30));
    NZT_CHECK(nz_context_memory_budget(ctx) == (size_t)1 << 30, "budget not set");
    nz_context_alloc_stats(ctx, &before);
    expect_error(ctx, nz_mm_read_buffer(ctx, &A, huge, sizeof huge - 1, "huge.mtx", NZ_F64),
                 NZ_ERR_OUT_OF_MEMORY, "nz_context_set_memory_budget", "10^9-row header");
    NZT_CHECK(strstr(nz_context_last_error(ctx), "huge.mtx:2") != NULL &&
                  strstr(nz_context_last_error(ctx), "8000000064 bytes") != NULL,
              "budget message: %s", nz_context_last_error(ctx));
    nz_context_alloc_stats(ctx, &after);
    NZT_CHECK(after.total_allocs == before.total_allocs, "%lld allocations before the refusal",
              (long long)(after.total_allocs - before.total_allocs));
    path_in(path, sizeof path, "huge.mtx");
    write_text(path, huge, sizeof huge - 1);
    expect_error(ctx, nz_mm_read(ctx, &A, path, NZ_F64), NZ_ERR_OUT_OF_MEMORY, "huge.mtx:2",
                 "10^9-row header from a file");
    void *dense = NULL;
    int64_t rows = 0, cols = 0;
    expect_error(ctx, nz_mm_read_dense(ctx, &dense, &rows, &cols, path, NZ_F64),
                 NZ_ERR_OUT_OF_MEMORY, "dense array", "dense read of the 10^9-row header");
    /* generators and .nzb against a small budget */
    NZT_OK(ctx, nz_context_set_memory_budget(ctx, (size_t)1 << 20));
    expect_error(ctx, nz_gen_laplace3d(ctx, &A, 100, 100, 100, NZ_F64), NZ_ERR_OUT_OF_MEMORY,
                 "memory budget", "laplace3d over budget");
    expect_error(ctx, nz_gen_rmat(ctx, &A, 18, 16, 0.57, 0.19, 0.19, 1, NZ_F64),
                 NZ_ERR_OUT_OF_MEMORY, "memory budget", "rmat over budget");
    NZT_OK(ctx, nz_context_set_memory_budget(ctx, 0)); /* back to the default */
    NZT_CHECK(nz_context_memory_budget(ctx) > ((size_t)1 << 20), "default budget");
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 40, 40, 40, NZ_F64));
    path_in(path, sizeof path, "m.nzb");
    NZT_OK(ctx, nz_binary_write(ctx, path, A));
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_context_set_memory_budget(ctx, (size_t)1 << 20));
    expect_error(ctx, nz_binary_read(ctx, &A, path), NZ_ERR_OUT_OF_MEMORY, "m.nzb",
                 ".nzb over budget");
    NZT_OK(ctx, nz_context_set_memory_budget(ctx, 0));
    NZT_OK(ctx, nz_binary_read(ctx, &A, path));
    nz_matrix_destroy(&A);
}


/* ---- 4. thread limit and aliasing --------------------------------------------------------- */
static void test_limits(nz_context_t *ctx) {
    expect_error(ctx, nz_context_set_threads(ctx, 100000), NZ_ERR_INVALID_ARGUMENT,
                 "NZ_MAX_THREADS", "100000 threads");
    expect_error(ctx, nz_context_set_threads(ctx, 1000000000), NZ_ERR_INVALID_ARGUMENT,
                 "NZ_MAX_THREADS", "10^9 threads");
    NZT_OK(ctx, nz_context_set_threads(ctx, NZ_MAX_THREADS));
    NZT_OK(ctx, nz_context_set_threads(ctx, 2));

    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 4, 4, NZ_F64));
    double v[40];
    for (int i = 0; i < 40; i++) v[i] = i + 1;
    double before[40];
    memcpy(before, v, sizeof v);
    expect_error(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, v, 0.0, v), NZ_ERR_INVALID_ARGUMENT,
                 "overlap", "spmv x == y");
    expect_error(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, v, 0.0, v + 15), NZ_ERR_INVALID_ARGUMENT,
                 "overlap", "spmv y starts at x's last entry");
    NZT_CHECK(memcmp(v, before, sizeof v) == 0, "a refused spmv wrote y");
    NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, v, 0.0, v + 16)); /* adjacent: fine */
    nz_spmm_plan_t *plan = NULL;
    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 2, NZ_COL_MAJOR, NZ_ALG_AUTO, 0));
    double X[80], Y[32];
    for (int i = 0; i < 80; i++) X[i] = i;
    expect_error(ctx, nz_spmm_execute(plan, 1.0, X, 16, 0.0, X + 8, 16), NZ_ERR_INVALID_ARGUMENT,
                 "overlap", "spmm X and Y overlap");
    NZT_OK(ctx, nz_spmm_execute(plan, 1.0, X, 16, 0.0, Y, 16));
    NZT_OK(ctx, nz_spmm_execute(plan, 1.0, X, 16, 0.0, X + 32, 16)); /* disjoint parts */
    nz_spmm_plan_destroy(&plan);
    double b[16];
    for (int i = 0; i < 16; i++) b[i] = 1.0;
    expect_error(ctx, nz_cg_solve(ctx, A, b, b, NULL, NULL), NZ_ERR_INVALID_ARGUMENT, "overlap",
                 "cg b == x");
    /* Jacobi names the bad diagonal entry 1-based, like every other message */
    nz_matrix_t *D = NULL;
    static const char missing[] = "%%MatrixMarket matrix coordinate real symmetric\n"
                                  "3 3 3\n1 1 4.0\n3 3 2.0\n2 1 1.0\n";
    NZT_OK(ctx, nz_mm_read_buffer(ctx, &D, missing, sizeof missing - 1, "d.mtx", NZ_F64));
    double x3[3] = {0, 0, 0}, b3[3] = {1, 1, 1};
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.precond = NZ_PRECOND_JACOBI;
    expect_error(ctx, nz_cg_solve(ctx, D, b3, x3, &opt, NULL), NZ_ERR_BREAKDOWN,
                 "diagonal entry (2, 2)", "jacobi message is 1-based");
    nz_matrix_destroy(&D);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    snprintf(dir, sizeof dir, "%s/nz-issue17.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_context_set_threads(ctx, 2);
    test_writers(ctx);
    test_reading(ctx);
    test_limits(ctx);
    nz_context_destroy(&ctx);
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return nzt_finish("test_issue17");
}
