/* rel_exit.c - threads that keep calling CUDA while the main thread runs exit()
 * (tests/cases/rel_crash.sh). Usage: rel_exit COUNTS THREADS
 * THREADS threads loop cudaMalloc(4096) / cudaFree for ever; after each call returns, the thread
 * adds one to its alloc or free counter in COUNTS (a file of at least 4096 bytes, mapped shared,
 * so the counts survive the process). Once every thread has made 2000 pairs, main calls exit(0):
 * the threads go on calling through the atexit handlers and the library destructors (the
 * tracer's among them) until the process ends. A call in flight at that instant returned to no
 * one: at most one per thread is recorded but not counted. */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_THREADS 16
static _Atomic unsigned long *counts; /* [2 * i]: allocs returned, [2 * i + 1]: frees returned */

static void *worker(void *arg)
{
    _Atomic unsigned long *mine = counts + 2 * (long)(size_t)arg;
    for (;;) {
        void *p = NULL;
        cudaMalloc(&p, 4096);
        atomic_fetch_add(&mine[0], 1);
        cudaFree(p);
        atomic_fetch_add(&mine[1], 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: rel_exit COUNTS THREADS\n"); return 2; }
    int n = atoi(argv[2]);
    if (n < 1 || n > MAX_THREADS) return 2;
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) { perror(argv[1]); return 2; }
    counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (counts == MAP_FAILED) return 2;
    for (long i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, (void *)(size_t)i) != 0) return 2;
    }
    for (int i = 0; i < n; i++)
        while (atomic_load(&counts[2 * i + 1]) < 2000) sched_yield();
    exit(0);
}
