/* resolve.c - real-symbol lookup (dlvsym for libc's dlsym, RTLD_NEXT for hooks) and pointer swap. */
#include "resolve.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "backtrace.h"

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn libc_dlsym;
static pthread_once_t dlsym_once = PTHREAD_ONCE_INIT;

static void find_libc_dlsym(void)
{
    static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0", NULL };
    for (int i = 0; versions[i] && !libc_dlsym; i++)
        libc_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
}

void *vt_real_dlsym(void *handle, const char *name)
{
    pthread_once(&dlsym_once, find_libc_dlsym);
    return libc_dlsym ? libc_dlsym(handle, name) : NULL;
}

static void *not_self(void *p) { return p && !vt_addr_is_self((uint64_t)(uintptr_t)p) ? p : NULL; }

void *vt_real_get(_Atomic(void *) *slot, const char *name)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (p) return p;
    p = not_self(vt_real_dlsym(RTLD_NEXT, name));
    if (!p) {
        /* A program that reaches CUDA only through dlopen: the library is not "next" to us. */
        static const char *const libs[] = { "libcuda.so.1", "libcudart.so.13", "libcudart.so.12", NULL };
        for (int i = 0; libs[i] && !p; i++) {
            void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
            if (h) { p = not_self(vt_real_dlsym(h, name)); dlclose(h); }
        }
    }
    if (p) {
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(slot, &expected, p)) p = expected;
    }
    return p;
}

#define DRIVER_CACHE 32
static struct { const char *name; _Atomic(void *) fn; } driver_cache[DRIVER_CACHE];
static pthread_mutex_t driver_lock = PTHREAD_MUTEX_INITIALIZER;

void *vt_real_driver(const char *name)
{
    for (int i = 0; i < DRIVER_CACHE && driver_cache[i].name; i++)
        if (driver_cache[i].name == name || !strcmp(driver_cache[i].name, name))
            return atomic_load(&driver_cache[i].fn);
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return NULL; /* not loaded yet: try again next time */
    void *fn = not_self(vt_real_dlsym(h, name));
    dlclose(h);
    pthread_mutex_lock(&driver_lock);
    for (int i = 0; i < DRIVER_CACHE; i++) {
        if (!driver_cache[i].name) {
            atomic_store(&driver_cache[i].fn, fn);
            driver_cache[i].name = name;
            break;
        }
        if (!strcmp(driver_cache[i].name, name)) break;
    }
    pthread_mutex_unlock(&driver_lock);
    return fn;
}

static const struct vt_hook *const tables[] = { vt_hooks_driver, vt_hooks_driver_ops, vt_hooks_runtime, vt_hooks_launch };

static void *install(const struct vt_hook *h, void *real)
{
    if (!not_self(real)) return real; /* our own wrapper came back: hand it out unchanged */
    void *expected = NULL;
    atomic_compare_exchange_strong(h->real, &expected, real);
    return h->wrapper;
}

void *vt_swap_dlsym(const char *name, void *real)
{
    if (!real || !name) return real;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const struct vt_hook *h = tables[t]; h->name; h++)
            if (!strcmp(h->name, name)) return install(h, real);
    return real;
}

void *vt_swap_procaddr(const char *base, int cuda_version, uint64_t flags, void *real)
{
    if (!real || !base) return real;
    int want_ptds = (flags & 2) != 0; /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
    const struct vt_hook *best = NULL, *fallback = NULL;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const struct vt_hook *h = tables[t]; h->name; h++) {
        if (!h->base || strcmp(h->base, base) || h->min_version > cuda_version) continue;
        if (h->ptds == want_ptds) { if (!best || h->min_version > best->min_version) best = h; }
        else if (!h->ptds && (!fallback || h->min_version > fallback->min_version)) fallback = h;
    }
    if (!best) best = fallback; /* no per-thread variant exists: the function has no stream */
    return best ? install(best, real) : real;
}
