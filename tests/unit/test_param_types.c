/* test_param_types.c - the top-level parameter types read from kernel names (param_types.h).
 * The mangled names were made by g++ and nvcc (the same Itanium ABI) from the declarations in the
 * comments, and by PyTorch 2.15's libtorch_cuda.so; the expected kinds are those declarations'
 * types, not the parser's output. */
#include <dlfcn.h>
#include <stdint.h>

#include "param_types.h"
#include "resolve.h"
#include "vt_test.h"

#define A VT_PT_ARITH
#define P VT_PT_POINTER
#define C VT_PT_CLASS
#define O VT_PT_OTHER

struct named { const char *mangled, *decl; int n; uint8_t kinds[12]; };
static const struct named names[] = {
    { "_Z5scalePflid", "scale(float *, long, int, double)", 4, { P, A, A, A } },
    { "_Z2tkIlEvT_PS0_y", "tk<long>(T, T *, unsigned long long): T_ is long", 3, { A, P, A } },
    { "_Z2tkI1SEvT_PS1_y", "tk<S>(T, T *, unsigned long long): T_ is a struct", 3, { C, P, A } },
    { "_Z2ks1SlS_mmPKS_", "ks(S, int64_t, S, uint64_t, size_t, const S *): S_ is the struct", 6, { C, A, C, A, A, P } },
    { "_ZN12_GLOBAL__N_14anonElPf", "(anonymous namespace)::anon(long, float *)", 2, { A, P } },
    { "_Z2lkIZ4uservEUlfE_EviT_", "lk<user()::lambda(float)>(int, F): F is a closure", 2, { A, C } },
    { "_Z2fpPFvilEl", "fp(void (*)(int, long), long)", 2, { P, A } },
    { "_Z3tpl1AILi4EEN2ns3OffIlEElbhscne", "tpl(A<4>, ns::Off<long>, long, bool, unsigned char, short, char, __int128, long double)",
      9, { C, C, A, A, A, A, A, A, A } },
    { "_Z3twoIKlPfEvT_T0_S2_S3_", "two<const long, float *>(T, U, T, U)", 4, { A, P, A, P } },
    { "_Z4nonev", "none()", 0, { 0 } },
    { "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIbNS0_9MinMaxOpsIbbiEEjbLi4ELi4EEEEEvT1_",
      "PyTorch reduce_kernel<512, 1, ReduceOp<...>>(R)", 1, { C } },
    { "_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_16flip_kernel_implINS0_10OpaqueTypeILi16EEEEEvRNS_14TensorIteratorEEUliE_EEvlT1_",
      "PyTorch index_elementwise_kernel<128, 4, lambda(int)>(int64_t, func_t)", 2, { A, C } },
    { "_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_10AbsFunctorIN3c1011Float8_e5m2EEESt5arrayIPcLm2EELb0EEEviT0_T1_",
      "PyTorch vectorized_elementwise_kernel<2, AbsFunctor, std::array<char *, 2>, false>(int, func_t, array_t)", 3, { A, C, C } },
};

static void check_kinds(const char *what, int got, const uint8_t *kinds, int n, const uint8_t *want)
{
    char g[64] = "", w[64] = "";
    static const char letter[] = { [VT_PT_OTHER] = 'O', [VT_PT_ARITH] = 'A', [VT_PT_POINTER] = 'P', [VT_PT_CLASS] = 'C' };
    for (int i = 0; i < got && i < 60; i++) g[i] = kinds[i] < 4 ? letter[kinds[i]] : '?';
    for (int i = 0; i < n && i < 60; i++) w[i] = letter[want[i]];
    VT_CHECK(got == n && !strcmp(g, w), "%s: %d parameters %s (want %d %s)", what, got, g, n, w);
}

int main(void)
{
    uint8_t k[16];
    /* the parser alone, on demangled text as libstdc++ writes it */
    static const struct { const char *text; int n; uint8_t kinds[8]; } texts[] = {
        { "scale(float*, long, int, double)", 4, { P, A, A, A } },
        { "void k<long const>(long const, char const*)", 2, { A, P } },
        { "(anonymous namespace)::k()", 0, { 0 } },
        { "k(Foo<(1>2), int>, unsigned long)", 2, { C, A } },
        { "k(std::array<char*, 2ul>, float)", 2, { C, A } },
        { "k(void (*)(int, long), int)", 2, { P, A } },
        { "k(int (&) [4], long)", 2, { O, A } },
        { "k(enum_t, signed char, wchar_t, char16_t)", 4, { C, A, A, A } },
        { "k(int (*) [4], decltype(nullptr), Foo<int>*, Foo<int>)", 4, { P, A, P, C } },
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        check_kinds(texts[i].text, vt_param_types_parse(texts[i].text, k, 16), k, texts[i].n, texts[i].kinds);
    /* no signature, or one it cannot be sure of: unknown, never a guess */
    static const char *const bad[] = { "", "k", "k(", "k)", "k(long,, int)", "k(Foo<int, long)", "k(a>b)x", "scale_kernel" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        VT_CHECK_EQ_INT(vt_param_types_parse(bad[i], k, 16), -1, bad[i]);
    VT_CHECK_EQ_INT(vt_param_types_parse("k(long, long, long)", k, 2), -1, "more parameters than room: unknown");
    VT_CHECK_EQ_INT(vt_param_types_parse(NULL, k, 2), -1, "NULL");

    /* mangled names, through the C++ runtime's demangler: loaded here, so the first lookup (none
     * loaded yet in this C program, unless a library pulled it in) must not be remembered as absent.
     * Loaded RTLD_LOCAL, as a Python process has it (a dependency of PyTorch's libraries): not in
     * the global scope, where dlsym(RTLD_DEFAULT) looks. */
    VT_CHECK_EQ_INT(vt_param_types_of("scale", k, 16), -1, "an extern \"C\" name says nothing");
    /* (a sanitizer runtime brings the C++ runtime into the global scope: then only the global
     * lookup is exercised) */
    int global = vt_real_dlsym(RTLD_DEFAULT, "__cxa_demangle") != NULL;
    if (!global) VT_CHECK_EQ_INT(vt_param_types_of("_Z5scalePflid", k, 16), -1, "no C++ runtime loaded: unknown");
    void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    VT_CHECK(cxx != NULL, "libstdc++.so.6 loads (%s)", cxx ? "yes" : dlerror());
    if (!global) VT_CHECK(!vt_real_dlsym(RTLD_DEFAULT, "__cxa_demangle"), "... locally: the global scope does not have it");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        check_kinds(names[i].decl, vt_param_types_of(names[i].mangled, k, 16), k, names[i].n, names[i].kinds);
    VT_CHECK_EQ_INT(vt_param_types_of("_Z5scalePfl", k, 1), -1, "two parameters, room for one: unknown");
    VT_CHECK_EQ_INT(vt_param_types_of("_Zbroken", k, 16), -1, "a name the demangler refuses: unknown");
    return vt_test_finish();
}
