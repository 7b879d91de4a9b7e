/* fold.c - steady launches counted per thread and written as `launches` records (fold.h). */
#include "fold.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "records.h"

/* A thread's configurations, open addressing over SLOTS with PROBE tries, then the first probed
 * slot is written out and taken. */
#define SLOTS 256
#define PROBE 4
#define MAX_TABLES 1024

/* A launch configuration packed in seven words (compared and hashed word by word): the API's
 * name (0: an empty slot), kernel id | device << 32, grid x | y << 32, grid z | block z << 32,
 * block x | y << 32 (a dim3 passed by value holds x and y in one register), shared memory |
 * replayed << 63 (a graph's kernel node), stream. */
#define REPLAYED_BIT (1ull << 63)
#define KEYW 7
struct fold_slot {
    uint64_t key[KEYW];
    uint64_t count, first_t, last_end, dur;   /* since the slot was last written out */
};

/* Copies by site, direction, memory kinds, stream, API and size class (a power of two); memsets by
 * API, stream and size class. The first one's record is kept as it was written (its frames too). */
#define CSLOTS 32
#define SSLOTS 16
struct copy_slot {
    uint64_t count, bytes, dur, last_end;
    uint64_t serial;                 /* the thread's stack serial for its frames (0: none known) */
    uint32_t fills;                  /* times a new copy took the slot (vt_fold_ticket) */
    int used;
    unsigned size_class;
    /* the first one's record with its frames (a struct with a flexible array cannot be a member
     * followed by another: kept as bytes, read through first_of) */
    _Alignas(struct vt_rec_copy) unsigned char first[sizeof(struct vt_rec_copy) + VT_BT_MAX * sizeof(uint64_t)];
};
static inline struct vt_rec_copy *first_of(struct copy_slot *s) { return (struct vt_rec_copy *)(void *)s->first; }
struct set_slot {
    uint64_t count, bytes, dur, last_end;
    int used;
    unsigned size_class;
    struct vt_rec_set first;
};

struct fold_table {
    _Atomic int lock;
    _Atomic int used;                /* a live thread owns it */
    int32_t tid;                     /* the owner's */
    _Atomic uint64_t pending;        /* slots holding counts not yet written: the sweep's test */
    _Atomic uint64_t flushed_at;     /* vt_now() of its last write-out (the sweep reads it unlocked) */
    struct fold_slot *last;          /* the slot the thread's last launch hit: tried first */
    struct copy_slot *clast;         /* the slot of its last copy: tried first by stack serial */
    struct fold_slot slot[SLOTS];
    struct copy_slot cslot[CSLOTS];
    struct set_slot sslot[SSLOTS];
};

static struct fold_table *tables[MAX_TABLES];
static _Atomic int ntables;
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static VT_TLS struct fold_table *mine;
static VT_TLS int await_d2h;
/* The thread's table while what it calls may fold: NULL before its first call, with folding off,
 * and from a device-to-host copy until the next call (await_d2h); the hot paths test only this. */
static VT_TLS struct fold_table *hot;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t next_sweep;

static int try_lock(struct fold_table *t) { return !atomic_exchange_explicit(&t->lock, 1, memory_order_acquire); }
static void unlock(struct fold_table *t) { atomic_store_explicit(&t->lock, 0, memory_order_release); }

static void write_slot(struct fold_table *t, struct fold_slot *s)
{
    if (!s->count) return;
    struct vt_rec_launches r = { 0 };
    r.c.t0 = s->first_t;
    r.c.dur = s->dur;
    r.c.tid = t->tid;
    r.c.res = 0;
    r.c.dev = (int32_t)(s->key[1] >> 32);
    r.c.api = vt_api_id((const char *)(uintptr_t)s->key[0]);
    r.k = (uint32_t)s->key[1];
    r.grid[0] = (uint32_t)s->key[2]; r.grid[1] = (uint32_t)(s->key[2] >> 32); r.grid[2] = (uint32_t)s->key[3];
    r.block[0] = (uint32_t)s->key[4]; r.block[1] = (uint32_t)(s->key[4] >> 32); r.block[2] = (uint32_t)(s->key[3] >> 32);
    r.shmem = s->key[5] & ~REPLAYED_BIT;
    r.graph = s->key[5] & REPLAYED_BIT ? VT_GRAPH_REPLAYED : 0;
    r.stream = s->key[6];
    r.count = s->count;
    r.last_end = s->last_end;
    atomic_fetch_sub_explicit(&t->pending, 1, memory_order_relaxed);
    s->count = 0;
    vt_emit_record(VT_R_LAUNCHES, &r, sizeof r);
}

