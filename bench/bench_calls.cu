// bench_calls.cu - loops CUDA runtime calls and reports host ns per call (bench/run.sh, `make bench`).
//
// Usage: bench_calls OPS THREADS N
//   OPS      comma list of launch2, launch8, launch32 (<<<>>> of a kernel with 2/8/32 arguments,
//            alternating float* and int, whose code reads none of them: the launch check visits no
//            word), launch8u (the 8-argument kernel that dereferences its 4 pointers: 4 words
//            checked per launch), malloc (cudaMalloc + cudaFree of 4 KiB, one pair = one
//            call), memcpy (cudaMemcpy of 4 KiB, pageable host -> device), memcpyfr (the same
//            after 4096 untimed cudaMalloc+cudaFree pairs: the tracer's freed ring is full, as in
//            any long-running program), graph16 (cudaGraphLaunch of a graph captured from 16
//            <<<>>> launches of the 8-argument kernel: each replay re-checks and records 16
//            kernel nodes; N/64 replays)
//   THREADS  comma list of thread counts, e.g. 1,8
//   N        calls per measurement (split evenly across the threads); memcpy and malloc use N/4
// Prints one line per (op, threads):  RESULT <op> <threads> <calls> <core-ns per call>
// where core-ns = wall time of the parallel loop * min(threads, online CPUs) / calls, so a call
// path that scales perfectly reports the same figure at every thread count. Then one line
//   RSS <VmRSS kB> <RssAnon kB> <RssFile kB> <RssShmem kB>    (from /proc/self/status)
// The timed loop is vt_bench_measured() so `valgrind --tool=callgrind
// --toggle-collect=vt_bench_measured` counts instructions of the loop alone (warm-up excluded).
// Works on the simulated device (nvcc -cudart shared) and on a real GPU.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

#include "status_kb.h"
#include <time.h>
#include <unistd.h>

#define BG_ALLOCS 256 /* live allocations during the run: the registry is not trivially small */
#define COPY_BYTES 4096

__global__ void k2(float *p0, int n0) {}
#define P4(a, b) float *p##a, int n##a, float *p##b, int n##b
__global__ void k8(P4(0, 1), P4(2, 3)) {}
__global__ void k8u(P4(0, 1), P4(2, 3)) { p0[n0] = p1[n1] + p2[n2] + p3[n3]; }
__global__ void k32(P4(0, 1), P4(2, 3), P4(4, 5), P4(6, 7), P4(8, 9), P4(10, 11), P4(12, 13), P4(14, 15)) {}

enum op { OP_LAUNCH2, OP_LAUNCH8, OP_LAUNCH32, OP_MALLOC, OP_MEMCPY, OP_MEMCPY_FR, OP_GRAPH16, OP_LAUNCH8U, OP_COUNT };
static const char *const op_names[OP_COUNT] = { "launch2", "launch8", "launch32", "malloc", "memcpy", "memcpyfr", "graph16", "launch8u" };
#define GRAPH_NODES 16

static float *bg[BG_ALLOCS];

struct worker {
    int op;
    long calls;
    float *dev;  /* this thread's copy destination */
    char *host;  /* pageable source */
    cudaStream_t stream;     /* graph16: this thread's stream and graph */
    cudaGraphExec_t exec;
    pthread_barrier_t *start, *done;
    pthread_t th;
    int failed;
};

#define A(i) bg[(i) * 7 % BG_ALLOCS], (i)
static inline int one_call(struct worker *w)
{
    switch (w->op) {
    case OP_LAUNCH2: k2<<<1, 32>>>(A(0)); return 0;
    case OP_LAUNCH8: k8<<<1, 32>>>(A(0), A(1), A(2), A(3)); return 0;
    case OP_LAUNCH8U: k8u<<<1, 32>>>(A(0), A(1), A(2), A(3)); return 0;
    case OP_LAUNCH32:
        k32<<<1, 32>>>(A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9), A(10), A(11), A(12), A(13), A(14), A(15));
        return 0;
    case OP_GRAPH16: return cudaGraphLaunch(w->exec, w->stream) == cudaSuccess ? 0 : -1;
    case OP_MALLOC: {
        void *p = NULL;
        if (cudaMalloc(&p, COPY_BYTES) != cudaSuccess) return -1;
        return cudaFree(p) == cudaSuccess ? 0 : -1;
    }
    default:
        return cudaMemcpy(w->dev, w->host, COPY_BYTES, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
    }
}

/* Two copies of the loop: only the second is counted by callgrind's --toggle-collect. */
extern "C" __attribute__((noinline)) int vt_bench_warm(struct worker *w, long n)
{
    int bad = 0;
    for (long i = 0; i < n; i++) bad |= one_call(w);
    return bad;
}
extern "C" __attribute__((noinline)) int vt_bench_measured(struct worker *w, long n)
{
    int bad = 0;
    for (long i = 0; i < n; i++) bad |= one_call(w);
    return bad;
}

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}
static double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
/* CPU time of every thread of the process: the program's and the tracer's drain thread. */
static double process_cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

