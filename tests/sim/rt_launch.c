/* rt_launch.c - simulated runtime: fat binary and kernel registration, <<<>>> call
 * configuration, and launches. A kernel's module is loaded lazily on its first launch per device,
 * through the driver table: cuModuleLoadData(fatbin), cuModuleGetFunction(name), then
 * cuLaunchKernel (test fixture: nothing executes). */
#include "rt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* what nvcc passes to __cudaRegisterFatBinary */
typedef struct { int magic; int version; const unsigned long long *data; void *filename_or_fatbins; } rt_fatwrap;
#define FATWRAP_MAGIC 0x466243B1

typedef struct rt_fatbin {
    const void *image;
    CUmodule mod[RT_MAX_DEV];
    CUlibrary lib;          /* context-independent copy, for cudaKernel_t (a CUkernel) */
    int lib_failed;
    struct rt_fatbin *next;
} rt_fatbin;
typedef struct rt_func {
    const void *host;
    CUkernel kern;          /* what __cudaGetKernel hands out; NULL until asked */
    char *name;
    rt_fatbin *fb;
    CUfunction f[RT_MAX_DEV];
    struct rt_func *next;
} rt_func;

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static rt_fatbin *fatbins;
static rt_func *funcs;

typedef struct { dim3 grid, block; size_t shmem; cudaStream_t s; } rt_config;
static __thread rt_config cfg_stack[16];
static __thread int cfg_depth;

void **__cudaRegisterFatBinary(void *fatCubin)
{
    rt_fatbin *fb = calloc(1, sizeof *fb);
    if (!fb) abort();
    const rt_fatwrap *w = fatCubin;
    fb->image = w && w->magic == FATWRAP_MAGIC ? (const void *)w->data : fatCubin;
    pthread_mutex_lock(&lk);
    fb->next = fatbins;
    fatbins = fb;
    pthread_mutex_unlock(&lk);
    return (void **)fb;
}

void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }
void __cudaUnregisterFatBinary(void **handle) { (void)handle; /* modules die with the process */ }
char __cudaInitModule(void **handle) { (void)handle; return 1; }

void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    rt_func *f = calloc(1, sizeof *f);
    if (!f || !(f->name = strdup(deviceName ? deviceName : deviceFun))) abort();
    f->host = hostFun;
    f->fb = (rt_fatbin *)handle;
    pthread_mutex_lock(&lk);
    f->next = funcs;
    funcs = f;
    pthread_mutex_unlock(&lk);
}

/* __device__ / __constant__ variables: the host shadow's address -> the module variable's name. */
typedef struct rt_var {
    const void *host;
    char *name;
    rt_fatbin *fb;
    struct rt_var *next;
} rt_var;
static rt_var *vars;

void __cudaRegisterVar(void **h, char *hostVar, char *devAddr, const char *name, int ext, size_t size,
                       int constant, int global)
{
    rt_var *v = calloc(1, sizeof *v);
    if (!v || !(v->name = strdup(name ? name : devAddr))) abort();
    v->host = hostVar;
    v->fb = (rt_fatbin *)h;
    pthread_mutex_lock(&lk);
    v->next = vars;
    vars = v;
    pthread_mutex_unlock(&lk);
}
void __cudaRegisterManagedVar(void **h, void **hostVarPtr, char *devAddr, const char *name, int ext,
                              size_t size, int constant, int global) { (void)h; }

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st *s)
{
    if (cfg_depth == 16) return 1;
    cfg_stack[cfg_depth++] = (rt_config){grid, block, shmem, s};
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, void *stream)
{
    if (!cfg_depth) return cudaErrorMissingConfiguration;
    rt_config c = cfg_stack[--cfg_depth];
    *grid = c.grid;
    *block = c.block;
    *shmem = c.shmem;
    *(cudaStream_t *)stream = c.s;
    return cudaSuccess;
}

