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

/* Follow the symbolic links of `path` (dangling ones included: readlink, not stat) to the name
 * that a write would create or replace; relative link targets are taken from the link's own
 * directory. At most 40 links, as the kernel's path walk (then ELOOP). */
static int follow_links(char *cur, const char *path) {
    int err = copy_path(cur, path);
    for (int hops = 0; err == 0; hops++) {
        struct stat lst;
        if (lstat(cur, &lst) != 0 || !S_ISLNK(lst.st_mode)) return 0;
        if (hops == 40) return ELOOP;
        char target[NZU_OUTPUT_PATH_MAX];
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0) return errno;
        if ((size_t)n >= sizeof target - 1) return ENAMETOOLONG;
        target[n] = '\0';
        const char *slash = strrchr(cur, '/');
        if (target[0] == '/' || slash == NULL) {
            err = copy_path(cur, target);
        } else {
            size_t dir_len = (size_t)(slash - cur) + 1;
            if (dir_len + (size_t)n >= NZU_OUTPUT_PATH_MAX) return ENAMETOOLONG;
            memcpy(cur + dir_len, target, (size_t)n + 1);
        }
    }
    return err;
}

int nzu_output_resolve(const char *path, char *resolved) {
    char cur[NZU_OUTPUT_PATH_MAX];
    if (path == NULL || path[0] == '\0') return ENOENT;
    int err = follow_links(cur, path);
    if (err != 0) return err;
    char full[PATH_MAX];
    if (realpath(cur, full) != NULL) return copy_path(resolved, full); /* exists */
    if (errno != ENOENT) return errno;
    /* not there yet: the canonical directory (which must exist) and the last name */
    size_t len = strlen(cur);
    while (len > 1 && cur[len - 1] == '/') cur[--len] = '\0';
    char *slash = strrchr(cur, '/');
    const char *base = slash != NULL ? slash + 1 : cur;
    if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || base[0] == '\0') return ENOENT;
    if (slash == cur)
        strcpy(full, "/");
    else {
        if (slash != NULL) *slash = '\0';
        if (realpath(slash != NULL ? cur : ".", full) == NULL) return errno;
    }
    size_t dir_len = strlen(full), base_len = strlen(base);
    int need_slash = full[dir_len - 1] != '/';
    if (dir_len + (size_t)need_slash + base_len >= NZU_OUTPUT_PATH_MAX) return ENAMETOOLONG;
    memcpy(resolved, full, dir_len);
    if (need_slash) resolved[dir_len++] = '/';
    memcpy(resolved + dir_len, base, base_len + 1);
    return 0;
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
    struct stat st, lst;
    mode_t mode = 0666;
    if (stat(path, &st) != 0 && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        /* a dangling link: as for a link to an existing file, the link stays and the file it
         * names is created (its directory must exist) */
        char cur[NZU_OUTPUT_PATH_MAX];
        if ((err = follow_links(cur, path)) != 0) return err;
        if ((err = copy_path(out->final_path, cur)) != 0) return err;
    } else if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return EISDIR;
        if (!S_ISREG(st.st_mode)) {
            /* character device, FIFO, socket: written in place, never truncated or removed */
            out->fd = open(path, O_WRONLY | O_CLOEXEC);
            if (out->fd < 0) return errno;
            out->in_place = true;
            return 0;
        }
        mode = st.st_mode & 07777;
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
