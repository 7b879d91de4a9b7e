/* analysis.h - what one trace says: live device bytes, the peak and who held it, failed
 * allocations, leaks, transfers, findings, NVTX attribution.  Fed one record at a time by the
 * reader (memory bounded by live allocations, distinct call stacks and the capped detail lists
 * below, never by the trace length), then finished once, which symbolizes call sites.  Results
 * are plain read-only data for the renderers.  Errors: negative VT_AN_* code + message. */
#ifndef VT_REPORT_ANALYSIS_H
#define VT_REPORT_ANALYSIS_H
#include <stddef.h>
#include <stdint.h>

#include "report/reader.h"
#include "report/symbolize.h"
#include "report/util.h"

enum { VT_AN_OK = 0, VT_AN_ENOMEM = -1 };

#define VT_AN_MAX_OOM_DETAIL 1000      /* OOM events kept (all are counted) */
#define VT_AN_MAX_OOM_HOLDERS 64       /* OOMs that keep who held memory */
#define VT_AN_MAX_SNAPSHOTS 1000       /* vramtrace_snapshot() records kept, with who held memory (all are counted) */
#define VT_AN_MAX_FINDINGS 10000
#define VT_AN_MAX_LARGEST 64
#define VT_AN_TIMELINE_POINTS 2048     /* timeline buckets kept, whatever the trace length */
#define VT_AN_MAX_ERRORS 64
#define VT_AN_MAX_RESETS 64            /* device resets listed (all are counted) */
#define VT_AN_MAX_RANGES 4096          /* distinct NVTX range paths kept; the rest fold into "(other)" */

/* A call site: the first frame outside vramtrace/CUDA plumbing, after symbolization; call
 * stacks that share that frame's label are merged into one site. */
struct vt_site {
    const char *label;                 /* "build_attention (oom.cu:42)"; "(no backtrace)" */
    const struct vt_frame *const *frames;  /* representative full stack, innermost first */
    size_t nframes;
    int no_backtrace;                  /* the records made without a call stack, all lines in one */
    uint64_t peak_bytes, peak_count;   /* live VRAM at the process peak */
    uint64_t alloc_bytes, alloc_count; /* all successful VRAM allocations (churn) */
    uint64_t leak_bytes, leak_count;   /* VRAM still live at the end of the trace */
    uint64_t host_leak_bytes, managed_leak_bytes;
    uint64_t reset_bytes, reset_count; /* VRAM a device reset released, never freed by the program */
    const char *nvtx;                  /* the NVTX push/pop range its allocations were made in: "step 1 > forward";
                                        * "" none, "(several ranges)" when they differ */
    int nvtx_set;
    /* copies done from here (captured ones not): bytes, count, host time of the synchronous ones;
     * of them, host<->device copies through pageable memory ([0] h2d, [1] d2h bytes) */
    uint64_t copy_bytes, copy_count, pageable_bytes[2], pageable_count;
    uint64_t d2h_sync_count;           /* device-to-host copies the host waited for (each waits for the GPU):
                                        * synchronous, async into pageable memory, or async then synchronised */
    uint64_t staged_count;             /* host-to-device copies forwarding what a d2h copy brought from another device */
    int64_t copy_ns;
};

/* (site, bytes, count): sorted by bytes, largest first */
struct vt_holding { int site; uint64_t bytes, count; };

/* Memory the driver says is used on a device (total - free, at each cuMemGetInfo the program made,
 * each sample the tracer took and each OOM) against the VRAM the trace holds live then:
 * unattributed = driver used - traced live - what stream-ordered pools keep free (modelled; 0
 * when the trace holds more): the context, module images, library workspaces, other processes. */
struct vt_driver_view {
    uint64_t samples;                  /* successful queries */
    uint64_t last_used, last_live, last_unattributed, last_pool_kept;
    int64_t last_t;
    uint64_t max_unattributed, max_used, max_live;   /* the sample with the most unattributed */
    int64_t max_t;
};

/* Stream-ordered pools on a device, modelled from the calls (analysis_pool.c): memory the
 * program's stream-ordered allocations hold (in_use) plus freed blocks the pools keep
 * (kept_free); reserved = in_use + kept_free, what cudaMemPoolAttrReservedMemCurrent would sum to. */
