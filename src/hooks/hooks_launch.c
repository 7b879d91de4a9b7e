/* hooks_launch.c - runtime kernel registration and launch (CUDA 13 `<<<>>>` path,
 * cudaLaunchKernel*, cudaLaunchCooperativeKernel), synchronisation and device selection. */
#include <stdint.h>
#include <string.h>

#include "cuda_abi.h"
#include "check.h"
#include "events.h"
#include "kernels.h"
#include "resolve.h"
#include "tracer.h"
#include "hooks_common.h"

typedef vt_dim3 dim3;
#define u vt_u64

/* Layouts come from the driver (cuKernelGetParamInfo on the cudaKernel_t, which is a CUkernel,
 * or cuFuncGetParamInfo): a failing runtime query would leave its error in cudaGetLastError,
 * which the program can see. Without either, kernels.c parses the fatbin. */
int vt_driver_paraminfo(vt_kernel *k, uint32_t i, uint64_t *off, uint64_t *size)
{
    typedef CUresult (*q_fn)(void *, size_t, size_t *, size_t *);
    void *h = atomic_load(&k->kernel_handle);
    q_fn q = NULL;
    void *obj = NULL;
    if (k->function) { q = (q_fn)vt_real_driver("cuFuncGetParamInfo"); obj = (void *)(uintptr_t)k->function; }
    else if (h) { q = (q_fn)vt_real_driver("cuKernelGetParamInfo"); obj = h; }
    if (!q) return -1;
    size_t o = 0, s = 0;
    vt_ts.guard++;
    CUresult r = q(obj, i, &o, &s);
    vt_ts.guard--;
    if (r != CUDA_SUCCESS) return -1;
    *off = o;
    *size = s;
    return 0;
}

VT_REAL_SLOT(__cudaRegisterFatBinary);
void **__cudaRegisterFatBinary(void *fat)
{
    vt_init();
    __typeof__(&__cudaRegisterFatBinary) real = VT_REAL(__cudaRegisterFatBinary);
    if (!real) return NULL;
    void **h = real(fat);
    if (vt_cfg.enabled && h) vt_kernels_fatbin_handle(h, fat);
    return h;
}

VT_REAL_SLOT(__cudaRegisterFunction);
void __cudaRegisterFunction(void **fat, const char *host_fun, char *device_fun, const char *device_name, int thread_limit,
                            void *tid, void *bid, void *bdim, void *gdim, int *wsize)
{
    vt_init();
    __typeof__(&__cudaRegisterFunction) real = VT_REAL(__cudaRegisterFunction);
    if (!real) return;
    real(fat, host_fun, device_fun, device_name, thread_limit, tid, bid, bdim, gdim, wsize);
    if (vt_cfg.enabled) vt_kernels_register_host(fat, host_fun, device_name ? device_name : device_fun);
}

VT_REAL_SLOT(__cudaGetKernel);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_fun)
{
    vt_init();
    __typeof__(&__cudaGetKernel) real = VT_REAL(__cudaGetKernel);
    if (!real) return cudaErrorNotSupported;
    cudaError_t r = real(kernel, host_fun);
    if (r == cudaSuccess && kernel && *kernel && vt_cfg.enabled) {
        vt_kernel *k = vt_kernels_by_host(host_fun);
        if (k) {
            void *expected = NULL;
            atomic_compare_exchange_strong(&k->kernel_handle, &expected, (void *)*kernel);
            vt_kernels_bind(*kernel, k);
        }
    }
    return r;
}

/* A per-thread one-entry cache: the same kernel launched in a loop skips the table probe. */
static VT_TLS const void *last_handle;
static VT_TLS vt_kernel *last_kernel;

/* A kernel launched by its host stub (cudaLaunchKernel(fn, ...), cudaLaunchKernelExC,
 * cudaLaunchCooperativeKernel) never went through __cudaGetKernel, so the driver knows no
 * handle of it for the tracer: ask the runtime for it (cudaGetKernel, CUDA 12+), so the layout
 * comes from the driver (cuKernelGetParamInfo) as for <<<>>>. Only while the program has no
 * error pending (cudaPeekAtLastError), and one the query itself leaves is cleared, so the
 * program's cudaGetLastError answers as without the tracer. */
VT_REAL_SLOT(cudaGetKernel);
VT_REAL_SLOT(cudaPeekAtLastError);
VT_REAL_SLOT(cudaGetLastError);
static void kernel_handle_from_runtime(vt_kernel *k, const void *stub)
{
    typedef cudaError_t (*getk_fn)(void **, const void *);
    typedef cudaError_t (*err_fn)(void);
    getk_fn getk = (getk_fn)vt_real_get(&real_cudaGetKernel, "cudaGetKernel");
    err_fn peek = (err_fn)vt_real_get(&real_cudaPeekAtLastError, "cudaPeekAtLastError");
    err_fn clear = (err_fn)vt_real_get(&real_cudaGetLastError, "cudaGetLastError");
    if (!getk || !peek || !clear) return;
    void *h = NULL;
    vt_ts.guard++;
    if (peek() == cudaSuccess && getk(&h, stub) != cudaSuccess) { clear(); h = NULL; }
    vt_ts.guard--;
    if (!h) return;
    void *expected = NULL;
    atomic_compare_exchange_strong(&k->kernel_handle, &expected, h);
    vt_kernels_bind(h, k);
}

