/* render_text.c - the default report: a short summary (peak, OOM, errors) first, then the call
 * sites holding memory at the peak, as heaptrack_print does. */
#include "report/cuda_errors.h"
#include "report/render.h"

#include <stdlib.h>
#include <string.h>

/* bytes as text in one of 16 rotating buffers (several per printf are fine) */
static const char *B(uint64_t x)
{
    static char b[16][32];
    static int i;
    i = (i + 1) % 16;
    return vtr_fmt_bytes(b[i], sizeof b[i], x);
}
#define BUFS do { } while (0)

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

static void who(FILE *f, const struct vt_proc *p)
{
    fprintf(f, "%s", p->program[0] ? p->program : "(unknown program)");
    if (p->pid >= 0) fprintf(f, " (pid %lld", (long long)p->pid);
    if (p->rank >= 0) fprintf(f, ", rank %lld", (long long)p->rank);
    if (p->pid >= 0) fputc(')', f);
    if (p->hostname[0]) fprintf(f, " on %s", p->hostname);
}

/* "  [NVTX: step 1 > forward]" after a site whose allocations ran in that range (the
 * Python-visible context of a framework's allocator, when it pushes NVTX ranges); "" otherwise. */
static const char *nvtx_tag(const struct vt_proc *p, int site)
{
    static __thread char buf[1100];
    if (site < 0 || (size_t)site >= p->nsites || !p->sites[site].nvtx[0]) return "";
    snprintf(buf, sizeof buf, "  [NVTX: %s]", p->sites[site].nvtx);
    return buf;
}

/* The frames a site's "from" lines would show (not plumbing, not C start-up, not the site or
 * the caller its label names), at most 16; their count. */
static size_t from_frames(const struct vt_proc *p, int site, const struct vt_frame **out)
{
    const struct vt_site *s = &p->sites[site];
    size_t n = 0;
    int seen = 0, skip = strstr(s->label, " <- ") ? 2 : 1;
    for (size_t i = 0; i < s->nframes && n < 16; i++) {
        if (s->frames[i]->internal || s->frames[i]->startup) continue;
        if (seen++ < skip) continue;
        out[n++] = s->frames[i];
    }
    return n;
}

/* A site's "from" lines, at most MAX, leaving out its last TAIL frames (shown once for all). */
static void stack_lines(FILE *f, const struct vt_proc *p, int site, int max, size_t tail)
{
    const struct vt_frame *fr[16];
    size_t n = from_frames(p, site, fr);
    n = n > tail ? n - tail : 0;
    for (size_t i = 0; i < n && i < (size_t)max; i++) fprintf(f, "          from %s\n", fr[i]->label);
}

/* How many outermost "from" frames every one of the N sites H shares (0 with fewer than two). */
static size_t common_tail(const struct vt_proc *p, const struct vt_holding *h, size_t n, const struct vt_frame **tail)
{
    if (n < 2) return 0;
    const struct vt_frame *a[16];
    size_t na = from_frames(p, h[0].site, a), common = na;
    for (size_t k = 1; k < n && common; k++) {
        const struct vt_frame *b[16];
        size_t nb = from_frames(p, h[k].site, b), c = 0;
        while (c < common && c < nb && a[na - 1 - c] == b[nb - 1 - c]) c++;
        common = c;
    }
    for (size_t i = 0; i < common; i++) tail[i] = a[na - common + i];
    return common;
}

