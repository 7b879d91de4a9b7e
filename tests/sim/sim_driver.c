/* sim_driver.c - simulated driver: cuInit, devices, primary contexts, sticky errors, error
 * strings, streams and events (test fixture: nothing runs asynchronously, so every stream is
 * always idle and events carry host CLOCK_MONOTONIC times). */
#include "sim.h"
#include "sim_errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

pthread_mutex_t sim_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
int sim_ndev;
sim_device sim_devs[SIM_MAX_DEV];
int sim_pageable, sim_no_paraminfo, sim_verbose;
static int sim_inited;
static pthread_once_t sim_once = PTHREAD_ONCE_INIT;
static __thread sim_ctx *tls_ctx;
static __thread sim_ctx *tls_stack[8];
static __thread int tls_depth;

#define CTX_MAGIC 0x5c7c7c01
#define STREAM_MAGIC 0x5c5e0001
#define EVENT_MAGIC 0x5cee0001

struct CUstream_st { int magic; sim_ctx *ctx; unsigned flags; int priority; unsigned long long id; };
/* capture: the graph a capturing stream was building when the event was recorded in it (NULL:
 * recorded outside a capture); a stream waiting on it joins that capture. */
struct CUevent_st { int magic; unsigned flags; uint64_t t; int recorded; CUgraph capture; };

uint64_t sim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t sim_parse_size(const char *s, size_t dflt)
{
    if (!s || !*s) return dflt;
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0) return dflt;
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    case 't': case 'T': v *= 1024.0 * 1024 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static void sim_init_once(void)
{
    const char *nd = getenv("VRAMTRACE_SIM_DEVICES");
    sim_ndev = nd && *nd ? atoi(nd) : 1;
    if (sim_ndev < 0) sim_ndev = 0;
    if (sim_ndev > SIM_MAX_DEV) sim_ndev = SIM_MAX_DEV;
    size_t cap = sim_parse_size(getenv("VRAMTRACE_SIM_MEM"), 16ull << 30);
    cap &= ~(size_t)0xfffff;
    if (cap < (64u << 20)) cap = 64u << 20;
    sim_pageable = env_flag("VRAMTRACE_SIM_PAGEABLE");
    sim_no_paraminfo = env_flag("VRAMTRACE_SIM_NO_PARAMINFO");
    sim_verbose = env_flag("VRAMTRACE_SIM_VERBOSE");
    sim_deref_init();
    /* memory some other owner holds on every device (another process, a context's own needs):
     * cuMemGetInfo counts it as used, no allocation of this process accounts for it */
    size_t foreign = sim_parse_size(getenv("VRAMTRACE_SIM_FOREIGN_MEM"), 0);
    if (foreign > cap - (32u << 20)) foreign = cap - (32u << 20);
    for (int d = 0; d < sim_ndev; d++) {
        sim_devs[d].capacity = cap;
        sim_devs[d].used = foreign;
        sim_devs[d].primary.magic = CTX_MAGIC;
        sim_devs[d].primary.dev = d;
    }
    sim_mem_init();
    sim_inited = 1;
}

CUresult sim_init_check(void)
{
    return sim_inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult sim_cur_ctx(sim_ctx **out)
{
    if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED;
    sim_ctx *c = tls_ctx;
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return c->sticky;
}

sim_ctx *sim_swap_ctx(sim_ctx *c)
{
    sim_ctx *old = tls_ctx;
    tls_ctx = c;
    return old;
}

int sim_is_default_stream(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

CUresult sim_stream_check(CUstream s, sim_ctx **ctx)
{
    CUresult r = sim_cur_ctx(ctx);
    if (r) return r;
    if (!sim_is_default_stream(s) && s->magic != STREAM_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

sim_ctx *sim_stream_ctx(CUstream s)
{
    return !sim_is_default_stream(s) && s->magic == STREAM_MAGIC ? s->ctx : NULL;
}

static sim_ctx *ctx_of(CUcontext c)
{
    sim_ctx *x = (sim_ctx *)c;
    return x && x->magic == CTX_MAGIC ? x : NULL;
}

/* ---- init, version, errors ---------------------------------------------------------------- */
CUresult cuInit(unsigned int flags)
{
    if (flags) return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&sim_once, sim_init_once);
    return sim_ndev ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

CUresult cuDriverGetVersion(int *v)
{
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = SIM_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult e, const char **s)
{
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    const sim_errinfo *i = sim_errinfo_find((int)e);
    *s = i && i->cu ? i->msg : NULL;
    return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult e, const char **s)
{
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    const sim_errinfo *i = sim_errinfo_find((int)e);
    *s = i ? i->cu : NULL;
    return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- devices ------------------------------------------------------------------------------ */
#define DEV_CHECK(d) do { if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED; \
    if ((d) < 0 || (d) >= sim_ndev) return CUDA_ERROR_INVALID_DEVICE; } while (0)

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    DEV_CHECK(ordinal);
    if (!dev) return CUDA_ERROR_INVALID_VALUE;
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
    if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED;
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = sim_ndev;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    DEV_CHECK(dev);
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "vramtrace simulated GPU");
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    DEV_CHECK(dev);
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    *bytes = sim_devs[dev].capacity;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    DEV_CHECK(dev);
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    memset(uuid, 0, sizeof *uuid);
    memcpy(uuid->bytes, "vramtrace-sim", 13);
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuDeviceGetUuid_v2, cuDeviceGetUuid);

CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice dev)
{
    DEV_CHECK(dev);
    if (!bus || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(bus, (size_t)len, "0000:%02x:00.0", 0x10 + dev);
    return CUDA_SUCCESS;
}

static int attr_value(CUdevice_attribute a, int dev, int *ok)
{
    *ok = 1;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return 0x10 + dev;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 50 << 20;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 3;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return sim_pageable;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: return 0;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return -1;
    default:
        if ((int)a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX) *ok = 0;
        return 0;
    }
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice dev)
{
    DEV_CHECK(dev);
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    int ok;
    int x = attr_value(a, dev, &ok);
    if (!ok) return CUDA_ERROR_INVALID_VALUE;
    *v = x;
    return CUDA_SUCCESS;
}

CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    DEV_CHECK(dev);
    DEV_CHECK(peer);
    if (!can) return CUDA_ERROR_INVALID_VALUE;
    *can = dev != peer;
    return CUDA_SUCCESS;
}

