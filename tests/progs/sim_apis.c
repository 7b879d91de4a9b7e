/* sim_apis.c - the driver and runtime entry points frameworks and samples call (issue 46), each
 * checked against what the CUDA documentation says it returns (tests/cases/sim_apis.sh). Prints
 * KEY=VALUE lines; the expected values are in the test, from the documentation and the simulated
 * device's stated figures (132 SMs, 2048 resident threads per SM, 1024 threads per block).
 * Usage: sim_apis driver|entrypoint|runtime|two_devices|library|graph|link|vmm */
#include <cuda.h>
#include <dlfcn.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* two kernels, as NVRTC or a framework's JIT hands them over: PTX text */
static const char ptx[] =
    ".version 7.0\n.target sm_80\n.address_size 64\n"
    ".visible .global .align 4 .b8 g_buf[64];\n.visible .global .f32 g_one;\n"
    ".visible .entry k_a(.param .u64 k_a_p0)\n{\n\tret;\n}\n"
    /* k_b stores n through p: p is used as an address (the tracer's PTX rule and a GPU agree) */
    ".visible .entry k_b(.param .u32 k_b_n, .param .u64 k_b_p)\n{\n"
    "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n"
    "\tld.param.u64 %rd1, [k_b_p];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
    "\tld.param.u32 %r1, [k_b_n];\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";

/* cudaGetDriverEntryPoint is deprecated in CUDA 13 and still what PyTorch calls */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define P(key, fmt, ...) printf("%s=" fmt "\n", key, __VA_ARGS__)
/* KEY=RC:values..., the call made before the values are read */
#define PR(key, call, fmt, ...) do { int rc_ = (int)(call); printf("%s=%d:" fmt "\n", key, rc_, __VA_ARGS__); } while (0)

static int driver(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) return 1;
    CUlibrary lib;
    P("lib_load", "%d", (int)cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    unsigned count = 0;
    P("kernel_count_rc", "%d", (int)cuLibraryGetKernelCount(&count, lib));
    P("kernel_count", "%u", count);
    CUkernel ks[4] = {0};
    P("enumerate_rc", "%d", (int)cuLibraryEnumerateKernels(ks, count < 4 ? count : 4, lib));
    int seen_a = 0, seen_b = 0;
    for (unsigned i = 0; i < count && i < 4; i++) {
        const char *name = NULL;
        if (cuKernelGetName(&name, ks[i]) == CUDA_SUCCESS && name) {
            seen_a += !strcmp(name, "k_a");
            seen_b += !strcmp(name, "k_b");
        }
    }
    P("enumerated", "%d%d", seen_a, seen_b);
    CUkernel k;
    cuLibraryGetKernel(&k, lib, "k_b");
    int v = -1;
    P("kattr_rc", "%d", (int)cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k, dev));
    P("kattr_max_threads", "%d", v);
    P("kattr_bad_device", "%d", (int)cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k, 57));
    P("kattr_bad_kernel", "%d", (int)cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, (CUkernel)&v, dev));
    P("kset_rc", "%d", (int)cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536, k, dev));
    P("kcache_rc", "%d", (int)cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_SHARED, dev));
    const void *table = (const void *)1;
    CUuuid id;
    memset(&id, 0x42, sizeof id);
    P("export_table_rc", "%d", (int)cuGetExportTable(&table, &id));
    P("export_table_null", "%d", table == NULL);
    CUfunction f;
    cuKernelGetFunction(&f, k);
    int min_grid = 0, block = 0;
    P("occ_rc", "%d", (int)cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, NULL, 0, 0));
    P("occ", "%d:%d", min_grid, block);
    cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, NULL, 0, 256);
    P("occ_limit256", "%d:%d", min_grid, block);
    int blocks = 0;
    P("active_rc", "%d", (int)cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 0));
    P("active_128", "%d", blocks);
    /* module variables: the two the PTX declares, 64 and 4 bytes, in device memory */
    CUdeviceptr gp = 0;
    size_t gsize = 0;
    PR("global_buf", cuLibraryGetGlobal(&gp, &gsize, lib, "g_buf"), "%zu:%d", gsize, gp != 0);
    PR("global_one", cuLibraryGetGlobal(&gp, &gsize, lib, "g_one"), "%zu", gsize);
    CUmodule mod;
    cuLibraryGetModule(&mod, lib);
    CUdeviceptr gp2 = 0;
    PR("module_global", cuModuleGetGlobal(&gp2, &gsize, mod, "g_one"), "%zu:%d", gsize, gp2 == gp);
    float one = 1.0f, back = 0;
    cuMemcpyHtoD(gp, &one, sizeof one);
    cuMemcpyDtoH(&back, gp, sizeof back);
    P("global_roundtrip", "%g", back);
    P("global_missing", "%d", (int)cuLibraryGetGlobal(&gp, &gsize, lib, "g_none"));
    PR("managed", cuLibraryGetManaged(&gp, &gsize, lib, "g_buf"), "%zu", gsize);
    void *uf = NULL;
    P("unified_missing", "%d", (int)cuLibraryGetUnifiedFunction(&uf, lib, "k_a"));
    P("lib_unload", "%d", (int)cuLibraryUnload(lib));
    return 0;
}

