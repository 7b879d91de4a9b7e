// steady_sites.cu - the same copy call reached from several callers, over and over
// (tests/cases/steady_sites.sh; issue 48). put() is called from from_a/from_b/from_c, which main
// calls from one stack depth: put's frame sits at the same stack address whichever caller, and
// only the callers' return addresses tell the sites apart. Then one buffer copied pageable,
// registered (cudaHostRegister: pinned), unregistered (pageable again): 10 copies each.
#include <cuda_runtime.h>
#include <stdio.h>

static char host[3][8192];
static char reg[1 << 16] __attribute__((aligned(4096)));
static volatile int calls;

__attribute__((noinline)) static int put(char *d, const char *s, size_t n)
{
    int rc = cudaMemcpy(d, s, n, cudaMemcpyHostToDevice); // SITE_PUT
    calls++; /* no tail call: each caller keeps its frame */
    return rc;
}
__attribute__((noinline)) static int from_a(char *d) { int rc = put(d, host[0], 1024); calls++; return rc; } // CALLER_A
__attribute__((noinline)) static int from_b(char *d) { int rc = put(d, host[1], 2048); calls++; return rc; } // CALLER_B
__attribute__((noinline)) static int from_c(char *d) { int rc = put(d, host[2], 4096); calls++; return rc; } // CALLER_C

int main(void)
{
    char *d = NULL;
    int rc = cudaMalloc(&d, 1 << 20);
    for (int i = 0; i < 300; i++) {
        rc |= from_a(d); // LOOP1_A
        rc |= from_b(d); // LOOP1_B
        rc |= from_c(d); // LOOP1_C
    }
    /* loop 1 ended with b and c walked last: the first call here finds b's inner frames kept
     * with loop 1's outer ones */
    for (int i = 0; i < 200; i++) {
        if (i % 3 == 0) rc |= from_b(d); // LOOP2_B
        rc |= from_a(d); // LOOP2_A
    }
    for (int i = 0; i < 10; i++) rc |= cudaMemcpy(d, reg, sizeof reg, cudaMemcpyHostToDevice); // REG_BEFORE
    rc |= cudaHostRegister(reg, sizeof reg, cudaHostRegisterDefault);
    for (int i = 0; i < 10; i++) rc |= cudaMemcpy(d, reg, sizeof reg, cudaMemcpyHostToDevice); // REG_DURING
    rc |= cudaHostUnregister(reg);
    for (int i = 0; i < 10; i++) rc |= cudaMemcpy(d, reg, sizeof reg, cudaMemcpyHostToDevice); // REG_AFTER
    rc |= cudaFree(d);
    printf("rc=%d calls=%d\n", rc, calls);
    return 0;
}
