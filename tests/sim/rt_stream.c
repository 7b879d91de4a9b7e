/* rt_stream.c - simulated runtime streams, events, stream capture and graphs, forwarded to the
 * driver table (rt_dpt for the _ptsz exports). Test fixture. */
#include "rt.h"

#include <string.h>

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int prio)
{
    RT_ENTER();
    if (!s) return rt_ret(cudaErrorInvalidValue);
    RT_CALL(rt_d.cuStreamCreateWithPriority(s, flags, prio));
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) { return cudaStreamCreateWithPriority(s, flags, 0); }
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithPriority(s, 0, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t s) { RT_ENTER(); RT_CALL(rt_d.cuStreamDestroy(s)); }

#define PAIR(ret, name, params, call) \
    ret name params { RT_ENTER(); const rt_driver *d = &rt_d; RT_CALL(call); } \
    ret name##_ptsz params { RT_ENTER(); const rt_driver *d = &rt_dpt; RT_CALL(call); }

PAIR(cudaError_t, cudaStreamSynchronize, (cudaStream_t s), d->cuStreamSynchronize(s))
PAIR(cudaError_t, cudaStreamQuery, (cudaStream_t s), d->cuStreamQuery(s))
PAIR(cudaError_t, cudaStreamWaitEvent, (cudaStream_t s, cudaEvent_t e, unsigned int f), d->cuStreamWaitEvent(s, e, f))
PAIR(cudaError_t, cudaEventRecord, (cudaEvent_t e, cudaStream_t s), d->cuEventRecord(e, s))
PAIR(cudaError_t, cudaEventRecordWithFlags, (cudaEvent_t e, cudaStream_t s, unsigned int f), d->cuEventRecordWithFlags(e, s, f))
PAIR(cudaError_t, cudaStreamBeginCapture, (cudaStream_t s, enum cudaStreamCaptureMode m), d->cuStreamBeginCapture(s, (CUstreamCaptureMode)m))
PAIR(cudaError_t, cudaStreamEndCapture, (cudaStream_t s, cudaGraph_t *g), d->cuStreamEndCapture(s, g))
PAIR(cudaError_t, cudaStreamIsCapturing, (cudaStream_t s, enum cudaStreamCaptureStatus *st), d->cuStreamIsCapturing(s, (CUstreamCaptureStatus *)st))
PAIR(cudaError_t, cudaGraphLaunch, (cudaGraphExec_t e, cudaStream_t s), d->cuGraphLaunch(e, s))

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    RT_ENTER();
    if (!e) return rt_ret(cudaErrorInvalidValue);
    RT_CALL(rt_d.cuEventCreate(e, flags));
}
cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventQuery(cudaEvent_t e) { RT_ENTER(); RT_CALL(rt_d.cuEventQuery(e)); }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { RT_ENTER(); RT_CALL(rt_d.cuEventSynchronize(e)); }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { RT_ENTER(); RT_CALL(rt_d.cuEventElapsedTime(ms, a, b)); }
cudaError_t cudaEventDestroy(cudaEvent_t e) { RT_ENTER(); RT_CALL(rt_d.cuEventDestroy(e)); }

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphInstantiateWithFlags(e, g, flags));
}
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags)
{
    return cudaGraphInstantiate(e, g, flags);
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) { RT_ENTER(); RT_CALL(rt_d.cuGraphDestroy(g)); }
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) { RT_ENTER(); RT_CALL(rt_d.cuGraphExecDestroy(e)); }

/* Kernel nodes: the runtime's parameters (a kernel symbol, dim3s) as the driver's, the symbol
 * resolved to the current device's CUfunction as a launch would. */
static cudaError_t driver_kernel_params(const struct cudaKernelNodeParams *p, CUDA_KERNEL_NODE_PARAMS *out)
{
    if (!p) return cudaErrorInvalidValue;
    cudaFunction_t f;
    cudaError_t e = cudaGetFuncBySymbol(&f, p->func);
    if (e) return e;
    memset(out, 0, sizeof *out);
    out->func = (CUfunction)f;
    out->gridDimX = p->gridDim.x; out->gridDimY = p->gridDim.y; out->gridDimZ = p->gridDim.z;
    out->blockDimX = p->blockDim.x; out->blockDimY = p->blockDim.y; out->blockDimZ = p->blockDim.z;
    out->sharedMemBytes = p->sharedMemBytes;
    out->kernelParams = p->kernelParams;
    out->extra = p->extra;
    return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *deps, size_t nd,
                                   const struct cudaKernelNodeParams *p)
{
    RT_ENTER();
    CUDA_KERNEL_NODE_PARAMS dp;
    cudaError_t e = driver_kernel_params(p, &dp);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuGraphAddKernelNode(n, g, deps, nd, &dp));
}
cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t n, const struct cudaKernelNodeParams *p)
{
    RT_ENTER();
    CUDA_KERNEL_NODE_PARAMS dp;
    cudaError_t e = driver_kernel_params(p, &dp);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuGraphKernelNodeSetParams(n, &dp));
}
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t n, const struct cudaKernelNodeParams *p)
{
    RT_ENTER();
    CUDA_KERNEL_NODE_PARAMS dp;
    cudaError_t e = driver_kernel_params(p, &dp);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuGraphExecKernelNodeSetParams(x, n, &dp));
}
/* The driver's parameters as the runtime's: the kernel as its entry (the host stub, as CUDA's
 * runtime hands back what a launch named), or the CUfunction of a driver module's kernel. */
cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t n, struct cudaKernelNodeParams *p)
{
    RT_ENTER();
    if (!p) return rt_ret(cudaErrorInvalidValue);
    CUDA_KERNEL_NODE_PARAMS dp;
    CUresult r = rt_d.cuGraphKernelNodeGetParams(n, &dp);
    if (r) return rt_ret(rt_err(r));
    const void *entry = rt_entry_of_function(dp.func);
    memset(p, 0, sizeof *p);
    p->func = entry ? (void *)entry : (void *)dp.func;
    p->gridDim = (dim3){ dp.gridDimX, dp.gridDimY, dp.gridDimZ };
    p->blockDim = (dim3){ dp.blockDimX, dp.blockDimY, dp.blockDimZ };
    p->sharedMemBytes = dp.sharedMemBytes;
    p->kernelParams = dp.kernelParams;
    p->extra = dp.extra;
    return cudaSuccess;
}
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g, cudaGraphExecUpdateResultInfo *info)
{
    RT_ENTER();
    CUgraphExecUpdateResultInfo di;
    CUresult r = rt_d.cuGraphExecUpdate(x, g, &di);
    if (info) {
        memset(info, 0, sizeof *info);
        info->result = (enum cudaGraphExecUpdateResult)di.result;
    }
    RT_CALL(r);
}

static cudaError_t copy3d(const struct cudaMemcpy3DParms *p, CUDA_MEMCPY3D *c);

/* The generic node calls: a kernel, memcpy, memset or (adding only) conditional node's runtime
 * parameters as the driver's (other types: not simulated, cudaErrorNotSupported). */
static cudaError_t driver_node_params(const struct cudaGraphNodeParams *p, CUgraphNodeParams *out)
{
    if (!p) return cudaErrorInvalidValue;
    memset(out, 0, sizeof *out);
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        out->type = CU_GRAPH_NODE_TYPE_KERNEL;
        struct cudaKernelNodeParams v1 = { p->kernel.func, p->kernel.gridDim, p->kernel.blockDim, p->kernel.sharedMemBytes,
                                           p->kernel.kernelParams, p->kernel.extra };
        return driver_kernel_params(&v1, (CUDA_KERNEL_NODE_PARAMS *)&out->kernel);
    }
    case cudaGraphNodeTypeMemcpy:
        out->type = CU_GRAPH_NODE_TYPE_MEMCPY;
        return copy3d(&p->memcpy.copyParams, &out->memcpy.copyParams);
    case cudaGraphNodeTypeMemset:
        out->type = CU_GRAPH_NODE_TYPE_MEMSET;
        out->memset = (CUDA_MEMSET_NODE_PARAMS_v2){ (CUdeviceptr)p->memset.dst, p->memset.pitch, p->memset.value,
                                                    p->memset.elementSize, p->memset.width, p->memset.height, NULL };
        return cudaSuccess;
    case cudaGraphNodeTypeMemAlloc:   /* cudaMemAllocNodeParamsV2 is the driver's v2 field for field */
        out->type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
        memcpy(&out->alloc, &p->alloc, sizeof out->alloc);
        return cudaSuccess;
    case cudaGraphNodeTypeMemFree:
        out->type = CU_GRAPH_NODE_TYPE_MEM_FREE;
        out->free.dptr = (CUdeviceptr)p->free.dptr;
        return cudaSuccess;
    case cudaGraphNodeTypeGraph:
        out->type = CU_GRAPH_NODE_TYPE_GRAPH;
        out->graph.graph = (CUgraph)p->graph.graph;
        out->graph.ownership = (CUgraphChildGraphNodeOwnership)p->graph.ownership;
        return cudaSuccess;
    case cudaGraphNodeTypeConditional:
        out->type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
        out->conditional.handle = p->conditional.handle;
        out->conditional.type = (CUgraphConditionalNodeType)p->conditional.type;
        out->conditional.size = p->conditional.size;
        return cudaSuccess;
    default:
        return cudaErrorNotSupported;
    }
}
cudaError_t cudaGraphAddNode(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *deps, const cudaGraphEdgeData *edges,
                             size_t nd, struct cudaGraphNodeParams *p)
{
    RT_ENTER();
    CUgraphNodeParams dp;
    cudaError_t e = driver_node_params(p, &dp);
    if (e) return rt_ret(e);
    CUresult r = rt_d.cuGraphAddNode(n, g, deps, (const CUgraphEdgeData *)edges, nd, &dp);
    if (!r && p->type == cudaGraphNodeTypeConditional) p->conditional.phGraph_out = dp.conditional.phGraph_out;
    if (!r && p->type == cudaGraphNodeTypeMemAlloc) p->alloc.dptr = (void *)(uintptr_t)dp.alloc.dptr;
    RT_CALL(r);
}
cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t n, struct cudaGraphNodeParams *p)
{
    RT_ENTER();
    CUgraphNodeParams dp;
    cudaError_t e = driver_node_params(p, &dp);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuGraphNodeSetParams(n, &dp));
}
cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t n, struct cudaGraphNodeParams *p)
{
    RT_ENTER();
    CUgraphNodeParams dp;
    cudaError_t e = driver_node_params(p, &dp);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuGraphExecNodeSetParams(x, n, &dp));
}

cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t n, cudaGraph_t child)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphExecChildGraphNodeSetParams(x, n, child));
}
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *deps, size_t nd, cudaGraph_t child)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphAddChildGraphNode(n, g, deps, nd, child));
}

/* ---- copy and memset nodes, node queries, upload, conditional handles (issue 46) ---------- */
static CUmemorytype mem_type(enum cudaMemcpyKind kind, int src)
{
    switch (kind) {
    case cudaMemcpyHostToDevice: return src ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    case cudaMemcpyDeviceToHost: return src ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    case cudaMemcpyHostToHost: return CU_MEMORYTYPE_HOST;
    case cudaMemcpyDeviceToDevice: return CU_MEMORYTYPE_DEVICE;
    default: return CU_MEMORYTYPE_UNIFIED; /* cudaMemcpyDefault: the address says */
    }
}

static void set_end(CUDA_MEMCPY3D *c, int src, enum cudaMemcpyKind kind, void *p, size_t pitch)
{
    CUmemorytype t = mem_type(kind, src);
    if (src) {
        c->srcMemoryType = t;
        if (t == CU_MEMORYTYPE_HOST) c->srcHost = p; else c->srcDevice = (CUdeviceptr)p;
        c->srcPitch = pitch;
    } else {
        c->dstMemoryType = t;
        if (t == CU_MEMORYTYPE_HOST) c->dstHost = p; else c->dstDevice = (CUdeviceptr)p;
        c->dstPitch = pitch;
    }
}

/* linear memory only (pitched pointers; arrays are not modelled) */
/* The runtime's copy and memset node parameters as the driver's. */
static cudaError_t copy3d(const struct cudaMemcpy3DParms *p, CUDA_MEMCPY3D *c)
{
    if (!p) return cudaErrorInvalidValue;
    if (p->srcArray || p->dstArray) return cudaErrorNotSupported;
    memset(c, 0, sizeof *c);
    set_end(c, 1, p->kind, (char *)p->srcPtr.ptr + p->srcPos.x + p->srcPos.y * p->srcPtr.pitch, p->srcPtr.pitch);
    set_end(c, 0, p->kind, (char *)p->dstPtr.ptr + p->dstPos.x + p->dstPos.y * p->dstPtr.pitch, p->dstPtr.pitch);
    c->WidthInBytes = p->extent.width;
    c->Height = p->extent.height;
    c->Depth = p->extent.depth;
    return cudaSuccess;
}
static void copy1d(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, CUDA_MEMCPY3D *c)
{
    memset(c, 0, sizeof *c);
    set_end(c, 1, kind, (void *)src, count);
    set_end(c, 0, kind, dst, count);
    c->WidthInBytes = count;
    c->Height = c->Depth = 1;
}
static CUDA_MEMSET_NODE_PARAMS memset_params(const struct cudaMemsetParams *p)
{
    CUDA_MEMSET_NODE_PARAMS c = { (CUdeviceptr)p->dst, p->pitch, p->value, p->elementSize, p->width, p->height };
    return c;
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                   const struct cudaMemcpy3DParms *p)
{
    RT_ENTER();
    CUDA_MEMCPY3D c;
    cudaError_t e = copy3d(p, &c);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuGraphAddMemcpyNode((CUgraphNode *)node, g, (const CUgraphNode *)deps, n, &c, NULL));
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                     void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    CUDA_MEMCPY3D c;
    copy1d(dst, src, count, kind, &c);
    RT_CALL(rt_d.cuGraphAddMemcpyNode((CUgraphNode *)node, g, (const CUgraphNode *)deps, n, &c, NULL));
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                   const struct cudaMemsetParams *p)
{
    RT_ENTER();
    if (!p) return rt_ret(cudaErrorInvalidValue);
    CUDA_MEMSET_NODE_PARAMS c = memset_params(p);
    RT_CALL(rt_d.cuGraphAddMemsetNode((CUgraphNode *)node, g, (const CUgraphNode *)deps, n, &c, NULL));
}

cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const struct cudaMemcpy3DParms *p)
{
    RT_ENTER();
    CUDA_MEMCPY3D c;
    cudaError_t e = copy3d(p, &c);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuGraphMemcpyNodeSetParams(node, &c));
}
cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t node, const struct cudaMemcpy3DParms *p)
{
    RT_ENTER();
    CUDA_MEMCPY3D c;
    cudaError_t e = copy3d(p, &c);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuGraphExecMemcpyNodeSetParams(x, node, &c, NULL));
}
cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src, size_t count,
                                           enum cudaMemcpyKind kind)
{
    RT_ENTER();
    CUDA_MEMCPY3D c;
    copy1d(dst, src, count, kind, &c);
    RT_CALL(rt_d.cuGraphMemcpyNodeSetParams(node, &c));
}
cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t x, cudaGraphNode_t node, void *dst, const void *src,
                                               size_t count, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    CUDA_MEMCPY3D c;
    copy1d(dst, src, count, kind, &c);
    RT_CALL(rt_d.cuGraphExecMemcpyNodeSetParams(x, node, &c, NULL));
}
cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const struct cudaMemsetParams *p)
{
    RT_ENTER();
    if (!p) return rt_ret(cudaErrorInvalidValue);
    CUDA_MEMSET_NODE_PARAMS c = memset_params(p);
    RT_CALL(rt_d.cuGraphMemsetNodeSetParams(node, &c));
}
cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t node, const struct cudaMemsetParams *p)
{
    RT_ENTER();
    if (!p) return rt_ret(cudaErrorInvalidValue);
    CUDA_MEMSET_NODE_PARAMS c = memset_params(p);
    RT_CALL(rt_d.cuGraphExecMemsetNodeSetParams(x, node, &c, NULL));
}

cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *num)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphGetNodes(g, (CUgraphNode *)nodes, num));
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *deps, cudaGraphEdgeData *edges, size_t *num)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphNodeGetDependencies((CUgraphNode)node, (CUgraphNode *)deps, (CUgraphEdgeData *)edges, num));
}

PAIR(cudaError_t, cudaGraphUpload, (cudaGraphExec_t e, cudaStream_t s), d->cuGraphUpload(e, s))

cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *h, cudaGraph_t g, unsigned int dflt, unsigned int flags)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphConditionalHandleCreate((CUgraphConditionalHandle *)h, g, NULL, dflt, flags));
}

/* cudaGraphInstantiateParams is CUDA_GRAPH_INSTANTIATE_PARAMS field for field. */
PAIR(cudaError_t, cudaGraphInstantiateWithParams, (cudaGraphExec_t *e, cudaGraph_t g, cudaGraphInstantiateParams *p),
     d->cuGraphInstantiateWithParams(e, g, (CUDA_GRAPH_INSTANTIATE_PARAMS *)p))
cudaError_t cudaGraphClone(cudaGraph_t *out, cudaGraph_t g) { RT_ENTER(); RT_CALL(rt_d.cuGraphClone(out, g)); }
cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *out, cudaGraphNode_t orig, cudaGraph_t clone)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphNodeFindInClone(out, orig, clone));
}
PAIR(cudaError_t, cudaStreamBeginCaptureToGraph,
     (cudaStream_t s, cudaGraph_t g, const cudaGraphNode_t *deps, const cudaGraphEdgeData *edges, size_t n,
      enum cudaStreamCaptureMode m),
     d->cuStreamBeginCaptureToGraph(s, g, (const CUgraphNode *)deps, (const CUgraphEdgeData *)edges, n, (CUstreamCaptureMode)m))
