/* interpose.c - the exported dlsym and the cuGetProcAddress hooks: how entry points reached with
 * dlopen/dlsym (static cudart, cuBLAS, NCCL, JAX, PyTorch) or cuGetProcAddress (cudart itself,
 * cudaGetDriverEntryPoint) are swapped for hook wrappers, over every hook family's table
 * (hook_table.h); and the exported dlclose, which tells the unwinder that code may have been
 * unmapped.  The top of hooks/: it knows every table, no hook family calls it. */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "cuda_abi.h"
#include "hook_table.h"
#include "resolve.h"
#include "lifecycle.h"
#include "tracer.h"
#include "unwind.h"

static int dlclose_hook(void *handle);
static void *swap_dlsym(const char *name, void *real);

/* Hand-written compare: a sanitizer runtime calls dlsym while it sets up its interceptors, when
 * calling its (intercepted) strcmp/strncmp would jump through a null pointer. */
VT_EARLY static int prefix(const char *s, const char *p)
{
    while (*p && *s == *p) { s++; p++; }
    return *p == '\0';
}

VT_EARLY static int wants_swap(const char *name)
{
    return name && ((name[0] == 'c' && name[1] == 'u') || prefix(name, "__cuda") || prefix(name, "nvtx") ||
                    (prefix(name, "InitializeInjectionNvtx2") && name[24] == '\0'));
}

VT_EARLY static struct link_map *self_map(void)
{
    static _Atomic(struct link_map *) self; /* idempotent lazy init: no pthread_once (see below) */
    struct link_map *m = atomic_load_explicit(&self, memory_order_acquire);
    Dl_info info;
    if (!m && dladdr1((void *)self_map, &info, (void **)&m, RTLD_DL_LINKMAP) && m)
        atomic_store_explicit(&self, m, memory_order_release);
    return m;
}

/* RTLD_NEXT means "after the caller", and the caller is not us: search the objects that follow
 * the caller in load order and take the first one that itself defines the symbol.
 * A caller loaded before us (a sanitizer runtime in LD_PRELOAD ahead of us, which calls dlsym
 * while it initialises, before pthread_once or dlopen may be used) gets libc's answer for "next
 * after libvramtrace": nothing sits between it and us, and the names we define are swapped to
 * our wrappers by the caller of this function as for any other lookup. */
VT_EARLY static void *next_after(const void *caller, const char *name)
{
    Dl_info info;
    struct link_map *lm = NULL, *self = self_map();
    if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return vt_real_dlsym(RTLD_NEXT, name);
    for (struct link_map *l = lm->l_next; l && self; l = l->l_next)
        if (l == self) /* a sanitizer's dlclose interceptor must still reach ours */
            return prefix(name, "dlclose") && !name[7] ? (void *)dlclose_hook : vt_real_dlsym(RTLD_NEXT, name);
    for (struct link_map *l = lm->l_next; l; l = l->l_next) {
        /* A link_map is a valid dlsym handle only for a dlopen()ed object (the lookup scope of one
         * loaded at start-up is empty and glibc crashes in it): take a real handle. */
        if (!l->l_name || !l->l_name[0]) continue;
        void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        void *p = vt_real_dlsym(h, name);
        dlclose(h);
        if (!p) continue;
        Dl_info pi;
        struct link_map *owner = NULL;
        if (dladdr1(p, &pi, (void **)&owner, RTLD_DL_LINKMAP) && owner == l) return p;
    }
    return NULL;
}

/* Is the caller another interposer of NAME loaded after us (a GPU-sharing, limiting or counting
 * preload behind us in LD_PRELOAD) looking up the definition it forwards to? Our wrapper already
 * ran before its own (we come first in the lookup order and call the next definition, its one):
 * handing it our wrapper again would make the two call each other until the stack overflows. */
static int interposer_after_us(const void *caller, const char *name)
{
    Dl_info info;
    struct link_map *lm = NULL, *self = self_map(), *l;
    if (!self || !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || lm == self) return 0;
    for (l = self->l_next; l && l != lm; l = l->l_next) {}
    if (!l || !lm->l_name || !lm->l_name[0]) return 0;
    void *h = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    void *own = vt_real_dlsym(h, name);
    dlclose(h);
    struct link_map *owner = NULL;
    return own && dladdr1(own, &info, (void **)&owner, RTLD_DL_LINKMAP) && owner == lm;
}

