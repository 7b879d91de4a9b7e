/* sim_graph.c - minimal stream capture and graphs for the simulated driver: copies, memsets,
 * kernel launches and stream-ordered allocations/frees issued to a capturing stream are recorded,
 * and replayed (copies move bytes, kernels are argument-checked, never run; allocation nodes make
 * their memory exist, free nodes release it) by cuGraphLaunch. cuGraphAddMemAllocNode /
 * cuGraphAddMemFreeNode append the same nodes explicitly (dependencies are ignored: nodes run in
 * the order added). A graph allocation's address is fixed when the node is made. Test fixture. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#define GRAPH_MAGIC 0x5c96a001
#define EXEC_MAGIC 0x5c9e0001
#define MAX_CAPTURE 64

struct CUgraphNode_st;
struct CUgraph_st { int magic; sim_op *ops; size_t n, cap; struct CUgraphNode_st *nodes; struct CUgraph_st *cloned_from; };
struct CUgraphExec_st { int magic; struct CUgraph_st g; };

/* One entry per capturing stream: the origin (cuStreamBeginCapture) and every stream that joined
 * its capture by waiting on an event recorded in it; all add to the same graph. last: the node
 * the stream's next captured work would depend on (the last one it captured), which
 * cuStreamGetCaptureInfo_v3 hands out as the stream's dependencies, as CUDA does. */
static struct { CUstream s; struct CUgraph_st *g; int origin; struct CUgraphNode_st *last; int owned, invalid; } caps[MAX_CAPTURE];

static int cap_index(CUstream s)
{
    for (int i = 0; i < MAX_CAPTURE; i++)
        if (caps[i].s == s && caps[i].g) return i;
    return -1;
}

/* *out = a copy of op owning its own argument bytes (no GetParams view). 0, or -1 out of memory. */
static int dup_op(const sim_op *op, sim_op *out)
{
    sim_op o = *op;
    o.params = NULL;
    if (o.type == 3 && o.argbuf) {
        void *b = malloc(o.argsize ? o.argsize : 1);
        if (!b) return -1;
        memcpy(b, op->argbuf, o.argsize);
        o.argbuf = b;
    }
    *out = o;
    return 0;
}

static int append(struct CUgraph_st *g, const sim_op *op)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? 2 * g->cap : 8;
        sim_op *no = realloc(g->ops, nc * sizeof *no);
        if (!no) return -1;
        g->ops = no;
        g->cap = nc;
    }
    if (dup_op(op, &g->ops[g->n])) return -1;
    g->n++;
    return 0;
}

#define NODE_MAGIC 0x5c90de01
/* A node handle: the graph and the index of its op (an exec made from the graph has the same ops
 * at the same indices, so cuGraphExecKernelNodeSetParams finds it there); a child graph node: the
 * first of the span ops its clone of the child added. Freed with the graph. */
struct CUgraphNode_st { int magic; struct CUgraph_st *g; size_t idx; struct CUgraphNode_st *next; int child; size_t span; };

/* Appends op to g and hands out its node (sim_lock held). */
static CUresult add_node(struct CUgraph_st *g, const sim_op *op, CUgraphNode *out)
{
    struct CUgraphNode_st *nd = calloc(1, sizeof *nd);
    if (!nd || append(g, op)) { free(nd); return CUDA_ERROR_OUT_OF_MEMORY; }
    *nd = (struct CUgraphNode_st){ NODE_MAGIC, g, g->n - 1, g->nodes, 0, 1 };
    g->nodes = nd;
    *out = nd;
    return CUDA_SUCCESS;
}

/* static: the generic call uses them too (not through the exports a tracer interposes) */
static CUresult add_alloc_node(CUgraphNode *node, CUgraph g, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    if (!node || !g || g->magic != GRAPH_MAGIC || !p || !p->bytesize) return CUDA_ERROR_INVALID_VALUE;
    if (p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE || p->poolProps.location.id < 0 ||
        p->poolProps.location.id >= sim_ndev)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a = 0;
    size_t reserved = 0;
    pthread_mutex_lock(&sim_lock);
    CUresult r = sim_graph_va(p->poolProps.location.id, p->bytesize, &a, &reserved);
    sim_op op = { .type = 4, .dst = (void *)a, .n = p->bytesize, .reserved = reserved, .dev = p->poolProps.location.id };
    if (!r) r = add_node(g, &op, node);
    pthread_mutex_unlock(&sim_lock);
    if (r) return r;
    p->dptr = (CUdeviceptr)a;
    return CUDA_SUCCESS;
}
CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    return add_alloc_node(node, g, p);
}

