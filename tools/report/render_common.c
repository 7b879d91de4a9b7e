/* render_common.c - helpers shared by the report renderers: escaping, times, copy totals. */
#include "report/render.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int by_copy_bytes(const void *x, const void *y, void *proc)
{
    const struct vt_proc *p = proc;
    const struct vt_site *a = &p->sites[*(const size_t *)x], *b = &p->sites[*(const size_t *)y];
    return a->copy_bytes < b->copy_bytes ? 1 : a->copy_bytes > b->copy_bytes ? -1 : strcmp(a->label, b->label);
}
static int by_copy_time(const void *x, const void *y, void *proc)
{
    const struct vt_proc *p = proc;
    const struct vt_site *a = &p->sites[*(const size_t *)x], *b = &p->sites[*(const size_t *)y];
    return a->copy_ns < b->copy_ns ? 1 : a->copy_ns > b->copy_ns ? -1 : strcmp(a->label, b->label);
}

long vt_copy_sites(const struct vt_proc *p, int by_time, size_t **out)
{
    *out = NULL;
    size_t n = 0, *idx = malloc((p->nsites ? p->nsites : 1) * sizeof *idx);
    if (!idx) return -1;
    for (size_t i = 0; i < p->nsites; i++)
        if (p->sites[i].copy_count && (!by_time || p->sites[i].copy_ns > 0)) idx[n++] = i;
    qsort_r(idx, n, sizeof *idx, by_time ? by_copy_time : by_copy_bytes, (void *)p);
    *out = idx;
    return (long)n;
}

struct vt_dirstat vt_dirstat(const struct vt_proc *p, enum vt_dir dir, int host)
{
    struct vt_dirstat d = { 0 };
    int64_t ns = 0;
    for (int h = 0; h < VT_HOST__COUNT; h++) {
        if (host != VT_HOST__COUNT && h != host) continue;
        const struct vt_xfer *x = &p->xfer[dir][h];
        vt_sat_add(&d.bytes, x->bytes); d.count += x->count; vt_sat_add(&d.sync_bytes, x->sync_bytes); d.sync_count += x->sync_count; ns += x->sync_ns;
    }
    d.seconds = (double)ns / 1e9;
    d.gbps = ns > 0 ? (double)d.sync_bytes / (double)ns : -1;   /* bytes/ns == GB/s */
    return d;
}

struct vt_dirstat vt_dirstat_all(struct vt_proc *const *procs, size_t n, enum vt_dir dir, int host)
{
    struct vt_dirstat t = { 0 };
    for (size_t i = 0; i < n; i++) {
        struct vt_dirstat d = vt_dirstat(procs[i], dir, host);
        vt_sat_add(&t.bytes, d.bytes); t.count += d.count; vt_sat_add(&t.sync_bytes, d.sync_bytes); t.sync_count += d.sync_count;
        t.seconds += d.seconds;
    }
    t.gbps = t.seconds > 0 ? (double)t.sync_bytes / t.seconds / 1e9 : -1;
    return t;
}

char *vt_fmt_findings(char *buf, size_t n, uint64_t errors, uint64_t warnings)
{
    snprintf(buf, n, "%llu error%s, %llu warning%s", (unsigned long long)errors, errors == 1 ? "" : "s",
             (unsigned long long)warnings, warnings == 1 ? "" : "s");
    return buf;
}

char *vt_note_text(char *buf, size_t n, const struct vt_note *x)
{
    /* host words are what a no-PTX struct mostly shows; freed or out-of-bounds ones are named as such */
    int one = x->words == 1;
    const char *what = x->host_words == x->words ? (one ? "a host address" : "host addresses")
                     : x->host_words ? "host, freed or out-of-bounds addresses"
                     : (one ? "a freed or out-of-bounds address" : "freed or out-of-bounds addresses");
    snprintf(buf, n, "%llu argument word%s inside by-value structs looked like %s; the image has no PTX, so %s not checked",
             (unsigned long long)x->words, one ? "" : "s", what, one ? "it was" : "they were");
    return buf;
}

