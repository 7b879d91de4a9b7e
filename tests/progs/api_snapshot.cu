// api_snapshot.cu - a program using include/vramtrace/vramtrace.h as a user would: snapshots
// around phases, a nested pause over a warm-up, version queries. Runs the same with and without
// the tracer; prints what each call returned (tests/cases/api_public.sh states what it must be).
#include <cstdio>
#include <cuda_runtime.h>
#include <vramtrace/vramtrace.h>

__global__ void fill(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 1.0f;
}

static float host[256];
static const size_t MiB = 1 << 20;

int main()
{
    const char *v = vramtrace_version();
    printf("api=%d version=%s\n", vramtrace_api_version(), v ? v : "none");
    float *a, *b, *c;
    int err = 0;
    err |= cudaMalloc(&a, 1 * MiB);                              // API_ALLOC_A
    int s1 = vramtrace_snapshot("loaded");                       // live: a = 1 MiB
    err |= cudaMalloc(&b, 2 * MiB);                              // API_ALLOC_B
    int s2 = vramtrace_snapshot("grown");                        // live: a + b = 3 MiB
    int p1 = vramtrace_pause();                                  // depth 1
    int p2 = vramtrace_pause();                                  // depth 2
    err |= cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice);  // not recorded (1)
    fill<<<1, 256>>>(a, 256);                                    // not recorded (2)
    err |= cudaMalloc(&c, 4 * MiB);                              // API_ALLOC_C: recorded though paused
    err |= cudaDeviceSynchronize();                              // not recorded (3)
    int r1 = vramtrace_resume();                                 // depth 1
    err |= cudaMemset(b, 0, 1024);                               // not recorded (4): still paused
    int r2 = vramtrace_resume();                                 // depth 0: recording again
    int r3 = vramtrace_resume();                                 // no pause left: nothing
    err |= cudaMemcpy(host, a, sizeof host, cudaMemcpyDeviceToHost);  // recorded
    fill<<<1, 256>>>(b, 256);                                    // recorded
    err |= cudaFree(b);
    int s3 = vramtrace_snapshot("trimmed");                      // live: a + c = 5 MiB
    err |= cudaFree(a);
    err |= cudaFree(c);
    err |= cudaDeviceSynchronize();
    printf("snap=%d,%d,%d pause=%d,%d resume=%d,%d,%d err=%d\n", s1, s2, s3, p1, p2, r1, r2, r3, err);
    return err ? 1 : 0;
}
