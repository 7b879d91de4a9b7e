/* resolve.h - finding the real CUDA and libc functions behind the hooks, and handing out hook
 * wrappers in place of real pointers (dlsym, cuGetProcAddress).
 *
 * Each hook family (hooks_runtime.c, hooks_driver.c) declares a table of struct vt_hook, one
 * source of truth per wrapper: its exported name, the cuGetProcAddress base name and version
 * from which that name is meant, whether it is the per-thread-default-stream variant, the
 * wrapper, and the slot holding the real pointer. `make check-hooks` verifies the tables against
 * the exported symbols.
 *
 * Invariants: a slot never holds a pointer into libvramtrace.so itself (that would recurse);
 * a wrapper whose real function cannot be found returns CUDA_ERROR_NOT_SUPPORTED /
 * cudaErrorNotSupported rather than calling NULL. Real libc dlsym is found with dlvsym on first
 * use, without pthread_once (sanitizer runtimes call our dlsym before they allow that).
 */
#ifndef VT_RESOLVE_H
#define VT_RESOLVE_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct vt_hook {
    const char *name;
    const char *base;    /* NULL: not reachable through cuGetProcAddress (runtime API) */
    int min_version;
    int ptds;
    void *wrapper;
    _Atomic(void *) *real;
};
extern const struct vt_hook vt_hooks_driver[];
extern const struct vt_hook vt_hooks_driver_ops[];
extern const struct vt_hook vt_hooks_runtime[];
extern const struct vt_hook vt_hooks_launch[];
extern const struct vt_hook vt_hooks_pool[];

/* For the code our exported dlsym runs: sanitizer runtimes (ASan, TSan) call dlsym while they
 * initialise, before instrumented code may run (no shadow memory yet). */
#define VT_EARLY __attribute__((no_sanitize("address", "thread", "undefined")))

/* libc's dlsym, bypassing our interposer. Safe before a sanitizer runtime is initialised. */
VT_EARLY void *vt_real_dlsym(void *handle, const char *name);
/* The real pointer for a hook: its slot, else looked up after libvramtrace in load order. Every
 * hook calls this on every call: once the slot is filled it is one acquire load, inline; the
 * lookup (dlsym, dlopen of the CUDA libraries) is out of line. */
/* A typedef, not _Atomic() in the prototype: cppcheck then reads the return type as int. */
typedef _Atomic(void *) vt_real_slot;
void *vt_real_get_slow(vt_real_slot *slot, const char *name);
static inline void *vt_real_get(vt_real_slot *slot, const char *name)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (__builtin_expect(p != NULL, 1)) return p;
    return vt_real_get_slow(slot, name);
}
/* A driver function for the tracer's own queries (guard held by the caller); NULL when libcuda
 * is not loaded. Never loads libcuda itself: that would change the program's behaviour. */
void *vt_real_driver(const char *name);

/* dlsym interposition: given the real pointer `real` found for `name`, return what the caller
 * should get (the wrapper, after storing `real`), or `real` when `name` is not hooked. */
void *vt_swap_dlsym(const char *name, void *real);
/* cuGetProcAddress interposition: same, choosing the entry by base name, version and flags. */
void *vt_swap_procaddr(const char *base, int cuda_version, uint64_t flags, void *real);

#define VT_REAL_SLOT(fn) static _Atomic(void *) real_##fn
#define VT_REAL(fn) ((__typeof__(&fn))vt_real_get(&real_##fn, #fn))
#define VT_HOOK_ENTRY(fn, base, ver, ptds) { #fn, base, ver, ptds, (void *)&fn, &real_##fn }

#endif
