/* tracer.h - process-wide tracer state shared by the hook modules: configuration (read once from
 * the environment), the per-thread state, and the enter/leave helpers every hook uses.
 *
 * Invariants:
 *  - vt_thread() never allocates and never fails; the state lives in static TLS.
 *  - `guard` > 0 while the tracer itself calls CUDA or libc code that may call back into hooks;
 *    hooks seen with guard > 0 only forward. `rt_depth` > 0 while a runtime hook runs, so driver
 *    hooks reached from inside the runtime only forward (each call is recorded once).
 *  - Hooks preserve errno and return the real function's result untouched.
 */
#ifndef VT_TRACER_H
#define VT_TRACER_H
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"

#define VT_TLS __thread __attribute__((tls_model("initial-exec")))

enum vt_check_mode { VT_CHECK_OFF = 0, VT_CHECK_RECORD = 1, VT_CHECK_ABORT = 2 };

struct vt_config {
    int enabled;          /* 0: every hook only forwards (VRAMTRACE_DISABLE=1) */
    int backtraces;       /* VRAMTRACE_BACKTRACE (default 1) */
    int bt_depth;         /* VRAMTRACE_BT_DEPTH (default 24, max 64) */
    int unwind_glibc;     /* VRAMTRACE_UNWIND=glibc: glibc backtrace() for every stack, not unwind.c */
    int check;            /* enum vt_check_mode, VRAMTRACE_CHECK=off|record|abort */
    int quiet;            /* VRAMTRACE_QUIET=1: no exit summary on stderr */
    char output[1024];    /* VRAMTRACE_OUTPUT template */
    long root_pid;        /* VRAMTRACE_ROOT_PID: the process `vramtrace run` started */
};
extern struct vt_config vt_cfg;

struct vt_thread_state {
    int tid;
    unsigned tid_gen;     /* vt_fork_gen when tid was asked: a fork child's inherited tid is stale */
    int guard;
    int rt_depth;
    int cur_dev;
};
extern VT_TLS struct vt_thread_state vt_ts;

/* Called by every hook before anything else. After the first call it is two loads: the word
 * vt_live points to, which the init function sets last (pthread_once on every call cost a libc
 * call per hook); until then, and for a thread racing the first one, pthread_once does the work
 * and the waiting. The word lives in a MADV_WIPEONFORK page: it reads 0 in every fork child,
 * however the child was made (fork, _Fork, syscall(SYS_fork), none of which the tracer sees
 * except the first, through pthread_atfork), so the child's first hook or its exit drops the
 * parent's trace, registry and drain thread before anything else (vt_init_slow). */
extern _Atomic(_Atomic int *) vt_live;
void vt_init_slow(void);
static inline int vt_init_ready(void)
{
    return atomic_load_explicit(atomic_load_explicit(&vt_live, memory_order_acquire), memory_order_acquire) != 0;
}
static inline void vt_init(void)
{
    if (__builtin_expect(!vt_init_ready(), 0)) vt_init_slow();
}

static inline struct vt_thread_state *vt_thread(void) { return &vt_ts; }
/* The kernel thread id, asked once per thread and again in a fork child (every record carries it). */
extern unsigned vt_fork_gen;
int vt_gettid_slow(void);
static inline int vt_gettid(void)
{
    int t = vt_ts.tid;
    return __builtin_expect(t != 0 && vt_ts.tid_gen == vt_fork_gen, 1) ? t : vt_gettid_slow();
}

/* True when a hook must only forward (tracing off, tracer's own call, or nested in the runtime). */
static inline int vt_forward_only(void) { return !vt_cfg.enabled || vt_ts.guard > 0; }
static inline int vt_in_runtime(void) { return vt_ts.rt_depth > 0; }

static inline uint64_t vt_now(void) { return vt_clock_now(); }

/* Keeps errno as the real call left it across the tracer's own work. */
#define VT_SAVE_ERRNO int vt_saved_errno_ = errno
#define VT_RESTORE_ERRNO (errno = vt_saved_errno_)

/* Called at exit (destructor) and for the summary. */
void vt_tracer_shutdown(void);

#endif
