// oom.cu - a "model" that outgrows its GPU, like BERT-large training on a 4 GB card: each layer
// allocates its embeddings, attention weights and activations from a different helper, so the
// call sites differ, until cudaMalloc fails. Prints what failed and how much was live, frees
// everything and exits 0 (the failure is the expected outcome; a non-zero status means the
// program itself broke: 1 = no allocation failed within 1000 layers).
// On the simulated device run with VRAMTRACE_SIM_MEM=4G.
#include <cstdio>
#include <vector>

static std::vector<void *> live;
static size_t live_bytes;

static cudaError_t grab(const char *what, int layer, size_t bytes)
{
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
        size_t f = 0, t = 0;
        cudaMemGetInfo(&f, &t);
        printf("layer %d: cudaMalloc(%s, %zu MiB) failed: %s; live %zu MiB, free %zu of %zu MiB\n",
               layer, what, bytes >> 20, cudaGetErrorString(e), live_bytes >> 20, f >> 20, t >> 20);
        return e;
    }
    live.push_back(p);
    live_bytes += bytes;
    return e;
}

__attribute__((noinline)) static cudaError_t alloc_embeddings(int l) { return grab("embeddings", l, 96ull << 20); }
__attribute__((noinline)) static cudaError_t alloc_attention(int l) { return grab("attention", l, 64ull << 20); }
__attribute__((noinline)) static cudaError_t alloc_activations(int l) { return grab("activations", l, 160ull << 20); }

int main()
{
    int rc = 1;
    for (int layer = 0; layer < 1000; layer++) {
        if ((layer == 0 && alloc_embeddings(layer)) || alloc_attention(layer) || alloc_activations(layer)) {
            rc = 0;
            break;
        }
    }
    cudaGetLastError();
    for (void *p : live) cudaFree(p);
    printf("freed %zu allocations\n", live.size());
    return rc;
}
