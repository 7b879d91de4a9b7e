/* hooks_driver_ops.c - libcuda copies, sets, launches, module loading and synchronisation. */
#include <stdint.h>
#include <string.h>

#include "cuda_abi.h"
#include "check.h"
#include "events.h"
#include "kernels.h"
#include "registry.h"
#include "resolve.h"
#include "tracer.h"
#include "hooks_common.h"
#include "hooks_pool.h"

#define u vt_u64


/* ---- copies: `kind` is the direction the API name promises (checked against the pointers) --- */

static void copy_event(struct vt_call *c, CUresult r, uint64_t dst, uint64_t src, size_t n, int kind, int async, CUstream s)
{
    VT_CALL_END(*c, r);
    struct vt_copy_extra x = { .async = async, .stream = u(s), .kind = kind, .src_dev = -1 };
    vt_ev_copy(c, dst, src, n, &x);
}

typedef CUresult (*copy_fn)(CUdeviceptr, CUdeviceptr, size_t);
static CUresult copy_impl(void *real, const char *api, CUdeviceptr d, CUdeviceptr s, size_t n)
{
    if (DRV_SKIP()) return ((copy_fn)real)(d, s, n);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((copy_fn)real)(d, s, n);
    copy_event(&c, r, d, s, n, strstr(api, "DtoD") ? cudaMemcpyDeviceToDevice : -1, 0, NULL);
    return r;
}
DRV_FWD_HOOK(cuMemcpy, copy_impl, (CUdeviceptr d, CUdeviceptr s, size_t n), d, s, n)
DRV_FWD_HOOK(cuMemcpy_ptds, copy_impl, (CUdeviceptr d, CUdeviceptr s, size_t n), d, s, n)
DRV_FWD_HOOK(cuMemcpyDtoD_v2, copy_impl, (CUdeviceptr d, CUdeviceptr s, size_t n), d, s, n)
DRV_FWD_HOOK(cuMemcpyDtoD_v2_ptds, copy_impl, (CUdeviceptr d, CUdeviceptr s, size_t n), d, s, n)

typedef CUresult (*copy_async_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
static CUresult copy_async_impl(void *real, const char *api, CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    if (DRV_SKIP()) return ((copy_async_fn)real)(d, s, n, st);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((copy_async_fn)real)(d, s, n, st);
    copy_event(&c, r, d, s, n, strstr(api, "DtoD") ? cudaMemcpyDeviceToDevice : -1, 1, st);
    return r;
}
DRV_FWD_HOOK(cuMemcpyAsync, copy_async_impl, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), d, s, n, st)
DRV_FWD_HOOK(cuMemcpyAsync_ptsz, copy_async_impl, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), d, s, n, st)
DRV_FWD_HOOK(cuMemcpyDtoDAsync_v2, copy_async_impl, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), d, s, n, st)
DRV_FWD_HOOK(cuMemcpyDtoDAsync_v2_ptsz, copy_async_impl, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), d, s, n, st)

typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
static CUresult htod_impl(void *real, const char *api, CUdeviceptr d, const void *s, size_t n)
{
    if (DRV_SKIP()) return ((htod_fn)real)(d, s, n);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((htod_fn)real)(d, s, n);
    copy_event(&c, r, d, u(s), n, cudaMemcpyHostToDevice, 0, NULL);
    return r;
}
DRV_FWD_HOOK(cuMemcpyHtoD_v2, htod_impl, (CUdeviceptr d, const void *s, size_t n), d, s, n)
DRV_FWD_HOOK(cuMemcpyHtoD_v2_ptds, htod_impl, (CUdeviceptr d, const void *s, size_t n), d, s, n)

typedef CUresult (*htod_async_fn)(CUdeviceptr, const void *, size_t, CUstream);
static CUresult htod_async_impl(void *real, const char *api, CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    if (DRV_SKIP()) return ((htod_async_fn)real)(d, s, n, st);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((htod_async_fn)real)(d, s, n, st);
    copy_event(&c, r, d, u(s), n, cudaMemcpyHostToDevice, 1, st);
    return r;
}
DRV_FWD_HOOK(cuMemcpyHtoDAsync_v2, htod_async_impl, (CUdeviceptr d, const void *s, size_t n, CUstream st), d, s, n, st)
DRV_FWD_HOOK(cuMemcpyHtoDAsync_v2_ptsz, htod_async_impl, (CUdeviceptr d, const void *s, size_t n, CUstream st), d, s, n, st)

typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
static CUresult dtoh_impl(void *real, const char *api, void *d, CUdeviceptr s, size_t n)
{
    if (DRV_SKIP()) return ((dtoh_fn)real)(d, s, n);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((dtoh_fn)real)(d, s, n);
    copy_event(&c, r, u(d), s, n, cudaMemcpyDeviceToHost, 0, NULL);
    return r;
}
DRV_FWD_HOOK(cuMemcpyDtoH_v2, dtoh_impl, (void *d, CUdeviceptr s, size_t n), d, s, n)
DRV_FWD_HOOK(cuMemcpyDtoH_v2_ptds, dtoh_impl, (void *d, CUdeviceptr s, size_t n), d, s, n)

typedef CUresult (*dtoh_async_fn)(void *, CUdeviceptr, size_t, CUstream);
static CUresult dtoh_async_impl(void *real, const char *api, void *d, CUdeviceptr s, size_t n, CUstream st)
{
    if (DRV_SKIP()) return ((dtoh_async_fn)real)(d, s, n, st);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((dtoh_async_fn)real)(d, s, n, st);
    copy_event(&c, r, u(d), s, n, cudaMemcpyDeviceToHost, 1, st);
    return r;
}
DRV_FWD_HOOK(cuMemcpyDtoHAsync_v2, dtoh_async_impl, (void *d, CUdeviceptr s, size_t n, CUstream st), d, s, n, st)
DRV_FWD_HOOK(cuMemcpyDtoHAsync_v2_ptsz, dtoh_async_impl, (void *d, CUdeviceptr s, size_t n, CUstream st), d, s, n, st)

static void copy2d_event(struct vt_call *c, CUresult r, const CUDA_MEMCPY2D *p, int async, CUstream s)
{
    VT_CALL_END(*c, r);
    if (!p) return;
    uint64_t dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? u(p->dstHost) : p->dstDevice;
    uint64_t src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? u(p->srcHost) : p->srcDevice;
    dst += p->dstY * p->dstPitch + p->dstXInBytes;
    src += p->srcY * p->srcPitch + p->srcXInBytes;
    struct vt_copy_extra x = { .async = async, .stream = u(s), .kind = -1, .is_2d = 1, .width = p->WidthInBytes,
                               .height = p->Height, .dpitch = p->dstPitch, .spitch = p->srcPitch, .src_dev = -1 };
    vt_ev_copy(c, dst, src, (uint64_t)p->WidthInBytes * p->Height, &x);
}
typedef CUresult (*copy2d_fn)(const CUDA_MEMCPY2D *);
static CUresult copy2d_impl(void *real, const char *api, const CUDA_MEMCPY2D *p)
{
    if (DRV_SKIP()) return ((copy2d_fn)real)(p);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((copy2d_fn)real)(p);
    copy2d_event(&c, r, p, 0, NULL);
    return r;
}
DRV_FWD_HOOK(cuMemcpy2D_v2, copy2d_impl, (const CUDA_MEMCPY2D *p), p)
DRV_FWD_HOOK(cuMemcpy2D_v2_ptds, copy2d_impl, (const CUDA_MEMCPY2D *p), p)
typedef CUresult (*copy2d_async_fn)(const CUDA_MEMCPY2D *, CUstream);
static CUresult copy2d_async_impl(void *real, const char *api, const CUDA_MEMCPY2D *p, CUstream s)
{
    if (DRV_SKIP()) return ((copy2d_async_fn)real)(p, s);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((copy2d_async_fn)real)(p, s);
    copy2d_event(&c, r, p, 1, s);
    return r;
}
DRV_FWD_HOOK(cuMemcpy2DAsync_v2, copy2d_async_impl, (const CUDA_MEMCPY2D *p, CUstream s), p, s)
DRV_FWD_HOOK(cuMemcpy2DAsync_v2_ptsz, copy2d_async_impl, (const CUDA_MEMCPY2D *p, CUstream s), p, s)

/* Peer copies: `dev` is the destination's device and `src_dev` the source's, from the registry
 * (the contexts' devices, without calling the driver). */
static void peer_event(struct vt_call *c, CUresult r, uint64_t dst, uint64_t src, size_t n, int async, CUstream s)
{
    VT_CALL_END(*c, r);
    vt_alloc_info a;
    int src_dev = vt_registry_lookup(src, &a) == 0 ? a.dev : -1;
    if (vt_registry_lookup(dst, &a) == 0 && a.dev >= 0) c->dev = a.dev;
    struct vt_copy_extra x = { .async = async, .stream = u(s), .kind = cudaMemcpyDeviceToDevice, .src_dev = src_dev };
    vt_ev_copy(c, dst, src, n, &x);
}

