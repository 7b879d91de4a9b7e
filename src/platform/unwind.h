/* unwind.h - a fast x86-64 stack walker that gives exactly the frames glibc backtrace() gives,
 * for the call stack recorded with every allocation. glibc's backtrace() goes through libgcc's
 * _Unwind_Backtrace, which parses the CFI of every frame on every call (~19,000 instructions per
 * traced cudaMalloc); this walker caches, per PC, how to get from a frame to its caller.
 *
 * Invariants:
 *  - vt_unwind either returns the same return addresses backtrace() would return when called
 *    from the same place (cut at `max`), or -1: the caller must then call backtrace() itself.
 *    Anything the cached rules cannot express (CFA from another register, DWARF expressions,
 *    signal frames, no FDE, a stack read outside the thread's stack) gives -1.
 *  - The hot path (all PCs cached) takes no lock, allocates nothing and reads the stack only
 *    between the walker's own stack pointer and the top of the thread's stack.
 *  - The first call in a thread asks for the thread's stack bounds (pthread_getattr_np, which
 *    may allocate): do not make that first call from a signal handler.
 *  - A cache miss parses .eh_frame_hdr/.eh_frame of the object found with _dl_find_object (or
 *    dl_iterate_phdr); it holds no lock of its own.
 *  - vt_unwind_invalidate (called after every dlclose) makes every cached rule stale.
 */
#ifndef VT_UNWIND_H
#define VT_UNWIND_H
#include <stdint.h>

/* Return addresses of the caller's stack, innermost first, as backtrace(frames, max) would give
 * them when called where vt_unwind is called (frames[0] is the return address into the caller).
 * Returns the count, or -1 when the caller must use backtrace() instead. */
int vt_unwind(uint64_t *frames, int max);

/* A caller that keeps what it recorded for a stack (its serial) and meets the same frame again
 * asks whether the stack is still that one without a walk. ABOVE: the caller's own stack pointer,
 * the same as when it made the walk through calls of its own down to the walker.
 * vt_unwind_same_above: 1 when memo entry SERIAL is still kept, the rules unchanged, and every
 * stack word its walk read at ABOVE or higher reads the same again (the walk from ABOVE up would
 * give the same frames); 0 otherwise. No walk, no lock, nothing written but the memo's order.
 * vt_unwind_checkable, right after that walk: 1 when the words it read below ABOVE are all return
 * addresses IS_OURS says are the caller's own code (the calls down to the walker, the same every
 * time), so that vt_unwind_same_above may leave them out; 0 when not (a register's or another
 * word's value below ABOVE steered the walk). */
int vt_unwind_same_above(uint64_t serial, uint64_t above);
int vt_unwind_checkable(uint64_t serial, uint64_t above, int (*is_ours)(uint64_t));

/* Code may have been unmapped (dlclose): forget every cached rule. */
void vt_unwind_invalidate(void);

/* Counters of the calling thread, for tests and debugging. */
struct vt_unwind_stats {
    uint64_t hits;      /* frames whose rule came from the cache */
    uint64_t misses;    /* frames whose rule was derived from the CFI */
    uint64_t fallbacks; /* calls that returned -1 */
    uint64_t memo_hits; /* walks answered by the thread's memo of its last walks (unwind.c) */
};
void vt_unwind_get_stats(struct vt_unwind_stats *out);
/* The thread's memo entry that gave (or now keeps) its last vt_unwind's frames: the same number
 * means the same frames; 0 when that walk was not kept. */
uint64_t vt_unwind_serial(void);

#endif
