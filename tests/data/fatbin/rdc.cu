// rdc.cu - a kernel and a __device__ function that is not inlined, built relocatable
// (nvcc -cubin -rdc=true -arch=sm_90 -o rdc_sm90.cubin rdc.cu; make fatbin-fixtures): nvcc 13
// gives helper a global FUNC symbol and its own .nv.info._Z6helperPii section, but only entry
// carries STO_CUDA_ENTRY. Only entry is a kernel (cuModuleGetFunction finds no other).
__device__ __noinline__ int helper(int *p, int n) { return p[n] + n; }
__global__ void entry(int *p, int n) { p[0] = helper(p, n); }
