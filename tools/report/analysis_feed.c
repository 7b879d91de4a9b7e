/* analysis_feed.c - per-process bookkeeping of a trace: live allocations keyed by address, peak with
 * a lazily taken per-stack snapshot, OOMs, leaks, findings, NVTX ranges (copies: analysis_copy.c). */
#include "report/analysis.h"
#include "report/analysis_priv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_vram(enum vt_mem m) { return m == VT_MEM_DEVICE || m == VT_MEM_ASYNC || m == VT_MEM_VMM; }

struct vt_proc *vt_proc_new(const char *path, int sym_enabled)
{
    struct vt_proc *p = calloc(1, sizeof *p);
    if (!p || !(p->priv = calloc(1, sizeof *p->priv)) || !(p->priv->sym = vt_sym_new(sym_enabled))) {
        vt_proc_free(p);
        return NULL;
    }
    p->path = vt_an_keep(p, path);
    p->program = p->hostname = p->tracer = p->checks = p->peak_ranges = p->footer_error = "";
    p->rank = p->local_rank = p->world_size = -1;
    p->pid = p->ppid = -1;
    struct vt_an_private *a = p->priv;
    if (vt_an_intern_stack(p, NULL, 0) < 0) { vt_proc_free(p); return NULL; }   /* stack 0: no backtrace */
    a->rnodes = calloc(16, sizeof *a->rnodes);                            /* node 0: no range */
    if (!a->rnodes) { vt_proc_free(p); return NULL; }
    a->nrnodes = 1; a->caprnodes = 16;
    a->rnodes[0].stat = UINT32_MAX;
    a->rother = UINT32_MAX;
    return p;
}

void vt_proc_set_observer(struct vt_proc *p, const struct vt_observer *obs) { p->priv->obs = *obs; }

static struct vt_device *device(struct vt_proc *p, int64_t dev)
{
    if (dev < -1 || dev > 4095) dev = -1;
    size_t slot = (size_t)(dev + 1);
    if (slot >= p->ndevices) {
        struct vt_device *nd = realloc(p->devices, (slot + 1) * sizeof *nd);
        if (!nd) return NULL;
        for (size_t i = p->ndevices; i <= slot; i++) {
            memset(&nd[i], 0, sizeof nd[i]);
            nd[i].dev = (int)i - 1;
            nd[i].pci = "";
        }
        p->devices = nd;
        p->ndevices = slot + 1;
    }
    return &p->devices[slot];
}

static int touch(struct vt_an_private *a, uint32_t s)
{
    if (a->stacks[s].touched) return 0;
    GROW(a->touched, a->ntouched, a->captouched, 256);
    a->stacks[s].touched = 1;
    a->touched[a->ntouched++] = s;
    return 0;
}

static void timeline_merge(struct vt_proc *p)
{
    struct vt_bucket *b = p->timeline;
    for (size_t i = 0; i < VT_AN_TIMELINE_POINTS / 2; i++) {
        struct vt_bucket x = b[2 * i], y = b[2 * i + 1], m = x;
        if (!x.used) m = y;
        else if (y.used) {
            m.min = x.min < y.min ? x.min : y.min;
            m.max = x.max > y.max ? x.max : y.max;
            m.last = y.last;
            if (y.big_size > x.big_size) { m.big_size = y.big_size; m.big_site = y.big_site; m.big_api = y.big_api; }
        }
        m.t0 = x.t0;
        b[i] = m;
    }
    memset(b + VT_AN_TIMELINE_POINTS / 2, 0, sizeof *b * (VT_AN_TIMELINE_POINTS / 2));
    p->bucket_ns *= 2;
    for (size_t i = 0; i < VT_AN_TIMELINE_POINTS / 2; i++) b[i].t0 = (int64_t)i * p->bucket_ns;
    p->ntimeline = (p->ntimeline + 1) / 2;
}

static void timeline_add(struct vt_proc *p, int64_t t, uint64_t before, uint64_t after,
                         uint64_t alloc_size, int stack, const char *api)
{
    if (!p->bucket_ns) p->bucket_ns = 1000;
    int64_t rel = t > p->t0 ? t - p->t0 : 0;
    while (rel / p->bucket_ns >= VT_AN_TIMELINE_POINTS) timeline_merge(p);
    size_t i = (size_t)(rel / p->bucket_ns);
    struct vt_bucket *b = &p->timeline[i];
    if (!b->used) {
        b->used = 1; b->t0 = (int64_t)i * p->bucket_ns;
        b->min = b->max = before; b->big_size = 0; b->big_site = -1; b->big_api = NULL;
    }
    if (after < b->min) b->min = after;
    if (after > b->max) b->max = after;
    if (before < b->min) b->min = before;
    if (before > b->max) b->max = before;
    b->last = after;
    if (alloc_size > b->big_size) { b->big_size = alloc_size; b->big_site = stack; b->big_api = api; }
    if (i + 1 > p->ntimeline) p->ntimeline = i + 1;
}

static void add_largest(struct vt_proc *p, const struct vt_event *ev, int stack)
{
    size_t n = p->nlargest;
    if (n == VT_AN_MAX_LARGEST && ev->size <= p->largest[n - 1].size) return;
    size_t i = n < VT_AN_MAX_LARGEST ? n : n - 1;
    while (i > 0 && p->largest[i - 1].size < ev->size) { p->largest[i] = p->largest[i - 1]; i--; }
    p->largest[i] = (struct vt_largest){ ev->size, ev->t, vt_an_keep(p, ev->api), ev->mem, (int)ev->dev, stack };
    if (n < VT_AN_MAX_LARGEST) p->nlargest++;
}