struct vt_pool_view {
    uint64_t in_use, kept_free;
    uint64_t threshold;                /* release threshold (pool_attr; 0, CUDA's default) */
    uint64_t reserved_peak;
    int64_t reserved_peak_t;
    uint64_t kept_free_at_peak;        /* kept_free when the device's live VRAM peaked */
};

struct vt_device {
    int dev;                           /* -1: allocations with unknown device */
    const char *name;                  /* NULL when no device record */
    const char *pci;                   /* PCI bus id from the device record; "" when unknown */
    uint64_t total_bytes;
    int sim, seen;
    int cc;                            /* compute capability, 90 for 9.0; 0 unknown */
    uint64_t live, peak;
    int64_t peak_t;
    struct vt_driver_view driver;
    struct vt_pool_view pool;
    /* the sites holding this device's VRAM at its peak (by bytes): in a process using several
     * GPUs, what filled this one; with one GPU, the process's peak sites */
    struct vt_holding *peak_sites;
    size_t npeak_sites;
    int peak_pending;                  /* a new peak whose sites are not yet taken (analysis) */
};

struct vt_oom {
    int64_t t;
    const char *api;
    enum vt_mem mem;
    int dev;
    int64_t res;
    uint64_t requested, live, live_dev;  /* live VRAM (process, device) when it failed */
    int has_free;
    uint64_t free_bytes, total_bytes;
    uint64_t unattributed;             /* has_free: driver used (total - free) - live_dev - pool_kept_free, at least 0 */
    uint64_t pool_kept_free;           /* the device's pools: freed memory they still kept (analysis_pool.c) */
    int site;
    const char *ranges;                /* NVTX context ("" when none) */
    struct vt_holding *holders;        /* NULL past VT_AN_MAX_OOM_HOLDERS */
    size_t nholders;
    /* The same thread later allocated the same size and kind successfully (the retry of a caching
     * allocator that emptied its cache, or of a program that freed memory and tried again): when,
     * from where, and how much less VRAM the failing device held then than at the failure. */
    int recovered;
    int64_t recovered_t;
    int recovered_site;
    uint64_t freed_before_retry;
};

/* vramtrace_snapshot(LABEL): live VRAM at that instant and the sites holding it. */
struct vt_snapshot {
    int64_t t;
    const char *label;
    uint64_t live;                     /* as the report counts it (allocs minus frees so far) */
    uint64_t pool_kept_free;           /* stream-ordered pools: freed memory still reserved (all devices) */
    uint64_t tracer_live;              /* as the tracer counted it (the record's live_bytes) */
    struct vt_holding *holders;        /* by bytes, largest first */
    size_t nholders;
};

/* cudaDeviceReset / cuDevicePrimaryCtxReset: the device's device, stream-ordered and managed
 * allocations are gone (the tracer's free records before the `reset` line, and any the report
 * still held live then). */
struct vt_reset { int64_t t; const char *api; int dev; uint64_t count, bytes; };

struct vt_largest { uint64_t size; int64_t t; const char *api; enum vt_mem mem; int dev; int site; };

struct vt_xfer { uint64_t bytes, count, sync_bytes, sync_count, async_count; int64_t sync_ns; };

struct vt_finding {
    int64_t t;
    const char *kind, *severity, *api, *kernel, *msg, *cls, *mapping;  /* kernel "" when none */
    int64_t arg, offset;
    uint64_t value;
    int site;                          /* -1 without a backtrace */
    uint64_t count;                    /* occurrences: repeats of one launch finding are one entry */
    int64_t last_t;                    /* the last occurrence (t is the first) */
};

/* The words of one kernel's by-value struct arguments that looked like bad addresses where the
 * image has no PTX to say whether the kernel uses them (severity "note" in the trace): not
 * findings, one per kernel. */
struct vt_note {
    const char *kernel;
    uint64_t words;                    /* distinct (argument, byte) words */
    uint64_t host_words;               /* of them, host addresses (the rest: freed, out of bounds, another device's) */
    int64_t t;                         /* the first */
    int site;                          /* the first's launch site; -1 without a backtrace */
};

struct vt_error { const char *api; int64_t res; uint64_t count; int64_t first_t; int site; /* the first one's */ };

