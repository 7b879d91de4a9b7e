/* host.c - host DDR bandwidth: multi-threaded STREAM-style copy and triad on the CPU. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bw.h"

enum host_op { OP_TOUCH, OP_COPY, OP_TRIAD, OP_QUIT };

struct host_ctx {
    double *a, *b, *c;
    size_t n;                   /* doubles per array */
    int nthreads;
    /* Work hand-off: the main thread sets op, bumps gen and waits for pending to reach 0. */
    pthread_mutex_t mu;
    pthread_cond_t go, idle;
    unsigned gen;
    int pending;
    enum host_op op;
};

struct host_worker {
    struct host_ctx *ctx;
    int id;
    pthread_t tid;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This thread's slice [lo, hi) of the arrays, 4 KiB-aligned so each page has one first-toucher. */
static void slice(const struct host_ctx *c, int id, size_t *lo, size_t *hi)
{
    const size_t page = 4096 / sizeof(double);
    size_t per = (c->n / (size_t)c->nthreads + page - 1) / page * page;
    *lo = per * (size_t)id;
    *hi = *lo + per;
    if (*lo > c->n) *lo = c->n;
    if (*hi > c->n || id == c->nthreads - 1) *hi = c->n;
}

static void run_op(struct host_ctx *c, int id, enum host_op op)
{
    size_t lo, hi;
    slice(c, id, &lo, &hi);
    double *restrict a = c->a, *restrict b = c->b, *restrict cc = c->c;
    const double s = 3.0;
    switch (op) {
    case OP_TOUCH:
        for (size_t i = lo; i < hi; i++) { a[i] = 1.0; b[i] = 2.0; cc[i] = 0.5; }
        break;
    case OP_COPY:
        memcpy(cc + lo, a + lo, (hi - lo) * sizeof(double));
        break;
    case OP_TRIAD:
        for (size_t i = lo; i < hi; i++) a[i] = b[i] + s * cc[i];
        break;
    case OP_QUIT:
        break;
    }
}

static void *worker_main(void *arg)
{
    struct host_worker *w = arg;
    struct host_ctx *c = w->ctx;
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        while (c->gen == seen) pthread_cond_wait(&c->go, &c->mu);
        seen = c->gen;
        enum host_op op = c->op;
        pthread_mutex_unlock(&c->mu);
        if (op == OP_QUIT) break;
        run_op(c, w->id, op);
        pthread_mutex_lock(&c->mu);
        if (--c->pending == 0) pthread_cond_signal(&c->idle);
        pthread_mutex_unlock(&c->mu);
    }
    return NULL;
}

/* Starts op on every worker; for OP_QUIT returns at once, else waits for all of them and
 * returns the elapsed milliseconds. */
static double host_run(struct host_ctx *c, enum host_op op)
{
    double t0 = now_s();
    pthread_mutex_lock(&c->mu);
    c->op = op;
    c->pending = c->nthreads;
    c->gen++;
    pthread_cond_broadcast(&c->go);
    if (op != OP_QUIT)
        while (c->pending > 0) pthread_cond_wait(&c->idle, &c->mu);
    pthread_mutex_unlock(&c->mu);
    return (now_s() - t0) * 1e3;
}

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *ok = fgets(buf, (int)len, f);
    fclose(f);
    if (!ok) return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* Sum of the distinct last-level caches in /sys/devices/system/cpu (one per shared_cpu_list).
 * sysconf(_SC_LEVEL3_CACHE_SIZE) is not used first: in VMs glibc reports it multiplied by the
 * thread count seen in CPUID (320 MiB for a 32 MiB L3 here). */
