// growth.cu - training loops whose live memory grows in different ways (issue 49 slice 2:
// analysis_growth.c). Usage: growth leak|leak2|warmup|noisy|frag|unmarked. 20 steps, each begun with
// vramtrace_step() (but unmarked).
//   leak:   per step a 24 MiB allocation kept to the end (LEAK), and 8 MiB and 16 MiB ones freed
//           in the step: live grows 24 MiB a step from one site; step K peaks at 24 K + 24 MiB.
//   leak2:  two sites keep memory each step, the smaller first: 8 MiB (LEAK_SMALL), then 24 MiB
//           (LEAK_BIG): live grows 32 MiB a step, the sites listed by bytes per step (24, then 8).
//   warmup: steps 1-5 each keep 10 MiB more (a cache filling up), every step allocates and frees
//           4 MiB: it grows 50 MiB over steps 1-5, then stays flat.
//   noisy:  per step one allocation of 1 to 31 MiB (a fixed pseudo-random sequence) kept until the
//           next step frees it: live memory wobbles without a trend.
//   frag:   a caching allocator (never cudaFree in the loop; a freed block kept for a request it
//           is large enough for, the smallest such) serving 4, 6, 8, 5, 7 MiB in turn (varying
//           input sizes): steps 1-3 each need a new block (18 MiB in all), then the cache serves
//           every size: the growth stops.
//   unmarked: the leak loop with no marker: per step 24 MiB kept, 8 MiB allocated and freed, and
//           a 4-byte device-to-host loss read that ends the step (steps from the calls' period).
// Everything is freed after the loop. Prints "steps=20 rc=0".
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <vramtrace/vramtrace.h>

enum { STEPS = 20, MiB = 1 << 20 };

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "leak";
    void *kept[STEPS] = { 0 }, *kept2[STEPS] = { 0 }, *prev = NULL;
    void *cache[STEPS] = { 0 };
    size_t cache_size[STEPS] = { 0 }, ncache = 0;
    int rc = 0, unmarked = !strcmp(mode, "unmarked");
    for (int k = 0; k < STEPS; k++) {
        if (!unmarked) vramtrace_step();
        void *b = NULL, *c = NULL;
        if (!strcmp(mode, "leak")) {
            rc |= cudaMalloc(&kept[k], 24 * MiB); // LEAK
            rc |= cudaMalloc(&b, 8 * MiB);
            rc |= cudaMalloc(&c, 16 * MiB);
            rc |= cudaFree(b) | cudaFree(c);
        } else if (!strcmp(mode, "leak2")) {
            rc |= cudaMalloc(&kept2[k], 8 * MiB); // LEAK_SMALL
            rc |= cudaMalloc(&kept[k], 24 * MiB); // LEAK_BIG
        } else if (!strcmp(mode, "warmup")) {
            if (k < 5) rc |= cudaMalloc(&kept[k], 10 * MiB); // CACHE
            rc |= cudaMalloc(&b, 4 * MiB);
            rc |= cudaFree(b);
        } else if (!strcmp(mode, "frag")) {
            static const size_t need[] = { 4, 6, 8, 5, 7 };
            size_t want = need[k % 5] * MiB, best = ncache;
            for (size_t i = 0; i < ncache; i++) /* the smallest free block large enough */
                if (cache[i] && cache_size[i] >= want && (best == ncache || cache_size[i] < cache_size[best])) best = i;
            if (best == ncache) { rc |= cudaMalloc(&cache[ncache], want); cache_size[ncache] = want; best = ncache++; } // CACHE_GROW
            void *block = cache[best];
            cache[best] = NULL;                                /* in use this step */
            rc |= cudaMemset(block, 0, want);
            cache[best] = block;                               /* back to the cache */
        } else if (unmarked) {
            rc |= cudaMalloc(&kept[k], 24 * MiB); // UNMARKED_LEAK
            rc |= cudaMalloc(&b, 8 * MiB);
            rc |= cudaFree(b);
            float loss = 0;
            rc |= cudaMemcpy(&loss, kept[k], sizeof loss, cudaMemcpyDeviceToHost);
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
    for (int k = 0; k < STEPS; k++)
        if (kept2[k]) rc |= cudaFree(kept2[k]);
    for (size_t i = 0; i < ncache; i++) rc |= cudaFree(cache[i]);
    printf("steps=%d rc=%d\n", STEPS, rc);
    return rc != 0;
}
