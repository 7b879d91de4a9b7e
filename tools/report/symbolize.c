/* symbolize.c - libdwfl offline symbolization of trace backtraces, with C++ demangling. */
#include "report/symbolize.h"
#include "report/pylines.h"
#include <vramtrace/trace.h>

#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "report/util.h"

/* libstdc++ (linked through mk/report.mk) */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* A module's function symbols sorted by address: dwfl_module_addrname scans the whole symbol
 * table on every call (elfutils 0.188), which made symbolization most of a report's time. */
struct msym { uint64_t lo, size; const char *name; int rank; };
struct module {
    char *path;
    const char *base_name;
    uint64_t base, lo, hi;
    int internal;
    int file;       /* 0 not opened yet, 1 a regular file handed to dwfl, -1 not one (never opened again) */
    int syms_loaded;
    struct msym *syms;
    size_t nsyms;
    char *build_id;     /* what ran (hex), "" unknown */
    uint64_t file_size; /* what ran, 0 unknown */
    int64_t mtime;
    enum { MOD_OK, MOD_CHANGED, MOD_GONE } stale;   /* no matching file found: another build there, or none */
    int used;           /* a recorded pc lies in it */
};

struct pycode { char *file, *name; int firstline, version; uint8_t *table; size_t len; };

struct vt_sym {
    int enabled, reported, dirty;
    struct pycode *py;           /* `pycode` records, by id through py_index */
    size_t npy, cappy;
    struct vtr_hmap py_index;    /* id -> index + 1 */
    Dwfl *dwfl;
    struct module *mods;
    size_t nmods, capmods;
    struct vt_frame **frames;   /* cache (stable pointers), indexed through `cache` */
    size_t nframes, capframes;
    struct vtr_hmap cache;       /* pc -> index + 1 */
    struct vtr_strtab strs;
};

/* Paths in a trace are anyone's: a FIFO (or a device) named as a module, or as the separate debug
 * file beside it, would block the report in open() for ever. Only regular files are opened. */
static int is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dwfl_standard_find_debuginfo, when no file it would open next to the module (DEBUGLINK, or
 * the module's name + .debug, in its directory and its .debug/) exists as anything but a
 * regular file. The paths under /usr/lib/debug are the system's. */
static int safe_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                               const char *file_name, const char *debuglink, GElf_Word crc, char **out)
{
    if (file_name) {
        char dir_buf[4096], cand[8300], self[4200];
        snprintf(dir_buf, sizeof dir_buf, "%s", file_name);
        const char *dir = dirname(dir_buf);
        const char *base_name = strrchr(file_name, '/') ? strrchr(file_name, '/') + 1 : file_name;
        snprintf(self, sizeof self, "%s.debug", base_name);
        const char *names[2] = { debuglink, self };
        for (int i = 0; i < 2; i++) {
            if (!names[i] || strchr(names[i], '/')) continue;
            for (int sub = 0; sub < 2; sub++) {
                struct stat st;
                snprintf(cand, sizeof cand, "%s/%s%s", dir, sub ? ".debug/" : "", names[i]);
                if (lstat(cand, &st) == 0 && !is_regular(cand)) return -1;
            }
        }
    }
    return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc, out);
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = safe_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

int vt_sym_is_internal_module(const char *b)
{
    static const char *const pre[] = { "libvramtrace", "libcudart", "libcuda.", "libcuda_", "libcudasim",
                                       "libnvidia-", "libcupti", "libnvToolsExt", "libnvtx", NULL };
    if (!b) return 0;
    for (int i = 0; pre[i]; i++) if (!strncmp(b, pre[i], strlen(pre[i]))) return 1;
    return 0;
}

int vt_sym_is_vendor_module(const char *b)
{
    static const char *const pre[] = { "libcublas", "libcudnn", "libcufft", "libcurand", "libcusparse", "libcusolver",
                                       "libnccl", "libnvrtc", "libnvJitLink", "libcutensor", "libnpp", "libnvjpeg", NULL };
    if (!b) return 0;
    for (int i = 0; pre[i]; i++) if (!strncmp(b, pre[i], strlen(pre[i]))) return 1;
    return 0;
}

