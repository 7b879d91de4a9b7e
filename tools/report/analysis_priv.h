/* analysis_priv.h - bookkeeping shared by analysis_feed.c (feeding), analysis_finish.c (leaks,
 * symbolization, site tables) and analysis_ranges.c (range table, peak snapshot).  Calls go
 * feed -> finish -> ranges (and feed -> ranges); none goes back up.  Not for renderers. */
#ifndef VT_REPORT_ANALYSIS_PRIV_H
#define VT_REPORT_ANALYSIS_PRIV_H
#include "report/analysis.h"

struct stack {
    uint64_t *pcs;
    uint32_t n, next;
    uint64_t live_bytes, live_count, snap_bytes, snap_count, alloc_bytes, alloc_count;
    uint32_t cell_plus1;                 /* its cell (+ 1; 0 none yet) on device cell_dev: most stacks use one */
    int32_t cell_dev;
    uint64_t leak_bytes, leak_count, host_leak, managed_leak;
    uint64_t reset_bytes, reset_count, reset_managed;   /* never freed by the program: a device reset released them */
    uint64_t copy_bytes, copy_count, pageable_bytes[2], pageable_count, d2h_sync_count, staged_count;
    int64_t copy_ns;
    int touched, site;
    uint32_t range_node;                 /* the push/pop range its VRAM allocations were made in (0 none) */
    uint8_t range_seen, range_mixed;     /* any allocation yet; in more than one range */
};
/* A live allocation. A VMM handle's physical memory stays held after cuMemRelease while it is
 * still mapped (CUDA frees it at the last unmap): `maps` counts its mappings, `released` says
 * cuMemRelease already ran. `key`: its address (or handle) in by_addr (by_handle); `dead`: freed. */
struct live { uint64_t size, key; uint32_t stack; uint8_t mem, released, dead; int16_t dev; uint32_t maps, cell; };
/* VRAM live per (call stack, device): the sites at each device's own peak, snapshotted lazily as
 * the stacks are for the process peak (live -> snap for the cells touched since). */
struct cell { uint32_t stack; int32_t dev; uint64_t live, count, snap, snap_count; uint8_t touched; };
struct rnode { uint32_t parent, name, stat; };   /* stat: index in rstats */
struct open_range { int64_t id; uint32_t name, stat; };
struct rstat { uint64_t hash, stamp; struct vt_range r; };
/* One change of a device's live VRAM, for combining traces by time (analysis_combine.c) and the
 * steps' live bytes by call stack (analysis_growth.c): STACK made the allocation. */
struct vram_change { int64_t t; int64_t delta; int32_t dev; uint32_t stack; };

/* One argument word the tracer could not verify (a `finding` of severity "note"): the kernel's
 * names and layout, which word, and the finding it would be. */
struct note_word {
    const char *kernel, *mangled, *kind, *cls, *mapping, *api, *msg;
    const uint32_t *params;              /* the kernel's layout: offset, size pairs (NULL unknown) */
    uint32_t nparams;
    int64_t arg, offset, t;
    uint64_t value;
    int site;                            /* a stack index, -1 none */
    int dev;
};

