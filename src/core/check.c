/* check.c - pointer classification: registry, then driver attributes, then cached host maps. */
#include "check.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "resolve.h"
#include "tracer.h"
#include "journal.h"
#include "trace_writer.h"

#define VT_NEAR_SLACK ((uint64_t)1 << 20)

struct hmap { uint64_t lo, hi; int readable; char name[160]; };
static struct hmap *maps;
static size_t nmaps, maps_cap;
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;

static VT_TLS uint64_t stack_lo, stack_hi;
static VT_TLS int stack_known;

static uint64_t parse_hex(const char **s)
{
    uint64_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        if (c >= '0' && c <= '9') v = v * 16 + (uint64_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v = v * 16 + (uint64_t)(c - 'a' + 10);
        else return v;
    }
}

/* Re-read /proc/self/maps (lock held). Raw read(): no stdio buffers, no locale. */
static void refresh_maps(void)
{
    char *buf = vt_read_maps();
    if (!buf) return;
    nmaps = 0;
    for (const char *line = buf; *line;) {
        const char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        const char *s = line;
        uint64_t lo = parse_hex(&s);
        if (*s == '-') s++;
        uint64_t hi = parse_hex(&s);
        int readable = s[0] == ' ' && s[1] == 'r';
        /* fields: perms offset dev inode name */
        int fields = 0;
        while (s < eol && fields < 5) {
            while (s < eol && *s == ' ') s++;
            if (fields == 4) break;
            while (s < eol && *s != ' ') s++;
            fields++;
        }
        if (nmaps == maps_cap) {
            size_t nc = maps_cap ? maps_cap * 2 : 256;
            struct hmap *nm = realloc(maps, nc * sizeof *nm);
            if (!nm) break;
            maps = nm;
            maps_cap = nc;
        }
        size_t nl = (size_t)(eol - s);
        if (nl >= sizeof maps[0].name) nl = sizeof maps[0].name - 1;
        maps[nmaps].lo = lo;
        maps[nmaps].hi = hi;
        maps[nmaps].readable = readable;
        memcpy(maps[nmaps].name, s, nl);
        maps[nmaps].name[nl] = '\0';
        nmaps++;
        line = *eol ? eol + 1 : eol;
    }
    free(buf);
    for (size_t i = nmaps; i-- > 0;) /* sorted: the highest user mapping is the last below bit 63 */
        if (!(maps[i].hi >> 63)) { vt_va_raise(maps[i].hi); break; }
}

static const struct hmap *find_map(uint64_t v)
{
    size_t lo = 0, hi = nmaps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v < maps[mid].lo) hi = mid;
        else if (v >= maps[mid].hi) lo = mid + 1;
        else return &maps[mid];
    }
    return NULL;
}

static void thread_stack(void)
{
    if (stack_known) return;
    stack_known = 1;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    void *addr;
    size_t size;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        stack_lo = (uint64_t)(uintptr_t)addr;
        stack_hi = stack_lo + size;
    }
    pthread_attr_destroy(&attr);
}

/* glibc serves large malloc()s from their own anonymous mapping: the chunk header sits at its
 * page-aligned start (prev_size, the alignment correction, at +0; size with IS_MMAPPED (0x2) at
 * +8), and prev_size + size is whole pages. The kernel merges adjacent anonymous mappings with the
 * same protection, so the chunk need not start where /proc/self/maps says the mapping does: walk
 * back page by page from v (a bounded number: arguments point near their buffer's start). */
