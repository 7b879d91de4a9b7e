// oom_retry.cu - out of memory the way a caching allocator meets it (PyTorch's
// CUDACachingAllocator: on cudaErrorMemoryAllocation it clears the error, gives cached blocks back
// and calls cudaMalloc again with the same size). Run with VRAMTRACE_SIM_MEM=1G
// (tests/cases/report_oom_retry.sh). The marked lines are what the report must name:
//   CACHE:     three 300 MiB blocks, the allocator's cache (900 MiB of 1 GiB)
//   FIRST_TRY: 512 MiB fails (124 MiB free)
//   SECOND:    one block given back (600 MiB live), 512 MiB fails again
//   RETRY:     the whole cache given back (0 B live), 512 MiB succeeds: both failures recovered
//   FATAL:     2 GiB, more than the device holds, fails for good (512 MiB live)
// Prints "rc=0 big=1 huge=0" when every call did what the comments say.
#include <cuda_runtime.h>
#include <stdio.h>

static const size_t MiB = 1 << 20;

static void *raw_alloc(size_t n)
{
    void *p = NULL;
    if (cudaMalloc(&p, n) != cudaSuccess) { // RAW_ALLOC
        cudaGetLastError();                 // forgive the error, as the caching allocator does
        return NULL;
    }
    return p;
}

int main(void)
{
    void *cache[3];
    for (int i = 0; i < 3; i++) cache[i] = raw_alloc(300 * MiB); // CACHE
    void *big = raw_alloc(512 * MiB); // FIRST_TRY
    if (!big) {
        cudaFree(cache[0]);
        big = raw_alloc(512 * MiB); // SECOND
    }
    if (!big) {
        cudaFree(cache[1]);
        cudaFree(cache[2]);
        big = raw_alloc(512 * MiB); // RETRY
    }
    void *huge = raw_alloc(2048 * MiB); // FATAL
    cudaFree(big);
    printf("rc=%d big=%d huge=%d\n", cudaGetLastError(), big != NULL, huge != NULL);
    return 0;
}
