/* fatbin_elf.c - kernel parameter layouts from an ELF cubin's `.nv.info.<kernel>` sections
 * (EIATTR_KPARAM_INFO records). Every read is bounds-checked against the image length. */
#include <stdlib.h>
#include <string.h>
#include "fatbin_int.h"

#define EHDR_SIZE 64u
#define SHDR_MIN  64u
#define SYM_MIN   24u
#define SHT_SYMTAB 2u
#define SHT_NOBITS 8u
#define STT_FUNC 2u
#define STO_CUDA_ENTRY 0x10u
#define SHN_XINDEX 0xffffu

#define EIFMT_NVAL 1u
#define EIFMT_BVAL 2u
#define EIFMT_HVAL 3u
#define EIFMT_SVAL 4u
#define EIATTR_KPARAM_INFO 0x17u       /* u32 index; u16 ordinal; u16 offset; u32 (size << 18 | ...) */
#define EIATTR_CBANK_PARAM_SIZE 0x19u  /* HVAL: bytes of parameters */
#define EIATTR_MAXREG_COUNT 0x1bu      /* present for kernels, absent for device functions */
#define EIATTR_KPARAM_INFO_V2 0x45u    /* u32 index; u16 ordinal; u16 offset; u32 flags << 24 | size (> ~4 KiB of params) */

#define NVINFO_PREFIX ".nv.info."
#define NVINFO_PREFIX_LEN 9u

typedef struct elf {
    const uint8_t *p;
    size_t n;
    uint64_t shoff;
    uint32_t shnum, shentsize, shstrndx;
} elf;

typedef struct nvinfo_sec {
    const char *name; /* kernel name (after the prefix), NUL-terminated inside .shstrtab */
    uint32_t index;
} nvinfo_sec;

static const uint8_t *shdr(const elf *e, uint32_t i) { return e->p + e->shoff + (uint64_t)i * e->shentsize; }

static int elf_open(elf *e, const uint8_t *p, size_t n, char *err, size_t errlen)
{
    if (n < EHDR_SIZE)
        return vt_fb_fail(err, errlen, VT_FATBIN_ETRUNC, "ELF header truncated");
    if (memcmp(p, "\x7f" "ELF", 4) != 0)
        return vt_fb_fail(err, errlen, VT_FATBIN_EINVAL, "bad ELF magic");
    if (p[4] != 2 || p[5] != 1)
        return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "not a little-endian ELF64 cubin");
    e->p = p;
    e->n = n;
    e->shoff = vt_fb_le64(p + 40);
    e->shentsize = vt_fb_le16(p + 58);
    e->shnum = vt_fb_le16(p + 60);
    e->shstrndx = vt_fb_le16(p + 62);
    if (e->shoff == 0)
        return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "ELF has no section headers");
    if (e->shentsize < SHDR_MIN)
        return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "bad ELF section header size",
                           e->shentsize);
    if (!vt_fb_fits(e->shoff, SHDR_MIN, n))
        return vt_fb_failn(err, errlen, VT_FATBIN_ETRUNC, "ELF section headers past end", e->shoff);
    if (e->shnum == 0) /* extended numbering: the count is in section 0's sh_size */
        e->shnum = vt_fb_le64(e->p + e->shoff + 32) > 0xffffffu ? 0xffffffu
                   : (uint32_t)vt_fb_le64(e->p + e->shoff + 32);
    if (e->shstrndx == SHN_XINDEX)
        e->shstrndx = vt_fb_le32(e->p + e->shoff + 40);
    if (!vt_fb_fits(e->shoff, (uint64_t)e->shnum * e->shentsize, n))
        return vt_fb_failn(err, errlen, VT_FATBIN_ETRUNC, "ELF section headers past end", e->shnum);
    uint64_t phoff = vt_fb_le64(p + 32), phsz = (uint64_t)vt_fb_le16(p + 54) * vt_fb_le16(p + 56);
    if (phsz && !vt_fb_fits(phoff, phsz, n)) /* unused, but a cut-off image is not trusted */
        return vt_fb_failn(err, errlen, VT_FATBIN_ETRUNC, "ELF program headers past end", phoff);
    if (e->shstrndx >= e->shnum)
        return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "bad ELF shstrndx", e->shstrndx);
    return 0;
}

/* Section i's contents; 0 or a negative code when they lie outside the image. */
static int sec_data(const elf *e, uint32_t i, const uint8_t **d, uint64_t *size)
{
    if (i >= e->shnum)
        return VT_FATBIN_ECORRUPT;
    const uint8_t *s = shdr(e, i);
    uint64_t off = vt_fb_le64(s + 24), sz = vt_fb_le64(s + 32);
    if (vt_fb_le32(s + 4) == SHT_NOBITS)
        sz = 0;
    if (!vt_fb_fits(off, sz, e->n))
        return VT_FATBIN_ETRUNC;
    *d = e->p + off;
    *size = sz;
    return 0;
}

