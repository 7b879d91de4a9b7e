/* sim.h - internals of the simulated CUDA driver (libcuda.so.1 stand-in; a TEST FIXTURE).
 *
 * Invariants: one global mutex (sim_lock) guards every table below; no function here calls back
 * into the exported cu* API. Device memory is host memory reserved per device (see sim_mem.c);
 * kernels are never executed, only their arguments are checked (sim_module.c).
 */
#ifndef VT_SIM_H
#define VT_SIM_H

#include <cuda.h>
#include <cudaProfiler.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* exported by libcuda for programs built before CUDA 12.5; CUDA 13's cuda.h no longer declares it */
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);

/* Everything declared below is internal to libcuda.so.1 (cuda.h's cu* prototypes, included
 * above, keep default visibility). */
#pragma GCC visibility push(hidden)

#define SIM_MAX_DEV 64
#define SIM_DRIVER_VERSION 13000

enum sim_kind {
    SIM_K_DEVICE = 1,   /* cuMemAlloc / cuMemAllocPitch */
    SIM_K_ASYNC,        /* cuMemAllocAsync / FromPool */
    SIM_K_VMM,          /* a cuMemMap'ed range */
    SIM_K_MANAGED,      /* cuMemAllocManaged */
    SIM_K_PINNED,       /* cuMemHostAlloc / cuMemAllocHost */
    SIM_K_REGISTERED,   /* cuMemHostRegister */
    SIM_K_IPC,          /* cuIpcOpenMemHandle mapping (bytes belong to the exporter) */
};
#define SIM_F_NOACCESS 0x1u     /* SIM_K_VMM: mapped, cuMemSetAccess not called yet */
#define SIM_F_GRAPH    0x2u     /* SIM_K_ASYNC: a graph allocation (the graph owns the address) */

/* One live range in the address registry. */
typedef struct sim_region {
    uintptr_t base;
    size_t size;      /* bytes the caller asked for (>= 1) */
    size_t reserved;  /* bytes taken from the allocator (aligned) */
    int kind;         /* enum sim_kind */
    int dev;          /* owning device (-1: host memory, any) */
    unsigned flags;   /* host-alloc / register flags */
    void *pool;       /* SIM_K_ASYNC: the pool it came from; SIM_K_VMM: the physical handle */
    uint64_t id;      /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
} sim_region;

typedef struct sim_ctx {
    int magic;
    int dev;
    int refs;        /* primary-context retain count */
    unsigned flags;
    CUresult sticky; /* CUDA_ERROR_ILLEGAL_ADDRESS after a bad launch, else CUDA_SUCCESS */
} sim_ctx;

typedef struct sim_device {
    uintptr_t lo, hi;      /* reserved VA range: inaccessible from the host, like CUDA's */
    uintptr_t view;        /* where the sim itself reads and writes the range's bytes */
    size_t capacity;       /* simulated VRAM */
    size_t used;           /* device + async-pool + vmm physical bytes */
    sim_ctx primary;
    void *default_pool;    /* created on first use (sim_drv_ext.c) */
    void *cur_pool;        /* cuDeviceSetMemPool; NULL = default_pool */
    int peer_enabled[SIM_MAX_DEV];
} sim_device;

extern pthread_mutex_t sim_lock;
extern int sim_ndev;
extern sim_device sim_devs[SIM_MAX_DEV];
extern int sim_pageable;            /* VRAMTRACE_SIM_PAGEABLE=1 */
extern int sim_no_paraminfo;        /* VRAMTRACE_SIM_NO_PARAMINFO=1 */
extern int sim_verbose;             /* VRAMTRACE_SIM_VERBOSE=1 */
extern uintptr_t sim_managed_lo, sim_managed_hi;

/* sim_layout.c: parameter layouts read from an image by the sim's own reader (never the tracer's
 * parser), and which argument words each kernel dereferences */
#define SIM_MAX_DEREF 64
typedef struct { uint32_t off, size; } sim_param;
typedef struct sim_kfunc {
    char *name;
    uint32_t n, cap;        /* parameters, by ordinal */
    sim_param *p;
    struct sim_kfunc *next;
} sim_kfunc;
sim_kfunc *sim_layouts_read(const void *image); /* NULL: no kernel found */
const sim_kfunc *sim_layout_find(const sim_kfunc *list, const char *name);
void sim_layouts_free(sim_kfunc *list);
/* module variables (__device__, __constant__, __managed__) the image declares; the driver gives
 * each device memory on its first cuModuleGetGlobal (addr, reg: sim_module.c's) */
typedef struct sim_global {
    char *name;
    size_t size;
    uintptr_t addr;
    struct sim_region *reg;
    struct sim_global *next;
} sim_global;
sim_global *sim_globals_read(const void *image); /* NULL: none */
void sim_globals_free(sim_global *list);
void sim_deref_init(void);  /* VRAMTRACE_SIM_DEREF; called once from sim_init */
/* The argument-buffer offsets of the 8-byte words kernel `name` (layout `k`, may be NULL) reads
 * as addresses, at most max of them; returns how many. */
int sim_deref_words(const char *name, const sim_kfunc *k, uint32_t *offs, int max);

/* sim_mem.c */
void sim_mem_init(void);   /* reserve ranges; called once from sim_init */
/* Take `size` bytes of address space in device `dev`'s range (or the managed range when dev < 0).
 * Returns 0 when the range is exhausted. Caller holds sim_lock. */
