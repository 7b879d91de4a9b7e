/* inflight.h - frees in flight, announced without a lock (registry.c's reuse ordering).
 *
 * Between a free's real call and the moment its range leaves the registry, the driver may hand
 * the same memory to another thread, whose insert must wait for the free's line so the trace
 * never shows a reuse before its free. A free announces its base in a slot its thread owns (a
 * cache line of its own: one plain store, no lock), and an insert that overlaps a live range asks
 * vt_inflight_has before it evicts that range as stale.
 *
 * Invariants: the announcement is stored before the real free, so whoever gets the memory back
 * from the driver (through the driver's own locking) sees it; one announcement per thread at a
 * time (a nested free is refused); a thread keeps its slot for its life (a pthread key destructor
 * returns it); when no slot is to be had the caller marks the map instead (registry.h). Nothing
 * here calls CUDA; a thread's first announcement may allocate (pthread_setspecific).
 */
#ifndef VT_INFLIGHT_H
#define VT_INFLIGHT_H
#include <stdint.h>

/* 0 announced (until vt_inflight_retire), -1 not: no slot, or this thread already has a free in
 * flight. base != 0. */
int vt_inflight_announce(uint64_t base);
/* Withdraw this thread's announcement (no-op without one). */
void vt_inflight_retire(void);
/* True while some thread has announced a free of the range starting at base. Only for inserts
 * that found an overlap: it scans every slot ever used. */
int vt_inflight_has(uint64_t base);
/* Fork child: the other threads, and their slots, are gone. */
void vt_inflight_reset(void);
/* Tests: let at most n threads own a slot. */
void vt_inflight_test_limit(unsigned n);
#endif
