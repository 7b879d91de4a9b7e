/* unwind.c - cached-CFI stack walker for x86-64 Linux (see unwind.h). It mirrors what libgcc's
 * _Unwind_Backtrace does for glibc backtrace(), restricted to frames whose caller can be found
 * with RSP/RBP arithmetic and two stack loads; everything else is left to glibc. */
#include "unwind.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "tracer.h"

/* Per-thread: the stack bounds (asked once) and the counters. */
static VT_TLS struct {
    uint64_t lo, hi;
    int state; /* 0: not asked yet, 1: known, -1: unknown (always fall back) */
    struct vt_unwind_stats st;
} uw_tls;

void vt_unwind_get_stats(struct vt_unwind_stats *out) { *out = uw_tls.st; }

/* Bumped after every dlclose; cached rules carry the low bits of the value they were derived
 * under (a rule unused for exactly 2^24 dlcloses could come back stale: accepted). */
static _Atomic uint32_t uw_gen;

void vt_unwind_invalidate(void) { atomic_fetch_add_explicit(&uw_gen, 1, memory_order_release); }

#if defined(__x86_64__) && defined(__linux__)

/* A rule, packed in one word so that a reader sees all of it or none of it:
 *   bits 0-1   kind          bits 16-39  CFA offset (signed)
 *   bit  2     CFA from RBP  bits 40-63  generation
 *   bit  3     RBP saved     bits 4-15   RBP save slot from the CFA, in 8-byte units (signed)
 * The return address is always at CFA-8 and the caller's RSP is the CFA. */
enum { K_NONE = 0, K_STEP = 1, K_END = 2, K_UNSUP = 3 };
#define R_KIND(r) ((int)((r) & 3))
#define R_CFA_RBP(r) (((r) >> 2) & 1)
#define R_RBP_SAVED(r) (((r) >> 3) & 1)
#define R_RBP_OFF(r) (((int64_t)((r) << 48) >> 52) * 8)
#define R_CFA_OFF(r) ((int64_t)((r) << 24) >> 40)
#define R_GEN(r) ((uint32_t)((r) >> 40))
#define GEN_MASK 0xffffffu

#define SLOTS 4096 /* power of two */
#define PROBES 16
struct slot { _Atomic uint64_t key, rule; };
static struct slot cache[SLOTS];

static inline size_t slot_of(uint64_t key) { return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 52) & (SLOTS - 1); }

/* The slot holding key within its neighbourhood of PROBES slots, or NULL. With CLAIM, an empty
 * slot met first is claimed for key (NULL still when the neighbourhood is full: the rule is then
 * simply not cached). One probe loop for lookups and stores, so the two can never disagree on
 * where a key may live. A slot's key never changes once claimed. */
static inline struct slot *cache_slot(uint64_t key, int claim)
{
    size_t h = slot_of(key);
    for (int i = 0; i < PROBES; i++) {
        struct slot *s = &cache[(h + (size_t)i) & (SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == 0) {
            if (!claim) return NULL;
            uint64_t zero = 0;
            if (atomic_compare_exchange_strong_explicit(&s->key, &zero, key, memory_order_acq_rel,
                                                        memory_order_acquire))
                return s;
            k = zero; /* another thread claimed it first: maybe for this very key */
        }
        if (k == key) return s;
    }
    return NULL;
}

/* The cached rule for key, 0 when absent or stale. The rule word is stored whole, so a nonzero
 * rule always belongs to the key beside it. */
static inline uint64_t cache_get(uint64_t key, uint32_t gen)
{
    struct slot *s = cache_slot(key, 0);
    if (!s) return 0;
    uint64_t r = atomic_load_explicit(&s->rule, memory_order_acquire);
    return R_GEN(r) == gen ? r : 0;
}

static void cache_put(uint64_t key, uint64_t rule)
{
    struct slot *s = cache_slot(key, 1);
    if (s) atomic_store_explicit(&s->rule, rule, memory_order_release);
}

/* ---- reading .eh_frame_hdr / .eh_frame ------------------------------------------------------ */

struct cur { const uint8_t *p, *end; };

static int get_bytes(struct cur *c, void *out, size_t n)
{
    if ((size_t)(c->end - c->p) < n) return -1;
    memcpy(out, c->p, n);
    c->p += n;
    return 0;
}
static int get_u8(struct cur *c, uint8_t *v) { return get_bytes(c, v, 1); }
static int get_uleb(struct cur *c, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; c->p < c->end; shift += 7) {
        uint8_t b = *c->p++;
        if (shift < 64) r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) { *v = r; return 0; }
    }
    return -1;
}
static int get_sleb(struct cur *c, int64_t *v)
{
    uint64_t r = 0;
    unsigned shift = 0;
    while (c->p < c->end) {
        uint8_t b = *c->p++;
        if (shift < 64) r |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40)) r |= ~(uint64_t)0 << shift;
            *v = (int64_t)r;
            return 0;
        }
    }
    return -1;
}
static int skip_block(struct cur *c)
{
    uint64_t n = 0;
    if (get_uleb(c, &n) || n > (uint64_t)(c->end - c->p)) return -1;
    c->p += n;
    return 0;
}

