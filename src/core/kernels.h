/* kernels.h - what the tracer knows about kernels: host stub / cudaKernel_t / CUfunction / CUkernel
 * handles mapped to one record with the device name and the parameter layout.
 *
 * Invariants: lookups are lock-free (fixed open-addressing table of pointer keys that are never
 * removed); records are never freed, so a pointer to one stays valid for the process's life.
 * The layout is resolved once, at the kernel's first launch, by vt_kernel_resolve_layout().
 * Module and library images are copied when they are loaded (vt_module_image): programs free
 * theirs right after cuModuleLoadData (NVRTC), and a later image at the same address is another
 * image. A copy's bytes go at unload; the record stays, so no layout is ever taken from a stale
 * or reused address. */
#ifndef VT_KERNELS_H
#define VT_KERNELS_H
#include <stdatomic.h>
#include <stdint.h>

#include "fatbin.h"

/* One 8-byte word of the argument buffer that the launch check reads: argument `param`, `off`
 * bytes into it. */
typedef struct vt_arg_word { uint32_t param, off; } vt_arg_word;

/* A module's image as it was at load time. Never freed; `bytes` is released at unload. */
typedef struct vt_module_image {
    const uint8_t *bytes; /* NULL once unloaded (or when the image could not be read) */
    size_t len;
} vt_module_image;

typedef struct vt_kernel {
    uint32_t id;
    char *name;              /* mangled device name, or "kernel@0x..." when never registered */
    const void *host_fun;    /* runtime host stub, NULL for driver-only kernels */
    const void *image;       /* fatbin wrapper a runtime kernel came from, may be NULL */
    const vt_module_image *module; /* the module or library a driver kernel came from, may be NULL */
    uint64_t function;       /* CUfunction for driver paramInfo queries, 0 if none */
    _Atomic(void *) kernel_handle; /* cudaKernel_t == CUkernel, for cuKernelGetParamInfo */
    _Atomic int layout_state; /* 0 not yet, 1 resolved (maybe with nparams 0 and source NONE) */
    uint32_t nparams;
    vt_param *params;
    /* The words the pointer check visits, in its order, planned with the layout: where the
     * image has the kernel's PTX, the words its code uses as addresses (fatbin_ptx_use.c: a
     * stride table's garbage tail is never one); else every 8-byte word of each 8-aligned
     * parameter of 8 bytes or more, where pointers and pointers inside by-value structs always
     * are. words is NULL with nwords > 0 when it could not be allocated (the check then walks
     * params by the second rule). */
    uint32_t nwords;
    vt_arg_word *words;
    uint8_t *ptypes;         /* per parameter, its type by the mangled name (enum vt_param_type);
                              * NULL when the name says nothing (param_types.h) */
    int source;              /* enum vt_layout_source */
    int uses_known;          /* the words came from the kernel's PTX */
    _Atomic uint8_t *warned; /* per word, without PTX: its struct-word warning was written */
    _Atomic int emitted;     /* `kernel` record written */
} vt_kernel;

/* __cudaRegisterFunction: the fatbin wrapper handle, host stub and device name. */
vt_kernel *vt_kernels_register_host(const void *fatbin, const void *host_fun, const char *name);
vt_kernel *vt_kernels_by_host(const void *host_fun);
/* Bind an opaque handle (cudaKernel_t, CUfunction, CUkernel) to a kernel. */
void vt_kernels_bind(const void *handle, vt_kernel *k);
vt_kernel *vt_kernels_by_handle(const void *handle);
/* A kernel found through the driver (cuModuleGetFunction / cuLibraryGetKernel). A handle seen
 * before with another name or module (the driver reused it after an unload) gets a new record. */
vt_kernel *vt_kernels_driver(const void *handle, const char *name, const vt_module_image *module, uint64_t function);
/* Modules and libraries: copy the image each is loaded from (from memory, or the file
 * cuModuleLoad reads), and let the copy go when it is unloaded. */
void vt_kernels_module_loaded(const void *module, const void *image);
void vt_kernels_module_loaded_file(const void *module, const char *path);
void vt_kernels_module_unloaded(const void *module);
const vt_module_image *vt_kernels_module_lookup(const void *module);
/* fatbin handle from __cudaRegisterFatBinary -> the wrapper it was registered with */
void vt_kernels_fatbin_handle(const void *handle, const void *wrapper);
const void *vt_kernels_fatbin_lookup(const void *handle);
/* A placeholder record for a handle the tracer never saw created. */
vt_kernel *vt_kernels_unknown(const void *handle);

/* Layout query callback: fills param i's offset/size; returns 0, or nonzero past the last one or
 * when unsupported (then the fatbin is parsed instead). */
typedef int (*vt_paraminfo_fn)(vt_kernel *k, uint32_t index, uint64_t *offset, uint64_t *size);
/* Resolve the layout once (thread-safe); returns k with layout fields valid. `sm` is the
 * launching device's compute capability (90 for 9.0; 0 unknown), which picks the fatbin entry. */
vt_kernel *vt_kernel_resolve_layout(vt_kernel *k, vt_paraminfo_fn query, unsigned sm);

const char *vt_layout_source_name(int source);
/* The driver-side layout query (cuFuncGetParamInfo / cuKernelGetParamInfo), hooks_launch.c. */
int vt_driver_paraminfo(vt_kernel *k, uint32_t index, uint64_t *offset, uint64_t *size);
#endif
