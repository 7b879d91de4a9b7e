/* gate.c - `report --fail-on`: which processes trip which gate (gate.h). */
#include "report/gate.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/util.h"

static const struct { const char *name; unsigned bit; } gates[] = {
    { "oom", VT_GATE_OOM }, { "leak", VT_GATE_LEAK }, { "error", VT_GATE_ERROR },
    { "warning", VT_GATE_WARNING }, { "growth", VT_GATE_GROWTH },
};

void vt_gates_init(struct vt_gates *g)
{
    memset(g, 0, sizeof *g);
    g->max_process_peak = g->max_device_peak = g->max_increase_bytes = VT_GATE_NO_LIMIT;
    g->max_increase_pct = -1;
}

int vt_gates_for_diff(const struct vt_gates *g) { return g->max_increase_bytes != VT_GATE_NO_LIMIT || g->max_increase_pct >= 0; }

int vt_gates_any(const struct vt_gates *g)
{
    return g->mask || g->max_process_peak != VT_GATE_NO_LIMIT || g->max_device_peak != VT_GATE_NO_LIMIT || vt_gates_for_diff(g);
}

int vt_gate_parse_size(const char *s, uint64_t *out)
{
    static const struct { const char *unit; double mult; } units[] = {
        { "", 1 }, { "b", 1 }, { "k", 0x1p10 }, { "kib", 0x1p10 }, { "m", 0x1p20 }, { "mib", 0x1p20 }, { "g", 0x1p30 },
        { "gib", 0x1p30 }, { "t", 0x1p40 }, { "tib", 0x1p40 }, { "kb", 1e3 }, { "mb", 1e6 }, { "gb", 1e9 }, { "tb", 1e12 },
    };
    /* no sign, no space, no "inf"; no hex either, which strtod would take after a leading 0 */
    if (!isdigit((unsigned char)*s) || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v)) return -1;
    char unit[8];
    size_t n = strlen(end);
    if (n >= sizeof unit) return -1;
    for (size_t i = 0; i <= n; i++) unit[i] = (char)tolower((unsigned char)end[i]);
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (strcmp(unit, units[k].unit)) continue;
        double b = v * units[k].mult;
        if (b >= 0x1p64) return -1;
        *out = (uint64_t)b;
        return 0;
    }
    return -1;
}

int vt_gate_parse_peak(const char *v, struct vt_gates *g, char *err, size_t errlen)
{
    uint64_t *limit = &g->max_process_peak;
    const char *size = v;
    if (!strncmp(v, "process:", 8)) size = v + 8;
    else if (!strncmp(v, "device:", 7)) { size = v + 7; limit = &g->max_device_peak; }
    if (vt_gate_parse_size(size, limit) < 0) {
        snprintf(err, errlen, "--max-peak: '%.64s' is not [process:|device:]SIZE (bytes, or with K, M, G, T; e.g. 40G or device:79GiB)", v);
        return -1;
    }
    return 0;
}

int vt_gate_parse_increase(const char *v, struct vt_gates *g, char *err, size_t errlen)
{
    size_t n = strlen(v);
    if (n > 1 && v[n - 1] == '%') {
        char num[32], *end;
        if (n - 1 < sizeof num && isdigit((unsigned char)v[0])) {
            memcpy(num, v, n - 1);
            num[n - 1] = '\0';
            errno = 0;
            double pct = strtod(num, &end);
            if (!errno && !*end && isfinite(pct)) { g->max_increase_pct = pct; return 0; }
        }
    } else if (vt_gate_parse_size(v, &g->max_increase_bytes) == 0) {
        return 0;
    }
    snprintf(err, errlen, "--max-increase: '%.64s' is not SIZE or PCT%% (e.g. 512M or 5%%)", v);
    return -1;
}

int vt_gate_parse(const char *list, struct vt_gates *g, char *err, size_t errlen)
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
        g->mask |= gates[i].bit;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

/* "pid 1234 (run/app.1234.jsonl): " - which process, by the trace the user gave */
static void who(char *buf, size_t n, const struct vt_proc *p)
{
    snprintf(buf, n, "pid %lld (%s)", (long long)p->pid, p->path ? p->path : "?");
}

