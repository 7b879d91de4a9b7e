/* events.c - formats trace lines for the hooks, keeps the registry in step, runs the checks. */
#include "events.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "backtrace.h"
#include "check.h"
#include "jsonl.h"
#include "registry.h"
#include "resolve.h"
#include "tracer.h"
#include "events_fmt.h"
#include "trace_writer.h"
#include "journal.h"
#include "records.h"
#define VT_MAX_DEV 64

_Atomic uint64_t vt_finding_counts[VT_F_COUNT];
static _Atomic int device_state[VT_MAX_DEV]; /* 0 unknown, 1 being written, 2 written */
static int device_pageable[VT_MAX_DEV];
static _Atomic unsigned device_sm[VT_MAX_DEV];

uint64_t vt_findings_count(int kind) { return kind >= 0 && kind < VT_F_COUNT ? atomic_load(&vt_finding_counts[kind]) : 0; }

void vt_events_reset_after_fork(void)
{
    for (int i = 0; i < VT_MAX_DEV; i++) atomic_store(&device_state[i], 0);
    for (int i = 0; i < VT_F_COUNT; i++) atomic_store(&vt_finding_counts[i], 0);
}

void vt_fmt_begin(vt_line *l, char *buf, const char *ev, const struct vt_call *c)
{
    vt_line_init(l, buf, LINE_MAX_BYTES - 2);
    struct vt_rec_call r;
    vt_fill_call(&r, c);
    vt_record_begin(l, ev, &r, vt_api_names_current(), 0);
}

/* Close the line; returns its length, or 0 when it overflowed (then it is not written). */
size_t vt_fmt_finish(vt_line *l)
{
    VT_PUT_LIT(l, "}\n");
    return l->overflow ? 0 : vt_line_len(l);
}

void vt_fmt_emit(vt_line *l)
{
    size_t n = vt_fmt_finish(l);
    if (n) vt_trace_append(l->start, n);
}

void vt_fmt_bt(vt_line *l)
{
    if (!vt_cfg.backtraces) return;
    uint64_t frames[VT_BT_MAX];
    int n = vt_backtrace(frames, vt_cfg.bt_depth);
    vt_modules_cover(frames, n, vt_emit_module);
    VT_PUT_LIT(l, ",\"bt\":[");
    for (int i = 0; i < n; i++) {
        if (i) VT_PUT_LIT(l, ",");
        vt_put_hex(l, frames[i]);
    }
    VT_PUT_LIT(l, "]");
}

void vt_emit_module(const char *path, uint64_t base, uint64_t lo, uint64_t hi)
{
    char buf[LINE_MAX_BYTES * 3];
    vt_line l;
    vt_line_init(&l, buf, sizeof buf - 2);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_MODULE "\",\"path\":");
    vt_put_str(&l, path);
    vt_put_key(&l, "base"); vt_put_hex(&l, base);
    vt_put_key(&l, "lo"); vt_put_hex(&l, lo);
    vt_put_key(&l, "hi"); vt_put_hex(&l, hi);
    vt_fmt_emit(&l);
}