static void write_copies(struct fold_table *t, struct copy_slot *s)
{
    if (!s->count) return;
    _Alignas(struct vt_rec_copy) unsigned char buf[sizeof(struct vt_rec_fold) + sizeof(struct vt_rec_copy) + VT_BT_MAX * sizeof(uint64_t)];
    struct vt_rec_fold *f = (struct vt_rec_fold *)(void *)buf;
    struct vt_rec_copy *c = (struct vt_rec_copy *)(void *)(f + 1);
    *f = (struct vt_rec_fold){ s->count, s->bytes, s->last_end };
    const struct vt_rec_copy *first = first_of(s);
    memcpy(c, first, sizeof *c + first->nframes * sizeof first->frames[0]);
    c->c.dur = s->dur;
    atomic_fetch_sub_explicit(&t->pending, 1, memory_order_relaxed);
    s->count = 0;
    vt_emit_record(VT_R_COPIES, buf, sizeof *f + sizeof *c + c->nframes * sizeof c->frames[0]);
}

static void write_sets(struct fold_table *t, struct set_slot *s)
{
    if (!s->count) return;
    struct { struct vt_rec_fold f; struct vt_rec_set r; } rec = { { s->count, s->bytes, s->last_end }, s->first };
    rec.r.c.dur = s->dur;
    atomic_fetch_sub_explicit(&t->pending, 1, memory_order_relaxed);
    s->count = 0;
    vt_emit_record(VT_R_SETS, &rec, sizeof rec);
}

/* Every counter of T written out; T's lock held. */
static void write_table(struct fold_table *t, uint64_t now)
{
    if (atomic_load_explicit(&t->pending, memory_order_relaxed)) {
        for (int i = 0; i < SLOTS; i++) write_slot(t, &t->slot[i]);
        for (int i = 0; i < CSLOTS; i++) write_copies(t, &t->cslot[i]);
        for (int i = 0; i < SSLOTS; i++) write_sets(t, &t->sslot[i]);
    }
    atomic_store_explicit(&t->flushed_at, now, memory_order_relaxed);
}

/* The thread ends: its counters written, its table free for another thread. */
static void thread_exit(void *p)
{
    struct fold_table *t = p;
    if (!t) return;
    while (!try_lock(t)) sched_yield();
    vt_ts.guard++;
    write_table(t, vt_now());
    memset(t->slot, 0, sizeof t->slot);
    memset(t->cslot, 0, sizeof t->cslot);
    memset(t->sslot, 0, sizeof t->sslot);
    t->last = NULL;
    t->clast = NULL;
    vt_ts.guard--;
    mine = hot = NULL; /* a later call in this thread's exit claims a table again */
    atomic_store(&t->used, 0);
    unlock(t);
}
static void key_init(void) { (void)pthread_key_create(&exit_key, thread_exit); }

/* This thread's table, claimed on its first foldable launch (a free one, or a new one while there
 * is room); NULL when there is none (its launches keep their lines). */
