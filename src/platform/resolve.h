/* resolve.h - finding the real CUDA and libc functions behind the hooks: each hook's slot for its
 * real pointer, filled on first use, and the driver functions the tracer queries itself.
 * (Handing out wrappers in place of real pointers is hooks/hook_table.h.)
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

/* MANGLED ("_Z...") demangled by the C++ runtime loaded in the process (__cxa_demangle, in the
 * global scope or a libstdc++/libc++ loaded locally, never one loaded for it), as a malloc'd
 * string the caller frees; NULL when it is no C++ name or no runtime is loaded (looked for again
 * at the next call: a C program may load one later). */
char *vt_cxa_demangle(const char *mangled);

/* P, unless it points into libvramtrace.so itself (a slot holding our own wrapper would recurse). */
void *vt_real_not_self(void *p);

#define VT_REAL_SLOT(fn) static _Atomic(void *) real_##fn
#define VT_REAL(fn) ((__typeof__(&fn))vt_real_get(&real_##fn, #fn))

#endif