/* Every call stack holding live VRAM now, with its bytes (stack ids; sites at finish). With DEV
 * >= 0 only what lives on that device (its cells): an OOM is one device's, and another GPU's
 * memory did not take its room. 0, or -1. */
static int live_holders(const struct vt_proc *p, int64_t dev, struct vt_holding **out, size_t *n)
{
    const struct vt_an_private *a = p->priv;
    size_t cnt = 0;
    *n = 0;
    if (dev < 0) {
        for (size_t i = 0; i < a->nstacks; i++) cnt += a->stacks[i].live_bytes > 0;
        if (!(*out = calloc(cnt ? cnt : 1, sizeof **out))) return -1;
        for (size_t i = 0; i < a->nstacks; i++)
            if (a->stacks[i].live_bytes) (*out)[(*n)++] = (struct vt_holding){ (int)i, a->stacks[i].live_bytes, a->stacks[i].live_count };
        return 0;
    }
    for (size_t i = 0; i < a->ncells; i++) cnt += a->cells[i].dev == dev && a->cells[i].live > 0;
    if (!(*out = calloc(cnt ? cnt : 1, sizeof **out))) return -1;
    for (size_t i = 0; i < a->ncells; i++) {
        const struct cell *c = &a->cells[i];
        if (c->dev == dev && c->live) (*out)[(*n)++] = (struct vt_holding){ (int)c->stack, c->live, c->count };
    }
    return 0;
}

/* Logs a change of device DEV's live VRAM (not fatal when out of memory: the combined view says so). */
static void log_change(struct vt_an_private *a, int64_t t, int dev, int64_t delta, uint32_t stack)
{
    if (a->changes_lost) return;
    if (a->nchanges == a->capchanges) {
        size_t cap = a->capchanges ? a->capchanges * 2 : 1024;
        struct vram_change *n = realloc(a->changes, cap * sizeof *n);
        if (!n) { a->changes_lost = 1; return; }
        a->changes = n;
        a->capchanges = cap;
    }
    a->changes[a->nchanges++] = (struct vram_change){ t, delta, dev, stack };
}

/* The cell of (stack ST, device DEV) into *OUT, made when new: 0, or VT_AN_ENOMEM. */
static int cell_of(struct vt_an_private *a, uint32_t st, int64_t dev, uint32_t *out)
{
    struct stack *s = &a->stacks[st];
    if (s->cell_plus1 && s->cell_dev == dev) { *out = s->cell_plus1 - 1; return 0; }
    uint64_t key = (uint64_t)st << 16 | ((uint64_t)dev & 0xffff), *ci = vtr_hmap_get(&a->cell_index, key);
    if (!ci) {
        GROW(a->cells, a->ncells, a->capcells, 64);
        a->cells[a->ncells] = (struct cell){ .stack = st, .dev = (int32_t)dev };
        if (vtr_hmap_put(&a->cell_index, key, a->ncells) < 0) return VT_AN_ENOMEM;
        ci = vtr_hmap_get(&a->cell_index, key);
        a->ncells++;
    }
    s->cell_plus1 = (uint32_t)*ci + 1; s->cell_dev = (int32_t)dev;
    *out = (uint32_t)*ci;
    return 0;
}

/* Cell CI changes (an allocation or free on its device). */
static int cell_add(struct vt_an_private *a, uint32_t ci, uint64_t size, int free)
{
    struct cell *c = &a->cells[ci];
    if (free) { c->live -= size; c->count--; } else { c->live += size; c->count++; }
    if (c->touched) return 0;
    GROW(a->ctouched, a->nctouched, a->capctouched, 64);
    c->touched = 1;
    a->ctouched[a->nctouched++] = ci;
    return 0;
}

/* The allocation at lives[LI] (KEY in MAP) is gone at EV's time: its bytes leave live. */
/* A free a device reset made (the tracer writes one, api the reset, for each allocation the reset
 * released), or the reset itself dropping one the trace lost the free of. */
static int by_reset(const struct vt_event *ev)
{
    return ev->type == VT_EV_RESET ||
           (ev->api && (!strcmp(ev->api, "cudaDeviceReset") || !strncmp(ev->api, "cuDevicePrimaryCtxReset", 23)));
}

static int drop_live(struct vt_proc *p, const struct vt_event *ev, struct vtr_hmap *map, uint64_t key, uint32_t li)
{
    struct vt_an_private *a = p->priv;
    vtr_hmap_del(map, key);
    a->lives[li].dead = 1;
    struct live l = a->lives[li];
    if (by_reset(ev)) {   /* never freed by the program: a leak the reset cleaned up */
        struct stack *s = &a->stacks[l.stack];
        if (l.mem == VT_MEM_MANAGED) { vt_sat_add(&s->reset_managed, l.size); vt_sat_add(&p->reset_leak_managed, l.size); }
        else if (is_vram((enum vt_mem)l.mem)) {
            vt_sat_add(&s->reset_bytes, l.size); s->reset_count++;
            vt_sat_add(&p->reset_leak_bytes, l.size); p->reset_leak_count++;
        }
    }
    GROW(a->freelist, a->nfree, a->capfree, 1024);
    a->freelist[a->nfree++] = li;
    if (is_vram((enum vt_mem)l.mem)) {
        if (a->peak_pending) vt_an_snapshot(p);
        struct stack *s = &a->stacks[l.stack];
        uint64_t before = p->live;
        p->live -= l.size; s->live_bytes -= l.size; s->live_count--;
        if (touch(a, l.stack) < 0) return VT_AN_ENOMEM;
        struct vt_device *d = device(p, l.dev);
        if (d && d->peak_pending) vt_an_device_snapshot(p, d);   /* before it goes down from its peak */
        if (cell_add(a, l.cell, l.size, 1) < 0) return VT_AN_ENOMEM;
        if (d) d->live -= l.size;
        if (d && l.mem == VT_MEM_ASYNC) vt_an_pool_free(d, l.size);
        log_change(a, ev->t, l.dev, -(int64_t)l.size, l.stack);
        p->free_count++; vt_sat_add(&p->free_bytes, l.size);
        vt_an_range_account(p, ev->tid, l.size, 1);
        timeline_add(p, ev->t, before, p->live, 0, -1, NULL);
    } else if (l.mem == VT_MEM_MANAGED) p->managed_live -= l.size;
    else p->host_live -= l.size;
    return 0;
}