static size_t llc_from_sysfs(void)
{
    char seen[64][128];
    int nseen = 0, best_level = 0;
    size_t total = 0;
    for (int cpu = 0; cpu < 4096; cpu++) {
        char path[160], buf[128];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index0/level", cpu);
        if (read_line(path, buf, sizeof buf) < 0) { if (cpu > 0) break; else return 0; }
        for (int idx = 0; idx < 16; idx++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
            if (read_line(path, buf, sizeof buf) < 0) break;
            int level = atoi(buf);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, idx);
            if (read_line(path, buf, sizeof buf) == 0 && !strcmp(buf, "Instruction")) continue;
            if (level < best_level) continue;
            if (level > best_level) { best_level = level; total = 0; nseen = 0; }
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, idx);
            char key[128];
            if (read_line(path, key, sizeof key) < 0) snprintf(key, sizeof key, "cpu%d", cpu);
            int dup = 0;
            for (int i = 0; i < nseen && !dup; i++) dup = !strcmp(seen[i], key);
            if (dup || nseen >= 64) continue;
            snprintf(seen[nseen++], sizeof seen[0], "%s", key);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx);
            if (read_line(path, buf, sizeof buf) < 0) continue;
            char *end;
            unsigned long long v = strtoull(buf, &end, 10);
            if (*end == 'K') v <<= 10; else if (*end == 'M') v <<= 20; else if (*end == 'G') v <<= 30;
            total += (size_t)v;
        }
    }
    return total;
}

size_t vt_bw_llc_bytes(void)
{
    static size_t cached;
    if (cached) return cached;
    size_t v = llc_from_sysfs();
    if (!v) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        v = l3 > 0 ? (size_t)l3 : l2 > 0 ? (size_t)l2 : (size_t)32 << 20;
    }
    return cached = v;
}

int vt_bw_host_measure(size_t bytes, int trials, struct vt_bw_report *r)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = ncpu > 0 ? (ncpu > 1024 ? 1024 : (int)ncpu) : 1;
    struct host_ctx c = {.n = bytes / sizeof(double), .nthreads = nthreads};
    if (c.n < (size_t)nthreads) { vt_bw_note(r, "host DDR: array size too small"); return -1; }
    void *pa = NULL, *pb = NULL, *pc = NULL;
    size_t alloc = c.n * sizeof(double);
    const size_t huge = (size_t)2 << 20;
    if (posix_memalign(&pa, huge, alloc) || posix_memalign(&pb, huge, alloc) ||
        posix_memalign(&pc, huge, alloc)) {
        free(pa); free(pb); free(pc);
        vt_bw_note(r, "host DDR: cannot allocate 3 x %zu bytes; host rows skipped", alloc);
        return -1;
    }
    c.a = pa; c.b = pb; c.c = pc;
#ifdef MADV_HUGEPAGE
    /* Transparent huge pages where allowed: fewer first-touch faults and TLB misses. */
    madvise(pa, alloc, MADV_HUGEPAGE);
    madvise(pb, alloc, MADV_HUGEPAGE);
    madvise(pc, alloc, MADV_HUGEPAGE);
#endif
    struct host_worker *w = calloc((size_t)nthreads, sizeof *w);
    double *ms = calloc((size_t)trials, sizeof *ms);
    int started = 0, rc = -1;
    if (!w || !ms) { vt_bw_note(r, "host DDR: out of memory"); goto out_free; }
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.go, NULL);
    pthread_cond_init(&c.idle, NULL);
    for (; started < nthreads; started++) {
        w[started].ctx = &c;
        w[started].id = started;
        if (pthread_create(&w[started].tid, NULL, worker_main, &w[started])) break;
    }
    if (started == 0) { vt_bw_note(r, "host DDR: cannot start threads; host rows skipped"); goto out_sync; }
    c.nthreads = started;                     /* fewer threads than CPUs if creation failed */
    host_run(&c, OP_TOUCH);                   /* first touch, each thread its own slice */
    static const enum host_op ops[] = {OP_COPY, OP_TRIAD};
    static const char *const names[] = {"host_ddr_copy", "host_ddr_triad"};
    static const unsigned long long arrays[] = {2, 3};
    for (int k = 0; k < 2; k++) {
        host_run(&c, ops[k]);                 /* warm-up */
        for (int t = 0; t < trials; t++) ms[t] = host_run(&c, ops[k]);
        vt_bw_add(r, names[k], arrays[k] * (unsigned long long)alloc, ms, trials, 0);
    }
    r->host_threads = started;
    r->host_size = alloc;
    rc = 0;
    host_run(&c, OP_QUIT);
    for (int i = 0; i < started; i++) pthread_join(w[i].tid, NULL);
out_sync:
    pthread_cond_destroy(&c.go);
    pthread_cond_destroy(&c.idle);
    pthread_mutex_destroy(&c.mu);
out_free:
    free(w); free(ms);
    free(pa); free(pb); free(pc);
    return rc;
}
