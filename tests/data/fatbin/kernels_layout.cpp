// kernels_layout.cpp - the expected layouts of kernels.cu's kernels, from the host compiler, not
// from the parser under test: kernels.cu itself is compiled here as host code (its kernels become
// plain functions), and each kernel's argument buffer is laid out as a C struct of its parameter
// types: each at the next offset that is a multiple of alignof(T), sizeof(T) bytes. The only
// device fact used is where the parameter bank starts (EIATTR_PARAM_CBANK of nvcc 13 cubins:
// 0x160 on sm_80, 0x210 on sm_90), which moves a parameter aligned above 16 (k_align's A32).
//   kernels_layout SM   (80 or 90) -> the lines test_fatbin compares: "NAME elf N OFF:SIZE ..."
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __noinline__
struct alignas(8) float2 { float x, y; };
#include "kernels.cu"

static size_t bank;

template <typename... T> static void layout(const char *name, void (*)(T...))
{
    const size_t align[] = { alignof(T)..., 1 }, size[] = { sizeof(T)..., 0 };
    size_t n = sizeof...(T), cur = 0;
    printf("%s elf %zu", name, n);
    for (size_t i = 0; i < n; i++) {
        size_t off = (bank + cur + align[i] - 1) / align[i] * align[i] - bank;
        printf(" %zu:%zu", off, size[i]);
        cur = off + size[i];
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    unsigned sm = argc > 1 ? (unsigned)atoi(argv[1]) : 90;
    bank = sm >= 90 ? 0x210 : 0x160;
    // in the order fatbin_dump prints them (by mangled name)
    layout("_Z5k_bigi3BigPi", k_big);
    layout("_Z5k_mixcsdf3S243Arr2C3x", k_mix);
    layout("_Z6k_manyPiS_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_", k_many);
    layout("_Z6k_nonev", k_none);
    layout("_Z6k_tmplIfLi3EEvPT_S0_", k_tmpl<float, 3>);
    layout("_Z7k_alignc3A326float2c", k_align);
    layout("_Z7k_basicPfi1S", k_basic);
    layout("_Z7k_callsPi", k_calls);
    layout("k_c", k_c);
    return 0;
}