/* A framework that caches device memory, by the library a recorded stack went through: its
 * cudaMalloc'd segments (or VMM pages) are what the tracer sees, not the tensors inside them. */
static const char *caching_allocator(const char *path)
{
    static const struct { const char *lib, *name; } known[] = {
        { "libc10_cuda.so", "PyTorch (c10 CUDACachingAllocator)" },
        { "xla_extension.so", "JAX/XLA (BFC allocator)" }, { "libjax_common.so", "JAX/XLA (BFC allocator)" },
        { "librmm.so", "RAPIDS RMM" },
        { "libtensorflow_framework.so", "TensorFlow (BFC allocator)" },
    };
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    for (size_t i = 0; base && i < sizeof known / sizeof known[0]; i++)
        if (!strncmp(base, known[i].lib, strlen(known[i].lib))) return known[i].name;
    return NULL;
}

/* PyTorch's allocator settings ("key:value" items separated by commas) choose cudaMallocAsync. */
static int names_async_backend(const char *conf)
{
    for (const char *s = conf; s && *s;) {
        s += strspn(s, " \t,");
        if (!strncmp(s, "backend", 7)) {
            const char *v = s + 7 + strspn(s + 7, " \t");
            if (*v == ':' && (v += 1 + strspn(v + 1, " \t"), !strncmp(v, "cudaMallocAsync", 15))) return 1;
        }
        s = strchr(s, ',');
    }
    return 0;
}

static uint64_t pools_kept_free(const struct vt_proc *p)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < p->ndevices; i++) vt_sat_add(&sum, p->devices[i].pool.kept_free);
    return sum;
}

/* The driver said USED bytes were in use on D at T (cuMemGetInfo, a sample, an OOM). */
static void driver_sample(struct vt_device *d, int64_t t, uint64_t used)
{
    struct vt_driver_view *v = &d->driver;
    v->samples++;
    uint64_t known = d->live + d->pool.kept_free;
    v->last_used = used; v->last_live = d->live; v->last_pool_kept = d->pool.kept_free; v->last_t = t;
    v->last_unattributed = used > known ? used - known : 0;
    if (v->samples == 1 || v->last_unattributed > v->max_unattributed) {
        v->max_unattributed = v->last_unattributed; v->max_used = used; v->max_live = d->live; v->max_t = t;
    }
}

static int on_meminfo(struct vt_proc *p, const struct vt_event *ev)
{
    if (ev->res_null || ev->res) return ev->res_null ? 0 : vt_an_add_error(p, ev);
    if (!(ev->has & VT_F_FREE) || !(ev->has & VT_F_TOTAL) || ev->total_bytes < ev->free_bytes) return 0;
    struct vt_device *d = device(p, ev->dev);
    if (!d) return VT_AN_ENOMEM;
    if (!d->total_bytes) d->total_bytes = ev->total_bytes;
    driver_sample(d, ev->t, ev->total_bytes - ev->free_bytes);
    return 0;
}

/* An OOM (index OOM in p->ooms, UINT32_MAX past the detail kept) waits for its thread's retry. */
static int note_pending(struct vt_an_private *a, const struct vt_event *ev, size_t oom, uint64_t dev_live)
{
    if (a->npending == 4096) memmove(a->pending, a->pending + 1, --a->npending * sizeof *a->pending);
    GROW(a->pending, a->npending, a->cappending, 16);
    a->pending[a->npending++] = (struct oom_pending){ ev->tid, ev->size, dev_live, (uint32_t)oom, (uint8_t)ev->mem, (int32_t)ev->dev };
    return 0;
}

/* EV, a successful allocation from call stack ST, is the retry of every OOM of its thread that
 * asked for the same size and kind: they are recovered. */
static void retried(struct vt_proc *p, const struct vt_event *ev, int st)
{
    struct vt_an_private *a = p->priv;
    for (size_t i = 0; i < a->npending;) {
        struct oom_pending *w = &a->pending[i];
        if (w->tid != ev->tid || w->size != ev->size || w->mem != (uint8_t)ev->mem) { i++; continue; }
        p->oom_recovered++;
        if (w->oom != UINT32_MAX) {
            struct vt_oom *o = &p->ooms[w->oom];
            o->recovered = 1; o->recovered_t = ev->t; o->recovered_site = st;
            const struct vt_device *d = device(p, w->dev);   /* what the failing device got back */
            uint64_t now = d ? d->live : 0;
            o->freed_before_retry = w->live > now ? w->live - now : 0;
        }
        memmove(w, w + 1, (--a->npending - i) * sizeof *w);
    }
}