typedef CUresult (*peer_fn)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
static CUresult peer_impl(void *real, const char *api, CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
{
    if (DRV_SKIP()) return ((peer_fn)real)(d, dc, s, sc, n);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((peer_fn)real)(d, dc, s, sc, n);
    peer_event(&c, r, d, s, n, 0, NULL);
    return r;
}
DRV_FWD_HOOK(cuMemcpyPeer, peer_impl, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n), d, dc, s, sc, n)
DRV_FWD_HOOK(cuMemcpyPeer_ptds, peer_impl, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n), d, dc, s, sc, n)
typedef CUresult (*peer_async_fn)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
static CUresult peer_async_impl(void *real, const char *api, CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
    if (DRV_SKIP()) return ((peer_async_fn)real)(d, dc, s, sc, n, st);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((peer_async_fn)real)(d, dc, s, sc, n, st);
    peer_event(&c, r, d, s, n, 1, st);
    return r;
}
DRV_FWD_HOOK(cuMemcpyPeerAsync, peer_async_impl, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st), d, dc, s, sc, n, st)
DRV_FWD_HOOK(cuMemcpyPeerAsync_ptsz, peer_async_impl, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st), d, dc, s, sc, n, st)

/* ---- sets: element width from the name (D8/D16/D32) ------------------------------------------ */

static uint64_t elem_of(const char *api) { return strstr(api, "D32") ? 4 : strstr(api, "D16") ? 2 : 1; }
typedef CUresult (*set_fn)(CUdeviceptr, unsigned int, size_t);
static CUresult set_impl(void *real, const char *api, CUdeviceptr d, unsigned int v, size_t n)
{
    if (DRV_SKIP()) return ((set_fn)real)(d, v, n);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((set_fn)real)(d, v, n);
    VT_CALL_END(c, r);
    vt_ev_set(&c, d, n, (int)v, 0, 0, elem_of(api));
    return r;
}
/* D8/D16 take unsigned char/short, promoted to int in the same register as unsigned int. */
DRV_FWD_HOOK(cuMemsetD8_v2, set_impl, (CUdeviceptr d, unsigned int v, size_t n), d, v, n)
DRV_FWD_HOOK(cuMemsetD8_v2_ptds, set_impl, (CUdeviceptr d, unsigned int v, size_t n), d, v, n)
DRV_FWD_HOOK(cuMemsetD16_v2, set_impl, (CUdeviceptr d, unsigned int v, size_t n), d, v, n)
DRV_FWD_HOOK(cuMemsetD16_v2_ptds, set_impl, (CUdeviceptr d, unsigned int v, size_t n), d, v, n)
DRV_FWD_HOOK(cuMemsetD32_v2, set_impl, (CUdeviceptr d, unsigned int v, size_t n), d, v, n)
DRV_FWD_HOOK(cuMemsetD32_v2_ptds, set_impl, (CUdeviceptr d, unsigned int v, size_t n), d, v, n)
typedef CUresult (*set_async_fn)(CUdeviceptr, unsigned int, size_t, CUstream);
static CUresult set_async_impl(void *real, const char *api, CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    if (DRV_SKIP()) return ((set_async_fn)real)(d, v, n, s);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((set_async_fn)real)(d, v, n, s);
    VT_CALL_END(c, r);
    vt_ev_set(&c, d, n, (int)v, 1, u(s), elem_of(api));
    return r;
}
DRV_FWD_HOOK(cuMemsetD8Async, set_async_impl, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d, v, n, s)
DRV_FWD_HOOK(cuMemsetD8Async_ptsz, set_async_impl, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d, v, n, s)
DRV_FWD_HOOK(cuMemsetD16Async, set_async_impl, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d, v, n, s)
DRV_FWD_HOOK(cuMemsetD16Async_ptsz, set_async_impl, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d, v, n, s)
DRV_FWD_HOOK(cuMemsetD32Async, set_async_impl, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d, v, n, s)
DRV_FWD_HOOK(cuMemsetD32Async_ptsz, set_async_impl, (CUdeviceptr d, unsigned int v, size_t n, CUstream s), d, v, n, s)

/* ---- modules and kernels: remember images and names for layouts ----------------------------- */
/* Images are copied at load time (kernels.h): the program may free its image, or remove its
 * file, before the first launch. The copy is taken before the real call returns to the program,
 * while the image is still the one the driver loaded. */

typedef CUresult (*mod_load_fn)(CUmodule *, const void *);
static CUresult mod_load_impl(void *real, const char *api, CUmodule *m, const void *image)
{
    CUresult r = ((mod_load_fn)real)(m, image);
    if (r == CUDA_SUCCESS && m && vt_cfg.enabled) vt_kernels_module_loaded(*m, image);
    return r;
}
DRV_HOOK(cuModuleLoadData, mod_load_impl, (CUmodule *m, const void *image), m, image)
DRV_HOOK(cuModuleLoadFatBinary, mod_load_impl, (CUmodule *m, const void *image), m, image)