char *vt_fmt_dur(char *buf, size_t n, double sec)
{
    static const struct { double below, scale; const char *unit; } units[] = {
        { 1e-6, 1e9, "ns" }, { 1e-3, 1e6, "\xc2\xb5s" }, { 1, 1e3, "ms" }, { 600, 1, "s" }, { 36000, 1.0 / 60, "min" },
    };
    double a = sec < 0 ? -sec : sec;
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (a >= units[k].below) continue;
        /* three digits: 999.7 ms rounds to 1000, which %g writes "1e+03": the next unit says it */
        char num[32];
        snprintf(num, sizeof num, "%.3g", sec * units[k].scale);
        if (strchr(num, 'e')) continue;
        snprintf(buf, n, "%s %s", num, units[k].unit);
        return buf;
    }
    snprintf(buf, n, "%.3g h", sec / 3600);
    return buf;
}

char *vt_fmt_when(char *buf, size_t n, const struct vt_proc *p, int64_t t)
{
    char d[32];
    vt_fmt_dur(d, sizeof d, (double)(t - p->t0) / 1e9);
    if (p->wall_ns > 0) { /* the start's own fraction of a second too: the combined view's clock */
        int64_t ns = p->wall_ns + (t - p->t0);
        time_t sec = (time_t)(ns / 1000000000ll);
        struct tm tm;
        localtime_r(&sec, &tm);
        snprintf(buf, n, "%02d:%02d:%02d.%03d (+%s)", tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (int)(ns % 1000000000ll / 1000000), d);
    } else snprintf(buf, n, "+%s", d);
    return buf;
}

char *vt_fmt_wall(char *buf, size_t n, int64_t ns)
{
    time_t sec = (time_t)(ns / 1000000000ll);
    struct tm tm;
    localtime_r(&sec, &tm);
    snprintf(buf, n, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ns % 1000000000ll / 1000000));
    return buf;
}

const char *vt_site_label(const struct vt_proc *p, int site)
{
    return site >= 0 && (size_t)site < p->nsites ? p->sites[site].label : "(unknown)";
}

size_t vt_peak_proc(struct vt_proc *const *procs, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++) if (procs[i]->peak > procs[best]->peak) best = i;
    return best;
}

const char *vtr_bytes_tmp(uint64_t x)
{
    static char b[16][32];
    static int i;
    i = (i + 1) % 16;
    return vtr_fmt_bytes(b[i], sizeof b[i], x);
}

const char *vt_incomplete_reason(char *buf, size_t n, const struct vt_proc *p)
{
    if (p->footer_dropped > 0 && p->footer_error[0])
        snprintf(buf, n, "the tracer stopped writing (%s) and dropped %lld events while the process ran on", p->footer_error,
                 (long long)p->footer_dropped);
    else if (p->footer_dropped > 0) snprintf(buf, n, "the tracer dropped %lld events", (long long)p->footer_dropped);
    else if (!p->has_footer) snprintf(buf, n, "no footer: the process died or called _exit");
    else return NULL;
    return buf;
}

/* Up to three sites copying through pageable memory in direction D2H (0 h2d, 1 d2h), by bytes. */
static size_t pageable_sites(struct vt_proc *const *procs, size_t np, int d2h, const struct vt_site **best)
{
    size_t n = 0;
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j < procs[i]->nsites; j++) {
            const struct vt_site *s = &procs[i]->sites[j];
            if (!s->pageable_bytes[d2h]) continue;
            for (size_t k = 0; k < 3; k++)
                if (k == n || s->pageable_bytes[d2h] > best[k]->pageable_bytes[d2h]) {
                    for (size_t m = 2; m > k; m--) best[m] = best[m - 1];
                    best[k] = s;
                    if (n < 3) n++;
                    break;
                }
        }
    return n;
}

/* The size bucket (floor log2; 64: size 0) half the copies of DIR are at or below; -1 without any. */
static int median_bucket(struct vt_proc *const *procs, size_t np, enum vt_dir dir, uint64_t *count)
{
    uint64_t total = 0, seen = 0;
    for (size_t i = 0; i < np; i++) for (int b = 0; b < 65; b++) total += procs[i]->copy_hist[dir][b];
    *count = total;
    if (!total) return -1;
    for (size_t i = 0; i < np; i++) seen += procs[i]->copy_hist[dir][64];   /* size 0 first */
    if (seen * 2 >= total) return 64;
    for (int b = 0; b < 64; b++) {
        for (size_t i = 0; i < np; i++) seen += procs[i]->copy_hist[dir][b];
        if (seen * 2 >= total) return b;
    }
    return 63;
}

