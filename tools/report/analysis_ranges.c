/* analysis_ranges.c - the per-range table: for each NVTX range path, the peak live VRAM while it
 * was open and the VRAM allocations and frees made inside it (definitions in analysis.h, struct
 * vt_range).  Memory: at most VT_AN_MAX_RANGES entries; later paths share "(other)". */
#include "report/analysis.h"
#include "report/analysis_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vt_an_node_path(const struct vt_proc *p, uint32_t node, char *buf, size_t n)
{
    const struct vt_an_private *a = p->priv;
    size_t len = 0;
    uint32_t chain[64];
    int depth = 0;
    for (uint32_t x = node; x && depth < 64; x = a->rnodes[x].parent) chain[depth++] = x;
    buf[0] = '\0';
    for (int i = depth - 1; i >= 0 && len + 4 < n; i--)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? " > " : "",
                                vtr_strtab_get(&a->strs, a->rnodes[chain[i]].name));
    if (len >= n) buf[n - 1] = '\0';
}

static int new_stat(struct vt_proc *p, const char *name, uint64_t h, uint32_t *stat)
{
    struct vt_an_private *a = p->priv;
    GROW(a->rstats, a->nrstats, a->caprstats, 16);
    const char *kept = vt_an_keep(p, name);
    struct rstat *r = &a->rstats[a->nrstats];
    memset(r, 0, sizeof *r);
    r->hash = h;
    r->r.name = kept;
    *stat = (uint32_t)a->nrstats++;
    return 0;
}

static int stat_for(struct vt_proc *p, const char *path, uint32_t *stat)
{
    struct vt_an_private *a = p->priv;
    uint64_t h = vtr_hash64(path, strlen(path));
    uint64_t *v = vtr_hmap_get(&a->rstat_by_hash, h);
    if (v && !strcmp(a->rstats[*v].r.name, path)) { *stat = (uint32_t)*v; return 0; }
    if (!v && a->nrstats + (a->rother == UINT32_MAX) < VT_AN_MAX_RANGES) {
        if (new_stat(p, path, h, stat) < 0) return VT_AN_ENOMEM;
        return vtr_hmap_put(&a->rstat_by_hash, h, *stat) < 0 ? VT_AN_ENOMEM : 0;
    }
    /* table full (or a 64-bit hash collision): fold into "(other)" */
    if (a->rother == UINT32_MAX && new_stat(p, "(other)", 0, &a->rother) < 0) return VT_AN_ENOMEM;
    *stat = a->rother;
    return 0;
}

int vt_an_range_node_stat(struct vt_proc *p, uint32_t node, uint32_t *stat)
{
    char buf[2048];
    vt_an_node_path(p, node, buf, sizeof buf);
    return stat_for(p, buf, stat);
}

int vt_an_range_named_stat(struct vt_proc *p, const char *name, uint32_t *stat)
{
    return stat_for(p, name ? name : "", stat);
}

void vt_an_range_opened(struct vt_proc *p, uint32_t stat)
{
    struct vt_range *r = &p->priv->rstats[stat].r;
    if (p->live > r->peak_bytes) r->peak_bytes = p->live;
}

static void bump(struct vt_proc *p, uint32_t stat, uint64_t size, int free)
{
    struct rstat *s = &p->priv->rstats[stat];
    if (s->stamp == p->priv->rstamp) return;      /* already counted for this event */
    s->stamp = p->priv->rstamp;
    if (free) { s->r.free_count++; vt_sat_add(&s->r.free_bytes, size); return; }
    s->r.alloc_count++; vt_sat_add(&s->r.alloc_bytes, size);
    if (p->live > s->r.peak_bytes) s->r.peak_bytes = p->live;
}

void vt_an_range_account(struct vt_proc *p, int64_t tid, uint64_t size, int free)
{
    struct vt_an_private *a = p->priv;
    uint64_t *cur = vtr_hmap_get(&a->tid_node, (uint64_t)tid);
    a->rstamp++;
    for (uint32_t n = cur ? (uint32_t)*cur : 0; n; n = a->rnodes[n].parent) bump(p, a->rnodes[n].stat, size, free);
    for (size_t i = 0; i < a->nopen; i++) bump(p, a->open[i].stat, size, free);
}

static int cmp_range(const void *x, const void *y)
{
    const struct vt_range *a = x, *b = y;
    if (a->peak_bytes != b->peak_bytes) return a->peak_bytes < b->peak_bytes ? 1 : -1;
    if (a->alloc_bytes != b->alloc_bytes) return a->alloc_bytes < b->alloc_bytes ? 1 : -1;
    return strcmp(a->name, b->name);
}

int vt_an_range_finish(struct vt_proc *p)
{
    struct vt_an_private *a = p->priv;
    free(p->ranges);
    p->nranges = 0;
    if (!(p->ranges = calloc(a->nrstats ? a->nrstats : 1, sizeof *p->ranges))) return VT_AN_ENOMEM;
    for (size_t i = 0; i < a->nrstats; i++) p->ranges[p->nranges++] = a->rstats[i].r;
    if (p->nranges) qsort(p->ranges, p->nranges, sizeof *p->ranges, cmp_range);
    return 0;
}

/* ---- the peak snapshot: live bytes per stack, and the ranges open at the peak ------------- */

const char *vt_an_ranges_string(struct vt_proc *p, uint32_t node)
{
    struct vt_an_private *a = p->priv;
    char buf[2048];
    vt_an_node_path(p, node, buf, sizeof buf);
    size_t len = strlen(buf);
    for (size_t i = 0; i < a->nopen && len < sizeof buf - 4; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? (i ? ", " : " | ") : "",
                                vtr_strtab_get(&a->strs, a->open[i].name));
    if (len >= sizeof buf) len = sizeof buf - 1;
    buf[len] = '\0';
    return vt_an_keep(p, buf);
}

void vt_an_snapshot(struct vt_proc *p)
{
    struct vt_an_private *a = p->priv;
    for (size_t i = 0; i < a->ntouched; i++) {
        struct stack *s = &a->stacks[a->touched[i]];
        s->snap_bytes = s->live_bytes;
        s->snap_count = s->live_count;
        s->touched = 0;
    }
    a->ntouched = 0;
    p->peak_ranges = vt_an_ranges_string(p, a->peak_node);
    a->peak_pending = 0;
}
