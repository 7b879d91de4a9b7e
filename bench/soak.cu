// soak.cu - an hour of a training loop in a minute (bench/run.sh's soak rows; issue 48 slice 4).
//
// Usage: soak LAUNCHES [THREADS]   (THREADS default 4)
// Each thread runs LAUNCHES / THREADS / 100 steps. A step, as a training step does it:
//   - one 16 KiB pageable host-to-device copy (the batch),
//   - 100 launches: 20 rounds of 5 kernels whose code dereferences their pointer arguments (so the
//     launch check has words to check), on the thread's activations,
//   - 10 cudaFree + cudaMalloc pairs through a caching pattern: the step's 10 oldest of 20 live
//     activation buffers freed and allocated again at sizes from a short cycle (64 KiB .. 4 MiB),
//     so LAUNCHES / 10 pairs in all (1 million for 10 million launches),
//   - one 4-byte device-to-host copy (the loss) that the host waits for.
// Prints one line:  SOAK <launches> <alloc+free pairs> <copies> <wall s> <VmHWM kB>
// Works on the simulated device (nvcc -cudart shared) and on a real GPU.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

#include "status_kb.h"
#include <time.h>

#define LIVE 20
#define CHURN 10
#define ROUNDS 20
#define BATCH 16384

__global__ void embed(const float *x, float *h, int n) { if ((int)threadIdx.x < n) h[threadIdx.x] = x[threadIdx.x]; }
__global__ void linear(const float *h, const float *w, float *y, int n) { if ((int)threadIdx.x < n) y[threadIdx.x] = h[threadIdx.x] * w[0]; }
__global__ void act(float *y, int n) { if ((int)threadIdx.x < n) y[threadIdx.x] = y[threadIdx.x] > 0 ? y[threadIdx.x] : 0; }
__global__ void grad(const float *y, const float *h, float *g, int n) { if ((int)threadIdx.x < n) g[threadIdx.x] = y[threadIdx.x] * h[threadIdx.x]; }
__global__ void step_w(float *w, const float *g, float lr, float *loss) { w[0] -= lr * g[0]; loss[0] = g[0]; }

static const size_t sizes[] = { 65536, 262144, 1048576, 4194304, 131072, 2097152 };

struct worker {
    long steps, launches, pairs, copies;
    pthread_t th;
    int failed;
};

static void *run(void *p)
{
    struct worker *w = (struct worker *)p;
    float *act_buf[LIVE], *weights = NULL, *loss = NULL, *batch = NULL;
    char *host = (char *)calloc(1, BATCH);
    int rc = cudaMalloc((void **)&weights, 4096) | cudaMalloc((void **)&loss, 256) | cudaMalloc((void **)&batch, BATCH);
    for (int i = 0; i < LIVE; i++) rc |= cudaMalloc((void **)&act_buf[i], sizes[i % 6]);
    float l = 0;
    for (long s = 0; s < w->steps && !rc; s++) {
        rc |= cudaMemcpy(batch, host, BATCH, cudaMemcpyHostToDevice);
        w->copies++;
        for (int r = 0; r < ROUNDS; r++) {
            float *h = act_buf[r % LIVE], *y = act_buf[(r + 1) % LIVE], *g = act_buf[(r + 2) % LIVE];
            embed<<<1, 64>>>(batch, h, 64);
            linear<<<1, 64>>>(h, weights, y, 64);
            act<<<1, 64>>>(y, 64);
            grad<<<1, 64>>>(y, h, g, 64);
            step_w<<<1, 1>>>(weights, g, 0.01f, loss);
            w->launches += 5;
        }
        for (int i = 0; i < CHURN; i++) { /* the step's oldest activations go, new ones come */
            int at = (int)((s * CHURN + i) % LIVE);
            rc |= cudaFree(act_buf[at]);
            rc |= cudaMalloc((void **)&act_buf[at], sizes[(s + i) % 6]);
            w->pairs++;
        }
        rc |= cudaMemcpy(&l, loss, sizeof l, cudaMemcpyDeviceToHost);
        w->copies++;
    }
    for (int i = 0; i < LIVE; i++) cudaFree(act_buf[i]);
    cudaFree(weights);
    cudaFree(loss);
    cudaFree(batch);
    free(host);
    w->failed = rc != 0;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) { fprintf(stderr, "usage: soak LAUNCHES [THREADS]\n"); return 2; }
    long launches = atol(argv[1]);
    int threads = argc == 3 ? atoi(argv[2]) : 4;
    if (launches < 100 || threads < 1 || threads > 64) { fprintf(stderr, "soak: LAUNCHES >= 100, THREADS 1..64\n"); return 2; }
    struct worker ws[64];
    memset(ws, 0, sizeof ws);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++) {
        ws[i].steps = launches / threads / (5 * ROUNDS);
        pthread_create(&ws[i].th, NULL, run, &ws[i]);
    }
    long l = 0, pairs = 0, copies = 0;
    int failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(ws[i].th, NULL);
        l += ws[i].launches; pairs += ws[i].pairs; copies += ws[i].copies; failed |= ws[i].failed;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (failed) { fprintf(stderr, "soak: a CUDA call failed\n"); return 1; }
    printf("SOAK %ld %ld %ld %.3f %ld\n", l, pairs, copies, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, status_kb("VmHWM"));
    return 0;
}
