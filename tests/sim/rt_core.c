/* rt_core.c - simulated runtime: driver loading (dlopen + cuGetProcAddress_v2, as the real
 * libcudart does), per-thread device and last error, error strings, versions, device management
 * and properties (test fixture). */
#include "rt.h"
#include "sim_errors.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

rt_driver rt_d, rt_dpt;
int rt_ndev;
CUcontext rt_primary[RT_MAX_DEV];
static cudaError_t rt_init_err;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int t_dev;
static __thread int t_bound = -1;   /* device whose primary ctx is current on this thread */
static __thread cudaError_t t_last;

static void rt_init(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) { rt_init_err = cudaErrorInsufficientDriver; return; }
    CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
        (CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))
            dlsym(h, "cuGetProcAddress_v2");
    if (!gpa) { rt_init_err = cudaErrorInsufficientDriver; return; }
    CUdriverProcAddressQueryResult st;
#define RT_LOOKUP(name) \
    if (gpa(#name, (void **)&rt_d.name, RT_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st) || \
        gpa(#name, (void **)&rt_dpt.name, RT_VERSION, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st)) { \
        fprintf(stderr, "vramtrace-sim runtime: driver lacks %s\n", #name); \
        rt_init_err = cudaErrorInsufficientDriver; \
        return; \
    }
    RT_DRV_LIST(RT_LOOKUP)
#undef RT_LOOKUP
    CUresult r = rt_d.cuInit(0);
    if (r) { rt_init_err = rt_err(r); return; }
    if (rt_d.cuDeviceGetCount(&rt_ndev) || rt_ndev <= 0) { rt_init_err = cudaErrorNoDevice; return; }
    if (rt_ndev > RT_MAX_DEV) rt_ndev = RT_MAX_DEV;
}

cudaError_t rt_err(CUresult r)
{
    switch ((int)r) {
    case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
    case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
    default: return (cudaError_t)r;
    }
}

cudaError_t rt_ret(cudaError_t e)
{
    if (e) t_last = e;
    return e;
}

static cudaError_t bind_dev(int dev)
{
    pthread_mutex_lock(&rt_lock);
    CUresult r = CUDA_SUCCESS;
    if (!rt_primary[dev]) r = rt_d.cuDevicePrimaryCtxRetain(&rt_primary[dev], dev);
    pthread_mutex_unlock(&rt_lock);
    if (!r) r = rt_d.cuCtxSetCurrent(rt_primary[dev]);
    if (r) return rt_err(r);
    t_bound = dev;
    return cudaSuccess;
}

cudaError_t rt_enter(void)
{
    pthread_once(&rt_once, rt_init);
    if (rt_init_err) return rt_init_err;
    if (t_bound != t_dev) return bind_dev(t_dev);
    return cudaSuccess;
}

int rt_cur_dev(void) { return t_dev; }

/* ---- errors and versions ------------------------------------------------------------------ */
cudaError_t cudaGetLastError(void) { cudaError_t e = t_last; t_last = cudaSuccess; return e; }
cudaError_t cudaPeekAtLastError(void) { return t_last; }

const char *cudaGetErrorString(cudaError_t e)
{
    const sim_errinfo *i = sim_errinfo_find((int)e);
    return i && i->rt ? i->msg : "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t e)
{
    const sim_errinfo *i = sim_errinfo_find((int)e);
    return i && i->rt ? i->rt : "cudaErrorUnknown";
}

cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v) return rt_ret(cudaErrorInvalidValue);
    pthread_once(&rt_once, rt_init);
    if (!rt_d.cuDriverGetVersion) { *v = 0; return cudaSuccess; }
    RT_CALL(rt_d.cuDriverGetVersion(v));
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v) return rt_ret(cudaErrorInvalidValue);
    *v = RT_VERSION;
    return cudaSuccess;
}

/* ---- devices ------------------------------------------------------------------------------ */
cudaError_t cudaGetDeviceCount(int *n)
{
    if (!n) return rt_ret(cudaErrorInvalidValue);
    pthread_once(&rt_once, rt_init);
    if (rt_init_err) { *n = 0; return rt_ret(rt_init_err); }
    *n = rt_ndev;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int dev)
{
    pthread_once(&rt_once, rt_init);
    if (rt_init_err) return rt_ret(rt_init_err);
    if (dev < 0 || dev >= rt_ndev) return rt_ret(cudaErrorInvalidDevice);
    t_dev = dev;
    return rt_ret(bind_dev(dev));
}

cudaError_t cudaGetDevice(int *dev)
{
    if (!dev) return rt_ret(cudaErrorInvalidValue);
    *dev = t_dev;
    return cudaSuccess;
}

cudaError_t cudaInitDevice(int dev, unsigned int dflags, unsigned int flags) { return cudaSetDevice(dev); }
cudaError_t cudaSetDeviceFlags(unsigned int flags) { RT_ENTER(); return cudaSuccess; }
cudaError_t cudaGetDeviceFlags(unsigned int *flags) { if (flags) *flags = 0; return cudaSuccess; }

cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int dev)
{
    pthread_once(&rt_once, rt_init);
    if (rt_init_err) return rt_ret(rt_init_err);
    if (dev < 0 || dev >= rt_ndev) return rt_ret(cudaErrorInvalidDevice);
    RT_CALL(rt_d.cuDeviceGetAttribute(v, (CUdevice_attribute)a, dev));
}

