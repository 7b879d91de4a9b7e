/* sim_redirect.c - libvtsimredirect.so, preloaded by `vramtrace run --sim` (test fixture).
 *
 * Frameworks bring their own CUDA runtime and open it by full path: PyTorch's wheel loads
 * .../nvidia/cu13/lib/libcudart.so.13 with ctypes before anything else, numba-cuda may open the
 * driver by path. LD_LIBRARY_PATH cannot reach a dlopen of a path, so under --sim that program
 * would run NVIDIA's runtime on the simulated driver (which serves none of the private tables it
 * needs) and stop. This shim answers a dlopen whose file name is a CUDA runtime or driver
 * library (libcudart.so*, libcuda.so*, and the driver's NVML, libnvidia-ml.so*) with the simulated one from $VRAMTRACE_SIM_DIR; every
 * other dlopen passes through untouched. Without VRAMTRACE_SIM_DIR it does nothing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*dlopen_fn)(const char *, int);
static dlopen_fn real_dlopen;
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* libc's own, by version: dlvsym is not interposed by the tracer, whose dlsym would open libc
 * (NOLOAD) through this very dlopen while pthread_once is still running here (a deadlock) */
static void resolve(void)
{
    real_dlopen = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
    if (!real_dlopen) real_dlopen = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.2.5");
}

/* "libcudart.so", "libcudart.so.13", "libcudart.so.13.0.96" -> "libcudart.so.13"; the same for
 * libcuda -> "libcuda.so.1" and libnvidia-ml -> "libnvidia-ml.so.1"; NULL for anything else */
static const char *sim_name(const char *base)
{
    static const struct { const char *stem, *sim; } libs[] = {
        { "libcudart.so", "libcudart.so.13" },
        { "libcuda.so", "libcuda.so.1" },
        { "libnvidia-ml.so", "libnvidia-ml.so.1" },
    };
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        size_t n = strlen(libs[i].stem);
        if (strncmp(base, libs[i].stem, n) != 0) continue;
        const char *rest = base + n;
        if (*rest && (*rest != '.' || !rest[1] || strspn(rest, ".0123456789") != strlen(rest))) continue;
        return libs[i].sim;
    }
    return NULL;
}

void *dlopen(const char *file, int mode)
{
    pthread_once(&once, resolve);
    if (!real_dlopen) return NULL;
    const char *dir = getenv("VRAMTRACE_SIM_DIR");
    const char *slash = file ? strrchr(file, '/') : NULL;
    const char *sim = slash && dir && *dir ? sim_name(slash + 1) : NULL;
    char path[PATH_MAX];
    if (sim && snprintf(path, sizeof path, "%s/%s", dir, sim) < (int)sizeof path && strncmp(file, dir, strlen(dir)) != 0)
        return real_dlopen(path, mode);
    return real_dlopen(file, mode);
}
