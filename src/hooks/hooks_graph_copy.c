/* hooks_graph_copy.c - the memcpy and memset nodes of CUDA graphs made or changed by hand
 * (cu/cudaGraphAddMemcpyNode, ...1D, cu/cudaGraphAddMemsetNode and their SetParams calls, of the
 * graph's node or an exec's). Each is checked when made, as a captured copy or memset is: its
 * record says "captured" (nothing ran then), then it is kept for the replays (core/graphs.h),
 * where each graph launch checks and records it as work done. A node the tracer cannot follow
 * (a CUDA array at either end; a 3D copy whose slices are not rows of one pitch) is left
 * unchecked, as before. */
#include <stdint.h>
#include <string.h>

#include "cuda_abi.h"
#include "events.h"
#include "graphs.h"
#include "tracer.h"
#include "hooks_common.h"

#define u vt_u64

typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;

/* A copy node's parameters, normalised as vt_ev_copy takes them. */
struct copy_node { uint64_t dst, src, size; struct vt_copy_extra x; };

/* ROWS rows of WIDTH bytes, PITCHes apart at each end: one run when they touch at both ends. */
static void copy_rows(struct copy_node *n, size_t width, size_t rows, size_t dpitch, size_t spitch)
{
    if (rows <= 1 || (dpitch == width && spitch == width)) {
        n->size = (uint64_t)width * (rows ? rows : 1);
        return;
    }
    n->size = (uint64_t)width * rows;
    n->x.is_2d = 1;
    n->x.width = width;
    n->x.height = rows;
    n->x.dpitch = dpitch;
    n->x.spitch = spitch;
}

/* Depth slices of HEIGHT rows are rows of one pitch when each end's slice is HEIGHT rows high. */
static int rows_of(size_t height, size_t depth, size_t dslice, size_t sslice, size_t *rows)
{
    height = height ? height : 1;
    depth = depth ? depth : 1;
    if (depth > 1 && (dslice != height || sslice != height)) return -1;
    *rows = height * depth;
    return 0;
}

static int rt_copy_node(const struct cudaMemcpy3DParms *p, struct copy_node *n)
{
    size_t rows;
    if (!p || p->srcArray || p->dstArray ||
        rows_of(p->extent.height, p->extent.depth, p->dstPtr.ysize, p->srcPtr.ysize, &rows) < 0)
        return -1;
    memset(n, 0, sizeof *n);
    n->src = u(p->srcPtr.ptr) + p->srcPos.x + p->srcPos.y * p->srcPtr.pitch + p->srcPos.z * p->srcPtr.pitch * p->srcPtr.ysize;
    n->dst = u(p->dstPtr.ptr) + p->dstPos.x + p->dstPos.y * p->dstPtr.pitch + p->dstPos.z * p->dstPtr.pitch * p->dstPtr.ysize;
    n->x.kind = p->kind;
    n->x.src_dev = -1;
    copy_rows(n, p->extent.width, rows, p->dstPtr.pitch, p->srcPtr.pitch);
    return 0;
}

static int rt_copy_node_1d(void *dst, const void *src, size_t count, int kind, struct copy_node *n)
{
    memset(n, 0, sizeof *n);
    n->dst = u(dst);
    n->src = u(src);
    n->size = count;
    n->x.kind = kind;
    n->x.src_dev = -1;
    return 0;
}

static uint64_t drv_end(int type, const void *host, CUdeviceptr dev)
{
    return type == CU_MEMORYTYPE_HOST ? u(host) : dev;
}

static int drv_copy_node(const CUDA_MEMCPY3D *p, struct copy_node *n)
{
    size_t rows;
    if (!p || p->srcMemoryType == CU_MEMORYTYPE_ARRAY || p->dstMemoryType == CU_MEMORYTYPE_ARRAY ||
        rows_of(p->Height, p->Depth, p->dstHeight, p->srcHeight, &rows) < 0)
        return -1;
    memset(n, 0, sizeof *n);
    n->src = drv_end(p->srcMemoryType, p->srcHost, p->srcDevice) + p->srcXInBytes + p->srcY * p->srcPitch +
             p->srcZ * p->srcPitch * p->srcHeight;
    n->dst = drv_end(p->dstMemoryType, p->dstHost, p->dstDevice) + p->dstXInBytes + p->dstY * p->dstPitch +
             p->dstZ * p->dstPitch * p->dstHeight;
    n->x.kind = -1;
    n->x.src_dev = -1;
    copy_rows(n, p->WidthInBytes, rows, p->dstPitch, p->srcPitch);
    return 0;
}

