/* events.h - the seam between hooks and the trace: each hook calls the real function, then one of
 * these (heaptrack style). They format one JSON line (docs/trace-format.md) on the stack, keep the
 * registry in step and append the line. The trace file is opened lazily by the first event, so a
 * process that never touches CUDA leaves no file.
 *
 * Invariants: these never call CUDA except where stated (device records, OOM free-bytes query,
 * both with the re-entry guard held), never print except the exit summary and the one-time
 * writer failure notice, and preserve errno.
 */
#ifndef VT_EVENTS_H
#define VT_EVENTS_H
#include <stdatomic.h>
#include <stdint.h>

#include <vramtrace/trace.h>

#include "cuda_abi.h"
#include "kernels.h"

struct vt_call {
    const char *api;
    uint64_t t0;
    uint64_t dur;
    int res;
    int dev;
};
/* Fill a vt_call around the real call: VT_CALL_BEGIN before, VT_CALL_END(res) after. */
#define VT_CALL_BEGIN(c, name) struct vt_call c = { .api = (name), .dev = vt_ts.cur_dev }; c.t0 = vt_now()
/* Durations clamp at 0: a re-anchored clock may step back by a few ns between two reads. */
#define VT_CALL_END(c, r) do { uint64_t vt_t1_ = vt_now(); (c).dur = vt_t1_ > (c).t0 ? vt_t1_ - (c).t0 : 0; (c).res = (int)(r); } while (0)

struct vt_alloc_extra {
    uint64_t stream; int has_stream;
    uint64_t pitch, width, height; /* pitched allocations */
    uint64_t handle; int is_handle; /* VMM physical allocation */
    int graph;                      /* made by a graph allocation node (`"graph":true`) */
};

void vt_ev_alloc(const struct vt_call *c, uint64_t addr, uint64_t size, int mem, const struct vt_alloc_extra *x);

/* Free: begin before the real call (announces the free so a reuse of the memory waits for this
 * free's line), end after (the line, the registry update, the announcement withdrawn). */
struct vt_free_pending {
    int known, is_handle, has_stream;
    int announced; /* vt_registry_free_announce took it (else the range is marked in the map) */
    uint64_t addr, stream;
    struct vt_call call;
    int mem, dev;
    int shard;   /* the registry shard holding the range (vt_registry_free_announce or _begin_free) */
    uint32_t at; /* where it sat there (vt_registry_remove_locked's hint) */
    uint64_t size;
};
void vt_ev_free_begin(struct vt_free_pending *p, const char *api, uint64_t addr, int is_handle, uint64_t stream, int has_stream);
void vt_ev_free_end(struct vt_free_pending *p, int res);

/* copy directions, in vramtrace/trace.h's order (VT_DIR_H2H = 0) */
enum vt_dir {
#define VT_X(id) VT_DIR_##id,
    VT_TRACE_DIRS(VT_X)
#undef VT_X
};
struct vt_copy_extra {
    int async; uint64_t stream;
    int kind;       /* cudaMemcpyKind, -1 for driver copies */
    uint64_t width, height, dpitch, spitch; int is_2d;
    int src_dev;    /* peer copies; -1 otherwise */
};
void vt_ev_copy(const struct vt_call *c, uint64_t dst, uint64_t src, uint64_t size, const struct vt_copy_extra *x);
void vt_ev_set(const struct vt_call *c, uint64_t addr, uint64_t size, int value, int async, uint64_t stream, uint64_t elem);
void vt_ev_map(const struct vt_call *c, int map, uint64_t addr, uint64_t size, uint64_t handle);

/* A launch, around the real call. vt_launch_begin, before it: when the trace is open and k is
 * known, writes the `kernel` record on first use, checks the arguments (so --check=abort stops
 * before a bad kernel runs) and returns 1; then vt_launch_end, after it, writes the `launch`
 * line. 0: nothing to record. `args` is the runtime-style array of pointers to each argument, or
 * NULL with `buf`/`buf_len` for a packed CU_LAUNCH_PARAM_BUFFER_POINTER buffer. The layout must
 * already be resolved (vt_kernel_resolve_layout). Unlike the other events these two leave errno
 * to the caller: the launch hooks keep it once around both halves and the real call. */
