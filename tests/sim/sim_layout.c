/* sim_layout.c - the simulated driver's own reader of kernel parameter layouts (test fixture).
 *
 * Deliberately NOT the tracer's src/fatbin parser: issue 32 asks that the simulated device's
 * "illegal address" verdict never come from the code it is meant to check, so that a bug in the
 * tracer's parser shows as a disagreement in a test instead of two copies agreeing. It is written
 * from the container facts in ../shared/README.md and reads only what a driver needs to launch on
 * the simulated sm_90 device: the sm_90 ELF's .nv.info KPARAM_INFO records when the image has one
 * (the driver runs that SASS), else the PTX .entry parameter lists (the driver JITs them). No
 * checks for hostile input beyond staying inside the buffer: the images come from nvcc here. */
#include "sim.h"

#include <elf.h>
#include <stdio.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define WRAPPER_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xba55ed50u
#define DEVICE_ARCH 90 /* what cuDeviceGetAttribute says the simulated GPU is */

static uint64_t rd(const unsigned char *p, int n)
{
    uint64_t v = 0;
    while (n--) v = v << 8 | p[n];
    return v;
}

static sim_kfunc *add_kernel(sim_kfunc **list, const char *name, size_t len)
{
    for (sim_kfunc *k = *list; k; k = k->next)
        if (strlen(k->name) == len && !memcmp(k->name, name, len)) return NULL; /* first image wins */
    sim_kfunc *k = calloc(1, sizeof *k);
    if (!k || !(k->name = strndup(name, len))) { free(k); return NULL; }
    k->next = *list;
    *list = k;
    return k;
}

static void set_param(sim_kfunc *k, uint32_t ord, uint32_t off, uint32_t size)
{
    if (ord >= 32768) return; /* CUDA caps the argument buffer at 32764 bytes */
    if (ord >= k->cap) {
        uint32_t cap = ord < 16 ? 16 : ord * 2;
        sim_param *p = realloc(k->p, cap * sizeof *p);
        if (!p) return;
        memset(p + k->cap, 0, (cap - k->cap) * sizeof *p);
        k->p = p;
        k->cap = cap;
    }
    k->p[ord].off = off;
    k->p[ord].size = size;
    if (ord + 1 > k->n) k->n = ord + 1;
}

/* ---- ELF: one .nv.info.<kernel> section per kernel ---------------------------------------- */
static void read_elf(const unsigned char *e, size_t len, sim_kfunc **list)
{
    if (len < sizeof(Elf64_Ehdr) || memcmp(e, ELFMAG, SELFMAG) || e[EI_CLASS] != ELFCLASS64) return;
    Elf64_Ehdr h;
    memcpy(&h, e, sizeof h);
    if (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shoff > len ||
        (len - h.e_shoff) / sizeof(Elf64_Shdr) < h.e_shnum || h.e_shstrndx >= h.e_shnum)
        return;
    Elf64_Shdr names;
    memcpy(&names, e + h.e_shoff + (size_t)h.e_shstrndx * sizeof names, sizeof names);
    for (unsigned i = 0; i < h.e_shnum; i++) {
        Elf64_Shdr s;
        memcpy(&s, e + h.e_shoff + (size_t)i * sizeof s, sizeof s);
        if (s.sh_offset > len || s.sh_size > len - s.sh_offset || s.sh_name >= names.sh_size ||
            names.sh_offset + names.sh_size > len)
            continue;
        const char *nm = (const char *)e + names.sh_offset + s.sh_name;
        size_t room = names.sh_size - s.sh_name;
        if (!memchr(nm, '\0', room) || strncmp(nm, ".nv.info.", 9) != 0) continue;
        const unsigned char *d = e + s.sh_offset, *end = d + s.sh_size;
        /* every kernel has one, parameters or not */
        sim_kfunc *k = add_kernel(list, nm + 9, strlen(nm + 9));
        /* records: u8 format, u8 attribute, u16 value or payload size, payload (format 4 only) */
        for (; end - d >= 4; d += 4 + (d[0] == 4 ? rd(d + 2, 2) : 0)) {
            if (d[0] != 4 || d[1] != 0x17 || rd(d + 2, 2) < 12 || (size_t)(end - d) < 16) continue;
            if (!k) break;
            /* KPARAM_INFO: u32 index, u16 ordinal, u16 offset, u32 (size << 18 | cbank and flags) */
            set_param(k, (uint32_t)rd(d + 8, 2), (uint32_t)rd(d + 10, 2), (uint32_t)(rd(d + 12, 4) >> 18));
        }
    }
}