static struct fold_table *my_table(void)
{
    if (__builtin_expect(mine != NULL, 1)) return mine;
    pthread_once(&key_once, key_init);
    struct fold_table *t = NULL;
    int n = atomic_load(&ntables);
    for (int i = 0; i < n && !t; i++) {
        int zero = 0;
        if (atomic_compare_exchange_strong(&tables[i]->used, &zero, 1)) t = tables[i];
    }
    if (!t) {
        vt_mutex_lock(&tables_lock);
        n = atomic_load(&ntables);
        if (n < MAX_TABLES && (t = calloc(1, sizeof *t))) {
            atomic_store(&t->used, 1);
            tables[n] = t;
            atomic_store(&ntables, n + 1);
        }
        vt_mutex_unlock(&tables_lock);
        if (!t) return NULL;
    }
    t->tid = vt_gettid();
    atomic_store_explicit(&t->flushed_at, vt_now(), memory_order_relaxed);
    mine = t;
    (void)pthread_setspecific(exit_key, t);
    return t;
}

/* The table for a call that may fold, when `hot` is not set: NULL with folding off, for the
 * first call after a device-to-host copy (which keeps its line; the next ones fold again), or
 * with no table to be had. */
static __attribute__((noinline)) struct fold_table *cold_table(void)
{
    if (!vt_cfg.fold) return NULL;
    if (await_d2h) { await_d2h = 0; return NULL; }
    return hot = my_table();
}

/* The key words that are not a plain argument (see struct fold_slot). */
static inline uint64_t key_kernel_dev(const struct vt_call *c, uint32_t k) { return k | (uint64_t)(uint32_t)c->dev << 32; }
static inline uint64_t xy_of(vt_dim3 d) { return d.x | (uint64_t)d.y << 32; }
static inline uint64_t key_zz(vt_dim3 grid, vt_dim3 block) { return grid.z | (uint64_t)block.z << 32; }
/* Nonzero when slot S's key is not (K0 .. K6): one or-ed difference, no branch per word. */
static inline uint64_t key_diff(const struct fold_slot *s, uint64_t k0, uint64_t k1, uint64_t k2, uint64_t k3, uint64_t k4,
                                uint64_t k5, uint64_t k6)
{
    return (s->key[0] ^ k0) | (s->key[1] ^ k1) | (s->key[2] ^ k2) | (s->key[3] ^ k3) | (s->key[4] ^ k4) | (s->key[5] ^ k5) |
           (s->key[6] ^ k6);
}
/* One more launch C in slot S's counter (open: count > 0); T's lock held. */
static inline void count_launch(struct fold_slot *s, const struct vt_call *c)
{
    s->count++;
    s->dur += c->dur;
    s->last_end = c->t0 + c->dur;
}

static inline int same(const uint64_t *x, const uint64_t *y)
{
    return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4] && x[5] == y[5] && x[6] == y[6];
}

/* The interval, kept by the thread itself while it works (the drain thread's tick keeps it for
 * threads gone quiet); T's lock held. */
static inline int interval_due(struct fold_table *t, uint64_t t0)
{
    uint64_t last = atomic_load_explicit(&t->flushed_at, memory_order_relaxed);
    return t0 > last && t0 - last >= vt_cfg.fold_interval_ns;
}
static inline void keep_interval(struct fold_table *t, uint64_t t0)
{
    if (interval_due(t, t0)) write_table(t, t0);
}

/* A configuration not the thread's last launch's: its slot, or NULL when it is new here (or was
 * pushed out), after giving it a slot (the caller's launch keeps its line). T's lock held. */
static __attribute__((noinline)) struct fold_slot *probe(struct fold_table *t, const uint64_t *key)
{
    uint64_t m = (key[1] * 0x9E3779B97F4A7C15ull) ^ (key[2] + key[3] * 31 + key[4] * 961 + key[5]) ^ key[6];
    m ^= m >> 29;
    uint32_t h = (uint32_t)((m * 0xBF58476D1CE4E5B9ull) >> 40);
    struct fold_slot *empty = NULL;
    for (int i = 0; i < PROBE; i++) {
        struct fold_slot *x = &t->slot[(h + (uint32_t)i) & (SLOTS - 1)];
        if (!x->key[0]) { if (!empty) empty = x; continue; }
        if (same(x->key, key)) return t->last = x;
    }
    if (!empty) { empty = &t->slot[h & (SLOTS - 1)]; write_slot(t, empty); }
    memcpy(empty->key, key, KEYW * sizeof key[0]);
    empty->count = empty->dur = 0;
    t->last = empty;
    return NULL;
}