/* a host stub or a cudaKernel_t (which is our rt_func) -> rt_func */
static rt_func *find(const void *p)
{
    pthread_mutex_lock(&lk);
    rt_func *f;
    for (f = funcs; f && f->host != p && (const void *)f != p && (const void *)f->kern != p; f = f->next) {}
    pthread_mutex_unlock(&lk);
    return f;
}

/* Like CUDA 12+, a cudaKernel_t is a driver CUkernel (cuLibraryLoadData + cuLibraryGetKernel
 * through the driver table), so cuKernelGetParamInfo answers for it. When the image cannot be
 * loaded as a library the rt_func itself stands in (launches still resolve it). */
cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *hostFun)
{
    rt_func *f = find(hostFun);
    if (!k) return rt_ret(cudaErrorInvalidValue);
    if (!f) return rt_ret(cudaErrorInvalidDeviceFunction);
    cudaError_t e = rt_enter();
    pthread_mutex_lock(&lk);
    if (!e && !f->kern && !f->fb->lib_failed) {
        CUresult r = f->fb->lib ? CUDA_SUCCESS
                   : rt_d.cuLibraryLoadData(&f->fb->lib, f->fb->image, NULL, NULL, 0, NULL, NULL, 0);
        if (r) f->fb->lib_failed = 1;
        else if (rt_d.cuLibraryGetKernel(&f->kern, f->fb->lib, f->name)) f->kern = NULL;
    }
    *k = f->kern ? (cudaKernel_t)(void *)f->kern : (cudaKernel_t)(void *)f;
    pthread_mutex_unlock(&lk);
    return cudaSuccess;
}

cudaError_t cudaGetKernel(cudaKernel_t *k, const void *entry) { return __cudaGetKernel(k, entry); }

const void *rt_entry_of_function(CUfunction cf)
{
    const void *host = NULL;
    pthread_mutex_lock(&lk);
    for (rt_func *f = funcs; f && !host; f = f->next)
        for (int d = 0; d < RT_MAX_DEV && !host; d++)
            if (cf && f->f[d] == cf) host = f->host;
    pthread_mutex_unlock(&lk);
    return host;
}

/* resolve the driver function for the current device, loading the module on first use */
static cudaError_t resolve(rt_func *f, CUfunction *out)
{
    RT_ENTER();
    int dev = rt_cur_dev();
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&lk);
    if (!f->f[dev]) {
        if (!f->fb->mod[dev]) r = rt_d.cuModuleLoadData(&f->fb->mod[dev], f->fb->image);
        if (!r) r = rt_d.cuModuleGetFunction(&f->f[dev], f->fb->mod[dev], f->name);
    }
    *out = f->f[dev];
    pthread_mutex_unlock(&lk);
    return r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidDeviceFunction : rt_err(r);
}

void rt_forget_modules(int dev)
{
    pthread_mutex_lock(&lk);
    for (rt_func *f = funcs; f; f = f->next) f->f[dev] = NULL;
    for (rt_fatbin *b = fatbins; b; b = b->next) b->mod[dev] = NULL;
    pthread_mutex_unlock(&lk);
}

