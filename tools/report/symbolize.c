/* symbolize.c - libdwfl offline symbolization of trace backtraces, with C++ demangling. */
#include "report/symbolize.h"

#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

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
};

struct vt_sym {
    int enabled, reported, dirty;
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

int vt_sym_add_module(struct vt_sym *s, const char *path, uint64_t base, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < s->nmods; i++)
        if (s->mods[i].base == base && s->mods[i].lo == lo && !strcmp(s->mods[i].path, path)) return 0;
    if (s->nmods == s->capmods) {
        size_t nc = s->capmods ? s->capmods * 2 : 32;
        struct module *nm = realloc(s->mods, nc * sizeof *nm);
        if (!nm) return -1;
        s->mods = nm; s->capmods = nc;
    }
    struct module *m = &s->mods[s->nmods];
    if (!(m->path = strdup(path))) return -1;
    const char *sl = strrchr(m->path, '/');
    m->base_name = sl ? sl + 1 : m->path;
    m->base = base; m->lo = lo; m->hi = hi;
    m->syms_loaded = 0; m->syms = NULL; m->nsyms = 0; m->file = 0;
    m->internal = vt_sym_is_internal_module(m->base_name);
    s->nmods++;
    s->dirty = 1;
    return 0;
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
            struct stat st;
            fd = open(m->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            m->file = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? 1 : -1;
            if (m->file < 0) {
                if (fd >= 0) close(fd);
                continue;
            }
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

static void resolve(struct vt_sym *s, struct vt_frame *f)
{
    char buf[1024], lab[1400];
    struct module *m = NULL;
    for (size_t i = 0; i < s->nmods; i++)
        if (f->pc >= s->mods[i].lo && f->pc < s->mods[i].hi) { m = &s->mods[i]; break; }
    if (m) {
        f->module = keep(s, m->base_name);
        f->offset = f->pc - m->base;
        f->internal = m->internal;
    }
    if (s->enabled && s->dwfl && m) {
        Dwarf_Addr a = f->pc ? f->pc - 1 : 0;
        Dwfl_Module *dm = dwfl_addrmodule(s->dwfl, a);
        if (dm) {
            const char *name = sym_name(m, dm, a);
            if (name) f->func = keep(s, vt_demangle(name, buf, sizeof buf));
            /* nvcc's generated launch path inside the program (<<<>>> expands to the kernel's
             * host stub, __device_stub__*, and __cudaLaunchKernel_helper): not the user's site */
            if (f->func && (!strncmp(f->func, "__device_stub__", 15) || !strncmp(f->func, "__cudaLaunch", 12)))
                f->internal = 1;
            Dwfl_Line *l = dwfl_module_getsrc(dm, a);
            int line = 0;
            const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
            if (file) {
                const char *sl = strrchr(file, '/');
                f->file = keep(s, sl ? sl + 1 : file);
                f->line = line;
                /* code nvcc generated into the program (*.cudafe1.stub.c: kernel host stubs) */
                if (f->file && strstr(f->file, ".cudafe1.")) f->internal = 1;
            }
        }
    }
    if (f->func && f->file && f->line) snprintf(lab, sizeof lab, "%s (%s:%d)", f->func, f->file, f->line);
    else if (f->func && f->module) snprintf(lab, sizeof lab, "%s (%s)", f->func, f->module);
    else if (f->module) snprintf(lab, sizeof lab, "%s+0x%llx", f->module, (unsigned long long)f->offset);
    else snprintf(lab, sizeof lab, "0x%llx", (unsigned long long)f->pc);
    f->label = keep(s, lab);
    if (!f->label) f->label = "?";
}

const struct vt_frame *vt_sym_lookup(struct vt_sym *s, uint64_t pc)
{
    static const struct vt_frame oom_frame = { .label = "?" };
    uint64_t *idx = vtr_hmap_get(&s->cache, pc);
    if (idx) return s->frames[*idx - 1];
    report_modules(s);
    if (s->nframes == s->capframes) {
        size_t nc = s->capframes ? s->capframes * 2 : 256;
        struct vt_frame **nf = realloc(s->frames, nc * sizeof *nf);
        if (!nf) return &oom_frame;
        s->frames = nf; s->capframes = nc;
    }
    struct vt_frame *f = calloc(1, sizeof *f);
    if (!f) return &oom_frame;
    f->pc = pc;
    resolve(s, f);
    if (vtr_hmap_put(&s->cache, pc, s->nframes + 1) < 0) { free(f); return &oom_frame; }
    s->frames[s->nframes++] = f;
    return f;
}

void vt_sym_free(struct vt_sym *s)
{
    if (!s) return;
    if (s->dwfl) dwfl_end(s->dwfl);
    for (size_t i = 0; i < s->nmods; i++) { free(s->mods[i].path); free(s->mods[i].syms); }
    free(s->mods);
    for (size_t i = 0; i < s->nframes; i++) free(s->frames[i]);
    free(s->frames);
    vtr_hmap_free(&s->cache);
    vtr_strtab_free(&s->strs);
    free(s);
}
