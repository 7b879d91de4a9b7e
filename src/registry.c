/* registry.c - live allocation map (rangemap.c: blocked, seqlock reads), freed ring, VMM handles. */
#include "registry.h"

#include "rangemap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define VT_MAX_DEVICES 64
#define VT_FREED_RING 4096

struct handle_ent { uint64_t handle, size; int dev; int used; };

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { uint64_t base, end; uint32_t meta; } freed[VT_FREED_RING];
static unsigned freed_next, freed_count;

static struct handle_ent *handles;
static size_t handles_cap;

static _Atomic uint64_t vram_by_dev[VT_MAX_DEVICES];
_Atomic uint64_t vt_registry_removals;
/* lowest base and highest end of any device range ever recorded: values outside are no device
 * pointer, freed or not, so the scans below never run for them */
static _Atomic uint64_t span_lo = UINT64_MAX, span_hi;

static const char *const mem_names[VT_MEM_COUNT] = {
    "device", "async", "managed", "pinned", "registered", "vmm_map", "foreign", "vmm", "ipc", "graph",
};
const char *vt_mem_name(int mem) { return mem >= 0 && mem < VT_MEM_COUNT ? mem_names[mem] : "unknown"; }

#define META_FREEING 0x80000000u /* a free of this range is in flight (vt_registry_set_freeing_locked) */
static inline uint32_t pack_meta(int mem, int dev) { return (uint32_t)mem | (uint32_t)(dev + 1) << 8; }
static inline void unpack(uint64_t base, uint64_t end, uint32_t meta, vt_alloc_info *out)
{
    out->base = base;
    out->size = end - base;
    out->mem = (int)(meta & 0xff);
    out->dev = (int)((meta & ~META_FREEING) >> 8) - 1;
}
static inline int dev_slot(int dev) { return dev >= 0 && dev < VT_MAX_DEVICES ? dev : 0; }

void vt_registry_lock(void) { pthread_mutex_lock(&reg_lock); }
void vt_registry_unlock(void) { pthread_mutex_unlock(&reg_lock); }

int vt_registry_in_device_span(uint64_t addr, uint64_t slack)
{
    uint64_t lo = atomic_load_explicit(&span_lo, memory_order_relaxed), hi = atomic_load_explicit(&span_hi, memory_order_relaxed);
    return lo <= hi && addr + slack >= lo && addr < hi + slack;
}

static void widen_span(uint64_t base, uint64_t end)
{
    uint64_t lo = atomic_load(&span_lo), hi = atomic_load(&span_hi);
    while (base < lo && !atomic_compare_exchange_weak(&span_lo, &lo, base)) {}
    while (end > hi && !atomic_compare_exchange_weak(&span_hi, &hi, end)) {}
}

static void account(int mem, int dev, uint64_t size, int sign)
{
    if (vt_mem_counts_vram(mem)) {
        if (sign > 0) atomic_fetch_add(&vram_by_dev[dev_slot(dev)], size);
        else atomic_fetch_sub(&vram_by_dev[dev_slot(dev)], size);
    }
}

static void remember_freed(uint64_t base, uint64_t end, uint32_t meta)
{
    freed[freed_next].base = base;
    freed[freed_next].end = end;
    freed[freed_next].meta = meta;
    freed_next = (freed_next + 1) % VT_FREED_RING;
    if (freed_count < VT_FREED_RING) freed_count++;
}

static void evicted(const struct vt_rm_ent *e)
{
    vt_alloc_info old;
    unpack(e->base, e->end, e->meta, &old);
    account(old.mem, old.dev, old.size, -1);
    atomic_fetch_add_explicit(&vt_registry_removals, 1, memory_order_release);
}

/* Ranges overlapping [base, end) are contiguous, ending with floor(end - 1). If one is being
 * freed by another thread, the driver handed out memory whose free is not recorded yet: -2, the
 * caller waits for that line, so the file never shows the reuse before the free. Otherwise the
 * overlapping ranges are stale (frees never seen) and are evicted. */