static CUresult add_free_node(CUgraphNode *node, CUgraph g, CUdeviceptr d)
{
    if (!node || !g || g->magic != GRAPH_MAGIC || !d) return CUDA_ERROR_INVALID_VALUE;
    sim_op op = { .type = 5, .dst = (void *)(uintptr_t)d };
    pthread_mutex_lock(&sim_lock);
    CUresult r = add_node(g, &op, node);
    pthread_mutex_unlock(&sim_lock);
    return r;
}
CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps, CUdeviceptr d)
{
    return add_free_node(node, g, d);
}

/* A kernel node's op from its parameters (argument bytes flattened now, as CUDA copies them). */
static CUresult kernel_op(const CUDA_KERNEL_NODE_PARAMS *p, sim_op *op)
{
    if (!p || !p->func || !p->gridDimX || !p->gridDimY || !p->gridDimZ || !p->blockDimX || !p->blockDimY || !p->blockDimZ)
        return CUDA_ERROR_INVALID_VALUE;
    *op = (sim_op){ .type = 3, .f = p->func, .grid = { p->gridDimX, p->gridDimY, p->gridDimZ },
                    .block = { p->blockDimX, p->blockDimY, p->blockDimZ }, .shmem = p->sharedMemBytes };
    void *b;
    size_t n;
    CUresult r = sim_node_args(p->func, p->kernelParams, p->extra, &b, &n);
    if (r) return r;
    op->argbuf = b;
    op->argsize = n;
    return CUDA_SUCCESS;
}

/* Replaces the kernel op at i of ops (sim_lock held; *op's buffer is taken over). */
static CUresult set_kernel_op(struct CUgraph_st *g, size_t i, sim_op *op)
{
    if (i >= g->n || g->ops[i].type != 3) { free(op->argbuf); return CUDA_ERROR_INVALID_VALUE; }
    free(g->ops[i].argbuf);
    free(g->ops[i].params);
    g->ops[i] = *op;
    return CUDA_SUCCESS;
}

/* The implementations are static: the generic calls use them directly, not through the
 * exported names a preloaded tracer interposes (the real driver's internal calls do not pass
 * through its exports either). */
static CUresult set_exec_kernel_node(CUgraphExec e, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p);
static CUresult add_kernel_node(CUgraphNode *node, CUgraph g, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!node || !g || g->magic != GRAPH_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    sim_op op;
    CUresult r = kernel_op(p, &op);
    if (r) return r;
    pthread_mutex_lock(&sim_lock);
    r = add_node(g, &op, node); /* append copies the argument bytes */
    pthread_mutex_unlock(&sim_lock);
    free(op.argbuf);
    return r;
}

static CUresult set_graph_kernel_node(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!node || node->magic != NODE_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    sim_op op;
    CUresult r = kernel_op(p, &op);
    if (r) return r;
    pthread_mutex_lock(&sim_lock);
    r = set_kernel_op(node->g, node->idx, &op);
    pthread_mutex_unlock(&sim_lock);
    return r;
}

int sim_capture_op(CUstream s, const sim_op *op)
{
    if (sim_is_default_stream(s)) return 0;
    pthread_mutex_lock(&sim_lock);
    int i = cap_index(s);
    struct CUgraphNode_st *nd = NULL;
    if (i >= 0 && add_node(caps[i].g, op, &nd) == CUDA_SUCCESS) caps[i].last = nd;
    pthread_mutex_unlock(&sim_lock);
    return i >= 0;
}

CUresult sim_capture_set_deps(CUstream s, const CUgraphNode *deps, size_t n, int add)
{
    pthread_mutex_lock(&sim_lock);
    int i = cap_index(s);
    if (i >= 0) caps[i].last = n == 1 && (!add || !caps[i].last) ? deps[0] : add && !n ? caps[i].last : NULL;
    pthread_mutex_unlock(&sim_lock);
    return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_STATE;
}

CUgraph sim_capture_graph(CUstream s)
{
    if (sim_is_default_stream(s)) return NULL;
    pthread_mutex_lock(&sim_lock);
    int i = cap_index(s);
    CUgraph g = i >= 0 ? caps[i].g : NULL;
    pthread_mutex_unlock(&sim_lock);
    return g;
}

CUresult sim_capture_join(CUstream s, CUgraph g)
{
    if (sim_is_default_stream(s)) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    int live = 0, slot = -1;
    for (int i = 0; i < MAX_CAPTURE; i++) {
        if (caps[i].g == g && caps[i].origin) live = 1;
        if (!caps[i].g && slot < 0) slot = i;
    }
    int cur = cap_index(s);
    if (!live) r = CUDA_SUCCESS;                     /* that capture has ended: an ordinary wait */
    else if (cur >= 0) r = caps[cur].g == g ? CUDA_SUCCESS : CUDA_ERROR_STREAM_CAPTURE_MERGE;
    else if (slot < 0) r = CUDA_ERROR_OUT_OF_MEMORY;
    else { caps[slot].s = s; caps[slot].g = g; caps[slot].origin = 0; caps[slot].last = NULL; }
    pthread_mutex_unlock(&sim_lock);
    return r;
}

