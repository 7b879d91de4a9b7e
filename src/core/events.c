/* events.c - formats trace lines for the hooks, keeps the registry in step, runs the checks. */
#include "events.h"
#include "graphs.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "backtrace.h"
#include "pystack.h"
#include "check.h"
#include "jsonl.h"
#include "registry.h"
#include "resolve.h"
#include "tracer.h"
#include "emit.h"
#include "findings.h"
#include "fold.h"
#include "trace_writer.h"
#include "journal.h"
#include "records.h"

/* The hot records are filled where the drainer reads them, in their claimed slot; with the
 * journal off, in the caller's stack buffer, formatted here on publish. */
static inline void *rec_claim(int type, size_t len, void *stack)
{
    void *slot = vt_journal_claim(type, len);
    return slot ? slot : stack;
}
static inline void rec_publish(int type, void *rec, size_t len, const void *stack)
{
    if (rec != stack) vt_journal_commit(rec);
    else vt_emit_formatted(type, rec, len);
}

/* Every field is stored: a slot holds an older record's bytes. */
static void fill_alloc(struct vt_rec_alloc *a, const struct vt_call *c, uint64_t addr, uint64_t size, int mem,
                       const struct vt_alloc_extra *x, const size_t *meminfo, const uint64_t *frames, int nf)
{
    static const struct vt_alloc_extra none;
    if (!x) x = &none;
    vt_fill_call(&a->c, c);
    a->addr = addr;
    a->size = size;
    a->stream = x->stream;
    a->pitch = x->pitch;
    a->width = x->width;
    a->height = x->height;
    a->handle = x->handle;
    a->free_b = meminfo ? meminfo[0] : 0;
    a->total_b = meminfo ? meminfo[1] : 0;
    a->mem = (uint8_t)mem;
    a->has_stream = (uint8_t)x->has_stream;
    a->is_handle = (uint8_t)x->is_handle;
    a->has_meminfo = meminfo != NULL;
    a->graph = (uint8_t)x->graph;
    a->nframes = (uint16_t)nf;
    if (nf) memcpy(a->frames, frames, (size_t)nf * sizeof frames[0]);
}

/* The driver's view of device memory (cuMemGetInfo: total - free is used) at most once per
 * VRAMTRACE_MEMINFO_INTERVAL_MS, taken right after a successful allocation: the thread has a
 * current context then, so the query creates none; it does not synchronise. The report compares
 * it with the traced live bytes (memory nobody allocated). The first interval starts at the first
 * allocation. */
static _Atomic uint64_t next_sample_ns;
static void maybe_sample(const struct vt_call *c)
{
    uint64_t every = vt_cfg.meminfo_interval_ns;
    if (!every) return;
    uint64_t now = c->t0 + c->dur, next = atomic_load_explicit(&next_sample_ns, memory_order_relaxed);
    if (next == 0) { atomic_compare_exchange_strong(&next_sample_ns, &next, now + every); return; }
    if (now < next || !atomic_compare_exchange_strong(&next_sample_ns, &next, now + every)) return;
    typedef CUresult (*info_fn)(size_t *, size_t *);
    info_fn fn = (info_fn)vt_real_driver("cuMemGetInfo_v2");
    size_t fr = 0, tot = 0;
    struct vt_call s = { .api = "vramtrace_sample", .dev = c->dev };
    s.t0 = vt_now();
    vt_ts.guard++;
    CUresult r = fn ? fn(&fr, &tot) : CUDA_ERROR_NOT_SUPPORTED;
    vt_ts.guard--;
    VT_CALL_END(s, r);
    if (r == CUDA_SUCCESS) vt_ev_meminfo(&s, fr, tot);
}

