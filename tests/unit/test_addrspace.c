/* test_addrspace.c - platform/addrspace.c: the top of the user address space comes from the
 * process's own layout (x86-64 4-level: 2^47; aarch64 Grace hosts: 2^48; 5-level x86: higher), so
 * vt_looks_scalar does not skip real pointers above 2^47. The samples are /proc/self/maps lines
 * as those kernels print them. */
#include <stdint.h>

#include "addrspace.h"
#include "check.h"
#include "registry.h"
#include "vt_test.h"

static const char x86_maps[] =
    "55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f2b1c000000-7f2b1c021000 rw-p 00000000 00:00 0 \n"
    "7ffd2e6b1000-7ffd2e6d2000 rw-p 00000000 00:00 0                          [stack]\n"
    "7ffd2e7fa000-7ffd2e7fe000 r--p 00000000 00:00 0                          [vvar]\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";
static const char arm_maps[] =
    "aaaad7e40000-aaaad7e61000 rw-p 00000000 00:00 0                          [heap]\n"
    "ffff8a3c0000-ffff8a3e1000 rw-p 00000000 00:00 0 \n"
    "ffffd1230000-ffffd1251000 rw-p 00000000 00:00 0                          [stack]";

int main(void)
{
    VT_CHECK(vt_va_highest_end(x86_maps) == 0x7ffd2e7fe000ull, "x86: highest user end, [vsyscall] (kernel half) left out");
    VT_CHECK(vt_va_highest_end(arm_maps) == 0xffffd1251000ull, "aarch64: highest end, last line without a newline");
    VT_CHECK(vt_va_highest_end("") == 0 && vt_va_highest_end("garbage\n") == 0, "nothing to read: 0");
    VT_CHECK(vt_va_top_for(0x7ffd2e7fe000ull) == 0x00007fffffffffffull, "x86-64 4-level: top 2^47 - 1");
    VT_CHECK(vt_va_top_for(0xffffd1251000ull) == 0x0000ffffffffffffull, "aarch64 48-bit: top 2^48 - 1");
    VT_CHECK(vt_va_top_for(0x00f0000000001000ull) == 0x00ffffffffffffffull, "x86-64 5-level mapping: top 2^56 - 1");
    VT_CHECK(vt_va_top_for(0x1000) == 0x00007fffffffffffull && vt_va_top_for(0xffffffffff601000ull) == 0x00007fffffffffffull,
             "never below 2^47; a kernel-half end does not count");

    /* An aarch64 heap pointer: skipped as a scalar under the fixed 47-bit rule, an address once
     * the top comes from the layout. */
    const uint64_t arm_heap = 0xffff8a3c1040ull, arm_scalar = 0x0001000000000000ull; /* 2^48 */
    VT_CHECK(vt_looks_scalar(arm_heap) == 1, "before: the default (x86-64) top takes 0xffff8a3c1040 for a scalar");
    vt_va_raise(vt_va_highest_end(arm_maps));
    VT_CHECK(vt_va_top_now() == 0x0000ffffffffffffull, "after the aarch64 layout: top 2^48 - 1");
    VT_CHECK(vt_looks_scalar(arm_heap) == 0, "after: 0xffff8a3c1040 may be an address");
    VT_CHECK(vt_looks_scalar(arm_scalar) == 1 && vt_looks_scalar(0x8000) == 1, "still scalars: 2^48 and below 64 KiB");
    vt_va_raise(0x1000);
    VT_CHECK(vt_va_top_now() == 0x0000ffffffffffffull, "the top never shrinks");

    /* device memory recorded above the top (a 5-level host's driver) raises it */
    const uint64_t high_dev = 0x00f0000000000000ull;
    VT_CHECK(vt_looks_scalar(high_dev + 64) == 1, "a value above 2^48 is a scalar while nothing lives there");
    VT_CHECK(vt_registry_insert(high_dev, 1 << 20, VT_MEM_DEVICE, 0) == 0, "registry takes a device range at 0x00f0...");
    VT_CHECK(vt_looks_scalar(high_dev + 64) == 0 && vt_va_top_now() == 0x00ffffffffffffffull,
             "recording it raises the top to 2^56 - 1");
    return vt_test_finish();
}
