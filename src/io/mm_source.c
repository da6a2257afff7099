/* mm_source.c: Matrix Market input in large blocks (plain file, gzip, memory) and the header's lines. */
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
/* The next block of a compressed file into zin, as the inflater's input (zin_eof once the file
 * is exhausted). */
static nz_status_t source_read_compressed(mm_source_t *src) {
    size_t got = 0;
    NZI_TRY(source_read_fd(src, src->zin, src->zin_capacity, &got));
    if (got == 0) src->zin_eof = true;
    src->zs.next_in = src->zin;
    src->zs.avail_in = (uInt)got;
    return NZ_SUCCESS;
}

/* More compressed input for the inflater (the next piece of the buffer, or the next block of the
 * file) once it has consumed what it had; nothing once the input is exhausted. */
static nz_status_t source_next_input(mm_source_t *src) {
    z_stream *zs = &src->zs;
    if (zs->avail_in > 0) return NZ_SUCCESS;
    if (src->zmem != NULL) {
        size_t n = src->zmem_left > UINT32_MAX ? UINT32_MAX : src->zmem_left;
        zs->next_in = (Bytef *)(uintptr_t)src->zmem;
        zs->avail_in = (uInt)n;
        src->zmem += n;
        src->zmem_left -= n;
    } else if (!src->zin_eof) {
        NZI_TRY(source_read_compressed(src));
    }
    return NZ_SUCCESS;
}

/* After the last gzip member, zero bytes (the padding of tapes and fixed-size blocks) end the
 * data, as gzip -d accepts them; any non-zero byte after them is refused, as is anything that is
 * neither zeros nor a gzip member (inflateReset then fails on its header). Consumes the rest. */
static nz_status_t source_zero_padding(mm_source_t *src) {
    z_stream *zs = &src->zs;
    uint64_t offset = 0;
    for (;;) {
        for (uInt k = 0; k < zs->avail_in; k++)
            if (zs->next_in[k] != 0)
                return nzi_error(src->ctx, NZ_ERR_PARSE,
                                 "%s: non-zero byte 0x%02x after the gzip data's zero padding "
                                 "(%llu zero bytes): trailing garbage, not a gzip member",
                                 src->name,
                                 (unsigned)zs->next_in[k], (unsigned long long)(offset + k));
        offset += zs->avail_in;
        zs->avail_in = 0;
        NZI_TRY(source_next_input(src));
        if (zs->avail_in == 0) break;
    }
    src->eof = true;
    return NZ_SUCCESS;
}

/* Inflate into text[length, capacity) until it is full or the input ends. Concatenated gzip
 * members are read as one stream and zero padding after the last one is skipped (as gzip -d
 * does: source_zero_padding). */
static nz_status_t source_inflate(mm_source_t *src) {
    z_stream *zs = &src->zs;
    for (;;) {
        if (src->length == src->capacity) return NZ_SUCCESS;
        NZI_TRY(source_next_input(src));
        bool input_done = zs->avail_in == 0 && (src->zmem != NULL ? src->zmem_left == 0 : src->zin_eof);
        size_t room = src->capacity - src->length;
        if (room > UINT32_MAX) room = UINT32_MAX;
        zs->next_out = (Bytef *)src->buffer + src->length;
        zs->avail_out = (uInt)room;
        int rc = inflate(zs, Z_NO_FLUSH);
        src->length += room - zs->avail_out;
        if (rc == Z_STREAM_END) {
            NZI_TRY(source_next_input(src));
            if (zs->avail_in == 0) {
                src->eof = true;
                return NZ_SUCCESS;
            }
            if (zs->next_in[0] == 0) return source_zero_padding(src); /* no member starts so */
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
nz_status_t nzi_mm_source_fill(mm_source_t *src) {
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

#ifdef NZ_HAVE_ZLIB
/* The text buffer of an inflated input of `compressed` bytes: MM_TEXT_CHUNK, or eight times the
 * compressed size (at least 4 KB) when that is smaller; then its first block. */
static nz_status_t gzip_text_start(mm_source_t *src, uint64_t compressed) {
    src->capacity = MM_TEXT_CHUNK;
    if ((uint64_t)src->capacity / 8 > compressed)
        src->capacity = compressed * 8 < 4096 ? 4096 : (size_t)(compressed * 8);
    NZI_TRY(nzi_alloc_array(src->ctx, (void **)&src->buffer, src->capacity, 1,
                            "Matrix Market text buffer"));
    src->text = src->buffer;
    return nzi_mm_source_fill(src);
}
#else
static nz_status_t gzip_unavailable(mm_source_t *src) {
    return nzi_error(src->ctx, NZ_ERR_UNSUPPORTED,
                     "%s: gzip-compressed input, but Nonzero was built without zlib", src->name);
}
#endif

nz_status_t nzi_mm_source_open_memory(mm_source_t *src, const char *data, size_t size) {
    if (is_gzip_magic(data, size)) {
#ifdef NZ_HAVE_ZLIB
        NZI_TRY(source_start_gzip(src));
        src->zmem = (const unsigned char *)data;
        src->zmem_left = size;
        src->input_bytes = size;
        return gzip_text_start(src, size);
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

nz_status_t nzi_mm_source_open_file(mm_source_t *src, const char *path) {
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
    NZI_TRY(nzi_mm_source_fill(src));
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
        return gzip_text_start(src, size);
#else
        return gzip_unavailable(src);
#endif
    }
    return NZ_SUCCESS;
}

void nzi_mm_source_close(mm_source_t *src) {
#ifdef NZ_HAVE_ZLIB
    if (src->zs_ready) inflateEnd(&src->zs);
    nzi_free(src->ctx, src->zin);
#endif
    nzi_free(src->ctx, src->buffer);
    if (src->fd >= 0) close(src->fd);
}

nz_status_t nzi_mm_line_too_long(mm_source_t *src, int64_t line) {
    return nzi_error(src->ctx, NZ_ERR_PARSE,
                     "%s:%lld: line longer than %zu bytes (NZ_MM_MAX_LINE_BYTES): not a Matrix "
                     "Market file",
                     src->name, (long long)line, (size_t)NZ_MM_MAX_LINE_BYTES);
}

/* A parse error on a line holding a NUL byte is reported as the NUL (the text after it is not
 * shown by %s, so the plain message would quote a valid-looking token). */
nz_status_t nzi_mm_nul_byte(mm_source_t *src, int64_t line, ptrdiff_t column) {
    return nzi_error(src->ctx, NZ_ERR_PARSE,
                     "%s:%lld: NUL byte at column %lld: not a Matrix Market text file",
                     src->name, (long long)line, (long long)column + 1);
}

/* The next line of the header: [*line, *line + *len) without its newline, valid until the next
 * call; *found is false at the end of the input. */
nz_status_t nzi_mm_source_line(mm_source_t *src, const char **line, size_t *len, bool *found) {
    for (;;) {
        const char *start = src->text + src->begin;
        size_t avail = src->length - src->begin;
        const char *nl = avail > 0 ? (const char *)memchr(start, '\n', avail) : NULL;
        size_t length = nl != NULL ? (size_t)(nl - start) : avail;
        if (length > NZ_MM_MAX_LINE_BYTES) return nzi_mm_line_too_long(src, src->line);
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
        NZI_TRY(nzi_mm_source_fill(src));
    }
}
