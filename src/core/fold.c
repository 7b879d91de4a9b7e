/* fold.c - steady launches counted per thread and written as `launches` records (fold.h). */
#include "fold.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"

/* A thread's configurations, open addressing over SLOTS with PROBE tries, then the first probed
 * slot is written out and taken. */
#define SLOTS 256
#define PROBE 4
#define MAX_TABLES 1024

struct fold_slot {
    const char *api;                 /* NULL: empty */
    uint32_t k, grid[3], block[3];
    int32_t dev;
    uint64_t shmem, stream;
    uint64_t count, first_t, last_end, dur;   /* since the slot was last written out */
};

struct fold_table {
    _Atomic int lock;
    _Atomic int used;                /* a live thread owns it */
    int32_t tid;                     /* the owner's */
    _Atomic uint64_t pending;        /* launches counted and not yet written: the sweep's test */
    _Atomic uint64_t flushed_at;     /* vt_now() of its last write-out (the sweep reads it unlocked) */
    struct fold_slot slot[SLOTS];
};

static struct fold_table *tables[MAX_TABLES];
static _Atomic int ntables;
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static VT_TLS struct fold_table *mine;
static VT_TLS int mine_gen = -1;     /* vt_fork_gen when claimed: a fork child's is the parent's thread's */
static VT_TLS int await_d2h;
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
    r.c.dev = s->dev;
    r.c.api = vt_api_id(s->api);
    r.k = s->k;
    memcpy(r.grid, s->grid, sizeof r.grid);
    memcpy(r.block, s->block, sizeof r.block);
    r.shmem = s->shmem;
    r.stream = s->stream;
    r.count = s->count;
    r.last_end = s->last_end;
    atomic_fetch_sub_explicit(&t->pending, s->count, memory_order_relaxed);
    s->count = 0;
    vt_emit_record(VT_R_LAUNCHES, &r, sizeof r);
}

/* Every counter of T written out; T's lock held. */
static void write_table(struct fold_table *t, uint64_t now)
{
    if (atomic_load_explicit(&t->pending, memory_order_relaxed))
        for (int i = 0; i < SLOTS; i++) write_slot(t, &t->slot[i]);
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
    vt_ts.guard--;
    atomic_store(&t->used, 0);
    unlock(t);
}
static void key_init(void) { (void)pthread_key_create(&exit_key, thread_exit); }

/* This thread's table, claimed on its first foldable launch (a free one, or a new one while there
 * is room); NULL when there is none (its launches keep their lines). */
static struct fold_table *my_table(void)
{
    if (__builtin_expect(mine && mine_gen == (int)vt_fork_gen, 1)) return mine;
    mine = NULL;
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
    mine_gen = (int)vt_fork_gen;
    (void)pthread_setspecific(exit_key, t);
    return t;
}

static inline uint32_t hash(uint32_t k, const uint32_t g[3], const uint32_t b[3], uint64_t stream)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull ^ ((uint64_t)g[0] << 32 | b[0]) ^ ((uint64_t)g[1] << 21 | g[2]) * 31 ^ stream;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return (uint32_t)(h >> 40);
}

static inline int same(const struct fold_slot *s, const struct vt_call *c, uint32_t k, const uint32_t g[3],
                       const uint32_t b[3], uint64_t shmem, uint64_t stream)
{
    return s->api == c->api && s->k == k && s->dev == c->dev && s->stream == stream && s->shmem == shmem &&
           s->grid[0] == g[0] && s->grid[1] == g[1] && s->grid[2] == g[2] && s->block[0] == b[0] && s->block[1] == b[1] &&
           s->block[2] == b[2];
}

int vt_fold_launch(const struct vt_call *c, uint32_t k, const uint32_t grid[3], const uint32_t block[3], uint64_t shmem,
                   uint64_t stream)
{
    if (!vt_cfg.fold) return 0;
    if (__builtin_expect(await_d2h, 0)) { await_d2h = 0; return 0; }
    struct fold_table *t = my_table();
    if (!t || !try_lock(t)) return 0;
    uint32_t h = hash(k, grid, block, stream);
    struct fold_slot *s = NULL, *empty = NULL;
    for (int i = 0; i < PROBE; i++) {
        struct fold_slot *x = &t->slot[(h + (uint32_t)i) & (SLOTS - 1)];
        if (!x->api) { if (!empty) empty = x; continue; }
        if (same(x, c, k, grid, block, shmem, stream)) { s = x; break; }
    }
    int folded = 0;
    if (s) {
        if (!s->count) s->first_t = c->t0;
        s->count++;
        s->dur += c->dur;
        s->last_end = c->t0 + c->dur;
        atomic_fetch_add_explicit(&t->pending, 1, memory_order_relaxed);
        folded = 1;
    } else { /* a configuration new here (or pushed out): this launch keeps its line and takes a slot */
        if (!empty) { empty = &t->slot[h & (SLOTS - 1)]; write_slot(t, empty); }
        *empty = (struct fold_slot){ .api = c->api, .k = k, .dev = c->dev, .shmem = shmem, .stream = stream,
                                     .grid = { grid[0], grid[1], grid[2] }, .block = { block[0], block[1], block[2] } };
    }
    /* the interval, kept by the thread itself while it launches (the drain thread's tick keeps
     * it for threads gone quiet) */
    uint64_t last = atomic_load_explicit(&t->flushed_at, memory_order_relaxed);
    if (c->t0 > last && c->t0 - last >= vt_cfg.fold_interval_ns) write_table(t, c->t0);
    unlock(t);
    return folded;
}

void vt_fold_copy_d2h(void) { await_d2h = 1; }

void vt_fold_flush_mine(void)
{
    struct fold_table *t = mine;
    if (!t || mine_gen != (int)vt_fork_gen || !atomic_load_explicit(&t->pending, memory_order_relaxed)) return;
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
        atomic_store(&t->pending, 0);
        atomic_store(&t->used, 0);
        atomic_store(&t->lock, 0);
    }
    mine = NULL;
    await_d2h = 0;
    pthread_mutex_init(&tables_lock, NULL);
}
