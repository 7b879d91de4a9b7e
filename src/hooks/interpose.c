/* interpose.c - the exported dlsym: how driver entry points reached with dlopen/dlsym (static
 * cudart, cuBLAS, NCCL, JAX, PyTorch) are swapped for hook wrappers; and the exported dlclose,
 * which tells the unwinder that code may have been unmapped. */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "resolve.h"
#include "tracer.h"
#include "unwind.h"

static int dlclose_hook(void *handle);

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

VT_EARLY void *dlsym(void *handle, const char *name)
{
    void *r = handle == RTLD_NEXT ? next_after(__builtin_return_address(0), name) : vt_real_dlsym(handle, name);
    if (!r || !wants_swap(name) || vt_ts.guard > 0) return r;
    int saved = errno;
    r = vt_swap_dlsym(name, r);
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
