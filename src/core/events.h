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
#include "emit.h"
#include "findings.h"
#include "kernels.h"
#include "sink.h"

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
/* A device reset (cudaDeviceReset, cuDevicePrimaryCtxReset; C the call, with its result)
 * succeeded: every device, stream-ordered and managed allocation of `dev` is gone. Each is
 * recorded as freed by the call (a free line, and the freed history, so a later use is a use
 * after free), then a `reset` line with how many went and their bytes. VMM handles stay: CUDA
 * ties cuMemCreate memory to no context (cuCtxDestroy's documentation). */
void vt_ev_device_reset(const struct vt_call *c, int dev);

/* copy directions, in vramtrace/trace.h's order (VT_DIR_H2H = 0) */
enum vt_dir {
#define VT_X(id) VT_DIR_##id,
    VT_TRACE_DIRS(VT_X)
#undef VT_X
};
void vt_ev_copy(const struct vt_call *c, uint64_t dst, uint64_t src, uint64_t size, const struct vt_copy_extra *x);
void vt_ev_set(const struct vt_call *c, uint64_t addr, uint64_t size, int value, int async, uint64_t stream, uint64_t elem);
void vt_ev_map(const struct vt_call *c, int map, uint64_t addr, uint64_t size, uint64_t handle);

/* A device/context synchronisation, or (HAS_STREAM) of STREAM. */
void vt_ev_sync(const struct vt_call *c, int has_stream, uint64_t stream);
/* Device memory usable by kernels but not this process's VRAM (an opened IPC handle, a graph
 * allocation's address before the graph runs): a record of type `ev` (ipc_open, graph_alloc) and,
 * on success, the range in the registry as `mem` (VT_MEM_IPC / VT_MEM_GRAPH), never counted. */
void vt_ev_region_open(const struct vt_call *c, const char *ev, uint64_t addr, uint64_t size, int mem,
                       const struct vt_alloc_extra *x);
/* ipc_close: before the real call, take the range out of the registry (0: it was not known). */
uint64_t vt_ev_region_close_begin(uint64_t addr);
void vt_ev_region_close(const struct vt_call *c, const char *ev, uint64_t addr, uint64_t size, int mem);
/* cu/cudaMemPoolSetAttribute(release threshold): the `pool_attr` line (c->dev: the pool's device). */
void vt_ev_pool_threshold(const struct vt_call *c, uint64_t pool, uint64_t keep);
/* cuMemPoolTrimTo / cudaMemPoolTrimTo: the `pool_trim` line (reserved bytes before and after;
 * has_reserved 0 when the driver could not say). */
void vt_ev_pool_trim(const struct vt_call *c, uint64_t pool, uint64_t keep, int has_reserved,
                     uint64_t before, uint64_t after);
void vt_ev_meminfo(const struct vt_call *c, uint64_t free_b, uint64_t total_b);
void vt_ev_range(const char *ev, const char *name, uint64_t id, int has_id);
/* vramtrace_snapshot(): the `snapshot` record (label, the tracer's live VRAM); 1 when written. */
int vt_ev_snapshot(const char *label);
/* vramtrace_pause() (RESUME 0) / vramtrace_resume() (1): the depth after the call, and the
 * `pause`/`resume` record (the outermost resume carries the calls skipped while paused). */
int vt_ev_pause(int resume);
/* vramtrace_step(): the number of this step (1 for the first call in the process) and its `step`
 * record; 0 when no trace is written. */
int vt_ev_step(void);

#endif
