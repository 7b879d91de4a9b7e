/* pylayout.c - the truth for the tracer's table of CPython layouts (src/platform/pyframes.c):
 * compiled by tests/cases/py_layout.sh against each installed CPython's own headers
 * (-DPy_BUILD_CORE, its internal/ directory), it prints the offsets the tracer reads, as
 * "name value" lines, from the compiler's offsetof. Not built by make. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif

#define P(name, value) printf("%s %zu\n", name, (size_t)(value))

int main(void)
{
    P("version", PY_MAJOR_VERSION * 100 + PY_MINOR_VERSION);
#if PY_VERSION_HEX >= 0x030D0000
    P("ts_frame", offsetof(PyThreadState, current_frame));   /* _PyInterpreterFrame * */
    P("ts_cframe", 0);
    P("cframe_current", 0);
#elif PY_VERSION_HEX >= 0x030B0000
    P("ts_frame", 0);
    P("ts_cframe", offsetof(PyThreadState, cframe));
    P("cframe_current", offsetof(_PyCFrame, current_frame));
#else
    P("ts_frame", offsetof(PyThreadState, frame));           /* PyFrameObject * */
    P("ts_cframe", 0);
    P("cframe_current", 0);
#endif
#if PY_VERSION_HEX >= 0x030B0000
#if PY_VERSION_HEX >= 0x030D0000
    P("fr_code", offsetof(_PyInterpreterFrame, f_executable));
    P("fr_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#else
    P("fr_code", offsetof(_PyInterpreterFrame, f_code));
    P("fr_instr", offsetof(_PyInterpreterFrame, prev_instr));
#endif
    P("fr_previous", offsetof(_PyInterpreterFrame, previous));
    P("fr_owner", offsetof(_PyInterpreterFrame, owner));
    P("co_code_units", offsetof(PyCodeObject, co_code_adaptive));
    P("co_qualname", offsetof(PyCodeObject, co_qualname));
#else
    P("fr_code", offsetof(PyFrameObject, f_code));
    P("fr_previous", offsetof(PyFrameObject, f_back));
    P("fr_instr", offsetof(PyFrameObject, f_lasti));         /* int: the instruction index */
    P("fr_owner", 0);
    P("co_code_units", 0);
    P("co_qualname", offsetof(PyCodeObject, co_name));
#endif
    P("co_filename", offsetof(PyCodeObject, co_filename));
    P("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
    P("co_linetable", offsetof(PyCodeObject, co_linetable));
    P("bytes_size", offsetof(PyBytesObject, ob_base.ob_size));
    P("bytes_data", offsetof(PyBytesObject, ob_sval));
    P("str_length", offsetof(PyASCIIObject, length));
    P("str_state", offsetof(PyASCIIObject, state));
    P("str_ascii_data", sizeof(PyASCIIObject));
    P("str_utf8_length", offsetof(PyCompactUnicodeObject, utf8_length));
    P("str_utf8", offsetof(PyCompactUnicodeObject, utf8));
    /* the state bitfield: where the compiler put compact, ascii and kind */
    PyASCIIObject o;
    unsigned int raw;
    memset(&o, 0, sizeof o);
    o.state.compact = 1;
    memcpy(&raw, &o.state, sizeof raw);
    P("str_compact_mask", raw);
    memset(&o, 0, sizeof o);
    o.state.ascii = 1;
    memcpy(&raw, &o.state, sizeof raw);
    P("str_ascii_mask", raw);
    memset(&o, 0, sizeof o);
    o.state.kind = 7;
    memcpy(&raw, &o.state, sizeof raw);
    P("str_kind_mask", raw);
#if PY_VERSION_HEX >= 0x030C0000
    P("owned_by_cstack", FRAME_OWNED_BY_CSTACK);
#else
    P("owned_by_cstack", 0);
#endif
    return 0;
}
