/* launch_check.c - kernel launches: the `kernel` record, the per-argument pointer check, findings. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "check.h"
#include "events_fmt.h"
#include "registry.h"
#include "resolve.h"
#include "tracer.h"
#include "journal.h"
#include "records.h"

static void emit_kernel_record(vt_kernel *k)
{
    size_t cap = strlen(k->name) * 6 + 256 + (size_t)k->nparams * 24;
    char *buf = malloc(cap);
    if (!buf) return;
    vt_line l;
    vt_line_init(&l, buf, cap - 2);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_KERNEL "\"");
    vt_put_key(&l, "id"); vt_put_u64(&l, k->id);
    vt_put_key(&l, "name"); vt_put_str(&l, k->name);
    vt_put_key(&l, "params"); VT_PUT_LIT(&l, "[");
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (i) VT_PUT_LIT(&l, ",");
        VT_PUT_LIT(&l, "[");
        vt_put_u64(&l, k->params[i].offset);
        VT_PUT_LIT(&l, ",");
        vt_put_u64(&l, k->params[i].size);
        VT_PUT_LIT(&l, "]");
    }
    VT_PUT_LIT(&l, "]");
    vt_put_key(&l, "layout"); vt_put_str(&l, vt_layout_source_name(k->source));
    vt_fmt_emit(&l);
    free(buf);
}

/* "my_kernel(float*, int)" -> "my_kernel"; keeps template arguments. Writes into out. */
static void short_name(const char *mangled, char *out, size_t cap)
{
    typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
    static demangle_fn dem;
    static int looked;
    if (!looked) { dem = (demangle_fn)vt_real_dlsym(RTLD_DEFAULT, "__cxa_demangle"); looked = 1; }
    int status = -1;
    char *d = dem && mangled[0] == '_' && mangled[1] == 'Z' ? dem(mangled, NULL, NULL, &status) : NULL;
    const char *s = d && status == 0 ? d : mangled;
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

static const char *const kind_names[VT_F_COUNT] = {
#define VT_X(id) [VT_F_##id] = VT_FINDN_##id,
    VT_TRACE_FINDINGS(VT_X)
#undef VT_X
};

void vt_ev_finding(const struct vt_finding *f)
{
    VT_SAVE_ERRNO;
    atomic_fetch_add(&vt_finding_counts[f->kind], 1);
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
    case VT_F_USE_AFTER_FREE:
        snprintf(msg, sizeof msg, "freed device pointer%s: 0x%llx is inside an allocation of %llu bytes at 0x%llx that was freed",
                 where, (unsigned long long)f->value, (unsigned long long)f->alloc_size, (unsigned long long)f->alloc_base);
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
    default:
        snprintf(msg, sizeof msg, "%s(0x%llx): pointer was never allocated", f->api, (unsigned long long)f->value);
        break;
    }
    if (f->why && f->kind != VT_F_OOB_COPY && f->kind != VT_F_DIRECTION) {
        size_t n = strlen(msg);
        snprintf(msg + n, sizeof msg - n, " (%s)", f->why);
    }
    if (vt_trace_ready()) {
        char buf[LINE_MAX_BYTES * 2];
        vt_line l;
        vt_line_init(&l, buf, sizeof buf - 2);
        VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_FINDING "\"");
        vt_put_key(&l, "t"); vt_put_u64(&l, vt_now());
        vt_put_key(&l, "tid"); vt_put_i64(&l, vt_gettid());
        vt_put_key(&l, "kind"); vt_put_str(&l, kind_names[f->kind]);
        vt_put_key(&l, "severity"); vt_put_str(&l, f->error ? VT_SEVN_ERROR : VT_SEVN_WARNING);
        vt_put_key(&l, "api"); vt_put_str(&l, f->api);
        vt_put_key(&l, "dev"); vt_put_i64(&l, vt_ts.cur_dev);
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
            VT_PUT_LIT(&l, "}");
        }
        vt_fmt_bt(&l);
        vt_put_key(&l, "msg"); vt_put_str(&l, msg);
        vt_fmt_emit(&l);
    }
    uint64_t total = 0;
    for (int i = 0; i < VT_F_COUNT; i++) total += atomic_load(&vt_finding_counts[i]);
    if (!vt_cfg.quiet && total <= 20)
        fprintf(stderr, "vramtrace: %s: %s\n", f->error ? VT_SEVN_ERROR : VT_SEVN_WARNING, msg);
    if (f->error && vt_cfg.check == VT_CHECK_ABORT) {
        fprintf(stderr, "vramtrace: stopping at the first error (--check=abort); trace: %s\n", vt_trace_path());
        abort();
    }
    VT_RESTORE_ERRNO;
}

