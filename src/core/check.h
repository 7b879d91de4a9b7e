/* check.h - classifying pointer values for the launch, copy, set and free checks.
 *
 * The fast path is registry lookups only. A value that misses every table goes to the slow path:
 * the real driver's pointer attributes (device memory the tracer never saw allocated is adopted
 * into the registry), then a cached view of /proc/self/maps, refreshed only on a miss.
 * Never allocates on the fast path; the slow path is rare by construction. */
#ifndef VT_CHECK_H
#define VT_CHECK_H
#include <stdint.h>

#include "addrspace.h"

#include "registry.h"

enum vt_ptr_class {
    VT_PTR_SCALAR = 0,  /* cannot be a user-space address, or maps to nothing: not a pointer */
    VT_PTR_DEVICE,      /* inside a live device / async / VMM-mapped / foreign range */
    VT_PTR_MANAGED,
    VT_PTR_PINNED,      /* pinned or registered host memory */
    VT_PTR_HOST,        /* host memory CUDA does not know (pageable) */
    VT_PTR_FREED,       /* inside a freed device, pinned or managed allocation */
    VT_PTR_NEAR_DEVICE, /* not allocated, but within the span of device allocations (OOB) */
};

typedef struct vt_ptr_info {
    int cls;
    vt_alloc_info alloc;  /* DEVICE/MANAGED/PINNED/FREED/NEAR_DEVICE: the range concerned */
    const char *host_cls; /* HOST: "heap", "stack", "anon", "file" */
    char mapping[160];    /* HOST: the /proc/self/maps name, "" for anonymous */
    uint64_t forgot;      /* not FREED: older frees the bounded history dropped where v could be */
} vt_ptr_info;

/* Full classification (may take the slow path). `dev_only` limits the slow path to the driver
 * query (used for copies where a pageable pointer is normal). */
int vt_classify(uint64_t v, vt_ptr_info *out);

/* A copy's or memset's side V at time NOW: device, pinned (or registered), managed, freed device
 * or managed memory (VT_PTR_FREED, the allocation in out->alloc, when checks are on), or pageable
 * host (VT_PTR_HOST): the registry answers, and for a value no range holds the driver (untracked
 * CUDA memory, adopted) when checks are on; a host page found so is remembered per thread. */
int vt_copy_class(uint64_t v, uint64_t now, vt_ptr_info *out);

/* How long vt_copy_class's answer for a value holds: while *genp keeps gen (a live range's shard
 * generation, or vt_registry_inserts for a host page no range held) and until `until` (a host
 * page's driver answer is kept a second). */
typedef struct { const _Atomic uint64_t *genp; uint64_t gen, until; } vt_class_token;
/* The token of vt_copy_class's answer for V just given at NOW: 1, or 0 when the answer came from
 * no cache (the driver's, another device's range, a scalar) and is to be asked again. */
int vt_copy_class_token(uint64_t v, uint64_t now, vt_class_token *t);
static inline int vt_class_token_holds(const vt_class_token *t, uint64_t now)
{
    return atomic_load_explicit(t->genp, memory_order_acquire) == t->gen && now < t->until;
}

/* Fast test used per launch argument: 1 when v is certainly fine (scalar-looking or a tracked
 * CUDA range), 0 when the caller must run vt_classify. */
static inline int vt_looks_scalar(uint64_t v)
{
    /* Below the lowest mappable page or above every user address of this process (addrspace.h:
     * 2^47 on x86-64, 2^48 on aarch64): never an address. */
    return v < 0x10000 || v > vt_va_top_now();
}

/* vt_registry_lookup through a per-thread cache: most launches and copies pass the same buffers
 * again. Direct-mapped on the value's 4 KiB page; an entry holds while the generation of the
 * shard its range came from is unchanged (registry.h), so a free costs no flush and drops only
 * its own shard's answers. 0 found, -1 none. */
int vt_live_lookup_cached(uint64_t v, vt_alloc_info *out);

/* The cache itself, for the launch check's inline test. A zeroed entry (size 0) never matches.
 * The slot is a multiplicative hash of the page number's low 32 bits (an imul with an immediate:
 * the launch check's loop has no register to spare for a 64-bit constant). */
#define VT_LCACHE_BITS 6
struct vt_lc_ent { uint64_t base, size, gen; const _Atomic uint64_t *genp; int mem, dev; };
extern __thread __attribute__((tls_model("initial-exec"))) struct vt_lc_ent vt_lcache[1 << VT_LCACHE_BITS];
static inline unsigned vt_lcache_index(uint64_t v)
{
    return ((uint32_t)(v >> 12) * 0x9E3779B1u) >> (32 - VT_LCACHE_BITS);
}
static inline struct vt_lc_ent *vt_lcache_slot(uint64_t v) { return &vt_lcache[vt_lcache_index(v)]; }
/* 1 when the cache (`tab`, this thread's vt_lcache) already knows v is inside a live range. */
static inline int vt_lcache_hit(const struct vt_lc_ent *tab, uint64_t v)
{
    const struct vt_lc_ent *e = &tab[vt_lcache_index(v)];
    return v - e->base < e->size && e->gen == atomic_load_explicit(e->genp, memory_order_acquire);
}

/* Peer access (cuCtxEnablePeerAccess): whether kernels on device `from` may use device `to`'s
 * memory. A device of unknown peer (`to` < 0) is taken to reach every device (never a false
 * error). vt_peer_access_set flushes no cache: a disable must call vt_registry_invalidate_all. */
void vt_peer_access_set(int from, int to, int on);
int vt_peer_access_ok(int from, int to);
/* A live range of another device that a kernel on `dev` may not use. */
static inline int vt_wrong_device(const vt_alloc_info *a, int dev)
{
    return (a->mem == VT_MEM_DEVICE || a->mem == VT_MEM_ASYNC || a->mem == VT_MEM_GRAPH) && a->dev >= 0 && dev >= 0 &&
           a->dev != dev && !vt_peer_access_ok(dev, a->dev);
}
/* The calling thread's current device changed to dev (cudaSetDevice, a context switch): its
 * cached answers were kept for the old device, so they go. */
void vt_set_current_device(int dev);

/* Fork child: forget the cached host maps. */
void vt_check_reset(void);
#endif
