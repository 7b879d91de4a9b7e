/* test_fatbin.c - vt_fatbin_parse on nvcc 13 fixtures (tests/data/fatbin, source kernels.cu) and on
 * malformed images. Run from the repository root (tests/run.sh does), or set VT_FATBIN_DATA. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fatbin.h"
#include "fatbin_int.h"   /* vt_fb_elf_extent */
#include "vt_test.h"
#include "fatbin_test_util.h"

/* "name src n off:size ..." per kernel, as tests/unit/fatbin_dump prints */
static char *render(const vt_fatbin *fb, int with_source)
{
    size_t cap = 1 << 16, at = 0;
    char *s = malloc(cap);
    s[0] = 0;
    for (size_t i = 0; i < vt_fatbin_count(fb); i++) {
        const vt_kernel_layout *k = vt_fatbin_at(fb, i);
        at += (size_t)snprintf(s + at, cap - at, "%s %s %u", k->name,
                               with_source ? (k->source == VT_LAYOUT_ELF ? "elf" : "ptx") : "elf",
                               k->nparams);
        for (uint32_t j = 0; j < k->nparams; j++)
            at += (size_t)snprintf(s + at, cap - at, " %u:%u", k->params[j].offset, k->params[j].size);
        at += (size_t)snprintf(s + at, cap - at, "\n");
    }
    return s;
}

