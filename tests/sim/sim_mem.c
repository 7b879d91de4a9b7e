/* sim_mem.c - simulated device memory: per-device reserved VA ranges, a first-fit allocator over
 * them, and the address registry of every live range (device, async, vmm, managed, pinned,
 * registered). Part of the test-only simulated driver; every function expects sim_lock held. */
#include "sim.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define SIM_DEV_BASE   0x200000000000ull
#define SIM_DEV_STRIDE 0x10000000000ull   /* 1 TiB per device */
/* above 64 devices at 1 TiB each, and above ASan's allocator (0x600000000000, 4 TiB): a taken
 * address makes the reservation fall back elsewhere, and cuInit then leaked its EEXIST */
#define SIM_MANAGED_BASE 0x640000000000ull
#define SIM_VA_MAX     (SIM_DEV_STRIDE / 2)

typedef struct extent { uintptr_t addr; size_t size; } extent;
typedef struct va_space { extent *free; size_t n, cap; } va_space;

static va_space spaces[SIM_MAX_DEV + 1];   /* [SIM_MAX_DEV] is the managed range */
static sim_region **regs;
static size_t nregs, capregs;
static uint64_t next_id = 1;
uintptr_t sim_managed_lo, sim_managed_hi;

/* Under ThreadSanitizer (make tsan-test) a hint outside TSan's application ranges is dropped but
 * MAP_FIXED_NOREPLACE kept, which maps at address 0 and TSan aborts: take any address there. */
static int under_tsan(void) { return dlsym(RTLD_DEFAULT, "__tsan_init") != NULL; }

/* Device and managed ranges are reserved inaccessible, as CUDA reserves its unified address
 * space: a device address is never host memory to anyone probing the process's mappings (the
 * tracer, sim_mem's own host_mapped). The sim moves device bytes through a private shared view
 * of each device range (sim_view). Managed memory is host-accessible while allocated:
 * sim_va_alloc opens its pages, sim_va_free closes the ones no allocation holds any more. */
static uintptr_t reserve(uintptr_t want, size_t size)
{
    int saved = errno;   /* a driver call leaves the program's errno alone (a taken hint sets EEXIST) */
    void *p = under_tsan() ? MAP_FAILED : mmap((void *)want, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED && (uintptr_t)p != want) { /* old kernel: hint only */
        munmap(p, size);
        p = MAP_FAILED;
    }
    if (p == MAP_FAILED)
        p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "vramtrace-sim: cannot reserve %zu bytes: %s\n", size, strerror(errno));
        abort();
    }
    errno = saved;
    return (uintptr_t)p;
}

static void space_init(va_space *s, uintptr_t lo, size_t size)
{
    s->cap = 16;
    s->free = calloc(s->cap, sizeof *s->free);
    if (!s->free) abort();
    s->free[0].addr = lo;
    s->free[0].size = size;
    s->n = 1;
}

