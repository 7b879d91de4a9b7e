/* test_registry.c - src/registry.c: range lookups across shards and levels, frees in flight,
 * eviction (within a shard and across levels), freed rings, spans, concurrent inserts. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>

#include "inflight.h"
#include "rangemap.h"
#include "registry.h"
#include "vt_test.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

struct worker { uint64_t base; int n, ok; };
/* Each thread allocates and frees in its own 2 MiB regions (its own shards), the way threads of a
 * real program get memory from different driver pages. */
static void *churn(void *p)
{
    struct worker *w = p;
    w->ok = 1;
    for (int i = 0; i < w->n && w->ok; i++) {
        uint64_t a = w->base + (uint64_t)(i % 64) * 0x1000;
        vt_alloc_info info;
        w->ok = vt_registry_insert(a, 0x800, VT_MEM_DEVICE, 0) == 0 && vt_registry_lookup(a + 0x7ff, &info) == 0 &&
                info.base == a && vt_registry_remove(a, &info) == 0 && vt_registry_lookup(a, &info) != 0;
    }
    return NULL;
}

/* A free announced by one thread (no lock held) while another gets the same memory back. */
struct reuse { uint64_t base; _Atomic int announced, removed, inserted_after_removal; };
static void *reuser(void *p)
{
    struct reuse *r = p;
    while (!atomic_load(&r->announced)) sched_yield();
    int rc = vt_registry_insert(r->base, 4096, VT_MEM_DEVICE, 0); /* must wait for the free's removal */
    atomic_store(&r->inserted_after_removal, rc == 0 && atomic_load(&r->removed));
    return NULL;
}

struct announce_try { uint64_t base; int rc, shard; vt_alloc_info a; };
static void *announce_in_thread(void *p)
{
    struct announce_try *t = p;
    uint32_t at;
    t->rc = vt_registry_free_announce(t->base, &t->a, &t->shard, &at);
    if (t->rc >= 0) vt_registry_free_retire();
    return NULL;
}
/* A thread that found no slot (the limit 1: the main thread holds slot 0) looks again only after
 * RETRY_AFTER (4096) more frees: the first failure sets the countdown, 4095 more fail without a
 * look, the 4096th looks and gets a slot now that the limit allows it. */
struct retry_try { int first, skipped, seen, after_retire; };
static void *retry_in_thread(void *p)
{
    struct retry_try *t = p;
    t->first = vt_inflight_announce(0x16000000);
    vt_inflight_test_limit(256);
    t->skipped = 0;
    while (t->skipped < 10000 && vt_inflight_announce(0x16000000) == -1) t->skipped++;
    t->seen = vt_inflight_has(0x16000000);
    vt_inflight_retire();
    t->after_retire = vt_inflight_has(0x16000000);
    return NULL;
}
static int announce_from_new_thread(uint64_t base, struct announce_try *t)
{
    pthread_t th;
    *t = (struct announce_try){ .base = base, .rc = -9 };
    pthread_create(&th, NULL, announce_in_thread, t);
    pthread_join(th, NULL);
    return t->rc;
}

