/* hooks_graph.c - CUDA graphs: stream capture begin/end, instantiation, launch, destruction and
 * explicit nodes. The node model and the replay at each launch are core's (core/graphs.h); these
 * hooks tell it what happened. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "cuda_abi.h"
#include "events.h"
#include "graphs.h"
#include "registry.h"
#include "tracer.h"
#include "hooks_common.h"

#define u vt_u64


typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
/* CUDA_MEM_ALLOC_NODE_PARAMS (v1) == struct cudaMemAllocNodeParams: the fields the tracer reads */
typedef struct {
    struct { int allocType, handleTypes; struct { int type, id; } location; void *win32; size_t maxSize;
             unsigned short usage; unsigned char reserved[54]; } poolProps;
    const void *accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    CUdeviceptr dptr;
} vt_mem_alloc_node_params;

/* Captures in progress: while there is one, launches, copies and memsets ask whether their
 * stream is capturing (core/graphs.h); with none, they never ask. */
typedef int (*begin_capture_fn)(CUstream, int);
static int begin_capture_impl(void *real, const char *api, int rt, CUstream s, int mode)
{
    int r;
    if (rt) RT_RUN(r, ((begin_capture_fn)real)(s, mode)); else r = ((begin_capture_fn)real)(s, mode);
    if (r == 0) vt_graph_capture_begun();
    return r;
}
/* CUDA 12.3+: capture into an existing graph. The capture's nodes join that graph's set (the
 * driver names it as the capture's graph), after the nodes it already has. */
typedef int (*begin_to_graph_fn)(CUstream, CUgraph, const CUgraphNode *, const void *, size_t, int);
static int begin_to_graph_impl(void *real, const char *api, int rt, CUstream s, CUgraph g, const CUgraphNode *deps,
                               const void *edges, size_t nd, int mode)
{
    int r;
    if (rt) RT_RUN(r, ((begin_to_graph_fn)real)(s, g, deps, edges, nd, mode));
    else r = ((begin_to_graph_fn)real)(s, g, deps, edges, nd, mode);
    if (r == 0) vt_graph_capture_begun();
    return r;
}
#define BEGIN_TO_GRAPH_PARAMS (cudaStream_t s, CUgraph g, const CUgraphNode *d, const void *e, size_t nd, int mode)
RT_GRAPH_HOOK(cudaStreamBeginCaptureToGraph, begin_to_graph_impl, BEGIN_TO_GRAPH_PARAMS, s, g, d, e, nd, mode)
RT_GRAPH_HOOK(cudaStreamBeginCaptureToGraph_ptsz, begin_to_graph_impl, BEGIN_TO_GRAPH_PARAMS, s, g, d, e, nd, mode)
DRV_GRAPH_HOOK(cuStreamBeginCaptureToGraph, begin_to_graph_impl, BEGIN_TO_GRAPH_PARAMS, s, g, d, e, nd, mode)
DRV_GRAPH_HOOK(cuStreamBeginCaptureToGraph_ptsz, begin_to_graph_impl, BEGIN_TO_GRAPH_PARAMS, s, g, d, e, nd, mode)
#undef BEGIN_TO_GRAPH_PARAMS
RT_GRAPH_HOOK(cudaStreamBeginCapture, begin_capture_impl, (cudaStream_t s, int mode), s, mode)
RT_GRAPH_HOOK(cudaStreamBeginCapture_ptsz, begin_capture_impl, (cudaStream_t s, int mode), s, mode)
DRV_GRAPH_HOOK(cuStreamBeginCapture_v2, begin_capture_impl, (CUstream s, int mode), s, mode)
DRV_GRAPH_HOOK(cuStreamBeginCapture_v2_ptsz, begin_capture_impl, (CUstream s, int mode), s, mode)

