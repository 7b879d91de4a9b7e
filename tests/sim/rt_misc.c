/* rt_misc.c - simulated runtime calls frameworks make around their work (issue 46): stream
 * priorities and capture bookkeeping, host functions and callbacks, IPC events, user objects,
 * graph-memory attributes, managed-memory hints, P2P attributes, the profiler switches. Each
 * forwards to its driver entry point, as CUDA's runtime does. Test fixture. */
#include "rt.h"

#include <cuda_profiler_api.h>
#include <string.h>

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    RT_ENTER();
    RT_CALL(rt_d.cuCtxGetStreamPriorityRange(least, greatest));
}

#define PAIR(ret, name, params, call) \
    ret name params { RT_ENTER(); const rt_driver *d = &rt_d; RT_CALL(call); } \
    ret name##_ptsz params { RT_ENTER(); const rt_driver *d = &rt_dpt; RT_CALL(call); }

PAIR(cudaError_t, cudaStreamGetPriority, (cudaStream_t s, int *prio), d->cuStreamGetPriority(s, prio))
PAIR(cudaError_t, cudaStreamGetCaptureInfo,
     (cudaStream_t s, enum cudaStreamCaptureStatus *st, unsigned long long *id, cudaGraph_t *g,
      const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges, size_t *n),
     d->cuStreamGetCaptureInfo(s, (CUstreamCaptureStatus *)st, (cuuint64_t *)id, g, (const CUgraphNode **)deps,
                               (const CUgraphEdgeData **)edges, n))
PAIR(cudaError_t, cudaStreamUpdateCaptureDependencies,
     (cudaStream_t s, cudaGraphNode_t *deps, const cudaGraphEdgeData *edges, size_t n, unsigned int flags),
     d->cuStreamUpdateCaptureDependencies(s, (CUgraphNode *)deps, (const CUgraphEdgeData *)edges, n, flags))
PAIR(cudaError_t, cudaLaunchHostFunc, (cudaStream_t s, cudaHostFn_t fn, void *data), d->cuLaunchHostFunc(s, fn, data))
PAIR(cudaError_t, cudaMemPrefetchAsync,
     (const void *p, size_t n, struct cudaMemLocation loc, unsigned int flags, cudaStream_t s),
     d->cuMemPrefetchAsync((CUdeviceptr)p, n, (CUmemLocation){ (CUmemLocationType)loc.type, loc.id }, flags, s))

/* cudaStreamCallback_t takes a cudaError_t: CUDA's runtime wraps it for the driver's callback. */
struct cb_call { cudaStreamCallback_t cb; void *data; };
static void CUDA_CB run_callback(CUstream s, CUresult r, void *p)
{
    const struct cb_call *c = p;
    c->cb(s, rt_err(r), c->data);
}
static cudaError_t add_callback(const rt_driver *d, cudaStream_t s, cudaStreamCallback_t cb, void *data, unsigned int flags)
{
    if (!cb) return rt_ret(cudaErrorInvalidValue);
    struct cb_call c = { cb, data }; /* the sim runs it before returning: the stack copy outlives it */
    return rt_ret(rt_err(d->cuStreamAddCallback(s, run_callback, &c, flags)));
}
cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void *data, unsigned int flags)
{
    RT_ENTER();
    return add_callback(&rt_d, s, cb, data, flags);
}
cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t s, cudaStreamCallback_t cb, void *data, unsigned int flags)
{
    RT_ENTER();
    return add_callback(&rt_dpt, s, cb, data, flags);
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    RT_ENTER();
    RT_CALL(rt_d.cuThreadExchangeStreamCaptureMode((CUstreamCaptureMode *)mode));
}

cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int dev)
{
    RT_ENTER();
    if (dev < 0 || dev >= rt_ndev) return rt_ret(cudaErrorInvalidDevice);
    RT_CALL(rt_d.cuDeviceGetPCIBusId(bus, len, dev));
}

cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *h, cudaEvent_t e)
{
    RT_ENTER();
    if (!h) return rt_ret(cudaErrorInvalidValue);
    CUipcEventHandle ch;
    CUresult r = rt_d.cuIpcGetEventHandle(&ch, e);
    if (!r) memcpy(h, &ch, sizeof *h);
    return rt_ret(rt_err(r));
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *e, cudaIpcEventHandle_t h)
{
    RT_ENTER();
    CUipcEventHandle ch;
    memcpy(&ch, &h, sizeof ch);
    RT_CALL(rt_d.cuIpcOpenEventHandle(e, ch));
}

/* cudaFuncAttribute and CUfunction_attribute number the settable attributes alike */
cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t k, enum cudaFuncAttribute attr, int value, int dev)
{
    RT_ENTER();
    RT_CALL(rt_d.cuKernelSetAttribute((CUfunction_attribute)attr, value, (CUkernel)k, dev));
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *desc, size_t count)
{
    RT_ENTER();
    RT_CALL(rt_d.cuMemPoolSetAccess((CUmemoryPool)pool, (const CUmemAccessDesc *)desc, count));
}

cudaError_t cudaProfilerStart(void) { RT_ENTER(); RT_CALL(rt_d.cuProfilerStart()); }
cudaError_t cudaProfilerStop(void) { RT_ENTER(); RT_CALL(rt_d.cuProfilerStop()); }

cudaError_t cudaUserObjectCreate(cudaUserObject_t *o, void *ptr, cudaHostFn_t destroy, unsigned int refs, unsigned int flags)
{
    RT_ENTER();
    RT_CALL(rt_d.cuUserObjectCreate((CUuserObject *)o, ptr, destroy, refs, flags));
}
cudaError_t cudaUserObjectRetain(cudaUserObject_t o, unsigned int n) { RT_ENTER(); RT_CALL(rt_d.cuUserObjectRetain((CUuserObject)o, n)); }
cudaError_t cudaUserObjectRelease(cudaUserObject_t o, unsigned int n) { RT_ENTER(); RT_CALL(rt_d.cuUserObjectRelease((CUuserObject)o, n)); }
cudaError_t cudaGraphRetainUserObject(cudaGraph_t g, cudaUserObject_t o, unsigned int n, unsigned int flags)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphRetainUserObject(g, (CUuserObject)o, n, flags));
}
cudaError_t cudaGraphReleaseUserObject(cudaGraph_t g, cudaUserObject_t o, unsigned int n)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphReleaseUserObject(g, (CUuserObject)o, n));
}

cudaError_t cudaDeviceGetGraphMemAttribute(int dev, enum cudaGraphMemAttributeType attr, void *value)
{
    RT_ENTER();
    RT_CALL(rt_d.cuDeviceGetGraphMemAttribute(dev, (CUgraphMem_attribute)attr, value));
}
cudaError_t cudaDeviceSetGraphMemAttribute(int dev, enum cudaGraphMemAttributeType attr, void *value)
{
    RT_ENTER();
    RT_CALL(rt_d.cuDeviceSetGraphMemAttribute(dev, (CUgraphMem_attribute)attr, value));
}

cudaError_t cudaMemAdvise(const void *p, size_t n, enum cudaMemoryAdvise advice, struct cudaMemLocation loc)
{
    RT_ENTER();
    RT_CALL(rt_d.cuMemAdvise((CUdeviceptr)p, n, (CUmem_advise)advice, (CUmemLocation){ (CUmemLocationType)loc.type, loc.id }));
}

cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr, int src, int dst)
{
    RT_ENTER();
    RT_CALL(rt_d.cuDeviceGetP2PAttribute(value, (CUdevice_P2PAttribute)attr, src, dst));
}
