/* registry.h - address-range map of the process's live CUDA allocations (device, async, managed,
 * pinned, registered, VMM mappings) plus a ring of recently freed ranges.
 *
 * Lookups (vt_registry_lookup) are lock-free (a seqlock over a sorted array): the launch check
 * calls them for every pointer-sized argument. Changes take one mutex; callers that must order a
 * trace line with the change (an address can be reused the moment it is freed) hold
 * vt_registry_lock() around the `_locked` call and the line's reservation.
 *
 * Invariants: ranges in the live map never overlap (an insert evicts stale overlapping entries);
 * the registry never calls CUDA and never allocates on the lookup path.
 */
#ifndef VT_REGISTRY_H
#define VT_REGISTRY_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum vt_mem {
    VT_MEM_DEVICE = 0, VT_MEM_ASYNC, VT_MEM_MANAGED, VT_MEM_PINNED, VT_MEM_REGISTERED,
    VT_MEM_VMM_MAP,   /* address range mapped with cuMemMap (bytes counted by the VMM handle) */
    VT_MEM_FOREIGN,   /* device memory the driver knows but the tracer never saw allocated */
    VT_MEM_VMM,       /* physical VMM allocation (handle); not in the address map */
    VT_MEM_IPC,       /* cuIpcOpenMemHandle mapping: another process's memory, not counted */
    VT_MEM_GRAPH,     /* graph allocation node's address; memory exists only while the graph runs */
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

void vt_registry_lock(void);
void vt_registry_unlock(void);

/* Record a live range [base, base+size). Returns 0, -1 when out of memory for the map, or -2 when
 * it overlaps a range whose free is in flight: unlock, yield and retry (that free's line must be
 * written first). */
int vt_registry_insert_locked(uint64_t base, uint64_t size, int mem, int dev);
/* Mark (on=1) or unmark the live range starting at `base` as being freed: it stays valid for
 * lookups while the real free runs. Fills *out when not NULL. 0 found, -1 not live. */
int vt_registry_set_freeing_locked(uint64_t base, int on, vt_alloc_info *out);
/* Remove the live range starting exactly at `base`; fills *out. 0 found, -1 not live. */
int vt_registry_remove_locked(uint64_t base, vt_alloc_info *out);
/* VMM physical handles: counted bytes without an address. */
int vt_registry_handle_insert_locked(uint64_t handle, uint64_t size, int dev);
int vt_registry_handle_remove_locked(uint64_t handle, vt_alloc_info *out);
int vt_registry_handle_lookup_locked(uint64_t handle, vt_alloc_info *out);

/* Bumped whenever a live range disappears (free, unmap, eviction): a cached "this address is
 * live" answer stays true while it is unchanged. */
extern _Atomic uint64_t vt_registry_removals;
static inline uint64_t vt_registry_generation(void)
{ return atomic_load_explicit(&vt_registry_removals, memory_order_acquire); }

/* The live range containing addr (lock-free). 0 found, -1 none. */
int vt_registry_lookup(uint64_t addr, vt_alloc_info *out);
/* The most recently freed range containing addr that is not live again. 0 found, -1 none. */
int vt_registry_freed_lookup(uint64_t addr, vt_alloc_info *out);
/* The live device range nearest to addr (for "just past the end" and "between allocations"):
 * 0 found with *out, -1 when addr is not within `slack` bytes of any device range's span. */
int vt_registry_nearest_device(uint64_t addr, uint64_t slack, vt_alloc_info *out);

/* True when addr is within `slack` of the span of device ranges ever recorded (lock-free). */
int vt_registry_in_device_span(uint64_t addr, uint64_t slack);

/* Live bytes counted as VRAM, per device (dev < 0: all devices). */
uint64_t vt_registry_live_vram(int dev);
/* Calls fn for each live allocation counted as VRAM or managed (for the leak summary). */
void vt_registry_foreach(void (*fn)(const vt_alloc_info *, void *), void *ctx);
/* Fork child: start empty. */
void vt_registry_reset(void);

#endif
