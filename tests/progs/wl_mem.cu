// wl_mem.cu - "real workload" allocation paths for the tracer tests (tests/cases/wl_*.sh):
// stream-ordered pools, VMM (driver entry points fetched like PyTorch does), IPC, graph memory
// nodes, multi-GPU, cuKernelGetParamInfo. Usage: wl_mem MODE; prints key=value lines.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vramtrace/vramtrace.h>

__global__ void touch(float *p, int n) { if (threadIdx.x < n) p[threadIdx.x] = 1.0f; }

#define MiB (1024ull * 1024)
static size_t used_now(void) { size_t f = 0, t = 0; cudaMemGetInfo(&f, &t); return t - f; }
#define GET(name) decltype(&name) p_##name = NULL; \
    cudaGetDriverEntryPointByVersion(#name, (void **)&p_##name, 13000, cudaEnableDefault, NULL)

static int pool_mode(void)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemPool_t pool;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    uint64_t keep = UINT64_MAX;
    printf("set_threshold=%d\n", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    size_t u0 = used_now();
    void *a, *b, *c;
    cudaMallocAsync(&a, 4 * MiB, s);
    cudaMallocAsync(&b, 4 * MiB, s);
    cudaMallocAsync(&c, 4 * MiB, s);
    touch<<<1, 32, 0, s>>>((float *)a, 32);
    cudaFreeAsync(b, s);
    cudaStreamSynchronize(s);
    uint64_t res = 0, used = 0;
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &res);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
    printf("reserved_mib=%llu used_mib=%llu meminfo_used_mib=%llu\n", (unsigned long long)(res / MiB),
           (unsigned long long)(used / MiB), (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("b freed, synced");
    void *d;
    cudaMallocAsync(&d, 4 * MiB, s); /* reuses b's block: no new reservation */
    printf("reuse=%d meminfo_after_reuse_mib=%llu\n", d == b, (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("reused");
    cudaFreeAsync(d, s);
    cudaFreeAsync(c, s);
    printf("trim=%d\n", cudaMemPoolTrimTo(pool, 0));
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &res);
    printf("reserved_after_trim_mib=%llu meminfo_after_trim_mib=%llu\n", (unsigned long long)(res / MiB),
           (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("trimmed");
    cudaFree(a); /* cudaFree of pool memory is legal */
    cudaMemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = cudaMemAllocationTypePinned;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = 0;
    cudaMemPool_t mine;
    printf("pool_create=%d\n", cudaMemPoolCreate(&mine, &pp));
    void *e;
    printf("from_pool=%d\n", cudaMallocFromPoolAsync(&e, 1 * MiB, mine, s));
    cudaFreeAsync(e, s);
    cudaStreamSynchronize(s); /* threshold 0: the sync gives the block back */
    cudaMemPoolGetAttribute(mine, cudaMemPoolAttrReservedMemCurrent, &res);
    printf("mine_reserved_after_sync=%llu\n", (unsigned long long)res);
    printf("pool_destroy=%d\n", cudaMemPoolDestroy(mine));
    cudaMemPoolTrimTo(pool, 0);
    printf("meminfo_end_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("end");
    return 0;
}

/* Pinned device memory on device 0: what cuMemCreate is asked for in every VMM mode. */
static CUmemAllocationProp vmm_prop(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    return prop;
}

static int vmm_mode(void)
{
    cudaFree(0);
    GET(cuMemGetAllocationGranularity); GET(cuMemCreate); GET(cuMemAddressReserve); GET(cuMemMap);
    GET(cuMemSetAccess); GET(cuMemUnmap); GET(cuMemRelease); GET(cuMemAddressFree);
    if (!p_cuMemCreate || !p_cuMemMap) { printf("entry_points=0\n"); return 1; }
    CUmemAllocationProp prop = vmm_prop();
    size_t gran = 0;
    p_cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    printf("gran=%zu\n", gran);
    size_t u0 = used_now();
    CUmemGenericAllocationHandle h;
    printf("create=%d\n", p_cuMemCreate(&h, 4 * MiB, &prop, 0));
    printf("after_create_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    CUdeviceptr va;
    p_cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0);
    int m1 = p_cuMemMap(va, 4 * MiB, 0, h, 0), m2 = p_cuMemMap(va + 4 * MiB, 4 * MiB, 0, h, 0);
    printf("map=%d,%d\n", m1, m2);
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    p_cuMemSetAccess(va, 8 * MiB, &acc, 1);
    printf("after_map_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    int x = 12345, y = 0;
    cudaMemcpy((void *)va, &x, sizeof x, cudaMemcpyHostToDevice);
    cudaMemcpy(&y, (void *)(va + 4 * MiB), sizeof y, cudaMemcpyDeviceToHost);
    printf("aliased=%d\n", y == x);
    touch<<<1, 32>>>((float *)(va + 4 * MiB), 32);
    printf("sync=%d\n", cudaDeviceSynchronize());
    printf("release_while_mapped=%d\n", p_cuMemRelease(h)); /* memory stays until unmapped */
    printf("after_release_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    p_cuMemUnmap(va, 4 * MiB);
    printf("after_unmap1_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    p_cuMemUnmap(va + 4 * MiB, 4 * MiB);
    printf("after_unmap2_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    printf("addr_free=%d\n", p_cuMemAddressFree(va, 8 * MiB));
    /* the usual order: unmap, then release */
    CUmemGenericAllocationHandle h2;
    p_cuMemCreate(&h2, 2 * MiB, &prop, 0);
    p_cuMemAddressReserve(&va, 2 * MiB, 0, 0, 0);
    p_cuMemMap(va, 2 * MiB, 0, h2, 0);
    p_cuMemUnmap(va, 2 * MiB);
    p_cuMemRelease(h2);
    p_cuMemAddressFree(va, 2 * MiB);
    printf("end_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    return 0;
}

/* NVIDIA's vectorAddMMAP pattern (and VMM-based allocators): each handle is released as soon as
 * it is mapped; its memory stays until the last unmap. Three 2 MiB handles mapped end to end in
 * one 6 MiB reservation, the first unmapped alone, the other two with one cuMemUnmap. */
static int vmm_early_mode(void)
{
    cudaFree(0);
    GET(cuMemCreate); GET(cuMemAddressReserve); GET(cuMemMap); GET(cuMemSetAccess); GET(cuMemUnmap);
    GET(cuMemRelease); GET(cuMemAddressFree);
    if (!p_cuMemCreate || !p_cuMemMap) { printf("entry_points=0\n"); return 1; }
    CUmemAllocationProp prop = vmm_prop();
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    size_t u0 = used_now();
    CUdeviceptr va;
    p_cuMemAddressReserve(&va, 6 * MiB, 0, 0, 0);
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        CUmemGenericAllocationHandle h;
        rc |= p_cuMemCreate(&h, 2 * MiB, &prop, 0);
        rc |= p_cuMemMap(va + i * 2 * MiB, 2 * MiB, 0, h, 0);
        rc |= p_cuMemRelease(h); /* at once: the mapping keeps the memory */
    }
    rc |= p_cuMemSetAccess(va, 6 * MiB, &acc, 1);
    touch<<<1, 32>>>((float *)(va + 4 * MiB), 32);
    rc |= cudaDeviceSynchronize();
    printf("rc=%d mapped_mib=%llu\n", rc, (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("mapped");
    p_cuMemUnmap(va, 2 * MiB);
    printf("after_unmap1_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("unmapped one");
    p_cuMemUnmap(va + 2 * MiB, 4 * MiB); /* two mappings in one call */
    printf("after_unmap23_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("unmapped all");
    if (getenv("WL_USE_UNMAPPED")) { /* the third mapping, gone with the second unmap: a bad launch */
        touch<<<1, 32>>>((float *)(va + 4 * MiB), 32);
        printf("use_unmapped=%d\n", cudaDeviceSynchronize());
        return 0;
    }
    printf("addr_free=%d\n", p_cuMemAddressFree(va, 6 * MiB));
    return 0;
}

/* A reset between two phases: 64 MiB device, 4 MiB stream-ordered, 1 MiB managed and a 2 MiB
 * VMM handle (mapped) live; cudaDeviceReset frees the first three (CUDA: context and device
 * allocations) but not the VMM handle (cuMemCreate memory belongs to no context); then 64 MiB
 * again. At most 70 MiB of VRAM is ever live, never 134. */
static int reset_mode(void)
{
    cudaFree(0);
    GET(cuMemCreate); GET(cuMemAddressReserve); GET(cuMemMap); GET(cuMemUnmap); GET(cuMemRelease); GET(cuMemAddressFree);
    if (!p_cuMemCreate || !p_cuMemMap) { printf("entry_points=0\n"); return 1; }
    size_t u0 = used_now();
    cudaStream_t s;
    cudaStreamCreate(&s);
    void *a, *b, *c, *m;
    int rc = cudaMalloc(&a, 64 * MiB) | cudaMallocAsync(&c, 4 * MiB, s) | cudaMallocManaged(&m, 1 * MiB);
    rc |= cudaStreamSynchronize(s);
    CUmemAllocationProp prop = vmm_prop();
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    rc |= p_cuMemCreate(&h, 2 * MiB, &prop, 0) | p_cuMemAddressReserve(&va, 2 * MiB, 0, 0, 0) | p_cuMemMap(va, 2 * MiB, 0, h, 0);
    printf("rc=%d before_mib=%llu\n", rc, (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("before reset");
    printf("reset=%d\n", cudaDeviceReset());
    printf("after_reset_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("after reset");
    rc = cudaMalloc(&b, 64 * MiB);
    printf("again=%d again_mib=%llu\n", rc, (unsigned long long)((used_now() - u0) / MiB));
    vramtrace_snapshot("allocated again");
    rc = cudaFree(b) | p_cuMemUnmap(va, 2 * MiB) | p_cuMemRelease(h) | p_cuMemAddressFree(va, 2 * MiB);
    printf("end=%d end_mib=%llu\n", rc, (unsigned long long)((used_now() - u0) / MiB));
    return 0;
}

/* Memory nobody in this process allocated (run with VRAMTRACE_SIM_FOREIGN_MEM): 64 MiB allocated,
 * the program asks cudaMemGetInfo, then a 1 GiB request fails for lack of memory; 20 ms later
 * 16 MiB more. */
static int foreign_mode(void)
{
    void *a, *b = NULL;
    int rc = cudaMalloc(&a, 64 * MiB);
    size_t f = 0, t = 0;
    rc |= cudaMemGetInfo(&f, &t);
    printf("rc=%d used_mib=%llu total_mib=%llu\n", rc, (unsigned long long)((t - f) / MiB), (unsigned long long)(t / MiB));
    printf("big=%d\n", cudaMalloc(&b, 1024 * MiB));
    usleep(20000); /* longer than the tests' VRAMTRACE_MEMINFO_INTERVAL_MS=10: the next allocation is sampled */
    void *c;
    rc = cudaMalloc(&c, 16 * MiB);
    printf("free=%d\n", rc | cudaFree(c) | cudaFree(a));
    return 0;
}

static int ipc_mode(void)
{
    void *p, *q = NULL;
    cudaMalloc(&p, 1 * MiB);
    size_t u0 = used_now();
    cudaIpcMemHandle_t h;
    printf("get=%d\n", cudaIpcGetMemHandle(&h, p));
    printf("open=%d\n", cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess));
    printf("distinct=%d\n", q != p && q != NULL);
    printf("open_used_delta=%llu\n", (unsigned long long)(used_now() - u0));
    touch<<<1, 32>>>((float *)q, 32);
    printf("sync=%d\n", cudaDeviceSynchronize());
    printf("close=%d\n", cudaIpcCloseMemHandle(q));
    cudaFree(p);
    return 0;
}

static int graph_mode(void)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    size_t u0 = used_now();
    void *g = NULL, *h = NULL;
    printf("begin=%d\n", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaMallocAsync(&g, 1 * MiB, s);
    cudaMemsetAsync(g, 0, 1 * MiB, s);
    touch<<<1, 32, 0, s>>>((float *)g, 32);
    cudaFreeAsync(g, s);
    cudaMallocAsync(&h, 2 * MiB, s); /* outlives the graph run */
    cudaGraph_t graph;
    printf("end=%d\n", cudaStreamEndCapture(s, &graph));
    printf("capture_used_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    cudaGraphExec_t ex;
    printf("inst=%d\n", cudaGraphInstantiate(&ex, graph, 0));
    printf("launch1=%d\n", cudaGraphLaunch(ex, s));
    cudaStreamSynchronize(s);
    printf("after_launch_used_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    printf("relaunch_while_live=%d\n", cudaGraphLaunch(ex, s));
    cudaFreeAsync(h, s);
    printf("launch2=%d\n", cudaGraphLaunch(ex, s));
    cudaFreeAsync(h, s);
    cudaStreamSynchronize(s);
    printf("after_free_used_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    cudaGraphExecDestroy(ex);
    cudaGraphDestroy(graph);
    /* explicit nodes */
    cudaGraph_t g2;
    cudaGraphCreate(&g2, 0);
    cudaMemAllocNodeParams np;
    memset(&np, 0, sizeof np);
    np.poolProps.allocType = cudaMemAllocationTypePinned;
    np.poolProps.location.type = cudaMemLocationTypeDevice;
    np.poolProps.location.id = 0;
    np.bytesize = 3 * MiB;
    cudaGraphNode_t an, fn;
    printf("add_alloc=%d\n", cudaGraphAddMemAllocNode(&an, g2, NULL, 0, &np));
    printf("add_free=%d\n", cudaGraphAddMemFreeNode(&fn, g2, &an, 1, np.dptr));
    cudaGraphExec_t e2;
    cudaGraphInstantiate(&e2, g2, 0);
    printf("launch3=%d\n", cudaGraphLaunch(e2, s));
    cudaStreamSynchronize(s);
    printf("end_used_mib=%llu\n", (unsigned long long)((used_now() - u0) / MiB));
    return 0;
}

/* cudaMallocFromPoolAsync captured into a graph (tests/cases/trace_graph_pool.sh): a call with no
 * pointer to fill fails (invalid value) in a capture of its own; then 1 MiB from the device's
 * default pool, freed in the same graph, which is launched 3 times. */
static int graph_pool_mode(void)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemPool_t pool;
    printf("pool=%d\n", cudaDeviceGetDefaultMemPool(&pool, 0));
    cudaGraph_t bad_graph = NULL, graph;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    printf("bad=%d\n", cudaMallocFromPoolAsync(NULL, 1 * MiB, pool, s));
    cudaStreamEndCapture(s, &bad_graph);
    if (bad_graph) cudaGraphDestroy(bad_graph);
    void *g = NULL;
    printf("begin=%d\n", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    printf("alloc=%d\n", cudaMallocFromPoolAsync(&g, 1 * MiB, pool, s));
    printf("addr=%p\n", g);
    cudaFreeAsync(g, s);
    printf("end=%d\n", cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t ex;
    printf("inst=%d\n", cudaGraphInstantiate(&ex, graph, 0));
    for (int i = 0; i < 3; i++) printf("launch=%d\n", cudaGraphLaunch(ex, s));
    printf("sync=%d\n", cudaStreamSynchronize(s));
    cudaGraphExecDestroy(ex);
    cudaGraphDestroy(graph);
    return 0;
}

static int multi_mode(void)
{
    int n = 0;
    cudaGetDeviceCount(&n);
    printf("count=%d\n", n);
    if (n < 2) return 1;
    void *a0, *a1, *b1;
    cudaSetDevice(0);
    cudaMalloc(&a0, 1 * MiB);
    cudaSetDevice(1);
    cudaMalloc(&a1, 3 * MiB);
    cudaMallocAsync(&b1, 1 * MiB, 0);
    printf("peer=%d\n", cudaMemcpyPeer(a1, 1, a0, 0, 1 * MiB));
    cudaFreeAsync(b1, 0);
    cudaDeviceSynchronize();
    /* driver: push device 0's primary context, allocate, pop back to device 1 */
    GET(cuDevicePrimaryCtxRetain); GET(cuCtxPushCurrent); GET(cuCtxPopCurrent); GET(cuMemAlloc);
    GET(cuMemFree); GET(cuMemcpyPeer); GET(cuCtxGetCurrent);
    CUcontext c0, c1;
    p_cuDevicePrimaryCtxRetain(&c0, 0);
    p_cuCtxGetCurrent(&c1);
    CUdeviceptr d0, d1;
    printf("push=%d\n", p_cuCtxPushCurrent(c0));
    printf("drv_alloc0=%d\n", p_cuMemAlloc(&d0, 2 * MiB));
    printf("pop=%d\n", p_cuCtxPopCurrent(NULL));
    printf("drv_alloc1=%d\n", p_cuMemAlloc(&d1, 512 * 1024));
    printf("drv_peer=%d\n", p_cuMemcpyPeer(d1, c1, d0, c0, 512 * 1024));
    p_cuMemFree(d1);
    p_cuCtxPushCurrent(c0);
    p_cuMemFree(d0);
    p_cuCtxPopCurrent(NULL);
    cudaFree(a1);
    cudaSetDevice(0);
    cudaFree(a0);
    return 0;
}

static int paraminfo_mode(void)
{
    cudaKernel_t k;
    printf("getkernel=%d\n", cudaGetKernel(&k, touch));
    GET(cuKernelGetParamInfo);
    size_t off = 99, size = 99;
    int rc = p_cuKernelGetParamInfo ? p_cuKernelGetParamInfo((CUkernel)k, 1, &off, &size) : -1;
    printf("rc=%d off=%zu size=%zu\n", rc, off, size);
    void *p;
    cudaMalloc(&p, 4096);
    touch<<<1, 32>>>((float *)p, 32);
    printf("sync=%d\n", cudaDeviceSynchronize());
    cudaFree(p);
    return 0;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "pool")) return pool_mode();
    if (!strcmp(m, "graph_pool")) return graph_pool_mode();
    if (!strcmp(m, "vmm")) return vmm_mode();
    if (!strcmp(m, "vmm_early")) return vmm_early_mode();
    if (!strcmp(m, "reset")) return reset_mode();
    if (!strcmp(m, "foreign")) return foreign_mode();
    if (!strcmp(m, "ipc")) return ipc_mode();
    if (!strcmp(m, "graph")) return graph_mode();
    if (!strcmp(m, "multi")) return multi_mode();
    if (!strcmp(m, "paraminfo")) return paraminfo_mode();
    fprintf(stderr, "usage: wl_mem pool|vmm|ipc|graph|multi|paraminfo\n");
    return 2;
}
