/* nvrtc_gen.c - real NVRTC output for tests/progs/rel_nvrtc.c: compiles CUDA C++ at run time
 * (NVRTC runs on the CPU) and writes the PTX. Run on its own, without the simulated device: NVRTC
 * opens libcuda.so.1 when it finds one and needs what only the real driver has.
 * Usage: nvrtc_gen A.ptx B.ptx
 *   A: extern "C" scale(float *out, const float *in, float a, int n)
 *   B: extern "C" scale(int n, float a, float *out, const float *in) - the same name, the
 *      parameters in another order
 * Each also has 300 filler kernels, so the PTX is larger than 128 KiB: glibc serves a buffer that
 * size with mmap, and free() unmaps it, so reading it after the free faults. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

static char *build_source(int order_b)
{
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    len += (size_t)snprintf(s + len, cap - len, order_b
        ? "extern \"C\" __global__ void scale(int n, float a, float *out, const float *in)\n"
        : "extern \"C\" __global__ void scale(float *out, const float *in, float a, int n)\n");
    len += (size_t)snprintf(s + len, cap - len,
        "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = a * in[i]; }\n");
    for (int k = 0; k < 300; k++)
        len += (size_t)snprintf(s + len, cap - len,
            "extern \"C\" __global__ void filler_%d(float *p, int n)\n"
            "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = p[i] * %d.0f + %d.5f; }\n", k, k + 2, k);
    return s;
}

static int compile_to(int order_b, const char *path)
{
    char *src = build_source(order_b);
    nvrtcProgram prog;
    if (!src || nvrtcCreateProgram(&prog, src, "scale.cu", 0, NULL, NULL) != NVRTC_SUCCESS) return 1;
    const char *opts[] = { "--gpu-architecture=compute_90" };
    nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
    size_t bytes = 0;
    char *ptx = NULL;
    if (r == NVRTC_SUCCESS && nvrtcGetPTXSize(prog, &bytes) == NVRTC_SUCCESS && (ptx = malloc(bytes)) &&
        nvrtcGetPTX(prog, ptx) == NVRTC_SUCCESS) {
        FILE *f = fopen(path, "w");
        r = f && fwrite(ptx, 1, bytes - 1, f) == bytes - 1 && fclose(f) == 0 ? NVRTC_SUCCESS : NVRTC_ERROR_INTERNAL_ERROR;
    } else if (r == NVRTC_SUCCESS) r = NVRTC_ERROR_INTERNAL_ERROR;
    if (r != NVRTC_SUCCESS) fprintf(stderr, "nvrtc_gen: %s\n", nvrtcGetErrorString(r));
    free(ptx);
    nvrtcDestroyProgram(&prog);
    free(src);
    return r != NVRTC_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: nvrtc_gen A.ptx B.ptx\n"); return 2; }
    return compile_to(0, argv[1]) || compile_to(1, argv[2]);
}
