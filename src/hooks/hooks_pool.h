/* hooks_pool.h - what the other hook families ask hooks_pool.c (graph capture bookkeeping).
 *
 * A stream-ordered allocation made in a capturing stream is a graph allocation node: it is
 * recorded as `alloc` with mem "graph" (not counted as VRAM) and remembered for the stream; the
 * graph made by cu/cudaStreamEndCapture inherits the nodes, the exec made by instantiation copies
 * them, and each successful cu/cudaGraphLaunch writes the node's memory as a counted `alloc`
 * (mem "async", "graph":true) and, for a free node, the matching `free`. Never calls CUDA except
 * cuStreamIsCapturing (guard held). */
#ifndef VT_HOOKS_POOL_H
#define VT_HOOKS_POOL_H
#include <stdint.h>

/* 1 when `stream` is capturing (asks the real driver; 0 when it cannot tell). */
int vt_stream_capturing(uint64_t stream);
/* A successful allocation / free in a capturing stream: remember it as a node of the capture. */
void vt_graph_capture_alloc(uint64_t stream, uint64_t addr, uint64_t size, int dev);
void vt_graph_capture_free(uint64_t stream, uint64_t addr);
/* The device of context CTX (CUDA 13's cuCtxGetDevice_v2, guard held); -1 when unknown. */
int vt_device_of_ctx(void *ctx);
#endif
