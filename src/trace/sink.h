/* sink.h - the way out for formatted lines, and the lazy opening of the trace.
 *
 * Invariants: vt_trace_ready() is one inline acquire load once the state is settled (every event
 * asks); while the state is 0 it runs the opener the lifecycle registered (which opens the file
 * once, under its lock, and settles the state). With no opener registered (a unit test that links
 * the core without the hooks) nothing is ever ready. */
#ifndef VT_SINK_H
#define VT_SINK_H
#include <stdatomic.h>
#include <stdint.h>

extern _Atomic int vt_trace_state;   /* 0 not yet, 1 open, -1 failed for good; set by the opener */
extern char vt_trace_file[4096];     /* the trace's path once open; "" before (set by the opener) */
/* Opens the trace (once) and returns 1 when lines can be written. */
typedef int (*vt_trace_opener)(void);
void vt_trace_set_opener(vt_trace_opener fn);
int vt_trace_open(void);
static inline int vt_trace_ready(void)
{
    int s = atomic_load_explicit(&vt_trace_state, memory_order_acquire);
    return __builtin_expect(s != 0, 1) ? s > 0 : vt_trace_open();
}
/* One complete line (with its '\n'): into the ring, else straight to the writer (a line the
 * writer refuses is counted in the footer's `dropped`). */
void vt_trace_append(const char *line, uint64_t len);
/* The trace's path ("" before it is open). */
const char *vt_trace_path(void);
#endif
