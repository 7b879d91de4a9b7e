/* rt.h - internals of the simulated CUDA runtime (libcudart.so.13 stand-in; a TEST FIXTURE).
 *
 * Like the real libcudart, the runtime never links the driver: rt_init() dlopens libcuda.so.1,
 * dlsyms cuGetProcAddress_v2 and fetches every driver entry point listed in RT_DRV_LIST through
 * it (once with CU_GET_PROC_ADDRESS_DEFAULT into rt_d, once with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM into rt_dpt for the _ptsz/_ptds exports).
 */
#ifndef VT_SIM_RT_H
#define VT_SIM_RT_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaProfiler.h>

#pragma GCC visibility push(hidden)

#define RT_MAX_DEV 64
#define RT_VERSION 13000

/* every driver function the runtime calls, by the base name cudart asks cuGetProcAddress for */
#define RT_DRV_LIST(X) \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) \
    X(cuDeviceTotalMem) X(cuDeviceGetAttribute) X(cuDeviceGetUuid) X(cuDeviceCanAccessPeer) \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxReset) X(cuCtxSetCurrent) X(cuCtxGetCurrent) \
    X(cuCtxSynchronize) X(cuCtxEnablePeerAccess) X(cuCtxDisablePeerAccess) X(cuCtxGetLimit) \
    X(cuCtxSetLimit) X(cuMemAlloc) X(cuMemAllocPitch) X(cuMemFree) X(cuMemAllocManaged) \
    X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemHostRegister) X(cuMemHostUnregister) \
    X(cuMemHostGetDevicePointer) X(cuMemGetInfo) X(cuMemcpy) X(cuMemcpyAsync) X(cuMemcpyHtoD) \
    X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) \
    X(cuMemcpyPeer) X(cuMemcpyPeerAsync) X(cuMemcpy2D) X(cuMemcpy2DAsync) X(cuMemsetD8) \
    X(cuMemsetD8Async) X(cuPointerGetAttributes) X(cuStreamCreateWithPriority) X(cuStreamDestroy) \
    X(cuStreamSynchronize) X(cuStreamQuery) X(cuStreamWaitEvent) X(cuEventCreate) X(cuEventRecord) \
    X(cuEventRecordWithFlags) X(cuEventQuery) X(cuEventSynchronize) X(cuEventElapsedTime) \
    X(cuEventDestroy) X(cuModuleLoadData) X(cuModuleGetFunction) X(cuLaunchKernel) X(cuLaunchCooperativeKernel) \
    X(cuFuncGetParamInfo) X(cuFuncGetAttribute) X(cuStreamBeginCapture) X(cuStreamEndCapture) \
    X(cuStreamIsCapturing) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphDestroy) \
    X(cuGraphExecDestroy) X(cuGetProcAddress) X(cuLibraryLoadData) X(cuLibraryGetKernel) \
    X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemAllocFromPoolAsync) X(cuMemPoolCreate) \
    X(cuMemPoolDestroy) X(cuMemPoolTrimTo) X(cuMemPoolSetAttribute) X(cuMemPoolGetAttribute) \
    X(cuDeviceGetDefaultMemPool) X(cuDeviceGetMemPool) X(cuDeviceSetMemPool) X(cuIpcGetMemHandle) \
    X(cuIpcOpenMemHandle) X(cuIpcCloseMemHandle) X(cuGraphCreate) X(cuGraphAddMemAllocNode) \
    X(cuGraphAddMemFreeNode) X(cuGraphAddKernelNode) X(cuGraphKernelNodeSetParams) \
    X(cuGraphExecKernelNodeSetParams) X(cuGraphExecUpdate) X(cuGraphAddNode) X(cuGraphNodeSetParams) \
    X(cuGraphExecNodeSetParams) X(cuGraphAddChildGraphNode) X(cuGraphExecChildGraphNodeSetParams) \
    X(cuCtxGetStreamPriorityRange) X(cuStreamGetPriority) X(cuStreamGetCaptureInfo) \
    X(cuStreamUpdateCaptureDependencies) X(cuThreadExchangeStreamCaptureMode) X(cuLaunchHostFunc) \
    X(cuStreamAddCallback) X(cuDeviceGetPCIBusId) X(cuIpcGetEventHandle) X(cuIpcOpenEventHandle) \
    X(cuKernelSetAttribute) X(cuMemPoolSetAccess) X(cuProfilerStart) X(cuProfilerStop) \
    X(cuUserObjectCreate) X(cuUserObjectRetain) X(cuUserObjectRelease) X(cuGraphRetainUserObject) \
    X(cuGraphReleaseUserObject) X(cuDeviceGetGraphMemAttribute) X(cuDeviceSetGraphMemAttribute) \
    X(cuMemPrefetchAsync) X(cuMemAdvise) X(cuDeviceGetP2PAttribute) X(cuModuleGetGlobal) \
    X(cuLibraryLoadFromFile) X(cuLibraryUnload) X(cuLibraryGetKernelCount) X(cuLibraryEnumerateKernels) \
    X(cuLibraryGetGlobal) X(cuLibraryGetManaged) X(cuLibraryGetUnifiedFunction) X(cuKernelGetFunction) \
    X(cuGraphAddMemcpyNode) X(cuGraphAddMemsetNode) X(cuGraphGetNodes) X(cuGraphNodeGetDependencies) \
    X(cuGraphUpload) X(cuGraphConditionalHandleCreate) X(cuStreamBeginCaptureToGraph) X(cuGraphKernelNodeGetParams) \
    X(cuGraphInstantiateWithParams) X(cuGraphClone) X(cuGraphNodeFindInClone) X(cuGraphMemcpyNodeSetParams) \
    X(cuGraphExecMemcpyNodeSetParams) X(cuGraphMemsetNodeSetParams) X(cuGraphExecMemsetNodeSetParams)

typedef struct rt_driver {
#define RT_FIELD(name) __typeof__(name) *name;
    RT_DRV_LIST(RT_FIELD)
#undef RT_FIELD
} rt_driver;

extern rt_driver rt_d;    /* CU_GET_PROC_ADDRESS_DEFAULT */
extern rt_driver rt_dpt;  /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
extern int rt_ndev;
extern CUcontext rt_primary[RT_MAX_DEV];

/* Load the driver, cuInit, and make the calling thread's device current (retaining its primary
 * context). Returns cudaSuccess or the error to hand back. */
cudaError_t rt_enter(void);
/* The runtime's entry (the host stub) of a kernel's CUfunction on any device; NULL: not one of
 * the runtime's (a driver module's kernel). */
const void *rt_entry_of_function(CUfunction cf);
int rt_cur_dev(void);
/* Record a result as the thread's last error (when non-zero) and return it. */
cudaError_t rt_ret(cudaError_t e);
cudaError_t rt_err(CUresult r);        /* CUresult -> cudaError_t */
#define RT_ENTER() do { cudaError_t e_ = rt_enter(); if (e_) return rt_ret(e_); } while (0)
#define RT_CALL(expr) return rt_ret(rt_err(expr))

/* rt_mem.c: cudaMemcpy[Async] by kind, through driver table d (the symbol copies use it too) */
cudaError_t rt_copy(const rt_driver *d, void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                    cudaStream_t s, int async);
/* rt_launch.c: forget modules loaded into dev (cudaDeviceReset) */
void rt_forget_modules(int dev);
CUcontext rt_ctx_of(int dev); /* primary context of dev (retained), NULL if invalid */

#pragma GCC visibility pop
#endif
