/* analysis_steps.c - the steps of a training loop (issue 49): where they come from, in this
 * order: the program's vramtrace_step() calls (`step` records), else a repeated NVTX range (a
 * name with "step" or "iter" in it first, else the repeated name open longest in all), else a
 * period in the calls the tracer always writes a line for (allocations, frees, device-to-host
 * copies, synchronisations: folding never hides them, so the steps found are the same with it
 * on or off; launches, host-to-device copies and memsets are counted, not ordered, when folded).
 * Each step has its duration, the live VRAM at its start and its peak (from the feed's log of
 * VRAM changes, in trace order: a boundary is the log's length when it was read, so threads'
 * clocks never reorder it). Memory: 16 bytes per `step` record and per NVTX range instance, 48
 * per call followed for a period; each capped. */
#include "report/analysis.h"
#include "report/analysis_priv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MARKS (1u << 20)         /* boundaries kept per source; later ones are counted only */
#define MAX_NAMES 256                /* NVTX names followed for steps */

struct mark { int64_t t; uint64_t at; };            /* at: the change log's length then */
struct inst { int64_t t0, t1, who; uint64_t at0, at1; }; /* who: tid (push/pop) or id (start/end); t1 < 0 open */
struct name_insts {
    const char *name;
    struct inst *v;
    size_t n, cap;
    uint64_t count, closed;
    int64_t open_ns;                 /* closed instances' durations added */
};
/* A call the tracer always writes, as one thread made it: what it is (kind, API, call stack: not
 * its sizes or addresses, which a step may vary), when, and the change log's length before and
 * after it. */
struct call { uint64_t what; int64_t t, t_end; uint32_t at0, at1; uint32_t kind; const char *api; };
#define MAX_CALLS (1u << 20)         /* followed over all threads */
struct thread_calls { int64_t tid; struct call *v; size_t n, cap; };
struct vt_an_steps {
    struct thread_calls *threads;
    size_t nthreads, capthreads;
    size_t ncalls;
    struct mark *marks;
    size_t nmarks, capmarks;
    uint64_t mark_count;
    struct name_insts *names;
    size_t nnames, capnames;
};

static struct vt_an_steps *state(struct vt_proc *p)
{
    if (!p->priv->steps) p->priv->steps = calloc(1, sizeof *p->priv->steps);
    return p->priv->steps;
}

int vt_an_steps_mark(struct vt_proc *p, int64_t t)
{
    struct vt_an_steps *s = state(p);
    if (!s) return VT_AN_ENOMEM;
    s->mark_count++;
    if (s->nmarks == MAX_MARKS) return 0;
    GROW(s->marks, s->nmarks, s->capmarks, 64);
    s->marks[s->nmarks++] = (struct mark){ t, p->priv->nchanges };
    return 0;
}

static struct name_insts *insts_of(struct vt_an_steps *s, const char *name, int make)
{
    for (size_t i = 0; i < s->nnames; i++)
        if (s->names[i].name == name) return &s->names[i]; /* interned: one pointer per name */
    if (!make || s->nnames == MAX_NAMES) return NULL;
    if (s->nnames == s->capnames) {
        size_t cap = s->capnames ? s->capnames * 2 : 8;
        struct name_insts *n = realloc(s->names, cap * sizeof *n);
        if (!n) return NULL;
        s->names = n;
        s->capnames = cap;
    }
    struct name_insts *x = &s->names[s->nnames++];
    memset(x, 0, sizeof *x);
    x->name = name;
    return x;
}

int vt_an_steps_range_open(struct vt_proc *p, const char *name, int64_t who, int64_t t)
{
    struct vt_an_steps *s = state(p);
    if (!s) return VT_AN_ENOMEM;
    struct name_insts *x = insts_of(s, vt_an_keep(p, name), 1);
    if (!x) return 0;
    x->count++;
    if (x->n == MAX_MARKS) return 0;
    GROW(x->v, x->n, x->cap, 16);
    x->v[x->n++] = (struct inst){ t, -1, who, p->priv->nchanges, 0 };
    return 0;
}

