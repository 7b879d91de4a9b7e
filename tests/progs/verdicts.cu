// verdicts.cu - the kind, severity and allocation of each finding (issue 33), one scenario per
// mode, written the way users write them. Each mode prints the findings the tracer must report,
// derived from what it does:
//   expect KIND SEVERITY KERNEL ARG OFFSET VALUE ALLOC_ADDR ALLOC_SIZE ALLOC_KIND
// (ALLOC_* "-" when the finding names no allocation), and "forget ..." for the finding expected
// when the freed-memory history is kept small (VRAMTRACE_FREED_HISTORY=64). The kernel touches
// its pointer only in a branch never taken: the device never faults, the tracer must still tell.
//   freed_many    a block freed before 1000 later frees in its region, then launched
//   freed_pinned  cudaMallocHost, cudaFreeHost, then launched
//   freed_managed cudaMallocManaged, cudaFree, then launched
//   past_freed    two adjacent blocks a, b freed; a + size(a) is b's first byte, b + size(b) is
//                 inside nothing
//   host_beside   a host page mapped right after a device block, as host and device mappings
//                 share one address range under UVA: host memory, not out of bounds
//   host_big      a 4 MiB malloc (glibc serves it with its own mmap): heap memory
//   host_big_merged  the same, with an anonymous mapping placed right below the chunk's so the
//                 kernel merges them into one /proc/self/maps line, and a pointer 1 MiB into it:
//                 still heap memory (the chunk is found by its header, not the mapping's start)
//   past_end      one past a block's end (legal), 256 bytes past it (a warning: still inside the
//                 page CUDA maps), 400 KiB past it (an error: memory no allocation covers)
//   free_host_dev cudaFreeHost of device memory, then the right cudaFree
//   free_dev_pin  cudaFree of pinned memory, then the right cudaFreeHost
//   free_offset   cudaFree(d + 16), then cudaFree(d)
//   reset         a block freed by cudaDeviceReset, then launched; a new block after the reset
//   other_device  device 1's memory launched on device 1 (fine), on device 0 without peer access
//                 (an error), then again after cudaDeviceEnablePeerAccess (fine), and once more
//                 after cudaDeviceDisablePeerAccess (the error again: "count wrong_device 2")
//   hmm_repeat    on a device with pageable memory access (HMM/ATS): one heap buffer launched
//                 20000 times, a stack buffer 3 times: "repeat KIND CLASS COUNT" per finding
//                 (optional argument "exit": leaves with _exit, no destructor runs)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda_runtime.h>

extern "C" __global__ void touch(const float *p, int n)
{
    if (n < 0) ((float *)p)[0] = 1.0f;
}

static unsigned long long u(const void *p) { return (unsigned long long)(uintptr_t)p; }

static void expect(const char *kind, const char *sev, const void *value, const void *alloc, size_t size,
                   const char *mem)
{
    printf("expect %s %s touch 0 0 0x%llx 0x%llx %zu %s\n", kind, sev, u(value), u(alloc), size, mem);
}

// A 4096-byte block at `block` freed first with wrong(at), then right(block): prints the finding
// the first call must produce and both calls' answers.
static void wrong_then_right_free(const char *kind, const char *mem, char *block, char *at,
                                  cudaError_t (*wrong)(void *), cudaError_t (*right)(void *))
{
    printf("expect %s error - - - 0x%llx 0x%llx 4096 %s\n", kind, u(at), u(block), mem);
    int r1 = wrong(at);
    int r2 = right(block);
    printf("frees %d %d\n", r1, r2);
}

