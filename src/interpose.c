/* interpose.c - the exported dlsym: how driver entry points reached with dlopen/dlsym (static
 * cudart, cuBLAS, NCCL, JAX, PyTorch) are swapped for hook wrappers. */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "resolve.h"
#include "tracer.h"

static int wants_swap(const char *name)
{
    return name && ((name[0] == 'c' && name[1] == 'u') || !strncmp(name, "__cuda", 6) ||
                    !strncmp(name, "nvtx", 4) || !strcmp(name, "InitializeInjectionNvtx2"));
}

/* RTLD_NEXT means "after the caller", and the caller is not us: search the objects that follow
 * the caller in load order and take the first one that itself defines the symbol. */
static void *next_after(const void *caller, const char *name)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return vt_real_dlsym(RTLD_NEXT, name);
    for (struct link_map *l = lm->l_next; l; l = l->l_next) {
        void *p = vt_real_dlsym(l, name);
        if (!p) continue;
        Dl_info pi;
        struct link_map *owner = NULL;
        if (dladdr1(p, &pi, (void **)&owner, RTLD_DL_LINKMAP) && owner == l) return p;
    }
    return NULL;
}

void *dlsym(void *handle, const char *name)
{
    void *r = handle == RTLD_NEXT ? next_after(__builtin_return_address(0), name) : vt_real_dlsym(handle, name);
    if (!r || !wants_swap(name) || vt_ts.guard > 0) return r;
    int saved = errno;
    r = vt_swap_dlsym(name, r);
    errno = saved;
    return r;
}
