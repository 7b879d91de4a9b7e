/* fatbin_ptx_use.c - which parameter bytes a kernel's PTX uses as addresses.
 *
 * A by-value struct can carry words no rule over raw bytes can tell from pointers: PyTorch's
 * offset calculators have fixed-size stride arrays whose unused tail is stack garbage. The kernel
 * knows: a word is an address when the body loads it from the parameter space (ld.param) and the
 * value reaches an address operand ([%rd]) of a load, store or atomic, directly or through moves,
 * conversions, address arithmetic (add/sub, the addend of mad) and the byte assembly of a packed
 * pointer (bfi, or, shl, prmt, mov {lo, hi}); or when it is stored to memory or handed to a called
 * function (it may be dereferenced there). A parameter whose address is taken (mov/cvta of its
 * name) is "whole": any 8-aligned word of it may be an address. The analysis is flow-insensitive
 * (any path counts) and never follows a value through multiplication, shifts right, division or a
 * load from memory. ../shared/README.md has the pattern; docs/fatbin.md the details.
 *
 * Pure text processing over the body, bounded by its length; no allocation beyond the register
 * table and the output. */
#include <stdlib.h>
#include <string.h>

#include "fatbin_int.h"

#define MAX_IV 6        /* origins kept per register */
#define NAME_MAX_LEN 31 /* longer register names are not tracked */

/* bytes [lo, hi) of parameter `param`; hi WILD: some word of it, which one not known (loaded
 * through the parameter's address with a computed offset) */
typedef struct iv { uint32_t param, lo, hi; } iv;
#define WILD UINT32_MAX
#define POFF_ANY INT32_MIN
typedef struct reg {
    char name[NAME_MAX_LEN + 1];
    uint8_t len, n;
    uint32_t paddr;   /* p + 1: holds the address of parameter p (mov/cvta.param of its name) */
    int32_t poff;     /* ... plus this many bytes (a __grid_constant__ member's place); POFF_ANY: computed */
    iv o[MAX_IV];
} reg;

typedef struct state {
    reg *t;
    size_t cap, used;
    const vt_fb_name *names;
    uint32_t np;
    vt_addr_use *out;
    size_t nout, capout;
    int oom;
    /* What was stored to local or shared memory (a struct copied to the stack to be indexed):
     * a value loaded back from there carries the origin LOCAL, which stands for all of these. */
    iv bucket[256];
    int nbucket, bucket_full;
} state;
#define LOCAL UINT32_MAX   /* iv.param of a value loaded from local or shared memory */

static uint32_t hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static reg *lookup(state *st, const char *s, size_t n, int create)
{
    if (n == 0 || n > NAME_MAX_LEN) return NULL;
    if (create && (st->used + 1) * 2 > st->cap) {
        size_t nc = st->cap ? st->cap * 2 : 1024;
        reg *nt = calloc(nc, sizeof *nt);
        if (!nt) { st->oom = 1; return NULL; }
        for (size_t i = 0; i < st->cap; i++) {
            if (!st->t[i].len) continue;
            size_t j = hash(st->t[i].name, st->t[i].len) & (nc - 1);
            while (nt[j].len) j = (j + 1) & (nc - 1);
            nt[j] = st->t[i];
        }
        free(st->t);
        st->t = nt;
        st->cap = nc;
    }
    if (!st->cap) return NULL;
    size_t j = hash(s, n) & (st->cap - 1);
    while (st->t[j].len) {
        if (st->t[j].len == n && memcmp(st->t[j].name, s, n) == 0) return &st->t[j];
        j = (j + 1) & (st->cap - 1);
    }
    if (!create) return NULL;
    memcpy(st->t[j].name, s, n);
    st->t[j].len = (uint8_t)n;
    st->t[j].n = 0;
    st->t[j].paddr = 0;
    st->t[j].poff = POFF_ANY;
    st->used++;
    return &st->t[j];
}

static void mark(state *st, uint32_t param, uint32_t offset)
{
    for (size_t i = 0; i < st->nout; i++)
        if (st->out[i].param == param && st->out[i].offset == offset) return;
    if (st->nout == st->capout) {
        size_t nc = st->capout ? st->capout * 2 : 16;
        vt_addr_use *no = realloc(st->out, nc * sizeof *no);
        if (!no) { st->oom = 1; return; }
        st->out = no;
        st->capout = nc;
    }
    st->out[st->nout++] = (vt_addr_use){ param, offset };
}

