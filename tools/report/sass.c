/* sass.c - which parameter bytes a kernel's SASS uses as addresses (sass.h), and running nvdisasm. */
#include "report/sass.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define NREG 256                    /* R0..R255 */
#define NUREG 64                    /* UR0..UR63 */
#define LOCAL_SLOT (NREG + NUREG)   /* everything spilled to local memory, as one */
#define NSLOTS (LOCAL_SLOT + 1)
#define MAX_OPS 8

struct insn {
    char op[48];                    /* the opcode with its modifiers, "LDC.64"; uniform ops without their U */
    char base[16];                  /* the opcode alone, "LDC" */
    const char *ops[MAX_OPS];       /* operands, predicate operands (carry flags) left out */
    size_t lens[MAX_OPS];
    int nops;
    int pred_dest;                  /* the first operand is a predicate: no register is written */
    int guarded;                    /* @P0: it may not run, so what it writes adds to the old value */
};

struct state {
    uint32_t base, nbytes, nwords;  /* parameter bank; 4-byte words of taint */
    const uint32_t *params;
    uint32_t nparams;
    size_t w;                       /* uint64_t per set */
    uint64_t *taint;                /* NSLOTS sets: the parameter words each register may hold */
    uint64_t *used;                 /* the words that reach an address */
    uint64_t *tmp;
    int changed;
};

static uint64_t *slot(struct state *s, int r) { return s->taint + (size_t)r * s->w; }

static int or_into(struct state *s, uint64_t *dst, const uint64_t *src)
{
    int ch = 0;
    for (size_t i = 0; i < s->w; i++) {
        uint64_t v = dst[i] | src[i];
        if (v != dst[i]) { dst[i] = v; ch = 1; }
    }
    return ch;
}

/* A register written with VALUE: replaced, or (a guarded instruction) added to. */
static void write_reg(struct state *s, int r, const uint64_t *value, int guarded)
{
    uint64_t *d = slot(s, r);
    if (guarded) { s->changed |= or_into(s, d, value); return; }
    if (memcmp(d, value, s->w * sizeof *d)) { memcpy(d, value, s->w * sizeof *d); s->changed = 1; }
}

static void mark_bytes(struct state *s, uint64_t *set, uint32_t from, uint32_t to)
{
    if (to > s->nbytes) to = s->nbytes;
    for (uint32_t b = from & ~3u; b < to; b += 4) set[(b / 4) / 64] |= 1ull << ((b / 4) % 64);
}

