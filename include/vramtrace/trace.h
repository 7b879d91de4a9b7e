/* vramtrace/trace.h - the trace format's names: its version, record kinds ("ev"), the value sets
 * of its enumerated fields, and its field names (docs/trace-format.md is the prose).
 *
 * One list, two sides: the writer in src/ takes every name it writes from here, and the reader in
 * tools/report/ builds its enums and lookup tables from the same lists, so a kind the tracer
 * writes is a kind the report knows.  tests/unit/test_report_format.c formats every binary record
 * and reads it back; tests/cases/trace_names.sh checks the names in real traces (and the keys the
 * reader matches) against these lists.
 *
 * Each list is an X-macro, X(ID), with the JSON string in a VT_<LIST>N_<ID> macro so that a writer
 * can paste it into a literal ("{\"ev\":\"" VT_EVN_FREE "\"").  Each side builds its own enum from
 * a list (the writer's start at 0, the reader's put a "none"/"unknown" entry first), so the order
 * of a list matters only to the writer's tables.
 *
 * Invariants: a list only grows within a version (a reader of version N reads every name a
 * writer of version N writes); renaming or dropping a name, or changing what one means, bumps
 * VT_TRACE_VERSION.  Plain C preprocessor only: no declarations, usable from C and C++. */
#ifndef VRAMTRACE_TRACE_H
#define VRAMTRACE_TRACE_H

#define VT_TRACE_FORMAT "vramtrace-trace"   /* the header's "format" */
#define VT_TRACE_VERSION 1                   /* the header's "version" */
#define VT_TRACE_STR_(x) #x
#define VT_TRACE_XSTR(x) VT_TRACE_STR_(x)   /* VT_TRACE_XSTR(VT_TRACE_VERSION) is "1" */

/* ---- record kinds: "ev" -------------------------------------------------------------------- */
#define VT_EVN_HEADER      "header"
#define VT_EVN_MODULE      "module"
#define VT_EVN_DEVICE      "device"
#define VT_EVN_ALLOC       "alloc"
#define VT_EVN_FREE        "free"
#define VT_EVN_MAP         "map"
#define VT_EVN_UNMAP       "unmap"
#define VT_EVN_COPY        "copy"
#define VT_EVN_SET         "set"
#define VT_EVN_KERNEL      "kernel"
#define VT_EVN_LAUNCH      "launch"
#define VT_EVN_LAUNCHES    "launches"     /* launches of one configuration counted by one thread (folded) */
#define VT_EVN_COPIES      "copies"       /* copies of one kind and site counted by one thread (folded) */
#define VT_EVN_SETS        "sets"         /* memsets of one kind counted by one thread (folded) */
#define VT_EVN_SYNC        "sync"
#define VT_EVN_MEMINFO     "meminfo"
#define VT_EVN_FINDING     "finding"
#define VT_EVN_RANGE_PUSH  "range_push"
#define VT_EVN_RANGE_POP   "range_pop"
#define VT_EVN_RANGE_START "range_start"
#define VT_EVN_RANGE_END   "range_end"
#define VT_EVN_MARK        "mark"
#define VT_EVN_FOOTER      "footer"
#define VT_EVN_POOL_TRIM   "pool_trim"
#define VT_EVN_IPC_OPEN    "ipc_open"
#define VT_EVN_IPC_CLOSE   "ipc_close"
#define VT_EVN_GRAPH_ALLOC "graph_alloc"
#define VT_EVN_SNAPSHOT    "snapshot"     /* vramtrace_snapshot() (vramtrace/vramtrace.h) */
#define VT_EVN_PAUSE       "pause"        /* vramtrace_pause() */
#define VT_EVN_RESUME      "resume"       /* vramtrace_resume() */
#define VT_EVN_POOL_ATTR   "pool_attr"    /* a pool's release threshold set */
#define VT_EVN_RESET       "reset"        /* cudaDeviceReset / cuDevicePrimaryCtxReset, after its frees */
#define VT_EVN_PYCODE      "pycode"       /* a Python code object a recorded stack goes through */
#define VT_EVN_STEP        "step"         /* vramtrace_step(): a training step begins */
#define VT_TRACE_EVENTS(X)                                                                    \
    X(HEADER) X(MODULE) X(DEVICE) X(ALLOC) X(FREE) X(MAP) X(UNMAP) X(COPY) X(SET) X(KERNEL)   \
    X(LAUNCH) X(SYNC) X(MEMINFO) X(FINDING) X(RANGE_PUSH) X(RANGE_POP) X(RANGE_START)         \
    X(RANGE_END) X(MARK) X(FOOTER) X(POOL_TRIM) X(IPC_OPEN) X(IPC_CLOSE) X(GRAPH_ALLOC)  \
    X(SNAPSHOT) X(PAUSE) X(RESUME) X(RESET) X(POOL_ATTR) X(PYCODE) X(LAUNCHES) X(COPIES) X(SETS) \
    X(STEP)

/* ---- "mem": what kind of memory an alloc/free (or a map-tracked range) is -------------------- */
#define VT_MEMN_DEVICE     "device"      /* cudaMalloc, cuMemAlloc...: VRAM */
#define VT_MEMN_ASYNC      "async"       /* stream-ordered (pool) allocations: VRAM */
#define VT_MEMN_MANAGED    "managed"     /* cudaMallocManaged: reported separately */
#define VT_MEMN_PINNED     "pinned"      /* cudaHostAlloc, cudaMallocHost: host */
#define VT_MEMN_REGISTERED "registered"  /* cudaHostRegister: host */
#define VT_MEMN_VMM_MAP    "vmm_map"     /* an address range mapped with cuMemMap (bytes counted by its handle) */
#define VT_MEMN_FOREIGN    "foreign"     /* device memory the driver knows but the tracer never saw allocated */
#define VT_MEMN_VMM        "vmm"         /* cuMemCreate physical memory (a handle): VRAM */
#define VT_MEMN_IPC        "ipc"         /* another process's memory opened by IPC handle: not counted */
#define VT_MEMN_GRAPH      "graph"       /* a graph allocation node's address before its graph runs */
#define VT_TRACE_MEMS(X) \
    X(DEVICE) X(ASYNC) X(MANAGED) X(PINNED) X(REGISTERED) X(VMM_MAP) X(FOREIGN) X(VMM) X(IPC) X(GRAPH)

