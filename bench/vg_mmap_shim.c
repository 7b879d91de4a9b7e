/* vg_mmap_shim.c - preloaded only for the callgrind rows of `make bench`: valgrind cannot map the
 * tracer's 64 GiB MAP_NORESERVE trace reservation, so a shared file mapping that large is cut to
 * 1 GiB (ample for the short instruction-count runs). Every mapping goes straight to the syscall
 * (no dlsym: this runs while libraries are still loading). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define SHIM_BIG ((size_t)8 << 30)
#define SHIM_CUT ((size_t)1 << 30)

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (len >= SHIM_BIG && fd >= 0 && (flags & MAP_SHARED) && (flags & MAP_NORESERVE)) len = SHIM_CUT;
    long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    return r == -1 ? MAP_FAILED : (void *)r;
}