void vt_ensure_device(int dev)
{
    if (dev < 0 || dev >= VT_MAX_DEV) return;
    int expected = 0;
    if (atomic_load_explicit(&device_state[dev], memory_order_acquire) == 2 ||
        !atomic_compare_exchange_strong(&device_state[dev], &expected, 1))
        return;
    typedef CUresult (*get_fn)(CUdevice *, int);
    typedef CUresult (*name_fn)(char *, int, CUdevice);
    typedef CUresult (*mem_fn)(size_t *, CUdevice);
    typedef CUresult (*attr_fn)(int *, int, CUdevice);
    get_fn get = (get_fn)vt_real_driver("cuDeviceGet");
    name_fn name = (name_fn)vt_real_driver("cuDeviceGetName");
    mem_fn mem = (mem_fn)vt_real_driver("cuDeviceTotalMem_v2");
    attr_fn attr = (attr_fn)vt_real_driver("cuDeviceGetAttribute");
    CUdevice d = 0;
    char nm[256] = "unknown";
    size_t total = 0;
    int clock = 0, width = 0, pageable = 0, major = 0, minor = 0;
    vt_ts.guard++;
    int got = get && get(&d, dev) == CUDA_SUCCESS;
    if (got) {
        if (name) name(nm, sizeof nm, d);
        if (mem) mem(&total, d);
        if (attr) {
            attr(&clock, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, d);
            attr(&width, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, d);
            attr(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, d);
            attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
            attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
        }
    }
    vt_ts.guard--;
    if (!got) { /* the driver is not initialised yet: try again after the next call */
        atomic_store(&device_state[dev], 0);
        return;
    }
    device_pageable[dev] = pageable;
    atomic_store(&device_sm[dev], (unsigned)(major * 10 + minor));
    char buf[LINE_MAX_BYTES];
    vt_line l;
    vt_line_init(&l, buf, sizeof buf - 2);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_DEVICE "\"");
    vt_put_key(&l, "t"); vt_put_u64(&l, vt_now());
    vt_put_key(&l, "dev"); vt_put_i64(&l, dev);
    vt_put_key(&l, "name"); vt_put_str(&l, nm);
    vt_put_key(&l, "total_bytes"); vt_put_u64(&l, total);
    char cc[32];
    snprintf(cc, sizeof cc, "%d.%d", major, minor);
    vt_put_key(&l, "cc"); vt_put_str(&l, cc);
    vt_put_key(&l, "mem_clock_khz"); vt_put_i64(&l, clock);
    vt_put_key(&l, "bus_width_bits"); vt_put_i64(&l, width);
    vt_put_key(&l, "pageable_access"); vt_put_i64(&l, pageable);
    vt_put_key(&l, "sim"); if (strstr(nm, "simulated")) VT_PUT_LIT(&l, "true"); else VT_PUT_LIT(&l, "false");
    vt_fmt_emit(&l);
    atomic_store_explicit(&device_state[dev], 2, memory_order_release);
}

unsigned vt_device_sm(int dev)
{
    if (dev < 0 || dev >= VT_MAX_DEV) return 0;
    unsigned sm = atomic_load(&device_sm[dev]);
    if (sm) return sm;
    typedef CUresult (*get_fn)(CUdevice *, int);
    typedef CUresult (*attr_fn)(int *, int, CUdevice);
    get_fn get = (get_fn)vt_real_driver("cuDeviceGet");
    attr_fn attr = (attr_fn)vt_real_driver("cuDeviceGetAttribute");
    CUdevice d;
    int major = 0, minor = 0;
    vt_ts.guard++;
    if (get && attr && get(&d, dev) == CUDA_SUCCESS &&
        attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) == CUDA_SUCCESS)
        attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
    vt_ts.guard--;
    return (unsigned)(major * 10 + minor);
}

int vt_device_pageable_access(int dev)
{
    if (dev < 0 || dev >= VT_MAX_DEV) return 0;
    /* A launch can be the program's first CUDA call: record the device now, the severity of a
     * host-pointer finding depends on it. */
    if (atomic_load_explicit(&device_state[dev], memory_order_acquire) != 2) {
        /* The runtime may not have loaded the driver yet; the launch is about to, so do it now
         * (the reference is kept) and initialise it (idempotent). */
        typedef CUresult (*init_fn)(unsigned int);
        vt_ts.guard++;
        if (!vt_real_driver("cuInit")) (void)dlopen("libcuda.so.1", RTLD_NOW);
        init_fn init = (init_fn)vt_real_driver("cuInit");
        if (init) init(0);
        vt_ts.guard--;
        vt_ensure_device(dev);
    }
    return device_pageable[dev];
}

void vt_fmt_ensure_device(int dev)
{
    if (dev >= 0 && dev < VT_MAX_DEV && atomic_load_explicit(&device_state[dev], memory_order_acquire) != 2)
        vt_ensure_device(dev);
}


static void emit_formatted(int type, const void *rec, size_t len)
{
    char buf[LINE_MAX_BYTES * 2];
    size_t n = vt_record_format(type, rec, len, 0, vt_api_names_current(), buf, sizeof buf);
    if (n) vt_trace_append(buf, n);
}