static int entrypoint(void)
{
    void *fn = (void *)1;
    enum cudaDriverEntryPointQueryResult st = cudaDriverEntryPointSuccess;
    P("found_rc", "%d", (int)cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &st));
    P("found", "%d:%d", fn != NULL, (int)st);
    fn = (void *)1;
    P("missing_rc", "%d", (int)cudaGetDriverEntryPoint("cuNoSuchEntryPoint", &fn, cudaEnableDefault, &st));
    P("missing", "%d:%d", fn == NULL, (int)st);
    P("missing_last_error", "%d", (int)cudaGetLastError());
    fn = (void *)1;
    P("too_new_rc", "%d", (int)cudaGetDriverEntryPointByVersion("cuKernelGetAttribute", &fn, 11000, cudaEnableDefault, &st));
    P("too_new", "%d:%d", fn == NULL, (int)st);
    P("too_new_last_error", "%d", (int)cudaGetLastError());
    P("null_symbol_rc", "%d", (int)cudaGetDriverEntryPoint(NULL, &fn, cudaEnableDefault, &st));
    cudaGetLastError();
    return 0;
}

static int host_calls;
static void CUDART_CB host_fn(void *p) { host_calls += *(int *)p; }
static cudaError_t cb_status = (cudaError_t)-1;
static cudaStream_t cb_stream;
static void CUDART_CB stream_cb(cudaStream_t s, cudaError_t st, void *p) { cb_status = st; cb_stream = s; host_calls += *(int *)p; }
static int destroyed;
static void CUDART_CB destroy_fn(void *p) { destroyed += *(int *)p; }