struct vt_an_private {
    struct vt_sym *sym;
    struct stack *stacks;
    size_t nstacks, capstacks;
    struct vtr_hmap stack_index;         /* hash -> first stack index */
    struct live *lives;
    size_t nlives, caplives;
    uint32_t *freelist;
    size_t nfree, capfree;
    struct vtr_hmap by_addr, by_handle;  /* -> lives index */
    struct vtr_hmap map_handle, map_size; /* a cuMemMap'ed address -> its handle, its size */
    uint32_t *touched;
    size_t ntouched, captouched;
    int peak_pending;
    uint32_t peak_node;
    struct vtr_strtab strs;
    struct rnode *rnodes;
    size_t nrnodes, caprnodes;
    struct vtr_hmap rchild, tid_node;
    struct open_range *open;
    size_t nopen, capopen;
    struct rstat *rstats;                /* per range path, VT_AN_MAX_RANGES at most */
    size_t nrstats, caprstats;
    struct vtr_hmap rstat_by_hash;       /* hash of the path -> rstats index */
    uint32_t rother;                     /* the "(other)" entry, UINT32_MAX until needed */
    uint64_t rstamp;
    struct vtr_hmap kernel_by_id;        /* kernel id -> index in p->kernels */
    struct vtr_hmap finding_by_id;       /* a repeated launch finding's id -> index in p->findings */
    struct vtr_hmap note_words;          /* (kernel, argument, byte) of each note word seen */
    struct note_word *words;             /* each, until analysis_sass.c settles them or folds them into p->notes */
    size_t nwords, capwords;
    size_t capkernels, capooms, capfindings, capsnapshots, capnotes;
    struct vt_observer obs;
    struct vtr_hmap staged;              /* host address a d2h copy wrote -> (size << 12 | device + 1) */
    /* thread -> stack + 1 and stream of its async d2h copy into pinned memory, until its next
     * call: a synchronisation then makes the host wait for the copy (analysis_copy.c) */
    struct vtr_hmap await_stack, await_stream;
    /* A failed call's record without a stack (a free's), counted first in errors[stackless_err - 1]:
     * the finding the tracer writes next on that thread about it (invalid free) has the stack. */
    size_t stackless_err;
    int64_t stackless_tid;
    struct cell *cells;
    size_t ncells, capcells;
    struct vtr_hmap cell_index;          /* stack << 16 | (device & 0xffff) -> cells index */
    uint32_t *ctouched;                  /* cells changed since their device's last snapshot */
    size_t nctouched, capctouched;
    struct vram_change *changes;         /* every VRAM alloc (+) and free (-), in trace order */
    size_t nchanges, capchanges;
    int changes_lost;                    /* out of memory for the log: no time-combined view */
    /* OOMs not yet retried: their thread has not since allocated the same size and kind (a
     * caching allocator's retry after emptying its cache); the oldest dropped past 4096 */
    struct oom_pending { int64_t tid; uint64_t size, live; uint32_t oom; uint8_t mem; int32_t dev; } *pending;   /* live: the device's */
    size_t npending, cappending;
    struct vt_an_steps *steps;           /* step boundaries seen (analysis_steps.c); NULL until one */
};

/* X + D and T1 - T0 (0 when T1 <= T0), held inside int64: a hostile trace's sizes and times
 * may add up past it. */
static inline int64_t vt_an_add_sat(int64_t x, int64_t d)
{
    int64_t r;
    return __builtin_add_overflow(x, d, &r) ? (d > 0 ? INT64_MAX : INT64_MIN) : r;
}
static inline int64_t vt_an_span(int64_t t0, int64_t t1)
{
    int64_t r;
    return t1 <= t0 ? 0 : __builtin_sub_overflow(t1, t0, &r) ? INT64_MAX : r;
}

#define GROW(arr, n, cap, init) do { if ((n) == (cap)) {                               \
        size_t nc_ = (cap) ? (cap) * 2 : (init);                                       \
        void *na_ = realloc((arr), nc_ * sizeof *(arr));                               \
        if (!na_) return VT_AN_ENOMEM;                                                 \
        (arr) = na_; (cap) = nc_; } } while (0)


/* Interns S in the process's string table; "" when out of memory. */
static inline const char *vt_an_keep(struct vt_proc *p, const char *s)
{
    int64_t id = vtr_strtab_intern(&p->priv->strs, s ? s : "");
    return id < 0 ? "" : vtr_strtab_get(&p->priv->strs, id);
}

/* Shared by the feed's parts (analysis_stacks.c): the id of call stack PCS[N] (interned; <0 out
 * of memory), and a failed call counted by (api, result). */
int vt_an_intern_stack(struct vt_proc *p, const uint64_t *pcs, size_t n);
/* Counts a failed call by (api, result); the first of each keeps its call stack (the site the
 * report names). 0, or VT_AN_ENOMEM. */
