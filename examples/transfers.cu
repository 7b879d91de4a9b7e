// transfers.cu - pageable vs pinned host<->device copies of 64 MiB, timed with CUDA events.
#include <cstdio>
#include <cstdlib>
#include <cstring>

static float time_copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a);
    for (int i = 0; i < 4; i++) cudaMemcpy(dst, src, n, kind);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms / 4;
}

static void report(const char *what, size_t n, float ms)
{
    printf("%-22s %8.3f ms  %7.2f GB/s\n", what, ms, ms > 0 ? n / (ms * 1e6) : 0.0);
}

int main()
{
    const size_t n = 64ull << 20;
    void *dev, *pinned;
    void *pageable = malloc(n);
    memset(pageable, 1, n);
    if (cudaMalloc(&dev, n) || cudaMallocHost(&pinned, n)) {
        printf("allocation failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    memset(pinned, 1, n);
    report("pageable host->device", n, time_copy(dev, pageable, n, cudaMemcpyHostToDevice));
    report("pageable device->host", n, time_copy(pageable, dev, n, cudaMemcpyDeviceToHost));
    report("pinned host->device", n, time_copy(dev, pinned, n, cudaMemcpyHostToDevice));
    report("pinned device->host", n, time_copy(pinned, dev, n, cudaMemcpyDeviceToHost));
    cudaError_t e = cudaDeviceSynchronize();
    cudaFreeHost(pinned);
    cudaFree(dev);
    free(pageable);
    return e == cudaSuccess ? 0 : 1;
}
