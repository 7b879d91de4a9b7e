/* hooks_runtime.c - libcudart wrappers: call the real function, then report the event.
 *
 * Every wrapper: resolve the real pointer (never call NULL: cudaErrorNotSupported), forward
 * untouched when tracing is off or the call is nested, else mark "inside the runtime" for the
 * real call so the driver hooks it reaches only forward, and return the real result. */
#include <stdint.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "cuda_abi.h"
#include "events.h"
#include "kernels.h"
#include "registry.h"
#include "resolve.h"
#include "tracer.h"
#include "hooks_common.h"
#include "graphs.h"

typedef vt_dim3 dim3;

#define RT_ENTER(fn, real) \
    vt_init(); \
    __typeof__(&fn) real = VT_REAL(fn); \
    if (!real) return cudaErrorNotSupported
/* Forward when nothing is to be recorded. */
#define RT_FORWARD_IF_NESTED(call) \
    if (vt_forward_or_nested()) return call
#define RT_CALL(r, call) do { vt_ts.rt_depth++; r = call; vt_ts.rt_depth--; } while (0)

/* A family of wrappers sharing one implementation (the _ptds/_ptsz twins): the implementation
 * gets the real pointer and the exported name. */

#define u vt_u64

/* ---- allocation ---------------------------------------------------------------------------- */

static cudaError_t alloc_common(cudaError_t r, struct vt_call *c, void **p, size_t n, int mem, const struct vt_alloc_extra *x)
{
    VT_CALL_END(*c, r);
    vt_ev_alloc(c, r == cudaSuccess && p ? u(*p) : 0, n, mem, x);
    return r;
}

VT_REAL_SLOT(cudaMalloc);
cudaError_t cudaMalloc(void **p, size_t n)
{
    RT_ENTER(cudaMalloc, real);
    RT_FORWARD_IF_NESTED(real(p, n));
    VT_CALL_BEGIN(c, "cudaMalloc");
    cudaError_t r;
    RT_CALL(r, real(p, n));
    return alloc_common(r, &c, p, n, VT_MEM_DEVICE, NULL);
}

VT_REAL_SLOT(cudaMallocManaged);
cudaError_t cudaMallocManaged(void **p, size_t n, unsigned int flags)
{
    RT_ENTER(cudaMallocManaged, real);
    RT_FORWARD_IF_NESTED(real(p, n, flags));
    VT_CALL_BEGIN(c, "cudaMallocManaged");
    cudaError_t r;
    RT_CALL(r, real(p, n, flags));
    return alloc_common(r, &c, p, n, VT_MEM_MANAGED, NULL);
}

VT_REAL_SLOT(cudaMallocPitch);
cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    RT_ENTER(cudaMallocPitch, real);
    RT_FORWARD_IF_NESTED(real(p, pitch, width, height));
    VT_CALL_BEGIN(c, "cudaMallocPitch");
    cudaError_t r;
    RT_CALL(r, real(p, pitch, width, height));
    size_t pt = r == cudaSuccess && pitch ? *pitch : width;
    struct vt_alloc_extra x = { .pitch = pt, .width = width, .height = height };
    return alloc_common(r, &c, p, pt * height, VT_MEM_DEVICE, &x);
}

VT_REAL_SLOT(cudaMalloc3D);
cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent e)
{
    RT_ENTER(cudaMalloc3D, real);
    RT_FORWARD_IF_NESTED(real(pp, e));
    VT_CALL_BEGIN(c, "cudaMalloc3D");
    cudaError_t r;
    RT_CALL(r, real(pp, e));
    VT_CALL_END(c, r);
    size_t pitch = r == cudaSuccess && pp ? pp->pitch : e.width;
    struct vt_alloc_extra x = { .pitch = pitch, .width = e.width, .height = e.height * e.depth };
    vt_ev_alloc(&c, r == cudaSuccess && pp ? u(pp->ptr) : 0, pitch * e.height * e.depth, VT_MEM_DEVICE, &x);
    return r;
}

