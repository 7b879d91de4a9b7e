// rel_fork.cu - fork and exec after CUDA initialisation (tests/cases/rel_fork.sh).
// Usage: rel_fork MODE
//   alloc     2 cudaMalloc, 1 cudaFree, exit (the program the exec modes run)
//   child     cudaMalloc, fork; the child does cudaMalloc+cudaFree and exits; parent frees
//   thread    a second thread loops inside the tracer (CUDA + NVTX) while the main thread forks
//             20 children; each child records NVTX marks (no CUDA: the sim's own locks are not
//             fork-safe, nor is real CUDA after fork) and exits; prints "bg_events=N"
//   exec      cudaMalloc, then execv(self, "alloc") in place
//   forkexec  cudaMalloc, fork, the child execs self "alloc"; parent waits
//   pool      4 workers forked before CUDA init, cudaMalloc, 4 more after; workers never touch
//             CUDA and exit(0) (destructors run), like a Python multiprocessing pool
//   hold      cudaMalloc 1 MiB and keep it; fork; the child sets RANK=5, makes one 64-byte
//             host-to-host cudaMemcpy (its only CUDA call: it holds no device memory) and exits;
//             the parent frees after
//   findings  21 cudaFree of host addresses never allocated (21 invalid frees: the tracer says the
//             first 20 on stderr), fork; the child makes one more, at host+100, and exits. Prints
//             "bad=ADDR" (host+100) for the child's
//   rawfork   cudaMalloc 1 MiB, then a child made by syscall(SYS_fork) (no atfork handlers run,
//   _Fork     no pid or tid caches reset) or by glibc's _Fork (no atfork handlers): the child
//             does cudaMalloc 2 MiB + cudaFree and exit(0) (destructors run); parent frees after
//   forkthreads  cudaMalloc 1 MiB, then 4 children one after another, each by _Fork (no atfork
//             handler: the tracer finds its state stale at the child's first call) and each
//             starting 16 threads; released together from a barrier, each makes its first CUDA
//             calls, cudaMalloc 1 MiB + cudaFree: one resets the tracer, the others must wait for
//             it. A child exits 0 when every call succeeded; parent frees after
// Prints "pid=P" and "child=P" lines and "status=S" for each waited child.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static std::atomic<int> stop_flag;
static std::atomic<long> bg_events;

static void *bg(void *)
{
    while (!stop_flag.load()) {
        void *p = nullptr;
        nvtxRangePushA("bg");
        if (cudaMalloc(&p, 4096) == cudaSuccess) {
            cudaMemset(p, 1, 4096);
            cudaFree(p);
            bg_events += 3;
        }
        nvtxRangePop();
        bg_events += 2;
    }
    return nullptr;
}

