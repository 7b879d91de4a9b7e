/* jsonl.h - building one JSON line in a caller-provided buffer without printf or allocation.
 *
 * Invariants: `p` never passes `end`; once a write would overflow, `overflow` is set and further
 * writes are dropped, so a line is either complete or detectably cut (the caller then drops it).
 * Strings are escaped for JSON (quotes, backslash, control bytes); other bytes pass unchanged.
 */
#ifndef VT_JSONL_H
#define VT_JSONL_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct vt_line {
    char *p, *start, *end;
    int overflow;
} vt_line;

static inline void vt_line_init(vt_line *l, char *buf, size_t cap)
{
    l->p = l->start = buf;
    l->end = buf + cap;
    l->overflow = 0;
}
static inline size_t vt_line_len(const vt_line *l) { return (size_t)(l->p - l->start); }

/* On overflow `end` is pulled back to `p`, so every later write fails the one room test. */
static inline int vt_line_room(vt_line *l, size_t n)
{
    if ((size_t)(l->end - l->p) >= n) return 1;
    l->overflow = 1;
    l->end = l->p;
    return 0;
}

static inline void vt_put_raw(vt_line *l, const char *s, size_t n)
{
    if (!vt_line_room(l, n)) return;
    memcpy(l->p, s, n);
    l->p += n;
}
#define VT_PUT_LIT(l, lit) vt_put_raw((l), (lit), sizeof(lit) - 1)

/* Two digits per step from a table: the formatting of a dozen integers per line is most of an
 * event's cost, so this path avoids division loops and per-digit stores. */
static const char vt_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline int vt_u64_digits(uint64_t v)
{
    static const uint64_t pow10[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
        1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
        100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
        1000000000000000000ull, 10000000000000000000ull,
    };
    int n = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12; /* floor(log10) or one less */
    return n + 1 - (v < pow10[n]);
}
/* Unchecked cursor writers for the fixed-shape part of a line: the caller guarantees the room
 * (a fresh LINE_MAX_BYTES buffer holds any fixed part many times over). Each returns the new
 * cursor. */
#define VT_W_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)
/* 32-bit arithmetic per digit pair is cheaper than 64-bit: split big values at 10^8. */
static inline char *vt_w_u32(char *p, uint32_t v)
{
    if (v < 10) { *p = (char)('0' + v); return p + 1; }
    int n = vt_u64_digits(v);
    char *q = p + n;
    while (v >= 100) {
        q -= 2;
        memcpy(q, vt_digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) { q -= 2; memcpy(q, vt_digit_pairs + 2 * v, 2); }
    else *--q = (char)('0' + v);
    return p + n;
}
static inline char *vt_w_8digits(char *p, uint32_t v) /* exactly 8 digits, zero-padded */
{
    for (int i = 6; i >= 0; i -= 2) { memcpy(p + i, vt_digit_pairs + 2 * (v % 100), 2); v /= 100; }
    return p + 8;
}
static inline char *vt_w_u64(char *p, uint64_t v)
{
    if (v <= 0xffffffffu) return vt_w_u32(p, (uint32_t)v);
    uint64_t hi = v / 100000000u;
    uint32_t lo = (uint32_t)(v % 100000000u);
    if (hi <= 0xffffffffu) p = vt_w_u32(p, (uint32_t)hi);
    else { p = vt_w_u32(p, (uint32_t)(hi / 100000000u)); p = vt_w_8digits(p, (uint32_t)(hi % 100000000u)); }
    return vt_w_8digits(p, lo);
}
static inline char *vt_w_i64(char *p, int64_t v)
{
    if (v < 0) { *p++ = '-'; return vt_w_u64(p, (uint64_t)0 - (uint64_t)v); }
    return vt_w_u64(p, (uint64_t)v);
}
static inline char *vt_w_hex(char *p, uint64_t v)
{
    int nib = v ? (67 - __builtin_clzll(v)) / 4 : 1;
    p[0] = '"'; p[1] = '0'; p[2] = 'x'; p[nib + 3] = '"';
    for (int i = nib + 2; i >= 3; i--, v >>= 4) p[i] = "0123456789abcdef"[v & 15];
    return p + nib + 4;
}
/* a short identifier (API or record name, at most `cap` bytes, no escaping needed) */
static inline char *vt_w_ident(char *p, const char *s, size_t cap)
{
    const char *end = s + cap;
    while (s < end && *s) *p++ = *s++;
    return p;
}

/* Checked forms: one room test, then the cursor writer. */
static inline void vt_put_u64(vt_line *l, uint64_t v)
{
    if (vt_line_room(l, 20)) l->p = vt_w_u64(l->p, v);
}
static inline void vt_put_i64(vt_line *l, int64_t v)
{
    if (vt_line_room(l, 21)) l->p = vt_w_i64(l->p, v);
}
/* "0x1f2e" with quotes */
static inline void vt_put_hex(vt_line *l, uint64_t v)
{
    if (vt_line_room(l, 20)) l->p = vt_w_hex(l->p, v);
}
static inline void vt_put_str(vt_line *l, const char *s)
{
    static const char hexd[] = "0123456789abcdef";
    VT_PUT_LIT(l, "\"");
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        if (*c == '"' || *c == '\\') { char e[2] = {'\\', (char)*c}; vt_put_raw(l, e, 2); }
        else if (*c < 0x20 || *c == 0x7f) {
            char e[6] = {'\\', 'u', '0', '0', hexd[*c >> 4], hexd[*c & 15]};
            vt_put_raw(l, e, 6);
        } else vt_put_raw(l, (const char *)c, 1);
    }
    VT_PUT_LIT(l, "\"");
}
/* ,"key": */
static inline void vt_put_key(vt_line *l, const char *key)
{
    VT_PUT_LIT(l, ",\"");
    vt_put_raw(l, key, strlen(key));
    VT_PUT_LIT(l, "\":");
}
#endif
