/* analysis_sass.c - the notes (argument words inside by-value structs of kernels without PTX,
 * which the tracer could not verify) settled offline from the kernels' machine code (issue 46,
 * slice 5). Where nvdisasm is installed (sass.h), each noted kernel's cubin is taken from the
 * .nv_fatbin section of the traced files (the build that ran: same build-id), for the device's
 * architecture, disassembled once per cubin, and read for the parameter bytes it uses as
 * addresses: a noted word the code uses becomes a finding (an error), the others are not
 * addresses and go. What cannot be settled (no nvdisasm, a kernel loaded from memory, a file
 * changed since the trace) stays a note, folded one per kernel into p->notes. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis_priv.h"
#include "fatbin.h"
#include "report/sass.h"
#include "report/symbolize.h"

/* A noted kernel: its layout, and once settled which parameter bytes its code uses. */
struct noted {
    const char *mangled;
    const uint32_t *params;
    uint32_t nparams, nbytes;
    int settled;
    uint8_t *used;
};

struct scan {
    struct noted *k;
    size_t nk, left;
    unsigned cc;
    const char *tool;
    char why[256];
};

/* The cubin has KERNEL's code section: ".text.<name>" among its NUL-separated section names. */
static int cubin_has(const uint8_t *elf, size_t len, const char *kernel)
{
    char needle[1024];
    int n = snprintf(needle, sizeof needle, ".text.%s", kernel);
    if (n <= 0 || (size_t)n >= sizeof needle) return 0;
    for (const uint8_t *p = elf, *end = elf + len; p < end;) {
        const uint8_t *hit = memmem(p, (size_t)(end - p), needle, (size_t)n + 1); /* with its NUL */
        if (!hit) return 0;
        if (hit > elf && hit[-1] == 0) return 1;
        p = hit + 1;
    }
    return 0;
}

static int on_cubin(void *ctx, unsigned sm, const uint8_t *elf, size_t len)
{
    struct scan *s = ctx;
    const char *names[256];
    size_t any = 0;
    for (size_t i = 0; i < s->nk && any < sizeof names / sizeof names[0]; i++)
        if (!s->k[i].settled && cubin_has(elf, len, s->k[i].mangled)) names[any++] = s->k[i].mangled;
    if (!any) return 0;
    char *listing = NULL, err[256];
    size_t n = 0;
    if (vt_sass_disassemble(s->tool, elf, len, names, any, &listing, &n, err, sizeof err) < 0) {
        if (!s->why[0]) snprintf(s->why, sizeof s->why, "%s", err);
        return 0;
    }
    uint32_t base = vt_fatbin_param_base(sm ? sm : s->cc);
    for (size_t i = 0; i < s->nk; i++) {
        struct noted *k = &s->k[i];
        if (k->settled || !cubin_has(elf, len, k->mangled)) continue;
        if (vt_sass_param_uses(listing, n, k->mangled, base, k->params, k->nparams, k->used, k->nbytes) == 0) {
            k->settled = 1;
            s->left--;
        }
    }
    free(listing);
    return s->left == 0;
}

/* Each traced file's .nv_fatbin, until every noted kernel is settled. */
static void scan_modules(struct vt_proc *p, struct scan *s)
{
    struct vt_sym *sym = p->priv->sym;
    elf_version(EV_CURRENT);
    for (size_t i = 0; i < vt_sym_module_count(sym) && s->left; i++) {
        const char *path;
        int fd = vt_sym_module_open(sym, i, &path);
        if (fd < 0) continue;
        Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        size_t shstr;
        if (e && elf_kind(e) == ELF_K_ELF && elf_getshdrstrndx(e, &shstr) == 0) {
            for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
                GElf_Shdr sh;
                const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
                if (!name || strcmp(name, ".nv_fatbin") || sh.sh_type == SHT_NOBITS) continue;
                Elf_Data *d = elf_getdata(scn, NULL);
                char err[256];
                if (d && d->d_buf && d->d_size &&
                    vt_fatbin_each_cubin(d->d_buf, d->d_size, s->cc, on_cubin, s, err, sizeof err) < 0 && !s->why[0])
                    snprintf(s->why, sizeof s->why, "%.120s: .nv_fatbin: %.120s", path, err);
                break;
            }
        }
        if (e) elf_end(e);
        close(fd);
    }
}

static struct noted *noted_of(struct noted *k, size_t nk, const char *mangled)
{
    for (size_t i = 0; i < nk; i++)
        if (!strcmp(k[i].mangled, mangled)) return &k[i];
    return NULL;
}

