// sim_basic.cu - exercises the simulated device through the runtime (tests/cases/sim_device.sh).
// Usage: sim_basic MODE; prints "key=value" lines the case script checks. Also valid on a GPU.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <vector>

struct Pair { float *p; int n; };
__global__ void k_ptr(float *d, int n) { if (d && n > 0) d[0] = 1.0f; }
__global__ void k_struct(int a, Pair s) { if (s.p) s.p[0] = (float)a; }

static int mode_roundtrip()
{
    const size_t n = 1 << 20;
    std::vector<unsigned char> h(n), back(n);
    for (size_t i = 0; i < n; i++) h[i] = (unsigned char)(i * 7 + 3);
    size_t f0, t0, f1, t1;
    cudaMemGetInfo(&f0, &t0);
    void *a, *b;
    cudaMalloc(&a, n);
    cudaMalloc(&b, n);
    cudaMemGetInfo(&f1, &t1);
    printf("meminfo_delta_ok=%d\n", f0 - f1 >= 2 * n && t0 == t1);
    cudaMemcpy(a, h.data(), n, cudaMemcpyHostToDevice);
    cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice);
    cudaMemcpy(back.data(), b, n, cudaMemcpyDefault);
    printf("roundtrip=%d\n", memcmp(h.data(), back.data(), n) == 0);
    cudaMemset(a, 0x5a, 100);
    cudaMemcpy(back.data(), a, 100, cudaMemcpyDeviceToHost);
    printf("memset=%d\n", back[0] == 0x5a && back[99] == 0x5a);
    cudaPointerAttributes at;
    cudaPointerGetAttributes(&at, a);
    printf("attr_device=%d\n", at.type == cudaMemoryTypeDevice);
    int local = 0;
    cudaError_t e = cudaPointerGetAttributes(&at, &local);
    printf("attr_unregistered=%d rc=%d\n", at.type == cudaMemoryTypeUnregistered, (int)e);
    void *pin, *man;
    cudaMallocHost(&pin, 4096);
    cudaMallocManaged(&man, 4096);
    cudaPointerGetAttributes(&at, pin);
    printf("attr_host=%d\n", at.type == cudaMemoryTypeHost);
    cudaPointerGetAttributes(&at, man);
    printf("attr_managed=%d\n", at.type == cudaMemoryTypeManaged);
    ((char *)man)[0] = 42;
    cudaMemcpy(back.data(), man, 1, cudaMemcpyDefault);
    printf("managed_host_visible=%d\n", back[0] == 42);
    void *reg = malloc(8192);
    printf("register=%d\n", (int)cudaHostRegister(reg, 8192, 0));
    cudaPointerGetAttributes(&at, reg);
    printf("attr_registered=%d\n", at.type == cudaMemoryTypeHost);
    cudaHostUnregister(reg);
    free(reg);
    // copying HostToDevice into a host pointer is invalid
    printf("bad_copy=%d\n", (int)cudaMemcpy(back.data(), h.data(), 16, cudaMemcpyHostToDevice));
    cudaGetLastError();
    cudaFree(a); cudaFree(b); cudaFreeHost(pin); cudaFree(man);
    size_t f2, t2;
    cudaMemGetInfo(&f2, &t2);
    printf("freed=%d\n", f2 == f0);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0); cudaEventCreate(&e1);
    cudaEventRecord(e0); cudaEventRecord(e1);
    float ms = -1;
    printf("elapsed=%d\n", cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms >= 0);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("cc=%d.%d warp=%d\n", p.major, p.minor, p.warpSize);
    printf("sync=%d\n", (int)cudaDeviceSynchronize());
    return 0;
}

