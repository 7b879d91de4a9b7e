/* sim_drv_ext.c - simulated driver, phase 2: stream-ordered memory pools (cuMemAllocAsync,
 * cuMemPool*), virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap, ...), IPC
 * handles, and the memory side of graph allocation nodes (test fixture).
 *
 * Pools keep freed blocks reserved (counted in the device's `used`, so cuMemGetInfo's free bytes
 * drop by the pool's reservation, as on real CUDA) until cuMemPoolTrimTo or a synchronisation
 * trims the pool to its release threshold (default 0, like CUDA's default pool). VMM physical
 * memory is a memfd per handle, counted at cuMemCreate and given back once the handle is released
 * and unmapped everywhere; mappings are MAP_SHARED, so one handle mapped twice really aliases. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK() pthread_mutex_lock(&sim_lock)
#define UNLOCK() pthread_mutex_unlock(&sim_lock)
#define POOL_MAGIC 0x5c9001a1
#define PHYS_MAGIC 0x5c9a1a1a
#define IPC_MAGIC 0x5c1bc001u
#define VMM_GRAN (2u << 20)

typedef struct blk { uintptr_t addr; size_t reserved; } blk;
struct CUmemPoolHandle_st {
    int magic, dev;
    size_t reserved, used, reserved_high, used_high;   /* bytes */
    uint64_t threshold;                                /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
    int reuse[3];
    blk *cache; size_t ncache, capcache;               /* freed blocks still reserved */
    struct CUmemPoolHandle_st *next;
};
static struct CUmemPoolHandle_st *pools;

static struct CUmemPoolHandle_st *pool_of(CUmemoryPool p)
{
    for (struct CUmemPoolHandle_st *x = pools; x; x = x->next)
        if (x == p && x->magic == POOL_MAGIC) return x;
    return NULL;
}

static struct CUmemPoolHandle_st *pool_new(int dev)
{
    struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->magic = POOL_MAGIC;
    p->dev = dev;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    p->next = pools;
    pools = p;
    return p;
}

static struct CUmemPoolHandle_st *default_pool(int dev)
{
    if (!sim_devs[dev].default_pool) sim_devs[dev].default_pool = pool_new(dev);
    return sim_devs[dev].default_pool;
}

static struct CUmemPoolHandle_st *current_pool(int dev)
{
    return sim_devs[dev].cur_pool ? sim_devs[dev].cur_pool : default_pool(dev);
}

/* release cached blocks until the pool holds at most `keep` reserved bytes */
static void pool_trim(struct CUmemPoolHandle_st *p, size_t keep)
{
    while (p->ncache && p->reserved > keep) {
        blk b = p->cache[--p->ncache];
        sim_va_free(p->dev, b.addr, b.reserved);
        sim_devs[p->dev].used -= b.reserved;
        p->reserved -= b.reserved;
    }
}

static CUresult pool_alloc(struct CUmemPoolHandle_st *p, size_t size, CUdeviceptr *out)
{
    size_t align = size >= (2u << 20) ? (2u << 20) : 256;
    size_t need = (size + align - 1) & ~(align - 1);
    sim_region *r = NULL;
    uintptr_t a = 0;
    size_t best = (size_t)-1;
    for (size_t i = 0; i < p->ncache; i++) /* smallest cached block that fits */
        if (p->cache[i].reserved >= need && p->cache[i].reserved < 2 * need + (2u << 20) &&
            (best == (size_t)-1 || p->cache[i].reserved < p->cache[best].reserved))
            best = i;
    if (best != (size_t)-1) {
        blk b = p->cache[best];
        p->cache[best] = p->cache[--p->ncache];
        r = sim_region_add(b.addr, size, b.reserved, SIM_K_ASYNC, p->dev);
        if (!r) { p->cache[p->ncache++] = b; return CUDA_ERROR_OUT_OF_MEMORY; }
        a = b.addr;
    } else {
        CUresult e = sim_dev_alloc(p->dev, size, SIM_K_ASYNC, &a, &r);
        if (e == CUDA_ERROR_OUT_OF_MEMORY && p->ncache) { /* give the cache back and retry */
            pool_trim(p, 0);
            e = sim_dev_alloc(p->dev, size, SIM_K_ASYNC, &a, &r);
        }
        if (e) return e;
        p->reserved += r->reserved;
        if (p->reserved > p->reserved_high) p->reserved_high = p->reserved;
    }
    r->pool = p;
    p->used += r->reserved;
    if (p->used > p->used_high) p->used_high = p->used;
    *out = (CUdeviceptr)a;
    return CUDA_SUCCESS;
}

