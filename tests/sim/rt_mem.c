/* rt_mem.c - simulated runtime memory API: cudaMalloc family, host alloc/register, copies,
 * memsets, cudaMemGetInfo, cudaPointerGetAttributes; all through the driver table (test fixture). */
#include "rt.h"

#include <string.h>


#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

cudaError_t cudaMalloc(void **p, size_t n)
{
    RT_ENTER();
    if (!p) return rt_ret(cudaErrorInvalidValue);
    *p = NULL;
    if (!n) return cudaSuccess;
    CUdeviceptr d = 0;
    CUresult r = rt_d.cuMemAlloc(&d, n);
    *p = (void *)(uintptr_t)d;
    RT_CALL(r);
}

cudaError_t cudaFree(void *p)
{
    RT_ENTER();
    if (!p) return cudaSuccess;
    RT_CALL(rt_d.cuMemFree(DP(p)));
}

cudaError_t cudaMallocManaged(void **p, size_t n, unsigned int flags)
{
    RT_ENTER();
    if (!p) return rt_ret(cudaErrorInvalidValue);
    *p = NULL;
    if (!n) return cudaSuccess;
    CUdeviceptr d = 0;
    CUresult r = rt_d.cuMemAllocManaged(&d, n, flags);
    *p = (void *)(uintptr_t)d;
    RT_CALL(r);
}

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
    RT_ENTER();
    if (!p || !pitch) return rt_ret(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    CUresult r = rt_d.cuMemAllocPitch(&d, pitch, w, h, 4);
    *p = (void *)(uintptr_t)d;
    RT_CALL(r);
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent e)
{
    RT_ENTER();
    if (!pp) return rt_ret(cudaErrorInvalidValue);
    size_t pitch = (e.width + 511) & ~(size_t)511;
    CUdeviceptr d = 0;
    CUresult r = pitch && e.height && e.depth ? rt_d.cuMemAlloc(&d, pitch * e.height * e.depth) : CUDA_SUCCESS;
    pp->ptr = (void *)(uintptr_t)d;
    pp->pitch = pitch;
    pp->xsize = e.width;
    pp->ysize = e.height;
    RT_CALL(r);
}

cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
    RT_ENTER();
    if (!p) return rt_ret(cudaErrorInvalidValue);
    *p = NULL;
    if (!n) return cudaSuccess;
    RT_CALL(rt_d.cuMemHostAlloc(p, n, flags));
}

cudaError_t cudaMallocHost(void **p, size_t n) { return cudaHostAlloc(p, n, 0); }

cudaError_t cudaFreeHost(void *p)
{
    RT_ENTER();
    if (!p) return cudaSuccess;
    RT_CALL(rt_d.cuMemFreeHost(p));
}

cudaError_t cudaHostRegister(void *p, size_t n, unsigned int flags)
{
    RT_ENTER();
    RT_CALL(rt_d.cuMemHostRegister(p, n, flags));
}

cudaError_t cudaHostUnregister(void *p)
{
    RT_ENTER();
    RT_CALL(rt_d.cuMemHostUnregister(p));
}

cudaError_t cudaHostGetDevicePointer(void **d, void *h, unsigned int flags)
{
    RT_ENTER();
    if (!d) return rt_ret(cudaErrorInvalidValue);
    CUdeviceptr x = 0;
    CUresult r = rt_d.cuMemHostGetDevicePointer(&x, h, flags);
    *d = (void *)(uintptr_t)x;
    RT_CALL(r);
}

cudaError_t cudaMemGetInfo(size_t *f, size_t *t)
{
    RT_ENTER();
    RT_CALL(rt_d.cuMemGetInfo(f, t));
}

cudaError_t rt_copy(const rt_driver *d, void *dst, const void *src, size_t n,
                    enum cudaMemcpyKind kind, cudaStream_t s, int async)
{
    RT_ENTER();
    CUresult r;
    switch (kind) {
    case cudaMemcpyHostToHost:
        if (async) { r = d->cuStreamSynchronize(s); if (r) RT_CALL(r); }
        else { r = d->cuCtxSynchronize(); if (r) RT_CALL(r); }
        if (n) memmove(dst, src, n);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        r = async ? d->cuMemcpyHtoDAsync(DP(dst), src, n, s) : d->cuMemcpyHtoD(DP(dst), src, n); break;
    case cudaMemcpyDeviceToHost:
        r = async ? d->cuMemcpyDtoHAsync(dst, DP(src), n, s) : d->cuMemcpyDtoH(dst, DP(src), n); break;
    case cudaMemcpyDeviceToDevice:
        r = async ? d->cuMemcpyDtoDAsync(DP(dst), DP(src), n, s) : d->cuMemcpyDtoD(DP(dst), DP(src), n); break;
    case cudaMemcpyDefault:
        r = async ? d->cuMemcpyAsync(DP(dst), DP(src), n, s) : d->cuMemcpy(DP(dst), DP(src), n); break;
    default:
        return rt_ret(cudaErrorInvalidMemcpyDirection);
    }
    RT_CALL(r);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k) { return rt_copy(&rt_d, dst, src, n, k, 0, 0); }
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t n, enum cudaMemcpyKind k) { return rt_copy(&rt_dpt, dst, src, n, k, 0, 0); }
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s) { return rt_copy(&rt_d, dst, src, n, k, s, 1); }
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s) { return rt_copy(&rt_dpt, dst, src, n, k, s, 1); }

