/* fatbin_int.h - internals shared by fatbin.c (containers), fatbin_elf.c and fatbin_ptx.c
 * (parsers) and fatbin_builder.c (what the parsers hand results to).  Calls go fatbin.c ->
 * fatbin_elf.c/fatbin_ptx.c -> fatbin_builder.c; no parser calls the container code.
 * Not part of the contract (that is fatbin.h). Everything here is reentrant: state lives in the
 * caller's vt_fb_builder, never in globals. */
#ifndef VT_FATBIN_INT_H
#define VT_FATBIN_INT_H

#include <stddef.h>
#include <stdint.h>
#include "fatbin_types.h"

/* Limits on what one image may make us allocate (all well above anything nvcc emits). */
#define VT_FB_MAX_NAME    ((size_t)1 << 16)  /* bytes in one mangled kernel name */
#define VT_FB_MAX_KERNELS ((size_t)1 << 20)  /* layouts collected from one image, duplicates included */
#define VT_FB_MAX_ENTRY   ((size_t)1 << 30)  /* decompressed size of one fatbin entry */
#define VT_FB_MAX_RATIO   1024u              /* decompressed/compressed size, zip-bomb guard */
#define VT_FB_MAX_PARAM_BYTES 0x10000u       /* offset + size of any parameter (CUDA allows 32764) */

/* Layouts collected so far; duplicates (one per arch) are resolved by vt_fb_builder_finish. */
typedef struct vt_fb_builder {
    vt_kernel_layout *k;
    uint32_t *arch;     /* per layout: SM of the fatbin entry it came from (90 = sm_90), 0 unknown */
    size_t n, cap;
    uint32_t cur_arch;  /* arch of the entry being parsed, recorded by vt_fb_add */
    /* vt_fatbin_each_cubin: each ELF entry goes here instead of being parsed; nonzero stops */
    int (*on_elf)(void *ctx, unsigned sm, const uint8_t *elf, size_t len);
    unsigned on_elf_sm;     /* only cubins a device of this SM runs; 0 every one */
    void *ctx;
} vt_fb_builder;
#define VT_FB_STOP 1   /* on_elf asked to stop: passed up as a positive code, not an error */

/* ---- fatbin_builder.c ---- */
/* The parameter bank's address for code of SM (vt_fatbin_param_base, fatbin.h). */
uint32_t vt_fb_param_base(unsigned sm);
/* Append a copy of name[0..namelen) and params[0..np). Returns 0 or VT_FATBIN_ENOMEM/ECORRUPT. */
int vt_fb_add(vt_fb_builder *b, const char *name, size_t namelen, const vt_param *params,
              uint32_t np, enum vt_layout_source src);

/* The address uses of the layout added last (PTX): a copy of u[0..n). 0 or VT_FATBIN_ENOMEM. */
int vt_fb_set_uses(vt_fb_builder *b, const vt_addr_use *u, uint32_t n);

/* PTX white space as ptxas 13 takes it: space, tab, newline, carriage return and form feed (it
 * assembles PTX with a form feed between tokens, and refuses a vertical tab or another control
 * byte there). */
static inline int vt_fb_ptx_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

/* ---- fatbin_ptx_use.c ---- */
typedef struct vt_fb_name { const char *s; size_t n; } vt_fb_name;   /* a name inside the text */
/* Which parameter words the PTX kernel body BODY[0..n) uses as addresses (its parameters are
 * named NAMES[0..np)); *OUT malloc'd (caller frees), *NOUT entries. 0 or VT_FATBIN_ENOMEM. */
int vt_fb_ptx_uses(const char *body, size_t n, const vt_fb_name *names, uint32_t np, vt_addr_use **out,
                   uint32_t *nout);

/* Parse one bare ELF cubin / PTX text of exactly n readable bytes into b.
 * Return 0 or a negative VT_FATBIN_E* code with a message in err. */
int vt_fb_parse_elf(vt_fb_builder *b, const uint8_t *p, size_t n, char *err, size_t errlen);
int vt_fb_parse_ptx(vt_fb_builder *b, const char *p, size_t n, char *err, size_t errlen);

/* Size of an ELF image judged from its own headers (for len == 0); 0 when not plausible. */
size_t vt_fb_elf_extent(const uint8_t *p);

/* Write "msg" (and " (0xNUM)" for the _n variant) to err; return code. No stdio. */
int vt_fb_fail(char *err, size_t errlen, int code, const char *msg);
int vt_fb_failn(char *err, size_t errlen, int code, const char *msg, uint64_t num);

/* Little-endian loads from possibly unaligned memory. */
static inline uint16_t vt_fb_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t vt_fb_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t vt_fb_le64(const uint8_t *p)
{
    return (uint64_t)vt_fb_le32(p) | (uint64_t)vt_fb_le32(p + 4) << 32;
}
/* off + len <= n without overflow */
static inline int vt_fb_fits(uint64_t off, uint64_t len, uint64_t n)
{
    return off <= n && len <= n - off;
}

#endif
