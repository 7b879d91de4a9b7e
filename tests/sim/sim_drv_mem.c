/* sim_drv_mem.c - simulated driver memory API: device/managed/pinned/registered allocation,
 * copies and memsets that move real bytes, cuMemGetInfo, pointer attributes (test fixture). */
#include "sim.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define LOCK() pthread_mutex_lock(&sim_lock)
#define UNLOCK() pthread_mutex_unlock(&sim_lock)


/* Allocate device memory on dev (caller holds the lock). */
CUresult sim_dev_alloc(int dev, size_t size, int kind, uintptr_t *out, sim_region **reg)
{
    size_t align = size >= (2u << 20) ? (2u << 20) : 256;
    size_t reserved = (size + align - 1) & ~(align - 1);
    if (reserved < size || sim_devs[dev].used + reserved > sim_devs[dev].capacity)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t a = sim_va_alloc(dev, reserved, align);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    sim_region *r = sim_region_add(a, size, reserved, kind, dev);
    if (!r) { sim_va_free(dev, a, reserved); return CUDA_ERROR_OUT_OF_MEMORY; }
    sim_devs[dev].used += reserved;
    *out = a;
    if (reg) *reg = r;
    return CUDA_SUCCESS;
}

/* Free a device region (caller holds the lock). */
void sim_dev_free(sim_region *r)
{
    int dev = r->dev;
    sim_va_free(dev, r->base, r->reserved);
    sim_devs[dev].used -= r->reserved;
    sim_region_remove(r);
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!dptr || !size) return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a = 0;
    LOCK();
    r = sim_dev_alloc(c->dev, size, SIM_K_DEVICE, &a, NULL);
    UNLOCK();
    *dptr = r ? 0 : (CUdeviceptr)a;
    return r;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t w, size_t h, unsigned int elem)
{
    if (!pitch || !w || !h || (elem != 4 && elem != 8 && elem != 16)) return CUDA_ERROR_INVALID_VALUE;
    size_t p = (w + 511) & ~(size_t)511;
    CUresult r = cuMemAlloc_v2(dptr, p * h);
    if (!r) *pitch = p;
    return r;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!p) return CUDA_SUCCESS;
    LOCK();
    sim_region *g = sim_region_exact((uintptr_t)p);
    if (g && g->kind == SIM_K_ASYNC && (g->flags & SIM_F_GRAPH)) {
        sim_graph_mem_free(g->base);
    } else if (g && g->kind == SIM_K_ASYNC) {
        sim_pool_free(g);
    } else if (g && g->kind == SIM_K_DEVICE) {
        sim_dev_free(g);
    } else if (g && g->kind == SIM_K_MANAGED) {
        sim_va_free(-1, g->base, g->reserved);
        sim_region_remove(g);
    } else {
        r = CUDA_ERROR_INVALID_VALUE;
    }
    UNLOCK();
    return r;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!dptr || !size || !(flags == CU_MEM_ATTACH_GLOBAL || flags == CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    size_t reserved = (size + 4095) & ~(size_t)4095;
    LOCK();
    uintptr_t a = sim_va_alloc(-1, reserved, 4096);
    sim_region *g = a ? sim_region_add(a, size, reserved, SIM_K_MANAGED, c->dev) : NULL;
    if (a && !g) sim_va_free(-1, a, reserved);
    if (g) g->flags = flags;
    UNLOCK();
    if (!g) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = (CUdeviceptr)a;
    return CUDA_SUCCESS;
}

CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!pp || !size) return CUDA_ERROR_INVALID_VALUE;
    size_t reserved = (size + 4095) & ~(size_t)4095;
    void *p = mmap(NULL, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    sim_region *g = sim_region_add((uintptr_t)p, size, reserved, SIM_K_PINNED, -1);
    if (g) g->flags = flags;
    UNLOCK();
    if (!g) { munmap(p, reserved); return CUDA_ERROR_OUT_OF_MEMORY; }
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v2(void **pp, size_t size) { return cuMemHostAlloc(pp, size, 0); }

CUresult cuMemFreeHost(void *p)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    LOCK();
    sim_region *g = sim_region_exact((uintptr_t)p);
    size_t len = 0;
    if (g && g->kind == SIM_K_PINNED) { len = g->reserved; sim_region_remove(g); }
    else r = CUDA_ERROR_INVALID_VALUE;
    UNLOCK();
    if (len) munmap(p, len);
    return r;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!d || flags) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_region *g = sim_region_find((uintptr_t)p);
    int ok = g && (g->kind == SIM_K_PINNED || g->kind == SIM_K_REGISTERED);
    UNLOCK();
    if (!ok) return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int *flags, void *p)
{
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_region *g = sim_region_find((uintptr_t)p);
    int ok = g && g->kind == SIM_K_PINNED;
    if (ok) *flags = g->flags;
    UNLOCK();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!p || !size) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_region *g = sim_region_find((uintptr_t)p);
    if (!g) g = sim_region_find((uintptr_t)p + size - 1);
    if (g) r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    else if (!(g = sim_region_add((uintptr_t)p, size, size, SIM_K_REGISTERED, -1)))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else g->flags = flags;
    UNLOCK();
    return r;
}