static int runtime(void)
{
    int least = 1, greatest = 1;
    PR("prio_range", cudaDeviceGetStreamPriorityRange(&least, &greatest), "%d:%d", least, greatest);
    cudaStream_t s;
    cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -3);
    int prio = 0;
    PR("stream_prio", cudaStreamGetPriority(s, &prio), "%d", prio);
    /* capture bookkeeping */
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
    PR("capinfo_idle", cudaStreamGetCaptureInfo(s, &st, NULL, NULL, NULL, NULL, NULL), "%d", (int)st);
    P("update_deps_idle", "%d", (int)cudaStreamUpdateCaptureDependencies(s, NULL, NULL, 0, cudaStreamSetCaptureDependencies));
    cudaGetLastError();
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    unsigned long long id = 0;
    cudaGraph_t g = NULL;
    size_t ndeps = 99;
    P("capinfo_rc", "%d", (int)cudaStreamGetCaptureInfo(s, &st, &id, &g, NULL, NULL, &ndeps));
    P("capinfo", "%d:%d:%d:%zu", (int)st, id != 0, g != NULL, ndeps);
    P("update_deps", "%d", (int)cudaStreamUpdateCaptureDependencies(s, NULL, NULL, 0, cudaStreamSetCaptureDependencies));
    P("update_deps_badflag", "%d", (int)cudaStreamUpdateCaptureDependencies(s, NULL, NULL, 0, 7));
    cudaGetLastError();
    int one = 1;
    P("hostfn_in_capture", "%d", (int)cudaLaunchHostFunc(s, host_fn, &one));
    cudaGetLastError();
    cudaGraph_t captured = NULL;
    P("end_capture", "%d", (int)cudaStreamEndCapture(s, &captured));
    /* capture mode, per thread: exchange gives the old one back */
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    PR("mode_first", cudaThreadExchangeStreamCaptureMode(&mode), "%d", (int)mode);
    PR("mode_second", cudaThreadExchangeStreamCaptureMode(&mode), "%d", (int)mode);
    /* host functions and callbacks run in stream order: here, before the stream is idle */
    host_calls = 0;
    int two = 2;
    P("hostfn", "%d", (int)cudaLaunchHostFunc(s, host_fn, &two));
    cudaStreamSynchronize(s);
    P("hostfn_ran", "%d", host_calls);
    P("callback", "%d", (int)cudaStreamAddCallback(s, stream_cb, &two, 0));
    cudaStreamSynchronize(s);
    P("callback_ran", "%d:%d:%d", host_calls, (int)cb_status, cb_stream == s);
    P("callback_badflags", "%d", (int)cudaStreamAddCallback(s, stream_cb, &two, 1));
    cudaGetLastError();
    char bus[32] = "";
    PR("pci_bus", cudaDeviceGetPCIBusId(bus, sizeof bus, 0), "%s", bus);
    P("pci_bus_bad", "%d", (int)cudaDeviceGetPCIBusId(bus, sizeof bus, 9));
    cudaGetLastError();
    /* IPC events: only from an event made interprocess and without timing */
    cudaEvent_t timed, ipc, opened = NULL;
    cudaEventCreate(&timed);
    cudaEventCreateWithFlags(&ipc, cudaEventInterprocess | cudaEventDisableTiming);
    cudaIpcEventHandle_t h;
    P("ipc_timed", "%d", (int)cudaIpcGetEventHandle(&h, timed));
    cudaGetLastError();
    P("ipc_get", "%d", (int)cudaIpcGetEventHandle(&h, ipc));
    PR("ipc_open", cudaIpcOpenEventHandle(&opened, h), "%d", opened != NULL);
    P("ipc_record", "%d", (int)cudaEventRecord(opened, s));
    /* user objects: the destructor runs when the last reference goes */
    cudaUserObject_t uo;
    int seven = 7;
    P("uo_badflags", "%d", (int)cudaUserObjectCreate(&uo, &seven, destroy_fn, 1, 0));
    cudaGetLastError();
    P("uo_create", "%d", (int)cudaUserObjectCreate(&uo, &seven, destroy_fn, 1, cudaUserObjectNoDestructorSync));
    cudaGraph_t ug;
    cudaGraphCreate(&ug, 0);
    P("uo_graph_retain", "%d", (int)cudaGraphRetainUserObject(ug, uo, 2, 0));
    cudaUserObjectRelease(uo, 1);
    P("uo_alive", "%d", destroyed);
    cudaGraphReleaseUserObject(ug, uo, 2);
    P("uo_destroyed", "%d", destroyed);
    /* graph memory attributes: the high watermarks may be reset to 0, nothing else set */
    unsigned long long used = 99, zero = 0, nonzero = 5;
    PR("gmem_get", cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used), "%llu", used);
    P("gmem_reset", "%d", (int)cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
    P("gmem_set_nonzero", "%d", (int)cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &nonzero));
    cudaGetLastError();
    P("gmem_set_current", "%d", (int)cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &zero));
    cudaGetLastError();
    /* managed memory hints: managed memory only */
    float *m, *d;
    cudaMallocManaged((void **)&m, 1 << 20, cudaMemAttachGlobal);
    cudaMalloc((void **)&d, 1 << 20);
    struct cudaMemLocation dev0 = { cudaMemLocationTypeDevice, 0 }, host = { cudaMemLocationTypeHost, 0 };
    P("prefetch", "%d", (int)cudaMemPrefetchAsync(m, 1 << 20, dev0, 0, s));
    P("prefetch_host", "%d", (int)cudaMemPrefetchAsync(m, 1 << 20, host, 0, s));
    P("prefetch_not_managed", "%d", (int)cudaMemPrefetchAsync(d, 1 << 20, dev0, 0, s));
    cudaGetLastError();
    P("advise", "%d", (int)cudaMemAdvise(m, 1 << 20, cudaMemAdviseSetPreferredLocation, dev0));
    P("advise_read_mostly", "%d", (int)cudaMemAdvise(m, 1 << 20, cudaMemAdviseSetReadMostly, dev0));
    P("advise_not_managed", "%d", (int)cudaMemAdvise(d, 1 << 20, cudaMemAdviseSetAccessedBy, dev0));
    cudaGetLastError();
    /* pool access: the owner keeps read-write */
    cudaMemPool_t pool;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    struct cudaMemAccessDesc own = { dev0, cudaMemAccessFlagsProtReadWrite }, drop = { dev0, cudaMemAccessFlagsProtNone };
    P("pool_access", "%d", (int)cudaMemPoolSetAccess(pool, &own, 1));
    P("pool_access_owner_none", "%d", (int)cudaMemPoolSetAccess(pool, &drop, 1));
    cudaGetLastError();
    int kernels_same = -1;
    P("p2p_same_device", "%d", (int)cudaDeviceGetP2PAttribute(&kernels_same, cudaDevP2PAttrAccessSupported, 0, 0));
    cudaGetLastError();
    int started = (int)cudaProfilerStart();
    P("profiler", "%d:%d", started, (int)cudaProfilerStop());
    P("last_error", "%d", (int)cudaGetLastError());
    cudaFree(d);
    cudaFree(m);
    return 0;
}

