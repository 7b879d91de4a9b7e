/* graphs.h - CUDA graphs as the tracer sees them: the nodes of each graph being captured, each
 * graph and each instantiated graph (exec), and what a graph launch does with them.
 *
 * Nodes come from stream capture (a kernel launch, copy or memset issued to a capturing stream is
 * a node of the capture's graph, not work done: its record says "captured") and from the
 * explicit node calls (cu/cudaGraphAddMemAllocNode, ...AddMemFreeNode). A graph made by
 * cu/cudaStreamEndCapture holds its capture's nodes; instantiation copies a graph's nodes to the
 * exec. Every successful graph launch replays the exec's nodes in order, as work done then: each
 * kernel node's arguments are checked against the allocations live at that moment and recorded as
 * a launch, each copy and memset is checked and recorded, allocation nodes make their memory live
 * (mem "async", "graph":true) and free nodes free it. Replayed records say "graph":true.
 *
 * A node set is keyed by the object it belongs to (the capture's graph, or the capturing stream
 * when the driver cannot name the graph; a graph; an exec). Sets are kept under one mutex, off the
 * launch fast path: a launch asks whether it is captured only while some capture is active
 * (vt_captures_active). Dependencies between nodes are not modelled: nodes replay in the order
 * they were added. */
#ifndef VT_GRAPHS_H
#define VT_GRAPHS_H
#include <stdatomic.h>
#include <stdint.h>

#include "cuda_abi.h"
#include "emit.h"
#include "kernels.h"

/* A node (graphs.c owns the set; graph_replay.c does it at each launch). */
enum { VT_G_ALLOC, VT_G_FREE, VT_G_KERNEL, VT_G_COPY, VT_G_SET, VT_G_COND };
struct vt_gnode {
    int kind, dev;
    int cond;                              /* in an exec: a node of a conditional node's body */
    const void *node;                      /* the CUgraphNode, when known (explicit and captured nodes) */
    const void *parent;                    /* in a child graph node's clone: that node (else NULL) */
    uint64_t addr, size;                   /* alloc, free, set (size: elements), copy (dst) */
    /* kernel */
    vt_kernel *k;
    unsigned char *args;                   /* owned by the set; NULL: replayed unchecked (VT_G_COND: its
                                              body graphs' handles, args_len / sizeof(void *) of them) */
    uint64_t args_len, shmem;
    vt_dim3 grid, block;
    /* copy */
    uint64_t src;
    struct vt_copy_extra x;
    /* set */
    int value;
    uint64_t elem;
};

/* Captures begun and not yet ended, process-wide. */
extern _Atomic int vt_captures_active;
void vt_graph_capture_begun(void);
void vt_graph_capture_ended(void);

/* 1 when `stream` is capturing (asks the real driver; 0 when it cannot tell). */
int vt_stream_capturing(uint64_t stream);
/* The key of the node set a capturing stream adds to (its capture's graph when the driver names
 * it, else the stream); NULL when the stream is not capturing. Asks the driver (guard held, errno
 * kept): launches, copies and memsets ask it only while vt_captures_active is non-zero
 * (vt_captured_into); stream-ordered allocations and frees always, as a capture the tracer did
 * not see begin must still not count its allocation nodes as memory.
 * NODE, when not NULL, gets the stream's one dependency, or NULL when it has none or several:
 * asked right after work was captured, that is the work's node (CUDA: the next captured work
 * depends on what the stream captured last), the handle cudaGraphGetNodes later lists and the
 * SetParams calls name. */
const void *vt_capture_key(uint64_t stream, const void **node);
/* The capture key for call C's work on STREAM when that work is a graph node rather than done
 * now: only while a capture is active anywhere (one relaxed load otherwise), for work that
 * succeeded and is not itself a replay. NULL: done now. NODE as for vt_capture_key. */
static inline const void *vt_captured_into(const struct vt_call *c, uint64_t stream, const void **node)
{
    if (__builtin_expect(atomic_load_explicit(&vt_captures_active, memory_order_relaxed) == 0, 1) || c->graph || c->res)
        return NULL;
    return vt_capture_key(stream, node);
}

