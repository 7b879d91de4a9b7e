/* pylines.c - line numbers from CPython line tables (pylines.h). */
#include "report/pylines.h"

/* 3.10: pairs (bytecode bytes, signed line delta); -128 is "no line" for that range. */
static int lines_310(const uint8_t *t, size_t len, int line, uint32_t offset)
{
    uint64_t start = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        int8_t ldelta = (int8_t)t[i + 1];
        if (ldelta != -128) line += ldelta;
        uint64_t end = start + t[i];
        if (offset >= start && offset < end) return ldelta == -128 ? -1 : line;
        start = end;
    }
    return -1;
}

/* 3.11+ varints: 6 bits a byte, bit 6 says another follows */
static int varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
    uint32_t v = 0;
    for (int shift = 0; *i < len && shift < 32; shift += 6) {
        uint8_t b = t[(*i)++];
        v |= (uint32_t)(b & 63) << shift;
        if (!(b & 64)) { *out = v; return 0; }
    }
    return -1;
}

static int svarint(const uint8_t *t, size_t len, size_t *i, int *out)
{
    uint32_t u;
    if (varint(t, len, i, &u) < 0) return -1;
    *out = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
    return 0;
}

/* 3.11+: entries of (1 bit set, 4-bit code, 3-bit length - 1 in code units of 2 bytes), then
 * the code's operands: 0-9 short form (same line, 1 column byte), 10-12 one-line form (line +
 * code - 10, 2 column bytes), 13 no columns (a line delta), 14 long form (line delta, end line,
 * columns), 15 no location. */
static int lines_311(const uint8_t *t, size_t len, int line, uint32_t offset)
{
    uint64_t start = 0;
    size_t i = 0;
    while (i < len) {
        uint8_t b = t[i++];
        if (!(b & 0x80)) return -1; /* not at an entry: a table it cannot read */
        int code = (b >> 3) & 15, here = line;
        uint64_t end = start + 2 * ((uint64_t)(b & 7) + 1);
        int none = 0, d;
        uint32_t skip;
        if (code <= 9) {
            i++;
        } else if (code <= 12) {
            here = line += code - 10;
            i += 2;
        } else if (code == 13) {
            if (svarint(t, len, &i, &d) < 0) return -1;
            here = line += d;
        } else if (code == 14) {
            if (svarint(t, len, &i, &d) < 0 || varint(t, len, &i, &skip) < 0 || varint(t, len, &i, &skip) < 0 ||
                varint(t, len, &i, &skip) < 0)
                return -1;
            here = line += d;
        } else {
            none = 1;
        }
        if (offset >= start && offset < end) return none ? -1 : here;
        start = end;
    }
    return -1;
}

int vt_py_addr2line(int version, const uint8_t *table, size_t len, int firstline, uint32_t offset)
{
    if (!table) return -1;
    if (version == 310) return lines_310(table, len, firstline, offset);
    if (version >= 311 && version <= 313) return lines_311(table, len, firstline, offset);
    return -1;
}