static int two_devices(void)
{
    int v = -1;
    PR("p2p_access", cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 1), "%d", v);
    PR("p2p_rank", cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank, 1, 0), "%d", v);
    P("p2p_bad_device", "%d", (int)cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 2));
    return 0;
}

/* cudaLibrary*: the same PTX through the runtime; its kernel launched as a cudaKernel_t */
static int library(void)
{
    cudaLibrary_t lib;
    P("rlib_load", "%d", (int)cudaLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    unsigned count = 0;
    PR("rlib_count", cudaLibraryGetKernelCount(&count, lib), "%u", count);
    cudaKernel_t ks[2];
    P("rlib_enumerate", "%d", (int)cudaLibraryEnumerateKernels(ks, 2, lib));
    cudaKernel_t k;
    P("rlib_kernel", "%d", (int)cudaLibraryGetKernel(&k, lib, "k_b"));
    P("rlib_kernel_missing", "%d", (int)cudaLibraryGetKernel(&k, lib, "k_none"));
    cudaGetLastError();
    cudaLibraryGetKernel(&k, lib, "k_b");
    void *g = NULL;
    size_t size = 0;
    PR("rlib_global", cudaLibraryGetGlobal(&g, &size, lib, "g_buf"), "%zu:%d", size, g != NULL);
    PR("rlib_managed", cudaLibraryGetManaged(&g, &size, lib, "g_one"), "%zu", size);
    void *uf;
    P("rlib_unified", "%d", (int)cudaLibraryGetUnifiedFunction(&uf, lib, "k_a"));
    cudaGetLastError();
    /* k_b(u32 n, u64 p): first with device memory, then with a host buffer (a GPU faults: 700) */
    int n = 4;
    void *dbuf;
    cudaMalloc(&dbuf, 256);
    void *args[] = { &n, &dbuf };
    dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
    P("rlib_launch", "%d", (int)cudaLaunchKernel((const void *)k, grid, block, args, 0, 0));
    P("rlib_sync", "%d", (int)cudaDeviceSynchronize());
    void *hbuf = malloc(256);
    void *hargs[] = { &n, &hbuf };
    P("rlib_launch_host", "%d", (int)cudaLaunchKernel((const void *)k, grid, block, hargs, 0, 0));
    P("rlib_sync_host", "%d", (int)cudaDeviceSynchronize());
    free(hbuf);
    P("rlib_setattr", "%d", (int)cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536, 0));
    P("rlib_setattr_bad_device", "%d", (int)cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536, 9));
    cudaGetLastError();
    /* the same image from a file */
    char path[] = "/tmp/sim_apis-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f) { fputs(ptx, f); fclose(f); }
    cudaLibrary_t flib;
    P("rlib_file_load", "%d", (int)cudaLibraryLoadFromFile(&flib, path, NULL, NULL, 0, NULL, NULL, 0));
    unlink(path);
    PR("rlib_file_count", cudaLibraryGetKernelCount(&count, flib), "%u", count);
    P("rlib_file_missing", "%d", (int)cudaLibraryLoadFromFile(&flib, "/nonexistent/k.ptx", NULL, NULL, 0, NULL, NULL, 0));
    cudaGetLastError();
    P("rlib_unload", "%d", (int)cudaLibraryUnload(lib));
    return 0;
}