static cudaError_t copy2d(const rt_driver *d, void *dst, size_t dp, const void *src, size_t sp, size_t w,
                          size_t h, enum cudaMemcpyKind k, cudaStream_t s, int async)
{
    RT_ENTER();
    if (k < cudaMemcpyHostToHost || k > cudaMemcpyDefault) return rt_ret(cudaErrorInvalidMemcpyDirection);
    if (w > dp || w > sp) return rt_ret(cudaErrorInvalidPitchValue);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    int src_dev = k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice;
    int dst_dev = k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice;
    c.srcMemoryType = k == cudaMemcpyDefault ? CU_MEMORYTYPE_UNIFIED : src_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    c.dstMemoryType = k == cudaMemcpyDefault ? CU_MEMORYTYPE_UNIFIED : dst_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    c.srcHost = src; c.srcDevice = DP(src); c.srcPitch = sp;
    c.dstHost = dst; c.dstDevice = DP(dst); c.dstPitch = dp;
    c.WidthInBytes = w; c.Height = h;
    RT_CALL(async ? d->cuMemcpy2DAsync(&c, s) : d->cuMemcpy2D(&c));
}

cudaError_t cudaMemcpy2D(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k)
{ return copy2d(&rt_d, dst, dp, src, sp, w, h, k, 0, 0); }
cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k)
{ return copy2d(&rt_dpt, dst, dp, src, sp, w, h, k, 0, 0); }
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k, cudaStream_t s)
{ return copy2d(&rt_d, dst, dp, src, sp, w, h, k, s, 1); }
cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h, enum cudaMemcpyKind k, cudaStream_t s)
{ return copy2d(&rt_dpt, dst, dp, src, sp, w, h, k, s, 1); }

cudaError_t cudaMemset(void *p, int v, size_t n) { RT_ENTER(); RT_CALL(rt_d.cuMemsetD8(DP(p), (unsigned char)v, n)); }
cudaError_t cudaMemset_ptds(void *p, int v, size_t n) { RT_ENTER(); RT_CALL(rt_dpt.cuMemsetD8(DP(p), (unsigned char)v, n)); }
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) { RT_ENTER(); RT_CALL(rt_d.cuMemsetD8Async(DP(p), (unsigned char)v, n, s)); }
cudaError_t cudaMemsetAsync_ptsz(void *p, int v, size_t n, cudaStream_t s) { RT_ENTER(); RT_CALL(rt_dpt.cuMemsetD8Async(DP(p), (unsigned char)v, n, s)); }

cudaError_t cudaMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n)
{
    RT_ENTER();
    CUcontext dc = rt_ctx_of(dd), sc = rt_ctx_of(sd);
    if (!dc || !sc) return rt_ret(cudaErrorInvalidDevice);
    RT_CALL(rt_d.cuMemcpyPeer(DP(dst), dc, DP(src), sc, n));
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t n, cudaStream_t s)
{
    RT_ENTER();
    CUcontext dc = rt_ctx_of(dd), sc = rt_ctx_of(sd);
    if (!dc || !sc) return rt_ret(cudaErrorInvalidDevice);
    RT_CALL(rt_d.cuMemcpyPeerAsync(DP(dst), dc, DP(src), sc, n, s));
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    RT_ENTER();
    if (!a) return rt_ret(cudaErrorInvalidValue);
    unsigned type = 0, managed = 0;
    int ordinal = -2;
    CUpointer_attribute q[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                               CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *v[] = {&type, &managed, &ordinal};
    CUresult r = rt_d.cuPointerGetAttributes(3, q, v, DP(p));
    if (r) RT_CALL(r);
    memset(a, 0, sizeof *a);
    if (managed) {
        a->type = cudaMemoryTypeManaged;
        a->devicePointer = a->hostPointer = (void *)p;
    } else if (type == CU_MEMORYTYPE_DEVICE) {
        a->type = cudaMemoryTypeDevice;
        a->devicePointer = (void *)p;
    } else if (type == CU_MEMORYTYPE_HOST) {
        a->type = cudaMemoryTypeHost;
        a->devicePointer = a->hostPointer = (void *)p;
    } else {
        a->type = cudaMemoryTypeUnregistered;
        a->hostPointer = (void *)p;
    }
    a->device = ordinal;
    return cudaSuccess;
}
