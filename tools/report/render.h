/* render.h - output formats of `vramtrace report`.  Renderers read finished analyses (never
 * modify them) and write to a caller-owned FILE; they return 0, or -1 when writing failed
 * (errno set).  Every string from a trace is escaped for the target format. */
#ifndef VT_REPORT_RENDER_H
#define VT_REPORT_RENDER_H
#include <stdio.h>

#include "report/analysis.h"
#include "report/escape.h"
#include "report/refbw.h"

struct vt_render_opts {
    int top;                        /* rows per table (--top) */
    const struct vt_refbw *ref;     /* reference bandwidths, or NULL */
};

int vt_render_text(FILE *f, struct vt_proc *const *procs, size_t n, const struct vt_render_opts *o);
int vt_render_json(FILE *f, struct vt_proc *const *procs, size_t n, const struct vt_render_opts *o);
/* `--diff`: run A (NA traces) against run B, as text (through vt_text_filter) or JSON. 0 or -1. */
int vt_render_diff(FILE *f, struct vt_proc *const *a, size_t na, struct vt_proc *const *b, size_t nb,
                   const struct vt_render_opts *o, int as_json);
int vt_render_html(FILE *f, struct vt_proc *const *procs, size_t n, const struct vt_render_opts *o);

/* Perfetto / Chrome Trace Event JSON, streamed while the traces are read: open, install the
 * observer on each vt_proc before feeding it, then finish once with all finished analyses. */
struct vt_perfetto;
struct vt_perfetto *vt_perfetto_open(FILE *f);
struct vt_observer vt_perfetto_observer(struct vt_perfetto *pf);
int vt_perfetto_finish(struct vt_perfetto *pf, struct vt_proc *const *procs, size_t n);   /* frees pf */

/* ---- helpers shared by the renderers (render_common.c) ---- */
struct vt_dirstat { uint64_t bytes, count, sync_bytes, sync_count; double seconds; double gbps; /* <0: unknown */ };
/* Copies in DIR summed over host kinds (HOST = VT_HOST__COUNT) or for one host kind. */
struct vt_dirstat vt_dirstat(const struct vt_proc *p, enum vt_dir dir, int host);
struct vt_dirstat vt_dirstat_all(struct vt_proc *const *procs, size_t n, enum vt_dir dir, int host);
/* "14:02:03.123 (+2.3 s)" (wall clock when the header had wall_time, else only the offset). */
char *vt_fmt_when(char *buf, size_t n, const struct vt_proc *p, int64_t t);
/* What the report tells the user to do about its copies (docs/report.md, "Transfers"). */
enum vt_verdict_kind { VT_V_PIN, VT_V_BATCH, VT_V_SYNC_LOOP, VT_V_STAGED };
struct vt_verdict {
    enum vt_verdict_kind kind;
    enum vt_dir dir;
    uint64_t count;                    /* PIN: pageable copies; BATCH: copies; SYNC_LOOP: synchronous copies; STAGED: forwarding h2d copies */
    double share, pinned_gbps;         /* PIN: achieved / pinned, and pinned's GB/s */
    int from_ref;                      /* PIN: pinned is the reference's (else the traces' own pinned copies) */
    int untimed;                       /* PIN: the copies were all asynchronous: share is the reference's pageable/pinned */
    uint64_t median_lo, median_hi;     /* BATCH: the median size lies in [lo, hi) (both 0: size 0) */
    double per_copy_s;                 /* BATCH: host time per synchronous copy, 0 unknown */
    const struct vt_site *sites[3];    /* PIN: by pageable bytes; SYNC_LOOP, STAGED: the line */
    size_t nsites;
};
/* The verdicts on the copies of PROCS (summed), against reference R (may be NULL): at most MAX. */
size_t vt_transfer_verdicts(struct vt_proc *const *procs, size_t np, const struct vt_refbw *r, struct vt_verdict *out, size_t max);

/* Row I (from 0) of a transfer table into *DIR, *HOST: h2d, then d2h, each by host memory kind
 * and then all kinds (HOST == VT_HOST__COUNT); then d2d and h2h (all only). 0 past the last. */
int vt_transfer_row(size_t i, enum vt_dir *dir, int *host);
/* A row's host column: the kind's name, "all" for VT_HOST__COUNT. */
const char *vt_transfer_host_name(int host);
/* The reference (enum vt_ref_id) copies in DIR through host memory kind HOST compare with (all
 * kinds: pinned's); -1 none. */
int vt_transfer_ref(enum vt_dir dir, int host);
/* How many devices held VRAM of the process at some point (several: per-device peak sections). */
size_t vt_vram_devices(const struct vt_proc *p);
/* The verdict as one sentence, what and the fix: "pageable h2d copies run at 26% of pinned
 * (...): pin the host buffer (...)" (its sites not included). In BUF. */
char *vt_verdict_text(char *buf, size_t n, const struct vt_verdict *x);
/* The sites that copied, by bytes, or BY_TIME by host time of their synchronous copies (sites
 * with none left out), as indices into p->sites in *OUT (malloc'd, the caller frees); their
 * count, -1 when out of memory. */
long vt_copy_sites(const struct vt_proc *p, int by_time, size_t **out);
/* A duration in seconds in the unit that reads best: "92 µs", "1.4 s", "3.2 min". */
char *vt_fmt_dur(char *buf, size_t n, double sec);
/* A wall-clock time in ns since the epoch as local HH:MM:SS.mmm. */
char *vt_fmt_wall(char *buf, size_t n, int64_t ns);
/* A byte count as "1.50 GiB" in one of 16 rotating static buffers (for several in one printf). */
const char *vtr_bytes_tmp(uint64_t bytes);
const char *vt_site_label(const struct vt_proc *p, int site);   /* "(unknown)" for -1 */
/* The API of the process's device resets ("cudaDeviceReset"), or "a device reset" when they differ. */
const char *vt_reset_api(const struct vt_proc *p);
/* Why the trace is incomplete, in a sentence: the tracer stopped writing (disk full ...) and
 * dropped events, or the process died (no footer); NULL when it is complete. In buf. */
const char *vt_incomplete_reason(char *buf, size_t n, const struct vt_proc *p);
/* Findings summed by severity, as every output says them: "1 error, 0 warnings". In BUF. */
char *vt_fmt_findings(char *buf, size_t n, uint64_t errors, uint64_t warnings);
/* A kernel's note in one sentence: "24 argument words inside by-value structs looked like host
 * addresses; the image has no PTX, so they were not checked". In BUF. */
char *vt_note_text(char *buf, size_t n, const struct vt_note *x);
/* Index of the process with the highest peak (0 when N is 0). */
size_t vt_peak_proc(struct vt_proc *const *procs, size_t n);
#endif
