/* events_copy.c - copies and memsets: both sides classified, checked (range, direction), folded
 * when steady (fold.h). A thread's last steady copy again is only counted (struct copy_again). */
#include "events.h"
#include "graphs.h"

#include <stdio.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "backtrace.h"
#include "check.h"
#include "emit.h"
#include "findings.h"
#include "fold.h"
#include "pyframes.h"
#include "pystack.h"
#include "records.h"
#include "tracer.h"
#include "unwind.h"

static const char *const dir_names[] = {
#define VT_X(id) [VT_DIR_##id] = VT_DIRN_##id,
    VT_TRACE_DIRS(VT_X)
#undef VT_X
};

/* A freed allocation's side was device memory when the program took its address: the copy's
 * direction is what the program meant, and the use after free is the finding, not the kind. */
static int side_is_device(const vt_ptr_info *i)
{
    return i->cls == VT_PTR_DEVICE || i->cls == VT_PTR_MANAGED || (i->cls == VT_PTR_FREED && vt_mem_is_device(i->alloc.mem));
}

static void check_range(const struct vt_call *c, const vt_ptr_info *i, uint64_t p, uint64_t extent, const char *role)
{
    if (i->cls == VT_PTR_FREED) {
        struct vt_finding f = { .kind = VT_F_USE_AFTER_FREE, .error = 1, .api = c->api, .arg = -1, .value = p, .has_alloc = 1,
                                .alloc_base = i->alloc.base, .alloc_size = i->alloc.size, .alloc_mem = i->alloc.mem, .why = role };
        vt_ev_finding(&f);
        return;
    }
    if (i->cls != VT_PTR_DEVICE && i->cls != VT_PTR_MANAGED && i->cls != VT_PTR_PINNED) return;
    uint64_t end = i->alloc.base + i->alloc.size;
    /* cuMemMap'd pieces side by side are one contiguous range: growing an allocation by mapping
     * more after it is what VMM is for (PyTorch's expandable segments copy and memset across
     * their 2 MiB pieces). Walk on through the mappings that start where the last one ends. */
    if (i->alloc.mem == VT_MEM_VMM_MAP) {
        vt_alloc_info next;
        while (p + extent > end && vt_live_lookup_cached(end, &next) == 0 && next.base == end && next.mem == VT_MEM_VMM_MAP &&
               next.size)
            end = next.base + next.size;
    }
    if (p + extent <= end) return;
    char why[96];
    snprintf(why, sizeof why, "%s range runs %llu bytes past the end of its allocation", role,
             (unsigned long long)(p + extent - end));
    struct vt_finding f = { .kind = VT_F_OOB_COPY, .error = 1, .api = c->api, .arg = -1, .value = p,
                            .has_alloc = 1, .alloc_base = i->alloc.base, .alloc_size = i->alloc.size, .alloc_mem = i->alloc.mem, .why = why };
    vt_ev_finding(&f);
}

/* vt_ev_copy's own stack pointer: the same whenever its caller's frame is where it was; below it
 * lie only the calls down to the unwinder (unwind.h's vt_unwind_same_above). */
#if defined(__x86_64__)
#define OWN_SP(v) __asm__ volatile("movq %%rsp, %0" : "=r"(v))
#else
#define OWN_SP(v) ((v) = 0) /* vt_unwind_checkable says 0 there: nothing is kept with backtraces */
#endif

/* The thread runs Python code: its frames are part of a site, and the unwinder does not know them. */
static int python_now(void)
{
    vt_pyframe py[1];
    return vt_cfg.python_frames && vt_py_frames(py, 1) > 0;
}

/* The thread's last copy left in a fold slot (vt_fold_ticket), with what its verdict rested on:
 * the same call again (pointers, size, kind, stream, API, device, and stack: this frame where it
 * was and the words above it unchanged), while both sides' classes hold (vt_class_token),
 * classifies and checks as that one did, clean, so it is only counted: no classification, check
 * or record. A free of either side's memory, a range inserted over the host side, a capture
 * begun, a device-to-host copy, an interval due, or another copy taking the slot sends it the
 * whole way again. */
static VT_TLS struct copy_again {
    uint64_t dst, src, size, stream, h2d_src;
    uint64_t site, sp; /* the unwinder's serial for its stack (1 without backtraces), vt_ev_copy's stack pointer */
    const char *api;
    int kind, async, dev, src_dev;
    vt_class_token dt, st;
    struct vt_fold_ticket ticket; /* slot NULL: nothing kept */
} again;

