/* pyframes.h - the calling thread's Python frames, for the stacks the tracer records (issue 47).
 *
 * A PyTorch or numba program's allocations are made deep inside the framework; the user's line
 * is a Python frame. This reads the calling thread's frame chain the way out-of-process
 * profilers do (py-spy, austin): the thread's own PyThreadState (PyGILState_GetThisThreadState,
 * thread-specific storage), then each frame's code object and instruction offset, with the
 * structure layouts of the CPython version running (3.10 to 3.13; the table is held to each
 * version's own headers by tests/cases/py_layout.sh). The frames of the calling thread cannot
 * change while it is inside a hook, with or without the interpreter's lock, so the lock is never
 * taken (a thread holding it may be waiting on this one's CUDA call).
 *
 * Invariants: nothing at all happens in a process without Python (its symbols are looked up
 * once with dlsym; libpython is never linked nor loaded); an unknown version reads nothing; the
 * walk is bounded and checks every pointer it follows for NULL and alignment; no allocation, no
 * lock. Turning code positions into lines is left to the report (vt_py_code_describe gives it
 * what it needs, once per code object).
 *
 * Life cycle (tests/cases/py_life.sh): a thread Python never ran has no thread state (no frame);
 * a fork child reads its own copy; from the start of finalization Py_IsInitialized is 0 and no
 * frame is read (daemon threads' states are freed then; a walk already under way as finalization
 * begins is the one window left, microseconds wide). Sub-interpreters: 3.12 and later bind the
 * thread's state to the interpreter it runs, so its frames are read; 3.10 and 3.11 keep the
 * main interpreter's bound, whose frames (the line that entered the sub-interpreter) are read. */
#ifndef VT_PYFRAMES_H
#define VT_PYFRAMES_H
#include <stddef.h>
#include <stdint.h>

/* One Python frame: its code object and the byte offset of its current instruction. */
typedef struct vt_pyframe { uint64_t code; uint32_t offset; } vt_pyframe;

/* The calling thread's Python frames, innermost first, up to MAX; 0 when the process runs no
 * (supported) Python or this thread has no Python frames. */
int vt_py_frames(vt_pyframe *out, int max);

/* What the report needs of a code object to name its lines: file and function names (UTF-8,
 * not NUL-terminated; "" when not readable), first line, and the line table's bytes in the
 * running version's format (`version`: 310 for 3.10 ...). Pointers into the object, valid while
 * it lives (a frame holds it). Returns 0, or -1 when CODE cannot be read. */
struct vt_py_code {
    const char *file, *name;
    size_t file_len, name_len;
    int firstlineno;
    const uint8_t *linetable;
    size_t linetable_len;
    int version;
};
int vt_py_code_describe(uint64_t code, struct vt_py_code *out);

/* What identifies the code object at CODE cheaply (its address with its file, line table and first
 * line: another code object made later at the same address differs), never 0; 0 when CODE is no
 * code object. Three loads, no string read: the per-stack lookup key. */
uint64_t vt_py_code_identity(uint64_t code);

/* The CPython layout the tracer reads for VERSION (310 for 3.10 ...), as "name value" lines in
 * BUF (what tests/pylayout/pylayout.c prints from the headers); 0, or -1 for a version it does
 * not know. */
int vt_py_layout_dump(int version, char *buf, size_t n);
#endif