char *vt_demangle(const char *name, char *buf, size_t n)
{
    if (!name) { snprintf(buf, n, "?"); return buf; }
    if (name[0] == '_' && name[1] == 'Z') {
        int st = 0;
        char *d = __cxa_demangle(name, NULL, NULL, &st);
        if (d && st == 0) { snprintf(buf, n, "%s", d); free(d); return buf; }
        free(d);
    }
    snprintf(buf, n, "%s", name);
    return buf;
}

struct vt_sym *vt_sym_new(int enabled)
{
    struct vt_sym *s = calloc(1, sizeof *s);
    if (s) s->enabled = enabled;
    return s;
}

int vt_sym_add_module(struct vt_sym *s, const struct vt_sym_module *mod)
{
    const char *path = mod->path;
    uint64_t base = mod->base, lo = mod->lo, hi = mod->hi;
    for (size_t i = 0; i < s->nmods; i++)
        if (s->mods[i].base == base && s->mods[i].lo == lo && !strcmp(s->mods[i].path, path)) return 0;
    if (s->nmods == s->capmods) {
        size_t nc = s->capmods ? s->capmods * 2 : 32;
        struct module *nm = realloc(s->mods, nc * sizeof *nm);
        if (!nm) return -1;
        s->mods = nm; s->capmods = nc;
    }
    struct module *m = &s->mods[s->nmods];
    memset(m, 0, sizeof *m);   /* every flag starts clear (used, stale, ...) */
    if (!(m->path = strdup(path))) return -1;
    if (!(m->build_id = strdup(mod->build_id ? mod->build_id : ""))) { free(m->path); return -1; }
    m->file_size = mod->file_size; m->mtime = mod->mtime; m->stale = MOD_OK;
    const char *sl = strrchr(m->path, '/');
    m->base_name = sl ? sl + 1 : m->path;
    m->base = base; m->lo = lo; m->hi = hi;
    m->syms_loaded = 0; m->syms = NULL; m->nsyms = 0; m->file = 0;
    m->internal = vt_sym_is_internal_module(m->base_name);
    s->nmods++;
    s->dirty = 1;
    return 0;
}

/* The GNU build-id note of the ELF file FD as hex into OUT ("" without one). */
static void file_build_id(int fd, char *out, size_t n)
{
    out[0] = 0;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!e) return;
    for (Elf_Scn *scn = elf_nextscn(e, NULL); scn && !out[0]; scn = elf_nextscn(e, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        GElf_Nhdr nh;
        size_t off = 0, noff, doff;
        while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
            if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || memcmp((const char *)d->d_buf + noff, "GNU", 4)) continue;
            static const char hex[] = "0123456789abcdef";
            const unsigned char *b = (const unsigned char *)d->d_buf + doff;
            size_t k = 0;
            for (size_t i = 0; i < nh.n_descsz && k + 2 < n; i++) { out[k++] = hex[b[i] >> 4]; out[k++] = hex[b[i] & 15]; }
            out[k] = 0;
            break;
        }
    }
    elf_end(e);
}

/* The debug file named by M's build-id (VRAMTRACE_DEBUGINFO_DIR, default /usr/lib/debug,
 * .build-id/ab/cdef....debug) when it carries that build-id, opened; else -1. */
static int open_by_build_id(const struct module *m)
{
    if (strlen(m->build_id) <= 2) return -1;
    const char *dir = getenv("VRAMTRACE_DEBUGINFO_DIR");
    char alt[4096], have[2 * 64 + 1];
    snprintf(alt, sizeof alt, "%s/.build-id/%.2s/%s.debug", dir && *dir ? dir : "/usr/lib/debug", m->build_id, m->build_id + 2);
    int fd;
    if (!is_regular(alt) || (fd = open(alt, O_RDONLY | O_NOCTTY | O_CLOEXEC)) < 0) return -1;
    file_build_id(fd, have, sizeof have);
    if (!strcmp(have, m->build_id)) return fd;
    close(fd);
    return -1;
}

/* The file to symbolize module M with, opened (-1: none): its own path when it is what ran, else
 * the debug file named by its build-id; M->stale says why there is none: MOD_CHANGED (another
 * build there) or MOD_GONE (nothing there: moved or deleted since the trace). */
