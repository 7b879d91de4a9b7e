/* results.c - the rows and notes of a bandwidth report (struct vt_bw_report): what the measuring
 * modules (gpu.c, host.c) hand their numbers to.  Calls nothing of the bandwidth module, so
 * calls go bandwidth.c -> gpu.c/host.c -> results.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"

void vt_bw_note(struct vt_bw_report *r, const char *fmt, ...)
{
    if (r->nnotes >= VT_BW_MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->nnotes++], sizeof r->notes[0], fmt, ap);
    va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double vt_bw_median(double *v, int n)
{
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

struct vt_bw_result *vt_bw_add(struct vt_bw_report *r, const char *name, unsigned long long bytes,
                               double *ms, int trials, int simulated)
{
    if (r->nresults >= VT_BW_MAX_RESULTS) return NULL;
    struct vt_bw_result *x = &r->results[r->nresults++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->bytes = bytes;
    x->trials = trials;
    x->median_ms = vt_bw_median(ms, trials);
    x->gbps = x->median_ms > 0 ? (double)bytes / (x->median_ms * 1e-3) / 1e9 : 0.0;
    x->simulated = simulated;
    if (r->progress) {
        char what[96];
        snprintf(what, sizeof what, "%s: %.1f GB/s (%d row%s done)", x->name, x->gbps, r->nresults, r->nresults == 1 ? "" : "s");
        r->progress(r->progress_ctx, what);
    }
    return x;
}