CUresult cuGraphCreate(CUgraph *g, unsigned int flags)
{
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    struct CUgraph_st *x = calloc(1, sizeof *x);
    if (!x) return CUDA_ERROR_OUT_OF_MEMORY;
    x->magic = GRAPH_MAGIC;
    *g = x;
    return CUDA_SUCCESS;
}

/* Capture into GRAPH (an existing graph: cuStreamBeginCaptureToGraph), or into a new one. */
static CUresult begin_capture(CUstream s, struct CUgraph_st *graph)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (sim_is_default_stream(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    CUgraph g = graph;
    pthread_mutex_lock(&sim_lock);
    int slot = -1;
    if (cap_index(s) >= 0) r = CUDA_ERROR_ILLEGAL_STATE;
    for (int i = 0; !r && i < MAX_CAPTURE && slot < 0; i++)
        if (!caps[i].g) slot = i;
    if (!r && slot < 0) r = CUDA_ERROR_OUT_OF_MEMORY;
    int owned = !g;
    if (!r && (g || !(r = cuGraphCreate(&g, 0)))) {
        caps[slot].s = s; caps[slot].g = g; caps[slot].origin = 1; caps[slot].last = NULL;
        caps[slot].owned = owned; caps[slot].invalid = 0;
    }
    pthread_mutex_unlock(&sim_lock);
    return r;
}

CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode) { return begin_capture(s, NULL); }

/* CUDA 12.3+: the capture appends to GRAPH, which cuStreamEndCapture then returns (dependencies
 * are not modelled: the nodes follow those already in the graph). */
CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,
                                     size_t ndeps, CUstreamCaptureMode mode)
{
    if (!g || g->magic != GRAPH_MAGIC || (ndeps && !deps)) return CUDA_ERROR_INVALID_VALUE;
    return begin_capture(s, g);
}
SIM_ALIAS(cuStreamBeginCaptureToGraph, cuStreamBeginCaptureToGraph_ptsz);
SIM_ALIAS(cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz);

CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    /* Only the origin ends a capture, and with it every stream that joined (CUDA requires them
     * to have rejoined the origin first; the sim does not model that check). */
    pthread_mutex_lock(&sim_lock);
    int i = cap_index(s);
    CUresult r = i < 0 ? CUDA_ERROR_ILLEGAL_STATE : !caps[i].origin ? CUDA_ERROR_STREAM_CAPTURE_UNMATCHED : CUDA_SUCCESS;
    struct CUgraph_st *dropped = NULL;
    if (!r) {
        struct CUgraph_st *graph = caps[i].g;
        /* an invalidated capture ends with no graph (CUDA: cudaErrorStreamCaptureInvalidated) */
        if (caps[i].invalid) { r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED; dropped = caps[i].owned ? graph : NULL; }
        *g = r ? NULL : graph;
        for (int j = 0; j < MAX_CAPTURE; j++)
            if (caps[j].g == graph) { caps[j].g = NULL; caps[j].s = NULL; caps[j].origin = 0; caps[j].last = NULL; }
    }
    pthread_mutex_unlock(&sim_lock);
    if (dropped) cuGraphDestroy(dropped);
    return r;
}

/* An operation CUDA cannot capture was called on a capturing stream: the capture it belongs to is
 * invalidated (its cuStreamEndCapture fails). */
void sim_capture_invalidate(CUstream s)
{
    pthread_mutex_lock(&sim_lock);
    int i = cap_index(s);
    for (int j = 0; i >= 0 && j < MAX_CAPTURE; j++)
        if (caps[j].g == caps[i].g) caps[j].invalid = 1;
    pthread_mutex_unlock(&sim_lock);
}
SIM_ALIAS(cuStreamEndCapture, cuStreamEndCapture_ptsz);

CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    if (!st) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    *st = cap_index(s) >= 0 ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    pthread_mutex_unlock(&sim_lock);
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuStreamIsCapturing, cuStreamIsCapturing_ptsz);

/* CUDA 12.3+: the capture's status, id, the graph being built (the graph cuStreamEndCapture
 * will return) and the stream's dependencies: the last node it captured (none before its first;
 * edges are not modelled). */
CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    if (!st) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    int i = cap_index(s);
    *st = i >= 0 ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    if (i >= 0) {
        if (id) *id = (cuuint64_t)i + 1;
        if (graph) *graph = caps[i].g;
        if (deps) *deps = caps[i].last ? (const CUgraphNode *)&caps[i].last : NULL;
        if (edges) *edges = NULL;
        if (ndeps) *ndeps = caps[i].last ? 1 : 0;
    }
    pthread_mutex_unlock(&sim_lock);
    return CUDA_SUCCESS;
}
SIM_ALIAS(cuStreamGetCaptureInfo_v3, cuStreamGetCaptureInfo_v3_ptsz);