static int open_matching(struct module *m)
{
    struct stat st;
    int fd = open(m->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) { close(fd); return -1; }
    if (fd < 0) {
        if ((fd = open_by_build_id(m)) >= 0) return fd;
        m->stale = MOD_GONE;
        return -1;
    }
    if (m->build_id[0]) {
        char have[2 * 64 + 1];
        file_build_id(fd, have, sizeof have);
        if (!strcmp(have, m->build_id)) return fd;
        close(fd);
        if ((fd = open_by_build_id(m)) >= 0) return fd;
        m->stale = MOD_CHANGED;
        return -1;
    }
    if (m->file_size && ((uint64_t)st.st_size != m->file_size || (int64_t)st.st_mtime != m->mtime)) {
        close(fd);
        m->stale = MOD_CHANGED;
        return -1;
    }
    return fd;
}

size_t vt_sym_module_count(const struct vt_sym *s) { return s ? s->nmods : 0; }

int vt_sym_module_open(struct vt_sym *s, size_t i, const char **path)
{
    if (!s || i >= s->nmods) return -1;
    struct module *m = &s->mods[i];
    if (path) *path = m->path;
    int save = m->stale, fd = open_matching(m);
    m->stale = save; /* what symbolization found is its own to say */
    return fd;
}

size_t vt_sym_stale_modules(const struct vt_sym *s, int gone, char *buf, size_t n)
{
    size_t count = 0, used = 0;
    if (n) buf[0] = 0;
    for (size_t i = 0; i < s->nmods; i++) {
        /* only where it matters: a module some recorded stack goes through, other than the
         * tracer's and CUDA's own (their frames are never sites) */
        if (s->mods[i].stale != (gone ? MOD_GONE : MOD_CHANGED) || !s->mods[i].used || s->mods[i].internal) continue;
        int w = snprintf(buf + used, used < n ? n - used : 0, "%s%s", count ? ", " : "", s->mods[i].path);
        if (w > 0 && used + (size_t)w < n) used += (size_t)w;
        count++;
    }
    return count;
}

static void report_modules(struct vt_sym *s)
{
    if (!s->enabled || (s->reported && !s->dirty)) return;
    if (!s->dwfl) s->dwfl = dwfl_begin(&callbacks);
    if (!s->dwfl) return;
    dwfl_report_begin(s->dwfl);
    for (size_t i = 0; i < s->nmods; i++) {
        if (!s->mods[i].path[0] || s->mods[i].path[0] != '/') continue;   /* [vdso] etc. */
        struct module *m = &s->mods[i];
        if (m->file < 0) continue;
        /* The first time: opened here, without blocking, and handed to dwfl (which then owns it)
         * only when it is a regular file. Reported again (after a new module), dwfl keeps the
         * file it has: a new descriptor would make it drop the module as an overlap. */
        int fd = -1;
        if (m->file == 0) {
            fd = open_matching(m);
            m->file = fd >= 0 ? 1 : -1;
            if (m->file < 0) continue;
        }
        if (!dwfl_report_elf(s->dwfl, m->base_name, m->path, fd, m->base, true) && fd >= 0) close(fd);
    }
    dwfl_report_end(s->dwfl, NULL, NULL);
    s->reported = 1;
    s->dirty = 0;
}

static const char *keep(struct vt_sym *s, const char *str)
{
    int64_t id = vtr_strtab_intern(&s->strs, str);
    return id < 0 ? NULL : vtr_strtab_get(&s->strs, id);
}

static int msym_cmp(const void *a, const void *b)
{
    const struct msym *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->rank - y->rank; /* at one address the preferred name (global, weak, local) first */
}

static void load_syms(struct module *m, Dwfl_Module *dm)
{
    m->syms_loaded = 1;
    int n = dwfl_module_getsymtab(dm);
    if (n <= 0 || !(m->syms = calloc((size_t)n, sizeof *m->syms))) return;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *name = dwfl_module_getsym_info(dm, i, &sym, &addr, NULL, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
        /* the kinds dwfl_module_addrname considers, so names come out the same */
        if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE || type == STT_TLS) continue;
        /* a sizeless symbol names code only if it is a function (assembly); markers like
         * __GNU_EH_FRAME_HDR would otherwise swallow everything after them */
        if (sym.st_size == 0 && type != STT_FUNC && type != STT_GNU_IFUNC) continue;
        m->syms[m->nsyms++] = (struct msym){ addr, sym.st_size, name, bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2 };
    }
    qsort(m->syms, m->nsyms, sizeof *m->syms, msym_cmp);
}

