/* launch_check.h - kernel launches (launch_check.c): the `kernel` record on first use, the
 * per-argument pointer check and the `launch` record. */
#ifndef VT_LAUNCH_CHECK_H
#define VT_LAUNCH_CHECK_H
#include <stdint.h>

#include "cuda_abi.h"
#include "emit.h"
#include "kernels.h"

/* A launch, around the real call. vt_launch_begin, before it: when the trace is open and k is
 * known, writes the `kernel` record on first use, checks the arguments (so --check=abort stops
 * before a bad kernel runs) and returns 1; then vt_launch_end, after it, writes the `launch`
 * line. 0: nothing to record. `args` is the runtime-style array of pointers to each argument, or
 * NULL with `buf`/`buf_len` for a packed CU_LAUNCH_PARAM_BUFFER_POINTER buffer. The layout must
 * already be resolved (vt_kernel_resolve_layout). Unlike the other events these two leave errno
 * to the caller: the launch hooks keep it once around both halves and the real call. */
int vt_launch_begin(struct vt_call *c, vt_kernel *k, void **args, const void *buf, uint64_t buf_len);
/* A launch captured into a graph (its stream capturing) is kept as a node of the graph, with the
 * arguments vt_launch_begin saw on this thread. */
void vt_launch_end(const struct vt_call *c, vt_kernel *k, vt_dim3 grid, vt_dim3 block, uint64_t shmem, uint64_t stream);
#endif
