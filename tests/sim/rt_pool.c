/* rt_pool.c - simulated runtime, phase 2: stream-ordered allocation and memory pools, IPC
 * handles, graph creation and graph memory nodes, all through the driver table (test fixture). */
#include "rt.h"

#include <string.h>

#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

#define PAIR(name, params, call) \
    cudaError_t name params { RT_ENTER(); const rt_driver *d = &rt_d; RT_CALL(call); } \
    cudaError_t name##_ptsz params { RT_ENTER(); const rt_driver *d = &rt_dpt; RT_CALL(call); }

/* store the driver's result pointer (NULL on failure); `d` is read after the call returned */
static CUresult out_ptr(CUresult r, const CUdeviceptr *d, void **p)
{
    if (p) *p = r ? NULL : (void *)(uintptr_t)*d;
    return r;
}

static CUresult malloc_async(const rt_driver *d, void **p, size_t n, cudaStream_t s)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr x = 0;
    return out_ptr(d->cuMemAllocAsync(&x, n, s), &x, p);
}

static CUresult malloc_pool(const rt_driver *d, void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr x = 0;
    return out_ptr(d->cuMemAllocFromPoolAsync(&x, n, pool, s), &x, p);
}

PAIR(cudaMallocAsync, (void **p, size_t n, cudaStream_t s), malloc_async(d, p, n, s))
PAIR(cudaFreeAsync, (void *p, cudaStream_t s), d->cuMemFreeAsync(DP(p), s))
PAIR(cudaMallocFromPoolAsync, (void **p, size_t n, cudaMemPool_t pool, cudaStream_t s), malloc_pool(d, p, n, pool, s))

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{ RT_ENTER(); RT_CALL(rt_d.cuMemPoolCreate(pool, (const CUmemPoolProps *)props)); }
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) { RT_ENTER(); RT_CALL(rt_d.cuMemPoolDestroy(pool)); }
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep) { RT_ENTER(); RT_CALL(rt_d.cuMemPoolTrimTo(pool, keep)); }
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v)
{ RT_ENTER(); RT_CALL(rt_d.cuMemPoolSetAttribute(pool, (CUmemPool_attribute)a, v)); }
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v)
{ RT_ENTER(); RT_CALL(rt_d.cuMemPoolGetAttribute(pool, (CUmemPool_attribute)a, v)); }
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int dev)
{ RT_ENTER(); RT_CALL(rt_d.cuDeviceGetDefaultMemPool(pool, dev)); }
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int dev)
{ RT_ENTER(); RT_CALL(rt_d.cuDeviceGetMemPool(pool, dev)); }
cudaError_t cudaDeviceSetMemPool(int dev, cudaMemPool_t pool)
{ RT_ENTER(); RT_CALL(rt_d.cuDeviceSetMemPool(dev, pool)); }

/* ---- IPC ---------------------------------------------------------------------------------- */
cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *h, void *p)
{
    RT_ENTER();
    if (!h) return rt_ret(cudaErrorInvalidValue);
    CUipcMemHandle x;
    CUresult r = rt_d.cuIpcGetMemHandle(&x, DP(p));
    if (!r) memcpy(h, &x, sizeof *h);
    RT_CALL(r);
}

cudaError_t cudaIpcOpenMemHandle(void **p, cudaIpcMemHandle_t h, unsigned int flags)
{
    RT_ENTER();
    if (!p) return rt_ret(cudaErrorInvalidValue);
    CUipcMemHandle x;
    memcpy(&x, &h, sizeof x);
    CUdeviceptr d = 0;
    RT_CALL(out_ptr(rt_d.cuIpcOpenMemHandle(&d, x, flags), &d, p));
}

cudaError_t cudaIpcCloseMemHandle(void *p) { RT_ENTER(); RT_CALL(rt_d.cuIpcCloseMemHandle(DP(p))); }

/* ---- graphs ------------------------------------------------------------------------------- */
cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned int flags) { RT_ENTER(); RT_CALL(rt_d.cuGraphCreate(g, flags)); }

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                     struct cudaMemAllocNodeParams *p)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphAddMemAllocNode(node, g, deps, n, (CUDA_MEM_ALLOC_NODE_PARAMS *)p));
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n, void *p)
{
    RT_ENTER();
    RT_CALL(rt_d.cuGraphAddMemFreeNode(node, g, deps, n, DP(p)));
}
