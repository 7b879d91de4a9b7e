/* prims.c - `make bench`: what a few instructions cost on this machine, in ns each. Instruction
 * counts weigh every instruction as one; these are the ones on the tracer's paths that cost far
 * more than the average (docs/performance.md, "Where the time goes now"). Each figure is the
 * minimum of 5 loops of 2 M. Prints "PRIM <name> <ns>" lines. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define N 2000000
static _Atomic uint64_t counter;
static _Atomic int lock_word;
static volatile uint64_t sink;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

enum { P_RDTSC, P_XADD, P_LOCK_UNLOCK, P_CLOCK, P_COUNT };
static const char *const names[P_COUNT] = { "rdtsc", "lock_xadd", "lock_cmpxchg+xchg", "clock_gettime" };

static double run(int p)
{
    struct timespec ts;
    double t0 = now_ns();
    for (int i = 0; i < N; i++) {
        switch (p) {
#if defined(__x86_64__)
        case P_RDTSC: sink += __rdtsc(); break;
#endif
        case P_XADD: atomic_fetch_add(&counter, 1); break;
        case P_LOCK_UNLOCK: {
            int z = 0;
            atomic_compare_exchange_strong(&lock_word, &z, 1);
            atomic_exchange(&lock_word, 0);
            break;
        }
        case P_CLOCK: clock_gettime(CLOCK_MONOTONIC, &ts); sink += (uint64_t)ts.tv_nsec; break;
        default: break;
        }
    }
    return (now_ns() - t0) / N;
}

int main(void)
{
    for (int p = 0; p < P_COUNT; p++) {
#if !defined(__x86_64__)
        if (p == P_RDTSC) continue;
#endif
        double best = 1e18;
        for (int rep = 0; rep < 5; rep++) {
            double t = run(p);
            if (t < best) best = t;
        }
        printf("PRIM %s %.2f\n", names[p], best);
    }
    return 0;
}
