/* launch_check.c - kernel launches: the `kernel` record, the per-argument pointer check, findings. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "check.h"
#include "emit.h"
#include "findings.h"
#include "fold.h"
#include "graphs.h"
#include "launch_check.h"
#include "param_types.h"
#include "registry.h"
#include "resolve.h"
#include "tracer.h"
#include "journal.h"
#include "records.h"

#define VT_OOB_MAPPED ((uint64_t)64 << 10) /* CUDA's smallest device page size */

static void emit_kernel_record(vt_kernel *k)
{
    size_t cap = strlen(k->name) * 6 + 256 + (size_t)k->nparams * 24;
    char *buf = malloc(cap);
    if (!buf) return;
    vt_line l;
    vt_line_init(&l, buf, cap - 2);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_KERNEL "\"");
    vt_put_key(&l, "id"); vt_put_u64(&l, k->id);
    vt_put_key(&l, "name"); vt_put_str(&l, k->name);
    vt_put_key(&l, "params"); VT_PUT_LIT(&l, "[");
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (i) VT_PUT_LIT(&l, ",");
        VT_PUT_LIT(&l, "[");
        vt_put_u64(&l, k->params[i].offset);
        VT_PUT_LIT(&l, ",");
        vt_put_u64(&l, k->params[i].size);
        VT_PUT_LIT(&l, "]");
    }
    VT_PUT_LIT(&l, "]");
    vt_put_key(&l, "layout"); vt_put_str(&l, vt_layout_source_name(k->source));
    vt_fmt_emit(&l);
    free(buf);
}

/* The finding for v, which no live range holds, into *f (kind, severity, why; info->alloc the
 * allocation concerned); 0 when v is no bad pointer. `dev`: the launching device. */
static int classify_finding(uint64_t v, int dev, vt_ptr_info *info, struct vt_finding *f)
{
    vt_classify(v, info);
    switch (info->cls) {
    case VT_PTR_HOST:
        f->kind = VT_F_HOST_POINTER;
        f->cls = info->host_cls;
        f->mapping = info->mapping;
        f->error = !vt_device_pageable_access(dev);
        if (!f->error) f->why = "the device reports pageable memory access (HMM/ATS), so the kernel can reach it, "
                                "but every access crosses the interconnect";
        return 1;
    case VT_PTR_FREED:
        f->kind = VT_F_USE_AFTER_FREE;
        f->error = 1;
        return 1;
    case VT_PTR_NEAR_DEVICE: {
        uint64_t end = info->alloc.base + info->alloc.size;
        if (v == end) return 0; /* the legal one-past-the-end pointer of [base, end) */
        /* Within CUDA's smallest device page of the block the memory is likely still mapped (a
         * bug, but no fault); farther out no allocation covers it and a kernel using it faults. */
        uint64_t dist = v > end ? v - end : info->alloc.base - v;
        f->kind = VT_F_OOB_POINTER;
        f->error = dist > VT_OOB_MAPPED;
        if (info->forgot)
            f->why = "outside every allocation; the freed-memory history had to forget older frees here, so it may be a use after free";
        else
            f->why = f->error ? "far outside every allocation: no allocation covers it" : "between allocations, near the end of one";
        return 1;
    }
    default:
        return 0;
    }
}

/* Word WIDX (of k->words; -1 when walking the layout) of argument ARG holds V. Without the
 * kernel's PTX (SASS only) nothing tells a pointer inside a by-value struct from data that looks
 * like one (a stride table's garbage tail, padding), so what would be a finding there is a note,
 * once per word per kernel: never counted, never fatal (docs/detection.md); a top-level 8-byte
 * argument keeps the full check. */
static void check_word(const struct vt_call *c, vt_kernel *k, uint32_t arg, uint64_t offset, uint64_t v, int32_t widx)
{
    if (vt_looks_scalar(v)) return;
    struct vt_finding f = { .api = c->api, .k = k, .arg = (int)arg, .offset = offset, .value = v, .dev = c->dev };
    vt_ptr_info info;
    if (vt_live_lookup_cached(v, &info.alloc) == 0) { /* a live CUDA range: fine, unless another device's */
        if (!vt_wrong_device(&info.alloc, c->dev)) return;
        f.kind = VT_F_WRONG_DEVICE;
        f.error = 1;
        f.alloc_dev = info.alloc.dev;
    } else if (!classify_finding(v, c->dev, &info, &f)) {
        return;
    }
    if (f.kind != VT_F_HOST_POINTER) { /* every other launch finding names the allocation concerned */
        f.has_alloc = 1;
        f.alloc_base = info.alloc.base;
        f.alloc_size = info.alloc.size;
        f.alloc_mem = info.alloc.mem;
    }
    /* a by-value struct: bigger than a pointer, or a class (an 8-byte lambda closure) by its name */
    if (!k->uses_known && arg < k->nparams && (k->params[arg].size > 8 || (k->ptypes && k->ptypes[arg] == VT_PT_CLASS))) {
        if (widx >= 0 && k->warned && atomic_exchange(&k->warned[widx], 1)) return; /* said once */
        f.error = 0;
        f.note = 1;
        if (!f.why) f.why = "inside a by-value struct, and the image has no PTX to tell whether the kernel uses it as an address";
    }
    vt_ev_finding(&f);
}

