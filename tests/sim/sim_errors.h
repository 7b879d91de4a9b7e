/* sim_errors.h - result-code names and messages shared by the simulated driver and runtime
 * (test fixture). Codes are the same numbers in CUresult and cudaError_t for every entry here
 * except where a runtime name is given separately. */
#ifndef VT_SIM_ERRORS_H
#define VT_SIM_ERRORS_H

typedef struct sim_errinfo { int code; const char *cu; const char *rt; const char *msg; } sim_errinfo;

static const sim_errinfo sim_errtab[] = {
    {0, "CUDA_SUCCESS", "cudaSuccess", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "cudaErrorInvalidValue", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "cudaErrorInitializationError", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "cudaErrorCudartUnloading", "driver shutting down"},
    {9, NULL, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {12, NULL, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {17, NULL, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {21, NULL, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {35, NULL, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version"},
    {98, NULL, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {100, "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "cudaErrorInvalidDevice", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "cudaErrorInvalidKernelImage", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "cudaErrorDeviceUninitialized", "invalid device context"},
    {208, "CUDA_ERROR_ALREADY_MAPPED", "cudaErrorAlreadyMapped", "resource already mapped"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device"},
    {211, "CUDA_ERROR_UNMAPPED", NULL, "resource not mapped"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "cudaErrorPeerAccessUnsupported", "peer access is not supported between these two devices"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {401, "CUDA_ERROR_ILLEGAL_STATE", "cudaErrorIllegalState", "the operation cannot be performed in the present state"},
    {500, "CUDA_ERROR_NOT_FOUND", "cudaErrorSymbolNotFound", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "cudaErrorNotReady", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled"},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled"},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "cudaErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "cudaErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "cudaErrorLaunchFailure", "unspecified launch failure"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "cudaErrorNotSupported", "operation not supported"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "cudaErrorStreamCaptureWrongThread", "operation not permitted on an event last recorded in a capturing stream"},
    {999, "CUDA_ERROR_UNKNOWN", "cudaErrorUnknown", "unknown error"},
};

static inline const sim_errinfo *sim_errinfo_find(int code)
{
    for (unsigned i = 0; i < sizeof sim_errtab / sizeof sim_errtab[0]; i++)
        if (sim_errtab[i].code == code) return &sim_errtab[i];
    return 0;
}

#endif
