/* vramtrace/vramtrace.h - an optional API for programs that want to help the tracer: labelled
 * snapshots of live device memory, the boundaries of training steps, pausing the recording of a
 * phase, and a version query.
 *
 * Header only, nothing to link. Every function is safe without the tracer: each looks up its
 * entry point in the process once (dlsym(RTLD_DEFAULT), as NVTX finds its injection library) and,
 * when `vramtrace run` did not load libvramtrace.so, does nothing and returns the "not traced"
 * value documented below. With glibc older than 2.34 link with -ldl.
 *
 *   vramtrace_snapshot("after load");   // the report lists it with the live bytes and top sites
 *   for (...) { vramtrace_step(); ... } // the report's Steps: each step's time, live VRAM, peak
 *   vramtrace_pause();                  // warm-up: copies, sets, launches, syncs not recorded
 *   ...
 *   vramtrace_resume();
 *
 * Semantics (docs/trace-format.md, `snapshot`, `pause`, `resume`):
 *  - vramtrace_snapshot(label) writes a `snapshot` record; the report shows, for each, the live
 *    device memory at that instant, the sites holding the most of it, and the change since the
 *    previous snapshot. LABEL is copied (at most 255 bytes); NULL is "".
 *  - vramtrace_pause() / vramtrace_resume() nest (the recording resumes at the last resume).
 *    While paused the tracer records no copies, sets, launches, syncs, memory queries or NVTX
 *    ranges and runs no pointer checks on them, but still records every allocation and free: a
 *    report that missed those would get every later number wrong. `pause`/`resume` records mark
 *    the interval.
 *  - Thread-safe; errno is kept; none of them calls CUDA.
 */
#ifndef VRAMTRACE_VRAMTRACE_H
#define VRAMTRACE_VRAMTRACE_H

#include <dlfcn.h>

#define VRAMTRACE_API_VERSION 1   /* what vramtrace_api_version() returns with this header's tracer */
#define VRAMTRACE_VERSION "0.1.0" /* the release this header came with: `vramtrace --version`, vramtrace_version() */

#ifdef __cplusplus
extern "C" {
#endif

/* The entry points libvramtrace.so exports (the header's functions call them when present). */
typedef int (*vramtrace_label_fn)(const char *label);
typedef int (*vramtrace_void_fn)(void);
typedef const char *(*vramtrace_str_fn)(void);

/* The tracer's entry point NAME, looked up once per call site's translation unit; NULL without
 * the tracer. A racing first lookup stores the same pointer twice, which is harmless. */
static inline void *vramtrace_entry_(void **cache, int *looked, const char *name)
{
    if (!__atomic_load_n(looked, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(cache, dlsym(RTLD_DEFAULT, name), __ATOMIC_RELAXED);
        __atomic_store_n(looked, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(cache, __ATOMIC_RELAXED);
}
#define VRAMTRACE_ENTRY_(type, name) \
    static void *vt_cache_; static int vt_looked_; \
    type vt_fn_ = (type)vramtrace_entry_(&vt_cache_, &vt_looked_, name)

/* 0 without the tracer; else the API version the loaded tracer implements (VRAMTRACE_API_VERSION). */
static inline int vramtrace_api_version(void)
{
    VRAMTRACE_ENTRY_(vramtrace_void_fn, "vramtrace_api_version_v1");
    return vt_fn_ ? vt_fn_() : 0;
}
/* The loaded tracer's version ("0.1.0"), or NULL without the tracer. */
static inline const char *vramtrace_version(void)
{
    VRAMTRACE_ENTRY_(vramtrace_str_fn, "vramtrace_version_v1");
    return vt_fn_ ? vt_fn_() : (const char *)0;
}
/* 1 when the snapshot was recorded; 0 when not (no tracer, tracing off, no trace file). */
static inline int vramtrace_snapshot(const char *label)
{
    VRAMTRACE_ENTRY_(vramtrace_label_fn, "vramtrace_snapshot_v1");
    return vt_fn_ ? vt_fn_(label) : 0;
}
/* A training step begins (call it at the top of each iteration): the report finds the steps of
 * the run from these calls first (before NVTX ranges and the launch stream), step K running from
 * the K-th call to the next, the last to the end of the trace, and shows each step's duration,
 * the live device memory at its start and its peak. Returns the step's number (1, 2, ...: over
 * the whole process, any thread), 0 without the tracer or a trace. */
static inline int vramtrace_step(void)
{
    VRAMTRACE_ENTRY_(vramtrace_void_fn, "vramtrace_step_v1");
    return vt_fn_ ? vt_fn_() : 0;
}
/* The pause depth after the call (1 after a first pause); 0 without the tracer. */
static inline int vramtrace_pause(void)
{
    VRAMTRACE_ENTRY_(vramtrace_void_fn, "vramtrace_pause_v1");
    return vt_fn_ ? vt_fn_() : 0;
}
/* The pause depth after the call (0: recording again); 0 without the tracer. A resume without a
 * pause does nothing. */
static inline int vramtrace_resume(void)
{
    VRAMTRACE_ENTRY_(vramtrace_void_fn, "vramtrace_resume_v1");
    return vt_fn_ ? vt_fn_() : 0;
}

#undef VRAMTRACE_ENTRY_
#ifdef __cplusplus
}
#endif
#endif
