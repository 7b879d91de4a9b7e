/* rt_library.c - the simulated runtime's library API (cudaLibrary*, CUDA 12+): context-independent
 * images loaded through the driver's cuLibrary* entry points, as CUDA's runtime does. A
 * cudaLibrary_t is the driver's CUlibrary, a cudaKernel_t from it the driver's CUkernel (a launch
 * resolves it with cuKernelGetFunction: rt_launch.c). Test fixture. */
#include "rt.h"

static cudaError_t lib_err(CUresult r)
{
    return rt_ret(r == CUDA_ERROR_NOT_FOUND ? cudaErrorSymbolNotFound : rt_err(r));
}

cudaError_t cudaLibraryLoadData(cudaLibrary_t *lib, const void *code, enum cudaJitOption *jo, void **jv,
                                unsigned int nj, enum cudaLibraryOption *lo, void **lv, unsigned int nl)
{
    RT_ENTER();
    RT_CALL(rt_d.cuLibraryLoadData((CUlibrary *)lib, code, (CUjit_option *)jo, jv, nj, (CUlibraryOption *)lo, lv, nl));
}

cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *lib, const char *path, enum cudaJitOption *jo, void **jv,
                                    unsigned int nj, enum cudaLibraryOption *lo, void **lv, unsigned int nl)
{
    RT_ENTER();
    RT_CALL(rt_d.cuLibraryLoadFromFile((CUlibrary *)lib, path, (CUjit_option *)jo, jv, nj, (CUlibraryOption *)lo, lv, nl));
}

cudaError_t cudaLibraryUnload(cudaLibrary_t lib) { RT_ENTER(); RT_CALL(rt_d.cuLibraryUnload((CUlibrary)lib)); }

cudaError_t cudaLibraryGetKernel(cudaKernel_t *k, cudaLibrary_t lib, const char *name)
{
    RT_ENTER();
    return lib_err(rt_d.cuLibraryGetKernel((CUkernel *)k, (CUlibrary)lib, name));
}

cudaError_t cudaLibraryGetKernelCount(unsigned int *count, cudaLibrary_t lib)
{
    RT_ENTER();
    RT_CALL(rt_d.cuLibraryGetKernelCount(count, (CUlibrary)lib));
}

cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t *kernels, unsigned int n, cudaLibrary_t lib)
{
    RT_ENTER();
    RT_CALL(rt_d.cuLibraryEnumerateKernels((CUkernel *)kernels, n, (CUlibrary)lib));
}

cudaError_t cudaLibraryGetGlobal(void **p, size_t *bytes, cudaLibrary_t lib, const char *name)
{
    RT_ENTER();
    return lib_err(rt_d.cuLibraryGetGlobal((CUdeviceptr *)p, bytes, (CUlibrary)lib, name));
}

cudaError_t cudaLibraryGetManaged(void **p, size_t *bytes, cudaLibrary_t lib, const char *name)
{
    RT_ENTER();
    return lib_err(rt_d.cuLibraryGetManaged((CUdeviceptr *)p, bytes, (CUlibrary)lib, name));
}

cudaError_t cudaLibraryGetUnifiedFunction(void **fptr, cudaLibrary_t lib, const char *name)
{
    RT_ENTER();
    return lib_err(rt_d.cuLibraryGetUnifiedFunction(fptr, (CUlibrary)lib, name));
}
