/* rel_sigexit.c - a program whose signal handler calls exit(), as many servers' SIGTERM handlers
 * do (tests/cases/rel_signals.sh). Usage: rel_sigexit DELAY_US [THREADS]: allocates, sets and
 * frees device memory in a loop (in THREADS threads, default 1) until a SIGALRM DELAY_US after the
 * start calls exit(0) from its handler, wherever the loop happens to be (inside a CUDA call, so
 * inside the tracer's hook, most of the time). Prints "started" first. A negative DELAY_US loops
 * for that long in the main thread and returns from main instead (no signal). */
#include <cuda_runtime.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static void on_alarm(int sig)
{
    (void)sig;
    exit(0);
}

static void *loop(void *arg)
{
    (void)arg;
    for (;;) {
        void *p[4];
        for (int i = 0; i < 4; i++) cudaMalloc(&p[i], 4096u << i);
        cudaMemset(p[0], 0, 4096);
        for (int i = 0; i < 4; i++) cudaFree(p[i]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long delay = argc > 1 ? atol(argv[1]) : 1000;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    void *warm;
    cudaMalloc(&warm, 256); /* the tracer's start-up is done before the clock runs */
    cudaFree(warm);
    printf("started\n");
    fflush(stdout);
    if (delay < 0) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            void *p;
            cudaMalloc(&p, 4096);
            cudaFree(p);
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < -delay);
        return 0;
    }
    signal(SIGALRM, on_alarm);
    struct itimerval it = { { 0, 0 }, { delay / 1000000, delay % 1000000 } };
    setitimer(ITIMER_REAL, &it, NULL);
    for (int t = 1; t < threads; t++) {
        pthread_t th;
        pthread_create(&th, NULL, loop, NULL);
    }
    loop(NULL);
    return 1;
}
