// rel_crash.cu - dies in a chosen way after allocating (tests/cases/rel_crash.sh).
// Usage: rel_crash MODE N   MODE: sleep (prints "ready pid=P", waits to be killed), abort, segv,
// _exit, exit (clean), hostile (exit cleanly after allocating inside an NVTX range whose name is
// HTML/JS), steady MS (5000 launches of the first launch's configuration, MS ms of quiet, SIGKILL:
// folded launch counts, core/fold.h), thread_steady (a thread makes 5000 such launches and ends,
// then SIGKILL at once: its counts are written when it ends). Allocates N x 1 MiB with cudaMalloc first, frees none of them; prints "allocated=N".
#include <csignal>
#include <pthread.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <nvtx3/nvToolsExt.h>

__global__ void k_touch(float *d) { if (d) d[0] = 1.0f; }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "sleep";
    int n = argc > 2 ? atoi(argv[2]) : 8, ok = 0;
    if (!strcmp(mode, "hostile")) nvtxRangePushA("</script><script>alert(\"vt\")</script><img src=x onerror=alert(1)>&amp;'");
    for (int i = 0; i < n; i++) {
        void *p = nullptr;
        if (cudaMalloc(&p, 1 << 20) == cudaSuccess) ok++;
        if (i == 0) { k_touch<<<1, 1>>>((float *)p); cudaDeviceSynchronize(); }
    }
    printf("allocated=%d\n", ok);
    printf("ready pid=%ld\n", (long)getpid());
    fflush(stdout);
    if (!strcmp(mode, "steady")) { // 5000 more launches like the first, quiet for argv[3] ms, then SIGKILL
        int ms = argc > 3 ? atoi(argv[3]) : 0;
        for (int i = 0; i < 5000; i++) k_touch<<<1, 1>>>(nullptr);
        printf("launched=5001\n");
        fflush(stdout);
        usleep((useconds_t)ms * 1000);
        raise(SIGKILL);
    }
    if (!strcmp(mode, "thread_steady")) { // a thread makes 5000 launches and ends; then SIGKILL at once
        pthread_t t;
        pthread_create(&t, nullptr, [](void *) -> void * { for (int i = 0; i < 5000; i++) k_touch<<<1, 1>>>(nullptr); return nullptr; }, nullptr);
        pthread_join(t, nullptr);
        printf("launched=5001\n");
        fflush(stdout);
        raise(SIGKILL);
    }
    if (!strcmp(mode, "sleep")) { for (;;) pause(); }
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "segv")) { volatile int *z = nullptr; *z = 1; }
    if (!strcmp(mode, "_exit")) _exit(3);
    return 0;
}