void sim_pool_free(sim_region *r)
{
    struct CUmemPoolHandle_st *p = r->pool;
    if (!p || p->magic != POOL_MAGIC) { sim_dev_free(r); return; }
    if (p->ncache == p->capcache) {
        size_t nc = p->capcache ? 2 * p->capcache : 16;
        blk *n = realloc(p->cache, nc * sizeof *n);
        if (!n) { p->used -= r->reserved; p->reserved -= r->reserved; sim_dev_free(r); return; }
        p->cache = n;
        p->capcache = nc;
    }
    p->cache[p->ncache++] = (blk){ r->base, r->reserved };
    p->used -= r->reserved;
    sim_region_remove(r);
}

void sim_pools_sync(int dev)
{
    for (struct CUmemPoolHandle_st *p = pools; p; p = p->next)
        if (p->dev == dev && p->threshold < p->reserved) pool_trim(p, (size_t)p->threshold);
}

void sim_pools_reset(int dev)
{
    for (struct CUmemPoolHandle_st *p = pools; p; p = p->next)
        if (p->dev == dev) { pool_trim(p, 0); p->used = 0; p->reserved = 0; }
}

/* the device an async call works on: the stream's */
static CUresult async_begin(CUstream s, int *dev)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    *dev = sim_stream_dev(s);
    return CUDA_SUCCESS;
}