/* A DW_EH_PE-encoded pointer (absolute, pc-relative or relative to `datarel` when nonzero);
 * the indirect bit is the caller's business. */
static int get_encoded(struct cur *c, uint8_t enc, uint64_t datarel, uint64_t *out)
{
    uint64_t base = (uint64_t)(uintptr_t)c->p, v = 0;
    union { uint16_t u16; int16_t s16; uint32_t u32; int32_t s32; uint64_t u64; } x = { .u64 = 0 };
    int64_t sv = 0;
    int rc;
    switch (enc & 0x0f) {
    case 0x00: case 0x04: case 0x0c: rc = get_bytes(c, &x.u64, 8); v = x.u64; break;
    case 0x01: rc = get_uleb(c, &v); break;
    case 0x02: rc = get_bytes(c, &x.u16, 2); v = x.u16; break;
    case 0x03: rc = get_bytes(c, &x.u32, 4); v = x.u32; break;
    case 0x09: rc = get_sleb(c, &sv); v = (uint64_t)sv; break;
    case 0x0a: rc = get_bytes(c, &x.s16, 2); v = (uint64_t)(int64_t)x.s16; break;
    case 0x0b: rc = get_bytes(c, &x.s32, 4); v = (uint64_t)(int64_t)x.s32; break;
    default: return -1;
    }
    if (rc) return -1;
    switch (enc & 0x70) {
    case 0x00: base = 0; break;
    case 0x10: break;
    case 0x30: if (!datarel) return -1; base = datarel; break;
    default: return -1;
    }
    *out = v + base;
    return 0;
}

/* The .eh_frame_hdr of the object holding pc, or NULL. */
#ifndef DLFO_STRUCT_HAS_EH_DBASE
struct find_arg { uint64_t pc; const uint8_t *hdr; };
static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find_arg *f = data;
    const uint8_t *eh = NULL;
    int inside = 0;
    for (int j = 0; j < info->dlpi_phnum; j++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[j];
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && f->pc >= a && f->pc - a < ph->p_memsz) inside = 1;
        else if (ph->p_type == PT_GNU_EH_FRAME) eh = (const uint8_t *)(uintptr_t)a;
    }
    if (!inside) return 0;
    f->hdr = eh;
    return 1;
}
#endif
static const uint8_t *find_eh_frame_hdr(uint64_t pc)
{
#ifdef DLFO_STRUCT_HAS_EH_DBASE
    /* glibc 2.35+: lock-free, and what libgcc itself then uses (and only that: an object one
     * finds and the other does not would make the answers differ) */
    struct dl_find_object dlfo;
    return _dl_find_object((void *)(uintptr_t)pc, &dlfo) == 0 ? dlfo.dlfo_eh_frame : NULL;
#else
    struct find_arg f = { pc, NULL };
    dl_iterate_phdr(find_cb, &f);
    return f.hdr;
#endif
}