static int on_alloc(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    int st = vt_an_intern_stack(p, ev->bt, ev->nbt);
    if (st < 0) return st;
    if (ev->nbt) p->backtraces_seen = 1;
    struct vt_device *d = device(p, ev->dev);
    if (!d) return VT_AN_ENOMEM;
    if (ev->res_null || ev->res != 0) {          /* failed allocation */
        p->failed_allocs++;
        int rc = vt_an_add_error(p, ev);
        if (rc < 0) return rc;
        /* Only an out-of-memory result is an OOM (CUDA_ERROR_OUT_OF_MEMORY and
         * cudaErrorMemoryAllocation are both 2): no driver (35, 100), a bad argument (1), a call
         * that never returned, are failed calls, not memory the device lacked. */
        if (ev->res_null || ev->res != 2) return 0;
        p->oom_count++;
        if (p->nooms == VT_AN_MAX_OOM_DETAIL) return note_pending(a, ev, UINT32_MAX, d->live);
        GROW(p->ooms, p->nooms, a->capooms, 16);
        struct vt_oom *o = &p->ooms[p->nooms];
        memset(o, 0, sizeof *o);
        o->t = ev->t; o->api = vt_an_keep(p, ev->api); o->mem = ev->mem; o->dev = (int)ev->dev; o->res = ev->res;
        o->requested = ev->size; o->live = p->live; o->live_dev = d->live;
        o->has_free = (ev->has & VT_F_FREE) != 0;
        o->pool_kept_free = d->pool.kept_free;
        o->free_bytes = ev->free_bytes; o->total_bytes = ev->total_bytes ? ev->total_bytes : d->total_bytes;
        if (o->has_free && ev->total_bytes >= ev->free_bytes) {
            driver_sample(d, ev->t, ev->total_bytes - ev->free_bytes);
            o->unattributed = d->driver.last_unattributed;
        }
        o->site = st;
        o->recovered_site = -1;
        if (note_pending(a, ev, p->nooms, d->live) < 0) return VT_AN_ENOMEM;
        uint64_t *node = vtr_hmap_get(&a->tid_node, (uint64_t)ev->tid);
        o->ranges = vt_an_ranges_string(p, node ? (uint32_t)*node : 0);
        if (p->nooms < VT_AN_MAX_OOM_HOLDERS && live_holders(p, ev->dev, &o->holders, &o->nholders) < 0) return VT_AN_ENOMEM;
        p->nooms++;
        return 0;
    }
    if (a->npending) retried(p, ev, st);
    uint64_t key = ev->mem == VT_MEM_VMM && (ev->has & VT_F_HANDLE) ? ev->handle : ev->addr;
    struct vtr_hmap *map = ev->mem == VT_MEM_VMM && (ev->has & VT_F_HANDLE) ? &a->by_handle : &a->by_addr;
    uint64_t *old = vtr_hmap_get(map, key);
    if (old) { /* an address (handle) still live: its free is missing from the trace */
        if (!p->duplicate_allocs++) { p->duplicate_line = ev->line; p->duplicate_addr = key; }
        int rc = drop_live(p, ev, map, key, (uint32_t)*old);   /* counted as freed here: the sums still add up */
        if (rc < 0) return rc;
    }
    uint32_t li;
    if (a->nfree) li = a->freelist[--a->nfree];
    else {
        GROW(a->lives, a->nlives, a->caplives, 1024);
        li = (uint32_t)a->nlives++;
    }
    if (vtr_hmap_put(map, key, li) < 0) return VT_AN_ENOMEM;
    d = device(p, ev->dev); /* drop_live's device lookup may have moved the array */
    if (!d) return VT_AN_ENOMEM;
    a->lives[li] = (struct live){ .size = ev->size, .key = key, .stack = (uint32_t)st, .mem = (uint8_t)ev->mem, .dev = (int16_t)ev->dev };
    if (is_vram(ev->mem)) {
        struct stack *s = &a->stacks[st];
        uint64_t before = p->live;
        vt_sat_add(&p->live, ev->size);
        vt_sat_add(&s->live_bytes, ev->size); s->live_count++;
        vt_sat_add(&s->alloc_bytes, ev->size); s->alloc_count++;
        uint64_t *rn = vtr_hmap_get(&a->tid_node, (uint64_t)ev->tid);   /* the Python-visible context, when NVTX says it */
        uint32_t range = rn ? (uint32_t)*rn : 0;
        if (!s->range_seen) { s->range_seen = 1; s->range_node = range; }
        else if (s->range_node != range) s->range_mixed = 1;
        if (touch(a, (uint32_t)st) < 0) return VT_AN_ENOMEM;
        uint32_t ci;
        if (cell_of(a, (uint32_t)st, ev->dev, &ci) < 0 || cell_add(a, ci, ev->size, 0) < 0) return VT_AN_ENOMEM;
        a->lives[li].cell = ci;
        vt_sat_add(&d->live, ev->size);
        log_change(a, ev->t, (int)ev->dev, (int64_t)ev->size, (uint32_t)st);
        if (ev->mem == VT_MEM_ASYNC) vt_an_pool_alloc(d, ev->size, ev->t);
        if (d->live > d->peak) { d->peak = d->live; d->peak_t = ev->t; d->pool.kept_free_at_peak = d->pool.kept_free; d->peak_pending = 1; }
        if (p->live > p->peak) {
            p->peak = p->live; p->peak_t = ev->t; p->peak_tid = (int)ev->tid;
            p->peak_pool_kept_free = pools_kept_free(p);
            uint64_t *node = vtr_hmap_get(&a->tid_node, (uint64_t)ev->tid);
            a->peak_node = node ? (uint32_t)*node : 0;
            a->peak_pending = 1;
        }
        p->alloc_count++; vt_sat_add(&p->alloc_bytes, ev->size);
        if (ev->mem == VT_MEM_ASYNC) p->async_allocs++;
        add_largest(p, ev, st);
        vt_an_range_account(p, ev->tid, ev->size, 0);
        timeline_add(p, ev->t, before, p->live, ev->size, st, vt_an_keep(p, ev->api));
    } else if (ev->mem == VT_MEM_MANAGED) {
        vt_sat_add(&p->managed_live, ev->size);
        if (p->managed_live > p->managed_peak) { p->managed_peak = p->managed_live; p->managed_peak_t = ev->t; }
        add_largest(p, ev, st);
    } else {
        vt_sat_add(&p->host_live, ev->size);
        if (p->host_live > p->host_peak) { p->host_peak = p->host_live; p->host_peak_t = ev->t; }
    }
    return 0;
}

