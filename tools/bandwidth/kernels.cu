// kernels.cu - BabelStream-style device-memory kernels for `vramtrace bandwidth`.
// Not compiled into the CLI: mk/bandwidth.mk turns it into kernels.ptx (nvcc -ptx -arch=compute_80,
// then the PTX ISA is lowered to .version 7.0 so any driver since CUDA 11.0 JITs it), and the
// committed kernels.ptx is embedded as a C string. Edit this file, then `make bandwidth-ptx`.
//
// Every kernel: float4 (128-bit ld.global.v4 / st.global.v4) elements, grid-stride loop over
// n4 = bytes/16 elements, four independent elements per thread per iteration (so each thread has
// four 128-bit loads in flight), then a tail loop. Launched with blockDim 256 and grid =
// SM count x resident blocks per SM, so every SM is full and each thread streams many elements.
// extern "C" keeps the names unmangled for cuModuleGetFunction.

#define VT_UNROLL 4

extern "C" __global__ void __launch_bounds__(256)
vt_bw_read(const float4 *__restrict__ a, float *__restrict__ out, unsigned long long n4)
{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    float4 s0 = make_float4(0.f, 0.f, 0.f, 0.f), s1 = s0, s2 = s0, s3 = s0;
    for (; i + 3 * stride < n4; i += VT_UNROLL * stride) {
        float4 v0 = a[i], v1 = a[i + stride], v2 = a[i + 2 * stride], v3 = a[i + 3 * stride];
        s0.x += v0.x; s0.y += v0.y; s0.z += v0.z; s0.w += v0.w;
        s1.x += v1.x; s1.y += v1.y; s1.z += v1.z; s1.w += v1.w;
        s2.x += v2.x; s2.y += v2.y; s2.z += v2.z; s2.w += v2.w;
        s3.x += v3.x; s3.y += v3.y; s3.z += v3.z; s3.w += v3.w;
    }
    for (; i < n4; i += stride) {
        float4 v = a[i];
        s0.x += v.x; s0.y += v.y; s0.z += v.z; s0.w += v.w;
    }
    float s = (s0.x + s0.y + s0.z + s0.w) + (s1.x + s1.y + s1.z + s1.w)
            + (s2.x + s2.y + s2.z + s2.w) + (s3.x + s3.y + s3.z + s3.w);
    // One value per block, so the loads cannot be optimised away.
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    __shared__ float warp_sums[32];
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < (blockDim.x + 31) / 32 ? warp_sums[threadIdx.x] : 0.f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) out[blockIdx.x] = s;
    }
}

extern "C" __global__ void __launch_bounds__(256)
vt_bw_write(float4 *__restrict__ a, float x, unsigned long long n4)
{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const float4 v = make_float4(x, x, x, x);
    for (; i + 3 * stride < n4; i += VT_UNROLL * stride) {
        a[i] = v; a[i + stride] = v; a[i + 2 * stride] = v; a[i + 3 * stride] = v;
    }
    for (; i < n4; i += stride) a[i] = v;
}

extern "C" __global__ void __launch_bounds__(256)
vt_bw_copy(const float4 *__restrict__ a, float4 *__restrict__ c, unsigned long long n4)
{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (; i + 3 * stride < n4; i += VT_UNROLL * stride) {
        float4 v0 = a[i], v1 = a[i + stride], v2 = a[i + 2 * stride], v3 = a[i + 3 * stride];
        c[i] = v0; c[i + stride] = v1; c[i + 2 * stride] = v2; c[i + 3 * stride] = v3;
    }
    for (; i < n4; i += stride) c[i] = a[i];
}

__device__ __forceinline__ float4 vt_fma4(float4 b, float s, float4 c)
{
    return make_float4(b.x + s * c.x, b.y + s * c.y, b.z + s * c.z, b.w + s * c.w);
}

// a[i] = b[i] + s * c[i]
extern "C" __global__ void __launch_bounds__(256)
vt_bw_triad(float4 *__restrict__ a, const float4 *__restrict__ b, const float4 *__restrict__ c,
            float s, unsigned long long n4)
{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (; i + 3 * stride < n4; i += VT_UNROLL * stride) {
        float4 b0 = b[i], b1 = b[i + stride], b2 = b[i + 2 * stride], b3 = b[i + 3 * stride];
        float4 c0 = c[i], c1 = c[i + stride], c2 = c[i + 2 * stride], c3 = c[i + 3 * stride];
        a[i] = vt_fma4(b0, s, c0);
        a[i + stride] = vt_fma4(b1, s, c1);
        a[i + 2 * stride] = vt_fma4(b2, s, c2);
        a[i + 3 * stride] = vt_fma4(b3, s, c3);
    }
    for (; i < n4; i += stride) a[i] = vt_fma4(b[i], s, c[i]);
}
