/* trace_drv.c - driver-API-only program for the tracer's end-to-end tests (tests/cases/trace_driver.sh).
 * Built twice (mk/trace_tests.mk): `trace_drv` linked with -lcuda and calling cu* directly, and
 * `trace_drv_dl` (-DTRACE_DLOPEN) linked with neither libcuda nor libcudart: it dlopens
 * libcuda.so.1 and fetches every function through cuGetProcAddress_v2, like static cudart.
 * Both embed the fatbin and the PTX nvcc made from trace_rt.cu (TRACE_FATBIN, TRACE_PTX).
 * Usage: trace_drv MODE [IMAGE] [FORM]
 *   mem                          alloc/copy/set/free; prints "alloc ADDR SIZE", "copy DIR SIZE", ...
 *   launch IMAGE FORM [LOADER]   IMAGE: fatbin | ptx (embedded) | a file path; FORM: params | extra;
 *                                LOADER: data (cuModuleLoadData, the default) | dataex
 *                                (cuModuleLoadDataEx, no options) | fatbinary (cuModuleLoadFatBinary)
 *                                | enum (cuModuleLoadData, then the functions found by
 *                                cuModuleEnumerateFunctions and cuFuncGetName, never by name).
 *                                Launches drv_ptr/drv_struct with device pointers (no finding), then
 *                                drv_struct with a host pointer in the struct and drv_ptr with a host
 *                                pointer, printing "expect ..." lines as trace_rt does.
 *   devices                      on each device: its primary context, one cuMemAlloc; prints what
 *                                the driver says of it, "device D|NAME|TOTAL|CC|MEM_CLOCK_KHZ|
 *                                BUS_WIDTH_BITS|PAGEABLE_ACCESS|PCI_BUS_ID", which the trace's device
 *                                record must say too
 *   reset                        a block allocated, the primary context reset (which frees it),
 *                                then launched: "expect ..." lines as tests/progs/verdicts.cu
 *                                prints them; a block allocated after the reset: nothing. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__asm__(".section .rodata\n.balign 16\n.globl trace_fatbin\ntrace_fatbin:\n.incbin \"" TRACE_FATBIN "\"\n"
        ".globl trace_fatbin_end\ntrace_fatbin_end:\n"
        ".balign 16\n.globl trace_ptx\ntrace_ptx:\n.incbin \"" TRACE_PTX "\"\n.byte 0\n.previous\n");
extern const unsigned char trace_fatbin[], trace_fatbin_end[], trace_ptx[];

#define DRV_FNS(X) X(cuInit) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuMemAlloc) \
    X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD32) X(cuModuleLoadData) \
    X(cuModuleGetFunction) X(cuLaunchKernel) X(cuCtxSynchronize) X(cuMemAllocHost) X(cuMemFreeHost) \
    X(cuDevicePrimaryCtxReset) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceTotalMem) \
    X(cuDeviceGetAttribute) X(cuDeviceGetPCIBusId) X(cuModuleLoadDataEx) X(cuModuleLoadFatBinary) \
    X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions) X(cuFuncGetName)
#define DECL(f) static __typeof__(&f) p_##f;
DRV_FNS(DECL)

static void bind(void)
{
#ifdef TRACE_DLOPEN
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen failed\n"); exit(3); }
    typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    gpa_t gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
    if (!gpa) { printf("no cuGetProcAddress_v2\n"); exit(3); }
    CUdriverProcAddressQueryResult st;
#define GET(f) if (gpa(#f, (void **)&p_##f, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS || !p_##f) \
                   { printf("no %s\n", #f); exit(3); }
    DRV_FNS(GET)
    printf("bound dlopen\n");
#else
#define SET(f) p_##f = f;
    DRV_FNS(SET)
    printf("bound linked\n");
#endif
}

static const void *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { printf("cannot open %s\n", path); exit(3); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) { printf("cannot read %s\n", path); exit(3); }
    b[n] = 0; /* PTX must be NUL-terminated */
    fclose(f);
    return b;
}

struct S { int n; float *p; };

/* Launch f with (a, b) as its two parameters: kernelParams, or one packed buffer laid out like the
 * kernel's parameters (8-byte pointer at 0 / int at 0 + struct at 8). */