/* ---- contexts (primary contexts only; cuCtxCreate hands out the primary one) -------------- */
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    DEV_CHECK(dev);
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    sim_devs[dev].primary.refs++;
    pthread_mutex_unlock(&sim_lock);
    *pctx = (CUcontext)&sim_devs[dev].primary;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    DEV_CHECK(dev);
    pthread_mutex_lock(&sim_lock);
    CUresult r = CUDA_SUCCESS;
    if (sim_devs[dev].primary.refs > 0) sim_devs[dev].primary.refs--;
    else r = CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_unlock(&sim_lock);
    return r;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    DEV_CHECK(dev);
    pthread_mutex_lock(&sim_lock);
    sim_release_device_memory(dev);
    sim_devs[dev].primary.sticky = CUDA_SUCCESS;
    pthread_mutex_unlock(&sim_lock);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    DEV_CHECK(dev);
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    *flags = sim_devs[dev].primary.flags;
    *active = sim_devs[dev].primary.refs > 0;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    DEV_CHECK(dev);
    sim_devs[dev].primary.flags = flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
    CUresult r = cuDevicePrimaryCtxRetain(pctx, dev);
    if (r) return r;
    sim_devs[dev].primary.flags = flags;
    tls_ctx = (sim_ctx *)*pctx;
    return CUDA_SUCCESS;
}

/* before CUDA 12.5 (what cudaTypedefs.h calls PFN_cuCtxCreate_v3020): no parameters */
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v4(pctx, NULL, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    sim_ctx *c = ctx_of(ctx);
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_ctx == c) tls_ctx = NULL;
    return cuDevicePrimaryCtxRelease_v2(c->dev);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED;
    if (ctx && !ctx_of(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    tls_ctx = (sim_ctx *)ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)tls_ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx_of(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth == 8) return CUDA_ERROR_INVALID_VALUE;
    tls_stack[tls_depth++] = tls_ctx;
    tls_ctx = (sim_ctx *)ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED;
    if (!tls_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx) *pctx = (CUcontext)tls_ctx;
    tls_ctx = tls_depth ? tls_stack[--tls_depth] : NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *dev)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r == CUDA_ERROR_NOT_INITIALIZED || r == CUDA_ERROR_INVALID_CONTEXT) return r;
    if (!dev) return CUDA_ERROR_INVALID_VALUE;
    *dev = c->dev;
    return CUDA_SUCCESS;
}

/* CUDA 13: the device of any context (NULL: the current one) */
CUresult cuCtxGetDevice_v2(CUdevice *dev, CUcontext ctx)
{
    if (!ctx) return cuCtxGetDevice(dev);
    CUresult r = sim_init_check();
    if (r) return r;
    sim_ctx *c = ctx_of(ctx);
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (!dev) return CUDA_ERROR_INVALID_VALUE;
    *dev = c->dev;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r == CUDA_ERROR_NOT_INITIALIZED || r == CUDA_ERROR_INVALID_CONTEXT) return r;
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return CUDA_SUCCESS;
}

/* synchronisation points trim the device's pools to their release threshold (like CUDA) */
static CUresult sync_point(CUresult r, int dev)
{
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_ILLEGAL_ADDRESS) {
        pthread_mutex_lock(&sim_lock);
        sim_pools_sync(dev);
        pthread_mutex_unlock(&sim_lock);
    }
    return r;
}

CUresult cuCtxSynchronize(void)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    return r == CUDA_SUCCESS || r == CUDA_ERROR_ILLEGAL_ADDRESS ? sync_point(r, c->dev) : r;
}

CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    sim_ctx *c = ctx ? ctx_of(ctx) : tls_ctx;
    if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED;
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    return c->sticky;
}

