/* mm_read.c: Matrix Market reader: block-wise input (plain, gzip, memory), parallel parsing, CSR and dense output. */
#include "io_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef NZ_HAVE_ZLIB
#include <zlib.h>
#endif

/*
 * How a file is read
 * ------------------
 * The input is consumed in large blocks (32 MiB of text; the whole buffer for in-memory input),
 * never token by token through stdio. The header (banner, comments, size line) is read line by
 * line. Each block of entry lines is then cut at newlines into one part per thread and parsed in
 * two parallel passes: the first counts lines and data lines of each part, so that a prefix sum
 * gives every part the index of its first entry and the line number of its first line; the
 * second parses the entries straight into their final slots. Each part keeps only its first
 * error; the error with the smallest line number is reported, so the message is the one a
 * sequential reader would give. Numbers are parsed by hand: indices as decimal integers, values
 * with Clinger's exact fast path (at most 19 significant digits, |decimal exponent| <= 22, the
 * mantissa below 2^53: one correctly rounded multiplication or division by an exact power of ten;
 * W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990), falling back to
 * strtod for everything else, so every value is correctly rounded.
 *
 * Choices the Matrix Market specification leaves open
 * ---------------------------------------------------
 * - Symmetric, skew-symmetric and hermitian (real: treated as symmetric) coordinate files may
 *   store either triangle; every off-diagonal entry is mirrored (negated for skew-symmetric), and
 *   duplicates, including an entry stored in both triangles, are summed by CSR canonicalisation.
 *   A diagonal entry in a skew-symmetric file is an error.
 * - Array files keep every stored entry, zeros included; the diagonal of a skew-symmetric array
 *   file (not stored, zero by definition) is left out.
 * - Integer values are read with the floating-point parser (so 3.0 is accepted).
 * - Comment lines (first non-blank character %) and blank lines may appear anywhere after the
 *   banner; spaces, tabs and carriage returns separate tokens; one entry per line.
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

/* ---- input sources ----------------------------------------------------------------------- */

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

static nz_status_t source_io_error(mm_source_t *src, const char *what) {
    return nzi_error(src->ctx, NZ_ERR_IO, "%s: %s: %s", src->name, what, strerror(errno));
}

/* Read up to `want` bytes of the plain file into dst; *got receives the count (0 at the end). */
static nz_status_t source_read_fd(mm_source_t *src, void *dst, size_t want, size_t *got) {
    size_t done = 0;
    while (done < want) {
        ssize_t r = read(src->fd, (char *)dst + done, want - done);
        if (r < 0) {
            if (errno == EINTR) continue;
            return source_io_error(src, "read failed");
        }
        if (r == 0) break;
        done += (size_t)r;
    }
    *got = done;
    return NZ_SUCCESS;
}

#ifdef NZ_HAVE_ZLIB
/* Inflate into text[length, capacity) until it is full or the input ends. Concatenated gzip
 * members are read as one stream (as gzip -d does). */
static nz_status_t source_inflate(mm_source_t *src) {
    z_stream *zs = &src->zs;
    for (;;) {
        if (src->length == src->capacity) return NZ_SUCCESS;
        if (zs->avail_in == 0) {
            if (src->zmem != NULL) {
                size_t n = src->zmem_left > UINT32_MAX ? UINT32_MAX : src->zmem_left;
                zs->next_in = (Bytef *)(uintptr_t)src->zmem;
                zs->avail_in = (uInt)n;
                src->zmem += n;
                src->zmem_left -= n;
            } else if (!src->zin_eof) {
                size_t got = 0;
                nz_status_t s = source_read_fd(src, src->zin, src->zin_capacity, &got);
                if (s < 0) return s;
                if (got == 0) src->zin_eof = true;
                zs->next_in = src->zin;
                zs->avail_in = (uInt)got;
            }
        }
        bool input_done = zs->avail_in == 0 && (src->zmem != NULL ? src->zmem_left == 0 : src->zin_eof);
        size_t room = src->capacity - src->length;
        if (room > UINT32_MAX) room = UINT32_MAX;
        zs->next_out = (Bytef *)src->buffer + src->length;
        zs->avail_out = (uInt)room;
        int rc = inflate(zs, Z_NO_FLUSH);
        src->length += room - zs->avail_out;
        if (rc == Z_STREAM_END) {
            if (zs->avail_in == 0 && src->zmem == NULL && !src->zin_eof) {
                size_t got = 0;
                nz_status_t s = source_read_fd(src, src->zin, src->zin_capacity, &got);
                if (s < 0) return s;
                if (got == 0) src->zin_eof = true;
                zs->next_in = src->zin;
                zs->avail_in = (uInt)got;
            }
            bool more = zs->avail_in > 0 || (src->zmem != NULL && src->zmem_left > 0);
            if (!more) {
                src->eof = true;
                return NZ_SUCCESS;
            }
            if (inflateReset(zs) != Z_OK)
                return nzi_error(src->ctx, NZ_ERR_PARSE, "%s: corrupt gzip data", src->name);
            continue;
        }
        if (rc == Z_BUF_ERROR && input_done) {
            /* the data ends inside the line after the last complete one in the buffer */
            int64_t line = src->line;
            for (size_t k = src->begin; k < src->length; k++) line += src->buffer[k] == '\n';
            return nzi_error(src->ctx, NZ_ERR_PARSE,
                             "%s:%lld: gzip data is truncated (the text ends in this line)",
                             src->name, (long long)line);
        }
        if (rc == Z_MEM_ERROR)
            return nzi_error(src->ctx, NZ_ERR_OUT_OF_MEMORY, "%s: zlib is out of memory",
                             src->name);
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            return nzi_error(src->ctx, NZ_ERR_PARSE, "%s: corrupt gzip data (%s)", src->name,
                             zs->msg != NULL ? zs->msg : "inflate failed");
    }
}

static voidpf source_zalloc(voidpf opaque, uInt items, uInt size) {
    return nzi_calloc((nz_context_t *)opaque, items, size);
}
static void source_zfree(voidpf opaque, voidpf address) {
    nzi_free((nz_context_t *)opaque, address);
}

static nz_status_t source_start_gzip(mm_source_t *src) {
    src->zs.zalloc = source_zalloc;
    src->zs.zfree = source_zfree;
    src->zs.opaque = src->ctx;
    int rc = inflateInit2(&src->zs, 15 + 16);
    if (rc == Z_MEM_ERROR)
        return nzi_error(src->ctx, NZ_ERR_OUT_OF_MEMORY, "%s: zlib is out of memory", src->name);
    if (rc != Z_OK)
        return nzi_error(src->ctx, NZ_ERR_IO, "%s: cannot initialise zlib", src->name);
    src->zs_ready = true;
    src->kind = SRC_GZIP;
    return NZ_SUCCESS;
}
#endif

/* Make room and read more text: move the unconsumed text to the front, grow the buffer if the
 * unconsumed text fills it (one line longer than the buffer), then read until full or the end. */
