/* cuda_errors.h - CUDA error names for the report: "CUDA_ERROR_ILLEGAL_ADDRESS" for a driver call
 * (cu*) returning 700, "cudaErrorInsufficientDriver" for a runtime call (cuda*) returning 35 (the
 * two enums differ for some values). Table generated from the toolkit (tools/gen-cuda-errors.py). */
#ifndef VT_REPORT_CUDA_ERRORS_H
#define VT_REPORT_CUDA_ERRORS_H
/* The name of CODE as API's enum says it, or NULL when unknown. */
const char *vt_cuda_error_name(const char *api, long long code);
#endif
