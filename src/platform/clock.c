/* clock.c - TSC-to-CLOCK_MONOTONIC mapping for vt_clock_now (see clock.h). */
#include "clock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
__thread __attribute__((tls_model("initial-exec"))) struct vt_clock_anchor vt_clock_tls;
int vt_clock_use_tsc;
static uint64_t start_tsc, start_ns;

#define ANCHOR_NS 50000000ull /* re-anchor each thread every 50 ms */

uint64_t vt_clock_slow(uint64_t tsc)
{
    uint64_t ns = vt_clock_mono();
    uint64_t span_ns = ns - start_ns, span_tsc = tsc - start_tsc;
    if (span_ns >= ANCHOR_NS && span_tsc > 0) {
        struct vt_clock_anchor *a = &vt_clock_tls;
        a->ns_per_tick = (double)span_ns / (double)span_tsc;
        a->tsc = tsc;
        a->ns = ns;
        double limit = (double)ANCHOR_NS / a->ns_per_tick;
        a->limit = limit < 0x1p62 ? (uint64_t)limit : (uint64_t)1 << 62; /* vt_clock_now converts signed */
    }
    return ns;
}

void vt_clock_init(void)
{
    char buf[64] = "";
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    start_tsc = __rdtsc();
    start_ns = vt_clock_mono();
    vt_clock_use_tsc = strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == '\0');
}
#else
void vt_clock_init(void) {}
#endif
