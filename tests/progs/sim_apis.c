/* sim_apis.c - the driver and runtime entry points frameworks and samples call (issue 46), each
 * checked against what the CUDA documentation says it returns (tests/cases/sim_apis.sh). Prints
 * KEY=VALUE lines; the expected values are in the test, from the documentation and the simulated
 * device's stated figures (132 SMs, 2048 resident threads per SM, 1024 threads per block).
 * Usage: sim_apis driver|entrypoint */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* two kernels, as NVRTC or a framework's JIT hands them over: PTX text */
static const char ptx[] =
    ".version 7.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry k_a(.param .u64 k_a_p0)\n{\n\tret;\n}\n"
    ".visible .entry k_b(.param .u32 k_b_n, .param .u64 k_b_p)\n{\n\tret;\n}\n";

/* cudaGetDriverEntryPoint is deprecated in CUDA 13 and still what PyTorch calls */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define P(key, fmt, ...) printf("%s=" fmt "\n", key, __VA_ARGS__)

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

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: sim_apis driver|entrypoint\n"); return 2; }
    if (!strcmp(argv[1], "driver")) return driver();
    if (!strcmp(argv[1], "entrypoint")) return entrypoint();
    fprintf(stderr, "sim_apis: unknown mode %s\n", argv[1]);
    return 2;
}
