/* main.c - dlopen libnext, then libdep (which needs it); dlclose libnext (libdep still holds it),
 * then libdep: both unload together, libdep first. Usage: dlfini LIBNEXT LIBDEP. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    void *next = dlopen(argv[1], RTLD_NOW), *dep = dlopen(argv[2], RTLD_NOW);
    if (!next || !dep) { printf("dlopen: %s\n", dlerror()); return 2; }
    dlclose(next);
    dlclose(dep);
    printf("done\n");
    return 0;
}