typedef int (*end_capture_fn)(CUstream, CUgraph *);
static int end_capture_impl(void *real, const char *api, int rt, CUstream s, CUgraph *g)
{
    int r, was = vt_stream_capturing(u(s));
    if (rt) RT_RUN(r, ((end_capture_fn)real)(s, g)); else r = ((end_capture_fn)real)(s, g);
    if (was) vt_graph_capture_ended();
    if (r == 0 && g && *g) vt_graph_transfer(s, *g, 1);
    else vt_graph_drop(s);
    return r;
}
RT_GRAPH_HOOK(cudaStreamEndCapture, end_capture_impl, (cudaStream_t s, CUgraph *g), s, g)
RT_GRAPH_HOOK(cudaStreamEndCapture_ptsz, end_capture_impl, (cudaStream_t s, CUgraph *g), s, g)
DRV_GRAPH_HOOK(cuStreamEndCapture, end_capture_impl, (CUstream s, CUgraph *g), s, g)
DRV_GRAPH_HOOK(cuStreamEndCapture_ptsz, end_capture_impl, (CUstream s, CUgraph *g), s, g)

typedef int (*instantiate_fn)(CUgraphExec *, CUgraph, unsigned long long);
static int instantiate_impl(void *real, const char *api, int rt, CUgraphExec *e, CUgraph g, unsigned long long f)
{
    int r;
    if (rt) RT_RUN(r, ((instantiate_fn)real)(e, g, f)); else r = ((instantiate_fn)real)(e, g, f);
    if (r == 0 && e && *e) vt_graph_transfer(g, *e, 0);
    return r;
}
/* CUDA 12.0+: the flags (and an upload stream) in a struct: the exec holds the graph's nodes as
 * for the other instantiation calls. */
typedef int (*instantiate_params_fn)(CUgraphExec *, CUgraph, void *);
static int instantiate_params_impl(void *real, const char *api, int rt, CUgraphExec *e, CUgraph g, void *p)
{
    int r;
    if (rt) RT_RUN(r, ((instantiate_params_fn)real)(e, g, p)); else r = ((instantiate_params_fn)real)(e, g, p);
    if (r == 0 && e && *e) vt_graph_transfer(g, *e, 0);
    return r;
}
RT_GRAPH_HOOK(cudaGraphInstantiateWithParams, instantiate_params_impl, (CUgraphExec *e, CUgraph g, void *p), e, g, p)
RT_GRAPH_HOOK(cudaGraphInstantiateWithParams_ptsz, instantiate_params_impl, (CUgraphExec *e, CUgraph g, void *p), e, g, p)
DRV_GRAPH_HOOK(cuGraphInstantiateWithParams, instantiate_params_impl, (CUgraphExec *e, CUgraph g, void *p), e, g, p)
DRV_GRAPH_HOOK(cuGraphInstantiateWithParams_ptsz, instantiate_params_impl, (CUgraphExec *e, CUgraph g, void *p), e, g, p)

/* A clone holds a copy of the original's nodes under its own handles. */
typedef int (*clone_fn)(CUgraph *, CUgraph);
static int clone_impl(void *real, const char *api, int rt, CUgraph *out, CUgraph g)
{
    int r;
    if (rt) RT_RUN(r, ((clone_fn)real)(out, g)); else r = ((clone_fn)real)(out, g);
    if (r == 0 && out && *out && vt_cfg.enabled) vt_graph_clone(g, *out);
    return r;
}
RT_GRAPH_HOOK(cudaGraphClone, clone_impl, (CUgraph *out, CUgraph g), out, g)
DRV_GRAPH_HOOK(cuGraphClone, clone_impl, (CUgraph *out, CUgraph g), out, g)

RT_GRAPH_HOOK(cudaGraphInstantiate, instantiate_impl, (CUgraphExec *e, CUgraph g, unsigned long long f), e, g, f)
RT_GRAPH_HOOK(cudaGraphInstantiateWithFlags, instantiate_impl, (CUgraphExec *e, CUgraph g, unsigned long long f), e, g, f)
DRV_GRAPH_HOOK(cuGraphInstantiateWithFlags, instantiate_impl, (CUgraphExec *e, CUgraph g, unsigned long long f), e, g, f)