static void free_ops(struct CUgraph_st *g)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->ops[i].type == 3) { free(g->ops[i].argbuf); free(g->ops[i].params); }
    free(g->ops);
}

CUresult cuGraphDestroy(CUgraph g)
{
    if (!g || g->magic != GRAPH_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    free_ops(g);
    for (struct CUgraphNode_st *nd = g->nodes, *next; nd; nd = next) { next = nd->next; nd->magic = 0; free(nd); }
    g->magic = 0;
    free(g);
    return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
    if (!e || !g || g->magic != GRAPH_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphExec_st *x = calloc(1, sizeof *x);
    if (!x) return CUDA_ERROR_OUT_OF_MEMORY;
    x->magic = EXEC_MAGIC;
    for (size_t i = 0; i < g->n; i++) append(&x->g, &g->ops[i]);
    *e = x;
    return CUDA_SUCCESS;
}

/* CUDA 12.0+: as cuGraphInstantiateWithFlags, the flags in a struct that also names the upload
 * stream (checked when CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD asks for one; uploading is nothing
 * here) and takes the result. Device launch is not modelled: CUDA_ERROR_NOT_SUPPORTED. */
CUresult cuGraphInstantiateWithParams(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    const cuuint64_t known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                             CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    if (!p || (p->flags & ~known)) return CUDA_ERROR_INVALID_VALUE;
    if (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) return CUDA_ERROR_NOT_SUPPORTED;
    if (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
        sim_ctx *c;
        CUresult r = sim_stream_check(p->hUploadStream, &c);
        if (r) return r;
    }
    CUresult r = cuGraphInstantiateWithFlags(e, g, p->flags);
    p->hErrNode_out = NULL;
    p->result_out = r ? CUDA_GRAPH_INSTANTIATE_ERROR : CUDA_GRAPH_INSTANTIATE_SUCCESS;
    return r;
}
SIM_ALIAS(cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz);

/* A copy of the graph: the same ops, and a node of its own for each node of the original (found
 * with cuGraphNodeFindInClone). */
CUresult cuGraphClone(CUgraph *out, CUgraph g)
{
    if (!out || !g || g->magic != GRAPH_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    struct CUgraph_st *c;
    CUresult r = cuGraphCreate(&c, 0);
    if (r) return r;
    pthread_mutex_lock(&sim_lock);
    for (size_t i = 0; i < g->n && !r; i++)
        if (append(c, &g->ops[i])) r = CUDA_ERROR_OUT_OF_MEMORY;
    for (struct CUgraphNode_st *nd = g->nodes; nd && !r; nd = nd->next) {
        struct CUgraphNode_st *cn = calloc(1, sizeof *cn);
        if (!cn) { r = CUDA_ERROR_OUT_OF_MEMORY; break; }
        *cn = *nd;
        cn->g = c;
        cn->next = c->nodes;
        c->nodes = cn;
    }
    c->cloned_from = g;
    pthread_mutex_unlock(&sim_lock);
    if (r) { cuGraphDestroy(c); return r; }
    *out = c;
    return CUDA_SUCCESS;
}

/* The clone's node for ORIG's node: the same place in the clone (the clone must come from that
 * graph; its node made now when ORIG was handed out after the clone was made). */
CUresult cuGraphNodeFindInClone(CUgraphNode *out, CUgraphNode orig, CUgraph clone)
{
    if (!out || !orig || orig->magic != NODE_MAGIC || !clone || clone->magic != GRAPH_MAGIC || clone->cloned_from != orig->g)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    struct CUgraphNode_st *nd;
    for (nd = clone->nodes; nd && (nd->idx != orig->idx || nd->child != orig->child); nd = nd->next) {}
    if (!nd && orig->idx < clone->n && (nd = calloc(1, sizeof *nd))) {
        *nd = *orig;
        nd->g = clone;
        nd->next = clone->nodes;
        clone->nodes = nd;
    }
    if (!nd) r = CUDA_ERROR_INVALID_VALUE;
    else *out = nd;
    pthread_mutex_unlock(&sim_lock);
    return r;
}

static unsigned cond_value(unsigned long long handle);
/* The ops of G in order; a conditional node runs the body its handle's value picks (kernels never
 * run here, so the value is the handle's default: a WHILE body whose value is set runs once). */
static CUresult run_ops(const struct CUgraph_st *g, int depth)
{
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; i < g->n; i++) {
        const sim_op *op = &g->ops[i];
        if (op->type == 6) {
            unsigned v = cond_value(op->cond);
            size_t body = op->cond_type == CU_GRAPH_COND_TYPE_SWITCH ? v : op->cond_type == CU_GRAPH_COND_TYPE_IF && !v ? 1 : 0;
            int runs = op->cond_type == CU_GRAPH_COND_TYPE_SWITCH ? v < op->n : op->cond_type == CU_GRAPH_COND_TYPE_IF ? (v || op->n == 2) : v != 0;
            if (runs && depth < 8 && (r = run_ops(op->bodies[body], depth + 1))) return r;
        } else if (op->type == 3) {
            if (op->argbuf) sim_launch_check(op->f, NULL, op->argbuf, op->argsize);
        } else if (op->type == 4 || op->type == 5) {
            pthread_mutex_lock(&sim_lock);
            if (op->type == 4) r = sim_graph_mem_alloc((uintptr_t)op->dst, op->n, op->reserved, op->dev);
            else sim_graph_mem_free((uintptr_t)op->dst);
            pthread_mutex_unlock(&sim_lock);
            if (r) return r;
        } else {
            sim_replay_op(op);
        }
    }
    return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    if (!e || e->magic != EXEC_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    return run_ops(&e->g, 0);
}
SIM_ALIAS(cuGraphLaunch, cuGraphLaunch_ptsz);

CUresult cuGraphAddKernelNode_v2(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                 const CUDA_KERNEL_NODE_PARAMS *p)
{
    return add_kernel_node(node, g, p);
}
CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p) { return set_graph_kernel_node(node, p); }

/* A kernel node's parameters; kernelParams and the values it points to belong to the node (valid
 * until the node is destroyed or its parameters change, as CUDA documents). */
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!node || node->magic != NODE_MAGIC || !p) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    sim_op *op = node->idx < node->g->n ? &node->g->ops[node->idx] : NULL;
    if (!op || op->type != 3) r = CUDA_ERROR_INVALID_VALUE;
    else if (!op->params && op->argbuf && !(op->params = sim_param_ptrs(op->f, op->argbuf, op->argsize))) r = CUDA_ERROR_OUT_OF_MEMORY;
    if (!r) {
        memset(p, 0, sizeof *p);
        p->func = op->f;
        p->gridDimX = op->grid[0]; p->gridDimY = op->grid[1]; p->gridDimZ = op->grid[2];
        p->blockDimX = op->block[0]; p->blockDimY = op->block[1]; p->blockDimZ = op->block[2];
        p->sharedMemBytes = op->shmem;
        p->kernelParams = op->params;
    }
    pthread_mutex_unlock(&sim_lock);
    return r;
}
CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec e, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
    return set_exec_kernel_node(e, node, p);
}