/* Nodes, added to the set keyed KEY. A kernel node's arguments are copied: from the packed
 * buffer `buf` (len bytes) or, when `args` is set, the parameters args[i] laid out as k's layout
 * says; without a layout the node replays unchecked. */
void vt_graph_add_alloc(const void *key, uint64_t addr, uint64_t size, int dev);
void vt_graph_add_free(const void *key, uint64_t addr);
void vt_graph_add_kernel(const void *key, const void *node, vt_kernel *k, int dev, void **args, const void *buf,
                         uint64_t len, vt_dim3 grid, vt_dim3 block, uint64_t shmem);
/* New parameters for kernel node NODE: of exec EXEC (cu/cudaGraphExecKernelNodeSetParams), or,
 * EXEC NULL, of the graph holding it (cu/cudaGraphKernelNodeSetParams; execs made from it keep
 * theirs). 0, or -1 when no such node is known. */
int vt_graph_set_kernel(const void *exec, const void *node, vt_kernel *k, int dev, void **args, const void *buf,
                        uint64_t len, vt_dim3 grid, vt_dim3 block, uint64_t shmem);
/* Copy and memset nodes (NODE: the handle, NULL when unknown); with EXEC/NODE: new parameters
 * for a known node, as vt_graph_set_kernel (0, or -1 when no such node is known). */
void vt_graph_add_copy(const void *key, const void *node, int dev, uint64_t dst, uint64_t src, uint64_t size,
                       const struct vt_copy_extra *x);
void vt_graph_add_set(const void *key, const void *node, int dev, uint64_t addr, uint64_t size, int value, uint64_t elem);
int vt_graph_set_copy(const void *exec, const void *node, int dev, uint64_t dst, uint64_t src, uint64_t size,
                      const struct vt_copy_extra *x);
int vt_graph_set_set(const void *exec, const void *node, int dev, uint64_t addr, uint64_t size, int value, uint64_t elem);

/* Move (capture -> graph) or copy (graph -> exec: instantiation, cu/cudaGraphExecUpdate) the
 * node set of FROM to TO, replacing TO's. */
void vt_graph_transfer(const void *from, const void *to, int move);
/* A conditional node NODE of GRAPH with N body graphs (CUDA 12.3+). Instantiation puts the bodies'
 * nodes in its place, marked cond: whether a body runs is decided on the device at each launch,
 * so a replay checks their kernels' arguments (a body that may run must not be handed freed or
 * host memory) but records no work for them. */
void vt_graph_add_cond(const void *graph, const void *node, void *const *bodies, size_t n);
/* cu/cudaGraphClone made CLONE from ORIG: a copy of ORIG's nodes, each handle the clone's own
 * (asked of the driver: cuGraphNodeFindInClone; NULL when it cannot say), so the SetParams calls
 * on the clone's nodes find them. */
void vt_graph_clone(const void *orig, const void *clone);
/* A child graph node NODE: a copy of CHILD's nodes appended to GRAPH's set, each marked as NODE's. */
void vt_graph_append_child(const void *graph, const void *child, const void *node);
/* cu/cudaGraphExecChildGraphNodeSetParams: the nodes of EXEC's set that NODE's clone added are
 * replaced by a copy of CHILD's (CUDA requires the same topology; the run is replaced whatever
 * its length). 0, or -1 when EXEC holds no node of NODE's. */
int vt_graph_set_child(const void *exec, const void *node, const void *child);
void vt_graph_drop(const void *key);
/* Calls fn on each node of KEY's set, in order, under the sets' lock. */
void vt_graph_foreach(const void *key, void (*fn)(const struct vt_gnode *, void *), void *ctx);
/* An exec was launched on `stream` by `api` and succeeded: do its nodes (graph_replay.c). */
void vt_graph_launched(const char *api, const void *exec, uint64_t stream);
/* Fork child: no graph. */
void vt_graphs_reset(void);
#endif
