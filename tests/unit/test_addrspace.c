/* test_addrspace.c - platform/addrspace.c: the top of the user address space comes from the
 * process's own layout (x86-64 4-level: 2^47; aarch64 Grace hosts: 2^48; 5-level x86: higher), so
 * vt_looks_scalar does not skip real pointers above 2^47. The samples are /proc/self/maps lines
 * as those kernels print them. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* vt_read_maps returns the whole of /proc/self/maps, which the kernel hands out about a page per
 * read(): 300 extra mappings (read-only pages between inaccessible ones, so none merge: 600 lines)
 * make it some 30 KiB. The truth is the same file read here to its end. Other lines may come and
 * go between the two reads (an allocator mapping more): the area's own lines and the last line
 * cannot. */
static size_t lines_in(const char *text, uint64_t lo, uint64_t hi)
{
    size_t n = 0;
    for (const char *l = text; l && *l;) {
        unsigned long long a = strtoull(l, NULL, 16);
        n += a >= lo && a < hi;
        const char *eol = strchr(l, '\n');
        l = eol ? eol + 1 : NULL;
    }
    return n;
}
static const char *last_line(const char *text)
{
    size_t n = strlen(text);
    const char *l = n > 1 ? text + n - 1 : text;
    while (l > text && l[-1] != '\n') l--;
    return l;
}

static void test_read_maps(void)
{
    enum { EXTRA = 300 };
    long page = sysconf(_SC_PAGESIZE);
    size_t span = (size_t)page * 2 * EXTRA;
    char *area = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) { printf("skip - no room for the extra mappings\n"); return; }
    for (int i = 0; i < EXTRA; i++) mprotect(area + (size_t)page * 2 * i, (size_t)page, PROT_READ);
    static char ref[1 << 20];
    size_t len = 0;
    int fd = open("/proc/self/maps", O_RDONLY);
    for (ssize_t n; fd >= 0 && len < sizeof ref - 1 && (n = read(fd, ref + len, sizeof ref - 1 - len)) > 0;) len += (size_t)n;
    if (fd >= 0) close(fd);
    ref[len] = 0;
    char *maps = vt_read_maps();
    uint64_t lo = (uint64_t)(uintptr_t)area, hi = lo + span;
    VT_CHECK(lines_in(ref, lo, hi) == 2 * EXTRA && len > 16384, "the layout read here: the area's 600 lines, %zu bytes in all", len);
    VT_CHECK(maps && lines_in(maps, lo, hi) == 2 * EXTRA, "vt_read_maps: every line of the area (%zu)", maps ? lines_in(maps, lo, hi) : 0);
    VT_CHECK(maps && !strcmp(last_line(maps), last_line(ref)), "vt_read_maps: up to the last line (%.60s)", last_line(ref));
    free(maps);
    munmap(area, span);
}

int main(void)
{
    test_read_maps();
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
