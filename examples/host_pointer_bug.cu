// host_pointer_bug.cu - the classic bug: a kernel gets a host (malloc) pointer.
//   host_pointer_bug        launches my_kernel on a host buffer: the launch "succeeds", the next
//                           synchronisation reports cudaErrorIllegalAddress (700). Exit status 1.
//   host_pointer_bug fixed  the same work on cudaMalloc'ed memory with cudaMemcpy. Exit status 0.
// Runs on a real GPU and on the vramtrace simulated device alike.
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void my_kernel(float *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = d[i] * 2.0f + 1.0f;
}

int main(int argc, char **argv)
{
    const int n = 1 << 20;
    const int block = 256, grid = (n + block - 1) / block;
    float *h_data = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) h_data[i] = (float)i;

    if (argc > 1 && strcmp(argv[1], "fixed") == 0) {
        float *d_data;
        cudaMalloc(&d_data, n * sizeof(float));
        cudaMemcpy(d_data, h_data, n * sizeof(float), cudaMemcpyHostToDevice);
        my_kernel<<<grid, block>>>(d_data, n);
        cudaError_t e = cudaDeviceSynchronize();
        cudaMemcpy(h_data, d_data, n * sizeof(float), cudaMemcpyDeviceToHost);
        printf("fixed: %s\n", cudaGetErrorString(e));
        cudaFree(d_data);
        free(h_data);
        return e == cudaSuccess ? 0 : 1;
    }

    my_kernel<<<grid, block>>>(h_data, n);   // BUG: h_data is host memory
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    printf("launch: %s\n", cudaGetErrorString(launch));
    printf("sync:   %s (%s)\n", cudaGetErrorString(sync), cudaGetErrorName(sync));
    free(h_data);
    return sync == cudaSuccess ? 0 : 1;
}