/* ---- PTX: .entry NAME( .param TYPE [.align N] NAME[[COUNT]], ... ) ------------------------ */
static const char *skip_space(const char *p, const char *end)
{
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
        if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
            while (p < end && *p != '\n') p++;
        } else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
            const char *q = p + 2;
            while (end - q >= 2 && !(q[0] == '*' && q[1] == '/')) q++;
            p = end - q >= 2 ? q + 2 : end;
        } else {
            return p;
        }
    }
}

static size_t word_len(const char *p, const char *end)
{
    size_t n = 0;
    while (p + n < end && !strchr(" \t\r\n,()[]", p[n])) n++;
    return n;
}

static uint32_t type_bytes(const char *t, size_t n)
{
    if (n < 3 || t[0] != '.') return 0;
    if (!strchr("usbf", t[1])) return 0;
    unsigned bits = (unsigned)strtoul(t + 2, NULL, 10);
    return bits % 8 == 0 && bits <= 64 ? bits / 8 : 0;
}

static void read_ptx(const char *src, size_t len, sim_kfunc **list)
{
    const char *end = src + len, *p = src;
    const char *nul = memchr(src, '\0', len);
    if (nul) end = nul;
    while ((p = memmem(p, (size_t)(end - p), ".entry", 6)) != NULL) {
        p = skip_space(p + 6, end);
        size_t nl = word_len(p, end);
        const char *name = p;
        p = skip_space(p + nl, end);
        if (!nl || p >= end || *p != '(') continue;
        sim_kfunc *k = add_kernel(list, name, nl);
        uint32_t off = 0, ord = 0;
        p++;
        while (k && (p = skip_space(p, end)) < end && *p != ')') {
            if (*p == ',') { p++; continue; }
            uint32_t elem = 0, align = 0, count = 1;
            int pointee = 0; /* the .align after .ptr is the pointee's, not the parameter's */
            while ((p = skip_space(p, end)) < end && *p == '.') {
                size_t n = word_len(p, end);
                if (n == 6 && !memcmp(p, ".param", 6)) {
                } else if (n == 4 && !memcmp(p, ".ptr", 4)) {
                    pointee = 1;
                } else if (n == 6 && !memcmp(p, ".align", 6)) {
                    p = skip_space(p + n, end);
                    uint32_t a = (uint32_t)strtoul(p, NULL, 10);
                    if (!pointee) align = a;
                    n = word_len(p, end);
                } else if (type_bytes(p, n)) {
                    elem = type_bytes(p, n);
                }
                p += n;
            }
            p = skip_space(p + word_len(p, end), end); /* the parameter's name */
            if (p < end && *p == '[') {
                count = (uint32_t)strtoul(p + 1, NULL, 10);
                while (p < end && *p != ']') p++;
                if (p < end) p++;
            }
            if (!elem) break;
            if (!align) align = elem;
            off = (off + align - 1) / align * align;
            set_param(k, ord++, off, elem * count);
            off += elem * count;
        }
    }
}

/* ---- the container ------------------------------------------------------------------------ */
static unsigned char *inflate(const unsigned char *pl, uint64_t flags, size_t csize, size_t usize)
{
    unsigned char *out = malloc(usize + 1);
    if (!out) return NULL;
    size_t got = flags & 0x8000 ? ZSTD_decompress(out, usize, pl, csize)
                                : (size_t)LZ4_decompress_safe((const char *)pl, (char *)out, (int)csize, (int)usize);
    if (got != usize) { free(out); return NULL; }
    out[usize] = '\0';
    return out;
}

/* pass 0: ELF entries for the device's architecture; pass 1: PTX entries (JIT), when pass 0 found
 * nothing (*found says whether it did) */