typedef int (*graph_launch_fn)(CUgraphExec, CUstream);
static int graph_launch_impl(void *real, const char *api, int rt, CUgraphExec e, CUstream s)
{
    int r;
    if (rt) RT_RUN(r, ((graph_launch_fn)real)(e, s)); else r = ((graph_launch_fn)real)(e, s);
    if (r == 0) vt_graph_launched(api, e, u(s));
    return r;
}
RT_GRAPH_HOOK(cudaGraphLaunch, graph_launch_impl, (CUgraphExec e, cudaStream_t s), e, s)
RT_GRAPH_HOOK(cudaGraphLaunch_ptsz, graph_launch_impl, (CUgraphExec e, cudaStream_t s), e, s)
DRV_GRAPH_HOOK(cuGraphLaunch, graph_launch_impl, (CUgraphExec e, CUstream s), e, s)
DRV_GRAPH_HOOK(cuGraphLaunch_ptsz, graph_launch_impl, (CUgraphExec e, CUstream s), e, s)

typedef int (*destroy_fn)(void *);
static int destroy_impl(void *real, const char *api, int rt, void *obj)
{
    int r;
    if (rt) RT_RUN(r, ((destroy_fn)real)(obj)); else r = ((destroy_fn)real)(obj);
    if (r == 0) vt_graph_drop(obj);
    return r;
}
RT_GRAPH_HOOK(cudaGraphDestroy, destroy_impl, (CUgraph g), g)
RT_GRAPH_HOOK(cudaGraphExecDestroy, destroy_impl, (CUgraphExec e), e)
DRV_GRAPH_HOOK(cuGraphDestroy, destroy_impl, (CUgraph g), g)
DRV_GRAPH_HOOK(cuGraphExecDestroy, destroy_impl, (CUgraphExec e), e)

typedef int (*add_alloc_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, vt_mem_alloc_node_params *);
typedef int (*add_node_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, const void *, size_t, void *);
/* GENERIC: a cu/cudaGraphAddNode call (REAL takes it and EDGES; P points inside it). */
static int add_alloc_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                          size_t nd, vt_mem_alloc_node_params *p, void *generic, const void *edges)
{
    VT_CALL_BEGIN(c, api);
    if (p && p->poolProps.location.type == 1 /* CU_MEM_LOCATION_TYPE_DEVICE */) c.dev = p->poolProps.location.id;
    int r;
    if (generic && rt) RT_RUN(r, ((add_node_fn)real)(node, g, deps, edges, nd, generic));
    else if (generic) r = ((add_node_fn)real)(node, g, deps, edges, nd, generic);
    else if (rt) RT_RUN(r, ((add_alloc_fn)real)(node, g, deps, nd, p));
    else r = ((add_alloc_fn)real)(node, g, deps, nd, p);
    VT_CALL_END(c, r);
    if (!p) return r;
    vt_ev_region_open(&c, VT_EVN_GRAPH_ALLOC, r == 0 ? p->dptr : 0, p->bytesize, VT_MEM_GRAPH, NULL);
    if (r == 0) vt_graph_add_alloc(g, p->dptr, p->bytesize, c.dev);
    return r;
}
static int typed_alloc_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                            size_t nd, vt_mem_alloc_node_params *p)
{ return add_alloc_impl(real, api, rt, node, g, deps, nd, p, NULL, NULL); }
RT_GRAPH_HOOK(cudaGraphAddMemAllocNode, typed_alloc_impl,
              (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, vt_mem_alloc_node_params *p), n, g, d, nd, p)
DRV_GRAPH_HOOK(cuGraphAddMemAllocNode, typed_alloc_impl,
               (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, vt_mem_alloc_node_params *p), n, g, d, nd, p)

typedef int (*add_free_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, uint64_t);
static int add_free_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                         size_t nd, uint64_t p)
{
    int r;
    if (rt) RT_RUN(r, ((add_free_fn)real)(node, g, deps, nd, p)); else r = ((add_free_fn)real)(node, g, deps, nd, p);
    if (r == 0) vt_graph_add_free(g, p);
    return r;
}
VT_REAL_SLOT(cudaGraphAddMemFreeNode);
cudaError_t cudaGraphAddMemFreeNode(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, void *p)
{
    RT_BEGIN(cudaGraphAddMemFreeNode, real);
    if (RT_NESTED()) return real(n, g, d, nd, p);
    return add_free_impl((void *)real, "cudaGraphAddMemFreeNode", 1, n, g, d, nd, u(p));
}
DRV_GRAPH_HOOK(cuGraphAddMemFreeNode, add_free_impl,
               (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, CUdeviceptr p), n, g, d, nd, p)


