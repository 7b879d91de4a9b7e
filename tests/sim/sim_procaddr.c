/* sim_procaddr.c - cuGetProcAddress_v2 for the simulated driver: base name + requested version
 * -> implementation, from the single table in sim_api.def (test fixture). */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((visibility("default"))) CUresult sim_getproc_v1(const char *sym, void **pfn, int ver, cuuint64_t flags) __asm__("cuGetProcAddress");

enum sim_fn_id {
#define SIM_FN(base, ver, fn) SIM_ID_##base##_##ver,
#include "sim_api.def"
#undef SIM_FN
    SIM_FN_COUNT
};

typedef struct sim_fn { const char *name; int version; void *fn; } sim_fn;

/* Deprecated entry points (cuLaunchCooperativeKernelMultiDevice) are still served, as CUDA 13's
 * driver serves them: taking their address is no use of them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static const sim_fn sim_fns[SIM_FN_COUNT] = {
#define SIM_FN(base, ver, fn) [SIM_ID_##base##_##ver] = {#base, ver, (void *)fn},
#include "sim_api.def"
#undef SIM_FN
};
#pragma GCC diagnostic pop

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    if (!sym || !pfn) return CUDA_ERROR_INVALID_VALUE;
    const sim_fn *best = NULL;
    int found_any = 0;
    for (int i = 0; i < SIM_FN_COUNT; i++) {
        if (strcmp(sim_fns[i].name, sym) != 0) continue;
        found_any = 1;
        if (sim_fns[i].version <= ver && (!best || sim_fns[i].version > best->version))
            best = &sim_fns[i];
    }
    *pfn = best ? best->fn : NULL;
    if (status)
        *status = best ? CU_GET_PROC_ADDRESS_SUCCESS
                 : found_any ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                             : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
/* The pre-12.0 entry point: same, without the status argument. */
__attribute__((visibility("default"))) CUresult sim_getproc_v1(const char *sym, void **pfn, int ver, cuuint64_t flags) __asm__("cuGetProcAddress");
CUresult sim_getproc_v1(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    return cuGetProcAddress_v2(sym, pfn, ver, flags, NULL);
}

/* Lets `make check-sim` list the table: VRAMTRACE_SIM_LIST=1 prints it at load. */
__attribute__((constructor)) static void sim_list(void)
{
    const char *e = getenv("VRAMTRACE_SIM_LIST");
    if (!e || strcmp(e, "1") != 0) return;
    for (int i = 0; i < SIM_FN_COUNT; i++)
        fprintf(stderr, "%s %d\n", sim_fns[i].name, sim_fns[i].version);
}

/* NVIDIA's private tables (cudart and NVRTC look them up by UUID) are undocumented: none is
 * served, which callers take as "not there" and go on without (NVRTC called a NULL table and
 * crashed when the entry point itself was missing). */
CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
    if (!table || !id) return CUDA_ERROR_INVALID_VALUE;
    *table = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}