CUresult cuMemHostUnregister(void *p)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    LOCK();
    sim_region *g = sim_region_exact((uintptr_t)p);
    if (g && g->kind == SIM_K_REGISTERED) sim_region_remove(g);
    else r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    UNLOCK();
    return r;
}

CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!free_b || !total) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    *total = sim_devs[c->dev].capacity;
    *free_b = sim_devs[c->dev].capacity - sim_devs[c->dev].used;
    UNLOCK();
    return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    LOCK();
    sim_region *g = sim_region_find((uintptr_t)p);
    int ok = g && g->kind != SIM_K_PINNED && g->kind != SIM_K_REGISTERED;
    if (ok && base) *base = (CUdeviceptr)g->base;
    if (ok && size) *size = g->size;
    UNLOCK();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* ---- copies ------------------------------------------------------------------------------- */
/* 0 = host side; 1 = valid simulated range; -1 = inside a simulated range but not allocated */
static int side(uintptr_t p, size_t n)
{
    if (sim_range_ok(p, n ? n : 1, 1)) return 1;
    if (sim_dev_of_range(p) >= 0 || (p >= sim_managed_lo && p < sim_managed_hi)) return -1;
    return 0;
}

static CUresult do_copy(void *dst, const void *src, size_t n, int dst_dev, int src_dev,
                        CUstream s, int async)
{
    sim_ctx *c;
    CUresult r = async ? sim_stream_check(s, &c) : sim_cur_ctx(&c);
    if (r) return r;
    if (!n) return CUDA_SUCCESS;
    if (async) { /* captured: checked when the graph runs (graph allocations exist only then) */
        sim_op op = {.type = 1, .dst = dst, .src = src, .n = n};
        if (sim_capture_op(s, &op)) return CUDA_SUCCESS;
    }
    LOCK();
    int ds = side((uintptr_t)dst, n), ss = side((uintptr_t)src, n);
    UNLOCK();
    if (ds < 0 || ss < 0 || (dst_dev && ds != 1) || (src_dev && ss != 1))
        return CUDA_ERROR_INVALID_VALUE;
    memmove(sim_view((uintptr_t)dst), sim_view((uintptr_t)src), n);
    return CUDA_SUCCESS;
}

#define P(x) ((void *)(uintptr_t)(x))
CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return do_copy(P(d), P(s), n, 0, 0, 0, 0); }
SIM_ALIAS(cuMemcpy, cuMemcpy_ptds);
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return do_copy(P(d), P(s), n, 0, 0, st, 1); }
SIM_ALIAS(cuMemcpyAsync, cuMemcpyAsync_ptsz);
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { return do_copy(P(d), s, n, 1, 0, 0, 0); }
SIM_ALIAS(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds);
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { return do_copy(d, P(s), n, 0, 1, 0, 0); }
SIM_ALIAS(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds);
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return do_copy(P(d), P(s), n, 1, 1, 0, 0); }
SIM_ALIAS(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) { return do_copy(P(d), s, n, 1, 0, st, 1); }
SIM_ALIAS(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz);
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) { return do_copy(d, P(s), n, 0, 1, st, 1); }
SIM_ALIAS(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return do_copy(P(d), P(s), n, 1, 1, st, 1); }
SIM_ALIAS(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz);

CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
{
    if (!dc || !sc) return CUDA_ERROR_INVALID_CONTEXT;
    return do_copy(P(d), P(s), n, 1, 1, 0, 0);
}
SIM_ALIAS(cuMemcpyPeer, cuMemcpyPeer_ptds);
CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
    if (!dc || !sc) return CUDA_ERROR_INVALID_CONTEXT;
    return do_copy(P(d), P(s), n, 1, 1, st, 1);
}
SIM_ALIAS(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz);