static nz_status_t source_fill(mm_source_t *src) {
    nz_status_t status = NZ_SUCCESS;
    if (src->eof) return NZ_SUCCESS;
    size_t keep = src->length - src->begin;
    if (src->begin > 0 && keep > 0) memmove(src->buffer, src->buffer + src->begin, keep);
    src->begin = 0;
    src->length = keep;
    if (keep == src->capacity) {
        size_t bigger;
        if (nzi_mul_overflow_size(src->capacity, 2, &bigger))
            return nzi_error(src->ctx, NZ_ERR_OVERFLOW, "%s: line too long", src->name);
        char *grown = NULL;
        NZI_TRY(nzi_alloc_array(src->ctx, (void **)&grown, bigger, 1, "Matrix Market text buffer"));
        memcpy(grown, src->buffer, keep);
        nzi_free(src->ctx, src->buffer);
        src->buffer = grown;
        src->capacity = bigger;
    }
    src->text = src->buffer;
    if (src->kind == SRC_FILE) {
        size_t got = 0;
        status = source_read_fd(src, src->buffer + src->length, src->capacity - src->length, &got);
        if (status < 0) return status;
        src->length += got;
        src->input_left = got > src->input_left ? 0 : src->input_left - got;
        if (src->length < src->capacity) src->eof = true;
    }
#ifdef NZ_HAVE_ZLIB
    else if (src->kind == SRC_GZIP) {
        NZI_TRY(source_inflate(src));
    }
#endif
    return status;
}