struct vt_bucket { int64_t t0; uint64_t min, max, last; uint64_t big_size; int big_site; const char *big_api; int used; };

struct vt_kernel_stat {
    const char *name;                  /* demangled */
    uint64_t launches;
    int64_t ns;
    const char *mangled;               /* as the trace names it */
    uint32_t *params, nparams;         /* its layout, offset and size pairs (NULL when the trace has none) */
};

/* One NVTX range path: a push/pop stack of one thread ("step 1 > forward") or a start/end range
 * (its name).  An allocation or free is inside every range open around it: the thread's push
 * stack, each enclosing level included (so "step 1" counts what "step 1 > forward" does), and
 * every open start/end range.  peak_bytes: the highest process-wide live VRAM seen when the
 * range was opened and right after each VRAM allocation inside it (allocations by threads
 * outside the range do not raise it). */
struct vt_range {
    const char *name;
    uint64_t peak_bytes, alloc_count, alloc_bytes, free_count, free_bytes;
};

/* The steps of a training loop (analysis_steps.c): each one's start, duration, the live VRAM at
 * its start and the most live during it. Found from the program's vramtrace_step() calls
 * (VT_STEPS_API: step K from the K-th call to the next, the last to the end of the trace), else
 * from a repeated NVTX range (VT_STEPS_NVTX: each closed instance of `name`, a name with "step"
 * or "iter" in it first, else the one of 3 or more instances open longest in all), else from
 * a period in one thread's allocations, frees, device-to-host copies and synchronisations
 * (VT_STEPS_PERIOD: each a period's calls, ending where the host last waited in it). */
enum { VT_STEPS_NONE = 0, VT_STEPS_API, VT_STEPS_NVTX, VT_STEPS_PERIOD };
struct vt_step {
    int64_t t, dur;
    uint64_t live_start, peak, live_end;   /* live VRAM as it began, the most during it, as it ended */
    uint64_t log_from, log_to;             /* its VRAM changes: [from, to) in the report's change log */
};
struct vt_steps {
    int source;                        /* VT_STEPS_*: NONE, no steps found */
    const char *name;                  /* the NVTX range's name; "vramtrace_step()"; a period's calls: "4 calls: cudaMalloc, ..." */
    uint64_t count;                    /* all the steps found */
    struct vt_step *list;              /* the first ones (a million at most), in order */
    size_t nlist;
    int live_known;                    /* 0: the report ran out of memory for the VRAM log */
    int64_t total_ns, min_ns, max_ns;  /* over the list */
    uint64_t max_peak;                 /* the highest step peak, and which step (1-based) */
    size_t max_peak_step;
};

/* How live VRAM moves from step to step (analysis_growth.c), from what each step leaves live at
 * its end: FLAT (no trend beyond the steps' own wobble), WARMUP (it grew, then stopped: by
 * warmup_bytes over the first warmup_steps steps), STEADY (it still grows: rate_bytes a step over
 * steps window_first..window_last, the last half of the run, with the sites whose live bytes rise
 * in most of those steps, and a forecast). NONE: fewer than 3 steps, or no steps. */
enum { VT_GROWTH_NONE = 0, VT_GROWTH_FLAT, VT_GROWTH_WARMUP, VT_GROWTH_STEADY };
struct vt_growth_site { int site; int64_t bytes_per_step; uint64_t rises; };
struct vt_growth {
    int kind;
    int64_t rate_bytes;                /* STEADY: least-squares slope of the step ends over the window */
    size_t window_first, window_last;  /* 1-based steps */
    size_t warmup_steps;               /* WARMUP: the last step that grew */
    uint64_t warmup_bytes;             /* WARMUP: from step 1's start to that step's end */
    uint64_t wobble_bytes;             /* the step ends' spread around the trend (their standard deviation) */
    struct vt_growth_site *sites;      /* STEADY: by bytes per step */
    size_t nsites;
    /* STEADY, with a known capacity: the first step whose peak reaches it (the last step's peak
     * plus rate_bytes a step), and how long after the trace's last step, at the steps' mean
     * duration. has_forecast 0 when the device's capacity is unknown. */
    int has_forecast, forecast_dev;
    uint64_t capacity_bytes, forecast_step;
    double forecast_seconds;
};