static CUresult copy2d(const CUDA_MEMCPY2D *p, CUstream s, int async)
{
    sim_ctx *c;
    CUresult r = async ? sim_stream_check(s, &c) : sim_cur_ctx(&c);
    if (r) return r;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    if (p->srcMemoryType == CU_MEMORYTYPE_ARRAY || p->dstMemoryType == CU_MEMORYTYPE_ARRAY)
        return CUDA_ERROR_NOT_SUPPORTED;
    const char *src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? (const char *)p->srcHost : (const char *)P(p->srcDevice);
    char *dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? (char *)p->dstHost : (char *)P(p->dstDevice);
    size_t spitch = p->srcPitch ? p->srcPitch : p->WidthInBytes;
    size_t dpitch = p->dstPitch ? p->dstPitch : p->WidthInBytes;
    if (spitch < p->WidthInBytes || dpitch < p->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
    src += p->srcY * spitch + p->srcXInBytes;
    dst += p->dstY * dpitch + p->dstXInBytes;
    if (!p->WidthInBytes || !p->Height) return CUDA_SUCCESS;
    size_t sspan = spitch * (p->Height - 1) + p->WidthInBytes;
    size_t dspan = dpitch * (p->Height - 1) + p->WidthInBytes;
    LOCK();
    int ss = side((uintptr_t)src, sspan), ds = side((uintptr_t)dst, dspan);
    UNLOCK();
    if (ss < 0 || ds < 0) return CUDA_ERROR_INVALID_VALUE;
    if (p->srcMemoryType == CU_MEMORYTYPE_DEVICE && ss != 1) return CUDA_ERROR_INVALID_VALUE;
    if (p->dstMemoryType == CU_MEMORYTYPE_DEVICE && ds != 1) return CUDA_ERROR_INVALID_VALUE;
    for (size_t y = 0; y < p->Height; y++)
        memmove(sim_view((uintptr_t)(dst + y * dpitch)), sim_view((uintptr_t)(src + y * spitch)), p->WidthInBytes);
    return CUDA_SUCCESS;
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p) { return copy2d(p, 0, 0); }
SIM_ALIAS(cuMemcpy2D_v2, cuMemcpy2D_v2_ptds);
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) { return copy2d(p, 0, 0); }
SIM_ALIAS(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds);
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s) { return copy2d(p, s, 1); }
SIM_ALIAS(cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz);

/* ---- memsets ------------------------------------------------------------------------------ */
static CUresult do_set(CUdeviceptr d, unsigned v, unsigned elem, size_t n, CUstream s, int async)
{
    sim_ctx *c;
    CUresult r = async ? sim_stream_check(s, &c) : sim_cur_ctx(&c);
    if (r) return r;
    if (!n) return CUDA_SUCCESS;
    if ((d % elem) != 0 || n > SIZE_MAX / elem) return CUDA_ERROR_INVALID_VALUE;
    if (async) { /* captured: checked when the graph runs */
        sim_op op = {.type = 2, .dst = P(d), .n = n, .value = v, .elem = elem};
        if (sim_capture_op(s, &op)) return CUDA_SUCCESS;
    }
    LOCK();
    int ok = sim_range_ok((uintptr_t)d, n * elem, 1);
    UNLOCK();
    if (!ok) return CUDA_ERROR_INVALID_VALUE;
    char *at = sim_view((uintptr_t)d);
    if (elem == 1) { memset(at, (int)(v & 0xff), n); return CUDA_SUCCESS; }
    for (size_t i = 0; i < n; i++) {
        if (elem == 2) { uint16_t x = (uint16_t)v; memcpy(at + 2 * i, &x, 2); }
        else { uint32_t x = v; memcpy(at + 4 * i, &x, 4); }
    }
    return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return do_set(d, v, 1, n, 0, 0); }