static int clear_overlaps(uint64_t base, uint64_t end)
{
    struct vt_rm_ent e;
    for (uint64_t at = end - 1; vt_rm_floor(at, &e) == 0 && e.end > base; at = e.base - 1) {
        if (e.meta & META_FREEING) return -2;
        if (e.base == 0) break;
    }
    while (vt_rm_floor(end - 1, &e) == 0 && e.end > base) {
        vt_rm_remove(e.base, NULL);
        evicted(&e);
    }
    return 0;
}

int vt_registry_insert_locked(uint64_t base, uint64_t size, int mem, int dev)
{
    if (size == 0) size = 1;
    uint64_t end = base + size;
    struct vt_rm_ent e;
    if (vt_rm_floor(end - 1, &e) == 0 && e.end > base && clear_overlaps(base, end) != 0) return -2;
    if (vt_rm_insert(base, end, pack_meta(mem, dev)) != 0) return -1;
    if (vt_mem_is_device(mem)) widen_span(base, end);
    account(mem, dev, size, +1);
    return 0;
}

int vt_registry_set_freeing_locked(uint64_t base, int on, vt_alloc_info *out)
{
    struct vt_rm_ent e;
    if (vt_rm_floor(base, &e) != 0 || e.base != base) return -1;
    uint32_t m = on ? e.meta | META_FREEING : e.meta & ~META_FREEING;
    vt_rm_set_meta(base, m);
    if (out) unpack(base, e.end, m, out);
    return 0;
}

int vt_registry_remove_locked(uint64_t base, vt_alloc_info *out)
{
    struct vt_rm_ent e;
    if (vt_rm_remove(base, &e) != 0) return -1;
    atomic_fetch_add_explicit(&vt_registry_removals, 1, memory_order_release);
    unpack(e.base, e.end, e.meta, out);
    remember_freed(e.base, e.end, e.meta);
    account(out->mem, out->dev, out->size, -1);
    return 0;
}

int vt_registry_handle_insert_locked(uint64_t handle, uint64_t size, int dev)
{
    size_t slot = handles_cap;
    for (size_t i = 0; i < handles_cap; i++) if (!handles[i].used) { slot = i; break; }
    if (slot == handles_cap) {
        size_t cap = handles_cap ? handles_cap * 2 : 256;
        struct handle_ent *h = realloc(handles, cap * sizeof *h);
        if (!h) return -1;
        memset(h + handles_cap, 0, (cap - handles_cap) * sizeof *h);
        handles = h;
        handles_cap = cap;
    }
    handles[slot] = (struct handle_ent){ handle, size, dev, 1 };
    account(VT_MEM_VMM, dev, size, +1);
    return 0;
}

int vt_registry_handle_lookup_locked(uint64_t handle, vt_alloc_info *out)
{
    for (size_t i = 0; i < handles_cap; i++)
        if (handles[i].used && handles[i].handle == handle) {
            *out = (vt_alloc_info){ handle, handles[i].size, VT_MEM_VMM, handles[i].dev };
            return 0;
        }
    return -1;
}

int vt_registry_handle_remove_locked(uint64_t handle, vt_alloc_info *out)
{
    for (size_t i = 0; i < handles_cap; i++) {
        if (handles[i].used && handles[i].handle == handle) {
            *out = (vt_alloc_info){ handle, handles[i].size, VT_MEM_VMM, handles[i].dev };
            handles[i].used = 0;
            account(VT_MEM_VMM, out->dev, out->size, -1);
            return 0;
        }
    }
    return -1;
}

