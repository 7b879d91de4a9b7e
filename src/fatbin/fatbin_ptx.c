/* fatbin_ptx.c - kernel parameter layouts from PTX text: the `.entry name(.param ..., ...)`
 * signatures, laid out as ptxas does: each parameter at the next offset whose address in the
 * parameter constant bank is a multiple of its alignment (the declared `.align N`, else the
 * natural alignment of its type). The bank starts at an arch-dependent address (see
 * cbank_base), which matters only for alignments above 16. */
#include <stdlib.h>
#include <string.h>
#include "fatbin_int.h"

#define MAX_ALIGN 4096u

typedef struct lexer {
    const char *s;
    size_t n, pos;
    const char *tok; /* current token (not NUL-terminated) */
    size_t len;      /* 0 at end of text */
} lexer;

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '%' || c == '.';
}

/* Advance to the next token, skipping white space, line and block comments and "strings". */
static void next(lexer *lx)
{
    const char *s = lx->s;
    size_t n = lx->n, i = lx->pos;
    for (;;) {
        while (i < n && vt_fb_ptx_space(s[i]))
            i++;
        if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                i++;
        } else if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
            const char *z = i + 2 < n ? memmem(s + i + 2, n - i - 2, "*/", 2) : NULL;
            i = z ? (size_t)(z - s) + 2 : n;
        } else {
            break;
        }
    }
    lx->tok = s + i;
    if (i >= n) {
        lx->len = 0;
    } else if (s[i] == '"') {
        size_t j = i + 1;
        while (j < n && s[j] != '"' && s[j] != '\n')
            j++;
        lx->len = (j < n ? j + 1 : n) - i;
    } else if (is_ident(s[i])) {
        size_t j = i;
        while (j < n && is_ident(s[j]))
            j++;
        lx->len = j - i;
    } else {
        lx->len = 1;
    }
    lx->pos = i + lx->len;
}

static int tok_is(const lexer *lx, const char *w)
{
    size_t l = strlen(w);
    return lx->len == l && memcmp(lx->tok, w, l) == 0;
}