VT_EARLY void *dlsym(void *handle, const char *name)
{
    const void *caller = __builtin_return_address(0);
    void *r = handle == RTLD_NEXT ? next_after(caller, name) : vt_real_dlsym(handle, name);
    if (!r || !wants_swap(name) || vt_ts.guard > 0) return r;
    int saved = errno;
    if (!interposer_after_us(caller, name)) r = swap_dlsym(name, r);
    errno = saved;
    return r;
}

/* dlclose may unmap code, and a later dlopen may put other code, with other CFI, at the same
 * addresses: the unwinder's cached rules go stale. The real dlclose is called untouched. */
typedef int (*dlclose_fn)(void *);
static _Atomic(dlclose_fn) real_dlclose;

VT_EARLY static int dlclose_hook(void *handle)
{
    dlclose_fn f = atomic_load_explicit(&real_dlclose, memory_order_acquire);
    if (!f) { /* idempotent lazy init, as for dlsym */
        f = (dlclose_fn)vt_real_dlsym(RTLD_NEXT, "dlclose");
        if (!f) return -1;
        atomic_store_explicit(&real_dlclose, f, memory_order_release);
    }
    int r = f(handle);
    int saved = errno;
    vt_unwind_invalidate();
    errno = saved;
    return r;
}

VT_EARLY int dlclose(void *handle) { return dlclose_hook(handle); }

/* ---- the swap: a real pointer for its wrapper ------------------------------------------------ */

static const struct vt_hook *const tables[] = { vt_hooks_interpose, vt_hooks_driver, vt_hooks_driver_ops, vt_hooks_runtime, vt_hooks_launch, vt_hooks_pool, vt_hooks_graph, vt_hooks_graph_copy };

static void *install(const struct vt_hook *h, void *real)
{
    if (!vt_real_not_self(real)) return real; /* our own wrapper came back: hand it out unchanged */
    void *expected = NULL;
    atomic_compare_exchange_strong(h->real, &expected, real);
    return h->wrapper;
}

/* dlsym: given the real pointer REAL found for NAME, what the caller should get (the wrapper,
 * after storing REAL in its slot), or REAL when NAME is not hooked. */
static void *swap_dlsym(const char *name, void *real)
{
    if (!real || !name) return real;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const struct vt_hook *h = tables[t]; h->name; h++)
            if (!strcmp(h->name, name)) return install(h, real);
    return real;
}

/* cuGetProcAddress: the same, choosing the entry by base name, version and flags. */
static void *swap_procaddr(const char *base, int cuda_version, uint64_t flags, void *real)
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

/* ---- cuGetProcAddress ------------------------------------------------------------------------ */

typedef unsigned long long cuuint64_t;

VT_REAL_SLOT(cuGetProcAddress_v2);
CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags, int *status)
{
    vt_init();
    __typeof__(&cuGetProcAddress_v2) real = VT_REAL(cuGetProcAddress_v2);
    if (!real) return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = real(sym, pfn, ver, flags, status);
    if (r == CUDA_SUCCESS && pfn && *pfn && !vt_forward_only()) {
        int saved = errno;
        *pfn = swap_procaddr(sym, ver, flags, *pfn);
        errno = saved;
    }
    return r;
}

VT_REAL_SLOT(cuGetProcAddress);
CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    vt_init();
    __typeof__(&cuGetProcAddress) real = VT_REAL(cuGetProcAddress);
    if (!real) return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = real(sym, pfn, ver, flags);
    if (r == CUDA_SUCCESS && pfn && *pfn && !vt_forward_only()) {
        int saved = errno;
        *pfn = swap_procaddr(sym, ver, flags, *pfn);
        errno = saved;
    }
    return r;
}

const struct vt_hook vt_hooks_interpose[] = {
    VT_HOOK_ENTRY(cuGetProcAddress_v2, "cuGetProcAddress", 12000, 0),
    VT_HOOK_ENTRY(cuGetProcAddress, "cuGetProcAddress", 11030, 0),
    { NULL, NULL, 0, 0, NULL, NULL },
};