/* The finding W is, now that the kernel's code is seen to use it as an address. */
static int to_finding(struct vt_proc *p, const struct note_word *w)
{
    struct vt_an_private *a = p->priv;
    if (p->nfindings == VT_AN_MAX_FINDINGS) { p->finding_count++; p->finding_errors++; return 0; }
    char msg[1024];
    const char *cut = strstr(w->msg, " (inside a by-value struct");
    int n = cut ? (int)(cut - w->msg) : (int)strlen(w->msg);
    snprintf(msg, sizeof msg, "%.*s (the kernel's machine code uses this word as an address: nvdisasm)", n, w->msg);
    GROW(p->findings, p->nfindings, a->capfindings, 16);
    p->findings[p->nfindings++] = (struct vt_finding){ w->t, w->kind, VT_SEVN_ERROR, w->api, w->kernel, vt_an_keep(p, msg), w->cls,
                                                       w->mapping, w->arg, w->offset, w->value, w->site, 1, w->t };
    p->finding_count++;
    p->finding_errors++;
    return 0;
}

/* A word left a note: into its kernel's note. */
static int fold(struct vt_proc *p, const struct note_word *w)
{
    struct vt_an_private *a = p->priv;
    struct vt_note *n = NULL;
    for (size_t i = 0; i < p->nnotes && !n; i++)
        if (p->notes[i].kernel == w->kernel || !strcmp(p->notes[i].kernel, w->kernel)) n = &p->notes[i];
    if (!n) {
        GROW(p->notes, p->nnotes, a->capnotes, 8);
        n = &p->notes[p->nnotes++];
        *n = (struct vt_note){ w->kernel, 0, 0, w->t, w->site };
    }
    n->words++;
    if (!strcmp(w->kind, VT_FINDN_HOST_POINTER)) n->host_words++;
    if (w->t < n->t) { n->t = w->t; n->site = w->site; }
    return 0;
}

int vt_an_settle_notes(struct vt_proc *p)
{
    struct vt_an_private *a = p->priv;
    if (!a->nwords) return 0;
    struct scan s = { .tool = vt_sass_nvdisasm() };
    p->sass_tool = s.tool ? vt_an_keep(p, s.tool) : NULL;
    struct noted *k = s.tool ? calloc(a->nwords, sizeof *k) : NULL;
    int rc = 0;
    if (k) {
        for (size_t i = 0; i < a->nwords; i++) {
            const struct note_word *w = &a->words[i];
            if (!w->params || !w->mangled[0] || noted_of(k, s.nk, w->mangled)) continue;
            uint32_t nbytes = 0;
            for (uint32_t j = 0; j < w->nparams; j++)
                if (w->params[2 * j] + w->params[2 * j + 1] > nbytes) nbytes = w->params[2 * j] + w->params[2 * j + 1];
            uint8_t *used = nbytes ? calloc(nbytes, 1) : NULL;
            if (!used) continue;
            k[s.nk] = (struct noted){ w->mangled, w->params, w->nparams, nbytes, 0, used };
            s.nk++;
        }
        for (size_t i = 0; i < p->ndevices && !s.cc; i++)
            if (p->devices[i].dev == a->words[0].dev) s.cc = (unsigned)p->devices[i].cc;
        s.k = k;
        s.left = s.nk;
        if (s.nk) scan_modules(p, &s);
    }
    for (size_t i = 0; i < a->nwords && !rc; i++) {
        const struct note_word *w = &a->words[i];
        struct noted *kn = k ? noted_of(k, s.nk, w->mangled) : NULL;
        if (!kn || !kn->settled || w->arg < 0 || (uint64_t)w->arg >= kn->nparams) {
            rc = fold(p, w);
            continue;
        }
        p->sass_words++;
        uint64_t b = (uint64_t)kn->params[2 * w->arg] + (uint64_t)w->offset;
        int used = 0;
        for (uint64_t j = b; j < b + 8 && j < kn->nbytes; j++) used |= kn->used[j];
        if (used) {
            p->sass_findings++;
            rc = to_finding(p, w);
        }
    }
    for (size_t i = 0; k && i < s.nk; i++) {
        p->sass_unsettled += !k[i].settled;
        free(k[i].used);
    }
    if (p->sass_unsettled)
        p->sass_why = vt_an_keep(p, s.why[0] ? s.why : "no traced file holds the kernel's cubin for this device (loaded from memory, "
                                                       "or the file changed since the trace)");
    free(k);
    return rc;
}
