/* rel_nvrtc.c - the usual NVRTC pattern: PTX compiled at run time in a malloc'd buffer, loaded,
 * and the buffer freed at once, before any launch (tests/cases/check_pointers.sh). The PTX comes
 * from nvrtc_gen.c (real NVRTC output, made beforehand: NVRTC cannot run on the simulated driver),
 * read into a buffer of its size as nvrtcGetPTX would fill one. Usage: rel_nvrtc MODE A.ptx [B.ptx]
 *   data   cuModuleLoadData(ptx), free(ptx), cuModuleGetFunction, launch
 *   lib    cuLibraryLoadData(ptx), free(ptx), cuLibraryGetKernel + cuKernelGetFunction, launch
 *   file   cuModuleLoad(A.ptx copied to a temporary file), the file removed, launch
 *   libfile  the same with cuLibraryLoadFromFile + cuLibraryGetKernel + cuKernelGetFunction
 *   reuse  A loaded from a buffer kept until A has been launched correctly (`in` on the device:
 *          the context stays usable), then the buffer freed and the module unloaded, and B
 *          (kernel scale with its parameters in another order) loaded from the same address,
 *          freed and launched with the host buffer: B's layout must not be A's. The buffers
 *          are mapped, not malloc'd, so that B's surely lands where A's was (malloc often
 *          does the same, not always); printed as reused=1
 * scale is launched with `in` a host buffer: argument 1 of A, argument 3 of B, is a host
 * pointer. Prints "launch=R sync=S" for each launch (S: the sticky error a GPU reports for the
 * bad pointer); exits 0 when every call before the launches succeeded. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The file's text in a malloc'd buffer, NUL-terminated, as nvrtcGetPTX fills one. */
static char *read_ptx(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); return NULL; }
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *buf = malloc(*len + 1);
    if (buf) {
        buf[*len] = '\0';
        if (fread(buf, 1, *len, f) != *len) { free(buf); buf = NULL; }
    }
    fclose(f);
    return buf;
}

static void launch(CUfunction f, int order_b, CUdeviceptr out, float *host_in)
{
    float a = 2.0f;
    int n = 256;
    void *args_a[] = { &out, &host_in, &a, &n };
    void *args_b[] = { &n, &a, &out, &host_in };
    CUresult r = cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, NULL, order_b ? args_b : args_a, NULL);
    CUresult s = cuCtxSynchronize();
    printf("launch=%d sync=%d\n", (int)r, (int)s);
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: rel_nvrtc data|lib|file|libfile|reuse A.ptx [B.ptx]\n"); return 2; }
    const char *mode = argv[1];
    size_t len = 0, len_b = 0;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr out, dev_in;
    CUfunction f;
    CUmodule mod;
    float *host_in = calloc(256, sizeof(float));
    if (!host_in || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuMemAlloc(&out, 256 * sizeof(float)) || cuMemAlloc(&dev_in, 256 * sizeof(float)))
        return 1;
    if (!strcmp(mode, "file") || !strcmp(mode, "libfile")) {
        char *ptx = read_ptx(argv[2], &len), path[] = "/tmp/rel_nvrtc-XXXXXX";
        int fd = mkstemp(path);
        if (!ptx || fd < 0 || write(fd, ptx, len) != (ssize_t)len || close(fd)) return 1;
        free(ptx);
        CUlibrary lib;
        CUkernel kern;
        CUresult r = mode[0] == 'f' ? cuModuleLoad(&mod, path) : cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0);
        unlink(path);
        if (r || (mode[0] == 'f' ? cuModuleGetFunction(&f, mod, "scale")
                                 : (cuLibraryGetKernel(&kern, lib, "scale") || cuKernelGetFunction(&f, kern))))
            return 1;
        launch(f, 0, out, host_in);
        return 0;
    }
    char *ptx = read_ptx(argv[2], &len);
    if (!ptx) return 1;
    if (!strcmp(mode, "lib")) {
        CUlibrary lib;
        CUkernel kern;
        if (cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0)) return 1;
        free(ptx);
        if (cuLibraryGetKernel(&kern, lib, "scale") || cuKernelGetFunction(&f, kern)) return 1;
        launch(f, 0, out, host_in);
        return 0;
    }
    if (strcmp(mode, "reuse")) {
        if (cuModuleLoadData(&mod, ptx)) return 1;
        free(ptx);
        if (cuModuleGetFunction(&f, mod, "scale")) return 1;
        launch(f, 0, out, host_in);
        return 0;
    }
    char *ptx_b = argc > 3 ? read_ptx(argv[3], &len_b) : NULL;
    size_t size = (len > len_b ? len : len_b) + 1;
    char *buf = ptx_b ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
    if (buf == MAP_FAILED) return 1;
    memcpy(buf, ptx, len + 1);
    free(ptx);
    if (cuModuleLoadData(&mod, buf) || cuModuleGetFunction(&f, mod, "scale")) return 1;
    launch(f, 0, out, (float *)(uintptr_t)dev_in);
    if (munmap(buf, size) || cuModuleUnload(mod)) return 1;
    char *same = mmap(buf, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (same == MAP_FAILED) return 1;
    memcpy(same, ptx_b, len_b + 1);
    free(ptx_b);
    printf("reused=%d\n", same == buf);
    if (cuModuleLoadData(&mod, same) || munmap(same, size) || cuModuleGetFunction(&f, mod, "scale")) return 1;
    launch(f, 1, out, host_in);
    return 0;
}
