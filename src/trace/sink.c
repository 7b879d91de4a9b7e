/* sink.c - where the tracer's JSON lines go (the ring while it is open, else the trace writer),
 * and whether they can go there yet: the trace is opened by the first event, through the opener
 * the lifecycle (hooks/lifecycle.c) registers at init, so this layer never calls up into it. */
#include "sink.h"

#include "journal.h"
#include "trace_writer.h"

_Atomic int vt_trace_state; /* 0 not yet, 1 open, -1 failed for good (read inline by vt_trace_ready) */
char vt_trace_file[4096];
static _Atomic(vt_trace_opener) opener;

void vt_trace_set_opener(vt_trace_opener fn) { atomic_store_explicit(&opener, fn, memory_order_release); }

int vt_trace_open(void)
{
    vt_trace_opener fn = atomic_load_explicit(&opener, memory_order_acquire);
    return fn ? fn() : 0;
}

void vt_trace_append(const char *line, uint64_t len)
{
    if (vt_journal_text(line, len) == 0) return;
    (void)vt_writer_put(line, len); /* a dropped line is counted, and the writer said why */
}

const char *vt_trace_path(void) { return vt_trace_file; }