void vt_an_steps_range_close(struct vt_proc *p, const char *name, int64_t who, int64_t t)
{
    struct vt_an_steps *s = p->priv->steps;
    struct name_insts *x = s ? insts_of(s, vt_an_keep(p, name), 0) : NULL;
    if (!x) return;
    for (size_t i = x->n; i-- > 0;) /* the innermost open one of this thread (or id) */
        if (x->v[i].t1 < 0 && x->v[i].who == who) {
            x->v[i].t1 = t > x->v[i].t0 ? t : x->v[i].t0;
            x->v[i].at1 = p->priv->nchanges;
            x->closed++;
            x->open_ns = vt_an_add_sat(x->open_ns, vt_an_span(x->v[i].t0, x->v[i].t1));
            return;
        }
}

/* Each step's live VRAM at its start and its peak, walking the change log once (steps in log
 * order: their boundaries only grow). */
static void live_of_steps(const struct vt_an_private *a, struct vt_step *st, const uint64_t *at0, const uint64_t *at1,
                          size_t n)
{
    int64_t live = 0, peak;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        for (; j < at0[i] && j < a->nchanges; j++) live = vt_an_add_sat(live, a->changes[j].delta);
        peak = live;
        st[i].live_start = live > 0 ? (uint64_t)live : 0;
        int64_t run = live;
        for (size_t k = j; k < at1[i] && k < a->nchanges; k++) {
            run = vt_an_add_sat(run, a->changes[k].delta);
            if (run > peak) peak = run;
        }
        st[i].peak = peak > 0 ? (uint64_t)peak : 0;
        st[i].live_end = run > 0 ? (uint64_t)run : 0;
        st[i].log_from = at0[i];
        st[i].log_to = at1[i];
    }
}

/* The list of N steps and the change log's span of each (freed by end_list). */
static int start_list(struct vt_steps *o, size_t n, uint64_t **at0, uint64_t **at1)
{
    o->list = calloc(n ? n : 1, sizeof *o->list);
    *at0 = calloc(n ? n : 1, sizeof **at0);
    *at1 = calloc(n ? n : 1, sizeof **at1);
    if (o->list && *at0 && *at1) return 0;
    free(*at0);
    free(*at1);
    return VT_AN_ENOMEM;
}

/* N steps filled: their live VRAM from the change log. */
static void end_list(struct vt_proc *p, struct vt_steps *o, uint64_t *at0, uint64_t *at1, size_t n)
{
    o->nlist = n;
    o->live_known = !p->priv->changes_lost;
    if (o->live_known) live_of_steps(p->priv, o->list, at0, at1, n);
    free(at0);
    free(at1);
}

int vt_an_steps_call(struct vt_proc *p, const struct vt_event *ev, size_t at0)
{
    int kind = ev->type;
    if (ev->res_null || ev->res || ev->captured || ev->graph) return 0;
    if (!(kind == VT_EV_ALLOC || kind == VT_EV_FREE || kind == VT_EV_SYNC || (kind == VT_EV_COPY && ev->dir == VT_DIR_D2H)))
        return 0;
    struct vt_an_steps *s = state(p);
    if (!s) return VT_AN_ENOMEM;
    if (s->ncalls == MAX_CALLS) return 0;
    struct thread_calls *th = NULL;
    for (size_t i = s->nthreads; i-- > 0;)
        if (s->threads[i].tid == ev->tid) { th = &s->threads[i]; break; }
    if (!th) {
        GROW(s->threads, s->nthreads, s->capthreads, 4);
        th = &s->threads[s->nthreads++];
        memset(th, 0, sizeof *th);
        th->tid = ev->tid;
    }
    GROW(th->v, th->n, th->cap, 256);
    uint64_t what = vtr_hash64(ev->api, strlen(ev->api)) ^ (uint64_t)kind * 0x9E3779B97F4A7C15ull;
    if (ev->nbt) what ^= vtr_hash64(ev->bt, ev->nbt * sizeof ev->bt[0]) * 31;
    th->v[th->n++] = (struct call){ what, ev->t, vt_an_add_sat(ev->t, ev->dur > 0 ? ev->dur : 0), (uint32_t)at0,
                                    (uint32_t)p->priv->nchanges, (uint32_t)kind, vt_an_keep(p, ev->api) };
    s->ncalls++;
    return 0;
}

