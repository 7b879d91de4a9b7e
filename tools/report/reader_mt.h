/* reader_mt.h - the trace reader (reader.h) spread over the machine's cores for large traces.
 *
 * Worker threads parse fixed-size chunks of the file (each chunk owns the lines that start in
 * it) into batches of events; the caller takes them in file order, so it sees exactly the
 * records, fields and line numbers vt_reader_next() gives. Only clean lines are handled here:
 * at the first line that would need a warning or an error (NUL bytes, a parse or schema error, a
 * missing newline at the end, an over-long line, no header first) the rest of the file is read
 * by the sequential reader from that line, so every message is the sequential reader's own.
 * Small traces (under 64 MiB) and one-CPU machines use the sequential reader throughout.
 *
 * Invariants: events returned are valid until the next call; memory is bounded by the batches in
 * flight (about 8 MiB each, two per worker), never by the trace size.
 */
#ifndef VT_REPORT_READER_MT_H
#define VT_REPORT_READER_MT_H
#include "report/reader.h"

struct vt_mreader;
/* As vt_reader_open. VRAMTRACE_REPORT_THREADS=N caps the workers (1: sequential);
 * VRAMTRACE_REPORT_CHUNK=BYTES sets the chunk size and drops the size threshold (tests). */
struct vt_mreader *vt_mreader_open(const char *path, vt_reader_warn_fn warn, void *warn_ctx, char *err, size_t errlen);
/* As vt_reader_open_fd: the reader owns FD; PATH names it in messages. */
struct vt_mreader *vt_mreader_open_fd(int fd, const char *path, vt_reader_warn_fn warn, void *warn_ctx, char *err,
                                      size_t errlen);
/* As vt_reader_next. */
int vt_mreader_next(struct vt_mreader *m, struct vt_event *ev, char *err, size_t errlen);
long vt_mreader_lines(const struct vt_mreader *m);
/* How far the reading has come, and the file's size at the open (progress; bytes). */
uint64_t vt_mreader_offset(const struct vt_mreader *m);
uint64_t vt_mreader_size(const struct vt_mreader *m);
/* How the reading was spread at the open: worker threads (0: the sequential reader throughout),
 * the chunk size in bytes and the number of chunks (tests: the knobs above are what they say). */
void vt_mreader_plan(const struct vt_mreader *m, int *workers, uint64_t *chunk, long *nchunks);
void vt_mreader_close(struct vt_mreader *m);
#endif