/* An allocation in a capturing stream becomes a graph allocation node. */
static int capture_alloc(CUstream s, int dev, size_t size, CUdeviceptr *dptr, CUresult *res)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (sim_is_default_stream(s) || cuStreamIsCapturing(s, &st) || st != CU_STREAM_CAPTURE_STATUS_ACTIVE) return 0;
    uintptr_t a = 0;
    size_t reserved = 0;
    LOCK();
    *res = sim_graph_va(dev, size, &a, &reserved);
    UNLOCK();
    if (*res) return 1;
    sim_op op = { .type = 4, .dst = (void *)a, .n = size, .reserved = reserved, .dev = dev };
    sim_capture_op(s, &op);
    *dptr = (CUdeviceptr)a;
    return 1;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream s)
{
    int dev;
    CUresult r = async_begin(s, &dev);
    if (r) return r;
    if (!dptr || !size) return CUDA_ERROR_INVALID_VALUE;
    if (capture_alloc(s, dev, size, dptr, &r)) return r;
    LOCK();
    r = pool_alloc(current_pool(dev), size, dptr);
    UNLOCK();
    return r;
}
SIM_ALIAS(cuMemAllocAsync, cuMemAllocAsync_ptsz);

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
    int dev;
    CUresult r = async_begin(s, &dev);
    if (r) return r;
    if (!dptr || !size) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    UNLOCK();
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    if (capture_alloc(s, p->dev, size, dptr, &r)) return r;
    LOCK();
    r = pool_alloc(p, size, dptr);
    UNLOCK();
    return r;
}
SIM_ALIAS(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz);

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
    int dev;
    CUresult r = async_begin(s, &dev);
    if (r) return r;
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!sim_is_default_stream(s) && !cuStreamIsCapturing(s, &st) && st == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        sim_op op = { .type = 5, .dst = (void *)(uintptr_t)dptr };
        sim_capture_op(s, &op);
        return CUDA_SUCCESS;
    }
    LOCK();
    sim_region *g = sim_region_exact((uintptr_t)dptr);
    if (g && g->kind == SIM_K_ASYNC && (g->flags & SIM_F_GRAPH)) sim_graph_mem_free(g->base);
    else if (g && g->kind == SIM_K_ASYNC) sim_pool_free(g);
    else if (g && g->kind == SIM_K_DEVICE) sim_dev_free(g);
    else r = CUDA_ERROR_INVALID_VALUE;
    UNLOCK();
    return r;
}
SIM_ALIAS(cuMemFreeAsync, cuMemFreeAsync_ptsz);

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->location.id < 0 ||
        props->location.id >= sim_ndev)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    *pool = pool_new(props->location.id);
    UNLOCK();
    return *pool ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    LOCK();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    CUresult r = CUDA_SUCCESS;
    if (!p || p == sim_devs[p->dev].default_pool) r = CUDA_ERROR_INVALID_VALUE;
    else {
        /* CUDA frees the pool once its outstanding allocations are freed; the sim trims now and
         * leaves live blocks as ordinary async regions that cuMemFree[Async] still releases */
        pool_trim(p, 0);
        for (size_t i = 0; i < sim_region_count(); i++) {
            sim_region *g = sim_region_at(i);
            if (g->kind == SIM_K_ASYNC && g->pool == p) g->pool = NULL;
        }
        if (sim_devs[p->dev].cur_pool == p) sim_devs[p->dev].cur_pool = NULL;
        for (struct CUmemPoolHandle_st **pp = &pools; *pp; pp = &(*pp)->next)
            if (*pp == p) { *pp = p->next; break; }
        p->magic = 0;
        free(p->cache);
        free(p);
    }
    UNLOCK();
    return r;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    LOCK();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    if (p) pool_trim(p, keep);
    UNLOCK();
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v)
{
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    CUresult r = p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (p) switch (a) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        p->reuse[a - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(int *)v; break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->threshold = *(cuuint64_t *)v; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        if (*(cuuint64_t *)v) r = CUDA_ERROR_INVALID_VALUE; else p->reserved_high = p->reserved; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*(cuuint64_t *)v) r = CUDA_ERROR_INVALID_VALUE; else p->used_high = p->used; break;
    default: r = CUDA_ERROR_INVALID_VALUE; break;
    }
    UNLOCK();
    return r;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v)
{
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    CUresult r = p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (p) switch (a) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *(int *)v = p->reuse[a - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES]; break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)v = p->threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)v = p->reserved; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)v = p->reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)v = p->used; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)v = p->used_high; break;
    default: r = CUDA_ERROR_INVALID_VALUE; break;
    }
    UNLOCK();
    return r;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (dev < 0 || dev >= sim_ndev) return CUDA_ERROR_INVALID_DEVICE;
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    *pool = default_pool(dev);
    UNLOCK();
    return *pool ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (dev < 0 || dev >= sim_ndev) return CUDA_ERROR_INVALID_DEVICE;
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    *pool = current_pool(dev);
    UNLOCK();
    return *pool ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (dev < 0 || dev >= sim_ndev) return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    if (!p || p->dev != dev) r = CUDA_ERROR_INVALID_VALUE;
    else sim_devs[dev].cur_pool = p;
    UNLOCK();
    return r;
}

/* ---- graph allocations (memory side; the nodes live in sim_graph.c) ----------------------- */
CUresult sim_graph_va(int dev, size_t size, uintptr_t *out, size_t *reserved)
{
    size_t align = size >= (2u << 20) ? (2u << 20) : 256;
    size_t need = (size + align - 1) & ~(align - 1);
    if (need < size) return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t a = sim_va_alloc(dev, need, align);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    *out = a;
    *reserved = need;
    return CUDA_SUCCESS;
}

