// sim_symbols.cu - __device__ and __constant__ variables reached the usual ways (issue 46 slice 1):
// cudaMemcpyToSymbol / FromSymbol (sync and async), cudaGetSymbolAddress / Size, a kernel given
// the symbol's address, and the documented errors (tests/cases/sim_apis.sh). Prints KEY=VALUE.
#include <cstdio>
#include <cuda_runtime.h>

__device__ float table[64];       // 256 bytes
__constant__ int coeffs[4];       // 16 bytes

__global__ void scale(float *t, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) t[i] *= coeffs[0];
}

int main()
{
    size_t size = 0;
    int rc = (int)cudaGetSymbolSize(&size, table);
    printf("size_table=%d:%zu\n", rc, size);
    cudaGetSymbolSize(&size, coeffs);
    printf("size_coeffs=%zu\n", size);
    int h[4] = {3, 5, 7, 11}, back[4] = {0, 0, 0, 0};
    printf("to_symbol=%d\n", (int)cudaMemcpyToSymbol(coeffs, h, sizeof h));
    printf("from_symbol=%d\n", (int)cudaMemcpyFromSymbol(back, coeffs, sizeof back));
    printf("roundtrip=%d:%d:%d:%d\n", back[0], back[1], back[2], back[3]);
    // 2 ints at byte offset 8 (elements 2 and 3), read back from offset 8
    int two[2] = {13, 17}, got[2] = {0, 0};
    printf("to_offset=%d\n", (int)cudaMemcpyToSymbol(coeffs, two, sizeof two, 8));
    printf("from_offset=%d\n", (int)cudaMemcpyFromSymbol(got, coeffs, sizeof got, 8));
    printf("offset_values=%d:%d\n", got[0], got[1]);
    // past the end of the 16-byte variable: cudaErrorInvalidValue (1)
    printf("past_end=%d\n", (int)cudaMemcpyToSymbol(coeffs, h, sizeof h, 4));
    cudaGetLastError();
    // a copy into a symbol from the device side only: DeviceToHost is the wrong direction (21)
    printf("bad_direction=%d\n", (int)cudaMemcpyToSymbol(coeffs, h, sizeof h, 0, cudaMemcpyDeviceToHost));
    cudaGetLastError();
    // not a registered variable: cudaErrorInvalidSymbol (13)
    printf("not_symbol=%d\n", (int)cudaMemcpyToSymbol(h, h, sizeof h));
    cudaGetLastError();
    void *addr = nullptr;
    rc = (int)cudaGetSymbolAddress(&addr, table);
    printf("address=%d:%d\n", rc, addr != nullptr);
    cudaPointerAttributes a;
    cudaPointerGetAttributes(&a, addr);
    printf("address_type=%d\n", (int)a.type);
    // async, on a stream, then the kernel given the symbol's address: a live device address
    cudaStream_t s;
    cudaStreamCreate(&s);
    float ones[64];
    for (int i = 0; i < 64; i++) ones[i] = 1.0f;
    printf("to_symbol_async=%d\n", (int)cudaMemcpyToSymbolAsync(table, ones, sizeof ones, 0, cudaMemcpyHostToDevice, s));
    scale<<<1, 64, 0, s>>>((float *)addr, 64);
    printf("launch=%d\n", (int)cudaGetLastError());
    printf("sync=%d\n", (int)cudaStreamSynchronize(s));
    float out[64];
    printf("from_symbol_async=%d\n", (int)cudaMemcpyFromSymbolAsync(out, table, sizeof out, 0, cudaMemcpyDeviceToHost, s));
    cudaStreamSynchronize(s);
    printf("table0=%g\n", out[0]);  // kernels do not run on the simulated device: still 1
    return 0;
}
