/* registry.h - address-range map of the process's live CUDA allocations (device, async, managed,
 * pinned, registered, VMM mappings) plus a bounded history of freed ranges.
 *
 * No global lock: the map is split into shards, each a rangemap.c map with its own lock. A range
 * lives in one shard, its "home", fixed by its address: the smallest level (2 MiB, 64 MiB, 2 GiB,
 * ... regions) at which it fits inside one region, then that region's number modulo 16. Threads
 * allocating in different 2 MiB regions never share a lock; a lookup probes one shard per level
 * in use (usually one or two).
 *
 * Lookups (vt_registry_lookup) are lock-free (seqlocks): the launch check calls them for every
 * pointer-sized argument. A change takes its home shard's lock. Callers that must order a trace
 * line with the change (an address can be reused the moment it is freed) keep that shard locked
 * while they queue the line: vt_registry_insert_lock / vt_registry_lock_base return the locked
 * shard, vt_registry_unlock_shard releases it. A free is announced (free_announce: a per-thread
 * slot, no lock) or marked in the map (set_freeing) before the real free runs; an insert that
 * overlaps a range in flight waits until that free's line is queued and the range removed, so
 * the file never shows a reuse before its free.
 *
 * Invariants: ranges in the live map never overlap (an insert evicts stale overlapping entries,
 * in any shard); a free's line is queued before its range leaves the map; the registry never
 * calls CUDA and never allocates on the lookup path.
 */
#ifndef VT_REGISTRY_H
#define VT_REGISTRY_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vramtrace/trace.h>

/* The kinds of memory, in vramtrace/trace.h's order (VT_MEM_DEVICE = 0): the trace's "mem" names.
 * VT_MEM_VMM is a physical handle, never in the address map. */
enum vt_mem {
#define VT_X(id) VT_MEM_##id,
    VT_TRACE_MEMS(VT_X)
#undef VT_X
    VT_MEM_COUNT
};
const char *vt_mem_name(int mem);
static inline int vt_mem_is_device(int mem)
{ return mem == VT_MEM_DEVICE || mem == VT_MEM_ASYNC || mem == VT_MEM_VMM_MAP || mem == VT_MEM_FOREIGN ||
         mem == VT_MEM_IPC || mem == VT_MEM_GRAPH; }
static inline int vt_mem_counts_vram(int mem)
{ return mem == VT_MEM_DEVICE || mem == VT_MEM_ASYNC || mem == VT_MEM_VMM; }

typedef struct vt_alloc_info {
    uint64_t base, size;
    int mem, dev;
} vt_alloc_info;

/* Record the live range [base, base+size) and return its home shard, still locked: the caller
 * queues the range's line, then calls vt_registry_unlock_shard. Waits out an in-flight free of
 * overlapping memory (that free's line comes first). If the map is out of memory (or the wait
 * gives up after ~100000 yields) the range is not recorded; the shard is still returned locked. */
int vt_registry_insert_lock(uint64_t base, uint64_t size, int mem, int dev);
void vt_registry_lock_shard(int shard);
void vt_registry_unlock_shard(int shard); /* shard < 0: nothing */
/* vt_registry_insert_lock + unlock: 0, or -1 when not recorded. */
int vt_registry_insert(uint64_t base, uint64_t size, int mem, int dev);
/* One attempt, no waiting, no lock left held: 0, -1 out of memory, -2 a free of overlapping
 * memory is in flight. */
int vt_registry_try_insert(uint64_t base, uint64_t size, int mem, int dev);

/* Lock the home shard of the live range starting exactly at `base`: the shard (fills *out when not
 * NULL), or -1 when no live range starts there (nothing is locked then). */
int vt_registry_lock_base(uint64_t base, vt_alloc_info *out);
/* Announce a free of the range starting at base before the real free runs, without a lock: an
 * insert that overlaps it waits until vt_registry_free_retire, as for a marked range. 1 announced
 * and live (*out, *shard, *at filled: lock that shard after the real free, queue the line, then
 * vt_registry_remove_locked with `at`), 0 announced but no live range starts there, -1 not
 * announced (every slot taken): use vt_registry_begin_free. */
int vt_registry_free_announce(uint64_t base, vt_alloc_info *out, int *shard, uint32_t *at);
/* After the free's line is queued and its range removed (or the free failed). inflight.h */
void vt_registry_free_retire(void);
/* Mark the live range starting at base as being freed (lock_base + set_freeing + unlock, one
 * search): its shard (for vt_registry_lock_shard after the real free), or -1 when not live.
 * *at (may be NULL) gets where the range sat, for vt_registry_remove_locked. */