static int is_alnum_(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* Registers named in [s, s+n): R<d>/UR<d> as slots, a ".64" suffix adding the next one. */
static int regs_in(const char *s, size_t n, int *out, int max)
{
    int k = 0;
    for (size_t i = 0; i < n && k + 2 <= max; i++) {
        if (i && is_alnum_(s[i - 1])) continue;
        int uniform = s[i] == 'U' && i + 1 < n && s[i + 1] == 'R';
        size_t j = i + (uniform ? 2 : 1);
        if (!uniform && s[i] != 'R') continue;
        if (j >= n || s[j] < '0' || s[j] > '9') continue;
        int v = 0;
        while (j < n && s[j] >= '0' && s[j] <= '9' && v < 1000) v = v * 10 + (s[j++] - '0');
        if (j < n && is_alnum_(s[j])) continue;
        int r = uniform ? (v < NUREG ? NREG + v : -1) : (v < NREG ? v : -1);
        if (r < 0) continue;
        out[k++] = r;
        if (j + 3 <= n && !memcmp(s + j, ".64", 3) && r + 1 < (uniform ? NREG + NUREG : NREG)) out[k++] = r + 1;
    }
    return k;
}

/* A constant-bank operand "c[0x0][0x210]" or "c[0x0][R0+0x210]": 1 with the parameter bytes it
 * may read marked into SET (bytes WIDTH from its offset; an indexed one, all of the parameter it
 * starts in), 0 when it is no parameter. */
static int const_param(struct state *s, const char *o, size_t n, int width, uint64_t *set)
{
    if (n < 10 || memcmp(o, "c[0x0][", 7) != 0) return 0;
    const char *p = o + 7, *end = o + n;
    int indexed = 0;
    const char *hex = NULL;
    for (const char *q = p; q < end && *q != ']'; q++) {
        if (*q == 'R' || *q == 'U') indexed = 1;
        if (q + 1 < end && q[0] == '0' && q[1] == 'x') { hex = q + 2; break; }
    }
    if (!hex) return 0;
    unsigned long x = 0;
    for (const char *q = hex; q < end && *q != ']' && *q != '+' && x < 0x100000; q++) {
        int d = (*q >= '0' && *q <= '9') ? *q - '0' : (*q >= 'a' && *q <= 'f') ? *q - 'a' + 10 : (*q >= 'A' && *q <= 'F') ? *q - 'A' + 10 : -1;
        if (d < 0) break;
        x = x * 16 + (unsigned)d;
    }
    if (x < s->base || x >= (unsigned long)s->base + s->nbytes) return 0;
    uint32_t off = (uint32_t)(x - s->base);
    if (!indexed) { mark_bytes(s, set, off, off + (uint32_t)width); return 1; }
    for (uint32_t i = 0; i < s->nparams; i++) /* a computed index into the parameter: all of it */
        if (off >= s->params[2 * i] && off < s->params[2 * i] + s->params[2 * i + 1]) {
            mark_bytes(s, set, s->params[2 * i], s->params[2 * i] + s->params[2 * i + 1]);
            return 1;
        }
    mark_bytes(s, set, off, s->nbytes);
    return 1;
}

/* The taint of operand O into SET (registers and parameter constants). */
static void operand_taint(struct state *s, const char *o, size_t n, int width, uint64_t *set)
{
    if (const_param(s, o, n, width, set)) return;
    int r[8];
    int k = regs_in(o, n, r, 8);
    for (int i = 0; i < k; i++) or_into(s, set, slot(s, r[i]));
}

/* The registers of an address operand ("desc[UR4][R2.64+0x10]", "[R2.64]", "[R1+0x8]"): the
 * memory descriptor's registers left out. */
static int address_regs(const char *o, size_t n, int *out, int max)
{
    const char *p = o, *end = o + n;
    if (n >= 5 && !memcmp(o, "desc[", 5)) { /* skip desc[...] */
        p = memchr(o, ']', n);
        if (!p) return 0;
        p++;
    }
    return regs_in(p, (size_t)(end - p), out, max);
}

static int is_addr_operand(const char *o, size_t n) { return memchr(o, '[', n) && !(n >= 2 && o[0] == 'c' && o[1] == '['); }

static int is_pred(const char *o, size_t n)
{
    if (n && *o == '!') { o++; n--; }
    if (n && *o == 'U') { o++; n--; }
    return n >= 2 && o[0] == 'P' && (o[1] == 'T' || (o[1] >= '0' && o[1] <= '9'));
}

/* One listing line into *I; 0 when it is no instruction. */
static int parse_line(const char *l, size_t n, struct insn *I)
{
    const char *p = l, *end = l + n;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (end - p < 4 || p[0] != '/' || p[1] != '*') return 0;
    const char *c = memchr(p + 2, '*', (size_t)(end - p - 2));
    if (!c || c + 1 >= end || c[1] != '/') return 0;
    p = c + 2;
    const char *semi = memchr(p, ';', (size_t)(end - p));
    if (semi) end = semi;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    I->guarded = p < end && *p == '@';
    if (p < end && *p == '@') { /* a guard predicate */
        while (p < end && *p != ' ') p++;
        while (p < end && *p == ' ') p++;
    }
    const char *op = p;
    while (p < end && *p != ' ') p++;
    size_t on = (size_t)(p - op);
    if (!on) return 0;
    if (on >= 2 && op[0] == 'U' && op[1] != 'N') { op++; on--; } /* uniform datapath: the same operation */
    if (on >= sizeof I->op) on = sizeof I->op - 1;
    memcpy(I->op, op, on);
    I->op[on] = 0;
    size_t bn = strcspn(I->op, ".");
    if (bn >= sizeof I->base) bn = sizeof I->base - 1;
    memcpy(I->base, I->op, bn);
    I->base[bn] = 0;
    I->nops = 0;
    I->pred_dest = 0;
    int first = 1;
    while (p < end && I->nops < MAX_OPS) {
        while (p < end && (*p == ' ' || *p == ',')) p++;
        if (p >= end) break;
        const char *a = p;
        while (p < end && *p != ',') p++;
        const char *b = p;
        while (b > a && b[-1] == ' ') b--;
        int pred = b > a && is_pred(a, (size_t)(b - a));
        if (first && pred) I->pred_dest = 1;
        first = 0;
        if (b > a && !pred) { I->ops[I->nops] = a; I->lens[I->nops++] = (size_t)(b - a); }
    }
    return 1;
}

static int op_is(const struct insn *I, const char *b) { return !strcmp(I->base, b); }
static int has_mod(const struct insn *I, const char *m) { return strstr(I->op, m) != NULL; }

/* Global or generic memory operations, whose address operand is a use. Shared-memory and
 * texture operations address no global memory. */
static int global_mem(const struct insn *I)
{
    static const char *const ops[] = { "LDG", "STG", "LD", "ST", "ATOM", "ATOMG", "RED", "REDG", "LDGSTS", "CCTL", "ATOMCAS" };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op_is(I, ops[i])) return 1;
    return 0;
}

