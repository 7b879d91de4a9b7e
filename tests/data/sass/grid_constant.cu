// grid_constant.cu - kernels whose SASS read a __grid_constant__ parameter at a computed index
// (tests/unit/test_sass.c). grid_constant.sm_90.sass is `nvdisasm -c` (nvdisasm 13.5, from PyPI's
// nvidia-cuda-nvdisasm) of `nvcc -cubin -arch=sm_90 -o grid_constant.cubin grid_constant.cu`
// (nvcc 13.0); regenerate both together. What each kernel uses as an address, from this source:
struct Table { float *ptrs[4]; };                  // 0, 8, 16, 24
// t.ptrs[i], read in place (a __grid_constant__ is never copied: LDC c[0x0][R+0x210]): any of the
// four (0..31); i (32) only picks which, scaled into the constant bank's offset; out (40) an address
extern "C" __global__ void pick_const(const __grid_constant__ Table t, int i, float *out) { out[0] = t.ptrs[i][threadIdx.x]; }
// the pointer at byte off of t (a byte offset, as offsetof gives): t (0..31) is read at R0+0x210
// with R0 = off itself (no scaling), and the pointer read is the address; off (32) only picks the
// place; out (40) an address
extern "C" __global__ void at_offset(const __grid_constant__ Table t, int off, float *out) { out[0] = **(float *const *)((const char *)&t + off); }
