// growth.cu - training loops whose live memory grows in different ways (issue 49 slice 2:
// analysis_growth.c). Usage: growth leak|warmup|noisy. 20 steps, each begun with vramtrace_step().
//   leak:   per step a 24 MiB allocation kept to the end (LEAK), and 8 MiB and 16 MiB ones freed
//           in the step: live grows 24 MiB a step from one site; step K peaks at 24 K + 24 MiB.
//   warmup: steps 1-5 each keep 10 MiB more (a cache filling up), every step allocates and frees
//           4 MiB: it grows 50 MiB over steps 1-5, then stays flat.
//   noisy:  per step one allocation of 1 to 31 MiB (a fixed pseudo-random sequence) kept until the
//           next step frees it: live memory wobbles without a trend.
// Everything is freed after the loop. Prints "steps=20 rc=0".
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <vramtrace/vramtrace.h>

enum { STEPS = 20, MiB = 1 << 20 };

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "leak";
    void *kept[STEPS] = { 0 }, *prev = NULL;
    int rc = 0;
    for (int k = 0; k < STEPS; k++) {
        vramtrace_step();
        void *b = NULL, *c = NULL;
        if (!strcmp(mode, "leak")) {
            rc |= cudaMalloc(&kept[k], 24 * MiB); // LEAK
            rc |= cudaMalloc(&b, 8 * MiB);
            rc |= cudaMalloc(&c, 16 * MiB);
            rc |= cudaFree(b) | cudaFree(c);
        } else if (!strcmp(mode, "warmup")) {
            if (k < 5) rc |= cudaMalloc(&kept[k], 10 * MiB); // CACHE
            rc |= cudaMalloc(&b, 4 * MiB);
            rc |= cudaFree(b);
        } else {
            size_t size = (size_t)(1 + (k * 7919 + 13) % 31) * MiB;
            rc |= cudaMalloc(&b, size);
            if (prev) rc |= cudaFree(prev);
            prev = b;
        }
    }
    if (prev) rc |= cudaFree(prev);
    for (int k = 0; k < STEPS; k++)
        if (kept[k]) rc |= cudaFree(kept[k]);
    printf("steps=%d rc=%d\n", STEPS, rc);
    return rc != 0;
}
