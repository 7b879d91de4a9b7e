/* test_bandwidth_abi.c - checks tools/bandwidth/cuda_min.h against the CUDA toolkit's cuda.h:
 * every dlsym'd function's signature and every attribute/JIT constant. Compile-time checks; the
 * binary only reports them. Skips when the toolkit headers are absent (VT_HAVE_CUDA_H unset). */
#include "vt_test.h"

#ifdef VT_HAVE_CUDA_H
#include <cuda.h>
#define VT_CUDA_MIN_NO_TYPES
#include "bandwidth/cuda_min.h"

/* cuda.h maps some names to versioned entry points (cuEventElapsedTime -> _v2): &name below
 * expands the same way, which is what the driver lookup in gpu.c prefers. */
#define VT_ABI_CHECK(name, ret, params) \
    _Static_assert(__builtin_types_compatible_p(vt_pfn_##name, __typeof__(&name)), #name " signature");
VT_CUDA_FUNCS(VT_ABI_CHECK)

_Static_assert(VT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "attr 16");
_Static_assert(VT_CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE == CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "attr 36");
_Static_assert(VT_CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH == CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "attr 37");
_Static_assert(VT_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE == CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "attr 38");
_Static_assert(VT_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR ==
               CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, "attr 39");
_Static_assert(VT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "75");
_Static_assert(VT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "76");
_Static_assert(VT_CU_JIT_ERROR_LOG_BUFFER == CU_JIT_ERROR_LOG_BUFFER, "jit 5");
_Static_assert(VT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, "jit 6");
_Static_assert(VT_CUDA_ERROR_STUB_LIBRARY == CUDA_ERROR_STUB_LIBRARY, "err 34");
_Static_assert(VT_CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE, "err 100");
_Static_assert(sizeof(CUdeviceptr) == sizeof(unsigned long long), "CUdeviceptr is 64-bit");
/* cuda_min.h declares these enums as int (without cuda.h the signatures above use int). */
_Static_assert(sizeof(CUresult) == sizeof(int) && sizeof(CUdevice_attribute) == sizeof(int) &&
               sizeof(CUjit_option) == sizeof(int) && sizeof(CUdevice) == sizeof(int), "enums are int-sized");

int main(void)
{
    VT_CHECK(1, "cuda_min.h signatures and constants match cuda.h %d.%d", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    return vt_test_finish();
}
#else
int main(void)
{
    printf("skip - cuda_min.h ABI check: CUDA toolkit headers not installed\n");
    return 0;
}
#endif
