/* hooks_driver.c - libcuda wrappers, reached by direct linking (-lcuda), dlsym or cuGetProcAddress
 * (whose own hook is in interpose.c).
 * Driver hooks reached from inside a runtime hook only forward: the runtime hook records the call. */
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

typedef unsigned long long cuuint64_t;
#define u vt_u64

/* Exported wrapper `fn` whose body is `impl(real, "fn", args...)`: one implementation serves a
 * function and its _ptds/_ptsz twin. */

/* ---- allocation ------------------------------------------------------------------------------ */

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
static CUresult alloc_impl(void *real, const char *api, CUdeviceptr *p, size_t n)
{
    if (DRV_SKIP()) return ((alloc_fn)real)(p, n);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((alloc_fn)real)(p, n);
    VT_CALL_END(c, r);
    vt_ev_alloc(&c, r == CUDA_SUCCESS && p ? *p : 0, n, VT_MEM_DEVICE, NULL);
    return r;
}
DRV_HOOK(cuMemAlloc_v2, alloc_impl, (CUdeviceptr *p, size_t n), p, n)

typedef CUresult (*alloc_pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
static CUresult alloc_pitch_impl(void *real, const char *api, CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e)
{
    if (DRV_SKIP()) return ((alloc_pitch_fn)real)(p, pitch, w, h, e);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((alloc_pitch_fn)real)(p, pitch, w, h, e);
    VT_CALL_END(c, r);
    size_t pt = r == CUDA_SUCCESS && pitch ? *pitch : w;
    struct vt_alloc_extra x = { .pitch = pt, .width = w, .height = h };
    vt_ev_alloc(&c, r == CUDA_SUCCESS && p ? *p : 0, pt * h, VT_MEM_DEVICE, &x);
    return r;
}
DRV_HOOK(cuMemAllocPitch_v2, alloc_pitch_impl, (CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e), p, pitch, w, h, e)

typedef CUresult (*alloc_flags_fn)(CUdeviceptr *, size_t, unsigned int);
static CUresult alloc_managed_impl(void *real, const char *api, CUdeviceptr *p, size_t n, unsigned int f)
{
    if (DRV_SKIP()) return ((alloc_flags_fn)real)(p, n, f);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((alloc_flags_fn)real)(p, n, f);
    VT_CALL_END(c, r);
    vt_ev_alloc(&c, r == CUDA_SUCCESS && p ? *p : 0, n, VT_MEM_MANAGED, NULL);
    return r;
}
DRV_HOOK(cuMemAllocManaged, alloc_managed_impl, (CUdeviceptr *p, size_t n, unsigned int f), p, n, f)

typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
static CUresult alloc_async_impl(void *real, const char *api, CUdeviceptr *p, size_t n, CUstream s)
{
    if (DRV_SKIP()) return ((alloc_async_fn)real)(p, n, s);
    const void *graph = vt_capture_key(u(s), NULL); /* a graph allocation node: memory only while it runs */
    VT_CALL_BEGIN(c, api);
    CUresult r = ((alloc_async_fn)real)(p, n, s);
    VT_CALL_END(c, r);
    struct vt_alloc_extra x = { .stream = u(s), .has_stream = 1 };
    if (!graph) { vt_ev_alloc(&c, r == CUDA_SUCCESS && p ? *p : 0, n, VT_MEM_ASYNC, &x); return r; }
    vt_ev_region_open(&c, VT_EVN_GRAPH_ALLOC, r == CUDA_SUCCESS && p ? *p : 0, n, VT_MEM_GRAPH, &x);
    if (r == CUDA_SUCCESS && p) vt_graph_add_alloc(graph, *p, n, c.dev);
    return r;
}
DRV_HOOK(cuMemAllocAsync, alloc_async_impl, (CUdeviceptr *p, size_t n, CUstream s), p, n, s)
DRV_HOOK(cuMemAllocAsync_ptsz, alloc_async_impl, (CUdeviceptr *p, size_t n, CUstream s), p, n, s)

typedef CUresult (*alloc_pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
static CUresult alloc_pool_impl(void *real, const char *api, CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
    if (DRV_SKIP()) return ((alloc_pool_fn)real)(p, n, pool, s);
    const void *graph = vt_capture_key(u(s), NULL);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((alloc_pool_fn)real)(p, n, pool, s);
    VT_CALL_END(c, r);
    struct vt_alloc_extra x = { .stream = u(s), .has_stream = 1 };
    if (!graph) { vt_ev_alloc(&c, r == CUDA_SUCCESS && p ? *p : 0, n, VT_MEM_ASYNC, &x); return r; }
    vt_ev_region_open(&c, VT_EVN_GRAPH_ALLOC, r == CUDA_SUCCESS && p ? *p : 0, n, VT_MEM_GRAPH, &x);
    if (r == CUDA_SUCCESS && p) vt_graph_add_alloc(graph, *p, n, c.dev);
    return r;
}
DRV_HOOK(cuMemAllocFromPoolAsync, alloc_pool_impl, (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s), p, n, pool, s)
DRV_HOOK(cuMemAllocFromPoolAsync_ptsz, alloc_pool_impl, (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s), p, n, pool, s)

typedef CUresult (*host_alloc_fn)(void **, size_t, unsigned int);
static CUresult host_alloc_impl(void *real, const char *api, void **p, size_t n, unsigned int f)
{
    if (DRV_SKIP()) return ((host_alloc_fn)real)(p, n, f);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((host_alloc_fn)real)(p, n, f);
    VT_CALL_END(c, r);
    vt_ev_alloc(&c, r == CUDA_SUCCESS && p ? u(*p) : 0, n, VT_MEM_PINNED, NULL);
    return r;
}
DRV_HOOK(cuMemHostAlloc, host_alloc_impl, (void **p, size_t n, unsigned int f), p, n, f)

typedef CUresult (*alloc_host_fn)(void **, size_t);
static CUresult alloc_host_impl(void *real, const char *api, void **p, size_t n)
{
    if (DRV_SKIP()) return ((alloc_host_fn)real)(p, n);
    VT_CALL_BEGIN(c, api);
    /* A driver may implement it with its own exported cuMemHostAlloc (the simulator does): that
     * nested call only forwards, so the allocation is recorded once. */
    vt_ts.rt_depth++;
    CUresult r = ((alloc_host_fn)real)(p, n);
    vt_ts.rt_depth--;
    VT_CALL_END(c, r);
    vt_ev_alloc(&c, r == CUDA_SUCCESS && p ? u(*p) : 0, n, VT_MEM_PINNED, NULL);
    return r;
}
DRV_HOOK(cuMemAllocHost_v2, alloc_host_impl, (void **p, size_t n), p, n)

typedef CUresult (*host_register_fn)(void *, size_t, unsigned int);
static CUresult host_register_impl(void *real, const char *api, void *p, size_t n, unsigned int f)
{
    if (DRV_SKIP()) return ((host_register_fn)real)(p, n, f);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((host_register_fn)real)(p, n, f);
    VT_CALL_END(c, r);
    vt_ev_alloc(&c, u(p), n, VT_MEM_REGISTERED, NULL);
    return r;
}
DRV_HOOK(cuMemHostRegister_v2, host_register_impl, (void *p, size_t n, unsigned int f), p, n, f)

typedef CUresult (*mem_create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
static CUresult mem_create_impl(void *real, const char *api, CUmemGenericAllocationHandle *h, size_t n,
                                const CUmemAllocationProp *prop, unsigned long long f)
{
    if (DRV_SKIP()) return ((mem_create_fn)real)(h, n, prop, f);
    VT_CALL_BEGIN(c, api);
    if (prop && prop->location.type == 1 /* CU_MEM_LOCATION_TYPE_DEVICE */) c.dev = prop->location.id;
    CUresult r = ((mem_create_fn)real)(h, n, prop, f);
    VT_CALL_END(c, r);
    struct vt_alloc_extra x = { .is_handle = 1, .handle = r == CUDA_SUCCESS && h ? *h : 0 };
    vt_ev_alloc(&c, 0, n, VT_MEM_VMM, &x);
    return r;
}
DRV_HOOK(cuMemCreate, mem_create_impl, (CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop, unsigned long long f), h, n, prop, f)

/* ---- free ------------------------------------------------------------------------------------ */

typedef CUresult (*free_fn)(CUdeviceptr);
static CUresult free_impl(void *real, const char *api, CUdeviceptr p)
{
    if (DRV_SKIP() || !p) return ((free_fn)real)(p);
    struct vt_free_pending fp;
    vt_ev_free_begin(&fp, api, p, 0, 0, 0);
    CUresult r = ((free_fn)real)(p);
    vt_ev_free_end(&fp, r);
    return r;
}
DRV_HOOK(cuMemFree_v2, free_impl, (CUdeviceptr p), p)

typedef CUresult (*free_host_fn)(void *);
static CUresult free_host_impl(void *real, const char *api, void *p)
{
    if (DRV_SKIP() || !p) return ((free_host_fn)real)(p);
    struct vt_free_pending fp;
    vt_ev_free_begin(&fp, api, u(p), 0, 0, 0);
    CUresult r = ((free_host_fn)real)(p);
    vt_ev_free_end(&fp, r);
    return r;
}
DRV_HOOK(cuMemFreeHost, free_host_impl, (void *p), p)
DRV_HOOK(cuMemHostUnregister, free_host_impl, (void *p), p)

typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
static CUresult free_async_impl(void *real, const char *api, CUdeviceptr p, CUstream s)
{
    if (DRV_SKIP() || !p) return ((free_async_fn)real)(p, s);
    const void *graph = vt_capture_key(u(s), NULL);
    if (graph) { /* a graph free node: recorded when the graph runs */
        CUresult r = ((free_async_fn)real)(p, s);
        if (r == CUDA_SUCCESS) vt_graph_add_free(graph, p);
        return r;
    }
    struct vt_free_pending fp;
    vt_ev_free_begin(&fp, api, p, 0, u(s), 1);
    CUresult r = ((free_async_fn)real)(p, s);
    vt_ev_free_end(&fp, r);
    return r;
}
DRV_HOOK(cuMemFreeAsync, free_async_impl, (CUdeviceptr p, CUstream s), p, s)
DRV_HOOK(cuMemFreeAsync_ptsz, free_async_impl, (CUdeviceptr p, CUstream s), p, s)

typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
static CUresult release_impl(void *real, const char *api, CUmemGenericAllocationHandle h)
{
    if (DRV_SKIP()) return ((release_fn)real)(h);
    struct vt_free_pending fp;
    vt_ev_free_begin(&fp, api, h, 1, 0, 0);
    CUresult r = ((release_fn)real)(h);
    vt_ev_free_end(&fp, r);
    return r;
}
DRV_HOOK(cuMemRelease, release_impl, (CUmemGenericAllocationHandle h), h)

typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
static CUresult map_impl(void *real, const char *api, CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h, unsigned long long f)
{
    if (DRV_SKIP()) return ((map_fn)real)(p, n, off, h, f);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((map_fn)real)(p, n, off, h, f);
    VT_CALL_END(c, r);
    vt_ev_map(&c, 1, p, n, h);
    return r;
}
DRV_HOOK(cuMemMap, map_impl, (CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h, unsigned long long f), p, n, off, h, f)

typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);
static CUresult unmap_impl(void *real, const char *api, CUdeviceptr p, size_t n)
{
    if (DRV_SKIP()) return ((unmap_fn)real)(p, n);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((unmap_fn)real)(p, n);
    VT_CALL_END(c, r);
    vt_ev_map(&c, 0, p, n, 0);
    return r;
}
DRV_HOOK(cuMemUnmap, unmap_impl, (CUdeviceptr p, size_t n), p, n)

typedef CUresult (*meminfo_fn)(size_t *, size_t *);
static CUresult meminfo_impl(void *real, const char *api, size_t *fr, size_t *tot)
{
    if (DRV_SKIP()) return ((meminfo_fn)real)(fr, tot);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((meminfo_fn)real)(fr, tot);
    VT_CALL_END(c, r);
    vt_ev_meminfo(&c, fr ? *fr : 0, tot ? *tot : 0);
    return r;
}
DRV_HOOK(cuMemGetInfo_v2, meminfo_impl, (size_t *fr, size_t *tot), fr, tot)

const struct vt_hook vt_hooks_driver[] = {
    VT_HOOK_ENTRY(cuMemAlloc_v2, "cuMemAlloc", 3020, 0),
    VT_HOOK_ENTRY(cuMemAllocPitch_v2, "cuMemAllocPitch", 3020, 0),
    VT_HOOK_ENTRY(cuMemAllocManaged, "cuMemAllocManaged", 6000, 0),
    VT_HOOK_ENTRY(cuMemAllocAsync, "cuMemAllocAsync", 11020, 0),
    VT_HOOK_ENTRY(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020, 1),
    VT_HOOK_ENTRY(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, 0),
    VT_HOOK_ENTRY(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020, 1),
    VT_HOOK_ENTRY(cuMemHostAlloc, "cuMemHostAlloc", 2020, 0),
    VT_HOOK_ENTRY(cuMemAllocHost_v2, "cuMemAllocHost", 3020, 0),
    VT_HOOK_ENTRY(cuMemHostRegister_v2, "cuMemHostRegister", 6050, 0),
    VT_HOOK_ENTRY(cuMemCreate, "cuMemCreate", 10020, 0),
    VT_HOOK_ENTRY(cuMemFree_v2, "cuMemFree", 3020, 0),
    VT_HOOK_ENTRY(cuMemFreeHost, "cuMemFreeHost", 2000, 0),
    VT_HOOK_ENTRY(cuMemHostUnregister, "cuMemHostUnregister", 4000, 0),
    VT_HOOK_ENTRY(cuMemFreeAsync, "cuMemFreeAsync", 11020, 0),
    VT_HOOK_ENTRY(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020, 1),
    VT_HOOK_ENTRY(cuMemRelease, "cuMemRelease", 10020, 0),
    VT_HOOK_ENTRY(cuMemMap, "cuMemMap", 10020, 0),
    VT_HOOK_ENTRY(cuMemUnmap, "cuMemUnmap", 10020, 0),
    VT_HOOK_ENTRY(cuMemGetInfo_v2, "cuMemGetInfo", 3020, 0),
    { NULL, NULL, 0, 0, NULL, NULL },
};