static CUresult launch(CUfunction f, int extra, void *a, size_t asz, void *b, size_t bsz)
{
    if (!extra) {
        void *params[] = { a, b };
        return p_cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
    }
    unsigned char buf[32];
    memset(buf, 0, sizeof buf);
    memcpy(buf, a, asz);
    memcpy(buf + 8, b, bsz);
    size_t len = 8 + bsz;
    len = (len + 7) & ~(size_t)7;
    void *cfg[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &len, CU_LAUNCH_PARAM_END };
    return p_cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, cfg);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "mem";
    bind();
    CUcontext ctx;
    CUdevice dev;
    printf("rc init %d\n", (int)p_cuInit(0));
    p_cuDeviceGet(&dev, 0);
    p_cuDevicePrimaryCtxRetain(&ctx, dev);
    p_cuCtxSetCurrent(ctx);
    if (!strcmp(mode, "devices")) {
        int count = 0;
        p_cuDeviceGetCount(&count);
        for (int i = 0; i < count; i++) {
            CUdevice d;
            CUcontext c;
            CUdeviceptr a;
            char name[256] = "", bus[64] = "";
            size_t total = 0;
            int clock = 0, width = 0, pageable = 0, major = 0, minor = 0;
            p_cuDeviceGet(&d, i);
            p_cuDeviceGetName(name, sizeof name, d);
            p_cuDeviceTotalMem(&total, d);
            p_cuDeviceGetAttribute(&clock, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, d);
            p_cuDeviceGetAttribute(&width, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, d);
            p_cuDeviceGetAttribute(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, d);
            p_cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
            p_cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
            p_cuDeviceGetPCIBusId(bus, (int)sizeof bus, d);
            p_cuDevicePrimaryCtxRetain(&c, d);
            p_cuCtxSetCurrent(c);
            printf("rc alloc%d %d\n", i, (int)p_cuMemAlloc(&a, 4096));
            printf("device %d|%s|%zu|%d.%d|%d|%d|%d|%s\n", i, name, total, major, minor, clock, width, pageable, bus);
        }
        return 0;
    }
    if (!strcmp(mode, "mem")) {
        size_t n = 1 << 20;
        unsigned char *h = malloc(n);
        memset(h, 3, n);
        CUdeviceptr a, b;
        printf("rc alloc %d\n", (int)p_cuMemAlloc(&a, n));
        printf("alloc 0x%llx %zu\n", (unsigned long long)a, n);
        printf("rc alloc %d\n", (int)p_cuMemAlloc(&b, 8192));
        printf("alloc 0x%llx %d\n", (unsigned long long)b, 8192);
        printf("rc htod %d\n", (int)p_cuMemcpyHtoD(a, h, n));
        printf("copy h2d %zu\n", n);
        printf("rc dtod %d\n", (int)p_cuMemcpyDtoD(b, a, 8192));
        printf("copy d2d %d\n", 8192);
        printf("rc dtoh %d\n", (int)p_cuMemcpyDtoH(h, b, 100));
        printf("copy d2h %d\n", 100);
        printf("rc set %d\n", (int)p_cuMemsetD32(b, 0, 256));
        printf("set %d\n", 1024);
        void *pin;
        printf("rc allochost %d\n", (int)p_cuMemAllocHost(&pin, 4096));
        printf("rc htod_pinned %d\n", (int)p_cuMemcpyHtoD(a, pin, 4096));
        printf("copy h2d %d\n", 4096);
        p_cuMemFreeHost(pin);
        CUdeviceptr none;
        printf("rc oom %d\n", (int)p_cuMemAlloc(&none, (size_t)1 << 42));
        printf("oom %zu\n", (size_t)1 << 42);
        printf("rc free %d\n", (int)p_cuMemFree(a));
        printf("free 0x%llx\n", (unsigned long long)a);
        p_cuMemFree(b);
        printf("free 0x%llx\n", (unsigned long long)b);
        printf("rc free_again %d\n", (int)p_cuMemFree(a));
        free(h);
        return 0;
    }
    if (!strcmp(mode, "launch") && argc > 3) {
        const void *image = !strcmp(argv[2], "fatbin") ? (const void *)trace_fatbin
                          : !strcmp(argv[2], "ptx") ? (const void *)trace_ptx : read_file(argv[2]);
        int extra = !strcmp(argv[3], "extra");
        CUmodule mod;
        CUfunction fp, fs;
        const char *loader = argc > 4 ? argv[4] : "data";
        printf("rc load %d\n", !strcmp(loader, "dataex") ? (int)p_cuModuleLoadDataEx(&mod, image, 0, NULL, NULL)
                              : !strcmp(loader, "fatbinary") ? (int)p_cuModuleLoadFatBinary(&mod, image)
                              : (int)p_cuModuleLoadData(&mod, image));
        if (!strcmp(loader, "enum")) { /* the module's functions enumerated, each known by its name */
            CUfunction fns[16];
            unsigned nf = 0;
            const char *nm;
            printf("rc enum %d\n", (int)(p_cuModuleGetFunctionCount(&nf, mod) || nf > 16 ||
                                          p_cuModuleEnumerateFunctions(fns, nf, mod)));
            fp = fs = NULL;
            for (unsigned i = 0; i < nf; i++)
                if (p_cuFuncGetName(&nm, fns[i]) == CUDA_SUCCESS) {
                    if (!strcmp(nm, "drv_ptr")) fp = fns[i];
                    if (!strcmp(nm, "drv_struct")) fs = fns[i];
                }
            printf("rc getfn %d\n", fp && fs ? 0 : 500);
        } else {
            printf("rc getfn %d\n", (int)p_cuModuleGetFunction(&fp, mod, "drv_ptr"));
            printf("rc getfn %d\n", (int)p_cuModuleGetFunction(&fs, mod, "drv_struct"));
        }
        CUdeviceptr d;
        p_cuMemAlloc(&d, 4096);
        float *dp = (float *)(size_t)(d + 64);
        int n = 4;
        struct S s;
        memset(&s, 0, sizeof s);
        s.n = 5;
        s.p = (float *)(size_t)d;
        printf("rc launch_ok %d\n", (int)launch(fp, extra, &dp, sizeof dp, &n, sizeof n));
        printf("rc launch_ok %d\n", (int)launch(fs, extra, &n, sizeof n, &s, sizeof s));
        printf("rc sync_ok %d\n", (int)p_cuCtxSynchronize());
        float *h = malloc(65536);
        s.p = h;
        printf("expect host_pointer error drv_struct 1 8 %p\n", (void *)h);
        printf("rc launch_bad %d\n", (int)launch(fs, extra, &n, sizeof n, &s, sizeof s));
        printf("expect host_pointer error drv_ptr 0 0 %p\n", (void *)(h + 2));
        float *hp = h + 2;
        printf("rc launch_bad %d\n", (int)launch(fp, extra, &hp, sizeof hp, &n, sizeof n));
        printf("rc sync_bad %d\n", (int)p_cuCtxSynchronize());
        return 0;
    }
    if (!strcmp(mode, "geometry")) {
        /* Launch geometries at and past CUDA's limits (grid y/z and block dimensions < 2^16,
         * shmem < 2^32): each is printed as the trace must show it, whatever the device then
         * says of it. */
        CUmodule mod;
        CUfunction fp;
        p_cuModuleLoadData(&mod, trace_fatbin);
        p_cuModuleGetFunction(&fp, mod, "drv_ptr");
        CUdeviceptr d;
        p_cuMemAlloc(&d, 4096);
        float *dp = (float *)(size_t)d;
        int n = 1;
        void *params[] = { &dp, &n };
        static const unsigned g[][7] = { /* grid x y z, block x y z, shmem */
            { 7, 3, 2, 128, 2, 1, 1024 }, { 2147483647u, 65535, 65535, 1024, 1, 1, 0 }, { 1, 65536, 1, 32, 1, 1, 0 },
            { 1, 1, 70000, 32, 1, 1, 0 }, { 1, 1, 1, 65536, 1, 1, 0 }, { 1, 1, 1, 1, 1, 1, 4294967295u },
        };
        for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
            CUresult r = p_cuLaunchKernel(fp, g[i][0], g[i][1], g[i][2], g[i][3], g[i][4], g[i][5], g[i][6], NULL, params, NULL);
            printf("launch %ux%ux%u %ux%ux%u %u %d\n", g[i][0], g[i][1], g[i][2], g[i][3], g[i][4], g[i][5], g[i][6], (int)r);
        }
        return 0;
    }
    if (!strcmp(mode, "reset")) {
        CUdeviceptr d, e;
        p_cuMemAlloc(&d, 4096);
        printf("rc reset %d\n", (int)p_cuDevicePrimaryCtxReset(dev)); /* frees every allocation, unloads modules */
        p_cuDevicePrimaryCtxRetain(&ctx, dev);
        p_cuCtxSetCurrent(ctx);
        CUmodule mod;
        CUfunction fp;
        p_cuModuleLoadData(&mod, trace_fatbin);
        p_cuModuleGetFunction(&fp, mod, "drv_ptr");
        float *dp = (float *)(size_t)d;
        int n = 1;
        printf("expect use_after_free error drv_ptr 0 0 0x%llx 0x%llx 4096 device\n", (unsigned long long)d, (unsigned long long)d);
        printf("rc launch_freed %d\n", (int)launch(fp, 0, &dp, sizeof dp, &n, sizeof n));
        p_cuMemAlloc(&e, 8192); /* may take d's address: live, no finding */
        float *ep = (float *)(size_t)e;
        printf("rc launch_new %d\n", (int)launch(fp, 0, &ep, sizeof ep, &n, sizeof n));
        int rc = (int)p_cuCtxSynchronize();
        p_cuMemFree(e);
        printf("done reset %d\n", rc);
        return 0;
    }
    printf("usage: trace_drv mem | launch fatbin|ptx|FILE params|extra | geometry | reset\n");
    return 2;
}
