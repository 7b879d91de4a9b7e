// graph_threads.cu - graphs replayed on four threads at once while the main thread keeps making and
// destroying graphs of its own (tests/cases/graph_threads.sh; issue 48). Each worker captures 16
// launches of scale() on its own buffer into a graph and replays it 500 times: 8000 kernel nodes
// run per worker. The main thread meanwhile captures 2 launches, instantiates, launches once and
// destroys, 50 times. Expected: 4 x 500 x 16 + 50 x 2 = 32100 replayed kernel nodes, 4 x 16 + 50 x 2
// = 164 captured launches, every call succeeds, and the run ends (graph destruction must not wait
// behind replays that never pause).
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>

__global__ void scale(float *p, float f) { p[threadIdx.x] *= f; }

#define WORKERS 4
#define REPLAYS 500
#define NODES 16
#define MAIN_GRAPHS 50

static int capture(cudaStream_t s, float *p, int n, cudaGraphExec_t *exec)
{
    cudaGraph_t g = NULL;
    int rc = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    for (int i = 0; i < n; i++) scale<<<1, 32, 0, s>>>(p, 1.0f);
    rc |= cudaStreamEndCapture(s, &g);
    rc |= cudaGraphInstantiate(exec, g, 0);
    rc |= cudaGraphDestroy(g);
    return rc;
}

static void *worker(void *arg)
{
    int *rc = (int *)arg;
    cudaStream_t s;
    float *p = NULL;
    cudaGraphExec_t exec;
    *rc = cudaStreamCreate(&s) | cudaMalloc(&p, 4096);
    *rc |= capture(s, p, NODES, &exec);
    for (int r = 0; r < REPLAYS && !*rc; r++) *rc |= cudaGraphLaunch(exec, s);
    *rc |= cudaStreamSynchronize(s) | cudaGraphExecDestroy(exec) | cudaFree(p) | cudaStreamDestroy(s);
    return NULL;
}

int main(void)
{
    pthread_t th[WORKERS];
    int rcs[WORKERS] = { 0 };
    for (int i = 0; i < WORKERS; i++) pthread_create(&th[i], NULL, worker, &rcs[i]);
    cudaStream_t s;
    float *p = NULL;
    int rc = cudaStreamCreate(&s) | cudaMalloc(&p, 4096);
    for (int i = 0; i < MAIN_GRAPHS && !rc; i++) {
        cudaGraphExec_t exec;
        rc |= capture(s, p, 2, &exec);
        rc |= cudaGraphLaunch(exec, s);
        rc |= cudaGraphExecDestroy(exec);
    }
    rc |= cudaStreamSynchronize(s) | cudaFree(p) | cudaStreamDestroy(s);
    for (int i = 0; i < WORKERS; i++) { pthread_join(th[i], NULL); rc |= rcs[i]; }
    printf("rc=%d\n", rc);
    return 0;
}