/* A child graph node: the child's nodes are cloned into the graph (as CUDA clones the child),
 * and run where the node is; the node handle names the first of them. */
CUresult cuGraphAddChildGraphNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps, CUgraph child)
{
    if (!node || !g || g->magic != GRAPH_MAGIC || !child || child->magic != GRAPH_MAGIC || child == g)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    size_t first = g->n, n = child->n;
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; i < n && !r; i++)
        if (append(g, &child->ops[i])) r = CUDA_ERROR_OUT_OF_MEMORY;
    struct CUgraphNode_st *nd = r ? NULL : calloc(1, sizeof *nd);
    if (!r && !nd) r = CUDA_ERROR_OUT_OF_MEMORY;
    if (nd) { *nd = (struct CUgraphNode_st){ NODE_MAGIC, g, first, g->nodes, 1, n }; g->nodes = nd; *node = nd; }
    pthread_mutex_unlock(&sim_lock);
    return r;
}

/* The exec's copy of child graph node NODE takes CHILD's parameters: CHILD must have the same ops
 * (count and kinds, in order: the sim's stand-in for CUDA's matching topology). */
CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec e, CUgraphNode node, CUgraph child)
{
    if (!e || e->magic != EXEC_MAGIC || !node || node->magic != NODE_MAGIC || !node->child || !child ||
        child->magic != GRAPH_MAGIC)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    int same = child->n == node->span && node->idx + node->span <= e->g.n;
    for (size_t i = 0; same && i < child->n; i++) same = e->g.ops[node->idx + i].type == child->ops[i].type;
    if (!same) r = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; !r && i < child->n; i++) {
        sim_op o, *dst = &e->g.ops[node->idx + i];
        if (dup_op(&child->ops[i], &o)) { r = CUDA_ERROR_OUT_OF_MEMORY; break; }
        if (dst->type == 3) { free(dst->argbuf); free(dst->params); }
        *dst = o;
    }
    pthread_mutex_unlock(&sim_lock);
    return r;
}