static void *worker_main(void *arg)
{
    struct worker *w = (struct worker *)arg;
    w->failed |= vt_bench_warm(w, w->calls / 10 + 100);
    pthread_barrier_wait(w->start);
    w->failed |= vt_bench_measured(w, w->calls);
    pthread_barrier_wait(w->done);
    return NULL;
}

static int measure(int op, int threads, long n)
{
    for (int i = 0; op == OP_MEMCPY_FR && i < 4096; i++) {
        void *p = NULL;
        if (cudaMalloc(&p, COPY_BYTES) != cudaSuccess || cudaFree(p) != cudaSuccess) { fprintf(stderr, "churn failed\n"); return -1; }
    }
    struct worker *ws = (struct worker *)calloc((size_t)threads, sizeof *ws);
    pthread_barrier_t start, done;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&done, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++) {
        ws[i].op = op;
        ws[i].calls = n / threads;
        ws[i].start = &start;
        ws[i].done = &done;
        ws[i].host = (char *)malloc(COPY_BYTES);
        memset(ws[i].host, i, COPY_BYTES);
        if (cudaMalloc((void **)&ws[i].dev, COPY_BYTES) != cudaSuccess) { fprintf(stderr, "cudaMalloc failed\n"); return -1; }
        if (op == OP_GRAPH16) { /* captured once, untimed */
            cudaGraph_t g;
            cudaStreamCreateWithFlags(&ws[i].stream, cudaStreamNonBlocking);
            cudaStreamBeginCapture(ws[i].stream, cudaStreamCaptureModeThreadLocal);
            for (int k = 0; k < GRAPH_NODES; k++) k8<<<1, 32, 0, ws[i].stream>>>(A(0), A(1), A(2), A(3));
            if (cudaStreamEndCapture(ws[i].stream, &g) != cudaSuccess || cudaGraphInstantiate(&ws[i].exec, g, 0) != cudaSuccess) {
                fprintf(stderr, "graph capture failed\n");
                return -1;
            }
            cudaGraphDestroy(g);
        }
        pthread_create(&ws[i].th, NULL, worker_main, &ws[i]);
    }
    pthread_barrier_wait(&start);
    double t0 = now_ns(), c0 = process_cpu_ns();
    pthread_barrier_wait(&done);
    double t1 = now_ns(), c1 = process_cpu_ns();
    long calls = 0;
    int failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(ws[i].th, NULL);
        calls += ws[i].calls;
        failed |= ws[i].failed;
        cudaFree(ws[i].dev);
        free(ws[i].host);
        if (ws[i].exec) { cudaGraphExecDestroy(ws[i].exec); cudaStreamDestroy(ws[i].stream); }
    }
    if (cudaDeviceSynchronize() != cudaSuccess || failed) {
        fprintf(stderr, "bench_calls: %s failed: %s\n", op_names[op], cudaGetErrorString(cudaGetLastError()));
        return -1;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int used = threads < cpus ? threads : (int)cpus;
    /* RESULT op threads calls core-ns/call process-cpu-ns/call */
    printf("RESULT %s %d %ld %.1f %.1f\n", op_names[op], threads, calls, (t1 - t0) * used / (double)calls,
           (c1 - c0) / (double)calls);
    fflush(stdout);
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&done);
    free(ws);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: bench_calls OPS THREADS N\n"); return 2; }
    long n = atol(argv[3]);
    for (int i = 0; i < BG_ALLOCS; i++)
        if (cudaMalloc((void **)&bg[i], 65536) != cudaSuccess) { fprintf(stderr, "cudaMalloc failed\n"); return 1; }
    char ops[256];
    snprintf(ops, sizeof ops, "%s", argv[1]);
    for (char *save = NULL, *o = strtok_r(ops, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
        int op = 0;
        while (op < OP_COUNT && strcmp(op_names[op], o)) op++;
        if (op == OP_COUNT) { fprintf(stderr, "bench_calls: unknown op %s\n", o); return 2; }
        char th[64];
        snprintf(th, sizeof th, "%s", argv[2]);
        for (char *s2 = NULL, *t = strtok_r(th, ",", &s2); t; t = strtok_r(NULL, ",", &s2)) {
            long calls = op == OP_GRAPH16 ? n / 64 : op >= OP_MALLOC && op <= OP_MEMCPY_FR ? n / 4 : n;
            if (measure(op, atoi(t), calls) != 0) return 1;
        }
    }
    printf("RSS %ld %ld %ld %ld\n", status_kb("VmRSS"), status_kb("RssAnon"), status_kb("RssFile"), status_kb("RssShmem"));
    for (int i = 0; i < BG_ALLOCS; i++) cudaFree(bg[i]);
    return 0;
}
