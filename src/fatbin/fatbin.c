/* fatbin.c - kernel parameter layouts from CUDA fat binaries: containers (wrapper, fatbin header,
 * entries, zstd/LZ4 payloads), result building and lookup. Pure, reentrant, never prints.
 * ELF .nv.info decoding is in fatbin_elf.c, PTX .entry parsing in fatbin_ptx.c. */
#include <stdlib.h>
#include <string.h>
#include <lz4.h>
#include <zstd.h>
#include "fatbin.h"
#include "fatbin_int.h"

#define WRAPPER_MAGIC 0x466243B1u
#define FATBIN_MAGIC  0xBA55ED50u
#define FATBIN_HDR    16u
#define ENTRY_MIN_HDR 0x40u  /* we read fields up to uncompressed_size @0x38 */
#define KIND_PTX 1u
#define KIND_ELF 2u
#define FLAG_LZ4  0x2000u
#define FLAG_ZSTD 0x8000u

struct vt_fatbin {
    vt_kernel_layout *k; /* sorted by name, unique */
    size_t n;
};

static void free_layouts(vt_kernel_layout *k, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(k[i].name);
        free(k[i].params);
        free(k[i].uses);
    }
    free(k);
}

/* How well a layout from an entry of `arch` fits a device of `dev` (0: unknown); higher wins.
 * Known device: a SASS entry it can run (same major, arch <= dev), then PTX it can JIT
 * (arch <= dev), then the rest. Unknown device: ELF before PTX. Ties: the higher arch. */
static uint64_t score(enum vt_layout_source src, uint32_t arch, uint32_t dev)
{
    uint64_t a = arch > 0xffff ? 0xffff : arch;
    int elf = src == VT_LAYOUT_ELF;
    if (!dev)
        return (elf ? 2u << 16 : 1u << 16) + a;
    if (elf && arch <= dev && arch / 10 == dev / 10)
        return (4u << 16) + a;
    if (!elf && arch <= dev)
        return (3u << 16) + a;
    return (elf ? 2u << 16 : 1u << 16) + a;
}

typedef struct ranked {
    vt_kernel_layout *l;
    uint64_t score;
    size_t seq;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    int c = strcmp(x->l->name, y->l->name);
    if (c)
        return c;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq); /* first added wins */
}

/* Sort by name and keep one layout per name (best score for device `dev`, first added). */
static vt_fatbin *builder_finish(vt_fb_builder *b, uint32_t dev)
{
    vt_fatbin *fb = calloc(1, sizeof *fb);
    ranked *order = b->n ? malloc(b->n * sizeof *order) : NULL;
    vt_kernel_layout *k = b->n ? malloc(b->n * sizeof *k) : NULL;
    if (!fb || (b->n && (!order || !k))) {
        free(fb);
        free(order);
        free(k);
        return NULL;
    }
    for (size_t i = 0; i < b->n; i++)
        order[i] = (ranked){&b->k[i], score(b->k[i].source, b->arch[i], dev), i};
    if (b->n)
        qsort(order, b->n, sizeof *order, cmp_ranked);
    size_t w = 0;
    for (size_t r = 0; r < b->n; r++) {
        if (w && strcmp(k[w - 1].name, order[r].l->name) == 0) {
            /* The kept layout (ELF, say) takes the address uses another entry's PTX found: they
             * name parameters and bytes within them, the same in every arch. */
            if (k[w - 1].nuses < 0 && order[r].l->nuses >= 0) {
                k[w - 1].nuses = order[r].l->nuses;
                k[w - 1].uses = order[r].l->uses;
                order[r].l->uses = NULL;
            }
            free(order[r].l->name);
            free(order[r].l->params);
            free(order[r].l->uses);
            continue;
        }
        k[w++] = *order[r].l;
    }
    free(order);
    free(b->k);
    free(b->arch);
    fb->k = k;
    fb->n = w;
    b->k = NULL;
    b->arch = NULL;
    b->n = b->cap = 0;
    return fb;
}

/* ---- fatbin entries ---------------------------------------------------------------------- */

