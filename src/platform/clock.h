/* clock.h - event timestamps: CLOCK_MONOTONIC nanoseconds, read cheaply.
 *
 * clock_gettime costs ~20-25 ns under a hypervisor and every event takes two. Where the kernel
 * itself trusts the TSC (clocksource "tsc", constant and nonstop), vt_now() reads rdtsc and maps
 * it onto CLOCK_MONOTONIC with a per-thread anchor refreshed every ~50 ms, the rate taken from the
 * span since start (so its error shrinks as the run goes on; drift between anchors is bounded by
 * that rate error over 50 ms, well under a microsecond). Elsewhere, or in the first 50 ms, it is
 * clock_gettime. Values are CLOCK_MONOTONIC-comparable across processes on one host.
 * Invariant: never allocates, never locks, never fails. */
#ifndef VT_CLOCK_H
#define VT_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline uint64_t vt_clock_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
#include <x86intrin.h>
struct vt_clock_anchor { uint64_t tsc, ns, limit; double ns_per_tick; };
extern __thread __attribute__((tls_model("initial-exec"))) struct vt_clock_anchor vt_clock_tls;
extern int vt_clock_use_tsc;
uint64_t vt_clock_slow(uint64_t tsc);

static inline uint64_t vt_clock_now(void)
{
    if (!vt_clock_use_tsc) return vt_clock_mono();
    uint64_t t = __rdtsc();
    struct vt_clock_anchor *a = &vt_clock_tls;
    uint64_t d = t - a->tsc;
    /* Signed conversions: d < limit < 2^63 (vt_clock_slow), and unsigned <-> double takes a
     * branch and a fix-up sequence each way on x86-64. */
    if (d < a->limit) return a->ns + (uint64_t)(int64_t)((double)(int64_t)d * a->ns_per_tick);
    return vt_clock_slow(t);
}
#else
static inline uint64_t vt_clock_now(void) { return vt_clock_mono(); }
#endif

/* Read the clocksource once and record the start anchor (from the tracer's init). */
void vt_clock_init(void);
#endif
