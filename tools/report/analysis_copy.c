/* analysis_copy.c - a process's copies: totals by direction and host memory kind, a size
 * histogram, per-stack counts for the copy sites and their verdicts, and device-to-device data
 * staged through host memory (docs/report.md, "Transfers"). */
#include "report/analysis_priv.h"

/* The device an allocation starting at ADDR lives on, else FALLBACK (an interior pointer, or memory
 * the trace did not see allocated). */
static int64_t device_of(const struct vt_an_private *a, uint64_t addr, int64_t fallback)
{
    uint64_t *li = vtr_hmap_get(&a->by_addr, addr);
    return li ? a->lives[*li].dev : fallback;
}

/* A device-to-device transfer staged through host memory: a d2h copy from device A into a host
 * buffer, then an h2d copy of the same bytes from that buffer to device B != A (a peer copy
 * would skip the host). Remembers d2h destinations; 1 when EV is such a forwarding h2d copy. */
static int stage_check(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    if (ev->size >= (1ull << 52)) return 0;
    if (ev->dir == VT_DIR_D2H) {
        int64_t dev = device_of(a, ev->src, ev->dev);
        vtr_hmap_put(&a->staged, ev->dst, ev->size << 12 | (uint64_t)(dev + 1)); /* out of memory: not seen */
        return 0;
    }
    if (ev->dir != VT_DIR_H2D) return 0;
    uint64_t *v = vtr_hmap_get(&a->staged, ev->src);
    if (!v || *v >> 12 != ev->size) return 0;
    int64_t from = (int64_t)(*v & 0xfff) - 1, to = device_of(a, ev->dst, ev->dev);
    return from >= 0 && to >= 0 && from != to;
}

/* PyTorch's .item() and .cpu(): cudaMemcpyAsync device-to-host, then cudaStreamSynchronize of
 * that stream. The host waits for the copy (and all the GPU work before it) as with cudaMemcpy;
 * such a copy counts with the synchronous ones for the "read back once" verdict when the
 * thread's next call synchronises its stream, the device or the context. */
void vt_an_await_call(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    uint64_t tid = (uint64_t)ev->tid, *st = vtr_hmap_get(&a->await_stack, tid);
    if (!st) return;
    if (ev->type == VT_EV_SYNC && !ev->res_null && !ev->res) {
        uint64_t *s = vtr_hmap_get(&a->await_stream, tid);
        if (!ev->has_stream || (s && *s == ev->stream)) a->stacks[*st - 1].d2h_sync_count++;
    }
    vtr_hmap_del(&a->await_stack, tid);
    vtr_hmap_del(&a->await_stream, tid);
}

int vt_an_on_copy(struct vt_proc *p, const struct vt_event *ev)
{
    struct vt_an_private *a = p->priv;
    if (ev->res_null || ev->res) return vt_an_add_error(p, ev);
    if (ev->captured) { p->captured_ops++; return 0; }
    if (ev->graph) p->graph_copies++;
    /* a folded record (copies) stands for COUNT copies of its site, kinds and size class, BYTES in all */
    uint64_t n = ev->type == VT_EV_COPIES ? ev->count : 1, bytes = ev->type == VT_EV_COPIES ? ev->bytes : ev->size;
    int st = vt_an_intern_stack(p, ev->bt, ev->nbt);
    if (st < 0) return st;
    if (ev->nbt) p->backtraces_seen = 1;
    struct stack *cs = &a->stacks[st];
    vt_sat_add(&cs->copy_bytes, bytes); cs->copy_count += n;
    if (!ev->async) cs->copy_ns += ev->dur;
    if (ev->dir == VT_DIR_D2H) {
        /* CUDA's "API synchronization behavior": an async copy from device to pageable host memory
         * returns only once the copy has completed */
        if (!ev->async || ev->host == VT_HOST_PAGEABLE) cs->d2h_sync_count += n;
        else if (ev->type == VT_EV_COPY && ev->host == VT_HOST_PINNED &&
                 (vtr_hmap_put(&a->await_stack, (uint64_t)ev->tid, (uint64_t)st + 1) < 0 ||
                  vtr_hmap_put(&a->await_stream, (uint64_t)ev->tid, ev->stream) < 0)) return VT_AN_ENOMEM;
    }
    if (stage_check(p, ev)) cs->staged_count += n;
    if (ev->host == VT_HOST_PAGEABLE) { vt_sat_add(&cs->pageable_bytes[ev->dir == VT_DIR_D2H], bytes); cs->pageable_count += n; }
    p->copy_hist[ev->dir][ev->size ? 63 - __builtin_clzll(ev->size) : 64] += n;   /* one size class per record */
    struct vt_xfer *x = &p->xfer[ev->dir][ev->host];
    vt_sat_add(&x->bytes, bytes); x->count += n;
    if (ev->async) x->async_count += n;
    else { vt_sat_add(&x->sync_bytes, bytes); x->sync_count += n; x->sync_ns += ev->dur; }
    return 0;
}