static void check_word(const struct vt_call *c, vt_kernel *k, uint32_t arg, uint64_t offset, uint64_t v)
{
    vt_alloc_info a;
    if (vt_looks_scalar(v) || vt_live_lookup_cached(v, &a) == 0) return; /* any live CUDA range */
    vt_ptr_info info;
    vt_classify(v, &info);
    struct vt_finding f = { .api = c->api, .k = k, .arg = (int)arg, .offset = offset, .value = v };
    switch (info.cls) {
    case VT_PTR_HOST:
        f.kind = VT_F_HOST_POINTER;
        f.cls = info.host_cls;
        f.mapping = info.mapping;
        f.error = !vt_device_pageable_access(c->dev);
        if (!f.error) f.why = "the device reports pageable memory access (HMM/ATS), so the kernel can reach it, "
                              "but every access crosses the interconnect";
        break;
    case VT_PTR_FREED:
        f.kind = VT_F_USE_AFTER_FREE;
        f.error = 1;
        break;
    case VT_PTR_NEAR_DEVICE:
        f.kind = VT_F_OOB_POINTER;
        f.error = 0;
        f.why = v == info.alloc.base + info.alloc.size ? "just past the end of an allocation" : "between allocations";
        break;
    default:
        return;
    }
    if (info.cls == VT_PTR_FREED || info.cls == VT_PTR_NEAR_DEVICE) {
        f.has_alloc = 1;
        f.alloc_base = info.alloc.base;
        f.alloc_size = info.alloc.size;
    }
    vt_ev_finding(&f);
}

/* The general walk over the layout: the packed-buffer launch (and a kernel whose word list could
 * not be allocated). */
static void check_args(const struct vt_call *c, vt_kernel *k, void **args, const unsigned char *buf, uint64_t buf_len)
{
    for (uint32_t i = 0; i < k->nparams; i++) {
        uint32_t off = k->params[i].offset, size = k->params[i].size;
        if (size < 8) continue;
        const unsigned char *p;
        if (args) p = args[i];
        else if (buf && (uint64_t)off + size <= buf_len) p = buf + off;
        else continue;
        if (!p) continue;
        /* 8-byte words at 8-aligned offsets of the argument buffer: pointers, and pointers
         * inside by-value structs, are always there. */
        for (uint32_t w = (8 - off % 8) % 8; w + 8 <= size; w += 8) {
            uint64_t v;
            memcpy(&v, p + w, sizeof v);
            check_word(c, k, i, w, v);
        }
    }
}

/* The runtime-style launch: the same words, from the list planned with the layout. Most are
 * scalars or pointers the per-thread cache knows as live, tested inline; only the rest take
 * check_word. */
static void check_arg_words(const struct vt_call *c, vt_kernel *k, void **args)
{
    const struct vt_lc_ent *lc = vt_lcache;
    const vt_arg_word *w = k->words, *end = w + k->nwords;
    for (; w < end; w++) {
        const unsigned char *p = args[w->param];
        if (!p) continue;
        uint64_t v;
        memcpy(&v, p + w->off, sizeof v);
        if (vt_looks_scalar(v) || vt_lcache_hit(lc, v)) continue;
        check_word(c, k, w->param, w->off, v);
    }
}

int vt_launch_begin(const struct vt_call *c, vt_kernel *k, void **args, const void *buf, uint64_t buf_len)
{
    if (!vt_trace_ready() || !k) return 0;
    if (!atomic_load_explicit(&k->emitted, memory_order_acquire) && !atomic_exchange(&k->emitted, 1))
        emit_kernel_record(k);
    if (vt_cfg.check != VT_CHECK_OFF) {
        if (args && (k->words || !k->nwords)) check_arg_words(c, k, args);
        else if (args || buf) check_args(c, k, args, buf, buf_len);
    }
    return 1;
}

static inline void fill_launch(struct vt_rec_launch *w, const struct vt_call *c, const vt_kernel *k, vt_dim3 grid,
                               vt_dim3 block, uint64_t shmem, uint64_t stream)
{
    vt_fill_call(&w->c, c);
    w->k = k->id;
    w->grid[0] = grid.x; w->grid[1] = grid.y; w->grid[2] = grid.z;
    w->block[0] = block.x; w->block[1] = block.y; w->block[2] = block.z;
    w->shmem = shmem;
    w->stream = stream;
}

void vt_launch_end(const struct vt_call *c, vt_kernel *k, vt_dim3 grid, vt_dim3 block, uint64_t shmem, uint64_t stream)
{
    vt_fmt_ensure_device(c->dev);
    /* The hottest record: filled in place in the ring, no copy (a stack one when it is off). */
    struct vt_rec_launch *r = vt_journal_claim(VT_R_LAUNCH, sizeof *r);
    if (r) {
        fill_launch(r, c, k, grid, block, shmem, stream);
        vt_journal_commit(r);
    } else {
        struct vt_rec_launch stack_rec;
        fill_launch(&stack_rec, c, k, grid, block, shmem, stream);
        vt_emit_record(VT_R_LAUNCH, &stack_rec, sizeof stack_rec);
    }
}
