// steps.cu - a training loop whose steps the report must find (issue 49 slice 1: analysis_steps.c).
// Usage: steps api|nvtx|batch. Before the loop a 2 MiB buffer; STEPS = 8 steps, each: a 1 MiB
// allocation kept to the end (live grows 1 MiB a step), a 4 MiB one freed before the step ends.
// So step K (1-based) starts with 2 + (K - 1) MiB live and peaks at 2 + K + 4 MiB.
//   api:   vramtrace_step() at the top of each step (the last step runs to the end of the trace)
//   nvtx:  each step inside nvtxRangePushA("step"), with a nested "forward" range, all inside
//          one "train" range
//   batch: the same with the step range named "batch" (no step-like name: the repeated range
//          open longest is taken, not the nested "forward")
// After the loop everything is freed. Prints "steps=8".
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>
#include <vramtrace/vramtrace.h>

enum { STEPS = 8, MiB = 1 << 20 };

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "api";
    int api = !strcmp(mode, "api");
    const char *range = !strcmp(mode, "batch") ? "batch" : "step";
    void *base = NULL, *kept[STEPS] = { 0 };
    int rc = cudaMalloc(&base, 2 * MiB);
    if (!api) nvtxRangePushA("train");
    for (int k = 0; k < STEPS; k++) {
        if (api) vramtrace_step();
        else nvtxRangePushA(range);
        void *tmp = NULL;
        rc |= cudaMalloc(&kept[k], MiB);
        if (!api) nvtxRangePushA("forward");
        rc |= cudaMalloc(&tmp, 4 * MiB);
        rc |= cudaMemset(tmp, 0, 4 * MiB);
        if (!api) nvtxRangePop();
        rc |= cudaFree(tmp);
        if (!api) nvtxRangePop();
    }
    if (!api) nvtxRangePop();
    for (int k = 0; k < STEPS; k++) rc |= cudaFree(kept[k]);
    rc |= cudaFree(base);
    printf("steps=%d rc=%d\n", STEPS, rc);
    return rc != 0;
}