static int mode_oom()
{
    std::vector<void *> v;
    const size_t chunk = 512ull << 20;
    cudaError_t e = cudaSuccess;
    while (v.size() < 1000) {
        void *p;
        e = cudaMalloc(&p, chunk);
        if (e != cudaSuccess) break;
        v.push_back(p);
    }
    printf("chunks=%zu err=%d\n", v.size(), (int)e);
    printf("last=%d\n", (int)cudaGetLastError());
    for (void *p : v) cudaFree(p);
    void *p;
    printf("after_free=%d\n", (int)cudaMalloc(&p, chunk));
    return 0;
}

static void report_launch(cudaError_t launch)
{
    printf("launch=%d\n", (int)launch);
    printf("sync=%d\n", (int)cudaDeviceSynchronize());
    void *p;
    printf("later=%d\n", (int)cudaMalloc(&p, 16));
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "roundtrip";
    if (!strcmp(m, "roundtrip")) return mode_roundtrip();
    if (!strcmp(m, "oom")) return mode_oom();
    if (!strcmp(m, "peer") || !strcmp(m, "nopeer")) { // device 1's memory in a device-0 kernel
        float *d1;
        cudaSetDevice(1);
        cudaMalloc(&d1, 4096);
        cudaSetDevice(0);
        if (m[0] == 'p') printf("enable=%d\n", (int)cudaDeviceEnablePeerAccess(1, 0));
        k_ptr<<<1, 32>>>(d1, 4);
        report_launch(cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "hostptr")) {
        float *h = (float *)malloc(1 << 20);
        k_ptr<<<1, 32>>>(h, 4);
        report_launch(cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "hoststruct")) {
        Pair s = {(float *)malloc(4096), 1};
        k_struct<<<1, 1>>>(3, s);
        report_launch(cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "devptr") || !strcmp(m, "pinned") || !strcmp(m, "managed")) {
        float *d;
        if (m[0] == 'd') cudaMalloc(&d, 4096);
        else if (m[0] == 'p') cudaMallocHost(&d, 4096);
        else cudaMallocManaged(&d, 4096);
        k_ptr<<<2, 64>>>(d, 4);
        Pair s = {d, 1};
        k_struct<<<1, 1>>>(3, s);
        report_launch(cudaGetLastError());
        return 0;
    }
    if (!strcmp(m, "paraminfo")) {
        size_t off = 0, sz = 0;
        cudaError_t e = cudaFuncGetParamInfo((const void *)k_struct, 1, &off, &sz);
        printf("rc=%d off=%zu size=%zu\n", (int)e, off, sz);
        e = cudaFuncGetParamInfo((const void *)k_struct, 2, &off, &sz);
        printf("past_end=%d\n", (int)e);
        return 0;
    }
    if (!strcmp(m, "devices")) {
        int n = 0;
        cudaGetDeviceCount(&n);
        printf("count=%d\n", n);
        printf("set1=%d\n", (int)cudaSetDevice(1));
        void *p = 0;
        cudaMalloc(&p, 1024);
        cudaPointerAttributes at;
        cudaPointerGetAttributes(&at, p);
        printf("dev_of_alloc=%d\n", at.device);
        printf("set_bad=%d\n", (int)cudaSetDevice(n));
        return 0;
    }
    if (!strcmp(m, "threads")) {
        pthread_t t[16];
        static int bad = 0;
        for (int i = 0; i < 16; i++)
            pthread_create(&t[i], 0, [](void *) -> void * {
                char buf[256], out[256];
                for (int j = 0; j < 200; j++) {
                    void *p;
                    if (cudaMalloc(&p, 256 + j)) { __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED); continue; }
                    memset(buf, j, sizeof buf);
                    cudaMemcpy(p, buf, sizeof buf, cudaMemcpyHostToDevice);
                    cudaMemcpy(out, p, sizeof out, cudaMemcpyDeviceToHost);
                    if (memcmp(buf, out, sizeof buf)) __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
                    cudaFree(p);
                }
                return nullptr;
            }, 0);
        for (int i = 0; i < 16; i++) pthread_join(t[i], 0);
        printf("thread_errors=%d\n", bad);
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