VT_REAL_SLOT(cudaHostAlloc);
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
    RT_ENTER(cudaHostAlloc, real);
    RT_FORWARD_IF_NESTED(real(p, n, flags));
    VT_CALL_BEGIN(c, "cudaHostAlloc");
    cudaError_t r;
    RT_CALL(r, real(p, n, flags));
    return alloc_common(r, &c, p, n, VT_MEM_PINNED, NULL);
}

VT_REAL_SLOT(cudaMallocHost);
cudaError_t cudaMallocHost(void **p, size_t n)
{
    RT_ENTER(cudaMallocHost, real);
    RT_FORWARD_IF_NESTED(real(p, n));
    VT_CALL_BEGIN(c, "cudaMallocHost");
    cudaError_t r;
    RT_CALL(r, real(p, n));
    return alloc_common(r, &c, p, n, VT_MEM_PINNED, NULL);
}

VT_REAL_SLOT(cudaHostRegister);
cudaError_t cudaHostRegister(void *p, size_t n, unsigned int flags)
{
    RT_ENTER(cudaHostRegister, real);
    RT_FORWARD_IF_NESTED(real(p, n, flags));
    VT_CALL_BEGIN(c, "cudaHostRegister");
    cudaError_t r;
    RT_CALL(r, real(p, n, flags));
    VT_CALL_END(c, r);
    vt_ev_alloc(&c, u(p), n, VT_MEM_REGISTERED, NULL);
    return r;
}

typedef cudaError_t (*malloc_async_fn)(void **, size_t, cudaStream_t);
static cudaError_t malloc_async_impl(void *real, const char *api, void **p, size_t n, cudaStream_t s)
{
    RT_FORWARD_IF_NESTED(((malloc_async_fn)real)(p, n, s));
    const void *graph = vt_capture_key(u(s), NULL); /* a graph allocation node: memory only while it runs */
    VT_CALL_BEGIN(c, api);
    cudaError_t r;
    RT_CALL(r, ((malloc_async_fn)real)(p, n, s));
    struct vt_alloc_extra x = { .stream = u(s), .has_stream = 1 };
    if (!graph) return alloc_common(r, &c, p, n, VT_MEM_ASYNC, &x);
    VT_CALL_END(c, r);
    vt_ev_region_open(&c, VT_EVN_GRAPH_ALLOC, r == cudaSuccess && p ? u(*p) : 0, n, VT_MEM_GRAPH, &x);
    if (r == cudaSuccess && p) vt_graph_add_alloc(graph, u(*p), n, c.dev);
    return r;
}
RT_TWIN(cudaMallocAsync, malloc_async_impl, (void **p, size_t n, cudaStream_t s), p, n, s)
RT_TWIN(cudaMallocAsync_ptsz, malloc_async_impl, (void **p, size_t n, cudaStream_t s), p, n, s)

typedef cudaError_t (*malloc_pool_fn)(void **, size_t, cudaMemPool_t, cudaStream_t);
static cudaError_t malloc_pool_impl(void *real, const char *api, void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    RT_FORWARD_IF_NESTED(((malloc_pool_fn)real)(p, n, pool, s));
    const void *graph = vt_capture_key(u(s), NULL);
    VT_CALL_BEGIN(c, api);
    cudaError_t r;
    RT_CALL(r, ((malloc_pool_fn)real)(p, n, pool, s));
    struct vt_alloc_extra x = { .stream = u(s), .has_stream = 1 };
    if (!graph) return alloc_common(r, &c, p, n, VT_MEM_ASYNC, &x);
    VT_CALL_END(c, r);
    vt_ev_region_open(&c, VT_EVN_GRAPH_ALLOC, r == cudaSuccess && p ? u(*p) : 0, n, VT_MEM_GRAPH, &x);
    if (r == cudaSuccess && p) vt_graph_add_alloc(graph, u(*p), n, c.dev);
    return r;
}
RT_TWIN(cudaMallocFromPoolAsync, malloc_pool_impl, (void **p, size_t n, cudaMemPool_t pool, cudaStream_t s), p, n, pool, s)
RT_TWIN(cudaMallocFromPoolAsync_ptsz, malloc_pool_impl, (void **p, size_t n, cudaMemPool_t pool, cudaStream_t s), p, n, pool, s)

