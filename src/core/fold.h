/* fold.h - steady launches counted instead of written one line each (issue 48).
 *
 * A training loop launches the same kernels with the same configuration thousands of times a
 * second, and a line each is 160 bytes. A launch that was checked clean and repeats a
 * configuration its thread launched before (kernel, grid, block, shared memory, stream, device,
 * API) is added to a per-thread counter; the configuration's first launch keeps its line. A
 * counter is written as one `launches` record (count, first start, last end, summed host time):
 * when its slot is wanted for another configuration, before the thread's snapshots and pauses
 * (not at NVTX range boundaries: a loop marks every step with one, and the report counts
 * launches, copies and memsets per process, not per range), every VRAMTRACE_FOLD_INTERVAL_MS (by the
 * thread at its next launch, and by the drain thread for threads gone quiet: a SIGKILL loses at
 * most one interval's counts), when the thread ends, and at exit. Lines kept as they are: a failed
 * launch, one whose check found anything (finding or note), one captured into a graph, and
 * a thread's first launch after a device-to-host copy (the report tells from the next call
 * whether the copy was waited for). Copies and memsets fold alike (vt_fold_copy, vt_fold_set), as
 * `copies` and `sets` records with their bytes summed. VRAMTRACE_FOLD=0 writes every line.
 *
 * Invariants: a table's counters change only under its lock, which the owning thread takes with
 * one uncontended exchange and every other thread only tries (never waits on); each folded launch
 * is counted in exactly one record; a fork child starts with every counter at zero (they are the
 * parent's to write).
 */
#ifndef VT_FOLD_H
#define VT_FOLD_H
#include <stdint.h>

#include "cuda_abi.h"
#include "emit.h"

/* The configuration of launch C (kernel id K; GRAPH 0, or VT_GRAPH_REPLAYED for a replayed graph's
 * kernel node, counted apart): 1 when it was counted (no line to write), 0 when the caller writes
 * its line. C must have succeeded, not into a capture, with a clean check. */
int vt_fold_launch(const struct vt_call *c, uint32_t k, vt_dim3 grid, vt_dim3 block, uint64_t shmem, uint64_t stream,
                   int graph);
/* The steady case of vt_fold_launch alone: C (graph 0) repeats the thread's last configuration,
 * whose counter holds counts, and no write-out is due. 1: counted; 0: nothing changed, call
 * vt_fold_launch. */
int vt_fold_launch_again(const struct vt_call *c, uint32_t k, vt_dim3 grid, vt_dim3 block, uint64_t shmem, uint64_t stream);
/* Where vt_fold_copy left a copy: its slot (NULL: none) and the slot's fill then. While the
 * fill is unchanged the slot holds that copy's fields and frames. */
struct vt_fold_ticket { void *slot; uint32_t fills; };
/* Copy R (its record as it would be written; graph 0, succeeded, checked clean; a device-to-host
 * copy may come however it went): 1 when it was counted with the thread's earlier copies of its
 * site, direction, memory kinds, stream, API and size class (no line to write), 0 when the caller
 * writes its line. Device-to-host copies are never counted: the report reads the thread's next
 * call after one (did the host wait?) and its buffer (a transfer staged through the host), so
 * after one the thread's next launch, copy or memset keeps its line, and so does a host-to-device
 * copy from a buffer one wrote to lately. SERIAL: the frames' vt_stack_serial (0: unknown); a copy
 * whose stack has the serial of the thread's last folded copy's is found without hashing. TK:
 * where the copy was left, for vt_fold_copy_again. */
int vt_fold_copy(const struct vt_rec_copy *r, uint64_t serial, struct vt_fold_ticket *tk);
/* Copy C of SIZE bytes is the copy that got ticket TK (slot NULL: none): same pointers, kinds,
 * stream, API, device and stack (SERIAL), classified and checked clean as that one was (the caller
 * knows). 1: counted in its slot; 0: nothing changed, the caller takes vt_fold_copy's path.
 * H2D_SRC: the source of a host-to-device copy (0 otherwise), which keeps its line when staged. */
int vt_fold_copy_again(const struct vt_call *c, uint64_t size, uint64_t h2d_src, uint64_t serial,
                       const struct vt_fold_ticket *tk);
/* The thread wrote a line the report reads as "the call after a device-to-host copy" (a sync):
 * the launches, copies and memsets after it fold again. */
void vt_fold_line_written(void);
/* Memset R (succeeded, outside graphs, checked clean): 1 when counted with the thread's earlier
 * memsets of its API, stream and size class, 0 when the caller writes its line. */
int vt_fold_set(const struct vt_rec_set *r);
/* Write this thread's counters now (before a snapshot, a pause). */
void vt_fold_flush_mine(void);
/* Write every thread's counters: WAIT 0 skips a table another thread holds (the drain thread's
 * tick), 1 waits a bounded time for it (exit). */
void vt_fold_flush_all(int wait);
/* Called from the drain thread often: flushes every table whose interval has passed. */
void vt_fold_tick(void);
/* In a fork child: every counter and every other thread's table forgotten. */
void vt_fold_fork_child(void);
#endif
