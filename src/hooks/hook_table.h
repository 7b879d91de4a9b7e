/* hook_table.h - the hook tables: what interpose.c swaps real pointers for when the program asks
 * dlsym or cuGetProcAddress.  Types and declarations only.
 *
 * Each hook family (hooks_runtime.c, hooks_driver.c, ...) declares a table of struct vt_hook, one
 * source of truth per wrapper: its exported name, the cuGetProcAddress base name and version
 * from which that name is meant, whether it is the per-thread-default-stream variant, the
 * wrapper, and the slot holding the real pointer (resolve.h). `make check-hooks` verifies the
 * tables against the exported symbols.
 *
 * Invariant: a slot never holds a pointer into libvramtrace.so itself (that would recurse). */
#ifndef VT_HOOK_TABLE_H
#define VT_HOOK_TABLE_H
#include <stdatomic.h>
#include <stdint.h>

struct vt_hook {
    const char *name;
    const char *base;    /* NULL: not reachable through cuGetProcAddress (runtime API) */
    int min_version;
    int ptds;
    void *wrapper;
    _Atomic(void *) *real;
};
extern const struct vt_hook vt_hooks_interpose[];   /* cuGetProcAddress itself */
extern const struct vt_hook vt_hooks_driver[];
extern const struct vt_hook vt_hooks_driver_ops[];
extern const struct vt_hook vt_hooks_runtime[];
extern const struct vt_hook vt_hooks_launch[];
extern const struct vt_hook vt_hooks_pool[];
extern const struct vt_hook vt_hooks_graph[];
extern const struct vt_hook vt_hooks_graph_copy[];

#define VT_HOOK_ENTRY(fn, base, ver, ptds) { #fn, base, ver, ptds, (void *)&fn, &real_##fn }

#endif