/* A memset node: WIDTH elements a row, HEIGHT rows PITCH bytes apart; rows that do not touch are
 * checked (and counted) over their whole span, the set records having no pitch. */
struct set_node { uint64_t addr, count, elem; int value; };
static int set_node_of(uint64_t dst, size_t pitch, unsigned value, unsigned elem, size_t width, size_t height,
                       struct set_node *n)
{
    if (!elem) return -1;
    n->addr = dst;
    n->elem = elem;
    n->value = (int)value;
    n->count = height <= 1 ? width : (pitch * (height - 1)) / elem + width;
    return 0;
}

/* Checked now, as captured work (a "captured" record, api the call), then kept: added to GRAPH's
 * set (NODE made), or replacing NODE's in EXEC's set or, EXEC NULL, its graph's. */
static void copy_done(const char *api, const struct copy_node *n, const void *graph, const void *exec,
                      const void *node, int set)
{
    VT_SAVE_ERRNO;
    struct vt_call c = { .api = api, .dev = vt_ts.cur_dev, .graph = VT_GRAPH_CAPTURED };
    c.t0 = vt_now();
    vt_ev_copy(&c, n->dst, n->src, n->size, &n->x);
    if (set) vt_graph_set_copy(exec, node, c.dev, n->dst, n->src, n->size, &n->x);
    else vt_graph_add_copy(graph, node, c.dev, n->dst, n->src, n->size, &n->x);
    VT_RESTORE_ERRNO;
}

static void set_done(const char *api, const struct set_node *n, const void *graph, const void *exec,
                     const void *node, int set)
{
    VT_SAVE_ERRNO;
    struct vt_call c = { .api = api, .dev = vt_ts.cur_dev, .graph = VT_GRAPH_CAPTURED };
    c.t0 = vt_now();
    vt_ev_set(&c, n->addr, n->count, n->value, 1, 0, n->elem);
    if (set) vt_graph_set_set(exec, node, c.dev, n->addr, n->count, n->value, n->elem);
    else vt_graph_add_set(graph, node, c.dev, n->addr, n->count, n->value, n->elem);
    VT_RESTORE_ERRNO;
}

int vt_graph_generic_copy_node(const char *api, int rt, const void *p, const void *graph, const void *exec,
                               const void *node, int set)
{
    int type = p ? *(const int *)p : -1;
    const char *u_ = p;
    if (type == VT_GRAPH_NODE_MEMCPY) {
        struct copy_node n;
        const void *cp = u_ + VT_NODE_PARAMS_MEMCPY;
        if ((rt ? rt_copy_node(cp, &n) : drv_copy_node(cp, &n)) == 0) copy_done(api, &n, graph, exec, node, set);
        return 0;
    }
    if (type == VT_GRAPH_NODE_MEMSET) {   /* the runtime's and the driver's start alike */
        const CUDA_MEMSET_NODE_PARAMS *m = (const void *)(u_ + VT_NODE_PARAMS_MEMSET);
        struct set_node n;
        if (set_node_of(m->dst, m->pitch, m->value, m->elementSize, m->width, m->height, &n) == 0)
            set_done(api, &n, graph, exec, node, set);
        return 0;
    }
    return -1;
}

/* ---- made ---------------------------------------------------------------------------------- */

typedef int (*rt_add_copy_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const struct cudaMemcpy3DParms *);
static int rt_add_copy_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                            size_t nd, const struct cudaMemcpy3DParms *p)
{
    int r;
    (void)rt;
    RT_RUN(r, ((rt_add_copy_fn)real)(node, g, deps, nd, p));
    struct copy_node n;
    if (r == 0 && node && vt_cfg.enabled && rt_copy_node(p, &n) == 0) copy_done(api, &n, g, NULL, *node, 0);
    return r;
}
RT_GRAPH_HOOK(cudaGraphAddMemcpyNode, rt_add_copy_impl,
              (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, const struct cudaMemcpy3DParms *p), n, g, d, nd, p)