void vt_ev_alloc(const struct vt_call *c, uint64_t addr, uint64_t size, int mem, const struct vt_alloc_extra *x)
{
    VT_SAVE_ERRNO;
    if (!vt_trace_ready()) { VT_RESTORE_ERRNO; return; }
    vt_fmt_ensure_device(c->dev);
    int ok = c->res == 0;
    size_t info[2], *meminfo = NULL;
    if (!ok && vt_mem_counts_vram(mem)) {
        typedef CUresult (*info_fn)(size_t *, size_t *);
        info_fn fn = (info_fn)vt_real_driver("cuMemGetInfo_v2");
        vt_ts.guard++;
        if (fn && fn(&info[0], &info[1]) == CUDA_SUCCESS) meminfo = info;
        vt_ts.guard--;
    }
    uint64_t frames[VT_BT_MAX];
    int nf = 0;
    if (vt_cfg.backtraces) {
        nf = vt_stack_capture(frames, vt_cfg.bt_depth);
    }
    /* Insert and queue the record under the range's lock: the file's order is then the
     * registry's (registry.h). */
    _Alignas(struct vt_rec_alloc) unsigned char stack[sizeof(struct vt_rec_alloc) + sizeof frames];
    size_t len = sizeof(struct vt_rec_alloc) + (size_t)nf * sizeof frames[0];
    int s = -1;
    if (ok && x && x->is_handle) {
        vt_registry_handle_lock();
        vt_registry_handle_insert_locked(x->handle, size, c->dev);
    } else if (ok) s = vt_registry_insert_lock(addr, size, mem, c->dev);
    struct vt_rec_alloc *r = rec_claim(VT_R_ALLOC, len, stack);
    fill_alloc(r, c, addr, size, mem, x, meminfo, frames, nf);
    rec_publish(VT_R_ALLOC, r, len, stack);
    if (ok && x && x->is_handle) vt_registry_handle_unlock();
    else vt_registry_unlock_shard(s);
    if (ok) maybe_sample(c);
    VT_RESTORE_ERRNO;
}

void vt_ev_free_begin(struct vt_free_pending *p, const char *api, uint64_t addr, int is_handle, uint64_t stream, int has_stream)
{
    VT_SAVE_ERRNO;
    *p = (struct vt_free_pending){ .is_handle = is_handle, .has_stream = has_stream, .addr = addr, .stream = stream,
                                   .call = { .api = api, .dev = vt_ts.cur_dev }, .shard = -1 };
    if (vt_trace_ready() && addr) {
        /* The range stays live (and valid for launches) while the real free runs; announcing the
         * free makes a thread that gets the same memory back wait for this free's line. */
        vt_alloc_info a;
        int known;
        if (is_handle) {
            vt_registry_handle_lock();
            known = vt_registry_handle_lookup_locked(addr, &a) == 0;
            vt_registry_handle_unlock();
        } else {
            int rc = vt_registry_free_announce(addr, &a, &p->shard, &p->at);
            p->announced = rc >= 0;
            if (rc < 0) p->shard = vt_registry_begin_free(addr, &a, &p->at);
            known = p->shard >= 0;
        }
        if (known) {
            p->known = 1;
            p->mem = a.mem;
            p->dev = a.dev;
            p->size = a.size;
        }
    }
    p->call.t0 = vt_now();
    VT_RESTORE_ERRNO;
}

static void fill_free(struct vt_rec_free *r, const struct vt_free_pending *p)
{
    vt_fill_call(&r->c, &p->call);
    r->c.dev = p->known ? p->dev : p->call.dev;
    r->addr = p->addr;
    r->size = p->size;
    r->stream = p->stream;
    r->mem = (uint8_t)p->mem;
    r->known = (uint8_t)p->known;
    r->is_handle = (uint8_t)p->is_handle;
    r->has_stream = (uint8_t)p->has_stream;
}

static void emit_free(const struct vt_free_pending *p)
{
    struct vt_rec_free stack, *r = rec_claim(VT_R_FREE, sizeof *r, &stack);
    fill_free(r, p);
    rec_publish(VT_R_FREE, r, sizeof *r, &stack);
}

