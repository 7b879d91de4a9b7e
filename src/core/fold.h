/* fold.h - steady launches counted instead of written one line each (issue 48).
 *
 * A training loop launches the same kernels with the same configuration thousands of times a
 * second, and a line each is 160 bytes. A launch that was checked clean and repeats a
 * configuration its thread launched before (kernel, grid, block, shared memory, stream, device,
 * API) is added to a per-thread counter; the configuration's first launch keeps its line. A
 * counter is written as one `launches` record (count, first start, last end, summed host time):
 * when its slot is wanted for another configuration, before the thread's NVTX range boundaries,
 * snapshots and pauses (a record never straddles one), every VRAMTRACE_FOLD_INTERVAL_MS (by the
 * thread at its next launch, and by the drain thread for threads gone quiet: a SIGKILL loses at
 * most one interval's counts), when the thread ends, and at exit. Lines kept as they are: a failed
 * launch, one whose check found anything (finding or note), a graph's (captured or replayed), and
 * a thread's first launch after a device-to-host copy (the report tells from the next call
 * whether the copy was waited for). VRAMTRACE_FOLD=0 writes every launch's line.
 *
 * Invariants: a table's counters change only under its lock, which the owning thread takes with
 * one uncontended exchange and every other thread only tries (never waits on); each folded launch
 * is counted in exactly one record; a fork child starts with every counter at zero (they are the
 * parent's to write).
 */
#ifndef VT_FOLD_H
#define VT_FOLD_H
#include <stdint.h>

#include "emit.h"

/* The configuration of launch C (kernel id K): 1 when it was counted (no line to write), 0 when
 * the caller writes its line. C must have succeeded, outside any graph, with a clean check. */
int vt_fold_launch(const struct vt_call *c, uint32_t k, const uint32_t grid[3], const uint32_t block[3], uint64_t shmem,
                   uint64_t stream);
/* A device-to-host copy by this thread: its next launch keeps its line. */
void vt_fold_copy_d2h(void);
/* Write this thread's counters now (before a range boundary, a snapshot, a pause). */
void vt_fold_flush_mine(void);
/* Write every thread's counters: WAIT 0 skips a table another thread holds (the drain thread's
 * tick), 1 waits a bounded time for it (exit). */
void vt_fold_flush_all(int wait);
/* Called from the drain thread often: flushes every table whose interval has passed. */
void vt_fold_tick(void);
/* In a fork child: every counter and every other thread's table forgotten. */
void vt_fold_fork_child(void);
#endif
