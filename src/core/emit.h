/* emit.h - how core gets a line or record into the trace (emit.c): a hook's call (struct
 * vt_call), the common head of call lines, the call stack, binary records onto the journal, and
 * the context records (module, device). Shared by events.c, launch_check.c and findings.c, which
 * sit above it (internal to core). */
#ifndef VT_EMIT_H
#define VT_EMIT_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonl.h"
#include "records.h"
#include "sink.h"
#include "tracer.h"

struct vt_call {
    const char *api;
    uint64_t t0;
    uint64_t dur;
    int res;
    int dev;
    int graph;      /* a launch, copy or memset: 0 done now, VT_GRAPH_CAPTURED, VT_GRAPH_REPLAYED */
    int flagged;    /* a launch whose check said something (a finding or a note): it keeps its line */
};
enum { VT_GRAPH_CAPTURED = 1, VT_GRAPH_REPLAYED = 2 };
/* What a copy call says beyond its pointers and size (vt_ev_copy; a graph's copy node keeps it). */
struct vt_copy_extra {
    int async; uint64_t stream;
    int kind;       /* cudaMemcpyKind, -1 for driver copies */
    uint64_t width, height, dpitch, spitch; int is_2d;
    int src_dev;    /* peer copies; -1 otherwise */
};
/* Fill a vt_call around the real call: VT_CALL_BEGIN before, VT_CALL_END(res) after. */
#define VT_CALL_BEGIN(c, name) struct vt_call c = { .api = (name), .dev = vt_ts.cur_dev }; c.t0 = vt_now()
/* Durations clamp at 0: a re-anchored clock may step back by a few ns between two reads. */
#define VT_CALL_END(c, r) do { uint64_t vt_t1_ = vt_now(); (c).dur = vt_t1_ > (c).t0 ? vt_t1_ - (c).t0 : 0; (c).res = (int)(r); } while (0)


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
void vt_fmt_ensure_device(int dev);
/* Queue a binary record (records.h) on the journal, or format and write it at once when the
 * journal is off. */
void vt_emit_record(int type, const void *rec, size_t len);
/* The program paused the recording of call traffic (vramtrace_pause): the depth of nested pauses,
 * and the calls not recorded since the outermost pause. */
extern _Atomic int vt_pause_depth;
extern _Atomic uint64_t vt_pause_skipped;
/* 1 while paused (and the call is counted as skipped): copies, sets, launches, syncs, memory
 * queries and NVTX ranges are then neither recorded nor checked. One relaxed load when not. */
static inline int vt_traffic_paused(void)
{
    if (__builtin_expect(atomic_load_explicit(&vt_pause_depth, memory_order_relaxed) == 0, 1)) return 0;
    atomic_fetch_add_explicit(&vt_pause_skipped, 1, memory_order_relaxed);
    return 1;
}
/* Format a binary record and write its line now (the journal is off). */
void vt_emit_formatted(int type, const void *rec, size_t len);
struct vt_module_info;
void vt_emit_module(const struct vt_module_info *m);
/* Emit the `device` record for dev once (queries the real driver, guard held). */
void vt_ensure_device(int dev);
/* Compute capability of dev as major*10+minor, asking the driver if no record was written yet;
 * 0 when unknown (driver not initialised). */
unsigned vt_device_sm(int dev);
/* Device attribute 88 as recorded (0 when unknown). */
int vt_device_pageable_access(int dev);

/* Fork child: no device record was written in this process yet. */
void vt_emit_reset_after_fork(void);
#endif