/* ---- kernel nodes added or changed by hand: checked when made and at every launch ----------- */
/* struct cudaKernelNodeParams and CUDA_KERNEL_NODE_PARAMS (v2): the fields the tracer reads */
typedef struct { const void *func; vt_dim3 grid, block; unsigned int shmem; void **params; void **extra; } vt_rt_knode;
typedef struct { void *func; unsigned int gx, gy, gz, bx, by, bz, shmem; void **params; void **extra; void *kern; void *ctx; } vt_drv_knode;

/* A kernel node's parameters, normalised: the kernel, its arguments, its geometry. */
struct knode { vt_kernel *k; void **params; const void *buf; uint64_t len; vt_dim3 grid, block; uint64_t shmem; };

static struct knode rt_knode(const vt_rt_knode *p)
{
    struct knode n = { vt_kernel_of_handle(p->func), p->params, NULL, 0, p->grid, p->block, p->shmem };
    vt_packed_args(p->params ? NULL : p->extra, &n.buf, &n.len);
    return n;
}

static struct knode drv_knode(const vt_drv_knode *p)
{
    vt_kernel *k = p->func ? vt_kernel_of_function(p->func) : p->kern ? vt_kernel_of_handle(p->kern) : NULL;
    struct knode n = { k, p->params, NULL, 0, { p->gx, p->gy, p->gz }, { p->bx, p->by, p->bz }, p->shmem };
    vt_packed_args(p->params ? NULL : p->extra, &n.buf, &n.len);
    return n;
}

/* The arguments are checked now (a bad pointer in a node is a bug before any launch) and kept:
 * added to GRAPH's set (node made), or replacing NODE's in EXEC's set or, EXEC NULL, its graph's. */
static void knode_done(const char *api, const struct knode *n, const void *graph, const void *exec, const void *node, int set)
{
    if (!n->k) return;
    VT_SAVE_ERRNO;
    struct vt_call c = { .api = api, .dev = vt_ts.cur_dev };
    c.t0 = vt_now();
    vt_launch_begin(&c, n->k, n->params, n->buf, n->len);
    if (set) vt_graph_set_kernel(exec, node, n->k, c.dev, n->params, n->buf, n->len, n->grid, n->block, n->shmem);
    else vt_graph_add_kernel(graph, node, n->k, c.dev, n->params, n->buf, n->len, n->grid, n->block, n->shmem);
    VT_RESTORE_ERRNO;
}

typedef int (*add_knode_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const void *);
static int add_knode_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                          size_t nd, const void *p)
{
    int r;
    if (rt) RT_RUN(r, ((add_knode_fn)real)(node, g, deps, nd, p)); else r = ((add_knode_fn)real)(node, g, deps, nd, p);
    if (r == 0 && p && node && vt_cfg.enabled) {
        struct knode n = rt ? rt_knode(p) : drv_knode(p);
        knode_done(api, &n, g, NULL, *node, 0);
    }
    return r;
}
RT_GRAPH_HOOK(cudaGraphAddKernelNode, add_knode_impl, (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, const void *p),
              n, g, d, nd, p)
DRV_GRAPH_HOOK(cuGraphAddKernelNode_v2, add_knode_impl, (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, const void *p),
               n, g, d, nd, p)

/* The generic node calls (CUDA 12.2+): struct cudaGraphNodeParams / CUgraphNodeParams hold the
 * node's type at 0 and, for a kernel node (type 0), the same kernel parameters as above at 16. */
#define VT_NODE_KERNEL 0
static const void *kernel_of_node_params(const void *p)
{
    return p && *(const int *)p == VT_NODE_KERNEL ? (const char *)p + 16 : NULL;
}

/* New parameters P for NODE, of EXEC's copy or (EXEC NULL) the graph's; KP the kernel
 * parameters inside P (P itself, or a generic call's kernel member; NULL: not a kernel node). */