static bool is_gzip_magic(const void *data, size_t size) {
    const unsigned char *b = (const unsigned char *)data;
    return size >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

#ifndef NZ_HAVE_ZLIB
static nz_status_t gzip_unavailable(mm_source_t *src) {
    return nzi_error(src->ctx, NZ_ERR_UNSUPPORTED,
                     "%s: gzip-compressed input, but Nonzero was built without zlib", src->name);
}
#endif

static nz_status_t source_open_memory(mm_source_t *src, const char *data, size_t size) {
    if (is_gzip_magic(data, size)) {
#ifdef NZ_HAVE_ZLIB
        NZI_TRY(source_start_gzip(src));
        src->zmem = (const unsigned char *)data;
        src->zmem_left = size;
        src->input_bytes = size;
        src->capacity = MM_TEXT_CHUNK;
        if ((uint64_t)src->capacity / 8 > size) src->capacity = size * 8 < 4096 ? 4096 : size * 8;
        NZI_TRY(nzi_alloc_array(src->ctx, (void **)&src->buffer, src->capacity, 1,
                                "Matrix Market text buffer"));
        src->text = src->buffer;
        return source_fill(src);
#else
        return gzip_unavailable(src);
#endif
    }
    src->kind = SRC_MEMORY;
    src->text = data;
    src->length = size;
    src->input_bytes = size;
    src->eof = true;
    return NZ_SUCCESS;
}

static nz_status_t source_open_file(mm_source_t *src, const char *path) {
    src->fd = open(path, O_RDONLY);
    if (src->fd < 0) return source_io_error(src, "cannot open");
    struct stat st;
    if (fstat(src->fd, &st) != 0) return source_io_error(src, "cannot stat");
    if (S_ISDIR(st.st_mode))
        return nzi_error(src->ctx, NZ_ERR_IO, "%s: is a directory", src->name);
    uint64_t size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    src->input_bytes = size;
    src->input_left = size;
    /* The first block is read as plain text; if it starts with the gzip magic it becomes the
     * compressed input buffer instead. */
    src->kind = SRC_FILE;
    src->capacity = MM_TEXT_CHUNK;
    if (S_ISREG(st.st_mode) && size + 1 < src->capacity)
        src->capacity = size + 1 < 4096 ? 4096 : (size_t)size + 1;
    NZI_TRY(nzi_alloc_array(src->ctx, (void **)&src->buffer, src->capacity, 1,
                            "Matrix Market text buffer"));
    src->text = src->buffer;
    NZI_TRY(source_fill(src));
    if (is_gzip_magic(src->buffer, src->length)) {
#ifdef NZ_HAVE_ZLIB
        NZI_TRY(source_start_gzip(src));
        src->zin = (unsigned char *)src->buffer;
        src->zin_capacity = src->capacity;
        src->zin_eof = src->eof;
        src->zs.next_in = src->zin;
        src->zs.avail_in = (uInt)src->length;
        src->buffer = NULL;
        src->eof = false;
        src->length = 0;
        src->input_left = 0;
        src->capacity = MM_TEXT_CHUNK;
        if ((uint64_t)src->capacity / 8 > size) src->capacity = size * 8 < 4096 ? 4096 : size * 8;
        NZI_TRY(nzi_alloc_array(src->ctx, (void **)&src->buffer, src->capacity, 1,
                                "Matrix Market text buffer"));
        src->text = src->buffer;
        return source_fill(src);
#else
        return gzip_unavailable(src);
#endif
    }
    return NZ_SUCCESS;
}

static void source_close(mm_source_t *src) {
#ifdef NZ_HAVE_ZLIB
    if (src->zs_ready) inflateEnd(&src->zs);
    nzi_free(src->ctx, src->zin);
#endif
    nzi_free(src->ctx, src->buffer);
    if (src->fd >= 0) close(src->fd);
}

static nz_status_t line_too_long(mm_source_t *src, int64_t line) {
    return nzi_error(src->ctx, NZ_ERR_PARSE,
                     "%s:%lld: line longer than %zu bytes (NZ_MM_MAX_LINE_BYTES): not a Matrix "
                     "Market file",
                     src->name, (long long)line, (size_t)NZ_MM_MAX_LINE_BYTES);
}

/* A parse error on a line holding a NUL byte is reported as the NUL (the text after it is not
 * shown by %s, so the plain message would quote a valid-looking token). */
static nz_status_t nul_byte(mm_source_t *src, int64_t line, ptrdiff_t column) {
    return nzi_error(src->ctx, NZ_ERR_PARSE,
                     "%s:%lld: NUL byte at column %lld: not a Matrix Market text file",
                     src->name, (long long)line, (long long)column + 1);
}

/* The next line of the header: [*line, *line + *len) without its newline, valid until the next
 * call; *found is false at the end of the input. */
static nz_status_t source_line(mm_source_t *src, const char **line, size_t *len, bool *found) {
    for (;;) {
        const char *start = src->text + src->begin;
        size_t avail = src->length - src->begin;
        const char *nl = avail > 0 ? (const char *)memchr(start, '\n', avail) : NULL;
        size_t length = nl != NULL ? (size_t)(nl - start) : avail;
        if (length > NZ_MM_MAX_LINE_BYTES) return line_too_long(src, src->line);
        if (nl != NULL || src->eof) {
            if (nl == NULL && avail == 0) {
                *found = false;
                return NZ_SUCCESS;
            }
            size_t n = nl != NULL ? (size_t)(nl - start) : avail;
            *line = start;
            *len = n;
            *found = true;
            src->begin += n + (nl != NULL);
            src->last_line = src->line;
            if (nl != NULL) src->line++;
            return NZ_SUCCESS;
        }
        NZI_TRY(source_fill(src));
    }
}

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

static const double exact_powers_of_ten[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A decimal token too long for the copy in parse_value_slow, rewritten as the same number with
 * at most MM_LONG_DIGITS significant digits: "-0.<digits>e<exponent>", the dropped digits
 * replaced by one sticky '1' when any of them is non-zero. Correct rounding of a double needs at
 * most 767 significant digits, so strtod then rounds exactly as on the whole token. False if the
 * token is not a decimal number (hex, nan and inf tokens are short). */
#define MM_LONG_DIGITS 800
static bool shorten_long_value(const char *p, const char *end, char *out, size_t size) {
    const char *s = p;
    size_t k = 0;
    if (s < end && (*s == '-' || *s == '+')) {
        if (*s == '-') out[k++] = '-';
        s++;
    }
    out[k++] = '0';
    out[k++] = '.';
    long long exponent = 0;
    int significant = 0;
    bool any_digit = false, nonzero = false, sticky = false;
    for (int part = 0; part < 2; part++) {
        for (; s < end && (unsigned)(*s - '0') <= 9; s++) {
            any_digit = true;
            if (!nonzero && *s == '0') {
                if (part == 1) exponent--;
                continue;
            }
            nonzero = true;
            if (part == 0) exponent++;
            if (significant < MM_LONG_DIGITS) {
                out[k++] = *s;
                significant++;
            } else {
                sticky |= *s != '0';
            }
        }
        if (part == 0) {
            if (s < end && *s == '.')
                s++;
            else
                break;
        }
    }
    if (!any_digit) return false;
    if (sticky) out[k++] = '1';
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        bool negative = false;
        if (s < end && (*s == '-' || *s == '+')) negative = *s++ == '-';
        if (s == end || (unsigned)(*s - '0') > 9) return false;
        long long e = 0;
        for (; s < end && (unsigned)(*s - '0') <= 9; s++)
            if (e < 100000000) e = e * 10 + (*s - '0');
        exponent += negative ? -e : e;
    }
    if (s != end) return false;
    if (!nonzero) out[k++] = '0';
    if (exponent > 100000000) exponent = 100000000; /* far beyond overflow / underflow */
    if (exponent < -100000000) exponent = -100000000;
    snprintf(out + k, size - k, "e%lld", exponent);
    return true;
}

/* strtod / strtof on a copy of the token (the input is not NUL-terminated). */
static bool parse_value_slow(const char *p, const char *end, nz_value_type_t vt, double *d,
                             float *f) {
    char token[MM_LONG_DIGITS + 64];
    size_t n = (size_t)(end - p);
    if (n == 0) return false;
    if (n >= MM_MAX_TOKEN) {
        if (!shorten_long_value(p, end, token, sizeof token)) return false;
        n = strlen(token);
    } else {
        memcpy(token, p, n);
        token[n] = '\0';
    }
    char *stop = NULL;
    if (vt == NZ_F32)
        *f = strtof(token, &stop);
    else
        *d = strtod(token, &stop);
    return stop == token + n;
}

/* Parse a decimal value token [p, end) into *d (double) or *f (float). Clinger's fast path when
 * it is exact, strtod / strtof otherwise; false if the token is not a number. */
static bool parse_value(const char *p, const char *end, nz_value_type_t vt, double *d, float *f) {
    const char *s = p;
    bool negative = false;
    if (s < end && (*s == '-' || *s == '+')) negative = *s++ == '-';
    uint64_t mantissa = 0;
    int significant = 0, exp10 = 0;
    bool any_digit = false, truncated = false;
    for (; s < end && (unsigned)(*s - '0') <= 9; s++) {
        any_digit = true;
        if (mantissa == 0 && *s == '0') continue;
        if (significant < 19) {
            mantissa = mantissa * 10 + (uint64_t)(*s - '0');
            significant++;
        } else {
            exp10++;
            truncated |= *s != '0';
        }
    }
    if (s < end && *s == '.') {
        s++;
        for (; s < end && (unsigned)(*s - '0') <= 9; s++) {
            any_digit = true;
            if (mantissa == 0 && *s == '0') {
                exp10--;
                continue;
            }
            if (significant < 19) {
                mantissa = mantissa * 10 + (uint64_t)(*s - '0');
                significant++;
                exp10--;
            } else {
                truncated |= *s != '0';
            }
        }
    }
    if (!any_digit) return parse_value_slow(p, end, vt, d, f); /* nan, inf, hex, garbage */
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        bool exp_negative = false;
        if (s < end && (*s == '-' || *s == '+')) exp_negative = *s++ == '-';
        if (s == end || (unsigned)(*s - '0') > 9) return false;
        int e = 0;
        for (; s < end && (unsigned)(*s - '0') <= 9; s++)
            if (e < 100000) e = e * 10 + (*s - '0');
        exp10 += exp_negative ? -e : e;
    }
    if (s != end) return false;
    if (mantissa == 0) {
        if (vt == NZ_F32)
            *f = negative ? -0.0f : 0.0f;
        else
            *d = negative ? -0.0 : 0.0;
        return true;
    }
    if (truncated || exp10 < -22 || exp10 > 22) return parse_value_slow(p, end, vt, d, f);
    double v;
    if (mantissa <= ((uint64_t)1 << 53)) {
        v = (double)mantissa;
        v = exp10 < 0 ? v / exact_powers_of_ten[-exp10] : v * exact_powers_of_ten[exp10];
    } else {
#if LDBL_MANT_DIG == 64 && FLT_EVAL_METHOD == 0
        /* 17 to 19 digits (every %.17g value): the mantissa and 10^|e| are exact in x87
         * extended precision, so one operation rounds once to 64 bits; rounding that to double
         * is correct unless it sits within one extended ulp of a double halfway point (low 11
         * of its 64 significand bits near 0x400), which goes to strtod. */
        long double x = (long double)mantissa;
        long double p10 = (long double)exact_powers_of_ten[exp10 < 0 ? -exp10 : exp10];
        x = exp10 < 0 ? x / p10 : x * p10;
        uint64_t significand;
        memcpy(&significand, &x, sizeof significand);
        uint32_t low = (uint32_t)(significand & 0x7ffu);
        if (low >= 0x3ffu && low <= 0x401u) return parse_value_slow(p, end, vt, d, f);
        v = (double)x;
#else
        return parse_value_slow(p, end, vt, d, f);
#endif
    }
    if (negative) v = -v;
    if (vt == NZ_F64) {
        *d = v;
        return true;
    }
    /* v is the correctly rounded double; (float)v is the correctly rounded float unless v lies
     * within one double ulp of a point halfway between two floats, where rounding twice could
     * differ from rounding once: those rare cases go to strtof. */
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    unsigned biased = (unsigned)((bits >> 52) & 0x7ff);
    uint32_t dropped = (uint32_t)(bits & 0x1fffffffu);
    if (biased >= 1023 - 126 && biased < 1023 + 128 &&
        (dropped < 0x0fffffffu || dropped > 0x10000001u)) {
        *f = (float)v;
        return true;
    }
    return parse_value_slow(p, end, vt, d, f);
}

