/* fatbin.h - kernel parameter layouts read from CUDA fat binaries.
 *
 * Given the image a program hands to __cudaRegisterFatBinary, cuModuleLoadData or
 * cuLibraryLoadData, find each kernel's parameters (offset and size in the argument buffer).
 * Sources, best first: the ELF cubin's `.nv.info.<kernel>` EIATTR_KPARAM_INFO records, then the
 * PTX `.entry` signature. Payloads may be zstd (flag 0x8000) or LZ4 raw block (0x2000) compressed.
 * The layout relied on is documented in docs/fatbin.md.
 *
 * Invariants: pure parsing, never calls CUDA, never prints. Every input is untrusted: all reads
 * are bounds-checked against the length given (or the length the container header declares,
 * capped at VT_FATBIN_MAX_IMAGE); a malformed image gives a negative code and a message, never a
 * crash. The parsed result owns all its memory; free it with vt_fatbin_free.
 */
#ifndef VT_FATBIN_H
#define VT_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#include "fatbin_types.h"

typedef struct vt_fatbin vt_fatbin;

/* Parse an image. `data` may point at a fatbin wrapper (magic 0x466243B1, as passed to
 * __cudaRegisterFatBinary; its data pointer is followed), a fatbin header (0xBA55ED50), a bare
 * ELF cubin, or NUL-terminated PTX text. `len` bounds every read; pass 0 when unknown (then the
 * container's own declared size is used, capped at VT_FATBIN_MAX_IMAGE; PTX is read up to its NUL).
 * Kernels found in several entries (several archs) are kept once: ELF layouts preferred, then the
 * highest arch (see vt_fatbin_parse_arch to choose for a given device).
 * On success returns the number of kernels (>= 0) and sets *out (caller frees with vt_fatbin_free).
 * On failure returns a negative VT_FATBIN_E* code, writes a one-line message to err, *out = NULL. */
int vt_fatbin_parse(const void *data, size_t len, vt_fatbin **out, char *err, size_t errlen);

/* The same for a device of compute capability `sm` (major*10 + minor: 90 for sm_90; 0 = unknown,
 * which is vt_fatbin_parse). Layouts can differ between archs (parameters aligned above 16 bytes
 * move with the parameter bank's address), so each kernel's layout is taken from, best first: the
 * highest-arch ELF entry that device runs (same major, arch <= sm), the highest PTX entry with
 * arch <= sm, any other entry (ELF before PTX, highest arch). With sm = 0: ELF before PTX,
 * highest arch first. */
int vt_fatbin_parse_arch(const void *data, size_t len, unsigned sm, vt_fatbin **out, char *err,
                         size_t errlen);

/* Where the image's bytes are and how many (what a copy must hold): a wrapper's fatbin, a fatbin
 * header and the entries its size covers, an ELF to the end of its headers, PTX text with its NUL.
 * NULL (len 0) when it is none of these. Reads only what the image's own headers cover. */
const void *vt_fatbin_image_extent(const void *image, size_t *len);

/* Each ELF cubin of DATA (LEN bytes: one fatbin or several back to back, as an executable's
 * .nv_fatbin section holds them, or a bare cubin) that a device of compute capability SM runs
 * (its own major architecture, not newer; SM 0: every one), decompressed, with the SM it is for
 * (90 = sm_90; 0 for a bare cubin): FN returns nonzero to stop. Entries for other archs, and PTX,
 * are not decompressed. The bytes live during the call only. Returns 0, or a negative
 * VT_FATBIN_E* code with a one-line message in ERR. */
int vt_fatbin_each_cubin(const void *data, size_t len, unsigned sm,
                         int (*fn)(void *ctx, unsigned sm, const uint8_t *elf, size_t len), void *ctx, char *err, size_t errlen);
/* The parameter bank's address of parameter byte 0 in constant bank 0 for code of SM
 * (EIATTR_PARAM_CBANK of nvcc 13 cubins): 0x160 for sm_70..sm_89, 0x210 for sm_90, 0x380 for
 * sm_100 and later; 0 when unknown. */
uint32_t vt_fatbin_param_base(unsigned sm);
/* Kernels are in strcmp order of name; i < vt_fatbin_count. */
size_t vt_fatbin_count(const vt_fatbin *fb);
const vt_kernel_layout *vt_fatbin_at(const vt_fatbin *fb, size_t i);
/* Lookup by mangled name; NULL when absent. */
const vt_kernel_layout *vt_fatbin_find(const vt_fatbin *fb, const char *name);
/* NULL is nothing to free, as with free(): kernels.c keeps a failed parse as NULL and frees it
 * with the module. */
void vt_fatbin_free(vt_fatbin *fb);

#endif
