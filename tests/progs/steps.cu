// steps.cu - a training loop whose steps the report must find (issue 49 slice 1: analysis_steps.c).
// Usage: steps api|nvtx|batch|plain. Before the loop a 2 MiB buffer; STEPS = 8 steps, each: a 1 MiB
// allocation kept to the end (live grows 1 MiB a step), a 4 MiB one freed before the step ends,
// and last a 4-byte device-to-host read of the kept buffer (a loss read: the host waits).
// So step K (1-based) starts with 2 + (K - 1) MiB live and peaks at 2 + K + 4 MiB.
//   api:   vramtrace_step() at the top of each step (the last step runs to the end of the trace)
//   nvtx:  each step inside nvtxRangePushA("step"), with a nested "forward" range, all inside
//          one "train" range
//   batch: the same with the step range named "batch" (no step-like name: the repeated range
//          open longest is taken, not the nested "forward")
//   plain: no marker: the report finds the period in the calls the tracer always writes (per
//          step: cudaMalloc, cudaMalloc, cudaFree, cudaMemcpy d2h), the same with folding on or off
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
    int api = !strcmp(mode, "api"), plain = !strcmp(mode, "plain");
    const char *range = !strcmp(mode, "batch") ? "batch" : "step";
    void *base = NULL, *kept[STEPS] = { 0 };
    int rc = cudaMalloc(&base, 2 * MiB);
    if (!api && !plain) nvtxRangePushA("train");
    for (int k = 0; k < STEPS; k++) {
        if (api) vramtrace_step();
        else if (!plain) nvtxRangePushA(range);
        void *tmp = NULL;
        rc |= cudaMalloc(&kept[k], MiB);
        if (!api && !plain) nvtxRangePushA("forward");
        rc |= cudaMalloc(&tmp, 4 * MiB);
        rc |= cudaMemset(tmp, 0, 4 * MiB);
        if (!api && !plain) nvtxRangePop();
        rc |= cudaFree(tmp);
        float loss = 0;
        rc |= cudaMemcpy(&loss, kept[k], sizeof loss, cudaMemcpyDeviceToHost);
        if (!api && !plain) nvtxRangePop();
    }
    if (!api && !plain) nvtxRangePop();
    for (int k = 0; k < STEPS; k++) rc |= cudaFree(kept[k]);
    rc |= cudaFree(base);
    printf("steps=%d rc=%d\n", STEPS, rc);
    return rc != 0;
}
