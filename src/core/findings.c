/* findings.c - the `finding` record: a bad pointer handed to a kernel, a copy or a free, with
 * its message (also on stderr for the first 20), the per-kind counts for the exit summary, and
 * --check=abort, and the folding of repeated launch findings into one with a count. Called by
 * events.c (copies, frees) and launch_check.c (launches). */
#include "findings.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "emit.h"
#include "pystack.h"
#include "registry.h"
#include "resolve.h"
#include "sink.h"

static _Atomic uint64_t finding_counts[VT_F_COUNT];
static _Atomic uint64_t finding_errors; /* of them, errors (the rest are warnings) */

static const char *const kind_names[VT_F_COUNT] = {
#define VT_X(id) [VT_F_##id] = VT_FINDN_##id,
    VT_TRACE_FINDINGS(VT_X)
#undef VT_X
};
static _Atomic uint64_t findings_printed; /* distinct findings said on stderr (the first 20) */

/* Repeats of a launch finding. A kernel launched 20000 times with the same host pointer (legal
 * on HMM/ATS systems, so a warning) would write 20000 findings and a trace five times larger:
 * instead one slot per (kernel, argument, offset, device, kind, severity, class) counts them. The first
 * occurrence writes the whole finding with "id" (the slot) and "count":1; repeats write a short
 * line only at counts 2, 4, 8, ... (a crash loses less than half the count), and the exit writes
 * the final count (vt_findings_flush). Lock-free: a slot is claimed with one CAS, counted with
 * fetch-adds. When the table is full a finding is written whole, as if it had no repeats. */
#define REPEAT_SLOTS 1024
#define REPEAT_PROBES 32
struct repeat {
    _Atomic uint64_t key;               /* 0: free */
    _Atomic uint64_t count, first_t, last_t, written; /* written: the highest count in the trace */
    _Atomic int ready;                  /* the fields below are set (for the exit flush) */
    int kind, error, note, arg, dev;
    uint64_t k, offset;
};
static struct repeat repeats[REPEAT_SLOTS];

static const char *severity_name(int error, int note)
{
    return note ? VT_SEVN_NOTE : error ? VT_SEVN_ERROR : VT_SEVN_WARNING;
}

static uint64_t mix64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 33;
    return h;
}

static uint64_t repeat_key(const struct vt_finding *f)
{
    uint64_t h = mix64(mix64(mix64(mix64(0, f->k->id), (uint64_t)(uint32_t)f->arg), f->offset), (uint64_t)(uint32_t)f->dev);
    h = mix64(h, (uint64_t)f->kind << 2 | (uint64_t)(f->note != 0) << 1 | (uint64_t)(f->error != 0));
    /* the class: where a host value lives; for the others, the kind of memory named */
    if (f->cls) for (const char *c = f->cls; *c; c++) h = mix64(h, (unsigned char)*c);
    else h = mix64(h, 0x100u + (unsigned)f->alloc_mem);
    return h ? h : 1;
}

/* KEY's slot (F's, whose fields a new slot takes; NULL: none), claimed if new: linear probing from
 * the home slot KEY % REPEAT_SLOTS, at most REPEAT_PROBES slots; NULL when they are all taken. */
static struct repeat *repeat_claim(uint64_t key, const struct vt_finding *f)
{
    for (unsigned i = 0; i < REPEAT_PROBES; i++) {
        struct repeat *r = &repeats[(key + i) % REPEAT_SLOTS];
        uint64_t cur = atomic_load_explicit(&r->key, memory_order_acquire);
        if (cur == key) return r;
        if (cur) continue;
        if (atomic_compare_exchange_strong(&r->key, &cur, key)) {
            if (f) {
                r->kind = f->kind; r->error = f->error; r->note = f->note; r->arg = f->arg; r->dev = f->dev;
                r->k = f->k->id; r->offset = f->offset;
            }
            atomic_store_explicit(&r->ready, 1, memory_order_release);
            return r;
        }
        if (cur == key) return r;
    }
    return NULL;
}
static struct repeat *repeat_slot(const struct vt_finding *f) { return repeat_claim(repeat_key(f), f); }