/* ---- the header ---------------------------------------------------------------------------- */

static bool token_is(const char *p, const char *end, const char *word) {
    size_t n = strlen(word);
    return (size_t)(end - p) == n && strncasecmp(p, word, n) == 0;
}

static nz_status_t parse_banner(mm_source_t *src, mm_header_t *h, const char *line, size_t len) {
    const char *end = line + len, *p = line;
    const char *name = src->name;
    nz_context_t *ctx = src->ctx;
    const char *tok[5][2];
    int count = 0;
    p = skip_blanks(p, end);
    while (p < end) {
        if (count == 5)
            return nzi_error(ctx, NZ_ERR_PARSE, "%s:1: too many words in the banner", name);
        tok[count][0] = p;
        p = token_end(p, end);
        tok[count][1] = p;
        count++;
        p = skip_blanks(p, end);
    }
    if (count == 0 || !token_is(tok[0][0], tok[0][1], "%%MatrixMarket"))
        return nzi_error(ctx, NZ_ERR_PARSE,
                         "%s:1: not a Matrix Market file (the first line must start with "
                         "%%%%MatrixMarket)", name);
    if (count != 5)
        return nzi_error(ctx, NZ_ERR_PARSE,
                         "%s:1: the banner needs 4 words after %%%%MatrixMarket (object format "
                         "field symmetry), found %d", name, count - 1);
    if (!token_is(tok[1][0], tok[1][1], "matrix"))
        return nzi_error(ctx, NZ_ERR_PARSE, "%s:1: unsupported object '%.*s' (expected matrix)",
                         name, (int)(tok[1][1] - tok[1][0]), tok[1][0]);
    if (token_is(tok[2][0], tok[2][1], "coordinate"))
        h->format = MM_COORDINATE;
    else if (token_is(tok[2][0], tok[2][1], "array"))
        h->format = MM_ARRAY;
    else
        return nzi_error(ctx, NZ_ERR_PARSE,
                         "%s:1: unknown format '%.*s' (expected coordinate or array)", name,
                         (int)(tok[2][1] - tok[2][0]), tok[2][0]);
    bool complex = false;
    if (token_is(tok[3][0], tok[3][1], "real") || token_is(tok[3][0], tok[3][1], "double"))
        h->field = MM_REAL;
    else if (token_is(tok[3][0], tok[3][1], "integer"))
        h->field = MM_INTEGER;
    else if (token_is(tok[3][0], tok[3][1], "pattern"))
        h->field = MM_PATTERN;
    else if (token_is(tok[3][0], tok[3][1], "complex"))
        complex = true;
    else
        return nzi_error(ctx, NZ_ERR_PARSE,
                         "%s:1: unknown field '%.*s' (expected real, integer, pattern or complex)",
                         name, (int)(tok[3][1] - tok[3][0]), tok[3][0]);
    bool hermitian = false;
    if (token_is(tok[4][0], tok[4][1], "general"))
        h->symmetry = MM_GENERAL;
    else if (token_is(tok[4][0], tok[4][1], "symmetric"))
        h->symmetry = MM_SYMMETRIC;
    else if (token_is(tok[4][0], tok[4][1], "skew-symmetric"))
        h->symmetry = MM_SKEW;
    else if (token_is(tok[4][0], tok[4][1], "hermitian")) {
        h->symmetry = MM_SYMMETRIC;
        hermitian = true;
    } else
        return nzi_error(ctx, NZ_ERR_PARSE,
                         "%s:1: unknown symmetry '%.*s' (expected general, symmetric, "
                         "skew-symmetric or hermitian)", name, (int)(tok[4][1] - tok[4][0]),
                         tok[4][0]);
    if (complex)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s:1: complex matrices are not supported (real, integer or pattern only)",
                         name);
    if (h->field == MM_PATTERN && h->format == MM_ARRAY)
        return nzi_error(ctx, NZ_ERR_PARSE, "%s:1: an array file cannot have field pattern", name);
    if (h->field == MM_PATTERN && (h->symmetry == MM_SKEW || hermitian))
        return nzi_error(ctx, NZ_ERR_PARSE, "%s:1: a pattern matrix cannot be %s", name,
                         hermitian ? "hermitian" : "skew-symmetric");
    return NZ_SUCCESS;
}

static nz_status_t parse_size_line(mm_source_t *src, mm_header_t *h, const char *line,
                                   size_t len) {
    const char *end = line + len, *p = skip_blanks(line, end);
    const char *name = src->name;
    nz_context_t *ctx = src->ctx;
    long long ln = (long long)src->last_line;
    int want = h->format == MM_COORDINATE ? 3 : 2;
    const char *what[3] = {"row count", "column count", "entry count"};
    int64_t v[3] = {0, 0, 0};
    for (int k = 0; k < want; k++) {
        if (p == end)
            return nzi_error(ctx, NZ_ERR_PARSE, "%s:%lld: size line: missing %s (expected %s)",
                             name, ln, what[k],
                             want == 3 ? "rows columns entries" : "rows columns");
        const char *e = token_end(p, end);
        if (*p == '-')
            return nzi_error(ctx, NZ_ERR_PARSE, "%s:%lld: size line: negative %s '%.*s'", name,
                             ln, what[k], (int)(e - p), p);
        int rc = parse_u64_token(p, e, &v[k]);
        if (rc == 1)
            return nzi_error(ctx, NZ_ERR_PARSE, "%s:%lld: size line: %s '%.*s' is not an integer",
                             name, ln, what[k], (int)(e - p < 40 ? e - p : 40), p);
        if (rc == 2)
            return nzi_error(ctx, NZ_ERR_PARSE, "%s:%lld: size line: %s '%.*s' is too large",
                             name, ln, what[k], (int)(e - p < 40 ? e - p : 40), p);
        p = skip_blanks(e, end);
    }
    if (p != end)
        return nzi_error(ctx, NZ_ERR_PARSE, "%s:%lld: size line: unexpected '%.*s' after %d numbers",
                         name, ln, (int)(token_end(p, end) - p < 40 ? token_end(p, end) - p : 40),
                         p, want);
    h->rows = v[0];
    h->cols = v[1];
    h->size_line = src->last_line;
    if (h->rows > INT32_MAX || h->cols > INT32_MAX)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s:%lld: %lld x %lld exceeds the 2^31-1 row/column limit", name, ln,
                         (long long)h->rows, (long long)h->cols);