int vt_registry_lookup(uint64_t addr, vt_alloc_info *out)
{
    struct vt_rm_ent e;
    int rc = vt_rm_lookup(addr, &e);
    if (rc == -2) { /* writers kept the seqlock busy: ask under the lock */
        pthread_mutex_lock(&reg_lock);
        rc = vt_rm_floor(addr, &e) == 0 && addr < e.end ? 0 : -1;
        pthread_mutex_unlock(&reg_lock);
    }
    if (rc == 0) unpack(e.base, e.end, e.meta, out);
    return rc;
}

int vt_registry_freed_lookup(uint64_t addr, vt_alloc_info *out)
{
    if (!vt_registry_in_device_span(addr, 0)) return -1;
    int rc = -1;
    pthread_mutex_lock(&reg_lock);
    for (unsigned k = 1; k <= freed_count; k++) {
        unsigned i = (freed_next + VT_FREED_RING - k) % VT_FREED_RING;
        if (addr >= freed[i].base && addr < freed[i].end) {
            unpack(freed[i].base, freed[i].end, freed[i].meta, out);
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}

int vt_registry_nearest_device(uint64_t addr, uint64_t slack, vt_alloc_info *out)
{
    if (!vt_registry_in_device_span(addr, slack)) return -1;
    int rc = -1;
    uint64_t best = UINT64_MAX;
    pthread_mutex_lock(&reg_lock);
    /* The neighbours in address order are the candidates: a few ranges either side. */
    struct vt_rm_ent e;
    int have = vt_rm_floor(addr, &e) == 0;
    for (int side = 0; side < 2; side++) {
        struct vt_rm_ent c = e;
        int ok = side == 0 ? have : vt_rm_next(have ? e.base : addr, &c) == 0;
        for (int k = 0; ok && k < 8; k++) {
            if (vt_mem_is_device((int)(c.meta & 0xff))) {
                uint64_t d = addr >= c.end ? addr - c.end : (addr < c.base ? c.base - addr : 0);
                if (d <= slack && d < best) { best = d; unpack(c.base, c.end, c.meta, out); rc = 0; }
            }
            uint64_t from = c.base;
            ok = side == 0 ? vt_rm_prev(from, &c) == 0 : vt_rm_next(from, &c) == 0;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}

uint64_t vt_registry_live_vram(int dev)
{
    if (dev >= 0) return atomic_load(&vram_by_dev[dev_slot(dev)]);
    uint64_t sum = 0;
    for (int i = 0; i < VT_MAX_DEVICES; i++) sum += atomic_load(&vram_by_dev[i]);
    return sum;
}

struct foreach_ctx { void (*fn)(const vt_alloc_info *, void *); void *ctx; };
static void foreach_one(const struct vt_rm_ent *e, void *p)
{
    struct foreach_ctx *f = p;
    vt_alloc_info info;
    unpack(e->base, e->end, e->meta, &info);
    if (vt_mem_counts_vram(info.mem) || info.mem == VT_MEM_MANAGED) f->fn(&info, f->ctx);
}

void vt_registry_foreach(void (*fn)(const vt_alloc_info *, void *), void *ctx)
{
    pthread_mutex_lock(&reg_lock);
    struct foreach_ctx f = { fn, ctx };
    vt_rm_foreach(foreach_one, &f);
    for (size_t i = 0; i < handles_cap; i++)
        if (handles[i].used) {
            vt_alloc_info info = { handles[i].handle, handles[i].size, VT_MEM_VMM, handles[i].dev };
            fn(&info, ctx);
        }
    pthread_mutex_unlock(&reg_lock);
}

void vt_registry_reset(void)
{
    atomic_store(&span_lo, UINT64_MAX);
    atomic_store(&span_hi, 0);
    atomic_fetch_add(&vt_registry_removals, 1);
    pthread_mutex_init(&reg_lock, NULL);
    vt_rm_reset();
    freed_count = freed_next = 0;
    for (size_t i = 0; i < handles_cap; i++) handles[i].used = 0;
    for (int i = 0; i < VT_MAX_DEVICES; i++) atomic_store(&vram_by_dev[i], 0);
}