long vt_findings_repeat_id(uint64_t key)
{
    struct repeat *r = repeat_claim(key ? key : 1, NULL);
    return r ? (long)(r - repeats) + 1 : 0;
}

static void raise_written(struct repeat *r, uint64_t n)
{
    uint64_t w = atomic_load(&r->written);
    while (w < n && !atomic_compare_exchange_weak(&r->written, &w, n)) {}
}

/* The short line of a repeat: enough to find the first (by id) and say how often since when. */
static void write_repeat(struct repeat *r, uint64_t n, uint64_t t)
{
    char buf[512];
    vt_line l;
    vt_line_init(&l, buf, sizeof buf - 2);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_FINDING "\"");
    vt_put_key(&l, "t"); vt_put_u64(&l, t);
    vt_put_key(&l, "kind"); vt_put_str(&l, kind_names[r->kind]);
    vt_put_key(&l, "severity"); vt_put_str(&l, severity_name(r->error, r->note));
    vt_put_key(&l, "dev"); vt_put_i64(&l, r->dev);
    vt_put_key(&l, "k"); vt_put_u64(&l, r->k);
    vt_put_key(&l, "arg"); vt_put_i64(&l, r->arg);
    vt_put_key(&l, "offset"); vt_put_u64(&l, r->offset);
    vt_put_key(&l, "id"); vt_put_u64(&l, (uint64_t)(r - repeats) + 1);
    vt_put_key(&l, "count"); vt_put_u64(&l, n);
    uint64_t first = atomic_load(&r->first_t);
    if (first) { vt_put_key(&l, "first"); vt_put_u64(&l, first); }
    vt_fmt_emit(&l);
    raise_written(r, n);
}

void vt_findings_flush(void)
{
    if (!vt_trace_ready()) return;
    for (unsigned i = 0; i < REPEAT_SLOTS; i++) {
        struct repeat *r = &repeats[i];
        if (!atomic_load_explicit(&r->ready, memory_order_acquire)) continue;
        uint64_t n = atomic_load(&r->count);
        if (n > atomic_load(&r->written)) write_repeat(r, n, atomic_load(&r->last_t));
    }
}

uint64_t vt_findings_count(int kind) { return kind >= 0 && kind < VT_F_COUNT ? atomic_load(&finding_counts[kind]) : 0; }
uint64_t vt_findings_errors(void) { return atomic_load(&finding_errors); }

void vt_findings_reset_after_fork(void)
{
    for (int i = 0; i < VT_F_COUNT; i++) atomic_store(&finding_counts[i], 0);
    atomic_store(&finding_errors, 0);
    atomic_store(&findings_printed, 0);
    memset(repeats, 0, sizeof repeats); /* only this thread runs in the child */
}

static void short_name(const char *mangled, char *out, size_t cap)
{
    char *d = vt_cxa_demangle(mangled);
    const char *s = d ? d : mangled;
    size_t n = strlen(s);
    int depth = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '<') depth++;
        else if (s[i] == '>') depth--;
        else if (s[i] == '(' && depth == 0 && i > 0) { n = i; break; }
    }
    /* A template function's demangled name starts with its return type ("void k<float, 4>"). */
    size_t start = 0;
    depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<' || s[i] == '(') depth++;
        else if (s[i] == '>' || s[i] == ')') depth--;
        else if (s[i] == ' ' && depth == 0) start = i + 1;
    }
    s += start;
    n -= start;
    if (n >= cap) n = cap - 1;
    memcpy(out, s, n);
    out[n] = '\0';
    free(d);
}

VT_TLS unsigned long vt_findings_made;