#ifdef NZI_IO_FUZZ_DIM_LIMIT
    /* a context with an explicit memory budget (fuzz_mm_budget) sees realistic dimensions */
    if (ctx->memory_budget == 0 &&
        (h->rows > NZI_IO_FUZZ_DIM_LIMIT || h->cols > NZI_IO_FUZZ_DIM_LIMIT))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s:%lld: dimensions over the fuzzing limit",
                         name, ln);
#endif
    if (h->symmetry != MM_GENERAL && h->rows != h->cols)
        return nzi_error(ctx, NZ_ERR_PARSE, "%s:%lld: a %s matrix must be square, not %lld x %lld",
                         name, ln, h->symmetry == MM_SKEW ? "skew-symmetric" : "symmetric",
                         (long long)h->rows, (long long)h->cols);
    int64_t n = h->rows;
    if (h->format == MM_COORDINATE) {
        h->entries = v[2];
        int64_t cells;
        if (!nzi_mul_overflow_i64(h->rows, h->cols, &cells) && h->entries > cells)
            return nzi_error(ctx, NZ_ERR_PARSE,
                             "%s:%lld: %lld entries cannot fit in a %lld x %lld matrix", name, ln,
                             (long long)h->entries, (long long)h->rows, (long long)h->cols);
    } else if (h->symmetry == MM_GENERAL) {
        h->entries = h->rows * h->cols; /* both <= 2^31 - 1: no overflow */
    } else if (h->symmetry == MM_SYMMETRIC) {
        h->entries = n * (n + 1) / 2;
    } else {
        h->entries = n > 0 ? n * (n - 1) / 2 : 0;
    }
    return NZ_SUCCESS;
}

/* Banner, comments and the size line. */
static nz_status_t parse_header(mm_source_t *src, mm_header_t *h) {
    const char *line = NULL;
    size_t len = 0;
    bool found = false;
    NZI_TRY(source_line(src, &line, &len, &found));
    if (!found) return nzi_error(src->ctx, NZ_ERR_PARSE, "%s:1: empty file", src->name);
    if (len >= 3 && (unsigned char)line[0] == 0xef && (unsigned char)line[1] == 0xbb &&
        (unsigned char)line[2] == 0xbf) {
        line += 3; /* UTF-8 byte order mark */
        len -= 3;
    }
    const char *nul = (const char *)memchr(line, '\0', len);
    if (nul != NULL) return nul_byte(src, 1, nul - line);
    NZI_TRY(parse_banner(src, h, line, len));
    for (;;) {
        NZI_TRY(source_line(src, &line, &len, &found));
        if (!found)
            return nzi_error(src->ctx, NZ_ERR_PARSE, "%s:%lld: file ends before the size line",
                             src->name, (long long)src->last_line);
        const char *p = skip_blanks(line, line + len);
        if (p == line + len || *p == '%') continue;
        nul = (const char *)memchr(line, '\0', len);
        if (nul != NULL) return nul_byte(src, src->last_line, nul - line);
        return parse_size_line(src, h, line, len);
    }
}

/* ---- the entries ------------------------------------------------------------------------- */

typedef struct mm_part {
    const char *begin, *end;
    int64_t lines;          /* newlines in the part */
    int64_t data_lines;     /* entry lines (not blank, not comment) */
    int64_t first_line;     /* line number of its first line */
    int64_t first_entry;    /* index of its first entry */
    int64_t error_line;     /* 0: none */
    int64_t long_line;      /* 1 + index within the part of the first over-long line; 0: none */
    const char *error_text, *error_end; /* the line of the error (to name a NUL byte in it) */
    nz_status_t error_status;
    char error[200];
} mm_part_t;

typedef struct mm_parse_job {
    const mm_header_t *h;
    mm_entries_t *e;
    nz_value_type_t value_type;
} mm_parse_job_t;

static void part_count(mm_part_t *part) {
    int64_t lines = 0, data = 0;
    const char *p = part->begin, *end = part->end;
    while (p < end) {
        const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p));
        const char *le = nl != NULL ? nl : end;
        if ((size_t)(le - p) > NZ_MM_MAX_LINE_BYTES && part->long_line == 0)
            part->long_line = lines + 1;
        const char *q = skip_blanks(p, le);
        if (q < le && *q != '%') data++;
        if (nl != NULL) lines++;
        p = le + 1;
    }
    part->lines = lines;
    part->data_lines = data;
}

#define PART_ERROR(status_, ...)                                                                \
    do {                                                                                        \
        part->error_status = (status_);                                                         \
        part->error_line = line;                                                                \
        part->error_text = p;                                                                   \
        part->error_end = le;                                                                   \
        snprintf(part->error, sizeof part->error, __VA_ARGS__);                                 \
        return;                                                                                 \
    } while (0)

static int clip(const char *p, const char *e) { return (int)(e - p < 40 ? e - p : 40); }

/* Parse one index token at *p: 1-based, in [1, limit]; stores the 0-based index. */
#define PARSE_INDEX(dst, what, limit)                                                           \
    do {                                                                                        \
        q = skip_blanks(q, le);                                                                 \
        if (q == le) PART_ERROR(NZ_ERR_PARSE, "missing %s", what);                              \
        const char *te = token_end(q, le);                                                      \
        int64_t ix = 0;                                                                         \
        int rc = *q == '-' ? 3 : parse_u64_token(q, te, &ix);                                   \
        if (rc == 1) PART_ERROR(NZ_ERR_PARSE, "%s '%.*s' is not an integer", what, clip(q, te), q); \
        if (rc != 0 || ix < 1 || ix > (limit))                                                  \
            PART_ERROR(NZ_ERR_PARSE, "%s %.*s out of range [1, %lld]", what, clip(q, te), q,    \
                       (long long)(limit));                                                     \
        dst = (int32_t)(ix - 1);                                                                \
        q = te;                                                                                 \
    } while (0)

