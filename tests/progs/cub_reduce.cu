// cub_reduce.cu - a real library kernel compiled here (issue 32, slice 3): cub::DeviceReduce::Sum
// over 4M floats launches CUB's DeviceReduceKernel, whose parameters are the input and output
// pointers, the item count and a GridEvenShare (ints, alignment 4) at offset 20, then the
// single-tile kernel over the partial sums.
//   cub_reduce ok   : device input; no finding
//   cub_reduce host : the input is host memory; one host-pointer error, argument 0 of the first kernel
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/cub.cuh>

// DeviceReduceKernel's parameters, in order, as the host compiler lays them out (the oracle)
struct ReduceKernelArgs {
    const float *d_in;
    float *d_out;
    unsigned num_items;
    cub::GridEvenShare<unsigned> even_share;
    cuda::std::plus<> reduction_op;
    cuda::std::__identity transform_op;
};

int main(int argc, char **argv)
{
    printf("layout %zu:%zu %zu:%zu %zu:%zu %zu:%zu %zu:%zu %zu:%zu\n",
           offsetof(ReduceKernelArgs, d_in), sizeof(const float *), offsetof(ReduceKernelArgs, d_out), sizeof(float *),
           offsetof(ReduceKernelArgs, num_items), sizeof(unsigned), offsetof(ReduceKernelArgs, even_share),
           sizeof(cub::GridEvenShare<unsigned>), offsetof(ReduceKernelArgs, reduction_op), sizeof(cuda::std::plus<>),
           offsetof(ReduceKernelArgs, transform_op), sizeof(cuda::std::__identity));
    const int n = 1 << 22;
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, sizeof(float));
    float *h = (float *)malloc(n * sizeof(float));
    int host = argc > 1 && !strcmp(argv[1], "host");
    const float *in = host ? h : d_in;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    cudaError_t r1 = cub::DeviceReduce::Sum(tmp, tmp_bytes, in, d_out, n);
    cudaMalloc(&tmp, tmp_bytes);
    cudaError_t r2 = cub::DeviceReduce::Sum(tmp, tmp_bytes, in, d_out, n);
    cudaDeviceSynchronize();
    if (host) printf("expect host_pointer error 0 0 0x%llx\n", (unsigned long long)(uintptr_t)h);
    printf("done %s %d %d\n", argc > 1 ? argv[1] : "ok", (int)r1, (int)r2);
    cudaFree(tmp);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h);
    return 0;
}
