/* records.h - the binary records hooks hand to the journal, and their JSON formatting.
 *
 * Each record holds what its trace line needs (docs/trace-format.md) and nothing that points into
 * the writing process (an API name is an id into an api_names.h table, which lives in the ring
 * file's header), so another process can format a ring left by a crash. vt_record_format is the
 * only place these lines are printed.
 */
#ifndef VT_RECORDS_H
#define VT_RECORDS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api_names.h"

enum vt_rec_type {
    VT_R_TEXT = 1, VT_R_ALLOC, VT_R_FREE, VT_R_COPY, VT_R_SET, VT_R_LAUNCH, VT_R_SYNC, VT_R_MEMINFO, VT_R_LAUNCHES,
    VT_R_COPIES, VT_R_SETS,
};

struct vt_rec_call {
    uint64_t t0, dur;
    int32_t tid, res, dev;
    uint32_t api; /* api_names.h id */
};

struct vt_rec_alloc {
    struct vt_rec_call c;
    uint64_t addr, size, stream, pitch, width, height, handle, free_b, total_b;
    uint8_t mem, has_stream, is_handle, has_meminfo, graph;
    uint16_t nframes;
    uint64_t frames[]; /* backtrace, innermost first */
};

struct vt_rec_free {
    struct vt_rec_call c;
    uint64_t addr, size, stream;
    uint8_t mem, known, is_handle, has_stream;
};

struct vt_rec_copy {
    struct vt_rec_call c;
    uint64_t dst, src, size, stream, width, height, dpitch, spitch;
    int32_t kind, src_dev;
    uint8_t dir, host, async, is_2d; /* host: 0 none, 1 pageable, 2 pinned, 3 managed */
    uint8_t graph;                   /* 0 done now, 1 captured into a graph, 2 replayed by a graph launch */
    uint16_t nframes;
    uint64_t frames[];               /* backtrace of the call, innermost first (the copy's site) */
};

struct vt_rec_set {
    struct vt_rec_call c;
    uint64_t addr, size, stream;
    int32_t value;
    uint8_t async, graph;            /* graph: as in vt_rec_copy */
};

struct vt_rec_launch {
    struct vt_rec_call c;
    uint32_t k, grid[3], block[3];
    uint8_t graph;                   /* as in vt_rec_copy */
    uint64_t shmem, stream;
};

/* Launches of one configuration counted by one thread (core/fold.h): c.t0 the first's start,
 * c.dur their host time summed, last_end the last one's end. */
struct vt_rec_launches {
    struct vt_rec_call c;
    uint32_t k, grid[3], block[3];
    uint64_t shmem, stream, count, last_end;
    uint8_t graph;  /* 2: kernel nodes of replayed graphs (the launch record's graph values) */
};

/* Copies (VT_R_COPIES) or memsets (VT_R_SETS) of one kind counted by one thread (core/fold.h):
 * this head, then the first one's record (struct vt_rec_copy with its frames, or vt_rec_set),
 * whose c.t0 is the first start and c.dur the host time of all of them summed; `bytes` theirs
 * summed, last_end the last one's end. */
struct vt_rec_fold {
    uint64_t count, bytes, last_end;
};

/* A synchronisation: of one stream (has_stream; 0 is the legacy default stream), else of the
 * device or context. */
struct vt_rec_sync {
    struct vt_rec_call c;
    uint64_t stream;
    uint8_t has_stream;
};

struct vt_rec_meminfo {
    struct vt_rec_call c;
    uint64_t free_b, total_b;
};

struct vt_rec_text {
    uint32_t len;
    char text[];
};

/* The common head of a call line, {"ev":..,"t":..,"dur":..,"tid":..,"api":..,"res":..,"dev":..
 * without the closing brace, into a line with at least 512 bytes of room (written unchecked). */
struct vt_line;
void vt_record_begin(struct vt_line *l, const char *ev, const struct vt_rec_call *c, const struct vt_api_names *names,
                     int res_null);

/* Format record `type` (payload `rec`, `len` bytes) as one JSON line ending in '\n' into buf,
 * naming the API from `names` (vt_api_names_current(), or a sanitized table read from a ring
 * file: records read back from a crashed process are untrusted, and an id outside the table is
 * the empty name). `incomplete` marks a record whose writer died while filling it: it is dropped.
 * Returns the line's length, or 0 when the record is dropped, malformed or does not fit. */
size_t vt_record_format(int type, const void *rec, size_t len, int incomplete, const struct vt_api_names *names,
                        char *buf, size_t cap);

#endif
