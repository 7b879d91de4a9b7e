/* event.h - one trace record as the report sees it (struct vt_event), the value sets it is typed
 * with (built from vramtrace/trace.h's lists), and their names.  The reader (reader.c,
 * reader_fast.c, reader_fields.c) fills it; analysis and the renderers read it.  Types only,
 * and the name lookups reader_fields.c defines. */
#ifndef VT_REPORT_EVENT_H
#define VT_REPORT_EVENT_H
#include <stddef.h>
#include <stdint.h>

#include <vramtrace/trace.h>   /* VT_TRACE_VERSION, and the names the enums below are built from */

#define VT_READER_MAX_BT 256
#define VT_READER_MAX_PARAMS 4096      /* a kernel's parameters kept (CUDA allows 32764 bytes of them) */
#define VT_MAX_SANE_SIZE (1ull << 50)      /* 1 PiB: bigger successful sizes are "absurd" */

enum vt_rd_err { VT_RD_OK = 0, VT_RD_EIO = -1, VT_RD_ESYNTAX = -2, VT_RD_ESCHEMA = -3, VT_RD_ENOMEM = -4 };

/* The format's value sets, from vramtrace/trace.h's lists, with 0 for "absent" (or, for the
 * record kind, a kind this reader does not know: such records are returned and ignored). */
#define VT_RD_X(prefix, id) prefix##id,
#define VT_RD_EV(id) VT_RD_X(VT_EV_, id)
#define VT_RD_MEM(id) VT_RD_X(VT_MEM_, id)
#define VT_RD_DIR(id) VT_RD_X(VT_DIR_, id)
#define VT_RD_HOST(id) VT_RD_X(VT_HOST_, id)
enum vt_ev_type { VT_EV_UNKNOWN = 0, VT_TRACE_EVENTS(VT_RD_EV) VT_EV__COUNT };
enum vt_mem { VT_MEM_NONE = 0, VT_TRACE_MEMS(VT_RD_MEM) VT_MEM__COUNT };
enum vt_dir { VT_DIR_NONE = 0, VT_TRACE_DIRS(VT_RD_DIR) VT_DIR__COUNT };
enum vt_host { VT_HOST_NONE = 0, VT_TRACE_HOSTS(VT_RD_HOST) VT_HOST__COUNT };
#undef VT_RD_EV
#undef VT_RD_MEM
#undef VT_RD_DIR
#undef VT_RD_HOST
#undef VT_RD_X

/* Presence bits for optional fields (struct vt_event.has). */
enum {
    VT_F_T = 1u << 0, VT_F_DUR = 1u << 1, VT_F_TID = 1u << 2, VT_F_API = 1u << 3,
    VT_F_RES = 1u << 4, VT_F_DEV = 1u << 5, VT_F_ADDR = 1u << 6, VT_F_SIZE = 1u << 7,
    VT_F_MEM = 1u << 8, VT_F_BT = 1u << 9, VT_F_HANDLE = 1u << 10, VT_F_FREE = 1u << 11,
    VT_F_TOTAL = 1u << 12, VT_F_DIR = 1u << 13, VT_F_HOST = 1u << 14, VT_F_K = 1u << 15,
    VT_F_ID = 1u << 16, VT_F_NAME = 1u << 17, VT_F_KIND = 1u << 18, VT_F_ARG = 1u << 19,
    VT_F_VALUE = 1u << 20, VT_F_PATH = 1u << 21, VT_F_BASE = 1u << 22, VT_F_LO = 1u << 23,
    VT_F_HI = 1u << 24, VT_F_VERSION = 1u << 25, VT_F_PID = 1u << 26, VT_F_FORMAT = 1u << 27,
    VT_F_ALLOCREF = 1u << 28, VT_F_WALL = 1u << 29, VT_F_ASYNC = 1u << 30, VT_F_LABEL = 1u << 31,
};

struct vt_event {
    enum vt_ev_type type;
    long line;                      /* 1-based line number in the file */
    uint32_t has;                   /* VT_F_* bits of the fields present */
    int res_null;                   /* "res": null (call never returned) */
    int64_t t, dur, tid, res, dev;
    const char *api;                /* "" when absent */
    uint64_t addr, size, handle, free_bytes, total_bytes, stream, value;
    int has_stream;                 /* "stream" present (0 is the legacy default stream) */
    uint64_t src, dst;              /* copy */
    enum vt_mem mem;
    enum vt_dir dir;
    enum vt_host host;
    int async;
    int captured;                   /* launch/copy/set captured into a graph (not done then) */
    int graph;                      /* done by a graph launch (launch/copy/set), made by one (alloc) */
    const uint64_t *bt;             /* innermost first; nbt entries */
    size_t nbt;
    int64_t k, id, arg, offset;
    const char *name;               /* kernel / range / device name; "" when absent */
    const char *kind, *severity, *msg, *cls, *mapping;   /* finding */
    uint64_t alloc_addr, alloc_size;                      /* finding "alloc" */
    uint64_t count;                 /* finding: occurrences so far (0 when absent); "id" names its first line */
    int64_t first;                  /* finding: time of the first occurrence (0 when absent) */
    int64_t last;                   /* launches, copies, sets: the last folded one's end (0 when absent); count: how many */
    uint64_t bytes;                 /* copies, sets: the folded ones' bytes summed */
    const char *path;               /* module */
    const char *build_id;           /* module: hex GNU build-id ("" when absent) */
    uint64_t file_size;             /* module: its file's size, 0 when absent */
    int64_t mtime;                  /* module: its file's mtime (s) */
    uint64_t base, lo, hi;
    int sim;                        /* device */
    int cc;                         /* device: compute capability, major * 10 + minor ("9.0": 90); 0 unknown */
    const char *file, *linetable;   /* pycode: the code object's file; its line table (hex) */
    int64_t pyline;                 /* pycode: its first line */
    int pyver;                      /* pycode: the CPython version whose format the table is in (311 ...) */
    const uint32_t *params;         /* kernel: offset, size of each parameter (nparams pairs) */
    size_t nparams;
    const char *pci;                /* device: PCI bus id ("" when absent) */
    int64_t wall_time_ns;           /* header: wall clock at t, ns (0 when absent) */
    uint64_t keep;                  /* pool_trim: keep; pool_attr: release_threshold */
    uint64_t reserved_after;        /* pool_trim (has_reserved_after) */
    int has_keep, has_reserved_after;
    /* header */
    const char *format, *tracer, *program, *hostname, *checks;
    const char *torch_alloc_conf, *torch_cuda_alloc_conf;   /* PyTorch's allocator settings ("" when unset) */
    int torch_tensors;              /* run --torch-tensors set them */
    int64_t version, pid, ppid, wall_time, page_size;
    int64_t rank, local_rank, world_size;   /* -1 when not in the header's rank object */
    /* footer */
    int64_t events, dropped, live_bytes, findings;
    const char *error;              /* why the tracer stopped writing (disk full ...); "" when absent */
    /* snapshot, pause, resume (vramtrace/vramtrace.h) */
    const char *label;              /* "" when absent */
    int64_t depth;                  /* pause depth after the call */
    uint64_t skipped;               /* resume: calls not recorded while paused */
};

/* A warning from the reader: "FILE:LINE: warning: ..." (the reader keeps no pointer to MSG). */
typedef void (*vt_reader_warn_fn)(void *ctx, const char *msg);

const char *vt_rd_ev_name(enum vt_ev_type t);
const char *vt_rd_mem_name(enum vt_mem m);
const char *vt_rd_dir_name(enum vt_dir d);
const char *vt_rd_host_name(enum vt_host h);
#endif
