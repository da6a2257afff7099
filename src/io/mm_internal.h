/* mm_internal.h: what the Matrix Market reader's files share: header, entries, input source, tokens. */
#ifndef NZI_MM_INTERNAL_H
#define NZI_MM_INTERNAL_H

#include "io_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef NZ_HAVE_ZLIB
#include <zlib.h>
#endif

/*
 * The reader in four files: mm_source.c (input in large blocks: plain files, gzip, memory; the
 * header's lines), mm_header.c (banner and size line), mm_entries.c (numbers and the parallel
 * parse of the entry lines), mm_read.c (CSR and dense outputs, the public entry points; how a
 * file is read and the choices the specification leaves open are described there).
 */

#define MM_TEXT_CHUNK ((size_t)32 << 20)
#define MM_MAX_TOKEN 512

typedef enum { MM_COORDINATE, MM_ARRAY } mm_format_t;
typedef enum { MM_REAL, MM_INTEGER, MM_PATTERN } mm_field_t;
typedef enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW } mm_symmetry_t;

typedef struct mm_header {
    mm_format_t format;
    mm_field_t field;
    mm_symmetry_t symmetry; /* hermitian is read as symmetric */
    int64_t rows, cols;
    int64_t entries;        /* entries stored in the file */
    int64_t size_line;      /* line number of the size line (for messages) */
} mm_header_t;

/* Parsed entries: coordinate files fill row/col indices (0-based); values hold `entries` values
 * of the requested type (NULL for pattern files). Array files fill values only, in file order. */
typedef struct mm_entries {
    int32_t *row_indices, *col_indices;
    void *values;
    int64_t count, capacity;
} mm_entries_t;

typedef enum { SRC_MEMORY, SRC_FILE, SRC_GZIP } source_kind_t;

typedef struct mm_source {
    nz_context_t *ctx;
    const char *name;       /* path or buffer name, for messages */
    source_kind_t kind;
    const char *text;       /* text[begin, length) is not yet consumed */
    char *buffer;           /* owned text buffer (file and gzip input) */
    size_t capacity, begin, length;
    bool eof;               /* nothing follows text[length] */
    int fd;
    uint64_t input_bytes;   /* bytes of the input (compressed size for gzip) */
    uint64_t input_left;    /* plain input bytes not yet read (plausibility bound for entries) */
    int64_t line;           /* line number of text[begin] */
    int64_t last_line;      /* number of the last line consumed (0: none) */
#ifdef NZ_HAVE_ZLIB
    z_stream zs;
    bool zs_ready;
    unsigned char *zin;     /* compressed input buffer (file) */
    size_t zin_capacity;
    const unsigned char *zmem; /* compressed input (memory) */
    size_t zmem_left;
    bool zin_eof;
#endif
} mm_source_t;

/* ---- input sources (mm_source.c) ---------------------------------------------------------- */

/* Open in-memory text (gzip detected by its magic bytes) or a file (plain, or gzip by magic);
 * close frees what the source owns and may be called on a source that failed to open. */
nz_status_t nzi_mm_source_open_memory(mm_source_t *src, const char *data, size_t size);
nz_status_t nzi_mm_source_open_file(mm_source_t *src, const char *path);
void nzi_mm_source_close(mm_source_t *src);
/* Read more input into the source's buffer (keeping the unconsumed text). */
nz_status_t nzi_mm_source_fill(mm_source_t *src);
/* The next header line (see mm_source.c); *found is false at the end of the input. */
nz_status_t nzi_mm_source_line(mm_source_t *src, const char **line, size_t *len, bool *found);
/* The errors for a line longer than NZ_MM_MAX_LINE_BYTES and for a NUL byte in a line. */
nz_status_t nzi_mm_line_too_long(mm_source_t *src, int64_t line);
nz_status_t nzi_mm_nul_byte(mm_source_t *src, int64_t line, ptrdiff_t column);

/* ---- header and entries (mm_header.c, mm_entries.c) --------------------------------------- */

nz_status_t nzi_mm_parse_header(mm_source_t *src, mm_header_t *h);
/* Header, budget check (dense: the output is a dense array) and entries of the whole input. */
nz_status_t nzi_mm_parse(mm_source_t *src, mm_header_t *h, mm_entries_t *e,
                            nz_value_type_t vt, bool dense);
void nzi_mm_entries_free(nz_context_t *ctx, mm_entries_t *e);

/* ---- tokens --------------------------------------------------------------------------------- */

/* ---- tokens and numbers ------------------------------------------------------------------ */

static inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

static inline const char *skip_blanks(const char *p, const char *end) {
    while (p < end && is_blank(*p)) p++;
    return p;
}

static inline const char *token_end(const char *p, const char *end) {
    while (p < end && !is_blank(*p)) p++;
    return p;
}

/* Parse an unsigned decimal integer token [p, end). Returns 0 ok, 1 not an integer, 2 overflow
 * (more than 18 digits). Leading '+' is accepted; '-' is reported as not an integer by the
 * caller's own check. */
static inline int parse_u64_token(const char *p, const char *end, int64_t *out) {
    if (p < end && *p == '+') p++;
    if (p == end) return 1;
    int64_t v = 0;
    int digits = 0;
    for (; p < end; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return 1;
        if (v == 0 && d == 0) continue;
        if (++digits > 18) return 2;
        v = v * 10 + (int64_t)d;
    }
    *out = v;
    return 0;
}

#endif /* NZI_MM_INTERNAL_H */
