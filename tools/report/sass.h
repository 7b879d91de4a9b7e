/* sass.h - which parameter bytes a kernel's machine code uses as addresses (issue 46, slice 5).
 *
 * Without PTX the tracer cannot tell a pointer inside a by-value struct from padding, so such a
 * word is a note. The report settles notes offline where the toolkit's nvdisasm is installed: it
 * disassembles the kernel's cubin and follows each parameter word the code loads from the
 * parameter bank (`LDC.64 R2, c[0x0][0x210]`, `ULDC`, a constant operand) through register moves
 * and arithmetic (IADD3, IMAD.WIDE, LEA, ...) and local-memory spills to the address operand of a
 * global or generic load, store or atomic (`LDG.E R0, desc[UR4][R2.64]`), a store of it as data
 * (the pointer escapes), or a call. In program order, a register's taint replaced by what is
 * written to it (registers are reused for unrelated values all the time); passes repeat until
 * nothing changes, which carries values around loops. A use on any path counts, as in the PTX
 * rule the tracer applies (docs/detection.md).
 *
 * Invariants: pure text work in vt_sass_param_uses (the listing is untrusted input: every read is
 * bounded by its length); running nvdisasm is vt_sass_disassemble, which never uses a shell and
 * writes the cubin only into a private directory of its own. Errors are negative returns. */
#ifndef VT_REPORT_SASS_H
#define VT_REPORT_SASS_H
#include <stddef.h>
#include <stdint.h>

/* KERNEL's function in LISTING (`nvdisasm -c` output, LEN bytes): marks used[i] = 1 for each
 * parameter byte i < NBYTES (bytes from BASE, the parameter bank's address of parameter byte 0:
 * 0x210 on sm_90) that reaches an address. PARAMS (NPARAMS offset/size pairs, the kernel's
 * layout) bound what an indexed parameter load (`c[0x0][R0+0x210]`) may read: all of the
 * parameter it starts in. Returns 0, or -1 when the listing has no such function. */
int vt_sass_param_uses(const char *listing, size_t len, const char *kernel, uint32_t base, const uint32_t *params,
                       uint32_t nparams, uint8_t *used, uint32_t nbytes);

/* The nvdisasm to run: $VRAMTRACE_NVDISASM, else $CUDA_HOME/bin/nvdisasm, else /usr/local/cuda/bin,
 * else the first on PATH; NULL when there is none (then notes stay notes). */
const char *vt_sass_nvdisasm(void);

/* The listing by NVDISASM of the functions KERNELS (NK mangled names) of CUBIN (LEN bytes; only
 * those: a framework's cubin holds thousands), malloc'd into *out (NUL-terminated, *outlen
 * bytes). Returns 0, or -1 with a one-line reason in ERR. */
int vt_sass_disassemble(const char *nvdisasm, const uint8_t *cubin, size_t len, const char *const *kernels, size_t nk,
                        char **out, size_t *outlen, char *err, size_t errlen);
#endif
