/* gen_trace.c - writes a synthetic vramtrace trace (docs/trace-format.md v1) for `make bench`.
 *
 * Usage: gen_trace OUT NEVENTS [MODULE...]
 * A realistic mix for a training loop: per 100 events about 62 launches, 14 copies, 8 allocs,
 * 8 frees (of live allocations, LIFO-ish with random picks), 4 memsets, 2 syncs, 1 NVTX push/pop
 * pair, a meminfo every 1000; 64 kernels, 4 threads, allocations and findings carry backtraces
 * (8-24 frames drawn from 256 distinct call stacks, as real programs allocate from few sites).
 * MODULE files (default: none) become `module` records whose spans cover the frames, so the report's
 * symbolizer does its real work. Deterministic (fixed seed); formats with no printf on the hot
 * path, so 10 million events take a few seconds. Prints "events bytes" on stdout.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NKERN 64
#define NSTACK 256
#define MAXLIVE 4096
#define NTID 4

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

static char *buf;
static size_t blen, bcap = 1 << 22;
static FILE *out;
static uint64_t total_bytes;

static void flush_buf(void)
{
    if (blen && fwrite(buf, 1, blen, out) != blen) { perror("gen_trace: write"); exit(1); }
    total_bytes += blen;
    blen = 0;
}
static void put(const char *s, size_t n)
{
    if (blen + n > bcap) flush_buf();
    memcpy(buf + blen, s, n);
    blen += n;
}
/* string literals only (sizeof) */
#define LIT(s) put(("" s), sizeof(s) - 1)
static void u64(uint64_t v)
{
    char t[20];
    int i = 20;
    do { t[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    put(t + i, (size_t)(20 - i));
}
static void i64(int64_t v) { if (v < 0) { LIT("-"); u64((uint64_t)-v); } else u64((uint64_t)v); }
static void hex(uint64_t v)
{
    static const char d[] = "0123456789abcdef";
    char t[20];
    int i = 20;
    t[--i] = '"';
    do { t[--i] = d[v & 15]; v >>= 4; } while (v);
    t[--i] = 'x'; t[--i] = '0'; t[--i] = '"';
    put(t + i, (size_t)(20 - i));
}
static void str(const char *s) { LIT("\""); put(s, strlen(s)); LIT("\""); }

struct stack { int n; uint64_t f[24]; };
static struct stack stacks[NSTACK];
static struct { uint64_t addr, size; int mem; } live[MAXLIVE];
static int nlive;
static uint64_t t_ns = 1000000000ull, next_addr = 0x200000000000ull;

static void common(const char *ev, const char *api, int tid, int res)
{
    t_ns += 200 + rnd() % 3000;
    LIT("{\"ev\":\""); put(ev, strlen(ev));
    LIT("\",\"t\":"); u64(t_ns);
    LIT(",\"dur\":"); u64(300 + rnd() % 5000);
    LIT(",\"tid\":"); u64(4242 + (uint64_t)tid);
    LIT(",\"api\":\""); put(api, strlen(api));
    LIT("\",\"res\":"); i64(res);
    LIT(",\"dev\":0");
}
static void bt(void)
{
    const struct stack *s = &stacks[rnd() % NSTACK];
    LIT(",\"bt\":[");
    for (int i = 0; i < s->n; i++) { if (i) LIT(","); hex(s->f[i]); }
    LIT("]");
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: gen_trace OUT NEVENTS [MODULE...]\n"); return 2; }
    uint64_t nev = strtoull(argv[2], NULL, 10);
    out = fopen(argv[1], "w");
    buf = malloc(bcap);
    if (!out || !buf) { perror("gen_trace"); return 1; }
    uint64_t emitted = 0;
    LIT("{\"ev\":\"header\",\"format\":\"vramtrace-trace\",\"version\":1,\"tracer\":\"0.1.0\",\"pid\":4242,"
        "\"ppid\":4241,\"program\":\"/bench/train\",\"argv\":[\"train\",\"--steps\",\"1000\"],\"t\":1000000000,"
        "\"wall_time\":1764680000,\"hostname\":\"bench\",\"rank\":{},\"page_size\":4096,"
        "\"backtraces\":true,\"checks\":\"record\"}\n");
    emitted++;
    /* modules: the given files (their sizes as spans) plus a fake main program when none given */
    int nmod = argc - 3 > 0 ? argc - 3 : 1;
    uint64_t mlo[64], mhi[64];
    if (nmod > 64) nmod = 64;
    for (int m = 0; m < nmod; m++) {
        struct stat st;
        const char *path = argc - 3 > 0 ? argv[3 + m] : "/bench/train";
        uint64_t size = argc - 3 > 0 && stat(path, &st) == 0 && st.st_size > 4096 ? (uint64_t)st.st_size : (1u << 20);
        mlo[m] = 0x7f0000000000ull + (uint64_t)m * 0x10000000ull;
        mhi[m] = mlo[m] + size;
        LIT("{\"ev\":\"module\",\"path\":"); str(path);
        LIT(",\"base\":"); hex(mlo[m]); LIT(",\"lo\":"); hex(mlo[m]); LIT(",\"hi\":"); hex(mhi[m]); LIT("}\n");
        emitted++;
    }
    LIT("{\"ev\":\"device\",\"t\":1000000100,\"dev\":0,\"name\":\"NVIDIA H200 (synthetic)\",\"total_bytes\":150754820096,"
        "\"cc\":\"9.0\",\"mem_clock_khz\":3201000,\"bus_width_bits\":6144,\"pageable_access\":0,\"sim\":false}\n");
    emitted++;
    for (int s = 0; s < NSTACK; s++) {
        stacks[s].n = 8 + (int)(rnd() % 17);
        for (int i = 0; i < stacks[s].n; i++) {
            int m = (int)(rnd() % (uint64_t)nmod);
            stacks[s].f[i] = mlo[m] + 0x1000 + rnd() % (mhi[m] - mlo[m] - 0x1000);
        }
    }
    for (int k = 0; k < NKERN; k++) {
        char name[96];
        snprintf(name, sizeof name, "_Z%dtrain_kernel_%02dPfPKfii", 14 + (k >= 10), k);
        LIT("{\"ev\":\"kernel\",\"id\":"); u64((uint64_t)k + 1);
        LIT(",\"name\":"); str(name);
        LIT(",\"params\":[[0,8],[8,8],[16,4],[20,4]],\"layout\":\"paraminfo\"}\n");
        emitted++;
    }
    uint64_t host = 0x55d0c0a00000ull, pinned = 0x7e0000000000ull;
    while (emitted < nev - 1) {
        int tid = (int)(rnd() % NTID);
        unsigned r = (unsigned)(rnd() % 1000);
        if (r < 620) {
            common("launch", "__cudaLaunchKernel", tid, 0);
            LIT(",\"k\":"); u64(1 + rnd() % NKERN);
            LIT(",\"grid\":["); u64(1 + rnd() % 4096); LIT(",1,1],\"block\":[256,1,1],\"shmem\":0,\"stream\":\"0x0\"}\n");
        } else if (r < 760) {
            int d2h = r & 1;
            uint64_t dev = nlive ? live[rnd() % (unsigned)nlive].addr : next_addr;
            uint64_t size = 4096u << (rnd() % 12);
            common("copy", "cudaMemcpy", tid, 0);
            LIT(",\"dst\":"); hex(d2h ? host : dev); LIT(",\"src\":"); hex(d2h ? dev : host);
            LIT(",\"size\":"); u64(size);
            if (d2h) LIT(",\"dir\":\"d2h\",\"host\":\"pageable\",\"async\":false,\"kind\":2}\n");
            else LIT(",\"dir\":\"h2d\",\"host\":\"pageable\",\"async\":false,\"kind\":1}\n");
        } else if (r < 840 || (r < 920 && nlive == 0)) {
            if (nlive == MAXLIVE) continue;
            uint64_t size = 256u << (rnd() % 16);
            int pin = rnd() % 16 == 0;
            common("alloc", pin ? "cudaMallocHost" : "cudaMalloc", tid, 0);
            uint64_t a = pin ? pinned : next_addr;
            if (pin) pinned += (size + 4095) & ~4095ull; else next_addr += (size + 255) & ~255ull;
            LIT(",\"addr\":"); hex(a); LIT(",\"size\":"); u64(size);
            if (pin) LIT(",\"mem\":\"pinned\""); else LIT(",\"mem\":\"device\"");
            bt();
            LIT("}\n");
            live[nlive].addr = a; live[nlive].size = size; live[nlive].mem = pin;
            nlive++;
        } else if (r < 920) {
            int i = rnd() % 4 ? nlive - 1 : (int)(rnd() % (unsigned)nlive);
            t_ns += 100;
            LIT("{\"ev\":\"free\",\"t\":"); u64(t_ns);
            LIT(",\"tid\":"); u64(4242 + (uint64_t)tid);
            if (live[i].mem) LIT(",\"api\":\"cudaFreeHost\""); else LIT(",\"api\":\"cudaFree\"");
            LIT(",\"dev\":0,\"addr\":"); hex(live[i].addr);
            LIT(",\"size\":"); u64(live[i].size);
            if (live[i].mem) LIT(",\"mem\":\"pinned\""); else LIT(",\"mem\":\"device\"");
            LIT(",\"res\":0           ,\"dur\":1200                }\n");
            live[i] = live[--nlive];
        } else if (r < 960) {
            uint64_t a = nlive ? live[rnd() % (unsigned)nlive].addr : next_addr;
            common("set", "cudaMemset", tid, 0);
            LIT(",\"addr\":"); hex(a); LIT(",\"size\":4096,\"value\":0,\"async\":false}\n");
        } else if (r < 980) {
            common("sync", rnd() & 1 ? "cudaDeviceSynchronize" : "cudaStreamSynchronize", tid, 0);
            LIT("}\n");
        } else if (r < 990) {
            LIT("{\"ev\":\"range_push\",\"t\":"); u64(t_ns += 50);
            LIT(",\"tid\":"); u64(4242 + (uint64_t)tid); LIT(",\"name\":\"step\"}\n");
            emitted++;
            LIT("{\"ev\":\"range_pop\",\"t\":"); u64(t_ns += 50000);
            LIT(",\"tid\":"); u64(4242 + (uint64_t)tid); LIT("}\n");
        } else if (r < 999) {
            common("meminfo", "cudaMemGetInfo", tid, 0);
            LIT(",\"free_bytes\":100000000000,\"total_bytes\":150754820096}\n");
        } else {
            t_ns += 10;
            LIT("{\"ev\":\"finding\",\"t\":"); u64(t_ns);
            LIT(",\"tid\":"); u64(4242 + (uint64_t)tid);
            LIT(",\"kind\":\"host_pointer\",\"severity\":\"error\",\"api\":\"__cudaLaunchKernel\",\"dev\":0,\"k\":3,\"arg\":0,"
                "\"offset\":0,\"value\":\"0x55d0c0a0b2a0\",\"class\":\"heap\",\"mapping\":\"[heap]\"");
            bt();
            LIT(",\"msg\":\"host pointer passed to kernel train_kernel_03, argument 0\"}\n");
        }
        emitted++;
    }
    LIT("{\"ev\":\"footer\",\"t\":"); u64(t_ns + 1000);
    LIT(",\"events\":"); u64(emitted + 1);
    LIT(",\"dropped\":0,\"live_bytes\":0,\"findings\":0}\n");
    emitted++;
    flush_buf();
    if (fclose(out) != 0) { perror("gen_trace: close"); return 1; }
    printf("%llu %llu\n", (unsigned long long)emitted, (unsigned long long)total_bytes);
    return 0;
}
