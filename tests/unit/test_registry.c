/* test_registry.c - src/registry.c: range lookups, frees in flight, eviction, freed ring, spans. */
#include <stdio.h>

#include "registry.h"
#include "vt_test.h"

int main(void)
{
    vt_alloc_info a;
    vt_registry_lock();
    VT_CHECK_EQ_INT(vt_registry_insert_locked(0x10000000, 4096, VT_MEM_DEVICE, 0), 0, "insert device range");
    VT_CHECK_EQ_INT(vt_registry_insert_locked(0x20000000, 1 << 20, VT_MEM_PINNED, -1), 0, "insert pinned range");
    vt_registry_unlock();
    VT_CHECK(vt_registry_lookup(0x10000000 + 4095, &a) == 0 && a.base == 0x10000000 && a.mem == VT_MEM_DEVICE && a.dev == 0,
             "interior pointer finds its range, kind and device");
    VT_CHECK(vt_registry_lookup(0x10000000 + 4096, &a) != 0, "one past the end is not inside");
    VT_CHECK_EQ_INT(vt_registry_live_vram(0), 4096, "VRAM counts device memory only");
    uint64_t gen = vt_registry_generation();

    vt_registry_lock();
    VT_CHECK_EQ_INT(vt_registry_set_freeing_locked(0x10000000, 1, &a), 0, "mark a range as being freed");
    VT_CHECK_EQ_INT(vt_registry_insert_locked(0x10000000, 4096, VT_MEM_DEVICE, 0), -2,
                    "reusing memory whose free is in flight must wait (-2)");
    VT_CHECK_EQ_INT(vt_registry_insert_locked(0x10000800, 16, VT_MEM_DEVICE, 0), -2, "so must an overlapping range");
    vt_registry_unlock();
    VT_CHECK(vt_registry_lookup(0x10000010, &a) == 0, "a range being freed is still valid for lookups");
    vt_registry_lock();
    VT_CHECK_EQ_INT(vt_registry_remove_locked(0x10000000, &a), 0, "remove after the free");
    vt_registry_unlock();
    VT_CHECK(vt_registry_generation() != gen, "a removal bumps the generation (per-thread caches drop)");
    VT_CHECK(vt_registry_freed_lookup(0x10000010, &a) == 0 && a.size == 4096, "freed ring remembers the range");
    VT_CHECK(vt_registry_nearest_device(0x10000000 + 4096, 1 << 20, &a) != 0, "no live device range nearby any more");

    vt_registry_lock();
    VT_CHECK_EQ_INT(vt_registry_insert_locked(0x10000000, 8192, VT_MEM_DEVICE, 0), 0, "reuse once recorded");
    /* a stale overlapping range (a free never seen) is evicted by a new allocation */
    VT_CHECK_EQ_INT(vt_registry_insert_locked(0x10001000, 8192, VT_MEM_DEVICE, 0), 0, "overlapping insert");
    vt_registry_unlock();
    VT_CHECK(vt_registry_lookup(0x10000010, &a) != 0, "the stale overlapping range was evicted");
    VT_CHECK_EQ_INT(vt_registry_live_vram(0), 8192, "live bytes follow the eviction");
    VT_CHECK(vt_registry_nearest_device(0x10001000 + 8192 + 100, 1 << 20, &a) == 0 && a.base == 0x10001000,
             "nearest device range to a pointer just past the end");
    VT_CHECK(!vt_registry_in_device_span(0x7f0000000000ull, 1 << 20), "host addresses far away are outside the device span");

    vt_registry_lock();
    for (uint64_t i = 0; i < 5000; i++) vt_registry_insert_locked(0x30000000 + i * 0x1000, 0x800, VT_MEM_ASYNC, 1);
    vt_registry_unlock();
    int found = 1;
    for (uint64_t i = 0; i < 5000 && found; i++) found = vt_registry_lookup(0x30000000 + i * 0x1000 + 0x7ff, &a) == 0 && a.dev == 1;
    VT_CHECK(found, "5000 ranges (map grown past its first capacity) all found");
    VT_CHECK_EQ_INT(vt_registry_live_vram(1), 5000 * 0x800, "per-device live bytes");
    return vt_test_finish();
}