/* Decimal or 0x-hex number token, <= VT_FB_MAX_PARAM_BYTES; -1 otherwise. */
static long tok_num(const lexer *lx)
{
    size_t i = 0, base = 10;
    unsigned long v = 0;
    if (lx->len > 2 && lx->tok[0] == '0' && (lx->tok[1] == 'x' || lx->tok[1] == 'X')) {
        base = 16;
        i = 2;
    }
    if (i == lx->len)
        return -1;
    for (; i < lx->len; i++) {
        char c = lx->tok[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return -1;
        v = v * base + d;
        if (v > VT_FB_MAX_PARAM_BYTES)
            return -1;
    }
    return (long)v;
}

/* Size of a PTX fundamental type directive; 0 when not one. */
static uint32_t type_size(const lexer *lx)
{
    static const struct { const char *t; uint32_t size; } types[] = {
        {".b8", 1},    {".u8", 1},    {".s8", 1},     {".b16", 2},    {".u16", 2},
        {".s16", 2},   {".f16", 2},   {".bf16", 2},   {".b32", 4},    {".u32", 4},
        {".s32", 4},   {".f32", 4},   {".f16x2", 4},  {".bf16x2", 4}, {".b64", 8},
        {".u64", 8},   {".s64", 8},   {".f64", 8},    {".b128", 16},  {".texref", 8},
        {".samplerref", 8}, {".surfref", 8},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (tok_is(lx, types[i].t))
            return types[i].size;
    return 0;
}

static int is_space(const lexer *lx)
{
    return tok_is(lx, ".global") || tok_is(lx, ".const") || tok_is(lx, ".local") ||
           tok_is(lx, ".shared");
}

/* Parse one `.param ...` declaration (current token is `.param`); leaves the lexer on the
 * token after the declaration. *unknown set when a type is not understood. */
static int parse_param(lexer *lx, uint32_t base, uint32_t *cur, vt_param *out, int *unknown, vt_fb_name *name)
{
    uint32_t elem = 0, vec = 1, align = 0, count = 1;
    int ptr = 0;
    for (next(lx); lx->len && lx->tok[0] == '.'; next(lx)) {
        uint32_t ts = type_size(lx);
        if (tok_is(lx, ".align")) {
            next(lx);
            long a = tok_num(lx);
            if (a <= 0 || a > (long)MAX_ALIGN || (a & (a - 1)))
                return VT_FATBIN_ECORRUPT;
            if (!ptr) /* after .ptr it is the pointee's alignment */
                align = (uint32_t)a;
        } else if (ts) {
            if (elem)
                return VT_FATBIN_ECORRUPT;
            elem = ts;
        } else if (tok_is(lx, ".v2") || tok_is(lx, ".v4") || tok_is(lx, ".v8")) {
            vec = (uint32_t)(lx->tok[2] - '0');
        } else if (tok_is(lx, ".ptr")) {
            ptr = 1;
        } else if (ptr && is_space(lx)) {
            /* pointee state space */
        } else {
            *unknown = 1; /* a type or attribute we do not know */
        }
    }
    if (!lx->len || !is_ident(lx->tok[0]))
        return VT_FATBIN_ECORRUPT; /* no parameter name */
    name->s = lx->tok;
    name->n = lx->len;
    for (next(lx); tok_is(lx, "["); next(lx)) {
        next(lx);
        long d = tok_num(lx);
        next(lx);
        if (d <= 0 || !tok_is(lx, "]"))
            return VT_FATBIN_ECORRUPT;
        if ((uint64_t)count * (uint64_t)d > VT_FB_MAX_PARAM_BYTES)
            return VT_FATBIN_ECORRUPT;
        count *= (uint32_t)d;
    }
    if (!elem) {
        *unknown = 1;
        return 0;
    }
    uint64_t size = (uint64_t)elem * vec * count;
    if (!align)
        align = elem * vec;
    uint64_t off = ((uint64_t)base + *cur + align - 1) / align * align - base;
    if (size > VT_FB_MAX_PARAM_BYTES || off + size > VT_FB_MAX_PARAM_BYTES)
        return VT_FATBIN_ECORRUPT;
    out->offset = (uint32_t)off;
    out->size = (uint32_t)size;
    *cur = (uint32_t)(off + size);
    return 0;
}

/* Address of the parameters in constant bank 0 for `.target sm_XX` (EIATTR_PARAM_CBANK of
 * nvcc 13 cubins): 0x160 for sm_75..sm_89, 0x210 for sm_90, 0x380 for sm_100 and later; 0 (plain
 * offsets) when the target is not recognised. */
static uint32_t cbank_base(const lexer *lx)
{
    uint32_t v = 0;
    size_t i = 3;
    if (lx->len < 5 || memcmp(lx->tok, "sm_", 3) != 0)
        return 0;
    for (; i < lx->len && lx->tok[i] >= '0' && lx->tok[i] <= '9' && v < 10000; i++)
        v = v * 10 + (uint32_t)(lx->tok[i] - '0');
    if (i == 3)
        return 0;
    return vt_fb_param_base(v);
}

/* The kernel body after the parameter list (the lexer's current token is the one after ')'):
 * find its braces, hand the text inside to the address-use analysis, and move the lexer past it
 * (the body's tokens need no other look). No body (a declaration ending in ';'): nothing. */
static int body_uses(vt_fb_builder *b, lexer *lx, const vt_fb_name *names, uint32_t np, int added)
{
    const char *s = lx->s;
    size_t i = (size_t)(lx->tok - s), n = lx->n;
    while (i < n && s[i] != '{' && s[i] != ';' && !(s[i] == '.' && i + 6 <= n && memcmp(s + i, ".entry", 6) == 0))
        i++;
    if (i >= n || s[i] != '{')
        return 0;
    size_t open = i, depth = 0;
    for (; i < n; i++) {
        if (s[i] == '{') depth++;
        else if (s[i] == '}' && --depth == 0) break;
    }
    if (i >= n)
        return 0; /* unterminated: leave the lexer where it is */
    int rc = 0;
    if (added) {
        vt_addr_use *u = NULL;
        uint32_t nu = 0;
        rc = vt_fb_ptx_uses(s + open + 1, i - open - 1, names, np, &u, &nu);
        if (!rc) rc = vt_fb_set_uses(b, u, nu);
        free(u);
    }
    lx->pos = i + 1;
    next(lx);
    return rc;
}

/* Current token is the kernel name: parse an optional parameter list and add the kernel. */
static int parse_entry(vt_fb_builder *b, lexer *lx, uint32_t base, vt_param *params, vt_fb_name *names,
                       char *err, size_t errlen)
{
    const char *name = lx->tok;
    size_t namelen = lx->len;
    uint32_t np = 0, cur = 0;
    int unknown = 0;
    next(lx);
    if (tok_is(lx, "(")) {
        next(lx);
        while (!tok_is(lx, ")")) {
            if (!tok_is(lx, ".param"))
                return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT,
                                   "PTX .entry parameter list malformed", lx->pos);
            if (np >= VT_FATBIN_MAX_PARAMS)
                return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "PTX .entry has too many params");
            if (parse_param(lx, base, &cur, &params[np], &unknown, &names[np]))
                return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "bad PTX .param", lx->pos);
            np++;
            if (tok_is(lx, ","))
                next(lx);
            else if (!tok_is(lx, ")"))
                return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT,
                                   "PTX .entry parameter list unterminated", lx->pos);
        }
        next(lx);
    }
    if (unknown) /* layout not knowable from this text; the ELF may still give it */
        return body_uses(b, lx, names, np, 0);
    int rc = vt_fb_add(b, name, namelen, params, np, VT_LAYOUT_PTX);
    if (rc)
        return vt_fb_fail(err, errlen, rc, rc == VT_FATBIN_ENOMEM ? "out of memory"
                                                                  : "bad PTX kernel name or count");
    if (body_uses(b, lx, names, np, 1))
        return vt_fb_fail(err, errlen, VT_FATBIN_ENOMEM, "out of memory");
    return 0;
}

int vt_fb_parse_ptx(vt_fb_builder *b, const char *p, size_t n, char *err, size_t errlen)
{
    lexer lx = {p, n, 0, p, 0};
    vt_param *params = malloc(VT_FATBIN_MAX_PARAMS * sizeof *params);
    vt_fb_name *names = malloc(VT_FATBIN_MAX_PARAMS * sizeof *names);
    if (!params || !names) {
        free(params);
        free(names);
        return vt_fb_fail(err, errlen, VT_FATBIN_ENOMEM, "out of memory");
    }
    int rc = 0;
    uint32_t base = 0;
    next(&lx);
    while (lx.len && !rc) {
        if (tok_is(&lx, ".target")) {
            next(&lx);
            base = cbank_base(&lx);
            continue;
        }
        if (!tok_is(&lx, ".entry")) {
            next(&lx);
            continue;
        }
        next(&lx);
        if (!lx.len || lx.tok[0] == '.' || !is_ident(lx.tok[0])) {
            rc = vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "PTX .entry without a name", lx.pos);
            break;
        }
        rc = parse_entry(b, &lx, base, params, names, err, errlen);
    }
    free(params);
    free(names);
    return rc;
}
