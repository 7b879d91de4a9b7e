/* rel_aslimit.c - a program run under an address-space limit (ulimit -v, RLIMIT_AS), as batch
 * schedulers set one (tests/cases/rel_limits.sh). Usage: rel_aslimit HEADROOM_MIB ALLOC_MIB:
 * initialises CUDA (cudaGetDeviceCount), sets RLIMIT_AS to its address space so far plus
 * HEADROOM_MIB, then makes its first allocations (cudaMalloc 4 KiB, then 100 copies of it) and
 * mallocs and touches ALLOC_MIB of host memory. Prints "vm_mib N" (address space before the
 * limit), "malloc ok" or "malloc failed"; exits 0, or 3 when the malloc failed. An optional
 * third argument LOOPS adds that many cudaMalloc/cudaFree pairs at the end. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static unsigned long long vm_bytes(void)
{
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1) pages = 0;
        fclose(f);
    }
    return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
    unsigned long long headroom = (argc > 1 ? strtoull(argv[1], NULL, 10) : 10240) << 20;
    size_t alloc = (size_t)(argc > 2 ? strtoull(argv[2], NULL, 10) : 1024) << 20;
    int n = 0;
    cudaGetDeviceCount(&n);
    unsigned long long vm = vm_bytes();
    printf("vm_mib %llu\n", vm >> 20);
    struct rlimit as = { vm + headroom, vm + headroom };
    if (setrlimit(RLIMIT_AS, &as) != 0) { perror("setrlimit"); return 2; }
    void *d[101];
    for (int i = 0; i < 101; i++) cudaMalloc(&d[i], 4096);
    char *h = malloc(alloc);
    if (!h) { printf("malloc failed\n"); return 3; }
    memset(h, 1, alloc);
    printf("malloc ok\n");
    for (int i = 0; i < 101; i++) cudaFree(d[i]);
    free(h);
    long loops = argc > 3 ? atol(argv[3]) : 0;
    for (long i = 0; i < loops; i++) {
        void *p;
        cudaMalloc(&p, 4096);
        cudaFree(p);
    }
    return 0;
}
