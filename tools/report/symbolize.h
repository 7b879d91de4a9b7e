/* symbolize.h - offline symbolization of recorded return addresses with elfutils libdwfl, from
 * the `module` records of a trace (path, load bias, [lo, hi)).  Never touches a live process.
 * Modules whose file is missing simply give "module+0xoffset" frames.  Results are cached per
 * address; every string returned is owned by the symbolizer and lives until vt_sym_free(). */
#ifndef VT_REPORT_SYMBOLIZE_H
#define VT_REPORT_SYMBOLIZE_H
#include <stddef.h>
#include <stdint.h>

struct vt_frame {
    uint64_t pc;
    const char *func;       /* demangled function name, or NULL when unknown */
    const char *file;       /* source file basename, or NULL */
    int line;               /* 0 when unknown */
    const char *module;     /* module basename, or NULL when outside every module */
    uint64_t offset;        /* pc - module load bias */
    int internal;           /* vramtrace, CUDA runtime/driver, CUDA's headers, or nvcc-generated launch stubs */
    int startup;            /* C start-up code under main (_start, __libc_start_*): never a site, never shown */
    int python;             /* a Python frame (VT_PYFRAME_TAG): func is its function, path its file */
    const char *path;       /* python: the file as the interpreter named it (file is its basename) */
    const char *label;      /* "func (file:line)", "func (module)", "module+0x1f0" or "0x7f..." */
    /* One pc can be several source frames: a function inlined into another (a typed
     * cudaMalloc<T> from cuda_runtime.h inlined into a helper inlined into main). The frame
     * returned for a pc is the innermost; `outer` is the function it was inlined into, at the
     * line of that call (same pc); NULL for the real function. */
    const struct vt_frame *outer;
};

struct vt_sym;
/* ENABLED 0 makes a symbolizer that only maps addresses to modules (no ELF/DWARF reading). */
struct vt_sym *vt_sym_new(int enabled);
/* Records a module; duplicates are ignored.  Returns 0, or -1 out of memory. */
/* A module record: path, load bias, PT_LOAD span, and what identifies the file that ran
 * (build_id hex, "" or NULL when unknown; file_size 0 when unknown). */
struct vt_sym_module { const char *path; uint64_t base, lo, hi; const char *build_id; uint64_t file_size; int64_t mtime; };
int vt_sym_add_module(struct vt_sym *s, const struct vt_sym_module *mod);
/* Modules a recorded stack goes through, other than internal ones (vt_sym_is_internal_module),
 * whose file is not the one that ran (another build-id, or size and mtime), or with
 * GONE whose file is not there at all (moved or deleted since the trace), and for which no
 * matching file was found (/usr/lib/debug/.build-id/): their frames are shown as module+offset,
 * never with another build's lines. Writes "path, path" into BUF; the count. */
size_t vt_sym_stale_modules(const struct vt_sym *s, int gone, char *buf, size_t n);
/* Resolves PC (a return address: the call is looked up at PC-1).  Never fails: unknown
 * addresses give a frame with only `pc` and `label`.  The pointer is valid until vt_sym_free(). */
const struct vt_frame *vt_sym_lookup(struct vt_sym *s, uint64_t pc);
void vt_sym_free(struct vt_sym *s);

/* A Python code object a recorded stack goes through (a `pycode` record): its id, file, function,
 * first line, and line table (hex, in VERSION's format). Returns 0, or -1 out of memory. */
int vt_sym_add_pycode(struct vt_sym *s, uint64_t id, const char *file, const char *name, int firstline, int version,
                      const char *linetable_hex);
/* The modules recorded, in order; module I's file opened read-only (the caller closes it) when it
 * is the build that ran, else -1 (the same rule symbolization follows: a file that changed since
 * the trace is never read for it). *PATH: its recorded path. For reading what else the file holds
 * (the report's SASS reader takes kernels' cubins from .nv_fatbin). */
size_t vt_sym_module_count(const struct vt_sym *s);
int vt_sym_module_open(struct vt_sym *s, size_t i, const char **path);
/* True when a module basename is libvramtrace, libcudart, libcuda or similar CUDA plumbing. */
int vt_sym_is_internal_module(const char *basename);
/* NVIDIA's libraries a program calls (cuBLAS, cuDNN, cuFFT, cuRAND, cuSPARSE, cuSOLVER, NCCL,
 * NVRTC, nvJitLink, cuTENSOR, NPP, nvJPEG): what they allocate is named by the entry point the
 * program called (ncclCommInitRank) and the program's line, not by their inner functions. */
int vt_sym_is_vendor_module(const char *basename);
/* Demangles a C++ (Itanium ABI) name into BUF; copies NAME unchanged when it is not mangled.
 * Returns BUF. */
char *vt_demangle(const char *name, char *buf, size_t n);
#endif
