/* inflight.c - per-thread announcement slots for frees in flight (see inflight.h). */
#include "inflight.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#define SLOTS 256
#define RETRY_AFTER 4096 /* frees a thread without a slot makes before it looks again */

static struct {
    _Atomic uint64_t base; /* 0: no free in flight */
    _Atomic int owned;
} __attribute__((aligned(64))) slots[SLOTS];
static _Atomic unsigned slots_hi; /* no slot at or above this was ever owned */
static unsigned slots_limit = SLOTS;
/* this thread's slot + 1; 0 none yet; negative: none to be had, counting up to the next try;
 * INT_MIN: the thread is exiting */
static __thread __attribute__((tls_model("initial-exec"))) int my_slot;
static pthread_key_t slot_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

static void slot_release(void *v)
{
    int k = (int)(intptr_t)v - 1;
    if (k >= 0 && k < SLOTS) {
        atomic_store_explicit(&slots[k].base, 0, memory_order_release);
        atomic_store_explicit(&slots[k].owned, 0, memory_order_release);
    }
    my_slot = INT_MIN; /* a free from a later TLS destructor marks the map instead */
}
static void key_init(void) { key_ok = pthread_key_create(&slot_key, slot_release) == 0; }

static __attribute__((noinline)) int slot_get(void)
{
    if (my_slot < 0 && (my_slot == INT_MIN || ++my_slot < 0)) return -1;
    pthread_once(&key_once, key_init);
    for (unsigned k = 0; key_ok && k < slots_limit && k < SLOTS; k++) {
        int z = 0;
        if (atomic_load_explicit(&slots[k].owned, memory_order_relaxed) || !atomic_compare_exchange_strong(&slots[k].owned, &z, 1))
            continue;
        unsigned hi = atomic_load(&slots_hi);
        while (hi < k + 1 && !atomic_compare_exchange_weak(&slots_hi, &hi, k + 1)) {}
        if (pthread_setspecific(slot_key, (void *)(intptr_t)(k + 1)) != 0) {
            atomic_store(&slots[k].owned, 0);
            break;
        }
        return my_slot = (int)k + 1;
    }
    my_slot = -RETRY_AFTER;
    return -1;
}

int vt_inflight_announce(uint64_t base)
{
    int k = my_slot;
    if (__builtin_expect(k <= 0, 0) && (k = slot_get()) <= 0) return -1;
    if (__builtin_expect(atomic_load_explicit(&slots[k - 1].base, memory_order_relaxed) != 0, 0)) return -1; /* nested */
    /* A plain store: the driver's own locking orders it before the memory can be handed out
     * again, and whoever gets it back reads it only after that. */
    atomic_store_explicit(&slots[k - 1].base, base, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    return 0;
}

void vt_inflight_retire(void)
{
    int k = my_slot;
    if (k > 0) atomic_store_explicit(&slots[k - 1].base, 0, memory_order_release);
}

int vt_inflight_has(uint64_t base)
{
    if (base == 0) return 0; /* what an empty slot holds */
    unsigned hi = atomic_load_explicit(&slots_hi, memory_order_acquire);
    for (unsigned k = 0; k < hi && k < SLOTS; k++)
        if (atomic_load_explicit(&slots[k].base, memory_order_acquire) == base) return 1;
    return 0;
}

void vt_inflight_reset(void)
{
    for (unsigned k = 0; k < SLOTS; k++) {
        atomic_store(&slots[k].base, 0);
        atomic_store(&slots[k].owned, 0);
    }
    atomic_store(&slots_hi, 0);
    if (my_slot > 0) {
        if (key_ok) pthread_setspecific(slot_key, NULL);
        my_slot = 0;
    }
}

void vt_inflight_test_limit(unsigned n) { slots_limit = n; }