/* Byte sums saturate at 2^64-1 rather than wrap: a hostile trace of 16384 allocations of 1 PiB
 * would otherwise report a small total. */
static inline void vt_sat_add(uint64_t *sum, uint64_t n) { *sum = *sum > UINT64_MAX - n ? UINT64_MAX : *sum + n; }

struct vt_proc {
    /* identity (header) */
    const char *path, *program, *hostname, *tracer, *checks;
    int64_t pid, ppid, rank, local_rank, world_size;
    int64_t t0, t_end, wall_time;      /* t0: header t; wall_time: seconds at t0 (0 unknown) */
    int64_t wall_ns;                   /* wall clock at t0 in ns (header wall_time_ns, else wall_time); 0 unknown */
    int has_footer, backtraces_seen;
    int64_t footer_dropped, footer_events;
    const char *footer_error;          /* why the tracer stopped writing; "" when it did not */
    long warnings, lines;
    uint64_t events;

    /* VRAM (device + async + vmm), whole process */
    uint64_t live, peak;
    int64_t peak_t;
    int peak_tid;
    uint64_t peak_pool_kept_free;      /* stream-ordered pools' freed-but-reserved memory at the peak */
    const char *stale_modules;         /* files rebuilt or replaced since the trace, no match found; NULL */
    const char *missing_modules;       /* files moved or deleted since the trace, no match found; NULL */
    const char *caching_allocator;     /* a framework allocator whose library is on a recorded stack; NULL */
    /* PyTorch's allocator as the trace shows it: "native" (its caching allocator: segments are
     * the allocations), "cudaMallocAsync" (each tensor a stream-ordered allocation: its settings
     * say backend:cudaMallocAsync and its allocations were stream-ordered); NULL without PyTorch */
    const char *torch_backend;
    int torch_tensors;                 /* run --torch-tensors set its backend */
    int torch_async_conf;              /* its settings (header) name backend:cudaMallocAsync */
    uint64_t async_allocs;             /* stream-ordered allocations made */
    const char *peak_ranges;
    struct vt_holding *peak_sites;     /* sites live at the peak */
    size_t npeak_sites;
    struct vt_device *devices;
    size_t ndevices;
    /* managed and host memory, reported apart from VRAM */
    uint64_t managed_live, managed_peak, host_live, host_peak;
    int64_t managed_peak_t, host_peak_t;

    uint64_t alloc_count, alloc_bytes, free_count, free_bytes, failed_allocs;
    uint64_t unknown_frees;
    /* alloc records at an address (handle) still live: the older allocation was dropped from the
     * sums (a lost free, a trace spanning a reset by an older tracer); the first one's line */
    uint64_t duplicate_allocs;
    long duplicate_line;
    uint64_t duplicate_addr;
    struct vt_largest largest[VT_AN_MAX_LARGEST];
    size_t nlargest;

    struct vt_oom *ooms;
    size_t nooms;                      /* kept */
    uint64_t oom_count;                /* all */
    uint64_t oom_recovered;            /* of them, retried successfully later (vt_oom.recovered) */

    struct vt_reset resets[VT_AN_MAX_RESETS];
    size_t nresets;                    /* kept */
    uint64_t reset_count;              /* all */

    struct vt_snapshot *snapshots;     /* in trace order */
    size_t nsnapshots;                 /* kept */
    uint64_t snapshot_count;           /* all */
    /* vramtrace_pause()/resume(): outermost pauses, time paused, calls not recorded */
    uint64_t pauses, pause_skipped;
    int64_t paused_ns, pause_t0;
    int pause_depth;                   /* > 0 at the end: the trace ended paused */

    uint64_t leak_bytes, leak_count, host_leak_bytes, managed_leak_bytes;
    uint64_t leak_kind_bytes[VT_MEM__COUNT], leak_kind_count[VT_MEM__COUNT];   /* live at the end, by "mem" */
    /* allocations the program never freed that a device reset (cudaDeviceReset,
     * cuDevicePrimaryCtxReset) released: not in the leak figures above (Compute Sanitizer would
     * call them leaked; the reset did free them), shown beside them. VRAM bytes and count; managed
     * bytes apart. */
    uint64_t reset_leak_bytes, reset_leak_count, reset_leak_managed;

