/* bench_registry.c - the registry alone (src/core/registry.c), to show how its locking scales:
 * T threads each insert, look up and remove 4 KiB ranges, either in their own 2 MiB regions
 * (their own shards, as threads allocating from different driver pages) or all in one region
 * (one shard: what every thread paid with the old single registry mutex). Prints
 * "REG MODE THREADS OPS NS_PER_OP_CORE" where core-ns = wall x min(T, CPUs) / ops (flat when it
 * scales). One op = insert + lookup + remove. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"

#define MiB (1ull << 20)
struct worker { uint64_t base, stride; long n; int bad; };
static pthread_barrier_t go;

static void *run(void *p)
{
    struct worker *w = p;
    pthread_barrier_wait(&go);
    for (long i = 0; i < w->n; i++) {
        uint64_t a = w->base + (uint64_t)(i % 32) * w->stride;
        vt_alloc_info info;
        if (vt_registry_insert(a, 4096, VT_MEM_DEVICE, 0) != 0 || vt_registry_lookup(a + 100, &info) != 0 ||
            vt_registry_remove(a, &info) != 0)
            w->bad++;
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long per = argc > 1 ? atol(argv[1]) : 200000;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* 256 background ranges, as in bench_calls, so the maps are not trivially small */
    for (int i = 0; i < 256; i++) vt_registry_insert(0x7000000000ull + (uint64_t)i * 0x2000, 4096, VT_MEM_DEVICE, 0);
    static const int threads[] = { 1, 2, 8 };
    for (int mode = 0; mode < 2; mode++)
        for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
            int t = threads[ti];
            pthread_t th[8];
            struct worker w[8];
            pthread_barrier_init(&go, NULL, (unsigned)t + 1);
            for (int i = 0; i < t; i++) {
                /* own: thread i in its own 2 MiB region; shared: one region, threads interleaved */
                uint64_t base = 0x800000000ull + (mode == 0 ? (uint64_t)i * 2 * MiB : (uint64_t)i * 4096);
                w[i] = (struct worker){ base, mode == 0 ? 4096 : (uint64_t)t * 4096, per / t, 0 };
                pthread_create(&th[i], NULL, run, &w[i]);
            }
            double t0 = now();
            pthread_barrier_wait(&go);
            int bad = 0;
            for (int i = 0; i < t; i++) { pthread_join(th[i], NULL); bad += w[i].bad; }
            double s = now() - t0;
            pthread_barrier_destroy(&go);
            long ops = per / t * t;
            printf("REG %s %d %ld %.1f %d\n", mode == 0 ? "own" : "shared", t, ops,
                   s * 1e9 * (double)(t < cpus ? t : cpus) / (double)ops, bad);
        }
    return 0;
}
