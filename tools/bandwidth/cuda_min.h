/* cuda_min.h - the few CUDA driver API types, constants and function signatures that
 * `vramtrace bandwidth` uses, declared here so the CLI builds without the CUDA toolkit.
 * Nothing is linked against: every function is looked up with dlsym() in libcuda.so.1 at run
 * time (tools/bandwidth/gpu.c). Values and signatures follow cuda.h of CUDA 13.0;
 * tests/unit/test_bandwidth_abi.c checks them against the real header when it is installed.
 * With VT_CUDA_MIN_NO_TYPES defined (cuda.h already included) only the vt_* names are declared. */
#ifndef VT_CUDA_MIN_H
#define VT_CUDA_MIN_H
#include <stddef.h>

#ifndef VT_CUDA_MIN_NO_TYPES
typedef int CUresult;                       /* enum cudaError_enum; 0 = CUDA_SUCCESS */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;     /* CUdeviceptr_v2 on 64-bit hosts */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef int CUjit_option;               /* enum CUjit_option_enum */
typedef int CUdevice_attribute;         /* enum CUdevice_attribute_enum */
#endif

#define VT_CUDA_SUCCESS                          0
#define VT_CUDA_ERROR_STUB_LIBRARY               34
#define VT_CUDA_ERROR_NO_DEVICE                  100

#define VT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT          16
#define VT_CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE             36  /* kHz */
#define VT_CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH       37  /* bits */
#define VT_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE                 38  /* bytes */
#define VT_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR 39
#define VT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR      75
#define VT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR      76

#define VT_CU_JIT_ERROR_LOG_BUFFER               5
#define VT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES    6

/* X(name looked up with dlsym, return type, parameter list) - one line per driver function.
 * Lookups that fail leave the pointer NULL; gpu.c never calls a NULL pointer. */
#define VT_CUDA_FUNCS(X)                                                                        \
    X(cuInit, CUresult, (unsigned int flags))                                                   \
    X(cuDriverGetVersion, CUresult, (int *version))                                             \
    X(cuGetErrorString, CUresult, (CUresult err, const char **str))                             \
    X(cuGetErrorName, CUresult, (CUresult err, const char **str))                               \
    X(cuDeviceGetCount, CUresult, (int *count))                                                 \
    X(cuDeviceGet, CUresult, (CUdevice *dev, int ordinal))                                      \
    X(cuDeviceGetName, CUresult, (char *name, int len, CUdevice dev))                           \
    X(cuDeviceTotalMem_v2, CUresult, (size_t *bytes, CUdevice dev))                             \
    X(cuDeviceGetAttribute, CUresult, (int *pi, CUdevice_attribute attrib, CUdevice dev))       \
    X(cuDeviceGetPCIBusId, CUresult, (char *busid, int len, CUdevice dev))                      \
    X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *ctx, CUdevice dev))                       \
    X(cuDevicePrimaryCtxRelease_v2, CUresult, (CUdevice dev))                                   \
    X(cuCtxSetCurrent, CUresult, (CUcontext ctx))                                               \
    X(cuCtxSynchronize, CUresult, (void))                                                       \
    X(cuMemGetInfo_v2, CUresult, (size_t *free_bytes, size_t *total_bytes))                     \
    X(cuModuleLoadData, CUresult, (CUmodule *mod, const void *image))                           \
    X(cuModuleLoadDataEx, CUresult, (CUmodule *mod, const void *image, unsigned int nopts,      \
                                     CUjit_option *opts, void **values))                        \
    X(cuModuleUnload, CUresult, (CUmodule mod))                                                 \
    X(cuModuleGetFunction, CUresult, (CUfunction *fn, CUmodule mod, const char *name))          \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, CUresult,                                    \
      (int *blocks, CUfunction fn, int block_size, size_t dyn_smem))                            \
    X(cuLaunchKernel, CUresult, (CUfunction f, unsigned int gx, unsigned int gy,                \
                                 unsigned int gz, unsigned int bx, unsigned int by,             \
                                 unsigned int bz, unsigned int smem, CUstream stream,           \
                                 void **params, void **extra))                                  \
    X(cuMemAlloc_v2, CUresult, (CUdeviceptr *dptr, size_t bytes))                               \
    X(cuMemFree_v2, CUresult, (CUdeviceptr dptr))                                               \
    X(cuMemAllocHost_v2, CUresult, (void **p, size_t bytes))                                    \
    X(cuMemFreeHost, CUresult, (void *p))                                                       \
    X(cuMemcpyHtoDAsync_v2, CUresult, (CUdeviceptr dst, const void *src, size_t n,              \
                                       CUstream stream))                                        \
    X(cuMemcpyDtoHAsync_v2, CUresult, (void *dst, CUdeviceptr src, size_t n, CUstream stream))  \
    X(cuMemcpyDtoDAsync_v2, CUresult, (CUdeviceptr dst, CUdeviceptr src, size_t n,              \
                                       CUstream stream))                                        \
    X(cuStreamCreate, CUresult, (CUstream *stream, unsigned int flags))                         \
    X(cuStreamDestroy_v2, CUresult, (CUstream stream))                                          \
    X(cuStreamSynchronize, CUresult, (CUstream stream))                                         \
    X(cuEventCreate, CUresult, (CUevent *ev, unsigned int flags))                               \
    X(cuEventDestroy_v2, CUresult, (CUevent ev))                                                \
    X(cuEventRecord, CUresult, (CUevent ev, CUstream stream))                                   \
    X(cuEventSynchronize, CUresult, (CUevent ev))                                               \
    X(cuEventElapsedTime, CUresult, (float *ms, CUevent start, CUevent end))

/* The function-pointer types: vt_pfn_cuInit etc. */
#define VT_CUDA_PFN_TYPEDEF(name, ret, params) typedef ret (*vt_pfn_##name) params;
VT_CUDA_FUNCS(VT_CUDA_PFN_TYPEDEF)
#undef VT_CUDA_PFN_TYPEDEF

#endif