/* ---- free ---------------------------------------------------------------------------------- */

typedef cudaError_t (*free_fn)(void *);
static cudaError_t free_impl(void *real, const char *api, void *p)
{
    RT_FORWARD_IF_NESTED(((free_fn)real)(p));
    if (!p) return ((free_fn)real)(p); /* cudaFree(NULL) is the classic "init the context" call */
    struct vt_free_pending fp;
    vt_ev_free_begin(&fp, api, u(p), 0, 0, 0);
    cudaError_t r;
    RT_CALL(r, ((free_fn)real)(p));
    vt_ev_free_end(&fp, r);
    return r;
}
RT_TWIN(cudaFree, free_impl, (void *p), p)
RT_TWIN(cudaFreeHost, free_impl, (void *p), p)
RT_TWIN(cudaHostUnregister, free_impl, (void *p), p)

typedef cudaError_t (*free_async_fn)(void *, cudaStream_t);
static cudaError_t free_async_impl(void *real, const char *api, void *p, cudaStream_t s)
{
    RT_FORWARD_IF_NESTED(((free_async_fn)real)(p, s));
    if (!p) return ((free_async_fn)real)(p, s);
    cudaError_t r;
    const void *graph = vt_capture_key(u(s), NULL);
    if (graph) { /* a graph free node: recorded when the graph runs */
        RT_CALL(r, ((free_async_fn)real)(p, s));
        if (r == cudaSuccess) vt_graph_add_free(graph, u(p));
        return r;
    }
    struct vt_free_pending fp;
    vt_ev_free_begin(&fp, api, u(p), 0, u(s), 1);
    RT_CALL(r, ((free_async_fn)real)(p, s));
    vt_ev_free_end(&fp, r);
    return r;
}
RT_TWIN(cudaFreeAsync, free_async_impl, (void *p, cudaStream_t s), p, s)
RT_TWIN(cudaFreeAsync_ptsz, free_async_impl, (void *p, cudaStream_t s), p, s)

/* ---- copies and sets ----------------------------------------------------------------------- */

typedef cudaError_t (*memcpy_fn)(void *, const void *, size_t, int);
static cudaError_t memcpy_impl(void *real, const char *api, void *dst, const void *src, size_t n, int kind)
{
    RT_FORWARD_IF_NESTED(((memcpy_fn)real)(dst, src, n, kind));
    VT_CALL_BEGIN(c, api);
    cudaError_t r;
    RT_CALL(r, ((memcpy_fn)real)(dst, src, n, kind));
    VT_CALL_END(c, r);
    struct vt_copy_extra x = { .kind = kind, .src_dev = -1 };
    vt_ev_copy(&c, u(dst), u(src), n, &x);
    return r;
}
RT_TWIN(cudaMemcpy, memcpy_impl, (void *d, const void *s, size_t n, int k), d, s, n, k)
RT_TWIN(cudaMemcpy_ptds, memcpy_impl, (void *d, const void *s, size_t n, int k), d, s, n, k)