typedef int (*rt_add_copy1d_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, void *, const void *, size_t, int);
static int rt_add_copy1d_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                              size_t nd, void *dst, const void *src, size_t count, int kind)
{
    int r;
    (void)rt;
    RT_RUN(r, ((rt_add_copy1d_fn)real)(node, g, deps, nd, dst, src, count, kind));
    struct copy_node n;
    if (r == 0 && node && vt_cfg.enabled && rt_copy_node_1d(dst, src, count, kind, &n) == 0) copy_done(api, &n, g, NULL, *node, 0);
    return r;
}
RT_GRAPH_HOOK(cudaGraphAddMemcpyNode1D, rt_add_copy1d_impl,
              (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, void *dst, const void *src, size_t count, int kind),
              n, g, d, nd, dst, src, count, kind)

typedef int (*drv_add_copy_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_MEMCPY3D *, void *);
static int drv_add_copy_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                             size_t nd, const CUDA_MEMCPY3D *p, void *ctx)
{
    (void)rt;
    int r = ((drv_add_copy_fn)real)(node, g, deps, nd, p, ctx);
    struct copy_node n;
    if (r == 0 && node && vt_cfg.enabled && drv_copy_node(p, &n) == 0) copy_done(api, &n, g, NULL, *node, 0);
    return r;
}
DRV_GRAPH_HOOK(cuGraphAddMemcpyNode, drv_add_copy_impl,
               (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, const CUDA_MEMCPY3D *p, void *ctx), n, g, d, nd, p, ctx)

typedef int (*rt_add_set_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const struct cudaMemsetParams *);
static int rt_add_set_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                           size_t nd, const struct cudaMemsetParams *p)
{
    int r;
    (void)rt;
    RT_RUN(r, ((rt_add_set_fn)real)(node, g, deps, nd, p));
    struct set_node n;
    if (r == 0 && node && p && vt_cfg.enabled && set_node_of(u(p->dst), p->pitch, p->value, p->elementSize, p->width, p->height, &n) == 0)
        set_done(api, &n, g, NULL, *node, 0);
    return r;
}
RT_GRAPH_HOOK(cudaGraphAddMemsetNode, rt_add_set_impl,
              (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, const struct cudaMemsetParams *p), n, g, d, nd, p)

typedef int (*drv_add_set_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_MEMSET_NODE_PARAMS *, void *);
static int drv_add_set_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                            size_t nd, const CUDA_MEMSET_NODE_PARAMS *p, void *ctx)
{
    (void)rt;
    int r = ((drv_add_set_fn)real)(node, g, deps, nd, p, ctx);
    struct set_node n;
    if (r == 0 && node && p && vt_cfg.enabled && set_node_of(p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, &n) == 0)
        set_done(api, &n, g, NULL, *node, 0);
    return r;
}
DRV_GRAPH_HOOK(cuGraphAddMemsetNode, drv_add_set_impl,
               (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, const CUDA_MEMSET_NODE_PARAMS *p, void *ctx),
               n, g, d, nd, p, ctx)

/* ---- changed: the graph's node (exec NULL) or an exec's --------------------------------------- */

typedef int (*rt_set_copy_fn)(CUgraphNode, const struct cudaMemcpy3DParms *);
typedef int (*rt_exec_set_copy_fn)(CUgraphExec, CUgraphNode, const struct cudaMemcpy3DParms *);
static int rt_set_copy(void *real, const char *api, CUgraphExec e, CUgraphNode node, const struct cudaMemcpy3DParms *p)
{
    int r;
    if (e) RT_RUN(r, ((rt_exec_set_copy_fn)real)(e, node, p)); else RT_RUN(r, ((rt_set_copy_fn)real)(node, p));
    struct copy_node n;
    if (r == 0 && vt_cfg.enabled && rt_copy_node(p, &n) == 0) copy_done(api, &n, NULL, e, node, 1);
    return r;
}
static int rt_set_copy_impl(void *real, const char *api, int rt, CUgraphNode node, const struct cudaMemcpy3DParms *p)
{ (void)rt; return rt_set_copy(real, api, NULL, node, p); }
static int rt_exec_set_copy_impl(void *real, const char *api, int rt, CUgraphExec e, CUgraphNode node, const struct cudaMemcpy3DParms *p)
{ (void)rt; return e ? rt_set_copy(real, api, e, node, p) : ((rt_exec_set_copy_fn)real)(e, node, p); }
RT_GRAPH_HOOK(cudaGraphMemcpyNodeSetParams, rt_set_copy_impl, (CUgraphNode n, const struct cudaMemcpy3DParms *p), n, p)
RT_GRAPH_HOOK(cudaGraphExecMemcpyNodeSetParams, rt_exec_set_copy_impl,
              (CUgraphExec e, CUgraphNode n, const struct cudaMemcpy3DParms *p), e, n, p)

