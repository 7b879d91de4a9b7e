/* pyprobe.c - the tracer's Python-frame reader (src/platform/pyframes.c) inside a real
 * interpreter: tests/cases/py_layout.sh builds it as a shared object with pyframes.c (dlsym
 * standing in for the tracer's own lookup), and a Python script calls vt_probe() through ctypes, which releases the
 * interpreter's lock around the call, as PyTorch's bindings do around CUDA. It writes one line
 * per frame, innermost first: NAME, FILE, FIRSTLINE, OFFSET, LINETABLE_BYTES, tab-separated (a
 * file name may hold spaces). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "pyframes.h"

void *vt_real_dlsym(void *handle, const char *name);
void *vt_real_dlsym(void *handle, const char *name) { return dlsym(handle, name); }

int vt_probe(char *buf, int cap)
{
    vt_pyframe fr[64];
    int n = vt_py_frames(fr, 64), k = 0;
    buf[0] = 0;
    for (int i = 0; i < n && k < cap; i++) {
        struct vt_py_code c;
        if (vt_py_code_describe(fr[i].code, &c) < 0) continue;
        k += snprintf(buf + k, (size_t)(cap - k), "%.*s\t%.*s\t%d\t%u\t%zu\n", (int)c.name_len, c.name, (int)c.file_len, c.file,
                      c.firstlineno, fr[i].offset, c.linetable_len);
    }
    return n;
}