SIM_ALIAS(cuMemsetD8_v2, cuMemsetD8_v2_ptds);
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return do_set(d, v, 2, n, 0, 0); }
SIM_ALIAS(cuMemsetD16_v2, cuMemsetD16_v2_ptds);
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) { return do_set(d, v, 4, n, 0, 0); }
SIM_ALIAS(cuMemsetD32_v2, cuMemsetD32_v2_ptds);
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return do_set(d, v, 1, n, s, 1); }
SIM_ALIAS(cuMemsetD8Async, cuMemsetD8Async_ptsz);
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { return do_set(d, v, 2, n, s, 1); }
SIM_ALIAS(cuMemsetD16Async, cuMemsetD16Async_ptsz);
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { return do_set(d, v, 4, n, s, 1); }
SIM_ALIAS(cuMemsetD32Async, cuMemsetD32Async_ptsz);
/* a 4-byte write in stream order: what a one-element memset does (the flag only relaxes ordering) */
CUresult cuStreamWriteValue32_v2(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int flags)
{
    if (flags & ~(unsigned)CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER) return CUDA_ERROR_INVALID_VALUE;
    return do_set(a, v, 4, 1, s, 1);
}
SIM_ALIAS(cuStreamWriteValue32_v2, cuStreamWriteValue32_v2_ptsz);

/* replay a captured copy/memset (graph launch) */
void sim_replay_op(const sim_op *op)
{
    if (op->type == 1 && op->rows > 1)
        for (size_t i = 0; i < op->rows; i++)
            do_copy((char *)op->dst + i * op->dpitch, (const char *)op->src + i * op->spitch, op->n, 0, 0, 0, 0);
    else if (op->type == 1) do_copy(op->dst, op->src, op->n, 0, 0, 0, 0);
    else if (op->type == 2) do_set((CUdeviceptr)(uintptr_t)op->dst, op->value, op->elem, op->n, 0, 0);
}

/* ---- pointer attributes ------------------------------------------------------------------- */
static CUresult attr1(void *data, CUpointer_attribute a, const sim_region *g, uintptr_t p)
{
    int is_dev = g->kind == SIM_K_DEVICE || g->kind == SIM_K_ASYNC || g->kind == SIM_K_VMM || g->kind == SIM_K_IPC;
    int is_host = g->kind == SIM_K_PINNED || g->kind == SIM_K_REGISTERED;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = (CUcontext)&sim_devs[g->dev < 0 ? 0 : g->dev].primary; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = is_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = (CUdeviceptr)p; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: *(void **)data = is_dev ? NULL : (void *)p; break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(unsigned *)data = 0; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = g->id; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = g->kind == SIM_K_MANAGED; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = g->dev < 0 ? 0 : g->dev; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = (CUdeviceptr)g->base; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = g->size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(unsigned *)data = 1; break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: *(unsigned *)data = g->kind == SIM_K_DEVICE; break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(void **)data = g->kind == SIM_K_ASYNC && !(g->flags & SIM_F_GRAPH) ? g->pool : NULL; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* Pointer queries answered, written at exit to $VRAMTRACE_SIM_QUERIES (a test's count of how
 * often a tracer asks the driver about pointers). */
static _Atomic unsigned long pointer_queries;
__attribute__((destructor)) static void write_queries(void)
{
    const char *path = getenv("VRAMTRACE_SIM_QUERIES");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (!f) return;
    fprintf(f, "pointer_queries %lu\n", (unsigned long)atomic_load(&pointer_queries));
    fclose(f);
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    atomic_fetch_add(&pointer_queries, 1);
    CUresult r = sim_init_check();
    if (r) return r;
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_region *g = sim_region_find((uintptr_t)p);
    r = g ? attr1(data, a, g, (uintptr_t)p) : CUDA_ERROR_INVALID_VALUE;
    UNLOCK();
    return r;
}

/* Unlike cuPointerGetAttribute, an unknown pointer is not an error: every value is zeroed. */
CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data, CUdeviceptr p)
{
    atomic_fetch_add(&pointer_queries, 1);
    CUresult r = sim_init_check();
    if (r) return r;
    if (!attrs || !data) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_region *g = sim_region_find((uintptr_t)p);
    for (unsigned i = 0; i < n && !r; i++) {
        if (!data[i]) continue;
        if (g) { r = attr1(data[i], attrs[i], g, (uintptr_t)p); continue; }
        switch (attrs[i]) {
        case CU_POINTER_ATTRIBUTE_CONTEXT: case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
            *(void **)data[i] = NULL; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
            *(unsigned long long *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = -2; break;
        default: *(unsigned *)data[i] = 0; break;
        }
    }
    UNLOCK();
    return r;
}
