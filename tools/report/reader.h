/* reader.h - streaming reader for vramtrace JSONL traces (docs/trace-format.md, version 1).
 *
 * Contract:
 *  - Memory is bounded by the longest line (<= VT_READER_MAX_LINE), never by the trace size.
 *  - One record at a time: vt_reader_next() fills a struct vt_event whose strings and `bt`
 *    array point into the reader and stay valid only until the next call.
 *  - Crash damage is accepted, as the format requires: NUL bytes are skipped; a segment cut off
 *    by a NUL run, or a last line without '\n', is dropped and reported through the warning
 *    callback ("FILE:LINE: warning: ...").  A missing footer is normal.
 *  - Anything else that is wrong (not JSON, not an object, unknown version, missing or mistyped
 *    field, negative or absurd number) is an error: a negative VT_RD_* code and the message
 *    "FILE:LINE: what is wrong" in the caller's buffer.  The reader never prints.
 *  - Common fast path: flat objects with escape-free strings, integers and flat arrays are
 *    parsed by hand; anything else (escapes, nesting, floats) goes through a reused strict
 *    json_tokener (json-c), so both paths accept exactly strict JSON. */
#ifndef VT_REPORT_READER_H
#define VT_REPORT_READER_H
#include <stddef.h>
#include <stdint.h>

#include "report/event.h"

#define VT_READER_MAX_LINE (64u << 20)

struct vt_reader;

/* Opens PATH ("-" is not accepted).  Returns NULL and fills ERR on failure, with errno ENOMEM
 * when the reader's memory could not be had (a run-time failure, not bad input).
 * WARN (may be NULL) receives each warning; the reader keeps no pointer to the message. */
struct vt_reader *vt_reader_open(const char *path, vt_reader_warn_fn warn, void *warn_ctx,
                                 char *err, size_t errlen);
/* As vt_reader_open, on FD (the reader owns it, and closes it on failure too), read from offset 0
 * with pread (FD's own offset is not used or moved); NAME labels messages. */
struct vt_reader *vt_reader_open_fd(int fd, const char *name, vt_reader_warn_fn warn, void *warn_ctx,
                                    char *err, size_t errlen);
/* The file offset of the next line not yet returned (progress). */
uint64_t vt_reader_offset(const struct vt_reader *r);
/* Reads the next record into EV.  Returns 1 with a record, 0 at the end of the trace, or a
 * negative VT_RD_* code with "FILE:LINE: ..." in ERR.  The first record returned is always the
 * validated header (its absence is an error). */
int vt_reader_next(struct vt_reader *r, struct vt_event *ev, char *err, size_t errlen);
/* Parses one line (no '\n', no NUL) as a record; for unit tests and the fuzzer.  Same returns
 * as vt_reader_next() (1 on success). FIRST says whether the line must be the header. */
int vt_reader_parse_line(struct vt_reader *r, char *line, size_t len, int first,
                         struct vt_event *ev, char *err, size_t errlen);
/* A reader with no file, for vt_reader_parse_line(). NAME labels messages. */
struct vt_reader *vt_reader_new_mem(const char *name);
long vt_reader_warnings(const struct vt_reader *r);
long vt_reader_lines(const struct vt_reader *r);
/* Continue reading at byte OFFSET, which starts line number LINE (1-based); GOT_HEADER says
 * whether a record was already returned (the header). For the parallel reader (reader_mt.h),
 * which hands the rest of a trace back here at its first unusual line. 0, or -1. */
int vt_reader_seek(struct vt_reader *r, uint64_t offset, long line, int got_header);
const char *vt_reader_path(const struct vt_reader *r);
void vt_reader_close(struct vt_reader *r);

#endif
