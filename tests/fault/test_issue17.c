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
    case W_MM_GZ: return nz_mm_write(ctx, A, path);
    case W_DENSE: return nz_mm_write_dense(ctx, path, NZ_F64, n, 1, v);
    default: return nz_binary_write(ctx, A, path);
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
    NZT_CHECK(nz_mm_write(ctx, A, "/nonexistent-dir-nz/out.mtx") == NZ_ERR_IO, "missing dir");
    free(v);
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
    nz_context_destroy(&ctx);
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return nzt_finish("test_issue17");
}