typedef int (*rt_set_copy1d_fn)(CUgraphNode, void *, const void *, size_t, int);
typedef int (*rt_exec_set_copy1d_fn)(CUgraphExec, CUgraphNode, void *, const void *, size_t, int);
static int rt_set_copy1d(void *real, const char *api, CUgraphExec e, CUgraphNode node, void *dst, const void *src,
                         size_t count, int kind)
{
    int r;
    if (e) RT_RUN(r, ((rt_exec_set_copy1d_fn)real)(e, node, dst, src, count, kind));
    else RT_RUN(r, ((rt_set_copy1d_fn)real)(node, dst, src, count, kind));
    struct copy_node n;
    if (r == 0 && vt_cfg.enabled && rt_copy_node_1d(dst, src, count, kind, &n) == 0) copy_done(api, &n, NULL, e, node, 1);
    return r;
}
static int rt_set_copy1d_impl(void *real, const char *api, int rt, CUgraphNode node, void *dst, const void *src,
                              size_t count, int kind)
{ (void)rt; return rt_set_copy1d(real, api, NULL, node, dst, src, count, kind); }
static int rt_exec_set_copy1d_impl(void *real, const char *api, int rt, CUgraphExec e, CUgraphNode node, void *dst,
                                   const void *src, size_t count, int kind)
{
    (void)rt;
    return e ? rt_set_copy1d(real, api, e, node, dst, src, count, kind)
             : ((rt_exec_set_copy1d_fn)real)(e, node, dst, src, count, kind);
}
RT_GRAPH_HOOK(cudaGraphMemcpyNodeSetParams1D, rt_set_copy1d_impl,
              (CUgraphNode n, void *dst, const void *src, size_t count, int kind), n, dst, src, count, kind)
RT_GRAPH_HOOK(cudaGraphExecMemcpyNodeSetParams1D, rt_exec_set_copy1d_impl,
              (CUgraphExec e, CUgraphNode n, void *dst, const void *src, size_t count, int kind), e, n, dst, src, count, kind)

typedef int (*drv_set_copy_fn)(CUgraphNode, const CUDA_MEMCPY3D *);
typedef int (*drv_exec_set_copy_fn)(CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D *, void *);
static int drv_set_copy_impl(void *real, const char *api, int rt, CUgraphNode node, const CUDA_MEMCPY3D *p)
{
    (void)rt;
    int r = ((drv_set_copy_fn)real)(node, p);
    struct copy_node n;
    if (r == 0 && vt_cfg.enabled && drv_copy_node(p, &n) == 0) copy_done(api, &n, NULL, NULL, node, 1);
    return r;
}
static int drv_exec_set_copy_impl(void *real, const char *api, int rt, CUgraphExec e, CUgraphNode node,
                                  const CUDA_MEMCPY3D *p, void *ctx)
{
    (void)rt;
    int r = ((drv_exec_set_copy_fn)real)(e, node, p, ctx);
    struct copy_node n;
    if (r == 0 && e && vt_cfg.enabled && drv_copy_node(p, &n) == 0) copy_done(api, &n, NULL, e, node, 1);
    return r;
}
DRV_GRAPH_HOOK(cuGraphMemcpyNodeSetParams, drv_set_copy_impl, (CUgraphNode n, const CUDA_MEMCPY3D *p), n, p)
DRV_GRAPH_HOOK(cuGraphExecMemcpyNodeSetParams, drv_exec_set_copy_impl,
               (CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D *p, void *ctx), e, n, p, ctx)

