// item_loop.cu - a value read back every step the way PyTorch's .item() and .cpu() do it
// (at::cuda::memcpy_and_sync: cudaMemcpyAsync device-to-host on the current stream, then
// cudaStreamSynchronize of that stream), for tests/cases/report_sites.sh. The host waits for
// those copies as for cudaMemcpy; the marked lines and counts are what the report must find:
//   ITEM_PINNED:   24 steps: async copy into pinned memory, then its stream synchronised (24 waits)
//   ITEM_PAGEABLE: 20 steps: async copy into pageable memory, which CUDA returns from only when
//                  the copy is done (20 waits)
//   NO_WAIT:       40 async copies into pinned memory, one synchronisation after the loop: only
//                  the last copy is waited for (1: below the verdict's 16)
//   OTHER_STREAM:  20 async copies on stream s, each followed by a synchronisation of stream t:
//                  the host does not wait for them (0)
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
    float *dev = NULL, *pinned = NULL, pageable[64];
    cudaStream_t s, t;
    int rc = cudaMalloc(&dev, 64 * sizeof(float)) | cudaMallocHost(&pinned, 64 * sizeof(float));
    rc |= cudaStreamCreate(&s) | cudaStreamCreate(&t);
    rc |= cudaMemset(dev, 0, 64 * sizeof(float));
    for (int step = 0; step < 24; step++) {
        rc |= cudaMemcpyAsync(pinned, dev, sizeof(float), cudaMemcpyDeviceToHost, s); // ITEM_PINNED
        rc |= cudaStreamSynchronize(s);
    }
    for (int step = 0; step < 20; step++)
        rc |= cudaMemcpyAsync(pageable, dev, sizeof(float), cudaMemcpyDeviceToHost, s); // ITEM_PAGEABLE
    for (int step = 0; step < 40; step++)
        rc |= cudaMemcpyAsync(pinned + step, dev + step, sizeof(float), cudaMemcpyDeviceToHost, s); // NO_WAIT
    rc |= cudaStreamSynchronize(s);
    for (int step = 0; step < 20; step++) {
        rc |= cudaMemcpyAsync(pinned, dev, sizeof(float), cudaMemcpyDeviceToHost, s); // OTHER_STREAM
        rc |= cudaStreamSynchronize(t);
    }
    rc |= cudaStreamSynchronize(s);
    printf("rc=%d\n", rc);
    cudaStreamDestroy(s);
    cudaStreamDestroy(t);
    cudaFreeHost(pinned);
    cudaFree(dev);
    return 0;
}