/* The generic node calls (CUDA 12.2+), for kernel nodes (the sim's only kind here: any other
 * type is CUDA_ERROR_NOT_SUPPORTED). */
static CUresult copy_op(const CUDA_MEMCPY3D *p, sim_op *op);
static CUresult memset_op(const CUDA_MEMSET_NODE_PARAMS *p, sim_op *op);
/* A conditional node (CUDA 12.3+): SIZE empty body graphs, owned by the graph holding the node
 * (the array handed out in phGraph_out lives as long as it); the node runs the body its handle's
 * value picks (run_ops). Instantiation refers to the bodies, it does not copy them. */
static CUresult add_cond_node(CUgraphNode *node, CUgraph g, CUDA_CONDITIONAL_NODE_PARAMS *c)
{
    unsigned max = c->type == CU_GRAPH_COND_TYPE_WHILE ? 1 : c->type == CU_GRAPH_COND_TYPE_IF ? 2 : 64;
    if (!c->handle || !c->size || c->size > max || c->type > CU_GRAPH_COND_TYPE_SWITCH) return CUDA_ERROR_INVALID_VALUE;
    struct CUgraph_st **bodies = calloc(c->size, sizeof *bodies);
    CUresult r = bodies ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; !r && i < c->size; i++) r = cuGraphCreate(&bodies[i], 0);
    sim_op op = { .type = 6, .bodies = bodies, .n = c->size, .cond = c->handle, .cond_type = (int)c->type };
    if (!r) {
        pthread_mutex_lock(&sim_lock);
        r = add_node(g, &op, node);
        pthread_mutex_unlock(&sim_lock);
    }
    if (r) {
        for (unsigned i = 0; bodies && i < c->size; i++) if (bodies[i]) cuGraphDestroy(bodies[i]);
        free(bodies);
        return r;
    }
    c->phGraph_out = bodies;
    return CUDA_SUCCESS;
}

CUresult cuGraphAddNode_v2(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t ndeps,
                           CUgraphNodeParams *p)
{
    if (!p || !node || !g || g->magic != GRAPH_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    sim_op op;
    CUresult r;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return add_kernel_node(node, g, (const CUDA_KERNEL_NODE_PARAMS *)&p->kernel);
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return add_cond_node(node, g, &p->conditional);
    /* CUDA_MEM_ALLOC_NODE_PARAMS_v2 is v1 field for field */
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return add_alloc_node(node, g, (CUDA_MEM_ALLOC_NODE_PARAMS *)&p->alloc);
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return add_free_node(node, g, p->free.dptr);
    /* a copy of the child's nodes either way (the sim keeps no owner to move the graph to) */
    case CU_GRAPH_NODE_TYPE_GRAPH: return cuGraphAddChildGraphNode(node, g, deps, ndeps, p->graph.graph);
    case CU_GRAPH_NODE_TYPE_MEMCPY: r = copy_op(&p->memcpy.copyParams, &op); break;
    case CU_GRAPH_NODE_TYPE_MEMSET: r = memset_op((const CUDA_MEMSET_NODE_PARAMS *)&p->memset, &op); break;
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (r) return r;
    pthread_mutex_lock(&sim_lock);
    r = add_node(g, &op, node);
    pthread_mutex_unlock(&sim_lock);
    return r;
}

static CUresult set_op(CUgraphExec e, CUgraphNode node, CUresult made, const sim_op *op);
/* A memcpy or memset node's new parameters through the generic calls (E NULL: the graph's). */
static CUresult set_generic_op(CUgraphExec e, CUgraphNode node, const CUgraphNodeParams *p)
{
    sim_op op = { 0 };
    CUresult r = p->type == CU_GRAPH_NODE_TYPE_MEMCPY ? copy_op(&p->memcpy.copyParams, &op)
               : p->type == CU_GRAPH_NODE_TYPE_MEMSET ? memset_op((const CUDA_MEMSET_NODE_PARAMS *)&p->memset, &op)
               : CUDA_ERROR_NOT_SUPPORTED;
    return set_op(e, node, r, &op);
}
CUresult cuGraphNodeSetParams(CUgraphNode node, CUgraphNodeParams *p)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    if (p->type != CU_GRAPH_NODE_TYPE_KERNEL) return set_generic_op(NULL, node, p);
    return set_graph_kernel_node(node, (const CUDA_KERNEL_NODE_PARAMS *)&p->kernel);
}

CUresult cuGraphExecNodeSetParams(CUgraphExec e, CUgraphNode node, CUgraphNodeParams *p)
{
    if (!p || !e) return CUDA_ERROR_INVALID_VALUE;
    if (p->type != CU_GRAPH_NODE_TYPE_KERNEL) return set_generic_op(e, node, p);
    return set_exec_kernel_node(e, node, (const CUDA_KERNEL_NODE_PARAMS *)&p->kernel);
}

