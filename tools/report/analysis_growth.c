/* analysis_growth.c - how live VRAM moves from step to step (issue 49 slice 2): flat, a warm-up
 * that stopped, or steady growth (a leak) with its rate, the call sites whose live bytes rise
 * step after step, and when the device runs out (definitions: analysis.h, struct vt_growth).
 *
 * The series is what each step leaves live: the live VRAM as the next step begins (so the last
 * step, which may run on into the program's tear-down, only ends the series). Its trend is the
 * least-squares slope over
 * the last half of the steps (3 at least): a warm-up early in the run does not count, and a
 * slope counts only when it carries the window's ends further apart than four times the steps'
 * wobble around the line (their standard deviation) and in most of those steps live memory
 * rose, so a loop whose live memory wobbles without a trend says flat. */
#include "report/analysis.h"
#include "report/analysis_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What step K (0-based, not the last) left live: the live VRAM as step K + 1 began. */
static double left(const struct vt_step *st, size_t k) { return (double)st[k + 1].live_start; }

/* least-squares line through (k, left(k)) for k in [a, b): slope, and the residuals' standard deviation */
static void fit(const struct vt_step *st, size_t a, size_t b, double *slope, double *sd)
{
    double m = (double)(b - a), sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t k = a; k < b; k++) {
        double x = (double)k, y = left(st, k);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    double den = m * sxx - sx * sx;
    *slope = den > 0 ? (m * sxy - sx * sy) / den : 0;
    double icpt = (sy - *slope * sx) / m, ss = 0;
    for (size_t k = a; k < b; k++) {
        double r = left(st, k) - (icpt + *slope * (double)k);
        ss += r * r;
    }
    *sd = sqrt(ss / m);
}

static int cmp_site(const void *x, const void *y)
{
    const struct vt_growth_site *a = x, *b = y;
    return a->bytes_per_step < b->bytes_per_step ? 1 : a->bytes_per_step > b->bytes_per_step ? -1 : a->site - b->site;
}

/* The sites whose live bytes rose in most steps of the window [w0, n) (0-based; N < the step
 * count: each step ends where the next begins) and grew over it. */
static int growing_sites(struct vt_proc *p, size_t w0, size_t n)
{
    struct vt_an_private *a = p->priv;
    const struct vt_step *st = p->steps.list;
    size_t ns = a->nstacks;
    if (!ns) return 0;
    int64_t *cur = calloc(ns, sizeof *cur), *prev = calloc(ns, sizeof *prev), *from = calloc(ns, sizeof *from);
    uint64_t *rises = calloc(ns, sizeof *rises);
    int rc = VT_AN_ENOMEM;
    if (!cur || !prev || !from || !rises) goto out;
    size_t j = 0;
    for (; j < st[w0].log_from && j < a->nchanges; j++)
        if (a->changes[j].stack < ns) cur[a->changes[j].stack] = vt_an_add_sat(cur[a->changes[j].stack], a->changes[j].delta);
    memcpy(from, cur, ns * sizeof *cur);
    memcpy(prev, cur, ns * sizeof *cur);
    for (size_t k = w0; k < n; k++) {
        size_t j0 = j < st[k].log_from ? st[k].log_from : j;
        for (; j < j0 && j < a->nchanges; j++) /* between two NVTX instances */
            if (a->changes[j].stack < ns) cur[a->changes[j].stack] = vt_an_add_sat(cur[a->changes[j].stack], a->changes[j].delta);
        size_t end = st[k + 1].log_from; /* what step K left: up to the next step's start */
        for (; j < end && j < a->nchanges; j++)
            if (a->changes[j].stack < ns) cur[a->changes[j].stack] = vt_an_add_sat(cur[a->changes[j].stack], a->changes[j].delta);
        for (size_t x = j0; x < end && x < a->nchanges; x++) { /* the stacks this step changed */
            uint32_t s = a->changes[x].stack;
            if (s >= ns || prev[s] == cur[s]) continue;
            rises[s] += cur[s] > prev[s];
            prev[s] = cur[s];
        }
    }
    struct vt_growth *g = &p->growth;
    size_t m = n - w0, cap = 0;
    for (size_t s = 0; s < ns; s++) {
        if (cur[s] <= from[s] || rises[s] * 10 < m * 6) continue;
        int site = a->stacks[s].site;
        size_t i = 0;
        while (i < g->nsites && g->sites[i].site != site) i++;
        if (i == g->nsites) {
            if (g->nsites == cap) {
                size_t nc = cap ? cap * 2 : 8;
                struct vt_growth_site *ng = realloc(g->sites, nc * sizeof *ng);
                if (!ng) goto out;
                g->sites = ng;
                cap = nc;
            }
            g->sites[g->nsites++] = (struct vt_growth_site){ site, 0, 0 };
        }
        g->sites[i].bytes_per_step = vt_an_add_sat(g->sites[i].bytes_per_step, vt_an_span(from[s], cur[s]) / (int64_t)m);
        if (rises[s] > g->sites[i].rises) g->sites[i].rises = rises[s];
    }
    if (g->nsites) qsort(g->sites, g->nsites, sizeof *g->sites, cmp_site);
    rc = 0;
out:
    free(cur); free(prev); free(from); free(rises);
    return rc;
}