/* The period of the thread's longest repeating run of calls that are steps: P such that calls [*START, *END)
 * are each the one P before (from *START + P on), over the most calls; the smallest P of those
 * covering as many; 3 periods at least. 0 when none (a loop's set-up and tear-down are outside
 * the run). */
/* A step waits for the GPU, or allocates and gives memory back: a run of allocations alone is
 * a set-up loop, one of frees a tear-down (a cache emptied). *LAST: the period's last call
 * where the host waited (from V), else P - 1. */
static int steplike(const struct call *v, size_t p, size_t *last)
{
    int waits = 0, allocs = 0, frees = 0;
    *last = p - 1;
    for (size_t k = 0; k < p; k++) {
        int kind = (int)v[k].kind;
        if (kind == VT_EV_SYNC || kind == VT_EV_COPY) *last = k, waits = 1;
        allocs |= kind == VT_EV_ALLOC;
        frees |= kind == VT_EV_FREE;
    }
    return waits || (allocs && frees);
}

static size_t period_of(const struct call *v, size_t n, size_t *start, size_t *end)
{
    size_t best = 0, cover = 0, last;
    for (size_t p = 1; p <= n / 3 && p <= 256; p++) {
        size_t run = 0;
        for (size_t i = p; i <= n; i++) {
            if (i < n && v[i].what == v[i - p].what) { run++; continue; }
            /* calls [i - run - p, i) repeat with period p; a set-up or tear-down run is passed by */
            if (run + p > cover && (run + p) / p >= 3 && steplike(v + i - run - p, p, &last)) {
                cover = run + p; best = p; *start = i - run - p; *end = i;
            }
            run = 0;
        }
    }
    return best;
}

/* The steps of the thread whose calls repeat most often: each a block of one period, ending
 * where the host last waited for the GPU in it (a synchronisation or a device-to-host copy),
 * else at the period's last call. Step 1 starts at its block's first call, each later one where
 * the one before ended. */
static int period_steps(struct vt_proc *p)
{
    struct vt_an_steps *s = p->priv->steps;
    const struct thread_calls *best = NULL;
    size_t best_p = 0, best_b = 0, best_blocks = 0;
    for (size_t i = 0; i < s->nthreads; i++) {
        const struct thread_calls *th = &s->threads[i];
        size_t start = 0, end = 0, per = th->n >= 3 ? period_of(th->v, th->n, &start, &end) : 0;
        size_t q; /* the block's last call, from the run's start */
        if (!per || !steplike(th->v + start, per, &q)) continue;
        size_t b = start + (q + 1) % per, blocks = (end - b) / per;
        if (blocks >= 3 && blocks > best_blocks) { best = th; best_p = per; best_b = b; best_blocks = blocks; }
    }
    if (!best) return 0;
    struct vt_steps *o = &p->steps;
    uint64_t *at0, *at1;
    if (start_list(o, best_blocks, &at0, &at1) < 0) return VT_AN_ENOMEM;
    for (size_t k = 0; k < best_blocks; k++) {
        const struct call *first = &best->v[best_b + k * best_p], *last = first + best_p - 1;
        int64_t t0 = k ? first[-1].t_end : first->t;
        o->list[k] = (struct vt_step){ .t = t0, .dur = vt_an_span(t0, last->t_end) };
        at0[k] = k ? first[-1].at1 : first->at0;
        at1[k] = last->at1;
    }
    char what[200]; /* "4 calls: cudaMalloc, cudaMalloc, cudaFree, cudaMemcpy" */
    size_t len = (size_t)snprintf(what, sizeof what, "%zu call%s:", best_p, best_p == 1 ? "" : "s");
    for (size_t k = 0; k < best_p && len < sizeof what; k++) {
        if (k == 6) { snprintf(what + len, sizeof what - len, ", ..."); break; }
        len += (size_t)snprintf(what + len, sizeof what - len, "%s %s", k ? "," : "", best->v[best_b + k].api);
    }
    o->source = VT_STEPS_PERIOD;
    o->name = vt_an_keep(p, what);
    o->count = best_blocks;
    end_list(p, o, at0, at1, best_blocks);
    return 0;
}

