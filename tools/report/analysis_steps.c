/* analysis_steps.c - the steps of a training loop (issue 49): where they come from, in this
 * order: the program's vramtrace_step() calls (`step` records), else a repeated NVTX range (a
 * name with "step" or "iter" in it first, else the repeated name open longest in all), each
 * with its duration, the live VRAM at its start and its peak (from the feed's log of VRAM changes,
 * in trace order: a boundary is the log's length when it was read, so threads' clocks never
 * reorder it). Memory: 16 bytes per `step` record and per NVTX range instance, capped. */
#include "report/analysis.h"
#include "report/analysis_priv.h"

#include <ctype.h>
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
struct vt_an_steps {
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
            x->open_ns += x->v[i].t1 - x->v[i].t0;
            return;
        }
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

/* Each step's live VRAM at its start and its peak, walking the change log once (steps in log
 * order: their boundaries only grow). */
static void live_of_steps(const struct vt_an_private *a, struct vt_step *st, const uint64_t *at0, const uint64_t *at1,
                          size_t n)
{
    int64_t live = 0, peak;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        for (; j < at0[i] && j < a->nchanges; j++) live += a->changes[j].delta;
        peak = live;
        st[i].live_start = live > 0 ? (uint64_t)live : 0;
        int64_t run = live;
        for (size_t k = j; k < at1[i] && k < a->nchanges; k++) {
            run += a->changes[k].delta;
            if (run > peak) peak = run;
        }
        st[i].peak = peak > 0 ? (uint64_t)peak : 0;
    }
}

static int fill(struct vt_proc *p, size_t n, uint64_t count, int source, const char *name)
{
    struct vt_steps *o = &p->steps;
    struct vt_an_steps *s = p->priv->steps;
    const struct name_insts *x = source == VT_STEPS_NVTX ? step_range(s) : NULL;
    o->list = calloc(n ? n : 1, sizeof *o->list);
    uint64_t *at0 = calloc(n ? n : 1, sizeof *at0), *at1 = calloc(n ? n : 1, sizeof *at1);
    if (!o->list || !at0 || !at1) { free(at0); free(at1); return VT_AN_ENOMEM; }
    o->source = source;
    o->name = name;
    o->count = count;
    size_t k = 0;
    for (size_t i = 0; i < (x ? x->n : s->nmarks) && k < n; i++, k++) {
        if (x) {
            if (x->v[i].t1 < 0) { k--; continue; }
            o->list[k] = (struct vt_step){ .t = x->v[i].t0, .dur = x->v[i].t1 - x->v[i].t0 };
            at0[k] = x->v[i].at0;
            at1[k] = x->v[i].at1;
            continue;
        }
        /* step K runs from the K-th call to the next, the last to the end of the trace */
        int last = i + 1 == s->nmarks;
        int64_t end = last ? p->t_end : s->marks[i + 1].t;
        o->list[k] = (struct vt_step){ .t = s->marks[i].t, .dur = end > s->marks[i].t ? end - s->marks[i].t : 0 };
        at0[k] = s->marks[i].at;
        at1[k] = last ? p->priv->nchanges : s->marks[i + 1].at;
    }
    o->nlist = k;
    o->live_known = !p->priv->changes_lost;
    if (o->live_known) live_of_steps(p->priv, o->list, at0, at1, k);
    free(at0);
    free(at1);
    for (size_t i = 0; i < k; i++) {
        const struct vt_step *e = &o->list[i];
        o->total_ns += e->dur;
        if (i == 0 || e->dur < o->min_ns) o->min_ns = e->dur;
        if (e->dur > o->max_ns) o->max_ns = e->dur;
        if (i == 0 || e->peak > o->max_peak) { o->max_peak = e->peak; o->max_peak_step = i + 1; }
    }
    return 0;
}

int vt_an_steps_finish(struct vt_proc *p)
{
    struct vt_an_steps *s = p->priv->steps;
    if (!s) return 0;
    if (s->nmarks) return fill(p, s->nmarks, s->mark_count, VT_STEPS_API, "vramtrace_step()");
    const struct name_insts *x = step_range(s);
    if (x) return fill(p, x->closed < x->n ? (size_t)x->closed : x->n, x->closed, VT_STEPS_NVTX, x->name);
    return 0;
}

void vt_an_steps_free(struct vt_proc *p)
{
    struct vt_an_steps *s = p->priv ? p->priv->steps : NULL;
    if (s) {
        free(s->marks);
        for (size_t i = 0; i < s->nnames; i++) free(s->names[i].v);
        free(s->names);
        free(s);
        p->priv->steps = NULL;
    }
    free(p->steps.list);
    p->steps.list = NULL;
}