/* The steady path: the thread's last configuration again, counted after a compare of seven words
 * (kept in registers: the key is put in memory only for the probe). */
int vt_fold_launch(const struct vt_call *c, uint32_t k, vt_dim3 grid, vt_dim3 block, uint64_t shmem, uint64_t stream,
                   int graph)
{
    struct fold_table *t = hot;
    if ((__builtin_expect(!t, 0) && !(t = cold_table())) || !try_lock(t)) return 0;
    const uint64_t k0 = (uint64_t)(uintptr_t)c->api, k1 = key_kernel_dev(c, k), k2 = xy_of(grid), k3 = key_zz(grid, block),
                   k4 = xy_of(block);
    if (graph) shmem |= REPLAYED_BIT;
    struct fold_slot *s = t->last;
    if (__builtin_expect(!s || key_diff(s, k0, k1, k2, k3, k4, shmem, stream) != 0, 0)) {
        const uint64_t key[KEYW] = { k0, k1, k2, k3, k4, shmem, stream };
        s = probe(t, key);
    }
    if (s) {
        if (!s->count) { s->first_t = c->t0; atomic_fetch_add_explicit(&t->pending, 1, memory_order_relaxed); }
        count_launch(s, c);
    }
    keep_interval(t, c->t0);
    unlock(t);
    return s != NULL;
}

int vt_fold_launch_again(const struct vt_call *c, uint32_t k, vt_dim3 grid, vt_dim3 block, uint64_t shmem, uint64_t stream)
{
    struct fold_table *t = hot;
    if (__builtin_expect(!t, 0)) return 0;
    /* the keys and `last` are the owner's alone (only counters are shared with the sweep): compared
     * before the lock is taken */
    struct fold_slot *s = t->last;
    if (__builtin_expect(!s || key_diff(s, (uint64_t)(uintptr_t)c->api, key_kernel_dev(c, k), xy_of(grid), key_zz(grid, block),
                                        xy_of(block), shmem, stream) != 0, 0))
        return 0;
    if (!try_lock(t)) return 0;
    int counted = s->count && !interval_due(t, c->t0);
    if (counted) count_launch(s, c);
    unlock(t);
    return counted;
}

/* copy directions as records hold them (trace.h's order; events.h's enum, not included here:
 * events.c calls this module) */
enum {
#define VT_X(id) DIR_##id,
    VT_TRACE_DIRS(VT_X)
#undef VT_X
};

void vt_fold_line_written(void) { await_d2h = 0; }

static inline unsigned size_class(uint64_t n) { return n ? 64u - (unsigned)__builtin_clzll(n) : 0; }

/* Host buffers device-to-host copies wrote to lately (any thread's): a host-to-device copy from
 * one keeps its line, for the report's staging check (a d2h then an h2d of the same bytes through
 * the host, between devices), which reads their addresses. */
#define STAGED 64
static _Atomic uint64_t staged_dst[STAGED];
static inline unsigned staged_at(uint64_t a) { return (unsigned)((a * 0x9E3779B97F4A7C15ull) >> 58); }

/* One more copy or memset (call C, BYTES) in a slot's sums; a batch's first starts them from 0.
 * T's lock held. */
static inline void count_in(struct fold_table *t, uint64_t *count, uint64_t *bytes, uint64_t *dur, uint64_t *last_end,
                            uint64_t t0, uint64_t call_dur, uint64_t n)
{
    if (!*count) { *bytes = *dur = 0; atomic_fetch_add_explicit(&t->pending, 1, memory_order_relaxed); }
    ++*count;
    *bytes += n;
    *dur += call_dur;
    *last_end = t0 + call_dur;
}

