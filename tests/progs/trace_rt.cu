// trace_rt.cu - runtime-API program for the tracer's end-to-end tests (tests/cases/trace_*.sh,
// check_*.sh). Usage: trace_rt MODE...; each mode runs in order and prints what it did, so the
// case scripts compare the trace with the program's own view:
//   alloc ADDR SIZE | free ADDR | copy DIR SIZE DST SRC | launch MANGLED | rc NAME VALUE
//   rss_file_kb=N (mode many: the process's RssFile after a ~100 MB trace)
//   expect KIND SEVERITY KERNEL ARG OFFSET VALUE   (one line per finding the tracer must report;
//                                                   "-" where the field does not apply)
// A launch with a bad pointer makes the simulated device's context sticky-fail (700), so each
// such mode is meant to run last (or alone) in its process.
// Built in several variants (mk/trace_tests.mk): default, -D__NV_LEGACY_LAUNCH,
// --compress-mode=none/size/speed. Also the source of the driver tests' PTX/fatbin images.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <execinfo.h>
#include <sys/mman.h>

struct S { int n; float *p; };          // p at byte 8
struct Two { int a, b; };               // 8 bytes of small integers

__global__ void k_ptr(float *d, int n) { if (d && n > 0) d[0] = 1.0f; }
__global__ void k_struct(int a, S s) { if (s.p) s.p[0] = (float)a; }
__global__ void k_scalars(int a, int b, double d, float f, size_t z, long l, Two t, size_t big, double zero, long neg)
{
    if (a + b + d + f + z + l + t.a + t.b + big + zero + neg == 12345.0) a = 0;
}
template <typename T, int N> __global__ void k_tmpl(T *p, T v) { if (p) p[0] = v * N; }
extern "C" __global__ void drv_ptr(float *p, int n) { if (p && n > 0) p[0] = 2.0f; }
extern "C" __global__ void drv_struct(int a, S s) { if (s.p) s.p[0] = (float)a; }

#define PTR "_Z5k_ptrPfi"
#define STRUCT "_Z8k_structi1S"
#define TMPL "_Z6k_tmplIfLi4EEvPT_S0_"

static void expect(const char *kind, const char *sev, const char *k, int arg, int off, const void *v)
{
    if (k) printf("expect %s %s %s %d %d %p\n", kind, sev, k, arg, off, v);
    else printf("expect %s %s - - - %p\n", kind, sev, v);
}
static void *dmalloc(size_t n)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, n);
    if (e != cudaSuccess) { printf("rc cudaMalloc %d\n", (int)e); exit(3); }
    printf("alloc %p %zu\n", p, n);
    return p;
}
static void dfree(void *p)
{
    printf("rc cudaFree %d\n", (int)cudaFree(p));
    printf("free %p\n", p);
}
static void launched(const char *name, cudaError_t e)
{
    printf("launch %s\n", name);
    printf("rc launch %d\n", (int)e);
    fflush(stdout);
}

// mode deep: a cudaMalloc 30 calls below main. bottom() prints glibc's own backtrace() of the
// same stack from bottom()'s return address on ("callers A1 A2 ...", the compiler's
// __builtin_return_address(0) first: a sanitizer's backtrace interceptor adds a frame above it):
// the trace's backtrace, from its second frame on, must be the same addresses.
static __attribute__((noinline)) int bottom(void)
{
    void *p = NULL, *g[64], *ret = __builtin_return_address(0);
    int rc = (int)cudaMalloc(&p, 4096);
    int n = backtrace(g, 64), i = 0;
    while (i < n && g[i] != ret) i++;
    printf("rc deep %d\nalloc %p 4096\ncallers", rc, p);
    for (; i < n; i++) printf(" %p", g[i]);
    printf("\n");
    return rc;
}
static __attribute__((noinline)) int deep(int k)
{
    int r = k ? deep(k - 1) : bottom();
    __asm__ volatile("" ::: "memory"); // work after the call: no tail call, every level keeps its frame
    return r;
}