/* One CFI record (CIE or FDE): its contents after the length, and the address of its id field. */
static int record(const uint8_t *at, struct cur *body, const uint8_t **id_field)
{
    struct cur c = { at, at + 12 };
    uint32_t len32 = 0;
    uint64_t len = 0;
    if (get_bytes(&c, &len32, 4)) return -1;
    len = len32;
    if (len32 == 0xffffffffu && get_bytes(&c, &len, 8)) return -1;
    if (len < 4 || len > (1u << 30)) return -1;
    *id_field = c.p;
    body->p = c.p;
    body->end = c.p + len;
    return 0;
}

/* The FDE covering pc through the binary-search table of .eh_frame_hdr; *fde_body starts after
 * the CIE pointer. Returns the CIE's address, or NULL. */
static const uint8_t *find_fde(const uint8_t *hdr, uint64_t pc, struct cur *fde_body)
{
    struct cur c = { hdr, hdr + 4 + 2 * 9 };
    uint8_t h[4] = { 0 };
    uint64_t ignored = 0, count = 0;
    if (get_bytes(&c, h, 4) || h[0] != 1 || h[3] != 0x3b /* datarel|sdata4 */) return NULL;
    if (h[1] == 0xff || get_encoded(&c, h[1], (uint64_t)(uintptr_t)hdr, &ignored)) return NULL;
    if (h[2] == 0xff || get_encoded(&c, h[2], (uint64_t)(uintptr_t)hdr, &count) || count == 0) return NULL;
    const uint8_t *table = c.p;
    uint64_t base = (uint64_t)(uintptr_t)hdr, lo = 0, hi = count;
    while (hi - lo > 1) { /* last entry whose initial location is <= pc */
        uint64_t mid = lo + (hi - lo) / 2;
        int32_t loc;
        memcpy(&loc, table + mid * 8, 4);
        if (base + (uint64_t)(int64_t)loc <= pc) lo = mid;
        else hi = mid;
    }
    int32_t fde_rel;
    memcpy(&fde_rel, table + lo * 8 + 4, 4);
    const uint8_t *fde = (const uint8_t *)(uintptr_t)(base + (uint64_t)(int64_t)fde_rel), *id;
    uint32_t cie_ptr = 0;
    if (record(fde, fde_body, &id) || get_bytes(fde_body, &cie_ptr, 4) || cie_ptr == 0) return NULL;
    return id - cie_ptr;
}

/* ---- the CFA program ------------------------------------------------------------------------ */

/* How a tracked register is recovered; as libgcc treats them (undefined and restore count as
 * "unchanged" except for the return address). */
enum { H_UNSAVED = 0, H_OFFSET, H_UNDEF, H_BAD };
enum { C_RBP, C_RSP, C_RA, NCOLS };
struct row {
    int64_t cfa_off;
    uint64_t cfa_reg;
    int cfa_expr;
    uint8_t how[NCOLS];
    int64_t off[NCOLS];
};
#define MAX_REMEMBER 8
struct prog {
    struct row r, saved[MAX_REMEMBER];
    int depth;
    uint64_t loc, code_align;
    int64_t data_align;
    uint8_t fde_enc;
};

static int column(uint64_t reg) { return reg == 6 ? C_RBP : reg == 7 ? C_RSP : reg == 16 ? C_RA : -1; }
static void set_how(struct prog *s, uint64_t reg, int how)
{
    int col = column(reg);
    if (col >= 0) s->r.how[col] = (uint8_t)how;
}
static int set_offset(struct prog *s, uint64_t reg, int64_t factored)
{
    if (factored > INT32_MAX || factored < INT32_MIN) return -1;
    int col = column(reg);
    if (col >= 0) {
        s->r.how[col] = H_OFFSET;
        s->r.off[col] = factored * s->data_align;
    }
    return 0;
}