typedef int (*set_knode_fn)(CUgraphNode, const void *);
typedef int (*exec_set_knode_fn)(CUgraphExec, CUgraphNode, const void *);
static int set_params(void *real, const char *api, int rt, CUgraphExec e, CUgraphNode node, const void *p, const void *kp)
{
    int r;
    if (e) { if (rt) RT_RUN(r, ((exec_set_knode_fn)real)(e, node, p)); else r = ((exec_set_knode_fn)real)(e, node, p); }
    else if (rt) RT_RUN(r, ((set_knode_fn)real)(node, p));
    else r = ((set_knode_fn)real)(node, p);
    if (r == 0 && kp && vt_cfg.enabled) {
        struct knode n = rt ? rt_knode(kp) : drv_knode(kp);
        knode_done(api, &n, NULL, e, node, 1);
    }
    return r;
}
static int set_knode_impl(void *real, const char *api, int rt, CUgraphNode node, const void *p)
{ return set_params(real, api, rt, NULL, node, p, p); }
static int exec_set_knode_impl(void *real, const char *api, int rt, CUgraphExec e, CUgraphNode node, const void *p)
{ return e ? set_params(real, api, rt, e, node, p, p) : ((exec_set_knode_fn)real)(e, node, p); }
/* The generic calls: a kernel node as above, a memcpy or memset node as the typed calls. */
static int set_node_impl(void *real, const char *api, int rt, CUgraphNode node, void *p)
{
    const void *kp = kernel_of_node_params(p);
    int r = set_params(real, api, rt, NULL, node, p, kp);
    if (r == 0 && p && !kp && vt_cfg.enabled) vt_graph_generic_copy_node(api, rt, p, NULL, NULL, node, 1);
    return r;
}
static int exec_set_node_impl(void *real, const char *api, int rt, CUgraphExec e, CUgraphNode node, void *p)
{
    if (!e) return ((exec_set_knode_fn)real)(e, node, p);
    const void *kp = kernel_of_node_params(p);
    int r = set_params(real, api, rt, e, node, p, kp);
    if (r == 0 && p && !kp && vt_cfg.enabled) vt_graph_generic_copy_node(api, rt, p, NULL, e, node, 1);
    return r;
}
RT_GRAPH_HOOK(cudaGraphKernelNodeSetParams, set_knode_impl, (CUgraphNode n, const void *p), n, p)
DRV_GRAPH_HOOK(cuGraphKernelNodeSetParams_v2, set_knode_impl, (CUgraphNode n, const void *p), n, p)
RT_GRAPH_HOOK(cudaGraphExecKernelNodeSetParams, exec_set_knode_impl, (CUgraphExec e, CUgraphNode n, const void *p), e, n, p)
DRV_GRAPH_HOOK(cuGraphExecKernelNodeSetParams_v2, exec_set_knode_impl, (CUgraphExec e, CUgraphNode n, const void *p), e, n, p)
RT_GRAPH_HOOK(cudaGraphNodeSetParams, set_node_impl, (CUgraphNode n, void *p), n, p)
DRV_GRAPH_HOOK(cuGraphNodeSetParams, set_node_impl, (CUgraphNode n, void *p), n, p)
RT_GRAPH_HOOK(cudaGraphExecNodeSetParams, exec_set_node_impl, (CUgraphExec e, CUgraphNode n, void *p), e, n, p)
DRV_GRAPH_HOOK(cuGraphExecNodeSetParams, exec_set_node_impl, (CUgraphExec e, CUgraphNode n, void *p), e, n, p)