static int decompress(const uint8_t *src, size_t csz, uint64_t flags, uint64_t usz,
                      uint8_t **outp, char *err, size_t errlen)
{
    if (csz == 0 || usz == 0 || usz > VT_FB_MAX_ENTRY || usz / VT_FB_MAX_RATIO > csz)
        return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "implausible uncompressed size", usz);
    uint8_t *dst = malloc((size_t)usz + 1);
    if (!dst)
        return vt_fb_fail(err, errlen, VT_FATBIN_ENOMEM, "out of memory decompressing entry");
    size_t got;
    if (flags & FLAG_ZSTD) {
        got = ZSTD_decompress(dst, (size_t)usz, src, csz);
        if (ZSTD_isError(got)) {
            free(dst);
            return vt_fb_fail(err, errlen, VT_FATBIN_EDECOMP, "zstd payload does not decompress");
        }
    } else {
        if (csz > (size_t)LZ4_MAX_INPUT_SIZE || usz > (uint64_t)INT32_MAX) {
            free(dst);
            return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "LZ4 payload too large");
        }
        int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)csz, (int)usz);
        if (r < 0) {
            free(dst);
            return vt_fb_fail(err, errlen, VT_FATBIN_EDECOMP, "LZ4 payload does not decompress");
        }
        got = (size_t)r;
    }
    if (got != usz) {
        free(dst);
        return vt_fb_failn(err, errlen, VT_FATBIN_EDECOMP,
                           "decompressed size differs from the entry header", got);
    }
    dst[usz] = '\0';
    *outp = dst;
    return 0;
}

/* One entry whose header starts at e and which has avail bytes (header + payload) readable.
 * Sets *used to the entry's total size. */
static int parse_entry(vt_fb_builder *b, const uint8_t *e, size_t avail, size_t *used,
                       char *err, size_t errlen)
{
    if (avail < ENTRY_MIN_HDR)
        return vt_fb_fail(err, errlen, VT_FATBIN_ETRUNC, "fatbin entry header truncated");
    uint16_t kind = vt_fb_le16(e);
    uint32_t hsz = vt_fb_le32(e + 4);
    uint64_t psz = vt_fb_le64(e + 8);
    uint32_t csz = vt_fb_le32(e + 0x10);
    uint64_t flags = vt_fb_le64(e + 0x28);
    uint64_t usz = vt_fb_le64(e + 0x38);
    uint32_t arch = vt_fb_le32(e + 0x1c);
    if (hsz < ENTRY_MIN_HDR || hsz > avail)
        return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "bad fatbin entry header size", hsz);
    if (!vt_fb_fits(hsz, psz, avail))
        return vt_fb_failn(err, errlen, VT_FATBIN_ETRUNC, "fatbin entry payload past end", psz);
    *used = hsz + (size_t)psz;
    if (kind != KIND_PTX && kind != KIND_ELF)
        return 0; /* other kinds (e.g. LTO IR) carry no layouts we read */
    /* vt_fatbin_each_cubin: only the cubins a device of on_elf_sm runs (its major architecture,
     * not newer), left compressed otherwise (a framework's fatbin holds a dozen archs) */
    if (b->on_elf && (kind != KIND_ELF || (b->on_elf_sm && (arch / 10 != b->on_elf_sm / 10 || arch > b->on_elf_sm))))
        return 0;
    const uint8_t *pl = e + hsz;
    size_t plen = (size_t)psz;
    uint8_t *buf = NULL;
    if ((flags & FLAG_ZSTD) && (flags & FLAG_LZ4))
        return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "entry flagged both zstd and LZ4");
    if (flags & (FLAG_ZSTD | FLAG_LZ4)) {
        if (csz > psz)
            return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT,
                               "compressed size exceeds payload size", csz);
        int rc = decompress(pl, csz, flags, usz, &buf, err, errlen);
        if (rc)
            return rc;
        pl = buf;
        plen = (size_t)usz;
    }
    int rc;
    if (b->on_elf) { /* vt_fatbin_each_cubin: the cubins themselves, no layouts */
        rc = b->on_elf(b->ctx, arch, pl, plen) ? VT_FB_STOP : 0;
        free(buf);
        return rc;
    }
    b->cur_arch = arch;
    if (kind == KIND_ELF)
        rc = vt_fb_parse_elf(b, pl, plen, err, errlen);
    else
        rc = vt_fb_parse_ptx(b, (const char *)pl, plen, err, errlen);
    free(buf);
    b->cur_arch = 0;
    return rc;
}