/* the value in register R may be an address: each 8-byte origin is a pointer in a parameter, a
 * word of unknown place makes the whole parameter suspect. ESCAPE: R is stored or passed on, so
 * a parameter address it holds lets the callee read (and dereference) any word. */
static void mark_iv(state *st, iv v)
{
    if (v.param == LOCAL) { /* loaded back from local memory: anything stored there may be it */
        for (int i = 0; i < st->nbucket; i++) mark_iv(st, st->bucket[i]);
        if (st->bucket_full)
            for (uint32_t p = 0; p < st->np; p++) mark(st, p, VT_USE_WHOLE);
        st->nbucket = 0; /* marked once; later stores add again */
    } else if (v.hi == WILD) mark(st, v.param, VT_USE_WHOLE);
    else if (v.hi - v.lo == 8) mark(st, v.param, v.lo);
}

static void mark_reg(state *st, const reg *r, int escape)
{
    if (!r) return;
    for (int i = 0; i < r->n; i++) mark_iv(st, r->o[i]);
    if (escape && r->paddr) mark(st, r->paddr - 1, VT_USE_WHOLE);
}

/* a value stored to local or shared memory: remembered, marked only if read back as an address */
static void to_bucket(state *st, const reg *r)
{
    if (!r) return;
    for (int i = 0; i < r->n + (r->paddr ? 1 : 0); i++) {
        iv v = i < r->n ? r->o[i] : (iv){ r->paddr - 1, 0, WILD };
        if (v.param == LOCAL) continue;
        if (st->nbucket == (int)(sizeof st->bucket / sizeof st->bucket[0])) { st->bucket_full = 1; continue; }
        st->bucket[st->nbucket++] = v;
    }
}

static int param_index(const state *st, const char *s, size_t n)
{
    for (uint32_t i = 0; i < st->np; i++)
        if (st->names[i].n == n && memcmp(st->names[i].s, s, n) == 0) return (int)i;
    return -1;
}

/* ---- statements ------------------------------------------------------------------------------ */

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '%' || c == '.';
}

typedef struct span { const char *s; size_t n; } span;

static span trim(const char *s, const char *e)
{
    while (s < e && vt_fb_ptx_space(*s)) s++;
    while (e > s && vt_fb_ptx_space(e[-1])) e--;
    return (span){ s, (size_t)(e - s) };
}

/* Splits "a, [b+1], {c, d}" at top-level commas; returns the count (at most max). */
static int operands(span s, span *ops, int max)
{
    int n = 0, depth = 0;
    const char *start = s.s, *e = s.s + s.n;
    for (const char *p = s.s; p <= e; p++) {
        if (p < e && (*p == '[' || *p == '{' || *p == '(')) depth++;
        else if (p < e && (*p == ']' || *p == '}' || *p == ')')) depth--;
        if (p == e || (*p == ',' && depth == 0)) {
            if (n < max) ops[n++] = trim(start, p);
            start = p + 1;
        }
    }
    return n;
}

/* "{%a, %b}" (a vector operand): its lanes; any other operand: itself. At most 8; the count. */
static int lanes(span o, span *out)
{
    if (o.n >= 2 && o.s[0] == '{') return operands((span){ o.s + 1, o.n - 2 }, out, 8);
    out[0] = o;
    return 1;
}

/* a register operand: "%rd12" (possibly negated "-%rd1" or "!%p" is not a value we track) */
static reg *reg_of(state *st, span o, int create)
{
    if (!o.n || o.s[0] != '%') return NULL;
    size_t n = 0;
    while (n < o.n && ident_char(o.s[n]) && o.s[n] != '.') n++;
    return n == o.n ? lookup(st, o.s, n, create) : NULL;
}

