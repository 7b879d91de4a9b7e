// Source of the fatbin fixtures in this directory (regenerate: make fatbin-fixtures).
// Expected layouts: kernels_layout.cpp compiles this file as host code (mk/fatbin.mk).
struct S { float *p; int n; };                    // 16 bytes, align 8
struct S24 { float *a; double *b; char c; };       // 24 bytes, align 8
struct Arr { int v[5]; char t; };                  // 24 bytes, align 4
struct C3 { char c[3]; };                          // 3 bytes, align 1
struct alignas(32) A32 { double d[4]; };           // over-aligned: offset differs per arch
struct Big { int v[2000]; };                       // 8000 bytes: EIATTR_KPARAM_INFO_V2 (0x45)
__global__ void k_basic(float *p, int n, S s) { if (n) p[0] = s.n; }
__global__ void k_mix(char c, short h, double d, float f, S24 s, Arr a, C3 b, long long ll)
{ if (c) s.a[0] = d + f + h + a.v[2] + b.c[1] + ll; }
template <typename T, int N> __global__ void k_tmpl(T *p, T v) { p[N] = v; }
template __global__ void k_tmpl<float, 3>(float *, float);
extern "C" __global__ void k_c(int *p, unsigned char u) { p[0] = u; }
__global__ void k_none() {}
#define P(i) int *p##i
__global__ void k_many(P(0), P(1), P(2), P(3), P(4), P(5), P(6), P(7), P(8), P(9), P(10), P(11),
                       P(12), P(13), P(14), P(15), P(16), P(17), P(18), P(19), P(20), P(21), P(22),
                       P(23), P(24), P(25), P(26), P(27), P(28), P(29), P(30), P(31)) { *p0 = *p31; }
__global__ void k_align(char c, A32 x, float2 f2, char e) { if (c) *(float *)0 = x.d[0] + f2.y + e; }
__global__ void k_big(int a, Big b, int *o) { if (a) o[0] = b.v[7]; }
__device__ __noinline__ int dev_fn(int *p, int x) { return p[x] * 3; }
__global__ void k_calls(int *p) { p[0] = dev_fn(p, 1); }