/* A fatbin header at p with avail bytes readable; *used = header + entries. */
static int parse_fatbin(vt_fb_builder *b, const uint8_t *p, size_t avail, size_t *used,
                        char *err, size_t errlen)
{
    if (avail < FATBIN_HDR)
        return vt_fb_fail(err, errlen, VT_FATBIN_ETRUNC, "fatbin header truncated");
    if (vt_fb_le32(p) != FATBIN_MAGIC)
        return vt_fb_failn(err, errlen, VT_FATBIN_EINVAL, "bad fatbin magic", vt_fb_le32(p));
    uint16_t ver = vt_fb_le16(p + 4), hsz = vt_fb_le16(p + 6);
    uint64_t fsz = vt_fb_le64(p + 8);
    if (ver != 1)
        return vt_fb_failn(err, errlen, VT_FATBIN_EINVAL, "unsupported fatbin version", ver);
    if (hsz < FATBIN_HDR)
        return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "bad fatbin header size", hsz);
    if (!vt_fb_fits(hsz, fsz, avail))
        return vt_fb_failn(err, errlen, VT_FATBIN_ETRUNC, "fatbin shorter than its header claims",
                           fsz);
    size_t end = hsz + (size_t)fsz, off = hsz;
    while (off < end) {
        size_t n = 0;
        int rc = parse_entry(b, p + off, end - off, &n, err, errlen);
        if (rc)
            return rc;
        off += n;
    }
    *used = end;
    return 0;
}

/* One or more fatbins back to back (as in an executable's .nv_fatbin section, 8-aligned). */
static int parse_fatbins(vt_fb_builder *b, const uint8_t *p, size_t avail, char *err,
                         size_t errlen)
{
    size_t off = 0;
    for (;;) {
        size_t used = 0;
        int rc = parse_fatbin(b, p + off, avail - off, &used, err, errlen);
        if (rc)
            return rc;
        off += used;
        off += (8 - off % 8) % 8;
        if (off >= avail || avail - off < FATBIN_HDR || vt_fb_le32(p + off) != FATBIN_MAGIC)
            return 0;
    }
}

/* Bytes at p match `magic` (n bytes), compared one at a time so that a shorter NUL-terminated
 * text is never read past its NUL (no magic contains a zero byte). */
static int has_magic(const uint8_t *p, size_t len, const uint8_t *magic, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((len && i >= len) || p[i] != magic[i])
            return 0;
    return 1;
}

static size_t bounded_strlen(const char *s, size_t max)
{
    const char *z = memchr(s, '\0', max);
    return z ? (size_t)(z - s) : max;
}

/* The magics that tell the image kinds apart (little-endian bytes). */
static const uint8_t wrap_m[4] = {0xB1, 0x43, 0x62, 0x46}; /* fatbin wrapper 0x466243B1 */
static const uint8_t fat_m[4] = {0x50, 0xED, 0x55, 0xBA};  /* fatbin header 0xBA55ED50 */
static const uint8_t elf_m[4] = {0x7f, 'E', 'L', 'F'};

/* Parse the image into b. */
static int parse_image(vt_fb_builder *b, const uint8_t *p, size_t len, char *err, size_t errlen)
{
    if (has_magic(p, len, wrap_m, 4)) {
        if (len && len < 16)
            return vt_fb_fail(err, errlen, VT_FATBIN_ETRUNC, "fatbin wrapper truncated");
        const void *data;
        memcpy(&data, p + 8, sizeof data);
        if (!data)
            return vt_fb_fail(err, errlen, VT_FATBIN_EINVAL, "fatbin wrapper has no data");
        if (!has_magic(data, 0, fat_m, 4))
            return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT,
                              "fatbin wrapper data is not a fatbin header");
        /* the wrapper says nothing of the length: trust the header, capped */
        return parse_fatbin(b, data, VT_FATBIN_MAX_IMAGE, &(size_t){0}, err, errlen);
    }
    if (has_magic(p, len, fat_m, 4)) {
        if (len)
            return parse_fatbins(b, p, len, err, errlen);
        return parse_fatbin(b, p, VT_FATBIN_MAX_IMAGE, &(size_t){0}, err, errlen);
    }
    if (has_magic(p, len, elf_m, 4)) {
        size_t n = len;
        if (!n && !(n = vt_fb_elf_extent(p)))
            return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "ELF headers give no size");
        return vt_fb_parse_elf(b, p, n, err, errlen);
    }
    /* PTX: text up to the first NUL (or len). */
    size_t n = bounded_strlen((const char *)p, len ? len : VT_FATBIN_MAX_IMAGE);
    const char *s = (const char *)p;
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    if (i == n || (s[i] != '.' && s[i] != '/'))
        return vt_fb_fail(err, errlen, VT_FATBIN_EINVAL, "not a fatbin, ELF cubin or PTX text");
    if (!memmem(s, n, ".version", 8) && !memmem(s, n, ".target", 7) && !memmem(s, n, ".entry", 6))
        return vt_fb_fail(err, errlen, VT_FATBIN_EINVAL, "text is not PTX");
    return vt_fb_parse_ptx(b, s, n, err, errlen);
}