static int wait_child(pid_t c)
{
    int st = 0;
    while (waitpid(c, &st, 0) < 0) {}
    printf("child=%ld status=%d\n", (long)c, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    return st;
}

static void busy_worker(int i)
{
    volatile unsigned long x = 0;
    for (int k = 0; k < 100000; k++) x += (unsigned long)(k ^ i);
    char *m = (char *)malloc(1 << 16);
    memset(m, i, 1 << 16);
    free(m);
    exit(0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "alloc";
    printf("pid=%ld\n", (long)getpid());
    fflush(stdout);
    void *p = nullptr, *q = nullptr;
    if (!strcmp(mode, "alloc")) {
        cudaMalloc(&p, 1 << 20);
        cudaMalloc(&q, 1 << 20);
        cudaFree(p);
        return 0;
    }
    if (!strcmp(mode, "child")) {
        cudaMalloc(&p, 1 << 20);
        fflush(stdout);
        pid_t c = fork();
        if (c == 0) {
            void *r = nullptr;
            cudaError_t e = cudaMalloc(&r, 2 << 20);
            if (e == cudaSuccess) cudaFree(r);
            exit(0);
        }
        wait_child(c);
        cudaFree(p);
        return 0;
    }
    if (!strcmp(mode, "thread")) {
        cudaMalloc(&p, 1 << 20);
        nvtxMarkA("parent");
        pthread_t t;
        pthread_create(&t, nullptr, bg, nullptr);
        for (int i = 0; i < 20; i++) {
            fflush(stdout);
            pid_t c = fork();
            if (c == 0) {
                nvtxRangePushA("child");
                nvtxMarkA("in child");
                nvtxRangePop();
                exit(0);
            }
            wait_child(c);
        }
        stop_flag = 1;
        pthread_join(t, nullptr);
        cudaFree(p);
        printf("bg_events=%ld\n", bg_events.load());
        return 0;
    }
    if (!strcmp(mode, "exec") || !strcmp(mode, "forkexec")) {
        cudaMalloc(&p, 1 << 20);
        fflush(stdout);
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) return 2;
        self[n] = '\0';
        char *args[] = { self, (char *)"alloc", nullptr };
        if (mode[0] == 'e') { execv(self, args); return 2; }
        pid_t c = fork();
        if (c == 0) { execv(self, args); _exit(2); }
        wait_child(c);
        cudaFree(p);
        return 0;
    }
    if (!strcmp(mode, "hold")) {
        cudaMalloc(&p, 1 << 20);
        fflush(stdout);
        pid_t c = fork();
        if (c == 0) {
            char a[64] = { 1 }, b[64];
            setenv("RANK", "5", 1);
            exit(cudaMemcpy(b, a, sizeof a, cudaMemcpyHostToHost) == cudaSuccess && b[0] == 1 ? 0 : 1);
        }
        wait_child(c);
        cudaFree(p);
        return 0;
    }
    if (!strcmp(mode, "findings")) {
        static char host[128];
        for (int i = 0; i < 21; i++) { cudaFree(host + i); cudaGetLastError(); }
        printf("bad=%p\n", (void *)(host + 100));
        fflush(stdout);
        pid_t c = fork();
        if (c == 0) { cudaFree(host + 100); exit(0); }
        wait_child(c);
        return 0;
    }
    if (!strcmp(mode, "rawfork") || !strcmp(mode, "_Fork")) {
        cudaMalloc(&p, 1 << 20);
        fflush(stdout);
        pid_t c = mode[0] == 'r' ? (pid_t)syscall(SYS_fork) : _Fork();
        if (c == 0) {
            void *r = nullptr;
            int bad = cudaMalloc(&r, 2 << 20) != cudaSuccess;
            bad += cudaFree(r) != cudaSuccess;
            exit(bad);
        }
        wait_child(c);
        cudaFree(p);
        return 0;
    }
    if (!strcmp(mode, "forkthreads")) {
        cudaMalloc(&p, 1 << 20);
        for (int round = 0; round < 4; round++) {
        fflush(stdout);
        pid_t c = _Fork();
        if (c == 0) {
            enum { T = 16 };
            static pthread_barrier_t go;
            static std::atomic<int> bad{0};
            pthread_barrier_init(&go, nullptr, T);
            pthread_t t[T];
            for (int i = 0; i < T; i++)
                pthread_create(&t[i], nullptr, [](void *) -> void * {
                    pthread_barrier_wait(&go);
                    void *r = nullptr;
                    if (cudaMalloc(&r, 1 << 20) != cudaSuccess) bad++;
                    if (cudaFree(r) != cudaSuccess) bad++;
                    return nullptr;
                }, nullptr);
            for (int i = 0; i < T; i++) pthread_join(t[i], nullptr);
            exit(bad.load());
        }
        wait_child(c);
        }
        cudaFree(p);
        return 0;
    }
    if (!strcmp(mode, "pool")) {
        pid_t w[8];
        for (int i = 0; i < 4; i++) { fflush(stdout); if ((w[i] = fork()) == 0) busy_worker(i); }
        cudaMalloc(&p, 1 << 20);
        for (int i = 4; i < 8; i++) { fflush(stdout); if ((w[i] = fork()) == 0) busy_worker(i); }
        for (int i = 0; i < 8; i++) wait_child(w[i]);
        cudaFree(p);
        return 0;
    }
    return 2;
}
