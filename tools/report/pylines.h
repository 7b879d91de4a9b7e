/* pylines.h - a Python code object's line for an instruction offset, from its line table as the
 * tracer copied it (`pycode` records, issue 47): CPython 3.10's co_linetable (byte pairs of
 * offset and line deltas) and 3.11+'s location table (Objects/locations.md). Pure, bounded by
 * the table's length; what PyCode_Addr2Line answers, held to CPython's own co_lines() by
 * tests/cases/py_lines.sh. */
#ifndef VT_REPORT_PYLINES_H
#define VT_REPORT_PYLINES_H
#include <stddef.h>
#include <stdint.h>

/* The line of the instruction at byte OFFSET of a code object whose first line is FIRSTLINE and
 * whose line table (VERSION: 310 for 3.10, ...) is TABLE[0..LEN); -1 when none (an instruction
 * with no line, an offset past the table, a version it does not know). */
int vt_py_addr2line(int version, const uint8_t *table, size_t len, int firstline, uint32_t offset);
#endif
