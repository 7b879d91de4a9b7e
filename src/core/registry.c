/* registry.c - live allocation map sharded by address (see registry.h), freed history, VMM handles. */
#include "registry.h"

#include "addrspace.h"

#include "inflight.h"
#include "rangemap.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tracer.h"

/* Region sizes per level: 2 MiB (the driver's large-page granule: small allocations share one,
 * 2 MiB segments each get their own), then x32 each up to 64 TiB, then the whole address space.
 * Finer first levels (4 KiB, 64 KiB) spread small allocations over more locks but cost every
 * insert a probe per extra level in use (~100 instructions per alloc+free, measured). */
#define NLEV 7
#define NSHARD 16
#define NSHARDS (NLEV * NSHARD)
_Static_assert(NSHARDS == VT_REGISTRY_SHARDS, "registry.h's shard count");
/* Freed history per shard: a second map of freed ranges (a newer free replaces the older ones it
 * overlaps, so a caching allocator's reused block costs one entry) and a list of the same ranges
 * in free order, oldest first, that bounds it: past `freed_cap` ranges the oldest is forgotten and
 * counted. Node i of the list is the map entry whose meta carries i in bits 16..30. The nodes are
 * mapped on the shard's first free: 16 bytes per range, plus the map's entry. */
#define FREED_DEFAULT 16384
#define FREED_MAX 32768
#define FNIL UINT32_MAX
struct fnode { uint64_t base; uint32_t prev, next; };
static unsigned freed_cap = FREED_DEFAULT;
#define INSERT_TRIES 100000
static const unsigned lev_shift[NLEV] = { 21, 26, 31, 36, 41, 46, 64 };

struct shard {
    _Atomic int lock; /* 0 free, 1 held, 2 held with waiters (futex word) */
    struct vt_rm map;
    struct vt_rm freed;     /* freed ranges, never overlapping; meta: kind, device, node */
    struct fnode *fnodes;   /* FREED_MAX nodes, or NULL before the first free */
    uint32_t fhead, ftail, ffree, fbump, fcount; /* oldest, newest, free list, never used, live */
    uint64_t forgot;        /* ranges dropped from the history to keep it bounded */
} __attribute__((aligned(128)));   /* no false sharing between shards' locks */

static struct shard shards[NSHARDS];

/* Per-thread position hints (rangemap.h): where this thread's recent inserts went, so their free
 * finds its range without probing levels or searching; and where its last removal was, which is
 * where the driver's next allocation usually goes back. Checked before use: wrong ones cost a search. */
struct recent_ins { uint64_t base; int shard; uint32_t at; };
#define RECENT_BITS 4
static __thread __attribute__((tls_model("initial-exec"))) struct recent_ins recent[1 << RECENT_BITS];
static __thread __attribute__((tls_model("initial-exec"))) struct { int shard; uint32_t at; } last_removal;
static inline struct recent_ins *recent_slot(uint64_t base)
{
    return &recent[(base * 0x9E3779B97F4A7C15ull) >> (64 - RECENT_BITS)];
}
/* This thread's recent insert at base, or NULL (its shard is then still to be found). */
static inline const struct recent_ins *recent_hit(uint64_t base)
{
    const struct recent_ins *r = recent_slot(base);
    return r->base == base && r->shard >= 0 && r->shard < NSHARDS ? r : NULL;
}
/* bit L: level L has ever held a range; lookups skip levels never used (read-mostly word) */
static _Atomic unsigned lev_used;

/* A VMM handle's physical memory is held from cuMemCreate until it is released and its last
 * mapping is gone (CUDA frees it then): `maps` counts mappings, `released` says cuMemRelease ran.
 * Mappings remember their handle so cuMemUnmap (which names addresses) can find it. */
struct handle_ent { uint64_t handle, size; int dev; int used; uint32_t maps; int released; };
struct vmap_ent { uint64_t addr, size, handle; };
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handle_ent *handles;
static size_t handles_cap;
static struct vmap_ent *vmaps;
static size_t nvmaps, vmaps_cap;

