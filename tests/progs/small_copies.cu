// small_copies.cu - many small host-to-device copies (tests/cases/report_sites.sh): 200 copies of
// 4 KiB from one pinned buffer into consecutive slices of one device buffer, then one of 800 KiB
// (the same bytes in one call): the report's verdict says to batch them. Then 32 steps that each
// read one float back with a synchronous cudaMemcpy (a loss value per step): the verdict says
// each waits for the GPU.
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
    const size_t n = 4096, copies = 200;
    char *host = NULL, *dev = NULL;
    int rc = cudaMallocHost(&host, n * copies) | cudaMalloc(&dev, n * copies);
    for (size_t i = 0; i < copies; i++) rc |= cudaMemcpy(dev + i * n, host + i * n, n, cudaMemcpyHostToDevice); // SMALL_COPY
    rc |= cudaMemcpy(dev, host, n * copies, cudaMemcpyHostToDevice);
    float loss = 0, sum = 0;
    for (int step = 0; step < 32; step++) {
        rc |= cudaMemcpy(&loss, dev, sizeof loss, cudaMemcpyDeviceToHost); // LOSS_READ
        sum += loss;
    }
    printf("rc=%d sum=%g\n", rc, sum);
    cudaFree(dev);
    cudaFreeHost(host);
    return 0;
}
