/* backtrace.c - glibc backtrace() with the tracer's frames removed; dl_iterate_phdr module map. */
#include "backtrace.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer.h"
#include "unwind.h"

#define VT_MAX_MODULES 4096

static struct mod { uint64_t lo, hi; } mods[VT_MAX_MODULES];
static _Atomic int nmods;
static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t self_lo, self_hi;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

/* [lo, hi) spanned by an object's PT_LOAD segments; hi 0 when it has none */
static void load_span(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (int j = 0; j < info->dlpi_phnum; j++) {
        const ElfW(Phdr) *q = &info->dlpi_phdr[j];
        if (q->p_type != PT_LOAD) continue;
        uint64_t a = info->dlpi_addr + q->p_vaddr;
        if (a < *lo) *lo = a;
        if (a + q->p_memsz > *hi) *hi = a + q->p_memsz;
    }
}

static int find_self_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uint64_t probe = (uint64_t)(uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (probe >= lo && probe < hi) {
            load_span(info, &self_lo, &self_hi);
            return 1;
        }
    }
    return 0;
}
static _Atomic int self_found; /* set after self_lo/hi: no pthread_once call per frame after that */
static void find_self(void)
{
    dl_iterate_phdr(find_self_cb, (void *)(uintptr_t)&find_self);
    atomic_store_explicit(&self_found, 1, memory_order_release);
}

int vt_addr_is_self(uint64_t addr)
{
    if (__builtin_expect(!atomic_load_explicit(&self_found, memory_order_acquire), 0)) pthread_once(&self_once, find_self);
    return addr >= self_lo && addr < self_hi;
}

/* The first call loads libgcc for backtrace() (it allocates): the fast path falls back to it
 * later, inside a hook. Idempotent, so a flag rather than pthread_once on every call. */
static _Atomic int glibc_loaded;
static void load_glibc_unwinder(void)
{
    void *one[1];
    backtrace(one, 1);
    atomic_store_explicit(&glibc_loaded, 1, memory_order_release);
}

/* Where the last walks' frames below the tracer's own start, by the unwinder's memo entry: a
 * stack seen again skips the scan for them. */
static VT_TLS struct { uint64_t serial; int max, start; } bt_memo[2];
static VT_TLS uint64_t bt_serial;

uint64_t vt_backtrace_serial(void) { return bt_serial; }

int vt_backtrace(uint64_t *frames, int max)
{
    uint64_t raw[VT_BT_MAX + 8];
    if (max > VT_BT_MAX) max = VT_BT_MAX;
    if (__builtin_expect(!atomic_load_explicit(&glibc_loaded, memory_order_acquire), 0)) load_glibc_unwinder();
    /* Same frames as backtrace() (unwind.h), or -1 when only glibc can tell. */
    int n = vt_cfg.unwind_glibc ? -1 : vt_unwind(raw, max + 8);
    uint64_t serial = n >= 0 ? vt_unwind_serial() : 0;
    bt_serial = serial;
    if (n < 0) {
        void *g[VT_BT_MAX + 8];
        n = backtrace(g, max + 8);
        for (int j = 0; j < n; j++) raw[j] = (uint64_t)(uintptr_t)g[j];
    }
    /* Start after the last of the tracer's own frames near the top: a sanitizer runtime's
     * backtrace interceptor may sit above them. */
    int i = -1;
    unsigned w = (unsigned)(serial & 1);
    if (serial && bt_memo[w].serial == serial && bt_memo[w].max == max) i = bt_memo[w].start;
    if (i < 0) {
        i = 0;
        for (int j = 0; j < n && j < 8; j++)
            if (vt_addr_is_self(raw[j])) i = j + 1;
        if (serial) bt_memo[w].serial = serial, bt_memo[w].max = max, bt_memo[w].start = i;
    }
    int out = n - i < max ? n - i : max;
    if (out <= 0) return 0;
    memcpy(frames, raw + i, (size_t)out * sizeof frames[0]);
    return out;
}

/* The recorded modules this thread's frames fell in lately: a stack's frames lie in a few
 * objects, while a program like PyTorch maps hundreds. Entries of an earlier module list (a fork
 * child's reset) do not count. */