static int on_free(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    if (!ev->res_null && ev->res != 0) return vt_an_add_error(p, ev);
    int by_handle = (ev->has & VT_F_HANDLE) && !(ev->has & VT_F_ADDR);
    struct vtr_hmap *map = by_handle ? &a->by_handle : &a->by_addr;
    uint64_t key = by_handle ? ev->handle : ev->addr;
    uint64_t *v = vtr_hmap_get(map, key);
    if (!v) { if (key) p->unknown_frees++; return 0; }
    uint32_t li = (uint32_t)*v;
    /* cuMemRelease of a handle still mapped: CUDA keeps its memory until the last cuMemUnmap
     * (the vectorAddMMAP pattern releases right after mapping). */
    if (by_handle && a->lives[li].maps) { a->lives[li].released = 1; return 0; }
    return drop_live(p, ev, map, key, li);
}

/* A device reset: the tracer wrote a free for each allocation it freed; any the report still holds
 * live on that device (a trace that lost a free) goes too. VMM handles stay (no context owns
 * cuMemCreate memory). */
static int on_reset(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    if (ev->res_null || ev->res) return ev->res_null ? 0 : vt_an_add_error(p, ev);
    uint64_t count = ev->count, bytes = ev->size;
    for (size_t i = 0; i < a->nlives; i++) {
        struct live *l = &a->lives[i];
        if (l->dead || l->dev != ev->dev || !(l->mem == VT_MEM_DEVICE || l->mem == VT_MEM_ASYNC || l->mem == VT_MEM_MANAGED))
            continue;
        count++;
        if (l->mem != VT_MEM_MANAGED) vt_sat_add(&bytes, l->size);
        int rc = drop_live(p, ev, &a->by_addr, l->key, (uint32_t)i);
        if (rc < 0) return rc;
    }
    struct vt_device *d = device(p, ev->dev);
    if (!d) return VT_AN_ENOMEM;
    d->pool.kept_free = 0;   /* the device's pools are gone with it */
    p->reset_count++;
    if (p->nresets < VT_AN_MAX_RESETS)
        p->resets[p->nresets++] = (struct vt_reset){ ev->t, vt_an_keep(p, ev->api), (int)ev->dev, count, bytes };
    return 0;
}

/* cuMemMap: one more mapping of a handle (remembered by address for its unmap). */
static int on_map(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    if (!ev->res_null && ev->res) return vt_an_add_error(p, ev);
    if (ev->res_null || !ev->size) return 0;
    uint64_t *li = vtr_hmap_get(&a->by_handle, ev->handle);
    if (vtr_hmap_get(&a->map_size, ev->addr)) return 0;   /* mapped twice at one address: CUDA refuses it */
    if (li) a->lives[*li].maps++;
    if (vtr_hmap_put(&a->map_handle, ev->addr, ev->handle) < 0 || vtr_hmap_put(&a->map_size, ev->addr, ev->size) < 0)
        return VT_AN_ENOMEM;
    return 0;
}

/* cuMemUnmap of [addr, addr+size): every mapping in it (CUDA requires whole mappings; they lie
 * end to end). A released handle's memory goes with its last mapping. */
static int on_unmap(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    if (!ev->res_null && ev->res) return vt_an_add_error(p, ev);
    if (ev->res_null) return 0;
    uint64_t at = ev->addr, end = ev->addr + ev->size;
    while (at < end) {
        uint64_t *sz = vtr_hmap_get(&a->map_size, at), *h = vtr_hmap_get(&a->map_handle, at);
        if (!sz || !h || !*sz) break;
        uint64_t size = *sz, handle = *h;
        vtr_hmap_del(&a->map_size, at);
        vtr_hmap_del(&a->map_handle, at);
        uint64_t *li = vtr_hmap_get(&a->by_handle, handle);
        if (li && a->lives[*li].maps && --a->lives[*li].maps == 0 && a->lives[*li].released) {
            int rc = drop_live(p, ev, &a->by_handle, handle, (uint32_t)*li);
            if (rc < 0) return rc;
        }
        if (at + size < at) break;
        at += size;
    }
    return 0;
}

static struct vt_kernel_stat *kernel(struct vt_proc *p, int64_t id)
{
    uint64_t *v = vtr_hmap_get(&p->priv->kernel_by_id, (uint64_t)id);
    return v ? &p->kernels[*v] : NULL;
}

/* A start/end range's opener for the steps: its id, apart from any thread id */
#define START_END_WHO(id) ((int64_t)((uint64_t)(id) | 1ull << 62))