static int attr(CUdevice_attribute a, int dev)
{
    int v = 0;
    rt_d.cuDeviceGetAttribute(&v, a, dev);
    return v;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
    pthread_once(&rt_once, rt_init);
    if (rt_init_err) return rt_ret(rt_init_err);
    if (!p) return rt_ret(cudaErrorInvalidValue);
    if (dev < 0 || dev >= rt_ndev) return rt_ret(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    rt_d.cuDeviceGetName(p->name, sizeof p->name, dev);
    rt_d.cuDeviceGetUuid((CUuuid *)&p->uuid, dev);
    rt_d.cuDeviceTotalMem(&p->totalGlobalMem, dev);
    p->sharedMemPerBlock = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev);
    p->regsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, dev);
    p->warpSize = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
    p->memPitch = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_PITCH, dev);
    p->maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
    p->maxThreadsDim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, dev);
    p->maxThreadsDim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, dev);
    p->maxThreadsDim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, dev);
    p->maxGridSize[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, dev);
    p->maxGridSize[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, dev);
    p->maxGridSize[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, dev);
    p->totalConstMem = (size_t)attr(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, dev);
    p->major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    p->minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    p->textureAlignment = (size_t)attr(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, dev);
    p->texturePitchAlignment = (size_t)attr(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, dev);
    p->multiProcessorCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    p->canMapHostMemory = attr(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, dev);
    p->concurrentKernels = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, dev);
    p->ECCEnabled = attr(CU_DEVICE_ATTRIBUTE_ECC_ENABLED, dev);
    p->pciBusID = attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
    p->asyncEngineCount = attr(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, dev);
    p->unifiedAddressing = attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, dev);
    p->memoryBusWidth = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev);
    p->l2CacheSize = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
    p->maxThreadsPerMultiProcessor = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev);
    p->streamPrioritiesSupported = attr(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, dev);
    p->globalL1CacheSupported = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, dev);
    p->localL1CacheSupported = attr(CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, dev);
    p->sharedMemPerMultiprocessor = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, dev);
    p->regsPerMultiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, dev);
    p->managedMemory = attr(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev);
    p->pageableMemoryAccess = attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev);
    p->concurrentManagedAccess = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev);
    p->computePreemptionSupported = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, dev);
    p->canUseHostPointerForRegisteredMem = attr(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, dev);
    p->cooperativeLaunch = attr(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev);
    p->sharedMemPerBlockOptin = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    p->maxBlocksPerMultiProcessor = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, dev);
    p->accessPolicyMaxWindowSize = attr(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, dev);
    p->reservedSharedMemPerBlock = (size_t)attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, dev);
    p->hostRegisterSupported = attr(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, dev);
    p->memoryPoolsSupported = attr(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev);
    p->clusterLaunch = attr(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, dev);
    p->hostNumaId = attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev);
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    RT_ENTER();
    RT_CALL(rt_d.cuCtxSynchronize());
}

cudaError_t cudaDeviceReset(void)
{
    RT_ENTER();
    int dev = t_dev;
    rt_forget_modules(dev);
    CUresult r = rt_d.cuDevicePrimaryCtxReset(dev);
    t_last = cudaSuccess;
    return rt_ret(rt_err(r));
}

cudaError_t cudaDeviceGetLimit(size_t *v, enum cudaLimit l) { RT_ENTER(); RT_CALL(rt_d.cuCtxGetLimit(v, (CUlimit)l)); }
cudaError_t cudaDeviceSetLimit(enum cudaLimit l, size_t v) { RT_ENTER(); RT_CALL(rt_d.cuCtxSetLimit((CUlimit)l, v)); }

cudaError_t cudaDeviceCanAccessPeer(int *can, int dev, int peer)
{
    RT_ENTER();
    RT_CALL(rt_d.cuDeviceCanAccessPeer(can, dev, peer));
}

static cudaError_t peer_ctx(int peer, CUcontext *out)
{
    if (peer < 0 || peer >= rt_ndev) return cudaErrorInvalidDevice;
    pthread_mutex_lock(&rt_lock);
    CUresult r = CUDA_SUCCESS;
    if (!rt_primary[peer]) r = rt_d.cuDevicePrimaryCtxRetain(&rt_primary[peer], peer);
    *out = rt_primary[peer];
    pthread_mutex_unlock(&rt_lock);
    return rt_err(r);
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    RT_ENTER();
    CUcontext c;
    cudaError_t e = peer_ctx(peer, &c);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuCtxEnablePeerAccess(c, flags));
}

cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
    RT_ENTER();
    CUcontext c;
    cudaError_t e = peer_ctx(peer, &c);
    if (e) return rt_ret(e);
    RT_CALL(rt_d.cuCtxDisablePeerAccess(c));
}

/* the context for a device (memcpyPeer) */
CUcontext rt_ctx_of(int dev)
{
    CUcontext c = NULL;
    return peer_ctx(dev, &c) ? NULL : c;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fn, unsigned int ver,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *status)
{
    RT_ENTER();
    if (!sym || !fn) return rt_ret(cudaErrorInvalidValue);
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = rt_d.cuGetProcAddress(sym, fn, (int)ver, flags, &st);
    if (status) *status = (enum cudaDriverEntryPointQueryResult)st;
    /* A symbol the driver lacks (or has only in a newer version) is an answer, not an error: NULL
     * and the status, cudaSuccess, no sticky last error (PyTorch probes optional entry points). */
    if (r == CUDA_ERROR_NOT_FOUND && st != CU_GET_PROC_ADDRESS_SUCCESS) {
        *fn = NULL;
        return cudaSuccess;
    }
    return rt_ret(rt_err(r));
}

cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fn, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *status)
{
    return cudaGetDriverEntryPointByVersion(sym, fn, RT_VERSION, flags, status);
}