/* ---- public API -------------------------------------------------------------------------- */

const void *vt_fatbin_image_extent(const void *image, size_t *len)
{
    const uint8_t *p = image;
    *len = 0;
    if (!p) return NULL;
    if (has_magic(p, 0, wrap_m, 4)) memcpy(&p, (const uint8_t *)image + 8, sizeof p);
    if (!p) return NULL;
    size_t n = 0;
    if (has_magic(p, 0, fat_m, 4)) {
        uint64_t fatsize = vt_fb_le64(p + 8);
        n = fatsize <= VT_FATBIN_MAX_IMAGE - FATBIN_HDR ? FATBIN_HDR + (size_t)fatsize : 0;
    } else if (has_magic(p, 0, elf_m, 4)) n = vt_fb_elf_extent(p);
    else if (p == image) n = bounded_strlen((const char *)p, VT_FATBIN_MAX_IMAGE - 1) + 1; /* PTX and its NUL */
    if (!n || n > VT_FATBIN_MAX_IMAGE) return NULL;
    *len = n;
    return p;
}

int vt_fatbin_each_cubin(const void *data, size_t len, unsigned sm,
                         int (*fn)(void *ctx, unsigned sm, const uint8_t *elf, size_t len), void *ctx, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!data || !fn || !len)
        return vt_fb_fail(err, errlen, VT_FATBIN_EINVAL, "no image");
    if (len > VT_FATBIN_MAX_IMAGE)
        return vt_fb_failn(err, errlen, VT_FATBIN_EINVAL, "image larger than the limit", len);
    const uint8_t *p = data;
    if (has_magic(p, len, elf_m, 4)) /* a bare cubin: its arch is in its own header, not asked for here */
        return fn(ctx, 0, p, len), 0;
    if (!has_magic(p, len, fat_m, 4))
        return vt_fb_fail(err, errlen, VT_FATBIN_EINVAL, "not a fatbin or ELF cubin");
    vt_fb_builder b = {0};
    b.on_elf = fn;
    b.on_elf_sm = sm;
    b.ctx = ctx;
    int rc = parse_fatbins(&b, p, len, err, errlen);
    return rc == VT_FB_STOP ? 0 : rc;
}

uint32_t vt_fatbin_param_base(unsigned sm) { return vt_fb_param_base(sm); }

int vt_fatbin_parse(const void *data, size_t len, vt_fatbin **out, char *err, size_t errlen)
{
    return vt_fatbin_parse_arch(data, len, 0, out, err, errlen);
}

int vt_fatbin_parse_arch(const void *data, size_t len, unsigned sm, vt_fatbin **out, char *err,
                         size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out)
        return vt_fb_fail(err, errlen, VT_FATBIN_EINVAL, "no output pointer");
    *out = NULL;
    if (!data)
        return vt_fb_fail(err, errlen, VT_FATBIN_EINVAL, "no image");
    if (len > VT_FATBIN_MAX_IMAGE)
        return vt_fb_failn(err, errlen, VT_FATBIN_EINVAL, "image larger than the limit", len);
    vt_fb_builder b = {0};
    int rc = parse_image(&b, data, len, err, errlen);
    if (rc) {
        free_layouts(b.k, b.n);
        free(b.arch);
        return rc;
    }
    vt_fatbin *fb = builder_finish(&b, sm);
    if (!fb) {
        free_layouts(b.k, b.n);
        free(b.arch);
        return vt_fb_fail(err, errlen, VT_FATBIN_ENOMEM, "out of memory");
    }
    if (fb->n > (size_t)INT32_MAX) { /* cannot happen under VT_FB_MAX_KERNELS */
        vt_fatbin_free(fb);
        return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "too many kernels");
    }
    *out = fb;
    return (int)fb->n;
}

size_t vt_fatbin_count(const vt_fatbin *fb) { return fb ? fb->n : 0; }

const vt_kernel_layout *vt_fatbin_at(const vt_fatbin *fb, size_t i)
{
    return fb && i < fb->n ? &fb->k[i] : NULL;
}

static int cmp_name_key(const void *key, const void *elem)
{
    return strcmp(key, ((const vt_kernel_layout *)elem)->name);
}

const vt_kernel_layout *vt_fatbin_find(const vt_fatbin *fb, const char *name)
{
    if (!fb || !name || !fb->n)
        return NULL;
    return bsearch(name, fb->k, fb->n, sizeof *fb->k, cmp_name_key);
}

void vt_fatbin_free(vt_fatbin *fb)
{
    if (!fb)
        return;
    free_layouts(fb->k, fb->n);
    free(fb);
}