int vt_launch_begin(const struct vt_call *c, vt_kernel *k, void **args, const void *buf, uint64_t buf_len);
void vt_launch_end(const struct vt_call *c, vt_kernel *k, vt_dim3 grid, vt_dim3 block, uint64_t shmem, uint64_t stream);
void vt_ev_sync(const struct vt_call *c);
/* Device memory usable by kernels but not this process's VRAM (an opened IPC handle, a graph
 * allocation's address before the graph runs): a record of type `ev` (ipc_open, graph_alloc) and,
 * on success, the range in the registry as `mem` (VT_MEM_IPC / VT_MEM_GRAPH), never counted. */
void vt_ev_region_open(const struct vt_call *c, const char *ev, uint64_t addr, uint64_t size, int mem,
                       const struct vt_alloc_extra *x);
/* ipc_close: before the real call, take the range out of the registry (0: it was not known). */
uint64_t vt_ev_region_close_begin(uint64_t addr);
void vt_ev_region_close(const struct vt_call *c, const char *ev, uint64_t addr, uint64_t size, int mem);
/* cuMemPoolTrimTo / cudaMemPoolTrimTo: the `pool_trim` line (reserved bytes before and after;
 * has_reserved 0 when the driver could not say). */
void vt_ev_pool_trim(const struct vt_call *c, uint64_t pool, uint64_t keep, int has_reserved,
                     uint64_t before, uint64_t after);
void vt_ev_meminfo(const struct vt_call *c, uint64_t free_b, uint64_t total_b);
void vt_ev_range(const char *ev, const char *name, uint64_t id, int has_id);

/* finding kinds, in vramtrace/trace.h's order (the trace's "kind" names) */
enum vt_finding_kind {
#define VT_X(id) VT_F_##id,
    VT_TRACE_FINDINGS(VT_X)
#undef VT_X
    VT_F_COUNT
};
struct vt_finding {
    int kind, error;            /* error: 1 error, 0 warning */
    const char *api;
    vt_kernel *k; int arg; uint64_t offset;
    uint64_t value;
    const char *cls, *mapping;  /* classification of a host value */
    uint64_t alloc_base, alloc_size; int has_alloc;
    const char *why;            /* extra explanation appended to the message, may be NULL */
};
void vt_ev_finding(const struct vt_finding *f);

void vt_emit_module(const char *path, uint64_t base, uint64_t lo, uint64_t hi);
/* Emit the `device` record for dev once (queries the real driver, guard held). */
void vt_ensure_device(int dev);
/* Compute capability of dev as major*10+minor, asking the driver if no record was written yet;
 * 0 when unknown (driver not initialised). */
unsigned vt_device_sm(int dev);
/* Device attribute 88 as recorded (0 when unknown). */
int vt_device_pageable_access(int dev);

/* Lifecycle (tracer.c): opens the trace on first use; 1 when lines can be written. Every event
 * asks, so the settled answer is one inline acquire load; vt_trace_open opens the file (once,
 * under a lock) while the state is still 0. */
extern _Atomic int vt_trace_state; /* 0 not yet, 1 open, -1 failed for good */
int vt_trace_open(void);
static inline int vt_trace_ready(void)
{
    int s = atomic_load_explicit(&vt_trace_state, memory_order_acquire);
    return __builtin_expect(s != 0, 1) ? s > 0 : vt_trace_open();
}
void vt_trace_append(const char *line, uint64_t len);
const char *vt_trace_path(void);
void vt_events_reset_after_fork(void);
/* Exit summary counters. */
uint64_t vt_findings_count(int kind);
#endif