/* The API that frees memory of p's kind when p->call.api is not it, else NULL: pinned memory
 * goes with cudaFreeHost, registered memory with cudaHostUnregister, device and managed memory
 * with cudaFree (and their driver twins). */
static const char *wrong_free(const struct vt_free_pending *p)
{
    const char *api = p->call.api;
    int drv = api[0] == 'c' && api[1] == 'u' && api[2] != 'd';
    int host = strstr(api, "FreeHost") != NULL, unreg = strstr(api, "Unregister") != NULL;
    switch (p->mem) {
    case VT_MEM_PINNED: return host ? NULL : drv ? "cuMemFreeHost" : "cudaFreeHost";
    case VT_MEM_REGISTERED: return unreg ? NULL : drv ? "cuMemHostUnregister" : "cudaHostUnregister";
    case VT_MEM_DEVICE: case VT_MEM_MANAGED: return host || unreg ? (drv ? "cuMemFree" : "cudaFree") : NULL;
    default: return NULL;
    }
}

void vt_ev_free_end(struct vt_free_pending *p, int res)
{
    VT_SAVE_ERRNO;
    VT_CALL_END(p->call, res);
    if (!vt_trace_ready()) {
        if (p->announced) vt_registry_free_retire();
        VT_RESTORE_ERRNO;
        return;
    }
    vt_alloc_info a;
    if (p->known && p->is_handle) {
        vt_registry_handle_lock();
        if (res == 0) vt_registry_handle_remove_locked(p->addr, &a);
        emit_free(p);
        vt_registry_handle_unlock();
    } else if (p->known) {
        /* The line is queued before the range leaves the map: an insert of the same memory waits
         * for the range to go, so its line comes after this one. */
        vt_registry_lock_shard(p->shard);
        if (res != 0 && !p->announced) vt_registry_set_freeing_locked(p->shard, p->addr, 0); /* nothing was freed */
        emit_free(p);
        if (res == 0) vt_registry_remove_locked(p->shard, p->addr, p->at, NULL);
        vt_registry_unlock_shard(p->shard);
    } else {
        emit_free(p);
    }
    if (p->announced) vt_registry_free_retire();
    const char *right = p->known && !p->is_handle && vt_cfg.check != VT_CHECK_OFF ? wrong_free(p) : NULL;
    if (right) {
        struct vt_finding f = { .kind = VT_F_MISMATCHED_FREE, .error = 1, .api = p->call.api, .arg = -1, .value = p->addr,
                                .has_alloc = 1, .alloc_base = p->addr, .alloc_size = p->size, .alloc_mem = p->mem, .why = right };
        vt_ev_finding(&f);
    }
    if (res != 0 && !p->known && p->addr && vt_cfg.check != VT_CHECK_OFF && !p->is_handle) {
        uint64_t forgot;
        int was_freed = vt_registry_freed_lookup(p->addr, &a, &forgot) == 0 && a.base == p->addr;
        struct vt_finding f = { .kind = was_freed ? VT_F_DOUBLE_FREE : VT_F_INVALID_FREE, .error = 1,
                                .api = p->call.api, .arg = -1, .value = p->addr };
        if (was_freed || vt_registry_lookup(p->addr, &a) == 0) { /* freed before, or inside a live block */
            f.has_alloc = 1; f.alloc_base = a.base; f.alloc_size = a.size; f.alloc_mem = a.mem;
        }
        vt_ev_finding(&f);
    }
    VT_RESTORE_ERRNO;
}

struct reset_list { int dev; size_t n, cap; uint64_t *base; uint64_t vram_bytes; };
static void collect_reset(const vt_alloc_info *a, void *p)
{
    struct reset_list *l = p;
    if (a->dev != l->dev || !(a->mem == VT_MEM_DEVICE || a->mem == VT_MEM_ASYNC || a->mem == VT_MEM_MANAGED)) return;
    if (a->mem != VT_MEM_MANAGED) l->vram_bytes += a->size;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        uint64_t *nb = realloc(l->base, cap * sizeof *nb);
        if (!nb) return;
        l->base = nb;
        l->cap = cap;
    }
    l->base[l->n++] = a->base;
}

