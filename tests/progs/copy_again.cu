// copy_again.cu - one call site copying the same 4 KiB host buffer to the same device buffer while
// the class of its source changes under it (core/events_copy.c: a copy repeated from one stack is
// only counted while both sides' classes hold). Usage: copy_again.
// Three phases of 100 copies each through upload() from one line of main: the buffer pageable;
// then registered with cudaHostRegister (pinned memory to the report); then unregistered with
// cudaHostUnregister (pageable again). Then 100 rounds of the same copy from two lines in turn
// (two sites, two stacks, the same pointers). Then 50 copies of 4 KiB into a device buffer freed
// and made again with 1 KiB, which fail (the device says invalid value). Prints "rc=0 failed=50".
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 4096, PER_PHASE = 100, AFTER_FREE = 50 };

static __attribute__((noinline)) int upload(void *d, const void *h)
{
    return cudaMemcpy(d, h, N, cudaMemcpyHostToDevice); // UPLOAD
}

int main(void)
{
    void *d = NULL;
    char *h = (char *)aligned_alloc(4096, N);
    int rc = cudaMalloc(&d, N), failed = 0;
    for (int i = 0; i < N; i++) h[i] = (char)i;
    for (int phase = 0; phase < 3; phase++) {
        if (phase == 1) rc |= cudaHostRegister(h, N, cudaHostRegisterDefault);
        if (phase == 2) rc |= cudaHostUnregister(h);
        for (int i = 0; i < PER_PHASE; i++) rc |= upload(d, h); // PHASES
    }
    for (int i = 0; i < PER_PHASE; i++) {
        rc |= upload(d, h); // SITE_A
        rc |= upload(d, h); // SITE_B
    }
    /* the destination freed and made again smaller: the same copy now runs past its end */
    void *small = NULL;
    rc |= cudaFree(d) | cudaMalloc(&small, N / 4);
    for (int i = 0; i < AFTER_FREE; i++) failed += upload(small, h) != cudaSuccess; // SMALL
    rc |= cudaFree(small);
    free(h);
    printf("rc=%d failed=%d\n", rc, failed);
    return 0;
}