typedef void (*elf_reader)(const unsigned char *e, size_t len, void *list);
typedef void (*ptx_reader)(const char *src, size_t len, void *list);
static void read_fatbin(const unsigned char *fb, elf_reader elf, ptx_reader ptx, void *list, void **found)
{
    size_t hdr = (size_t)rd(fb + 6, 2), total = (size_t)rd(fb + 8, 8);
    for (int pass = 0; pass < 2 && !*found; pass++) {
        for (const unsigned char *e = fb + hdr; e + 0x40 <= fb + hdr + total;) {
            unsigned kind = (unsigned)rd(e, 2);
            size_t ehdr = (size_t)rd(e + 4, 4), psize = (size_t)rd(e + 8, 8);
            uint64_t flags = rd(e + 0x28, 8);
            const unsigned char *pl = e + ehdr;
            int want = pass == 0 ? kind == 2 && rd(e + 0x1c, 4) == DEVICE_ARCH : kind == 1;
            if (want) {
                unsigned char *buf = NULL;
                size_t n = psize;
                if (flags & 0xa000) {
                    n = (size_t)rd(e + 0x38, 8);
                    pl = buf = inflate(pl, flags, (size_t)rd(e + 0x10, 4), n);
                }
                if (pl && kind == 2) elf(pl, n, list);
                else if (pl) ptx((const char *)pl, n, list);
                free(buf);
            }
            if (ehdr < 0x40) break;
            e += ehdr + psize;
        }
    }
}

static void kernels_elf(const unsigned char *e, size_t len, void *list) { read_elf(e, len, list); }
static void kernels_ptx(const char *src, size_t len, void *list) { read_ptx(src, len, list); }

/* A cubin handed over without its size: nvcc puts the section headers last. */
static size_t elf_size(const unsigned char *e)
{
    Elf64_Ehdr h;
    memcpy(&h, e, sizeof h);
    return (size_t)h.e_shoff + (size_t)h.e_shnum * sizeof(Elf64_Shdr);
}

/* An image as the driver is handed one (a fatbin, its wrapper, a cubin or PTX text), read by ELF
 * and PTX into *list (non-NULL once something was found). */
static void read_image(const void *image, elf_reader elf, ptx_reader ptx, void **list)
{
    const unsigned char *p = image;
    if (rd(p, 4) == WRAPPER_MAGIC) memcpy(&p, p + 8, sizeof p);
    if (rd(p, 4) == FATBIN_MAGIC) read_fatbin(p, elf, ptx, list, list);
    else if (!memcmp(p, ELFMAG, SELFMAG)) elf(p, elf_size(p), list);
    else ptx((const char *)p, strlen((const char *)p), list);
}

sim_kfunc *sim_layouts_read(const void *image)
{
    sim_kfunc *list = NULL;
    read_image(image, kernels_elf, kernels_ptx, (void **)&list);
    return list;
}

/* ---- module variables (__device__, __constant__, __managed__): name and size --------------- */
static void add_global(sim_global **list, const char *name, size_t len, size_t size)
{
    for (sim_global *g = *list; g; g = g->next)
        if (strlen(g->name) == len && !memcmp(g->name, name, len)) return;
    sim_global *g = calloc(1, sizeof *g);
    if (!g || !(g->name = strndup(name, len))) { free(g); return; }
    g->size = size;
    g->next = *list;
    *list = g;
}

/* the ELF's symbol table: objects with a size */
static void globals_elf(const unsigned char *e, size_t len, void *list)
{
    if (len < sizeof(Elf64_Ehdr) || memcmp(e, ELFMAG, SELFMAG) || e[EI_CLASS] != ELFCLASS64) return;
    Elf64_Ehdr h;
    memcpy(&h, e, sizeof h);
    if (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shoff > len || (len - h.e_shoff) / sizeof(Elf64_Shdr) < h.e_shnum)
        return;
    for (unsigned i = 0; i < h.e_shnum; i++) {
        Elf64_Shdr s, str;
        memcpy(&s, e + h.e_shoff + (size_t)i * sizeof s, sizeof s);
        if (s.sh_type != SHT_SYMTAB || s.sh_link >= h.e_shnum || s.sh_offset > len || s.sh_size > len - s.sh_offset) continue;
        memcpy(&str, e + h.e_shoff + (size_t)s.sh_link * sizeof str, sizeof str);
        if (str.sh_offset > len || str.sh_size > len - str.sh_offset) continue;
        for (size_t at = 0; at + sizeof(Elf64_Sym) <= s.sh_size; at += sizeof(Elf64_Sym)) {
            Elf64_Sym y;
            memcpy(&y, e + s.sh_offset + at, sizeof y);
            if (ELF64_ST_TYPE(y.st_info) != STT_OBJECT || !y.st_size || y.st_name >= str.sh_size) continue;
            const char *nm = (const char *)e + str.sh_offset + y.st_name;
            size_t n = strnlen(nm, str.sh_size - y.st_name);
            if (n < str.sh_size - y.st_name) add_global(list, nm, n, y.st_size);
        }
    }
}

/* PTX: [.visible|.extern|.weak] (.global|.const) [.align N] .TYPE NAME[[COUNT]] [= ...]; at the
 * top level (outside any function body) */
