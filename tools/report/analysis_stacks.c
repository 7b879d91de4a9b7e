/* analysis_stacks.c - what every part of the feed shares: call stacks interned per process (one
 * id per distinct stack; sites are made from them at finish), failed calls counted by (api,
 * result), and a device's peak snapshot of its (stack, device) cells. */
#include "report/analysis_priv.h"

#include <stdlib.h>
#include <string.h>

int vt_an_intern_stack(struct vt_proc *p, const uint64_t *pcs, size_t n)
{
    struct vt_an_private *a = p->priv;
    uint64_t h = n ? vtr_hash64(pcs, n * sizeof *pcs) : 0;
    uint64_t *first = vtr_hmap_get(&a->stack_index, h);
    if (first)
        for (uint32_t i = (uint32_t)*first; i != UINT32_MAX; i = a->stacks[i].next)
            if (a->stacks[i].n == n && (!n || !memcmp(a->stacks[i].pcs, pcs, n * sizeof *pcs))) return (int)i;
    GROW(a->stacks, a->nstacks, a->capstacks, 256);
    struct stack *s = &a->stacks[a->nstacks];
    memset(s, 0, sizeof *s);
    if (n && !(s->pcs = malloc(n * sizeof *pcs))) return VT_AN_ENOMEM;
    if (n) memcpy(s->pcs, pcs, n * sizeof *pcs);
    s->n = (uint32_t)n;
    s->next = first ? (uint32_t)*first : UINT32_MAX;
    if (vtr_hmap_put(&a->stack_index, h, a->nstacks) < 0) { free(s->pcs); return VT_AN_ENOMEM; }
    return (int)a->nstacks++;
}

int vt_an_add_error(struct vt_proc *p, const struct vt_event *ev)
{
    p->error_count++;
    for (size_t i = 0; i < p->nerrors; i++)
        if (p->errors[i].res == ev->res && !strcmp(p->errors[i].api, ev->api)) { p->errors[i].count++; return 0; }
    if (p->nerrors == VT_AN_MAX_ERRORS) return 0;
    int st = vt_an_intern_stack(p, ev->bt, ev->nbt);
    if (st < 0) return st;
    if (ev->nbt) p->backtraces_seen = 1;
    p->errors[p->nerrors++] = (struct vt_error){ vt_an_keep(p, ev->api), ev->res, 1, ev->t, st };
    if (!ev->nbt) { p->priv->stackless_err = p->nerrors; p->priv->stackless_tid = ev->tid; }
    return 0;
}

void vt_an_device_snapshot(struct vt_proc *p, struct vt_device *d)
{
    struct vt_an_private *a = p->priv;
    for (size_t i = 0; i < a->nctouched;) {
        struct cell *c = &a->cells[a->ctouched[i]];
        if (c->dev != d->dev) { i++; continue; }
        c->snap = c->live; c->snap_count = c->count; c->touched = 0;
        a->ctouched[i] = a->ctouched[--a->nctouched];
    }
    d->peak_pending = 0;
}