void vt_ev_device_reset(const struct vt_call *c, int dev)
{
    if (!vt_trace_ready()) return;
    VT_SAVE_ERRNO;
    struct reset_list l = { dev, 0, 0, NULL, 0 };
    vt_registry_foreach(collect_reset, &l); /* collected first: a free takes the shard's lock */
    for (size_t i = 0; i < l.n; i++) {
        struct vt_free_pending p;
        vt_ev_free_begin(&p, c->api, l.base[i], 0, 0, 0);
        vt_ev_free_end(&p, 0);
    }
    free(l.base);
    char buf[LINE_MAX_BYTES];
    vt_line ln;
    struct vt_call rc = *c;
    rc.dev = dev;
    vt_fmt_begin(&ln, buf, VT_EVN_RESET, &rc);
    vt_put_key(&ln, "count"); vt_put_u64(&ln, l.n);
    vt_put_key(&ln, "size"); vt_put_u64(&ln, l.vram_bytes);
    vt_fmt_emit(&ln);
    VT_RESTORE_ERRNO;
}

void vt_ev_map(const struct vt_call *c, int map, uint64_t addr, uint64_t size, uint64_t handle)
{
    VT_SAVE_ERRNO;
    if (!vt_trace_ready()) { VT_RESTORE_ERRNO; return; }
    char buf[LINE_MAX_BYTES];
    vt_line l;
    vt_fmt_begin(&l, buf, map ? VT_EVN_MAP : VT_EVN_UNMAP, c);
    vt_put_key(&l, "addr"); vt_put_hex(&l, addr);
    vt_put_key(&l, "size"); vt_put_u64(&l, size);
    if (map) { vt_put_key(&l, "handle"); vt_put_hex(&l, handle); }
    size_t n = vt_fmt_finish(&l);
    int s = -1;
    if (c->res == 0) {
        vt_registry_handle_lock();
        if (map) vt_registry_handle_map_locked(addr, size, handle);
        else vt_registry_handle_unmap_locked(addr, size);
        vt_registry_handle_unlock();
        s = map ? vt_registry_insert_lock(addr, size, VT_MEM_VMM_MAP, c->dev) : vt_registry_lock_base(addr, NULL);
    }
    if (n) vt_trace_append(buf, n);
    vt_alloc_info a;
    /* After its line (registry.h). One cuMemUnmap may cover several mappings laid end to end. */
    for (uint64_t at = addr; s >= 0 && !map;) {
        if (vt_registry_remove_locked(s, at, 0, &a) < 0 || !a.size || at + a.size < at) break;
        vt_registry_unlock_shard(s);
        at += a.size;
        s = at < addr + size ? vt_registry_lock_base(at, NULL) : -1;
    }
    vt_registry_unlock_shard(s);
    VT_RESTORE_ERRNO;
}

void vt_ev_sync(const struct vt_call *c, int has_stream, uint64_t stream)
{
    VT_SAVE_ERRNO;
    if (vt_trace_ready() && !vt_traffic_paused()) {
        struct vt_rec_sync r;
        memset(&r, 0, sizeof r);
        vt_fill_call(&r.c, c);
        r.stream = stream;
        r.has_stream = has_stream != 0;
        vt_emit_record(VT_R_SYNC, &r, sizeof r);
        vt_fold_line_written(); /* the call after a d2h copy has been written: folding may go on */
    }
    VT_RESTORE_ERRNO;
}

