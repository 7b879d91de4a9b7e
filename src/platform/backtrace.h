/* backtrace.h - native call stacks for allocations and findings, and the map of loaded modules the
 * report needs to symbolize them offline (no symbolization ever happens in the traced process).
 *
 * Invariants: vt_backtrace gives the frames glibc backtrace() gives (through unwind.h, or glibc
 * itself with VRAMTRACE_UNWIND=glibc and wherever the fast walk cannot tell), less the tracer's
 * own; it allocates only on its first call (libgcc is loaded for backtrace()) and on the first
 * call in each thread (the thread's stack bounds). Module records are emitted once per object. */
#ifndef VT_BACKTRACE_H
#define VT_BACKTRACE_H
#include <stdint.h>

#include "tracer.h"   /* VT_BT_MAX */

/* Fill up to `max` return addresses of the caller's stack, innermost first. Returns the count. */
int vt_backtrace(uint64_t *frames, int max);
/* The identity of this thread's last vt_backtrace: the same non-zero value means the same frames
 * (the unwinder's memo, unwind.h); 0 when it cannot tell. */
uint64_t vt_backtrace_serial(void);
/* A loaded object: base is its load bias, [lo, hi) its PT_LOAD span; build_id its GNU build-id
 * note in hex ("" without one), read from memory; file_size/mtime its file's, from stat (0 when
 * it cannot be read): the report checks it symbolizes the file that ran. */
struct vt_module_info {
    const char *path;
    uint64_t base, lo, hi;
    char build_id[2 * 64 + 1];
    uint64_t file_size;
    int64_t mtime;
};
/* Where news of a loaded object goes: the layer above writes it as a `module` record. Called
 * under the module lock, once per object. */
typedef void (*vt_module_fn)(const struct vt_module_info *m);
/* Hand every loaded object not yet reported to SINK (called when a trace opens). */
void vt_modules_emit_new(vt_module_fn sink);
/* The same for objects that appeared since (a dlopen), when a frame lies outside all known ones.
 * SERIAL: the frames' vt_backtrace_serial (0: none); the thread's last stack found covered is
 * not looked at again. */
void vt_modules_cover(const uint64_t *frames, int n, uint64_t serial, vt_module_fn sink);
/* Fork child / new trace: forget what was emitted. */
void vt_modules_reset(void);
/* True if addr is inside libvramtrace.so itself. */
int vt_addr_is_self(uint64_t addr);

#endif
