/* analysis_combine.c - several traces as one machine sees them: each device's live VRAM summed
 * over the processes that used it, in wall-clock order (each header's anchor: wall_time_ns, else
 * wall_time, at its t), so processes that overlapped add and ones that ran one after another do
 * not. A device is its host and PCI bus id (the device record's "pci"; device ordinals differ
 * between processes that see different CUDA_VISIBLE_DEVICES); without a bus id, its host and
 * ordinal. */
#include "report/analysis.h"
#include "report/analysis_priv.h"

#include <stdlib.h>
#include <string.h>

struct entry { int64_t t, delta; uint32_t cdev, proc; };

static int cmp_entry(const void *x, const void *y)
{
    const struct entry *a = x, *b = y;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->delta < b->delta ? -1 : a->delta > b->delta; /* frees first at one instant */
}

static const struct vt_device *dev_of(const struct vt_proc *p, int32_t dev)
{
    if (dev < -1) return NULL;
    size_t slot = (size_t)dev + 1;
    return slot < p->ndevices ? &p->devices[slot] : NULL;
}

/* The combined device of P's device DEV: its index in c->devs, or -1. */
static long find_cdev(const struct vt_combined *c, const struct vt_proc *p, int32_t dev)
{
    const struct vt_device *d = dev_of(p, dev);
    const char *pci = d && d->pci ? d->pci : "";
    for (size_t i = 0; i < c->ndevs; i++) {
        const struct vt_combined_dev *x = &c->devs[i];
        if (strcmp(x->host, p->hostname)) continue;
        if (pci[0] ? !strcmp(x->pci, pci) : (!x->pci[0] && x->dev == dev)) return (long)i;
    }
    return -1;
}

/* find_cdev, adding the device when new; -1 out of memory. */
static long cdev_of(struct vt_combined *c, const struct vt_proc *p, int32_t dev)
{
    long found = find_cdev(c, p, dev);
    if (found >= 0) return found;
    const struct vt_device *d = dev_of(p, dev);
    const char *pci = d && d->pci ? d->pci : "";
    struct vt_combined_dev *n = realloc(c->devs, (c->ndevs + 1) * sizeof *n);
    if (!n) return -1;
    c->devs = n;
    n[c->ndevs] = (struct vt_combined_dev){ .host = p->hostname, .pci = pci, .dev = dev,
                                            .name = d && d->name ? d->name : "" };
    return (long)c->ndevs++;
}

int vt_combine(struct vt_proc *const *procs, size_t n, struct vt_combined *c)
{
    memset(c, 0, sizeof *c);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!procs[i]->wall_ns) { c->why_not = "a trace has no wall-clock anchor in its header"; return 0; }
        if (procs[i]->priv->changes_lost) { c->why_not = "out of memory for a trace's change log"; return 0; }
        total += procs[i]->priv->nchanges;
    }
    struct entry *e = malloc((total ? total : 1) * sizeof *e);
    if (!e) { c->why_not = "out of memory"; return 0; }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct vt_an_private *a = procs[i]->priv;
        for (size_t j = 0; j < a->nchanges; j++) {
            long cd = cdev_of(c, procs[i], a->changes[j].dev);
            if (cd < 0) { free(e); vt_combined_free(c); c->why_not = "out of memory"; return 0; }
            e[k++] = (struct entry){ procs[i]->wall_ns + (a->changes[j].t - procs[i]->t0), a->changes[j].delta,
                                     (uint32_t)cd, (uint32_t)i };
        }
    }
    qsort(e, k, sizeof *e, cmp_entry);
    int64_t *cur = calloc(c->ndevs ? c->ndevs : 1, sizeof *cur);
    size_t *at = calloc(c->ndevs ? c->ndevs : 1, sizeof *at);      /* index just past each device's peak */
    if (!cur || !at) { free(e); free(cur); free(at); vt_combined_free(c); c->why_not = "out of memory"; return 0; }
    int64_t sum = 0;
    for (size_t i = 0; i < k; i++) {
        struct vt_combined_dev *d = &c->devs[e[i].cdev];
        cur[e[i].cdev] += e[i].delta;
        sum += e[i].delta;
        if (cur[e[i].cdev] > 0 && (uint64_t)cur[e[i].cdev] > d->peak) {
            d->peak = (uint64_t)cur[e[i].cdev]; d->peak_wall_ns = e[i].t; at[e[i].cdev] = i + 1;
        }
        if (sum > 0 && (uint64_t)sum > c->peak) { c->peak = (uint64_t)sum; c->peak_wall_ns = e[i].t; }
    }
    /* who held each device at its peak, and the processes that used it at all */
    int64_t *live = calloc(n ? n : 1, sizeof *live);
    char *used = calloc(n ? n : 1, 1);
    for (size_t dv = 0; live && used && dv < c->ndevs; dv++) {
        struct vt_combined_dev *d = &c->devs[dv];
        memset(live, 0, n * sizeof *live);
        memset(used, 0, n);
        for (size_t i = 0; i < k; i++) {
            if (e[i].cdev != dv) continue;
            used[e[i].proc] = 1;
            if (i < at[dv]) live[e[i].proc] += e[i].delta;
        }
        d->pids = calloc(n ? n : 1, sizeof *d->pids);
        if (!d->pids) continue;
        for (size_t i = 0; i < n; i++) {
            if (live[i] > 0) d->pids[d->npids++] = procs[i]->pid;
            if (!used[i]) continue;
            d->nprocs++;
            const struct vt_device *pd = NULL;
            for (size_t s = 0; s < procs[i]->ndevices; s++) {
                pd = &procs[i]->devices[s];
                if (find_cdev(c, procs[i], pd->dev) == (long)dv) vt_sat_add(&d->sum_of_peaks, pd->peak);
            }
        }
    }
    free(live); free(used); free(e); free(cur); free(at);
    c->by_time = 1;
    return 0;
}

void vt_combined_free(struct vt_combined *c)
{
    for (size_t i = 0; i < c->ndevs; i++) free(c->devs[i].pids);
    free(c->devs);
    c->devs = NULL;
    c->ndevs = 0;
}