#define VT_CHUNK_WALK_PAGES 1024
static int looks_like_mmapped_chunk(const struct hmap *m, uint64_t v)
{
    if (!m->readable || m->name[0] || m->hi - m->lo < 4096) return 0;
    uint64_t page = v >= 16 ? (v - 16) & ~(uint64_t)4095 : 0;
    enum { BATCH = 64 };
    for (unsigned walked = 0; walked < VT_CHUNK_WALK_PAGES && page >= m->lo; walked += BATCH) {
        uint64_t hdr[BATCH][2] = { { 0 } };
        struct iovec dst[BATCH], src[BATCH];
        int n = 0;
        for (; n < BATCH && page - (uint64_t)n * 4096 >= m->lo && page >= (uint64_t)n * 4096; n++) {
            dst[n] = (struct iovec){ hdr[n], sizeof hdr[n] };
            src[n] = (struct iovec){ (void *)(uintptr_t)(page - (uint64_t)n * 4096), sizeof hdr[n] };
        }
        /* The snapshot can be stale (the mapping unmapped since): read through the kernel, which
         * stops at the first page it cannot read (EFAULT), never SIGSEGV. */
        ssize_t got = process_vm_readv(getpid(), dst, (unsigned long)n, src, (unsigned long)n, 0);
        int full = got > 0 ? (int)(got / (ssize_t)sizeof hdr[0]) : 0;
        for (int i = 0; i < full; i++) {
            uint64_t p = page - (uint64_t)i * 4096, prev = hdr[i][0], size = hdr[i][1];
            uint64_t csize = size & ~(uint64_t)7;
            if ((size & 0x2) && prev < 4096 && csize >= 4096 && ((prev + csize) & 4095) == 0 &&
                p + csize <= m->hi && p + csize > v)
                return 1;
        }
        if (full < n || page < (uint64_t)n * 4096) return 0;
        page -= (uint64_t)n * 4096;
    }
    return 0;
}

static int classify_host(uint64_t v, vt_ptr_info *out)
{
    int found = 0, malloced = 0;
    vt_mutex_lock(&maps_lock);
    const struct hmap *m = find_map(v);
    if (!m) { refresh_maps(); m = find_map(v); }
    /* Not host data a kernel could be handed: inaccessible pages (guards, reservations), huge
     * anonymous reservations (sanitizer shadow memory, allocator arenas, over 1 TiB), and the
     * tracer's own trace and ring mappings. A value inside one is a scalar that happens to fall
     * there. */
    if (m && (!m->readable || (!m->name[0] && m->hi - m->lo >= (1ull << 40)) || vt_journal_owns(v) || vt_writer_owns(v)))
        m = NULL;
    if (m) {
        found = 1;
        malloced = looks_like_mmapped_chunk(m, v);
        snprintf(out->mapping, sizeof out->mapping, "%s", malloced ? "[malloc]" : m->name);
    }
    vt_mutex_unlock(&maps_lock);
    if (!found) return 0;
    thread_stack();
    if (!strcmp(out->mapping, "[heap]") || malloced) out->host_cls = "heap";
    else if (!strncmp(out->mapping, "[stack", 6) || (v >= stack_lo && v < stack_hi)) out->host_cls = "stack";
    else if (out->mapping[0] == '/') out->host_cls = "file";
    else out->host_cls = "anon";
    return 1;
}

/* What a pointer into a live range of memory kind MEM is. */
static inline int class_of_mem(int mem)
{
    return mem == VT_MEM_MANAGED ? VT_PTR_MANAGED : (mem == VT_MEM_PINNED || mem == VT_MEM_REGISTERED) ? VT_PTR_PINNED : VT_PTR_DEVICE;
}

/* Ask the real driver about a value no table knows: device memory allocated behind the tracer's
 * back (before preload took effect, or by a path it does not hook) is adopted, not reported. */
