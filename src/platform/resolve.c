/* resolve.c - real-symbol lookup (dlvsym for libc's dlsym, RTLD_NEXT for hooks, the driver for the
 * tracer's own queries). The swap of real pointers for wrappers is hooks/hook_table.c. */
#include "resolve.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backtrace.h"

typedef void *(*dlsym_fn)(void *, const char *);
static _Atomic(dlsym_fn) libc_dlsym;

/* No pthread_once here: a sanitizer runtime (ASan, TSan) calls our exported dlsym while it
 * initialises its interceptors, before pthread_once may be called. The lookup is idempotent,
 * so threads racing on the first call just store the same pointer. */
VT_EARLY static dlsym_fn find_libc_dlsym(void)
{
    static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0", NULL };
    dlsym_fn f = NULL;
    for (int i = 0; versions[i] && !f; i++) f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (f) atomic_store_explicit(&libc_dlsym, f, memory_order_release);
    return f;
}

VT_EARLY void *vt_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = atomic_load_explicit(&libc_dlsym, memory_order_acquire);
    if (!f) f = find_libc_dlsym();
    return f ? f(handle, name) : NULL;
}

char *vt_cxa_demangle(const char *mangled)
{
    typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
    static _Atomic(demangle_fn) dem;
    if (!mangled || mangled[0] != '_' || mangled[1] != 'Z') return NULL;
    demangle_fn f = atomic_load_explicit(&dem, memory_order_acquire);
    if (!f) f = (demangle_fn)vt_real_dlsym(RTLD_DEFAULT, "__cxa_demangle");
    /* A C program (Python) has the C++ runtime only as a dependency of libraries it dlopen'ed
     * with RTLD_LOCAL (PyTorch's): not in the global scope. Ask the runtimes by name, only if
     * already loaded (RTLD_NOLOAD: the tracer never loads a library the program did not). */
    static const char *const runtimes[] = { "libstdc++.so.6", "libc++abi.so.1", "libc++.so.1" };
    for (size_t i = 0; !f && i < sizeof runtimes / sizeof runtimes[0]; i++) {
        void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        f = (demangle_fn)vt_real_dlsym(h, "__cxa_demangle");
        dlclose(h); /* the library stays: NOLOAD only added a reference */
    }
    if (f) atomic_store_explicit(&dem, f, memory_order_release);
    int status = -1;
    char *d = f ? f(mangled, NULL, NULL, &status) : NULL;
    if (d && status != 0) { free(d); d = NULL; }
    return d;
}

void *vt_real_not_self(void *p) { return p && !vt_addr_is_self((uint64_t)(uintptr_t)p) ? p : NULL; }

void *vt_real_get_slow(vt_real_slot *slot, const char *name)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (p) return p;
    p = vt_real_not_self(vt_real_dlsym(RTLD_NEXT, name));
    if (!p) {
        /* A program that reaches CUDA only through dlopen: the library is not "next" to us. */
        static const char *const libs[] = { "libcuda.so.1", "libcudart.so.13", "libcudart.so.12", NULL };
        for (int i = 0; libs[i] && !p; i++) {
            void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
            if (h) { p = vt_real_not_self(vt_real_dlsym(h, name)); dlclose(h); }
        }
    }
    if (p) {
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(slot, &expected, p)) p = expected;
    }
    return p;
}

#define DRIVER_CACHE 32
/* Lock-free readers: a slot's fn is stored before its name is published (release), so a reader
 * that sees the name (acquire) sees the pointer. */
static struct { _Atomic(const char *) name; _Atomic(void *) fn; } driver_cache[DRIVER_CACHE];
static pthread_mutex_t driver_lock = PTHREAD_MUTEX_INITIALIZER;

void *vt_real_driver(const char *name)
{
    for (int i = 0; i < DRIVER_CACHE; i++) {
        const char *n = atomic_load_explicit(&driver_cache[i].name, memory_order_acquire);
        if (!n) break;
        if (n == name || !strcmp(n, name)) return atomic_load(&driver_cache[i].fn);
    }
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return NULL; /* not loaded yet: try again next time */
    void *fn = vt_real_not_self(vt_real_dlsym(h, name));
    dlclose(h);
    pthread_mutex_lock(&driver_lock);
    for (int i = 0; i < DRIVER_CACHE; i++) {
        const char *n = atomic_load_explicit(&driver_cache[i].name, memory_order_relaxed);
        if (!n) {
            atomic_store(&driver_cache[i].fn, fn);
            atomic_store_explicit(&driver_cache[i].name, name, memory_order_release);
            break;
        }
        if (!strcmp(n, name)) break;
    }
    pthread_mutex_unlock(&driver_lock);
    return fn;
}
