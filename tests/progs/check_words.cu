// check_words.cu - argument words that cannot be pointers (issue 32, slice 1), written the way
// CUB writes its reductions: a GridEvenShare-style struct of five ints is passed by value after
// two pointers and an int, so it sits at offset 20 of the argument buffer with alignment 4. An
// align-4 struct has no pointer member; its int pairs are never addresses, whatever they hold.
// The host compiler states the layout (offsetof/alignof of a struct of the same parameters).
//   check_words evenshare : the share's ints hold the two halves of a real heap address; no finding
//   check_words hostarg   : the same launch with a heap pointer as `in` (argument 0): one finding
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

struct EvenShare { int total_tiles, big_shares, big_share_items, normal_share_items, normal_base_offset; };
struct ReduceArgs { const float *in; float *out; int n; EvenShare share; };   // the kernel's parameters

__global__ void reduce(const float *in, float *out, int n, EvenShare share)
{
    if (threadIdx.x == 0 && n < 0) out[0] = in[0] + share.total_tiles;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "evenshare";
    printf("layout share offset=%zu align=%zu size=%zu\n", offsetof(ReduceArgs, share), alignof(EvenShare),
           sizeof(EvenShare));
    float *in, *out;
    cudaMalloc(&in, 1024);
    cudaMalloc(&out, 1024);
    char *heap = (char *)malloc(4096);   // a host address a pointer check would flag
    uint64_t h = (uint64_t)(uintptr_t)heap;
    EvenShare s = { 7, (int)(uint32_t)h, (int)(uint32_t)(h >> 32), (int)(uint32_t)h, (int)(uint32_t)(h >> 32) };
    const float *arg0 = in;
    if (!strcmp(mode, "hostarg")) {
        arg0 = (const float *)heap;
        printf("expect host_pointer error reduce 0 0 0x%llx\n", (unsigned long long)h);
    }
    reduce<<<1, 32>>>(arg0, out, 256, s);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    free(heap);
    printf("done %s\n", mode);
    return 0;
}