/* NUL-terminated string at offset o of a string table; NULL when it runs off the table. */
static const char *str_at(const uint8_t *tab, uint64_t tabsz, uint64_t o)
{
    if (o >= tabsz)
        return NULL;
    const char *s = (const char *)tab + o;
    return memchr(s, '\0', (size_t)(tabsz - o)) ? s : NULL;
}

size_t vt_fb_elf_extent(const uint8_t *p)
{
    uint64_t shoff = vt_fb_le64(p + 40), end = EHDR_SIZE;
    uint64_t phoff = vt_fb_le64(p + 32);
    uint32_t phes = vt_fb_le16(p + 54), phnum = vt_fb_le16(p + 56);
    uint32_t shes = vt_fb_le16(p + 58), shnum = vt_fb_le16(p + 60);
    if (p[4] != 2 || p[5] != 1 || shes < SHDR_MIN || shnum == 0 || shoff > VT_FATBIN_MAX_IMAGE)
        return 0;
    if (shoff + (uint64_t)shnum * shes > VT_FATBIN_MAX_IMAGE)
        return 0;
    end = shoff + (uint64_t)shnum * shes;
    if (phnum && phoff < VT_FATBIN_MAX_IMAGE && phoff + (uint64_t)phnum * phes > end)
        end = phoff + (uint64_t)phnum * phes;
    for (uint32_t i = 0; i < shnum; i++) {
        const uint8_t *s = p + shoff + (uint64_t)i * shes;
        uint64_t off = vt_fb_le64(s + 24), sz = vt_fb_le64(s + 32);
        if (vt_fb_le32(s + 4) == SHT_NOBITS)
            continue;
        if (off > VT_FATBIN_MAX_IMAGE || sz > VT_FATBIN_MAX_IMAGE)
            return 0;
        if (off + sz > end)
            end = off + sz;
    }
    return end > VT_FATBIN_MAX_IMAGE ? 0 : (size_t)end;
}

/* Decode one .nv.info.<kernel> section. *is_kernel: it carries kernel-only attributes.
 * Writes np parameters into params (VT_FATBIN_MAX_PARAMS entries). */
static int decode_nvinfo(const uint8_t *d, uint64_t size, vt_param *params, uint32_t *np,
                         int *is_kernel, char *err, size_t errlen)
{
    uint8_t seen[VT_FATBIN_MAX_PARAMS / 8] = {0};
    uint32_t count = 0, maxord = 0, cbank_size = 0;
    int have_cbank = 0;
    uint64_t pos = 0;
    *is_kernel = 0;
    while (pos < size) {
        if (size - pos < 4)
            return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "truncated .nv.info record");
        uint8_t fmt = d[pos], attr = d[pos + 1];
        const uint8_t *pl = d + pos + 4;
        if (fmt == EIFMT_NVAL || fmt == EIFMT_BVAL || fmt == EIFMT_HVAL) {
            if (attr == EIATTR_CBANK_PARAM_SIZE) {
                cbank_size = vt_fb_le16(d + pos + 2);
                have_cbank = 1;
                *is_kernel = 1;
            }
            if (attr == EIATTR_MAXREG_COUNT)
                *is_kernel = 1;
            pos += 4;
            continue;
        }
        if (fmt != EIFMT_SVAL)
            return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "unknown .nv.info record format",
                               fmt);
        uint32_t plsz = vt_fb_le16(d + pos + 2);
        if (!vt_fb_fits(pos + 4, plsz, size))
            return vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, ".nv.info record past section end");
        pos += 4 + (uint64_t)plsz;
        if (attr != EIATTR_KPARAM_INFO && attr != EIATTR_KPARAM_INFO_V2)
            continue;
        if (plsz < 12)
            return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "short KPARAM_INFO record", plsz);
        uint32_t ord = vt_fb_le16(pl + 4), off = vt_fb_le16(pl + 6), w = vt_fb_le32(pl + 8);
        /* V1: the size is the top 14 bits (the rest: cbank and flags). V2: the size is the low 24
         * bits; the top byte carries flags (0x05000008 is 8 bytes, seen in PyTorch's fatbins). */
        uint32_t sz = attr == EIATTR_KPARAM_INFO ? w >> 18 : w & 0x00ffffffu;
        if (ord >= VT_FATBIN_MAX_PARAMS)
            return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "parameter ordinal too large", ord);
        if (sz > VT_FB_MAX_PARAM_BYTES || off + sz > VT_FB_MAX_PARAM_BYTES)
            return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "parameter size too large", sz);
        if (seen[ord / 8] & (1u << (ord % 8)))
            return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "duplicate parameter ordinal", ord);
        seen[ord / 8] |= (uint8_t)(1u << (ord % 8));
        params[ord].offset = off;
        params[ord].size = sz;
        if (ord >= maxord)
            maxord = ord;
        count++;
        *is_kernel = 1;
    }
    *np = count ? maxord + 1 : 0;
    if (count != *np)
        return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "missing parameter ordinal", count);
    for (uint32_t i = 0; have_cbank && i < *np; i++)
        if (params[i].offset + params[i].size > cbank_size)
            return vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT,
                               "parameter beyond CBANK_PARAM_SIZE", i);
    return 0;
}