/* Runs instructions while the row's address is <= target (libgcc: pc < return address). */
static int run_cfa(struct prog *s, struct cur c, uint64_t target)
{
    s->depth = 0; /* remember/restore do not cross from the CIE to the FDE (libgcc) */
    while (c.p < c.end && s->loc <= target) {
        uint8_t op = 0, b = 0;
        uint64_t reg = 0, u = 0;
        int64_t sv = 0;
        uint16_t u16 = 0;
        uint32_t u32 = 0;
        if (get_u8(&c, &op)) return -1;
        switch (op & 0xc0) {
        case 0x40: s->loc += (uint64_t)(op & 0x3f) * s->code_align; continue;
        case 0x80:
            if (get_uleb(&c, &u) || u > INT32_MAX || set_offset(s, op & 0x3f, (int64_t)u)) return -1;
            continue;
        case 0xc0: set_how(s, op & 0x3f, H_UNSAVED); continue;
        default: break;
        }
        switch (op) {
        case 0x00: break; /* nop */
        case 0x01: /* set_loc */
            if ((s->fde_enc & 0x80) || get_encoded(&c, s->fde_enc, 0, &s->loc)) return -1;
            break;
        case 0x02: if (get_u8(&c, &b)) return -1; s->loc += b * s->code_align; break;
        case 0x03: if (get_bytes(&c, &u16, 2)) return -1; s->loc += u16 * s->code_align; break;
        case 0x04: if (get_bytes(&c, &u32, 4)) return -1; s->loc += u32 * s->code_align; break;
        case 0x05: /* offset_extended */
            if (get_uleb(&c, &reg) || get_uleb(&c, &u) || u > INT32_MAX || set_offset(s, reg, (int64_t)u)) return -1;
            break;
        case 0x06: case 0x08: /* restore_extended, same_value */
            if (get_uleb(&c, &reg)) return -1;
            set_how(s, reg, H_UNSAVED);
            break;
        case 0x07: if (get_uleb(&c, &reg)) return -1; set_how(s, reg, H_UNDEF); break;
        case 0x09: case 0x14: /* register, val_offset */
            if (get_uleb(&c, &reg) || get_uleb(&c, &u)) return -1;
            set_how(s, reg, H_BAD);
            break;
        case 0x15: /* val_offset_sf */
            if (get_uleb(&c, &reg) || get_sleb(&c, &sv)) return -1;
            set_how(s, reg, H_BAD);
            break;
        case 0x0a: if (s->depth == MAX_REMEMBER) return -1; s->saved[s->depth++] = s->r; break;
        case 0x0b: if (s->depth == 0) return -1; s->r = s->saved[--s->depth]; break;
        case 0x0c: /* def_cfa */
            if (get_uleb(&c, &reg) || get_uleb(&c, &u) || u > INT32_MAX) return -1;
            s->r.cfa_reg = reg; s->r.cfa_off = (int64_t)u; s->r.cfa_expr = 0;
            break;
        case 0x0d: if (get_uleb(&c, &reg)) return -1; s->r.cfa_reg = reg; s->r.cfa_expr = 0; break;
        case 0x0e: if (get_uleb(&c, &u) || u > INT32_MAX) return -1; s->r.cfa_off = (int64_t)u; break;
        case 0x0f: if (skip_block(&c)) return -1; s->r.cfa_expr = 1; break;
        case 0x10: case 0x16: /* expression, val_expression */
            if (get_uleb(&c, &reg) || skip_block(&c)) return -1;
            set_how(s, reg, H_BAD);
            break;
        case 0x11: /* offset_extended_sf */
            if (get_uleb(&c, &reg) || get_sleb(&c, &sv) || set_offset(s, reg, sv)) return -1;
            break;
        case 0x12: /* def_cfa_sf */
            if (get_uleb(&c, &reg) || get_sleb(&c, &sv) || sv > INT32_MAX || sv < INT32_MIN) return -1;
            s->r.cfa_reg = reg; s->r.cfa_off = sv * s->data_align; s->r.cfa_expr = 0;
            break;
        case 0x13: /* def_cfa_offset_sf */
            if (get_sleb(&c, &sv) || sv > INT32_MAX || sv < INT32_MIN) return -1;
            s->r.cfa_off = sv * s->data_align;
            break;
        case 0x2e: if (get_uleb(&c, &u)) return -1; break; /* GNU_args_size: no effect on the walk */
        case 0x2f: /* GNU_negative_offset_extended */
            if (get_uleb(&c, &reg) || get_uleb(&c, &u) || u > INT32_MAX || set_offset(s, reg, -(int64_t)u)) return -1;
            break;
        default: return -1;
        }
    }
    return 0;
}

