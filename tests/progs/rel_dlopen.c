/* rel_dlopen.c - loads the CUDA runtime itself, as plugin hosts do (tests/cases/rel_behaviour.sh).
 * Usage: rel_dlopen deepbind|dlmopen|plain. Not linked with CUDA (built by mk/reliability.mk):
 * dlopen(RTLD_DEEPBIND) or dlmopen(LM_ID_NEWLM) libcudart.so.13, then cudaMalloc + cudaMemset +
 * cudaFree through dlsym'd pointers. Prints "malloc=R memset=R free=R". */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*malloc_fn)(void **, size_t);
typedef int (*memset_fn)(void *, int, size_t);
typedef int (*free_fn)(void *);

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "plain";
    void *h = !strcmp(mode, "dlmopen") ? dlmopen(LM_ID_NEWLM, "libcudart.so.13", RTLD_NOW)
            : dlopen("libcudart.so.13", RTLD_NOW | (!strcmp(mode, "deepbind") ? RTLD_DEEPBIND : 0));
    if (!h) { printf("dlopen failed: %s\n", dlerror()); return 2; }
    malloc_fn m = (malloc_fn)dlsym(h, "cudaMalloc");
    memset_fn s = (memset_fn)dlsym(h, "cudaMemset");
    free_fn f = (free_fn)dlsym(h, "cudaFree");
    if (!m || !s || !f) { printf("dlsym failed\n"); return 2; }
    void *p = NULL;
    int rm = m(&p, 1 << 20);
    int rs = s(p, 0, 1 << 20);
    int rf = f(p);
    printf("malloc=%d memset=%d free=%d\n", rm, rs, rf);
    return 0;
}
