/* mm_entries.c: Matrix Market numbers and the parallel two-pass parse of the entry lines. */
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

/* ---- numbers --------------------------------------------------------------------------------- */

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

void nzi_mm_entries_free(nz_context_t *ctx, mm_entries_t *e) {
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
        if (parts[t].long_line != 0) return nzi_mm_line_too_long(src, parts[t].first_line + parts[t].long_line - 1);
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
            if (nul != NULL) return nzi_mm_nul_byte(src, parts[t].error_line, nul - parts[t].error_text);
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
            NZI_TRY(nzi_mm_source_fill(src));
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
                    return nzi_mm_line_too_long(src, src->line);
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

nz_status_t nzi_mm_parse(mm_source_t *src, mm_header_t *h, mm_entries_t *e,
                            nz_value_type_t vt, bool dense) {
    NZI_TRY(nzi_mm_parse_header(src, h));
    NZI_TRY(check_header_budget(src, h, vt, dense));
    return parse_entries(src, h, e, vt);
}
