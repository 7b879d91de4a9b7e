/* pystack.h - recorded call stacks with the calling thread's Python frames (issue 47).
 *
 * A recorded stack is the native frames (platform/backtrace.h) followed by the Python frames,
 * innermost first, each as one tagged word: VT_PYFRAME_TAG | id << 24 | instruction offset,
 * where id names a `pycode` record written once per code object (its file, name, first line
 * and line table), so the report turns offsets into lines offline. Bit 63 is never set in a
 * user-space return address, so the tag cannot be mistaken for one; every path that carries a
 * backtrace (JSON "bt", binary records) carries these too.
 *
 * Invariants: in a process without Python it is vt_backtrace plus one relaxed load; the code
 * table is lock-free to read, a mutex only when a new code object is first seen. */
#ifndef VT_PYSTACK_H
#define VT_PYSTACK_H
#include <stdint.h>

#include <vramtrace/trace.h>   /* VT_PYFRAME_TAG */
#include "jsonl.h"             /* vt_line */

/* Fill FRAMES (room for VT_BT_MAX) with the native stack (DEPTH frames at most) and the Python
 * frames after it; writes `module` records for new objects and `pycode` records for new code.
 * Returns the count. */
int vt_stack_capture(uint64_t *frames, int depth);
/* The identity of this thread's last captured stack: the same non-zero value means the same
 * frames (the unwinder's memo; 0 with Python frames, or when it cannot tell). */
uint64_t vt_stack_serial(void);
/* ,"bt":[...] of the current call stack (Python frames included) when backtraces are on */
void vt_fmt_bt(vt_line *l);
/* Fork child / new trace: every code object is new again (its record must be in this trace). */
void vt_pystack_reset(void);
#endif