static int on_range(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    if (ev->type == VT_EV_RANGE_START || ev->type == VT_EV_RANGE_END)
        if (a->peak_pending) vt_an_snapshot(p);
    uint64_t *cur = vtr_hmap_get(&a->tid_node, (uint64_t)ev->tid);
    uint32_t node = cur ? (uint32_t)*cur : 0;
    switch (ev->type) {
    case VT_EV_RANGE_PUSH: {
        int64_t name = vtr_strtab_intern(&a->strs, ev->name);
        if (name < 0) return VT_AN_ENOMEM;
        uint64_t key = (uint64_t)node << 32 | (uint64_t)name;
        uint64_t *child = vtr_hmap_get(&a->rchild, key);
        uint32_t nn;
        if (child) nn = (uint32_t)*child;
        else {
            GROW(a->rnodes, a->nrnodes, a->caprnodes, 16);
            nn = (uint32_t)a->nrnodes;
            a->rnodes[a->nrnodes++] = (struct rnode){ node, (uint32_t)name, UINT32_MAX };
            if (vtr_hmap_put(&a->rchild, key, nn) < 0) return VT_AN_ENOMEM;
            uint32_t stat;
            if (vt_an_range_node_stat(p, nn, &stat) < 0) return VT_AN_ENOMEM;
            a->rnodes[nn].stat = stat;
        }
        vt_an_range_opened(p, a->rnodes[nn].stat);
        if (vt_an_steps_range_open(p, ev->name, ev->tid, ev->t) < 0) return VT_AN_ENOMEM;
        return vtr_hmap_put(&a->tid_node, (uint64_t)ev->tid, nn) < 0 ? VT_AN_ENOMEM : 0;
    }
    case VT_EV_RANGE_POP:
        if (!node) return 0;
        vt_an_steps_range_close(p, vtr_strtab_get(&a->strs, a->rnodes[node].name), ev->tid, ev->t);
        return vtr_hmap_put(&a->tid_node, (uint64_t)ev->tid, a->rnodes[node].parent) < 0 ? VT_AN_ENOMEM : 0;
    case VT_EV_RANGE_START: {
        int64_t name = vtr_strtab_intern(&a->strs, ev->name);
        if (name < 0) return VT_AN_ENOMEM;
        if (a->nopen >= 64) return 0;
        uint32_t stat;
        if (vt_an_range_named_stat(p, ev->name, &stat) < 0) return VT_AN_ENOMEM;
        GROW(a->open, a->nopen, a->capopen, 8);
        a->open[a->nopen++] = (struct open_range){ ev->id, (uint32_t)name, stat };
        vt_an_range_opened(p, stat);
        return vt_an_steps_range_open(p, ev->name, START_END_WHO(ev->id), ev->t);
    }
    case VT_EV_RANGE_END:
        for (size_t i = 0; i < a->nopen; i++)
            if (a->open[i].id == ev->id) {
                vt_an_steps_range_close(p, vtr_strtab_get(&a->strs, a->open[i].name), START_END_WHO(ev->id), ev->t);
                memmove(&a->open[i], &a->open[i + 1], (a->nopen - i - 1) * sizeof *a->open);
                a->nopen--;
                break;
            }
        return 0;
    default: return 0;
    }
}

/* A labelled snapshot: live VRAM now and, per call stack, what it holds (sites at finish). */
static int on_snapshot(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    p->snapshot_count++;
    if (p->nsnapshots == VT_AN_MAX_SNAPSHOTS) return 0;
    GROW(p->snapshots, p->nsnapshots, a->capsnapshots, 16);
    struct vt_snapshot *s = &p->snapshots[p->nsnapshots];
    *s = (struct vt_snapshot){ .t = ev->t, .label = vt_an_keep(p, ev->label), .live = p->live,
                               .pool_kept_free = pools_kept_free(p), .tracer_live = (uint64_t)ev->live_bytes };
    if (live_holders(p, -1, &s->holders, &s->nholders) < 0) return VT_AN_ENOMEM;
    p->nsnapshots++;
    return 0;
}

/* N more occurrences of a finding of SEVERITY ("error", else a warning). */
static void count_finding(struct vt_proc *p, const char *severity, uint64_t n)
{
    p->finding_count += n;
    if (!strcmp(severity, VT_SEVN_ERROR)) p->finding_errors += n;
    else p->finding_warnings += n;
}

/* A note line: one more word of kernel EV->k that nothing could verify (trace.h, VT_SEVN_NOTE),
 * folded into the kernel's one note. A word is counted once, however often its line repeats. */
static int on_note(struct vt_proc *p, const struct vt_event *ev, const struct vt_kernel_stat *k)
{
    struct vt_an_private *a = p->priv;
    uint64_t kid = (ev->has & VT_F_K) ? (uint64_t)ev->k : UINT64_MAX;
    uint64_t word = kid * 0x9E3779B97F4A7C15ull ^ ((uint64_t)ev->arg << 40) ^ (uint64_t)ev->offset;
    if (vtr_hmap_get(&a->note_words, word)) return 0;
    if (vtr_hmap_put(&a->note_words, word, 1) < 0) return VT_AN_ENOMEM;
    int st = -1;
    if (ev->nbt && (st = vt_an_intern_stack(p, ev->bt, ev->nbt)) < 0) return st;
    GROW(a->words, a->nwords, a->capwords, 16);
    a->words[a->nwords++] = (struct note_word){
        k ? k->name : "", k ? k->mangled : "", vt_an_keep(p, ev->kind), vt_an_keep(p, ev->cls), vt_an_keep(p, ev->mapping),
        vt_an_keep(p, ev->api), vt_an_keep(p, ev->msg), k ? k->params : NULL, k ? k->nparams : 0,
        (ev->has & VT_F_ARG) ? ev->arg : -1, ev->offset, ev->t, ev->value, st, (int)ev->dev };
    return 0;
}

/* A finding line. Repeats of one launch finding share an "id": the first line has the details,
 * later ones the count so far (highest wins, lines may arrive in any order across threads). */
