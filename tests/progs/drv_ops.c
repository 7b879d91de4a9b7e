/* drv_ops.c - every driver-API copy and set the tracer hooks, each called once by its exported
 * name (the _v2 forms cuda.h maps the plain names to, and the per-thread default stream forms
 * _ptds/_ptsz that -default-stream per-thread or CUDA_API_PER_THREAD_DEFAULT_STREAM compile
 * to), for tests/cases/trace_drv_ops.sh. Each call has its own byte count, so its record is
 * known by its size. Before each call it prints what the call does, as the trace must record it:
 *   expect API EV BYTES DIR ASYNC STREAM DST SRC KIND HOST SRC_DEV SHAPE VALUE
 * EV copy or set; DIR h2d/d2h/d2d; ASYNC 0/1; STREAM the handle passed (0x0: none); DST and SRC
 * the addresses written and read; KIND the direction the API's name promises (cudaMemcpyKind: 1
 * HtoD, 2 DtoH, 3 DtoD and Peer; none for cuMemcpy and 2D, which take it from the pointers); HOST
 * "pageable" for the malloc'd end of h2d and d2h; SRC_DEV the source's device for a peer copy
 * (0); SHAPE a 2D copy's "width,height,dpitch,spitch" (its DST and SRC the region's first byte,
 * row 1 column 16, and BYTES width x height); VALUE a set's value (7), its BYTES count x element
 * width (D8 1, D16 2, D32 4). "-" where a field does not apply. Then "rc API N" with what the
 * call returned.
 * Then each driver allocation and free, after the call (the address is the driver's answer):
 *   expect API alloc|free BYTES MEM ASYNC STREAM ADDR - SHAPE
 * (ASYNC 1: on a stream, which the record names). MEM device (cuMemAllocPitch: BYTES pitch x
 * height, SHAPE "pitch,width,height"), async (the stream-ordered ones, on the stream passed),
 * managed, pinned (cuMemHostAlloc) or registered (cuMemHostRegister); a free names what it frees
 * and its size.
 * `drv_ops ctx` (two devices): contexts made current by cuCtxCreate (_v4 and the older _v2),
 * cuCtxPushCurrent and cuCtxPopCurrent, each followed by a cuMemAlloc whose record must name the
 * device of the context then current ("expect API alloc BYTES dev D"); then device 1's default
 * pool given a release threshold and trimmed ("expect pool_attr POOL 1048576 dev 1", "expect
 * pool_trim POOL 4096 dev 1"), and one more cuMemAlloc through the pointer the older 4-argument
 * cuGetProcAddress gives. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuda.h declares these only under CUDA_API_PER_THREAD_DEFAULT_STREAM, in place of the others */
