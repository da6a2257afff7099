/* context.c: the context handle, status strings, last-error messages and the counting allocator. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include "nzi.h"
#include "backend.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

const char *nz_version(void) { return NZ_VERSION_STRING; }

const char *nz_status_string(nz_status_t status) {
    switch (status) {
    case NZ_SUCCESS: return "success";
    case NZ_MAX_ITERATIONS: return "stopped at the iteration limit";
    case NZ_STAGNATED: return "stagnated above the tolerance (true residual no longer decreases)";
    case NZ_ERR_NULL_ARGUMENT: return "a required pointer argument is NULL";
    case NZ_ERR_INVALID_ARGUMENT: return "invalid argument";
    case NZ_ERR_INVALID_HANDLE: return "invalid, freed or foreign handle";
    case NZ_ERR_DIMENSION_MISMATCH: return "dimension mismatch";
    case NZ_ERR_WRONG_LOCATION: return "object is in the wrong memory (host vs device)";
    case NZ_ERR_INVALID_MATRIX: return "invalid matrix structure";
    case NZ_ERR_NOT_SORTED: return "column indices are not sorted";
    case NZ_ERR_UNSUPPORTED: return "unsupported";
    case NZ_ERR_TOO_MUCH_PADDING: return "format would need too much padding";
    case NZ_ERR_NO_DEVICE: return "no CUDA device available";
    case NZ_ERR_OUT_OF_MEMORY: return "out of host memory";
    case NZ_ERR_DEVICE_OUT_OF_MEMORY: return "out of device memory";
    case NZ_ERR_OVERFLOW: return "size overflow";
    case NZ_ERR_DEVICE: return "CUDA error";
    case NZ_ERR_IO: return "I/O error";
    case NZ_ERR_PARSE: return "parse error";
    case NZ_ERR_BREAKDOWN: return "solver breakdown";
    }
    return "unknown status";
}

nz_status_t nzi_error(nz_context_t *ctx, nz_status_t status, const char *fmt, ...) {
    if (ctx != NULL && ctx->magic == NZI_CONTEXT_MAGIC) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->message, sizeof ctx->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

void nzi_clear_error(nz_context_t *ctx) {
    if (ctx != NULL && ctx->magic == NZI_CONTEXT_MAGIC) ctx->message[0] = '\0';
}

nz_status_t nzi_check_context(const nz_context_t *ctx) {
    if (ctx == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (ctx->magic != NZI_CONTEXT_MAGIC) return NZ_ERR_INVALID_HANDLE;
    return NZ_SUCCESS;
}

nz_status_t nz_context_create(nz_context_t **ctx) {
    if (ctx == NULL) return NZ_ERR_NULL_ARGUMENT;
    nz_context_t *c = (nz_context_t *)calloc(1, sizeof *c);
    if (c == NULL) return NZ_ERR_OUT_OF_MEMORY;
    c->magic = NZI_CONTEXT_MAGIC;
    c->device = -1;
    nz_tunables_default(&c->tunables);
    snprintf(c->device_name, sizeof c->device_name, "cpu");
    *ctx = c;
    return NZ_SUCCESS;
}

nz_status_t nz_context_destroy(nz_context_t **ctx) {
    if (ctx == NULL || *ctx == NULL) return NZ_SUCCESS;
    nz_context_t *c = *ctx;
    if (c->magic != NZI_CONTEXT_MAGIC) return NZ_ERR_INVALID_HANDLE;
    if (c->cuda != NULL) nzi_backend_get(NZ_BACKEND_CUDA)->context_release(c);
    c->magic = NZI_DEAD_MAGIC;
    free(c);
    *ctx = NULL;
    return NZ_SUCCESS;
}

nz_status_t nz_context_set_device(nz_context_t *ctx, int device, void *stream) {
    NZI_TRY(nzi_check_context(ctx));
    if (device < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "device index %d is negative", device);
    const nzi_backend_t *device_backend = nzi_backend_get(NZ_BACKEND_CUDA);
    if (ctx->cuda != NULL) device_backend->context_release(ctx);
    return device_backend->context_bind(ctx, device, stream);
}

int nz_device_count(void) { return nzi_backend_get(NZ_BACKEND_CUDA)->device_count(); }

const char *nz_context_device_name(const nz_context_t *ctx) {
    if (nzi_check_context(ctx) != NZ_SUCCESS) return "invalid context";
    return ctx->device_name;
}

/* Online CPUs, read once (sysconf reads /sys on every call, too slow for every kernel); 0 until
 * read. Racing first readers store the same value. */