void sim_mem_init(void)
{
    for (int d = 0; d < sim_ndev; d++) {
        size_t va = sim_devs[d].capacity * 4;
        if (va > SIM_VA_MAX) va = SIM_VA_MAX;
        if (va < sim_devs[d].capacity) va = sim_devs[d].capacity;
        va = (va + 0x1fffff) & ~(size_t)0x1fffff;
        /* keep the first 2 MiB unused so no allocation starts at the range base */
        uintptr_t lo = reserve(SIM_DEV_BASE + (uintptr_t)d * SIM_DEV_STRIDE, va);
        sim_devs[d].lo = lo;
        sim_devs[d].hi = lo + va;
        void *view = mmap(NULL, va, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (view == MAP_FAILED) {
            /* valgrind (make bench's instruction counts) maps no shared range this large: the
             * device range itself holds the bytes then, host-accessible as before */
            if (mprotect((void *)lo, va, PROT_READ | PROT_WRITE) != 0) {
                fprintf(stderr, "vramtrace-sim: cannot map a view of %zu bytes: %s\n", va, strerror(errno));
                abort();
            }
            view = (void *)lo;
        }
        sim_devs[d].view = (uintptr_t)view;
        space_init(&spaces[d], lo + 0x200000, va - 0x200000);
    }
    size_t msize = 64ull << 30;
    sim_managed_lo = reserve(SIM_MANAGED_BASE, msize);
    sim_managed_hi = sim_managed_lo + msize;
    space_init(&spaces[SIM_MAX_DEV], sim_managed_lo, msize);
}

uintptr_t sim_va_alloc(int dev, size_t size, size_t align)
{
    va_space *s = &spaces[dev < 0 ? SIM_MAX_DEV : dev];
    if (size == 0) size = 1;
    size = (size + align - 1) & ~(align - 1);
    for (size_t i = 0; i < s->n; i++) {
        extent *e = &s->free[i];
        uintptr_t a = (e->addr + align - 1) & ~(uintptr_t)(align - 1);
        uintptr_t end = e->addr + e->size;
        if (a < e->addr || a + size > end || a + size < a)
            continue;
        uintptr_t head = a - e->addr, tail_addr = a + size;
        size_t tail = end - tail_addr;
        if (head && tail) { /* split: keep head here, insert tail after */
            if (s->n == s->cap) {
                extent *nf = realloc(s->free, 2 * s->cap * sizeof *nf);
                if (!nf) return 0;
                s->free = nf;
                s->cap *= 2;
                e = &s->free[i];
            }
            memmove(&s->free[i + 2], &s->free[i + 1], (s->n - i - 1) * sizeof *e);
            s->free[i + 1].addr = tail_addr;
            s->free[i + 1].size = tail;
            e->size = head;
            s->n++;
        } else if (head) {
            e->size = head;
        } else if (tail) {
            e->addr = tail_addr;
            e->size = tail;
        } else {
            memmove(&s->free[i], &s->free[i + 1], (s->n - i - 1) * sizeof *e);
            s->n--;
        }
        if (dev < 0) {
            uintptr_t pg = a & ~(uintptr_t)4095;
            mprotect((void *)pg, ((a + size + 4095) & ~(uintptr_t)4095) - pg, PROT_READ | PROT_WRITE);
        }
        return a;
    }
    return 0;
}

void sim_va_free(int dev, uintptr_t addr, size_t size)
{
    va_space *s = &spaces[dev < 0 ? SIM_MAX_DEV : dev];
    /* give the pages back (and zero them, like fresh memory) */
    uintptr_t pg = (addr + 4095) & ~(uintptr_t)4095, end = (addr + size) & ~(uintptr_t)4095;
    if (end > pg) {
        if (dev < 0) madvise((void *)pg, end - pg, MADV_DONTNEED);
        else madvise(sim_view(pg), end - pg, sim_devs[dev].view == sim_devs[dev].lo ? MADV_DONTNEED : MADV_REMOVE);
    }
    size_t i = 0;
    while (i < s->n && s->free[i].addr < addr) i++;
    int merge_prev = i > 0 && s->free[i - 1].addr + s->free[i - 1].size == addr;
    int merge_next = i < s->n && addr + size == s->free[i].addr;
    if (merge_prev && merge_next) {
        s->free[i - 1].size += size + s->free[i].size;
        memmove(&s->free[i], &s->free[i + 1], (s->n - i - 1) * sizeof(extent));
        s->n--;
    } else if (merge_prev) {
        s->free[i - 1].size += size;
    } else if (merge_next) {
        s->free[i].addr = addr;
        s->free[i].size += size;
    } else {
        if (s->n == s->cap) {
            extent *nf = realloc(s->free, 2 * s->cap * sizeof *nf);
            if (!nf) return; /* leak the range rather than corrupt the list */
            s->free = nf;
            s->cap *= 2;
        }
        memmove(&s->free[i + 1], &s->free[i], (s->n - i) * sizeof(extent));
        s->free[i].addr = addr;
        s->free[i].size = size;
        s->n++;
    }
    /* managed: close the pages around the block that now hold no allocation (inside the merged
     * free extent), as the driver unmaps freed memory */
    for (size_t k = i > 0 ? i - 1 : 0; dev < 0 && k < s->n && k <= i; k++) {
        extent *e = &s->free[k];
        if (addr < e->addr || addr >= e->addr + e->size) continue;
        uintptr_t lo = (e->addr + 4095) & ~(uintptr_t)4095, hi = (e->addr + e->size) & ~(uintptr_t)4095;
        uintptr_t blo = addr & ~(uintptr_t)4095, bhi = (addr + size + 4095) & ~(uintptr_t)4095;
        if (blo > lo) lo = blo;
        if (bhi < hi) hi = bhi;
        if (hi > lo) mprotect((void *)lo, hi - lo, PROT_NONE);
    }
}

/* index of the first region with base > p */
static size_t upper(uintptr_t p)
{
    size_t lo = 0, hi = nregs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (regs[mid]->base <= p) lo = mid + 1; else hi = mid;
    }
    return lo;
}

sim_region *sim_region_add(uintptr_t base, size_t size, size_t reserved, int kind, int dev)
{
    if (nregs == capregs) {
        size_t nc = capregs ? 2 * capregs : 256;
        sim_region **nr = realloc(regs, nc * sizeof *nr);
        if (!nr) return NULL;
        regs = nr;
        capregs = nc;
    }
    sim_region *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->base = base;
    r->size = size ? size : 1;
    r->reserved = reserved;
    r->kind = kind;
    r->dev = dev;
    r->id = next_id++;
    size_t i = upper(base);
    memmove(&regs[i + 1], &regs[i], (nregs - i) * sizeof *regs);
    regs[i] = r;
    nregs++;
    return r;
}

sim_region *sim_region_find(uintptr_t p)
{
    size_t i = upper(p);
    /* the nearest few below p (registered ranges may overlap others) */
    for (size_t k = i; k > 0 && k + 4 > i; k--) {
        sim_region *r = regs[k - 1];
        if (p >= r->base && p - r->base < r->size)
            return r;
    }
    return NULL;
}