static int classify_driver(uint64_t v, vt_ptr_info *out)
{
    typedef CUresult (*attr_fn)(void *, int, CUdeviceptr);
    attr_fn get = (attr_fn)vt_real_driver("cuPointerGetAttribute");
    if (!get) return 0;
    unsigned int type = 0;
    vt_ts.guard++;
    CUresult r = get(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)v);
    CUdeviceptr start = 0;
    size_t size = 0;
    int ordinal = -1;
    if (r == CUDA_SUCCESS) {
        if (get(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)v) != CUDA_SUCCESS) start = v;
        if (get(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)v) != CUDA_SUCCESS) size = 1;
        if (get(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)v) != CUDA_SUCCESS) ordinal = -1;
    }
    vt_ts.guard--;
    if (r != CUDA_SUCCESS) return 0;
    int mem = type == CU_MEMORYTYPE_HOST ? VT_MEM_REGISTERED : type == CU_MEMORYTYPE_UNIFIED ? VT_MEM_MANAGED : VT_MEM_FOREIGN;
    vt_registry_insert(start, size, mem, ordinal);
    out->alloc = (vt_alloc_info){ start, size, mem, ordinal };
    out->cls = class_of_mem(mem);
    return 1;
}

VT_TLS struct vt_lc_ent vt_lcache[1 << VT_LCACHE_BITS];

#define VT_PEER_DEVS 64
static _Atomic uint64_t peer_bits[VT_PEER_DEVS]; /* bit t of [f]: f reaches t; bit 63 alone: all */

void vt_peer_access_set(int from, int to, int on)
{
    if (from < 0 || from >= VT_PEER_DEVS) return;
    uint64_t bit = to >= 0 && to < 63 ? 1ull << to : 1ull << 63;
    if (on) atomic_fetch_or(&peer_bits[from], bit);
    else atomic_fetch_and(&peer_bits[from], ~bit);
}

int vt_peer_access_ok(int from, int to)
{
    if (from < 0 || from >= VT_PEER_DEVS || to < 0 || to >= 63) return 1;
    uint64_t b = atomic_load_explicit(&peer_bits[from], memory_order_relaxed);
    return (b >> to & 1) || (b >> 63);
}

void vt_set_current_device(int dev)
{
    if (vt_ts.cur_dev == dev) return;
    vt_ts.cur_dev = dev;
    memset(vt_lcache, 0, sizeof vt_lcache);
}

/* The thread's cached answer for V, inside a live range it looked up lately: 0 and *out, or -1. */
static inline int lcache_get(uint64_t v, vt_alloc_info *out)
{
    if (!vt_lcache_hit(vt_lcache, v)) return -1;
    const struct vt_lc_ent *e = vt_lcache_slot(v);
    *out = (vt_alloc_info){ e->base, e->size, e->mem, e->dev };
    return 0;
}

int vt_live_lookup_cached(uint64_t v, vt_alloc_info *out)
{
    if (lcache_get(v, out) == 0) return 0;
    struct vt_lc_ent *e = vt_lcache_slot(v);
    int shard;
    uint64_t gen;
    if (vt_registry_lookup_gen(v, out, &shard, &gen) != 0) return -1;
    if (vt_wrong_device(out, vt_ts.cur_dev)) return 0; /* never a cache hit: the launch check must see it */
    *e = (struct vt_lc_ent){ out->base, out->size, gen, &vt_registry_gens[shard].v, out->mem, out->dev };
    return 0;
}

/* Host pages this thread found in no live range and (with checks on) unknown to the driver: a
 * copy from one again asks neither, the steady state of a loop copying from a pageable buffer.
 * An entry holds while no range was inserted anywhere since (vt_registry_inserts: what the tracer
 * sees allocated lands in the registry) and, for the driver's answer, for a second: memory CUDA
 * maps behind the tracer's back can take the page's place only after the program unmapped it. */
#define VT_HOSTC_BITS 6
#define VT_HOSTC_NS 1000000000ull
static VT_TLS struct { uint64_t page, inserts, until; } hostc[1 << VT_HOSTC_BITS];
static inline unsigned hostc_at(uint64_t v) { return ((uint32_t)(v >> 12) * 0x9E3779B1u) >> (32 - VT_HOSTC_BITS); }
/* Entry I still says V's page is no CUDA memory (INSERTS: vt_registry_inserts read now). */
static inline int hostc_holds(unsigned i, uint64_t v, uint64_t inserts, uint64_t now)
{
    return hostc[i].page == v >> 12 && hostc[i].inserts == inserts && now < hostc[i].until;
}

