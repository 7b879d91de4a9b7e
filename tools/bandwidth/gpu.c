/* gpu.c - device-side figures of `vramtrace bandwidth`: libcuda.so.1 through dlopen/dlsym (no
 * CUDA headers or libraries at build time), the embedded PTX kernels, copies and kernels timed
 * with events after a warm-up. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bw.h"
#include "cuda_min.h"
#include "bw_kernels_ptx.h"     /* generated from kernels.ptx: VT_BW_KERNELS_PTX */

const char vt_bw_kernels_ptx[] = VT_BW_KERNELS_PTX;

struct cuda_api {
    void *handle;
#define VT_CUDA_FIELD(name, ret, params) vt_pfn_##name name;
    VT_CUDA_FUNCS(VT_CUDA_FIELD)
#undef VT_CUDA_FIELD
};

/* Functions without which nothing is measured; the rest are optional. */
#define REQUIRED(X) X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)              \
    X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuMemAlloc_v2)      \
    X(cuMemFree_v2) X(cuMemcpyHtoDAsync_v2) X(cuMemcpyDtoHAsync_v2) X(cuMemcpyDtoDAsync_v2)      \
    X(cuStreamCreate) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventRecord)                   \
    X(cuEventSynchronize) X(cuEventElapsedTime)

static const char *err_name(const struct cuda_api *cu, CUresult e, char *buf, size_t len)
{
    const char *s = NULL;
    if (cu->cuGetErrorName && cu->cuGetErrorName(e, &s) == VT_CUDA_SUCCESS && s) {
        const char *d = NULL;
        if (cu->cuGetErrorString && cu->cuGetErrorString(e, &d) == VT_CUDA_SUCCESS && d)
            snprintf(buf, len, "%s: %s", s, d);
        else
            snprintf(buf, len, "%s", s);
        return buf;
    }
    static const struct { int code; const char *name; } names[] = {
        {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
        {3, "CUDA_ERROR_NOT_INITIALIZED"}, {34, "CUDA_ERROR_STUB_LIBRARY"},
        {35, "CUDA_ERROR_INSUFFICIENT_DRIVER"}, {100, "CUDA_ERROR_NO_DEVICE"},
        {101, "CUDA_ERROR_INVALID_DEVICE"}, {218, "CUDA_ERROR_INVALID_PTX"},
        {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"}, {719, "CUDA_ERROR_LAUNCH_FAILED"},
        {801, "CUDA_ERROR_NOT_SUPPORTED"}, {999, "CUDA_ERROR_UNKNOWN"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == e) { snprintf(buf, len, "%s", names[i].name); return buf; }
    snprintf(buf, len, "CUDA error %d", e);
    return buf;
}

/* dlopen + dlsym everything. Returns 0, or 1 with a "no CUDA GPU (...)" note. */
static int cuda_load(struct cuda_api *cu, struct vt_bw_report *r)
{
    memset(cu, 0, sizeof *cu);
    cu->handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu->handle) {
        const char *e = dlerror();
        if (!e || strstr(e, "cannot open shared object file"))
            vt_bw_note(r, "no CUDA GPU (libcuda.so.1 not found); GPU rows skipped");
        else
            vt_bw_note(r, "no CUDA GPU (libcuda.so.1: %s); GPU rows skipped", e);
        return 1;
    }
#define VT_CUDA_SYM(name, ret, params) cu->name = (vt_pfn_##name)dlsym(cu->handle, #name);
    VT_CUDA_FUNCS(VT_CUDA_SYM)
#undef VT_CUDA_SYM
    /* cuda.h of CUDA 12.8+ maps cuEventElapsedTime to the _v2 entry point: prefer it. */
    void *v2 = dlsym(cu->handle, "cuEventElapsedTime_v2");
    if (v2) cu->cuEventElapsedTime = (vt_pfn_cuEventElapsedTime)v2;
#define VT_CUDA_NEED(name) \
    if (!cu->name) { vt_bw_note(r, "no CUDA GPU (libcuda.so.1 lacks %s); GPU rows skipped", #name); return 1; }
    REQUIRED(VT_CUDA_NEED)
#undef VT_CUDA_NEED
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

enum gpu_op { H2D_PAGEABLE, H2D_PINNED, D2H_PAGEABLE, D2H_PINNED, D2D, K_READ, K_WRITE, K_COPY, K_TRIAD };

struct gpu {
    struct cuda_api cu;
    struct vt_bw_report *r;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUevent ev0, ev1;
    size_t size, copy_size;         /* bytes per device array / per copy */
    unsigned long long n4;          /* float4 elements per array */
    CUdeviceptr a, b, c, out;
    void *pageable, *pinned;
    CUmodule mod;
    CUfunction k_read, k_write, k_copy, k_triad;
    unsigned grid, block;
};

static const char *const op_names[] = {
    "h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned", "d2d_copy",
    "vram_read", "vram_write", "vram_copy", "vram_triad",
};

static CUresult launch(struct gpu *g, CUfunction f, void **params)
{
    return g->cu.cuLaunchKernel(f, g->grid, 1, 1, g->block, 1, 1, 0, g->stream, params, NULL);
}

static CUresult issue(struct gpu *g, enum gpu_op op)
{
    struct cuda_api *cu = &g->cu;
    float x = 1.0f, s = 0.4f;
    switch (op) {
    case H2D_PAGEABLE: return cu->cuMemcpyHtoDAsync_v2(g->a, g->pageable, g->copy_size, g->stream);
    case H2D_PINNED:   return cu->cuMemcpyHtoDAsync_v2(g->a, g->pinned, g->copy_size, g->stream);
    case D2H_PAGEABLE: return cu->cuMemcpyDtoHAsync_v2(g->pageable, g->a, g->copy_size, g->stream);
    case D2H_PINNED:   return cu->cuMemcpyDtoHAsync_v2(g->pinned, g->a, g->copy_size, g->stream);
    case D2D:          return cu->cuMemcpyDtoDAsync_v2(g->b, g->a, g->size, g->stream);
    case K_READ:  { void *p[] = {&g->a, &g->out, &g->n4}; return launch(g, g->k_read, p); }
    case K_WRITE: { void *p[] = {&g->a, &x, &g->n4}; return launch(g, g->k_write, p); }
    case K_COPY:  { void *p[] = {&g->a, &g->c, &g->n4}; return launch(g, g->k_copy, p); }
    case K_TRIAD: { void *p[] = {&g->a, &g->b, &g->c, &s, &g->n4}; return launch(g, g->k_triad, p); }
    }
    return 1;
}

/* One run of op between two events; *ms from the events, or from the host clock when the driver's
 * event timing is unavailable (the simulated device). Returns 0 or a CUresult. */
static CUresult timed(struct gpu *g, enum gpu_op op, double *ms)
{
    struct cuda_api *cu = &g->cu;
    double t0 = now_ms();
    CUresult e = cu->cuEventRecord(g->ev0, g->stream);
    if (!e) e = issue(g, op);
    if (!e) e = cu->cuEventRecord(g->ev1, g->stream);
    if (!e) e = cu->cuEventSynchronize(g->ev1);
    if (!e) e = cu->cuStreamSynchronize(g->stream);
    double wall = now_ms() - t0;
    if (e) return e;
    float ev = 0.0f;
    *ms = cu->cuEventElapsedTime(&ev, g->ev0, g->ev1) == VT_CUDA_SUCCESS && ev > 0.0f ? (double)ev : wall;
    if (!(*ms > 0.0)) *ms = 1e-6;
    return VT_CUDA_SUCCESS;
}

/* Warm-up plus o->trials timed runs; adds the row. Returns 0 or -1 (note set). */
static int measure(struct gpu *g, const struct vt_bw_opts *o, enum gpu_op op, unsigned long long bytes,
                   int simulated)
{
    double ms[1024];
    char eb[160];
    CUresult e = VT_CUDA_SUCCESS;
    int trials = o->trials > 1024 ? 1024 : o->trials;
    double dummy;
    e = timed(g, op, &dummy);
    for (int t = 0; !e && t < trials; t++) e = timed(g, op, &ms[t]);
    if (e) {
        vt_bw_note(g->r, "%s failed: %s", op_names[op], err_name(&g->cu, e, eb, sizeof eb));
        return -1;
    }
    vt_bw_add(g->r, op_names[op], bytes, ms, trials, simulated);
    return 0;
}

/* Loads the embedded PTX and looks up the kernels. Returns 0 or a CUresult; log gets the JIT's
 * first error line. */
static CUresult load_kernels(struct gpu *g, char *log, size_t loglen)
{
    struct cuda_api *cu = &g->cu;
    CUresult e;
    log[0] = '\0';
    if (!cu->cuModuleLoadData && !cu->cuModuleLoadDataEx) return 801;
    if (cu->cuModuleLoadDataEx) {
        static char jit_log[4096];
        jit_log[0] = '\0';
        CUjit_option opts[] = {VT_CU_JIT_ERROR_LOG_BUFFER, VT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *vals[] = {jit_log, (void *)(uintptr_t)sizeof jit_log};
        e = cu->cuModuleLoadDataEx(&g->mod, vt_bw_kernels_ptx, 2, opts, vals);
        jit_log[sizeof jit_log - 1] = '\0';
        char *nl = strchr(jit_log, '\n');
        if (nl) *nl = '\0';
        snprintf(log, loglen, "%s", jit_log);
    } else {
        e = cu->cuModuleLoadData(&g->mod, vt_bw_kernels_ptx);
    }
    if (e) return e;
    if (!cu->cuModuleGetFunction || !cu->cuLaunchKernel) return 801;
    if ((e = cu->cuModuleGetFunction(&g->k_read, g->mod, "vt_bw_read")) ||
        (e = cu->cuModuleGetFunction(&g->k_write, g->mod, "vt_bw_write")) ||
        (e = cu->cuModuleGetFunction(&g->k_copy, g->mod, "vt_bw_copy")) ||
        (e = cu->cuModuleGetFunction(&g->k_triad, g->mod, "vt_bw_triad")))
        return e;
    return VT_CUDA_SUCCESS;
}

/* Grid = SM count x resident blocks per SM (the smallest over the four kernels, from the
 * occupancy calculator, else max threads per SM / block), so every SM is full. */
static void size_grid(struct gpu *g)
{
    struct cuda_api *cu = &g->cu;
    g->block = 256;
    int per_sm = 0;
    CUfunction fs[] = {g->k_read, g->k_write, g->k_copy, g->k_triad};
    if (cu->cuOccupancyMaxActiveBlocksPerMultiprocessor) {
        for (int i = 0; i < 4; i++) {
            int nb = 0;
            if (cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fs[i], (int)g->block, 0) || nb <= 0) {
                per_sm = 0;
                break;
            }
            if (per_sm == 0 || nb < per_sm) per_sm = nb;
        }
    }
    if (per_sm <= 0) {
        int tpsm = 0;
        cu->cuDeviceGetAttribute(&tpsm, VT_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, g->dev);
        per_sm = tpsm >= (int)g->block ? tpsm / (int)g->block : 4;
    }
    int sms = g->r->gpu.sm_count > 0 ? g->r->gpu.sm_count : 1;
    g->grid = (unsigned)(sms * per_sm);
    unsigned long long need = (g->n4 + g->block - 1) / g->block;   /* no more blocks than work */
    if (need < g->grid) g->grid = need ? (unsigned)need : 1;
    g->r->gpu.grid = (int)g->grid;
    g->r->gpu.block = (int)g->block;
}

static void read_facts(struct gpu *g)
{
    struct cuda_api *cu = &g->cu;
    struct vt_bw_gpu *G = &g->r->gpu;
    G->present = 1;
    if (cu->cuDeviceGetName(G->name, (int)sizeof G->name, g->dev)) snprintf(G->name, sizeof G->name, "unknown");
    G->name[sizeof G->name - 1] = '\0';
    G->sim = strcasestr(G->name, "simulated") != NULL;
    cu->cuDeviceGetAttribute(&G->sm_count, VT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->dev);
    cu->cuDeviceGetAttribute(&G->mem_clock_khz, VT_CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, g->dev);
    cu->cuDeviceGetAttribute(&G->bus_width_bits, VT_CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, g->dev);
    cu->cuDeviceGetAttribute(&G->l2_bytes, VT_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, g->dev);
    cu->cuDeviceGetAttribute(&G->cc_major, VT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g->dev);
    cu->cuDeviceGetAttribute(&G->cc_minor, VT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g->dev);
    G->theoretical_gbps = vt_bw_vram_peak_gbps(G->mem_clock_khz, G->bus_width_bits);
    if (cu->cuDeviceTotalMem_v2) cu->cuDeviceTotalMem_v2(&G->total_mem, g->dev);
    char bus[64] = "";
    if (cu->cuDeviceGetPCIBusId && !cu->cuDeviceGetPCIBusId(bus, (int)sizeof bus, g->dev)) {
        bus[sizeof bus - 1] = '\0';
        if (vt_bw_pcie_normalize_busid(bus, G->pci_bus_id, sizeof G->pci_bus_id) < 0) G->pci_bus_id[0] = '\0';
    }
}

/* On a real GPU: the read kernel's per-block sums must add up to n (a[] = 1) and triad must have
 * left a[] = 2 + 0.4 x 1. Returns 0 or -1 (note set). */
static int verify(struct gpu *g)
{
    struct cuda_api *cu = &g->cu;
    size_t nout = g->grid;
    float *sums = malloc(nout * sizeof *sums);
    float ends[2] = {0, 0};
    int rc = -1;
    if (!sums) return -1;
    CUresult e = cu->cuMemcpyDtoHAsync_v2(sums, g->out, nout * sizeof *sums, g->stream);
    if (!e) e = cu->cuMemcpyDtoHAsync_v2(&ends[0], g->a, sizeof(float), g->stream);
    if (!e) e = cu->cuMemcpyDtoHAsync_v2(&ends[1], g->a + g->n4 * 16 - sizeof(float), sizeof(float), g->stream);
    if (!e) e = cu->cuStreamSynchronize(g->stream);
    if (!e) {
        double total = 0;
        for (size_t i = 0; i < nout; i++) total += sums[i];
        double want = (double)g->n4 * 4.0;
        if (total < want * 0.999 || total > want * 1.001)
            vt_bw_note(g->r, "vram_read kernel result wrong (sum %.0f, want %.0f)", total, want);
        else if (ends[0] < 2.399f || ends[0] > 2.401f || ends[1] < 2.399f || ends[1] > 2.401f)
            vt_bw_note(g->r, "vram_triad kernel result wrong (a[0] = %g, a[n-1] = %g, want 2.4)",
                       (double)ends[0], (double)ends[1]);
        else
            rc = 0;
    } else {
        char eb[160];
        vt_bw_note(g->r, "reading kernel results back failed: %s", err_name(cu, e, eb, sizeof eb));
    }
    free(sums);
    return rc;
}

static size_t avail_host_bytes(void)
{
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : (size_t)1 << 32;
}

int vt_bw_gpu_measure(const struct vt_bw_opts *o, struct vt_bw_report *r)
{
    struct gpu *g = calloc(1, sizeof *g);
    if (!g) { vt_bw_note(r, "out of memory"); return -1; }
    g->r = r;
    struct cuda_api *cu = &g->cu;
    char eb[160];
    int rc = 0, ctx = 0;
    CUresult e;
    if (cuda_load(cu, r)) { rc = 1; goto out; }
    if ((e = cu->cuInit(0))) {
        vt_bw_note(r, "no CUDA GPU (cuInit failed: %s); GPU rows skipped", err_name(cu, e, eb, sizeof eb));
        rc = 1; goto out;
    }
    int count = 0;
    if (cu->cuDeviceGetCount(&count) != VT_CUDA_SUCCESS || count <= 0) {
        vt_bw_note(r, "no CUDA GPU (no CUDA devices); GPU rows skipped");
        rc = 1; goto out;
    }
    if (o->device >= count) {
        vt_bw_note(r, "--device %d out of range (%d CUDA device%s)", o->device, count, count == 1 ? "" : "s");
        rc = 2; goto out;
    }
    if ((e = cu->cuDeviceGet(&g->dev, o->device))) goto cuda_fail;
    read_facts(g);
    const int sim = r->gpu.sim;
    if ((e = cu->cuDevicePrimaryCtxRetain(&g->ctx, g->dev))) goto cuda_fail;
    ctx = 1;
    if ((e = cu->cuCtxSetCurrent(g->ctx))) goto cuda_fail;
    if ((e = cu->cuStreamCreate(&g->stream, 0))) goto cuda_fail;
    if ((e = cu->cuEventCreate(&g->ev0, 0)) || (e = cu->cuEventCreate(&g->ev1, 0))) goto cuda_fail;

    /* Three arrays must fit in 90% of free device memory; copies use host buffers of the same
     * size, capped to a quarter of the free host memory each. */
    g->size = o->size & ~(size_t)15;
    size_t dfree = 0, dtotal = 0;
    if (cu->cuMemGetInfo_v2 && !cu->cuMemGetInfo_v2(&dfree, &dtotal) && dfree > 0) {
        size_t cap = (dfree / 10 * 9 / 3) & ~(((size_t)1 << 20) - 1);
        if (cap < g->size) {
            vt_bw_note(r, "array size capped to %zu MiB to fit in free device memory", cap >> 20);
            g->size = cap;
        }
    }
    if (g->size < 4096) { vt_bw_note(r, "not enough free device memory"); rc = -1; goto out; }
    g->copy_size = g->size;
    size_t hcap = avail_host_bytes() / 4 & ~(size_t)4095;
    if (hcap < g->copy_size && hcap >= ((size_t)1 << 20)) g->copy_size = hcap;
    g->n4 = g->size / 16;
    if ((e = cu->cuMemAlloc_v2(&g->a, g->size)) || (e = cu->cuMemAlloc_v2(&g->b, g->size)) ||
        (e = cu->cuMemAlloc_v2(&g->c, g->size)))
        goto cuda_fail;

    /* Copies: pageable (malloc, touched) and pinned (cuMemAllocHost). */
    g->pageable = malloc(g->copy_size);
    if (!g->pageable) { vt_bw_note(r, "cannot allocate %zu bytes of host memory", g->copy_size); rc = -1; goto out; }
    memset(g->pageable, 1, g->copy_size);
    if (cu->cuMemAllocHost_v2 && !cu->cuMemAllocHost_v2(&g->pinned, g->copy_size))
        memset(g->pinned, 1, g->copy_size);
    else {
        g->pinned = NULL;
        vt_bw_note(r, "cuMemAllocHost failed; pinned copy rows skipped");
    }
    if (measure(g, o, H2D_PAGEABLE, g->copy_size, sim)) rc = -1;
    if (g->pinned && measure(g, o, H2D_PINNED, g->copy_size, sim)) rc = -1;
    if (measure(g, o, D2H_PAGEABLE, g->copy_size, sim)) rc = -1;
    if (g->pinned && measure(g, o, D2H_PINNED, g->copy_size, sim)) rc = -1;
    /* The link has just been busy: now current_link_* shows the trained speed, not an idle one. */
    if (r->gpu.pci_bus_id[0])
        vt_bw_pcie_read(o->sysfs_root, r->gpu.pci_bus_id, 1, &r->pcie);
    if (measure(g, o, D2D, 2ull * g->size, sim)) rc = -1;

    /* Kernels. The simulated device does not run them: rows measured there are marked simulated. */
    char log[512];
    if ((e = load_kernels(g, log, sizeof log))) {
        vt_bw_note(r, "%s: loading the PTX kernels failed (%s%s%s); kernel rows skipped",
                   sim ? "simulated device" : "GPU", err_name(cu, e, eb, sizeof eb), log[0] ? ": " : "", log);
        if (!sim) rc = -1;
        goto out;
    }
    size_grid(g);
    if ((e = cu->cuMemAlloc_v2(&g->out, (size_t)g->grid * sizeof(float)))) goto cuda_fail;
    {   /* a = 1, b = 2, c = 0.5 */
        float va = 1.0f, vb = 2.0f, vc = 0.5f;
        void *pa[] = {&g->a, &va, &g->n4}, *pb[] = {&g->b, &vb, &g->n4}, *pc[] = {&g->c, &vc, &g->n4};
        if ((e = launch(g, g->k_write, pa)) || (e = launch(g, g->k_write, pb)) ||
            (e = launch(g, g->k_write, pc)) || (e = cu->cuStreamSynchronize(g->stream)))
            goto cuda_fail;
    }
    int kfail = 0;
    if (measure(g, o, K_READ, g->size, sim)) kfail = 1;
    if (measure(g, o, K_WRITE, g->size, sim)) kfail = 1;
    if (measure(g, o, K_COPY, 2ull * g->size, sim)) kfail = 1;
    if (measure(g, o, K_TRIAD, 3ull * g->size, sim)) kfail = 1;
    if (kfail || (!sim && verify(g))) rc = -1;
    goto out;

cuda_fail:
    vt_bw_note(r, "GPU measurement failed: %s", err_name(cu, e, eb, sizeof eb));
    rc = -1;
out:
    if (cu->handle) {
        if (g->mod && cu->cuModuleUnload) cu->cuModuleUnload(g->mod);
        if (g->a) cu->cuMemFree_v2(g->a);
        if (g->b) cu->cuMemFree_v2(g->b);
        if (g->c) cu->cuMemFree_v2(g->c);
        if (g->out) cu->cuMemFree_v2(g->out);
        if (g->pinned && cu->cuMemFreeHost) cu->cuMemFreeHost(g->pinned);
        if (g->ev0 && cu->cuEventDestroy_v2) cu->cuEventDestroy_v2(g->ev0);
        if (g->ev1 && cu->cuEventDestroy_v2) cu->cuEventDestroy_v2(g->ev1);
        if (g->stream && cu->cuStreamDestroy_v2) cu->cuStreamDestroy_v2(g->stream);
        if (ctx && cu->cuDevicePrimaryCtxRelease_v2) cu->cuDevicePrimaryCtxRelease_v2(g->dev);
        /* libcuda.so.1 stays loaded: unloading a driver with live threads is not safe. */
    }
    free(g->pageable);
    free(g);
    return rc;
}
