/* sim_apis.c - the driver and runtime entry points frameworks and samples call (issue 46), each
 * checked against what the CUDA documentation says it returns (tests/cases/sim_apis.sh). Prints
 * KEY=VALUE lines; the expected values are in the test, from the documentation and the simulated
 * device's stated figures (132 SMs, 2048 resident threads per SM, 1024 threads per block).
 * Usage: sim_apis driver|entrypoint|runtime */
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* two kernels, as NVRTC or a framework's JIT hands them over: PTX text */
static const char ptx[] =
    ".version 7.0\n.target sm_80\n.address_size 64\n"
    ".visible .global .align 4 .b8 g_buf[64];\n.visible .global .f32 g_one;\n"
    ".visible .entry k_a(.param .u64 k_a_p0)\n{\n\tret;\n}\n"
    ".visible .entry k_b(.param .u32 k_b_n, .param .u64 k_b_p)\n{\n\tret;\n}\n";

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

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: sim_apis driver|entrypoint\n"); return 2; }
    if (!strcmp(argv[1], "driver")) return driver();
    if (!strcmp(argv[1], "entrypoint")) return entrypoint();
    if (!strcmp(argv[1], "runtime")) return runtime();
    if (!strcmp(argv[1], "two_devices")) return two_devices();
    fprintf(stderr, "sim_apis: unknown mode %s\n", argv[1]);
    return 2;
}