/* The packed-buffer launch (and a graph node's kept bytes): the planned words, as the runtime-style
 * launch reads them; the general walk over the layout only for a kernel whose word list could
 * not be allocated. */
static void check_args(const struct vt_call *c, vt_kernel *k, void **args, const unsigned char *buf, uint64_t buf_len)
{
    if (k->words || !k->nwords) { /* the planned words (the PTX's address uses, when known; none: nothing to read) */
        const struct vt_lc_ent *lc = vt_lcache;
        for (const vt_arg_word *w = k->words, *end = w + k->nwords; w < end; w++) {
            uint64_t at = (uint64_t)k->params[w->param].offset + w->off, v;
            const unsigned char *p = args ? args[w->param] : NULL;
            if (args ? !p : at + 8 > buf_len) continue;
            memcpy(&v, args ? p + w->off : buf + at, sizeof v);
            if (vt_looks_scalar(v) || vt_lcache_hit(lc, v)) continue; /* as check_arg_words */
            check_word(c, k, w->param, w->off, v, (int32_t)(w - k->words));
        }
        return;
    }
    for (uint32_t i = 0; i < k->nparams; i++) {
        uint32_t off = k->params[i].offset, size = k->params[i].size;
        if (size < 8 || off % 8) continue; /* below 8-byte alignment: no pointer inside (plan_words) */
        const unsigned char *p;
        if (args) p = args[i];
        else if (buf && (uint64_t)off + size <= buf_len) p = buf + off;
        else continue;
        if (!p) continue;
        /* 8-byte words of an 8-aligned parameter: pointers, and pointers inside by-value
         * structs, are always there. */
        for (uint32_t w = 0; w + 8 <= size; w += 8) {
            uint64_t v;
            memcpy(&v, p + w, sizeof v);
            check_word(c, k, i, w, v, -1);
        }
    }
}

/* The runtime-style launch: the same words, from the list planned with the layout. Most are
 * scalars or pointers the per-thread cache knows as live, tested inline; only the rest take
 * check_word. */
static void check_arg_words(const struct vt_call *c, vt_kernel *k, void **args)
{
    const struct vt_lc_ent *lc = vt_lcache;
    const vt_arg_word *w = k->words, *end = w + k->nwords;
    for (; w < end; w++) {
        const unsigned char *p = args[w->param];
        if (!p) continue;
        uint64_t v;
        memcpy(&v, p + w->off, sizeof v);
        if (vt_looks_scalar(v) || vt_lcache_hit(lc, v)) continue;
        check_word(c, k, w->param, w->off, v, (int32_t)(w - k->words));
    }
}

/* The arguments of this thread's launch in progress, kept (only while some capture is active)
 * for vt_launch_end, which makes a captured launch a graph node with them. */
static VT_TLS struct { void **args; const void *buf; uint64_t len; } launch_args;

/* The first launch of K: its `kernel` record, once. */
static __attribute__((noinline)) void kernel_first(vt_kernel *k)
{
    if (!atomic_exchange(&k->emitted, 1)) emit_kernel_record(k);
}

/* The argument check; 1 when it said anything (a finding or a note). Out of line, so that the
 * begin of a launch with nothing to check saves no registers. */
static __attribute__((noinline)) int check_launch(const struct vt_call *c, vt_kernel *k, void **args, const void *buf,
                                                  uint64_t buf_len)
{
    unsigned long said = vt_findings_made;
    if (args && k->words) check_arg_words(c, k, args);
    else check_args(c, k, args, buf, buf_len);
    return vt_findings_made != said;
}
/* check_launch's answer into c->flagged, and 1 (traced): a tail call from vt_launch_begin. */
static __attribute__((noinline)) int check_launch_flag(struct vt_call *c, vt_kernel *k, void **args, const void *buf,
                                                       uint64_t buf_len)
{
    c->flagged = check_launch(c, k, args, buf, buf_len);
    return 1;
}
/* The end of a traced launch's begin: 1, after the check where there is something to check. The
 * per-thread cache answers for the thread's current device only (a launch on another device, a
 * multi-device launch's entry, makes that device current around this call). A kernel whose
 * planned words are none (its PTX reads no argument as an address) has nothing to check; one
 * whose list could not be allocated is walked over its layout. */
static inline int checked_begin(struct vt_call *c, vt_kernel *k, void **args, const void *buf, uint64_t buf_len)
{
    if (vt_cfg.check != VT_CHECK_OFF && k->nwords && (args || buf)) return check_launch_flag(c, k, args, buf, buf_len);
    return 1;
}

static __attribute__((noinline)) int launch_begin_slow(struct vt_call *c, vt_kernel *k, void **args, const void *buf,
                                                       uint64_t buf_len);
/* The steady case (trace open, not paused, no capture anywhere, the kernel's record written) in
 * a few tests without a frame; anything else takes the full path. */