static inline int copy_again(const struct vt_call *c, uint64_t dst, uint64_t src, uint64_t size,
                             const struct vt_copy_extra *x)
{
    const struct copy_again *a = &again;
    return dst == a->dst && src == a->src && size == a->size && c->api == a->api &&
           x->kind == a->kind && x->async == a->async && x->stream == a->stream && c->dev == a->dev &&
           x->src_dev == a->src_dev && !x->is_2d && !c->res && !c->graph && vt_class_token_holds(&a->dt, c->t0) &&
           vt_class_token_holds(&a->st, c->t0) && !(x->async && vt_captured_into(c, x->stream, NULL)) &&
           vt_fold_copy_again(c, size, a->h2d_src, vt_cfg.backtraces ? a->site : 0, &a->ticket);
}

/* Copy C (direction DIR, its site SITE, made with vt_ev_copy's stack pointer at SP) was left in
 * ticket TK's slot, clean: kept for copy_again when both sides' classes have tokens. */
static void keep_again(const struct vt_call *c, uint64_t dst, uint64_t src, uint64_t size,
                       const struct vt_copy_extra *x, int dir, uint64_t site, uint64_t sp, const struct vt_fold_ticket *tk)
{
    struct copy_again *a = &again;
    if (!tk->slot || !site || x->is_2d || !vt_copy_class_token(dst, c->t0, &a->dt) ||
        !vt_copy_class_token(src, c->t0, &a->st))
        return;
    a->dst = dst;
    a->src = src;
    a->size = size;
    a->stream = x->stream;
    a->site = site;
    a->sp = sp;
    a->h2d_src = dir == VT_DIR_H2D ? src : 0;
    a->api = c->api;
    a->kind = x->kind;
    a->async = x->async;
    a->dev = c->dev;
    a->src_dev = x->src_dev;
    a->ticket = *tk;
}

