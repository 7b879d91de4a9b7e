/* vtshim.c - a second CUDA interposer, as GPU-sharing, limiting and counting preloads are written
 * (tests/cases/rel_preloads.sh): it defines cudaMalloc, cudaFree, cuMemAlloc_v2 and cuMemFree_v2,
 * counts the calls and forwards to the next definition, found with dlsym(RTLD_NEXT, ...) or, with
 * VTSHIM_HANDLE=1, with dlopen of the CUDA library and dlsym on that handle (HAMi-core's way).
 * At exit each process but vramtrace itself prints "vtshim cudaMalloc=N cudaFree=N cuMemAlloc_v2=N cuMemFree_v2=N" to stderr. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n_malloc, n_free, n_drv_alloc, n_drv_free;

static void *next(const char *lib, const char *name)
{
    const char *h = getenv("VTSHIM_HANDLE");
    if (h && *h == '1') {
        void *handle = dlopen(lib, RTLD_LAZY);
        return handle ? dlsym(handle, name) : NULL;
    }
    return dlsym(RTLD_NEXT, name);
}

int cudaMalloc(void **p, size_t n)
{
    int (*real)(void **, size_t) = (int (*)(void **, size_t))next("libcudart.so.13", "cudaMalloc");
    __atomic_add_fetch(&n_malloc, 1, __ATOMIC_RELAXED);
    return real ? real(p, n) : 35;
}

int cudaFree(void *p)
{
    int (*real)(void *) = (int (*)(void *))next("libcudart.so.13", "cudaFree");
    __atomic_add_fetch(&n_free, 1, __ATOMIC_RELAXED);
    return real ? real(p) : 35;
}

int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    int (*real)(unsigned long long *, size_t) = (int (*)(unsigned long long *, size_t))next("libcuda.so.1", "cuMemAlloc_v2");
    __atomic_add_fetch(&n_drv_alloc, 1, __ATOMIC_RELAXED);
    return real ? real(p, n) : 3;
}

int cuMemFree_v2(unsigned long long p)
{
    int (*real)(unsigned long long) = (int (*)(unsigned long long))next("libcuda.so.1", "cuMemFree_v2");
    __atomic_add_fetch(&n_drv_free, 1, __ATOMIC_RELAXED);
    return real ? real(p) : 3;
}

__attribute__((destructor)) static void report(void)
{
    extern char *program_invocation_short_name;
    if (!strcmp(program_invocation_short_name, "vramtrace")) return; /* the CLI that ran the program */
    fprintf(stderr, "vtshim cudaMalloc=%d cudaFree=%d cuMemAlloc_v2=%d cuMemFree_v2=%d\n",
            n_malloc, n_free, n_drv_alloc, n_drv_free);
}