typedef CUresult (*mod_load_file_fn)(CUmodule *, const char *);
static CUresult mod_load_file_impl(void *real, const char *api, CUmodule *m, const char *path)
{
    CUresult r = ((mod_load_file_fn)real)(m, path);
    if (r == CUDA_SUCCESS && m && vt_cfg.enabled) vt_kernels_module_loaded_file(*m, path);
    return r;
}
DRV_HOOK(cuModuleLoad, mod_load_file_impl, (CUmodule *m, const char *path), m, path)

typedef CUresult (*unload_fn)(void *);
static CUresult unload_impl(void *real, const char *api, void *handle)
{
    CUresult r = ((unload_fn)real)(handle);
    if (r == CUDA_SUCCESS && vt_cfg.enabled) vt_kernels_module_unloaded(handle);
    return r;
}
DRV_HOOK(cuModuleUnload, unload_impl, (CUmodule m), m)
DRV_HOOK(cuLibraryUnload, unload_impl, (CUlibrary l), l)

typedef CUresult (*mod_load_ex_fn)(CUmodule *, const void *, unsigned int, void *, void **);
static CUresult mod_load_ex_impl(void *real, const char *api, CUmodule *m, const void *image, unsigned int n, void *opts, void **vals)
{
    CUresult r = ((mod_load_ex_fn)real)(m, image, n, opts, vals);
    if (r == CUDA_SUCCESS && m && vt_cfg.enabled) vt_kernels_module_loaded(*m, image);
    return r;
}
DRV_HOOK(cuModuleLoadDataEx, mod_load_ex_impl, (CUmodule *m, const void *image, unsigned int n, void *opts, void **vals), m, image, n, opts, vals)

typedef CUresult (*lib_load_fn)(CUlibrary *, const void *, void *, void **, unsigned int, void *, void **, unsigned int);
static CUresult lib_load_impl(void *real, const char *api, CUlibrary *l, const void *code, void *jo, void **jv,
                              unsigned int nj, void *lo, void **lv, unsigned int nl)
{
    CUresult r = ((lib_load_fn)real)(l, code, jo, jv, nj, lo, lv, nl);
    if (r == CUDA_SUCCESS && l && vt_cfg.enabled) vt_kernels_module_loaded(*l, code);
    return r;
}
DRV_HOOK(cuLibraryLoadData, lib_load_impl, (CUlibrary *l, const void *code, void *jo, void **jv, unsigned int nj, void *lo, void **lv, unsigned int nl), l, code, jo, jv, nj, lo, lv, nl)

typedef CUresult (*lib_load_file_fn)(CUlibrary *, const char *, void *, void **, unsigned int, void *, void **, unsigned int);
static CUresult lib_load_file_impl(void *real, const char *api, CUlibrary *l, const char *path, void *jo, void **jv,
                                   unsigned int nj, void *lo, void **lv, unsigned int nl)
{
    CUresult r = ((lib_load_file_fn)real)(l, path, jo, jv, nj, lo, lv, nl);
    if (r == CUDA_SUCCESS && l && vt_cfg.enabled) vt_kernels_module_loaded_file(*l, path);
    return r;
}
DRV_HOOK(cuLibraryLoadFromFile, lib_load_file_impl, (CUlibrary *l, const char *path, void *jo, void **jv, unsigned int nj, void *lo, void **lv, unsigned int nl), l, path, jo, jv, nj, lo, lv, nl)

typedef CUresult (*get_fn)(void **, void *, const char *);
static CUresult get_function_impl(void *real, const char *api, void **out, void *mod, const char *name)
{
    CUresult r = ((get_fn)real)(out, mod, name);
    if (r == CUDA_SUCCESS && out && *out && name && vt_cfg.enabled) {
        int is_fn = strcmp(api, "cuModuleGetFunction") == 0;
        vt_kernel *k = vt_kernels_driver(*out, name, vt_kernels_module_lookup(mod), is_fn ? u(*out) : 0);
        if (k && !is_fn) atomic_store(&k->kernel_handle, *out);
    }
    return r;
}
DRV_HOOK(cuModuleGetFunction, get_function_impl, (void **out, void *mod, const char *name), out, mod, name)
DRV_HOOK(cuLibraryGetKernel, get_function_impl, (void **out, void *lib, const char *name), out, lib, name)

typedef CUresult (*kernel_fn_fn)(CUfunction *, CUkernel);
static CUresult kernel_get_function_impl(void *real, const char *api, CUfunction *f, CUkernel kern)
{
    CUresult r = ((kernel_fn_fn)real)(f, kern);
    if (r == CUDA_SUCCESS && f && *f && vt_cfg.enabled) {
        vt_kernel *k = vt_kernels_by_handle(kern);
        if (k) vt_kernels_bind(*f, k);
    }
    return r;
}
DRV_HOOK(cuKernelGetFunction, kernel_get_function_impl, (CUfunction *f, CUkernel kern), f, kern)

