/* sim_procaddr.c - driver-API test of the simulated libcuda.so.1 (tests/cases/sim_device.sh):
 * dlopen + cuGetProcAddress_v2 routing, then a driver-only alloc/copy/launch-free round trip. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) { printf("dlopen=0\n"); return 1; }
    gpa_t gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    void *p = NULL, *q = NULL;
    CUresult r = gpa("cuMemAlloc", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    printf("memalloc_v2=%d\n", r == CUDA_SUCCESS && p == dlsym(h, "cuMemAlloc_v2"));
    gpa("cuMemGetInfo", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    printf("meminfo_v2=%d\n", p == dlsym(h, "cuMemGetInfo_v2"));
    gpa("cuGetProcAddress", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    printf("self=%d\n", p == (void *)gpa);
    gpa("cuLaunchKernel", &q, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
    printf("ptsz=%d\n", q == dlsym(h, "cuLaunchKernel_ptsz") && q != NULL);
    p = (void *)1;
    r = gpa("cuNoSuchFunction", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    printf("unknown=%d\n", r == CUDA_ERROR_NOT_FOUND && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && !p);

    CUresult (*init)(unsigned) = (CUresult (*)(unsigned))dlsym(h, "cuInit");
    CUresult (*retain)(CUcontext *, CUdevice) = (CUresult (*)(CUcontext *, CUdevice))dlsym(h, "cuDevicePrimaryCtxRetain");
    CUresult (*setcur)(CUcontext) = (CUresult (*)(CUcontext))dlsym(h, "cuCtxSetCurrent");
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*attr)(void *, CUpointer_attribute, CUdeviceptr);
    gpa("cuMemAlloc", (void **)&alloc, 13000, 0, &st);
    gpa("cuMemcpyHtoD", (void **)&htod, 13000, 0, &st);
    gpa("cuMemcpyDtoH", (void **)&dtoh, 13000, 0, &st);
    gpa("cuPointerGetAttribute", (void **)&attr, 13000, 0, &st);
    CUcontext ctx;
    CUdeviceptr d;
    char in[64] = "driver round trip", out[64] = {0};
    printf("before_init=%d\n", alloc(&d, 64));
    init(0);
    retain(&ctx, 0);
    setcur(ctx);
    printf("alloc=%d\n", alloc(&d, 64));
    htod(d, in, sizeof in);
    dtoh(out, d, sizeof out);
    printf("drv_roundtrip=%d\n", strcmp(in, out) == 0);
    unsigned type = 0;
    printf("attr_dev=%d\n", attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d) == CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE);
    printf("attr_unknown=%d\n", (int)attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(size_t)out));
    return 0;
}
