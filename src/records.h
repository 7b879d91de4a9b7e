/* records.h - the binary records hooks hand to the journal, and their JSON formatting.
 *
 * Each record holds what its trace line needs (docs/trace-format.md) and nothing that points into
 * the writing process (API names are copied in), so another process can format a ring left by a
 * crash. vt_record_format is the only place these lines are printed.
 */
#ifndef VT_RECORDS_H
#define VT_RECORDS_H
#include <stddef.h>
#include <stdint.h>

enum vt_rec_type {
    VT_R_TEXT = 1, VT_R_ALLOC, VT_R_FREE, VT_R_COPY, VT_R_SET, VT_R_LAUNCH, VT_R_SYNC, VT_R_MEMINFO,
};

#define VT_API_NAME_MAX 40

struct vt_rec_call {
    uint64_t t0, dur;
    int32_t tid, res, dev;
    char api[VT_API_NAME_MAX]; /* NUL-terminated, truncated */
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
};

struct vt_rec_set {
    struct vt_rec_call c;
    uint64_t addr, size, stream;
    int32_t value;
    uint8_t async;
};

struct vt_rec_launch {
    struct vt_rec_call c;
    uint32_t k, grid[3], block[3];
    uint64_t shmem, stream;
};

struct vt_rec_meminfo {
    struct vt_rec_call c;
    uint64_t free_b, total_b;
};

struct vt_rec_text {
    uint32_t len;
    char text[];
};

/* Copy a (short, literal) API name into a record. */
static inline void vt_rec_set_api(struct vt_rec_call *c, const char *api)
{
    size_t i = 0;
    for (; api && api[i] && i + 1 < VT_API_NAME_MAX; i++) c->api[i] = api[i];
    c->api[i] = '\0';
}

/* The common head of a call line, {"ev":..,"t":..,"dur":..,"tid":..,"api":..,"res":..,"dev":..
 * without the closing brace, into a line with at least 512 bytes of room (written unchecked). */
struct vt_line;
void vt_record_begin(struct vt_line *l, const char *ev, const struct vt_rec_call *c, int res_null);

/* Records read back from a crashed process's ring are untrusted: cut the API name at the first
 * character that is not [A-Za-z0-9_], so a damaged record can never break a line's JSON. Text
 * records are checked by the reader like any line. */
void vt_record_sanitize(int type, void *rec, size_t len);

/* Format record `type` (payload `rec`, `len` bytes) as one JSON line ending in '\n' into buf.
 * `incomplete` marks a record whose writer died while filling it: it is dropped. Returns the
 * line's length, or 0 when the record is dropped, malformed or does not fit. */
size_t vt_record_format(int type, const void *rec, size_t len, int incomplete, char *buf, size_t cap);

#endif