/* graphs built by hand: a memset node then a copy node; the nodes listed; run */
static int graph(void)
{
    unsigned char *d, h[4096], h2[4096];
    cudaMalloc((void **)&d, sizeof h);
    memset(h, 0, sizeof h);
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaGraphNode_t set, copy, copy3d;
    struct cudaMemsetParams mp = { d, 0, 0x5a, 1, sizeof h, 1 };
    P("memset_node", "%d", (int)cudaGraphAddMemsetNode(&set, g, NULL, 0, &mp));
    P("copy_node", "%d", (int)cudaGraphAddMemcpyNode1D(&copy, g, &set, 1, h, d, sizeof h, cudaMemcpyDeviceToHost));
    /* a second copy through the 3D form: device bytes 0..1023 to h2 */
    memset(h2, 0, sizeof h2);
    struct cudaMemcpy3DParms c3 = { 0 };
    c3.srcPtr = (struct cudaPitchedPtr){ d, 1024, 1024, 1 };
    c3.dstPtr = (struct cudaPitchedPtr){ h2, 1024, 1024, 1 };
    c3.extent = (struct cudaExtent){ 1024, 1, 1 };
    c3.kind = cudaMemcpyDeviceToHost;
    P("copy3d_node", "%d", (int)cudaGraphAddMemcpyNode(&copy3d, g, &copy, 1, &c3));
    size_t num = 0;
    PR("nodes_count", cudaGraphGetNodes(g, NULL, &num), "%zu", num);
    cudaGraphNode_t nodes[4];
    num = 4;
    PR("nodes", cudaGraphGetNodes(g, nodes, &num), "%zu:%d", num, nodes[0] == set && nodes[1] == copy && nodes[2] == copy3d);
    size_t ndeps = 9;
    PR("deps", cudaGraphNodeGetDependencies(copy, NULL, NULL, &ndeps), "%zu", ndeps);
    cudaGraphExec_t e;
    cudaGraphInstantiate(&e, g, 0);
    P("upload", "%d", (int)cudaGraphUpload(e, 0));
    P("graph_launch", "%d", (int)cudaGraphLaunch(e, 0));
    cudaDeviceSynchronize();
    int all = 1;
    for (size_t i = 0; i < sizeof h; i++) all &= h[i] == 0x5a;
    for (size_t i = 0; i < 1024; i++) all &= h2[i] == 0x5a;
    P("graph_ran", "%d:%d", all, h2[1024]);
    cudaGraphConditionalHandle c1 = 0, c2 = 0;
    cudaGraphConditionalHandleCreate(&c1, g, 1, cudaGraphCondAssignDefault);
    PR("cond_handles", cudaGraphConditionalHandleCreate(&c2, g, 0, 0), "%d", c1 != c2 && c1 && c2);
    /* a captured graph's nodes: a memset and a copy */
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaGraph_t cg;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMemsetAsync(d, 1, sizeof h, s);
    cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
    cudaStreamEndCapture(s, &cg);
    num = 0;
    PR("captured_nodes", cudaGraphGetNodes(cg, NULL, &num), "%zu", num);
    /* a capture into an existing graph (one memset node already): the copy is appended to it */
    cudaGraph_t into, ended = NULL;
    cudaGraphCreate(&into, 0);
    cudaGraphNode_t first;
    cudaGraphAddMemsetNode(&first, into, NULL, 0, &mp);
    P("capture_to_graph", "%d", (int)cudaStreamBeginCaptureToGraph(s, into, NULL, NULL, 0, cudaStreamCaptureModeGlobal));
    cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
    cudaStreamEndCapture(s, &ended);
    num = 0;
    cudaGraphGetNodes(into, NULL, &num);
    P("capture_to_graph_nodes", "%d:%zu", ended == into, num);
    return 0;
}

