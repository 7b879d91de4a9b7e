/* nvtx.c - NVTX v3 injection: the official way to receive a program's NVTX ranges.
 *
 * `vramtrace run` sets NVTX_INJECTION64_PATH to this library; on the program's first NVTX call
 * the NVTX loader dlopens it (the preloaded copy) and calls InitializeInjectionNvtx2, which fills
 * the CORE and CORE2 callback slots with the recorders below. Ranges become `range_push`,
 * `range_pop`, `range_start`, `range_end` and `mark` records; the report attributes memory to the
 * range stack of the allocating thread. The NVTX ABI is declared here (no toolkit needed);
 * layouts match nvtx3/nvtxDetail/nvtxTypes.h (checked by tests/cases/nvtx_*.sh). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "events.h"
#include "lifecycle.h"
#include "tracer.h"

typedef void (*nvtx_fn)(void);
typedef nvtx_fn **nvtx_table;
typedef const void *(*nvtx_get_export_table)(uint32_t id);
struct nvtx_callbacks {
    size_t struct_size;
    int (*get_module_table)(int module, nvtx_table *out, unsigned int *size);
};
enum { NVTX_ETID_CALLBACKS = 1, NVTX_CB_MODULE_CORE = 1, NVTX_CB_MODULE_CORE2 = 5 };
enum { CORE_MarkEx = 1, CORE_MarkA = 2, CORE_MarkW = 3, CORE_RangeStartEx = 4, CORE_RangeStartA = 5,
       CORE_RangeStartW = 6, CORE_RangeEnd = 7, CORE_RangePushEx = 8, CORE_RangePushA = 9,
       CORE_RangePushW = 10, CORE_RangePop = 11 };
enum { CORE2_DomainMarkEx = 1, CORE2_DomainRangeStartEx = 2, CORE2_DomainRangeEnd = 3,
       CORE2_DomainRangePushEx = 4, CORE2_DomainRangePop = 5, CORE2_DomainRegisterStringA = 10,
       CORE2_DomainRegisterStringW = 11, CORE2_DomainCreateA = 12, CORE2_DomainCreateW = 13 };
enum { MSG_ASCII = 1, MSG_UNICODE = 2, MSG_REGISTERED = 3 };

struct nvtx_attr { /* nvtxEventAttributes_t, version 2+ */
    uint16_t version, size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type, reserved0;
    uint64_t payload;
    int32_t message_type;
    const void *message;
};

static _Atomic uint64_t next_range_id = 1;
static VT_TLS int push_depth;

/* Wide strings: keep the ASCII subset, which is what range names are in practice. */
static void narrow(const wchar_t *w, char *out, size_t cap)
{
    size_t i = 0;
    for (; w && w[i] && i + 1 < cap; i++) out[i] = w[i] < 0x80 ? (char)w[i] : '?';
    out[i] = '\0';
}

static const char *attr_name(const struct nvtx_attr *a, char *buf, size_t cap)
{
    if (!a || a->size < 48) return NULL;
    if (a->message_type == MSG_ASCII || a->message_type == MSG_REGISTERED) return a->message;
    if (a->message_type == MSG_UNICODE) { narrow(a->message, buf, cap); return buf; }
    return NULL;
}

static int push(const char *name)
{
    if (vt_cfg.enabled) vt_ev_range(VT_EVN_RANGE_PUSH, name ? name : "", 0, 0);
    return push_depth++;
}
static int pop(void)
{
    if (push_depth <= 0) return -2; /* NVTX's "no range to pop" */
    if (vt_cfg.enabled) vt_ev_range(VT_EVN_RANGE_POP, NULL, 0, 0);
    return --push_depth;
}
static uint64_t start(const char *name)
{
    uint64_t id = atomic_fetch_add(&next_range_id, 1);
    if (vt_cfg.enabled) vt_ev_range(VT_EVN_RANGE_START, name ? name : "", id, 1);
    return id;
}
static void end(uint64_t id) { if (vt_cfg.enabled) vt_ev_range(VT_EVN_RANGE_END, NULL, id, 1); }
static void mark(const char *name) { if (vt_cfg.enabled) vt_ev_range(VT_EVN_MARK, name ? name : "", 0, 0); }

