// failed_calls.cu - CUDA calls that fail, each on a line the program prints, so the report's
// "Failed calls" can be checked against the program's own view: "rc API RESULT LINE" per call.
#include <cstdio>
#include <cstdint>

#define CALL(api, expr) do { int line_ = __LINE__; int r_ = (int)(expr); printf("rc %s %d %d\n", api, r_, line_); } while (0)

static void too_big(void **p)
{
    CALL("cudaMalloc", cudaMalloc(p, (size_t)1 << 50));      // more than any device has: OOM (2)
}

int main()
{
    void *d = NULL;
    too_big(&d);
    too_big(&d);                                              // the same site again: counted, not listed twice
    static char host[256];
    CALL("cudaFree", cudaFree(host));                         // not device memory: cudaErrorInvalidValue (1)
    CALL("cudaMalloc", cudaMalloc(&d, 4096));
    CALL("cudaMemcpy", cudaMemcpy(d, host, 64, (cudaMemcpyKind)99)); // no such direction
    CALL("cudaFree", cudaFree(d));
    return 0;
}
