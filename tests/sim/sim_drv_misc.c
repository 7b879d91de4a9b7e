/* sim_drv_misc.c - driver entry points frameworks call around their work (issue 46): capture
 * bookkeeping, host functions, IPC events, user objects, graph-memory attributes, managed-memory
 * hints, P2P attributes, the profiler switches. Everything is synchronous in the sim: a host
 * function runs at once. Test fixture. */
#include "sim.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USEROBJ_MAGIC 0x5c0b7001

/* ---- stream capture ----------------------------------------------------------------------- */
static __thread CUstreamCaptureMode capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    if (!mode || *mode > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = capture_mode;
    capture_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

/* Nodes still run in the order added; the stream's dependencies (what cuStreamGetCaptureInfo_v3
 * says) follow the call when it leaves one node. */
CUresult cuStreamUpdateCaptureDependencies_v2(CUstream s, CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,
                                              unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if ((n && !deps) || (flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES && flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES))
        return CUDA_ERROR_INVALID_VALUE;
    return sim_capture_set_deps(s, deps, n, flags == CU_STREAM_ADD_CAPTURE_DEPENDENCIES);
}
SIM_ALIAS(cuStreamUpdateCaptureDependencies_v2, cuStreamUpdateCaptureDependencies_v2_ptsz);

/* ---- host functions: the stream is always idle, so they run now ----------------------------- */
CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    if (sim_capture_graph(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* host nodes: not modelled */
    fn(data);
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuLaunchHostFunc, cuLaunchHostFunc_ptsz);

CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb, void *data, unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (!cb || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (sim_capture_graph(s)) { sim_capture_invalidate(s); return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; } /* as CUDA: not capturable */
    cb(s, CUDA_SUCCESS, data);
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuStreamAddCallback, cuStreamAddCallback_ptsz);

/* ---- IPC events: the handle names the event in this process (no cross-process sharing) ---- */
struct ipc_event { char tag[8]; pid_t pid; CUevent e; };

CUresult cuIpcGetEventHandle(CUipcEventHandle *h, CUevent e)
{
    if (!h) return CUDA_ERROR_INVALID_VALUE;
    long flags = sim_event_flags(e);
    if (flags < 0) return CUDA_ERROR_INVALID_HANDLE;
    /* documented: only an event made with CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING */
    if (!(flags & CU_EVENT_INTERPROCESS) || !(flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    struct ipc_event x = { "vtsimev", getpid(), e };
    _Static_assert(sizeof x <= sizeof h->reserved, "IPC event handle too small");
    memset(h, 0, sizeof *h);
    memcpy(h->reserved, &x, sizeof x);
    return CUDA_SUCCESS;
}

CUresult cuIpcOpenEventHandle(CUevent *out, CUipcEventHandle h)
{
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    struct ipc_event x;
    memcpy(&x, h.reserved, sizeof x);
    if (memcmp(x.tag, "vtsimev", 8) != 0 || x.pid != getpid() || sim_event_flags(x.e) < 0) return CUDA_ERROR_INVALID_VALUE;
    return cuEventCreate(out, (unsigned)sim_event_flags(x.e));
}

/* ---- user objects: reference counted, the destructor called when the count reaches zero ---- */
struct CUuserObject_st { int magic; unsigned refs; void *ptr; CUhostFn destroy; };

CUresult cuUserObjectCreate(CUuserObject *out, void *ptr, CUhostFn destroy, unsigned int refs, unsigned int flags)
{
    /* documented: flags must be CU_USER_OBJECT_NO_DESTRUCTOR_SYNC, the count at least 1 */
    if (!out || !destroy || refs == 0 || flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) return CUDA_ERROR_INVALID_VALUE;
    struct CUuserObject_st *o = calloc(1, sizeof *o);
    if (!o) return CUDA_ERROR_OUT_OF_MEMORY;
    *o = (struct CUuserObject_st){ USEROBJ_MAGIC, refs, ptr, destroy };
    *out = o;
    return CUDA_SUCCESS;
}

CUresult cuUserObjectRetain(CUuserObject o, unsigned int count)
{
    if (!o || o->magic != USEROBJ_MAGIC || count == 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    o->refs += count;
    pthread_mutex_unlock(&sim_lock);
    return CUDA_SUCCESS;
}

CUresult cuUserObjectRelease(CUuserObject o, unsigned int count)
{
    if (!o || o->magic != USEROBJ_MAGIC || count == 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    int last = count >= o->refs;
    o->refs = last ? 0 : o->refs - count;
    pthread_mutex_unlock(&sim_lock);
    if (last) {
        o->magic = 0;
        o->destroy(o->ptr);
        free(o);
    }
    return CUDA_SUCCESS;
}

/* A graph's references: taken and given back by count; those a graph still holds when it is
 * destroyed are not released (not modelled). */
CUresult cuGraphRetainUserObject(CUgraph g, CUuserObject o, unsigned int count, unsigned int flags)
{
    if (!g || (flags & ~(unsigned)CU_GRAPH_USER_OBJECT_MOVE)) return CUDA_ERROR_INVALID_VALUE;
    return flags & CU_GRAPH_USER_OBJECT_MOVE ? (o && o->magic == USEROBJ_MAGIC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE)
                                             : cuUserObjectRetain(o, count);
}

CUresult cuGraphReleaseUserObject(CUgraph g, CUuserObject o, unsigned int count)
{
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    return cuUserObjectRelease(o, count);
}

/* ---- graph memory: no graph allocation is kept apart from the device's (none reported) ------- */
CUresult cuDeviceGetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void *value)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (dev < 0 || dev >= sim_ndev) return CUDA_ERROR_INVALID_DEVICE;
    if (!value || attr > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) return CUDA_ERROR_INVALID_VALUE;
    *(cuuint64_t *)value = 0;
    return CUDA_SUCCESS;
}

/* documented: only the two high watermarks may be set, and only to 0 (a reset) */
CUresult cuDeviceSetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void *value)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (dev < 0 || dev >= sim_ndev) return CUDA_ERROR_INVALID_DEVICE;
    if (!value || (attr != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && attr != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) ||
        *(cuuint64_t *)value != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* ---- managed memory hints: checked (managed memory, a place that exists), otherwise no-ops ---- */
static CUresult managed_range(CUdeviceptr p, size_t n, CUmemLocation loc)
{
    if (!n || p < sim_managed_lo || p + n > sim_managed_hi || p + n < p) return CUDA_ERROR_INVALID_VALUE;
    if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE) return loc.id >= 0 && loc.id < sim_ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
    return loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
                   loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT
               ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags, CUstream s)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    return r ? r : flags ? CUDA_ERROR_INVALID_VALUE : managed_range(p, n, loc);
}
SIM_ALIAS(cuMemPrefetchAsync_v2, cuMemPrefetchAsync_v2_ptsz);

CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY) return CUDA_ERROR_INVALID_VALUE;
    /* the read-mostly advice takes no location */
    if (advice == CU_MEM_ADVISE_SET_READ_MOSTLY || advice == CU_MEM_ADVISE_UNSET_READ_MOSTLY)
        loc = (CUmemLocation){ .type = CU_MEM_LOCATION_TYPE_HOST };
    return managed_range(p, n, loc);
}