/* A CUfunction the tracer never saw made (a module loaded before preload, or functions found by
 * a call it does not hook, such as cuModuleEnumerateFunctions): ask the driver its name and its
 * module, whose image the tracer may hold (then the kernel's address uses come from it). */
static vt_kernel *kernel_of(CUfunction f)
{
    vt_kernel *k = vt_kernels_by_handle(f);
    if (!k) {
        typedef CUresult (*name_fn)(const char **, CUfunction);
        typedef CUresult (*module_fn)(CUmodule *, CUfunction);
        name_fn getname = (name_fn)vt_real_driver("cuFuncGetName");
        module_fn getmod = (module_fn)vt_real_driver("cuFuncGetModule");
        const char *name = NULL;
        CUmodule mod = NULL;
        vt_ts.guard++;
        if (!getname || getname(&name, f) != CUDA_SUCCESS) name = NULL;
        if (name && (!getmod || getmod(&mod, f) != CUDA_SUCCESS)) mod = NULL;
        vt_ts.guard--;
        k = name ? vt_kernels_driver(f, name, mod ? vt_kernels_module_lookup(mod) : NULL, u(f)) : vt_kernels_unknown(f);
        if (k && !k->function) k->function = u(f);
    }
    if (k && !atomic_load_explicit(&k->layout_state, memory_order_acquire)) vt_kernel_resolve_layout(k, vt_driver_paraminfo, vt_device_sm(vt_ts.cur_dev));
    return k;
}
vt_kernel *vt_kernel_of_function(void *f) { return kernel_of((CUfunction)f); }

/* The kernel record and the argument check, before the real launch (kernelParams, or the packed
 * buffer `extra` names); 1 when the launch is traced (vt_launch_begin). */
static int before_launch(struct vt_call *c, vt_kernel **k, CUfunction f, void **params, void **extra)
{
    *k = kernel_of(f);
    const void *buf;
    uint64_t len;
    vt_packed_args(params ? NULL : extra, &buf, &len);
    return vt_launch_begin(c, *k, params, buf, len);
}

/* A launch hook whose forward-only case is decided in the exported wrapper itself: every runtime
 * launch reaches cuLaunchKernel from inside the runtime, where it only passes on. Once the tracer
 * is initialised and the real function known that test needs no call, and both ways out are tail
 * calls with the caller's arguments in place (a jump, not a re-marshalled thirteen-argument call
 * through a shared body). Anything else takes fn##_full, the usual hook. */