int vt_copy_class(uint64_t v, uint64_t now, vt_ptr_info *out)
{
    if (lcache_get(v, &out->alloc) == 0) return out->cls = class_of_mem(out->alloc.mem); /* before the host pages */
    unsigned i = hostc_at(v);
    uint64_t inserts = atomic_load_explicit(&vt_registry_inserts, memory_order_acquire);
    if (hostc_holds(i, v, inserts, now)) return out->cls = VT_PTR_HOST;
    if (vt_live_lookup_cached(v, &out->alloc) == 0) return out->cls = class_of_mem(out->alloc.mem);
    out->cls = VT_PTR_HOST;
    if (vt_looks_scalar(v)) return out->cls;
    /* Device or managed memory freed and not reallocated: no host mapping can be there (CUDA keeps
     * that address space for device memory), so it is the freed allocation. Freed pinned memory
     * is not: cudaFreeHost gives the pages back, and the program's heap may hold them now. */
    uint64_t forgot;
    if (vt_cfg.check != VT_CHECK_OFF && vt_registry_freed_lookup(v, &out->alloc, &forgot) == 0 &&
        (vt_mem_is_device(out->alloc.mem) || out->alloc.mem == VT_MEM_MANAGED))
        return out->cls = VT_PTR_FREED;
    if (vt_cfg.check != VT_CHECK_OFF && classify_driver(v, out)) return out->cls;
    hostc[i].page = v >> 12;
    hostc[i].inserts = inserts;
    hostc[i].until = now + VT_HOSTC_NS;
    return out->cls;
}

int vt_copy_class_token(uint64_t v, uint64_t now, vt_class_token *t)
{
    const struct vt_lc_ent *e = vt_lcache_slot(v);
    if (vt_lcache_hit(vt_lcache, v)) { *t = (vt_class_token){ e->genp, e->gen, UINT64_MAX }; return 1; }
    unsigned i = hostc_at(v);
    uint64_t inserts = atomic_load_explicit(&vt_registry_inserts, memory_order_acquire);
    if (!hostc_holds(i, v, inserts, now)) return 0;
    *t = (vt_class_token){ &vt_registry_inserts, inserts, hostc[i].until };
    return 1;
}

int vt_classify(uint64_t v, vt_ptr_info *out)
{
    out->host_cls = NULL;
    out->mapping[0] = '\0';
    out->forgot = 0;
    if (vt_looks_scalar(v)) return out->cls = VT_PTR_SCALAR;
    if (vt_registry_lookup(v, &out->alloc) == 0) return out->cls = class_of_mem(out->alloc.mem);
    /* Freed memory before host memory: cudaFreeHost unmaps pinned memory (a host mapping there
     * now is a reuse) and a freed managed range is no host data. An unregistered range is still
     * the program's own host memory, and is classed as such below. */
    if (vt_registry_freed_lookup(v, &out->alloc, &out->forgot) == 0 && out->alloc.mem != VT_MEM_REGISTERED)
        return out->cls = VT_PTR_FREED;
    if (classify_driver(v, out)) return out->cls;
    /* Host memory is host memory first: under UVA host mappings sit between device ranges (the
     * driver keeps its unallocated device space inaccessible, so it is never taken for host). */
    if (classify_host(v, out)) return out->cls = VT_PTR_HOST;
    if (vt_registry_nearest_device(v, VT_NEAR_SLACK, &out->alloc) == 0) return out->cls = VT_PTR_NEAR_DEVICE;
    return out->cls = VT_PTR_SCALAR;
}

void vt_check_reset(void)
{
    for (int i = 0; i < VT_PEER_DEVS; i++) atomic_store(&peer_bits[i], 0);
    pthread_mutex_init(&maps_lock, NULL);
    nmaps = 0;
}
