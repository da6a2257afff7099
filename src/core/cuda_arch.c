/* cuda_arch.c: which entries of a CMAKE_CUDA_ARCHITECTURES list can run on a given device. */
#include "nzi.h"

#include <stdlib.h>
#include <string.h>

/* Does a build for `arch_list` (CMake's syntax: "80-real;90-real;120", "90a-real", "86-virtual")
 * carry code for compute capability major.minor? Machine code for sm_XY runs on X.Z for Z >= Y
 * (same major; arch-specific "a"/"f" variants only on exactly X.Y); PTX for compute_XY is
 * JIT-compiled by the driver on any X.Y or newer. Returns 2 (machine code), 1 (PTX only),
 * 0 (nothing: the kernels cannot load) or -1 (the list cannot be read: "native", "all", ...). */
int nzi_cuda_arch_code(const char *arch_list, int major, int minor) {
    int best = 0, device = major * 10 + minor;
    const char *p = arch_list;
    if (arch_list == NULL || *arch_list == '\0') return -1;
    while (*p != '\0') {
        char entry[32];
        size_t len = strcspn(p, ";, ");
        if (len > 0 && len < sizeof entry) {
            memcpy(entry, p, len);
            entry[len] = '\0';
            char *end = NULL;
            long arch = strtol(entry, &end, 10);
            if (end == entry || arch <= 0) return -1; /* "native", "all", "all-major" */
            int specific = (*end == 'a' || *end == 'f');
            if (specific) end++;
            int real = 1, virt = 1;
            if (strcmp(end, "-real") == 0) virt = 0;
            else if (strcmp(end, "-virtual") == 0) real = 0;
            else if (*end != '\0') return -1;
            if (real && arch / 10 == major &&
                (specific ? arch == device : arch <= device))
                best = 2;
            if (virt && !specific && arch <= device && best < 1) best = 1;
        }
        p += len;
        while (*p == ';' || *p == ',' || *p == ' ') p++;
    }
    return best;
}