#define HIT_WAYS 4
static _Atomic unsigned mods_gen = 1;
static VT_TLS struct { uint64_t lo, size; unsigned gen; } hits[HIT_WAYS];
static VT_TLS unsigned hit_next;

static int known(uint64_t addr)
{
    unsigned gen = atomic_load_explicit(&mods_gen, memory_order_relaxed);
    for (int i = 0; i < HIT_WAYS; i++)
        if (addr - hits[i].lo < hits[i].size && hits[i].gen == gen) return 1;
    int n = atomic_load_explicit(&nmods, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (addr >= mods[i].lo && addr < mods[i].hi) {
            unsigned w = hit_next++ % HIT_WAYS;
            hits[w].lo = mods[i].lo;
            hits[w].size = mods[i].hi - mods[i].lo;
            hits[w].gen = gen;
            return 1;
        }
    return 0;
}

/* The object's NT_GNU_BUILD_ID note, from its loaded PT_NOTE segments, as hex into OUT ("" if none). */
static void build_id(const struct dl_phdr_info *info, char *out, size_t n)
{
    out[0] = 0;
    for (int j = 0; j < info->dlpi_phnum; j++) {
        const ElfW(Phdr) *q = &info->dlpi_phdr[j];
        if (q->p_type != PT_NOTE) continue;
        const unsigned char *p = (const unsigned char *)(uintptr_t)(info->dlpi_addr + q->p_vaddr), *end = p + q->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
            const unsigned char *name = p + sizeof *nh, *desc = name + ((nh->n_namesz + 3u) & ~3u);
            const unsigned char *next = desc + ((nh->n_descsz + 3u) & ~3u);
            if (next > end || next <= p) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                static const char hex[] = "0123456789abcdef";
                size_t k = 0;
                for (uint32_t i = 0; i < nh->n_descsz && k + 2 < n; i++) { out[k++] = hex[desc[i] >> 4]; out[k++] = hex[desc[i] & 15]; }
                out[k] = 0;
                return;
            }
            p = next;
        }
    }
}

static int emit_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    vt_module_fn sink = *(vt_module_fn *)data;
    uint64_t lo, hi;
    load_span(info, &lo, &hi);
    if (hi == 0 || known(lo)) return 0;
    int n = atomic_load(&nmods);
    if (n >= VT_MAX_MODULES) return 1;
    char exe[4096];
    const char *path = info->dlpi_name;
    if (!path || !path[0]) { /* the main program */
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[len > 0 ? len : 0] = '\0';
        path = exe;
    }
    if (strncmp(path, "linux-vdso", 10) == 0) return 0;
    mods[n].lo = lo;
    mods[n].hi = hi;
    atomic_store_explicit(&nmods, n + 1, memory_order_release);
    struct vt_module_info m = { .path = path, .base = info->dlpi_addr, .lo = lo, .hi = hi };
    build_id(info, m.build_id, sizeof m.build_id);
    struct stat st;
    if (path[0] == '/' && stat(path, &st) == 0) { m.file_size = (uint64_t)st.st_size; m.mtime = (int64_t)st.st_mtime; }
    sink(&m);
    return 0;
}

void vt_modules_emit_new(vt_module_fn sink)
{
    vt_mutex_lock(&mod_lock);
    dl_iterate_phdr(emit_cb, &sink);
    vt_mutex_unlock(&mod_lock);
}

/* The last stack this thread found covered (its vt_backtrace_serial, under mods_gen). */
static VT_TLS struct { uint64_t serial; unsigned gen; } covered;

void vt_modules_cover(const uint64_t *frames, int n, uint64_t serial, vt_module_fn sink)
{
    unsigned gen = atomic_load_explicit(&mods_gen, memory_order_relaxed);
    if (serial && covered.serial == serial && covered.gen == gen) return;
    for (int i = 0; i < n; i++)
        if (!known(frames[i])) { vt_modules_emit_new(sink); return; }
    covered.serial = serial;
    covered.gen = gen;
}

void vt_modules_reset(void)
{
    atomic_fetch_add(&mods_gen, 1);
    atomic_store(&nmods, 0);
    pthread_mutex_init(&mod_lock, NULL);
}
