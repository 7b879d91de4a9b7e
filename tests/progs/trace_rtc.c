/* trace_rtc.c - plain C program calling the runtime API (tests/cases/trace_foundation.sh).
 * Prints "alloc ADDR SIZE", "copy DIR SIZE", "free ADDR", "rc NAME VALUE" lines the case script
 * compares with the trace. Usage: trace_rtc [EXIT_STATUS] */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    size_t n = 3 << 20;
    unsigned char *h = malloc(n);
    memset(h, 9, n);
    void *d = NULL, *pin = NULL;
    printf("rc cudaMalloc %d\n", (int)cudaMalloc(&d, n));
    printf("alloc %p %zu\n", d, n);
    printf("rc cudaMemcpy %d\n", (int)cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
    printf("copy h2d %zu\n", n);
    printf("rc cudaMemset %d\n", (int)cudaMemset(d, 1, 4096));
    printf("rc cudaMallocHost %d\n", (int)cudaMallocHost(&pin, 8192));
    printf("rc cudaMemcpy %d\n", (int)cudaMemcpy(pin, d, 8192, cudaMemcpyDeviceToHost));
    printf("copy d2h %d\n", 8192);
    printf("rc cudaFreeHost %d\n", (int)cudaFreeHost(pin));
    printf("rc cudaFree %d\n", (int)cudaFree(d));
    printf("free %p\n", d);
    printf("rc cudaFree_again %d\n", (int)cudaFree(d));
    cudaGetLastError();
    free(h);
    return argc > 1 ? atoi(argv[1]) : 0;
}
