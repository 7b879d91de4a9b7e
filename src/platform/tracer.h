/* tracer.h - process-wide tracer state every layer may read: configuration (read once from the
 * environment), the per-thread state, and the helpers every hook uses. (Init, fork and exit are
 * hooks/lifecycle.h.)
 *
 * Invariants:
 *  - vt_thread() never allocates and never fails; the state lives in static TLS.
 *  - `guard` > 0 while the tracer itself calls CUDA or libc code that may call back into hooks;
 *    hooks seen with guard > 0 only forward. `rt_depth` > 0 while a runtime hook runs, so driver
 *    hooks reached from inside the runtime only forward (each call is recorded once).
 *  - Hooks preserve errno and return the real function's result untouched.
 *  - `held` counts the tracer's locks this thread holds: a signal handler that calls exit() while
 *    its thread is inside the tracer must not wait at shutdown for a lock only it can release.
 */
#ifndef VT_TRACER_H
#define VT_TRACER_H
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"

#define VT_TLS __thread __attribute__((tls_model("initial-exec")))

enum vt_check_mode { VT_CHECK_OFF = 0, VT_CHECK_RECORD = 1, VT_CHECK_ABORT = 2 };

#define VT_BT_MAX 64   /* most frames a recorded call stack may have (VRAMTRACE_BT_DEPTH is capped here) */

struct vt_config {
    int enabled;          /* 0: every hook only forwards (VRAMTRACE_DISABLE=1) */
    int backtraces;       /* VRAMTRACE_BACKTRACE (default 1) */
    int python_frames;    /* VRAMTRACE_PYTHON_FRAMES (default 1): Python frames in recorded stacks */
    int bt_depth;         /* VRAMTRACE_BT_DEPTH (default 24, max 64) */
    int freed_history;    /* VRAMTRACE_FREED_HISTORY: freed ranges remembered per shard; 0 = default */
    int unwind_glibc;     /* VRAMTRACE_UNWIND=glibc: glibc backtrace() for every stack, not unwind.c */
    int check;            /* enum vt_check_mode, VRAMTRACE_CHECK=off|record|abort */
    int quiet;            /* VRAMTRACE_QUIET=1: no exit summary on stderr */
    char output[1024];    /* VRAMTRACE_OUTPUT template */
    long root_pid;        /* VRAMTRACE_ROOT_PID: the process `vramtrace run` started */
    uint64_t meminfo_interval_ns; /* VRAMTRACE_MEMINFO_INTERVAL_MS (default 1000): at most one driver
                                   * memory sample per interval, taken at an allocation or free; 0 off */
    int fold;             /* VRAMTRACE_FOLD (default 1): steady launches counted, not a line each (core/fold.h) */
    uint64_t fold_interval_ns; /* VRAMTRACE_FOLD_INTERVAL_MS (default 1000): counters written at least this often */
};
extern struct vt_config vt_cfg;

struct vt_thread_state {
    int tid;
    unsigned tid_gen;     /* vt_fork_gen when tid was asked: a fork child's inherited tid is stale */
    int guard;
    int rt_depth;
    int cur_dev;
    int held;             /* tracer locks this thread holds (vt_mutex_lock, the registry's shard locks) */
    int *errno_at;        /* this thread's errno (vt_errno_at): one load instead of a libc call */
};
extern VT_TLS struct vt_thread_state vt_ts;

static inline struct vt_thread_state *vt_thread(void) { return &vt_ts; }
/* Every tracer mutex is taken through these, so that vt_ts.held knows what this thread holds. */
static inline void vt_mutex_lock(pthread_mutex_t *m) { vt_ts.held++; pthread_mutex_lock(m); }
static inline int vt_mutex_trylock(pthread_mutex_t *m)
{
    int r = pthread_mutex_trylock(m);
    if (r == 0) vt_ts.held++;
    return r;
}
static inline void vt_mutex_unlock(pthread_mutex_t *m) { pthread_mutex_unlock(m); vt_ts.held--; }
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
/* vt_forward_only() || vt_in_runtime() with one load for both counters: guard and rt_depth sit
 * side by side and never go below 0, so the 8 bytes are nonzero exactly when either is above 0. */
_Static_assert(__builtin_offsetof(struct vt_thread_state, rt_depth) == __builtin_offsetof(struct vt_thread_state, guard) + 4,
               "guard and rt_depth adjacent");
static inline int vt_forward_or_nested(void)
{
    uint64_t both;
    __builtin_memcpy(&both, &vt_ts.guard, sizeof both);
    return !vt_cfg.enabled || both != 0;
}

static inline uint64_t vt_now(void) { return vt_clock_now(); }

/* Keeps errno as the real call left it across the tracer's own work. */
/* &errno, asked of libc once per thread (a fork child's thread keeps its TLS at the same place). */
static inline int *vt_errno_at(void)
{
    int *p = vt_ts.errno_at;
    if (__builtin_expect(!p, 0)) vt_ts.errno_at = p = &errno;
    return p;
}
#define VT_SAVE_ERRNO int *vt_errno_ = vt_errno_at(); int vt_saved_errno_ = *vt_errno_
#define VT_RESTORE_ERRNO (*vt_errno_ = vt_saved_errno_)

/* Configuration (tracer.c). vt_config_read fills vt_cfg from the environment (once, at init). */
void vt_config_read(void);
/* A knob set to a value it does not take: one line on stderr (once per run), and the default. */
void vt_config_bad_knob(const char *name, const char *v, const char *takes);
/* 1/0, on/off, yes/no, true/false (any case), or a whole number (non-zero: on): 0, or -1. */
int vt_config_flag(const char *v, int *out);
/* `vramtrace run` lists every trace of the run, children's included, from VRAMTRACE_MANIFEST: one
 * line, KIND then TEXT ("" and a trace's path, "!" and why a process has no trace, "+" and the
 * pid of a process the tracer was loaded into). Best effort; errno kept. */
void vt_manifest_note(const char *kind, const char *text);

#endif