/* The usual hook's body, fn##_full's. */
#define DRV_LAUNCH_FULL_BODY(fn, impl, fn_t, ...)                                            \
    {                                                                                        \
        vt_init();                                                                           \
        void *real_ = vt_real_get(&real_##fn, #fn);                                          \
        if (!real_) return CUDA_ERROR_NOT_SUPPORTED;                                         \
        if (DRV_SKIP()) return ((fn_t)real_)(__VA_ARGS__);                                   \
        return impl(real_, #fn, __VA_ARGS__);                                                \
    }
#define DRV_LAUNCH_HOOK(fn, impl, fn_t, params, ...)                                         \
    VT_REAL_SLOT(fn);                                                                        \
    static __attribute__((noinline)) CUresult fn##_full params                               \
    DRV_LAUNCH_FULL_BODY(fn, impl, fn_t, __VA_ARGS__)                                        \
    CUresult fn params                                                                       \
    {                                                                                        \
        void *real_ = atomic_load_explicit(&real_##fn, memory_order_acquire);                \
        if (__builtin_expect(real_ && vt_in_runtime(), 1)) /* a runtime hook ran vt_init */  \
            return ((fn_t)real_)(__VA_ARGS__);                                               \
        return fn##_full(__VA_ARGS__);                                                       \
    }

/* As the runtime launches (hooks_launch.c): errno kept once around both halves, the trace asked
 * once. */
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);
static CUresult launch_impl(void *real, const char *api, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shm, CUstream s, void **params, void **extra)
{
    VT_LAUNCH_BEGIN(c, k, traced, api, before_launch(&c, &k, f, params, extra));
    CUresult r = ((launch_fn)real)(f, gx, gy, gz, bx, by, bz, shm, s, params, extra);
    VT_LAUNCH_END(c, k, traced, r, ((vt_dim3){ gx, gy, gz }), ((vt_dim3){ bx, by, bz }), shm, u(s));
    return r;
}
#define LAUNCH_PARAMS (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
                       unsigned shm, CUstream s, void **params, void **extra)
#if defined(__x86_64__) && defined(__linux__)
/* cuLaunchKernel takes eleven arguments, five of them on the stack, and GCC's wrapper reloads and
 * stores back all five around its tail jump (~26 instructions on every <<<>>> launch, which
 * reaches it from inside the runtime): hooks_common.h's VT_NESTED_JUMP in front of the C hook. */
#define DRV_LAUNCH_TRAMPOLINE(fn, impl, fn_t, params, ...)                                        \
    __attribute__((visibility("hidden"), used)) _Atomic(void *) real_##fn;                          \
    __attribute__((visibility("hidden"), used, noinline)) CUresult fn##_full params;                \
    CUresult fn##_full params DRV_LAUNCH_FULL_BODY(fn, impl, fn_t, __VA_ARGS__)                     \
    CUresult fn params;                                                                             \
    VT_NESTED_JUMP(fn);
DRV_LAUNCH_TRAMPOLINE(cuLaunchKernel, launch_impl, launch_fn, LAUNCH_PARAMS, f, gx, gy, gz, bx, by, bz, shm, s, params, extra)
DRV_LAUNCH_TRAMPOLINE(cuLaunchKernel_ptsz, launch_impl, launch_fn, LAUNCH_PARAMS, f, gx, gy, gz, bx, by, bz, shm, s, params, extra)
#else
DRV_LAUNCH_HOOK(cuLaunchKernel, launch_impl, launch_fn, LAUNCH_PARAMS, f, gx, gy, gz, bx, by, bz, shm, s, params, extra)
DRV_LAUNCH_HOOK(cuLaunchKernel_ptsz, launch_impl, launch_fn, LAUNCH_PARAMS, f, gx, gy, gz, bx, by, bz, shm, s, params, extra)
#endif

typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
static CUresult launch_ex_impl(void *real, const char *api, const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    if (!cfg) return ((launch_ex_fn)real)(cfg, f, params, extra);
    VT_LAUNCH_BEGIN(c, k, traced, api, before_launch(&c, &k, f, params, extra));
    CUresult r = ((launch_ex_fn)real)(cfg, f, params, extra);
    VT_LAUNCH_END(c, k, traced, r, ((vt_dim3){ cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ }),
                   ((vt_dim3){ cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ }), cfg->sharedMemBytes, u(cfg->hStream));
    return r;
}
DRV_LAUNCH_HOOK(cuLaunchKernelEx, launch_ex_impl, launch_ex_fn, (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra),
                cfg, f, params, extra)
DRV_LAUNCH_HOOK(cuLaunchKernelEx_ptsz, launch_ex_impl, launch_ex_fn, (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra),
                cfg, f, params, extra)

/* Cooperative launches: kernelParams only (no `extra`). */
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **);
static CUresult coop_impl(void *real, const char *api, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shm, CUstream s, void **params)
{
    VT_LAUNCH_BEGIN(c, k, traced, api, before_launch(&c, &k, f, params, NULL));
    CUresult r = ((coop_fn)real)(f, gx, gy, gz, bx, by, bz, shm, s, params);
    VT_LAUNCH_END(c, k, traced, r, ((vt_dim3){ gx, gy, gz }), ((vt_dim3){ bx, by, bz }), shm, u(s));
    return r;
}
#define COOP_PARAMS (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
                     unsigned shm, CUstream s, void **params)
DRV_LAUNCH_HOOK(cuLaunchCooperativeKernel, coop_impl, coop_fn, COOP_PARAMS, f, gx, gy, gz, bx, by, bz, shm, s, params)
DRV_LAUNCH_HOOK(cuLaunchCooperativeKernel_ptsz, coop_impl, coop_fn, COOP_PARAMS, f, gx, gy, gz, bx, by, bz, shm, s, params)

/* The device a stream's work runs on (its context's); the calling thread's when it cannot tell. */
static int stream_device(CUstream s)
{
    typedef CUresult (*getctx_fn)(CUstream, CUcontext *);
    getctx_fn get = (getctx_fn)vt_real_driver("cuStreamGetCtx");
    CUcontext ctx = NULL;
    vt_ts.guard++;
    CUresult r = get ? get(s, &ctx) : CUDA_ERROR_NOT_SUPPORTED;
    vt_ts.guard--;
    int d = r == CUDA_SUCCESS && ctx ? vt_device_of_ctx(ctx) : -1;
    return d >= 0 ? d : vt_ts.cur_dev;
}

/* One cooperative kernel per device (deprecated, still in CUDA 13): each entry is checked
 * against its own stream's device and recorded as a launch of the one call. */