/* ---- P2P: every pair of distinct simulated devices can reach each other -------------------- */
CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attr, CUdevice src, CUdevice dst)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    if (src < 0 || src >= sim_ndev || dst < 0 || dst >= sim_ndev || src == dst) return CUDA_ERROR_INVALID_DEVICE;
    switch (attr) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 1; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* ---- the profiler switches: nothing to profile, nothing to refuse ---------------------------- */
CUresult cuProfilerStart(void) { sim_ctx *c; return sim_cur_ctx(&c); }
CUresult cuProfilerStop(void) { sim_ctx *c; return sim_cur_ctx(&c); }

/* ---- the JIT linker: what a driver needs of it to load the result -------------------------- */
/* The sim runs no code, so "linking" keeps what its module loader reads: the PTX inputs joined
 * (the loader scans them for entries and variables), or the first cubin/fatbin when there is one.
 * Host objects and libraries of device code are not modelled. */
#define LINK_MAGIC 0x5c111c01
struct CUlinkState_st { int magic; char *ptx; size_t ptxlen; void *bin; size_t binlen; };

CUresult cuLinkCreate_v2(unsigned int nopt, CUjit_option *opts, void **vals, CUlinkState *out)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!out || (nopt && (!opts || !vals))) return CUDA_ERROR_INVALID_VALUE;
    struct CUlinkState_st *l = calloc(1, sizeof *l);
    if (!l) return CUDA_ERROR_OUT_OF_MEMORY;
    l->magic = LINK_MAGIC;
    *out = l;
    return CUDA_SUCCESS;
}