CUresult cuMemcpy_ptds(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr, const void *, size_t);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyDtoH_v2_ptds(void *, CUdeviceptr, size_t);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *);
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *, CUstream);
CUresult cuMemcpyPeer_ptds(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
CUresult cuMemsetD8_v2_ptds(CUdeviceptr, unsigned char, size_t);
CUresult cuMemsetD16_v2_ptds(CUdeviceptr, unsigned short, size_t);
CUresult cuMemsetD32_v2_ptds(CUdeviceptr, unsigned int, size_t);
CUresult cuMemsetD8Async_ptsz(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult cuMemsetD16Async_ptsz(CUdeviceptr, unsigned short, size_t, CUstream);
CUresult cuMemsetD32Async_ptsz(CUdeviceptr, unsigned int, size_t, CUstream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice); /* before CUDA 12.5's _v4 */

static unsigned long long A(const void *p) { return (unsigned long long)(size_t)p; }
static const char *shape = "-"; /* the next 2D copy's */
static void expect(const char *api, const char *ev, size_t bytes, const char *dir, int async, CUstream s,
                   unsigned long long dst, unsigned long long src)
{
    int set = !strcmp(ev, "set");
    const char *kind = set || strstr(api, "2D") || !strncmp(api, "cuMemcpyAsync", 13) || !strncmp(api, "cuMemcpy_", 9) ||
                       !strcmp(api, "cuMemcpy") ? "-" : strstr(api, "HtoD") ? "1" : strstr(api, "DtoH") ? "2" : "3";
    printf("expect %s %s %zu %s %d 0x%llx 0x%llx ", api, ev, bytes, set ? "-" : dir, async, A(s), dst);
    if (set) printf("- - - - - 7\n");
    else printf("0x%llx %s %s %s %s -\n", src, kind, strcmp(dir, "d2d") ? "pageable" : "-", strstr(api, "Peer") ? "0" : "-",
                shape);
}
#define RC(api, call) printf("rc %s %d\n", api, (int)(call))

#define COPY(api, dir, async, s, dst, src, n, call) (expect(api, "copy", n, dir, async, s, dst, src), RC(api, call))
#define SET(api, width, async, s, dst, count, call) (expect(api, "set", (count) * (width), "-", async, s, dst, 0), RC(api, call))

static void expect_mem(const char *api, const char *ev, size_t bytes, const char *mem, int async, CUstream s,
                       unsigned long long addr, const char *shape_)
{
    printf("expect %s %s %zu %s %d 0x%llx 0x%llx - %s\n", api, ev, bytes, mem, async, A(s), addr, shape_);
}

static CUDA_MEMCPY2D region(CUdeviceptr dst, CUdeviceptr src, size_t width, size_t height)
{
    CUDA_MEMCPY2D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = src;
    p.dstDevice = dst;
    p.srcPitch = p.dstPitch = 512;
    p.srcXInBytes = p.dstXInBytes = 16;
    p.srcY = p.dstY = 1;
    p.WidthInBytes = width;
    p.Height = height;
    return p;
}

#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);
#define legacy_get_proc_address cuGetProcAddress

static int contexts(void)
{
    CUdevice d0, d1;
    CUcontext p0, c1, c2, popped;
    CUdeviceptr x;
    CUmemoryPool pool;
    int n = 0;
    if (cuInit(0) || cuDeviceGetCount(&n) || n < 2 || cuDeviceGet(&d0, 0) || cuDeviceGet(&d1, 1) ||
        cuDevicePrimaryCtxRetain(&p0, d0) || cuCtxSetCurrent(p0)) {
        printf("setup failed (%d devices)\n", n);
        return 1;
    }
    RC("cuCtxCreate_v4", cuCtxCreate_v4(&c1, NULL, 0, d1));
    RC("cuMemAlloc_v2", cuMemAlloc_v2(&x, 4001));
    printf("expect cuMemAlloc_v2 alloc 4001 dev 1\n");
    RC("cuCtxPushCurrent_v2", cuCtxPushCurrent_v2(p0));
    RC("cuMemAlloc_v2", cuMemAlloc_v2(&x, 4002));
    printf("expect cuMemAlloc_v2 alloc 4002 dev 0\n");
    RC("cuCtxPopCurrent_v2", cuCtxPopCurrent_v2(&popped));
    RC("cuMemAlloc_v2", cuMemAlloc_v2(&x, 4003));
    printf("expect cuMemAlloc_v2 alloc 4003 dev 1\n");
    CUresult made = cuCtxCreate_v2(&c2, 0, d0); /* a driver may no longer have it: then c1 stays */
    RC("cuCtxCreate_v2", made);
    RC("cuMemAlloc_v2", cuMemAlloc_v2(&x, 4004));
    printf("expect cuMemAlloc_v2 alloc 4004 dev %d\n", made == CUDA_SUCCESS ? 0 : 1);
    RC("cuCtxSetCurrent", cuCtxSetCurrent(c1));
    RC("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool(&pool, d1));
    cuuint64_t keep = 1 << 20;
    RC("cuMemPoolSetAttribute", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
    printf("expect pool_attr 0x%llx 1048576 dev 1\n", A(pool));
    RC("cuMemPoolTrimTo", cuMemPoolTrimTo(pool, 4096));
    printf("expect pool_trim 0x%llx 4096 dev 1\n", A(pool));
    /* cuGetProcAddress as CUDA 11.3 to 12.x binaries call it (4 arguments, no status; cuda.h now
     * maps the name to _v2): cuMemAlloc at version 13000 is cuMemAlloc_v2, and the pointer it
     * hands back must be traced like the exported one */
    CUresult (*alloc)(CUdeviceptr *, size_t) = NULL;
    RC("cuGetProcAddress", legacy_get_proc_address("cuMemAlloc", (void **)&alloc, 13000, CU_GET_PROC_ADDRESS_DEFAULT));
    RC("cuMemAlloc_v2", alloc ? alloc(&x, 4005) : CUDA_ERROR_NOT_FOUND);
    printf("expect cuMemAlloc_v2 alloc 4005 dev 1\n");
    return 0;
}

#undef cuIpcOpenMemHandle
CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int flags);
#define legacy_ipc_open cuIpcOpenMemHandle

/* `drv_ops ipc`: a 1 MiB allocation's IPC handle opened by cuIpcOpenMemHandle_v2 (what cuda.h
 * maps the name to) and by the older export cuIpcOpenMemHandle, each closed again. The simulated
 * driver lets a process open its own handle (a real one opens it in another process); each
 * opening is a second range over the same 1 MiB: "expect ipc_open|ipc_close API BYTES". */
static int ipc(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr a, q1 = 0, q2 = 0;
    CUipcMemHandle h;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuMemAlloc(&a, 1 << 20)) {
        printf("setup failed\n");
        return 1;
    }
    RC("cuIpcGetMemHandle", cuIpcGetMemHandle(&h, a));
    RC("cuIpcOpenMemHandle_v2", cuIpcOpenMemHandle_v2(&q1, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    printf("expect ipc_open cuIpcOpenMemHandle_v2 1048576\n");
    RC("cuIpcCloseMemHandle", cuIpcCloseMemHandle(q1));
    printf("expect ipc_close cuIpcCloseMemHandle 1048576\n");
    RC("cuIpcOpenMemHandle", legacy_ipc_open(&q2, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    printf("expect ipc_open cuIpcOpenMemHandle 1048576\n");
    RC("cuIpcCloseMemHandle", cuIpcCloseMemHandle(q2));
    printf("expect ipc_close cuIpcCloseMemHandle 1048576\n");
    printf("distinct %d\n", q1 && q2 && q1 != a && q2 != a);
    return cuMemFree(a) != CUDA_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "ctx")) return contexts();
    if (argc > 1 && !strcmp(argv[1], "ipc")) return ipc();
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUdeviceptr a, b;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuStreamCreate(&s, 0) || cuMemAlloc(&a, 1 << 16) || cuMemAlloc(&b, 1 << 16)) {
        printf("setup failed\n");
        return 1;
    }
    expect_mem("cuMemAlloc_v2", "alloc", 1 << 16, "device", 0, NULL, a, "-");
    expect_mem("cuMemAlloc_v2", "alloc", 1 << 16, "device", 0, NULL, b, "-");
    unsigned char *h = calloc(1, 1 << 16);
    /* unified copies: both device memory */
    COPY("cuMemcpy", "d2d", 0, NULL, a, b, 1001, cuMemcpy(a, b, 1001));
    COPY("cuMemcpy_ptds", "d2d", 0, NULL, a + 8, b, 1002, cuMemcpy_ptds(a + 8, b, 1002));
    COPY("cuMemcpyAsync", "d2d", 1, s, a, b + 8, 1003, cuMemcpyAsync(a, b + 8, 1003, s));
    COPY("cuMemcpyAsync_ptsz", "d2d", 1, s, a + 16, b + 16, 1004, cuMemcpyAsync_ptsz(a + 16, b + 16, 1004, s));
    COPY("cuMemcpyDtoD_v2", "d2d", 0, NULL, b, a, 1005, cuMemcpyDtoD_v2(b, a, 1005));
    COPY("cuMemcpyDtoD_v2_ptds", "d2d", 0, NULL, b + 24, a, 1006, cuMemcpyDtoD_v2_ptds(b + 24, a, 1006));
    COPY("cuMemcpyDtoDAsync_v2", "d2d", 1, s, b, a + 24, 1007, cuMemcpyDtoDAsync_v2(b, a + 24, 1007, s));
    COPY("cuMemcpyDtoDAsync_v2_ptsz", "d2d", 1, s, b + 32, a + 32, 1008, cuMemcpyDtoDAsync_v2_ptsz(b + 32, a + 32, 1008, s));
    COPY("cuMemcpyHtoD_v2", "h2d", 0, NULL, a, A(h), 1009, cuMemcpyHtoD_v2(a, h, 1009));
    COPY("cuMemcpyHtoD_v2_ptds", "h2d", 0, NULL, a + 40, A(h + 8), 1010, cuMemcpyHtoD_v2_ptds(a + 40, h + 8, 1010));
    COPY("cuMemcpyHtoDAsync_v2", "h2d", 1, s, a + 48, A(h), 1011, cuMemcpyHtoDAsync_v2(a + 48, h, 1011, s));
    COPY("cuMemcpyHtoDAsync_v2_ptsz", "h2d", 1, s, a, A(h + 16), 1012, cuMemcpyHtoDAsync_v2_ptsz(a, h + 16, 1012, s));
    COPY("cuMemcpyDtoH_v2", "d2h", 0, NULL, A(h), b, 1013, cuMemcpyDtoH_v2(h, b, 1013));
    COPY("cuMemcpyDtoH_v2_ptds", "d2h", 0, NULL, A(h + 24), b + 56, 1014, cuMemcpyDtoH_v2_ptds(h + 24, b + 56, 1014));
    COPY("cuMemcpyDtoHAsync_v2", "d2h", 1, s, A(h + 32), b, 1015, cuMemcpyDtoHAsync_v2(h + 32, b, 1015, s));
    COPY("cuMemcpyDtoHAsync_v2_ptsz", "d2h", 1, s, A(h), b + 64, 1016, cuMemcpyDtoHAsync_v2_ptsz(h, b + 64, 1016, s));
    COPY("cuMemcpyPeer", "d2d", 0, NULL, a, b, 1017, cuMemcpyPeer(a, ctx, b, ctx, 1017));
    COPY("cuMemcpyPeer_ptds", "d2d", 0, NULL, a + 72, b, 1018, cuMemcpyPeer_ptds(a + 72, ctx, b, ctx, 1018));
    COPY("cuMemcpyPeerAsync", "d2d", 1, s, a, b + 80, 1019, cuMemcpyPeerAsync(a, ctx, b + 80, ctx, 1019, s));
    COPY("cuMemcpyPeerAsync_ptsz", "d2d", 1, s, a + 88, b + 88, 1020, cuMemcpyPeerAsync_ptsz(a + 88, ctx, b + 88, ctx, 1020, s));
    /* 2D: rows of a 512-byte pitch, from row 1 column 16 (byte 528) */
    CUDA_MEMCPY2D p;
    shape = "101,3,512,512";
    p = region(a, b, 101, 3);
    COPY("cuMemcpy2D_v2", "d2d", 0, NULL, a + 528, b + 528, 303, cuMemcpy2D_v2(&p));
    shape = "102,3,512,512";
    p = region(b, a, 102, 3);
    COPY("cuMemcpy2D_v2_ptds", "d2d", 0, NULL, b + 528, a + 528, 306, cuMemcpy2D_v2_ptds(&p));
    shape = "103,3,512,512";
    p = region(a, b, 103, 3);
    COPY("cuMemcpy2DAsync_v2", "d2d", 1, s, a + 528, b + 528, 309, cuMemcpy2DAsync_v2(&p, s));
    shape = "104,3,512,512";
    p = region(b, a, 104, 3);
    COPY("cuMemcpy2DAsync_v2_ptsz", "d2d", 1, s, b + 528, a + 528, 312, cuMemcpy2DAsync_v2_ptsz(&p, s));
    /* sets: COUNT elements of the name's width */
    SET("cuMemsetD8_v2", 1, 0, NULL, a, 2001, cuMemsetD8_v2(a, 7, 2001));
    SET("cuMemsetD8_v2_ptds", 1, 0, NULL, a + 8, 2002, cuMemsetD8_v2_ptds(a + 8, 7, 2002));
    SET("cuMemsetD16_v2", 2, 0, NULL, a, 2003, cuMemsetD16_v2(a, 7, 2003));
    SET("cuMemsetD16_v2_ptds", 2, 0, NULL, a + 16, 2004, cuMemsetD16_v2_ptds(a + 16, 7, 2004));
    SET("cuMemsetD32_v2", 4, 0, NULL, b, 2005, cuMemsetD32_v2(b, 7, 2005));
    SET("cuMemsetD32_v2_ptds", 4, 0, NULL, b + 32, 2006, cuMemsetD32_v2_ptds(b + 32, 7, 2006));
    SET("cuMemsetD8Async", 1, 1, s, b, 2007, cuMemsetD8Async(b, 7, 2007, s));
    SET("cuMemsetD8Async_ptsz", 1, 1, s, b + 40, 2008, cuMemsetD8Async_ptsz(b + 40, 7, 2008, s));
    SET("cuMemsetD16Async", 2, 1, s, a, 2009, cuMemsetD16Async(a, 7, 2009, s));
    SET("cuMemsetD16Async_ptsz", 2, 1, s, a + 48, 2010, cuMemsetD16Async_ptsz(a + 48, 7, 2010, s));
    SET("cuMemsetD32Async", 4, 1, s, b, 2011, cuMemsetD32Async(b, 7, 2011, s));
    SET("cuMemsetD32Async_ptsz", 4, 1, s, b + 56, 2012, cuMemsetD32Async_ptsz(b + 56, 7, 2012, s));
    RC("cuStreamSynchronize", cuStreamSynchronize(s));

    /* allocations: each its own size, each freed by its own API */
    CUdeviceptr d1 = 0, d2 = 0, d3 = 0, d4 = 0, m = 0, pd = 0;
    CUmemoryPool pool;
    void *ph = NULL;
    size_t pitch = 0;
    char shp[64];
    RC("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool(&pool, dev));
    RC("cuMemAllocAsync", cuMemAllocAsync(&d1, 3001, s));
    expect_mem("cuMemAllocAsync", "alloc", 3001, "async", 1, s, d1, "-");
    RC("cuMemAllocAsync_ptsz", cuMemAllocAsync_ptsz(&d2, 3002, s));
    expect_mem("cuMemAllocAsync_ptsz", "alloc", 3002, "async", 1, s, d2, "-");
    RC("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync(&d3, 3003, pool, s));
    expect_mem("cuMemAllocFromPoolAsync", "alloc", 3003, "async", 1, s, d3, "-");
    RC("cuMemAllocFromPoolAsync_ptsz", cuMemAllocFromPoolAsync_ptsz(&d4, 3004, pool, s));
    expect_mem("cuMemAllocFromPoolAsync_ptsz", "alloc", 3004, "async", 1, s, d4, "-");
    RC("cuMemAllocManaged", cuMemAllocManaged(&m, 3005, CU_MEM_ATTACH_GLOBAL));
    expect_mem("cuMemAllocManaged", "alloc", 3005, "managed", 0, NULL, m, "-");
    RC("cuMemAllocPitch_v2", cuMemAllocPitch_v2(&pd, &pitch, 3006, 3, 4));
    snprintf(shp, sizeof shp, "%zu,3006,3", pitch);
    expect_mem("cuMemAllocPitch_v2", "alloc", pitch * 3, "device", 0, NULL, pd, shp);
    RC("cuMemHostAlloc", cuMemHostAlloc(&ph, 3007, 0));
    expect_mem("cuMemHostAlloc", "alloc", 3007, "pinned", 0, NULL, A(ph), "-");
    RC("cuMemHostRegister_v2", cuMemHostRegister_v2(h + 4096, 3008, 0));
    expect_mem("cuMemHostRegister_v2", "alloc", 3008, "registered", 0, NULL, A(h + 4096), "-");
    expect_mem("cuMemFreeAsync", "free", 3001, "async", 1, s, d1, "-");
    RC("cuMemFreeAsync", cuMemFreeAsync(d1, s));
    expect_mem("cuMemFreeAsync_ptsz", "free", 3002, "async", 1, s, d2, "-");
    RC("cuMemFreeAsync_ptsz", cuMemFreeAsync_ptsz(d2, s));
    expect_mem("cuMemFreeAsync", "free", 3003, "async", 1, s, d3, "-");
    RC("cuMemFreeAsync", cuMemFreeAsync(d3, s));
    expect_mem("cuMemFreeAsync_ptsz", "free", 3004, "async", 1, s, d4, "-");
    RC("cuMemFreeAsync_ptsz", cuMemFreeAsync_ptsz(d4, s));
    expect_mem("cuMemFree_v2", "free", 3005, "managed", 0, NULL, m, "-");
    RC("cuMemFree_v2", cuMemFree_v2(m));
    expect_mem("cuMemFree_v2", "free", pitch * 3, "device", 0, NULL, pd, "-");
    RC("cuMemFree_v2", cuMemFree_v2(pd));
    expect_mem("cuMemFreeHost", "free", 3007, "pinned", 0, NULL, A(ph), "-");
    RC("cuMemFreeHost", cuMemFreeHost(ph));
    expect_mem("cuMemHostUnregister", "free", 3008, "registered", 0, NULL, A(h + 4096), "-");
    RC("cuMemHostUnregister", cuMemHostUnregister(h + 4096));
    RC("cuStreamSynchronize", cuStreamSynchronize(s));
    expect_mem("cuMemFree_v2", "free", 1 << 16, "device", 0, NULL, a, "-");
    RC("cuMemFree_v2", cuMemFree_v2(a));
    expect_mem("cuMemFree_v2", "free", 1 << 16, "device", 0, NULL, b, "-");
    RC("cuMemFree_v2", cuMemFree_v2(b));
    free(h);
    return 0;
}
