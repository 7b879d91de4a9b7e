/* gate.h - `report --fail-on=LIST`: the conditions a CI job fails on, checked over analysed
 * processes after the report is written.
 *
 * Each gate is one bit; vt_gate_check says every process that trips one, one sentence each,
 * through SAY (the command prints them: nothing here writes to a stream), and returns how many
 * sentences it said.  A gate reads only the finished analysis (analysis.h), never the trace. */
#ifndef VT_REPORT_GATE_H
#define VT_REPORT_GATE_H

#include <stddef.h>

#include "report/analysis.h"

enum {
    VT_GATE_OOM = 1u << 0,      /* an allocation failed for lack of memory and was not retried successfully */
    VT_GATE_LEAK = 1u << 1,     /* memory still allocated when the process exited (a trace with a footer) */
    VT_GATE_ERROR = 1u << 2,    /* a checker finding of severity error */
    VT_GATE_WARNING = 1u << 3,  /* a checker finding of severity warning or error */
    VT_GATE_GROWTH = 1u << 4,   /* live VRAM still growing step after step (analysis.h's VT_GROWTH_STEADY) */
};

/* Parses "oom,leak,growth" into *MASK (added to it).  0, or -1 with ERR saying which word is
 * not a gate. */
int vt_gate_parse(const char *list, unsigned *mask, char *err, size_t errlen);

/* The gates of MASK that PROCS trip: SAY(CTX, sentence) for each, the count returned. */
size_t vt_gate_check(struct vt_proc *const *procs, size_t n, unsigned mask,
                     void (*say)(void *ctx, const char *msg), void *ctx);

#endif