CUresult cuLinkAddData_v2(CUlinkState l, CUjitInputType type, void *data, size_t size, const char *name,
                          unsigned int nopt, CUjit_option *opts, void **vals)
{
    if (!l || l->magic != LINK_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    if (!data || !size) return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_JIT_INPUT_PTX) {
        size_t n = strnlen(data, size);
        char *p = realloc(l->ptx, l->ptxlen + n + 2);
        if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(p + l->ptxlen, data, n);
        l->ptxlen += n;
        p[l->ptxlen++] = '\n';
        p[l->ptxlen] = '\0';
        l->ptx = p;
        return CUDA_SUCCESS;
    }
    if (type != CU_JIT_INPUT_CUBIN && type != CU_JIT_INPUT_FATBINARY) return CUDA_ERROR_NOT_SUPPORTED;
    if (l->bin) return CUDA_SUCCESS; /* the first binary stands for the link */
    if (!(l->bin = malloc(size))) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(l->bin, data, size);
    l->binlen = size;
    return CUDA_SUCCESS;
}

CUresult cuLinkAddFile_v2(CUlinkState l, CUjitInputType type, const char *path, unsigned int nopt,
                          CUjit_option *opts, void **vals)
{
    if (!l || l->magic != LINK_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) return CUDA_ERROR_FILE_NOT_FOUND;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[65536];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n > cap) {
            char *b = realloc(buf, cap = (len + n) * 2);
            if (!b) { free(buf); fclose(f); return CUDA_ERROR_OUT_OF_MEMORY; }
            buf = b;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    CUresult r = cuLinkAddData_v2(l, type, buf, len, path, nopt, opts, vals);
    free(buf);
    return r;
}

CUresult cuLinkComplete(CUlinkState l, void **image, size_t *size)
{
    if (!l || l->magic != LINK_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    if (!image || !size) return CUDA_ERROR_INVALID_VALUE;
    if (!l->bin && !l->ptx) return CUDA_ERROR_INVALID_IMAGE; /* nothing to link */
    *image = l->bin ? l->bin : l->ptx;
    *size = l->bin ? l->binlen : l->ptxlen + 1;
    return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState l)
{
    if (!l || l->magic != LINK_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    l->magic = 0;
    free(l->ptx);
    free(l->bin);
    free(l);
    return CUDA_SUCCESS;
}

/* ---- what the simulated device does not have: answered as a driver without it does -------- */
/* Multicast objects (NVLink SHARP): CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0. */
CUresult cuMulticastCreate(CUmemGenericAllocationHandle *h, const CUmulticastObjectProp *prop) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle h, CUdevice dev) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mc, size_t mc_off, CUmemGenericAllocationHandle mem, size_t mem_off,
                            size_t size, unsigned long long flags) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuMulticastUnbind(CUmemGenericAllocationHandle mc, CUdevice dev, size_t mc_off, size_t size) { return CUDA_ERROR_NOT_SUPPORTED; }
/* Green contexts (SM partitions): no SM resources to split. */
CUresult cuDeviceGetDevResource(CUdevice dev, CUdevResource *res, CUdevResourceType type) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuDevSmResourceSplitByCount(CUdevResource *result, unsigned int *n, const CUdevResource *input, CUdevResource *remaining,
                                     unsigned int flags, unsigned int min_count) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuDevResourceGenerateDesc(CUdevResourceDesc *desc, CUdevResource *res, unsigned int n) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuGreenCtxCreate(CUgreenCtx *ctx, CUdevResourceDesc desc, CUdevice dev, unsigned int flags) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuGreenCtxDestroy(CUgreenCtx ctx) { return CUDA_ERROR_INVALID_VALUE; } /* none was ever made */
CUresult cuCtxFromGreenCtx(CUcontext *out, CUgreenCtx ctx) { return CUDA_ERROR_INVALID_VALUE; }
CUresult cuGreenCtxStreamCreate(CUstream *s, CUgreenCtx ctx, unsigned int flags, int priority) { return CUDA_ERROR_INVALID_VALUE; }

/* Driver log callbacks: registered and unregistered; the sim writes no driver log, so none is called. */
#define LOGCB_MAGIC 0x5c106cb1
struct logcb { int magic; CUlogsCallback fn; void *user; };
CUresult cuLogsRegisterCallback(CUlogsCallback fn, void *user, CUlogsCallbackHandle *out)
{
    if (!fn || !out) return CUDA_ERROR_INVALID_VALUE;
    struct logcb *c = malloc(sizeof *c);
    if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
    *c = (struct logcb){ LOGCB_MAGIC, fn, user };
    *out = (CUlogsCallbackHandle)c;
    return CUDA_SUCCESS;
}
CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle h)
{
    struct logcb *c = (struct logcb *)h;
    if (!c || c->magic != LOGCB_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    c->magic = 0;
    free(c);
    return CUDA_SUCCESS;
}