static _Atomic int online_cpus;

int nzi_thread_limit(void) {
    int n = atomic_load_explicit(&online_cpus, memory_order_relaxed);
    if (n == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online < 1 ? 1 : online > NZ_MAX_THREADS ? NZ_MAX_THREADS : (int)online;
        atomic_store_explicit(&online_cpus, n, memory_order_relaxed);
    }
    return n;
}

int nzi_resolve_threads(int threads) {
#ifdef _OPENMP
    if (threads <= 0) threads = omp_get_max_threads();
    const int limit = nzi_thread_limit();
    return threads < 1 ? 1 : threads > limit ? limit : threads;
#else
    (void)threads;
    return 1;
#endif
}

nz_status_t nz_context_set_threads(nz_context_t *ctx, int threads) {
    NZI_TRY(nzi_check_context(ctx));
    if (threads < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "thread count %d is negative", threads);
    if (threads > NZ_MAX_THREADS)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "thread count %d is above NZ_MAX_THREADS (%d)", threads, NZ_MAX_THREADS);
    /* more threads than CPUs never speeds a kernel up, and libgomp exits the process when it
     * cannot create them (an address-space limit): clamp to what the machine runs */
    ctx->threads = threads > nzi_thread_limit() ? nzi_thread_limit() : threads;
    return NZ_SUCCESS;
}

nz_status_t nz_context_get_threads(const nz_context_t *ctx, int *threads) {
    NZI_TRY(nzi_check_context(ctx));
    if (threads == NULL) return NZ_ERR_NULL_ARGUMENT;
    *threads = nzi_context_threads(ctx);
    return NZ_SUCCESS;
}

nz_status_t nz_context_set_memory_budget(nz_context_t *ctx, size_t bytes) {
    NZI_TRY(nzi_check_context(ctx));
    ctx->memory_budget = bytes;
    return NZ_SUCCESS;
}

size_t nz_context_memory_budget(const nz_context_t *ctx) {
    if (nzi_check_context(ctx) != NZ_SUCCESS) return 0;
    if (ctx->memory_budget != 0) return ctx->memory_budget;
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return SIZE_MAX; /* unknown: no limit */
    double bytes = (double)pages * (double)page_size * 0.75;
    return bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

/* "1.5 GiB" */
static void format_bytes(char *out, size_t size, double bytes) {
    const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 6) {
        bytes /= 1024.0;
        u++;
    }
    snprintf(out, size, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
}

nz_status_t nzi_check_budget(nz_context_t *ctx, double bytes, const char *what) {
    size_t budget = nz_context_memory_budget(ctx);
    if (budget == SIZE_MAX || bytes <= (double)budget) return NZ_SUCCESS;
    char need[32], have[32];
    format_bytes(need, sizeof need, bytes);
    format_bytes(have, sizeof have, (double)budget);
    return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                     "%s would need %s (%.0f bytes), more than the memory budget of %s; raise it "
                     "with nz_context_set_memory_budget() or nz --memory-budget BYTES",
                     what, need, bytes, have);
}

nz_status_t nz_context_set_error(nz_context_t *ctx, nz_status_t status, const char *message) {
    NZI_TRY(nzi_check_context(ctx));
    return nzi_error(ctx, status, "%s", message != NULL ? message : "");
}

const char *nz_context_last_error(const nz_context_t *ctx) {
    if (ctx == NULL) return "context is NULL";
    if (ctx->magic != NZI_CONTEXT_MAGIC) return "invalid context handle";
    return ctx->message;
}

nz_status_t nz_context_alloc_stats(const nz_context_t *ctx, nz_alloc_stats_t *stats) {
    NZI_TRY(nzi_check_context(ctx));
    if (stats == NULL) return NZ_ERR_NULL_ARGUMENT;
    stats->live_blocks = ctx->live_blocks;
    stats->live_bytes = ctx->live_bytes;
    stats->total_allocs = ctx->total_allocs;
    stats->failed_allocs = ctx->failed_allocs;
    stats->peak_device_bytes = ctx->peak_device_bytes;
    return NZ_SUCCESS;
}

nz_status_t nz_context_fail_alloc_after(nz_context_t *ctx, int64_t fail_after) {
    NZI_TRY(nzi_check_context(ctx));
    if (fail_after < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "fail_after %lld is negative",
                         (long long)fail_after);
    ctx->fail_countdown = fail_after;
    return NZ_SUCCESS;
}

