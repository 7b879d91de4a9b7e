/* gate.h - the conditions a CI job fails on (`report` and `run`: --fail-on=LIST, --max-peak,
 * --max-increase with --diff), checked over analysed processes after the report is written.
 *
 * Each --fail-on gate is one bit; the limits are sizes. vt_gate_check (and vt_gate_check_diff for
 * a regression between two runs) says every process, device or run that trips one, one sentence
 * each, through SAY (the command prints them: nothing here writes to a stream), and returns how
 * many sentences it said.  A gate reads only the finished analysis (analysis.h), never the trace. */
#ifndef VT_REPORT_GATE_H
#define VT_REPORT_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "report/analysis.h"

enum {
    VT_GATE_OOM = 1u << 0,      /* an allocation failed for lack of memory and was not retried successfully */
    VT_GATE_LEAK = 1u << 1,     /* memory still allocated when the process exited (a trace with a footer) */
    VT_GATE_ERROR = 1u << 2,    /* a checker finding of severity error */
    VT_GATE_WARNING = 1u << 3,  /* a checker finding of severity warning or error */
    VT_GATE_GROWTH = 1u << 4,   /* live VRAM still growing step after step (analysis.h's VT_GROWTH_STEADY) */
};

#define VT_GATE_NO_LIMIT UINT64_MAX

struct vt_gates {
    unsigned mask;                 /* --fail-on's bits */
    uint64_t max_process_peak;     /* --max-peak=[process:]SIZE: a process's peak VRAM (all its devices) */
    uint64_t max_device_peak;      /* --max-peak=device:SIZE: one device's peak, in a process or, over
                                    * several traces, held at once by all of them */
    uint64_t max_increase_bytes;   /* --max-increase=SIZE: the new run's peak over the base run's */
    double max_increase_pct;       /* --max-increase=PCT%: the same as a share of the base's peak; < 0 none */
};

void vt_gates_init(struct vt_gates *g);
/* 1 when G asks for anything; vt_gates_for_diff: when it has a --max-increase */
int vt_gates_any(const struct vt_gates *g);
int vt_gates_for_diff(const struct vt_gates *g);

/* Parses "oom,leak,growth" into G's mask (added to it).  0, or -1 with ERR saying which word is
 * not a gate. */
int vt_gate_parse(const char *list, struct vt_gates *g, char *err, size_t errlen);
/* "[process:|device:]SIZE" (--max-peak) and "SIZE|PCT%" (--max-increase) into G. SIZE is bytes
 * with an optional unit: K, M, G, T (or KiB...: powers of 1024), KB, MB, GB, TB (powers of 1000).
 * 0, or -1 with ERR. */
int vt_gate_parse_peak(const char *v, struct vt_gates *g, char *err, size_t errlen);
int vt_gate_parse_increase(const char *v, struct vt_gates *g, char *err, size_t errlen);
/* SIZE as above into *OUT: 0, or -1 (not a size, or over 2^64). */
int vt_gate_parse_size(const char *s, uint64_t *out);

/* The gates of G that PROCS trip: SAY(CTX, sentence) for each, the count returned. */
size_t vt_gate_check(struct vt_proc *const *procs, size_t n, const struct vt_gates *g,
                     void (*say)(void *ctx, const char *msg), void *ctx);
/* --max-increase between the base run (BASE, NB processes) and the new one; a run's peak is its
 * highest process peak (as --diff shows it). */
size_t vt_gate_check_diff(struct vt_proc *const *base, size_t nb, struct vt_proc *const *cur, size_t nc,
                          const struct vt_gates *g, void (*say)(void *ctx, const char *msg), void *ctx);

#endif
