/* threads_comm.c - which threads the process has once CUDA is in use (tests/cases/trace_defaults.sh):
 * after a cudaMalloc (the tracer's trace is open by then) prints "threads N named-vramtrace K", N
 * the process's threads and K those named "vramtrace" (the tracer's drain thread), then frees. */
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    void *p = NULL;
    if (cudaMalloc(&p, 4096) != cudaSuccess) { printf("cudaMalloc failed\n"); return 1; }
    int n = 0, named = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) { if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0'; fclose(f); }
        n++;
        named += !strcmp(comm, "vramtrace");
    }
    if (d) closedir(d);
    printf("threads %d named-vramtrace %d\n", n, named);
    return cudaFree(p) == cudaSuccess ? 0 : 1;
}