void vt_ev_copy(const struct vt_call *c, uint64_t dst, uint64_t src, uint64_t size, const struct vt_copy_extra *x)
{
    VT_SAVE_ERRNO;
    if (!vt_trace_ready() || vt_traffic_paused()) { VT_RESTORE_ERRNO; return; }
    vt_fmt_ensure_device(c->dev); /* its line before the frames' modules' */
    _Alignas(struct vt_rec_copy) unsigned char rbuf[sizeof(struct vt_rec_copy) + VT_BT_MAX * sizeof(uint64_t)];
    struct vt_rec_copy *rp = (struct vt_rec_copy *)(void *)rbuf;
    uint64_t sp;
    OWN_SP(sp);
    if (again.ticket.slot) {
        /* the kept copy's stack: this frame where it was and every word above it the same */
        int same_stack = !vt_cfg.backtraces || (sp == again.sp && !python_now() && vt_unwind_same_above(again.site, sp));
        if (same_stack && copy_again(c, dst, src, size, x)) { VT_RESTORE_ERRNO; return; }
        again.ticket.slot = NULL;
    }
    /* the copy's site: its call stack (a graph replay's copies have the launch's) */
    int nf = vt_cfg.backtraces ? vt_stack_capture(rp->frames, vt_cfg.bt_depth) : 0;
    if (nf < 0) nf = 0;
    uint64_t serial = nf ? vt_stack_serial() : 0;
    vt_ptr_info di, si;
    vt_copy_class(dst, c->t0, &di);
    vt_copy_class(src, c->t0, &si);
    int dd = side_is_device(&di), sd = side_is_device(&si);
    int dir = sd ? (dd ? VT_DIR_D2D : VT_DIR_D2H) : (dd ? VT_DIR_H2D : VT_DIR_H2H);
    unsigned long said = vt_findings_made;
    if (vt_cfg.check != VT_CHECK_OFF) {
        uint64_t dext = x->is_2d ? x->dpitch * (x->height ? x->height - 1 : 0) + x->width : size;
        uint64_t sext = x->is_2d ? x->spitch * (x->height ? x->height - 1 : 0) + x->width : size;
        if (size) { check_range(c, &di, dst, dext, "destination"); check_range(c, &si, src, sext, "source"); }
        int want = x->kind == cudaMemcpyHostToDevice ? VT_DIR_H2D : x->kind == cudaMemcpyDeviceToHost ? VT_DIR_D2H
                 : x->kind == cudaMemcpyDeviceToDevice ? VT_DIR_D2D : x->kind == cudaMemcpyHostToHost ? VT_DIR_H2H : -1;
        /* Managed memory is valid on either side; only a side the kind contradicts outright counts. */
        int want_sd = want == VT_DIR_D2H || want == VT_DIR_D2D, want_dd = want == VT_DIR_H2D || want == VT_DIR_D2D;
        int bad = want >= 0 && ((si.cls != VT_PTR_MANAGED && sd != want_sd) || (di.cls != VT_PTR_MANAGED && dd != want_dd));
        if (bad) {
            char why[128];
            snprintf(why, sizeof why, "kind says %s but the pointers are %s", dir_names[want], dir_names[dir]);
            struct vt_finding f = { .kind = VT_F_DIRECTION, .error = 1, .api = c->api, .arg = -1, .value = sd ? src : dst, .why = why };
            vt_ev_finding(&f);
        }
    }
    memset(rp, 0, sizeof *rp); /* the header only: the frames follow it */
    rp->nframes = (uint16_t)nf;
    vt_fill_call(&rp->c, c);
    rp->dst = dst;
    rp->src = src;
    rp->size = size;
    rp->dir = (uint8_t)dir;
    if (dir == VT_DIR_H2D || dir == VT_DIR_D2H) {
        const vt_ptr_info *h = dir == VT_DIR_H2D ? &si : &di;
        rp->host = h->cls == VT_PTR_PINNED ? 2 : h->cls == VT_PTR_MANAGED ? 3 : 1;
    }
    rp->async = (uint8_t)x->async;
    rp->stream = x->stream;
    rp->kind = x->kind;
    rp->is_2d = (uint8_t)x->is_2d;
    rp->width = x->width;
    rp->height = x->height;
    rp->dpitch = x->dpitch;
    rp->spitch = x->spitch;
    rp->src_dev = x->src_dev;
    rp->graph = (uint8_t)c->graph;
    const void *node;   /* a capturing stream's work is a graph node */
    const void *key = x->async ? vt_captured_into(c, x->stream, &node) : NULL;
    if (key) { vt_graph_add_copy(key, node, c->dev, dst, src, size, x); rp->graph = VT_GRAPH_CAPTURED; }
    /* a steady copy is counted (fold.h); a device-to-host one is only noted there */
    int foldable = !c->res && !rp->graph && vt_findings_made == said;
    struct vt_fold_ticket tk = { NULL, 0 };
    if (!((foldable || dir == VT_DIR_D2H) && vt_fold_copy(rp, serial, &tk)))
        vt_emit_record(VT_R_COPY, rp, sizeof *rp + rp->nframes * sizeof rp->frames[0]);
    /* kept when its stack can be known again without a walk (unwind.h), or backtraces are off */
    if (foldable && dir != VT_DIR_D2H && (!vt_cfg.backtraces || vt_unwind_checkable(serial, sp, vt_addr_is_self)))
        keep_again(c, dst, src, size, x, dir, vt_cfg.backtraces ? serial : 1, sp, &tk);
    VT_RESTORE_ERRNO;
}

void vt_ev_set(const struct vt_call *c, uint64_t addr, uint64_t size, int value, int async, uint64_t stream, uint64_t elem)
{
    VT_SAVE_ERRNO;
    if (!vt_trace_ready() || vt_traffic_paused()) { VT_RESTORE_ERRNO; return; }
    vt_fmt_ensure_device(c->dev);
    uint64_t bytes = size * (elem ? elem : 1);
    unsigned long said = vt_findings_made;
    if (vt_cfg.check != VT_CHECK_OFF && bytes) {
        vt_ptr_info i;
        vt_copy_class(addr, c->t0, &i);
        check_range(c, &i, addr, bytes, "memset");
    }
    struct vt_rec_set r;
    memset(&r, 0, sizeof r);
    vt_fill_call(&r.c, c);
    r.addr = addr;
    r.size = bytes;
    r.value = value;
    r.async = (uint8_t)async;
    r.stream = stream;
    r.graph = (uint8_t)c->graph;
    const void *node;
    const void *key = async ? vt_captured_into(c, stream, &node) : NULL;
    if (key) { vt_graph_add_set(key, node, c->dev, addr, size, value, elem); r.graph = VT_GRAPH_CAPTURED; }
    if (!(!c->res && !r.graph && vt_findings_made == said && vt_fold_set(&r))) vt_emit_record(VT_R_SET, &r, sizeof r);
    VT_RESTORE_ERRNO;
}