struct vt_shard_gen vt_registry_gens[VT_REGISTRY_SHARDS];
_Atomic uint64_t vt_registry_inserts;
/* Shard s lost a live range (its lock held, the map already changed): a plain store, as only the
 * lock holder writes it; release, so a reader that sees the new value sees the range gone. */
static inline void bump_gen(int s)
{
    atomic_store_explicit(&vt_registry_gens[s].v, atomic_load_explicit(&vt_registry_gens[s].v, memory_order_relaxed) + 1, memory_order_release);
}
/* lowest base and highest end of any device range ever recorded: values outside are no device
 * pointer, freed or not, so the scans below never run for them */
static _Atomic uint64_t span_lo = UINT64_MAX, span_hi;
/* the same for every range ever freed (pinned and managed included) */
static _Atomic uint64_t freed_lo = UINT64_MAX, freed_hi;

static const char *const mem_names[VT_MEM_COUNT] = {
#define VT_X(id) [VT_MEM_##id] = VT_MEMN_##id,
    VT_TRACE_MEMS(VT_X)
#undef VT_X
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

/* Shard locks are futex words, not pthread mutexes: zero is unlocked, so they need no init,
 * and an uncontended lock/unlock pair is two atomic instructions inline (the glibc pair and its
 * pthread_once check cost ~57 instructions, three pairs per malloc+free). Contention takes the
 * classic three-state path (Drepper, "Futexes Are Tricky", mutex2). */
static __attribute__((noinline)) void lock_slow(_Atomic int *l, int c)
{
    int saved = errno;
    if (c != 2) c = atomic_exchange_explicit(l, 2, memory_order_acquire);
    while (c != 0) {
        syscall(SYS_futex, (int *)l, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange_explicit(l, 2, memory_order_acquire);
    }
    errno = saved;
}
static __attribute__((noinline)) void unlock_wake(_Atomic int *l)
{
    int saved = errno;
    syscall(SYS_futex, (int *)l, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}
static inline void lock_shard(int s)
{
    vt_ts.held++;
    int c = 0;
    if (__builtin_expect(!atomic_compare_exchange_strong_explicit(&shards[s].lock, &c, 1, memory_order_acquire, memory_order_relaxed), 0))
        lock_slow(&shards[s].lock, c);
}
static inline void unlock_shard(int s)
{
    if (__builtin_expect(atomic_exchange_explicit(&shards[s].lock, 0, memory_order_release) == 2, 0)) unlock_wake(&shards[s].lock);
    vt_ts.held--;
}
void vt_registry_lock_shard(int s) { if (s >= 0 && s < NSHARDS) lock_shard(s); }
void vt_registry_unlock_shard(int s) { if (s >= 0 && s < NSHARDS) unlock_shard(s); }

static inline uint64_t region(int lev, uint64_t a) { return lev < NLEV - 1 ? a >> lev_shift[lev] : 0; }
static inline int shard_at(int lev, uint64_t a) { return lev * NSHARD + (int)(region(lev, a) & (NSHARD - 1)); }
/* The smallest level whose one region holds base and last: level L < NLEV-1 splits at bit 21+5L. */
static inline int home_level(uint64_t base, uint64_t last)
{
    uint64_t d = base ^ last;
    if (d >> lev_shift[0] == 0) return 0;
    int lev = (64 - __builtin_clzll(d) - (int)lev_shift[0] + 4) / 5;
    return lev < NLEV - 1 ? lev : NLEV - 1;
}
static inline unsigned used_levels(void) { return atomic_load_explicit(&lev_used, memory_order_acquire); }
/* Visit the levels set in `mask`, lowest first: one or two are in use, of seven. */
#define FOR_EACH_LEVEL(lev, mask) \
    for (unsigned vt_m_ = (mask), lev; vt_m_ && (lev = (unsigned)__builtin_ctz(vt_m_), 1); vt_m_ &= vt_m_ - 1)

int vt_registry_in_device_span(uint64_t addr, uint64_t slack)
{
    uint64_t lo = atomic_load_explicit(&span_lo, memory_order_relaxed), hi = atomic_load_explicit(&span_hi, memory_order_relaxed);
    return lo <= hi && addr + slack >= lo && addr < hi + slack;
}

/* [*lo, *hi) grows to cover [base, end) (lock-free: any thread may widen it) */
static void widen(_Atomic uint64_t *lo_p, _Atomic uint64_t *hi_p, uint64_t base, uint64_t end)
{
    uint64_t lo = atomic_load_explicit(lo_p, memory_order_relaxed), hi = atomic_load_explicit(hi_p, memory_order_relaxed);
    while (base < lo && !atomic_compare_exchange_weak(lo_p, &lo, base)) {}
    while (end > hi && !atomic_compare_exchange_weak(hi_p, &hi, end)) {}
}

static void widen_span(uint64_t base, uint64_t end)
{
    vt_va_raise(end); /* device memory above the top seen at init (a 5-level-paging host) */
    widen(&span_lo, &span_hi, base, end);
}

void vt_registry_set_freed_history(unsigned ranges)
{
    freed_cap = ranges < 1 ? 1 : ranges > FREED_MAX ? FREED_MAX : ranges;
}

static void fnode_unlink(struct shard *sh, uint32_t n)
{
    struct fnode *x = &sh->fnodes[n];
    if (x->prev != FNIL) sh->fnodes[x->prev].next = x->next; else sh->fhead = x->next;
    if (x->next != FNIL) sh->fnodes[x->next].prev = x->prev; else sh->ftail = x->prev;
    x->next = sh->ffree;
    sh->ffree = n;
    sh->fcount--;
}

/* Shard locked. Ends are exclusive: [base, end) is the block, end is the next block's. */
static void remember_freed(struct shard *sh, uint64_t base, uint64_t end, uint32_t meta)
{
    if (!sh->fnodes) {
        void *p = mmap(NULL, (size_t)FREED_MAX * sizeof(struct fnode), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return;
        sh->fnodes = p;
        sh->fhead = sh->ftail = sh->ffree = FNIL;
    }
    struct vt_rm_ent e;
    while (vt_rm_floor(&sh->freed, end - 1, &e) == 0 && e.end > base) { /* older frees of this memory */
        vt_rm_remove(&sh->freed, e.base, e.at, NULL);
        fnode_unlink(sh, e.meta >> 16);
    }
    if (sh->fcount >= freed_cap && sh->fhead != FNIL) { /* full: forget the oldest */
        uint32_t old = sh->fhead;
        vt_rm_remove(&sh->freed, sh->fnodes[old].base, 0, NULL);
        fnode_unlink(sh, old);
        sh->forgot++;
    }
    uint32_t n = sh->ffree;
    if (n != FNIL) sh->ffree = sh->fnodes[n].next;
    else if (sh->fbump < FREED_MAX) n = sh->fbump++;
    else return;
    sh->fnodes[n] = (struct fnode){ base, sh->ftail, FNIL };
    if (sh->ftail != FNIL) sh->fnodes[sh->ftail].next = n; else sh->fhead = n;
    sh->ftail = n;
    sh->fcount++;
    if (vt_rm_insert(&sh->freed, base, end, (meta & 0xffff) | n << 16, 0, NULL) != 0) {
        fnode_unlink(sh, n); /* out of memory: not remembered */
        return;
    }
    widen(&freed_lo, &freed_hi, base, end);
}

/* Ranges of one shard's map overlapping [base, end) are contiguous, ending with floor(end - 1)
 * (a map's ranges never overlap). One in flight: -2, the caller waits for that free's line.
 * Otherwise they are stale (frees never seen) and are evicted. Shard locked. */
static int clear_locked(int s, uint64_t base, uint64_t end)
{
    struct vt_rm *m = &shards[s].map;
    struct vt_rm_ent e;
    for (uint64_t at = end - 1; vt_rm_floor(m, at, &e) == 0 && e.end > base; at = e.base - 1) {
        if ((e.meta & META_FREEING) || vt_inflight_has(e.base)) return -2;
        if (e.base == 0) break;
    }
    while (vt_rm_floor(m, end - 1, &e) == 0 && e.end > base) {
        vt_rm_remove(m, e.base, 0, NULL);
        bump_gen(s);
    }
    return 0;
}

static int clear_shard(int s, uint64_t base, uint64_t end)
{
    lock_shard(s);
    int rc = clear_locked(s, base, end);
    vt_registry_unlock_shard(s);
    return rc;
}

/* Overlaps at the other levels, with no lock held (so two inserts never wait on each other's
 * shards). A range homed at a higher level that overlaps [base, end) has its home region around
 * all of [base, end) (regions nest), so it is in that one shard, and being sorted and disjoint
 * there, the last range starting before `end` is the one to test: one lock-free probe per level. Lower levels (only a large range has any) are cleared
 * region by region. Between this and the home shard's insert nothing new can appear here: the
 * driver has just handed this memory out. */
static int clear_other_levels(int home_lev, uint64_t base, uint64_t end)
{
    FOR_EACH_LEVEL(lev, used_levels() & ~(1u << home_lev)) {
        if ((int)lev > home_lev) {
            int s = shard_at(lev, base);
            struct vt_rm_ent e;
            int rc = vt_rm_floor_lockfree(&shards[s].map, end - 1, &e);
            if ((rc == -2 || (rc == 0 && e.end > base)) && clear_shard(s, base, end) != 0) return -2;
            continue;
        }
        uint64_t r0 = region(lev, base), n = region(lev, end - 1) - r0 + 1;
        for (uint64_t k = 0; k < n && k < NSHARD; k++)
            if (clear_shard(lev * NSHARD + (int)((r0 + k) & (NSHARD - 1)), base, end) != 0) return -2;
    }
    return 0;
}

/* With home shard s (level lev) locked: insert. 0, -1 out of memory (not recorded), -2 a free of
 * overlapping memory is in flight (the caller unlocks and waits). Stale overlaps are evicted. */
static inline int insert_home_locked(int s, int lev, uint64_t base, uint64_t end, int mem, int dev)
{
    struct shard *sh = &shards[s];
    if (!(used_levels() & 1u << lev)) atomic_fetch_or(&lev_used, 1u << lev); /* before the range is visible */
    uint32_t at = 0;
    int rc = vt_rm_insert(&sh->map, base, end, pack_meta(mem, dev), last_removal.shard == s ? last_removal.at : 0, &at);
    if (rc == -2) {
        if (clear_locked(s, base, end) != 0) return -2;
        rc = vt_rm_insert(&sh->map, base, end, pack_meta(mem, dev), 0, &at);
    }
    if (rc != 0) return -1;
    atomic_fetch_add_explicit(&vt_registry_inserts, 1, memory_order_release); /* after the range is visible */
    *recent_slot(base) = (struct recent_ins){ base, s, at };
    if (vt_mem_is_device(mem)) widen_span(base, end);
    return 0;
}

/* One attempt. On 0 and -1 the home shard is left locked when keep_lock; on -2 nothing is.
 * Inline: the common insert (one level in use, no free in flight) is this one try. */
static inline int insert_once(uint64_t base, uint64_t size, int mem, int dev, int keep_lock, int *home)
{
    if (size == 0) size = 1;
    uint64_t end = base + size < base ? UINT64_MAX : base + size;
    int lev = home_level(base, end - 1), s = shard_at(lev, base);
    *home = s;
    if ((used_levels() & ~(1u << lev)) && clear_other_levels(lev, base, end) != 0) return -2;
    lock_shard(s);
    int rc = insert_home_locked(s, lev, base, end, mem, dev);
    if (rc == -2 || !keep_lock) unlock_shard(s);
    return rc;
}

int vt_registry_try_insert(uint64_t base, uint64_t size, int mem, int dev)
{
    int s;
    return insert_once(base, size, mem, dev, 0, &s);
}

/* Retries while a free of overlapping memory is in flight. */
static __attribute__((noinline)) int insert_wait(uint64_t base, uint64_t size, int mem, int dev, int *rc)
{
    int s = 0;
    for (int tries = 0; tries < INSERT_TRIES; tries++) {
        if ((*rc = insert_once(base, size, mem, dev, 1, &s)) != -2) return s;
        sched_yield(); /* another thread is between a free's real call and its line */
    }
    lock_shard(s);
    return s;
}

int vt_registry_insert_lock(uint64_t base, uint64_t size, int mem, int dev)
{
    int s;
    if (insert_once(base, size, mem, dev, 1, &s) != -2) return s;
    int rc;
    return insert_wait(base, size, mem, dev, &rc);
}

int vt_registry_insert(uint64_t base, uint64_t size, int mem, int dev)
{
    int rc;
    vt_registry_unlock_shard(insert_wait(base, size, mem, dev, &rc));
    return rc == 0 ? 0 : -1;
}

/* Lock shard s and set `set` in the meta of its range starting at base (`hint`: where it sits,
 * 0 none): s, left locked, or -1 with nothing locked when the shard has no such range. */
static inline int lock_shard_set(int s, uint64_t base, uint32_t hint, uint32_t set, vt_alloc_info *out, uint32_t *at)
{
    struct vt_rm_ent e;
    lock_shard(s);
    if (vt_rm_update_meta(&shards[s].map, base, hint, set, 0, &e) != 0) {
        unlock_shard(s);
        return -1;
    }
    if (out) unpack(e.base, e.end, e.meta, out);
    if (at) *at = e.at;
    return s;
}

static __attribute__((noinline)) int lock_base_search(uint64_t base, uint32_t set, vt_alloc_info *out, uint32_t *at)
{
    unsigned used = used_levels();
    int several = (used & (used - 1)) != 0;
    FOR_EACH_LEVEL(lev, used) {
        int s = shard_at((int)lev, base);
        if (several) {
            struct vt_rm_ent e;
            int rc = vt_rm_lookup(&shards[s].map, base, &e);
            if (rc == -1 || (rc == 0 && e.base != base)) continue;
        }
        if (lock_shard_set(s, base, 0, set, out, at) >= 0) return s;
    }
    return -1;
}

/* Lock the home shard of the range starting at base and set `set` in its meta: the shard, or -1
 * (nothing locked). A range this thread inserted lately is found from its recent hint; otherwise
 * with one level in use the shard is known from base alone, with several a lock-free probe keeps
 * the other levels' locks untouched. */
static inline __attribute__((always_inline)) int lock_base_set(uint64_t base, uint32_t set, vt_alloc_info *out, uint32_t *at)
{
    const struct recent_ins *r = recent_hit(base);
    if (r && lock_shard_set(r->shard, base, r->at, set, out, at) >= 0) return r->shard;
    return lock_base_search(base, set, out, at);
}

/* The range starting exactly at base, without a lock: its shard (*out, *at filled), or -1. */
static int find_base_lockfree(uint64_t base, vt_alloc_info *out, uint32_t *at)
{
    struct vt_rm_ent e;
    const struct recent_ins *r = recent_hit(base);
    if (r && vt_rm_get_lockfree(&shards[r->shard].map, base, r->at, &e) == 0) {
        unpack(e.base, e.end, e.meta, out);
        *at = e.at;
        return r->shard;
    }
    FOR_EACH_LEVEL(lev, used_levels()) {
        int s = shard_at((int)lev, base), rc = vt_rm_get_lockfree(&shards[s].map, base, 0, &e);
        if (rc == -2) { /* writers kept the seqlock busy: ask under the lock */
            if (lock_shard_set(s, base, 0, 0, out, at) < 0) continue;
            unlock_shard(s);
            return s;
        }
        if (rc == 0) {
            unpack(e.base, e.end, e.meta, out);
            *at = e.at;
            return s;
        }
    }
    return -1;
}

int vt_registry_free_announce(uint64_t base, vt_alloc_info *out, int *shard, uint32_t *at)
{
    if (vt_inflight_announce(base) != 0) return -1;
    *shard = find_base_lockfree(base, out, at);
    return *shard >= 0;
}

void vt_registry_free_retire(void) { vt_inflight_retire(); }

int vt_registry_lock_base(uint64_t base, vt_alloc_info *out) { return lock_base_set(base, 0, out, NULL); }

int vt_registry_begin_free(uint64_t base, vt_alloc_info *out, uint32_t *at)
{
    int s = lock_base_set(base, META_FREEING, out, at);
    if (s >= 0) unlock_shard(s);
    return s;
}

void vt_registry_invalidate_all(void)
{
    for (int s = 0; s < NSHARDS; s++) atomic_fetch_add_explicit(&vt_registry_gens[s].v, 1, memory_order_release);
}

int vt_registry_set_freeing_locked(int s, uint64_t base, int on)
{
    return vt_rm_update_meta(&shards[s].map, base, 0, on ? META_FREEING : 0, on ? 0 : META_FREEING, NULL);
}

int vt_registry_remove_locked(int s, uint64_t base, uint32_t at, vt_alloc_info *out)
{
    struct vt_rm_ent e;
    if (vt_rm_remove(&shards[s].map, base, at, &e) != 0) return -1;
    last_removal.shard = s;
    last_removal.at = e.at;
    bump_gen(s);
    if (out) unpack(e.base, e.end, e.meta, out);
    remember_freed(&shards[s], e.base, e.end, e.meta);
    return 0;
}

int vt_registry_remove(uint64_t base, vt_alloc_info *out)
{
    int s = vt_registry_lock_base(base, NULL);
    if (s < 0) return -1;
    int rc = vt_registry_remove_locked(s, base, 0, out);
    vt_registry_unlock_shard(s);
    return rc;
}

void vt_registry_handle_lock(void) { vt_mutex_lock(&handle_lock); }
void vt_registry_handle_unlock(void) { vt_mutex_unlock(&handle_lock); }

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
    handles[slot] = (struct handle_ent){ .handle = handle, .size = size, .dev = dev, .used = 1 };
    return 0;
}

/* The entry of a handle the driver still holds (released ones too when WITH_RELEASED). */
static struct handle_ent *handle_find(uint64_t handle, int with_released)
{
    for (size_t i = 0; i < handles_cap; i++)
        if (handles[i].used && handles[i].handle == handle && (with_released || !handles[i].released)) return &handles[i];
    return NULL;
}

static void handle_info(const struct handle_ent *h, vt_alloc_info *out)
{
    *out = (vt_alloc_info){ h->handle, h->size, VT_MEM_VMM, h->dev };
}

int vt_registry_handle_lookup_locked(uint64_t handle, vt_alloc_info *out)
{
    struct handle_ent *h = handle_find(handle, 0);
    if (h) handle_info(h, out);
    return h ? 0 : -1;
}

int vt_registry_handle_remove_locked(uint64_t handle, vt_alloc_info *out)
{
    struct handle_ent *h = handle_find(handle, 0);
    if (!h) return -1;
    handle_info(h, out);
    if (h->maps) h->released = 1;   /* mapped: held until the last unmap */
    else h->used = 0;
    return 0;
}

int vt_registry_handle_map_locked(uint64_t addr, uint64_t size, uint64_t handle)
{
    if (nvmaps == vmaps_cap) {
        size_t cap = vmaps_cap ? vmaps_cap * 2 : 256;
        struct vmap_ent *m = realloc(vmaps, cap * sizeof *m);
        if (!m) return -1;
        vmaps = m;
        vmaps_cap = cap;
    }
    vmaps[nvmaps++] = (struct vmap_ent){ addr, size, handle };
    struct handle_ent *h = handle_find(handle, 0);
    if (h) h->maps++;
    return 0;
}

void vt_registry_handle_unmap_locked(uint64_t addr, uint64_t size)
{
    for (size_t i = 0; i < nvmaps;) {
        if (vmaps[i].addr < addr || vmaps[i].addr - addr >= size) { i++; continue; }
        struct handle_ent *h = handle_find(vmaps[i].handle, 1);
        if (h && h->maps && --h->maps == 0 && h->released) h->used = 0;
        vmaps[i] = vmaps[--nvmaps];
    }
}

int vt_registry_lookup_gen(uint64_t addr, vt_alloc_info *out, int *shard, uint64_t *gen)
{
    FOR_EACH_LEVEL(lev, used_levels()) {
        int s = shard_at((int)lev, addr);
        uint64_t g = atomic_load_explicit(&vt_registry_gens[s].v, memory_order_acquire); /* before the search */
        struct vt_rm_ent e;
        int rc = vt_rm_lookup(&shards[s].map, addr, &e);
        if (rc == -2) { /* writers kept the seqlock busy: ask under the lock */
            lock_shard(s);
            rc = vt_rm_floor(&shards[s].map, addr, &e) == 0 && addr < e.end ? 0 : -1;
            vt_registry_unlock_shard(s);
        }
        if (rc == 0) {
            unpack(e.base, e.end, e.meta, out);
            *shard = s;
            *gen = g;
            return 0;
        }
    }
    return -1;
}

int vt_registry_lookup(uint64_t addr, vt_alloc_info *out)
{
    int s;
    uint64_t g;
    return vt_registry_lookup_gen(addr, out, &s, &g);
}

int vt_registry_freed_lookup(uint64_t addr, vt_alloc_info *out, uint64_t *forgot)
{
    *forgot = 0;
    if (addr < atomic_load_explicit(&freed_lo, memory_order_relaxed) || addr >= atomic_load_explicit(&freed_hi, memory_order_relaxed))
        return -1;
    int rc = -1;
    uint64_t best = UINT64_MAX;
    FOR_EACH_LEVEL(lev, used_levels()) {
        int s = shard_at((int)lev, addr);
        struct shard *sh = &shards[s];
        struct vt_rm_ent e;
        lock_shard(s);
        if (vt_rm_floor(&sh->freed, addr, &e) == 0 && addr < e.end && e.end - e.base < best) {
            best = e.end - e.base;
            unpack(e.base, e.end, e.meta & 0xffff, out);
            rc = 0;
        }
        *forgot += sh->forgot;
        vt_registry_unlock_shard(s);
    }
    return rc;
}

/* The device ranges nearest to addr in one shard (locked): the neighbours in address order, a
 * few either side (pinned and managed ranges in between are skipped). */
static void nearest_in(int s, uint64_t addr, uint64_t slack, uint64_t *best, vt_alloc_info *out, int *rc)
{
    struct vt_rm *m = &shards[s].map;
    struct vt_rm_ent e;
    int have = vt_rm_floor(m, addr, &e) == 0;
    for (int side = 0; side < 2; side++) {
        struct vt_rm_ent c = e;
        int ok = side == 0 ? have : vt_rm_next(m, have ? e.base : addr, &c) == 0;
        for (int k = 0; ok && k < 8; k++) {
            if (vt_mem_is_device((int)(c.meta & 0xff))) {
                uint64_t d = addr >= c.end ? addr - c.end : (addr < c.base ? c.base - addr : 0);
                if (d <= slack && d < *best) { *best = d; unpack(c.base, c.end, c.meta, out); *rc = 0; }
            }
            uint64_t from = c.base;
            ok = side == 0 ? vt_rm_prev(m, from, &c) == 0 : vt_rm_next(m, from, &c) == 0;
        }
    }
}

int vt_registry_nearest_device(uint64_t addr, uint64_t slack, vt_alloc_info *out)
{
    if (!vt_registry_in_device_span(addr, slack)) return -1;
    int rc = -1;
    uint64_t best = UINT64_MAX;
    uint64_t lo = addr > slack ? addr - slack : 0, hi = addr + slack < addr ? UINT64_MAX : addr + slack;
    /* A range within slack of addr has a point in [lo, hi], so its home region at its level
     * overlaps [lo, hi]: those regions' shards hold every candidate. */
    FOR_EACH_LEVEL(lev, used_levels()) {
        uint64_t r0 = region(lev, lo), n = region(lev, hi) - r0 + 1;
        for (uint64_t k = 0; k < n && k < NSHARD; k++) {
            int s = lev * NSHARD + (int)((r0 + k) & (NSHARD - 1));
            lock_shard(s);
            nearest_in(s, addr, slack, &best, out, &rc);
            vt_registry_unlock_shard(s);
        }
    }
    return rc;
}

struct foreach_ctx { void (*fn)(const vt_alloc_info *, void *); void *ctx; };
static void foreach_one(const struct vt_rm_ent *e, void *p)
{
    struct foreach_ctx *f = p;
    vt_alloc_info info;
    unpack(e->base, e->end, e->meta, &info);
    if (vt_mem_counts_vram(info.mem) || info.mem == VT_MEM_MANAGED || info.mem == VT_MEM_PINNED) f->fn(&info, f->ctx);
}

void vt_registry_foreach(void (*fn)(const vt_alloc_info *, void *), void *ctx)
{
    struct foreach_ctx f = { fn, ctx };
    for (int s = 0; s < NSHARDS; s++) {
        lock_shard(s);
        vt_rm_foreach(&shards[s].map, foreach_one, &f);
        vt_registry_unlock_shard(s);
    }
    vt_mutex_lock(&handle_lock);
    for (size_t i = 0; i < handles_cap; i++)
        if (handles[i].used) {
            vt_alloc_info info;
            handle_info(&handles[i], &info);
            fn(&info, ctx);
        }
    vt_mutex_unlock(&handle_lock);
}

struct vram_sum { int dev; uint64_t bytes; };
static void add_vram(const vt_alloc_info *a, void *p)
{
    struct vram_sum *v = p;
    if (vt_mem_counts_vram(a->mem) && (v->dev < 0 || a->dev == v->dev)) v->bytes += a->size;
}

uint64_t vt_registry_live_vram(int dev)
{
    struct vram_sum v = { dev, 0 };
    vt_registry_foreach(add_vram, &v);
    return v.bytes;
}

void vt_registry_reset(void)
{
    atomic_store(&span_lo, UINT64_MAX);
    atomic_store(&span_hi, 0);
    atomic_store(&freed_lo, UINT64_MAX);
    atomic_store(&freed_hi, 0);
    vt_registry_invalidate_all();
    for (int s = 0; s < NSHARDS; s++) {
        atomic_store(&shards[s].lock, 0);
        vt_rm_reset(&shards[s].map);
        vt_rm_reset(&shards[s].freed);
        shards[s].fhead = shards[s].ftail = shards[s].ffree = FNIL;
        shards[s].fbump = shards[s].fcount = 0;
        shards[s].forgot = 0;
    }
    pthread_mutex_init(&handle_lock, NULL);
    for (size_t i = 0; i < handles_cap; i++) handles[i].used = 0;
    nvmaps = 0;
    vt_inflight_reset();
}
