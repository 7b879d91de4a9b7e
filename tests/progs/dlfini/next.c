/* next.c - libnext.so for tests/cases/rel_behaviour.sh "dlsym(RTLD_NEXT) in a destructor": its
 * destructor looks up the next definitions of cuInit and dep_probe, while the dlclose that runs
 * it is unloading libdep.so too (libdep needs libnext, so libdep's destructor ran first and glibc
 * has marked it removed: a link-map entry after this one that dlopen(RTLD_NOLOAD) cannot reopen). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

__attribute__((destructor)) static void next_fini(void)
{
    printf("next_fini: next cuInit %s, next dep_probe %s\n", dlsym(RTLD_NEXT, "cuInit") ? "found" : "null",
           dlsym(RTLD_NEXT, "dep_probe") ? "found" : "null");
    fflush(stdout);
}

int next_value(void) { return 1; }