static __attribute__((noinline)) vt_kernel *kernel_lookup(const void *handle_or_stub)
{
    vt_kernel *k = vt_kernels_by_handle(handle_or_stub);
    if (!k && (k = vt_kernels_by_host(handle_or_stub)) && !atomic_load_explicit(&k->layout_state, memory_order_acquire) &&
        !k->function && !atomic_load(&k->kernel_handle))
        kernel_handle_from_runtime(k, handle_or_stub);
    if (!k) k = vt_kernels_unknown(handle_or_stub);
    if (k && !atomic_load_explicit(&k->layout_state, memory_order_acquire)) vt_kernel_resolve_layout(k, vt_driver_paraminfo, vt_device_sm(vt_ts.cur_dev));
    last_handle = handle_or_stub;
    last_kernel = k;
    return k;
}

vt_kernel *vt_kernel_of_handle(const void *handle_or_stub) { return kernel_lookup(handle_or_stub); }

static inline vt_kernel *kernel_for(const void *handle_or_stub)
{
    vt_kernel *k = last_kernel;
    return __builtin_expect(handle_or_stub == last_handle && k, 1) ? k : kernel_lookup(handle_or_stub);
}

/* A launch is the hottest hook: errno is kept once around the tracer's work on both sides of the
 * real call (the program, and the real launch, see the errno the caller left; the caller sees
 * the real launch's), and whether the trace is open is asked once (vt_launch_begin). The call's
 * t0 is taken after the checks, so the duration is the real launch's. Inlined into each twin:
 * handing nine arguments on to one shared body cost ~20 instructions a launch. */
typedef cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
static inline __attribute__((always_inline)) cudaError_t launch_impl(void *real, const char *api, const void *fn, dim3 g,
                                                                     dim3 b, void **args, size_t shm, cudaStream_t s)
{
    if (vt_forward_or_nested()) return ((launch_fn)real)(fn, g, b, args, shm, s);
    VT_LAUNCH_BEGIN(c, k, traced, api, (k = kernel_for(fn), vt_launch_begin(&c, k, args, NULL, 0)));
    vt_ts.rt_depth++;
    cudaError_t r = ((launch_fn)real)(fn, g, b, args, shm, s);
    vt_ts.rt_depth--;
    VT_LAUNCH_END(c, k, traced, r, g, b, shm, u(s));
    return r;
}