void vt_ev_region_open(const struct vt_call *c, const char *ev, uint64_t addr, uint64_t size, int mem,
                       const struct vt_alloc_extra *x)
{
    VT_SAVE_ERRNO;
    if (!vt_trace_ready()) { VT_RESTORE_ERRNO; return; }
    vt_fmt_ensure_device(c->dev);
    char buf[LINE_MAX_BYTES];
    vt_line l;
    vt_fmt_begin(&l, buf, ev, c);
    if (c->res == 0) { vt_put_key(&l, "addr"); vt_put_hex(&l, addr); }
    vt_put_key(&l, "size"); vt_put_u64(&l, size);
    if (x && x->has_stream) { vt_put_key(&l, "stream"); vt_put_hex(&l, x->stream); }
    vt_fmt_bt(&l);
    size_t n = vt_fmt_finish(&l);
    int s = c->res == 0 ? vt_registry_insert_lock(addr, size, mem, c->dev) : -1;
    if (n) vt_trace_append(buf, n);
    vt_registry_unlock_shard(s);
    VT_RESTORE_ERRNO;
}

uint64_t vt_ev_region_close_begin(uint64_t addr)
{
    vt_alloc_info a;
    return vt_registry_remove(addr, &a) == 0 ? a.size : 0;
}

void vt_ev_region_close(const struct vt_call *c, const char *ev, uint64_t addr, uint64_t size, int mem)
{
    VT_SAVE_ERRNO;
    if (c->res != 0 && size) { /* nothing was closed: the range is still there */
        vt_registry_insert(addr, size, mem, c->dev);
    }
    if (vt_trace_ready()) {
        char buf[LINE_MAX_BYTES];
        vt_line l;
        vt_fmt_begin(&l, buf, ev, c);
        vt_put_key(&l, "addr"); vt_put_hex(&l, addr);
        if (size) { vt_put_key(&l, "size"); vt_put_u64(&l, size); }
        vt_fmt_emit(&l);
    }
    VT_RESTORE_ERRNO;
}

void vt_ev_pool_threshold(const struct vt_call *c, uint64_t pool, uint64_t keep)
{
    VT_SAVE_ERRNO;
    if (vt_trace_ready()) {
        char buf[LINE_MAX_BYTES];
        vt_line l;
        vt_fmt_begin(&l, buf, VT_EVN_POOL_ATTR, c);
        vt_put_key(&l, "pool"); vt_put_hex(&l, pool);
        vt_put_key(&l, "release_threshold"); vt_put_u64(&l, keep);
        vt_fmt_emit(&l);
    }
    VT_RESTORE_ERRNO;
}

void vt_ev_pool_trim(const struct vt_call *c, uint64_t pool, uint64_t keep, int has_reserved,
                     uint64_t before, uint64_t after)
{
    VT_SAVE_ERRNO;
    if (vt_trace_ready()) {
        char buf[LINE_MAX_BYTES];
        vt_line l;
        vt_fmt_begin(&l, buf, VT_EVN_POOL_TRIM, c);
        vt_put_key(&l, "pool"); vt_put_hex(&l, pool);
        vt_put_key(&l, "keep"); vt_put_u64(&l, keep);
        if (has_reserved) {
            vt_put_key(&l, "reserved_before"); vt_put_u64(&l, before);
            vt_put_key(&l, "reserved_after"); vt_put_u64(&l, after);
        }
        vt_fmt_emit(&l);
    }
    VT_RESTORE_ERRNO;
}

void vt_ev_meminfo(const struct vt_call *c, uint64_t free_b, uint64_t total_b)
{
    VT_SAVE_ERRNO;
    if (vt_trace_ready() && !vt_traffic_paused()) {
        struct vt_rec_meminfo r;
        vt_fill_call(&r.c, c);
        r.free_b = free_b;
        r.total_b = total_b;
        vt_emit_record(VT_R_MEMINFO, &r, sizeof r);
    }
    VT_RESTORE_ERRNO;
}