static void step(struct state *s, const struct insn *I)
{
    int width = has_mod(I, ".64") ? 8 : 4;
    int r[8], k;
    if (op_is(I, "CALL")) {
        /* the compiler's arithmetic helpers (__cuda_sm20_rem_s64, __internal_* of libdevice)
         * take numbers; any other function gets what its argument registers hold (the ABI
         * passes them from R4 up: R4..R23 is a generous window; the others are the caller's) */
        for (int i = 0; i < I->nops; i++)
            if (memmem(I->ops[i], I->lens[i], "__cuda_sm", 9) || memmem(I->ops[i], I->lens[i], "__internal_", 11)) return;
        for (int i = 4; i <= 23; i++) s->changed |= or_into(s, s->used, slot(s, i));
        return;
    }
    if (global_mem(I) || op_is(I, "LDL") || op_is(I, "STL")) {
        int local = op_is(I, "LDL") || op_is(I, "STL");
        int stores = !op_is(I, "LDG") && !op_is(I, "LD") && !op_is(I, "LDL") && !op_is(I, "LDGSTS");
        for (int i = 0; i < I->nops; i++) {
            if (is_addr_operand(I->ops[i], I->lens[i])) {
                if (local) continue; /* the stack pointer */
                k = address_regs(I->ops[i], I->lens[i], r, 8);
                for (int j = 0; j < k; j++) s->changed |= or_into(s, s->used, slot(s, r[j]));
            } else if (op_is(I, "STL")) { /* a spill: what it holds may come back with LDL */
                k = regs_in(I->ops[i], I->lens[i], r, 8);
                for (int j = 0; j < k; j++) s->changed |= or_into(s, slot(s, LOCAL_SLOT), slot(s, r[j]));
            } else if (stores && width == 8 && !(i == 0 && (op_is(I, "ATOM") || op_is(I, "ATOMG")))) {
                /* a 64-bit value stored to memory: a pointer that escapes */
                k = regs_in(I->ops[i], I->lens[i], r, 8);
                for (int j = 0; j < k; j++) s->changed |= or_into(s, s->used, slot(s, r[j]));
            }
        }
        /* a load's destination holds memory, or (LDL) what was spilled */
        int loads = op_is(I, "LDG") || op_is(I, "LD") || op_is(I, "LDL") || ((op_is(I, "ATOM") || op_is(I, "ATOMG")) && I->nops > 2);
        if (loads && I->nops && !is_addr_operand(I->ops[0], I->lens[0]) && (k = regs_in(I->ops[0], I->lens[0], r, 8)) > 0) {
            memcpy(s->tmp, slot(s, LOCAL_SLOT), s->w * sizeof *s->tmp);
            if (!op_is(I, "LDL")) memset(s->tmp, 0, s->w * sizeof *s->tmp);
            for (int j = 0; j < k; j++) write_reg(s, r[j], s->tmp, I->guarded);
            if (width == 8 && k == 1 && r[0] + 1 < NREG) write_reg(s, r[0] + 1, s->tmp, I->guarded);
        }
        return;
    }
    if (!I->nops || I->pred_dest) return;
    static const char *const no_dest[] = { "BAR", "BRA", "EXIT", "NOP", "BSSY", "BSYNC", "WARPSYNC", "STS", "RET", "JMP", "BPT" };
    for (size_t i = 0; i < sizeof no_dest / sizeof no_dest[0]; i++)
        if (op_is(I, no_dest[i])) return;
    k = regs_in(I->ops[0], I->lens[0], r, 8);
    if (k <= 0) return; /* no register written (a predicate, a store of some other kind) */
    memset(s->tmp, 0, s->w * sizeof *s->tmp);
    /* what produces no parameter-derived value: its destination is overwritten with nothing */
    static const char *const none[] = { "S2R", "S2UR", "CS2R", "LDS", "LDSM", "ATOMS", "SHF", "SHL", "SHR", "IMUL", "FLO", "POPC",
                                        "BREV", "TLD", "TEX", "SULD", "MUFU", "I2F", "F2I", "P2R", "VOTE" };
    int produces = 1;
    for (size_t i = 0; i < sizeof none / sizeof none[0] && produces; i++)
        if (op_is(I, none[i])) produces = 0;
    if (!produces) {
    } else if (op_is(I, "IMAD") || op_is(I, "IMAD32I")) {
        /* a * b + c: the addend is the address arithmetic; IMAD.IADD (b = 1) adds a too */
        if (I->nops > 3) operand_taint(s, I->ops[3], I->lens[3], width, s->tmp);
        if (has_mod(I, ".IADD") && I->nops > 1) operand_taint(s, I->ops[1], I->lens[1], width, s->tmp);
    } else if (op_is(I, "LEA")) { /* (a << s) + b */
        if (I->nops > 2) operand_taint(s, I->ops[2], I->lens[2], width, s->tmp);
    } else {
        for (int i = 1; i < I->nops; i++) operand_taint(s, I->ops[i], I->lens[i], width, s->tmp);
    }
    int pair = width == 8 || has_mod(I, ".WIDE");
    write_reg(s, r[0], s->tmp, I->guarded);
    if (pair && r[0] + 1 < NSLOTS - 1 && r[0] != NREG - 1) write_reg(s, r[0] + 1, s->tmp, I->guarded);
}

