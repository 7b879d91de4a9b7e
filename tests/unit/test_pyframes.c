/* test_pyframes.c - the Python-frame reader outside Python: a C program has no interpreter, so no
 * frame and no code object is read; versions outside the table are refused. With `--dump VERSION`
 * it prints the tracer's layout table for VERSION (tests/cases/py_layout.sh compares it with
 * what each CPython's own headers say, tests/pylayout/pylayout.c). */
#include <stdlib.h>

#include "pyframes.h"
#include "vt_test.h"

int main(int argc, char **argv)
{
    char buf[2048];
    if (argc == 3 && !strcmp(argv[1], "--dump")) {
        if (vt_py_layout_dump(atoi(argv[2]), buf, sizeof buf) < 0) return 1;
        fputs(buf, stdout);
        return 0;
    }
    vt_pyframe fr[8];
    VT_CHECK_EQ_INT(vt_py_frames(fr, 8), 0, "a C program: no Python frame");
    struct vt_py_code c;
    VT_CHECK_EQ_INT(vt_py_code_describe((uint64_t)(uintptr_t)buf, &c), -1, "... and nothing read as a code object");
    VT_CHECK_EQ_INT(vt_py_layout_dump(310, buf, sizeof buf), 0, "3.10 is in the table");
    VT_CHECK_EQ_INT(vt_py_layout_dump(313, buf, sizeof buf), 0, "3.13 is in the table");
    VT_CHECK_EQ_INT(vt_py_layout_dump(309, buf, sizeof buf), -1, "3.9 is not (no frame is read there)");
    VT_CHECK_EQ_INT(vt_py_layout_dump(314, buf, sizeof buf), -1, "nor 3.14");
    return vt_test_finish();
}