/* The CIE's fields and initial instructions; fde_enc/code_align/data_align into s. */
static int parse_cie(const uint8_t *cie, struct prog *s, struct cur *insns, int *has_z)
{
    struct cur c;
    const uint8_t *id;
    uint32_t cie_id = 1;
    uint8_t version = 0, ra8 = 0;
    uint64_t ra = 0;
    if (record(cie, &c, &id) || get_bytes(&c, &cie_id, 4) || cie_id != 0 || get_u8(&c, &version)) return -1;
    if (version != 1 && version != 3 && version != 4) return -1;
    const char *aug = (const char *)c.p;
    size_t alen = strnlen(aug, (size_t)(c.end - c.p));
    if (alen == (size_t)(c.end - c.p)) return -1;
    c.p += alen + 1;
    if (version == 4) {
        uint8_t asz = 0, ssz = 0;
        if (get_u8(&c, &asz) || get_u8(&c, &ssz) || asz != 8 || ssz != 0) return -1;
    }
    if (get_uleb(&c, &s->code_align) || get_sleb(&c, &s->data_align)) return -1;
    if (s->data_align > 256 || s->data_align < -256) return -1;
    if (version == 1) { if (get_u8(&c, &ra8)) return -1; ra = ra8; }
    else if (get_uleb(&c, &ra)) return -1;
    if (ra != 16) return -1;
    s->fde_enc = 0;
    *has_z = aug[0] == 'z';
    if (*has_z) {
        uint64_t n = 0;
        if (get_uleb(&c, &n) || n > (uint64_t)(c.end - c.p)) return -1;
        struct cur a = { c.p, c.p + n };
        c.p += n;
        for (const char *ch = aug + 1; *ch; ch++) {
            uint8_t enc = 0;
            uint64_t ignored = 0;
            if (*ch == 'R') { if (get_u8(&a, &s->fde_enc)) return -1; }
            else if (*ch == 'L') { if (get_u8(&a, &enc)) return -1; }
            else if (*ch == 'P') { if (get_u8(&a, &enc) || get_encoded(&a, enc & 0x7f, 0, &ignored)) return -1; }
            else return -1; /* 'S' (signal frame) and anything unknown */
        }
    } else if (aug[0]) {
        return -1;
    }
    *insns = c;
    return 0;
}