/* ---- the counting allocator ----------------------------------------------------------------
 * Every host block carries a 16-byte header holding its size, so frees are counted exactly and
 * alignment stays at 16 bytes. Injection: fail_countdown counts allocations down to the one that
 * fails, after which injection is off again (SuiteSparse's brutal-malloc loop re-arms it). */

typedef struct nzi_block_header {
    size_t bytes;
    size_t magic;
} nzi_block_header_t;
#define NZI_BLOCK_MAGIC ((size_t)0x4e5a424cu)

bool nzi_account_alloc(nz_context_t *ctx, size_t bytes, bool device) {
    ctx->total_allocs++;
    if (ctx->fail_countdown > 0 && --ctx->fail_countdown == 0) {
        ctx->failed_allocs++;
        return false;
    }
    ctx->live_blocks++;
    ctx->live_bytes += (int64_t)bytes;
    if (device) {
        ctx->device_bytes += (int64_t)bytes;
        if (ctx->device_bytes > ctx->peak_device_bytes) ctx->peak_device_bytes = ctx->device_bytes;
    }
    return true;
}

void nzi_account_free(nz_context_t *ctx, size_t bytes, bool device) {
    ctx->live_blocks--;
    ctx->live_bytes -= (int64_t)bytes;
    if (device) ctx->device_bytes -= (int64_t)bytes;
}

/* Large blocks ask Linux for transparent huge pages (where the system leaves that to madvise, as
 * NumPy does for its arrays): a freshly mapped 64 MB output then takes 32 page faults instead of
 * 16384, which on a virtual machine is most of the cost of touching it the first time. Only the
 * whole 2 MB pages inside the block are advised; failure is harmless and ignored. */