/* An h2d copy from SRC keeps its line: a device-to-host copy wrote there lately. */
static inline int staged(uint64_t src)
{
    return atomic_load_explicit(&staged_dst[staged_at(src)], memory_order_relaxed) == src;
}

/* Slot S holds copies like R (size class SC) but for the frames. */
static inline int copy_fields_match(struct copy_slot *s, const struct vt_rec_copy *r, unsigned sc)
{
    const struct vt_rec_copy *f = first_of(s);
    return s->used && s->size_class == sc && f->c.api == r->c.api && f->c.dev == r->c.dev && f->dir == r->dir &&
           f->host == r->host && f->async == r->async && f->stream == r->stream && f->kind == r->kind &&
           f->src_dev == r->src_dev && f->is_2d == r->is_2d && f->nframes == r->nframes;
}

int vt_fold_copy(const struct vt_rec_copy *r, uint64_t serial, struct vt_fold_ticket *tk)
{
    tk->slot = NULL;
    if (r->dir == DIR_D2H) { /* never folded: the report reads the next call, and its buffer */
        atomic_store_explicit(&staged_dst[staged_at(r->dst)], r->dst, memory_order_relaxed);
        await_d2h = 1;
        hot = NULL;
        return 0;
    }
    struct fold_table *t = hot;
    if (__builtin_expect(!t, 0) && !(t = cold_table())) return 0;
    if (r->dir == DIR_H2D && staged(r->src)) return 0;
    if (!try_lock(t)) return 0;
    unsigned sc = size_class(r->size);
    /* the stack of the last copy's slot (its serial says so): no hash, no frame compare */
    struct copy_slot *s = t->clast;
    int by_serial = serial && s && s->serial == serial && copy_fields_match(s, r, sc), found = by_serial;
    if (!by_serial) { /* two slots a copy may sit in: two sites whose hashes meet both stay */
        uint64_t h = (uint64_t)r->c.api * 31 + r->dir * 7 + r->host + sc * 131 + r->stream;
        for (unsigned i = 0; i < r->nframes; i++) h = (h ^ r->frames[i]) * 0x100000001B3ull;
        struct copy_slot *two[2] = { &t->cslot[(h ^ h >> 29) & (CSLOTS - 1)], &t->cslot[((h ^ h >> 29) + 1) & (CSLOTS - 1)] };
        for (int i = 0; i < 2 && !found; i++)
            if (copy_fields_match(two[i], r, sc) && !memcmp(first_of(two[i])->frames, r->frames, r->nframes * sizeof r->frames[0]))
                s = two[i], found = 1;
        /* new here: an unused slot, else the one not counting now, else the first */
        if (!found) s = !two[0]->used ? two[0] : !two[1]->used ? two[1] : !two[1]->count && two[0]->count ? two[1] : two[0];
    }
    int folded = 0;
    struct vt_rec_copy *f = first_of(s);
    size_t len = sizeof *r + r->nframes * sizeof r->frames[0];
    if (found) {
        if (!s->count) memcpy(f, r, len); /* a new batch: its first one's fields */
        count_in(t, &s->count, &s->bytes, &s->dur, &s->last_end, r->c.t0, r->c.dur, r->size);
        folded = 1;
    } else { /* new here: this copy keeps its line and takes the slot */
        write_copies(t, s);
        s->fills++;
        s->used = 1;
        s->size_class = sc;
        memcpy(f, r, len);
    }
    s->serial = serial; /* its frames are r's */
    t->clast = s;
    *tk = (struct vt_fold_ticket){ s, s->fills };
    keep_interval(t, r->c.t0);
    unlock(t);
    return folded;
}