CUresult cuCtxGetLimit(size_t *v, CUlimit limit)
{
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = limit == CU_LIMIT_STACK_SIZE ? 1024 : limit == CU_LIMIT_MALLOC_HEAP_SIZE ? 8 << 20 : 0;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetLimit(CUlimit limit, size_t v) { return CUDA_SUCCESS; }

CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
    sim_ctx *c, *p = ctx_of(peer);
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!p || p == c) return CUDA_ERROR_INVALID_DEVICE;
    if (sim_devs[c->dev].peer_enabled[p->dev]) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    sim_devs[c->dev].peer_enabled[p->dev] = 1;
    return CUDA_SUCCESS;
}

CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
    sim_ctx *c, *p = ctx_of(peer);
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!p || !sim_devs[c->dev].peer_enabled[p->dev]) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    sim_devs[c->dev].peer_enabled[p->dev] = 0;
    return CUDA_SUCCESS;
}

/* ---- streams ------------------------------------------------------------------------------ */
CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int priority)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    static unsigned long long next_id = 16;
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = STREAM_MAGIC;
    s->ctx = c;
    s->flags = flags;
    s->priority = priority;
    s->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
    *ph = s;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
    return cuStreamCreateWithPriority(ph, flags, 0);
}

CUresult cuStreamDestroy_v2(CUstream s)
{
    if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED;
    if (sim_is_default_stream(s) || s->magic != STREAM_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    s->magic = 0;
    free(s);
    return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream s)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    return r == CUDA_SUCCESS ? sync_point(r, sim_stream_dev(s)) : r;
}
SIM_ALIAS(cuStreamSynchronize, cuStreamSynchronize_ptsz);

CUresult cuStreamQuery(CUstream s)
{
    sim_ctx *c;
    return sim_stream_check(s, &c);
}
SIM_ALIAS(cuStreamQuery, cuStreamQuery_ptsz);

CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (!e || e->magic != EVENT_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    if (e->capture) return sim_capture_join(s, e->capture); /* cross-stream capture: s joins it */
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuStreamWaitEvent, cuStreamWaitEvent_ptsz);

CUresult cuStreamGetFlags(CUstream s, unsigned int *flags)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = sim_is_default_stream(s) ? 0 : s->flags;
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuStreamGetFlags, cuStreamGetFlags_ptsz);

CUresult cuStreamGetPriority(CUstream s, int *prio)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (!prio) return CUDA_ERROR_INVALID_VALUE;
    *prio = sim_is_default_stream(s) ? 0 : s->priority;
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuStreamGetPriority, cuStreamGetPriority_ptsz);

CUresult cuStreamGetId(CUstream s, unsigned long long *id)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    *id = sim_is_default_stream(s) ? (unsigned long long)(uintptr_t)s : s->id;
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuStreamGetId, cuStreamGetId_ptsz);

CUresult cuStreamGetCtx(CUstream s, CUcontext *pctx)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)(sim_is_default_stream(s) ? c : s->ctx);
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuStreamGetCtx, cuStreamGetCtx_ptsz);

/* the context a stream belongs to (the current one for default streams) */
int sim_stream_dev(CUstream s)
{
    if (!sim_is_default_stream(s) && s->magic == STREAM_MAGIC) return s->ctx->dev;
    return tls_ctx ? tls_ctx->dev : 0;
}

/* ---- events ------------------------------------------------------------------------------- */
CUresult cuEventCreate(CUevent *ph, unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = EVENT_MAGIC;
    e->flags = flags;
    *ph = e;
    return CUDA_SUCCESS;
}

CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (!e || e->magic != EVENT_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    e->capture = sim_capture_graph(s); /* in a capture: a node of the graph, not a time */
    if (e->capture) return CUDA_SUCCESS;
    e->t = sim_now_ns();
    e->recorded = 1;
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz);

CUresult cuEventRecord(CUevent e, CUstream s) { return cuEventRecordWithFlags(e, s, 0); }
SIM_ALIAS(cuEventRecord, cuEventRecord_ptsz);

CUresult cuEventQuery(CUevent e)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!e || e->magic != EVENT_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent e) { return cuEventQuery(e); }

CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    if (!a || !b || a->magic != EVENT_MAGIC || b->magic != EVENT_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
    if (!a->recorded || !b->recorded) return CUDA_ERROR_NOT_READY;
    *ms = (float)((double)((int64_t)(b->t - a->t)) / 1e6);
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuEventElapsedTime_v2, cuEventElapsedTime);

CUresult cuEventDestroy_v2(CUevent e)
{
    if (!sim_inited) return CUDA_ERROR_NOT_INITIALIZED;
    if (!e || e->magic != EVENT_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    e->magic = 0;
    free(e);
    return CUDA_SUCCESS;
}

/* The flags an event was created with; -1 when it is not an event (sim_drv_misc.c: IPC events). */
long sim_event_flags(CUevent e) { return e && e->magic == EVENT_MAGIC ? (long)e->flags : -1; }