#define NZI_HUGE_PAGE_BYTES ((size_t)2 << 20)
#define NZI_HUGE_ADVICE_MIN ((size_t)4 << 20)
static void advise_huge(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes < NZI_HUGE_ADVICE_MIN) return;
    uintptr_t begin = ((uintptr_t)p + NZI_HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(NZI_HUGE_PAGE_BYTES - 1);
    uintptr_t end = ((uintptr_t)p + bytes) & ~(uintptr_t)(NZI_HUGE_PAGE_BYTES - 1);
    if (end > begin) (void)madvise((void *)begin, (size_t)(end - begin), MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

void *nzi_malloc(nz_context_t *ctx, size_t bytes) {
    if (bytes == 0) bytes = 1;
    if (bytes > SIZE_MAX - sizeof(nzi_block_header_t)) {
        ctx->failed_allocs++;
        return NULL;
    }
    if (!nzi_account_alloc(ctx, bytes, false)) return NULL;
    nzi_block_header_t *h = (nzi_block_header_t *)malloc(sizeof *h + bytes);
    if (h == NULL) {
        nzi_account_free(ctx, bytes, false);
        ctx->failed_allocs++;
        return NULL;
    }
    h->bytes = bytes;
    h->magic = NZI_BLOCK_MAGIC;
    advise_huge(h + 1, bytes);
    return h + 1;
}

void *nzi_calloc(nz_context_t *ctx, size_t count, size_t size) {
    size_t bytes;
    if (nzi_mul_overflow_size(count, size, &bytes)) {
        ctx->failed_allocs++;
        return NULL;
    }
    void *p = nzi_malloc(ctx, bytes);
    if (p != NULL) memset(p, 0, bytes == 0 ? 1 : bytes);
    return p;
}

/* Grow or shrink a block from nzi_malloc, keeping its contents (up to the smaller size). Counted
 * as one allocation (failure injection included): on failure NULL is returned and the old block is
 * untouched. Large blocks are mmap'ed by the C library, whose realloc then remaps pages instead of
 * copying them, so growing an array of C panel by panel costs no copy. */
void *nzi_realloc(nz_context_t *ctx, void *ptr, size_t bytes) {
    if (ptr == NULL) return nzi_malloc(ctx, bytes);
    if (bytes == 0) bytes = 1;
    nzi_block_header_t *h = (nzi_block_header_t *)ptr - 1;
    const size_t old = h->bytes;
    if (bytes > SIZE_MAX - sizeof(nzi_block_header_t)) {
        ctx->failed_allocs++;
        return NULL;
    }
    if (!nzi_account_alloc(ctx, bytes, false)) return NULL;
    nzi_block_header_t *g = (nzi_block_header_t *)realloc(h, sizeof *g + bytes);
    if (g == NULL) {
        nzi_account_free(ctx, bytes, false);
        ctx->failed_allocs++;
        return NULL;
    }
    nzi_account_free(ctx, old, false);
    g->bytes = bytes;
    if (bytes > old) advise_huge(g + 1, bytes);
    return g + 1;
}

int nzi_context_threads(const nz_context_t *ctx) { return nzi_resolve_threads(ctx->threads); }

void nzi_parallel_memcpy_threads(void *dst, const void *src, size_t bytes, int threads) {
#ifdef _OPENMP
    if (threads <= 0) threads = omp_get_max_threads();
#else
    threads = 1;
#endif
    if (threads <= 1 || bytes < ((size_t)1 << 20)) {
        if (bytes > 0) memcpy(dst, src, bytes);
        return;
    }
    /* ceil(bytes / threads), rounded up to whole pages: the chunks cover every byte */
    const size_t chunk = ((bytes + (size_t)threads - 1) / (size_t)threads + 4095) & ~(size_t)4095;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; t++) {
        const size_t begin = (size_t)t * chunk;
        if (begin < bytes) {
            const size_t len = bytes - begin < chunk ? bytes - begin : chunk;
            memcpy((unsigned char *)dst + begin, (const unsigned char *)src + begin, len);
        }
    }
}

void nzi_parallel_memcpy(const nz_context_t *ctx, void *dst, const void *src, size_t bytes) {
    int threads = bytes >= ((size_t)8 << 20) ? nzi_context_threads(ctx) : 1;
    if (threads > 8) threads = 8;
    nzi_parallel_memcpy_threads(dst, src, bytes, threads);
}

void nzi_free(nz_context_t *ctx, void *ptr) {
    if (ptr == NULL) return;
    nzi_block_header_t *h = (nzi_block_header_t *)ptr - 1;
    nzi_account_free(ctx, h->bytes, false);
    h->magic = 0;
    free(h);
}

nz_status_t nzi_alloc_array(nz_context_t *ctx, void **ptr, size_t count, size_t size,
                            const char *what) {
    size_t bytes;
    if (nzi_mul_overflow_size(count, size, &bytes))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: %zu x %zu bytes overflows", what, count, size);
    void *p = nzi_malloc(ctx, bytes);
    if (p == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", what, bytes);
    *ptr = p;
    return NZ_SUCCESS;
}

nz_status_t nz_malloc(nz_context_t *ctx, void **ptr, size_t bytes) {
    NZI_TRY(nzi_check_context(ctx));
    if (ptr == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_malloc: ptr is NULL");
    void *p = nzi_malloc(ctx, bytes);
    if (p == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "nz_malloc: cannot allocate %zu bytes", bytes);
    *ptr = p;
    return NZ_SUCCESS;
}

nz_status_t nz_free(nz_context_t *ctx, void *ptr) {
    NZI_TRY(nzi_check_context(ctx));
    if (ptr != NULL) {
        nzi_block_header_t *h = (nzi_block_header_t *)ptr - 1;
        if (h->magic != NZI_BLOCK_MAGIC)
            return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                             "nz_free: pointer was not allocated by this library");
        nzi_free(ctx, ptr);
    }
    return NZ_SUCCESS;
}

/* ---- small utilities -------------------------------------------------------------------- */

double nzi_wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t nzi_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void nzi_rng_seed(nzi_rng_t *rng, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) rng->s[i] = nzi_splitmix64(&x);
}

static inline uint64_t nzi_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t nzi_rng_next(nzi_rng_t *rng) {
    uint64_t *s = rng->s;
    const uint64_t result = nzi_rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = nzi_rotl(s[3], 45);
    return result;
}

double nzi_rng_uniform(nzi_rng_t *rng) { return (double)(nzi_rng_next(rng) >> 11) * 0x1.0p-53; }

int64_t nzi_rng_below(nzi_rng_t *rng, int64_t bound) {
    if (bound <= 1) return 0;
    /* Lemire's nearly-divisionless method is overkill here; rejection keeps it unbiased. */
    uint64_t b = (uint64_t)bound;
    uint64_t limit = UINT64_MAX - UINT64_MAX % b;
    uint64_t r;
    do r = nzi_rng_next(rng);
    while (r >= limit);
    return (int64_t)(r % b);
}