size_t vt_transfer_verdicts(struct vt_proc *const *procs, size_t np, const struct vt_refbw *r, struct vt_verdict *out, size_t max)
{
    size_t n = 0;
    static const enum vt_dir hd[2] = { VT_DIR_H2D, VT_DIR_D2H };
    /* pageable below 80% of pinned: the machine's reference, else the traces' own pinned copies */
    for (int i = 0; i < 2 && n < max; i++) {
        struct vt_dirstat d = vt_dirstat_all(procs, np, hd[i], VT_HOST_PAGEABLE), pd = vt_dirstat_all(procs, np, hd[i], VT_HOST_PINNED);
        int pin = hd[i] == VT_DIR_H2D ? VT_REF_H2D_PINNED : VT_REF_D2H_PINNED;
        int from_ref = r && r->gbps[pin] > 0;
        double pinned = from_ref ? r->gbps[pin] : pd.gbps, achieved = d.gbps;
        /* asynchronous pageable copies have no host time of their own (PyTorch's .to("cuda")
         * without pin_memory: cudaMemcpyAsync, then a stream synchronisation): when they are
         * large enough to be bandwidth-bound, what the reference measured for pageable copies on
         * this machine stands for them */
        int untimed = d.count && !d.sync_count && d.bytes / d.count >= (1u << 20);
        if (untimed) achieved = from_ref ? r->gbps[hd[i] == VT_DIR_H2D ? VT_REF_H2D_PAGEABLE : VT_REF_D2H_PAGEABLE] : 0;
        if (achieved <= 0 || pinned <= 0 || achieved >= 0.8 * pinned) continue;
        struct vt_verdict *v = &out[n++];
        memset(v, 0, sizeof *v);
        v->kind = VT_V_PIN; v->dir = hd[i]; v->share = achieved / pinned; v->pinned_gbps = pinned; v->from_ref = from_ref;
        v->untimed = untimed;
        v->count = d.count;
        v->nsites = pageable_sites(procs, np, i, v->sites);
    }
    /* many small copies: each pays the call and DMA set-up latency, whatever the bandwidth */
    static const enum vt_dir all[3] = { VT_DIR_H2D, VT_DIR_D2H, VT_DIR_D2D };
    for (int i = 0; i < 3 && n < max; i++) {
        uint64_t count;
        int mb = median_bucket(procs, np, all[i], &count);
        if (count < 64 || mb < 0 || (mb != 64 && mb >= 16)) continue;
        struct vt_dirstat d = vt_dirstat_all(procs, np, all[i], VT_HOST__COUNT);
        struct vt_verdict *v = &out[n++];
        memset(v, 0, sizeof *v);
        v->kind = VT_V_BATCH; v->dir = all[i]; v->count = count;
        v->median_lo = mb == 64 ? 0 : 1ull << mb;
        v->median_hi = mb == 64 ? 0 : 2ull << mb;
        v->per_copy_s = d.sync_count && d.seconds > 0 ? d.seconds / (double)d.sync_count : 0;
    }
    /* a synchronous device-to-host copy made over and over from one line (reading a loss value
     * each step): each waits for all the GPU's work before it, so the host and GPU take turns.
     * Copies without a call stack may come from any number of lines: no verdict for them */
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j < procs[i]->nsites && n < max; j++) {
            const struct vt_site *s = &procs[i]->sites[j];
            if (s->d2h_sync_count < 16 || s->no_backtrace) continue;
            struct vt_verdict *v = &out[n++];
            memset(v, 0, sizeof *v);
            v->kind = VT_V_SYNC_LOOP; v->dir = VT_DIR_D2H; v->count = s->d2h_sync_count;
            v->sites[0] = s; v->nsites = 1;
        }
    /* device to device through the host (d2h from one GPU, then h2d of those bytes to another) */
    for (size_t i = 0; i < np; i++)
        for (size_t t = 0; t < procs[i]->nsites && n < max; t++) {   /* the "(no backtrace)" site too */
            const struct vt_site *s = &procs[i]->sites[t];
            if (!s->staged_count) continue;
            struct vt_verdict *v = &out[n++];
            memset(v, 0, sizeof *v);
            v->kind = VT_V_STAGED; v->dir = VT_DIR_H2D; v->count = s->staged_count;
            v->sites[0] = s; v->nsites = 1;
        }
    return n;
}

