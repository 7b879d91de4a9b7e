/* events_fmt.h - line-formatting helpers shared by events.c and launch_check.c (internal). */
#ifndef VT_EVENTS_FMT_H
#define VT_EVENTS_FMT_H
#include <stdatomic.h>
#include "events.h"
#include "jsonl.h"
#include "records.h"
#include "tracer.h"

#define LINE_MAX_BYTES 2048

/* {"ev":EV,"t":..,"dur":..,"tid":..,"api":..,"res":..,"dev":.. (no closing brace) */
void vt_fmt_begin(vt_line *l, char *buf, const char *ev, const struct vt_call *c);
/* The common fields of a record from a hook's call (the calling thread's tid). Inline: every
 * record of the hot paths starts with it. */
static inline void vt_fill_call(struct vt_rec_call *r, const struct vt_call *c)
{
    r->t0 = c->t0;
    r->dur = c->dur;
    r->tid = vt_gettid();
    r->res = c->res;
    r->dev = c->dev;
    r->api = vt_api_id(c->api);
}
/* Close the line; its length, or 0 when it overflowed (then it must not be written). */
size_t vt_fmt_finish(vt_line *l);
void vt_fmt_emit(vt_line *l);
/* ,"bt":[...] of the current call stack when backtraces are on */
void vt_fmt_bt(vt_line *l);
void vt_fmt_ensure_device(int dev);
extern _Atomic uint64_t vt_finding_counts[VT_F_COUNT];
/* Queue a binary record (records.h) on the journal, or format and write it at once when the
 * journal is off. */
void vt_emit_record(int type, const void *rec, size_t len);
#endif