static int cmp_nvinfo(const void *a, const void *b)
{
    return strcmp(((const nvinfo_sec *)a)->name, ((const nvinfo_sec *)b)->name);
}

static int cmp_nvinfo_key(const void *key, const void *elem)
{
    return strcmp(key, ((const nvinfo_sec *)elem)->name);
}

/* Decode section `index` and add it as kernel `name`; when require_kernel, skip sections that
 * carry no kernel attributes (device functions). */
static int add_from_section(vt_fb_builder *b, const elf *e, uint32_t index, const char *name,
                            vt_param *params, int require_kernel, char *err, size_t errlen)
{
    const uint8_t *d;
    uint64_t sz;
    uint32_t np = 0;
    int is_kernel = 0;
    if (sec_data(e, index, &d, &sz))
        return vt_fb_failn(err, errlen, VT_FATBIN_ETRUNC, ".nv.info section past end", index);
    int rc = decode_nvinfo(d, sz, params, &np, &is_kernel, err, errlen);
    if (rc)
        return rc;
    if (require_kernel && !is_kernel)
        return 0;
    rc = vt_fb_add(b, name, strlen(name), params, np, VT_LAYOUT_ELF);
    if (rc)
        return vt_fb_fail(err, errlen, rc, rc == VT_FATBIN_ENOMEM ? "out of memory"
                                                                  : "bad kernel name or count");
    return 0;
}

int vt_fb_parse_elf(vt_fb_builder *b, const uint8_t *p, size_t n, char *err, size_t errlen)
{
    elf e = { 0 };
    int rc = elf_open(&e, p, n, err, errlen);
    if (rc)
        return rc;
    const uint8_t *shstr;
    uint64_t shstrsz;
    if (sec_data(&e, e.shstrndx, &shstr, &shstrsz))
        return vt_fb_fail(err, errlen, VT_FATBIN_ETRUNC, "ELF .shstrtab past end");

    nvinfo_sec *secs = malloc(e.shnum * sizeof *secs);
    vt_param *params = malloc(VT_FATBIN_MAX_PARAMS * sizeof *params);
    if (!secs || !params) {
        free(secs);
        free(params);
        return vt_fb_fail(err, errlen, VT_FATBIN_ENOMEM, "out of memory");
    }
    size_t nsecs = 0;
    uint32_t symtab = 0;
    for (uint32_t i = 1; i < e.shnum; i++) {
        const uint8_t *s = shdr(&e, i);
        if (vt_fb_le32(s + 4) == SHT_SYMTAB && !symtab)
            symtab = i;
        const char *nm = str_at(shstr, shstrsz, vt_fb_le32(s));
        if (!nm) {
            rc = vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "bad ELF section name", i);
            goto out;
        }
        if (strncmp(nm, NVINFO_PREFIX, NVINFO_PREFIX_LEN) == 0 && nm[NVINFO_PREFIX_LEN])
            secs[nsecs++] = (nvinfo_sec){nm + NVINFO_PREFIX_LEN, i};
    }
    if (nsecs)
        qsort(secs, nsecs, sizeof *secs, cmp_nvinfo);

    if (!symtab) { /* no symbols: every .nv.info.<name> with kernel attributes */
        for (size_t i = 0; i < nsecs && !rc; i++)
            rc = add_from_section(b, &e, secs[i].index, secs[i].name, params, 1, err, errlen);
        goto out;
    }
    /* kernels are the FUNC symbols marked STO_CUDA_ENTRY */
    const uint8_t *syms, *strs;
    uint64_t symsz, strsz;
    const uint8_t *st = shdr(&e, symtab);
    uint64_t symes = vt_fb_le64(st + 56);
    if (sec_data(&e, symtab, &syms, &symsz) || sec_data(&e, vt_fb_le32(st + 40), &strs, &strsz)) {
        rc = vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "bad ELF symbol table");
        goto out;
    }
    if (symes < SYM_MIN) {
        rc = vt_fb_failn(err, errlen, VT_FATBIN_ECORRUPT, "bad ELF symbol size", symes);
        goto out;
    }
    for (uint64_t o = 0; symsz - o >= symes && !rc; o += symes) {
        const uint8_t *sym = syms + o;
        if ((sym[4] & 0xf) != STT_FUNC || !(sym[5] & STO_CUDA_ENTRY))
            continue;
        const char *nm = str_at(strs, strsz, vt_fb_le32(sym));
        if (!nm || !*nm) {
            rc = vt_fb_fail(err, errlen, VT_FATBIN_ECORRUPT, "bad ELF symbol name");
            break;
        }
        const nvinfo_sec *s = nsecs ? bsearch(nm, secs, nsecs, sizeof *secs, cmp_nvinfo_key) : NULL;
        if (s) /* an entry without .nv.info has no layout we can know */
            rc = add_from_section(b, &e, s->index, s->name, params, 0, err, errlen);
    }
out:
    free(secs);
    free(params);
    return rc;
}