int main(void)
{
    vt_alloc_info a;
    uint64_t forgot;
    VT_CHECK_EQ_INT(vt_registry_insert(0x10000000, 4096, VT_MEM_DEVICE, 0), 0, "insert device range");
    VT_CHECK_EQ_INT(vt_registry_insert(0x20000000, 1 << 20, VT_MEM_PINNED, -1), 0, "insert pinned range");
    VT_CHECK(vt_registry_lookup(0x10000000 + 4095, &a) == 0 && a.base == 0x10000000 && a.mem == VT_MEM_DEVICE && a.dev == 0,
             "interior pointer finds its range, kind and device");
    VT_CHECK(vt_registry_lookup(0x10000000 + 4096, &a) != 0, "one past the end is not inside");
    { /* writers keeping every seqlock busy: the lock-free searches answer -2 and each caller asks
       * again under the shard's lock (from a new thread: no recent-insert hint to short-cut it) */
        struct announce_try t;
        vt_rm_lockfree_tries = 0;
        VT_CHECK(vt_registry_lookup(0x20000000 + 12345, &a) == 0 && a.base == 0x20000000 && a.size == 1 << 20 && a.mem == VT_MEM_PINNED,
                 "seqlock always busy: a lookup still finds the pinned range under the lock");
        VT_CHECK(announce_from_new_thread(0x10000000, &t) == 1 && t.a.base == 0x10000000 && t.a.size == 4096 && t.a.mem == VT_MEM_DEVICE,
                 "seqlock always busy: a free's announcement still finds the device range under the lock");
        VT_CHECK(announce_from_new_thread(0x10000000 + 64, &t) == 0, "seqlock always busy: an interior pointer is no range's base");
        vt_rm_lockfree_tries = 64;
    }
    VT_CHECK_EQ_INT(vt_registry_live_vram(0), 4096, "VRAM counts device memory only");
    int gs = -1, other_s = -1;
    uint64_t gen = 0, other_gen = 0;
    VT_CHECK(vt_registry_lookup_gen(0x10000000 + 8, &a, &gs, &gen) == 0 && a.base == 0x10000000 && gs >= 0 && gs < VT_REGISTRY_SHARDS,
             "lookup_gen finds the range and names its shard");
    VT_CHECK_EQ_INT(vt_registry_insert(0x60200000, 4096, VT_MEM_PINNED, -1), 0, "a range in the next 2 MiB region");
    VT_CHECK(vt_registry_lookup_gen(0x60200000 + 8, &a, &other_s, &other_gen) == 0 && other_s != gs,
             "is in another shard");
    VT_CHECK(atomic_load(&vt_registry_gens[gs].v) == gen, "the generation read is the shard's");

    int s = vt_registry_lock_base(0x10000000, &a);
    VT_CHECK(s >= 0 && a.size == 4096, "lock the shard of a live range by its base");
    VT_CHECK_EQ_INT(vt_registry_set_freeing_locked(s, 0x10000000, 1), 0, "mark a range as being freed");
    vt_registry_unlock_shard(s);
    VT_CHECK(vt_registry_lock_base(0x10000010, &a) < 0, "no live range starts at an interior address");
    VT_CHECK_EQ_INT(vt_registry_try_insert(0x10000000, 4096, VT_MEM_DEVICE, 0), -2,
                    "reusing memory whose free is in flight must wait (-2)");
    VT_CHECK_EQ_INT(vt_registry_try_insert(0x10000800, 16, VT_MEM_DEVICE, 0), -2, "so must an overlapping range");
    VT_CHECK_EQ_INT(vt_registry_try_insert(0x0fe00000, 4 * MiB, VT_MEM_DEVICE, 0), -2,
                    "and a larger range (another level) that covers it");
    VT_CHECK(vt_registry_lookup(0x10000010, &a) == 0, "a range being freed is still valid for lookups");
    VT_CHECK_EQ_INT(vt_registry_remove(0x10000000, &a), 0, "remove after the free");
    VT_CHECK(atomic_load(&vt_registry_gens[gs].v) != gen, "a removal bumps its shard's generation (cached answers from it drop)");
    VT_CHECK(atomic_load(&vt_registry_gens[other_s].v) == other_gen, "and leaves the other shards' alone");
    VT_CHECK_EQ_INT(vt_registry_remove(0x60200000, &a), 0, "remove the other range");
    VT_CHECK(vt_registry_freed_lookup(0x10000010, &a, &forgot) == 0 && a.size == 4096, "freed ring remembers the range");
    VT_CHECK(vt_registry_nearest_device(0x10000000 + 4096, 1 << 20, &a) != 0, "no live device range nearby any more");

    VT_CHECK_EQ_INT(vt_registry_insert(0x10000000, 8192, VT_MEM_DEVICE, 0), 0, "reuse once recorded");
    /* a stale overlapping range (a free never seen) is evicted by a new allocation */
    VT_CHECK_EQ_INT(vt_registry_insert(0x10001000, 8192, VT_MEM_DEVICE, 0), 0, "overlapping insert");
    VT_CHECK(vt_registry_lookup(0x10000010, &a) != 0, "the stale overlapping range was evicted");
    VT_CHECK_EQ_INT(vt_registry_live_vram(0), 8192, "live bytes follow the eviction");
    VT_CHECK(vt_registry_nearest_device(0x10001000 + 8192 + 100, 1 << 20, &a) == 0 && a.base == 0x10001000,
             "nearest device range to a pointer just past the end");
    VT_CHECK_EQ_INT(vt_registry_insert(0x101fe000, 4096, VT_MEM_DEVICE, 0), 0, "a range near the end of its 2 MiB region");
    VT_CHECK(vt_registry_nearest_device(0x10200000 + 0x100, 1 << 20, &a) == 0 && a.base == 0x101fe000,
             "nearest device range across a 2 MiB region boundary (another shard)");
    VT_CHECK_EQ_INT(vt_registry_remove(0x101fe000, &a), 0, "remove it");
    VT_CHECK(!vt_registry_in_device_span(0x7f0000000000ull, 1 << 20), "host addresses far away are outside the device span");

    /* Levels: a 1 GiB range lives at the 2 GiB level; a small stale range inside it is evicted
     * by it, and a small range crossing a 2 MiB boundary lives one level up. */
    VT_CHECK_EQ_INT(vt_registry_insert(0x40100000, 4096, VT_MEM_DEVICE, 0), 0, "small range inside the coming big one");
    VT_CHECK_EQ_INT(vt_registry_insert(0x40000000, GiB, VT_MEM_DEVICE, 0), 0, "1 GiB range");
    VT_CHECK(vt_registry_lookup(0x40100000, &a) == 0 && a.base == 0x40000000 && a.size == GiB,
             "the big range replaced the stale small one (found from any of its 512 regions)");
    VT_CHECK(vt_registry_lookup(0x40000000 + GiB - 1, &a) == 0 && a.base == 0x40000000, "last byte of the big range");
    VT_CHECK_EQ_INT(vt_registry_insert(0x40000000 + 3 * MiB, 4096, VT_MEM_DEVICE, 0), 0,
                    "a small range where the driver reused part of the big one (its free unseen)");
    VT_CHECK(vt_registry_lookup(0x40000000 + 8, &a) != 0, "evicts the big range it overlaps (another level)");
    VT_CHECK_EQ_INT(vt_registry_insert(0x50000000 + 2 * MiB - 0x100, 0x200, VT_MEM_DEVICE, 0), 0,
                    "a small range across a 2 MiB boundary");
    VT_CHECK(vt_registry_lookup(0x50000000 + 2 * MiB + 0xff, &a) == 0 && a.base == 0x50000000 + 2 * MiB - 0x100,
             "is found from both sides of the boundary");
    VT_CHECK_EQ_INT(vt_registry_remove(0x50000000 + 2 * MiB - 0x100, &a), 0, "and removed by its base");
    VT_CHECK(vt_registry_freed_lookup(0x50000000 + 2 * MiB, &a, &forgot) == 0 && a.size == 0x200, "its freed record is found");


    /* Announced frees: no lock, no mark in the map, the same waiting for inserts. */
    VT_CHECK_EQ_INT(vt_registry_insert(0x11000000, 4096, VT_MEM_DEVICE, 0), 0, "insert a range to free");
    int sh = -1;
    uint32_t at = 0;
    VT_CHECK(vt_registry_free_announce(0x11000000, &a, &sh, &at) == 1 && sh >= 0 && a.base == 0x11000000 && a.size == 4096 &&
             a.mem == VT_MEM_DEVICE && a.dev == 0, "announcing a free finds the live range, its kind and its shard");
    VT_CHECK_EQ_INT(vt_registry_try_insert(0x11000000, 4096, VT_MEM_DEVICE, 0), -2, "reusing memory whose free is announced must wait");
    VT_CHECK_EQ_INT(vt_registry_try_insert(0x10fff000, 8192, VT_MEM_DEVICE, 0), -2, "so must an overlapping range");
    VT_CHECK(vt_registry_lookup(0x11000010, &a) == 0, "an announced range is still valid for lookups");
    vt_registry_lock_shard(sh);
    VT_CHECK_EQ_INT(vt_registry_remove_locked(sh, 0x11000000, at, &a), 0, "remove it in its shard with the announced hint");
    vt_registry_unlock_shard(sh);
    vt_registry_free_retire();
    VT_CHECK_EQ_INT(vt_registry_try_insert(0x11000000, 4096, VT_MEM_DEVICE, 0), 0, "reuse once the free is retired");
    VT_CHECK_EQ_INT(vt_registry_free_announce(0x11000000, &a, &sh, &at), 1, "announce again");
    VT_CHECK_EQ_INT(vt_registry_free_announce(0x11000000 + 8192, &a, &sh, &at), -1,
                    "a second free in flight on one thread (nested) is not announced: it marks the map");
    VT_CHECK_EQ_INT(vt_registry_try_insert(0x11000000, 4096, VT_MEM_DEVICE, 0), -2, "and the first stays announced");
    vt_registry_free_retire();
    VT_CHECK_EQ_INT(vt_registry_try_insert(0x11000800, 16, VT_MEM_DEVICE, 0), 0,
                    "a retired announcement (a failed free) no longer protects the range: it is evicted as stale");
    VT_CHECK_EQ_INT(vt_registry_remove(0x11000800, &a), 0, "clean up");
    VT_CHECK(vt_registry_free_announce(0x12000000, &a, &sh, &at) == 0 && sh == -1, "announcing a free of unknown memory: 0");
    vt_registry_free_retire();
    VT_CHECK_EQ_INT(vt_registry_insert(0x12000000, 4096, VT_MEM_DEVICE, 0), 0, "and it never blocks an insert after retiring");
    VT_CHECK_EQ_INT(vt_registry_remove(0x12000000, &a), 0, "clean up");
    for (uint32_t bogus = 1; bogus < 5000; bogus += 97) {
        VT_CHECK_EQ_INT(vt_registry_insert(0x13000000, 4096, VT_MEM_DEVICE, 0), 0, "insert");
        int ok = vt_registry_free_announce(0x13000000, &a, &sh, &at) == 1 && a.base == 0x13000000;
        vt_registry_free_retire();
        vt_registry_lock_shard(sh);
        ok &= vt_registry_remove_locked(sh, 0x13000000, bogus, &a) == 0 && a.base == 0x13000000;
        vt_registry_unlock_shard(sh);
        if (!ok) { VT_CHECK(0, "a wrong position hint only costs a search"); break; }
    }

    /* The order across threads: the reuse's insert completes only after the free's removal. */
    struct reuse ru = { .base = 0x14000000 };
    VT_CHECK_EQ_INT(vt_registry_insert(ru.base, 4096, VT_MEM_DEVICE, 0), 0, "insert a range another thread will get back");
    pthread_t rth;
    pthread_create(&rth, NULL, reuser, &ru);
    VT_CHECK_EQ_INT(vt_registry_free_announce(ru.base, &a, &sh, &at), 1, "announce its free");
    atomic_store(&ru.announced, 1);
    usleep(2000); /* the other thread is now retrying its insert (for up to INSERT_TRIES yields: ~17 ms
                   * on an idle core, so the removal must come well before that) */
    vt_registry_lock_shard(sh);
    atomic_store(&ru.removed, 1);
    vt_registry_remove_locked(sh, ru.base, at, NULL);
    vt_registry_unlock_shard(sh);
    vt_registry_free_retire();
    pthread_join(rth, NULL);
    VT_CHECK(atomic_load(&ru.inserted_after_removal), "the reusing thread's insert waited for the announced free's removal");
    VT_CHECK_EQ_INT(vt_registry_remove(ru.base, &a), 0, "clean up");

    /* Slots: a thread that exits gives its slot back; with none left a free marks the map. */
    struct announce_try t;
    vt_inflight_test_limit(2); /* the main thread holds slot 0 */
    VT_CHECK_EQ_INT(announce_from_new_thread(0x15000000, &t), 0, "a new thread gets a slot");
    VT_CHECK_EQ_INT(announce_from_new_thread(0x15000000, &t), 0, "and gives it back when it exits (the next thread gets it)");
    vt_inflight_test_limit(1);
    VT_CHECK_EQ_INT(announce_from_new_thread(0x15000000, &t), -1, "no slot left: not announced (the caller marks the map)");
    struct retry_try rt = { 0 };
    pthread_t rth2;
    pthread_create(&rth2, NULL, retry_in_thread, &rt);
    pthread_join(rth2, NULL);
    VT_CHECK(rt.first == -1 && rt.skipped == 4095, "a thread without a slot looks again after 4096 frees (4095 skipped)");
    VT_CHECK(rt.seen == 1 && rt.after_retire == 0, "the slot it then got holds its announcement until retired");
    vt_inflight_test_limit(256);

    for (uint64_t i = 0; i < 5000; i++) vt_registry_insert(0x30000000 + i * 0x1000, 0x800, VT_MEM_ASYNC, 1);
    int found = 1;
    for (uint64_t i = 0; i < 5000 && found; i++) found = vt_registry_lookup(0x30000000 + i * 0x1000 + 0x7ff, &a) == 0 && a.dev == 1;
    VT_CHECK(found, "5000 ranges (maps grown past their first capacity, several shards) all found");
    VT_CHECK_EQ_INT(vt_registry_live_vram(1), 5000 * 0x800, "per-device live bytes");

    /* Freed history: bounded by ranges per shard, a newer free replaces the older ones it
     * overlaps, ends exclusive, the pinned and managed kinds kept. All in one 2 MiB region. */
    vt_registry_reset();
    vt_registry_set_freed_history(4);
    const uint64_t H = 0x70000000;
    VT_CHECK_EQ_INT(vt_registry_insert(H, 0x1000, VT_MEM_MANAGED, 0), 0, "a managed range");
    VT_CHECK_EQ_INT(vt_registry_remove(H, &a), 0, "freed");
    VT_CHECK(vt_registry_freed_lookup(H + 0xfff, &a, &forgot) == 0 && a.mem == VT_MEM_MANAGED && forgot == 0,
             "a freed managed range is remembered with its kind; nothing forgotten yet");
    VT_CHECK(vt_registry_freed_lookup(H + 0x1000, &a, &forgot) != 0, "its end is outside it");
    for (int round = 0; round < 10; round++) { /* a caching allocator: the same block again and again */
        vt_registry_insert(H + 0x1000, 0x1000, VT_MEM_DEVICE, 0);
        vt_registry_remove(H + 0x1000, &a);
    }
    VT_CHECK(vt_registry_freed_lookup(H + 8, &a, &forgot) == 0 && forgot == 0,
             "ten frees of one block take one entry: the managed range, three frees older, is still known");
    for (uint64_t i = 2; i < 5; i++) { vt_registry_insert(H + i * 0x1000, 0x1000, VT_MEM_DEVICE, 0); vt_registry_remove(H + i * 0x1000, &a); }
    VT_CHECK(vt_registry_freed_lookup(H + 8, &a, &forgot) != 0 && forgot == 1,
             "a fifth distinct range forgets the oldest, and says one was forgotten");
    VT_CHECK(vt_registry_freed_lookup(H + 0x1008, &a, &forgot) == 0 && a.base == H + 0x1000,
             "the reused block's latest free is kept");
    vt_registry_insert(H + 0x800, 0x1000, VT_MEM_PINNED, 0);
    vt_registry_remove(H + 0x800, &a);
    VT_CHECK(vt_registry_freed_lookup(H + 0x1008, &a, &forgot) == 0 && a.base == H + 0x800 && a.mem == VT_MEM_PINNED,
             "a newer free over part of an older one replaces it");
    /* A fork child starts from nothing (vt_registry_reset), the history's order too. Before the
     * reset a history of 2 has forgotten its first of three frees (its oldest is now the second);
     * after it, of three new frees the first is the one forgotten, the two newest remembered. */
    vt_registry_set_freed_history(2);
    for (int round = 0; round < 2; round++) {
        if (round) vt_registry_reset();
        for (uint64_t i = 0; i < 3; i++) { vt_registry_insert(H + i * 0x1000, 0x1000, VT_MEM_DEVICE, 0); vt_registry_remove(H + i * 0x1000, &a); }
    }
    int kept = 1;
    for (uint64_t i = 1; i < 3; i++) kept &= vt_registry_freed_lookup(H + i * 0x1000 + 8, &a, &forgot) == 0 && a.base == H + i * 0x1000;
    VT_CHECK(kept && vt_registry_freed_lookup(H + 8, &a, &forgot) != 0 && forgot == 1,
             "after a reset: of three frees with a history of two, the first is forgotten (once), the others kept");
    vt_registry_set_freed_history(16384);

    enum { T = 8 };
    pthread_t th[T];
    struct worker w[T];
    for (int i = 0; i < T; i++) {
        w[i] = (struct worker){ 0x800000000ull + (uint64_t)i * 2 * MiB, 20000, 0 };
        pthread_create(&th[i], NULL, churn, &w[i]);
    }
    int all = 1;
    for (int i = 0; i < T; i++) { pthread_join(th[i], NULL); all &= w[i].ok; }
    VT_CHECK(all, "8 threads inserting, looking up and removing 20000 ranges each, in parallel");
    return vt_test_finish();
}