static int push_a(const char *m) { return push(m); }
static int push_w(const wchar_t *m) { char b[256]; narrow(m, b, sizeof b); return push(b); }
static int push_ex(const struct nvtx_attr *a) { char b[256]; return push(attr_name(a, b, sizeof b)); }
static uint64_t start_a(const char *m) { return start(m); }
static uint64_t start_w(const wchar_t *m) { char b[256]; narrow(m, b, sizeof b); return start(b); }
static uint64_t start_ex(const struct nvtx_attr *a) { char b[256]; return start(attr_name(a, b, sizeof b)); }
static void mark_a(const char *m) { mark(m); }
static void mark_w(const wchar_t *m) { char b[256]; narrow(m, b, sizeof b); mark(b); }
static void mark_ex(const struct nvtx_attr *a) { char b[256]; mark(attr_name(a, b, sizeof b)); }

static void dmark_ex(void *d, const struct nvtx_attr *a) { (void)d; mark_ex(a); }
static uint64_t dstart_ex(void *d, const struct nvtx_attr *a) { (void)d; return start_ex(a); }
static void dend(void *d, uint64_t id) { (void)d; end(id); }
static int dpush_ex(void *d, const struct nvtx_attr *a) { (void)d; return push_ex(a); }
static int dpop(void *d) { (void)d; return pop(); }
/* A registered string handle is the string itself, so MSG_REGISTERED messages read directly. */
static void *dreg_a(void *d, const char *s) { (void)d; return s ? strdup(s) : NULL; }
static void *dreg_w(void *d, const wchar_t *s) { (void)d; char b[256]; narrow(s, b, sizeof b); return strdup(b); }
/* Domains: ranges are recorded whatever the domain; a non-NULL handle keeps callers happy. */
static void *dcreate_a(const char *n) { return n ? strdup(n) : strdup(""); }
static void *dcreate_w(const wchar_t *n) { char b[256]; narrow(n, b, sizeof b); return strdup(b); }

static void set(nvtx_table t, unsigned int size, unsigned int id, nvtx_fn fn)
{
    if (t && id < size && t[id]) *t[id] = fn;
}

int InitializeInjectionNvtx2(nvtx_get_export_table get)
{
    vt_init();
    const struct nvtx_callbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
    if (!cb || !cb->get_module_table) return 0;
    nvtx_table t = NULL;
    unsigned int n = 0;
    if (cb->get_module_table(NVTX_CB_MODULE_CORE, &t, &n)) {
        set(t, n, CORE_MarkEx, (nvtx_fn)mark_ex);
        set(t, n, CORE_MarkA, (nvtx_fn)mark_a);
        set(t, n, CORE_MarkW, (nvtx_fn)mark_w);
        set(t, n, CORE_RangeStartEx, (nvtx_fn)start_ex);
        set(t, n, CORE_RangeStartA, (nvtx_fn)start_a);
        set(t, n, CORE_RangeStartW, (nvtx_fn)start_w);
        set(t, n, CORE_RangeEnd, (nvtx_fn)end);
        set(t, n, CORE_RangePushEx, (nvtx_fn)push_ex);
        set(t, n, CORE_RangePushA, (nvtx_fn)push_a);
        set(t, n, CORE_RangePushW, (nvtx_fn)push_w);
        set(t, n, CORE_RangePop, (nvtx_fn)pop);
    }
    t = NULL;
    n = 0;
    if (cb->get_module_table(NVTX_CB_MODULE_CORE2, &t, &n)) {
        set(t, n, CORE2_DomainMarkEx, (nvtx_fn)dmark_ex);
        set(t, n, CORE2_DomainRangeStartEx, (nvtx_fn)dstart_ex);
        set(t, n, CORE2_DomainRangeEnd, (nvtx_fn)dend);
        set(t, n, CORE2_DomainRangePushEx, (nvtx_fn)dpush_ex);
        set(t, n, CORE2_DomainRangePop, (nvtx_fn)dpop);
        set(t, n, CORE2_DomainRegisterStringA, (nvtx_fn)dreg_a);
        set(t, n, CORE2_DomainRegisterStringW, (nvtx_fn)dreg_w);
        set(t, n, CORE2_DomainCreateA, (nvtx_fn)dcreate_a);
        set(t, n, CORE2_DomainCreateW, (nvtx_fn)dcreate_w);
    }
    return 1;
}
