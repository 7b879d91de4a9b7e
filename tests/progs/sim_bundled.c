/* sim_bundled.c - a program that brings its own CUDA runtime and opens it by full path, as
 * PyTorch's wheel does (ctypes.CDLL(".../nvidia/cu13/lib/libcudart.so.13")) and never links it:
 * 3 MiB allocated, 4 KiB copied to it, freed (tests/cases/sim_bundled.sh).
 * Usage: sim_bundled PATH_TO_LIBCUDART. Prints KEY=VALUE lines. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);
typedef int (*memcpy_fn)(void *, const void *, size_t, int);

int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: sim_bundled LIBCUDART\n"); return 2; }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!h) { printf("dlopen=%s\n", dlerror()); return 1; }
    malloc_fn cmalloc = (malloc_fn)dlsym(h, "cudaMalloc");
    free_fn cfree = (free_fn)dlsym(h, "cudaFree");
    memcpy_fn cmemcpy = (memcpy_fn)dlsym(h, "cudaMemcpy");
    if (!cmalloc || !cfree || !cmemcpy) { printf("dlsym=missing\n"); return 1; }
    /* which file the handle is (cudaMalloc itself may be a tracer's wrapper) */
    struct link_map *lm = NULL;
    printf("runtime_is_wheel=%d\n", dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || strstr(lm->l_name, "nvidia/cu13/lib") != NULL);
    void *d = NULL;
    int rc = cmalloc(&d, 3 << 20);
    printf("malloc=%d\n", rc);
    if (rc) return 0;
    static char host[4096];
    printf("memcpy=%d\n", cmemcpy(d, host, sizeof host, 1 /* cudaMemcpyHostToDevice */));
    printf("free=%d\n", cfree(d));
    return 0;
}
