/* reader_int.h - what reader.c, reader_fast.c and reader_fields.c share (internal to the trace
 * reader): the reader's state, the parsed-value type, and the field table both parsers feed.
 * Calls go reader.c -> reader_fast.c -> reader_fields.c (and reader.c -> reader_fields.c). */
#ifndef VT_REPORT_READER_INT_H
#define VT_REPORT_READER_INT_H
#include <json-c/json.h>

#include "report/event.h"


enum { JV_NULL, JV_BOOL, JV_INT, JV_DBL, JV_STR, JV_ARR, JV_OBJ };
struct jval {
    int type;
    int big;                /* JV_INT above INT64_MAX: value in u; 2: beyond 64 bits (out of range) */
    int64_t i;
    uint64_t u;
    const char *s;          /* JV_STR: not NUL-terminated */
    size_t n;               /* JV_STR length, JV_ARR element count (scalars in elems) */
    const struct jval *elems;
    json_object *jo;        /* JV_ARR / JV_OBJ from json-c; NULL on the fast path */
};

struct vt_reader {
    int fd;
    uint64_t pos;           /* the file offset of buf[end]: reads are pread()s, a shared descriptor's offset is never used */
    char *path;
    vt_reader_warn_fn warn;
    void *wctx;
    char *buf;
    size_t cap, start, end;
    int eof, got_header, seen_ev;
    long line, nwarn;
    json_tokener *tok;
    json_object *jo;        /* last fallback parse, freed on the next line */
    char *arena;            /* copies of the strings of the current record */
    size_t acap, alen;
    uint64_t bt[VT_READER_MAX_BT];
    uint32_t params[2 * VT_READER_MAX_PARAMS];
    struct jval elems[VT_READER_MAX_BT];
    /* keys that went down the whole field() chain unmatched: the next line's skip it at once */
    struct { uint32_t sig; uint8_t n; char k[27]; } skip[64];
};

#define FALLBACK 1

/* A record's device: -1 (none) or a device number up to 4095. The fast head parser and the field
 * table both ask this, so a record reads the same through either. */
static inline int vtr_rd_dev_ok(int64_t dev) { return dev >= -1 && dev <= 4095; }

/* Skip JSON whitespace. */
static inline const char *ws(const char *p, const char *e)
{
    if (__builtin_expect(p < e && (unsigned char)*p > ' ', 1)) return p; /* the tracer writes no spaces */
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    return p;
}

/* Store one key's value into EV (typed checks; unknown keys are ignored): 0, or a negative
 * VT_RD_* code with the message in ERR. */
int vtr_rd_field(struct vt_reader *r, struct vt_event *ev, const char *k, size_t kn, const struct jval *v,
                 char *err, size_t errlen);
/* A NUL-terminated copy of s[0..n) in the current record's arena. */
const char *vtr_rd_keep_str(struct vt_reader *r, const char *s, size_t n);
/* Fills ERR with "PATH:LINE: " and the message; returns CODE (a negative VT_RD_*). */
__attribute__((format(printf, 5, 6)))
int vtr_rd_fail(struct vt_reader *r, int code, char *err, size_t errlen, const char *fmt, ...);
/* The event type named s[0..n), or -1. */
int vtr_rd_ev_lookup(const char *s, size_t n);
/* The hand-written parser for the records the tracer writes (reader_fast.c): 0 parsed, FALLBACK
 * (json-c must try), or a negative error from vtr_rd_field. */
int vtr_rd_fast_parse(struct vt_reader *r, const char *p, const char *e, struct vt_event *ev, char *err, size_t errlen);
#endif
