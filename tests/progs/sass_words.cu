// sass_words.cu - argument words the launch check cannot verify (issue 46, slice 4), written the
// way users write kernels. Built three ways (mk/progs.mk): with PTX (nvcc -arch=sm_90), SASS only
// (-gencode arch=compute_90,code=sm_90) and -rdc=true (no PTX kept). tests/cases/check_sass_words.sh
// states what each build must give; the program prints the addresses it passed:
//   heap ADDR               the host buffer h (every host address below is h)
//   slice DATA GARBAGE      offsetof(Slice, data), offsetof(Slice, garbage): the host compiler's
//   sync BEFORE AFTER       cudaDeviceSynchronize before and after step 4 (700: a kernel faulted)
// With the argument `noscale` step 4 is left out.
// What it does, in order:
//   1. fill(out, seed, tag, n): seed (int64_t) and tag (uint64_t) hold h's address as integers
//      (a pointer hashed into an RNG seed): integers, never addresses, on every build.
//   2. gather(s, out) with s = { device buffer, garbage = h }: the kernel reads s.data only; the
//      second word is data that happens to equal a heap address.
//   3. gather(bad, out) with bad = { h, 0 }: the bug, a host pointer inside a by-value struct.
//   4. scale(h, 2, n): the bug everybody makes, a host pointer as a kernel argument. On a GPU it
//      faults: run last.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct Slice { float *data; long garbage; };

__global__ void fill(float *out, int64_t seed, uint64_t tag, int n)
{
    int i = threadIdx.x;
    if (i < n) out[i] = (float)((seed ^ (int64_t)tag) & 0xff) + i;
}
__global__ void gather(Slice s, float *out) { out[threadIdx.x] = s.data[threadIdx.x]; }
__global__ void scale(float *x, float a, int n)
{
    if ((int)threadIdx.x < n) x[threadIdx.x] *= a;
}

int main(int argc, char **argv)
{
    bool step4 = !(argc > 1 && !strcmp(argv[1], "noscale"));
    const int n = 32;
    float *d = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    float *h = static_cast<float *>(malloc(4096));
    for (int i = 0; i < n; i++) h[i] = (float)i;
    printf("heap %p\n", (void *)h);
    printf("slice %zu %zu\n", offsetof(Slice, data), offsetof(Slice, garbage));
    fill<<<1, n>>>(d, (int64_t)(intptr_t)h, (uint64_t)(uintptr_t)h, n);
    Slice s = { d, (long)(intptr_t)h };
    gather<<<1, n>>>(s, d);
    Slice bad = { h, 0 };
    gather<<<1, n>>>(bad, d);
    cudaError_t before = cudaDeviceSynchronize();
    if (step4) scale<<<1, n>>>(h, 2.0f, n);
    cudaError_t after = cudaDeviceSynchronize();
    printf("sync %d %d\n", (int)before, (int)after);
    cudaFree(d);
    free(h);
    return 0;
}