void vt_emit_record(int type, const void *rec, size_t len)
{
    void *slot = vt_journal_claim(type, len);
    if (slot) {
        memcpy(slot, rec, len);
        vt_journal_commit(slot);
        return;
    }
    emit_formatted(type, rec, len);
}

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
    else emit_formatted(type, rec, len);
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
        nf = vt_backtrace(frames, vt_cfg.bt_depth);
        vt_modules_cover(frames, nf, vt_emit_module);
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
    if (res != 0 && !p->known && p->addr && vt_cfg.check != VT_CHECK_OFF && !p->is_handle) {
        int was_freed = vt_registry_freed_lookup(p->addr, &a) == 0 && a.base == p->addr;
        struct vt_finding f = { .kind = was_freed ? VT_F_DOUBLE_FREE : VT_F_INVALID_FREE, .error = 1,
                                .api = p->call.api, .arg = -1, .value = p->addr };
        if (was_freed) { f.has_alloc = 1; f.alloc_base = a.base; f.alloc_size = a.size; }
        vt_ev_finding(&f);
    }
    VT_RESTORE_ERRNO;
}

static const char *const dir_names[] = {
#define VT_X(id) [VT_DIR_##id] = VT_DIRN_##id,
    VT_TRACE_DIRS(VT_X)
#undef VT_X
};

static int side_is_device(const vt_ptr_info *i) { return i->cls == VT_PTR_DEVICE || i->cls == VT_PTR_MANAGED; }

/* Copies need only "device, pinned, managed or pageable": the registry answers almost always;
 * a miss asks the driver (untracked CUDA memory) when checks are on, else it is pageable. */
static void copy_class(uint64_t v, vt_ptr_info *out)
{
    if (vt_live_lookup_cached(v, &out->alloc) == 0) {
        out->cls = out->alloc.mem == VT_MEM_MANAGED ? VT_PTR_MANAGED
                 : (out->alloc.mem == VT_MEM_PINNED || out->alloc.mem == VT_MEM_REGISTERED) ? VT_PTR_PINNED : VT_PTR_DEVICE;
        return;
    }
    out->cls = VT_PTR_HOST;
    if (vt_cfg.check != VT_CHECK_OFF && !vt_looks_scalar(v)) vt_classify_cuda(v, out);
}

static void check_range(const struct vt_call *c, const vt_ptr_info *i, uint64_t p, uint64_t extent, const char *role)
{
    if (i->cls != VT_PTR_DEVICE && i->cls != VT_PTR_MANAGED && i->cls != VT_PTR_PINNED) return;
    if (p + extent <= i->alloc.base + i->alloc.size) return;
    char why[96];
    snprintf(why, sizeof why, "%s range runs %llu bytes past the end of its allocation", role,
             (unsigned long long)(p + extent - (i->alloc.base + i->alloc.size)));
    struct vt_finding f = { .kind = VT_F_OOB_COPY, .error = 1, .api = c->api, .arg = -1, .value = p,
                            .has_alloc = 1, .alloc_base = i->alloc.base, .alloc_size = i->alloc.size, .why = why };
    vt_ev_finding(&f);
}