/* Like CUDA: the exec's copy of the node changes, the graph's does not. */
static CUresult set_exec_kernel_node(CUgraphExec e, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!e || e->magic != EXEC_MAGIC || !node || node->magic != NODE_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    sim_op op;
    CUresult r = kernel_op(p, &op);
    if (r) return r;
    pthread_mutex_lock(&sim_lock);
    r = set_kernel_op(&e->g, node->idx, &op);
    pthread_mutex_unlock(&sim_lock);
    return r;
}

/* The exec takes the graph's node parameters when the two have the same nodes (count and kinds,
 * in order: the sim's stand-in for CUDA's topology check); else CU_GRAPH_EXEC_UPDATE_ERROR and
 * CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, the exec unchanged. */
CUresult cuGraphExecUpdate_v2(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
    if (!e || e->magic != EXEC_MAGIC || !g || g->magic != GRAPH_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    int same = e->g.n == g->n;
    for (size_t i = 0; same && i < g->n; i++) same = e->g.ops[i].type == g->ops[i].type;
    struct CUgraph_st fresh = { 0 };
    for (size_t i = 0; same && i < g->n; i++) append(&fresh, &g->ops[i]);
    if (same) { free_ops(&e->g); e->g.ops = fresh.ops; e->g.n = fresh.n; e->g.cap = fresh.cap; }
    pthread_mutex_unlock(&sim_lock);
    if (info) {
        memset(info, 0, sizeof *info);
        info->result = same ? CU_GRAPH_EXEC_UPDATE_SUCCESS : CU_GRAPH_EXEC_UPDATE_ERROR;
    }
    return same ? CUDA_SUCCESS : CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
}

CUresult cuGraphExecDestroy(CUgraphExec e)
{
    if (!e || e->magic != EXEC_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    free_ops(&e->g);
    e->magic = 0;
    free(e);
    return CUDA_SUCCESS;
}

/* ---- nodes by hand: copies and memsets (issue 46) ----------------------------------------- */
/* A CUDA_MEMCPY3D the sim can replay: linear memory (host, device or unified; no arrays), one
 * contiguous run (a single row and slice, or pitches equal to the width), or the rows of one
 * slice, each pitch apart at its end (a 2D copy). */
static CUresult copy_op(const CUDA_MEMCPY3D *p, sim_op *op)
{
    if (!p || !p->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
    if (p->srcMemoryType == CU_MEMORYTYPE_ARRAY || p->dstMemoryType == CU_MEMORYTYPE_ARRAY) return CUDA_ERROR_NOT_SUPPORTED;
    size_t w = p->WidthInBytes, h = p->Height ? p->Height : 1, d = p->Depth ? p->Depth : 1;
    int pitched = h * d > 1 && (p->srcPitch != w || p->dstPitch != w);
    if (pitched && (d > 1 || p->srcPitch < w || p->dstPitch < w)) return CUDA_ERROR_NOT_SUPPORTED;
    if (p->srcXInBytes || p->srcY || p->srcZ || p->dstXInBytes || p->dstY || p->dstZ) return CUDA_ERROR_NOT_SUPPORTED;
    const void *src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? p->srcHost : (const void *)(uintptr_t)p->srcDevice;
    void *dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? p->dstHost : (void *)(uintptr_t)p->dstDevice;
    if (!src || !dst) return CUDA_ERROR_INVALID_VALUE;
    if (pitched) *op = (sim_op){ .type = 1, .dst = dst, .src = src, .n = w, .rows = h, .dpitch = p->dstPitch, .spitch = p->srcPitch };
    else *op = (sim_op){ .type = 1, .dst = dst, .src = src, .n = w * h * d };
    return CUDA_SUCCESS;
}

CUresult cuGraphAddMemcpyNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                              const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    if (!node || !g || g->magic != GRAPH_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    sim_op op;
    CUresult r = copy_op(p, &op);
    if (r) return r;
    pthread_mutex_lock(&sim_lock);
    r = add_node(g, &op, node);
    pthread_mutex_unlock(&sim_lock);
    return r;
}

/* element size 1, 2 or 4; rows contiguous (one row, or a pitch equal to the row) */
static CUresult memset_op(const CUDA_MEMSET_NODE_PARAMS *p, sim_op *op)
{
    if (!p || !p->dst || !p->width) return CUDA_ERROR_INVALID_VALUE;
    if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) return CUDA_ERROR_INVALID_VALUE;
    size_t h = p->height ? p->height : 1;
    if (h > 1 && p->pitch != p->width * p->elementSize) return CUDA_ERROR_NOT_SUPPORTED;
    *op = (sim_op){ .type = 2, .dst = (void *)(uintptr_t)p->dst, .n = p->width * h, .value = p->value, .elem = p->elementSize };
    return CUDA_SUCCESS;
}

CUresult cuGraphAddMemsetNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                              const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    if (!node || !g || g->magic != GRAPH_MAGIC) return CUDA_ERROR_INVALID_VALUE;
    sim_op op;
    CUresult r = memset_op(p, &op);
    if (r) return r;
    pthread_mutex_lock(&sim_lock);
    r = add_node(g, &op, node);
    pthread_mutex_unlock(&sim_lock);
    return r;
}

/* A copy or memset node's new op, in the graph holding NODE or (E) in exec E: a node of the
 * same kind (CUDA_ERROR_INVALID_VALUE otherwise). */
static CUresult set_op(CUgraphExec e, CUgraphNode node, CUresult made, const sim_op *op)
{
    if (made) return made;
    if (!node || node->magic != NODE_MAGIC || node->child || (e && e->magic != EXEC_MAGIC)) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    struct CUgraph_st *g = e ? &e->g : node->g;
    CUresult r = node->idx < g->n && g->ops[node->idx].type == op->type ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (!r) g->ops[node->idx] = *op;
    pthread_mutex_unlock(&sim_lock);
    return r;
}
CUresult cuGraphMemcpyNodeSetParams(CUgraphNode node, const CUDA_MEMCPY3D *p)
{ sim_op op = { 0 }; CUresult r = copy_op(p, &op); return set_op(NULL, node, r, &op); }
CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec e, CUgraphNode node, const CUDA_MEMCPY3D *p, CUcontext ctx)
{ sim_op op = { 0 }; CUresult r = e ? copy_op(p, &op) : CUDA_ERROR_INVALID_VALUE; return set_op(e, node, r, &op); }
CUresult cuGraphMemsetNodeSetParams(CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *p)
{ sim_op op = { 0 }; CUresult r = memset_op(p, &op); return set_op(NULL, node, r, &op); }
CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec e, CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{ sim_op op = { 0 }; CUresult r = e ? memset_op(p, &op) : CUDA_ERROR_INVALID_VALUE; return set_op(e, node, r, &op); }

