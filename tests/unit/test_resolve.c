/* test_resolve.c - finding real functions (platform/resolve.c): a hook's slot filled once from the
 * next library in load order, or from libcuda/libcudart loaded only locally (a program that
 * dlopen's CUDA); the driver functions the tracer asks for itself, never loading libcuda and
 * answering for more names than its cache holds; C++ names demangled by a runtime loaded locally
 * (PyTorch's case), and nothing for what is no C++ name or when no runtime is loaded.
 * The truth is dlsym on the very handle, and the demangled forms the Itanium C++ ABI defines. */
#include "vt_test.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "resolve.h"

static void test_demangle(void)
{
    VT_CHECK(vt_cxa_demangle(NULL) == NULL, "NULL: nothing");
    VT_CHECK(vt_cxa_demangle("main") == NULL, "a C name: nothing");
    VT_CHECK(vt_cxa_demangle("_") == NULL, "'_': nothing");
    VT_CHECK(vt_cxa_demangle("Z3fooi") == NULL, "no leading underscore: nothing");
    int global = dlsym(RTLD_DEFAULT, "__cxa_demangle") != NULL;
    if (!global) {
        VT_CHECK(vt_cxa_demangle("_Z3fooi") == NULL, "no C++ runtime loaded: nothing");
    }
    /* Loaded locally, as Python loads PyTorch's libraries: not in the global scope. */
    void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("skip - libstdc++.so.6 not found: %s\n", dlerror()); return; }
    if (!global) VT_CHECK(dlsym(RTLD_DEFAULT, "__cxa_demangle") == NULL, "libstdc++ loaded locally is not global");
    static const struct { const char *mangled, *want; } names[] = {
        { "_Z3fooi", "foo(int)" },
        { "_Z10coop_scalePfi", "coop_scale(float*, int)" },
        { "_ZN2ns6kernelIfEEvPT_i", "void ns::kernel<float>(float*, int)" },
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *d = vt_cxa_demangle(names[i].mangled);
        VT_CHECK_EQ_STR(d, names[i].want, names[i].mangled);
        free(d);
    }
    VT_CHECK(vt_cxa_demangle("_Z") == NULL, "'_Z' alone: not a name, nothing");
    VT_CHECK(vt_cxa_demangle("_Zxyz") == NULL, "'_Zxyz': not a name the runtime takes, nothing");
}

static void test_driver(const char *libcuda)
{
    VT_CHECK(vt_real_driver("cuInit") == NULL, "libcuda not loaded: nothing (and not loaded for it)");
    VT_CHECK(dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) == NULL, "... libcuda still not loaded");
    void *h = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("skip - %s: %s\n", libcuda, dlerror()); return; }
    /* More names than the cache's 32: each answers what the library has, cached or not. */
    static const char *const names[] = {
        "cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName",
        "cuDeviceTotalMem_v2", "cuDeviceGetAttribute", "cuCtxPushCurrent_v2", "cuCtxDestroy_v2",
        "cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxGetDevice", "cuCtxSynchronize", "cuMemAlloc_v2",
        "cuMemFree_v2", "cuMemGetInfo_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemsetD8_v2",
        "cuMemAllocHost_v2", "cuMemFreeHost", "cuMemHostRegister_v2", "cuMemHostUnregister",
        "cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuLaunchKernel",
        "cuStreamCreate", "cuStreamDestroy_v2", "cuStreamSynchronize", "cuEventCreate",
        "cuEventRecord", "cuEventSynchronize", "cuEventDestroy_v2", "cuPointerGetAttribute",
        "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuGetErrorName",
    };
    enum { N = sizeof names / sizeof *names };
    int same = 0, again = 0, found = 0;
    for (int i = 0; i < N; i++) {
        void *want = dlsym(h, names[i]);
        found += want != NULL;
        same += vt_real_driver(names[i]) == want;
    }
    for (int i = 0; i < N; i++) {
        char copy[64];   /* the same name at another address: found by its text */
        snprintf(copy, sizeof copy, "%s", names[i]);
        again += vt_real_driver(copy) == dlsym(h, names[i]);
    }
    VT_CHECK_EQ_INT(found, N, "the simulated libcuda has every name asked");
    VT_CHECK_EQ_INT(same, N, "vt_real_driver answers dlsym's pointer for each of 38 names (cache 32)");
    VT_CHECK_EQ_INT(again, N, "and again, asked by a copy of each name");
    VT_CHECK(vt_real_driver("cuNoSuchFunction") == NULL, "a name libcuda lacks: nothing");

    /* A hook's slot: libcuda reached only through dlopen is not next in load order; the lookup
     * finds it by its soname, stores it once, and the slot then answers. */
    static vt_real_slot slot;
    void *want = dlsym(h, "cuMemAlloc_v2");
    VT_CHECK(vt_real_get(&slot, "cuMemAlloc_v2") == want && atomic_load(&slot) == want,
             "a hook's slot filled from a locally loaded libcuda");
    VT_CHECK(vt_real_get(&slot, "cuMemFree_v2") == want, "a filled slot is not looked up again");
    static vt_real_slot libc_slot;
    VT_CHECK(vt_real_get(&libc_slot, "getpid") == dlsym(RTLD_NEXT, "getpid") && atomic_load(&libc_slot) != NULL,
             "a libc function: the next definition in load order");
    static vt_real_slot none;
    VT_CHECK(vt_real_get(&none, "cuNoSuchFunction") == NULL && atomic_load(&none) == NULL,
             "a name nobody has: nothing, the slot left empty");
    VT_CHECK(vt_real_dlsym(RTLD_DEFAULT, "getpid") == (void *)getpid, "vt_real_dlsym is libc's dlsym");
}

int main(void)
{
    const char *build = getenv("BUILD");
    char libcuda[4096];
    snprintf(libcuda, sizeof libcuda, "./%s/sim/libcuda.so.1", build && *build ? build : "build");
    test_demangle();
    test_driver(libcuda);
    return vt_test_finish();
}