CUresult sim_graph_mem_alloc(uintptr_t base, size_t size, size_t reserved, int dev)
{
    if (sim_region_exact(base)) return CUDA_ERROR_INVALID_VALUE; /* previous launch's memory still live */
    if (sim_devs[dev].used + reserved > sim_devs[dev].capacity) return CUDA_ERROR_OUT_OF_MEMORY;
    sim_region *r = sim_region_add(base, size, reserved, SIM_K_ASYNC, dev);
    if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
    r->flags = SIM_F_GRAPH;
    sim_devs[dev].used += reserved;
    return CUDA_SUCCESS;
}

void sim_graph_mem_free(uintptr_t base)
{
    sim_region *r = sim_region_exact(base);
    if (!r || r->kind != SIM_K_ASYNC || !(r->flags & SIM_F_GRAPH)) return;
    sim_devs[r->dev].used -= r->reserved;
    /* the address stays the graph's; zero the bytes like fresh memory */
    uintptr_t pg = (r->base + 4095) & ~(uintptr_t)4095, end = (r->base + r->reserved) & ~(uintptr_t)4095;
    if (end > pg) madvise((void *)pg, end - pg, MADV_DONTNEED);
    sim_region_remove(r);
}

/* ---- virtual memory management -------------------------------------------------------------- */
/* released: the creator's reference is gone; retains: cuMemRetainAllocationHandle's, each given
 * back by a cuMemRelease; imported: from another handle's file descriptor (its memory is counted
 * by the exporter, not again). */
typedef struct phys { int magic, dev, fd, released, retains, imported; unsigned handle_types; size_t size; int maps; } phys;
typedef struct resv { uintptr_t base; size_t size; struct resv *next; } resv;
static resv *resvs;

static phys *phys_of(CUmemGenericAllocationHandle h)
{
    phys *p = (phys *)(uintptr_t)h;
    return p && p->magic == PHYS_MAGIC ? p : NULL;
}

static void phys_put(phys *p)
{
    if (!p->released || p->retains || p->maps) return;
    if (!p->imported) sim_devs[p->dev].used -= p->size;
    close(p->fd);
    p->magic = 0;
    free(p);
}

static resv *resv_find(uintptr_t a, size_t n)
{
    for (resv *r = resvs; r; r = r->next)
        if (a >= r->base && n <= r->size && a - r->base <= r->size - n) return r;
    return NULL;
}

CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags o)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!g || !prop) return CUDA_ERROR_INVALID_VALUE;
    *g = VMM_GRAN;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!ptr || !size || size % VMM_GRAN) return CUDA_ERROR_INVALID_VALUE;
    if (align < VMM_GRAN) align = VMM_GRAN;
    resv *v = calloc(1, sizeof *v);
    if (!v) return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    /* unified address space: reservations come from device 0's range, whatever they map */
    uintptr_t a = sim_va_alloc(0, size, align);
    if (a) { v->base = a; v->size = size; v->next = resvs; resvs = v; }
    UNLOCK();
    if (!a) { free(v); return CUDA_ERROR_OUT_OF_MEMORY; }
    *ptr = (CUdeviceptr)a;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    LOCK();
    for (resv **pp = &resvs; *pp; pp = &(*pp)->next) {
        resv *v = *pp;
        if (v->base != (uintptr_t)ptr || v->size != size) continue;
        int mapped = 0;
        for (size_t i = 0; i < sim_region_count(); i++) {
            sim_region *g = sim_region_at(i);
            if (g->kind == SIM_K_VMM && g->base >= v->base && g->base < v->base + v->size) mapped = 1;
        }
        if (mapped) break; /* still mapped: CUDA requires cuMemUnmap first */
        *pp = v->next;
        sim_va_free(0, v->base, v->size);
        free(v);
        r = CUDA_SUCCESS;
        break;
    }
    UNLOCK();
    return r;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop, unsigned long long flags)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!h || !prop || !size || size % VMM_GRAN || flags || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = prop->location.id;
    if (dev < 0 || dev >= sim_ndev) return CUDA_ERROR_INVALID_DEVICE;
    phys *p = calloc(1, sizeof *p);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    if (sim_devs[dev].used + size > sim_devs[dev].capacity) r = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((p->fd = memfd_create("vramtrace-sim-vmm", MFD_CLOEXEC)) < 0) r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (ftruncate(p->fd, (off_t)size) != 0) { close(p->fd); r = CUDA_ERROR_OUT_OF_MEMORY; }
    if (!r) {
        sim_devs[dev].used += size;
        p->magic = PHYS_MAGIC;
        p->dev = dev;
        p->size = size;
        p->handle_types = (unsigned)prop->requestedHandleTypes;
    }
    UNLOCK();
    if (r) { free(p); return r; }
    *h = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    LOCK();
    phys *p = phys_of(h);
    CUresult r = p && (!p->released || p->retains) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (!r) {
        if (p->retains) p->retains--; /* a retained reference goes first: the creator's may be gone already */
        else p->released = 1;
        phys_put(p);
    }
    UNLOCK();
    return r;
}

