/* journal.h - moves trace formatting off the traced program's threads.
 *
 * Hooks claim a record in a ring kept in a MAP_SHARED file beside the trace (TRACE.ring), fill
 * binary fields (records.h) and commit; a drain thread formats committed records, in ring order,
 * into JSON lines through trace_writer. A hook therefore pays for one atomic add and a few stores,
 * not for printing a dozen integers. The ring lives in a shared file so a record committed before
 * SIGKILL/abort/_exit survives: `vramtrace run` (or `vramtrace report`) converts what the drain did
 * not reach (vt_journal_recover), and a record still claimed when the process died is written
 * with "res": null where that means something (a free the process died inside) or counted lost.
 *
 * Invariants: records leave the ring in claim order (so the registry's order, taken under its
 * lock together with the claim, is the file's order); one drainer at a time; a claim waits only
 * while the ring is full; without a drain thread (VRAMTRACE_SYNC=1, or pthread_create failed)
 * each commit drains inline. Nothing here calls CUDA.
 */
#ifndef VT_JOURNAL_H
#define VT_JOURNAL_H
#include <stddef.h>
#include <stdint.h>

/* Create TRACE.ring and start the drainer. `mode` 0: drain thread; 1: each commit drains inline
 * (VRAMTRACE_SYNC=1); 2: no drainer, records wait in the ring until it fills or the process exits
 * (VRAMTRACE_SYNC=defer, for testing recovery). `token` (VT_RING_TOKEN_LEN hex digits) is the one
 * in the trace's header: recovery folds the ring only into the trace that names it. Returns 0, or
 * negative errno with a message; then events are formatted in the calling thread. */
#define VT_RING_TOKEN_LEN 32
int vt_journal_open(const char *trace_path, int mode, const char *token, char *err, size_t errlen);

/* Claim `bytes` of payload for a record of `type` (records.h). NULL when the journal is off or
 * the record is larger than a quarter of the ring; then the caller formats synchronously. */
void *vt_journal_claim(int type, size_t bytes);
/* Publish a claimed record (its fields are complete). */
void vt_journal_commit(void *payload);
/* A pre-formatted line (rare records: kernels, modules, findings, ranges ...), in order with the
 * rest. Returns 0, or -1 if it could not be queued (then the caller writes it directly). */
int vt_journal_text(const char *line, size_t len);

/* True when addr lies in the ring's mappings (the pointer checks ignore them). */
int vt_journal_owns(uint64_t addr);

/* Drain everything, stop the drainer, remove TRACE.ring (normal exit). */
void vt_journal_close(void);
/* FN is called by the drain thread between drains, at least every 10 ms (a layer above keeps its
 * own periodic work there: folded launch counts, core/fold.h). Never called without a drain thread. */
void vt_journal_set_tick(void (*fn)(void));
/* Fork child: forget the parent's ring without touching it. */
void vt_journal_forget(void);

/* After the process died: append what TRACE.ring still holds to TRACE and remove the ring.
 * Only a ring provably made for this trace is touched: a regular file (not a link) owned by the
 * trace's owner, whose token and pid are the ones in the trace's header. Returns the number of
 * lines recovered (>= 0), 0 when there is no ring, or a negative code with a message (-EBUSY
 * while the writing process still runs, or when it ran where its life cannot be seen from here:
 * another machine, boot or PID namespace; -EPERM for a ring that is not this trace's). */
long vt_journal_recover(const char *trace_path, char *err, size_t errlen);

/* Where this process runs, as recovery must match it before it asks whether a pid lives:
 * "BOOT_ID/pid:[INODE]" (the kernel's boot id, this PID namespace). The trace header's "pidns"
 * and the ring's header carry the writer's. 0, or -1 (out set to "") when /proc does not say. */
#define VT_PLACE_LEN 96
int vt_journal_place(char *out, size_t len);

#endif
