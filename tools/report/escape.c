/* escape.c - the one place each output format escapes what comes from a trace (escape.h). */
#include "report/escape.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t vt_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    /* overlong 3- and 4-byte forms, UTF-16 surrogates, past U+10FFFF */
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
        return 0;
    return n;
}

int vt_utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = vt_utf8_len((const unsigned char *)s + i);
        if (!k || k > n - i) return 0;
        i += k;
    }
    return 1;
}

/* Each valid character of s (at most `max` bytes) to put_char, or put_bad for a byte that starts
 * no valid UTF-8 sequence. */
static void each_char(FILE *f, const char *s, size_t max, void (*put_char)(FILE *, const unsigned char *, size_t),
                      void (*put_bad)(FILE *, unsigned))
{
    const unsigned char *c = (const unsigned char *)(s ? s : "");
    size_t left = s ? strnlen(s, max) : 0;
    while (left > 0) {
        size_t n = vt_utf8_len(c);
        if (!n || n > left) { put_bad(f, *c); c++; left--; continue; }
        put_char(f, c, n);
        c += n;
        left -= n;
    }
}

static void json_char(FILE *f, const unsigned char *c, size_t n)
{
    if (n > 1) { fwrite(c, 1, n, f); return; }
    switch (*c) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    case '<': fputs("\\u003c", f); break; /* safe to embed anywhere, a <script> included */
    case '>': fputs("\\u003e", f); break;
    case '&': fputs("\\u0026", f); break;
    default:
        if (*c < 0x20 || *c == 0x7f) fprintf(f, "\\u%04x", *c);
        else putc(*c, f);
    }
}
static void json_bad(FILE *f, unsigned b) { (void)b; fputs("\\ufffd", f); }

static void html_char(FILE *f, const unsigned char *c, size_t n)
{
    if (n > 1) { fwrite(c, 1, n, f); return; }
    switch (*c) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default:
        if (*c >= 0x20 && *c != 0x7f) putc(*c, f);
        else if (*c == '\n' || *c == '\t') putc(*c, f);
        else fprintf(f, "&#x%x;", 0x2400 + (*c == 0x7f ? 0x21 : *c)); /* the control picture, visible */
    }
}
static void html_bad(FILE *f, unsigned b) { (void)b; fputs("&#xfffd;", f); }

void vt_json_chars(FILE *f, const char *s, size_t max) { each_char(f, s, max, json_char, json_bad); }
void vt_json_str(FILE *f, const char *s)
{
    putc('"', f);
    vt_json_chars(f, s, SIZE_MAX);
    putc('"', f);
}
void vt_html_chars(FILE *f, const char *s, size_t max) { each_char(f, s, max, html_char, html_bad); }
void vt_html_str(FILE *f, const char *s) { vt_html_chars(f, s, SIZE_MAX); }

