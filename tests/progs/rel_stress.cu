// rel_stress.cu - 16 threads allocate, copy, memset, launch, sync and free on several streams
// (tests/cases/rel_stress.sh). Usage: rel_stress [THREADS] [ITERS]. Each thread prints its own
// counts of successful calls: "tid=T alloc=A free=F copy=C set=S launch=L sync=Y"; last line
// "errors=E".
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

__global__ void k_fill(float *d, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) d[i] = (float)i; }

static int iters = 200;
static cudaStream_t streams[4];
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int errors;

static void *worker(void *arg)
{
    long idx = (long)arg;
    long tid = syscall(SYS_gettid);
    int na = 0, nf = 0, nc = 0, ns = 0, nl = 0, ny = 0, err = 0;
    std::vector<char> host(64 << 10, (char)idx);
    for (int it = 0; it < iters; it++) {
        cudaStream_t s = streams[(idx + it) % 4];
        size_t sz = (size_t)(4096 + ((idx * 7919 + it * 104729) % 61440));
        void *p = nullptr;
        if (cudaMalloc(&p, sz) != cudaSuccess) { err++; continue; }
        na++;
        if (cudaMemcpyAsync(p, host.data(), sz, cudaMemcpyHostToDevice, s) == cudaSuccess) nc++; else err++;
        if (cudaMemsetAsync(p, 0, sz / 2, s) == cudaSuccess) ns++; else err++;
        k_fill<<<1, 64, 0, s>>>((float *)p, (int)(sz / sizeof(float)));
        if (cudaGetLastError() == cudaSuccess) nl++; else err++;
        if (cudaStreamSynchronize(s) == cudaSuccess) ny++; else err++;
        if (cudaMemcpy(host.data(), p, sz, cudaMemcpyDeviceToHost) == cudaSuccess) nc++; else err++;
        if (cudaFree(p) == cudaSuccess) nf++; else err++;
    }
    pthread_mutex_lock(&out_lock);
    printf("tid=%ld alloc=%d free=%d copy=%d set=%d launch=%d sync=%d\n", tid, na, nf, nc, ns, nl, ny);
    errors += err;
    pthread_mutex_unlock(&out_lock);
    return nullptr;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 16;
    if (argc > 2) iters = atoi(argv[2]);
    for (int i = 0; i < 4; i++) cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking);
    std::vector<pthread_t> th((size_t)nthreads);
    for (long i = 0; i < nthreads; i++) pthread_create(&th[(size_t)i], nullptr, worker, (void *)i);
    for (int i = 0; i < nthreads; i++) pthread_join(th[(size_t)i], nullptr);
    for (int i = 0; i < 4; i++) cudaStreamDestroy(streams[i]);
    printf("errors=%d\n", errors);
    return errors ? 1 : 0;
}