/* Parse a fixture and compare with the expected rendering (source column ignored when !strict). */
#ifndef VT_FATBIN_EXPECTED_DIR
#define VT_FATBIN_EXPECTED_DIR "build/tests/fatbin_expected"
#endif
/* the host compiler's layouts of kernels.cu (tests/data/fatbin/kernels_layout.cpp, mk/fatbin.mk) */
static blob load_expected(const char *name)
{
    char path[512];
    blob b = {NULL, 0};
    snprintf(path, sizeof path, "%s/%s", VT_FATBIN_EXPECTED_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return b;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    b.p = malloc(n + 1);
    if (b.p) { memcpy(b.p, buf, n); b.p[n] = 0; b.n = n; }
    return b;
}

static void check_fixture(const char *file, unsigned sm, const char *expected_file,
                          enum vt_layout_source want_src)
{
    blob b = load(file), e = load_expected(expected_file);
    vt_fatbin *fb;
    int rc = b.p ? parse(&b, sm, &fb) : -999;
    VT_CHECK(rc == 9, "%s (sm %u): 9 kernels (got %d)", file, sm, rc);
    if (rc >= 0) {
        char *got = render(fb, 0);
        VT_CHECK(e.p && strcmp(got, (char *)e.p) == 0, "%s (sm %u): layouts match %s", file, sm,
                 expected_file);
        int all = 1;
        for (size_t i = 0; i < vt_fatbin_count(fb); i++)
            all &= vt_fatbin_at(fb, i)->source == want_src;
        VT_CHECK(all, "%s: every layout from %s", file, want_src == VT_LAYOUT_ELF ? "ELF" : "PTX");
        free(got);
        vt_fatbin_free(fb);
    }
    free(b.p);
    free(e.p);
}

static void test_exact_layouts(void)
{
    blob b = load("default.fatbin");
    vt_fatbin *fb;
    int rc = b.p ? parse(&b, 0, &fb) : -999;
    VT_CHECK_EQ_INT(rc, 9, "default.fatbin parses");
    if (rc < 0)
        return;
    check_layout(fb, "_Z7k_basicPfi1S", 3, (const uint32_t[]){0, 8, 8, 4, 16, 16}, "float*,int,S");
    check_layout(fb, "_Z5k_mixcsdf3S243Arr2C3x", 8,
                 (const uint32_t[]){0, 1, 2, 2, 8, 8, 16, 4, 24, 24, 48, 24, 72, 3, 80, 8}, "mixed");
    check_layout(fb, "_Z6k_tmplIfLi3EEvPT_S0_", 2, (const uint32_t[]){0, 8, 8, 4}, "template");
    check_layout(fb, "k_c", 2, (const uint32_t[]){0, 8, 8, 1}, "extern C");
    check_layout(fb, "_Z6k_nonev", 0, NULL, "no params");
    check_layout(fb, "_Z7k_alignc3A326float2c", 4, (const uint32_t[]){0, 1, 16, 32, 48, 8, 56, 1},
                 "alignas(32) on sm_90");
    check_layout(fb, "_Z5k_bigi3BigPi", 3, (const uint32_t[]){0, 4, 4, 8000, 8008, 8},
                 "8000-byte struct (KPARAM_INFO_V2)");
    uint32_t many[64];
    for (uint32_t i = 0; i < 32; i++) {
        many[2 * i] = 8 * i;
        many[2 * i + 1] = 8;
    }
    check_layout(fb, "_Z6k_manyPiS_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_", 32,
                 many, "32 pointers");
    VT_CHECK(vt_fatbin_find(fb, "_Z6dev_fnPii") == NULL, "device function is not a kernel");
    VT_CHECK(vt_fatbin_find(fb, "nope") == NULL && vt_fatbin_find(fb, "") == NULL,
             "absent names give NULL");
    VT_CHECK(vt_fatbin_at(fb, 9) == NULL && vt_fatbin_count(NULL) == 0 && !vt_fatbin_find(NULL, "k_c"),
             "out-of-range and NULL accessors");
    int sorted = 1;
    for (size_t i = 1; i < vt_fatbin_count(fb); i++)
        sorted &= strcmp(vt_fatbin_at(fb, i - 1)->name, vt_fatbin_at(fb, i)->name) < 0;
    VT_CHECK(sorted, "kernels sorted by name, unique");
    vt_fatbin_free(fb);
    vt_fatbin_free(NULL);

    /* wrapper (as __cudaRegisterFatBinary gets it), with and without a length */
    struct { int magic, version; const void *data; void *fn; } w = {0x466243B1, 1, b.p, NULL};
    char err[128];
    rc = vt_fatbin_parse(&w, sizeof w, &fb, err, sizeof err);
    VT_CHECK_EQ_INT(rc, 9, "wrapper with length");
    vt_fatbin_free(fb);
    rc = vt_fatbin_parse(&w, 0, &fb, err, sizeof err);
    VT_CHECK_EQ_INT(rc, 9, "wrapper, len 0");
    vt_fatbin_free(fb);
    rc = vt_fatbin_parse(b.p, 0, &fb, err, sizeof err);
    VT_CHECK_EQ_INT(rc, 9, "fatbin header, len 0");
    vt_fatbin_free(fb);
    w.data = NULL;
    rc = vt_fatbin_parse(&w, sizeof w, &fb, err, sizeof err);
    VT_CHECK(rc == VT_FATBIN_EINVAL && fb == NULL, "wrapper with NULL data (rc %d)", rc);

    /* two fatbins back to back, as in an executable's .nv_fatbin section */
    blob p = load("ptx_only.fatbin");
    size_t pad = (8 - b.n % 8) % 8;
    blob cat = {calloc(1, b.n + pad + p.n), b.n + pad + p.n};
    memcpy(cat.p, b.p, b.n);
    memcpy(cat.p + b.n + pad, p.p, p.n);
    rc = parse(&cat, 0, &fb);
    VT_CHECK_EQ_INT(rc, 9, "concatenated fatbins");
    if (rc >= 0)
        vt_fatbin_free(fb);
    free(cat.p);
    free(p.p);
    free(b.p);

    blob c = load("sm90.cubin");
    rc = c.p ? vt_fatbin_parse(c.p, 0, &fb, err, sizeof err) : -999;
    VT_CHECK_EQ_INT(rc, 9, "bare cubin, len 0");
    if (rc >= 0)
        vt_fatbin_free(fb);
    free(c.p);
    blob t = load("sm90.ptx");
    rc = t.p ? vt_fatbin_parse(t.p, 0, &fb, err, sizeof err) : -999;
    VT_CHECK_EQ_INT(rc, 9, "PTX text, len 0 (read to NUL)");
    if (rc >= 0)
        vt_fatbin_free(fb);
    free(t.p);
}

/* Parse a patched copy of fixture `file`; return the code. */
static int patched(const char *file, patch_fn f)
{
    blob b = load(file);
    if (!b.p)
        return -999;
    f(&b);
    vt_fatbin *fb;
    int rc = parse(&b, 0, &fb);
    if (rc >= 0)
        vt_fatbin_free(fb);
    free(b.p);
    return rc;
}

/* size.fatbin: entry 0 is a zstd ELF at 0x10, entry 1 a zstd PTX. */
static void p_magic(blob *b) { b->p[0] ^= 0xff; }
static void p_hdrsize(blob *b) { wr16(b->p + 6, 0xffff); }
static void p_fatsize(blob *b) { wr64(b->p + 8, UINT64_MAX); }
static void p_payload(blob *b) { wr64(b->p + 0x10 + 8, UINT64_MAX - 0x20); }
static void p_ehdr0(blob *b) { wr32(b->p + 0x10 + 4, 0); }
static void p_ehdrbig(blob *b) { wr32(b->p + 0x10 + 4, 0xfffffff0u); }
static void p_zstd(blob *b) { b->p[0x10 + 0x40] ^= 0xff; } /* zstd frame magic */
static void p_zstd_body(blob *b)
{
    for (size_t i = 0x10 + 0x40 + 16; i < 0x10 + 0x40 + 400; i += 7)
        b->p[i] ^= 0x5a;
}
static void p_usize(blob *b) { wr64(b->p + 0x10 + 0x38, rd64(b->p + 0x10 + 0x38) + 1); }
static void p_usize_huge(blob *b) { wr64(b->p + 0x10 + 0x38, (uint64_t)1 << 40); }
static void p_csize(blob *b) { wr32(b->p + 0x10 + 0x10, 0xffffffffu); }
static void p_bothflags(blob *b) { wr64(b->p + 0x10 + 0x28, rd64(b->p + 0x10 + 0x28) | 0x2000); }
static void p_version(blob *b) { wr16(b->p + 4, 7); }
/* speed_lz4.fatbin: find the LZ4 entry (flags 0x2000) and corrupt its sizes */
static unsigned char *lz4_entry(blob *b)
{
    size_t off = 16;
    while (off + 0x40 <= b->n) {
        unsigned char *e = b->p + off;
        if (rd64(e + 0x28) & 0x2000)
            return e;
        off += (uint32_t)rd64(e + 4) + rd64(e + 8);
    }
    return b->p;
}
static void p_lz4_usize(blob *b) { unsigned char *e = lz4_entry(b); wr64(e + 0x38, rd64(e + 0x38) + 5); }
static void p_lz4_trunc(blob *b) { unsigned char *e = lz4_entry(b); wr32(e + 0x10, 100); }
/* sm90.cubin */
static void p_shnum(blob *b) { wr16(b->p + 60, 0xffff); }
static void p_shoff(blob *b) { wr64(b->p + 40, UINT64_MAX - 8); }
static void p_shentsize(blob *b) { wr16(b->p + 58, 8); }
static void p_shstrndx(blob *b) { wr16(b->p + 62, 0xfff0); }
static unsigned char *first_kparam_pair(blob *b) /* two consecutive KPARAM_INFO records */
{
    static const unsigned char rec[4] = {4, 0x17, 12, 0};
    for (size_t i = 0; i + 32 <= b->n; i++)
        if (memcmp(b->p + i, rec, 4) == 0 && memcmp(b->p + i + 16, rec, 4) == 0)
            return b->p + i;
    return NULL;
}
static void p_ord_huge(blob *b) { unsigned char *r = first_kparam_pair(b); if (r) wr16(r + 8, 5000); }
static void p_ord_gap(blob *b) { unsigned char *r = first_kparam_pair(b); if (r) wr16(r + 8, 1000); }
static void p_ord_dup(blob *b) { unsigned char *r = first_kparam_pair(b); if (r) memcpy(r + 8, r + 24, 2); }
static void p_psize(blob *b) { unsigned char *r = first_kparam_pair(b); if (r) wr32(r + 12, 0xfffc0000u | 0x1f000); }
static void p_reclen(blob *b) { unsigned char *r = first_kparam_pair(b); if (r) wr16(r + 2, 0xfff0); }
static void p_recfmt(blob *b) { unsigned char *r = first_kparam_pair(b); if (r) r[0] = 9; }

/* KPARAM_INFO_V2 records whose size word carries flags in its top byte (0x05000008 for 8 bytes,
 * as in PyTorch's fatbins) keep their layouts: sm90.cubin's k_big has three V2 records. */
static void p_v2_flags(blob *b)
{
    static const unsigned char rec[4] = {4, 0x45, 12, 0};
    for (size_t i = 0; i + 16 <= b->n; i++)
        if (memcmp(b->p + i, rec, 4) == 0) b->p[i + 15] |= 0x05;   /* w's top byte, little endian */
}
static void test_kparam_v2_flags(void)
{
    blob b = load("sm90.cubin");
    if (!b.p) { VT_CHECK(0, "sm90.cubin loads"); return; }
    int found = 0;
    for (size_t i = 0; i + 16 <= b.n; i++) found += b.p[i] == 4 && b.p[i + 1] == 0x45 && b.p[i + 2] == 12 && !b.p[i + 3];
    VT_CHECK_EQ_INT(found, 3, "sm90.cubin holds 3 KPARAM_INFO_V2 records (k_big)");
    p_v2_flags(&b);
    vt_fatbin *fb;
    int rc = parse(&b, 0, &fb);
    VT_CHECK_EQ_INT(rc, 9, "V2 records with flags 0x05 in the size word's top byte parse");
    if (rc >= 0) {
        check_layout(fb, "_Z5k_bigi3BigPi", 3, (const uint32_t[]){0, 4, 4, 8000, 8008, 8}, "V2 with flags");
        vt_fatbin_free(fb);
    }
    free(b.p);
}

static void test_malformed(void)
{
    static const struct { const char *file; patch_fn f; int want; const char *what; } cases[] = {
        {"size.fatbin", p_magic, VT_FATBIN_EINVAL, "bad fatbin magic"},
        {"size.fatbin", p_version, VT_FATBIN_EINVAL, "unknown fatbin version"},
        {"size.fatbin", p_hdrsize, VT_FATBIN_ETRUNC, "header size past end"},
        {"size.fatbin", p_fatsize, VT_FATBIN_ETRUNC, "fat size overflow"},
        {"size.fatbin", p_payload, VT_FATBIN_ETRUNC, "entry payload_size overflow"},
        {"size.fatbin", p_ehdr0, VT_FATBIN_ECORRUPT, "entry header size 0"},
        {"size.fatbin", p_ehdrbig, VT_FATBIN_ECORRUPT, "entry header size past end"},
        {"size.fatbin", p_zstd, VT_FATBIN_EDECOMP, "corrupt zstd frame magic"},
        {"size.fatbin", p_zstd_body, 0, "corrupt zstd body"},
        {"size.fatbin", p_usize, VT_FATBIN_EDECOMP, "uncompressed size off by one"},
        {"size.fatbin", p_usize_huge, VT_FATBIN_ECORRUPT, "uncompressed size 1 TiB"},
        {"size.fatbin", p_csize, VT_FATBIN_ECORRUPT, "compressed size > payload"},
        {"size.fatbin", p_bothflags, VT_FATBIN_ECORRUPT, "both zstd and LZ4 flags"},
        {"speed_lz4.fatbin", p_lz4_usize, VT_FATBIN_EDECOMP, "LZ4 uncompressed size wrong"},
        {"speed_lz4.fatbin", p_lz4_trunc, VT_FATBIN_EDECOMP, "LZ4 block cut short"},
        {"sm90.cubin", p_shnum, VT_FATBIN_ETRUNC, "ELF shnum 0xffff"},
        {"sm90.cubin", p_shoff, VT_FATBIN_ETRUNC, "ELF shoff overflow"},
        {"sm90.cubin", p_shentsize, VT_FATBIN_ECORRUPT, "ELF shentsize 8"},
        {"sm90.cubin", p_shstrndx, VT_FATBIN_ECORRUPT, "ELF shstrndx out of range"},
        {"sm90.cubin", p_ord_huge, VT_FATBIN_ECORRUPT, "KPARAM ordinal 5000"},
        {"sm90.cubin", p_ord_gap, VT_FATBIN_ECORRUPT, "KPARAM ordinal gap"},
        {"sm90.cubin", p_ord_dup, VT_FATBIN_ECORRUPT, "KPARAM duplicate ordinal"},
        {"sm90.cubin", p_psize, VT_FATBIN_ECORRUPT, "KPARAM size 0x3fff"},
        {"sm90.cubin", p_reclen, VT_FATBIN_ECORRUPT, ".nv.info record past section end"},
        {"sm90.cubin", p_recfmt, VT_FATBIN_ECORRUPT, ".nv.info unknown record format"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = patched(cases[i].file, cases[i].f);
        if (cases[i].want)
            VT_CHECK(rc == cases[i].want, "%s: %s (got %d, want %d)", cases[i].file, cases[i].what,
                     rc, cases[i].want);
        else
            VT_CHECK(rc < 0 && rc != -1000, "%s: %s gives an error (got %d)", cases[i].file,
                     cases[i].what, rc);
    }

    /* every truncation (len 1..n-1; len 0 means "unknown") is an error */
    static const char *const files[] = {"size.fatbin", "multi.fatbin", "speed_lz4.fatbin", "sm90.cubin"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        blob b = load(files[f]);
        int all_neg = b.p != NULL, contract = 1;
        size_t step = b.n > 8192 ? 7 : 1;
        for (size_t n = 1; b.p && n < b.n; n += (n < 256 ? 1 : step)) {
            blob t = copy(b.p, n);
            vt_fatbin *fb;
            int rc = parse(&t, 0, &fb);
            if (rc >= 0) {
                all_neg = 0;
                vt_fatbin_free(fb);
            }
            contract &= rc != -1000;
            free(t.p);
        }
        VT_CHECK(all_neg && contract, "%s: every truncated prefix is an error", files[f]);
        free(b.p);
    }

    /* argument errors, tiny message buffers */
    vt_fatbin *fb = (vt_fatbin *)1;
    char e1[1] = {'x'};
    VT_CHECK(vt_fatbin_parse(NULL, 4, &fb, e1, sizeof e1) == VT_FATBIN_EINVAL && !fb && !e1[0],
             "NULL image, 1-byte message buffer");
    VT_CHECK(vt_fatbin_parse("x", 1, NULL, NULL, 0) == VT_FATBIN_EINVAL, "NULL out, no message buffer");
    VT_CHECK(vt_fatbin_parse("", 0, &fb, NULL, 0) == VT_FATBIN_EINVAL, "empty string");
    static const unsigned char short_hdr[] = {0x50, 0xED, 0x55, 0xBA, 1, 0};
    blob s = copy(short_hdr, sizeof short_hdr);
    VT_CHECK_EQ_INT(parse(&s, 0, &fb), VT_FATBIN_ETRUNC, "6-byte fatbin header");
    free(s.p);
    static const unsigned char short_wrap[] = {0xB1, 0x43, 0x62, 0x46, 1, 0, 0, 0};
    s = copy(short_wrap, sizeof short_wrap);
    VT_CHECK_EQ_INT(parse(&s, 0, &fb), VT_FATBIN_ETRUNC, "8-byte wrapper");
    free(s.p);
}

/* small edge inputs (fuzz/fuzz_fatbin.c found no crash; add its crash-* inputs here if it does):
 * each gives an error or a result, never a crash or a broken contract */
static void test_edge_inputs(void)
{
    static const struct { const char *data; size_t n; } cases[] = {
        {".entry a(.param .u8 b[0x", 24},
        {".version 1\n.entry", 18},
        {".version 1 /* unterminated", 26},
        {".version 1 \"unterminated", 25},
        {".entry k(.param .u8 .u8 x)", 27},
        {".entry k(.param .b8 x[4][4][4][4][4][4][4][4][4])", 50},
        {".target sm_99999999999 .entry k(.param .align 1024 .b8 x[1])", 61},
        {"\x7f" "ELF\x02\x01", 6},
        {"\x50\xed\x55\xba\x01\x00\x10\x00\x40\x00\x00\x00\x00\x00\x00\x00", 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        blob b = copy(cases[i].data, cases[i].n);
        vt_fatbin *fb;
        int rc = parse(&b, 0, &fb);
        if (rc >= 0)
            vt_fatbin_free(fb);
        VT_CHECK(rc != -1000, "edge input %zu (rc %d)", i, rc);
        free(b.p);
    }
}

/* vt_fatbin_image_extent: what a copy of a module image must hold (kernels.c copies images at
 * load time). Each fixture file is exactly one image; PTX text counts its NUL. */
static void test_image_extent(void)
{
    static const char *const whole[] = { "default.fatbin", "none.fatbin", "size.fatbin", "speed_lz4.fatbin",
                                         "ptx_only.fatbin", "multi.fatbin", "sm90.cubin" };
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        blob b = load(whole[i]);
        size_t len = 1;
        const void *at = b.p ? vt_fatbin_image_extent(b.p, &len) : NULL;
        VT_CHECK(at == b.p && len == b.n, "extent of %s: the whole file (%zu bytes), got %zu", whole[i], b.n, len);
        free(b.p);
    }
    blob ptx = load("sm90.ptx");
    size_t len = 0;
    VT_CHECK(ptx.p && vt_fatbin_image_extent(ptx.p, &len) == ptx.p && len == ptx.n + 1, "extent of PTX: its text and NUL");
    /* a wrapper (as __cudaRegisterFatBinary gets) names the fatbin it points at */
    blob fb = load("default.fatbin");
    struct { int magic, version; const void *data, *filename; } wrapper = { 0x466243B1, 1, fb.p, NULL };
    VT_CHECK(fb.p && vt_fatbin_image_extent(&wrapper, &len) == fb.p && len == fb.n, "extent of a wrapper: its fatbin");
    /* a fatbin header that claims more than the limit, or no image at all */
    if (fb.p) wr64(fb.p + 8, UINT64_MAX - 8);
    VT_CHECK(fb.p && vt_fatbin_image_extent(fb.p, &len) == NULL && len == 0, "extent of a fatbin claiming 2^64 bytes: none");
    static const unsigned char junk[] = { 1, 2, 3, 4, 0 };
    VT_CHECK(vt_fatbin_image_extent(junk, &len) != NULL && len == 5, "extent of text: up to its NUL (PTX or not: the parser decides)");
    VT_CHECK(vt_fatbin_image_extent(NULL, &len) == NULL && len == 0, "extent of NULL: none");
    free(ptx.p);
    free(fb.p);
}

/* An ELF image's extent (a cubin handed over by address, its size not given): by the ELF-64 layout,
 * the furthest of the section header table's end and each section's data end, except SHT_NOBITS
 * sections, which take no file bytes. Here the header table comes first (64 + 3 * 64 bytes) and
 * the last section's data ends at 0x1234. */
static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static void test_elf_extent(void)
{
    static uint8_t elf[64 + 4 * 64];
    memset(elf, 0, sizeof elf);
    memcpy(elf, "\177ELF", 4);
    elf[4] = 2;   /* ELFCLASS64 */
    elf[5] = 1;   /* little-endian */
    put64(elf + 40, 64);       /* e_shoff: right after the header */
    put16(elf + 58, 64);       /* e_shentsize */
    put16(elf + 60, 4);        /* e_shnum: null, PROGBITS, PROGBITS, NOBITS */
    uint8_t *sh = elf + 64;
    put32(sh + 64 + 4, 1);     put64(sh + 64 + 24, 0x400);  put64(sh + 64 + 32, 0x100);
    put32(sh + 128 + 4, 1);    put64(sh + 128 + 24, 0x1000); put64(sh + 128 + 32, 0x234);
    put32(sh + 192 + 4, 8);    put64(sh + 192 + 24, 0x8000); put64(sh + 192 + 32, 0x10000);
    VT_CHECK_EQ_INT(vt_fb_elf_extent(elf), 0x1234, "ELF extent: the furthest section data end, NOBITS left out");
    put64(sh + 128 + 32, 0x10);
    VT_CHECK_EQ_INT(vt_fb_elf_extent(elf), 0x1010, "ELF extent: the last section's data, wherever it lies");
    /* an image may claim at most VT_FATBIN_MAX_IMAGE (2 GiB) bytes: a section reaching exactly
     * there is whole; one past, by its offset, its size or their sum, gives no extent at all */
    const uint64_t max = (uint64_t)1 << 31;
    put64(sh + 128 + 24, max - 0x10);
    VT_CHECK_EQ_INT(vt_fb_elf_extent(elf), max, "ELF extent: a section ending at 2 GiB");
    put64(sh + 128 + 32, 0x11);
    VT_CHECK_EQ_INT(vt_fb_elf_extent(elf), 0, "ELF extent: a section ending a byte past 2 GiB: none");
    put64(sh + 128 + 24, max + 1);
    put64(sh + 128 + 32, 0);
    VT_CHECK_EQ_INT(vt_fb_elf_extent(elf), 0, "ELF extent: a section starting past 2 GiB: none");
    put64(sh + 128 + 24, 0x1000);
    put64(sh + 128 + 32, max + 1);
    VT_CHECK_EQ_INT(vt_fb_elf_extent(elf), 0, "ELF extent: a section larger than 2 GiB: none");
}

/* vt_fatbin_each_cubin over nvcc's multi.fatbin (mk/fatbin.mk: sm_80 and sm_90 cubins and
 * compute_90 PTX): the cubins a device of each compute capability runs, by CUDA's rule (a cubin
 * runs on its own major architecture at the same or a later minor one), each an ELF image; PTX
 * only, none; a bare cubin once, with SM 0. On success the message buffer is emptied, and
 * nothing around it is written. */
struct cubins { unsigned sm[8]; int n, elf; };
static int on_cubin(void *ctx, unsigned sm, const uint8_t *elf, size_t len)
{
    struct cubins *c = ctx;
    if (c->n < 8) c->sm[c->n++] = sm;
    c->elf += len > 4 && memcmp(elf, "\177ELF", 4) == 0;
    return 0;
}
static const char *cubin_list(const char *file, unsigned sm, int *rc_out, int *clean)
{
    static char out[64];
    blob b = load(file);
    struct { char before[8]; char err[64]; char after[8]; } e;
    memset(&e, 'x', sizeof e);
    memcpy(e.err, "stale", 6);
    struct cubins c = { .n = 0 };
    *rc_out = b.p ? vt_fatbin_each_cubin(b.p, b.n, sm, on_cubin, &c, e.err, sizeof e.err) : -999;
    *clean = e.err[0] == '\0' && e.before[7] == 'x' && e.after[0] == 'x' && c.elf == c.n;
    int at = 0;
    for (int i = 0; i < c.n; i++) at += snprintf(out + at, sizeof out - (size_t)at, "%s%u", i ? "," : "", c.sm[i]);
    if (!c.n) snprintf(out, sizeof out, "none");
    free(b.p);
    return out;
}
static void test_each_cubin(void)
{
    static const struct { const char *file; unsigned sm; const char *want; } cases[] = {
        { "multi.fatbin", 0, "80,90" },  { "multi.fatbin", 90, "90" }, { "multi.fatbin", 86, "80" },
        { "multi.fatbin", 80, "80" },    { "multi.fatbin", 75, "none" }, { "multi.fatbin", 100, "none" },
        { "ptx_only.fatbin", 90, "none" }, { "sm90.cubin", 90, "0" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc, clean;
        const char *got = cubin_list(cases[i].file, cases[i].sm, &rc, &clean);
        VT_CHECK(rc == 0 && strcmp(got, cases[i].want) == 0 && clean,
                 "each_cubin %s for sm_%u: %s (got rc %d, %s; ELF images, message emptied, nothing else written: %d)",
                 cases[i].file, cases[i].sm, cases[i].want, rc, got, clean);
    }
}

/* The container's own errors, each with the code that names it (the image kinds tell apart by
 * their magic: fatbin wrapper, fatbin header, ELF, else PTX text). */
static void p_grow8(blob *b) /* 8 bytes more than the entries, counted in the fat size: half an entry header */
{
    unsigned char *q = realloc(b->p, b->n + 8);
    if (!q) return;
    memset(q + b->n, 0, 8);
    b->p = q;
    b->n += 8;
    wr64(b->p + 8, rd64(b->p + 8) + 8);
}
static void p_hdrsize8(blob *b) { wr16(b->p + 6, 8); }
static void p_elf_kind(blob *b) { wr16(b->p + 0x10, 0x10); } /* entry 0 (the ELF) of a kind read for no layout */
static void test_container_codes(void)
{
    VT_CHECK(patched("size.fatbin", p_grow8) == VT_FATBIN_ETRUNC, "an entry header cut short by the fat size: ETRUNC");
    VT_CHECK(patched("size.fatbin", p_hdrsize8) == VT_FATBIN_ECORRUPT, "a fatbin header size of 8: ECORRUPT");

    /* an entry of another kind (LTO IR) is skipped: size.fatbin's layouts then all come from its PTX */
    blob b = load("size.fatbin");
    vt_fatbin *fb = NULL;
    int n = -999, ptx = 0;
    if (b.p) {
        p_elf_kind(&b);
        n = parse(&b, 0, &fb);
        for (int i = 0; i < n; i++) ptx += vt_fatbin_at(fb, (size_t)i)->source == VT_LAYOUT_PTX;
        if (n >= 0) vt_fatbin_free(fb);
        free(b.p);
    }
    VT_CHECK(n == 9 && ptx == 9, "the ELF entry made another kind: the 9 kernels from the PTX entry (got %d, %d from PTX)", n, ptx);

    static const char not_ptx[] = ".hello world";
    static const char ws_ptx[] = " \t\r\n.version 8.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{\nret;\n}\n";
    char err[128];
    fb = (vt_fatbin *)1;
    VT_CHECK(vt_fatbin_parse_arch(not_ptx, sizeof not_ptx - 1, 0, &fb, err, sizeof err) == VT_FATBIN_EINVAL && !fb,
             "text starting with '.' with no .version, .target or .entry: EINVAL");
    n = vt_fatbin_parse_arch(ws_ptx, 0, 0, &fb, err, sizeof err);
    const vt_kernel_layout *k = n == 1 ? vt_fatbin_find(fb, "k") : NULL;
    VT_CHECK(k && k->nparams == 1 && k->params[0].offset == 0 && k->params[0].size == 8,
             "PTX after white space: k's one 8-byte parameter (rc %d)", n);
    if (n >= 0) vt_fatbin_free(fb);
    VT_CHECK(vt_fatbin_parse_arch(ws_ptx, VT_FATBIN_MAX_IMAGE + 1, 0, &fb, err, sizeof err) == VT_FATBIN_EINVAL,
             "a length over the 2 GiB limit: EINVAL, nothing read");

    /* a registered fatbin's wrapper (magic, version, data pointer) whose data is not a fatbin */
    struct { uint32_t magic, version; const void *data, *unused; } wrap = { 0x466243B1u, 1, not_ptx, NULL };
    VT_CHECK(vt_fatbin_parse_arch(&wrap, 0, 0, &fb, err, sizeof err) == VT_FATBIN_ECORRUPT,
             "a wrapper whose data is not a fatbin header: ECORRUPT");
    /* an ELF image of unknown length whose headers give no extent (e_shnum 0, no extended count) */
    b = load("sm90.cubin");
    if (b.p) wr16(b.p + 60, 0), wr64(b.p + rd64(b.p + 40) + 32, 0);
    VT_CHECK(b.p && vt_fatbin_parse_arch(b.p, 0, 0, &fb, err, sizeof err) == VT_FATBIN_ECORRUPT,
             "an ELF image of unknown length whose headers give no size: ECORRUPT");
    free(b.p);

    struct cubins c = { .n = 0 };
    VT_CHECK(vt_fatbin_each_cubin(NULL, 16, 90, on_cubin, &c, err, sizeof err) == VT_FATBIN_EINVAL &&
                 vt_fatbin_each_cubin(ws_ptx, 0, 90, on_cubin, &c, err, sizeof err) == VT_FATBIN_EINVAL &&
                 vt_fatbin_each_cubin(ws_ptx, VT_FATBIN_MAX_IMAGE + 1, 90, on_cubin, &c, err, sizeof err) == VT_FATBIN_EINVAL &&
                 vt_fatbin_each_cubin(ws_ptx, sizeof ws_ptx, 90, on_cubin, &c, err, sizeof err) == VT_FATBIN_EINVAL && c.n == 0,
             "each_cubin: no image, length 0, over the limit, or PTX: EINVAL, no cubin handed on");
}

int main(void)
{
    check_fixture("sm90.cubin", 0, "expected_sm90.txt", VT_LAYOUT_ELF);
    check_fixture("default.fatbin", 0, "expected_sm90.txt", VT_LAYOUT_ELF);   /* zstd PTX */
    check_fixture("none.fatbin", 0, "expected_sm90.txt", VT_LAYOUT_ELF);      /* no compression */
    check_fixture("size.fatbin", 0, "expected_sm90.txt", VT_LAYOUT_ELF);      /* zstd ELF */
    check_fixture("speed_lz4.fatbin", 0, "expected_sm90.txt", VT_LAYOUT_ELF); /* LZ4 PTX */
    check_fixture("ptx_only.fatbin", 0, "expected_sm90.txt", VT_LAYOUT_PTX);
    check_fixture("sm90.ptx", 0, "expected_sm90.txt", VT_LAYOUT_PTX);
    check_fixture("sm80.ptx", 0, "expected_sm80.txt", VT_LAYOUT_PTX);
    check_fixture("multi.fatbin", 0, "expected_sm90.txt", VT_LAYOUT_ELF);
    check_fixture("multi.fatbin", 90, "expected_sm90.txt", VT_LAYOUT_ELF);
    check_fixture("multi.fatbin", 80, "expected_sm80.txt", VT_LAYOUT_ELF);
    check_fixture("multi.fatbin", 86, "expected_sm80.txt", VT_LAYOUT_ELF);
    check_fixture("multi.fatbin", 100, "expected_sm90.txt", VT_LAYOUT_PTX); /* JIT from compute_90 */
    test_exact_layouts();
    test_malformed();
    test_kparam_v2_flags();
    test_edge_inputs();
    test_image_extent();
    test_elf_extent();
    test_each_cubin();
    test_container_codes();
    return vt_test_finish();
}