/* printf where every %s is escaped for the format: the format string is the only markup. */
int vt_esc_vprintf(FILE *f, enum vt_esc esc, const char *fmt, va_list ap)
{
    const char *p = fmt;
    while (*p) {
        const char *pct = strchr(p, '%');
        if (!pct) { fputs(p, f); break; }
        fwrite(p, 1, (size_t)(pct - p), f);
        /* one conversion: %[flags][width][.precision][length]conv */
        const char *q = pct + 1;
        char spec[32];
        size_t n = 0;
        spec[n++] = '%';
        int star_w = 0, star_p = 0, prec_given = 0, longs = 0, half = 0, size_t_ = 0, longdbl = 0, intmax = 0, ptrdiff = 0;
        while (*q && strchr("-+ #0'", *q) && n < 8) spec[n++] = *q++;
        if (*q == '*') { star_w = 1; spec[n++] = *q++; }
        else while (*q >= '0' && *q <= '9' && n < 16) spec[n++] = *q++;
        if (*q == '.') {
            prec_given = 1;
            spec[n++] = *q++;
            if (*q == '*') { star_p = 1; spec[n++] = *q++; }
            else while (*q >= '0' && *q <= '9' && n < 24) spec[n++] = *q++;
        }
        for (;; q++) {
            if (*q == 'l') longs++;
            else if (*q == 'h') half++;
            else if (*q == 'z') size_t_ = 1;
            else if (*q == 'L') longdbl = 1;
            else if (*q == 'j') intmax = 1;
            else if (*q == 't') ptrdiff = 1;
            else break;
            if (n < 28) spec[n++] = *q;
        }
        char conv = *q ? *q++ : '\0';
        spec[n++] = conv;
        spec[n] = '\0';
        int w = star_w ? va_arg(ap, int) : 0, pr = star_p ? va_arg(ap, int) : -1;
        if (conv == '%') putc('%', f);
        else if (conv == 's') {
            const char *s = va_arg(ap, const char *);
            size_t max = prec_given && !star_p ? (size_t)strtoul(strchr(spec, '.') + 1, NULL, 10) : star_p && pr >= 0 ? (size_t)pr : SIZE_MAX;
            (void)w; /* widths pad nothing the renderers need: the escaped text is written as is */
            if (esc == VT_ESC_JSON) vt_json_chars(f, s, max);
            else vt_html_chars(f, s, max);
        } else if (strchr("diouxXc", conv) && conv) {
            /* integers: passed on with their own length modifier */
#define VT_PASS(T) do { T v_ = va_arg(ap, T); if (star_w && star_p) fprintf(f, spec, w, pr, v_); else if (star_w) fprintf(f, spec, w, v_); \
                        else if (star_p) fprintf(f, spec, pr, v_); else fprintf(f, spec, v_); } while (0)
            if (longs >= 2) VT_PASS(long long);
            else if (longs == 1) VT_PASS(long);
            else if (size_t_) VT_PASS(size_t);
            else if (intmax) VT_PASS(intmax_t);
            else if (ptrdiff) VT_PASS(ptrdiff_t);
            else VT_PASS(int); /* h, hh and c are promoted to int */
            (void)half;
        } else if (strchr("feEgGaA", conv) && conv) {
            if (longdbl) VT_PASS(long double);
            else VT_PASS(double);
        } else if (conv == 'p') VT_PASS(void *);
#undef VT_PASS
        else return -1; /* a conversion this does not know: a renderer bug, caught by the tests */
        p = q;
    }
    return ferror(f) ? -1 : 0;
}

int vt_esc_printf(FILE *f, enum vt_esc esc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vt_esc_vprintf(f, esc, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- text: a stream that shows control characters and invalid UTF-8 escaped ---------------- */

struct text_filter { FILE *out; unsigned char pending[4]; size_t npending; };

static size_t lead_len(unsigned c)
{
    return c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 1;
}

/* Writes b[0..n) shown safely; returns how many bytes at the end start a character that the
 * next write may complete (kept for it). */
static size_t text_run(FILE *out, const unsigned char *b, size_t n, int final)
{
    size_t i = 0;
    while (i < n) {
        if (!final && lead_len(b[i]) > n - i) return n - i;
        size_t k = vt_utf8_len(b + i);
        if (k > 1) { fwrite(b + i, 1, k, out); i += k; continue; }
        unsigned c = b[i++];
        if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) putc((int)c, out);
        else fprintf(out, "\\x%02x", c);
    }
    return 0;
}

static ssize_t text_write(void *cookie, const char *buf, size_t size)
{
    struct text_filter *t = cookie;
    unsigned char *all = malloc(t->npending + size);
    if (!all) return -1;
    memcpy(all, t->pending, t->npending);
    memcpy(all + t->npending, buf, size);
    size_t n = t->npending + size, keep = text_run(t->out, all, n, 0);
    memcpy(t->pending, all + n - keep, keep);
    t->npending = keep;
    free(all);
    return (ssize_t)size;
}

static int text_close(void *cookie)
{
    struct text_filter *t = cookie;
    text_run(t->out, t->pending, t->npending, 1);
    fflush(t->out);
    free(t);
    return 0;
}

FILE *vt_text_filter(FILE *out)
{
    struct text_filter *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->out = out;
    cookie_io_functions_t io = { .read = NULL, .write = text_write, .seek = NULL, .close = text_close };
    FILE *f = fopencookie(t, "w", io);
    if (!f) free(t);
    return f;
}