static void summary(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    BUFS;
    char w[64];
    fputs("vramtrace report: ", f);
    who(f, p);
    char dd[32];
    fprintf(f, "\n  trace %s: %llu events, %s%s\n", p->path, (unsigned long long)p->events,
            vt_fmt_dur(dd, sizeof dd, (double)(p->t_end - p->t0) / 1e9),
            p->has_footer ? "" : " (no footer: the process died or called _exit)");
    char why[400];
    if (p->footer_dropped && vt_incomplete_reason(why, sizeof why, p))
        fprintf(f, "  warning: trace incomplete: %s; the figures below cover what was written\n", why);
    fputs("\nSummary\n", f);
    fprintf(f, "  peak VRAM     %s", B(p->peak));
    if (p->peak) fprintf(f, " at %s", vt_fmt_when(w, sizeof w, p, p->peak_t));
    if (p->peak_ranges[0]) fprintf(f, " in range \"%s\"", p->peak_ranges);
    if (p->peak_pool_kept_free) fprintf(f, "; stream-ordered pools kept %s more reserved then", B(p->peak_pool_kept_free));
    fputc('\n', f);
    for (size_t i = 0; i < p->ndevices; i++) {
        const struct vt_device *d = &p->devices[i];
        if (!d->seen && !d->peak) continue;
        fprintf(f, "    dev %d%s%s%s: peak %s", d->dev, d->name ? " (" : "", d->name ? d->name : "", d->name ? ")" : "", B(d->peak));
        if (d->total_bytes) fprintf(f, " of %s (%.1f%%)", B(d->total_bytes), 100.0 * (double)d->peak / (double)d->total_bytes);
        if (d->sim) fputs(" [simulated]", f);
        fputc('\n', f);
        const struct vt_pool_view *pv = &d->pool;
        if (pv->reserved_peak)
            fprintf(f, "      pools: reserved at most %s at %s (stream-ordered; %s of it kept free at the device's peak)\n",
                    B(pv->reserved_peak), vt_fmt_when(w, sizeof w, p, pv->reserved_peak_t), B(pv->kept_free_at_peak));
        const struct vt_driver_view *v = &d->driver;
        if (v->samples) {
            fprintf(f, "      driver: %s used at the last of %llu queries, %s of it not allocated by the program",
                    B(v->last_used), (unsigned long long)v->samples, B(v->last_unattributed));
            if (v->max_unattributed > v->last_unattributed)
                fprintf(f, " (most: %s at %s)", B(v->max_unattributed), vt_fmt_when(w, sizeof w, p, v->max_t));
            fputc('\n', f);
        }
    }
    fprintf(f, "  OOM           %llu allocation%s failed for lack of memory", (unsigned long long)p->oom_count, p->oom_count == 1 ? "" : "s");
    if (p->oom_recovered)
        fprintf(f, ", %llu of them retried successfully", (unsigned long long)p->oom_recovered);
    if (p->failed_allocs > p->oom_count)
        fprintf(f, " (%llu more failed otherwise: see failed calls)", (unsigned long long)(p->failed_allocs - p->oom_count));
    fputc('\n', f);
    fprintf(f, "  leaked        %s in %llu allocation%s%s\n", B(p->leak_bytes), (unsigned long long)p->leak_count,
            p->leak_count == 1 ? "" : "s", p->has_footer && !p->footer_dropped ? "" : " (live when the trace ended)");
    int first = 1;
#define VT_X(id, word) \
    if (p->leak_kind_count[VT_MEM_##id]) { \
        fprintf(f, "%s%llu %s allocation%s (%s)", first ? "    not freed:  " : ", ", (unsigned long long)p->leak_kind_count[VT_MEM_##id], \
                word, p->leak_kind_count[VT_MEM_##id] == 1 ? "" : "s", B(p->leak_kind_bytes[VT_MEM_##id])); \
        first = 0; \
    }
    VT_LEAK_KINDS(VT_X)
#undef VT_X
    if (!first) fputc('\n', f);
    char fs[96];
    fprintf(f, "  findings      %s\n", vt_fmt_findings(fs, sizeof fs, p->finding_errors, p->finding_warnings));
    if (p->sass_words)
        fprintf(f, "  settled       %llu noted word%s read in the kernels' SASS (%s): %llu used as %s, %llu not\n",
                (unsigned long long)p->sass_words, p->sass_words == 1 ? "" : "s", p->sass_tool, (unsigned long long)p->sass_findings,
                p->sass_findings == 1 ? "an address (now a finding)" : "addresses (now findings)",
                (unsigned long long)(p->sass_words - p->sass_findings));
    if (p->nnotes)
        fprintf(f, "  notes         %zu kernel%s with argument words nothing could check (no PTX): not findings, see Notes\n",
                p->nnotes, p->nnotes == 1 ? "" : "s");
    if (p->nnotes && !p->sass_tool)
        fprintf(f, "                (the CUDA toolkit's nvdisasm settles them from the kernels' SASS: put it on PATH or set VRAMTRACE_NVDISASM)\n");
    else if (p->sass_unsettled)
        fprintf(f, "                (%zu kernel%s not settled from SASS: %s)\n", p->sass_unsettled, p->sass_unsettled == 1 ? "" : "s", p->sass_why);
    fprintf(f, "  failed calls  %llu", (unsigned long long)p->error_count);
    for (size_t i = 0; i < p->nerrors && i < 6; i++) {
        const char *nm = vt_cuda_error_name(p->errors[i].api, p->errors[i].res);
        fprintf(f, "%s%s -> %s (%lld) x%llu", i ? ", " : ": ", p->errors[i].api, nm ? nm : "error", (long long)p->errors[i].res,
                (unsigned long long)p->errors[i].count);
    }
    fputc('\n', f);
    for (size_t i = 0; i < p->nresets; i++) {
        const struct vt_reset *r = &p->resets[i];
        fprintf(f, "  %s %s dev %d at %s: %llu allocation%s (%s of VRAM) freed\n", i ? "             " : "reset        ",
                r->api, r->dev, vt_fmt_when(w, sizeof w, p, r->t), (unsigned long long)r->count, r->count == 1 ? "" : "s", B(r->bytes));
    }
    if (p->reset_count > p->nresets)
        fprintf(f, "                %llu more resets\n", (unsigned long long)(p->reset_count - p->nresets));
    fprintf(f, "  allocations   %llu (%s), %llu frees\n", (unsigned long long)p->alloc_count, B(p->alloc_bytes),
            (unsigned long long)p->free_count);
    if (p->pauses)
        fprintf(f, "  paused        %llu time%s, %s: %llu call%s not recorded (copies, sets, launches, syncs)%s\n",
                (unsigned long long)p->pauses, p->pauses == 1 ? "" : "s", vt_fmt_dur(dd, sizeof dd, (double)p->paused_ns / 1e9),
                (unsigned long long)p->pause_skipped, p->pause_skipped == 1 ? "" : "s",
                p->pause_depth > 0 ? "; still paused when the trace ended" : "");
    if (p->managed_peak) fprintf(f, "  managed       peak %s (not counted as VRAM)\n", B(p->managed_peak));
    if (p->host_peak) fprintf(f, "  pinned host   peak %s (host memory, not VRAM)\n", B(p->host_peak));
    if (p->warnings) fprintf(f, "  warnings      %ld (damaged records dropped)\n", p->warnings);
    if (p->stale_modules)
        fprintf(f, "  warning: %s changed since the trace (not the build that ran) and no matching file was found\n"
                   "           (VRAMTRACE_DEBUGINFO_DIR or /usr/lib/debug/.build-id): its frames are shown as offsets\n", p->stale_modules);
    if (p->missing_modules)
        fprintf(f, "  warning: %s not found (moved or deleted since the trace) and no file with its build-id either\n"
                   "           (VRAMTRACE_DEBUGINFO_DIR or /usr/lib/debug/.build-id): its frames are shown as offsets\n", p->missing_modules);
    if (p->torch_backend && !strcmp(p->torch_backend, "cudaMallocAsync"))
        fprintf(f, "  note          PyTorch allocated each tensor with cudaMallocAsync (backend:cudaMallocAsync%s): the sites\n"
                   "                are the lines that allocated tensors; memory the driver's pool keeps after frees is counted apart\n",
                p->torch_tensors ? ", set by run --torch-tensors" : "");
    else if (p->caching_allocator) {
        fprintf(f, "  note          %s allocated here: the tracer sees the segments it reserves from CUDA, not the\n"
                   "                tensors inside them (the peak is its reserved memory, not what tensors used)\n", p->caching_allocator);
        if (p->torch_backend && p->torch_tensors)
            fprintf(f, "                (run --torch-tensors was given, but no allocation was stream-ordered: this PyTorch did not\n"
                       "                take backend:cudaMallocAsync from PYTORCH_CUDA_ALLOC_CONF)\n");
        else if (p->torch_backend)
            fprintf(f, "                `vramtrace run --torch-tensors` makes each tensor an allocation of its own, named by its line\n");
    }
    if (p->duplicate_allocs)
        fprintf(f, "  warning: %llu allocation%s recorded where one was still live (first: line %ld, 0x%llx): "
                   "a free missing from the trace; the older allocation is not counted after it\n",
                (unsigned long long)p->duplicate_allocs, p->duplicate_allocs == 1 ? "" : "s", p->duplicate_line,
                (unsigned long long)p->duplicate_addr);
    (void)o;
}

static void ooms(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    BUFS;
    char w[64];
    for (size_t i = 0; i < p->nooms && i < (size_t)o->top; i++) {
        const struct vt_oom *x = &p->ooms[i];
        fprintf(f, "\nOOM: %s of %s failed at %s", x->api, B(x->requested), vt_fmt_when(w, sizeof w, p, x->t));
        if (x->dev >= 0) fprintf(f, " on dev %d", x->dev);
        const char *nm = vt_cuda_error_name(x->api, x->res);
        fprintf(f, " (%s %lld); live %s", nm ? nm : "error", (long long)x->res, B(x->dev >= 0 ? x->live_dev : x->live));
        if (x->dev >= 0 && x->live_dev != x->live) fprintf(f, " on dev %d (%s in the process)", x->dev, B(x->live));
        if (x->has_free) {
            fprintf(f, "; driver free %s", B(x->free_bytes));
            if (x->total_bytes) fprintf(f, " of %s", B(x->total_bytes));
            fprintf(f, ", %s used but not allocated by the program", B(x->unattributed));
        }
        if (x->pool_kept_free) fprintf(f, "; stream-ordered pools kept %s free", B(x->pool_kept_free));
        fputc('\n', f);
        fprintf(f, "  requested at: %s\n", vt_site_label(p, x->site));
        stack_lines(f, p, x->site, 4, 0);
        if (x->recovered)
            fprintf(f, "  recovered:    the same size succeeded from this thread at %s with %s less live, at %s\n",
                    vt_fmt_when(w, sizeof w, p, x->recovered_t), B(x->freed_before_retry), vt_site_label(p, x->recovered_site));
        else if (p->oom_recovered)
            fputs("  not recovered: no later allocation of this size from this thread succeeded\n", f);
        if (x->ranges[0]) fprintf(f, "  in range:     %s\n", x->ranges);
        for (size_t j = 0; j < x->nholders && j < (size_t)o->top; j++)
            fprintf(f, "  %s %10s %s [%llu alloc%s]%s\n", j ? "        " : "held by:", B(x->holders[j].bytes),
                    vt_site_label(p, x->holders[j].site), (unsigned long long)x->holders[j].count,
                    x->holders[j].count == 1 ? "" : "s", nvtx_tag(p, x->holders[j].site));
        if (!x->nholders && x->holders) fputs("  held by:      nothing (no VRAM was live)\n", f);
    }
    if (p->oom_count > (uint64_t)o->top && p->nooms > (size_t)o->top)
        fprintf(f, "  ... and %llu more failed allocations\n", (unsigned long long)(p->oom_count - (uint64_t)o->top));
}

/* Each failed call by (call, result): how often, and where the first one was called from (the
 * summary line has the counts only). */
static void failed_calls(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    if (!p->nerrors) return;
    char w[64];
    fputs("\nFailed calls (each call and result; where the first one came from):\n", f);
    for (size_t i = 0; i < p->nerrors && i < (size_t)o->top; i++) {
        const struct vt_error *e = &p->errors[i];
        const char *nm = vt_cuda_error_name(e->api, e->res);
        fprintf(f, "  %s -> %s (%lld) x%llu, first at %s\n", e->api, nm ? nm : "error", (long long)e->res,
                (unsigned long long)e->count, vt_fmt_when(w, sizeof w, p, e->first_t));
        fprintf(f, "    at: %s\n", vt_site_label(p, e->site));
        stack_lines(f, p, e->site, 4, 0);
    }
    if (p->nerrors > (size_t)o->top) fprintf(f, "  ... and %zu more\n", p->nerrors - (size_t)o->top);
}

/* vramtrace_snapshot(): live VRAM at each, the change since the one before, and who held it */
static void snapshots(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    if (!p->nsnapshots) return;
    fprintf(f, "\nSnapshots (vramtrace_snapshot; live VRAM and the sites holding it):\n");
    for (size_t i = 0; i < p->nsnapshots; i++) {
        char w[64];
        const struct vt_snapshot *s = &p->snapshots[i];
        fprintf(f, "  \"%s\" at %s: %s live", s->label, vt_fmt_when(w, sizeof w, p, s->t), B(s->live));
        if (s->pool_kept_free) fprintf(f, " (+%s kept free by stream-ordered pools)", B(s->pool_kept_free));
        if (i) {
            const struct vt_snapshot *b = &p->snapshots[i - 1];
            if (s->live == b->live) fprintf(f, ", no change since \"%s\"", b->label);
            else fprintf(f, ", %c%s since \"%s\"", s->live > b->live ? '+' : '-',
                         B(s->live > b->live ? s->live - b->live : b->live - s->live), b->label);
        }
        fputc('\n', f);
        for (size_t j = 0; j < s->nholders && j < (size_t)o->top; j++)
            fprintf(f, "    %10s %s [%llu alloc%s]\n", B(s->holders[j].bytes), vt_site_label(p, s->holders[j].site),
                    (unsigned long long)s->holders[j].count, s->holders[j].count == 1 ? "" : "s");
        if (s->nholders > (size_t)o->top) fprintf(f, "    ... %zu more sites\n", s->nholders - (size_t)o->top);
    }
    if (p->snapshot_count > p->nsnapshots)
        fprintf(f, "  ... and %llu more snapshots\n", (unsigned long long)(p->snapshot_count - p->nsnapshots));
}

/* How live VRAM moves from step to step (analysis.h's vt_growth): a few lines. */
static void growth(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    const struct vt_growth *g = &p->growth;
    if (g->kind == VT_GROWTH_NONE) return;
    fputs("\nGrowth (live VRAM at the end of each step):", f);
    if (g->kind == VT_GROWTH_FLAT) {
        fprintf(f, " flat over %zu steps (they wobble by %s)\n", p->steps.nlist, B(g->wobble_bytes));
        return;
    }
    if (g->kind == VT_GROWTH_WARMUP) {
        fprintf(f, " a warm-up: grew %s over steps 1-%zu, then stopped growing\n", B(g->warmup_bytes), g->warmup_steps);
        return;
    }
    fprintf(f, " growing, +%s per step over steps %zu-%zu", B((uint64_t)g->rate_bytes), g->window_first, g->window_last);
    fprintf(f, g->nsites ? "; the sites whose live bytes rise step after step:\n" : "\n");
    for (size_t i = 0; i < g->nsites && i < (size_t)o->top; i++)
        fprintf(f, "  %10s per step  %s (rose in %llu of %zu steps)\n", B((uint64_t)(g->sites[i].bytes_per_step > 0 ? g->sites[i].bytes_per_step : 0)),
                vt_site_label(p, g->sites[i].site), (unsigned long long)g->sites[i].rises, g->window_last - g->window_first + 1);
    if (g->has_forecast) {
        char d0[32];
        fprintf(f, "  forecast: device %d runs out at step %llu, about %s after the trace's last step, at +%s per step "
                   "(a step's peak reaching %s)\n", g->forecast_dev, (unsigned long long)g->forecast_step,
                vt_fmt_dur(d0, sizeof d0, g->forecast_seconds), B((uint64_t)g->rate_bytes), B(g->capacity_bytes));
    }
}

/* The steps found (analysis.h's vt_steps): how, how many, how long, and each step's live VRAM at
 * its start and its peak (the first and last few when there are many). */
static void steps(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    const struct vt_steps *s = &p->steps;
    if (s->source == VT_STEPS_NONE || !s->nlist) return;
    char d0[32], d1[32], d2[32], d3[32];
    fprintf(f, "\nSteps: %llu, ", (unsigned long long)s->count);
    if (s->source == VT_STEPS_API) fputs("from the program's vramtrace_step() calls", f);
    else if (s->source == VT_STEPS_NVTX) fprintf(f, "from the NVTX range \"%s\"", s->name);
    else fprintf(f, "from a period in the calls the tracer always writes (%s)", s->name);
    fprintf(f, "; %s each on average (min %s, max %s), %s in all\n",
            vt_fmt_dur(d0, sizeof d0, (double)s->total_ns / 1e9 / (double)s->nlist), vt_fmt_dur(d1, sizeof d1, (double)s->min_ns / 1e9),
            vt_fmt_dur(d2, sizeof d2, (double)s->max_ns / 1e9), vt_fmt_dur(d3, sizeof d3, (double)s->total_ns / 1e9));
    if (!s->live_known) { fputs("  (live VRAM per step unknown: the report ran out of memory for it)\n", f); return; }
    const struct vt_step *a = &s->list[0], *z = &s->list[s->nlist - 1];
    fprintf(f, "  live VRAM at the start: %s (step 1) -> %s (step %zu); highest peak %s (step %zu)\n", B(a->live_start),
            B(z->live_start), s->nlist, B(s->max_peak), s->max_peak_step);
    fprintf(f, "  %8s  %14s  %10s  %13s  %10s\n", "step", "start (trace)", "duration", "live at start", "peak");
    size_t half = o->top > 1 ? (size_t)o->top / 2 : 1;
    for (size_t i = 0; i < s->nlist; i++) {
        if (s->nlist > 2 * half && i == half) {
            fprintf(f, "  ... %zu more steps\n", s->nlist - 2 * half);
            i = s->nlist - half;
        }
        const struct vt_step *e = &s->list[i];
        char at[40];
        snprintf(at, sizeof at, "+%s", vt_fmt_dur(d1, sizeof d1, (double)(e->t - p->t0) / 1e9));
        fprintf(f, "  %8zu  %14s  %10s  %13s  %10s\n", i + 1, at, vt_fmt_dur(d0, sizeof d0, (double)e->dur / 1e9),
                B(e->live_start), B(e->peak));
    }
}

/* One row of sites holding memory at a peak: bytes, share of TOTAL, allocations, site, NVTX range. */
static void holding_row(FILE *f, const struct vt_proc *p, const struct vt_holding *h, uint64_t total)
{
    BUFS;
    fprintf(f, "  %10s %5.1f%% %6llu alloc%s  %s%s\n", B(h->bytes), total ? 100.0 * (double)h->bytes / (double)total : 0,
            (unsigned long long)h->count, h->count == 1 ? " " : "s", vt_site_label(p, h->site), nvtx_tag(p, h->site));
}

/* A process using several GPUs: what filled each one at its own peak (the process peak is the
 * sum over devices at one moment, which need not be any device's worst). */
static void device_peaks(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    BUFS;
    if (vt_vram_devices(p) < 2) return;
    for (size_t i = 0; i < p->ndevices; i++) {
        const struct vt_device *d = &p->devices[i];
        if (!d->peak) continue;
        char w[64];
        fprintf(f, "\nPeak on dev %d: %s at %s; top call sites there:\n", d->dev, B(d->peak), vt_fmt_when(w, sizeof w, p, d->peak_t));
        for (size_t k = 0; k < d->npeak_sites && k < (size_t)o->top; k++) holding_row(f, p, &d->peak_sites[k], d->peak);
        if (d->npeak_sites > (size_t)o->top) fprintf(f, "  ... %zu more sites\n", d->npeak_sites - (size_t)o->top);
    }
}

static void sites(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    BUFS;
    if (!p->npeak_sites) return;
    fprintf(f, "\nPeak: %s live; top call sites at the peak:\n", B(p->peak));
    const struct vt_frame *tails[16];
    size_t nshown = p->npeak_sites < (size_t)o->top ? p->npeak_sites : (size_t)o->top;
    size_t tail = common_tail(p, p->peak_sites, nshown, tails);   /* frames under every site: printed once */
    for (size_t i = 0; i < nshown; i++) {
        holding_row(f, p, &p->peak_sites[i], p->peak);
        stack_lines(f, p, p->peak_sites[i].site, 4, tail);
    }
    for (size_t i = 0; i < tail; i++) fprintf(f, "  %s %s\n", i ? "                            " : "every site above called from", tails[i]->label);
    if (p->npeak_sites > (size_t)o->top) fprintf(f, "  ... %zu more sites\n", p->npeak_sites - (size_t)o->top);
    device_peaks(f, p, o);

    fputs("\nLargest allocations:\n", f);
    /* identical rows (size, kind, call, site) once, with their count: "5 x 160.00 MiB"; the
     * counts padded to one width so the sizes stay in a column */
    uint8_t seen[VT_AN_MAX_LARGEST] = { 0 };
    size_t first[VT_AN_MAX_LARGEST], same[VT_AN_MAX_LARGEST], rows = 0;
    int cw = 0;
    for (size_t i = 0; i < p->nlargest && rows < (size_t)o->top; i++) {
        if (seen[i]) continue;
        const struct vt_largest *l = &p->largest[i];
        size_t k = 1;
        for (size_t j = i + 1; j < p->nlargest; j++) {
            const struct vt_largest *m = &p->largest[j];
            if (m->size == l->size && m->mem == l->mem && m->site == l->site && !strcmp(m->api, l->api)) { seen[j] = 1; k++; }
        }
        if (k > 1) { int w = snprintf(NULL, 0, "%zu \xc3\x97 ", k) - 1; cw = w > cw ? w : cw; }   /* x is 2 bytes, 1 column */
        first[rows] = i; same[rows++] = k;
    }
    for (size_t r = 0; r < rows; r++) {
        const struct vt_largest *l = &p->largest[first[r]];
        char w[64], cnt[32] = "";
        if (same[r] > 1) snprintf(cnt, sizeof cnt, "%zu \xc3\x97 ", same[r]);
        int pad = cw - (same[r] > 1 ? (int)strlen(cnt) - 1 : 0);
        fprintf(f, "  %*s%s%10s %-8s %-18s %s%s  %s\n", pad, "", cnt, B(l->size), vt_rd_mem_name(l->mem), l->api, same[r] > 1 ? "first " : cw ? "      " : "",
                vt_fmt_when(w, sizeof w, p, l->t), vt_site_label(p, l->site));
    }

    /* churn: sites by number of allocations */
    fputs("\nAllocation churn (sites by number of allocations):\n", f);
    size_t shown = 0;
    uint8_t *done = calloc(p->nsites ? p->nsites : 1, 1);
    while (done && shown < (size_t)o->top) {
        size_t best = p->nsites;
        for (size_t i = 0; i < p->nsites; i++)
            if (!done[i] && p->sites[i].alloc_count && (best == p->nsites || p->sites[i].alloc_count > p->sites[best].alloc_count)) best = i;
        if (best == p->nsites) break;
        done[best] = 1;
        fprintf(f, "  %8llu alloc%s %10s total  %s\n", (unsigned long long)p->sites[best].alloc_count,
                p->sites[best].alloc_count == 1 ? " " : "s", B(p->sites[best].alloc_bytes), p->sites[best].label);
        shown++;
    }
    free(done);
}

static void ranges(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    if (!p->nranges) return;
    fputs("\nRanges (NVTX; peak = live VRAM while open; nested ranges count in the enclosing ones):\n", f);
    fprintf(f, "  %10s %8s %10s %8s %10s  %s\n", "peak", "allocs", "bytes", "frees", "freed", "range");
    for (size_t i = 0; i < p->nranges && i < (size_t)o->top; i++) {
        const struct vt_range *r = &p->ranges[i];
        fprintf(f, "  %10s %8llu %10s %8llu %10s  %s\n", B(r->peak_bytes), (unsigned long long)r->alloc_count,
                B(r->alloc_bytes), (unsigned long long)r->free_count, B(r->free_bytes), r->name);
    }
    if (p->nranges > (size_t)o->top) fprintf(f, "  ... %zu more ranges\n", p->nranges - (size_t)o->top);
}

static void leaks(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    BUFS;
    if (!p->leak_bytes && !p->host_leak_bytes && !p->managed_leak_bytes && !p->reset_leak_count && !p->reset_leak_managed) return;
    fprintf(f, "\nLeaks (%s, no successful free): %s VRAM in %llu allocations", p->has_footer && !p->footer_dropped ? "at exit" : "live at end of trace",
            B(p->leak_bytes), (unsigned long long)p->leak_count);
    if (p->managed_leak_bytes) fprintf(f, ", %s managed", B(p->managed_leak_bytes));
    if (p->host_leak_bytes) fprintf(f, ", %s pinned host", B(p->host_leak_bytes));
    fputc('\n', f);
    struct vt_merged_site *m = NULL;
    struct vt_proc *one = (struct vt_proc *)p;
    long n = vt_merge_sites(&one, 1, 1, &m);
    for (long i = 0; i < n && i < o->top; i++)
        fprintf(f, "  %10s %6llu alloc%s  %s\n", B(m[i].bytes), (unsigned long long)m[i].count, m[i].count == 1 ? " " : "s", m[i].label);
    free(m);
    if (!p->reset_leak_count && !p->reset_leak_managed) return;
    /* Compute Sanitizer calls these leaked; the reset did free them: a line of their own, outside
     * the total above (docs/report.md) */
    fprintf(f, "  released by %s, never freed by the program (not in the total): %s VRAM in %llu allocation%s",
            vt_reset_api(p), B(p->reset_leak_bytes), (unsigned long long)p->reset_leak_count, p->reset_leak_count == 1 ? "" : "s");
    if (p->reset_leak_managed) fprintf(f, ", %s managed", B(p->reset_leak_managed));
    fputc('\n', f);
    m = NULL;
    n = vt_merge_sites(&one, 1, 2, &m);
    for (long i = 0; i < n && i < o->top; i++)
        fprintf(f, "    %10s %6llu alloc%s  %s\n", B(m[i].bytes), (unsigned long long)m[i].count, m[i].count == 1 ? " " : "s", m[i].label);
    free(m);
}

/* Achieved against the reference measured on the machine: "= 25% of h2d_pinned 22.7 GB/s". */
static void ref_line(FILE *f, const struct vt_refbw *r, int id, double gbps)
{
    if (!r || r->gbps[id] <= 0) return;
    if (gbps > 0) fprintf(f, " = %.0f%% of %s %.1f GB/s", 100.0 * gbps / r->gbps[id], vt_ref_name((enum vt_ref_id)id), r->gbps[id]);
    else fprintf(f, "  (reference %s %.1f GB/s)", vt_ref_name((enum vt_ref_id)id), r->gbps[id]);
}

static void transfers(FILE *f, struct vt_proc *const *procs, size_t np, const struct vt_render_opts *o)
{
    BUFS;
    enum vt_dir dir;
    int h, any = 0;
    for (size_t row = 0; vt_transfer_row(row, &dir, &h); row++) any |= vt_dirstat_all(procs, np, dir, h).count != 0;
    if (!any) return;
    const struct vt_refbw *r = o->ref;
    struct vt_verdict vs[16];
    char vb[512];
    size_t nv = vt_transfer_verdicts(procs, np, r, vs, 16);
    fputs("\nTransfers (achieved = bytes / host time of synchronous copies):\n", f);
    for (size_t row = 0; vt_transfer_row(row, &dir, &h); row++) {
        struct vt_dirstat d = vt_dirstat_all(procs, np, dir, h);
        if (!d.count) continue;
        fprintf(f, "  %-4s %-9s %10s in %6llu cop%s", vt_rd_dir_name(dir), vt_transfer_host_name(h), B(d.bytes), (unsigned long long)d.count,
                d.count == 1 ? "y" : "ies");
        char ds[32];
        if (d.gbps >= 0) fprintf(f, ", %s, %.2f GB/s", vt_fmt_dur(ds, sizeof ds, d.seconds), d.gbps);
        else fputs(", asynchronous only", f);
        int ref = vt_transfer_ref(dir, h);
        if (ref >= 0) ref_line(f, r, ref, d.gbps);
        fputc('\n', f);
        for (size_t v = 0; v < nv; v++) {
            const struct vt_verdict *x = &vs[v];
            if (x->kind != VT_V_PIN || x->dir != dir || h != VT_HOST_PAGEABLE) continue;
            fprintf(f, "       -> verdict: %s", vt_verdict_text(vb, sizeof vb, x));
            for (size_t k = 0; k < x->nsites; k++) fprintf(f, "%s%s", k ? "\n            " : "\n       at:  ", x->sites[k]->label);
            fputc('\n', f);
        }
    }
    for (size_t v = 0; v < nv; v++) {
        const struct vt_verdict *x = &vs[v];
        if (x->kind == VT_V_PIN) continue;   /* under its row above */
        fprintf(f, "  -> verdict: %s\n", vt_verdict_text(vb, sizeof vb, x));
        if (x->kind != VT_V_BATCH) fprintf(f, "       at:  %s\n", x->sites[0]->label);
    }
    if (r && r->pcie_gbps > 0)
        fprintf(f, "  PCIe gen %d x%d: theoretical %.1f GB/s per direction\n", r->pcie_gen, r->pcie_width, r->pcie_gbps);
    else if (!r)
        fputs("  (no reference: `vramtrace bandwidth --json > ref.json` on this machine, then `report --bandwidth ref.json`)\n", f);
}

/* Where the program copies from: sites by bytes, then by host time of their synchronous copies. */
static void copy_sites(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    BUFS;
    for (int by_time = 0; by_time < 2; by_time++) {
        size_t *idx = NULL;
        long n = vt_copy_sites(p, by_time, &idx);
        const char *by = by_time ? "host time of synchronous copies" : "bytes";
        if (n < 0) fprintf(f, "\nCopy sites (by %s): unknown (the report ran out of memory for them)\n", by);
        if (n > 0) fprintf(f, "\nCopy sites (by %s):\n", by);
        for (long k = 0; k < n && k < o->top; k++) {
            const struct vt_site *s = &p->sites[idx[k]];
            char d[32];
            fprintf(f, "  %10s %6llu cop%s %9s", B(s->copy_bytes), (unsigned long long)s->copy_count, s->copy_count == 1 ? "y  " : "ies",
                    s->copy_ns ? vt_fmt_dur(d, sizeof d, (double)s->copy_ns / 1e9) : "async");
            char pg[40] = "";
            if (s->pageable_count) snprintf(pg, sizeof pg, "%llu pageable", (unsigned long long)s->pageable_count);
            fprintf(f, "  %-14s  %s\n", pg, s->label);
        }
        free(idx);
    }
}

static void findings(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    if (!p->finding_count) return;
    char fs[96];
    vt_fmt_findings(fs, sizeof fs, p->finding_errors, p->finding_warnings);
    if (p->nfindings < p->finding_count && p->nfindings < VT_AN_MAX_FINDINGS) /* repeats folded */
        fprintf(f, "\nFindings (%s; %zu distinct):\n", fs, p->nfindings);
    else
        fprintf(f, "\nFindings (%s):\n", fs);
    for (size_t i = 0; i < p->nfindings && i < (size_t)o->top; i++) {
        const struct vt_finding *x = &p->findings[i];
        fprintf(f, "  %-7s %-18s", x->severity[0] ? x->severity : "-", x->kind);
        if (x->kernel[0]) fprintf(f, " kernel %s", x->kernel);
        if (x->arg >= 0) fprintf(f, " argument %lld", (long long)x->arg);
        if (x->offset) fprintf(f, "+%lld", (long long)x->offset);
        if (x->value) fprintf(f, " = 0x%llx", (unsigned long long)x->value);
        if (x->cls[0]) fprintf(f, " (%s%s%s)", x->cls, x->mapping[0] ? " " : "", x->mapping);
        if (x->site >= 0) {
            fprintf(f, "\n          at %s\n", vt_site_label(p, x->site));
            stack_lines(f, p, x->site, 4, 0);   /* the callers: a helper's site named by the line that called it */
        }
        if (x->msg[0]) fprintf(f, "%s          %s", x->site >= 0 ? "" : "\n", x->msg);
        if (x->count > 1) {
            char w1[64], w2[64];
            /* without a footer the program ended before the tracer wrote the final counts */
            fprintf(f, "\n          %s%llu times, first at %s, last at %s", p->has_footer ? "" : "at least ", (unsigned long long)x->count,
                    vt_fmt_when(w1, sizeof w1, p, x->t), vt_fmt_when(w2, sizeof w2, p, x->last_t));
        }
        fputc('\n', f);
    }
}

/* One line per kernel, after the findings and outside their count: what nothing could verify. */
static void notes(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    if (!p->nnotes) return;
    fprintf(f, "\nNotes (not findings):\n");
    for (size_t i = 0; i < p->nnotes && i < (size_t)o->top; i++) {
        char msg[256];
        fprintf(f, "  note    kernel %s\n", p->notes[i].kernel[0] ? p->notes[i].kernel : "(unknown)");
        if (p->notes[i].site >= 0) fprintf(f, "          first at %s\n", vt_site_label(p, p->notes[i].site));
        fprintf(f, "          %s\n", vt_note_text(msg, sizeof msg, &p->notes[i]));
    }
    if (p->nnotes > (size_t)o->top) fprintf(f, "  ... %zu more kernels with notes\n", p->nnotes - (size_t)o->top);
}

static void kernels(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    if (!p->launches) return;
    if (p->graph_launches)
        fprintf(f, "\nKernels (%llu launch%s, %llu of them by graph launches):\n", (unsigned long long)p->launches,
                p->launches == 1 ? "" : "es", (unsigned long long)p->graph_launches);
    else
        fprintf(f, "\nKernels (%llu launch%s):\n", (unsigned long long)p->launches, p->launches == 1 ? "" : "es");
    for (size_t i = 0; i < p->nkernels && i < (size_t)o->top; i++)
        if (p->kernels[i].launches)
            fprintf(f, "  %8llu  %s\n", (unsigned long long)p->kernels[i].launches, p->kernels[i].name);
}

static void one(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    summary(f, p, o);
    growth(f, p, o);
    steps(f, p, o);
    ooms(f, p, o);
    failed_calls(f, p, o);
    snapshots(f, p, o);
    sites(f, p, o);
    ranges(f, p, o);
    leaks(f, p, o);
    struct vt_proc *pp = (struct vt_proc *)p;
    transfers(f, &pp, 1, o);
    copy_sites(f, p, o);
    findings(f, p, o);
    notes(f, p, o);
    kernels(f, p, o);
}

int vt_render_text(FILE *f, struct vt_proc *const *procs, size_t n, const struct vt_render_opts *o)
{
    BUFS;
    if (n == 1) { one(f, procs[0], o); return ferror(f) ? -1 : 0; }
    size_t top = vt_peak_proc(procs, n);
    uint64_t sum = 0, ooms_ = 0, errs = 0, warns = 0, leak = 0;
    fprintf(f, "vramtrace report: %zu traces\n\n  %-5s %-8s %-12s %10s %6s %6s %8s %10s  %s\n", n, "rank", "pid", "host",
            "peak", "OOMs", "errors", "warnings", "leaked", "trace");
    for (size_t i = 0; i < n; i++) {
        const struct vt_proc *p = procs[i];
        char rk[24] = "-";
        if (p->rank >= 0) snprintf(rk, sizeof rk, "%lld", (long long)p->rank);
        fprintf(f, "  %-5s %-8lld %-12.12s %10s %6llu %6llu %8llu %10s  %s%s\n", rk, (long long)p->pid,
                p->hostname[0] ? p->hostname : "-", B(p->peak), (unsigned long long)p->oom_count,
                (unsigned long long)p->finding_errors, (unsigned long long)p->finding_warnings, B(p->leak_bytes), base(p->path),
                i == top ? "  <- peak" : "");
        vt_sat_add(&sum, p->peak); ooms_ += p->oom_count; errs += p->finding_errors; warns += p->finding_warnings;
        vt_sat_add(&leak, p->leak_bytes);
    }
    const struct vt_proc *pk = procs[top];
    fprintf(f, "\n  highest peak: ");
    if (pk->rank >= 0) fprintf(f, "rank %lld, ", (long long)pk->rank);
    fprintf(f, "pid %lld, %s\n", (long long)pk->pid, B(pk->peak));
    struct vt_combined c;
    vt_combine(procs, n, &c);
    if (c.by_time) {
        char w[64];
        fprintf(f, "  combined by device and wall-clock time (processes that overlapped add, ones that did not, do not):\n"
                   "    at once: %s at %s (the traces' own peaks sum to %s)\n", B(c.peak), vt_fmt_wall(w, sizeof w, c.peak_wall_ns), B(sum));
        for (size_t i = 0; i < c.ndevs; i++) {
            const struct vt_combined_dev *d = &c.devs[i];
            fprintf(f, "    %s ", d->host[0] ? d->host : "-");
            if (d->pci[0]) fprintf(f, "%s", d->pci); else fprintf(f, "dev %d", d->dev);
            fprintf(f, "%s%s%s: %s at %s held by", d->name[0] ? " (" : "", d->name, d->name[0] ? ")" : "", B(d->peak),
                    vt_fmt_wall(w, sizeof w, d->peak_wall_ns));
            for (size_t j = 0; j < d->npids; j++) fprintf(f, "%s%lld", j ? "+" : " pid ", (long long)d->pids[j]);
            fprintf(f, " (%zu process%s used it; their own peaks sum to %s)\n", d->nprocs, d->nprocs == 1 ? "" : "es", B(d->sum_of_peaks));
        }
    } else fprintf(f, "  combined: peaks sum to %s (not combined by time: %s)\n", B(sum), c.why_not ? c.why_not : "unknown");
    vt_combined_free(&c);
    char fs[96];
    fprintf(f, "  all traces: %llu OOM%s, %s, %s leaked\n", (unsigned long long)ooms_, ooms_ == 1 ? "" : "s",
            vt_fmt_findings(fs, sizeof fs, errs, warns), B(leak));
    struct vt_merged_site *m = NULL;
    long nm = vt_merge_sites(procs, n, 0, &m);
    if (nm > 0) fputs("\nTop call sites at each rank's peak (all ranks):\n", f);
    for (long i = 0; i < nm && i < o->top; i++)
        fprintf(f, "  %10s %6llu alloc%s  %s\n", B(m[i].bytes), (unsigned long long)m[i].count, m[i].count == 1 ? " " : "s", m[i].label);
    free(m);
    transfers(f, procs, n, o);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "\n==================== %s ====================\n", base(procs[i]->path));
        one(f, procs[i], o);
    }
    return ferror(f) ? -1 : 0;
}
