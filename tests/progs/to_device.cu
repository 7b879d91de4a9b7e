// to_device.cu - batches moved to the GPU the way PyTorch's tensor.to("cuda") does without
// pin_memory: cudaMemcpyAsync from pageable host memory on a stream, then a synchronisation of
// that stream (tests/cases/report_sites.sh). 8 batches of 4 MiB, all from the marked line: no
// copy is timed (asynchronous), so only a reference can say what pinning would gain.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const size_t n = 4 << 20;
    char *host = (char *)calloc(1, n), *dev = NULL;
    cudaStream_t s;
    int rc = cudaMalloc(&dev, n) | cudaStreamCreate(&s);
    for (int batch = 0; batch < 8; batch++) {
        rc |= cudaMemcpyAsync(dev, host, n, cudaMemcpyHostToDevice, s); // TO_DEVICE
        rc |= cudaStreamSynchronize(s);
    }
    printf("rc=%d\n", rc);
    cudaStreamDestroy(s);
    cudaFree(dev);
    free(host);
    return 0;
}