static int on_finding(struct vt_proc *p, const struct vt_event *ev, const char **kname)
{
    struct vt_an_private *a = p->priv;
    struct vt_kernel_stat *k = (ev->has & VT_F_K) ? kernel(p, ev->k) : NULL;
    if (k) *kname = k->name;
    if (!strcmp(ev->severity, VT_SEVN_NOTE)) return on_note(p, ev, k);
    int repeated = (ev->has & VT_F_ID) && ev->count;
    uint64_t count = repeated ? ev->count : 1;
    int64_t first = repeated && ev->first ? ev->first : ev->t;
    uint64_t *idx = repeated ? vtr_hmap_get(&a->finding_by_id, (uint64_t)ev->id) : NULL;
    if (idx) {
        struct vt_finding *x = &p->findings[*idx];
        if (count > x->count) { count_finding(p, x->severity, count - x->count); x->count = count; }
        if (ev->t > x->last_t) x->last_t = ev->t;
        if (first < x->t) x->t = first;
        if (!x->msg[0] && ev->msg && ev->msg[0]) { /* the details came after a repeat */
            x->api = vt_an_keep(p, ev->api); x->msg = vt_an_keep(p, ev->msg);
            x->cls = vt_an_keep(p, ev->cls); x->mapping = vt_an_keep(p, ev->mapping);
            x->value = ev->value;
            if (ev->nbt && x->site < 0) {
                int st = vt_an_intern_stack(p, ev->bt, ev->nbt);
                if (st < 0) return st;
                x->site = st;
            }
        }
        return 0;
    }
    if (p->nfindings == VT_AN_MAX_FINDINGS) {
        if (count == 1) count_finding(p, ev->severity, 1); /* a repeat of a finding not kept would count twice */
        return 0;
    }
    count_finding(p, ev->severity, count);
    int st = -1;
    if (ev->nbt && (st = vt_an_intern_stack(p, ev->bt, ev->nbt)) < 0) return st;
    if (a->stackless_err && ev->tid == a->stackless_tid) { /* the finding about the failed call just before */
        struct vt_error *e = &p->errors[a->stackless_err - 1];
        if (st >= 0 && ev->api && !strcmp(e->api, ev->api)) e->site = st;
        a->stackless_err = 0;
    }
    GROW(p->findings, p->nfindings, a->capfindings, 16);
    if (repeated && vtr_hmap_put(&a->finding_by_id, (uint64_t)ev->id, p->nfindings) < 0) return VT_AN_ENOMEM;
    p->findings[p->nfindings++] = (struct vt_finding){
        first, vt_an_keep(p, ev->kind), vt_an_keep(p, ev->severity), vt_an_keep(p, ev->api), k ? k->name : "",
        vt_an_keep(p, ev->msg), vt_an_keep(p, ev->cls), vt_an_keep(p, ev->mapping),
        (ev->has & VT_F_ARG) ? ev->arg : -1, ev->offset, ev->value, st, count, ev->t };
    return 0;
}

/* An outermost pause starts at the first record seen inside it. That is its depth-1 "pause", or,
 * where that record was lost (a full ring drops records; a pause before the trace opened writes
 * none), the first deeper "pause" or "resume": counting from it keeps the time paused to what the
 * trace shows, where the trace's start or an older pause's time would be a guess. */
static void on_pause(struct vt_proc *p, const struct vt_event *ev)
{
    int depth = ev->depth > INT_MAX ? INT_MAX : (int)ev->depth;   /* the reader keeps it >= 0 */
    if (ev->type == VT_EV_PAUSE && depth < 1) depth = 1;
    if (p->pause_depth == 0 && depth > 0) { p->pauses++; p->pause_t0 = ev->t; }
    else if (p->pause_depth > 0 && depth == 0) { p->paused_ns += ev->t - p->pause_t0; vt_sat_add(&p->pause_skipped, ev->skipped); }
    p->pause_depth = depth;
}