#define VT_MULTI_MAX 64
typedef CUresult (*coop_multi_fn)(CUDA_LAUNCH_PARAMS *, unsigned int, unsigned int);
static CUresult coop_multi_impl(void *real, const char *api, CUDA_LAUNCH_PARAMS *list, unsigned int n, unsigned int flags)
{
    if (DRV_SKIP() || !list || !n || n > VT_MULTI_MAX) return ((coop_multi_fn)real)(list, n, flags);
    struct vt_call calls[VT_MULTI_MAX];
    vt_kernel *ks[VT_MULTI_MAX];
    int traced[VT_MULTI_MAX];
    VT_SAVE_ERRNO;
    int home = vt_ts.cur_dev;
    for (unsigned i = 0; i < n; i++) {
        calls[i] = (struct vt_call){ .api = api, .dev = stream_device(list[i].hStream) };
        ks[i] = kernel_of(list[i].function);
        /* The entry's device is current while its arguments are checked: the per-thread cache of
         * live ranges (flushed on a device change) then answers for that device. */
        vt_set_current_device(calls[i].dev);
        traced[i] = vt_launch_begin(&calls[i], ks[i], list[i].kernelParams, NULL, 0);
    }
    vt_set_current_device(home);
    VT_RESTORE_ERRNO;
    uint64_t t0 = vt_now();
    CUresult r = ((coop_multi_fn)real)(list, n, flags);
    vt_saved_errno_ = errno;
    for (unsigned i = 0; i < n; i++) {
        calls[i].t0 = t0;
        VT_CALL_END(calls[i], r);
        const CUDA_LAUNCH_PARAMS *e = &list[i];
        if (traced[i])
            vt_launch_end(&calls[i], ks[i], (vt_dim3){ e->gridDimX, e->gridDimY, e->gridDimZ },
                          (vt_dim3){ e->blockDimX, e->blockDimY, e->blockDimZ }, e->sharedMemBytes, u(e->hStream));
    }
    VT_RESTORE_ERRNO;
    return r;
}
DRV_HOOK(cuLaunchCooperativeKernelMultiDevice, coop_multi_impl, (CUDA_LAUNCH_PARAMS *list, unsigned int n, unsigned int flags),
         list, n, flags)

/* ---- synchronisation and context ------------------------------------------------------------- */

typedef CUresult (*ctx_sync_fn)(void);
static CUresult ctx_sync_impl(void *real, const char *api, int unused)
{
    (void)unused;
    if (DRV_SKIP()) return ((ctx_sync_fn)real)();
    VT_CALL_BEGIN(c, api);
    CUresult r = ((ctx_sync_fn)real)();
    VT_CALL_END(c, r);
    vt_ev_sync(&c, 0, 0);
    return r;
}
DRV_HOOK(cuCtxSynchronize, ctx_sync_impl, (void), 0)

typedef CUresult (*stream_sync_fn)(CUstream);
static CUresult stream_sync_impl(void *real, const char *api, CUstream s)
{
    if (DRV_SKIP()) return ((stream_sync_fn)real)(s);
    VT_CALL_BEGIN(c, api);
    CUresult r = ((stream_sync_fn)real)(s);
    VT_CALL_END(c, r);
    vt_ev_sync(&c, 1, (uint64_t)(uintptr_t)s);
    return r;
}
DRV_HOOK(cuStreamSynchronize, stream_sync_impl, (CUstream s), s)
DRV_HOOK(cuStreamSynchronize_ptsz, stream_sync_impl, (CUstream s), s)

typedef CUresult (*set_ctx_fn)(CUcontext);
static CUresult set_ctx_impl(void *real, const char *api, CUcontext ctx)
{
    CUresult r = ((set_ctx_fn)real)(ctx);
    if (r == CUDA_SUCCESS && ctx && vt_cfg.enabled) vt_note_current_device();
    return r;
}
DRV_HOOK(cuCtxSetCurrent, set_ctx_impl, (CUcontext ctx), ctx)