/* The rule for the frame whose (adjusted) pc is key, derived from the CFI. */
static uint64_t derive(uint64_t key)
{
    const uint8_t *hdr = find_eh_frame_hdr(key);
    if (!hdr) return K_UNSUP;
    struct cur fde, cie_insns;
    const uint8_t *cie = find_fde(hdr, key, &fde);
    struct prog s;
    int has_z;
    memset(&s, 0, sizeof s);
    if (!cie || parse_cie(cie, &s, &cie_insns, &has_z)) return K_UNSUP;
    uint64_t begin = 0, range = 0;
    if ((s.fde_enc & 0x80) || get_encoded(&fde, s.fde_enc, 0, &begin) ||
        get_encoded(&fde, s.fde_enc & 0x0f, 0, &range))
        return K_UNSUP;
    if (key < begin || key - begin >= range) return K_UNSUP; /* no FDE covers it */
    if (has_z && skip_block(&fde)) return K_UNSUP;
    s.loc = begin;
    if (run_cfa(&s, cie_insns, key) || run_cfa(&s, fde, key)) return K_UNSUP;

    const struct row *r = &s.r;
    if (r->how[C_RA] == H_UNDEF) return K_END; /* outermost frame: _start, clone */
    if (r->how[C_RA] != H_OFFSET || r->off[C_RA] != -8) return K_UNSUP;
    if (r->how[C_RSP] != H_UNSAVED && r->how[C_RSP] != H_UNDEF) return K_UNSUP;
    if (r->cfa_expr || (r->cfa_reg != 6 && r->cfa_reg != 7)) return K_UNSUP;
    if (r->cfa_off >= (1 << 23) || r->cfa_off < -(1 << 23)) return K_UNSUP;
    uint64_t rule = K_STEP | (uint64_t)(r->cfa_reg == 6) << 2 | ((uint64_t)r->cfa_off & 0xffffff) << 16;
    if (r->how[C_RBP] == H_OFFSET) {
        int64_t o = r->off[C_RBP];
        if (o % 8 || o / 8 >= (1 << 11) || o / 8 < -(1 << 11)) return K_UNSUP;
        rule |= 1u << 3 | ((uint64_t)(o / 8) & 0xfff) << 4;
    } else if (r->how[C_RBP] != H_UNSAVED && r->how[C_RBP] != H_UNDEF) {
        return K_UNSUP;
    }
    return rule;
}

/* ---- the walk ------------------------------------------------------------------------------- */

static int stack_bounds(uint64_t *lo, uint64_t *hi)
{
    if (__builtin_expect(uw_tls.state == 0, 0)) {
        uw_tls.state = -1;
        pthread_attr_t attr;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            void *addr;
            size_t size;
            if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size) {
                uw_tls.lo = (uint64_t)(uintptr_t)addr;
                uw_tls.hi = uw_tls.lo + size;
                uw_tls.state = 1;
            }
            pthread_attr_destroy(&attr);
        }
    }
    *lo = uw_tls.lo;
    *hi = uw_tls.hi;
    return uw_tls.state > 0 ? 0 : -1;
}

static uint64_t rule_for(uint64_t key, uint32_t gen)
{
    uint64_t r = cache_get(key, gen);
    if (__builtin_expect(r != 0, 1)) {
        uw_tls.st.hits++;
        return r;
    }
    uw_tls.st.misses++;
    r = derive(key) | (uint64_t)gen << 40;
    cache_put(key, r);
    return r;
}

/* The last walks of this thread, kept with every stack word each one read: the walk is a function
 * of its start (pc, fixed; sp; bp where a rule used it before reloading it), the rules (fixed
 * while uw_gen is) and those words, so when they all read the same again its frames are the
 * same, found with a compare per word instead of a rule lookup and arithmetic per frame. A loop
 * calling CUDA from one place walks the same stack every time. */
#define MEMO_WAYS 2
#define MEMO_FRAMES 40
#define MEMO_READS 64
struct memo {
    uint64_t serial;   /* this thread's fill number (vt_unwind_serial) */
    uint64_t sp, bp;
    uint32_t gen;
    int max, n, nreads, bp_used;
    struct { uint64_t at, val; } rd[MEMO_READS]; /* side by side: one pointer walks the compare */
    uint64_t frames[MEMO_FRAMES];
};
static VT_TLS struct { struct memo way[MEMO_WAYS]; unsigned next; int busy; uint64_t serials, last; } uw_memo;
typedef __typeof__(((struct memo *)0)->rd[0]) memo_read;

/* Nonzero when a word of reads [R, END) reads differently now: differences or-ed, no branch per word. */
__attribute__((no_sanitize_address)) static inline uint64_t reads_differ(const memo_read *r, const memo_read *end)
{
    uint64_t diff = 0;
    for (; r < end; r++) diff |= *(const uint64_t *)(uintptr_t)r->at ^ r->val;
    return diff;
}

uint64_t vt_unwind_serial(void) { return uw_memo.last; }

