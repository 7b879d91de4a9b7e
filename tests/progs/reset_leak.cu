// reset_leak.cu - memory the program never frees that a device reset releases (issue 50 slice 5):
// Compute Sanitizer calls it leaked; the report shows it on a line of its own beside the leaks.
// Usage: reset_leak rt|drv  (cudaDeviceReset, or cuDevicePrimaryCtxReset). The marked lines are
// what the report must name:
//   KEPT_A   1 MiB, never freed
//   KEPT_B   2 MiB, twice (a loop), never freed
//   FREED    4 KiB, freed before the reset: neither leaked nor released by the reset
//   MANAGED  64 KiB managed, never freed
//   LEAK     8 KiB allocated after the reset and never freed: a leak at exit
// Prints "rc=0" when every call succeeded.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const size_t MiB = 1 << 20;
    int drv = argc > 1 && !strcmp(argv[1], "drv"), bad = 0;
    void *a, *b[2], *f, *m, *l;
    bad |= cudaMalloc(&a, MiB) != cudaSuccess; // KEPT_A
    for (int i = 0; i < 2; i++)
        bad |= cudaMalloc(&b[i], 2 * MiB) != cudaSuccess; // KEPT_B
    bad |= cudaMalloc(&f, 4096) != cudaSuccess; // FREED
    bad |= cudaFree(f) != cudaSuccess;
    bad |= cudaMallocManaged(&m, 64 * 1024) != cudaSuccess; // MANAGED
    if (drv) { // the driver's entry point through the runtime, as a program without -lcuda gets it
        typedef CUresult (*reset_fn)(CUdevice);
        void *fn = NULL;
        cudaDriverEntryPointQueryResult q;
        bad |= cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxReset", &fn, 13000, cudaEnableDefault, &q) != cudaSuccess || !fn;
        bad |= !fn || ((reset_fn)fn)(0) != CUDA_SUCCESS;
    } else {
        bad |= cudaDeviceReset() != cudaSuccess;
    }
    bad |= cudaMalloc(&l, 8192) != cudaSuccess; // LEAK
    printf("rc=%d\n", bad);
    return 0;
}