/* The function containing a: the nearest symbol at or below it whose size covers it, else the
 * nearest sizeless one (hand-written assembly), as dwfl_module_addrname answers. */
static const char *sym_name(struct module *m, Dwfl_Module *dm, uint64_t a)
{
    if (!m->syms_loaded) load_syms(m, dm);
    size_t lo = 0, hi = m->nsyms;
    while (lo < hi) { size_t mid = lo + (hi - lo) / 2; if (m->syms[mid].lo <= a) lo = mid + 1; else hi = mid; }
    if (lo == 0) return NULL;
    size_t top = lo - 1;
    while (top > 0 && m->syms[top - 1].lo == m->syms[top].lo) top--; /* best-ranked at that address */
    for (size_t i = lo, k = 0; i-- > 0 && k < 64; k++)
        if (m->syms[i].size && a - m->syms[i].lo < m->syms[i].size) {
            while (i > 0 && m->syms[i - 1].lo == m->syms[i].lo && m->syms[i - 1].size) i--;
            return m->syms[i].name;
        }
    return m->syms[top].size == 0 ? m->syms[top].name : NULL;
}

/* Keeps F to be freed with S (vt_sym_free). 0, or -1 out of memory. */
static int own(struct vt_sym *s, struct vt_frame *f)
{
    if (s->nframes == s->capframes) {
        size_t nc = s->capframes ? s->capframes * 2 : 256;
        struct vt_frame **nf = realloc(s->frames, nc * sizeof *nf);
        if (!nf) return -1;
        s->frames = nf; s->capframes = nc;
    }
    s->frames[s->nframes++] = f;
    return 0;
}

/* A source file of CUDA's own (the toolkit's headers: cuda_runtime.h's typed cudaMalloc<T>,
 * crt/ host runtime code): never the user's line. By the headers' own names, wherever DWARF
 * says they are: a user's cuda_runtime_utils.cu is the user's. */
static int cuda_header(const char *path)
{
    static const char *const names[] = { "cuda_runtime.h", "cuda_runtime_api.h", "cuda_device_runtime_api.h", "cuda.h" };
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(b, names[i])) return 1;
    return strstr(path, "/crt/") != NULL || (strstr(path, "/include/") && strstr(path, "/cuda"));
}

static void frame_label(struct vt_sym *s, struct vt_frame *f)
{
    char lab[1400];
    if (f->func && f->file && f->line) snprintf(lab, sizeof lab, "%s (%s:%d)", f->func, f->file, f->line);
    else if (f->func && f->module) snprintf(lab, sizeof lab, "%s (%s)", f->func, f->module);
    else if (f->module) snprintf(lab, sizeof lab, "%s+0x%llx", f->module, (unsigned long long)f->offset);
    else snprintf(lab, sizeof lab, "0x%llx", (unsigned long long)f->pc);
    f->label = keep(s, lab);
    if (!f->label) f->label = "?";
}

static void set_file(struct vt_sym *s, struct vt_frame *f, const char *file, int line)
{
    const char *sl = strrchr(file, '/');
    f->file = keep(s, sl ? sl + 1 : file);
    f->line = line;
    /* code nvcc generated into the program (*.cudafe1.stub.c: kernel host stubs), CUDA's headers */
    if (strstr(file, ".cudafe1.") || cuda_header(file)) f->internal = 1;
}

/* The name of an inlined (or real) function's DIE, demangled into BUF. */
static const char *die_name(Dwarf_Die *d, char *buf, size_t n)
{
    Dwarf_Attribute at;
    const char *nm = NULL;
    if (dwarf_attr_integrate(d, DW_AT_linkage_name, &at) || dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &at))
        nm = dwarf_formstring(&at);
    if (!nm && dwarf_attr_integrate(d, DW_AT_name, &at)) nm = dwarf_formstring(&at);
    return nm ? vt_demangle(nm, buf, n) : NULL;
}

/* F (the pc's frame, file:line of the pc) becomes the innermost of its inline chain: each
 * DW_TAG_inlined_subroutine around the pc is a frame named after the inlined function, whose
 * `outer` is the function it sits in at the inlined call's line. The real function keeps the
 * ELF symbol's name (F's func as found). Out of memory: F stays a single frame. */
