// fold_mix.cu - a training loop whose launches repeat, for folding steady launches (core/fold.h;
// tests/cases/fold_equiv.sh compares its report with folding on and off). Usage: fold_mix.
// Two threads, each on its own stream, run STEPS = 40 steps inside an NVTX range "step": three
// kernels with three configurations (scale <<<4,128>>>, scale <<<8,64>>>, add <<<4,128>>> with
// 256 bytes of shared memory), a device-to-host copy of 4 KiB on the stream and a stream
// synchronize (the report tells from the copy's next call whether the host waited), and, every
// 10 steps, a snapshot (thread 0); before the kernels, a 2 KiB memset of b on the stream and a
// 4 KiB copy of pinned host memory into a (each thread's own buffers, the same every step). At step 25, thread 0 hands scale a host buffer (one finding;
// that launch keeps its line). Prints "launches=N" (every launch made: 2 x 40 x 3 = 240).
// The threads meet at a barrier after their allocations and again before their frees, so that
// every snapshot sees both threads' buffers (16 KiB), whatever the scheduler does.
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <nvtx3/nvToolsExt.h>
#include <vramtrace/vramtrace.h>

__global__ void scale(float *p, float f) { if (p) p[threadIdx.x] *= f; }
__global__ void add(float *a, const float *b) { if (a && b) a[threadIdx.x] += b[threadIdx.x]; }

enum { STEPS = 40 };
static float host_buf[1024];
static pthread_barrier_t allocated, done;

static void *worker(void *arg)
{
    long id = (long)arg;
    cudaStream_t s;
    cudaStreamCreate(&s);
    float *a, *b, *h, *pin;
    cudaMalloc(&a, 4096);
    cudaMalloc(&b, 4096);
    cudaMallocHost(&pin, 4096);
    h = (float *)malloc(4096);
    pthread_barrier_wait(&allocated);
    for (int step = 0; step < STEPS; step++) {
        nvtxRangePushA("step");
        cudaMemsetAsync(b, 0, 2048, s);
        cudaMemcpyAsync(a, pin, 4096, cudaMemcpyHostToDevice, s);
        scale<<<4, 128, 0, s>>>(id == 0 && step == 25 ? host_buf : a, 2.0f);
        scale<<<8, 64, 0, s>>>(b, 0.5f);
        add<<<4, 128, 256, s>>>(a, b);
        cudaMemcpyAsync(h, a, 4096, cudaMemcpyDeviceToHost, s);
        cudaStreamSynchronize(s);
        if (id == 0 && step % 10 == 9) {
            char label[32];
            snprintf(label, sizeof label, "step %d", step + 1);
            vramtrace_snapshot(label);
        }
        nvtxRangePop();
    }
    pthread_barrier_wait(&done);
    cudaFree(a);
    cudaFree(b);
    cudaFreeHost(pin);
    free(h);
    cudaStreamDestroy(s);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    pthread_barrier_init(&allocated, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("launches=%d\n", 2 * STEPS * 3);
    return 0;
}
