/* registry.c - live allocation map: sorted array under a seqlock (lock-free reads), freed ring. */
#include "registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define VT_MAX_DEVICES 64
#define VT_FREED_RING 4096

struct ent {
    _Atomic uint64_t base, end;
    _Atomic uint32_t meta; /* mem | (dev + 1) << 8 */
};
struct arr {
    size_t cap;
    struct ent e[];
};
struct handle_ent { uint64_t handle, size; int dev; int used; };

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t seq;
static _Atomic(struct arr *) live;
static _Atomic size_t nlive;
static struct arr *retired[64]; /* old arrays stay mapped: a reader may still be scanning one */
static int nretired;

static struct { uint64_t base, end; uint32_t meta; } freed[VT_FREED_RING];
static unsigned freed_next, freed_count;

static struct handle_ent *handles;
static size_t handles_cap;

static _Atomic uint64_t vram_by_dev[VT_MAX_DEVICES];
static _Atomic uint64_t live_count;
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

/* index of the last entry with base <= addr, or -1 (caller holds the lock or the seqlock) */
static long floor_index(const struct arr *a, size_t n, uint64_t addr)
{
    long lo = 0, hi = (long)n - 1, best = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (atomic_load_explicit(&a->e[mid].base, memory_order_relaxed) <= addr) { best = mid; lo = mid + 1; }
        else hi = mid - 1;
    }
    return best;
}

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
    if (sign > 0) atomic_fetch_add(&live_count, 1);
    else atomic_fetch_sub(&live_count, 1);
}

static void copy_ent(struct ent *dst, struct ent *src)
{
    atomic_store_explicit(&dst->base, atomic_load_explicit(&src->base, memory_order_relaxed), memory_order_relaxed);
    atomic_store_explicit(&dst->end, atomic_load_explicit(&src->end, memory_order_relaxed), memory_order_relaxed);
    atomic_store_explicit(&dst->meta, atomic_load_explicit(&src->meta, memory_order_relaxed), memory_order_relaxed);
}

static void remember_freed(uint64_t base, uint64_t end, uint32_t meta)
{
    freed[freed_next].base = base;
    freed[freed_next].end = end;
    freed[freed_next].meta = meta;
    freed_next = (freed_next + 1) % VT_FREED_RING;
    if (freed_count < VT_FREED_RING) freed_count++;
}

/* remove entry i (lock held, seqlock odd) */
static void erase_at(struct arr *a, size_t *n, size_t i)
{
    atomic_fetch_add_explicit(&vt_registry_removals, 1, memory_order_release);
    for (size_t j = i; j + 1 < *n; j++) copy_ent(&a->e[j], &a->e[j + 1]);
    (*n)--;
}

int vt_registry_insert_locked(uint64_t base, uint64_t size, int mem, int dev)
{
    if (size == 0) size = 1;
    struct arr *a = atomic_load(&live);
    size_t n = atomic_load(&nlive);
    if (!a || n + 1 > a->cap) {
        size_t cap = a ? a->cap * 2 : 1024;
        struct arr *b = malloc(sizeof *b + cap * sizeof b->e[0]);
        if (!b) return -1;
        b->cap = cap;
        for (size_t i = 0; i < n; i++) copy_ent(&b->e[i], &a->e[i]);
        if (a) {
            if (nretired < (int)(sizeof retired / sizeof retired[0])) retired[nretired++] = a;
            /* else: leak it; a reader might still hold it */
        }
        atomic_store(&live, b);
        a = b;
    }
    uint64_t end = base + size;
    /* The driver handed out memory whose free is still being recorded by another thread: the
     * caller waits for that line, so the file never shows the reuse before the free. */
    long f = floor_index(a, n, base);
    for (size_t k = f < 0 ? 0 : (size_t)f; k < n && atomic_load_explicit(&a->e[k].base, memory_order_relaxed) < end; k++)
        if (atomic_load_explicit(&a->e[k].end, memory_order_relaxed) > base &&
            (atomic_load_explicit(&a->e[k].meta, memory_order_relaxed) & META_FREEING))
            return -2;
    atomic_fetch_add_explicit(&seq, 1, memory_order_release); /* odd: writers active */
    atomic_thread_fence(memory_order_release);
    /* Evict stale ranges overlapping the new one (a free we never saw). */
    long i = floor_index(a, n, base);
    if (i >= 0 && atomic_load_explicit(&a->e[i].end, memory_order_relaxed) > base) {
        vt_alloc_info old;
        unpack(a->e[i].base, a->e[i].end, a->e[i].meta, &old);
        account(old.mem, old.dev, old.size, -1);
        erase_at(a, &n, (size_t)i);
    }
    size_t pos = (size_t)(floor_index(a, n, base) + 1);
    while (pos < n && atomic_load_explicit(&a->e[pos].base, memory_order_relaxed) < end) {
        vt_alloc_info old;
        unpack(a->e[pos].base, a->e[pos].end, a->e[pos].meta, &old);
        account(old.mem, old.dev, old.size, -1);
        erase_at(a, &n, pos);
    }
    for (size_t j = n; j > pos; j--) copy_ent(&a->e[j], &a->e[j - 1]);
    atomic_store_explicit(&a->e[pos].base, base, memory_order_relaxed);
    atomic_store_explicit(&a->e[pos].end, end, memory_order_relaxed);
    atomic_store_explicit(&a->e[pos].meta, pack_meta(mem, dev), memory_order_relaxed);
    n++;
    atomic_store_explicit(&nlive, n, memory_order_relaxed);
    if (vt_mem_is_device(mem)) widen_span(base, end);
    atomic_fetch_add_explicit(&seq, 1, memory_order_release); /* even again */
    account(mem, dev, size, +1);
    return 0;
}

