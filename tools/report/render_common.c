/* render_common.c - helpers shared by the report renderers: escaping, times, copy totals. */
#include "report/render.h"

#include <string.h>
#include <time.h>

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

char *vt_fmt_dur(char *buf, size_t n, double sec)
{
    double a = sec < 0 ? -sec : sec;
    if (a < 1e-6) snprintf(buf, n, "%.3g ns", sec * 1e9);
    else if (a < 1e-3) snprintf(buf, n, "%.3g \xc2\xb5s", sec * 1e6);
    else if (a < 1) snprintf(buf, n, "%.3g ms", sec * 1e3);
    else if (a < 600) snprintf(buf, n, "%.3g s", sec);
    else if (a < 36000) snprintf(buf, n, "%.3g min", sec / 60);
    else snprintf(buf, n, "%.3g h", sec / 3600);
    return buf;
}

char *vt_fmt_when(char *buf, size_t n, const struct vt_proc *p, int64_t t)
{
    char d[32];
    vt_fmt_dur(d, sizeof d, (double)(t - p->t0) / 1e9);
    if (p->wall_time > 0) {
        int64_t ns = p->wall_time * 1000000000ll + (t - p->t0);
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