char *vt_verdict_text(char *buf, size_t n, const struct vt_verdict *x)
{
    char lo[32], hi[32], per[48] = "";
    unsigned long long c = (unsigned long long)x->count;
    const char *dir = vt_rd_dir_name(x->dir);
    switch (x->kind) {
    case VT_V_PIN:
        if (x->untimed)
            snprintf(buf, n, "pageable %s copies (asynchronous, so not timed here) run at about %.0f%% of pinned on this machine "
                     "(the reference's pageable against its pinned %.1f GB/s): pin the host buffer (cudaHostAlloc, or "
                     "cudaHostRegister on the existing one)", dir, 100.0 * x->share, x->pinned_gbps);
        else
            snprintf(buf, n, "pageable %s copies run at %.0f%% of pinned (%.1f GB/s%s): pin the host buffer (cudaHostAlloc, or "
                     "cudaHostRegister on the existing one)", dir, 100.0 * x->share, x->pinned_gbps,
                     x->from_ref ? ", the reference" : ", this trace's pinned copies");
        break;
    case VT_V_BATCH:
        snprintf(lo, sizeof lo, "%s", vtr_bytes_tmp(x->median_lo));
        snprintf(hi, sizeof hi, "%s", vtr_bytes_tmp(x->median_hi));
        if (x->per_copy_s > 0) {
            char d[32];
            snprintf(per, sizeof per, " (%s per synchronous copy)", vt_fmt_dur(d, sizeof d, x->per_copy_s));
        }
        if (x->median_hi == 0) snprintf(buf, n, "%llu %s copies, median size 0 B%s: per-call latency dominates; batch them into fewer, "
                                        "larger copies", c, dir, per);
        else snprintf(buf, n, "%llu %s copies, median size %s to %s%s: per-call latency dominates; batch them into fewer, larger copies",
                      c, dir, lo, hi, per);
        break;
    case VT_V_STAGED:
        snprintf(buf, n, "%llu %s another GPU's data through host memory (d2h from one device, then h2d to this one): copy device "
                 "to device (cudaMemcpyPeer, with cudaDeviceEnablePeerAccess where the GPUs can reach each other)", c,
                 c == 1 ? "copy carries" : "copies carry");
        break;
    case VT_V_SYNC_LOOP:
        snprintf(buf, n, "%llu d2h copies from one line that the host waits for, each until the GPU has finished its work: "
                 "keep the values on the GPU and read them back once after the loop, or copy with cudaMemcpyAsync into pinned "
                 "memory and synchronize once after it", c);
        break;
    }
    return buf;
}

int vt_transfer_ref(enum vt_dir dir, int host)
{
    switch (dir) {
    case VT_DIR_H2D: return host == VT_HOST_PAGEABLE ? VT_REF_H2D_PAGEABLE : VT_REF_H2D_PINNED;
    case VT_DIR_D2H: return host == VT_HOST_PAGEABLE ? VT_REF_D2H_PAGEABLE : VT_REF_D2H_PINNED;
    case VT_DIR_D2D: return VT_REF_D2D;
    case VT_DIR_H2H: return VT_REF_HOST_DDR;
    default: return -1;
    }
}

int vt_transfer_row(size_t i, enum vt_dir *dir, int *host)
{
    const size_t kinds = VT_HOST__COUNT;   /* each host memory kind (1 ..), then all */
    if (i < 2 * kinds) { *dir = i < kinds ? VT_DIR_H2D : VT_DIR_D2H; *host = (int)(i % kinds) + 1; return 1; }
    if (i < 2 * kinds + 2) { *dir = i == 2 * kinds ? VT_DIR_D2D : VT_DIR_H2H; *host = VT_HOST__COUNT; return 1; }
    return 0;
}

const char *vt_transfer_host_name(int host)
{
    return host == VT_HOST__COUNT ? "all" : vt_rd_host_name((enum vt_host)host);
}

size_t vt_vram_devices(const struct vt_proc *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->ndevices; i++) n += p->devices[i].peak > 0;
    return n;
}

const char *vt_reset_api(const struct vt_proc *p)
{
    for (size_t i = 1; i < p->nresets; i++)
        if (strcmp(p->resets[i].api, p->resets[0].api)) return "a device reset";
    return p->nresets ? p->resets[0].api : "a device reset";
}