#define LAUNCH_TWIN(fn, first_t) \
    VT_REAL_SLOT(fn); \
    cudaError_t fn(first_t f, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s) \
    { vt_init(); void *real_ = vt_real_get(&real_##fn, #fn); if (!real_) return cudaErrorNotSupported; \
      return launch_impl(real_, #fn, (const void *)f, g, b, args, shm, s); }
LAUNCH_TWIN(__cudaLaunchKernel, cudaKernel_t)
LAUNCH_TWIN(__cudaLaunchKernel_ptsz, cudaKernel_t)
LAUNCH_TWIN(cudaLaunchKernel, const void *)
LAUNCH_TWIN(cudaLaunchKernel_ptsz, const void *)
/* A cooperative launch (grid-wide sync) takes the same arguments; the runtime's own lowering to
 * the driver passes through (vt_in_runtime). */
LAUNCH_TWIN(cudaLaunchCooperativeKernel, const void *)
LAUNCH_TWIN(cudaLaunchCooperativeKernel_ptsz, const void *)

typedef cudaError_t (*launch_ex_fn)(const cudaLaunchConfig_t *, const void *, void **);
static cudaError_t launch_ex_impl(void *real, const char *api, const cudaLaunchConfig_t *cfg, const void *fn, void **args)
{
    if (vt_forward_or_nested() || !cfg) return ((launch_ex_fn)real)(cfg, fn, args);
    VT_LAUNCH_BEGIN(c, k, traced, api, (k = kernel_for(fn), vt_launch_begin(&c, k, args, NULL, 0)));
    vt_ts.rt_depth++;
    cudaError_t r = ((launch_ex_fn)real)(cfg, fn, args);
    vt_ts.rt_depth--;
    VT_LAUNCH_END(c, k, traced, r, cfg->gridDim, cfg->blockDim, cfg->dynamicSmemBytes, u(cfg->stream));
    return r;
}
#define LAUNCH_EX_TWIN(fn) \
    VT_REAL_SLOT(fn); \
    cudaError_t fn(const cudaLaunchConfig_t *cfg, const void *f, void **args) \
    { vt_init(); void *real_ = vt_real_get(&real_##fn, #fn); if (!real_) return cudaErrorNotSupported; \
      return launch_ex_impl(real_, #fn, cfg, f, args); }
LAUNCH_EX_TWIN(cudaLaunchKernelExC)
LAUNCH_EX_TWIN(cudaLaunchKernelExC_ptsz)

VT_REAL_SLOT(cudaDeviceSynchronize);
cudaError_t cudaDeviceSynchronize(void)
{
    vt_init();
    __typeof__(&cudaDeviceSynchronize) real = VT_REAL(cudaDeviceSynchronize);
    if (!real) return cudaErrorNotSupported;
    if (vt_forward_or_nested()) return real();
    VT_CALL_BEGIN(c, "cudaDeviceSynchronize");
    vt_ts.rt_depth++;
    cudaError_t r = real();
    vt_ts.rt_depth--;
    VT_CALL_END(c, r);
    vt_ev_sync(&c, 0, 0);
    return r;
}

typedef cudaError_t (*stream_sync_fn)(cudaStream_t);
static cudaError_t stream_sync_impl(void *real, const char *api, cudaStream_t s)
{
    if (vt_forward_or_nested()) return ((stream_sync_fn)real)(s);
    VT_CALL_BEGIN(c, api);
    vt_ts.rt_depth++;
    cudaError_t r = ((stream_sync_fn)real)(s);
    vt_ts.rt_depth--;
    VT_CALL_END(c, r);
    vt_ev_sync(&c, 1, (uint64_t)(uintptr_t)s);
    return r;
}
VT_REAL_SLOT(cudaStreamSynchronize);
cudaError_t cudaStreamSynchronize(cudaStream_t s)
{ vt_init(); void *r = vt_real_get(&real_cudaStreamSynchronize, "cudaStreamSynchronize");
  return r ? stream_sync_impl(r, "cudaStreamSynchronize", s) : cudaErrorNotSupported; }
VT_REAL_SLOT(cudaStreamSynchronize_ptsz);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s)
{ vt_init(); void *r = vt_real_get(&real_cudaStreamSynchronize_ptsz, "cudaStreamSynchronize_ptsz");
  return r ? stream_sync_impl(r, "cudaStreamSynchronize_ptsz", s) : cudaErrorNotSupported; }

VT_REAL_SLOT(cudaSetDevice);
cudaError_t cudaSetDevice(int dev)
{
    vt_init();
    __typeof__(&cudaSetDevice) real = VT_REAL(cudaSetDevice);
    if (!real) return cudaErrorNotSupported;
    vt_ts.rt_depth++;
    cudaError_t r = real(dev);
    vt_ts.rt_depth--;
    if (r == cudaSuccess) vt_set_current_device(dev);
    return r;
}

/* A reset frees the current device's allocations (CUDA documents it for cudaDeviceReset and
 * cuDevicePrimaryCtxReset): the registry must forget them, or a later use is missed and new
 * allocations overlap the old ranges; the report counts the reset (vt_ev_device_reset). */
VT_REAL_SLOT(cudaDeviceReset);
cudaError_t cudaDeviceReset(void)
{
    vt_init();
    __typeof__(&cudaDeviceReset) real = VT_REAL(cudaDeviceReset);
    if (!real) return cudaErrorNotSupported;
    int dev = vt_ts.cur_dev;
    VT_CALL_BEGIN(c, "cudaDeviceReset");
    vt_ts.rt_depth++;
    cudaError_t r = real();
    vt_ts.rt_depth--;
    VT_CALL_END(c, r);
    if (r == cudaSuccess && !vt_forward_only()) vt_ev_device_reset(&c, dev);
    return r;
}

VT_REAL_SLOT(cuDevicePrimaryCtxReset_v2);
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    vt_init();
    __typeof__(&cuDevicePrimaryCtxReset_v2) real = VT_REAL(cuDevicePrimaryCtxReset_v2);
    if (!real) return CUDA_ERROR_NOT_SUPPORTED;
    VT_CALL_BEGIN(c, "cuDevicePrimaryCtxReset");
    CUresult r = real(dev);
    VT_CALL_END(c, r);
    if (r == CUDA_SUCCESS && !vt_forward_or_nested()) vt_ev_device_reset(&c, dev);
    return r;
}

const struct vt_hook vt_hooks_launch[] = {
    VT_HOOK_ENTRY(__cudaRegisterFatBinary, NULL, 0, 0),
    VT_HOOK_ENTRY(__cudaRegisterFunction, NULL, 0, 0),
    VT_HOOK_ENTRY(__cudaGetKernel, NULL, 0, 0),
    VT_HOOK_ENTRY(__cudaLaunchKernel, NULL, 0, 0),
    VT_HOOK_ENTRY(__cudaLaunchKernel_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaLaunchKernel, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaLaunchKernel_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaLaunchCooperativeKernel, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaLaunchCooperativeKernel_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaLaunchKernelExC, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaLaunchKernelExC_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaDeviceSynchronize, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaStreamSynchronize, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaStreamSynchronize_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaSetDevice, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaDeviceReset, NULL, 0, 0),
    VT_HOOK_ENTRY(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset", 11000, 0),
    { NULL, NULL, 0, 0, NULL, NULL },
};
