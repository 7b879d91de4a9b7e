/* trace_writer.h - crash-safe, lock-free append of JSON lines to the process's trace file.
 *
 * The file is mapped MAP_SHARED and grown (fallocate) in chunks ahead of the data, so each stored
 * byte belongs to the kernel's page cache immediately: SIGKILL/SIGSEGV/abort/_exit lose only lines
 * being formatted at that instant. Writers claim space with one atomic add; only growing the file
 * takes a mutex. Unwritten space is NUL bytes, which readers skip (docs/trace-format.md).
 * Written pages are unmapped from the process a step behind the writer (the page cache keeps
 * them), so a long trace does not grow the program's RSS.
 *
 * No file descriptor is kept (a program may close them all): growing and trimming reopen the
 * file by its absolute name and check it is still the mapped file.
 *
 * Invariants: vt_writer_reserve never blocks except while the file grows, never allocates, never
 * prints; once closed or failed it returns NULL and counts the line as dropped. The first failure
 * (full disk, file size limit, file replaced) stops the writer for good and is handed once to the
 * vt_writer_on_failure callback, so the caller can say so once. Every kept line ends a footer's
 * room before the end of the allocated file: after a failure the footer still fits.
 */
#ifndef VT_TRACE_WRITER_H
#define VT_TRACE_WRITER_H
#include <stddef.h>
#include <stdint.h>

/* Create `path` (O_CREAT|O_EXCL|O_NOFOLLOW, 0600; on EEXIST tries path.1, path.2, ...; missing
 * directories above it are made, 0700; no link another user owns is followed on the way, and
 * the file is made in the very directory checked: vt_safepath_dir_open). Stores the
 * name actually used in used_path. Returns 0 or a negative errno with a message in err. */
int vt_writer_open(const char *path, char *used_path, size_t used_len, char *err, size_t errlen);

/* The open trace's directory, reached by name again without following another user's link: an
 * O_PATH descriptor (the caller closes it) that still holds the trace file, *base its name there;
 * a negative errno otherwise (-ESTALE: the name now leads to another file). For files that live
 * beside the trace (its ring), made and removed in the very directory the trace is in. */
int vt_writer_dir_open(const char **base);

/* Claim `len` bytes; the caller fills them (a whole line ending in '\n'). NULL when not open. */
char *vt_writer_reserve(size_t len);

/* The file offset of a pointer vt_writer_reserve returned. */
uint64_t vt_writer_offset(const char *p);

/* Reserve and copy in one step; returns 0, or -1 when the line was dropped. */
int vt_writer_put(const char *line, size_t len);

/* Stop accepting lines, append the footer as the last line, cut the file to what was written,
 * keep the mapping (threads still running at exit may hold pointers into it). `footer` (may be
 * NULL) is the footer's JSON object without its closing brace: the writer ends it with
 * `,"dropped":N}` and a newline, and counts there every line refused later, in place. */
void vt_writer_close(const char *footer, size_t len);

/* In a fork child: forget the parent's file without touching it. */
void vt_writer_forget(void);

/* True when addr lies in the trace file's mapping. */
int vt_writer_owns(uint64_t addr);
uint64_t vt_writer_lines(void);
/* The error that stopped the writer: 1 and the message in buf, or 0 when none. */
int vt_writer_error(char *buf, size_t len);
/* `fn` is called once, from the thread whose line failed first, when the writer stops. */
void vt_writer_on_failure(void (*fn)(const char *error));
/* Allocate [off, off+len) of fd for real (fallocate, or zeros written where it is unsupported),
 * so that a store into a mapping of it cannot raise SIGBUS. 0 or a negative errno. */
int vt_file_allocate(int fd, uint64_t off, uint64_t len);

#endif