static void part_parse(mm_part_t *part, const mm_parse_job_t *job) {
    const mm_header_t *h = job->h;
    mm_entries_t *e = job->e;
    const nz_value_type_t vt = job->value_type;
    const bool coordinate = h->format == MM_COORDINATE;
    const bool pattern = h->field == MM_PATTERN;
    int64_t line = part->first_line, index = part->first_entry;
    const char *p = part->begin, *end = part->end;
    while (p < end) {
        const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p));
        const char *le = nl != NULL ? nl : end;
        const char *q = skip_blanks(p, le);
        if (q < le && *q != '%') {
            if (index >= h->entries)
                PART_ERROR(NZ_ERR_PARSE, "more entries than the %lld declared on line %lld",
                           (long long)h->entries, (long long)h->size_line);
            if (coordinate) {
                int32_t r = 0, c = 0;
                PARSE_INDEX(r, "row index", h->rows);
                PARSE_INDEX(c, "column index", h->cols);
                if (h->symmetry == MM_SKEW && r == c)
                    PART_ERROR(NZ_ERR_PARSE,
                               "diagonal entry (%d, %d) in a skew-symmetric matrix", r + 1, c + 1);
                e->row_indices[index] = r;
                e->col_indices[index] = c;
            }
            if (!pattern) {
                q = skip_blanks(q, le);
                if (q == le) PART_ERROR(NZ_ERR_PARSE, "missing value");
                const char *te = token_end(q, le);
                double d = 0;
                float f = 0;
                if (!parse_value(q, te, vt, &d, &f))
                    PART_ERROR(NZ_ERR_PARSE, "cannot parse the value '%.*s'", clip(q, te), q);
                if (vt == NZ_F32)
                    ((float *)e->values)[index] = f;
                else
                    ((double *)e->values)[index] = d;
                q = te;
            }
            q = skip_blanks(q, le);
            if (q != le)
                PART_ERROR(NZ_ERR_PARSE, "unexpected '%.*s' after the entry", clip(q, token_end(q, le)), q);
            index++;
        }
        line++;
        p = le + 1;
    }
}
#undef PARSE_INDEX
#undef PART_ERROR

/* Grow the entry arrays to hold `need` entries (need <= h->entries). */
static nz_status_t entries_reserve(nz_context_t *ctx, const mm_header_t *h, mm_entries_t *e,
                                   nz_value_type_t vt, int64_t need) {
    nz_status_t status = NZ_SUCCESS;
    if (need <= e->capacity) return NZ_SUCCESS;
    int64_t cap = e->capacity > 0 ? e->capacity : 1024;
    while (cap < need) cap = cap > INT64_MAX / 2 ? need : cap * 2;
    if (cap > h->entries) cap = h->entries;
    int32_t *rows = NULL, *cols = NULL;
    void *values = NULL;
    bool coordinate = h->format == MM_COORDINATE;
    if (coordinate) {
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&rows, (size_t)cap, sizeof(int32_t),
                                  "Matrix Market row indices"));
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&cols, (size_t)cap, sizeof(int32_t),
                                  "Matrix Market column indices"));
    }
    if (h->field != MM_PATTERN)
        NZI_CHECK(nzi_alloc_array(ctx, &values, (size_t)cap, nzi_value_size(vt),
                                  "Matrix Market values"));
    if (e->count > 0) {
        if (coordinate) {
            memcpy(rows, e->row_indices, (size_t)e->count * sizeof(int32_t));
            memcpy(cols, e->col_indices, (size_t)e->count * sizeof(int32_t));
        }
        if (values != NULL) memcpy(values, e->values, (size_t)e->count * nzi_value_size(vt));
    }
    nzi_free(ctx, e->row_indices);
    nzi_free(ctx, e->col_indices);
    nzi_free(ctx, e->values);
    e->row_indices = rows;
    e->col_indices = cols;
    e->values = values;
    e->capacity = cap;
    return NZ_SUCCESS;
cleanup:
    nzi_free(ctx, rows);
    nzi_free(ctx, cols);
    nzi_free(ctx, values);
    return status;
}

static void entries_free(nz_context_t *ctx, mm_entries_t *e) {
    nzi_free(ctx, e->row_indices);
    nzi_free(ctx, e->col_indices);
    nzi_free(ctx, e->values);
    memset(e, 0, sizeof *e);
}