__attribute__((no_sanitize_address)) static int memo_find(uint64_t sp, uint64_t bp, uint32_t gen, uint64_t *frames, int max)
{
    /* the way that answered last first: a loop walks its one stack again */
    for (unsigned j = 0, first = uw_memo.next + MEMO_WAYS - 1; j < MEMO_WAYS; j++) {
        unsigned w = (first + j) % MEMO_WAYS;
        const struct memo *m = &uw_memo.way[w];
        if (m->sp != sp || m->gen != gen || m->max != max || m->n <= 0 || (m->bp_used && m->bp != bp)) continue;
        if (reads_differ(m->rd, m->rd + m->nreads)) continue; /* every word read again */
        memcpy(frames, m->frames, (size_t)m->n * sizeof frames[0]);
        uw_tls.st.memo_hits++;
        uw_memo.next = w + 1; /* the other way is the one to fill next */
        uw_memo.last = m->serial;
        return m->n;
    }
    return -1;
}

static struct memo *memo_of(uint64_t serial)
{
    for (int w = 0; w < MEMO_WAYS; w++)
        if (uw_memo.way[w].serial == serial && uw_memo.way[w].n > 0) return &uw_memo.way[w];
    return NULL;
}

int vt_unwind_checkable(uint64_t serial, uint64_t above, int (*is_ours)(uint64_t))
{
    const struct memo *m = serial && !uw_memo.busy ? memo_of(serial) : NULL;
    if (!m || m->bp_used || m->sp >= above) return 0;
    for (int i = 0; i < m->nreads && m->rd[i].at < above; i++)
        if (!is_ours(m->rd[i].val)) return 0;
    return 1;
}

__attribute__((no_sanitize_address)) int vt_unwind_same_above(uint64_t serial, uint64_t above)
{
    /* a walk under way (this is a signal handler's call) may be refilling the entry */
    const struct memo *m = serial && !uw_memo.busy ? memo_of(serial) : NULL;
    if (!m || m->gen != (atomic_load_explicit(&uw_gen, memory_order_acquire) & GEN_MASK)) return 0;
    const memo_read *r = m->rd, *end = r + m->nreads;
    while (r < end && r->at < above) r++; /* the walk reads upward: the caller's own calls first */
    if (reads_differ(r, end)) return 0;
    uw_memo.next = (unsigned)(m - uw_memo.way) + 1; /* answered: the other way is the one to fill */
    return 1;
}

/* The walk itself from (pc, sp, bp), each stack word it reads recorded in M (NULL: none; too
 * many reads give M->nreads -1: not to be kept). */
__attribute__((no_sanitize_address)) static int walk_once(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t lo, uint64_t hi,
                                                          uint32_t gen, uint64_t *frames, int max, struct memo *m)
{
    int bp_loaded = 0, bp_kept = 0;
    uint64_t bp_at = 0; /* where bp was last loaded from: recorded once a rule uses that value */
#define MEMO_READ(addr, v) do { if (m) { if (m->nreads == MEMO_READS) { m->nreads = -1; m = NULL; } else { m->rd[m->nreads].at = (addr); m->rd[m->nreads++].val = (v); } } } while (0)
    uint64_t key = pc, prev_cfa = 0;
    int n = 0;
    for (;;) {
        uint64_t r = rule_for(key, gen);
        int kind = R_KIND(r);
        /* libgcc reads the last frame's CFI too before it stores that frame: a frame it could not
         * describe would not be stored. */
        if (kind == K_END) break;
        if (kind != K_STEP) return -1;
        if (n == max) break;
        if (R_CFA_RBP(r) && m) { /* the walk depends on this bp: the register's, or a stack word's */
            if (!bp_loaded) m->bp_used = 1;
            else if (!bp_kept) { MEMO_READ(bp_at, bp); bp_kept = 1; }
        }
        uint64_t cfa = (R_CFA_RBP(r) ? bp : sp) + (uint64_t)R_CFA_OFF(r);
        if (cfa < lo + 8 || cfa > hi || (cfa & 7)) return -1;
        uint64_t ra = *(const uint64_t *)(uintptr_t)(cfa - 8);
        MEMO_READ(cfa - 8, ra);
        if (R_RBP_SAVED(r)) {
            uint64_t at = cfa + (uint64_t)R_RBP_OFF(r);
            if (at < lo || at > hi - 8) return -1;
            bp = *(const uint64_t *)(uintptr_t)at;
            bp_at = at;
            bp_loaded = 1;
            bp_kept = 0;
        }
        sp = cfa;
        if (ra == 0) { /* libgcc stores the null and glibc drops it again */
            if (n == 0) return -1;
            break;
        }
        /* glibc stops where the walk makes no progress; leave that rare case to it */
        if (n > 0 && ra == frames[n - 1] && cfa == prev_cfa) return -1;
        frames[n++] = ra;
        prev_cfa = cfa;
        key = ra - 1; /* a call's return address may be the first byte of the next function */
    }
#undef MEMO_READ
    return n;
}