    struct vt_xfer xfer[VT_DIR__COUNT][VT_HOST__COUNT];
    uint64_t copy_hist[VT_DIR__COUNT][65];   /* copies done, by floor(log2(size)) (bucket 64: size 0) */
    uint64_t set_count, set_bytes;

    struct vt_finding *findings;
    size_t nfindings;
    uint64_t finding_count;            /* errors and warnings, repeats included: */
    uint64_t finding_errors, finding_warnings;
    struct vt_note *notes;             /* by first appearance */
    size_t nnotes;
    /* notes settled from the kernels' SASS (analysis_sass.c): the nvdisasm run (NULL: none found,
     * so nothing settled), words read, of them used as addresses (now findings); kernels whose
     * notes stay, and why (the first reason) */
    const char *sass_tool;
    uint64_t sass_words, sass_findings;
    size_t sass_unsettled;
    const char *sass_why;

    struct vt_error errors[VT_AN_MAX_ERRORS];
    size_t nerrors;
    uint64_t error_count;              /* failed calls (res != 0), OOMs included */

    struct vt_kernel_stat *kernels;    /* by launches */
    size_t nkernels;
    uint64_t launches;
    /* of the launches, copies and sets: those a graph launch did (each replay counts), and those
     * only captured into a graph (not counted above: nothing ran then) */
    uint64_t graph_launches, graph_copies, graph_sets, captured_ops;

    struct vt_bucket timeline[VT_AN_TIMELINE_POINTS];
    size_t ntimeline;
    int64_t bucket_ns;

    struct vt_site *sites;
    size_t nsites;

    struct vt_range *ranges;           /* after finish: by peak_bytes, largest first */
    size_t nranges;

    struct vt_steps steps;             /* after finish */
    struct vt_growth growth;           /* after finish, from the steps */

    struct vt_an_private *priv;        /* bookkeeping while feeding */
};

/* Called for each record after it has been applied (PROC's live counters are current);
 * used by the Perfetto writer to stream events. */
struct vt_observer {
    void (*on_event)(void *ctx, const struct vt_proc *p, const struct vt_event *ev, const char *kernel);
    void *ctx;
};

/* New, empty analysis for the trace at PATH (copied).  SYM_ENABLED 0 skips DWARF lookups. */
struct vt_proc *vt_proc_new(const char *path, int sym_enabled);
void vt_proc_set_observer(struct vt_proc *p, const struct vt_observer *obs);
/* Applies one record.  0, or VT_AN_ENOMEM with a message. */
int vt_proc_feed(struct vt_proc *p, const struct vt_event *ev, char *err, size_t errlen);
/* Ends the trace: leaks, symbolization, site tables.  0 or VT_AN_ENOMEM. */
int vt_proc_finish(struct vt_proc *p, char *err, size_t errlen);
void vt_proc_free(struct vt_proc *p);

/* Sites over several processes merged by label: fills *OUT (malloc'd, caller frees) sorted by
 * bytes; WHICH 0 = at each process's peak, 1 = leaked, 2 = released by a device reset, never
 * freed.  Returns the count or -1. */
struct vt_merged_site { const char *label; uint64_t bytes, count; };
long vt_merge_sites(struct vt_proc *const *procs, size_t n, int which, struct vt_merged_site **out);
/* Several traces combined by device and wall-clock time (analysis_combine.c): for each device
 * (host + PCI bus id, else host + ordinal), the most VRAM the processes held on it at once and
 * which processes held it then; `peak` the most over all devices at once. by_time 0 (why_not
 * says why: a header without a wall clock, out of memory) when it could not be done. */
struct vt_combined_dev {
    const char *host, *pci, *name;
    int dev;                           /* the ordinal in the first process that used it */
    uint64_t peak, sum_of_peaks;       /* at once; the processes' own peaks on it, added */
    int64_t peak_wall_ns;
    int64_t *pids;                     /* processes holding VRAM on it at its peak */
    size_t npids, nprocs;              /* nprocs: processes that used it */
};
struct vt_combined {
    int by_time;
    const char *why_not;
    struct vt_combined_dev *devs;
    size_t ndevs;
    uint64_t peak;
    int64_t peak_wall_ns;
};
int vt_combine(struct vt_proc *const *procs, size_t n, struct vt_combined *out);
void vt_combined_free(struct vt_combined *c);

#endif
