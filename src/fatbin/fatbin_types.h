/* fatbin_types.h - what a parsed kernel layout is (vt_kernel_layout, vt_param, its source) and
 * the parsers' error codes: shared by fatbin.h (the contract) and fatbin_int.h (the parsers'
 * interface), so the ELF/PTX parsers need nothing of fatbin.c.  Types only. */
#ifndef VT_FATBIN_TYPES_H
#define VT_FATBIN_TYPES_H
#include <stddef.h>
#include <stdint.h>

#define VT_FATBIN_MAX_IMAGE ((size_t)1 << 31)   /* refuse images claiming more than 2 GiB */
#define VT_FATBIN_MAX_PARAMS 1024

enum vt_layout_source {
    VT_LAYOUT_NONE = 0,
    VT_LAYOUT_PARAMINFO = 1, /* filled by the caller from cu/cudaFuncGetParamInfo */
    VT_LAYOUT_ELF = 2,
    VT_LAYOUT_PTX = 3,
};

/* Error codes (negative). */
enum {
    VT_FATBIN_EINVAL = -1,   /* not a fatbin/ELF/PTX image, or bad arguments */
    VT_FATBIN_ETRUNC = -2,   /* image shorter than its headers claim */
    VT_FATBIN_ECORRUPT = -3, /* inconsistent headers or records */
    VT_FATBIN_EDECOMP = -4,  /* zstd/LZ4 payload failed to decompress */
    VT_FATBIN_ENOMEM = -5,
};

typedef struct vt_param {
    uint32_t offset; /* byte offset in the kernel's argument buffer */
    uint32_t size;   /* bytes */
} vt_param;

/* An 8-byte word the kernel's PTX uses as an address: at byte OFFSET (any alignment: a packed
 * struct's pointer) of parameter PARAM; OFFSET VT_USE_WHOLE when the parameter's own address is
 * taken, so any 8-aligned word of it may be one (fatbin_ptx_use.c). */
typedef struct vt_addr_use { uint32_t param, offset; } vt_addr_use;
#define VT_USE_WHOLE UINT32_MAX

typedef struct vt_kernel_layout {
    char *name;            /* mangled device name, NUL-terminated */
    uint32_t nparams;
    vt_param *params;      /* nparams entries, ordered by parameter index */
    enum vt_layout_source source;
    int32_t nuses;         /* -1: no PTX for this kernel, address use unknown */
    vt_addr_use *uses;     /* nuses entries: the words the kernel uses as addresses */
} vt_kernel_layout;

#endif