void vt_ev_copy(const struct vt_call *c, uint64_t dst, uint64_t src, uint64_t size, const struct vt_copy_extra *x)
{
    VT_SAVE_ERRNO;
    if (!vt_trace_ready()) { VT_RESTORE_ERRNO; return; }
    vt_fmt_ensure_device(c->dev);
    vt_ptr_info di, si;
    copy_class(dst, &di);
    copy_class(src, &si);
    int dd = side_is_device(&di), sd = side_is_device(&si);
    int dir = sd ? (dd ? VT_DIR_D2D : VT_DIR_D2H) : (dd ? VT_DIR_H2D : VT_DIR_H2H);
    if (vt_cfg.check != VT_CHECK_OFF) {
        uint64_t dext = x->is_2d ? x->dpitch * (x->height ? x->height - 1 : 0) + x->width : size;
        uint64_t sext = x->is_2d ? x->spitch * (x->height ? x->height - 1 : 0) + x->width : size;
        if (size) { check_range(c, &di, dst, dext, "destination"); check_range(c, &si, src, sext, "source"); }
        int want = x->kind == cudaMemcpyHostToDevice ? VT_DIR_H2D : x->kind == cudaMemcpyDeviceToHost ? VT_DIR_D2H
                 : x->kind == cudaMemcpyDeviceToDevice ? VT_DIR_D2D : x->kind == cudaMemcpyHostToHost ? VT_DIR_H2H : -1;
        /* Managed memory is valid on either side; only a side the kind contradicts outright counts. */
        int want_sd = want == VT_DIR_D2H || want == VT_DIR_D2D, want_dd = want == VT_DIR_H2D || want == VT_DIR_D2D;
        int bad = want >= 0 && ((si.cls != VT_PTR_MANAGED && sd != want_sd) || (di.cls != VT_PTR_MANAGED && dd != want_dd));
        if (bad) {
            char why[128];
            snprintf(why, sizeof why, "kind says %s but the pointers are %s", dir_names[want], dir_names[dir]);
            struct vt_finding f = { .kind = VT_F_DIRECTION, .error = 1, .api = c->api, .arg = -1, .value = sd ? src : dst, .why = why };
            vt_ev_finding(&f);
        }
    }
    struct vt_rec_copy r;
    memset(&r, 0, sizeof r);
    vt_fill_call(&r.c, c);
    r.dst = dst;
    r.src = src;
    r.size = size;
    r.dir = (uint8_t)dir;
    if (dir == VT_DIR_H2D || dir == VT_DIR_D2H) {
        const vt_ptr_info *h = dir == VT_DIR_H2D ? &si : &di;
        r.host = h->cls == VT_PTR_PINNED ? 2 : h->cls == VT_PTR_MANAGED ? 3 : 1;
    }
    r.async = (uint8_t)x->async;
    r.stream = x->stream;
    r.kind = x->kind;
    r.is_2d = (uint8_t)x->is_2d;
    r.width = x->width;
    r.height = x->height;
    r.dpitch = x->dpitch;
    r.spitch = x->spitch;
    r.src_dev = x->src_dev;
    vt_emit_record(VT_R_COPY, &r, sizeof r);
    VT_RESTORE_ERRNO;
}

void vt_ev_set(const struct vt_call *c, uint64_t addr, uint64_t size, int value, int async, uint64_t stream, uint64_t elem)
{
    VT_SAVE_ERRNO;
    if (!vt_trace_ready()) { VT_RESTORE_ERRNO; return; }
    vt_fmt_ensure_device(c->dev);
    uint64_t bytes = size * (elem ? elem : 1);
    if (vt_cfg.check != VT_CHECK_OFF && bytes) {
        vt_ptr_info i;
        copy_class(addr, &i);
        check_range(c, &i, addr, bytes, "memset");
    }
    struct vt_rec_set r;
    memset(&r, 0, sizeof r);
    vt_fill_call(&r.c, c);
    r.addr = addr;
    r.size = bytes;
    r.value = value;
    r.async = (uint8_t)async;
    r.stream = stream;
    vt_emit_record(VT_R_SET, &r, sizeof r);
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
    if (c->res == 0) s = map ? vt_registry_insert_lock(addr, size, VT_MEM_VMM_MAP, c->dev) : vt_registry_lock_base(addr, NULL);
    if (n) vt_trace_append(buf, n);
    vt_alloc_info a;
    if (s >= 0 && !map) vt_registry_remove_locked(s, addr, 0, &a); /* after its line (registry.h) */
    vt_registry_unlock_shard(s);
    VT_RESTORE_ERRNO;
}

void vt_ev_sync(const struct vt_call *c)
{
    VT_SAVE_ERRNO;
    if (vt_trace_ready()) {
        struct vt_rec_call r;
        vt_fill_call(&r, c);
        vt_emit_record(VT_R_SYNC, &r, sizeof r);
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
    if (vt_trace_ready()) {
        struct vt_rec_meminfo r;
        vt_fill_call(&r.c, c);
        r.free_b = free_b;
        r.total_b = total_b;
        vt_emit_record(VT_R_MEMINFO, &r, sizeof r);
    }
    VT_RESTORE_ERRNO;
}

void vt_ev_range(const char *ev, const char *name, uint64_t id, int has_id)
{
    VT_SAVE_ERRNO;
    if (vt_trace_ready()) {
        char buf[LINE_MAX_BYTES];
        vt_line l;
        vt_line_init(&l, buf, LINE_MAX_BYTES - 2);
        VT_PUT_LIT(&l, "{\"ev\":");
        vt_put_str(&l, ev);
        vt_put_key(&l, "t"); vt_put_u64(&l, vt_now());
        vt_put_key(&l, "tid"); vt_put_i64(&l, vt_gettid());
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