/* Parse text[begin, stop) (whole lines) into the entries, in parallel. */
static nz_status_t parse_block(mm_source_t *src, const mm_header_t *h, mm_entries_t *e,
                               nz_value_type_t vt, size_t stop) {
    nz_context_t *ctx = src->ctx;
    const char *block = src->text + src->begin;
    size_t size = stop - src->begin;
    mm_part_t parts[NZI_IO_MAX_THREADS];
    int nparts = nzi_io_threads(ctx, size);
    /* cut just after the first newline at or past equal byte offsets */
    const char *cut = block, *block_end = block + size;
    int count = 0;
    for (int t = 0; t < nparts && cut < block_end; t++) {
        const char *next = block_end;
        if (t + 1 < nparts) {
            const char *target = block + size / (size_t)nparts * (size_t)(t + 1);
            if (target < cut) target = cut;
            const char *nl = (const char *)memchr(target, '\n', (size_t)(block_end - target));
            next = nl != NULL ? nl + 1 : block_end;
        }
        memset(&parts[count], 0, sizeof parts[count]);
        parts[count].begin = cut;
        parts[count].end = next;
        count++;
        cut = next;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(count) schedule(static, 1) if (count > 1)
#endif
    for (int t = 0; t < count; t++) part_count(&parts[t]);
    int64_t line = src->line, index = e->count, total_lines = 0;
    for (int t = 0; t < count; t++) {
        parts[t].first_line = line;
        parts[t].first_entry = index;
        line += parts[t].lines;
        index += parts[t].data_lines;
        total_lines += parts[t].lines;
    }
    for (int t = 0; t < count; t++)
        if (parts[t].long_line != 0) return line_too_long(src, parts[t].first_line + parts[t].long_line - 1);
    int64_t need = index < h->entries ? index : h->entries;
    NZI_TRY(entries_reserve(ctx, h, e, vt, need));
    mm_parse_job_t job = {h, e, vt};
#ifdef _OPENMP
#pragma omp parallel for num_threads(count) schedule(static, 1) if (count > 1)
#endif
    for (int t = 0; t < count; t++) part_parse(&parts[t], &job);
    for (int t = 0; t < count; t++)
        if (parts[t].error_line != 0) {
            const char *nul = (const char *)memchr(parts[t].error_text, '\0',
                                                   (size_t)(parts[t].error_end - parts[t].error_text));
            if (nul != NULL) return nul_byte(src, parts[t].error_line, nul - parts[t].error_text);
            return nzi_error(ctx, parts[t].error_status, "%s:%lld: %s", src->name,
                             (long long)parts[t].error_line, parts[t].error);
        }
    e->count = need;
    src->line += total_lines;
    src->last_line = block[size - 1] == '\n' ? src->line - 1 : src->line;
    src->begin = stop;
    return NZ_SUCCESS;
}

/* All entry lines after the header. */
static nz_status_t parse_entries(mm_source_t *src, const mm_header_t *h, mm_entries_t *e,
                                 nz_value_type_t vt) {
    /* A line holds at least 2 bytes per array value and 4 per coordinate entry, so a hostile size
     * line cannot make an uncompressed input allocate more than it could fill. */
    if (src->kind != SRC_GZIP) {
        uint64_t bytes = (uint64_t)(src->length - src->begin) + src->input_left + 1;
        uint64_t most = bytes / (h->format == MM_ARRAY ? 2 : 4) + 1;
        int64_t first = (uint64_t)h->entries < most ? h->entries : (int64_t)most;
        NZI_TRY(entries_reserve(src->ctx, h, e, vt, first));
    }
    for (;;) {
        if (!src->eof) {
            NZI_TRY(source_fill(src));
        }
        size_t stop = src->length;
        if (!src->eof) {
            const char *start = src->text + src->begin;
            const char *last = NULL;
            for (const char *q = src->text + src->length; q > start; q--)
                if (q[-1] == '\n') {
                    last = q;
                    break;
                }
            if (last == NULL) {
                /* a line longer than the buffer: source_fill grows it, up to the line cap */
                if (src->length - src->begin > NZ_MM_MAX_LINE_BYTES)
                    return line_too_long(src, src->line);
                continue;
            }
            stop = (size_t)(last - src->text);
        }
        if (stop > src->begin) NZI_TRY(parse_block(src, h, e, vt, stop));
        if (src->eof && src->begin == src->length) break;
    }
    if (e->count < h->entries) {
        int64_t last = src->last_line > 0 ? src->last_line : 1;
        return nzi_error(src->ctx, NZ_ERR_PARSE,
                         "%s:%lld: file ends after %lld of the %lld entries declared on line %lld",
                         src->name, (long long)last, (long long)e->count, (long long)h->entries,
                         (long long)h->size_line);
    }
    return NZ_SUCCESS;
}

/* What reading the declared matrix would need at its peak, checked against the context's memory
 * budget before anything is allocated from the header: the parsed entries (row and column index
 * and value each) plus the result, a CSR matrix (8 (rows + 1) offset bytes, 4 + value size per
 * stored entry, twice for the mirrored half of symmetric files) or a dense array; array files
 * also pass through a dense array. */
static nz_status_t check_header_budget(mm_source_t *src, const mm_header_t *h, nz_value_type_t vt,
                                       bool dense) {
    double vs = (double)nzi_value_size(vt), entries = (double)h->entries;
    double cells = (double)h->rows * (double)h->cols;
    bool coordinate = h->format == MM_COORDINATE;
    double need = entries * ((coordinate ? 8.0 : 0.0) + (h->field == MM_PATTERN ? 0.0 : vs));
    if (dense) {
        need += cells * vs;
    } else if (coordinate) {
        need += 8.0 * ((double)h->rows + 1.0) +
                (h->symmetry != MM_GENERAL ? 2.0 : 1.0) * entries * (4.0 + vs);
    } else {
        need += cells * vs + 8.0 * ((double)h->rows + 1.0) + cells * (4.0 + vs);
    }
    char what[NZI_MESSAGE_SIZE / 2];
    snprintf(what, sizeof what, "%.200s:%lld: a %lld x %lld %s with %lld entries", src->name,
             (long long)h->size_line, (long long)h->rows, (long long)h->cols,
             dense ? "dense array" : "matrix", (long long)h->entries);
    return nzi_check_budget(src->ctx, need, what);
}

static nz_status_t mm_parse(mm_source_t *src, mm_header_t *h, mm_entries_t *e,
                            nz_value_type_t vt, bool dense) {
    NZI_TRY(parse_header(src, h));
    NZI_TRY(check_header_budget(src, h, vt, dense));
    return parse_entries(src, h, e, vt);
}

/* ---- building the outputs ------------------------------------------------------------------ */

/* Counting sort of the coordinate entries by row into a new CSR matrix, mirroring off-diagonal
 * entries of symmetric files (negated for skew-symmetric), then canonicalisation (sort within
 * rows, sum duplicates). Entries within a row keep their file order, so the usual row- or
 * column-sorted files need no sorting; O(entries + rows). */
static nz_status_t coordinate_to_csr(nz_context_t *ctx, nz_matrix_t **A, const mm_header_t *h,
                                     const mm_entries_t *e, nz_value_type_t vt) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    const int32_t *ri = e->row_indices, *ci = e->col_indices;
    const bool mirror = h->symmetry != MM_GENERAL;
    int64_t n = e->count, total = n;
    if (mirror)
        for (int64_t k = 0; k < n; k++) total += ri[k] != ci[k];
    NZI_CHECK(nzi_csr_alloc(ctx, &M, vt, h->rows, h->cols, total));
    int64_t *offsets = M->host.csr.row_offsets;
    memset(offsets, 0, ((size_t)h->rows + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < n; k++) {
        offsets[ri[k] + 1]++;
        if (mirror && ri[k] != ci[k]) offsets[ci[k] + 1]++;
    }
    for (int64_t i = 0; i < h->rows; i++) offsets[i + 1] += offsets[i];
    int32_t *cols = M->host.csr.col_indices;
    const double sign = h->symmetry == MM_SKEW ? -1.0 : 1.0;
#define SCATTER(T)                                                                              \
    do {                                                                                        \
        T *vals = (T *)M->host.csr.values;                                                      \
        const T *src = (const T *)e->values;                                                    \
        for (int64_t k = 0; k < n; k++) {                                                       \
            int32_t r = ri[k], c = ci[k];                                                       \
            T v = src != NULL ? src[k] : (T)1;                                                  \
            int64_t dst = offsets[r]++;                                                         \
            cols[dst] = c;                                                                      \
            vals[dst] = v;                                                                      \
            if (mirror && r != c) {                                                             \
                dst = offsets[c]++;                                                             \
                cols[dst] = r;                                                                  \
                vals[dst] = (T)(sign * v);                                                      \
            }                                                                                   \
        }                                                                                       \
    } while (0)
    if (vt == NZ_F32)
        SCATTER(float);
    else
        SCATTER(double);
#undef SCATTER
    for (int64_t i = h->rows; i > 0; i--) offsets[i] = offsets[i - 1];
    offsets[0] = 0;
    NZI_CHECK(nzi_csr_canonicalize(ctx, M));
    *A = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* Array entries (column-major, packed lower triangle for symmetric / skew-symmetric files) to a
 * full column-major rows x cols array. */
static nz_status_t array_to_dense(nz_context_t *ctx, void **dense, const mm_header_t *h,
                                  const mm_entries_t *e, nz_value_type_t vt) {
    size_t vs = nzi_value_size(vt);
    size_t cells;
    if (nzi_mul_overflow_size((size_t)h->rows, (size_t)h->cols, &cells))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "dense %lld x %lld array overflows",
                         (long long)h->rows, (long long)h->cols);
    void *full = NULL;
    NZI_TRY(nzi_alloc_array(ctx, &full, cells, vs, "dense Matrix Market array"));
    if (h->symmetry == MM_GENERAL) {
        if (cells > 0) memcpy(full, e->values, cells * vs);
    } else {
        int64_t n = h->rows, k = 0;
        double sign = h->symmetry == MM_SKEW ? -1.0 : 1.0;
        for (int64_t j = 0; j < n; j++) {
            if (h->symmetry == MM_SKEW) nzi_set(full, vt, j * n + j, 0.0);
            for (int64_t i = h->symmetry == MM_SKEW ? j + 1 : j; i < n; i++, k++) {
                double v = nzi_get(e->values, vt, k);
                nzi_set(full, vt, j * n + i, v);
                if (i != j) nzi_set(full, vt, i * n + j, sign * v);
            }
        }
    }
    *dense = full;
    return NZ_SUCCESS;
}

/* A full column-major array to CSR with every entry stored (the diagonal of skew-symmetric files
 * left out). */
static nz_status_t dense_to_csr(nz_context_t *ctx, nz_matrix_t **A, const mm_header_t *h,
                                const void *dense, nz_value_type_t vt) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    bool skip_diagonal = h->symmetry == MM_SKEW;
    int64_t rows = h->rows, cols = h->cols;
    int64_t total = rows * cols - (skip_diagonal ? rows : 0);
    NZI_CHECK(nzi_csr_alloc(ctx, &M, vt, rows, cols, total));
    int64_t k = 0;
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++) {
            if (skip_diagonal && i == j) continue;
            M->host.csr.col_indices[k] = (int32_t)j;
            nzi_set(M->host.csr.values, vt, k, nzi_get(dense, vt, j * rows + i));
            k++;
        }
        M->host.csr.row_offsets[i + 1] = k;
    }
    *A = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* Coordinate entries summed into a zeroed full column-major array (symmetric ones mirrored). */