static int add_node_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                         const void *edges, size_t nd, void *p)
{
    int type = p ? *(const int *)p : -1;
    char *u_ = p;
    if (type == VT_GRAPH_NODE_MEM_ALLOC)   /* as cu/cudaGraphAddMemAllocNode, its parameters inside */
        return add_alloc_impl(real, api, rt, node, g, deps, nd, (vt_mem_alloc_node_params *)(u_ + VT_NODE_PARAMS_ALLOC), p, edges);
    int r;
    if (rt) RT_RUN(r, ((add_node_fn)real)(node, g, deps, edges, nd, p)); else r = ((add_node_fn)real)(node, g, deps, edges, nd, p);
    if (r != 0 || !p || !node || !vt_cfg.enabled) return r;
    const void *kp = kernel_of_node_params(p);
    if (kp) {
        struct knode n = rt ? rt_knode(kp) : drv_knode(kp);
        knode_done(api, &n, g, NULL, *node, 0);
    } else if (type == VT_GRAPH_NODE_GRAPH) {
        CUgraph child;
        memcpy(&child, u_ + VT_NODE_PARAMS_CHILD, sizeof child);
        vt_graph_append_child(g, child, *node);
    } else if (type == VT_GRAPH_NODE_MEM_FREE) {
        uint64_t dptr;
        memcpy(&dptr, u_ + VT_NODE_PARAMS_FREE, sizeof dptr);
        vt_graph_add_free(g, dptr);
    } else if (type == VT_GRAPH_NODE_CONDITIONAL) {
        unsigned size;
        void **bodies;   /* the driver's array, filled by the call */
        memcpy(&size, u_ + VT_NODE_PARAMS_COND_SIZE, sizeof size);
        memcpy(&bodies, u_ + VT_NODE_PARAMS_COND_GRAPHS, sizeof bodies);
        vt_graph_add_cond(g, *node, bodies, bodies ? size : 0);
    } else {
        vt_graph_generic_copy_node(api, rt, p, g, NULL, *node, 0);
    }
    return r;
}
RT_GRAPH_HOOK(cudaGraphAddNode, add_node_impl,
              (CUgraphNode *n, CUgraph g, const CUgraphNode *d, const void *e, size_t nd, void *p), n, g, d, e, nd, p)
DRV_GRAPH_HOOK(cuGraphAddNode_v2, add_node_impl,
               (CUgraphNode *n, CUgraph g, const CUgraphNode *d, const void *e, size_t nd, void *p), n, g, d, e, nd, p)

/* A child graph node runs a clone of the child graph's nodes where it stands. */
typedef int (*add_child_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph);
static int add_child_impl(void *real, const char *api, int rt, CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                          size_t nd, CUgraph child)
{
    int r;
    if (rt) RT_RUN(r, ((add_child_fn)real)(node, g, deps, nd, child)); else r = ((add_child_fn)real)(node, g, deps, nd, child);
    if (r == 0 && vt_cfg.enabled) vt_graph_append_child(g, child, node ? *node : NULL);
    return r;
}
RT_GRAPH_HOOK(cudaGraphAddChildGraphNode, add_child_impl, (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, CUgraph c),
              n, g, d, nd, c)
DRV_GRAPH_HOOK(cuGraphAddChildGraphNode, add_child_impl, (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, CUgraph c),
               n, g, d, nd, c)

/* The exec's clone of a child graph node takes another child graph's nodes. */
typedef int (*exec_set_child_fn)(CUgraphExec, CUgraphNode, CUgraph);
static int exec_set_child_impl(void *real, const char *api, int rt, CUgraphExec e, CUgraphNode node, CUgraph child)
{
    int r;
    if (rt) RT_RUN(r, ((exec_set_child_fn)real)(e, node, child)); else r = ((exec_set_child_fn)real)(e, node, child);
    if (r == 0 && vt_cfg.enabled) vt_graph_set_child(e, node, child);
    return r;
}
RT_GRAPH_HOOK(cudaGraphExecChildGraphNodeSetParams, exec_set_child_impl, (CUgraphExec e, CUgraphNode n, CUgraph c), e, n, c)
DRV_GRAPH_HOOK(cuGraphExecChildGraphNodeSetParams, exec_set_child_impl, (CUgraphExec e, CUgraphNode n, CUgraph c), e, n, c)

/* The exec takes the graph's node parameters (same topology, or the call fails). */
typedef int (*exec_update_fn)(CUgraphExec, CUgraph, void *);
static int exec_update_impl(void *real, const char *api, int rt, CUgraphExec e, CUgraph g, void *info)
{
    int r;
    if (rt) RT_RUN(r, ((exec_update_fn)real)(e, g, info)); else r = ((exec_update_fn)real)(e, g, info);
    if (r == 0 && e && g) vt_graph_transfer(g, e, 0);
    return r;
}
RT_GRAPH_HOOK(cudaGraphExecUpdate, exec_update_impl, (CUgraphExec e, CUgraph g, void *info), e, g, info)
DRV_GRAPH_HOOK(cuGraphExecUpdate_v2, exec_update_impl, (CUgraphExec e, CUgraph g, void *info), e, g, info)