static int mode(const char *m)
{
    const size_t mib = 1 << 20;
    static float stack_sink;
    if (!strcmp(m, "basic")) { // allocations, copies, launches, frees: each exactly once
        unsigned char *h = (unsigned char *)malloc(mib);
        memset(h, 7, mib);
        void *a = dmalloc(mib), *b = dmalloc(4096);
        printf("rc memcpy %d\n", (int)cudaMemcpy(a, h, mib, cudaMemcpyHostToDevice));
        printf("copy h2d %zu %p %p\n", mib, a, (void *)h);
        printf("rc memcpy %d\n", (int)cudaMemcpy(b, a, 4096, cudaMemcpyDeviceToDevice));
        printf("copy d2d %d %p %p\n", 4096, b, a);
        printf("rc memcpy %d\n", (int)cudaMemcpy(h, b, 1000, cudaMemcpyDeviceToHost));
        printf("copy d2h %d %p %p\n", 1000, (void *)h, b);
        printf("rc memcpy %d\n", (int)cudaMemcpy(h + 4096, a, 512, cudaMemcpyDefault));
        printf("copy d2h %d %p %p\n", 512, (void *)(h + 4096), a);
        k_ptr<<<2, 64>>>((float *)a, 5);
        launched(PTR, cudaGetLastError());
        k_tmpl<float, 4><<<1, 32>>>((float *)b, 2.0f);
        launched(TMPL, cudaGetLastError());
        printf("rc sync %d\n", (int)cudaDeviceSynchronize());
        dfree(a);
        dfree(b);
        free(h);
        return 0;
    }
    if (!strcmp(m, "deep")) return deep(30);
    if (!strcmp(m, "pitched")) { // 2D copies: each record carries the rectangle and both pitches
        void *d = NULL;
        size_t pitch = 0;
        printf("rc mallocpitch %d\n", (int)cudaMallocPitch(&d, &pitch, 100, 3));
        unsigned char *h = (unsigned char *)calloc(3, 128);
        printf("rc memcpy2d %d\n", (int)cudaMemcpy2D(d, pitch, h, 128, 100, 3, cudaMemcpyHostToDevice));
        printf("copy2d h2d size 300 w 100 h 3 dpitch %zu spitch 128 async false\n", pitch);
        cudaStream_t st;
        cudaStreamCreate(&st);
        printf("rc memcpy2dasync %d\n", (int)cudaMemcpy2DAsync(h, 100, d, pitch, 100, 2, cudaMemcpyDeviceToHost, st));
        printf("copy2d d2h size 200 w 100 h 2 dpitch 100 spitch %zu async true\n", pitch);
        // the same rectangle as a graph's copy node (cudaGraphAddMemcpyNode, cudaMemcpy3DParms of
        // depth 1), its graph launched once on the stream: the launch copies it as cudaMemcpy2D does
        cudaGraph_t g;
        cudaGraphExec_t ge;
        cudaGraphNode_t node;
        cudaMemcpy3DParms c3 = {};
        void *ph = NULL;                        // (pinned: a graph's copies are asynchronous)
        cudaMallocHost(&ph, 3 * 128);
        c3.srcPtr = make_cudaPitchedPtr(ph, 128, 100, 3);
        c3.dstPtr = make_cudaPitchedPtr(d, pitch, 100, 3);
        c3.extent = make_cudaExtent(100, 3, 1);
        c3.kind = cudaMemcpyHostToDevice;
        int grc = (int)cudaGraphCreate(&g, 0);
        if (!grc) grc = (int)cudaGraphAddMemcpyNode(&node, g, NULL, 0, &c3);
        if (!grc) grc = (int)cudaGraphInstantiate(&ge, g, 0);
        if (!grc) grc = (int)cudaGraphLaunch(ge, st);
        printf("rc graph2d %d\n", grc);
        // recorded when the node is made and when the launch copies it
        printf("graph2d cudaGraphAddMemcpyNode h2d size 300 w 100 h 3 dpitch %zu spitch 128\n", pitch);
        printf("graph2d cudaGraphLaunch h2d size 300 w 100 h 3 dpitch %zu spitch 128\n", pitch);
        // cudaMalloc3D: pitch x height x depth bytes, rows of the pitch the runtime chose
        // (cudaPitchedPtr.pitch >= the extent's width)
        cudaPitchedPtr pp = {};
        printf("rc malloc3d %d\n", (int)cudaMalloc3D(&pp, make_cudaExtent(100, 3, 2)));
        printf("alloc3d %p %zu pitch %zu width 100 rows 6\n", pp.ptr, pp.pitch * 3 * 2, pp.pitch);
        // a peer copy on one device: a device-to-device copy on the stream, from device 0
        printf("rc peerasync %d\n", (int)cudaMemcpyPeerAsync(pp.ptr, 0, d, 0, 64, st));
        printf("peer d2d 64 %p %p src_dev 0 kind 3 async true stream %p\n", pp.ptr, d, (void *)st);
        cudaStreamSynchronize(st);
        cudaStreamDestroy(st);
        cudaFree(pp.ptr);
        cudaFree(d);
        free(h);
        return 0;
    }
    if (!strcmp(m, "rc")) { // return codes pass through untouched
        void *p = NULL;
        printf("rc cudaMalloc %d\n", (int)cudaMalloc(&p, 256));
        printf("rc cudaFree_bad %d\n", (int)cudaFree((char *)p + 8));
        printf("rc cudaMemcpy_bad %d\n", (int)cudaMemcpy(&p, &p, 8, cudaMemcpyHostToDevice));
        cudaGetLastError();
        printf("rc cudaFree %d\n", (int)cudaFree(p));
        return 0;
    }
    if (!strcmp(m, "oom")) {
        void *p = NULL;
        size_t n = (size_t)1 << 40;
        printf("rc oom %d\n", (int)cudaMalloc(&p, n));
        printf("oom %zu\n", n);
        cudaGetLastError();
        dmalloc(4096); // still works afterwards; leaked on purpose
        return 0;
    }
    if (!strcmp(m, "clean")) { // nothing here may produce a finding
        float *d = (float *)dmalloc(4096), *pin, *man;
        cudaMallocHost(&pin, 4096);
        cudaMallocManaged(&man, 4096);
        float *reg = (float *)malloc(8192);
        cudaHostRegister(reg, 8192, 0);
        k_ptr<<<1, 1>>>(d, 1);
        k_ptr<<<1, 1>>>(d + 100, 1);       // offset inside its allocation
        k_ptr<<<1, 1>>>(d + 1023, 1);      // last element
        k_ptr<<<1, 1>>>(pin, 1);
        k_ptr<<<1, 1>>>(pin + 7, 1);
        k_ptr<<<1, 1>>>(man, 1);
        k_ptr<<<1, 1>>>(reg + 3, 1);
        k_ptr<<<1, 1>>>(NULL, 0);
        S s;
        memset(&s, 0, sizeof s);
        s.n = 3; s.p = d + 4;
        k_struct<<<1, 1>>>(1, s);
        s.p = man;
        k_struct<<<1, 1>>>(2, s);
        Two t = {1, 2};
        k_scalars<<<1, 1>>>(1, 2, 3.5, 1.5f, mib, 0x200000001l, t, (size_t)1 << 40, 0.0, -1);
        k_scalars<<<1, 1>>>(0, 65535, 1e300, -2.0f, 4096, 4096, t, (size_t)1 << 20, 1e-300, 1l << 20);
        k_tmpl<float, 4><<<1, 1>>>(d, 1.0f);
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(1); cfg.blockDim = dim3(1);
        float *ap = d + 8; int an = 2;
        void *args[] = {&ap, &an};
        printf("rc exc %d\n", (int)cudaLaunchKernelExC(&cfg, (const void *)k_ptr, args));
        cudaMemcpy(d + 512, reg, 2048, cudaMemcpyHostToDevice);  // in bounds, at an offset
        cudaMemset(d + 1000, 0, 96);                              // up to the last byte
        printf("rc sync %d\n", (int)cudaDeviceSynchronize());
        cudaHostUnregister(reg);
        free(reg);
        cudaFreeHost(pin);
        cudaFree(man);
        dfree(d);
        return 0;
    }
    float *h = (float *)malloc(65536); // brk heap (below the mmap threshold)
    if (!strcmp(m, "host_malloc")) {
        expect("host_pointer", "error", PTR, 0, 0, h);
        k_ptr<<<1, 32>>>(h, 4);
        launched(PTR, cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "host_stack")) {
        float local[16];
        local[0] = stack_sink;
        expect("host_pointer", "error", PTR, 0, 0, local);
        k_ptr<<<1, 32>>>(local, 4);
        launched(PTR, cudaGetLastError());
        stack_sink = local[0];
        return 0;
    }
    if (!strcmp(m, "host_mmap")) {
        float *mm = (float *)mmap(NULL, mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        expect("host_pointer", "error", PTR, 0, 0, mm);
        k_ptr<<<1, 32>>>(mm, 4);
        launched(PTR, cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "host_offset")) {
        expect("host_pointer", "error", PTR, 0, 0, h + 5);
        k_ptr<<<1, 32>>>(h + 5, 4);
        launched(PTR, cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "host_struct")) {
        S s;
        memset(&s, 0, sizeof s);
        s.n = 7; s.p = h;
        expect("host_pointer", "error", STRUCT, 1, 8, h);
        k_struct<<<1, 1>>>(3, s);
        launched(STRUCT, cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "host_tmpl")) {
        expect("host_pointer", "error", TMPL, 0, 0, h);
        k_tmpl<float, 4><<<1, 1>>>(h, 1.0f);
        launched(TMPL, cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "host_exc")) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(1); cfg.blockDim = dim3(1);
        int an = 2;
        void *args[] = {&h, &an};
        expect("host_pointer", "error", PTR, 0, 0, h);
        cudaError_t e = cudaLaunchKernelExC(&cfg, (const void *)k_ptr, args);
        launched(PTR, e);
        return 0;
    }
    if (!strcmp(m, "freed")) {
        float *f = (float *)dmalloc(4096);
        dfree(f);
        expect("use_after_free", "error", PTR, 0, 0, f + 16);
        k_ptr<<<1, 1>>>(f + 16, 1);
        launched(PTR, cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "freed_cached")) { // the per-thread live-range cache must drop a range once freed
        float *f = (float *)dmalloc(4096), *g = (float *)dmalloc(64 << 20);
        k_ptr<<<1, 1>>>(f + 16, 1); // both cached as live: no finding
        launched(PTR, cudaGetLastError());
        k_ptr<<<1, 1>>>(g + 16, 1);
        launched(PTR, cudaGetLastError());
        dfree(f);
        expect("use_after_free", "error", PTR, 0, 0, f + 16);
        k_ptr<<<1, 1>>>(f + 16, 1);
        launched(PTR, cudaGetLastError());
        k_ptr<<<1, 1>>>(g + 16, 1); // another range, still live: still no finding
        launched(PTR, cudaGetLastError());
        dfree(g);
        return 0;
    }
    if (!strcmp(m, "oob_end") || !strcmp(m, "between")) { // a(1000) b(1000): a+1000 just past, a+1008 between
        char *a = (char *)dmalloc(1000), *b = (char *)dmalloc(1000);
        char *v = a + (m[0] == 'o' ? 1000 : 1008);
        printf("near %p\n", a);
        // a + 1000 is the legal one-past-the-end pointer of [a, a + 1000): no finding
        if (m[0] == 'b') expect("oob_pointer", "warning", PTR, 0, 0, v);
        k_ptr<<<1, 1>>>((float *)v, 1);
        launched(PTR, cudaGetLastError());
        dfree(a);
        dfree(b);
        return 0;
    }
    if (!strcmp(m, "copies")) { // copy/set/free findings (no launch: the context stays healthy)
        char *d = (char *)dmalloc(4096);
        char *hb = (char *)malloc(8192);
        memset(hb, 1, 8192);
        expect("oob_copy", "error", NULL, 0, 0, d);
        printf("rc oob_memcpy %d\n", (int)cudaMemcpy(d, hb, 8192, cudaMemcpyHostToDevice));
        expect("oob_copy", "error", NULL, 0, 0, d + 2048);
        printf("rc oob_memcpy_src %d\n", (int)cudaMemcpy(hb, d + 2048, 4096, cudaMemcpyDeviceToHost));
        expect("oob_copy", "error", NULL, 0, 0, d + 4000);
        printf("rc oob_memset %d\n", (int)cudaMemset(d + 4000, 0, 200));
        expect("direction_mismatch", "error", NULL, 0, 0, d);
        printf("rc mismatch %d\n", (int)cudaMemcpy(d, hb, 64, cudaMemcpyDeviceToHost));
        cudaGetLastError();
        // both sides device memory: the kind contradicts the source (host-to-device) or the
        // destination (device-to-host); each finding names the source, the device side it saw
        expect("direction_mismatch", "error", NULL, 0, 0, d + 2048);
        printf("rc mismatch_src %d\n", (int)cudaMemcpy(d, d + 2048, 64, cudaMemcpyHostToDevice));
        cudaGetLastError();
        expect("direction_mismatch", "error", NULL, 0, 0, d + 1024);
        printf("rc mismatch_dst %d\n", (int)cudaMemcpy(d, d + 1024, 64, cudaMemcpyDeviceToHost));
        cudaGetLastError();
        char *z = (char *)dmalloc(256);
        dfree(z);
        expect("double_free", "error", NULL, 0, 0, z);
        dfree(z);
        cudaGetLastError();
        expect("invalid_free", "error", NULL, 0, 0, hb);
        printf("rc invalid_free %d\n", (int)cudaFree(hb));
        cudaGetLastError();
        dfree(d);
        free(hb);
        return 0;
    }
    if (!strcmp(m, "freed_copies")) { // copies and memsets touching freed device and managed memory
        char *d = (char *)dmalloc(4096), *live = (char *)dmalloc(4096), *mg = NULL;
        char *hb = (char *)malloc(4096);
        memset(hb, 1, 4096);
        cudaMallocManaged((void **)&mg, 8192);
        dfree(d);
        cudaFree(mg);
        expect("use_after_free", "error", NULL, 0, 0, d);        // the source: named, not "h2h"
        printf("rc d2h %d\n", (int)cudaMemcpy(hb, d, 64, cudaMemcpyDeviceToHost));
        cudaGetLastError();
        expect("use_after_free", "error", NULL, 0, 0, d + 64);   // the destination
        printf("rc h2d %d\n", (int)cudaMemcpy(d + 64, hb, 64, cudaMemcpyHostToDevice));
        cudaGetLastError();
        expect("use_after_free", "error", NULL, 0, 0, d + 16);   // a memset
        printf("rc memset %d\n", (int)cudaMemset(d + 16, 0, 32));
        cudaGetLastError();
        expect("use_after_free", "error", NULL, 0, 0, d);        // device to device: the freed side only
        printf("rc d2d %d\n", (int)cudaMemcpy(live, d, 128, cudaMemcpyDeviceToDevice));
        cudaGetLastError();
        expect("use_after_free", "error", NULL, 0, 0, mg + 100); // freed managed memory
        printf("rc managed %d\n", (int)cudaMemcpy(hb, mg + 100, 64, cudaMemcpyDefault));
        cudaGetLastError();
        // the same address allocated again is live memory: nothing to say
        char *again = (char *)dmalloc(4096);
        printf("rc again %d\n", (int)cudaMemcpy(again, hb, 64, cudaMemcpyHostToDevice));
        dfree(again);
        dfree(live);
        free(hb);
        return 0;
    }
    if (!strcmp(m, "leak")) {
        dmalloc(3 * mib);
        dmalloc(12345);
        void *f = dmalloc(4096);
        dfree(f);
        return 0;
    }
    if (!strcmp(m, "leak_kinds")) { // one allocation of each kind left live at exit
        void *d = dmalloc(4096), *mg = NULL, *pin = NULL, *as = NULL;
        cudaMallocManaged(&mg, mib);
        cudaMallocHost(&pin, 8192);
        cudaMallocAsync(&as, 65536, 0);
        cudaStreamSynchronize(0);
        printf("leaked %p %p %p %p\n", d, mg, pin, as);
        return 0;
    }
    if (!strcmp(m, "configs")) { // 64 launch configurations of one kernel, launched in turn 5 times
        // (block 32 or 64 threads, 0 to 496 bytes of shared memory): each configuration's count,
        // folded or not, is its own ("config BLOCK SHMEM 5")
        float *d = (float *)dmalloc(4096);
        for (int round = 0; round < 5; round++)
            for (int i = 0; i < 64; i++) k_ptr<<<1, 32 + 32 * (i % 2), 16 * (i / 2)>>>(d, 1);
        cudaDeviceSynchronize();
        for (int i = 0; i < 64; i++) printf("config %d %d 5\n", 32 + 32 * (i % 2), 16 * (i / 2));
        dfree(d);
        return 0;
    }
    if (!strcmp(m, "many")) { // 600000 launches (~100 MB of trace), then this process's RssFile
        float *d = (float *)dmalloc(4096);
        for (int i = 0; i < 600000; i++) k_ptr<<<1, 1>>>(d, 1);
        cudaDeviceSynchronize();
        dfree(d);
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "RssFile:", 8)) printf("rss_file_kb=%ld\n", atol(line + 8));
        if (f) fclose(f);
        return 0;
    }
    fprintf(stderr, "trace_rt: unknown mode %s\n", m);
    return 2;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "exit=", 5)) return atoi(argv[i] + 5);
        rc = mode(argv[i]);
        if (rc) return rc;
        printf("done %s\n", argv[i]);
    }
    return rc;
}