static nz_status_t coordinate_to_dense(nz_context_t *ctx, void **dense, const mm_header_t *h,
                                       const mm_entries_t *e, nz_value_type_t vt) {
    size_t cells;
    if (nzi_mul_overflow_size((size_t)h->rows, (size_t)h->cols, &cells))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "dense %lld x %lld array overflows",
                         (long long)h->rows, (long long)h->cols);
#ifdef NZI_IO_FUZZ_DIM_LIMIT
    if (ctx->memory_budget == 0 && cells > (size_t)NZI_IO_FUZZ_DIM_LIMIT * 16)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "dense array over the fuzzing limit");
#endif
    void *full = nzi_calloc(ctx, cells, nzi_value_size(vt));
    if (full == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate a dense %lld x %lld array",
                         (long long)h->rows, (long long)h->cols);
    int64_t rows = h->rows;
    double sign = h->symmetry == MM_SKEW ? -1.0 : 1.0;
    for (int64_t k = 0; k < e->count; k++) {
        int64_t r = e->row_indices[k], c = e->col_indices[k];
        double v = e->values != NULL ? nzi_get(e->values, vt, k) : 1.0;
        nzi_set(full, vt, c * rows + r, nzi_get(full, vt, c * rows + r) + v);
        if (h->symmetry != MM_GENERAL && r != c)
            nzi_set(full, vt, r * rows + c, nzi_get(full, vt, r * rows + c) + sign * v);
    }
    *dense = full;
    return NZ_SUCCESS;
}

/* ---- public entry points ------------------------------------------------------------------ */

static nz_status_t check_read_args(nz_context_t *ctx, const void *out, const void *input,
                                   nz_value_type_t vt, const char *what) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (out == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: output is NULL", what);
    if (input == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: input is NULL", what);
    if (!nzi_valid_value_type(vt))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: invalid value type %d", what, (int)vt);
    return NZ_SUCCESS;
}

static void source_init(mm_source_t *src, nz_context_t *ctx, const char *name) {
    memset(src, 0, sizeof *src);
    src->ctx = ctx;
    src->name = name;
    src->fd = -1;
    src->line = 1;
}

/* Parse the whole input and build a CSR matrix. */
static nz_status_t read_sparse(mm_source_t *src, nz_matrix_t **A, nz_value_type_t vt) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = src->ctx;
    mm_header_t h;
    mm_entries_t e;
    void *dense = NULL;
    memset(&h, 0, sizeof h);
    memset(&e, 0, sizeof e);
    NZI_CHECK(mm_parse(src, &h, &e, vt, false));
    source_close(src);
    source_init(src, ctx, src->name);
    if (h.format == MM_COORDINATE) {
        NZI_CHECK(coordinate_to_csr(ctx, A, &h, &e, vt));
    } else {
        NZI_CHECK(array_to_dense(ctx, &dense, &h, &e, vt));
        entries_free(ctx, &e);
        NZI_CHECK(dense_to_csr(ctx, A, &h, dense, vt));
    }
cleanup:
    nzi_free(ctx, dense);
    entries_free(ctx, &e);
    return status;
}

nz_status_t nz_mm_read(nz_context_t *ctx, nz_matrix_t **A, const char *path,
                       nz_value_type_t value_type) {
    NZI_TRY(check_read_args(ctx, A, path, value_type, "nz_mm_read"));
    nz_status_t status = NZ_SUCCESS;
    mm_source_t src;
    source_init(&src, ctx, path);
    NZI_CHECK(source_open_file(&src, path));
    NZI_CHECK(read_sparse(&src, A, value_type));
cleanup:
    source_close(&src);
    return status;
}

nz_status_t nz_mm_read_buffer(nz_context_t *ctx, nz_matrix_t **A, const char *data, size_t size,
                              const char *name, nz_value_type_t value_type) {
    NZI_TRY(check_read_args(ctx, A, size > 0 ? (const void *)data : (const void *)"", value_type,
                            "nz_mm_read_buffer"));
    if (data == NULL) data = "";
    nz_status_t status = NZ_SUCCESS;
    mm_source_t src;
    source_init(&src, ctx, name != NULL ? name : "<buffer>");
    NZI_CHECK(source_open_memory(&src, data, size));
    NZI_CHECK(read_sparse(&src, A, value_type));
cleanup:
    source_close(&src);
    return status;
}

nz_status_t nz_mm_read_dense(nz_context_t *ctx, void **data, int64_t *rows, int64_t *cols,
                             const char *path, nz_value_type_t value_type) {
    NZI_TRY(check_read_args(ctx, data, path, value_type, "nz_mm_read_dense"));
    if (rows == NULL || cols == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_mm_read_dense: rows or cols is NULL");
    nz_status_t status = NZ_SUCCESS;
    mm_source_t src;
    mm_header_t h;
    mm_entries_t e;
    void *dense = NULL;
    memset(&h, 0, sizeof h);
    memset(&e, 0, sizeof e);
    source_init(&src, ctx, path);
    NZI_CHECK(source_open_file(&src, path));
    NZI_CHECK(mm_parse(&src, &h, &e, value_type, true));
    if (h.format == MM_ARRAY)
        NZI_CHECK(array_to_dense(ctx, &dense, &h, &e, value_type));
    else
        NZI_CHECK(coordinate_to_dense(ctx, &dense, &h, &e, value_type));
    *rows = h.rows;
    *cols = h.cols;
    *data = dense;
    dense = NULL;
cleanup:
    nzi_free(ctx, dense);
    entries_free(ctx, &e);
    source_close(&src);
    return status;
}

bool nzi_io_has_suffix(const char *path, const char *suffix) {
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcasecmp(path + n - m, suffix) == 0;
}
