/* hooks_pool.c - "real workload" allocation paths: memory-pool trimming, IPC mappings, graph
 * memory nodes (stream capture, explicit nodes, launches) and context push/pop/create (the
 * current device). IPC mappings and not-yet-run graph allocations are `ipc_open` / `graph_alloc`
 * records, never `alloc`: a version-1 reader that ignores unknown records then counts them right. See hooks_pool.h for the graph model, docs/trace-format.md for the records. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "cuda_abi.h"
#include "check.h"
#include "events.h"
#include "hooks_pool.h"
#include "registry.h"
#include "resolve.h"
#include "tracer.h"
#include "hooks_common.h"

#define u vt_u64

/* ---- graph node sets, keyed by capturing stream, graph or exec ------------------------------ */
struct gnode { int is_free; uint64_t addr, size; int dev; };
struct gset { const void *key; struct gnode *n; size_t cnt, cap; };
#define VT_GSETS 256
static struct gset gsets[VT_GSETS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static struct gset *gset_find(const void *key, int create)
{
    struct gset *empty = NULL;
    for (int i = 0; i < VT_GSETS; i++) {
        if (gsets[i].key == key) return &gsets[i];
        if (!gsets[i].key && !empty) empty = &gsets[i];
    }
    if (create && empty) empty->key = key;
    return create ? empty : NULL;
}

static void gset_add(const void *key, int is_free, uint64_t addr, uint64_t size, int dev)
{
    pthread_mutex_lock(&g_lock);
    struct gset *s = gset_find(key, 1);
    if (s && s->cnt == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 8;
        struct gnode *nn = realloc(s->n, nc * sizeof *nn);
        if (nn) { s->n = nn; s->cap = nc; }
    }
    if (s && s->cnt < s->cap) s->n[s->cnt++] = (struct gnode){ is_free, addr, size, dev };
    pthread_mutex_unlock(&g_lock);
}

static void gset_drop(const void *key)
{
    pthread_mutex_lock(&g_lock);
    struct gset *s = gset_find(key, 0);
    if (s) { free(s->n); memset(s, 0, sizeof *s); }
    pthread_mutex_unlock(&g_lock);
}

/* move (capture -> graph) or copy (graph -> exec) a node set */
static void gset_transfer(const void *from, const void *to, int move)
{
    if (!from || !to) return;
    pthread_mutex_lock(&g_lock);
    struct gset *s = gset_find(from, 0);
    if (s && s->cnt) {
        struct gset *d = gset_find(to, 1);
        struct gnode *copy = d ? malloc(s->cnt * sizeof *copy) : NULL;
        if (copy) {
            memcpy(copy, s->n, s->cnt * sizeof *copy);
            free(d->n);
            d->n = copy;
            d->cnt = d->cap = s->cnt;
        }
    }
    if (s && move) { free(s->n); memset(s, 0, sizeof *s); }
    pthread_mutex_unlock(&g_lock);
}

int vt_stream_capturing(uint64_t stream)
{
    typedef CUresult (*cap_fn)(CUstream, int *);
    cap_fn q = (cap_fn)vt_real_driver("cuStreamIsCapturing");
    if (!q || !stream) return 0; /* the legacy default stream cannot capture */
    int st = 0, saved = errno;
    vt_ts.guard++;
    CUresult r = q((CUstream)(uintptr_t)stream, &st);
    vt_ts.guard--;
    errno = saved;
    return r == CUDA_SUCCESS && st == 1 /* CU_STREAM_CAPTURE_STATUS_ACTIVE */;
}

void vt_graph_capture_alloc(uint64_t stream, uint64_t addr, uint64_t size, int dev)
{ gset_add((const void *)(uintptr_t)stream, 0, addr, size, dev); }
void vt_graph_capture_free(uint64_t stream, uint64_t addr)
{ gset_add((const void *)(uintptr_t)stream, 1, addr, 0, -1); }

/* A graph ran: its allocation nodes' memory now exists, its free nodes' is gone. */
static void graph_launched(const char *api, const void *exec, uint64_t stream)
{
    pthread_mutex_lock(&g_lock);
    struct gset *s = gset_find(exec, 0);
    size_t n = s ? s->cnt : 0;
    struct gnode *nodes = n ? malloc(n * sizeof *nodes) : NULL;
    if (nodes) memcpy(nodes, s->n, n * sizeof *nodes);
    pthread_mutex_unlock(&g_lock);
    for (size_t i = 0; nodes && i < n; i++) {
        if (!nodes[i].is_free) {
            vt_alloc_info a;
            if (vt_registry_lookup(nodes[i].addr, &a) == 0 && a.mem == VT_MEM_ASYNC && a.base == nodes[i].addr)
                continue; /* still live from an earlier launch */
            VT_CALL_BEGIN(c, api);
            c.dev = nodes[i].dev;
            VT_CALL_END(c, 0);
            struct vt_alloc_extra x = { .stream = stream, .has_stream = 1, .graph = 1 };
            vt_ev_alloc(&c, nodes[i].addr, nodes[i].size, VT_MEM_ASYNC, &x);
        } else {
            struct vt_free_pending fp;
            vt_ev_free_begin(&fp, api, nodes[i].addr, 0, stream, 1);
            vt_ev_free_end(&fp, 0);
        }
    }
    free(nodes);
}

/* ---- graph hooks: runtime (records) and driver (records unless reached from the runtime) ---- */
#define RT_BEGIN(fn, real) vt_init(); __typeof__(&fn) real = VT_REAL(fn); if (!real) return cudaErrorNotSupported
#define RT_NESTED() (vt_forward_only() || vt_in_runtime())
#define RT_RUN(r, call) do { vt_ts.rt_depth++; r = call; vt_ts.rt_depth--; } while (0)

typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
/* CUDA_MEM_ALLOC_NODE_PARAMS (v1) == struct cudaMemAllocNodeParams: the fields the tracer reads */
typedef struct {
    struct { int allocType, handleTypes; struct { int type, id; } location; void *win32; size_t maxSize;
             unsigned short usage; unsigned char reserved[54]; } poolProps;
    const void *accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    CUdeviceptr dptr;
} vt_mem_alloc_node_params;

typedef int (*end_capture_fn)(CUstream, CUgraph *);
static int end_capture_impl(void *real, const char *api, int rt, CUstream s, CUgraph *g)
{
    int r;
    if (rt) RT_RUN(r, ((end_capture_fn)real)(s, g)); else r = ((end_capture_fn)real)(s, g);
    if (r == 0 && g && *g) gset_transfer(s, *g, 1);
    else gset_drop(s);
    return r;
}
#define RT_GRAPH_HOOK(fn, impl, params, ...) \
    VT_REAL_SLOT(fn); \
    cudaError_t fn params { RT_BEGIN(fn, real); \
                            if (RT_NESTED()) return real(__VA_ARGS__); \
                            return impl((void *)real, #fn, 1, __VA_ARGS__); }
#define DRV_GRAPH_HOOK(fn, impl, params, ...) \
    VT_REAL_SLOT(fn); \
    CUresult fn params { vt_init(); __typeof__(&fn) real = VT_REAL(fn); \
                         if (!real) return CUDA_ERROR_NOT_SUPPORTED; \
                         if (DRV_SKIP()) return real(__VA_ARGS__); \
                         return impl((void *)real, #fn, 0, __VA_ARGS__); }
RT_GRAPH_HOOK(cudaStreamEndCapture, end_capture_impl, (cudaStream_t s, CUgraph *g), s, g)
RT_GRAPH_HOOK(cudaStreamEndCapture_ptsz, end_capture_impl, (cudaStream_t s, CUgraph *g), s, g)
DRV_GRAPH_HOOK(cuStreamEndCapture, end_capture_impl, (CUstream s, CUgraph *g), s, g)
DRV_GRAPH_HOOK(cuStreamEndCapture_ptsz, end_capture_impl, (CUstream s, CUgraph *g), s, g)

typedef int (*instantiate_fn)(CUgraphExec *, CUgraph, unsigned long long);
static int instantiate_impl(void *real, const char *api, int rt, CUgraphExec *e, CUgraph g, unsigned long long f)
{
    int r;
    if (rt) RT_RUN(r, ((instantiate_fn)real)(e, g, f)); else r = ((instantiate_fn)real)(e, g, f);
    if (r == 0 && e && *e) gset_transfer(g, *e, 0);
    return r;
}
RT_GRAPH_HOOK(cudaGraphInstantiate, instantiate_impl, (CUgraphExec *e, CUgraph g, unsigned long long f), e, g, f)
RT_GRAPH_HOOK(cudaGraphInstantiateWithFlags, instantiate_impl, (CUgraphExec *e, CUgraph g, unsigned long long f), e, g, f)
DRV_GRAPH_HOOK(cuGraphInstantiateWithFlags, instantiate_impl, (CUgraphExec *e, CUgraph g, unsigned long long f), e, g, f)

typedef int (*graph_launch_fn)(CUgraphExec, CUstream);
static int graph_launch_impl(void *real, const char *api, int rt, CUgraphExec e, CUstream s)
{
    int r;
    if (rt) RT_RUN(r, ((graph_launch_fn)real)(e, s)); else r = ((graph_launch_fn)real)(e, s);
    if (r == 0) graph_launched(api, e, u(s));
    return r;
}
RT_GRAPH_HOOK(cudaGraphLaunch, graph_launch_impl, (CUgraphExec e, cudaStream_t s), e, s)
RT_GRAPH_HOOK(cudaGraphLaunch_ptsz, graph_launch_impl, (CUgraphExec e, cudaStream_t s), e, s)
DRV_GRAPH_HOOK(cuGraphLaunch, graph_launch_impl, (CUgraphExec e, CUstream s), e, s)
DRV_GRAPH_HOOK(cuGraphLaunch_ptsz, graph_launch_impl, (CUgraphExec e, CUstream s), e, s)

typedef int (*destroy_fn)(void *);
static int destroy_impl(void *real, const char *api, int rt, void *obj)
{
    int r;
    if (rt) RT_RUN(r, ((destroy_fn)real)(obj)); else r = ((destroy_fn)real)(obj);
    if (r == 0) gset_drop(obj);
    return r;
}
RT_GRAPH_HOOK(cudaGraphDestroy, destroy_impl, (CUgraph g), g)
RT_GRAPH_HOOK(cudaGraphExecDestroy, destroy_impl, (CUgraphExec e), e)
DRV_GRAPH_HOOK(cuGraphDestroy, destroy_impl, (CUgraph g), g)
DRV_GRAPH_HOOK(cuGraphExecDestroy, destroy_impl, (CUgraphExec e), e)

typedef int (*add_alloc_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, vt_mem_alloc_node_params *);
static int add_alloc_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                          size_t nd, vt_mem_alloc_node_params *p)
{
    VT_CALL_BEGIN(c, api);
    if (p && p->poolProps.location.type == 1 /* CU_MEM_LOCATION_TYPE_DEVICE */) c.dev = p->poolProps.location.id;
    int r;
    if (rt) RT_RUN(r, ((add_alloc_fn)real)(node, g, deps, nd, p)); else r = ((add_alloc_fn)real)(node, g, deps, nd, p);
    VT_CALL_END(c, r);
    if (!p) return r;
    vt_ev_region_open(&c, VT_EVN_GRAPH_ALLOC, r == 0 ? p->dptr : 0, p->bytesize, VT_MEM_GRAPH, NULL);
    if (r == 0) gset_add(g, 0, p->dptr, p->bytesize, c.dev);
    return r;
}
RT_GRAPH_HOOK(cudaGraphAddMemAllocNode, add_alloc_impl,
              (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, vt_mem_alloc_node_params *p), n, g, d, nd, p)
DRV_GRAPH_HOOK(cuGraphAddMemAllocNode, add_alloc_impl,
               (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, vt_mem_alloc_node_params *p), n, g, d, nd, p)

typedef int (*add_free_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, uint64_t);
static int add_free_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                         size_t nd, uint64_t p)
{
    int r;
    if (rt) RT_RUN(r, ((add_free_fn)real)(node, g, deps, nd, p)); else r = ((add_free_fn)real)(node, g, deps, nd, p);
    if (r == 0) gset_add(g, 1, p, 0, -1);
    return r;
}
VT_REAL_SLOT(cudaGraphAddMemFreeNode);
cudaError_t cudaGraphAddMemFreeNode(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, void *p)
{
    RT_BEGIN(cudaGraphAddMemFreeNode, real);
    if (RT_NESTED()) return real(n, g, d, nd, p);
    return add_free_impl((void *)real, "cudaGraphAddMemFreeNode", 1, n, g, d, nd, u(p));
}
DRV_GRAPH_HOOK(cuGraphAddMemFreeNode, add_free_impl,
               (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, CUdeviceptr p), n, g, d, nd, p)

/* ---- IPC: an opened handle maps another process's memory (mem "ipc", never counted) --------- */
typedef struct { char reserved[64]; } vt_ipc_handle;

static uint64_t range_size(uint64_t p)
{
    typedef CUresult (*range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);
    range_fn q = (range_fn)vt_real_driver("cuMemGetAddressRange_v2");
    CUdeviceptr base = 0;
    size_t size = 0;
    vt_ts.guard++;
    CUresult r = q ? q(&base, &size, (CUdeviceptr)p) : CUDA_ERROR_NOT_SUPPORTED;
    vt_ts.guard--;
    return r == CUDA_SUCCESS ? size : 0;
}

typedef int (*ipc_open_fn)(CUdeviceptr *, vt_ipc_handle, unsigned int);
static int ipc_open_impl(void *real, const char *api, int rt, CUdeviceptr *p, vt_ipc_handle h, unsigned int f)
{
    VT_CALL_BEGIN(c, api);
    int r;
    if (rt) RT_RUN(r, ((ipc_open_fn)real)(p, h, f)); else r = ((ipc_open_fn)real)(p, h, f);
    VT_CALL_END(c, r);
    uint64_t a = r == 0 && p ? *p : 0;
    vt_ev_region_open(&c, VT_EVN_IPC_OPEN, a, a ? range_size(a) : 0, VT_MEM_IPC, NULL);
    return r;
}
VT_REAL_SLOT(cudaIpcOpenMemHandle);
cudaError_t cudaIpcOpenMemHandle(void **p, vt_ipc_handle h, unsigned int f)
{
    RT_BEGIN(cudaIpcOpenMemHandle, real);
    if (RT_NESTED()) return real(p, h, f);
    return ipc_open_impl((void *)real, "cudaIpcOpenMemHandle", 1, (CUdeviceptr *)p, h, f);
}
DRV_GRAPH_HOOK(cuIpcOpenMemHandle_v2, ipc_open_impl, (CUdeviceptr *p, vt_ipc_handle h, unsigned int f), p, h, f)
DRV_GRAPH_HOOK(cuIpcOpenMemHandle, ipc_open_impl, (CUdeviceptr *p, vt_ipc_handle h, unsigned int f), p, h, f)

typedef int (*ipc_close_fn)(CUdeviceptr);
static int ipc_close_impl(void *real, const char *api, int rt, CUdeviceptr p)
{
    uint64_t size = vt_ev_region_close_begin(p);
    VT_CALL_BEGIN(c, api);
    int r;
    if (rt) RT_RUN(r, ((ipc_close_fn)real)(p)); else r = ((ipc_close_fn)real)(p);
    VT_CALL_END(c, r);
    vt_ev_region_close(&c, VT_EVN_IPC_CLOSE, p, size, VT_MEM_IPC);
    return r;
}
VT_REAL_SLOT(cudaIpcCloseMemHandle);
cudaError_t cudaIpcCloseMemHandle(void *p)
{
    RT_BEGIN(cudaIpcCloseMemHandle, real);
    if (RT_NESTED()) return real(p);
    return ipc_close_impl((void *)real, "cudaIpcCloseMemHandle", 1, u(p));
}
DRV_GRAPH_HOOK(cuIpcCloseMemHandle, ipc_close_impl, (CUdeviceptr p), p)

/* ---- pool trimming: the `pool_trim` record, with the pool's reservation around the call ----- */
static int pool_reserved(CUmemoryPool pool, uint64_t *out)
{
    typedef CUresult (*attr_fn)(CUmemoryPool, int, void *);
    attr_fn q = (attr_fn)vt_real_driver("cuMemPoolGetAttribute");
    unsigned long long v = 0;
    vt_ts.guard++;
    CUresult r = q ? q(pool, 5 /* CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT */, &v) : CUDA_ERROR_NOT_SUPPORTED;
    vt_ts.guard--;
    *out = v;
    return r == CUDA_SUCCESS;
}

typedef int (*trim_fn)(CUmemoryPool, size_t);
static int trim_impl(void *real, const char *api, int rt, CUmemoryPool pool, size_t keep)
{
    uint64_t before = 0, after = 0;
    int saved = errno;
    int known = pool_reserved(pool, &before);
    errno = saved;
    VT_CALL_BEGIN(c, api);
    int r;
    if (rt) RT_RUN(r, ((trim_fn)real)(pool, keep)); else r = ((trim_fn)real)(pool, keep);
    VT_CALL_END(c, r);
    saved = errno;
    known = known && pool_reserved(pool, &after);
    errno = saved;
    vt_ev_pool_trim(&c, u(pool), keep, known, before, after);
    return r;
}
RT_GRAPH_HOOK(cudaMemPoolTrimTo, trim_impl, (cudaMemPool_t pool, size_t keep), pool, keep)
DRV_GRAPH_HOOK(cuMemPoolTrimTo, trim_impl, (CUmemoryPool pool, size_t keep), pool, keep)

/* ---- contexts: keep the thread's current device (the `dev` of events) in step --------------- */
void vt_note_current_device(void)
{
    typedef CUresult (*getdev_fn)(CUdevice *);
    getdev_fn getdev = (getdev_fn)vt_real_driver("cuCtxGetDevice");
    CUdevice d;
    int saved = errno;
    vt_ts.guard++;
    if (getdev && getdev(&d) == CUDA_SUCCESS) vt_set_current_device(d);
    vt_ts.guard--;
    errno = saved;
}

typedef CUresult (*push_fn)(CUcontext);
static CUresult push_impl(void *real, const char *api, CUcontext ctx)
{
    CUresult r = ((push_fn)real)(ctx);
    if (r == CUDA_SUCCESS && vt_cfg.enabled && vt_ts.guard == 0) vt_note_current_device();
    return r;
}
DRV_HOOK(cuCtxPushCurrent_v2, push_impl, (CUcontext ctx), ctx)

typedef CUresult (*pop_fn)(CUcontext *);
static CUresult pop_impl(void *real, const char *api, CUcontext *ctx)
{
    CUresult r = ((pop_fn)real)(ctx);
    if (r == CUDA_SUCCESS && vt_cfg.enabled && vt_ts.guard == 0) vt_note_current_device();
    return r;
}
DRV_HOOK(cuCtxPopCurrent_v2, pop_impl, (CUcontext *ctx), ctx)

typedef CUresult (*create_v4_fn)(CUcontext *, void *, unsigned int, CUdevice);
static CUresult create_v4_impl(void *real, const char *api, CUcontext *ctx, void *params, unsigned int flags, CUdevice dev)
{
    CUresult r = ((create_v4_fn)real)(ctx, params, flags, dev);
    if (r == CUDA_SUCCESS && vt_cfg.enabled && vt_ts.guard == 0) vt_set_current_device(dev);
    return r;
}
DRV_HOOK(cuCtxCreate_v4, create_v4_impl, (CUcontext *ctx, void *params, unsigned int flags, CUdevice dev), ctx, params, flags, dev)

typedef CUresult (*create_v2_fn)(CUcontext *, unsigned int, CUdevice);
static CUresult create_v2_impl(void *real, const char *api, CUcontext *ctx, unsigned int flags, CUdevice dev)
{
    CUresult r = ((create_v2_fn)real)(ctx, flags, dev);
    if (r == CUDA_SUCCESS && vt_cfg.enabled && vt_ts.guard == 0) vt_set_current_device(dev);
    return r;
}
DRV_HOOK(cuCtxCreate_v2, create_v2_impl, (CUcontext *ctx, unsigned int flags, CUdevice dev), ctx, flags, dev)

/* ---- peer access: kernels on this device may use the peer's memory -------------------------- */
int vt_device_of_ctx(void *ctx)
{
    typedef CUresult (*getdev2_fn)(CUdevice *, CUcontext);
    getdev2_fn get = (getdev2_fn)vt_real_driver("cuCtxGetDevice_v2"); /* CUDA 13 */
    CUdevice d = -1;
    vt_ts.guard++;
    if (!get || get(&d, (CUcontext)ctx) != CUDA_SUCCESS) d = -1; /* unknown: taken as every device */
    vt_ts.guard--;
    return d;
}

typedef CUresult (*peer_on_fn)(CUcontext, unsigned int);
static CUresult peer_on_impl(void *real, const char *api, CUcontext peer, unsigned int flags)
{
    CUresult r = ((peer_on_fn)real)(peer, flags);
    if ((r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) && vt_cfg.enabled) {
        VT_SAVE_ERRNO;
        vt_peer_access_set(vt_ts.cur_dev, vt_device_of_ctx(peer), 1);
        VT_RESTORE_ERRNO;
    }
    return r;
}
DRV_HOOK(cuCtxEnablePeerAccess, peer_on_impl, (CUcontext peer, unsigned int flags), peer, flags)

typedef CUresult (*peer_off_fn)(CUcontext);
static CUresult peer_off_impl(void *real, const char *api, CUcontext peer)
{
    CUresult r = ((peer_off_fn)real)(peer);
    if (r == CUDA_SUCCESS && vt_cfg.enabled) {
        VT_SAVE_ERRNO;
        int d = vt_device_of_ctx(peer);
        if (d >= 0) vt_peer_access_set(vt_ts.cur_dev, d, 0);
        vt_registry_invalidate_all(); /* cached answers for the peer's memory held while it was reachable */
        VT_RESTORE_ERRNO;
    }
    return r;
}
DRV_HOOK(cuCtxDisablePeerAccess, peer_off_impl, (CUcontext peer), peer)

const struct vt_hook vt_hooks_pool[] = {
    VT_HOOK_ENTRY(cudaStreamEndCapture, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaStreamEndCapture_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cuStreamEndCapture, "cuStreamEndCapture", 10000, 0),
    VT_HOOK_ENTRY(cuStreamEndCapture_ptsz, "cuStreamEndCapture", 10000, 1),
    VT_HOOK_ENTRY(cudaGraphInstantiate, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphInstantiateWithFlags, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphInstantiateWithFlags, "cuGraphInstantiate", 11040, 0),
    VT_HOOK_ENTRY(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 11040, 0),
    VT_HOOK_ENTRY(cudaGraphLaunch, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphLaunch_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphLaunch, "cuGraphLaunch", 10000, 0),
    VT_HOOK_ENTRY(cuGraphLaunch_ptsz, "cuGraphLaunch", 10000, 1),
    VT_HOOK_ENTRY(cudaGraphDestroy, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphExecDestroy, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphDestroy, "cuGraphDestroy", 10000, 0),
    VT_HOOK_ENTRY(cuGraphExecDestroy, "cuGraphExecDestroy", 10000, 0),
    VT_HOOK_ENTRY(cudaGraphAddMemAllocNode, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphAddMemAllocNode, "cuGraphAddMemAllocNode", 11040, 0),
    VT_HOOK_ENTRY(cudaGraphAddMemFreeNode, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphAddMemFreeNode, "cuGraphAddMemFreeNode", 11040, 0),
    VT_HOOK_ENTRY(cudaIpcOpenMemHandle, NULL, 0, 0),
    VT_HOOK_ENTRY(cuIpcOpenMemHandle_v2, "cuIpcOpenMemHandle", 11000, 0),
    VT_HOOK_ENTRY(cuIpcOpenMemHandle, "cuIpcOpenMemHandle", 4010, 0),
    VT_HOOK_ENTRY(cudaIpcCloseMemHandle, NULL, 0, 0),
    VT_HOOK_ENTRY(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", 4010, 0),
    VT_HOOK_ENTRY(cudaMemPoolTrimTo, NULL, 0, 0),
    VT_HOOK_ENTRY(cuMemPoolTrimTo, "cuMemPoolTrimTo", 11020, 0),
    VT_HOOK_ENTRY(cuCtxPushCurrent_v2, "cuCtxPushCurrent", 4000, 0),
    VT_HOOK_ENTRY(cuCtxPopCurrent_v2, "cuCtxPopCurrent", 4000, 0),
    VT_HOOK_ENTRY(cuCtxCreate_v4, "cuCtxCreate", 12050, 0),
    VT_HOOK_ENTRY(cuCtxCreate_v2, "cuCtxCreate", 3020, 0),
    VT_HOOK_ENTRY(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", 4000, 0),
    VT_HOOK_ENTRY(cuCtxDisablePeerAccess, "cuCtxDisablePeerAccess", 4000, 0),
    { NULL, NULL, 0, 0, NULL, NULL },
};