void vt_ev_finding(const struct vt_finding *f)
{
    VT_SAVE_ERRNO;
    vt_findings_made++;
    if (!f->note) atomic_fetch_add(&finding_counts[f->kind], 1);
    if (!f->note && f->error) atomic_fetch_add(&finding_errors, 1);
    struct repeat *rep = f->k ? repeat_slot(f) : NULL;
    uint64_t now = 0;
    if (rep) {
        uint64_t seen = atomic_fetch_add(&rep->count, 1) + 1;
        now = vt_now();
        atomic_store(&rep->last_t, now);
        if (seen > 1) { /* said before: a short line at each power of two */
            if (!(seen & (seen - 1)) && vt_trace_ready()) write_repeat(rep, seen, now);
            VT_RESTORE_ERRNO;
            return;
        }
        atomic_store(&rep->first_t, now);
    }
    char kname[256] = "", msg[768];
    if (f->k) short_name(f->k->name, kname, sizeof kname);
    char where[320] = "";
    if (f->k) {
        if (f->offset) snprintf(where, sizeof where, " passed to kernel %s, argument %d (byte %llu of a by-value struct)",
                                kname, f->arg, (unsigned long long)f->offset);
        else snprintf(where, sizeof where, " passed to kernel %s, argument %d", kname, f->arg);
    }
    switch (f->kind) {
    case VT_F_HOST_POINTER: {
        const char *c = f->cls ? f->cls : "host", *m = f->mapping ? f->mapping : "";
        char what[224];
        if (!strcmp(c, "heap")) snprintf(what, sizeof what, "heap memory (malloc/new)");
        else if (!strcmp(c, "stack")) snprintf(what, sizeof what, "stack memory (a local variable)");
        else if (!strcmp(c, "file")) snprintf(what, sizeof what, "memory mapped from %s", m);
        else snprintf(what, sizeof what, "anonymous mmap memory%s%s", m[0] ? " " : "", m);
        snprintf(msg, sizeof msg, "host pointer%s: 0x%llx is %s, not device, pinned or managed memory", where,
                 (unsigned long long)f->value, what);
        break;
    }
    case VT_F_USE_AFTER_FREE: {
        const char *what = f->alloc_mem == VT_MEM_PINNED ? "pinned host" : f->alloc_mem == VT_MEM_MANAGED ? "managed" : "device";
        /* a copy's or memset's side (why: its role) */
        if (!f->k && f->api && f->why)
            snprintf(where, sizeof where, strcmp(f->why, "memset") ? " passed to %s as its %s" : " passed to %s", f->api, f->why);
        snprintf(msg, sizeof msg, "freed %s pointer%s: 0x%llx is inside a %s allocation of %llu bytes at 0x%llx that was freed",
                 what, where, (unsigned long long)f->value, what, (unsigned long long)f->alloc_size, (unsigned long long)f->alloc_base);
        break;
    }
    case VT_F_WRONG_DEVICE:
        snprintf(msg, sizeof msg, "device %d memory%s on device %d: 0x%llx is inside an allocation of %llu bytes at 0x%llx on device %d, "
                 "and device %d has no peer access to it (cudaDeviceEnablePeerAccess)", f->alloc_dev, where, f->dev,
                 (unsigned long long)f->value, (unsigned long long)f->alloc_size, (unsigned long long)f->alloc_base, f->alloc_dev, f->dev);
        break;
    case VT_F_OOB_POINTER:
        snprintf(msg, sizeof msg, "out-of-bounds device pointer%s: 0x%llx is outside every allocation (nearest: %llu bytes at 0x%llx)",
                 where, (unsigned long long)f->value, (unsigned long long)f->alloc_size, (unsigned long long)f->alloc_base);
        break;
    case VT_F_OOB_COPY:
        snprintf(msg, sizeof msg, "%s at 0x%llx: %s (allocation of %llu bytes at 0x%llx)", f->api, (unsigned long long)f->value,
                 f->why ? f->why : "out of bounds", (unsigned long long)f->alloc_size, (unsigned long long)f->alloc_base);
        break;
    case VT_F_DIRECTION:
        snprintf(msg, sizeof msg, "%s: %s", f->api, f->why ? f->why : "direction contradicts the pointers");
        break;
    case VT_F_DOUBLE_FREE:
        snprintf(msg, sizeof msg, "%s(0x%llx): double free of an allocation of %llu bytes", f->api,
                 (unsigned long long)f->value, (unsigned long long)f->alloc_size);
        break;
    case VT_F_MISMATCHED_FREE:
        snprintf(msg, sizeof msg, "%s(0x%llx): %s memory (%llu bytes) is freed with %s, not %s", f->api, (unsigned long long)f->value,
                 vt_mem_name(f->alloc_mem), (unsigned long long)f->alloc_size, f->why, f->api);
        break;
    default:
        if (f->has_alloc)
            snprintf(msg, sizeof msg, "%s(0x%llx): not the start of an allocation: %llu bytes into an allocation of %llu bytes at 0x%llx",
                     f->api, (unsigned long long)f->value, (unsigned long long)(f->value - f->alloc_base),
                     (unsigned long long)f->alloc_size, (unsigned long long)f->alloc_base);
        else
            snprintf(msg, sizeof msg, "%s(0x%llx): pointer was never allocated", f->api, (unsigned long long)f->value);
        break;
    }
    if (f->why && f->kind != VT_F_OOB_COPY && f->kind != VT_F_DIRECTION && f->kind != VT_F_MISMATCHED_FREE &&
        !(f->kind == VT_F_USE_AFTER_FREE && !f->k)) { /* a copy side's role is in the message already */
        size_t n = strlen(msg);
        snprintf(msg + n, sizeof msg - n, " (%s)", f->why);
    }
    if (vt_trace_ready()) {
        char buf[LINE_MAX_BYTES * 2];
        vt_line l;
        vt_line_init(&l, buf, sizeof buf - 2);
        VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_FINDING "\"");
        vt_put_key(&l, "t"); vt_put_u64(&l, rep ? now : vt_now());
        vt_put_key(&l, "tid"); vt_put_i64(&l, vt_gettid());
        vt_put_key(&l, "kind"); vt_put_str(&l, kind_names[f->kind]);
        vt_put_key(&l, "severity"); vt_put_str(&l, severity_name(f->error, f->note));
        vt_put_key(&l, "api"); vt_put_str(&l, f->api);
        vt_put_key(&l, "dev"); vt_put_i64(&l, f->k ? f->dev : vt_ts.cur_dev);
        if (f->k) {
            vt_put_key(&l, "k"); vt_put_u64(&l, f->k->id);
            vt_put_key(&l, "arg"); vt_put_i64(&l, f->arg);
            vt_put_key(&l, "offset"); vt_put_u64(&l, f->offset);
        }
        vt_put_key(&l, "value"); vt_put_hex(&l, f->value);
        if (f->cls) { vt_put_key(&l, "class"); vt_put_str(&l, f->cls); }
        if (f->mapping && f->mapping[0]) { vt_put_key(&l, "mapping"); vt_put_str(&l, f->mapping); }
        if (f->has_alloc) {
            vt_put_key(&l, "alloc"); VT_PUT_LIT(&l, "{\"addr\":");
            vt_put_hex(&l, f->alloc_base);
            VT_PUT_LIT(&l, ",\"size\":");
            vt_put_u64(&l, f->alloc_size);
            VT_PUT_LIT(&l, ",\"mem\":");
            vt_put_str(&l, vt_mem_name(f->alloc_mem));
            VT_PUT_LIT(&l, "}");
        }
        if (rep) {
            vt_put_key(&l, "id"); vt_put_u64(&l, (uint64_t)(rep - repeats) + 1);
            vt_put_key(&l, "count"); vt_put_u64(&l, 1);
        }
        vt_fmt_bt(&l);
        vt_put_key(&l, "msg"); vt_put_str(&l, msg);
        vt_fmt_emit(&l);
        if (rep) raise_written(rep, 1);
    }
    if (f->note) { /* for the report alone */
        VT_RESTORE_ERRNO;
        return;
    }
    if (!vt_cfg.quiet && atomic_fetch_add(&findings_printed, 1) < 20)
        fprintf(stderr, "vramtrace: %s: %s\n", f->error ? VT_SEVN_ERROR : VT_SEVN_WARNING, msg);
    if (f->error && vt_cfg.check == VT_CHECK_ABORT) {
        fprintf(stderr, "vramtrace: stopping at the first error (--check=abort); trace: %s\n", vt_trace_path());
        abort();
    }
    VT_RESTORE_ERRNO;
}
