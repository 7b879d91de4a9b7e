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
#include <string.h>

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

/* Copy an API name into a record: NUL-terminated, truncated, zero-padded to the field. Every
 * record takes one, so each thread keeps the padded copies of the names it used last, keyed by
 * the name's address, and a hit is one fixed-size copy (a byte loop cost ~3 instructions a
 * character). Hence `api` must be a string whose bytes never change: the hooks pass their own
 * names, string literals (NULL is ""). Not async-signal-safe, like the hooks themselves. */
struct vt_api_copy { const char *name; char api[VT_API_NAME_MAX]; };
#define VT_API_CACHE_BITS 3
extern __thread __attribute__((tls_model("initial-exec"))) struct vt_api_copy vt_api_cache[1 << VT_API_CACHE_BITS];
void vt_rec_set_api_slow(struct vt_rec_call *c, const char *api, struct vt_api_copy *e);
static inline void vt_rec_set_api(struct vt_rec_call *c, const char *api)
{
    /* A zeroed entry (name NULL, all zero bytes) is already the right copy of NULL. */
    struct vt_api_copy *e = &vt_api_cache[((uintptr_t)api * 0x9E3779B97F4A7C15ull) >> (64 - VT_API_CACHE_BITS)];
    if (__builtin_expect(e->name == api, 1)) memcpy(c->api, e->api, VT_API_NAME_MAX);
    else vt_rec_set_api_slow(c, api, e);
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
