/* fatbin_builder.c - the small interface the image parsers hand their results to: vt_fb_add
 * collects kernel layouts into the caller's vt_fb_builder, vt_fb_fail/vt_fb_failn write error
 * messages.  Below fatbin.c (containers) and the ELF/PTX parsers; calls none of them. */
#include <stdlib.h>
#include <string.h>

#include "fatbin_int.h"

/* ---- errors ------------------------------------------------------------------------------ */

static size_t put(char *err, size_t errlen, size_t at, const char *s)
{
    while (*s && at + 1 < errlen)
        err[at++] = *s++;
    err[at] = '\0';
    return at;
}

int vt_fb_fail(char *err, size_t errlen, int code, const char *msg)
{
    if (err && errlen)
        put(err, errlen, 0, msg);
    return code;
}

int vt_fb_failn(char *err, size_t errlen, int code, const char *msg, uint64_t num)
{
    char buf[24], *q = buf + sizeof buf;
    *--q = '\0';
    do {
        *--q = "0123456789abcdef"[num & 15];
        num >>= 4;
    } while (num);
    if (err && errlen) {
        size_t at = put(err, errlen, 0, msg);
        at = put(err, errlen, at, " (0x");
        at = put(err, errlen, at, q);
        put(err, errlen, at, ")");
    }
    return code;
}

/* ---- builder ----------------------------------------------------------------------------- */

int vt_fb_add(vt_fb_builder *b, const char *name, size_t namelen, const vt_param *params,
              uint32_t np, enum vt_layout_source src)
{
    if (namelen == 0 || namelen > VT_FB_MAX_NAME || np > VT_FATBIN_MAX_PARAMS ||
        b->n >= VT_FB_MAX_KERNELS)
        return VT_FATBIN_ECORRUPT;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        vt_kernel_layout *k = realloc(b->k, cap * sizeof *k);
        if (!k)
            return VT_FATBIN_ENOMEM;
        b->k = k;
        uint32_t *a = realloc(b->arch, cap * sizeof *a);
        if (!a)
            return VT_FATBIN_ENOMEM;
        b->arch = a;
        b->cap = cap;
    }
    vt_kernel_layout *l = &b->k[b->n];
    l->name = malloc(namelen + 1);
    l->params = np ? malloc(np * sizeof *l->params) : NULL;
    if (!l->name || (np && !l->params)) {
        free(l->name);
        free(l->params);
        return VT_FATBIN_ENOMEM;
    }
    memcpy(l->name, name, namelen);
    l->name[namelen] = '\0';
    if (np)
        memcpy(l->params, params, np * sizeof *params);
    l->nparams = np;
    l->source = src;
    l->nuses = -1;
    l->uses = NULL;
    b->arch[b->n] = b->cur_arch;
    b->n++;
    return 0;
}

int vt_fb_set_uses(vt_fb_builder *b, const vt_addr_use *u, uint32_t n)
{
    if (!b->n) return VT_FATBIN_ECORRUPT;
    vt_kernel_layout *l = &b->k[b->n - 1];
    free(l->uses);
    l->uses = n ? malloc(n * sizeof *u) : NULL;
    if (n && !l->uses) { l->nuses = -1; return VT_FATBIN_ENOMEM; }
    if (n) memcpy(l->uses, u, n * sizeof *u);
    l->nuses = (int32_t)n;
    return 0;
}

uint32_t vt_fb_param_base(unsigned sm) { return sm >= 100 ? 0x380 : sm >= 90 ? 0x210 : sm >= 70 ? 0x160 : 0; }