size_t vt_gate_check(struct vt_proc *const *procs, size_t n, const struct vt_gates *g,
                     void (*say)(void *ctx, const char *msg), void *ctx)
{
    unsigned mask = g->mask;
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
        const struct vt_growth *gr = &p->growth;
        if ((mask & VT_GATE_GROWTH) && gr->kind == VT_GROWTH_STEADY) {
            int k = snprintf(msg, sizeof msg, "--fail-on=growth: %s: live VRAM grows +%s per step over steps %zu-%zu", w,
                             vtr_fmt_bytes(b0, sizeof b0, gr->rate_bytes > 0 ? (uint64_t)gr->rate_bytes : 0),
                             gr->window_first, gr->window_last);
            if (gr->has_forecast && k > 0 && (size_t)k < sizeof msg)
                snprintf(msg + k, sizeof msg - (size_t)k, "; device %d runs out at step %llu", gr->forecast_dev,
                         (unsigned long long)gr->forecast_step);
            say(ctx, msg), tripped++;
        }
        if (p->peak > g->max_process_peak) {
            snprintf(msg, sizeof msg, "--max-peak=%s: %s: peak VRAM %s (%llu bytes), over the limit by %s",
                     vtr_fmt_bytes(b0, sizeof b0, g->max_process_peak), w, vtr_fmt_bytes(b1, sizeof b1, p->peak),
                     (unsigned long long)p->peak, vtr_fmt_bytes(b2, sizeof b2, p->peak - g->max_process_peak));
            say(ctx, msg), tripped++;
        }
        for (size_t d = 0; d < p->ndevices; d++) {
            const struct vt_device *dv = &p->devices[d];
            if (dv->peak <= g->max_device_peak) continue;
            snprintf(msg, sizeof msg, "--max-peak=device:%s: %s: device %d peaked at %s (%llu bytes), over the limit by %s",
                     vtr_fmt_bytes(b0, sizeof b0, g->max_device_peak), w, dv->dev, vtr_fmt_bytes(b1, sizeof b1, dv->peak),
                     (unsigned long long)dv->peak, vtr_fmt_bytes(b2, sizeof b2, dv->peak - g->max_device_peak));
            say(ctx, msg), tripped++;
        }
    }
    /* Several processes on one device: what they held at once, which none of them held alone. */
    if (n > 1 && g->max_device_peak != VT_GATE_NO_LIMIT) {
        struct vt_combined c;
        if (vt_combine(procs, n, &c) == 0) {
            for (size_t d = 0; c.by_time && d < c.ndevs; d++) {
                const struct vt_combined_dev *cd = &c.devs[d];
                if (cd->nprocs < 2 || cd->peak <= g->max_device_peak) continue;
                int k = snprintf(msg, sizeof msg, "--max-peak=device:%s: %s %s: its processes held %s (%llu bytes) at once, over "
                                 "the limit by %s (pid", vtr_fmt_bytes(b0, sizeof b0, g->max_device_peak), cd->host ? cd->host : "?",
                                 cd->pci && cd->pci[0] ? cd->pci : cd->name ? cd->name : "?", vtr_fmt_bytes(b1, sizeof b1, cd->peak),
                                 (unsigned long long)cd->peak, vtr_fmt_bytes(b2, sizeof b2, cd->peak - g->max_device_peak));
                for (size_t i = 0; i < cd->npids && k > 0 && (size_t)k < sizeof msg; i++)
                    k += snprintf(msg + k, sizeof msg - (size_t)k, "%s%lld", i ? "+" : " ", (long long)cd->pids[i]);
                if (k > 0 && (size_t)k < sizeof msg) snprintf(msg + k, sizeof msg - (size_t)k, ")");
                say(ctx, msg), tripped++;
            }
            vt_combined_free(&c);
        }
    }
    return tripped;
}

static uint64_t run_peak(struct vt_proc *const *procs, size_t n)
{
    uint64_t peak = 0;
    for (size_t i = 0; i < n; i++) if (procs[i]->peak > peak) peak = procs[i]->peak;
    return peak;
}

size_t vt_gate_check_diff(struct vt_proc *const *base, size_t nb, struct vt_proc *const *cur, size_t nc,
                          const struct vt_gates *g, void (*say)(void *ctx, const char *msg), void *ctx)
{
    uint64_t a = run_peak(base, nb), b = run_peak(cur, nc);
    if (b <= a) return 0;
    char msg[512], b0[32], b1[32], b2[32], b3[32];
    uint64_t up = b - a;
    size_t tripped = 0;
    if (up > g->max_increase_bytes) {
        snprintf(msg, sizeof msg, "--max-increase=%s: peak VRAM %s -> %s, +%s (%llu bytes), over the limit",
                 vtr_fmt_bytes(b0, sizeof b0, g->max_increase_bytes), vtr_fmt_bytes(b1, sizeof b1, a),
                 vtr_fmt_bytes(b2, sizeof b2, b), vtr_fmt_bytes(b3, sizeof b3, up), (unsigned long long)up);
        say(ctx, msg), tripped++;
    }
    /* a base that held nothing: any increase is over every percentage */
    if (g->max_increase_pct >= 0 && (a == 0 || (double)up * 100.0 > g->max_increase_pct * (double)a)) {
        if (a) snprintf(msg, sizeof msg, "--max-increase=%g%%: peak VRAM %s -> %s, +%.1f%%, over the limit", g->max_increase_pct,
                        vtr_fmt_bytes(b1, sizeof b1, a), vtr_fmt_bytes(b2, sizeof b2, b), (double)up * 100.0 / (double)a);
        else snprintf(msg, sizeof msg, "--max-increase=%g%%: peak VRAM 0 B -> %s: the base run held no VRAM",
                      g->max_increase_pct, vtr_fmt_bytes(b2, sizeof b2, b));
        say(ctx, msg), tripped++;
    }
    return tripped;
}
