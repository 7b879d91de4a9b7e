/* rel_errno.c - what the program sees must not change under the tracer (tests/cases/rel_behaviour.sh).
 * Sets errno before each call and prints "NAME rc=R errno=E" after it, for calls that succeed and
 * calls that fail; first reports whether a context exists before the program creates one.
 * The case script diffs the output with and without the tracer. Exits with status 7. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T(name, call) do { errno = 4242; int r_ = (int)(call); int e_ = errno; printf("%s rc=%d errno=%d\n", name, r_, e_); } while (0)

int main(void)
{
    unsigned flags = 0;
    int active = -1, count = 0;
    CUcontext cur = (CUcontext)1;
    T("cuInit", cuInit(0));
    T("cuDeviceGetCount", cuDeviceGetCount(&count));
    T("cuDevicePrimaryCtxGetState", cuDevicePrimaryCtxGetState(0, &flags, &active));
    printf("primary_active_before=%d\n", active);
    T("cuCtxGetCurrent", cuCtxGetCurrent(&cur));
    printf("ctx_before_null=%d\n", cur == NULL);

    void *d = NULL, *d2 = NULL, *h = NULL;
    char buf[4096];
    T("cudaMalloc", cudaMalloc(&d, 1 << 20));
    T("cudaDevicePrimaryActive", cuDevicePrimaryCtxGetState(0, &flags, &active));
    printf("primary_active_after=%d\n", active);
    T("cudaMalloc_huge", cudaMalloc(&d2, (size_t)1 << 50));
    T("cudaGetLastError", cudaGetLastError());
    T("cudaMemcpy_h2d", cudaMemcpy(d, buf, sizeof buf, cudaMemcpyHostToDevice));
    T("cudaMemcpy_badkind", cudaMemcpy(d, buf, sizeof buf, (enum cudaMemcpyKind)77));
    T("cudaMemcpy_wrongdir", cudaMemcpy(buf, d, sizeof buf, cudaMemcpyHostToDevice));
    T("cudaGetLastError", cudaGetLastError());
    T("cudaMemset", cudaMemset(d, 0, 4096));
    T("cudaMemset_host", cudaMemset(buf, 0, sizeof buf));
    T("cudaGetLastError", cudaGetLastError());
    T("cudaDeviceSynchronize", cudaDeviceSynchronize());
    size_t fr = 0, tot = 0;
    T("cudaMemGetInfo", cudaMemGetInfo(&fr, &tot));
    T("cudaMallocHost", cudaMallocHost(&h, 4096));
    T("cudaFreeHost", cudaFreeHost(h));
    T("cudaFree", cudaFree(d));
    T("cudaFree_again", cudaFree(d));
    T("cudaGetLastError", cudaGetLastError());
    T("cudaFree_bad", cudaFree((void *)0x1234));
    T("cudaGetLastError", cudaGetLastError());
    T("cudaFree_null", cudaFree(NULL));
    T("cudaSetDevice_bad", cudaSetDevice(99));
    T("cudaGetLastError", cudaGetLastError());
    CUdeviceptr dp = 0;
    T("cuMemAlloc", cuMemAlloc(&dp, 8192));
    T("cuMemAlloc_zero", cuMemAlloc(&dp, 0));
    T("cuMemFree_bad", cuMemFree((CUdeviceptr)0x10));
    T("cuMemGetInfo", cuMemGetInfo(&fr, &tot));
    errno = 0;
    FILE *f = fopen("/nonexistent-vramtrace/x", "r");
    printf("fopen_fail=%d errno=%d\n", f == NULL, errno);
    fflush(stdout);
    return 7;
}