static cudaError_t launch_as(const rt_driver *d, int coop, const void *fn, dim3 g, dim3 b, void **args, size_t shmem,
                             cudaStream_t s)
{
    rt_func *f = find(fn);
    CUfunction cf;
    cudaError_t e;
    /* not a registered kernel: a cudaKernel_t from cudaLibraryGetKernel (the driver's CUkernel) */
    if (!f) e = rt_d.cuKernelGetFunction(&cf, (CUkernel)fn) ? cudaErrorInvalidDeviceFunction : cudaSuccess;
    else e = resolve(f, &cf);
    if (e) return rt_ret(e);
    if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z || (unsigned long long)b.x * b.y * b.z > 1024)
        return rt_ret(cudaErrorInvalidConfiguration);
    if (coop) RT_CALL(d->cuLaunchCooperativeKernel(cf, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, s, args));
    RT_CALL(d->cuLaunchKernel(cf, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, s, args, NULL));
}
static cudaError_t launch(const rt_driver *d, const void *fn, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{ return launch_as(d, 0, fn, g, b, args, shmem, s); }

cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{ return launch(&rt_d, (const void *)k, g, b, args, shmem, s); }
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{ return launch(&rt_dpt, (const void *)k, g, b, args, shmem, s); }
cudaError_t cudaLaunchKernel(const void *fn, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{ return launch(&rt_d, fn, g, b, args, shmem, s); }
cudaError_t cudaLaunchKernel_ptsz(const void *fn, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{ return launch(&rt_dpt, fn, g, b, args, shmem, s); }
/* Like CUDA's runtime, a cooperative launch goes to the driver's cuLaunchCooperativeKernel. */
cudaError_t cudaLaunchCooperativeKernel(const void *fn, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{ return launch_as(&rt_d, 1, fn, g, b, args, shmem, s); }
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *fn, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{ return launch_as(&rt_dpt, 1, fn, g, b, args, shmem, s); }

/* The driver function behind a kernel symbol on the current device (CUDA 11+). */
cudaError_t cudaGetFuncBySymbol(cudaFunction_t *out, const void *sym)
{
    if (!out) return rt_ret(cudaErrorInvalidValue);
    rt_func *f = find(sym);
    if (!f) return rt_ret(cudaErrorInvalidDeviceFunction);
    CUfunction cf;
    cudaError_t e = resolve(f, &cf);
    if (e) return rt_ret(e);
    *out = (cudaFunction_t)cf;
    return cudaSuccess;
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *fn, void **args)
{
    if (!c) return rt_ret(cudaErrorInvalidValue);
    return launch(&rt_d, fn, c->gridDim, c->blockDim, args, c->dynamicSmemBytes, c->stream);
}
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *c, const void *fn, void **args)
{
    if (!c) return rt_ret(cudaErrorInvalidValue);
    return launch(&rt_dpt, fn, c->gridDim, c->blockDim, args, c->dynamicSmemBytes, c->stream);
}

cudaError_t cudaFuncGetParamInfo(const void *fn, size_t idx, size_t *off, size_t *size)
{
    rt_func *f = find(fn);
    CUfunction cf;
    cudaError_t e;
    /* not a registered kernel: a cudaKernel_t from cudaLibraryGetKernel (the driver's CUkernel) */
    if (!f) e = rt_d.cuKernelGetFunction(&cf, (CUkernel)fn) ? cudaErrorInvalidDeviceFunction : cudaSuccess;
    else e = resolve(f, &cf);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuFuncGetParamInfo(cf, idx, off, size));
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *fn)
{
    rt_func *f = find(fn);
    if (!a) return rt_ret(cudaErrorInvalidValue);
    if (!f) return rt_ret(cudaErrorInvalidDeviceFunction);
    CUfunction cf;
    cudaError_t e = resolve(f, &cf);
    if (e) return rt_ret(e);
    memset(a, 0, sizeof *a);
    rt_d.cuFuncGetAttribute(&a->maxThreadsPerBlock, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cf);
    rt_d.cuFuncGetAttribute(&a->numRegs, CU_FUNC_ATTRIBUTE_NUM_REGS, cf);
    rt_d.cuFuncGetAttribute(&a->ptxVersion, CU_FUNC_ATTRIBUTE_PTX_VERSION, cf);
    rt_d.cuFuncGetAttribute(&a->binaryVersion, CU_FUNC_ATTRIBUTE_BINARY_VERSION, cf);
    rt_d.cuFuncGetAttribute(&a->maxDynamicSharedSizeBytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, cf);
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *fn, enum cudaFuncAttribute a, int v)
{
    return find(fn) ? cudaSuccess : rt_ret(cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaFuncSetCacheConfig(const void *fn, enum cudaFuncCache c)
{
    return find(fn) ? cudaSuccess : rt_ret(cudaErrorInvalidDeviceFunction);
}

/* Occupancy (CUB sizes its grids with it): 2048 resident threads per SM, the sim's only limit. */
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *fn, int block, size_t smem,
                                                                   unsigned int flags)
{
    if (!n || block <= 0) return rt_ret(cudaErrorInvalidValue);
    if (!find(fn)) return rt_ret(cudaErrorInvalidDeviceFunction);
    *n = block >= 2048 ? 1 : 2048 / block;
    return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *fn, int block, size_t smem)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, fn, block, smem, 0);
}

/* ---- symbols: a variable's device address on the current device, its module loaded as a launch
 * would load it ------------------------------------------------------------------------------ */
static cudaError_t symbol(const void *sym, CUdeviceptr *d, size_t *size)
{
    RT_ENTER();
    pthread_mutex_lock(&lk);
    rt_var *v;
    for (v = vars; v && v->host != sym; v = v->next) {}
    int dev = rt_cur_dev();
    CUresult r = !v ? CUDA_ERROR_NOT_FOUND : v->fb->mod[dev] ? CUDA_SUCCESS : rt_d.cuModuleLoadData(&v->fb->mod[dev], v->fb->image);
    if (!r) r = rt_d.cuModuleGetGlobal(d, size, v->fb->mod[dev], v->name);
    pthread_mutex_unlock(&lk);
    return r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidSymbol : rt_err(r);
}

cudaError_t cudaGetSymbolAddress(void **p, const void *sym)
{
    if (!p) return rt_ret(cudaErrorInvalidValue);
    CUdeviceptr d;
    cudaError_t e = symbol(sym, &d, NULL);
    if (!e) *p = (void *)d;
    return rt_ret(e);
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *sym)
{
    if (!size) return rt_ret(cudaErrorInvalidValue);
    return rt_ret(symbol(sym, NULL, size));
}

/* The documented checks: the range inside the variable; to a symbol from the host or the device
 * (or cudaMemcpyDefault), from one to the host or the device. */
static cudaError_t symbol_range(const void *sym, size_t count, size_t offset, CUdeviceptr *at)
{
    size_t size = 0;
    cudaError_t e = symbol(sym, at, &size);
    if (e) return e;
    if (offset > size || count > size - offset) return cudaErrorInvalidValue;
    *at += offset;
    return cudaSuccess;
}

/* The copy itself is cudaMemcpy's (rt_copy), between the host or device pointer and the
 * variable's address. */
static cudaError_t to_symbol(const void *sym, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind,
                             cudaStream_t s, int async)
{
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return rt_ret(cudaErrorInvalidMemcpyDirection);
    CUdeviceptr at;
    cudaError_t e = symbol_range(sym, count, offset, &at);
    return e ? rt_ret(e) : rt_copy(&rt_d, (void *)at, src, count, kind, s, async);
}

static cudaError_t from_symbol(void *dst, const void *sym, size_t count, size_t offset, enum cudaMemcpyKind kind,
                               cudaStream_t s, int async)
{
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return rt_ret(cudaErrorInvalidMemcpyDirection);
    CUdeviceptr at;
    cudaError_t e = symbol_range(sym, count, offset, &at);
    return e ? rt_ret(e) : rt_copy(&rt_d, dst, (const void *)at, count, kind, s, async);
}

cudaError_t cudaMemcpyToSymbol(const void *sym, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind)
{ return to_symbol(sym, src, count, offset, kind, NULL, 0); }
cudaError_t cudaMemcpyToSymbolAsync(const void *sym, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t s)
{ return to_symbol(sym, src, count, offset, kind, s, 1); }
cudaError_t cudaMemcpyFromSymbol(void *dst, const void *sym, size_t count, size_t offset, enum cudaMemcpyKind kind)
{ return from_symbol(dst, sym, count, offset, kind, NULL, 0); }
cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *sym, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t s)
{ return from_symbol(dst, sym, count, offset, kind, s, 1); }