/* The body of KERNEL: from its label line to the next function's header. */
static int find_function(const char *t, size_t len, const char *kernel, const char **from, const char **to)
{
    size_t kn = strlen(kernel);
    const char *end = t + len;
    for (const char *p = t; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if ((size_t)(le - p) == kn + 1 && !memcmp(p, kernel, kn) && p[kn] == ':') {
            *from = le;
            const char *q = le;
            while (q < end) {
                const char *n2 = memchr(q, '\n', (size_t)(end - q));
                const char *l2 = n2 ? n2 + 1 : end;
                if (l2 < end && end - l2 >= 3 && !memcmp(l2, "//-", 3)) { *to = l2; return 0; }
                q = l2;
            }
            *to = end;
            return 0;
        }
        p = nl ? nl + 1 : end;
    }
    return -1;
}

int vt_sass_param_uses(const char *listing, size_t len, const char *kernel, uint32_t base, const uint32_t *params,
                       uint32_t nparams, uint8_t *used, uint32_t nbytes)
{
    const char *from, *to;
    memset(used, 0, nbytes);
    if (!listing || !kernel || !*kernel || !nbytes || find_function(listing, len, kernel, &from, &to) < 0) return -1;
    struct state s = { .base = base, .nbytes = nbytes, .nwords = (nbytes + 3) / 4, .params = params, .nparams = nparams };
    s.w = (s.nwords + 63) / 64;
    s.taint = calloc((size_t)NSLOTS * s.w, sizeof *s.taint);
    s.used = calloc(s.w, sizeof *s.used);
    s.tmp = calloc(s.w, sizeof *s.tmp);
    /* at most one instruction a line: the lines counted first, one allocation */
    size_t lines = 1, n = 0;
    for (const char *p = from; (p = memchr(p, '\n', (size_t)(to - p))) != NULL; p++) lines++;
    struct insn *code = malloc(lines * sizeof *code);
    int rc = -1;
    if (!s.taint || !s.used || !s.tmp || !code) goto out;
    for (const char *p = from; p < to && n < lines;) {
        const char *nl = memchr(p, '\n', (size_t)(to - p));
        const char *le = nl ? nl : to;
        if (parse_line(p, (size_t)(le - p), &code[n])) n++;
        p = nl ? nl + 1 : to;
    }
    /* in program order, again while anything changes: a loop's values reach its top on the next
     * pass; `used` only grows, and 16 passes bound the rest (a register's value may cycle) */
    for (int pass = 0; pass < 16; pass++) {
        s.changed = 0;
        for (size_t i = 0; i < n; i++) step(&s, &code[i]);
        if (!s.changed) break;
    }
    for (uint32_t b = 0; b < nbytes; b++) used[b] = (s.used[(b / 4) / 64] >> ((b / 4) % 64)) & 1;
    rc = 0;
out:
    free(s.taint);
    free(s.used);
    free(s.tmp);
    free(code);
    return rc;
}

