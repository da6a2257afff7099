/* test_fuzz_replay.c: every fuzz seed and every saved crash input through the fuzz targets' own checks, on every build. */
#include "testutil.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

/*
 * The five libFuzzer targets need clang; their bodies are plain C, so they are compiled here too
 * (each under its own name) and fed every file of tests/fuzz/corpus/<target>/ and
 * tests/fuzz/regressions/<target>/. A target signals a violated property with abort(), which
 * fails this test with the input's path printed just before. NZ_FUZZ_CORPUS_DIR=DIR replays
 * DIR/<target>/ as well (a campaign's grown corpus, e.g. for a line-coverage build).
 */

#define LLVMFuzzerTestOneInput replay_fuzz_mm
#include "../fuzz/fuzz_mm.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput replay_fuzz_mm_gz
#include "../fuzz/fuzz_mm_gz.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput replay_fuzz_binary
#include "../fuzz/fuzz_binary.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput replay_fuzz_csr
#include "../fuzz/fuzz_csr.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput replay_fuzz_convert
#include "../fuzz/fuzz_convert.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput replay_fuzz_mm_budget
#include "../fuzz/fuzz_mm_budget.c"
#undef LLVMFuzzerTestOneInput

typedef int (*target_fn)(const uint8_t *, size_t);

static int replay_dir(const char *dir, target_fn fn) {
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *fp = fopen(path, "rb");
        if (fp == NULL) continue;
        struct stat st;
        if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
            fclose(fp);
            continue;
        }
        size_t n = (size_t)st.st_size;
        uint8_t *data = (uint8_t *)nzt_malloc(n + 1);
        size_t got = fread(data, 1, n, fp);
        fclose(fp);
        NZT_CHECK(got == n, "%s: short read", path);
        fprintf(stderr, "replay %s\n", path); /* the last line printed names a crashing input */
        fn(data, got);
        free(data);
        count++;
    }
    closedir(d);
    return count;
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    static const struct {
        const char *name;
        target_fn fn;
    } targets[] = {
        {"fuzz_mm", replay_fuzz_mm},         {"fuzz_mm_gz", replay_fuzz_mm_gz},
        {"fuzz_binary", replay_fuzz_binary}, {"fuzz_csr", replay_fuzz_csr},
        {"fuzz_convert", replay_fuzz_convert}, {"fuzz_mm_budget", replay_fuzz_mm_budget},
    };
    int total = 0;
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/../fuzz/corpus/%s", nzt_data_dir(), targets[t].name);
        int seeds = replay_dir(dir, targets[t].fn);
        snprintf(dir, sizeof dir, "%s/../fuzz/regressions/%s", nzt_data_dir(), targets[t].name);
        int regressions = replay_dir(dir, targets[t].fn);
        NZT_CHECK(seeds > 0, "%s: no seed corpus found under %s/../fuzz", targets[t].name,
                  nzt_data_dir());
        int extra = 0;
        const char *more = getenv("NZ_FUZZ_CORPUS_DIR");
        if (more != NULL && *more) {
            snprintf(dir, sizeof dir, "%s/%s", more, targets[t].name);
            extra = replay_dir(dir, targets[t].fn);
        }
        printf("%-13s %3d seeds, %3d regression inputs, %d from NZ_FUZZ_CORPUS_DIR\n",
               targets[t].name, seeds, regressions, extra);
        total += seeds + regressions + extra;
    }
    printf("replayed %d inputs\n", total);
    return nzt_finish("test_fuzz_replay");
}
