// kernels.cu - kernels whose SASS the report's parameter-use reader (tools/report/sass.c) is held
// to (tests/unit/test_sass.c). kernels.sm_90.sass is `nvdisasm -c` (CUDA 13.2) of
// `nvcc -cubin -arch=sm_90 -o kernels.cubin kernels.cu`; regenerate both together. What each
// kernel uses as an address, from this source (byte offsets in the argument buffer):
struct Slice { float *data; long garbage; };       // data at 0, garbage at 8
struct Table { float *ptrs[4]; };                  // 0, 8, 16, 24
struct Pair { char *base; long off; };             // base at 0, off at 8
struct Stride { long stride; long pad; };          // stride at 0, pad at 8

// s.data (0) and out (16); s.garbage (8) is never read
extern "C" __global__ void gather(Slice s, float *out) { out[threadIdx.x] = s.data[threadIdx.x]; }
// t.ptrs[i] at a computed index: any of the four (0..31); i (32) is an index, out (40) an address
extern "C" __global__ void pick(Table t, int i, float *out) { out[0] = t.ptrs[i][threadIdx.x]; }
// s.data (0) is stored through out (16): the pointer escapes; s.garbage (8) never read
extern "C" __global__ void escape(Slice s, float **out) { *out = s.data; }
// base + off: both are added into the address (0 and 8)
extern "C" __global__ void offset(Pair p) { p.base[p.off + threadIdx.x] = 1; }
// nothing of s is read (0..15); n (16) only compared
extern "C" __global__ void unused(Slice s, int n, float *out) { if (n > 0) out[threadIdx.x] = 0; }
// p (0) is the address; st.stride (8) scales the index (a multiplicand, not an addend); st.pad (16) unread
extern "C" __global__ void strided(float *p, Stride st) { p[threadIdx.x * st.stride] = 0; }
// base (0) and off (256): both in the address, as offset's; the pad between is never read. The
// argument buffer is 258 bytes: its last 4-byte word is only half there, and is the 65th
struct Pad { long w[31]; };                         // 248 bytes
extern "C" __global__ void tail_offset(char *base, Pad pad, short off) { base[off] = 1; }
