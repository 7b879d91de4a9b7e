// staged_copy.cu - device-to-device data moved through host memory (tests/cases/report_sites.sh,
// run with VRAMTRACE_SIM_DEVICES=2): 8 rounds of a 1 MiB d2h copy from a buffer on device 0 into a
// pinned host buffer, then an h2d copy of it into a buffer on device 1; a peer copy would not
// touch the host. A last h2d copy of other host memory to device 1 is not staged.
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
    const size_t n = 1 << 20;
    char *a = NULL, *b = NULL, *host = NULL, *other = NULL;
    int rc = cudaSetDevice(0) | cudaMalloc(&a, n) | cudaSetDevice(1) | cudaMalloc(&b, n);
    rc |= cudaMallocHost(&host, n) | cudaMallocHost(&other, n);
    for (int round = 0; round < 8; round++) {
        rc |= cudaMemcpy(host, a, n, cudaMemcpyDeviceToHost);
        rc |= cudaMemcpy(b, host, n, cudaMemcpyHostToDevice); // STAGED_H2D
    }
    rc |= cudaMemcpy(b, other, n, cudaMemcpyHostToDevice);
    printf("rc=%d\n", rc);
    cudaFreeHost(other);
    cudaFreeHost(host);
    cudaFree(b);
    cudaSetDevice(0);
    cudaFree(a);
    return 0;
}