/* The handle mapped at ADDR, with one more reference (given back by cuMemRelease). */
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!h) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_region *g = sim_region_find((uintptr_t)addr);
    if (!g || g->kind != SIM_K_VMM) r = CUDA_ERROR_INVALID_VALUE;
    else {
        phys *p = g->pool;
        p->retains++;
        *h = (CUmemGenericAllocationHandle)(uintptr_t)p;
    }
    UNLOCK();
    return r;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop, CUmemGenericAllocationHandle h)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!prop) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    phys *p = phys_of(h);
    if (!p || (p->released && !p->retains)) r = CUDA_ERROR_INVALID_VALUE;
    else {
        memset(prop, 0, sizeof *prop);
        prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop->location.id = p->dev;
        prop->requestedHandleTypes = (CUmemAllocationHandleType)p->handle_types;
    }
    UNLOCK();
    return r;
}

/* Only POSIX file descriptors, and only for a handle created asking for them (as CUDA requires):
 * the memfd behind the handle, duplicated, so an import really shares the memory. */
CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h, CUmemAllocationHandleType type,
                                      unsigned long long flags)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!out || flags) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
    LOCK();
    phys *p = phys_of(h);
    if (!p || (p->released && !p->retains) || !(p->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        r = CUDA_ERROR_INVALID_VALUE;
    else {
        int fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) r = CUDA_ERROR_OUT_OF_MEMORY;
        else *(int *)out = fd;
    }
    UNLOCK();
    return r;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os_handle, CUmemAllocationHandleType type)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!h) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
    int src = (int)(intptr_t)os_handle;
    struct stat st;
    if (fstat(src, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size % VMM_GRAN) return CUDA_ERROR_INVALID_VALUE;
    phys *p = calloc(1, sizeof *p);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    if ((p->fd = fcntl(src, F_DUPFD_CLOEXEC, 0)) < 0) { free(p); return CUDA_ERROR_OUT_OF_MEMORY; }
    p->magic = PHYS_MAGIC;
    p->size = (size_t)st.st_size;
    p->imported = 1;
    p->handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    *h = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t off, CUmemGenericAllocationHandle h, unsigned long long flags)
{
    CUresult r = sim_init_check();
    if (r) return r;
    uintptr_t a = (uintptr_t)ptr;
    LOCK();
    phys *p = phys_of(h);
    if (!p || p->released || flags || !size || size % VMM_GRAN || off % VMM_GRAN || off > p->size ||
        size > p->size - off || !resv_find(a, size) || sim_region_find(a) || sim_region_find(a + size - 1))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (mmap(sim_view(a), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd, (off_t)off) == MAP_FAILED)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        sim_region *g = sim_region_add(a, size, size, SIM_K_VMM, p->dev);
        if (g) { g->pool = p; g->flags = SIM_F_NOACCESS; p->maps++; }
        else r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    UNLOCK();
    return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    CUresult r = sim_init_check();
    if (r) return r;
    uintptr_t a = (uintptr_t)ptr;
    int n = 0;
    LOCK();
    if (!resv_find(a, size)) r = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = sim_region_count(); !r && i > 0; i--) {
        sim_region *g = sim_region_at(i - 1);
        if (g->kind != SIM_K_VMM || g->base < a || g->base >= a + size) continue;
        phys *p = g->pool;
        mmap(sim_view(g->base), g->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        sim_region_remove(g);
        p->maps--;
        phys_put(p);
        n++;
    }
    UNLOCK();
    return r ? r : n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    CUresult r = sim_init_check();
    if (r) return r;
    if (!desc || !count) return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a = (uintptr_t)ptr;
    int n = 0;
    LOCK();
    for (size_t i = 0; i < sim_region_count(); i++) {
        sim_region *g = sim_region_at(i);
        if (g->kind != SIM_K_VMM || g->base < a || g->base >= a + size) continue;
        for (size_t k = 0; k < count; k++)
            if (desc[k].location.type == CU_MEM_LOCATION_TYPE_DEVICE && desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE)
                g->flags &= ~SIM_F_NOACCESS;
        n++;
    }
    UNLOCK();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- IPC: within one process, an opened handle is a second range of the exporter's size ----- */
typedef struct ipc_wire { uint32_t magic, pid; uint64_t base, size, id; } ipc_wire;

CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr dptr)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!h) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_region *g = sim_region_find((uintptr_t)dptr);
    if (!g || g->kind != SIM_K_DEVICE) r = CUDA_ERROR_INVALID_VALUE;
    else {
        ipc_wire w = { IPC_MAGIC, (uint32_t)getpid(), g->base, g->size, g->id };
        memset(h, 0, sizeof *h);
        memcpy(h->reserved, &w, sizeof w);
    }
    UNLOCK();
    return r;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle h, unsigned int flags)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    ipc_wire w;
    memcpy(&w, h.reserved, sizeof w);
    if (w.magic != IPC_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    sim_region *src = sim_region_exact((uintptr_t)w.base);
    if (!src || src->kind != SIM_K_DEVICE || src->id != w.id) r = CUDA_ERROR_INVALID_VALUE; /* exporter freed it */
    else {
        size_t res = (w.size + 0x1fffff) & ~(size_t)0x1fffff;
        uintptr_t a = sim_va_alloc(src->dev, res, 2u << 20);
        sim_region *g = a ? sim_region_add(a, w.size, res, SIM_K_IPC, src->dev) : NULL;
        if (!g) { if (a) sim_va_free(src->dev, a, res); r = CUDA_ERROR_OUT_OF_MEMORY; }
        else { memcpy(sim_view(a), sim_view(src->base), w.size); *dptr = (CUdeviceptr)a; }
    }
    UNLOCK();
    return r;
}
SIM_ALIAS(cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle);

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    sim_ctx *c;
    CUresult r = sim_cur_ctx(&c);
    if (r) return r;
    LOCK();
    sim_region *g = sim_region_exact((uintptr_t)dptr);
    if (g && g->kind == SIM_K_IPC) { sim_va_free(g->dev, g->base, g->reserved); sim_region_remove(g); }
    else r = CUDA_ERROR_INVALID_VALUE;
    UNLOCK();
    return r;
}

/* Peer access to a pool's memory: validated (devices that exist, a known access flag, the owner
 * keeps read-write) and accepted; the sim's peer rule for kernels does not consult it. */
CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
    if (count && !map) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    struct CUmemPoolHandle_st *p = pool_of(pool);
    int dev = p ? p->dev : -1;
    pthread_mutex_unlock(&sim_lock);
    if (dev < 0) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || map[i].location.id < 0 || map[i].location.id >= sim_ndev)
            return CUDA_ERROR_INVALID_DEVICE;
        if (map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
            map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;
        if (map[i].location.id == dev && map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return CUDA_ERROR_INVALID_DEVICE;
    }
    return CUDA_SUCCESS;
}
