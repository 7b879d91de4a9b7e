// oom_two_gpus.cu - one process, two GPUs of 1 GiB (VRAMTRACE_SIM_DEVICES=2 VRAMTRACE_SIM_MEM=1G,
// tests/cases/report_oom_retry.sh): 900 MiB on device 0, 600 MiB on device 1, then 512 MiB on
// device 1 fails. Device 0's memory took none of device 1's room: only device 1's allocation
// holds what the failure lacked. Prints "rc=0 fail=2" (cudaErrorMemoryAllocation).
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
    printf("rc=%d fail=%d\n", rc, (int)fail);
    cudaFree(b);
    cudaSetDevice(0);
    cudaFree(a);
    return 0;
}