uintptr_t sim_va_alloc(int dev, size_t size, size_t align);
void sim_va_free(int dev, uintptr_t addr, size_t size);
/* Registry (caller holds sim_lock). */
sim_region *sim_region_add(uintptr_t base, size_t size, size_t reserved, int kind, int dev);
sim_region *sim_region_find(uintptr_t p);           /* region containing p, or NULL */
sim_region *sim_region_exact(uintptr_t base);       /* region starting at base, or NULL */
void sim_region_remove(sim_region *r);
size_t sim_region_count(void);
sim_region *sim_region_at(size_t i);
/* Which device's reserved range holds p (-1 if none). */
int sim_dev_of_range(uintptr_t p);
/* The address at which the sim touches the bytes of p: device memory through its private view
 * (the device address itself is never host-accessible), anything else as is. */
void *sim_view(uintptr_t p);
/* Classify a word passed to a kernel: 0 fine (not a pointer, or valid memory), 1 host pointer,
 * 2 device-range address outside any live allocation. Caller holds sim_lock. */
/* What a kernel on device `dev` finds at v: 0 fine, 1 host memory it cannot reach, 2 no memory
 * it may use (unallocated, inaccessible VMM, another device's without peer access). */
int sim_classify_kernel_word(uint64_t v, int dev);
/* Valid device-accessible byte range [p, p+n)? (device/async/vmm/managed, or pinned/registered). */
int sim_range_ok(uintptr_t p, size_t n, int allow_host_regions);
void sim_release_device_memory(int dev); /* frees every device/async/managed range of dev */

/* sim_driver.c */
CUresult sim_init_check(void);              /* CUDA_ERROR_NOT_INITIALIZED before cuInit */
CUresult sim_cur_ctx(sim_ctx **out);        /* current ctx + its sticky error */
sim_ctx *sim_swap_ctx(sim_ctx *c);          /* makes c the thread's current ctx; returns the old one */
sim_ctx *sim_stream_ctx(CUstream s);        /* a created stream's ctx; NULL for default or invalid streams */
int sim_is_default_stream(CUstream s);
CUresult sim_stream_check(CUstream s, sim_ctx **ctx); /* valid stream, ctx sticky check */
uint64_t sim_now_ns(void);
size_t sim_parse_size(const char *s, size_t dflt);

/* sim_drv_ext.c: pools, VMM, IPC (caller holds sim_lock unless stated). */
void sim_pool_free(sim_region *r);       /* an async region back to its pool (stays reserved) */
void sim_pools_sync(int dev);            /* sync point: trim pools of dev to their release threshold */
void sim_pools_reset(int dev);           /* device reset: release every cached pool block */
/* Graph memory nodes: a graph allocation's address is reserved at capture, memory exists
 * from the alloc node's execution to the free node's (or a later cuMemFree[Async]). */
CUresult sim_graph_va(int dev, size_t size, uintptr_t *out, size_t *reserved);
CUresult sim_graph_mem_alloc(uintptr_t base, size_t size, size_t reserved, int dev);
void sim_graph_mem_free(uintptr_t base);

/* Stream capture (sim_graph.c): when the stream is capturing, record the op and return 1. */
struct sim_op;
int sim_capture_op(CUstream s, const struct sim_op *op);
typedef struct sim_op {
    int type;           /* 1 copy, 2 memset, 3 kernel, 4 graph mem alloc, 5 graph mem free, 6 conditional */
    void *dst; const void *src; size_t n;   /* copy (rows > 1: ROWS rows of n bytes, pitches apart) */
    size_t rows, dpitch, spitch;
    unsigned value; unsigned elem;           /* memset: value, element size */
    CUfunction f; void **params; void *argbuf; size_t argsize; /* kernel (params: GetParams' view, owned) */
    unsigned grid[3], block[3], shmem;      /* kernel */
    int dev; size_t reserved;               /* graph mem alloc: dst = address, n = size */
    struct CUgraph_st **bodies; unsigned long long cond; int cond_type; /* 6 conditional: n bodies */
} sim_op;
void sim_replay_op(const sim_op *op);
/* sim_graph.c: the graph stream s is capturing into (NULL: none); s joins the capture building g
 * (an event recorded in it, waited on: cross-stream capture). */
CUgraph sim_capture_graph(CUstream s);
/* cuStreamUpdateCaptureDependencies: the stream's dependencies set to (add 0) or joined with
 * (add 1) DEPS; only a single node is kept as such (more: none is). */
CUresult sim_capture_set_deps(CUstream s, const CUgraphNode *deps, size_t n, int add);
CUresult sim_capture_join(CUstream s, CUgraph g);
/* An uncapturable call on capturing stream s: its capture ends in CUDA_ERROR_STREAM_CAPTURE_INVALIDATED. */
void sim_capture_invalidate(CUstream s);
int sim_stream_dev(CUstream s);
CUresult sim_dev_alloc(int dev, size_t size, int kind, uintptr_t *out, sim_region **reg);
void sim_dev_free(sim_region *r);
CUresult sim_launch_check(CUfunction f, void **params, const void *argbuf, size_t argsize);
CUresult sim_node_args(CUfunction f, void **params, void **extra, void **out, size_t *len);
/* kernelParams for a node's flattened arguments: one pointer per parameter into argbuf (a new
 * array the caller owns); NULL when f has no layout or out of memory. */
void **sim_param_ptrs(CUfunction f, void *argbuf, size_t argsize);

long sim_event_flags(CUevent e); /* the flags it was created with; -1: not an event */

/* Export `target` under a second name too (e.g. the _ptsz / legacy spelling). The name is
 * stringized, so names that cuda.h #defines to another spelling still work. */
#define SIM_CAT_(a, b) a##b
#define SIM_CAT(a, b) SIM_CAT_(a, b)
#define SIM_ALIAS_(target, name, id) \
    extern __typeof__(target) id __asm__(name) __attribute__((alias(#target), visibility("default")))
#define SIM_ALIAS(target, name) SIM_ALIAS_(target, #name, SIM_CAT(sim_alias_, __COUNTER__))

#pragma GCC visibility pop
#endif