/* the JIT linker: the PTX linked and loaded */
static int link_ptx(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) return 1;
    CUlinkState l;
    P("link_create", "%d", (int)cuLinkCreate(0, NULL, NULL, &l));
    void *img = NULL;
    size_t size = 0;
    P("link_empty", "%d", (int)cuLinkComplete(l, &img, &size));
    P("link_add", "%d", (int)cuLinkAddData(l, CU_JIT_INPUT_PTX, (void *)ptx, sizeof ptx, "k.ptx", 0, NULL, NULL));
    P("link_add_missing_file", "%d", (int)cuLinkAddFile(l, CU_JIT_INPUT_PTX, "/nonexistent/k.ptx", 0, NULL, NULL));
    PR("link_complete", cuLinkComplete(l, &img, &size), "%d", img != NULL && size > 0);
    CUmodule m;
    CUfunction f;
    P("link_load", "%d", (int)cuModuleLoadData(&m, img));
    P("link_function", "%d", (int)cuModuleGetFunction(&f, m, "k_a"));
    P("link_destroy", "%d", (int)cuLinkDestroy(l));
    return 0;
}

/* VMM as PyTorch's expandable segments use it: two 2 MiB handles mapped side by side and written
 * across the seam; a handle found back from an address, its properties, shared as a file
 * descriptor and imported again; a 32-bit write in stream order. Then what the simulated GPU has
 * not (multicast, green contexts: CUDA_ERROR_NOT_SUPPORTED), driver log callbacks, and the NVML
 * that sits beside the driver. */
