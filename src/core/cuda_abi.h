/* cuda_abi.h - the few CUDA driver/runtime types and constants the tracer needs, declared here so
 * libvramtrace.so builds without the CUDA toolkit. Layouts match cuda.h / driver_types.h of
 * CUDA 12-13 (checked against the 13.0 headers by tests/cases/abi_headers.sh). */
#ifndef VT_CUDA_ABI_H
#define VT_CUDA_ABI_H
#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int cudaError_t;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUstream_st *CUstream;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUgraphExec_st *CUgraphExec;
typedef CUstream cudaStream_t;
typedef CUmemoryPool cudaMemPool_t;
typedef CUgraphExec cudaGraphExec_t;
typedef struct CUkern_st *cudaKernel_t;

typedef struct { unsigned int x, y, z; } vt_dim3;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    CUDA_ERROR_NOT_SUPPORTED = 801,
};
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorNotSupported = 801 };

/* cudaMemcpyKind */
enum { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
       cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };

/* CUmemorytype */
enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2, CU_MEMORYTYPE_ARRAY = 3, CU_MEMORYTYPE_UNIFIED = 4 };

/* CUpointer_attribute */
enum { CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2, CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
       CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
       CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12 };

/* CUdevice_attribute */
enum { CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
       CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88 };

/* cuGetProcAddress flags */
enum { CU_GET_PROC_ADDRESS_DEFAULT = 0, CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2 };

#define VT_CU_LAUNCH_PARAM_END ((void *)0x00)
#define VT_CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define VT_CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)

typedef struct CUDA_MEMCPY2D_st {
    size_t srcXInBytes, srcY;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    size_t dstPitch;
    size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

typedef struct CUlaunchConfig_st {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    void *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

/* cuLaunchCooperativeKernelMultiDevice's list entry (deprecated, still in CUDA 13's cuda.h) */
typedef struct CUDA_LAUNCH_PARAMS_st {
    CUfunction function;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    void **kernelParams;
} CUDA_LAUNCH_PARAMS;

typedef struct cudaLaunchConfig_st {
    vt_dim3 gridDim;
    vt_dim3 blockDim;
    size_t dynamicSmemBytes;
    cudaStream_t stream;
    void *attrs;
    unsigned int numAttrs;
} cudaLaunchConfig_t;

struct cudaPitchedPtr { void *ptr; size_t pitch; size_t xsize; size_t ysize; };
struct cudaExtent { size_t width; size_t height; size_t depth; };
struct cudaPos { size_t x; size_t y; size_t z; };

/* graph memcpy and memset nodes */
struct cudaMemcpy3DParms {
    void *srcArray;
    struct cudaPos srcPos;
    struct cudaPitchedPtr srcPtr;
    void *dstArray;
    struct cudaPos dstPos;
    struct cudaPitchedPtr dstPtr;
    struct cudaExtent extent;
    int kind;
};
typedef struct CUDA_MEMCPY3D_st {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;
/* struct cudaGraphNodeParams / CUgraphNodeParams (CUDA 12.2+): the node type at 0, then a union
 * whose members the tracer reads at these offsets (the same in both): a memcpy node's 3D
 * parameters, a memset node's (a cudaMemsetParams / CUDA_MEMSET_NODE_PARAMS prefix), a child
 * graph node's graph, a conditional node's handle, size and body graphs. */
enum { VT_GRAPH_NODE_KERNEL = 0, VT_GRAPH_NODE_MEMCPY = 1, VT_GRAPH_NODE_MEMSET = 2, VT_GRAPH_NODE_GRAPH = 4,
       VT_GRAPH_NODE_MEM_ALLOC = 10, VT_GRAPH_NODE_MEM_FREE = 11, VT_GRAPH_NODE_CONDITIONAL = 13 };
/* (a memory allocation node's parameters at VT_NODE_PARAMS_ALLOC are CUDA_MEM_ALLOC_NODE_PARAMS v1's
 * layout: v2 is the same struct) */
enum { VT_NODE_PARAMS_MEMCPY = 32, VT_NODE_PARAMS_MEMSET = 16, VT_NODE_PARAMS_CHILD = 16, VT_NODE_PARAMS_COND_HANDLE = 16,
       VT_NODE_PARAMS_COND_SIZE = 28, VT_NODE_PARAMS_COND_GRAPHS = 32, VT_NODE_PARAMS_ALLOC = 16,
       VT_NODE_PARAMS_ALLOC_BYTES = 120, VT_NODE_PARAMS_ALLOC_DPTR = 128, VT_NODE_PARAMS_FREE = 16 };
struct cudaMemsetParams { void *dst; size_t pitch; unsigned int value; unsigned int elementSize; size_t width; size_t height; };
typedef struct CUDA_MEMSET_NODE_PARAMS_st {
    CUdeviceptr dst;
    size_t pitch;
    unsigned int value, elementSize;
    size_t width, height;
} CUDA_MEMSET_NODE_PARAMS;

typedef struct CUmemAllocationProp_st {
    int type;
    int requestedHandleTypes;
    struct { int type; int id; } location;
    void *win32HandleMetaData;
    struct { unsigned char compressionType, gpuDirectRDMACapable; unsigned short usage; unsigned char reserved[4]; } allocFlags;
} CUmemAllocationProp;

#endif