/* Stack slots lie in [lo, hi): from the walker's own stack pointer to the top of the thread's
 * stack, so every load is from memory that is mapped and belongs to this thread's live frames.
 * Running on another stack (sigaltstack, coroutines) gives -1. */
__attribute__((no_sanitize_address)) static int walk(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t *frames,
                                                     int max)
{
    uint64_t lo, hi;
    if (max <= 0) return 0;
    if (stack_bounds(&lo, &hi) || sp < lo || sp >= hi) return -1;
    lo = sp;
    const uint32_t gen = atomic_load_explicit(&uw_gen, memory_order_acquire) & GEN_MASK;
    /* A walk interrupted by a signal handler's walk on this thread leaves the memo to the outer one. */
    uw_memo.last = 0;
    if (uw_memo.busy) return walk_once(pc, sp, bp, lo, hi, gen, frames, max, NULL);
    uw_memo.busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int n = memo_find(sp, bp, gen, frames, max);
    if (n >= 0) goto out;
    /* this walk, recorded into the least recently filled way */
    struct memo *m = &uw_memo.way[uw_memo.next % MEMO_WAYS];
    m->n = 0;
    m->sp = sp;
    m->bp = bp;
    m->gen = gen;
    m->max = max;
    m->nreads = 0;
    m->bp_used = 0;
    n = walk_once(pc, sp, bp, lo, hi, gen, frames, max, m);
    if (n > 0 && n <= MEMO_FRAMES && m->nreads >= 0) {
        memcpy(m->frames, frames, (size_t)n * sizeof frames[0]);
        m->n = n;
        m->serial = uw_memo.last = ++uw_memo.serials;
        uw_memo.next++;
    }
out:
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uw_memo.busy = 0;
    return n;
}

/* noinline: frames[0] is then the return address into our caller, as backtrace()'s is. The
 * registers are read at label 1, whose CFI row describes this very frame. */
__attribute__((noinline, no_sanitize_address)) int vt_unwind(uint64_t *frames, int max)
{
    uint64_t bp, sp, pc;
    __asm__ volatile("1:\n\t"
                     "movq %%rbp, %0\n\t"
                     "movq %%rsp, %1\n\t"
                     "leaq 1b(%%rip), %2"
                     : "=&r"(bp), "=&r"(sp), "=&r"(pc));
    int n = walk(pc, sp, bp, frames, max);
    /* not a tail call: walk must not reuse this frame, whose saved registers it reads */
    __asm__ volatile("" : "+r"(n) : : "memory");
    if (n < 0) uw_tls.st.fallbacks++;
    return n;
}

#else /* not x86-64 Linux: glibc does all the work */

int vt_unwind(uint64_t *frames, int max)
{
    (void)frames;
    (void)max;
    uw_tls.st.fallbacks++;
    return -1;
}

/* no walk, no memo: nothing is ever known again */
int vt_unwind_same_above(uint64_t serial, uint64_t above) { (void)serial; (void)above; return 0; }
int vt_unwind_checkable(uint64_t serial, uint64_t above, int (*is_ours)(uint64_t))
{
    (void)serial; (void)above; (void)is_ours;
    return 0;
}

#endif