typedef cudaError_t (*memcpy_async_fn)(void *, const void *, size_t, int, cudaStream_t);
static cudaError_t memcpy_async_impl(void *real, const char *api, void *dst, const void *src, size_t n, int kind, cudaStream_t s)
{
    RT_FORWARD_IF_NESTED(((memcpy_async_fn)real)(dst, src, n, kind, s));
    VT_CALL_BEGIN(c, api);
    cudaError_t r;
    RT_CALL(r, ((memcpy_async_fn)real)(dst, src, n, kind, s));
    VT_CALL_END(c, r);
    struct vt_copy_extra x = { .async = 1, .stream = u(s), .kind = kind, .src_dev = -1 };
    vt_ev_copy(&c, u(dst), u(src), n, &x);
    return r;
}
RT_TWIN(cudaMemcpyAsync, memcpy_async_impl, (void *d, const void *s, size_t n, int k, cudaStream_t st), d, s, n, k, st)
RT_TWIN(cudaMemcpyAsync_ptsz, memcpy_async_impl, (void *d, const void *s, size_t n, int k, cudaStream_t st), d, s, n, k, st)

typedef cudaError_t (*memcpy2d_fn)(void *, size_t, const void *, size_t, size_t, size_t, int);
static cudaError_t memcpy2d_impl(void *real, const char *api, void *dst, size_t dp, const void *src, size_t sp,
                                 size_t w, size_t h, int kind)
{
    RT_FORWARD_IF_NESTED(((memcpy2d_fn)real)(dst, dp, src, sp, w, h, kind));
    VT_CALL_BEGIN(c, api);
    cudaError_t r;
    RT_CALL(r, ((memcpy2d_fn)real)(dst, dp, src, sp, w, h, kind));
    VT_CALL_END(c, r);
    struct vt_copy_extra x = { .kind = kind, .is_2d = 1, .width = w, .height = h, .dpitch = dp, .spitch = sp, .src_dev = -1 };
    vt_ev_copy(&c, u(dst), u(src), (uint64_t)w * h, &x);
    return r;
}
RT_TWIN(cudaMemcpy2D, memcpy2d_impl, (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, int k), d, dp, s, sp, w, h, k)
RT_TWIN(cudaMemcpy2D_ptds, memcpy2d_impl, (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, int k), d, dp, s, sp, w, h, k)

typedef cudaError_t (*memcpy2d_async_fn)(void *, size_t, const void *, size_t, size_t, size_t, int, cudaStream_t);
static cudaError_t memcpy2d_async_impl(void *real, const char *api, void *dst, size_t dp, const void *src, size_t sp,
                                       size_t w, size_t h, int kind, cudaStream_t s)
{
    RT_FORWARD_IF_NESTED(((memcpy2d_async_fn)real)(dst, dp, src, sp, w, h, kind, s));
    VT_CALL_BEGIN(c, api);
    cudaError_t r;
    RT_CALL(r, ((memcpy2d_async_fn)real)(dst, dp, src, sp, w, h, kind, s));
    VT_CALL_END(c, r);
    struct vt_copy_extra x = { .async = 1, .stream = u(s), .kind = kind, .is_2d = 1, .width = w, .height = h,
                               .dpitch = dp, .spitch = sp, .src_dev = -1 };
    vt_ev_copy(&c, u(dst), u(src), (uint64_t)w * h, &x);
    return r;
}
RT_TWIN(cudaMemcpy2DAsync, memcpy2d_async_impl, (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, int k, cudaStream_t st), d, dp, s, sp, w, h, k, st)
RT_TWIN(cudaMemcpy2DAsync_ptsz, memcpy2d_async_impl, (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, int k, cudaStream_t st), d, dp, s, sp, w, h, k, st)

VT_REAL_SLOT(cudaMemcpyPeer);
cudaError_t cudaMemcpyPeer(void *dst, int ddev, const void *src, int sdev, size_t n)
{
    RT_ENTER(cudaMemcpyPeer, real);
    RT_FORWARD_IF_NESTED(real(dst, ddev, src, sdev, n));
    VT_CALL_BEGIN(c, "cudaMemcpyPeer");
    cudaError_t r;
    RT_CALL(r, real(dst, ddev, src, sdev, n));
    VT_CALL_END(c, r);
    c.dev = ddev;
    struct vt_copy_extra x = { .kind = cudaMemcpyDeviceToDevice, .src_dev = sdev };
    vt_ev_copy(&c, u(dst), u(src), n, &x);
    return r;
}

