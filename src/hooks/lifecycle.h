/* lifecycle.h - init, fork and exit of the tracer (lifecycle.c), for the hooks.
 *
 * Invariant: every hook calls vt_init() before anything else; that is what makes the tracer's
 * state (configuration, the sink's opener) valid before the first event. */
#ifndef VT_LIFECYCLE_H
#define VT_LIFECYCLE_H
#include <stdatomic.h>

#include "vramtrace/vramtrace.h"
#define VT_TRACER_VERSION VRAMTRACE_VERSION   /* the header's "tracer", vramtrace_version() */

/* Called by every hook before anything else. After the first call it is two loads: the word
 * vt_live points to, which the init function sets last (pthread_once on every call cost a libc
 * call per hook); until then, and for a thread racing the first one, pthread_once does the work
 * and the waiting. The word lives in a MADV_WIPEONFORK page: it reads 0 in every fork child,
 * however the child was made (fork, _Fork, syscall(SYS_fork), none of which the tracer sees
 * except the first, through pthread_atfork), so the child's first hook or its exit drops the
 * parent's trace, registry and drain thread before anything else (vt_init_slow). */
extern _Atomic(_Atomic int *) vt_live;
void vt_init_slow(void);
/* Ready only at 1: a fork child's word is 0 until one of its threads resets the parent's state,
 * 2 while it does (lifecycle.c reset_unseen_child), and a thread arriving then must wait for 1
 * too, not run on the half-reset state (8 threads of a _Fork child lost records or crashed). */
static inline int vt_init_ready(void)
{
    return atomic_load_explicit(atomic_load_explicit(&vt_live, memory_order_acquire), memory_order_acquire) == 1;
}
static inline void vt_init(void)
{
    if (__builtin_expect(!vt_init_ready(), 0)) vt_init_slow();
}

/* Called at exit (destructor) and for the summary. */
void vt_tracer_shutdown(void);
#endif