int vt_an_add_error(struct vt_proc *p, const struct vt_event *ev);
/* A copy record (analysis_copy.c): 0, or VT_AN_ENOMEM. */
int vt_an_on_copy(struct vt_proc *p, const struct vt_event *ev);
/* EV is a call of a thread that may have an async d2h copy waiting (before vt_an_on_copy). */
void vt_an_await_call(struct vt_proc *p, const struct vt_event *ev);

/* Stream-ordered pool model (analysis_pool.c), per device. */
void vt_an_pool_alloc(struct vt_device *d, uint64_t size, int64_t t);
void vt_an_pool_free(struct vt_device *d, uint64_t size);
void vt_an_pool_sync(struct vt_device *d);
void vt_an_pool_trim(struct vt_device *d, uint64_t keep, int has_after, uint64_t after);

/* Device D's peak snapshot: its cells' live bytes -> snap (analysis_stacks.c). */
void vt_an_device_snapshot(struct vt_proc *p, struct vt_device *d);
/* Copies live per-stack bytes into the peak snapshot (state == the peak) and fixes peak_ranges
 * (analysis_ranges.c: it names the ranges open at the peak). */
void vt_an_snapshot(struct vt_proc *p);

/* NVTX range table (analysis_ranges.c).  Each returns 0 or VT_AN_ENOMEM. */
/* Sets *STAT to the entry of push/pop node NODE's path (computed from the node chain). */
int vt_an_range_node_stat(struct vt_proc *p, uint32_t node, uint32_t *stat);
/* Sets *STAT to the entry named NAME (a start/end range). */
int vt_an_range_named_stat(struct vt_proc *p, const char *name, uint32_t *stat);
/* The range STAT was just opened: its peak sees the current live VRAM. */
void vt_an_range_opened(struct vt_proc *p, uint32_t stat);
/* A VRAM allocation (FREE 0) or free (FREE 1) of SIZE bytes by thread TID; live is current. */
void vt_an_range_account(struct vt_proc *p, int64_t tid, uint64_t size, int free);
/* Builds p->ranges sorted by peak. */
int vt_an_range_finish(struct vt_proc *p);
/* Steps (analysis_steps.c): a `step` record at T; an NVTX range NAME opened or closed by WHO
 * (the thread of a push/pop range, the id of a start/end one) at T; at finish, p->steps. 0 or
 * VT_AN_ENOMEM. */
int vt_an_steps_mark(struct vt_proc *p, int64_t t);
int vt_an_steps_range_open(struct vt_proc *p, const char *name, int64_t who, int64_t t);
void vt_an_steps_range_close(struct vt_proc *p, const char *name, int64_t who, int64_t t);
/* A record applied (the change log was AT0 long before it): followed for a period when it is a
 * call the tracer always writes. */
int vt_an_steps_call(struct vt_proc *p, const struct vt_event *ev, size_t at0);
int vt_an_steps_finish(struct vt_proc *p);
/* p->growth from p->steps (analysis_growth.c), after the sites are made. 0 or VT_AN_ENOMEM. */
int vt_an_growth(struct vt_proc *p);
void vt_an_steps_free(struct vt_proc *p);
/* analysis_sass.c: the note words, settled from the kernels' SASS where nvdisasm is installed
 * (into findings, or gone), the rest folded into p->notes, one per kernel. Before the sites are
 * made (new findings keep their stacks). 0, or VT_AN_ENOMEM. */
int vt_an_settle_notes(struct vt_proc *p);
/* "a > b | c" for thread node NODE and the start/end ranges open now, interned. */
const char *vt_an_ranges_string(struct vt_proc *p, uint32_t node);
/* "a > b > c" for push/pop node NODE into BUF (at most 64 levels, truncated to N). */
void vt_an_node_path(const struct vt_proc *p, uint32_t node, char *buf, size_t n);
#endif
