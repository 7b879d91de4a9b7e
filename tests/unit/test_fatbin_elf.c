/* test_fatbin_elf.c - the cubin (ELF) reader on nvcc 13's sm90.cubin (tests/data/fatbin) edited
 * the way the ELF-64 specification allows or forbids:
 *  - allowed: extended section numbering (e_shnum 0 with the count in section 0's sh_size,
 *    e_shstrndx SHN_XINDEX with the index in section 0's sh_link), and no symbol table (every
 *    .nv.info.<name> section with kernel attributes is a kernel): the same layouts as the image
 *    as nvcc wrote it (test_fatbin checks those against the host compiler's);
 *  - forbidden: each header, section, symbol or .nv.info record made inconsistent: the error
 *    code that names what is wrong, never a layout read from outside the image. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fatbin.h"
#include "vt_test.h"
#include "fatbin_test_util.h"

#define SHT_SYMTAB 2u
#define STT_FUNC 2u
#define STO_CUDA_ENTRY 0x10u


/* Section header I of the image (the ELF header's e_shoff, e_shentsize). */
static unsigned char *sh(blob *b, unsigned i) { return b->p + rd64(b->p + 40) + (uint64_t)i * rd16(b->p + 58); }
static unsigned shnum(blob *b) { return rd16(b->p + 60); }
static const char *sec_name(blob *b, unsigned i)
{
    return (const char *)b->p + rd64(sh(b, rd16(b->p + 62)) + 24) + rd32(sh(b, i));
}
/* The first section whose name starts with PREFIX, or of type TYPE when PREFIX is NULL; 0 if none. */
static unsigned find_sec(blob *b, const char *prefix, uint32_t type)
{
    for (unsigned i = 1; i < shnum(b); i++)
        if (prefix ? !strncmp(sec_name(b, i), prefix, strlen(prefix)) : rd32(sh(b, i) + 4) == type) return i;
    return 0;
}
/* The first kernel entry symbol (a FUNC marked STO_CUDA_ENTRY). */
static unsigned char *first_entry(blob *b)
{
    unsigned char *st = sh(b, find_sec(b, NULL, SHT_SYMTAB));
    for (uint64_t o = 0; o + 24 <= rd64(st + 32); o += rd64(st + 56)) {
        unsigned char *sym = b->p + rd64(st + 24) + o;
        if ((sym[4] & 0xf) == STT_FUNC && (sym[5] & STO_CUDA_ENTRY)) return sym;
    }
    return NULL;
}
/* The first KPARAM_INFO (0x17) or KPARAM_INFO_V2 (0x45) record of the image. */
static unsigned char *first_kparam(blob *b, unsigned char attr)
{
    const unsigned char rec[4] = {4, attr, 12, 0};
    for (size_t i = 0; i + 16 <= b->n; i++)
        if (!memcmp(b->p + i, rec, 4)) return b->p + i;
    return NULL;
}

/* allowed */
static void p_none(blob *b) { (void)b; }
static void p_shnum_ext(blob *b) { wr64(sh(b, 0) + 32, shnum(b)); wr16(b->p + 60, 0); }
static void p_shstrndx_ext(blob *b) { wr32(sh(b, 0) + 40, rd16(b->p + 62)); wr16(b->p + 62, 0xffff); }
static void p_no_symtab(blob *b) { wr32(sh(b, find_sec(b, NULL, SHT_SYMTAB)) + 4, 1 /* PROGBITS */); }
/* forbidden */
static void p_class32(blob *b) { b->p[4] = 1; }
static void p_bigendian(blob *b) { b->p[5] = 2; }
static void p_no_shdrs(blob *b) { wr64(b->p + 40, 0); }
static void p_phdrs_past(blob *b) { wr16(b->p + 54, 56); wr16(b->p + 56, 1); wr64(b->p + 32, b->n - 8); }
static void p_shstrtab_past(blob *b) { wr64(sh(b, rd16(b->p + 62)) + 24, b->n); }
static void p_sec_name(blob *b) { wr32(sh(b, 2), 0x7fffffff); }
static void p_symtab_link(blob *b) { wr32(sh(b, find_sec(b, NULL, SHT_SYMTAB)) + 40, 0xffff); }
static void p_symtab_past(blob *b) { wr64(sh(b, find_sec(b, NULL, SHT_SYMTAB)) + 24, b->n - 8); }
static void p_sym_entsize(blob *b) { wr64(sh(b, find_sec(b, NULL, SHT_SYMTAB)) + 56, 8); }
static void p_sym_name(blob *b) { unsigned char *s = first_entry(b); if (s) wr32(s, 0x7fffffff); }
static void p_sym_name_empty(blob *b) { unsigned char *s = first_entry(b); if (s) wr32(s, 0); }
static void p_nvinfo_past(blob *b) { unsigned i = find_sec(b, ".nv.info.", 0); if (i) wr64(sh(b, i) + 24, b->n); }
static void p_nvinfo_cut(blob *b) { unsigned i = find_sec(b, ".nv.info.", 0); if (i) wr64(sh(b, i) + 32, rd64(sh(b, i) + 32) - 2); }
static void p_nvinfo_odd(blob *b) { unsigned i = find_sec(b, ".nv.info.", 0); if (i) wr64(sh(b, i) + 32, rd64(sh(b, i) + 32) + 2); }
static void p_kparam_short(blob *b) { unsigned char *r = first_kparam(b, 0x17); if (r) r[2] = 8; }
static void p_kparam_v2_big(blob *b) { unsigned char *r = first_kparam(b, 0x45); if (r) wr32(r + 12, 0x20000); }
static void p_kparam_v2_end(blob *b) { unsigned char *r = first_kparam(b, 0x45); if (r) { wr16(r + 10, 0xfff0); wr32(r + 12, 0x20); } }