/* "[base+off]": the base identifier and the offset */
static int address(span o, span *base, long *off)
{
    if (o.n < 3 || o.s[0] != '[' || o.s[o.n - 1] != ']') return 0;
    const char *p = o.s + 1, *e = o.s + o.n - 1;
    while (p < e && vt_fb_ptx_space(*p)) p++;
    const char *b = p;
    while (p < e && ident_char(*p)) p++;
    *base = (span){ b, (size_t)(p - b) };
    *off = 0;
    while (p < e && vt_fb_ptx_space(*p)) p++;
    if (p < e && *p == '+') {
        p++;
        while (p < e && vt_fb_ptx_space(*p)) p++;
        int neg = 0;
        if (p < e && *p == '-') { neg = 1; p++; }
        long v = 0;
        while (p < e && *p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
        *off = neg ? -v : v;
    }
    return base->n > 0;
}

static int starts(span s, const char *w) { size_t l = strlen(w); return s.n >= l && memcmp(s.s, w, l) == 0; }
static int has(span s, const char *w) { return s.n && memmem(s.s, s.n, w, strlen(w)) != NULL; }

/* bytes per element of a load's type (.u8 1 ... .u64/.b64/.f64 8); 0 when not seen */
static uint32_t width(span op)
{
    if (has(op, "64")) return 8;
    if (has(op, "32")) return 4;
    if (has(op, "16")) return 2;
    if (has(op, "8")) return 1;
    return 0;
}

static void add_iv(reg *d, iv v, int merge)
{
    for (int i = 0; i < d->n; i++) {
        iv *x = &d->o[i];
        if (x->param != v.param) continue;
        if (x->lo == v.lo && x->hi == v.hi) return;
        if (merge && v.lo <= x->hi && x->lo <= v.hi) { /* adjacent or overlapping bytes of one value */
            if (v.lo < x->lo) x->lo = v.lo;
            if (v.hi > x->hi) x->hi = v.hi;
            return;
        }
    }
    if (d->n < MAX_IV) d->o[d->n++] = v;
}

static int literal(span o, long *v)
{
    size_t i = 0;
    int neg = 0;
    if (i < o.n && o.s[i] == '-') { neg = 1; i++; }
    if (i == o.n) return 0;
    long x = 0;
    for (; i < o.n; i++) {
        if (o.s[i] < '0' || o.s[i] > '9' || x > 1 << 24) return 0;
        x = x * 10 + (o.s[i] - '0');
    }
    *v = neg ? -x : x;
    return 1;
}

/* D gets the union of the sources' origins (MERGE: bytes being assembled into one value). A
 * parameter's address flows through a copy (ARITH 0) and, with its offset kept, an add (1) or
 * sub (-1) of a literal; any other arithmetic leaves the address but not where in it. */
static void flow(state *st, span dst, const span *src, int nsrc, int merge, int arith)
{
    iv tmp[MAX_IV * 4];
    int nt = 0;
    uint32_t paddr = 0;
    int32_t poff = POFF_ANY;
    long lit = 0;
    int has_lit = 0;
    for (int i = 0; i < nsrc; i++) has_lit |= literal(src[i], &lit);
    for (int i = 0; i < nsrc; i++) {
        if (src[i].n && src[i].s[0] == '{') { /* mov.b64 %rd, {%r1, %r2}: the halves of one value */
            span parts[8];
            int np = lanes(src[i], parts);
            for (int k = 0; k < np; k++) {
                const reg *r = reg_of(st, parts[k], 0);
                for (int j = 0; r && j < r->n && nt < (int)(sizeof tmp / sizeof tmp[0]); j++) tmp[nt++] = r->o[j];
            }
            merge = 1;
            continue;
        }
        int p = param_index(st, src[i].s, src[i].n);
        if (p >= 0 && !merge) { paddr = (uint32_t)p + 1; poff = 0; continue; } /* mov/cvta.param of its name */
        const reg *r = reg_of(st, src[i], 0);
        if (r && r->paddr && !merge) {                                   /* moved, offset: still in it */
            paddr = r->paddr;
            poff = r->poff;
        }
        for (int j = 0; r && j < r->n && nt < (int)(sizeof tmp / sizeof tmp[0]); j++) tmp[nt++] = r->o[j];
    }
    reg *d = reg_of(st, dst, nt > 0 || paddr);
    if (!d) return;
    d->n = 0;
    d->paddr = paddr;
    if (poff != POFF_ANY && (arith == 1 || arith == -1) && has_lit && nsrc == 2) poff += (int32_t)(arith * lit);
    else if (arith || (nsrc != 1 && poff != POFF_ANY)) poff = POFF_ANY;
    d->poff = poff;
    for (int i = 0; i < nt; i++) add_iv(d, tmp[i], merge);
    if (merge) /* a second pass joins pieces that only touch through a later one */
        for (int i = 0; i < nt; i++) add_iv(d, tmp[i], 1);
}

static void clear(state *st, span dst)
{
    span l[8];
    int nl = lanes(dst, l);
    for (int k = 0; k < nl; k++) {
        reg *d = reg_of(st, l[k], 0);
        if (d) { d->n = 0; d->paddr = 0; d->poff = POFF_ANY; }
    }
}

/* DST's lanes take loaded values: lane k holds FIRST moved on by k * STEP bytes (STEP 0: all FIRST) */
static void loaded(state *st, span dst, iv first, uint32_t step)
{
    span l[8];
    int nl = lanes(dst, l);
    for (int k = 0; k < nl; k++) {
        reg *d = reg_of(st, l[k], 1);
        if (!d) continue;
        d->n = 0;
        d->paddr = 0;
        d->poff = POFF_ANY;
        add_iv(d, (iv){ first.param, first.lo + (uint32_t)k * step, first.hi + (uint32_t)k * step }, 0);
    }
}

/* any operand naming a kernel parameter outside an ld.param address: its address is taken */
static void names_param(state *st, const span *ops, int n)
{
    for (int i = 0; i < n; i++) {
        span b = ops[i];
        long off;
        if (b.n && b.s[0] == '[') address(ops[i], &b, &off);
        int p = param_index(st, b.s, b.n);
        if (p >= 0) mark(st, (uint32_t)p, VT_USE_WHOLE);
    }
}

static void statement(state *st, span s)
{
    /* labels ("$L__BB0_2:"), a guard predicate ("@%p1", "@!%p1"), and directives that end at
     * their line, not at a ';' (.loc and .file of -lineinfo) */
    for (;;) {
        if (s.n && s.s[0] == '.') {
            const char *nl = memchr(s.s, '\n', s.n);
            if (!nl) return;
            s = trim(nl + 1, s.s + s.n);
            continue;
        }
        size_t i = 0;
        while (i < s.n && ident_char(s.s[i])) i++;
        if (i && i < s.n && s.s[i] == ':') { s = trim(s.s + i + 1, s.s + s.n); continue; }
        if (s.n && s.s[0] == '@') {
            size_t j = 1;
            while (j < s.n && !vt_fb_ptx_space(s.s[j])) j++;
            s = trim(s.s + j, s.s + s.n);
            continue;
        }
        break;
    }
    if (!s.n || s.s[0] == '.' || s.s[0] == '{' || s.s[0] == '}') return; /* directives, scopes */
    size_t i = 0;
    while (i < s.n && !vt_fb_ptx_space(s.s[i])) i++;
    span op = { s.s, i };
    span ops[8];
    int n = operands(trim(s.s + i, s.s + s.n), ops, 8);

    span abase;
    long aoff;
    int has_addr = n >= 2 && address(ops[1], &abase, &aoff);
    const reg *pbase = has_addr ? reg_of(st, abase, 0) : NULL;
    uint32_t w = width(op);
    if (starts(op, "ld") && pbase && pbase->paddr) {
        /* a load through a parameter's address: at a known place (a __grid_constant__ member),
         * those bytes; at a computed place, some word of it */
        uint32_t p = pbase->paddr - 1;
        if (pbase->poff != POFF_ANY && (long)pbase->poff + aoff >= 0 && w) {
            uint32_t at = (uint32_t)(pbase->poff + aoff);
            loaded(st, ops[0], (iv){ p, at, at + w }, w);
        } else loaded(st, ops[0], (iv){ p, 0, WILD }, 0);
        return;
    }
    if (starts(op, "ld.param")) {
        int p = has_addr ? param_index(st, abase.s, abase.n) : -1;
        if (p < 0 || aoff < 0 || !w) clear(st, ops[0]);
        else loaded(st, ops[0], (iv){ (uint32_t)p, (uint32_t)aoff, (uint32_t)aoff + w }, w);
        return;
    }
    if (!starts(op, "mov") && !starts(op, "cvta"))
        names_param(st, ops, n);
    /* stores (st.param too: an argument to a called function) and red: the address operand is
     * used, and a value stored may be dereferenced elsewhere */
    if (starts(op, "st.") || starts(op, "red.")) {
        span base;
        long off;
        const reg *b = n >= 1 && address(ops[0], &base, &off) ? reg_of(st, base, 0) : NULL;
        if (b && !b->paddr && !starts(op, "st.param") && !has(op, ".local") && !has(op, ".shared"))
            mark_reg(st, b, 0);
        int local = has(op, ".local") || has(op, ".shared");
        if (w != 8) return; /* a pointer is stored as 64 bits; a float or an int is no address */
        for (int k = 1; k < n; k++) {
            span parts[8];
            int np = lanes(ops[k], parts);
            for (int j = 0; j < np; j++) {
                const reg *r = reg_of(st, parts[j], 0);
                if (local) to_bucket(st, r);
                else mark_reg(st, r, 1);
            }
        }
        return;
    }
    /* every other address operand: a load, an atomic, a prefetch, an async copy */
    for (int k = 0; k < n; k++) {
        span base;
        long off;
        const reg *b = ops[k].n && ops[k].s[0] == '[' && address(ops[k], &base, &off) ? reg_of(st, base, 0) : NULL;
        if (b && !b->paddr && !has(op, ".local") && !has(op, ".shared") && !has(op, ".param"))
            mark_reg(st, b, 0);
    }
    if (n < 1 || (ops[0].s[0] != '%' && ops[0].s[0] != '{') || starts(op, "call") || starts(op, "bra") ||
        starts(op, "prefetch") || starts(op, "cp."))
        return;
    if (starts(op, "ld") && (has(op, ".local") || has(op, ".shared"))) {
        loaded(st, ops[0], (iv){ LOCAL, 0, 0 }, 0);
        return;
    }
    /* the value flows into the destination through these */
    if (starts(op, "mov") || starts(op, "cvta"))
        flow(st, ops[0], ops + 1, n - 1, 0, 0);
    else if (starts(op, "add") || starts(op, "sub"))
        flow(st, ops[0], ops + 1, n - 1, 0, starts(op, "sub") ? -1 : 1);
    else if (starts(op, "and") || starts(op, "selp") || starts(op, "min") || starts(op, "max"))
        flow(st, ops[0], ops + 1, n - 1, 0, 2);
    else if (starts(op, "bfi") || starts(op, "or") || starts(op, "xor") || starts(op, "prmt") || starts(op, "shl") ||
             starts(op, "cvt.u64") || starts(op, "cvt.s64") || starts(op, "cvt.b64")) /* widening, not to float */
        flow(st, ops[0], ops + 1, n - 1, 1, 0);
    else if (starts(op, "mad") && n >= 4)
        flow(st, ops[0], ops + 3, 1, 0, 2); /* a*b + c: an address can only be the addend */
    else
        clear(st, ops[0]);
}

int vt_fb_ptx_uses(const char *body, size_t n, const vt_fb_name *names, uint32_t np, vt_addr_use **out,
                   uint32_t *nout)
{
    state st = { .names = names, .np = np };
    const char *p = body, *e = body + n, *start = body;
    while (p < e && !st.oom) {
        if (*p == '/' && p + 1 < e && p[1] == '/') { /* a comment: between statements in nvcc's PTX */
            const char *nl = memchr(p, '\n', (size_t)(e - p));
            if (!trim(start, p).n) start = nl ? nl : e;
            p = nl ? nl : e;
            continue;
        }
        /* ';' ends a statement; '{' and '}' open and close a scope only where a statement starts
         * (inside one they group a vector operand) */
        if (*p == ';' || ((*p == '{' || *p == '}') && !trim(start, p).n)) {
            statement(&st, trim(start, p));
            start = p + 1;
        }
        p++;
    }
    free(st.t);
    if (st.oom) { free(st.out); return VT_FATBIN_ENOMEM; }
    *out = st.out;
    *nout = (uint32_t)st.nout;
    return 0;
}
