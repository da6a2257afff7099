/* test_version_arch.c: nz_version() against the header's macros, and the reading of
 * CMAKE_CUDA_ARCHITECTURES lists that decides whether a build has code for a device. */
#include "testutil.h"
#include "nzi.h"

#include <stdio.h>
#include <string.h>

static void test_version(void) {
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", NZ_VERSION_MAJOR, NZ_VERSION_MINOR,
             NZ_VERSION_PATCH);
    NZT_CHECK(strcmp(nz_version(), expect) == 0, "nz_version() == the header's macros");
    NZT_CHECK(strcmp(NZ_VERSION_STRING, expect) == 0, "NZ_VERSION_STRING");
    NZT_CHECK(NZ_VERSION == NZ_VERSION_MAJOR * 10000 + NZ_VERSION_MINOR * 100 + NZ_VERSION_PATCH,
              "NZ_VERSION number");
}

static void test_arch(void) {
    const char *def = "80-real;86-real;89-real;90-real;100-real;120";
    NZT_CHECK(nzi_cuda_arch_code(def, 8, 0) == 2, "A100: sm_80 code");
    NZT_CHECK(nzi_cuda_arch_code(def, 8, 7) == 2, "Orin 8.7 runs sm_86 code");
    NZT_CHECK(nzi_cuda_arch_code(def, 9, 0) == 2, "H100: sm_90 code");
    NZT_CHECK(nzi_cuda_arch_code(def, 10, 3) == 2, "B300 10.3 runs sm_100 code");
    NZT_CHECK(nzi_cuda_arch_code(def, 12, 0) == 2, "RTX 50xx: sm_120 code");
    NZT_CHECK(nzi_cuda_arch_code(def, 13, 0) == 1, "a newer GPU: compute_120 PTX");
    NZT_CHECK(nzi_cuda_arch_code(def, 11, 0) == 0, "11.0: sm_100 is another major, compute_120 too new");
    NZT_CHECK(nzi_cuda_arch_code(def, 7, 5) == 0, "Turing: nothing");
    NZT_CHECK(nzi_cuda_arch_code("90", 9, 0) == 2, "90 = sm_90 + compute_90");
    NZT_CHECK(nzi_cuda_arch_code("90", 10, 0) == 1, "Blackwell JITs compute_90");
    NZT_CHECK(nzi_cuda_arch_code("90", 8, 9) == 0, "sm_90 cannot run on Ada");
    NZT_CHECK(nzi_cuda_arch_code("80", 9, 0) == 1, "80 on an H100: PTX JIT");
    NZT_CHECK(nzi_cuda_arch_code("80-real", 9, 0) == 0, "sm_80 machine code only: nothing on 9.0");
    NZT_CHECK(nzi_cuda_arch_code("90a-real", 9, 0) == 2, "arch-specific 90a on 9.0");
    NZT_CHECK(nzi_cuda_arch_code("90a-real", 9, 1) == 0, "90a only on exactly 9.0");
    NZT_CHECK(nzi_cuda_arch_code("86-virtual", 8, 9) == 1, "virtual only");
    NZT_CHECK(nzi_cuda_arch_code("native", 9, 0) == -1, "native: unknown, ask the driver");
    NZT_CHECK(nzi_cuda_arch_code("", 9, 0) == -1, "empty: unknown");
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_version();
    test_arch();
    return nzt_finish("test_version_arch");
}