/* Every op of the graph, as nodes in the order they run (captured ops get their handles now). */
CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *num)
{
    if (!g || g->magic != GRAPH_MAGIC || !num) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    size_t want = *num;
    for (size_t i = 0; i < g->n && !r; i++) {
        struct CUgraphNode_st *nd;
        for (nd = g->nodes; nd && nd->idx != i; nd = nd->next) {}
        if (!nd && (nd = calloc(1, sizeof *nd))) {
            *nd = (struct CUgraphNode_st){ NODE_MAGIC, g, i, g->nodes, 0, 1 };
            g->nodes = nd;
        }
        if (!nd) r = CUDA_ERROR_OUT_OF_MEMORY;
        else if (nodes && i < want) nodes[i] = nd;
    }
    if (!r) *num = nodes && want < g->n ? want : g->n;
    pthread_mutex_unlock(&sim_lock);
    return r;
}

/* Dependencies are not modelled (nodes run in the order added): a node has none. */
CUresult cuGraphNodeGetDependencies_v2(CUgraphNode node, CUgraphNode *deps, CUgraphEdgeData *edges, size_t *num)
{
    if (!node || node->magic != NODE_MAGIC || !num) return CUDA_ERROR_INVALID_VALUE;
    *num = 0;
    return CUDA_SUCCESS;
}

CUresult cuGraphUpload(CUgraphExec e, CUstream s)
{
    sim_ctx *c;
    CUresult r = sim_stream_check(s, &c);
    if (r) return r;
    return e && e->magic == EXEC_MAGIC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
SIM_ALIAS(cuGraphUpload, cuGraphUpload_ptsz);

/* A handle for conditional nodes: distinct per call, with the value each launch starts from (the
 * default with CU_GRAPH_COND_ASSIGN_DEFAULT, else 0: no kernel here ever sets it). */
#define MAX_COND 256
static unsigned cond_values[MAX_COND + 1];
CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle *h, CUgraph g, CUcontext ctx, unsigned int dflt,
                                        unsigned int flags)
{
    static cuuint64_t next = 1;
    if (!h || !g || g->magic != GRAPH_MAGIC || (flags & ~(unsigned)CU_GRAPH_COND_ASSIGN_DEFAULT)) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    *h = next++;
    if (*h <= MAX_COND) cond_values[*h] = flags & CU_GRAPH_COND_ASSIGN_DEFAULT ? dflt : 0;
    pthread_mutex_unlock(&sim_lock);
    return CUDA_SUCCESS;
}
static unsigned cond_value(unsigned long long handle) { return handle && handle <= MAX_COND ? cond_values[handle] : 0; }
