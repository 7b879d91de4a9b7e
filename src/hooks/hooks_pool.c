/* hooks_pool.c - "real workload" allocation paths: memory-pool trimming, IPC mappings, context
 * push/pop/create (the current device) and peer access. IPC mappings are `ipc_open` records,
 * never `alloc`: a version-1 reader that ignores unknown records then counts them right
 * (docs/trace-format.md). Graphs are hooks_graph.c's. */
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

/* ---- release threshold: the `pool_attr` record (how much freed memory a pool keeps at a sync) -- */
/* The device whose default or current pool POOL is; the current device for a created pool. */
static int pool_device(CUmemoryPool pool, int cur)
{
    typedef CUresult (*count_fn)(int *);
    typedef CUresult (*getpool_fn)(CUmemoryPool *, int);
    count_fn count = (count_fn)vt_real_driver("cuDeviceGetCount");
    getpool_fn def = (getpool_fn)vt_real_driver("cuDeviceGetDefaultMemPool"), now = (getpool_fn)vt_real_driver("cuDeviceGetMemPool");
    int n = 0, dev = cur;
    vt_ts.guard++;
    if (count && count(&n) == CUDA_SUCCESS)
        for (int d = 0; d < n && d < 64 && dev == cur; d++) {
            CUmemoryPool p = NULL;
            if ((def && def(&p, d) == CUDA_SUCCESS && p == pool) || (now && now(&p, d) == CUDA_SUCCESS && p == pool)) dev = d;
        }
    vt_ts.guard--;
    return dev;
}

typedef int (*pool_set_fn)(CUmemoryPool, int, void *);
static int pool_set_impl(void *real, const char *api, int rt, CUmemoryPool pool, int attr, void *v)
{
    VT_CALL_BEGIN(c, api);
    int r;
    if (rt) RT_RUN(r, ((pool_set_fn)real)(pool, attr, v)); else r = ((pool_set_fn)real)(pool, attr, v);
    VT_CALL_END(c, r);
    if (attr == 4 /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, cudaMemPoolAttrReleaseThreshold */ && v) {
        int saved = errno;
        uint64_t keep;
        memcpy(&keep, v, sizeof keep);
        c.dev = pool_device(pool, c.dev);
        vt_ev_pool_threshold(&c, u(pool), keep);
        errno = saved;
    }
    return r;
}
RT_GRAPH_HOOK(cudaMemPoolSetAttribute, pool_set_impl, (cudaMemPool_t pool, int attr, void *v), pool, attr, v)
DRV_GRAPH_HOOK(cuMemPoolSetAttribute, pool_set_impl, (CUmemoryPool pool, int attr, void *v), pool, attr, v)

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
    if (r == CUDA_SUCCESS && !vt_forward_only()) vt_note_current_device();
    return r;
}
DRV_HOOK(cuCtxPushCurrent_v2, push_impl, (CUcontext ctx), ctx)

typedef CUresult (*pop_fn)(CUcontext *);
static CUresult pop_impl(void *real, const char *api, CUcontext *ctx)
{
    CUresult r = ((pop_fn)real)(ctx);
    if (r == CUDA_SUCCESS && !vt_forward_only()) vt_note_current_device();
    return r;
}
DRV_HOOK(cuCtxPopCurrent_v2, pop_impl, (CUcontext *ctx), ctx)

typedef CUresult (*create_v4_fn)(CUcontext *, void *, unsigned int, CUdevice);
static CUresult create_v4_impl(void *real, const char *api, CUcontext *ctx, void *params, unsigned int flags, CUdevice dev)
{
    CUresult r = ((create_v4_fn)real)(ctx, params, flags, dev);
    if (r == CUDA_SUCCESS && !vt_forward_only()) vt_set_current_device(dev);
    return r;
}
DRV_HOOK(cuCtxCreate_v4, create_v4_impl, (CUcontext *ctx, void *params, unsigned int flags, CUdevice dev), ctx, params, flags, dev)

typedef CUresult (*create_v2_fn)(CUcontext *, unsigned int, CUdevice);
static CUresult create_v2_impl(void *real, const char *api, CUcontext *ctx, unsigned int flags, CUdevice dev)
{
    CUresult r = ((create_v2_fn)real)(ctx, flags, dev);
    if (r == CUDA_SUCCESS && !vt_forward_only()) vt_set_current_device(dev);
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
    VT_HOOK_ENTRY(cudaIpcOpenMemHandle, NULL, 0, 0),
    VT_HOOK_ENTRY(cuIpcOpenMemHandle_v2, "cuIpcOpenMemHandle", 11000, 0),
    VT_HOOK_ENTRY(cuIpcOpenMemHandle, "cuIpcOpenMemHandle", 4010, 0),
    VT_HOOK_ENTRY(cudaIpcCloseMemHandle, NULL, 0, 0),
    VT_HOOK_ENTRY(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", 4010, 0),
    VT_HOOK_ENTRY(cudaMemPoolTrimTo, NULL, 0, 0),
    VT_HOOK_ENTRY(cuMemPoolTrimTo, "cuMemPoolTrimTo", 11020, 0),
    VT_HOOK_ENTRY(cudaMemPoolSetAttribute, NULL, 0, 0),
    VT_HOOK_ENTRY(cuMemPoolSetAttribute, "cuMemPoolSetAttribute", 11020, 0),
    VT_HOOK_ENTRY(cuCtxPushCurrent_v2, "cuCtxPushCurrent", 4000, 0),
    VT_HOOK_ENTRY(cuCtxPopCurrent_v2, "cuCtxPopCurrent", 4000, 0),
    VT_HOOK_ENTRY(cuCtxCreate_v4, "cuCtxCreate", 12050, 0),
    VT_HOOK_ENTRY(cuCtxCreate_v2, "cuCtxCreate", 3020, 0),
    VT_HOOK_ENTRY(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", 4000, 0),
    VT_HOOK_ENTRY(cuCtxDisablePeerAccess, "cuCtxDisablePeerAccess", 4000, 0),
    { NULL, NULL, 0, 0, NULL, NULL },
};