/* The kinds an allocation still live at exit is named by, in the order every output lists them
 * (the tracer's exit summary, the report): "1 device allocation (4.00 KiB), 1 managed ...". The
 * first three are VRAM. Registered host memory, mappings and foreign ranges are not the
 * program's allocations. */
#define VT_LEAK_KINDS(X) \
    X(DEVICE, "device") X(ASYNC, "stream-ordered") X(VMM, "VMM") X(MANAGED, "managed") X(PINNED, "pinned host")

/* ---- "dir" of a copy, worked out from the pointers ------------------------------------------- */
#define VT_DIRN_H2H "h2h"
#define VT_DIRN_H2D "h2d"
#define VT_DIRN_D2H "d2h"
#define VT_DIRN_D2D "d2d"
#define VT_TRACE_DIRS(X) X(H2H) X(H2D) X(D2H) X(D2D)

/* ---- "host": the host side of an h2d/d2h copy ------------------------------------------------ */
#define VT_HOSTN_PAGEABLE "pageable"
#define VT_HOSTN_PINNED   "pinned"
#define VT_HOSTN_MANAGED  "managed"
#define VT_TRACE_HOSTS(X) X(PAGEABLE) X(PINNED) X(MANAGED)

/* ---- findings: "kind" and "severity" ---------------------------------------------------------- */
#define VT_FINDN_HOST_POINTER   "host_pointer"
#define VT_FINDN_USE_AFTER_FREE "use_after_free"
#define VT_FINDN_OOB_POINTER    "oob_pointer"
#define VT_FINDN_OOB_COPY       "oob_copy"
#define VT_FINDN_DIRECTION      "direction_mismatch"
#define VT_FINDN_DOUBLE_FREE    "double_free"
#define VT_FINDN_INVALID_FREE   "invalid_free"
#define VT_FINDN_WRONG_DEVICE   "wrong_device"
#define VT_FINDN_MISMATCHED_FREE "mismatched_free"
#define VT_TRACE_FINDINGS(X) \
    X(HOST_POINTER) X(USE_AFTER_FREE) X(OOB_POINTER) X(OOB_COPY) X(DIRECTION) X(DOUBLE_FREE) X(INVALID_FREE) \
    X(WRONG_DEVICE) X(MISMATCHED_FREE)
#define VT_SEVN_ERROR   "error"
#define VT_SEVN_WARNING "warning"
/* not a finding: an argument word that looked like a bad address where nothing can verify
 * whether the kernel uses it (inside a by-value struct, no PTX); the report folds them per kernel */
#define VT_SEVN_NOTE    "note"

/* ---- Python frames in "bt": VT_PYFRAME_TAG | pycode id << 24 | byte offset of the instruction
 * in the code object (bit 63 is never set in a user-space return address) ------------------ */
#define VT_PYFRAME_TAG 0x8000000000000000ull

/* ---- field names: every top-level key a record may carry (docs/trace-format.md says which
 * record has which).  Keys are C identifiers; VT_TRACE_FIELD_NAME(k) is the JSON string. ---- */
#define VT_TRACE_FIELDS(X)                                                                     \
    /* every record */ X(ev)                                                                   \
    /* calls */ X(t) X(dur) X(tid) X(api) X(res) X(dev)                                        \
    /* memory */ X(addr) X(size) X(bytes) X(mem) X(handle) X(stream) X(graph) X(pitch) X(width)        \
        X(height) X(free_bytes) X(total_bytes) X(bt)                                           \
    /* copies and sets */ X(dst) X(src) X(dir) X(host) X(async) X(kind) X(dpitch) X(spitch)  \
        X(src_dev) X(value) X(captured)                                                       \
    /* pools */ X(pool) X(keep) X(reserved_before) X(reserved_after) X(release_threshold)                           \
    /* kernels and launches */ X(id) X(name) X(params) X(layout) X(k) X(grid) X(block) X(shmem) X(last) \
    /* findings */ X(severity) X(arg) X(offset) X(class) X(mapping) X(alloc) X(msg) X(count) X(first) \
    /* modules and devices */ X(path) X(base) X(lo) X(hi) X(build_id) X(file_size) X(mtime) X(cc) X(mem_clock_khz)              \
        X(bus_width_bits) X(pageable_access) X(sim) X(pci)                                            \
    /* header */ X(format) X(version) X(tracer) X(token) X(pid) X(ppid) X(pidns) X(program) X(argv) X(argv_omitted) \
        X(wall_time) X(wall_time_ns) X(hostname) X(rank) X(page_size) X(backtraces) X(checks) \
        X(torch_alloc_conf) X(torch_cuda_alloc_conf) X(torch_tensors) \
    /* the program's own API */ X(label) X(depth) X(skipped)                                 \
    /* pycode */ X(file) X(line) X(pyver) X(linetable)                                          \
    /* footer */ X(events) X(live_bytes) X(findings) X(dropped) X(error)
#define VT_TRACE_FIELD_NAME(k) #k

#endif