const struct vt_hook vt_hooks_driver_ops[] = {
    VT_HOOK_ENTRY(cuMemcpy, "cuMemcpy", 4000, 0),
    VT_HOOK_ENTRY(cuMemcpy_ptds, "cuMemcpy", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpyDtoD_v2, "cuMemcpyDtoD", 3020, 0),
    VT_HOOK_ENTRY(cuMemcpyDtoD_v2_ptds, "cuMemcpyDtoD", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpyAsync, "cuMemcpyAsync", 4000, 0),
    VT_HOOK_ENTRY(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 3020, 0),
    VT_HOOK_ENTRY(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpyHtoD_v2, "cuMemcpyHtoD", 3020, 0),
    VT_HOOK_ENTRY(cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 3020, 0),
    VT_HOOK_ENTRY(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpyDtoH_v2, "cuMemcpyDtoH", 3020, 0),
    VT_HOOK_ENTRY(cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 3020, 0),
    VT_HOOK_ENTRY(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpy2D_v2, "cuMemcpy2D", 3020, 0),
    VT_HOOK_ENTRY(cuMemcpy2D_v2_ptds, "cuMemcpy2D", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", 3020, 0),
    VT_HOOK_ENTRY(cuMemcpy2DAsync_v2_ptsz, "cuMemcpy2DAsync", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpyPeer, "cuMemcpyPeer", 4000, 0),
    VT_HOOK_ENTRY(cuMemcpyPeer_ptds, "cuMemcpyPeer", 7000, 1),
    VT_HOOK_ENTRY(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", 4000, 0),
    VT_HOOK_ENTRY(cuMemcpyPeerAsync_ptsz, "cuMemcpyPeerAsync", 7000, 1),
    VT_HOOK_ENTRY(cuMemsetD8_v2, "cuMemsetD8", 3020, 0),
    VT_HOOK_ENTRY(cuMemsetD8_v2_ptds, "cuMemsetD8", 7000, 1),
    VT_HOOK_ENTRY(cuMemsetD16_v2, "cuMemsetD16", 3020, 0),
    VT_HOOK_ENTRY(cuMemsetD16_v2_ptds, "cuMemsetD16", 7000, 1),
    VT_HOOK_ENTRY(cuMemsetD32_v2, "cuMemsetD32", 3020, 0),
    VT_HOOK_ENTRY(cuMemsetD32_v2_ptds, "cuMemsetD32", 7000, 1),
    VT_HOOK_ENTRY(cuMemsetD8Async, "cuMemsetD8Async", 3020, 0),
    VT_HOOK_ENTRY(cuMemsetD8Async_ptsz, "cuMemsetD8Async", 7000, 1),
    VT_HOOK_ENTRY(cuMemsetD16Async, "cuMemsetD16Async", 3020, 0),
    VT_HOOK_ENTRY(cuMemsetD16Async_ptsz, "cuMemsetD16Async", 7000, 1),
    VT_HOOK_ENTRY(cuMemsetD32Async, "cuMemsetD32Async", 3020, 0),
    VT_HOOK_ENTRY(cuMemsetD32Async_ptsz, "cuMemsetD32Async", 7000, 1),
    VT_HOOK_ENTRY(cuModuleLoadData, "cuModuleLoadData", 2000, 0),
    VT_HOOK_ENTRY(cuModuleLoadDataEx, "cuModuleLoadDataEx", 2010, 0),
    VT_HOOK_ENTRY(cuLibraryLoadData, "cuLibraryLoadData", 12000, 0),
    VT_HOOK_ENTRY(cuModuleLoadFatBinary, "cuModuleLoadFatBinary", 2000, 0),
    VT_HOOK_ENTRY(cuModuleLoad, "cuModuleLoad", 2000, 0),
    VT_HOOK_ENTRY(cuLibraryLoadFromFile, "cuLibraryLoadFromFile", 12000, 0),
    VT_HOOK_ENTRY(cuModuleUnload, "cuModuleUnload", 2000, 0),
    VT_HOOK_ENTRY(cuLibraryUnload, "cuLibraryUnload", 12000, 0),
    VT_HOOK_ENTRY(cuModuleGetFunction, "cuModuleGetFunction", 2000, 0),
    VT_HOOK_ENTRY(cuLibraryGetKernel, "cuLibraryGetKernel", 12000, 0),
    VT_HOOK_ENTRY(cuKernelGetFunction, "cuKernelGetFunction", 12000, 0),
    VT_HOOK_ENTRY(cuLaunchKernel, "cuLaunchKernel", 4000, 0),
    VT_HOOK_ENTRY(cuLaunchKernel_ptsz, "cuLaunchKernel", 7000, 1),
    VT_HOOK_ENTRY(cuLaunchKernelEx, "cuLaunchKernelEx", 11060, 0),
    VT_HOOK_ENTRY(cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", 11060, 1),
    VT_HOOK_ENTRY(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 9000, 0),
    VT_HOOK_ENTRY(cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 9000, 1),
    VT_HOOK_ENTRY(cuLaunchCooperativeKernelMultiDevice, "cuLaunchCooperativeKernelMultiDevice", 9000, 0),
    VT_HOOK_ENTRY(cuCtxSynchronize, "cuCtxSynchronize", 2000, 0),
    VT_HOOK_ENTRY(cuStreamSynchronize, "cuStreamSynchronize", 2000, 0),
    VT_HOOK_ENTRY(cuStreamSynchronize_ptsz, "cuStreamSynchronize", 7000, 1),
    VT_HOOK_ENTRY(cuCtxSetCurrent, "cuCtxSetCurrent", 4000, 0),
    { NULL, NULL, 0, 0, NULL, NULL },
};
