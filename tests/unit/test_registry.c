/* test_registry.c - src/registry.c: range lookups across shards and levels, frees in flight,
 * eviction (within a shard and across levels), freed rings, spans, concurrent inserts. */
#include <pthread.h>
#include <stdio.h>

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

int main(void)
{
    vt_alloc_info a;
    VT_CHECK_EQ_INT(vt_registry_insert(0x10000000, 4096, VT_MEM_DEVICE, 0), 0, "insert device range");
    VT_CHECK_EQ_INT(vt_registry_insert(0x20000000, 1 << 20, VT_MEM_PINNED, -1), 0, "insert pinned range");
    VT_CHECK(vt_registry_lookup(0x10000000 + 4095, &a) == 0 && a.base == 0x10000000 && a.mem == VT_MEM_DEVICE && a.dev == 0,
             "interior pointer finds its range, kind and device");
    VT_CHECK(vt_registry_lookup(0x10000000 + 4096, &a) != 0, "one past the end is not inside");
    VT_CHECK_EQ_INT(vt_registry_live_vram(0), 4096, "VRAM counts device memory only");
    uint64_t gen = vt_registry_generation();

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
    VT_CHECK(vt_registry_generation() != gen, "a removal bumps the generation (per-thread caches drop)");
    VT_CHECK(vt_registry_freed_lookup(0x10000010, &a) == 0 && a.size == 4096, "freed ring remembers the range");
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
    VT_CHECK(vt_registry_freed_lookup(0x50000000 + 2 * MiB, &a) == 0 && a.size == 0x200, "its freed record is found");

    for (uint64_t i = 0; i < 5000; i++) vt_registry_insert(0x30000000 + i * 0x1000, 0x800, VT_MEM_ASYNC, 1);
    int found = 1;
    for (uint64_t i = 0; i < 5000 && found; i++) found = vt_registry_lookup(0x30000000 + i * 0x1000 + 0x7ff, &a) == 0 && a.dev == 1;
    VT_CHECK(found, "5000 ranges (maps grown past their first capacity, several shards) all found");
    VT_CHECK_EQ_INT(vt_registry_live_vram(1), 5000 * 0x800, "per-device live bytes");

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