/* "name n off:size ..." per kernel; NULL when the parse failed (its code in *rc). */
static char *layouts(patch_fn f, int *rc)
{
    blob b = load("sm90.cubin");
    if (!b.p) { *rc = -999; return NULL; }
    f(&b);
    vt_fatbin *fb;
    *rc = parse(&b, 0, &fb);
    free(b.p);
    if (*rc < 0) return NULL;
    size_t cap = 1 << 16, at = 0;
    char *s = malloc(cap);
    s[0] = 0;
    for (size_t i = 0; i < vt_fatbin_count(fb); i++) {
        const vt_kernel_layout *k = vt_fatbin_at(fb, i);
        at += (size_t)snprintf(s + at, cap - at, "%s %u", k->name, k->nparams);
        for (uint32_t j = 0; j < k->nparams; j++)
            at += (size_t)snprintf(s + at, cap - at, " %u:%u", k->params[j].offset, k->params[j].size);
        at += (size_t)snprintf(s + at, cap - at, "\n");
    }
    vt_fatbin_free(fb);
    return s;
}

static void test_allowed(void)
{
    int rc;
    char *want = layouts(p_none, &rc);
    VT_CHECK(want && strstr(want, "k_c ") && strstr(want, "_Z5k_big"), "sm90.cubin parses, k_c and k_big among its kernels");
    static const struct { patch_fn f; const char *what; } cases[] = {
        {p_shnum_ext, "e_shnum 0, the count in section 0's sh_size"},
        {p_shstrndx_ext, "e_shstrndx SHN_XINDEX, the index in section 0's sh_link"},
        {p_no_symtab, "no symbol table: the .nv.info sections with kernel attributes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = layouts(cases[i].f, &rc);
        VT_CHECK(want && got && !strcmp(got, want), "%s: the same layouts (rc %d)", cases[i].what, rc);
        free(got);
    }
    free(want);
}

static void test_forbidden(void)
{
    static const struct { patch_fn f; int want; const char *what; } cases[] = {
        {p_class32, VT_FATBIN_ECORRUPT, "ELFCLASS32"},
        {p_bigendian, VT_FATBIN_ECORRUPT, "big-endian"},
        {p_no_shdrs, VT_FATBIN_ECORRUPT, "e_shoff 0"},
        {p_phdrs_past, VT_FATBIN_ETRUNC, "a program header past the end"},
        {p_shstrtab_past, VT_FATBIN_ETRUNC, ".shstrtab at the end"},
        {p_sec_name, VT_FATBIN_ECORRUPT, "a section name outside .shstrtab"},
        {p_symtab_link, VT_FATBIN_ECORRUPT, ".symtab's string table a section that is not there"},
        {p_symtab_past, VT_FATBIN_ECORRUPT, ".symtab past the end"},
        {p_sym_entsize, VT_FATBIN_ECORRUPT, ".symtab's entries 8 bytes"},
        {p_sym_name, VT_FATBIN_ECORRUPT, "an entry's name outside .strtab"},
        {p_sym_name_empty, VT_FATBIN_ECORRUPT, "an entry with an empty name"},
        {p_nvinfo_past, VT_FATBIN_ETRUNC, ".nv.info.<kernel> at the end"},
        {p_nvinfo_cut, VT_FATBIN_ECORRUPT, ".nv.info.<kernel> 2 bytes short"},
        {p_nvinfo_odd, VT_FATBIN_ECORRUPT, ".nv.info.<kernel> 2 bytes long: half a record at its end"},
        {p_kparam_short, VT_FATBIN_ECORRUPT, "a KPARAM_INFO record of 8 bytes"},
        {p_kparam_v2_big, VT_FATBIN_ECORRUPT, "a KPARAM_INFO_V2 parameter of 128 KiB"},
        {p_kparam_v2_end, VT_FATBIN_ECORRUPT, "a KPARAM_INFO_V2 parameter ending past 64 KiB"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;
        char *got = layouts(cases[i].f, &rc);
        VT_CHECK(!got && rc == cases[i].want, "%s: error %d (got %d)", cases[i].what, cases[i].want, rc);
        free(got);
    }
}

/* rdc_sm90.cubin (tests/data/fatbin/rdc.cu, nvcc 13 -rdc=true): helper has a global FUNC symbol
 * and its own .nv.info section, but no STO_CUDA_ENTRY: entry is the one kernel, with its symbol
 * table read or without one (helper's section then carries no kernel attribute). */
static void test_device_function(void)
{
    static const patch_fn ways[] = { p_none, p_no_symtab };
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        blob b = load("rdc_sm90.cubin");
        vt_fatbin *fb = NULL;
        int rc = -999;
        if (b.p) {
            ways[w](&b);
            rc = parse(&b, 0, &fb);
        }
        const vt_kernel_layout *k = rc == 1 ? vt_fatbin_find(fb, "_Z5entryPii") : NULL;
        VT_CHECK(k && k->nparams == 2 && k->params[0].offset == 0 && k->params[0].size == 8 && k->params[1].offset == 8 &&
                     k->params[1].size == 4 && !vt_fatbin_find(fb, "_Z6helperPii"),
                 "rdc_sm90.cubin%s: entry (p at 0, 8 bytes; n at 8, 4 bytes) the one kernel, helper none (rc %d)",
                 w ? " without its symbol table" : "", rc);
        if (rc >= 0) vt_fatbin_free(fb);
        free(b.p);
    }
}

int main(void)
{
    test_allowed();
    test_forbidden();
    test_device_function();
    return vt_test_finish();
}