int vt_registry_set_freeing_locked(uint64_t base, int on, vt_alloc_info *out)
{
    struct arr *a = atomic_load(&live);
    size_t n = atomic_load(&nlive);
    if (!a) return -1;
    long i = floor_index(a, n, base);
    if (i < 0 || atomic_load_explicit(&a->e[i].base, memory_order_relaxed) != base) return -1;
    uint32_t m = atomic_load_explicit(&a->e[i].meta, memory_order_relaxed);
    m = on ? m | META_FREEING : m & ~META_FREEING;
    atomic_store_explicit(&a->e[i].meta, m, memory_order_relaxed);
    if (out) unpack(base, atomic_load_explicit(&a->e[i].end, memory_order_relaxed), m, out);
    return 0;
}

int vt_registry_remove_locked(uint64_t base, vt_alloc_info *out)
{
    struct arr *a = atomic_load(&live);
    size_t n = atomic_load(&nlive);
    if (!a) return -1;
    long i = floor_index(a, n, base);
    if (i < 0 || atomic_load_explicit(&a->e[i].base, memory_order_relaxed) != base) return -1;
    uint64_t b = a->e[i].base, e = a->e[i].end;
    uint32_t meta = a->e[i].meta;
    unpack(b, e, meta, out);
    atomic_fetch_add_explicit(&seq, 1, memory_order_release);
    atomic_thread_fence(memory_order_release);
    erase_at(a, &n, (size_t)i);
    atomic_store_explicit(&nlive, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&seq, 1, memory_order_release);
    remember_freed(b, e, meta);
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

static int lookup_in(struct arr *a, size_t n, uint64_t addr, vt_alloc_info *out)
{
    if (!a) return -1;
    if (n > a->cap) n = a->cap;
    long i = floor_index(a, n, addr);
    if (i < 0) return -1;
    uint64_t b = atomic_load_explicit(&a->e[i].base, memory_order_relaxed);
    uint64_t e = atomic_load_explicit(&a->e[i].end, memory_order_relaxed);
    uint32_t m = atomic_load_explicit(&a->e[i].meta, memory_order_relaxed);
    if (addr < b || addr >= e) return -1;
    unpack(b, e, m, out);
    return 0;
}

int vt_registry_lookup(uint64_t addr, vt_alloc_info *out)
{
    for (int tries = 0; tries < 16; tries++) {
        uint64_t s1 = atomic_load_explicit(&seq, memory_order_acquire);
        if (s1 & 1) continue;
        struct arr *a = atomic_load_explicit(&live, memory_order_acquire);
        size_t n = atomic_load_explicit(&nlive, memory_order_relaxed);
        int rc = lookup_in(a, n, addr, out);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&seq, memory_order_relaxed) == s1) return rc;
    }
    pthread_mutex_lock(&reg_lock);
    int rc = lookup_in(atomic_load(&live), atomic_load(&nlive), addr, out);
    pthread_mutex_unlock(&reg_lock);
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
    struct arr *a = atomic_load(&live);
    size_t n = atomic_load(&nlive);
    /* The neighbours in address order are the candidates: a few device ranges either side. */
    long f = a ? floor_index(a, n, addr) : -1;
    long lo = f - 8 < 0 ? 0 : f - 8, hi = f + 9 > (long)n ? (long)n : f + 9;
    for (long i = lo; a && i < hi; i++) {
        uint64_t b = a->e[i].base, e = a->e[i].end;
        uint32_t m = a->e[i].meta;
        if (!vt_mem_is_device((int)(m & 0xff))) continue;
        uint64_t d = addr >= e ? addr - e : (addr < b ? b - addr : 0);
        if (d <= slack && d < best) { best = d; unpack(b, e, m, out); rc = 0; }
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
uint64_t vt_registry_live_count(void) { return atomic_load(&live_count); }

void vt_registry_foreach(void (*fn)(const vt_alloc_info *, void *), void *ctx)
{
    pthread_mutex_lock(&reg_lock);
    struct arr *a = atomic_load(&live);
    size_t n = atomic_load(&nlive);
    for (size_t i = 0; a && i < n; i++) {
        vt_alloc_info info;
        unpack(a->e[i].base, a->e[i].end, a->e[i].meta, &info);
        if (vt_mem_counts_vram(info.mem) || info.mem == VT_MEM_MANAGED) fn(&info, ctx);
    }
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
    atomic_store(&nlive, 0);
    atomic_store(&seq, 0);
    freed_count = freed_next = 0;
    for (size_t i = 0; i < handles_cap; i++) handles[i].used = 0;
    for (int i = 0; i < VT_MAX_DEVICES; i++) atomic_store(&vram_by_dev[i], 0);
    atomic_store(&live_count, 0);
}
