/* failalloc.c - fault injection for the CLI (tests/cases/report_faults.sh): preloaded, it makes
 * the Nth call of malloc, calloc or realloc made by the program's own code fail (VT_FAIL_ALLOC_AT=N,
 * counted from the first), as a full machine or a ulimit would, and at exit says on stderr whether
 * the Nth call came ("vt-failalloc: failed call N" / "vt-failalloc: N not reached, C calls"), so a
 * test can walk N over every allocation the program makes. Only calls from the executable count:
 * libraries' own (json-c crashes on a failed strdup inside json_object_object_add) are not ours
 * to fix. glibc's own entry points (__libc_malloc...) do the work: dlsym would allocate. */
#include <link.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static unsigned long calls, at;
static int armed = -1, hit;
static uintptr_t exe_lo = UINTPTR_MAX, exe_hi;

/* the executable's loaded segments: the first object dl_iterate_phdr reports */
static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size; (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
        uintptr_t lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr, hi = lo + info->dlpi_phdr[i].p_memsz;
        if (lo < exe_lo) exe_lo = lo;
        if (hi > exe_hi) exe_hi = hi;
    }
    return 1;
}

static int fail_now(uintptr_t caller)
{
    if (armed < 0) {
        const char *s = getenv("VT_FAIL_ALLOC_AT");
        at = s ? strtoul(s, NULL, 10) : 0;
        armed = at > 0;
        if (armed) dl_iterate_phdr(first_object, NULL);
    }
    if (caller < exe_lo || caller >= exe_hi) return 0;
    calls++;
    if (armed && calls == at) { hit = 1; errno = ENOMEM; return 1; }
    return 0;
}

/* The count is this process's: a program it starts (the report runs nvdisasm) keeps the preload
 * but not the count, so its own allocations never fail in this one's place. */
__attribute__((constructor)) static void own_count(void)
{
    fail_now(0);   /* reads VT_FAIL_ALLOC_AT (address 0 is no caller of ours: nothing counted) */
    unsetenv("VT_FAIL_ALLOC_AT");
}

#define CALLER ((uintptr_t)__builtin_return_address(0))
void *malloc(size_t n) { return fail_now(CALLER) ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t m) { return fail_now(CALLER) ? NULL : __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { return fail_now(CALLER) ? NULL : __libc_realloc(p, n); }

__attribute__((destructor)) static void report(void)
{
    if (armed <= 0) return;
    char msg[96];
    int len = hit ? snprintf(msg, sizeof msg, "vt-failalloc: failed call %lu\n", at)
                  : snprintf(msg, sizeof msg, "vt-failalloc: %lu not reached, %lu calls\n", at, calls);
    if (write(2, msg, (size_t)len) < 0) {}
}
