// typed_sites.cu - call sites as users write them (tests/cases/report_sites.sh): the typed
// cudaMalloc<T> overload from cuda_runtime.h, called from a helper with two callers and from
// main. Built twice: -O0 (cudaMalloc<float> is a real function) and -O2 (typed_sites_o2: the
// overload and the helper are inlined into main). The SITE_ / CALLER_ comments mark the lines
// the report must name.
#include <cuda_runtime.h>
#include <stdio.h>

static float *make_buffer(size_t n)
{
    float *p = NULL;
    cudaMalloc(&p, n * sizeof(float)); // SITE_HELPER
    return p;
}

int main(void)
{
    float *a = make_buffer(1 << 20); // CALLER_A (4 MiB)
    float *b = make_buffer(1 << 18); // CALLER_B (1 MiB)
    int *c = NULL;
    cudaMalloc(&c, 4096); // SITE_MAIN
    printf("allocated %d\n", a && b && c);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
