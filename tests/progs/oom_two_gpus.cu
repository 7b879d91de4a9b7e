// oom_two_gpus.cu - one process, two GPUs of 1 GiB (VRAMTRACE_SIM_DEVICES=2 VRAMTRACE_SIM_MEM=1G,
// tests/cases/report_oom_retry.sh): 900 MiB on device 0, 600 MiB on device 1, then 512 MiB on
// device 1 fails. Device 0's memory took none of device 1's room: only device 1's allocation
// holds what the failure lacked. Then both allocations are freed and the 512 MiB tried again on
// device 1 (RETRY): it succeeds with 600 MiB less on device 1 (1500 MiB less in the process).
// Prints "rc=0 fail=2 retry=0" (cudaErrorMemoryAllocation, then success).
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
    const size_t MiB = 1 << 20;
    void *a = NULL, *b = NULL, *c = NULL;
    int rc = cudaSetDevice(0);
    rc |= cudaMalloc(&a, 900 * MiB); // ON_DEV0
    rc |= cudaSetDevice(1);
    rc |= cudaMalloc(&b, 600 * MiB); // ON_DEV1
    cudaError_t fail = cudaMalloc(&c, 512 * MiB); // DEV1_OOM
    cudaGetLastError();
    rc |= cudaFree(b);
    rc |= cudaSetDevice(0);
    rc |= cudaFree(a);
    rc |= cudaSetDevice(1);
    cudaError_t retry = cudaMalloc(&c, 512 * MiB); // RETRY
    rc |= cudaFree(c);
    printf("rc=%d fail=%d retry=%d\n", rc, (int)fail, (int)retry);
    return 0;
}