static void globals_ptx(const char *src, size_t len, void *list)
{
    const char *end = src + len, *p = src;
    const char *nul = memchr(src, '\0', len);
    if (nul) end = nul;
    int depth = 0;
    while ((p = skip_space(p, end)) < end) {
        if (*p == '{') { depth++; p++; continue; }
        if (*p == '}') { depth--; p++; continue; }
        size_t n = word_len(p, end);
        if (!n) { p++; continue; }
        if (depth || !((n == 7 && !memcmp(p, ".global", 7)) || (n == 6 && !memcmp(p, ".const", 6)))) { p += n; continue; }
        p = skip_space(p + n, end);
        uint32_t elem = 0;
        while (p < end && *p == '.') {
            n = word_len(p, end);
            if (n == 6 && !memcmp(p, ".align", 6)) { p = skip_space(p + n, end); n = word_len(p, end); }
            else if (type_bytes(p, n)) elem = type_bytes(p, n);
            p = skip_space(p + n, end);
        }
        const char *name = p;
        size_t nl = 0;
        while (name + nl < end && !strchr(" \t\r\n[;=", name[nl])) nl++;
        p = skip_space(name + nl, end);
        size_t count = 1;
        if (p < end && *p == '[') count = strtoul(p + 1, NULL, 10);
        if (elem && nl && count) add_global(list, name, nl, (size_t)elem * count);
        while (p < end && *p != ';') p++;
    }
}

sim_global *sim_globals_read(const void *image)
{
    sim_global *list = NULL;
    read_image(image, globals_elf, globals_ptx, (void **)&list);
    return list;
}

void sim_globals_free(sim_global *list)
{
    while (list) {
        sim_global *next = list->next;
        free(list->name);
        free(list);
        list = next;
    }
}

const sim_kfunc *sim_layout_find(const sim_kfunc *list, const char *name)
{
    while (list && strcmp(list->name, name) != 0) list = list->next;
    return list;
}

void sim_layouts_free(sim_kfunc *list)
{
    for (sim_kfunc *n; list; list = n) {
        n = list->next;
        free(list->name);
        free(list->p);
        free(list);
    }
}

/* ---- what each kernel dereferences -------------------------------------------------------- */
/* A GPU faults only on an address a kernel really uses. Which words those are is ground truth the
 * test knows from the kernel's source; VRAMTRACE_SIM_DEREF names a file that says it, one line
 * per kernel: "NAME OFFSET..." (byte offsets of the 8-byte words NAME uses as addresses; none:
 * it uses none), "* OFFSET..." for every kernel not named, '#' comments. A kernel the table does
 * not cover is assumed to use every top-level 8-byte parameter at an 8-aligned offset as an
 * address and nothing inside a struct: the shape of an ordinary kernel, and a rule kept apart
 * from the tracer's (which reads the kernel's PTX). */
typedef struct deref { char *name; int n; uint32_t offs[SIM_MAX_DEREF]; struct deref *next; } deref;
static deref *derefs;

void sim_deref_init(void)
{
    const char *path = getenv("VRAMTRACE_SIM_DEREF");
    if (!path || !*path) return;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "vramtrace-sim: VRAMTRACE_SIM_DEREF=%s: cannot open\n", path);
        exit(97); /* a test fixture: a missing table must not pass silently */
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
        if (!tok || *tok == '#') continue;
        deref *d = calloc(1, sizeof *d);
        if (!d || !(d->name = strdup(tok))) { free(d); break; }
        while ((tok = strtok_r(NULL, " \t\r\n", &save)) && d->n < SIM_MAX_DEREF)
            d->offs[d->n++] = (uint32_t)strtoul(tok, NULL, 0);
        d->next = derefs;
        derefs = d;
    }
    fclose(f);
}

int sim_deref_words(const char *name, const sim_kfunc *k, uint32_t *offs, int max)
{
    const deref *any = NULL;
    for (const deref *d = derefs; d; d = d->next) {
        if (!strcmp(d->name, name)) { any = d; break; }
        if (!strcmp(d->name, "*") && !any) any = d;
    }
    int n = 0;
    if (any) {
        for (int i = 0; i < any->n && n < max; i++) offs[n++] = any->offs[i];
        return n;
    }
    for (uint32_t i = 0; k && i < k->n && n < max; i++)
        if (k->p[i].size == 8 && k->p[i].off % 8 == 0) offs[n++] = k->p[i].off;
    return n;
}