static int on_event(struct vt_proc *p, const struct vt_event *ev, const char **kname)
{
    struct vt_an_private *a = p->priv;
    int64_t end = ev->t + ev->dur;
    if (ev->last > end) end = ev->last; /* a folded record (launches, copies, sets): its last one's end */
    if (end > p->t_end) p->t_end = end;
    if (a->stackless_err && ev->tid == a->stackless_tid && ev->type != VT_EV_FINDING) a->stackless_err = 0;
    if (a->await_stack.len) {
        switch (ev->type) {
        case VT_EV_ALLOC: case VT_EV_FREE: case VT_EV_COPY: case VT_EV_SET: case VT_EV_LAUNCH: case VT_EV_SYNC:
        case VT_EV_MAP: case VT_EV_UNMAP: case VT_EV_RESET: vt_an_await_call(p, ev); break;
        default: break;
        }
    }
    switch (ev->type) {
    case VT_EV_HEADER:
        p->program = vt_an_keep(p, ev->program); p->hostname = vt_an_keep(p, ev->hostname);
        p->tracer = vt_an_keep(p, ev->tracer); p->checks = vt_an_keep(p, ev->checks);
        p->pid = ev->pid; p->ppid = ev->ppid;
        p->torch_tensors = ev->torch_tensors;
        p->torch_async_conf = names_async_backend(ev->torch_alloc_conf) || names_async_backend(ev->torch_cuda_alloc_conf);
        p->rank = ev->rank; p->local_rank = ev->local_rank; p->world_size = ev->world_size;
        p->t0 = ev->t; p->t_end = ev->t; p->wall_time = ev->wall_time;
        p->wall_ns = ev->wall_time_ns > 0 ? ev->wall_time_ns : ev->wall_time > 0 ? ev->wall_time * 1000000000ll : 0;
        return 0;
    case VT_EV_PYCODE:
        return vt_sym_add_pycode(a->sym, (uint64_t)ev->id, ev->file, ev->name, (int)ev->pyline, ev->pyver, ev->linetable) < 0
             ? VT_AN_ENOMEM : 0;
    case VT_EV_MODULE:
        if (!p->caching_allocator) p->caching_allocator = caching_allocator(ev->path);
        return vt_sym_add_module(a->sym, &(struct vt_sym_module){ ev->path, ev->base, ev->lo, ev->hi, ev->build_id,
                                                                    ev->file_size, ev->mtime }) < 0 ? VT_AN_ENOMEM : 0;
    case VT_EV_DEVICE: {
        struct vt_device *d = device(p, ev->dev);
        if (!d) return VT_AN_ENOMEM;
        d->name = vt_an_keep(p, ev->name); d->total_bytes = ev->total_bytes; d->sim = ev->sim; d->seen = 1;
        d->pci = vt_an_keep(p, ev->pci);
        d->cc = ev->cc;
        return 0;
    }
    case VT_EV_ALLOC: return on_alloc(p, ev);
    case VT_EV_FREE: return on_free(p, ev);
    case VT_EV_COPY: case VT_EV_COPIES: return vt_an_on_copy(p, ev);
    case VT_EV_SETS: /* folded: COUNT memsets, BYTES in all */
        vt_sat_add(&p->set_count, ev->count); vt_sat_add(&p->set_bytes, ev->bytes);
        return 0;
    case VT_EV_SET:
        if (ev->res_null || ev->res) return vt_an_add_error(p, ev);
        if (ev->captured) p->captured_ops++;
        else { p->set_count++; vt_sat_add(&p->set_bytes, ev->size); p->graph_sets += ev->graph != 0; }
        return 0;
    case VT_EV_KERNEL: {
        char buf[4096];
        GROW(p->kernels, p->nkernels, a->capkernels, 16);
        uint32_t *params = NULL;
        if (ev->nparams && !(params = malloc(ev->nparams * 2 * sizeof *params))) return VT_AN_ENOMEM;
        if (params) memcpy(params, ev->params, ev->nparams * 2 * sizeof *params);
        p->kernels[p->nkernels] = (struct vt_kernel_stat){ vt_an_keep(p, vt_demangle(ev->name, buf, sizeof buf)), 0, 0,
                                                           vt_an_keep(p, ev->name), params, (uint32_t)ev->nparams };
        if (vtr_hmap_put(&a->kernel_by_id, (uint64_t)ev->id, p->nkernels) < 0) return VT_AN_ENOMEM;
        p->nkernels++;
        return 0;
    }
    case VT_EV_LAUNCHES: { /* folded: COUNT clean launches of one configuration by one thread */
        struct vt_kernel_stat *k = kernel(p, ev->k);
        vt_sat_add(&p->launches, ev->count);
        if (ev->graph) vt_sat_add(&p->graph_launches, ev->count);
        if (k) { vt_sat_add(&k->launches, ev->count); k->ns += ev->dur; *kname = k->name; }
        return 0;
    }
    case VT_EV_LAUNCH: {
        struct vt_kernel_stat *k = kernel(p, ev->k);
        if (ev->captured && !ev->res_null && !ev->res) { p->captured_ops++; return 0; }
        p->launches++;
        p->graph_launches += ev->graph != 0;
        if (k) { k->launches++; k->ns += ev->dur; *kname = k->name; }
        if (ev->res_null || ev->res) return vt_an_add_error(p, ev);
        return 0;
    }
    case VT_EV_MAP: return on_map(p, ev);
    case VT_EV_RESET: return on_reset(p, ev);
    case VT_EV_UNMAP: return on_unmap(p, ev);
    case VT_EV_MEMINFO: return on_meminfo(p, ev);
    case VT_EV_GRAPH_ALLOC: /* memory only while the graph runs (its launches' records); a failed one is a failed call */
        return ev->res_null || !ev->res ? 0 : vt_an_add_error(p, ev);
    case VT_EV_SYNC: case VT_EV_POOL_TRIM: case VT_EV_POOL_ATTR: {
        if (ev->res_null || ev->res) return ev->res_null ? 0 : vt_an_add_error(p, ev);
        struct vt_device *d = device(p, ev->dev);
        if (!d) return VT_AN_ENOMEM;
        if (ev->type == VT_EV_SYNC) vt_an_pool_sync(d);
        else if (ev->type == VT_EV_POOL_TRIM) vt_an_pool_trim(d, ev->keep, ev->has_reserved_after, ev->reserved_after);
        else if (ev->has_keep) d->pool.threshold = ev->keep;
        return 0;
    }
    case VT_EV_FINDING: return on_finding(p, ev, kname);
    case VT_EV_RANGE_PUSH: case VT_EV_RANGE_POP: case VT_EV_RANGE_START: case VT_EV_RANGE_END:
        return on_range(p, ev);
    case VT_EV_SNAPSHOT: return on_snapshot(p, ev);
    case VT_EV_STEP: return vt_an_steps_mark(p, ev->t);
    case VT_EV_PAUSE: case VT_EV_RESUME: on_pause(p, ev); return 0;
    case VT_EV_FOOTER:
        p->has_footer = 1; p->footer_dropped = ev->dropped; p->footer_events = ev->events;
        p->footer_error = vt_an_keep(p, ev->error);
        return 0;
    default: return 0;
    }
}

int vt_proc_feed(struct vt_proc *p, const struct vt_event *ev, char *err, size_t errlen)
{
    const char *kname = NULL;
    p->events++;
    size_t at0 = p->priv->nchanges;
    int rc = on_event(p, ev, &kname);
    if (rc >= 0) rc = vt_an_steps_call(p, ev, at0);
    if (rc < 0) { snprintf(err, errlen, "%s: out of memory", p->path); return rc; }
    if (p->priv->obs.on_event) p->priv->obs.on_event(p->priv->obs.ctx, p, ev, kname);
    return 0;
}