VT_REAL_SLOT(cudaMemcpyPeerAsync);
cudaError_t cudaMemcpyPeerAsync(void *dst, int ddev, const void *src, int sdev, size_t n, cudaStream_t s)
{
    RT_ENTER(cudaMemcpyPeerAsync, real);
    RT_FORWARD_IF_NESTED(real(dst, ddev, src, sdev, n, s));
    VT_CALL_BEGIN(c, "cudaMemcpyPeerAsync");
    cudaError_t r;
    RT_CALL(r, real(dst, ddev, src, sdev, n, s));
    VT_CALL_END(c, r);
    c.dev = ddev;
    struct vt_copy_extra x = { .async = 1, .stream = u(s), .kind = cudaMemcpyDeviceToDevice, .src_dev = sdev };
    vt_ev_copy(&c, u(dst), u(src), n, &x);
    return r;
}

typedef cudaError_t (*memset_fn)(void *, int, size_t);
static cudaError_t memset_impl(void *real, const char *api, void *p, int v, size_t n)
{
    RT_FORWARD_IF_NESTED(((memset_fn)real)(p, v, n));
    VT_CALL_BEGIN(c, api);
    cudaError_t r;
    RT_CALL(r, ((memset_fn)real)(p, v, n));
    VT_CALL_END(c, r);
    vt_ev_set(&c, u(p), n, v, 0, 0, 1);
    return r;
}
RT_TWIN(cudaMemset, memset_impl, (void *p, int v, size_t n), p, v, n)
RT_TWIN(cudaMemset_ptds, memset_impl, (void *p, int v, size_t n), p, v, n)

typedef cudaError_t (*memset_async_fn)(void *, int, size_t, cudaStream_t);
static cudaError_t memset_async_impl(void *real, const char *api, void *p, int v, size_t n, cudaStream_t s)
{
    RT_FORWARD_IF_NESTED(((memset_async_fn)real)(p, v, n, s));
    VT_CALL_BEGIN(c, api);
    cudaError_t r;
    RT_CALL(r, ((memset_async_fn)real)(p, v, n, s));
    VT_CALL_END(c, r);
    vt_ev_set(&c, u(p), n, v, 1, u(s), 1);
    return r;
}
RT_TWIN(cudaMemsetAsync, memset_async_impl, (void *p, int v, size_t n, cudaStream_t s), p, v, n, s)
RT_TWIN(cudaMemsetAsync_ptsz, memset_async_impl, (void *p, int v, size_t n, cudaStream_t s), p, v, n, s)

VT_REAL_SLOT(cudaMemGetInfo);
cudaError_t cudaMemGetInfo(size_t *fr, size_t *tot)
{
    RT_ENTER(cudaMemGetInfo, real);
    RT_FORWARD_IF_NESTED(real(fr, tot));
    VT_CALL_BEGIN(c, "cudaMemGetInfo");
    cudaError_t r;
    RT_CALL(r, real(fr, tot));
    VT_CALL_END(c, r);
    vt_ev_meminfo(&c, fr ? *fr : 0, tot ? *tot : 0);
    return r;
}

const struct vt_hook vt_hooks_runtime[] = {
    VT_HOOK_ENTRY(cudaMalloc, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMallocManaged, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMallocPitch, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMalloc3D, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaHostAlloc, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMallocHost, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaHostRegister, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMallocAsync, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMallocAsync_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMallocFromPoolAsync, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMallocFromPoolAsync_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaFree, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaFreeHost, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaHostUnregister, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaFreeAsync, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaFreeAsync_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpy, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpy_ptds, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpyAsync, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpyAsync_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpy2D, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpy2D_ptds, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpy2DAsync, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpy2DAsync_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpyPeer, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemcpyPeerAsync, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemset, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemset_ptds, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemsetAsync, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemsetAsync_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaMemGetInfo, NULL, 0, 0),
    { NULL, NULL, 0, 0, NULL, NULL },
};