static int freed_many(void)
{
    enum { N = 1000, SMALL = 256 };
    static float *bufs[N];
    for (int i = 0; i < N; i++) cudaMalloc(&bufs[i], SMALL);   // 256 KB: one 2 MiB region
    float *d, *guard;
    cudaMalloc(&d, 4096);
    cudaMalloc(&guard, 256);      // stays live, right after d
    cudaFree(d);
    for (int i = 0; i < N; i++) cudaFree(bufs[i]);   // 1000 frees after d's, none of them d again
    expect("use_after_free", "error", d, d, 4096, "device");
    // with a 64-range history d's free is forgotten: the nearest live block is the guard
    printf("forget oob_pointer warning touch 0 0 0x%llx 0x%llx 256 device\n", u(d), u(guard));
    touch<<<1, 32>>>(d, 1);
    return cudaDeviceSynchronize();
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "freed_many";
    int rc = 0;
    if (!strcmp(m, "freed_many")) {
        rc = freed_many();
    } else if (!strcmp(m, "freed_pinned")) {
        float *p;
        cudaMallocHost(&p, 4096);
        cudaFreeHost(p);
        expect("use_after_free", "error", p, p, 4096, "pinned");
        touch<<<1, 32>>>(p, 1);
        rc = cudaDeviceSynchronize();
    } else if (!strcmp(m, "freed_managed")) {
        float *p;
        cudaMallocManaged(&p, 4096);
        cudaFree(p);
        expect("use_after_free", "error", p, p, 4096, "managed");
        touch<<<1, 32>>>(p, 1);
        rc = cudaDeviceSynchronize();
    } else if (!strcmp(m, "past_freed")) {
        char *a, *b;
        cudaMalloc(&a, 4096);
        cudaMalloc(&b, 8192);
        if (b != a + 4096) { printf("layout: b is not right after a\n"); return 2; }
        cudaFree(a);
        cudaFree(b);
        expect("use_after_free", "error", a + 4096, b, 8192, "device");   // b's first byte, not a's end
        touch<<<1, 32>>>((float *)(a + 4096), 1);
        touch<<<1, 32>>>((float *)(b + 8192), 1);   // one past b: inside no block, nothing live near
        rc = cudaDeviceSynchronize();
    } else if (!strcmp(m, "host_beside")) {
        char *d;
        cudaMalloc(&d, 4096);
        // the page after d: unallocated device address space, where UVA may put a host mapping
        char *h = (char *)mmap(d + 4096, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (h != d + 4096) { printf("layout: no page after d\n"); return 2; }
        h[16] = 1;
        printf("expect host_pointer error touch 0 0 0x%llx - - -\n", u(h + 16));
        printf("class anon\n");
        touch<<<1, 32>>>((float *)(h + 16), 1);
        rc = cudaDeviceSynchronize();
    } else if (!strcmp(m, "host_big")) {
        char *h = (char *)malloc(4 << 20);
        memset(h, 1, 4 << 20);
        printf("expect host_pointer error touch 0 0 0x%llx - - -\n", u(h + 100));
        printf("class heap\n");
        touch<<<1, 32>>>((float *)(h + 100), 1);
        rc = cudaDeviceSynchronize();
    } else if (!strcmp(m, "host_big_merged")) {
        char *h = (char *)malloc(4 << 20);
        memset(h, 1, 4 << 20);
        char *chunk = h - 16, *below = chunk - (1 << 20);
        void *g = mmap(below, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        FILE *f = fopen("/proc/self/maps", "r");
        char line[512];
        int merged = 0;
        while (f && fgets(line, sizeof line, f)) {
            unsigned long long lo, hi;
            if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo == u(below) && hi > u(h))
                merged = 1;
        }
        if (f) fclose(f);
        printf("merged %d\n", g == below && merged);
        printf("expect host_pointer error touch 0 0 0x%llx - - -\n", u(h + (1 << 20)));
        printf("class heap\n");
        touch<<<1, 32>>>((float *)(h + (1 << 20)), 1);
        rc = cudaDeviceSynchronize();
    } else if (!strcmp(m, "past_end")) {
        char *d;
        cudaMalloc(&d, 4096);
        touch<<<1, 32>>>((float *)(d + 4096), 1);
        printf("expect oob_pointer warning touch 0 0 0x%llx 0x%llx 4096 device\n", u(d + 4096 + 256), u(d));
        touch<<<1, 32>>>((float *)(d + 4096 + 256), 1);
        printf("expect oob_pointer error touch 0 0 0x%llx 0x%llx 4096 device\n", u(d + 400 * 1024), u(d));
        touch<<<1, 32>>>((float *)(d + 400 * 1024), 1);
        rc = cudaDeviceSynchronize();
    } else if (!strcmp(m, "free_host_dev")) {
        char *d;
        cudaMalloc(&d, 4096);
        // CUDA: cudaErrorInvalidValue, nothing freed; then the right call frees it
        wrong_then_right_free("mismatched_free", "device", d, d, cudaFreeHost, cudaFree);
    } else if (!strcmp(m, "free_dev_pin")) {
        char *p;
        cudaMallocHost(&p, 4096);
        wrong_then_right_free("mismatched_free", "pinned", p, p, cudaFree, cudaFreeHost);
    } else if (!strcmp(m, "free_offset")) {
        char *d;
        cudaMalloc(&d, 4096);
        wrong_then_right_free("invalid_free", "device", d, d + 16, cudaFree, cudaFree);   // not its start
    } else if (!strcmp(m, "reset")) {
        float *d, *e;
        cudaMalloc(&d, 4096);
        cudaDeviceReset();                    // frees every allocation of the device
        expect("use_after_free", "error", d, d, 4096, "device");
        touch<<<1, 32>>>(d, 1);
        cudaMalloc(&e, 8192);                 // may reuse d's address: live, no finding
        touch<<<1, 32>>>(e, 1);
        rc = cudaDeviceSynchronize();
        cudaFree(e);
    } else if (!strcmp(m, "other_device")) {
        float *d1;
        cudaSetDevice(1);
        cudaMalloc(&d1, 4096);
        touch<<<1, 32>>>(d1, 1);              // its own device
        cudaSetDevice(0);
        expect("wrong_device", "error", d1, d1, 4096, "device");
        touch<<<1, 32>>>(d1, 1);              // device 0, no peer access
        int can = 0;
        cudaDeviceCanAccessPeer(&can, 0, 1);
        printf("can_access_peer %d enable %d\n", can, (int)cudaDeviceEnablePeerAccess(1, 0));
        touch<<<1, 32>>>(d1, 1);              // device 0, peer access enabled
        printf("disable %d\n", (int)cudaDeviceDisablePeerAccess(1));
        touch<<<1, 32>>>(d1, 1);              // device 0, peer access disabled again: the error again
        printf("count wrong_device 2\n");
        rc = cudaDeviceSynchronize();
    } else if (!strcmp(m, "hmm_repeat")) {
        enum { HEAP_LAUNCHES = 20000, STACK_LAUNCHES = 3 };
        int pageable = 0;
        cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0);
        printf("pageable_access %d\n", pageable);
        float *h = (float *)malloc(1024), on_stack[16] = { 0 };
        printf("expect host_pointer warning touch 0 0 0x%llx - - -\n", u(h));
        for (int i = 0; i < HEAP_LAUNCHES; i++) touch<<<1, 32>>>(h, 1);
        printf("expect host_pointer warning touch 0 0 0x%llx - - -\n", u(on_stack));
        for (int i = 0; i < STACK_LAUNCHES; i++) touch<<<1, 32>>>(on_stack, 1);
        rc = cudaDeviceSynchronize();
        printf("repeat host_pointer heap %d\nrepeat host_pointer stack %d\n", HEAP_LAUNCHES, STACK_LAUNCHES);
        free(h);
        if (argc > 2 && !strcmp(argv[2], "exit")) {
            printf("done %s %d\n", m, rc);
            fflush(stdout);
            _exit(0);
        }
    } else {
        fprintf(stderr, "verdicts: unknown mode %s\n", m);
        return 2;
    }
    printf("done %s %d\n", m, rc);
    return 0;
}