static int names_steps(const char *name)
{
    char low[64];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof low; i++) low[i] = (char)tolower((unsigned char)name[i]);
    low[i] = '\0';
    return strstr(low, "step") || strstr(low, "iter");
}

/* The NVTX name whose closed instances are the steps: 2 or more, a step-like name first, then
 * (3 or more) the one open longest in all; NULL when none. */
static struct name_insts *step_range(struct vt_an_steps *s)
{
    struct name_insts *best = NULL;
    for (int pass = 0; pass < 2 && !best; pass++)
        for (size_t i = 0; i < s->nnames; i++) {
            struct name_insts *x = &s->names[i];
            if (x->closed < (pass ? 3u : 2u) || (!pass && !names_steps(x->name))) continue;
            if (!best || x->open_ns > best->open_ns) best = x;
        }
    return best;
}

static int fill(struct vt_proc *p, size_t n, uint64_t count, int source, const char *name)
{
    struct vt_steps *o = &p->steps;
    struct vt_an_steps *s = p->priv->steps;
    const struct name_insts *x = source == VT_STEPS_NVTX ? step_range(s) : NULL;
    uint64_t *at0, *at1;
    if (start_list(o, n, &at0, &at1) < 0) return VT_AN_ENOMEM;
    o->source = source;
    o->name = name;
    o->count = count;
    size_t k = 0;
    for (size_t i = 0; i < (x ? x->n : s->nmarks) && k < n; i++, k++) {
        if (x) {
            if (x->v[i].t1 < 0) { k--; continue; }
            o->list[k] = (struct vt_step){ .t = x->v[i].t0, .dur = vt_an_span(x->v[i].t0, x->v[i].t1) };
            at0[k] = x->v[i].at0;
            at1[k] = x->v[i].at1;
            continue;
        }
        /* step K runs from the K-th call to the next, the last to the end of the trace */
        int last = i + 1 == s->nmarks;
        int64_t end = last ? p->t_end : s->marks[i + 1].t;
        o->list[k] = (struct vt_step){ .t = s->marks[i].t, .dur = vt_an_span(s->marks[i].t, end) };
        at0[k] = s->marks[i].at;
        at1[k] = last ? p->priv->nchanges : s->marks[i + 1].at;
    }
    end_list(p, o, at0, at1, k);
    return 0;
}

static void sums(struct vt_steps *o)
{
    for (size_t i = 0; i < o->nlist; i++) {
        const struct vt_step *e = &o->list[i];
        o->total_ns = vt_an_add_sat(o->total_ns, e->dur);
        if (i == 0 || e->dur < o->min_ns) o->min_ns = e->dur;
        if (e->dur > o->max_ns) o->max_ns = e->dur;
        if (i == 0 || e->peak > o->max_peak) { o->max_peak = e->peak; o->max_peak_step = i + 1; }
    }
}

int vt_an_steps_finish(struct vt_proc *p)
{
    struct vt_an_steps *s = p->priv->steps;
    if (!s) return 0;
    const struct name_insts *x = step_range(s);
    int rc = s->nmarks ? fill(p, s->nmarks, s->mark_count, VT_STEPS_API, "vramtrace_step()")
           : x        ? fill(p, x->closed < x->n ? (size_t)x->closed : x->n, x->closed, VT_STEPS_NVTX, x->name)
                      : period_steps(p);
    if (rc == 0) sums(&p->steps);
    return rc < 0 ? rc : vt_an_growth(p);
}

void vt_an_steps_free(struct vt_proc *p)
{
    struct vt_an_steps *s = p->priv ? p->priv->steps : NULL;
    if (s) {
        free(s->marks);
        for (size_t i = 0; i < s->nthreads; i++) free(s->threads[i].v);
        free(s->threads);
        for (size_t i = 0; i < s->nnames; i++) free(s->names[i].v);
        free(s->names);
        free(s);
        p->priv->steps = NULL;
    }
    free(p->steps.list);
    p->steps.list = NULL;
    free(p->growth.sites);
    p->growth.sites = NULL;
}