static struct vt_frame *inline_chain(struct vt_sym *s, Dwfl_Module *dm, Dwarf_Addr a, struct vt_frame *f, int mod_internal)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(dm, a, &bias);
    Dwarf_Die *scopes = NULL;
    int n = cu ? dwarf_getscopes(cu, a - bias, &scopes) : 0;
    if (n <= 0) return f;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0) files = NULL;
    struct vt_frame *inner = NULL, *prev = NULL;
    const char *file = f->file ? f->file : NULL;
    int line = f->line, internal_file = f->internal;
    char buf[1024];
    /* dwarf_getscopes continues past an inlined instance with its abstract definition's scopes:
     * the concrete chain is followed one inlined DIE at a time with dwarf_getscopes_die. */
    Dwarf_Die cur;
    int have = 0;
    for (int i = 0; i < n && !have; i++)
        if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) { cur = scopes[i]; have = 1; }
    for (int depth = 0; have && depth < 64; depth++) {
        struct vt_frame *x = calloc(1, sizeof *x);
        if (!x || own(s, x) < 0) { free(x); break; }
        *x = *f;
        x->outer = NULL;
        x->func = keep(s, die_name(&cur, buf, sizeof buf));
        x->file = file; x->line = line; x->internal = internal_file;
        if (prev) prev->outer = x; else inner = x;
        prev = x;
        /* the next frame out is at this inlined call's site */
        Dwarf_Attribute at;
        Dwarf_Word cf = 0, cl = 0;
        file = NULL; line = 0; internal_file = mod_internal;
        if (dwarf_formudata(dwarf_attr(&cur, DW_AT_call_line, &at), &cl) == 0) line = (int)cl;
        if (files && dwarf_formudata(dwarf_attr(&cur, DW_AT_call_file, &at), &cf) == 0 && cf < nfiles) {
            const char *path = dwarf_filesrc(files, cf, NULL, NULL);
            if (path) {
                struct vt_frame tmp = { .internal = 0 };
                set_file(s, &tmp, path, line);
                file = tmp.file;
                internal_file = tmp.internal || mod_internal;
            }
        }
        Dwarf_Die *up = NULL;
        int nu = dwarf_getscopes_die(&cur, &up);
        have = 0;
        for (int k = 1; k < nu; k++) {
            int tag = dwarf_tag(&up[k]);
            if (tag == DW_TAG_inlined_subroutine) { cur = up[k]; have = 1; break; }
            if (tag == DW_TAG_subprogram) break;
        }
        free(up);
    }
    free(scopes);
    if (!inner) return f;
    /* F is the real function, at the outermost inlined call's line */
    f->file = file; f->line = line; f->internal = internal_file;
    frame_label(s, f);
    prev->outer = f;
    return inner;
}

/* Fills F (owned by S) for its pc; returns the innermost frame of its inline chain (F itself
 * when nothing is inlined there). */
static struct vt_frame *resolve(struct vt_sym *s, struct vt_frame *f)
{
    struct module *m = NULL;
    int mod_internal = 0;
    for (size_t i = 0; i < s->nmods; i++)
        if (f->pc >= s->mods[i].lo && f->pc < s->mods[i].hi) { m = &s->mods[i]; break; }
    if (m) {
        f->module = keep(s, m->base_name);
        f->offset = f->pc - m->base;
        m->used = 1;
        f->internal = mod_internal = m->internal;
    }
    struct vt_frame *top = f;
    if (s->enabled && s->dwfl && m) {
        char buf[1024];
        Dwarf_Addr a = f->pc ? f->pc - 1 : 0;
        Dwfl_Module *dm = dwfl_addrmodule(s->dwfl, a);
        if (dm) {
            const char *name = sym_name(m, dm, a);
            if (name) f->func = keep(s, vt_demangle(name, buf, sizeof buf));
            Dwfl_Line *l = dwfl_module_getsrc(dm, a);
            int line = 0;
            const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
            if (file) set_file(s, f, file, line);
            top = inline_chain(s, dm, a, f, mod_internal);
        }
    }
    /* nvcc's generated launch path inside the program (<<<>>> expands to the kernel's host
     * stub, __device_stub__*, and __cudaLaunchKernel_helper): not the user's site */
    for (struct vt_frame *x = top; x; x = (struct vt_frame *)x->outer) {
        if (x->func && (!strncmp(x->func, "__device_stub__", 15) || !strncmp(x->func, "__cudaLaunch", 12))) x->internal = 1;
        x->startup = x->func && (!strncmp(x->func, "__libc_start", 12) || !strcmp(x->func, "_start"));
        frame_label(s, x);
    }
    return top;
}

