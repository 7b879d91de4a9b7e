/* hooks_common.h - the wrapper boilerplate shared by the hook families (internal).
 *
 * VT_TWIN_HOOK(ret, notsup, fn, impl, params, args...) defines the exported wrapper `fn` whose
 * body is `impl(real, "fn", args...)`: one implementation serves a function and its _ptds/_ptsz
 * twin. A wrapper whose real function cannot be found returns `notsup`, never calls NULL. */
#ifndef VT_HOOKS_COMMON_H
#define VT_HOOKS_COMMON_H
#include <stdint.h>

#include "hook_table.h"
#include "launch_check.h"
#include "lifecycle.h"
#include "resolve.h"
#include "tracer.h"

#define VT_TWIN_HOOK(ret, notsup, fn, impl, params, ...)       \
    VT_REAL_SLOT(fn);                                           \
    ret fn params                                               \
    {                                                           \
        vt_init();                                              \
        void *real_ = vt_real_get(&real_##fn, #fn);             \
        if (!real_)                                             \
            return notsup;                                      \
        return impl(real_, #fn, __VA_ARGS__);                   \
    }
#define DRV_HOOK(fn, impl, params, ...) VT_TWIN_HOOK(CUresult, CUDA_ERROR_NOT_SUPPORTED, fn, impl, params, __VA_ARGS__)

#if defined(__x86_64__) && defined(__linux__)
/* A driver hook the runtime's own calls reach (CUDA 13's runtime calls the driver through the
 * entry points cuGetProcAddress gives it, the tracer's): while a runtime hook runs the real call
 * (rt_depth > 0) it only forwards. In C that costs a frame and the arguments moved twice on every
 * runtime copy and launch; as a few instructions of assembly, the caller's registers and stack
 * untouched: the real function once known and rt_depth > 0, jump to it, anything else to
 * fn##_full (the C hook). The slot and fn##_full are hidden symbols the assembly can name (LTO
 * renames statics); rt_depth's offset is checked below. */
#define VT_RT_DEPTH_OFF "12"
_Static_assert(__builtin_offsetof(struct vt_thread_state, rt_depth) == 12, "VT_RT_DEPTH_OFF is rt_depth's offset");
#define VT_NESTED_JUMP(fn)                                                                          \
    __asm__(".text\n\t.globl " #fn "\n\t.type " #fn ", @function\n\t.p2align 4\n" #fn ":\n\t"       \
            ".cfi_startproc\n\t"                                                                    \
            "movq real_" #fn "(%rip), %rax\n\t"                                                      \
            "testq %rax, %rax\n\t"                                                                  \
            "je 1f\n\t"                                                                             \
            "movq vt_ts@gottpoff(%rip), %r11\n\t"                                                   \
            "cmpl $0, %fs:" VT_RT_DEPTH_OFF "(%r11)\n\t"                                            \
            "jle 1f\n\t"                                                                            \
            "jmp *%rax\n"                                                                            \
            "1:\n\tjmp " #fn "_full\n\t"                                                            \
            ".cfi_endproc\n\t.size " #fn ", .-" #fn "\n")
/* DRV_HOOK for an impl whose first step is `if (DRV_SKIP()) return real(...)`: the nested case
 * never reaches C. */
#define DRV_FWD_HOOK(fn, impl, params, ...)                                                         \
    __attribute__((visibility("hidden"), used)) _Atomic(void *) real_##fn;                          \
    __attribute__((visibility("hidden"), used, noinline)) CUresult fn##_full params;                \
    CUresult fn##_full params                                                                       \
    {                                                                                               \
        vt_init();                                                                                  \
        void *real_ = vt_real_get(&real_##fn, #fn);                                                 \
        if (!real_) return CUDA_ERROR_NOT_SUPPORTED;                                                \
        return impl(real_, #fn, __VA_ARGS__);                                                       \
    }                                                                                               \
    CUresult fn params;                                                                             \
    VT_NESTED_JUMP(fn);
#else
#define DRV_FWD_HOOK DRV_HOOK
#endif
#define RT_TWIN(fn, impl, params, ...) VT_TWIN_HOOK(cudaError_t, cudaErrorNotSupported, fn, impl, params, __VA_ARGS__)
/* Driver hooks only forward when tracing is off, the tracer itself calls, or a runtime hook
 * below which they run records the call. */
#define DRV_SKIP() vt_forward_or_nested()

/* Hooks whose runtime and driver forms share one impl(real, api, rt, args...): `rt` 1 for the
 * runtime form, whose real call is marked as inside the runtime (the driver hooks below it pass
 * through). A runtime hook reached from inside the runtime, and a driver hook reached from a
 * runtime hook, forward only. */
#define RT_BEGIN(fn, real) vt_init(); __typeof__(&fn) real = VT_REAL(fn); if (!real) return cudaErrorNotSupported
#define RT_NESTED() vt_forward_or_nested()
#define RT_RUN(r, call) do { vt_ts.rt_depth++; r = call; vt_ts.rt_depth--; } while (0)
#define RT_GRAPH_HOOK(fn, impl, params, ...) \
    VT_REAL_SLOT(fn); \
    cudaError_t fn params { RT_BEGIN(fn, real); \
                            if (RT_NESTED()) return real(__VA_ARGS__); \
                            return impl((void *)real, #fn, 1, __VA_ARGS__); }
#define DRV_GRAPH_HOOK(fn, impl, params, ...) \
    VT_REAL_SLOT(fn); \
    CUresult fn params { vt_init(); __typeof__(&fn) real = VT_REAL(fn); \
                         if (!real) return CUDA_ERROR_NOT_SUPPORTED; \
                         if (DRV_SKIP()) return real(__VA_ARGS__); \
                         return impl((void *)real, #fn, 0, __VA_ARGS__); }

static inline uint64_t vt_u64(const void *p) { return (uint64_t)(uintptr_t)p; }

/* The kernel behind a runtime launch's handle (a host stub or a cudaKernel_t / CUkernel), its
 * layout resolved (hooks_launch.c); behind a CUfunction (hooks_driver_ops.c). NULL: unknown. */
vt_kernel *vt_kernel_of_handle(const void *handle_or_stub);
vt_kernel *vt_kernel_of_function(void *f);

/* hooks_graph_copy.c: the memcpy or memset node of a generic node call (P: its
 * cudaGraphNodeParams, RT, or CUgraphNodeParams), checked and kept as the typed calls' are: made
 * in GRAPH (SET 0), or the new parameters of NODE in EXEC or, EXEC NULL, in its graph. 0, or -1
 * when P is neither kind. */
int vt_graph_generic_copy_node(const char *api, int rt, const void *p, const void *graph, const void *exec,
                               const void *node, int set);

/* CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE pairs in a launch's `extra` */
static inline void vt_packed_args(void **extra, const void **buf, uint64_t *len)
{
    *buf = NULL;
    *len = 0;
    for (int i = 0; extra && extra[i] != VT_CU_LAUNCH_PARAM_END && i < 64; i += 2) {
        if (extra[i] == VT_CU_LAUNCH_PARAM_BUFFER_POINTER) *buf = extra[i + 1];
        else if (extra[i] == VT_CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) *len = *(size_t *)extra[i + 1];
    }
}

/* After a context switch (cuCtxSetCurrent/Push/Pop, cuCtxCreate): the thread's current device,
 * the `dev` of its events, from the real driver (guard held, errno kept). hooks_pool.c */
void vt_note_current_device(void);

/* The two halves of a traced launch around the real call: errno kept once for both (the program
 * and the real launch see the errno the caller left; the caller sees the real launch's), the
 * trace asked once (vt_launch_begin, inside `begin`, which also sets k), and t0 taken after the
 * checks so the duration is the real launch's. */
#define VT_LAUNCH_BEGIN(c, k, traced, api, begin)                                   \
    VT_SAVE_ERRNO;                                                                  \
    struct vt_call c = { .api = (api), .dev = vt_ts.cur_dev };                      \
    vt_kernel *k = NULL;                                                            \
    int traced = (begin);                                                           \
    VT_RESTORE_ERRNO;                                                               \
    c.t0 = vt_now()
#define VT_LAUNCH_END(c, k, traced, r, grid, block, shm, stream)                    \
    do {                                                                            \
        VT_CALL_END(c, r);                                                          \
        if (traced) {                                                               \
            vt_saved_errno_ = *vt_errno_;                                           \
            vt_launch_end(&c, k, grid, block, shm, stream);                         \
            VT_RESTORE_ERRNO;                                                       \
        }                                                                           \
    } while (0)

#endif