const struct vt_hook vt_hooks_graph[] = {
    VT_HOOK_ENTRY(cudaGraphAddKernelNode, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphAddKernelNode_v2, "cuGraphAddKernelNode", 12000, 0),
    VT_HOOK_ENTRY(cudaGraphKernelNodeSetParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphKernelNodeSetParams_v2, "cuGraphKernelNodeSetParams", 12000, 0),
    VT_HOOK_ENTRY(cudaGraphExecKernelNodeSetParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphExecKernelNodeSetParams_v2, "cuGraphExecKernelNodeSetParams", 12000, 0),
    VT_HOOK_ENTRY(cudaGraphAddNode, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphAddNode_v2, "cuGraphAddNode", 12030, 0),
    VT_HOOK_ENTRY(cudaGraphNodeSetParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphNodeSetParams, "cuGraphNodeSetParams", 12020, 0),
    VT_HOOK_ENTRY(cudaGraphExecNodeSetParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphExecNodeSetParams, "cuGraphExecNodeSetParams", 12020, 0),
    VT_HOOK_ENTRY(cudaGraphAddChildGraphNode, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphAddChildGraphNode, "cuGraphAddChildGraphNode", 10000, 0),
    VT_HOOK_ENTRY(cudaGraphExecChildGraphNodeSetParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphExecChildGraphNodeSetParams, "cuGraphExecChildGraphNodeSetParams", 11010, 0),
    VT_HOOK_ENTRY(cudaGraphExecUpdate, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphExecUpdate_v2, "cuGraphExecUpdate", 12000, 0),
    VT_HOOK_ENTRY(cudaStreamBeginCapture, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaStreamBeginCapture_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cuStreamBeginCapture_v2, "cuStreamBeginCapture", 10010, 0),
    VT_HOOK_ENTRY(cuStreamBeginCapture_v2_ptsz, "cuStreamBeginCapture", 10010, 1),
    VT_HOOK_ENTRY(cudaStreamEndCapture, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaStreamEndCapture_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cuStreamEndCapture, "cuStreamEndCapture", 10000, 0),
    VT_HOOK_ENTRY(cuStreamEndCapture_ptsz, "cuStreamEndCapture", 10000, 1),
    VT_HOOK_ENTRY(cudaGraphInstantiate, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphInstantiateWithFlags, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphInstantiateWithFlags, "cuGraphInstantiate", 11040, 0),
    VT_HOOK_ENTRY(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 11040, 0),
    VT_HOOK_ENTRY(cudaGraphInstantiateWithParams, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphInstantiateWithParams_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphInstantiateWithParams, "cuGraphInstantiateWithParams", 12000, 0),
    VT_HOOK_ENTRY(cuGraphInstantiateWithParams_ptsz, "cuGraphInstantiateWithParams", 12000, 1),
    VT_HOOK_ENTRY(cudaGraphClone, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphClone, "cuGraphClone", 10000, 0),
    VT_HOOK_ENTRY(cudaStreamBeginCaptureToGraph, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaStreamBeginCaptureToGraph_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cuStreamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph", 12030, 0),
    VT_HOOK_ENTRY(cuStreamBeginCaptureToGraph_ptsz, "cuStreamBeginCaptureToGraph", 12030, 1),
    VT_HOOK_ENTRY(cudaGraphLaunch, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphLaunch_ptsz, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphLaunch, "cuGraphLaunch", 10000, 0),
    VT_HOOK_ENTRY(cuGraphLaunch_ptsz, "cuGraphLaunch", 10000, 1),
    VT_HOOK_ENTRY(cudaGraphDestroy, NULL, 0, 0),
    VT_HOOK_ENTRY(cudaGraphExecDestroy, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphDestroy, "cuGraphDestroy", 10000, 0),
    VT_HOOK_ENTRY(cuGraphExecDestroy, "cuGraphExecDestroy", 10000, 0),
    VT_HOOK_ENTRY(cudaGraphAddMemAllocNode, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphAddMemAllocNode, "cuGraphAddMemAllocNode", 11040, 0),
    VT_HOOK_ENTRY(cudaGraphAddMemFreeNode, NULL, 0, 0),
    VT_HOOK_ENTRY(cuGraphAddMemFreeNode, "cuGraphAddMemFreeNode", 11040, 0),
    { NULL, NULL, 0, 0, NULL, NULL },
};