typedef int (*rt_set_set_fn)(CUgraphNode, const struct cudaMemsetParams *);
typedef int (*rt_exec_set_set_fn)(CUgraphExec, CUgraphNode, const struct cudaMemsetParams *);
static int rt_set_set(void *real, const char *api, CUgraphExec e, CUgraphNode node, const struct cudaMemsetParams *p)
{
    int r;
    if (e) RT_RUN(r, ((rt_exec_set_set_fn)real)(e, node, p)); else RT_RUN(r, ((rt_set_set_fn)real)(node, p));
    struct set_node n;
    if (r == 0 && p && vt_cfg.enabled && set_node_of(u(p->dst), p->pitch, p->value, p->elementSize, p->width, p->height, &n) == 0)
        set_done(api, &n, NULL, e, node, 1);
    return r;
}
static int rt_set_set_impl(void *real, const char *api, int rt, CUgraphNode node, const struct cudaMemsetParams *p)
{ (void)rt; return rt_set_set(real, api, NULL, node, p); }
static int rt_exec_set_set_impl(void *real, const char *api, int rt, CUgraphExec e, CUgraphNode node, const struct cudaMemsetParams *p)
{ (void)rt; return e ? rt_set_set(real, api, e, node, p) : ((rt_exec_set_set_fn)real)(e, node, p); }
RT_GRAPH_HOOK(cudaGraphMemsetNodeSetParams, rt_set_set_impl, (CUgraphNode n, const struct cudaMemsetParams *p), n, p)
RT_GRAPH_HOOK(cudaGraphExecMemsetNodeSetParams, rt_exec_set_set_impl,
              (CUgraphExec e, CUgraphNode n, const struct cudaMemsetParams *p), e, n, p)

typedef int (*drv_set_set_fn)(CUgraphNode, const CUDA_MEMSET_NODE_PARAMS *);
typedef int (*drv_exec_set_set_fn)(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS *, void *);
static int drv_set_set_impl(void *real, const char *api, int rt, CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *p)
{
    (void)rt;
    int r = ((drv_set_set_fn)real)(node, p);
    struct set_node n;
    if (r == 0 && p && vt_cfg.enabled && set_node_of(p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, &n) == 0)
        set_done(api, &n, NULL, NULL, node, 1);
    return r;
}
static int drv_exec_set_set_impl(void *real, const char *api, int rt, CUgraphExec e, CUgraphNode node,
                                 const CUDA_MEMSET_NODE_PARAMS *p, void *ctx)
{
    (void)rt;
    int r = ((drv_exec_set_set_fn)real)(e, node, p, ctx);
    struct set_node n;
    if (r == 0 && e && p && vt_cfg.enabled && set_node_of(p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, &n) == 0)
        set_done(api, &n, NULL, e, node, 1);
    return r;
}
DRV_GRAPH_HOOK(cuGraphMemsetNodeSetParams, drv_set_set_impl, (CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p), n, p)
DRV_GRAPH_HOOK(cuGraphExecMemsetNodeSetParams, drv_exec_set_set_impl,
               (CUgraphExec e, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p, void *ctx), e, n, p, ctx)

const struct vt_hook vt_hooks_graph_copy[] = {
    VT_HOOK_ENTRY(cudaGraphAddMemcpyNode, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphAddMemcpyNode1D, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphAddMemcpyNode, "cuGraphAddMemcpyNode", 10000, 0),
    VT_HOOK_ENTRY(cudaGraphAddMemsetNode, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphAddMemsetNode, "cuGraphAddMemsetNode", 10000, 0),
    VT_HOOK_ENTRY(cudaGraphMemcpyNodeSetParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphExecMemcpyNodeSetParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphMemcpyNodeSetParams1D, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphExecMemcpyNodeSetParams1D, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphMemcpyNodeSetParams, "cuGraphMemcpyNodeSetParams", 10000, 0),
    VT_HOOK_ENTRY(cuGraphExecMemcpyNodeSetParams, "cuGraphExecMemcpyNodeSetParams", 10020, 0),
    VT_HOOK_ENTRY(cudaGraphMemsetNodeSetParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphExecMemsetNodeSetParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphMemsetNodeSetParams, "cuGraphMemsetNodeSetParams", 10000, 0),
    VT_HOOK_ENTRY(cuGraphExecMemsetNodeSetParams, "cuGraphExecMemsetNodeSetParams", 10020, 0),
    { NULL, NULL, 0, 0, NULL, NULL },
};