/* ---- running nvdisasm ---------------------------------------------------------------------- */

static int executable(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

const char *vt_sass_nvdisasm(void)
{
    static char found[4096];
    const char *env = getenv("VRAMTRACE_NVDISASM");
    if (env && *env) return executable(env) ? env : NULL;
    const char *home = getenv("CUDA_HOME");
    if (home && *home && snprintf(found, sizeof found, "%s/bin/nvdisasm", home) < (int)sizeof found && executable(found)) return found;
    if (executable("/usr/local/cuda/bin/nvdisasm")) return "/usr/local/cuda/bin/nvdisasm";
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (n && snprintf(found, sizeof found, "%.*s/nvdisasm", (int)n, p) < (int)sizeof found && executable(found)) return found;
        p = c ? c + 1 : NULL;
    }
    return NULL;
}

/* "-fun"'s argument: the symbol-table indices of KERNELS in CUBIN, comma-separated; 0 when none. */
static int function_indices(const uint8_t *cubin, size_t len, const char *const *kernels, size_t nk, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = 0;
    elf_version(EV_CURRENT);
    Elf *e = elf_memory((char *)cubin, len);
    if (!e) return 0;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? d->d_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            const char *name = gelf_getsym(d, (int)i, &sym) ? elf_strptr(e, sh.sh_link, sym.st_name) : NULL;
            if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
            for (size_t j = 0; j < nk; j++)
                if (!strcmp(name, kernels[j]) && k + 24 < cap) {
                    k += (size_t)snprintf(buf + k, cap - k, "%s%zu", k ? "," : "", i);
                    break;
                }
        }
        break;
    }
    elf_end(e);
    return k > 0;
}

int vt_sass_disassemble(const char *nvdisasm, const uint8_t *cubin, size_t len, const char *const *kernels, size_t nk,
                        char **out, size_t *outlen, char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    char funs[8192];
    if (!function_indices(cubin, len, kernels, nk, funs, sizeof funs)) {
        snprintf(err, errlen, "the kernel is not among the cubin's symbols");
        return -1;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096], file[4200];
    if (snprintf(dir, sizeof dir, "%s/vramtrace-sass-XXXXXX", tmp && *tmp ? tmp : "/tmp") >= (int)sizeof dir || !mkdtemp(dir)) {
        snprintf(err, errlen, "cannot make a private directory for the cubin: %s", strerror(errno));
        return -1;
    }
    snprintf(file, sizeof file, "%s/kernel.cubin", dir);
    int rc = -1, fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int pfd[2] = { -1, -1 };
    char *buf = NULL;
    if (fd < 0) { snprintf(err, errlen, "cannot write the cubin: %s", strerror(errno)); goto out; }
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, cubin + done, len - done);
        if (w <= 0) { snprintf(err, errlen, "cannot write the cubin: %s", strerror(errno)); close(fd); goto out; }
        done += (size_t)w;
    }
    close(fd);
    if (pipe2(pfd, O_CLOEXEC) < 0) { snprintf(err, errlen, "pipe: %s", strerror(errno)); goto out; }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = { (char *)nvdisasm, (char *)"-c", (char *)"-fun", funs, file, NULL };
    pid_t pid;
    int sp = posix_spawn(&pid, nvdisasm, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    pfd[1] = -1;
    if (sp != 0) { snprintf(err, errlen, "cannot run %s: %s", nvdisasm, strerror(sp)); goto out; }
    size_t cap = 1 << 16, n = 0;
    buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        if (cap - n < 4096) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(pfd[0], buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!buf) { snprintf(err, errlen, "out of memory reading nvdisasm's listing"); goto out; }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, errlen, "%s failed on the kernel's cubin (status %d)", nvdisasm, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        free(buf);
        buf = NULL;
        goto out;
    }
    buf[n] = 0;
    *out = buf;
    *outlen = n;
    buf = NULL;
    rc = 0;
out:
    if (pfd[0] >= 0) close(pfd[0]);
    if (pfd[1] >= 0) close(pfd[1]);
    free(buf);
    unlink(file);
    rmdir(dir);
    return rc;
}