/* The device that holds the most: its capacity less what others use there (the driver's last
 * word, when the program or the tracer asked it). */
static void forecast(struct vt_proc *p)
{
    struct vt_growth *g = &p->growth;
    const struct vt_steps *s = &p->steps;
    const struct vt_device *d = NULL;
    for (size_t i = 0; i < p->ndevices; i++)
        if (p->devices[i].dev >= 0 && (!d || p->devices[i].peak > d->peak)) d = &p->devices[i];
    if (!d || !d->total_bytes || g->rate_bytes <= 0) return;
    uint64_t cap = d->total_bytes;
    if (d->driver.samples && d->driver.last_unattributed < cap) cap -= d->driver.last_unattributed;
    uint64_t last = s->list[s->nlist - 1].peak;
    uint64_t rate = (uint64_t)g->rate_bytes, room = last >= cap ? 0 : cap - last, left = room / rate + (room % rate != 0);
    g->has_forecast = 1;
    g->forecast_dev = d->dev;
    g->capacity_bytes = cap;
    g->forecast_step = s->nlist + left;
    g->forecast_seconds = (double)left * ((double)s->total_ns / 1e9 / (double)s->nlist);
}

int vt_an_growth(struct vt_proc *p)
{
    const struct vt_steps *s = &p->steps;
    struct vt_growth *g = &p->growth;
    if (s->nlist < 4 || !s->live_known) return 0;
    size_t n = s->nlist - 1; /* the steps with an end: all but the last */
    const struct vt_step *st = s->list;
    size_t m = n - n / 2 < 3 ? 3 : n - n / 2, w0 = n - m;
    double slope, sd;
    fit(st, w0, n, &slope, &sd);
    double mean = 0;
    for (size_t k = w0; k < n; k++) mean += left(st, k) / (double)m;
    double floor_ = mean / 1000 > 65536 ? mean / 1000 : 65536; /* below this no trend is a trend */
    size_t up = 0;
    for (size_t k = w0; k < n; k++) up += left(st, k) > (double)st[k].live_start;
    g->wobble_bytes = sd < 1.8e19 ? (uint64_t)sd : UINT64_MAX;
    g->window_first = w0 + 1;
    g->window_last = n;
    if (slope > 0 && slope * (double)(m - 1) > 4 * sd + floor_ && up * 10 >= m * 6) {
        g->kind = VT_GROWTH_STEADY;
        g->rate_bytes = slope < 9.2e18 ? (int64_t)llround(slope) : INT64_MAX;
        if (growing_sites(p, w0, n) < 0) return VT_AN_ENOMEM;
        forecast(p);
        return 0;
    }
    /* not growing now: did it grow before? the last step that rose above the wobble */
    double noise = 4 * sd + floor_;
    size_t last_rise = 0;
    for (size_t k = 0; k < n; k++)
        if (left(st, k) - (double)st[k].live_start > noise) last_rise = k + 1;
    if (last_rise && left(st, last_rise - 1) - (double)st[0].live_start > noise) {
        g->kind = VT_GROWTH_WARMUP;
        g->warmup_steps = last_rise;
        g->warmup_bytes = (uint64_t)(left(st, last_rise - 1) - (double)st[0].live_start);
        return 0;
    }
    g->kind = VT_GROWTH_FLAT;
    return 0;
}
