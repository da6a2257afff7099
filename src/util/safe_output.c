/* safe_output.c: replace an output file only after it was written completely (temp + rename). */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath */
#endif
#include "safe_output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int copy_path(char *dst, const char *src) {
    size_t n = strlen(src);
    if (n >= NZU_OUTPUT_PATH_MAX) return ENAMETOOLONG;
    memcpy(dst, src, n + 1);
    return 0;
}

/* A name ".<base>.tmp-XXXXXX" next to final_path, opened with O_EXCL; the suffix mixes the
 * process id, the clock and a counter (mkstemp would create the file with mode 0600, and
 * fixing that needs umask(), which is process-wide and not thread-safe). */
static int create_temp(nzu_output_t *out, mode_t mode) {
    const char *slash = strrchr(out->final_path, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - out->final_path) + 1 : 0;
    const char *base = out->final_path + dir_len;
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^
                    ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)out;
    for (int attempt = 0; attempt < 100; attempt++) {
        uint64_t x = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(attempt + 1);
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 29;
        char suffix[7];
        for (int i = 0; i < 6; i++) {
            suffix[i] = digits[x % 36];
            x /= 36;
        }
        suffix[6] = '\0';
        int n = snprintf(out->temp_path, sizeof out->temp_path, "%.*s.%s.tmp-%s", (int)dir_len,
                         out->final_path, base, suffix);
        if (n < 0 || (size_t)n >= sizeof out->temp_path) return ENAMETOOLONG;
        int fd = open(out->temp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0) {
            out->fd = fd;
            return 0;
        }
        if (errno != EEXIST) {
            int err = errno;
            out->temp_path[0] = '\0';
            return err;
        }
    }
    out->temp_path[0] = '\0';
    return EEXIST;
}

int nzu_output_open(nzu_output_t *out, const char *path) {
    memset(out, 0, sizeof *out);
    out->fd = -1;
    if (path == NULL || path[0] == '\0') return ENOENT;
    if (strcmp(path, "-") == 0) {
        out->fd = dup(STDOUT_FILENO);
        if (out->fd < 0) return errno;
        out->in_place = out->is_stdout = true;
        return copy_path(out->final_path, path);
    }
    int err = copy_path(out->final_path, path);
    if (err != 0) return err;
    struct stat st;
    mode_t mode = 0666;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return EISDIR;
        if (!S_ISREG(st.st_mode)) {
            /* character device, FIFO, socket: written in place, never truncated or removed */
            out->fd = open(path, O_WRONLY | O_CLOEXEC);
            if (out->fd < 0) return errno;
            out->in_place = true;
            return 0;
        }
        mode = st.st_mode & 07777;
        struct stat lst;
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            /* replace the file the link points to, not the link */
            char resolved[PATH_MAX];
            if (realpath(path, resolved) == NULL) return errno;
            err = copy_path(out->final_path, resolved);
            if (err != 0) return err;
        }
        /* refuse early what rename would refuse late: a target we could not write anyway */
        if (access(out->final_path, W_OK) != 0 && errno == EACCES) return EACCES;
    }
    err = create_temp(out, mode);
    if (err != 0) return err;
    /* an existing file's permission bits are kept (open() applied the umask to them) */
    if (mode != 0666 && fchmod(out->fd, mode) != 0) {
        err = errno;
        nzu_output_abort(out);
        return err;
    }
    return 0;
}

FILE *nzu_output_fdopen(nzu_output_t *out) {
    int fd = dup(out->fd);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "wb");
    if (f == NULL) {
        int err = errno;
        close(fd);
        errno = err;
    }
    return f;
}

int nzu_output_commit(nzu_output_t *out) {
    int err = 0;
    if (out->fd < 0) return EBADF;
    if (!out->in_place && fsync(out->fd) != 0) err = errno;
    if (close(out->fd) != 0 && err == 0 && errno != EINTR) err = errno;
    out->fd = -1;
    if (!out->in_place) {
        if (err == 0 && rename(out->temp_path, out->final_path) != 0) err = errno;
        if (err != 0) unlink(out->temp_path);
        out->temp_path[0] = '\0';
    }
    return err;
}

void nzu_output_abort(nzu_output_t *out) {
    if (out->fd >= 0) close(out->fd);
    out->fd = -1;
    if (!out->in_place && out->temp_path[0] != '\0') unlink(out->temp_path);
    out->temp_path[0] = '\0';
}

FILE *nzu_output_fopen(nzu_output_t *out, const char *path) {
    int err = nzu_output_open(out, path);
    if (err != 0) {
        errno = err;
        return NULL;
    }
    FILE *f = nzu_output_fdopen(out);
    if (f == NULL) {
        err = errno;
        nzu_output_abort(out);
        errno = err;
    }
    return f;
}

int nzu_output_fclose(nzu_output_t *out, FILE *f) {
    int err = 0;
    if (f == NULL) {
        nzu_output_abort(out);
        return EBADF;
    }
    if (fflush(f) != 0) err = errno != 0 ? errno : EIO;
    if (ferror(f) && err == 0) err = EIO;
    if (fclose(f) != 0 && err == 0) err = errno != 0 ? errno : EIO;
    if (err != 0) {
        nzu_output_abort(out);
        return err;
    }
    return nzu_output_commit(out);
}

bool nzu_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (a == NULL || b == NULL || stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