/* {"ev":EV,"t":..,"tid":.. of a record that is not a call (NVTX, the program's API) */
static void thread_line(vt_line *l, char *buf, const char *ev)
{
    vt_line_init(l, buf, LINE_MAX_BYTES - 2);
    VT_PUT_LIT(l, "{\"ev\":");
    vt_put_str(l, ev);
    vt_put_key(l, "t"); vt_put_u64(l, vt_now());
    vt_put_key(l, "tid"); vt_put_i64(l, vt_gettid());
}

void vt_ev_range(const char *ev, const char *name, uint64_t id, int has_id)
{
    VT_SAVE_ERRNO;
    if (vt_trace_ready() && !vt_traffic_paused()) {
        char buf[LINE_MAX_BYTES];
        vt_line l;
        thread_line(&l, buf, ev);
        if (has_id) { vt_put_key(&l, "id"); vt_put_u64(&l, id); }
        if (name) {
            char shortname[512];
            snprintf(shortname, sizeof shortname, "%s", name); /* bound a hostile or huge name */
            vt_put_key(&l, "name"); vt_put_str(&l, shortname);
        }
        vt_fmt_emit(&l);
    }
    VT_RESTORE_ERRNO;
}

/* ---- the program's own API (vramtrace/vramtrace.h) -------------------------------------------- */

static void api_line(const char *ev, const char *label, int depth, int has_depth, uint64_t skipped, int has_skipped)
{
    vt_fold_flush_mine(); /* snapshots, pauses: the thread's folded launches stay before them */
    char buf[LINE_MAX_BYTES];
    vt_line l;
    thread_line(&l, buf, ev);
    if (label) {
        char shortlabel[256];
        snprintf(shortlabel, sizeof shortlabel, "%s", label); /* bound a hostile or huge label */
        vt_put_key(&l, "label"); vt_put_str(&l, shortlabel);
        vt_put_key(&l, "live_bytes"); vt_put_u64(&l, vt_registry_live_vram(-1));
    }
    if (has_depth) { vt_put_key(&l, "depth"); vt_put_i64(&l, depth); }
    if (has_skipped) { vt_put_key(&l, "skipped"); vt_put_u64(&l, skipped); }
    vt_fmt_emit(&l);
}

int vt_ev_snapshot(const char *label)
{
    VT_SAVE_ERRNO;
    int ok = vt_trace_ready();
    if (ok) api_line(VT_EVN_SNAPSHOT, label ? label : "", 0, 0, 0, 0);
    VT_RESTORE_ERRNO;
    return ok;
}

int vt_ev_step(void)
{
    static _Atomic int64_t steps;
    VT_SAVE_ERRNO;
    int64_t n = 0;
    if (vt_trace_ready()) {
        vt_fold_flush_mine(); /* the launches counted so far belong before the boundary */
        n = atomic_fetch_add(&steps, 1) + 1;
        char buf[LINE_MAX_BYTES];
        vt_line l;
        thread_line(&l, buf, VT_EVN_STEP);
        vt_put_key(&l, "id"); vt_put_i64(&l, n);
        vt_fmt_emit(&l);
    }
    VT_RESTORE_ERRNO;
    return n > INT32_MAX ? INT32_MAX : (int)n;
}

int vt_ev_pause(int resume)
{
    VT_SAVE_ERRNO;
    int depth;
    if (!resume) depth = atomic_fetch_add(&vt_pause_depth, 1) + 1;
    else {
        int d = atomic_load(&vt_pause_depth);
        while (d > 0 && !atomic_compare_exchange_weak(&vt_pause_depth, &d, d - 1)) {}
        if (d <= 0) { VT_RESTORE_ERRNO; return 0; } /* a resume without a pause */
        depth = d - 1;
    }
    if (vt_trace_ready()) {
        if (!resume) api_line(VT_EVN_PAUSE, NULL, depth, 1, 0, 0);
        else api_line(VT_EVN_RESUME, NULL, depth, 1, depth ? 0 : atomic_exchange(&vt_pause_skipped, 0), depth == 0);
    }
    VT_RESTORE_ERRNO;
    return depth;
}
