/* mm_header.c: the Matrix Market banner and size line. */
#include "mm_internal.h"

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
nz_status_t nzi_mm_parse_header(mm_source_t *src, mm_header_t *h) {
    const char *line = NULL;
    size_t len = 0;
    bool found = false;
    NZI_TRY(nzi_mm_source_line(src, &line, &len, &found));
    if (!found) return nzi_error(src->ctx, NZ_ERR_PARSE, "%s:1: empty file", src->name);
    if (len >= 3 && (unsigned char)line[0] == 0xef && (unsigned char)line[1] == 0xbb &&
        (unsigned char)line[2] == 0xbf) {
        line += 3; /* UTF-8 byte order mark */
        len -= 3;
    }
    const char *nul = (const char *)memchr(line, '\0', len);
    if (nul != NULL) return nzi_mm_nul_byte(src, 1, nul - line);
    NZI_TRY(parse_banner(src, h, line, len));
    for (;;) {
        NZI_TRY(nzi_mm_source_line(src, &line, &len, &found));
        if (!found)
            return nzi_error(src->ctx, NZ_ERR_PARSE, "%s:%lld: file ends before the size line",
                             src->name, (long long)src->last_line);
        const char *p = skip_blanks(line, line + len);
        if (p == line + len || *p == '%') continue;
        nul = (const char *)memchr(line, '\0', len);
        if (nul != NULL) return nzi_mm_nul_byte(src, src->last_line, nul - line);
        return parse_size_line(src, h, line, len);
    }
}