int vt_sym_add_pycode(struct vt_sym *s, uint64_t id, const char *file, const char *name, int firstline, int version,
                      const char *linetable_hex)
{
    if (vtr_hmap_get(&s->py_index, id)) return 0; /* a repeat (a fork child's trace starts again) keeps the first */
    if (s->npy == s->cappy) {
        size_t nc = s->cappy ? s->cappy * 2 : 64;
        struct pycode *np = realloc(s->py, nc * sizeof *np);
        if (!np) return -1;
        s->py = np; s->cappy = nc;
    }
    size_t hl = linetable_hex ? strlen(linetable_hex) : 0;
    struct pycode *c = &s->py[s->npy];
    *c = (struct pycode){ strdup(file ? file : ""), strdup(name ? name : ""), firstline, version, malloc(hl / 2 + 1), 0 };
    if (!c->file || !c->name || !c->table) { free(c->file); free(c->name); free(c->table); return -1; }
    for (size_t i = 0; i + 1 < hl; i += 2) {
        unsigned v;
        if (sscanf(linetable_hex + i, "%2x", &v) != 1) break;
        c->table[c->len++] = (uint8_t)v;
    }
    if (vtr_hmap_put(&s->py_index, id, ++s->npy) < 0) return -1;
    return 0;
}

/* A Python frame: function (file:line) from its code object's record and instruction offset. */
static void python_frame(struct vt_sym *s, struct vt_frame *f)
{
    uint64_t id = (f->pc & ~VT_PYFRAME_TAG) >> 24;
    uint32_t off = (uint32_t)(f->pc & 0xffffff);
    uint64_t *ix = vtr_hmap_get(&s->py_index, id);
    f->python = 1;
    if (!ix) { f->label = "(a Python frame whose code record is missing)"; return; }
    const struct pycode *c = &s->py[*ix - 1];
    const char *sl = strrchr(c->file, '/');
    f->path = keep(s, c->file);
    f->file = keep(s, sl ? sl + 1 : c->file);
    f->func = keep(s, c->name);
    f->line = vt_py_addr2line(c->version, c->table, c->len, c->firstline, off);
    char lab[1400];
    if (f->line > 0) snprintf(lab, sizeof lab, "%s (%s:%d)", c->name, f->file ? f->file : "?", f->line);
    else snprintf(lab, sizeof lab, "%s (%s)", c->name, f->file ? f->file : "?");
    f->label = keep(s, lab);
    if (!f->label) f->label = "?";
}

const struct vt_frame *vt_sym_lookup(struct vt_sym *s, uint64_t pc)
{
    static const struct vt_frame oom_frame = { .label = "?" };
    uint64_t *idx = vtr_hmap_get(&s->cache, pc);
    if (idx) return s->frames[*idx - 1];
    struct vt_frame *f = calloc(1, sizeof *f);
    if (!f || own(s, f) < 0) { free(f); return &oom_frame; }
    f->pc = pc;
    if (pc & VT_PYFRAME_TAG) {
        python_frame(s, f);
        if (vtr_hmap_put(&s->cache, pc, s->nframes) < 0) return &oom_frame;
        return f;
    }
    report_modules(s);
    struct vt_frame *top = resolve(s, f);
    size_t at = s->nframes;                          /* the innermost: owned already, find its slot */
    while (at > 0 && s->frames[at - 1] != top) at--;
    if (vtr_hmap_put(&s->cache, pc, at) < 0) return &oom_frame;
    return top;
}

void vt_sym_free(struct vt_sym *s)
{
    if (!s) return;
    if (s->dwfl) dwfl_end(s->dwfl);
    for (size_t i = 0; i < s->nmods; i++) { free(s->mods[i].path); free(s->mods[i].build_id); free(s->mods[i].syms); }
    free(s->mods);
    for (size_t i = 0; i < s->nframes; i++) free(s->frames[i]);
    free(s->frames);
    vtr_hmap_free(&s->cache);
    for (size_t i = 0; i < s->npy; i++) { free(s->py[i].file); free(s->py[i].name); free(s->py[i].table); }
    free(s->py);
    vtr_hmap_free(&s->py_index);
    vtr_strtab_free(&s->strs);
    free(s);
}
