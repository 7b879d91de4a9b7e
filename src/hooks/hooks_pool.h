/* hooks_pool.h - what the other hook families ask hooks_pool.c. */
#ifndef VT_HOOKS_POOL_H
#define VT_HOOKS_POOL_H

/* The device of context CTX (CUDA 13's cuCtxGetDevice_v2, guard held); -1 when unknown. */
int vt_device_of_ctx(void *ctx);
#endif
