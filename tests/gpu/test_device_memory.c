/* test_device_memory.c: the public device-memory calls: refusals on an unbound context, copies and sets on a device. */
#include "testutil.h"

#include <string.h>

/*
 * Without a device (any machine): every nz_device_* call on a context with no device returns
 * NZ_ERR_NO_DEVICE and writes nothing. With one: host -> device -> device -> host round trips of
 * several sizes (0, 1, odd, a few MB) through nz_device_copy, offsets inside blocks, memset, NULL
 * pointers refused, and ordering of nz_device_copy / nz_device_memset with later work on the
 * context's stream.
 */

static void unbound(void) {
    nz_context_t *ctx = NULL;
    char host[8] = {0};
    void *p = (void *)host;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_CHECK(nz_device_malloc(ctx, &p, 16) == NZ_ERR_NO_DEVICE && p == (void *)host,
              "nz_device_malloc on an unbound context");
    NZT_CHECK(nz_device_copy(ctx, host, host + 4, 4) == NZ_ERR_NO_DEVICE,
              "nz_device_copy on an unbound context");
    NZT_CHECK(nz_device_memset(ctx, host, 1, 4) == NZ_ERR_NO_DEVICE && host[0] == 0,
              "nz_device_memset on an unbound context");
    NZT_CHECK(nz_device_copy_to_host(ctx, host, host + 4, 4) == NZ_ERR_NO_DEVICE,
              "nz_device_copy_to_host on an unbound context");
    NZT_CHECK(nz_device_copy_from_host(ctx, host, host + 4, 4) == NZ_ERR_NO_DEVICE,
              "nz_device_copy_from_host on an unbound context");
    nz_context_destroy(&ctx);
}

static void round_trip(nz_context_t *ctx, size_t bytes) {
    unsigned char *in = nzt_malloc(bytes + 16), *out = nzt_malloc(bytes + 16);
    void *a = NULL, *b = NULL;
    for (size_t i = 0; i < bytes + 16; i++) in[i] = (unsigned char)(i * 131u + 7u);
    memset(out, 0xA5, bytes + 16);
    NZT_OK(ctx, nz_device_malloc(ctx, &a, bytes + 16));
    NZT_OK(ctx, nz_device_malloc(ctx, &b, bytes + 16));
    NZT_OK(ctx, nz_device_memset(ctx, b, 0x5A, bytes + 16));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, a, in, bytes + 16));
    /* device -> device at an offset: b[3 .. 3 + bytes) = a[5 .. 5 + bytes) */
    NZT_OK(ctx, nz_device_copy(ctx, (char *)b + 3, (const char *)a + 5, bytes));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, out, b, bytes + 16));
    int64_t bad = 0;
    for (size_t i = 0; i < bytes + 16; i++) {
        const unsigned char want = i >= 3 && i < 3 + bytes ? in[i + 2] : 0x5A;
        if (out[i] != want && bad++ < 3)
            fprintf(stderr, "%zu bytes: byte %zu is %u, expected %u\n", bytes, i, out[i], want);
    }
    NZT_CHECK(bad == 0, "nz_device_copy of %zu bytes: %lld wrong bytes", bytes, (long long)bad);
    NZT_OK(ctx, nz_device_free(ctx, a));
    NZT_OK(ctx, nz_device_free(ctx, b));
    free(in);
    free(out);
}

int main(int argc, char **argv) {
    nz_context_t *ctx = NULL;
    nzt_init(argc, argv);
    unbound();
    if (nz_device_count() == 0) {
        if (nzt_finish("test_device_memory (unbound context)") != 0) return 1;
        NZT_SKIP("no CUDA device (the unbound-context checks passed)");
    }
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_set_device(ctx, 0, NULL));
    const size_t sizes[] = {0, 1, 7, 4096, 1000003, (size_t)6 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) round_trip(ctx, sizes[k]);
    void *a = NULL;
    NZT_OK(ctx, nz_device_malloc(ctx, &a, 64));
    NZT_CHECK(nz_device_copy(ctx, NULL, a, 8) == NZ_ERR_NULL_ARGUMENT, "NULL destination accepted");
    NZT_CHECK(nz_device_copy(ctx, a, NULL, 8) == NZ_ERR_NULL_ARGUMENT, "NULL source accepted");
    NZT_OK(ctx, nz_device_copy(ctx, NULL, NULL, 0));
    NZT_OK(ctx, nz_device_free(ctx, a));
    NZT_OK(ctx, nz_context_synchronize(ctx));
    nz_context_destroy(&ctx);
    return nzt_finish("test_device_memory");
}
