/* safe_output.h: replace an output file only after it was written completely (temp + rename). */
#ifndef NZU_SAFE_OUTPUT_H
#define NZU_SAFE_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * src/util is the layer below both the library and its tools: plain C and POSIX, nothing of
 * Nonzero (prefix nzu_). Its objects are compiled into libnonzero (hidden there, like every
 * non-nz_ symbol) and into the static library nzutil that the CLI and the benchmark link, so
 * those never need the library's internal headers.
 *
 * Every writer of the library (Matrix Market plain and gzip, dense arrays, .nzb) and of the
 * command-line tool and benchmark (CSV, text reports; plot.py follows the same rule in Python)
 * opens its output through this helper:
 *
 * - a regular file (existing or not) is written to a new temporary file in the same directory
 *   (".<name>.tmp-XXXXXX", created with O_EXCL and mode 0666 & ~umask, or the existing file's
 *   permission bits), and only nzu_output_commit renames it over the target after fsync and a
 *   successful close. On any failure nzu_output_abort removes the temporary file and nothing
 *   else: the previous target, if any, is left byte for byte as it was.
 * - "-" is standard output, and an existing file that is not a regular file (character device,
 *   FIFO, socket) is written in place; neither is ever truncated by us or removed.
 * - a symbolic link to a regular file is followed: the file it points to is replaced, the link
 *   stays. A dangling link is followed the same way (through a chain of links, relative targets
 *   from each link's directory): the file it names is created, the link stays; when that file's
 *   directory does not exist the open fails (ENOENT) and the link is left as it was.
 *
 * Functions return 0 or an errno value; they print nothing. Thread-safe (no global state; umask
 * is never changed, the mode comes from open(2)).
 */
/* Longest path handled (longer: ENAMETOOLONG); no allocation is needed. */
#define NZU_OUTPUT_PATH_MAX 4096

typedef struct nzu_output {
    int fd;            /* write here (-1: not open) */
    bool in_place;     /* "-" or a special file: no temporary, nothing to rename or remove */
    bool is_stdout;
    char final_path[NZU_OUTPUT_PATH_MAX]; /* the path renamed over (symlinks resolved) */
    char temp_path[NZU_OUTPUT_PATH_MAX];  /* "" when in place */
} nzu_output_t;

/* Open `path` for writing as described above. On failure *out is closed (fd = -1). */
int nzu_output_open(nzu_output_t *out, const char *path);

/* A FILE* on a duplicate of out->fd ("wb"), so the caller can fclose it before the commit;
 * NULL with errno set on failure. */
FILE *nzu_output_fdopen(nzu_output_t *out);

/* Flush to disk (fsync, regular files only), close, and rename the temporary file over the
 * target. On failure the temporary file is removed and the target is untouched. */
int nzu_output_commit(nzu_output_t *out);

/* Close and remove the temporary file (if any); the target is untouched. Safe on a
 * closed or zeroed nzu_output_t. */
void nzu_output_abort(nzu_output_t *out);

/* stdio convenience for text writers (CSV, reports): nzu_output_open + nzu_output_fdopen; NULL
 * with errno set on failure (nothing is left behind). */
FILE *nzu_output_fopen(nzu_output_t *out, const char *path);
/* fclose(f), then commit when every write and the close succeeded, else abort. Returns 0 or an
 * errno value (EIO when the stream had an error without one). f may be NULL (then abort). */
int nzu_output_fclose(nzu_output_t *out, FILE *f);

/* The canonical absolute path that writing `path` through nzu_output_open would create or
 * replace: symbolic links followed (dangling ones too), then realpath of an existing target, or
 * realpath of its directory + its last name for a target that does not exist yet. resolved has
 * NZU_OUTPUT_PATH_MAX bytes. Returns 0 or an errno value (ENOENT: the directory is missing,
 * ELOOP: more than 40 links). Two outputs with the same resolved path would overwrite each
 * other even before either exists. */
int nzu_output_resolve(const char *path, char *resolved);

#ifdef __cplusplus
}
#endif

#endif /* NZU_SAFE_OUTPUT_H */