int vt_fold_copy_again(const struct vt_call *c, uint64_t size, uint64_t h2d_src, uint64_t serial,
                       const struct vt_fold_ticket *tk)
{
    struct fold_table *t = hot;
    struct copy_slot *s = tk->slot;
    /* the slot and its fields are the owner's alone (the sweep only writes counts out): compared
     * before the lock is taken */
    if (__builtin_expect(!t || s->fills != tk->fills, 0) || (h2d_src && staged(h2d_src)) || !try_lock(t)) return 0;
    int counted = s->count && !interval_due(t, c->t0);
    if (counted) {
        count_in(t, &s->count, &s->bytes, &s->dur, &s->last_end, c->t0, c->dur, size);
        s->serial = serial;
        t->clast = s;
    }
    unlock(t);
    return counted;
}

int vt_fold_set(const struct vt_rec_set *r)
{
    struct fold_table *t = hot;
    if ((__builtin_expect(!t, 0) && !(t = cold_table())) || !try_lock(t)) return 0;
    unsigned sc = size_class(r->size);
    uint64_t h = (uint64_t)r->c.api * 31 + sc * 131 + r->stream + (uint64_t)r->async * 7;
    struct set_slot *s = &t->sslot[(h ^ h >> 17) & (SSLOTS - 1)];
    int folded = 0;
    const struct vt_rec_set *f = &s->first;
    if (s->used && s->size_class == sc && f->c.api == r->c.api && f->c.dev == r->c.dev && f->async == r->async &&
        f->stream == r->stream) {
        if (!s->count) s->first = *r;
        count_in(t, &s->count, &s->bytes, &s->dur, &s->last_end, r->c.t0, r->c.dur, r->size);
        folded = 1;
    } else {
        write_sets(t, s);
        s->used = 1;
        s->size_class = sc;
        s->first = *r;
    }
    keep_interval(t, r->c.t0);
    unlock(t);
    return folded;
}

void vt_fold_flush_mine(void)
{
    struct fold_table *t = mine;
    if (!t || !atomic_load_explicit(&t->pending, memory_order_relaxed)) return;
    while (!try_lock(t)) sched_yield(); /* only the drain thread's tick can hold it, briefly */
    write_table(t, vt_now());
    unlock(t);
}

void vt_fold_flush_all(int wait)
{
    uint64_t now = vt_now();
    int n = atomic_load(&ntables);
    for (int i = 0; i < n; i++) {
        struct fold_table *t = tables[i];
        if (!atomic_load_explicit(&t->pending, memory_order_relaxed)) continue;
        int got = try_lock(t);
        for (int spin = 0; !got && wait && spin < 100000; spin++) { sched_yield(); got = try_lock(t); }
        if (!got) continue;
        write_table(t, now);
        unlock(t);
    }
}

void vt_fold_tick(void)
{
    uint64_t now = vt_now();
    if (now < atomic_load_explicit(&next_sweep, memory_order_relaxed)) return;
    atomic_store_explicit(&next_sweep, now + vt_cfg.fold_interval_ns / 4, memory_order_relaxed);
    int n = atomic_load(&ntables);
    for (int i = 0; i < n; i++) {
        struct fold_table *t = tables[i];
        if (!atomic_load_explicit(&t->pending, memory_order_relaxed)) continue;
        uint64_t last = atomic_load_explicit(&t->flushed_at, memory_order_relaxed);
        if ((now > last && now - last < vt_cfg.fold_interval_ns) || !try_lock(t)) continue;
        write_table(t, now);
        unlock(t);
    }
}

void vt_fold_fork_child(void)
{
    /* only this thread runs: the other threads' tables are free again, every count the parent's */
    int n = atomic_load(&ntables);
    for (int i = 0; i < n; i++) {
        struct fold_table *t = tables[i];
        memset(t->slot, 0, sizeof t->slot);
        memset(t->cslot, 0, sizeof t->cslot);
        memset(t->sslot, 0, sizeof t->sslot);
        t->last = NULL;
        t->clast = NULL;
        atomic_store(&t->pending, 0);
        atomic_store(&t->used, 0);
        atomic_store(&t->lock, 0);
    }
    mine = hot = NULL;
    await_d2h = 0;
    pthread_mutex_init(&tables_lock, NULL);
}