int vt_registry_begin_free(uint64_t base, vt_alloc_info *out, uint32_t *at);
/* With that shard locked: mark (on=1) or unmark the range as being freed (it stays valid for
 * lookups while the real free runs). 0, -1 not live. */
int vt_registry_set_freeing_locked(int shard, uint64_t base, int on);
/* With that shard locked: remove the range starting at base and remember it as freed. `at`:
 * vt_registry_begin_free's hint, or 0 (a stale one only costs a search). `out` may be NULL. 0, -1. */
int vt_registry_remove_locked(int shard, uint64_t base, uint32_t at, vt_alloc_info *out);
/* lock_base + remove + unlock: 0 removed (*out filled), -1 not live. */
int vt_registry_remove(uint64_t base, vt_alloc_info *out);

/* VMM physical handles: counted bytes without an address, under their own lock. A handle counts
 * from cuMemCreate until it is released and no longer mapped (CUDA frees it at the later of
 * cuMemRelease and the last cuMemUnmap). Lookup and remove see unreleased handles only; remove
 * (cuMemRelease) of a mapped handle keeps it counted until its last mapping goes. 0, or -1. */
void vt_registry_handle_lock(void);
void vt_registry_handle_unlock(void);
int vt_registry_handle_insert_locked(uint64_t handle, uint64_t size, int dev);
int vt_registry_handle_remove_locked(uint64_t handle, vt_alloc_info *out);
int vt_registry_handle_lookup_locked(uint64_t handle, vt_alloc_info *out);
/* cuMemMap of [addr, addr+size) to a handle; cuMemUnmap of every mapping starting in the range. */
int vt_registry_handle_map_locked(uint64_t addr, uint64_t size, uint64_t handle);
void vt_registry_handle_unmap_locked(uint64_t addr, uint64_t size);

/* One per shard, each on a line of its own: bumped under the shard's lock, after the map changed,
 * whenever a live range leaves that shard (free, unmap, eviction). A cached "this address is
 * live" answer found in shard s holds while vt_registry_gens[s] keeps the value it had before the
 * search (vt_registry_lookup_gen), so a free drops only answers from its own shard, and frees in
 * different shards share no cache line. */
#define VT_REGISTRY_SHARDS 112
struct vt_shard_gen { _Atomic uint64_t v; } __attribute__((aligned(64)));
extern struct vt_shard_gen vt_registry_gens[VT_REGISTRY_SHARDS] __attribute__((visibility("hidden")));
/* Bumped after every range inserted (any shard): a cached "in no live range" answer holds while
 * it keeps the value read before the search (check.c's host pages). */
extern _Atomic uint64_t vt_registry_inserts __attribute__((visibility("hidden")));
/* Every cached "live" answer drops (all generations bumped): after a change that is no free,
 * such as peer access disabled. */
void vt_registry_invalidate_all(void);
/* vt_registry_lookup that also gives the shard it found the range in and that shard's
 * generation, read before the search. 0 found, -1 none. */
int vt_registry_lookup_gen(uint64_t addr, vt_alloc_info *out, int *shard, uint64_t *gen);

/* The live range containing addr (lock-free). 0 found, -1 none. */
int vt_registry_lookup(uint64_t addr, vt_alloc_info *out);
/* A freed range containing addr (the smallest, if several; the latest free of that memory):
 * 0 found, -1 none. *forgot: how many older freed ranges the history dropped in the shards that
 * could have held addr (0: a miss is certain). Ends are exclusive. */
int vt_registry_freed_lookup(uint64_t addr, vt_alloc_info *out, uint64_t *forgot);
/* How many distinct freed ranges each shard remembers (1..32768; default 16384). Call before the
 * first free. */
void vt_registry_set_freed_history(unsigned ranges);
/* The live device range nearest to addr (for "just past the end" and "between allocations"):
 * 0 found with *out, -1 when addr is not within `slack` bytes of any device range's span. */
int vt_registry_nearest_device(uint64_t addr, uint64_t slack, vt_alloc_info *out);

/* True when addr is within `slack` of the span of device ranges ever recorded (lock-free). */
int vt_registry_in_device_span(uint64_t addr, uint64_t slack);

/* Live bytes counted as VRAM, per device (dev < 0: all devices). Walks the map: not for hot paths. */
uint64_t vt_registry_live_vram(int dev);
/* Calls fn for each live allocation counted as VRAM, managed or pinned host (the leak summary,
 * device resets: each caller picks its kinds). */
void vt_registry_foreach(void (*fn)(const vt_alloc_info *, void *), void *ctx);
/* Fork child: start empty. */
void vt_registry_reset(void);

#endif