int vt_launch_begin(struct vt_call *c, vt_kernel *k, void **args, const void *buf, uint64_t buf_len)
{
    if (__builtin_expect(atomic_load_explicit(&vt_trace_state, memory_order_acquire) <= 0 || !k ||
                         atomic_load_explicit(&vt_pause_depth, memory_order_relaxed) ||
                         atomic_load_explicit(&vt_captures_active, memory_order_relaxed) ||
                         !atomic_load_explicit(&k->emitted, memory_order_acquire), 0))
        return launch_begin_slow(c, k, args, buf, buf_len);
    return checked_begin(c, k, args, buf, buf_len);
}

static int launch_begin_slow(struct vt_call *c, vt_kernel *k, void **args, const void *buf, uint64_t buf_len)
{
    if (!vt_trace_ready() || !k || vt_traffic_paused()) return 0;
    if (__builtin_expect(atomic_load_explicit(&vt_captures_active, memory_order_relaxed) != 0, 0)) {
        launch_args.args = args;
        launch_args.buf = buf;
        launch_args.len = buf_len;
    }
    if (__builtin_expect(!atomic_load_explicit(&k->emitted, memory_order_acquire), 0)) kernel_first(k);
    return checked_begin(c, k, args, buf, buf_len);
}

static inline void fill_launch(struct vt_rec_launch *w, const struct vt_call *c, const vt_kernel *k, vt_dim3 grid,
                               vt_dim3 block, uint64_t shmem, uint64_t stream, int graph)
{
    vt_fill_call(&w->c, c);
    w->graph = (uint8_t)graph;
    w->k = k->id;
    w->grid[0] = grid.x; w->grid[1] = grid.y; w->grid[2] = grid.z;
    w->block[0] = block.x; w->block[1] = block.y; w->block[2] = block.z;
    w->shmem = shmem;
    w->stream = stream;
}

/* A launch into a capturing stream is a node of the capture's graph: VT_GRAPH_CAPTURED then, else
 * c->graph. Out of line: the fast path only tests whether a capture is active anywhere. */
static __attribute__((noinline, cold)) int capture_launch(const struct vt_call *c, vt_kernel *k, vt_dim3 grid,
                                                          vt_dim3 block, uint64_t shmem, uint64_t stream)
{
    const void *node;
    const void *key = vt_captured_into(c, stream, &node);
    if (!key) return c->graph;
    vt_graph_add_kernel(key, node, k, c->dev, launch_args.args, launch_args.buf, launch_args.len, grid, block, shmem);
    return VT_GRAPH_CAPTURED;
}

/* The launch's line. The hottest record: filled in place in the ring, no copy (a stack one when
 * the ring is off). Out of line: a steady launch is counted without it. */
static __attribute__((noinline)) void launch_line(const struct vt_call *c, const vt_kernel *k, const vt_dim3 *grid,
                                                  const vt_dim3 *block, uint64_t shmem, uint64_t stream, int graph)
{
    vt_fmt_ensure_device(c->dev);
    struct vt_rec_launch *r = vt_journal_claim(VT_R_LAUNCH, sizeof *r);
    if (r) {
        fill_launch(r, c, k, *grid, *block, shmem, stream, graph);
        vt_journal_commit(r);
    } else {
        struct vt_rec_launch stack_rec;
        fill_launch(&stack_rec, c, k, *grid, *block, shmem, stream, graph);
        vt_emit_record(VT_R_LAUNCH, &stack_rec, sizeof stack_rec);
    }
}

static __attribute__((noinline)) void launch_end_slow(const struct vt_call *c, vt_kernel *k, vt_dim3 grid, vt_dim3 block,
                                                      uint64_t shmem, uint64_t stream)
{
    int graph = __builtin_expect(atomic_load_explicit(&vt_captures_active, memory_order_relaxed) != 0, 0)
              ? capture_launch(c, k, grid, block, shmem, stream) : c->graph;
    /* a steady launch, or a replayed graph's kernel node, is counted (its device's record came
     * with its configuration's first line) */
    if (!((graph == VT_GRAPH_CAPTURED) | c->res | c->flagged) && vt_fold_launch(c, k->id, grid, block, shmem, stream, graph))
        return;
    launch_line(c, k, &grid, &block, shmem, stream, graph);
}

/* The steady launch (the thread's last configuration again, no capture anywhere, succeeded,
 * checked clean, not a graph's node) is counted here without a register saved; anything else,
 * and the first launch of a counter or one due to write the counters out, takes the full path
 * (a tail call). */
void vt_launch_end(const struct vt_call *c, vt_kernel *k, vt_dim3 grid, vt_dim3 block, uint64_t shmem, uint64_t stream)
{
    if (__builtin_expect(!atomic_load_explicit(&vt_captures_active, memory_order_relaxed) &&
                         !(c->res | c->flagged | c->graph), 1) &&
        vt_fold_launch_again(c, k->id, grid, block, shmem, stream))
        return;
    launch_end_slow(c, k, grid, block, shmem, stream);
}