typedef int (*nvml_fn)();
static int vmm(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) return 1;
    const size_t two = 2u << 20;
    CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED, .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
                                 .requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR };
    CUmemGenericAllocationHandle h1, h2, plain, back, imported;
    CUdeviceptr va, va2;
    cuMemCreate(&h1, two, &prop, 0);
    cuMemCreate(&h2, two, &prop, 0);
    cuMemAddressReserve(&va, 2 * two, 0, 0, 0);
    cuMemMap(va, two, 0, h1, 0);
    cuMemMap(va + two, two, 0, h2, 0);
    CUmemAccessDesc acc = { { CU_MEM_LOCATION_TYPE_DEVICE, 0 }, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    cuMemSetAccess(va, 2 * two, &acc, 1);
    unsigned char seam[1024];
    memset(seam, 0, sizeof seam);
    int rc = (int)cuMemsetD8(va + two - 512, 0x5a, sizeof seam);
    cuMemcpyDtoH(seam, va + two - 512, sizeof seam);
    int all = 1;
    for (size_t i = 0; i < sizeof seam; i++) all &= seam[i] == 0x5a;
    P("seam_memset", "%d:%d", rc, all);
    unsigned word = 0;
    rc = (int)cuStreamWriteValue32(NULL, va + 16, 0xabcd1234u, 0);
    cuMemcpyDtoH(&word, va + 16, sizeof word);
    P("write_value32", "%d:%x", rc, word);
    PR("retain", cuMemRetainAllocationHandle(&back, (void *)(uintptr_t)(va + two + 4096)), "%d", back == h2);
    P("retain_release", "%d", (int)cuMemRelease(back));
    P("retain_unmapped", "%d", (int)cuMemRetainAllocationHandle(&back, &word));
    CUmemAllocationProp got;
    PR("props", cuMemGetAllocationPropertiesFromHandle(&got, h1), "%d:%d:%d:%d", (int)got.type, (int)got.location.type,
       got.location.id, (int)got.requestedHandleTypes);
    int fd = -1;
    PR("export", cuMemExportToShareableHandle(&fd, h1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), "%d", fd >= 0);
    PR("import", cuMemImportFromShareableHandle(&imported, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), "%d",
       imported != h1);
    cuMemAddressReserve(&va2, two, 0, 0, 0);
    cuMemMap(va2, two, 0, imported, 0);
    cuMemSetAccess(va2, two, &acc, 1);
    word = 0;
    cuMemcpyDtoH(&word, va2 + 16, sizeof word);
    P("import_aliases", "%x", word);
    cuMemCreate(&plain, two, &(CUmemAllocationProp){ .type = CU_MEM_ALLOCATION_TYPE_PINNED, .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } }, 0);
    P("export_not_requested", "%d", (int)cuMemExportToShareableHandle(&fd, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    P("export_fabric", "%d", (int)cuMemExportToShareableHandle(&fd, h1, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    CUmulticastObjectProp mp = { .numDevices = 1, .size = two, .handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR };
    CUmemGenericAllocationHandle mc;
    P("multicast", "%d", (int)cuMulticastCreate(&mc, &mp));
    CUdevResource res;
    P("dev_resource", "%d", (int)cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM));
    P("green_destroy_none", "%d", (int)cuGreenCtxDestroy(NULL));
    CUlogsCallbackHandle logs;
    PR("logs", cuLogsRegisterCallback((CUlogsCallback)(void (*)(void))abort, NULL, &logs), "%d", (int)cuLogsUnregisterCallback(logs));
    int ok = !cuMemUnmap(va, 2 * two) && !cuMemUnmap(va2, two) && !cuMemAddressFree(va, 2 * two) && !cuMemAddressFree(va2, two) &&
             !cuMemRelease(h1) && !cuMemRelease(h2) && !cuMemRelease(imported) && !cuMemRelease(plain);
    P("cleanup", "%d", ok);
    /* NVML, where the driver package puts it */
    void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    P("nvml_loads", "%d", nvml != NULL);
    if (!nvml) return 0;
    nvml_fn init = (nvml_fn)dlsym(nvml, "nvmlInit_v2"), count = (nvml_fn)dlsym(nvml, "nvmlDeviceGetCount_v2"),
            by_bus = (nvml_fn)dlsym(nvml, "nvmlDeviceGetHandleByPciBusId_v2"), fabric = (nvml_fn)dlsym(nvml, "nvmlDeviceGetGpuFabricInfoV"),
            drv = (nvml_fn)dlsym(nvml, "nvmlSystemGetCudaDriverVersion_v2");
    if (!init || !count || !by_bus || !fabric || !drv) { P("nvml_symbols", "%d", 0); return 0; }
    unsigned n = 0;
    char bus[32] = "";
    void *nd = NULL;
    int v = 0, cv = 0;
    cuDeviceGetPCIBusId(bus, sizeof bus, dev);
    cuDriverGetVersion(&cv);
    P("nvml_init", "%d", init());
    PR("nvml_count", count(&n), "%u", n);
    PR("nvml_by_bus", by_bus(bus, &nd), "%d", nd != NULL);
    P("nvml_unknown_bus", "%d", by_bus("0000:99:00.0", &nd));
    unsigned char info[256];
    P("nvml_fabric", "%d", fabric(nd, info));
    PR("nvml_driver", drv(&v), "%d", v == cv);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: sim_apis driver|entrypoint\n"); return 2; }
    if (!strcmp(argv[1], "driver")) return driver();
    if (!strcmp(argv[1], "entrypoint")) return entrypoint();
    if (!strcmp(argv[1], "runtime")) return runtime();
    if (!strcmp(argv[1], "two_devices")) return two_devices();
    if (!strcmp(argv[1], "library")) return library();
    if (!strcmp(argv[1], "graph")) return graph();
    if (!strcmp(argv[1], "link")) return link_ptx();
    if (!strcmp(argv[1], "vmm")) return vmm();
    fprintf(stderr, "sim_apis: unknown mode %s\n", argv[1]);
    return 2;
}
