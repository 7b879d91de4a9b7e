/* addrspace.h - where user addresses can lie in this process, from its real address-space layout.
 *
 * The launch and copy checks take a value above vt_va_top (or below 64 KiB) as a scalar, never an
 * address, without looking it up. A fixed 47-bit bound is right only for x86-64 with 4-level
 * paging: aarch64 hosts (Grace Hopper, Grace Blackwell) put the stack and mmap near 2^48, and a
 * 5-level-paging x86 host can map above 2^47. So the top is the highest user mapping of
 * /proc/self/maps rounded up to a power of two (never below 2^47), and it only grows: a mapping
 * or a recorded range found above it raises it.
 *
 * Invariants: reading the top is one relaxed load; only vt_read_maps allocates. */
#ifndef VT_ADDRSPACE_H
#define VT_ADDRSPACE_H
#include <stdatomic.h>
#include <stdint.h>

#define VT_VA_TOP_MIN 0x00007fffffffffffull   /* x86-64, 4-level paging: the lowest top there is */

extern _Atomic uint64_t vt_va_top;

static inline uint64_t vt_va_top_now(void) { return atomic_load_explicit(&vt_va_top, memory_order_relaxed); }
/* The top for a highest user address END (exclusive): 2^k - 1 >= END - 1, at least VT_VA_TOP_MIN;
 * an END in the kernel half (bit 63: x86's [vsyscall]) does not count. */
uint64_t vt_va_top_for(uint64_t end);
/* The highest end of the mappings listed in TEXT (/proc/self/maps lines), kernel-half ones left
 * out; 0 when none. */
uint64_t vt_va_highest_end(const char *text);
/* Raise the top to cover END (a mapping or recorded range ending there). Every device allocation
 * asks: inline, one compare when END is already covered. */
void vt_va_raise_slow(uint64_t end);
static inline void vt_va_raise(uint64_t end)
{
    if (__builtin_expect(end - 1 > vt_va_top_now(), 0)) vt_va_raise_slow(end);
}
/* /proc/self/maps, whole, NUL-terminated, in a malloc'd buffer the caller frees; NULL on failure. */
char *vt_read_maps(void);
/* Once, at init: the top from /proc/self/maps (VT_VA_TOP_MIN when it cannot be read). */
void vt_va_init(void);
#endif
