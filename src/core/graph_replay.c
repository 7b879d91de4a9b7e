/* graph_replay.c - a graph launch does its exec's nodes (graphs.h): each kernel node checked and
 * recorded as a launch, each copy and memset checked and recorded, allocation and free nodes
 * made live and freed; every record says "graph". Above events.c and launch_check.c, which add
 * captured work to the node sets below them (graphs.c). */
#include <stdint.h>

#include <vramtrace/trace.h>
#include "events.h"
#include "graphs.h"
#include "launch_check.h"
#include "registry.h"
#include "tracer.h"

struct replay_ctx { const char *api; uint64_t stream; };

static void replay(const struct vt_gnode *n, void *ctx)
{
    const char *api = ((struct replay_ctx *)ctx)->api;
    uint64_t stream = ((struct replay_ctx *)ctx)->stream;
    struct vt_call c = { .api = api, .dev = n->dev >= 0 ? n->dev : vt_ts.cur_dev, .graph = VT_GRAPH_REPLAYED };
    c.t0 = vt_now();
    switch (n->kind) {
    case VT_G_ALLOC: {
        vt_alloc_info a;
        if (vt_registry_lookup(n->addr, &a) == 0 && a.mem == VT_MEM_ASYNC && a.base == n->addr)
            return; /* still live from an earlier launch */
        struct vt_alloc_extra x = { .stream = stream, .has_stream = 1, .graph = 1 };
        vt_ev_alloc(&c, n->addr, n->size, VT_MEM_ASYNC, &x);
        return;
    }
    case VT_G_FREE: {
        struct vt_free_pending fp;
        vt_ev_free_begin(&fp, api, n->addr, 0, stream, 1);
        vt_ev_free_end(&fp, 0);
        return;
    }
    case VT_G_KERNEL:
        /* a conditional body's kernel may run: checked; whether it ran only the device knows */
        if (n->k && vt_launch_begin(&c, n->k, NULL, n->args, n->args_len) && !n->cond)
            vt_launch_end(&c, n->k, n->grid, n->block, n->shmem, stream);
        return;
    case VT_G_COND:
        return;
    case VT_G_COPY: {
        if (n->cond) return; /* a conditional body's copies and memsets are not followed */
        struct vt_copy_extra x = n->x;
        x.stream = stream;
        vt_ev_copy(&c, n->addr, n->src, n->size, &x);
        return;
    }
    case VT_G_SET:
        if (n->cond) return;
        vt_ev_set(&c, n->addr, n->size, n->value, 1, stream, n->elem);
        return;
    }
}

void vt_graph_launched(const char *api, const void *exec, uint64_t stream)
{
    struct replay_ctx ctx = { api, stream };
    vt_graph_foreach(exec, replay, &ctx);
}
