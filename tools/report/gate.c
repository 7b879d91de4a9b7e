/* gate.c - `report --fail-on`: which processes trip which gate (gate.h). */
#include "report/gate.h"

#include <stdio.h>
#include <string.h>

#include "report/util.h"

static const struct { const char *name; unsigned bit; } gates[] = {
    { "oom", VT_GATE_OOM }, { "leak", VT_GATE_LEAK }, { "error", VT_GATE_ERROR },
    { "warning", VT_GATE_WARNING }, { "growth", VT_GATE_GROWTH },
};

int vt_gate_parse(const char *list, unsigned *mask, char *err, size_t errlen)
{
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < sizeof gates / sizeof gates[0] && (strlen(gates[i].name) != len || strncmp(gates[i].name, p, len))) i++;
        if (i == sizeof gates / sizeof gates[0]) {
            snprintf(err, errlen, "--fail-on: '%.*s' is not a gate (oom, leak, error, warning, growth, separated by commas)",
                     (int)(len > 64 ? 64 : len), p);
            return -1;
        }
        *mask |= gates[i].bit;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

/* "pid 1234 (run/app.1234.jsonl): " - which process, by the trace the user gave */
static void who(char *buf, size_t n, const struct vt_proc *p)
{
    snprintf(buf, n, "pid %lld (%s)", (long long)p->pid, p->path ? p->path : "?");
}

size_t vt_gate_check(struct vt_proc *const *procs, size_t n, unsigned mask,
                     void (*say)(void *ctx, const char *msg), void *ctx)
{
    size_t tripped = 0;
    char w[512], msg[1024], b0[32], b1[32], b2[32];
    for (size_t i = 0; i < n; i++) {
        const struct vt_proc *p = procs[i];
        who(w, sizeof w, p);
        /* A caching allocator that empties its cache and retries the same size (PyTorch) met no
         * OOM the program saw: only the failures never retried successfully count. */
        uint64_t ooms = p->oom_count - (p->oom_recovered < p->oom_count ? p->oom_recovered : p->oom_count);
        if ((mask & VT_GATE_OOM) && ooms) {
            snprintf(msg, sizeof msg, "--fail-on=oom: %s: %llu allocation%s failed for lack of memory and %s not retried successfully",
                     w, (unsigned long long)ooms, ooms == 1 ? "" : "s", ooms == 1 ? "was" : "were");
            say(ctx, msg), tripped++;
        }
        /* Without a footer the process died: what was live then is not a leak of its code. */
        if ((mask & VT_GATE_LEAK) && p->has_footer && !p->footer_dropped
            && (p->leak_count || p->host_leak_bytes || p->managed_leak_bytes)) {
            int k = snprintf(msg, sizeof msg, "--fail-on=leak: %s: not freed at exit: %s VRAM in %llu allocation%s", w,
                             vtr_fmt_bytes(b0, sizeof b0, p->leak_bytes), (unsigned long long)p->leak_count,
                             p->leak_count == 1 ? "" : "s");
            if (p->managed_leak_bytes && k > 0 && (size_t)k < sizeof msg)
                k += snprintf(msg + k, sizeof msg - (size_t)k, ", %s managed", vtr_fmt_bytes(b1, sizeof b1, p->managed_leak_bytes));
            if (p->host_leak_bytes && k > 0 && (size_t)k < sizeof msg)
                snprintf(msg + k, sizeof msg - (size_t)k, ", %s pinned host", vtr_fmt_bytes(b2, sizeof b2, p->host_leak_bytes));
            say(ctx, msg), tripped++;
        }
        if ((mask & VT_GATE_ERROR) && p->finding_errors) {
            snprintf(msg, sizeof msg, "--fail-on=error: %s: %llu checker error%s", w,
                     (unsigned long long)p->finding_errors, p->finding_errors == 1 ? "" : "s");
            say(ctx, msg), tripped++;
        }
        if ((mask & VT_GATE_WARNING) && (p->finding_warnings || p->finding_errors)) {
            snprintf(msg, sizeof msg, "--fail-on=warning: %s: %llu checker warning%s and %llu error%s", w,
                     (unsigned long long)p->finding_warnings, p->finding_warnings == 1 ? "" : "s",
                     (unsigned long long)p->finding_errors, p->finding_errors == 1 ? "" : "s");
            say(ctx, msg), tripped++;
        }
        const struct vt_growth *g = &p->growth;
        if ((mask & VT_GATE_GROWTH) && g->kind == VT_GROWTH_STEADY) {
            int k = snprintf(msg, sizeof msg, "--fail-on=growth: %s: live VRAM grows +%s per step over steps %zu-%zu", w,
                             vtr_fmt_bytes(b0, sizeof b0, g->rate_bytes > 0 ? (uint64_t)g->rate_bytes : 0),
                             g->window_first, g->window_last);
            if (g->has_forecast && k > 0 && (size_t)k < sizeof msg)
                snprintf(msg + k, sizeof msg - (size_t)k, "; device %d runs out at step %llu", g->forecast_dev,
                         (unsigned long long)g->forecast_step);
            say(ctx, msg), tripped++;
        }
    }
    return tripped;
}