sim_region *sim_region_exact(uintptr_t base)
{
    size_t i = upper(base);
    for (size_t k = i; k > 0 && regs[k - 1]->base == base; k--)
        return regs[k - 1];
    return NULL;
}

void sim_region_remove(sim_region *r)
{
    for (size_t i = upper(r->base); i > 0; i--) {
        if (regs[i - 1] == r) {
            memmove(&regs[i - 1], &regs[i], (nregs - i) * sizeof *regs);
            nregs--;
            free(r);
            return;
        }
        if (regs[i - 1]->base != r->base) break;
    }
}

size_t sim_region_count(void) { return nregs; }
sim_region *sim_region_at(size_t i) { return i < nregs ? regs[i] : NULL; }

int sim_dev_of_range(uintptr_t p)
{
    for (int d = 0; d < sim_ndev; d++)
        if (p >= sim_devs[d].lo && p < sim_devs[d].hi)
            return d;
    return -1;
}

/* Memory a GPU could reach through the host's page tables: mapped and readable. An inaccessible
 * page (guard, PROT_NONE reservation) is no host data. Under AddressSanitizer (the sanitized
 * test run) its shadow memory spans [0x7fff8000, 0x10007fff8000) and swallows scalars such as
 * 1 << 40: values there are not host buffers. */
static int host_mapped(uintptr_t v)
{
    if (v > 0x7fffffffffffull) return 0;
    static int asan = -1;
    if (asan < 0) asan = dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
    if (asan && v >= 0x7fff8000ull && v < 0x10007fff8000ull) return 0;
    unsigned char byte;
    struct iovec local = { &byte, 1 }, remote = { (void *)v, 1 };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
}

void *sim_view(uintptr_t p)
{
    int d = sim_dev_of_range(p);
    return d >= 0 ? (void *)(sim_devs[d].view + (p - sim_devs[d].lo)) : (void *)p;
}

int sim_classify_kernel_word(uint64_t v, int dev)
{
    if (v < 0x10000) return 0;
    sim_region *r = sim_region_find((uintptr_t)v);
    if (r && (r->kind == SIM_K_DEVICE || r->kind == SIM_K_ASYNC) && r->dev >= 0 && dev >= 0 && r->dev != dev &&
        !sim_devs[dev].peer_enabled[r->dev])
        return 2; /* another GPU's memory without peer access */
    if (r) return r->kind == SIM_K_VMM && (r->flags & SIM_F_NOACCESS) ? 2 : 0;
    /* one past the end (or in the alignment slack) of an allocation is still fine */
    if (v > 0) {
        r = sim_region_find((uintptr_t)v - 1);
        if (r) return 0;
    }
    if (sim_dev_of_range((uintptr_t)v) >= 0) return 2;
    if (v >= sim_managed_lo && v < sim_managed_hi) return 2;
    if (sim_pageable) return 0;
    return host_mapped((uintptr_t)v) ? 1 : 0;
}

int sim_range_ok(uintptr_t p, size_t n, int allow_host_regions)
{
    sim_region *r = sim_region_find(p);
    if (!r) return 0;
    /* VMM mappings side by side are one contiguous range to the device: growing an allocation by
     * mapping more physical memory after it is what VMM is for (PyTorch's expandable segments map
     * 2 MiB pieces and copy and memset across them) */
    while (r->kind == SIM_K_VMM && !(r->flags & SIM_F_NOACCESS) && n > r->size - (p - r->base)) {
        uintptr_t end = r->base + r->size;
        sim_region *next = sim_region_find(end);
        if (!next || next->kind != SIM_K_VMM || next->base != end) return 0;
        n -= end - p;
        p = end;
        r = next;
    }
    if (n > r->size - (p - r->base)) return 0;
    if (r->kind == SIM_K_VMM && (r->flags & SIM_F_NOACCESS)) return 0;
    if (!allow_host_regions && (r->kind == SIM_K_PINNED || r->kind == SIM_K_REGISTERED))
        return 0;
    return 1;
}

void sim_release_device_memory(int dev)
{
    sim_pools_reset(dev);
    for (size_t i = nregs; i > 0; i--) {
        sim_region *r = regs[i - 1];
        if (r->dev != dev) continue;
        if (r->kind == SIM_K_ASYNC && (r->flags & SIM_F_GRAPH)) {
            sim_devs[dev].used -= r->reserved; /* the graph keeps the address */
        } else if (r->kind == SIM_K_DEVICE || r->kind == SIM_K_ASYNC) {
            sim_va_free(dev, r->base, r->reserved);
            sim_devs[dev].used -= r->reserved;
        } else if (r->kind == SIM_K_MANAGED) {
            sim_va_free(-1, r->base, r->reserved);
        } else {
            continue;
        }
        memmove(&regs[i - 1], &regs[i], (nregs - i) * sizeof *regs);
        nregs--;
        free(r);
    }
}
