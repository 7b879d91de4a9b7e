// two_gpu_peaks.cu - one process filling two GPUs at different moments
// (VRAMTRACE_SIM_DEVICES=2, tests/cases/report_oom_retry.sh). Device 0 peaks at 800 MiB (A0 600 +
// B0 200) before B0 is freed; device 1 later peaks at 600 MiB (C1 500 + D1 100) before D1 is
// freed; E1 (50 MiB) then stays under that. The process peak, 1200 MiB, is A0 + C1 + D1: B0
// is already gone, so only each device's own peak says what filled it.
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
    const size_t MiB = 1 << 20;
    void *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
    int rc = cudaSetDevice(0);
    rc |= cudaMalloc(&a, 600 * MiB); // A0
    rc |= cudaMalloc(&b, 200 * MiB); // B0
    rc |= cudaFree(b);
    rc |= cudaSetDevice(1);
    rc |= cudaMalloc(&c, 500 * MiB); // C1
    rc |= cudaMalloc(&d, 100 * MiB); // D1
    rc |= cudaFree(d);
    rc |= cudaMalloc(&e, 50 * MiB); // E1
    rc |= cudaFree(c) | cudaFree(e);
    rc |= cudaSetDevice(0);
    rc |= cudaFree(a);
    printf("rc=%d\n", rc);
    return 0;
}
