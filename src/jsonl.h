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

static inline void vt_put_raw(vt_line *l, const char *s, size_t n)
{
    if (l->overflow || (size_t)(l->end - l->p) < n) { l->overflow = 1; return; }
    memcpy(l->p, s, n);
    l->p += n;
}
#define VT_PUT_LIT(l, lit) vt_put_raw((l), (lit), sizeof(lit) - 1)

static inline void vt_put_u64(vt_line *l, uint64_t v)
{
    char tmp[20];
    int i = 20;
    do { tmp[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    vt_put_raw(l, tmp + i, (size_t)(20 - i));
}
static inline void vt_put_i64(vt_line *l, int64_t v)
{
    if (v < 0) { VT_PUT_LIT(l, "-"); vt_put_u64(l, (uint64_t)0 - (uint64_t)v); }
    else vt_put_u64(l, (uint64_t)v);
}
/* "0x1f2e" with quotes */
static inline void vt_put_hex(vt_line *l, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[20];
    int i = 20;
    tmp[--i] = '"';
    do { tmp[--i] = digits[v & 15]; v >>= 4; } while (v);
    tmp[--i] = 'x'; tmp[--i] = '0'; tmp[--i] = '"';
    vt_put_raw(l, tmp + i, (size_t)(20 - i));
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
