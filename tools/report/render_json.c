/* render_json.c - `--json`: the machine-readable summary documented in docs/report.md and
 * checked against docs/report-schema.json. */
#include "report/cuda_errors.h"
#include "report/render.h"

#include <inttypes.h>
#include <stdlib.h>

#define U(x) ((unsigned long long)(x))
#define I(x) ((long long)(x))

static void num_or_null(FILE *f, double v) { if (v >= 0) vt_esc_printf(f, VT_ESC_JSON, "%.6g", v); else fputs("null", f); }

static void xfer(FILE *f, struct vt_proc *const *procs, size_t n, enum vt_dir dir, int host)
{
    struct vt_dirstat d = vt_dirstat_all(procs, n, dir, host);
    vt_esc_printf(f, VT_ESC_JSON, "{\"bytes\":%llu,\"count\":%llu,\"seconds\":%.9g,\"gbps\":", U(d.bytes), U(d.count), d.seconds);
    num_or_null(f, d.gbps);
    if (host == VT_HOST__COUNT && (dir == VT_DIR_H2D || dir == VT_DIR_D2H)) {
        fputs(",\"pageable\":", f);
        xfer(f, procs, n, dir, VT_HOST_PAGEABLE);
        fputs(",\"pinned\":", f);
        xfer(f, procs, n, dir, VT_HOST_PINNED);
        fputs(",\"managed\":", f);
        xfer(f, procs, n, dir, VT_HOST_MANAGED);
    }
    fputc('}', f);
}

static void transfers(FILE *f, struct vt_proc *const *procs, size_t n)
{
    fputs("\"transfers\":{\"h2d\":", f); xfer(f, procs, n, VT_DIR_H2D, VT_HOST__COUNT);
    fputs(",\"d2h\":", f); xfer(f, procs, n, VT_DIR_D2H, VT_HOST__COUNT);
    fputs(",\"d2d\":", f); xfer(f, procs, n, VT_DIR_D2D, VT_HOST__COUNT);
    fputs(",\"h2h\":", f); xfer(f, procs, n, VT_DIR_H2H, VT_HOST__COUNT);
    fputc('}', f);
}

/* ,"stack":[frame labels] of SITE, innermost first ([] without one) */
static void site_stack(FILE *f, const struct vt_proc *p, int site)
{
    fputs(",\"stack\":[", f);
    if (site >= 0 && (size_t)site < p->nsites)
        for (size_t j = 0; j < p->sites[site].nframes; j++) { if (j) fputc(',', f); vt_json_str(f, p->sites[site].frames[j]->label); }
    fputc(']', f);
}

static void holdings(FILE *f, const struct vt_proc *p, const struct vt_holding *h, size_t n, int stacks)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{\"site\":" : "{\"site\":", f);
        vt_json_str(f, vt_site_label(p, h[i].site));
        vt_esc_printf(f, VT_ESC_JSON, ",\"bytes\":%llu,\"count\":%llu,\"nvtx_range\":", U(h[i].bytes), U(h[i].count));
        const char *nv = h[i].site >= 0 && (size_t)h[i].site < p->nsites ? p->sites[h[i].site].nvtx : "";
        if (nv[0]) vt_json_str(f, nv); else fputs("null", f);
        if (stacks) site_stack(f, p, h[i].site);
        fputc('}', f);
    }
    fputc(']', f);
}

static void ooms(FILE *f, const struct vt_proc *p, int *first)
{
    for (size_t i = 0; i < p->nooms; i++) {
        const struct vt_oom *o = &p->ooms[i];
        fputs(*first ? "{" : ",{", f);
        *first = 0;
        vt_esc_printf(f, VT_ESC_JSON, "\"requested_bytes\":%llu,\"live_bytes\":%llu,\"live_device_bytes\":%llu,\"site\":",
                U(o->requested), U(o->live), U(o->live_dev));
        vt_json_str(f, vt_site_label(p, o->site));
        site_stack(f, p, o->site);
        fputs(",\"api\":", f); vt_json_str(f, o->api);
        vt_esc_printf(f, VT_ESC_JSON, ",\"mem\":\"%s\",\"res\":%lld,\"res_name\":", vt_rd_mem_name(o->mem), I(o->res));
        const char *nm = vt_cuda_error_name(o->api, o->res);
        if (nm) vt_json_str(f, nm); else fputs("null", f);
        vt_esc_printf(f, VT_ESC_JSON, ",\"dev\":%d,\"time_ns\":%lld,\"offset_ns\":%lld,\"free_bytes\":", o->dev, I(o->t), I(o->t - p->t0));
        if (o->has_free) vt_esc_printf(f, VT_ESC_JSON, "%llu", U(o->free_bytes)); else fputs("null", f);
        vt_esc_printf(f, VT_ESC_JSON, ",\"total_bytes\":%llu,\"pool_kept_free_bytes\":%llu,\"unattributed_bytes\":",
                      U(o->total_bytes), U(o->pool_kept_free));
        if (o->has_free) vt_esc_printf(f, VT_ESC_JSON, "%llu", U(o->unattributed)); else fputs("null", f);
        fputs(",\"ranges\":", f);
        vt_json_str(f, o->ranges);
        vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"rank\":", I(p->pid));
        if (p->rank >= 0) vt_esc_printf(f, VT_ESC_JSON, "%lld", I(p->rank)); else fputs("null", f);
        fputs(",\"held_by\":", f);
        holdings(f, p, o->holders, o->nholders, 1);
        vt_esc_printf(f, VT_ESC_JSON, ",\"recovered\":%s,\"recovered_time_ns\":", o->recovered ? "true" : "false");
        if (o->recovered) {
            vt_esc_printf(f, VT_ESC_JSON, "%lld,\"recovered_site\":", I(o->recovered_t));
            vt_json_str(f, vt_site_label(p, o->recovered_site));
            vt_esc_printf(f, VT_ESC_JSON, ",\"freed_before_retry_bytes\":%llu", U(o->freed_before_retry));
        } else fputs("null,\"recovered_site\":null,\"freed_before_retry_bytes\":null", f);
        fputc('}', f);
    }
}

/* how live VRAM moves from step to step (analysis.h's vt_growth), or null */
static void growth(FILE *f, const struct vt_proc *p)
{
    static const char *const kinds[] = { "none", "flat", "warmup", "steady" };
    const struct vt_growth *g = &p->growth;
    if (g->kind == VT_GROWTH_NONE) { fputs("null", f); return; }
    vt_esc_printf(f, VT_ESC_JSON, "{\"kind\":\"%s\",\"rate_bytes_per_step\":%lld,\"window_first_step\":%llu,\"window_last_step\":%llu,"
                  "\"warmup_steps\":%llu,\"warmup_bytes\":%llu,\"wobble_bytes\":%llu,\"sites\":[",
                  kinds[g->kind], I(g->rate_bytes), U(g->window_first), U(g->window_last), U(g->warmup_steps), U(g->warmup_bytes),
                  U(g->wobble_bytes));
    for (size_t i = 0; i < g->nsites; i++) {
        fputs(i ? ",{\"site\":" : "{\"site\":", f);
        vt_json_str(f, vt_site_label(p, g->sites[i].site));
        vt_esc_printf(f, VT_ESC_JSON, ",\"bytes_per_step\":%lld,\"rose_in_steps\":%llu}", I(g->sites[i].bytes_per_step), U(g->sites[i].rises));
    }
    fputs("],\"forecast\":", f);
    if (!g->has_forecast) fputs("null", f);
    else vt_esc_printf(f, VT_ESC_JSON, "{\"dev\":%d,\"capacity_bytes\":%llu,\"oom_step\":%llu,\"seconds_after_trace\":%.3f}",
                       g->forecast_dev, U(g->capacity_bytes), U(g->forecast_step), g->forecast_seconds);
    fputs("}", f);
}

/* the steps found (analysis.h's vt_steps), or null */
static void steps(FILE *f, const struct vt_proc *p)
{
    const struct vt_steps *s = &p->steps;
    if (s->source == VT_STEPS_NONE) { fputs("null", f); return; }
    fprintf(f, "{\"source\":\"%s\",\"name\":", s->source == VT_STEPS_API ? "vramtrace_step" : s->source == VT_STEPS_NVTX ? "nvtx" : "period");
    vt_json_str(f, s->name);
    vt_esc_printf(f, VT_ESC_JSON, ",\"count\":%llu,\"listed\":%llu,\"total_ns\":%lld,\"min_ns\":%lld,\"max_ns\":%lld,"
                  "\"live_known\":%s,\"max_peak_bytes\":%llu,\"max_peak_step\":%llu,\"list\":[",
                  U(s->count), U(s->nlist), I(s->total_ns), I(s->min_ns), I(s->max_ns), s->live_known ? "true" : "false",
                  U(s->max_peak), U(s->max_peak_step));
    for (size_t i = 0; i < s->nlist; i++) {
        const struct vt_step *e = &s->list[i];
        vt_esc_printf(f, VT_ESC_JSON, "%s{\"time_ns\":%lld,\"offset_ns\":%lld,\"duration_ns\":%lld,\"live_start_bytes\":%llu,\"peak_bytes\":%llu}",
                      i ? "," : "", I(e->t), I(e->t - p->t0), I(e->dur), U(e->live_start), U(e->peak));
    }
    fputs("]}", f);
}

static void snapshots(FILE *f, const struct vt_proc *p, int *first)
{
    for (size_t i = 0; i < p->nsnapshots; i++) {
        const struct vt_snapshot *s = &p->snapshots[i];
        fputs(*first ? "{\"label\":" : ",{\"label\":", f);
        *first = 0;
        vt_json_str(f, s->label);
        vt_esc_printf(f, VT_ESC_JSON, ",\"time_ns\":%lld,\"offset_ns\":%lld,\"live_bytes\":%llu,\"tracer_live_bytes\":%llu,"
                      "\"pool_kept_free_bytes\":%llu,\"change_bytes\":",
                      I(s->t), I(s->t - p->t0), U(s->live), U(s->tracer_live), U(s->pool_kept_free));
        if (i) vt_esc_printf(f, VT_ESC_JSON, "%lld", (long long)(s->live - p->snapshots[i - 1].live));
        else fputs("null", f);
        vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"rank\":", I(p->pid));
        if (p->rank >= 0) vt_esc_printf(f, VT_ESC_JSON, "%lld", I(p->rank)); else fputs("null", f);
        fputs(",\"held_by\":", f);
        holdings(f, p, s->holders, s->nholders, 0);
        fputc('}', f);
    }
}

static void findings(FILE *f, const struct vt_proc *p, int *first)
{
    for (size_t i = 0; i < p->nfindings; i++) {
        const struct vt_finding *x = &p->findings[i];
        fputs(*first ? "{\"kind\":" : ",{\"kind\":", f);
        *first = 0;
        vt_json_str(f, x->kind);
        fputs(",\"severity\":", f); vt_json_str(f, x->severity);
        fputs(",\"kernel\":", f); if (x->kernel[0]) vt_json_str(f, x->kernel); else fputs("null", f);
        fputs(",\"arg_index\":", f); if (x->arg >= 0) vt_esc_printf(f, VT_ESC_JSON, "%lld", I(x->arg)); else fputs("null", f);
        vt_esc_printf(f, VT_ESC_JSON, ",\"offset\":%lld,\"address\":", I(x->offset));
        if (x->value) vt_esc_printf(f, VT_ESC_JSON, "\"0x%llx\"", U(x->value)); else fputs("null", f);
        fputs(",\"site\":", f); if (x->site >= 0) vt_json_str(f, vt_site_label(p, x->site)); else fputs("null", f);
        site_stack(f, p, x->site);
        fputs(",\"api\":", f); vt_json_str(f, x->api);
        fputs(",\"class\":", f); vt_json_str(f, x->cls);
        fputs(",\"msg\":", f); vt_json_str(f, x->msg);
        vt_esc_printf(f, VT_ESC_JSON, ",\"count\":%llu,\"time_ns\":%lld,\"last_time_ns\":%lld,\"pid\":%lld}", U(x->count),
                      I(x->t), I(x->last_t), I(p->pid));
    }
}

static void notes(FILE *f, const struct vt_proc *p, int *first)
{
    for (size_t i = 0; i < p->nnotes; i++) {
        const struct vt_note *x = &p->notes[i];
        char msg[256];
        fputs(*first ? "{\"kernel\":" : ",{\"kernel\":", f);
        *first = 0;
        if (x->kernel[0]) vt_json_str(f, x->kernel); else fputs("null", f);
        vt_esc_printf(f, VT_ESC_JSON, ",\"words\":%llu,\"host_words\":%llu,\"msg\":", U(x->words), U(x->host_words));
        vt_json_str(f, vt_note_text(msg, sizeof msg, x));
        fputs(",\"site\":", f); if (x->site >= 0) vt_json_str(f, vt_site_label(p, x->site)); else fputs("null", f);
        vt_esc_printf(f, VT_ESC_JSON, ",\"time_ns\":%lld,\"pid\":%lld}", I(x->t), I(p->pid));
    }
}

static void merged(FILE *f, struct vt_proc *const *procs, size_t n, int which)
{
    struct vt_merged_site *m = NULL;
    long k = vt_merge_sites(procs, n, which, &m);
    fputc('[', f);
    for (long i = 0; i < k; i++) {
        fputs(i ? ",{\"site\":" : "{\"site\":", f);
        vt_json_str(f, m[i].label);
        vt_esc_printf(f, VT_ESC_JSON, ",\"bytes\":%llu,\"count\":%llu}", U(m[i].bytes), U(m[i].count));
    }
    fputc(']', f);
    free(m);
}

static void ranges(FILE *f, const struct vt_proc *p)
{
    fputc('[', f);
    for (size_t i = 0; i < p->nranges; i++) {
        const struct vt_range *r = &p->ranges[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        vt_json_str(f, r->name);
        vt_esc_printf(f, VT_ESC_JSON, ",\"peak_bytes\":%llu,\"alloc_count\":%llu,\"alloc_bytes\":%llu,\"free_count\":%llu,\"free_bytes\":%llu}",
                U(r->peak_bytes), U(r->alloc_count), U(r->alloc_bytes), U(r->free_count), U(r->free_bytes));
    }
    fputc(']', f);
}

/* [{site, bytes, count, sync_seconds, pageable_...}]: where the program copies from, by bytes
 * (the text's "Copy sites"); sync_seconds is the host time of the synchronous ones. */
static void copy_sites(FILE *f, const struct vt_proc *p)
{
    size_t *idx = NULL;
    long n = vt_copy_sites(p, 0, &idx);
    if (n < 0) { fputs("null", f); return; }   /* unknown: the report ran out of memory for them */
    fputc('[', f);
    for (long k = 0; k < n; k++) {
        const struct vt_site *s = &p->sites[idx[k]];
        fputs(k ? ",{\"site\":" : "{\"site\":", f);
        vt_json_str(f, s->label);
        vt_esc_printf(f, VT_ESC_JSON, ",\"bytes\":%llu,\"count\":%llu,\"sync_seconds\":%.9f,\"pageable_count\":%llu,"
                      "\"pageable_h2d_bytes\":%llu,\"pageable_d2h_bytes\":%llu,\"d2h_waited_count\":%llu,\"stack\":[", U(s->copy_bytes),
                      U(s->copy_count), (double)s->copy_ns / 1e9, U(s->pageable_count), U(s->pageable_bytes[0]), U(s->pageable_bytes[1]),
                      U(s->d2h_sync_count));
        for (size_t j = 0; j < s->nframes; j++) { if (j) fputc(',', f); vt_json_str(f, s->frames[j]->label); }
        fputs("]}", f);
    }
    fputc(']', f);
    free(idx);
}

static void process(FILE *f, const struct vt_proc *p)
{
    fputs("{\"trace\":", f); vt_json_str(f, p->path);
    fputs(",\"program\":", f); vt_json_str(f, p->program);
    fputs(",\"hostname\":", f); vt_json_str(f, p->hostname);
    vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"rank\":", I(p->pid));
    if (p->rank >= 0) vt_esc_printf(f, VT_ESC_JSON, "%lld", I(p->rank)); else fputs("null", f);
    fputs(",\"local_rank\":", f);
    if (p->local_rank >= 0) vt_esc_printf(f, VT_ESC_JSON, "%lld", I(p->local_rank)); else fputs("null", f);
    char why[400];
    const char *reason = vt_incomplete_reason(why, sizeof why, p);
    vt_esc_printf(f, VT_ESC_JSON, ",\"complete\":%s,\"incomplete_reason\":", reason ? "false" : "true");
    if (reason) vt_json_str(f, reason); else fputs("null", f);
    vt_esc_printf(f, VT_ESC_JSON, ",\"dropped_events\":%lld,\"events\":%llu,\"warnings\":%ld,\"peak_bytes\":%llu,\"peak_time_ns\":%lld,"
            "\"peak_pool_kept_free_bytes\":%llu,\"oom_count\":%llu,\"oom_recovered_count\":%llu,\"finding_count\":%llu,"
            "\"finding_errors\":%llu,\"finding_warnings\":%llu,\"note_count\":%zu,\"leaked_bytes\":%llu,",
            I(p->footer_dropped), U(p->events), p->warnings, U(p->peak), I(p->peak_t), U(p->peak_pool_kept_free),
            U(p->oom_count), U(p->oom_recovered), U(p->finding_count), U(p->finding_errors), U(p->finding_warnings), p->nnotes,
            U(p->leak_bytes));
    fputs("\"sass\":{\"tool\":", f);
    if (p->sass_tool) vt_json_str(f, p->sass_tool); else fputs("null", f);
    vt_esc_printf(f, VT_ESC_JSON, ",\"words\":%llu,\"findings\":%llu,\"unsettled_kernels\":%zu,\"why\":", U(p->sass_words),
                  U(p->sass_findings), p->sass_unsettled);
    if (p->sass_why) vt_json_str(f, p->sass_why); else fputs("null", f);
    fputs("},\"devices\":[", f);
    int first = 1;
    for (size_t i = 0; i < p->ndevices; i++) {
        const struct vt_device *d = &p->devices[i];
        if (!d->seen && !d->peak) continue;
        vt_esc_printf(f, VT_ESC_JSON, "%s{\"dev\":%d,\"name\":", first ? "" : ",", d->dev);
        first = 0;
        if (d->name) vt_json_str(f, d->name); else fputs("null", f);
        vt_esc_printf(f, VT_ESC_JSON, ",\"total_bytes\":%llu,\"peak_bytes\":%llu,\"peak_time_ns\":%lld,\"sim\":%s,\"peak_sites\":",
                U(d->total_bytes), U(d->peak), I(d->peak_t), d->sim ? "true" : "false");
        holdings(f, p, d->peak_sites, d->npeak_sites, 0);
        fputs(",\"driver\":", f);
        const struct vt_driver_view *v = &d->driver;
        if (v->samples)
            vt_esc_printf(f, VT_ESC_JSON, "{\"samples\":%llu,\"last\":{\"time_ns\":%lld,\"used_bytes\":%llu,\"live_bytes\":%llu,"
                          "\"pool_kept_free_bytes\":%llu,\"unattributed_bytes\":%llu},\"max_unattributed\":{\"time_ns\":%lld,"
                          "\"used_bytes\":%llu,\"live_bytes\":%llu,\"unattributed_bytes\":%llu}}",
                          U(v->samples), I(v->last_t), U(v->last_used), U(v->last_live), U(v->last_pool_kept),
                          U(v->last_unattributed), I(v->max_t), U(v->max_used), U(v->max_live), U(v->max_unattributed));
        else fputs("null", f);
        const struct vt_pool_view *pv = &d->pool;
        vt_esc_printf(f, VT_ESC_JSON, ",\"pool\":{\"reserved_peak_bytes\":%llu,\"reserved_peak_time_ns\":%lld,"
                      "\"kept_free_at_peak_bytes\":%llu,\"kept_free_bytes\":%llu,\"release_threshold\":%llu}}",
                      U(pv->reserved_peak), I(pv->reserved_peak_t), U(pv->kept_free_at_peak), U(pv->kept_free), U(pv->threshold));
    }
    fputs("],\"leaked_by_kind\":[", f);
    int k = 0;
#define VT_X(id, word) \
    vt_esc_printf(f, VT_ESC_JSON, "%s{\"kind\":\"%s\",\"count\":%llu,\"bytes\":%llu}", k++ ? "," : "", word, \
                  U(p->leak_kind_count[VT_MEM_##id]), U(p->leak_kind_bytes[VT_MEM_##id]));
    VT_LEAK_KINDS(VT_X)
#undef VT_X
    fputs("],\"stale_modules\":", f);
    if (p->stale_modules) vt_json_str(f, p->stale_modules); else fputs("null", f);
    fputs(",\"missing_modules\":", f);
    if (p->missing_modules) vt_json_str(f, p->missing_modules); else fputs("null", f);
    fputs(",\"caching_allocator\":", f);
    if (p->caching_allocator) vt_json_str(f, p->caching_allocator); else fputs("null", f);
    fputs(",\"torch_backend\":", f);
    if (p->torch_backend) vt_json_str(f, p->torch_backend); else fputs("null", f);
    fprintf(f, ",\"torch_tensors\":%s", p->torch_tensors ? "true" : "false");
    vt_esc_printf(f, VT_ESC_JSON, ",\"duplicate_allocs\":%llu,\"reset_count\":%llu,\"resets\":[",
                  U(p->duplicate_allocs), U(p->reset_count));
    for (size_t i = 0; i < p->nresets; i++) {
        const struct vt_reset *r = &p->resets[i];
        vt_esc_printf(f, VT_ESC_JSON, "%s{\"api\":", i ? "," : "");
        vt_json_str(f, r->api);
        vt_esc_printf(f, VT_ESC_JSON, ",\"dev\":%d,\"time_ns\":%lld,\"freed_count\":%llu,\"freed_bytes\":%llu}",
                      r->dev, I(r->t), U(r->count), U(r->bytes));
    }
    /* never freed by the program, released by a reset: beside the leaks, not in them */
    vt_esc_printf(f, VT_ESC_JSON, "],\"reset_released\":{\"bytes\":%llu,\"count\":%llu,\"managed_bytes\":%llu,\"sites\":[",
                  U(p->reset_leak_bytes), U(p->reset_leak_count), U(p->reset_leak_managed));
    struct vt_merged_site *m = NULL;
    struct vt_proc *one = (struct vt_proc *)p;
    long nm = vt_merge_sites(&one, 1, 2, &m);
    for (long i = 0; i < nm && i < 64; i++) {
        fputs(i ? ",{\"site\":" : "{\"site\":", f);
        vt_json_str(f, m[i].label);
        vt_esc_printf(f, VT_ESC_JSON, ",\"bytes\":%llu,\"count\":%llu}", U(m[i].bytes), U(m[i].count));
    }
    free(m);
    fputs("]},\"ranges\":", f);
    ranges(f, p);
    fputs(",\"copy_sites\":", f);
    copy_sites(f, p);
    fputs(",\"steps\":", f);
    steps(f, p);
    fputs(",\"growth\":", f);
    growth(f, p);
    fputs(",\"kernels\":[", f); /* the text's Kernels table: most launched first */
    for (size_t i = 0, nk = 0; i < p->nkernels; i++) {
        if (!p->kernels[i].launches) continue;
        fputs(nk++ ? ",{\"name\":" : "{\"name\":", f);
        vt_json_str(f, p->kernels[i].name);
        vt_esc_printf(f, VT_ESC_JSON, ",\"launches\":%llu,\"host_ns\":%lld}", U(p->kernels[i].launches), I(p->kernels[i].ns));
    }
    fputs("]}", f);
}

/* ,"transfer_verdicts":[...]: the text's verdicts (vt_transfer_verdicts) as data */
static void verdicts(FILE *f, struct vt_proc *const *procs, size_t n, const struct vt_refbw *r)
{
    static const char *const kinds[] = { "pin_host_buffer", "batch_copies", "sync_copy_in_loop", "staged_through_host" };
    struct vt_verdict vs[16];
    size_t nv = vt_transfer_verdicts(procs, n, r, vs, 16);
    fputs(",\"transfer_verdicts\":[", f);
    for (size_t i = 0; i < nv; i++) {
        const struct vt_verdict *v = &vs[i];
        vt_esc_printf(f, VT_ESC_JSON, "%s{\"kind\":\"%s\",\"dir\":\"%s\",\"count\":%llu", i ? "," : "", kinds[v->kind],
                      vt_rd_dir_name(v->dir), U(v->count));
        if (v->kind == VT_V_PIN)
            vt_esc_printf(f, VT_ESC_JSON, ",\"share_of_pinned\":%.4f,\"pinned_gbps\":%.3f,\"pinned_from\":\"%s\",\"timed\":%s", v->share,
                          v->pinned_gbps, v->from_ref ? "reference" : "trace", v->untimed ? "false" : "true");
        if (v->kind == VT_V_BATCH)
            vt_esc_printf(f, VT_ESC_JSON, ",\"median_min_bytes\":%llu,\"median_max_bytes\":%llu,\"seconds_per_copy\":%.9f",
                          U(v->median_lo), U(v->median_hi), v->per_copy_s);
        char tb[512];
        fputs(",\"text\":", f);
        vt_json_str(f, vt_verdict_text(tb, sizeof tb, v));
        fputs(",\"sites\":[", f);
        for (size_t k = 0; k < v->nsites; k++) { if (k) fputc(',', f); vt_json_str(f, v->sites[k]->label); }
        fputs("]}", f);
    }
    fputc(']', f);
}

int vt_render_json(FILE *f, struct vt_proc *const *procs, size_t n, const struct vt_render_opts *o)
{
    const struct vt_proc *pk = procs[vt_peak_proc(procs, n)];
    uint64_t leaked = 0, leak_count = 0, oomc = 0, fc = 0, fe = 0, fw = 0, managed = 0, host = 0, sum = 0;
    uint64_t ac = 0, ab = 0, fr = 0, failed = 0, errors = 0, launches = 0, sets = 0, set_bytes = 0, glaunch = 0, gcopy = 0,
             gset = 0, captured = 0;
    long warnings = 0;
    for (size_t i = 0; i < n; i++) {
        const struct vt_proc *p = procs[i];
        vt_sat_add(&leaked, p->leak_bytes); leak_count += p->leak_count; oomc += p->oom_count; fc += p->finding_count;
        fe += p->finding_errors; fw += p->finding_warnings;
        managed = p->managed_peak > managed ? p->managed_peak : managed;
        host = p->host_peak > host ? p->host_peak : host;
        vt_sat_add(&sum, p->peak); ac += p->alloc_count; vt_sat_add(&ab, p->alloc_bytes); fr += p->free_count;
        failed += p->failed_allocs; errors += p->error_count; warnings += p->warnings; launches += p->launches;
        sets += p->set_count; vt_sat_add(&set_bytes, p->set_bytes); glaunch += p->graph_launches; gcopy += p->graph_copies;
        gset += p->graph_sets; captured += p->captured_ops;
    }
    vt_esc_printf(f, VT_ESC_JSON, "{\"format\":\"vramtrace-report\",\"version\":1,\"traces\":%zu,\"peak_bytes\":%llu,\"peak_time_ns\":%lld,"
            "\"peak_offset_ns\":%lld,\"peak_pid\":%lld,\"peak_rank\":",
            n, U(pk->peak), I(pk->peak_t), I(pk->peak ? pk->peak_t - pk->t0 : 0), I(pk->pid));
    if (pk->rank >= 0) vt_esc_printf(f, VT_ESC_JSON, "%lld", I(pk->rank)); else fputs("null", f);
    fputs(",\"peak_ranges\":", f); vt_json_str(f, pk->peak_ranges);
    fputs(",\"peak_sites\":", f);
    holdings(f, pk, pk->peak_sites, pk->npeak_sites, 1);
    fputs(",\"ranges\":", f);
    ranges(f, pk);
    uint64_t recovered = 0;
    for (size_t i = 0; i < n; i++) recovered += procs[i]->oom_recovered;
    vt_esc_printf(f, VT_ESC_JSON, ",\"oom_count\":%llu,\"oom_recovered_count\":%llu,\"oom_events\":[", U(oomc), U(recovered));
    int first = 1;
    for (size_t i = 0; i < n; i++) ooms(f, procs[i], &first);
    fputs("],\"snapshots\":[", f);
    first = 1;
    for (size_t i = 0; i < n; i++) snapshots(f, procs[i], &first);
    uint64_t pauses = 0, skipped = 0;
    int64_t paused_ns = 0;
    for (size_t i = 0; i < n; i++) { pauses += procs[i]->pauses; skipped += procs[i]->pause_skipped; paused_ns += procs[i]->paused_ns; }
    vt_esc_printf(f, VT_ESC_JSON, "],\"paused\":{\"count\":%llu,\"seconds\":%.9f,\"skipped_calls\":%llu}",
                  U(pauses), (double)paused_ns / 1e9, U(skipped));
    vt_esc_printf(f, VT_ESC_JSON, ",\"leaked_bytes\":%llu,\"leaked_count\":%llu,\"leaks\":", U(leaked), U(leak_count));
    merged(f, procs, n, 1);
    fputc(',', f);
    transfers(f, procs, n);
    verdicts(f, procs, n, o->ref);
    vt_esc_printf(f, VT_ESC_JSON, ",\"finding_count\":%llu,\"finding_errors\":%llu,\"finding_warnings\":%llu,\"findings\":[",
                  U(fc), U(fe), U(fw));
    first = 1;
    for (size_t i = 0; i < n; i++) findings(f, procs[i], &first);
    fputs("],\"notes\":[", f);
    first = 1;
    for (size_t i = 0; i < n; i++) notes(f, procs[i], &first);
    vt_esc_printf(f, VT_ESC_JSON, "],\"errors\":[");
    first = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < procs[i]->nerrors; j++) {
            const struct vt_error *e = &procs[i]->errors[j];
            fputs(first ? "{\"api\":" : ",{\"api\":", f);
            first = 0;
            vt_json_str(f, e->api);
            vt_esc_printf(f, VT_ESC_JSON, ",\"res\":%lld,\"name\":", I(e->res));
            const char *nm = vt_cuda_error_name(e->api, e->res);
            if (nm) vt_json_str(f, nm); else fputs("null", f);
            vt_esc_printf(f, VT_ESC_JSON, ",\"count\":%llu,\"pid\":%lld,\"time_ns\":%lld,\"offset_ns\":%lld,\"site\":",
                          U(e->count), I(procs[i]->pid), I(e->first_t), I(e->first_t - procs[i]->t0));
            vt_json_str(f, vt_site_label(procs[i], e->site));
            fputc('}', f);
        }
    vt_esc_printf(f, VT_ESC_JSON, "],\"failed_calls\":%llu,\"allocations\":{\"count\":%llu,\"bytes\":%llu,\"frees\":%llu,\"failed\":%llu},"
            "\"launches\":%llu,\"sets\":{\"count\":%llu,\"bytes\":%llu},"
            "\"graph\":{\"launches\":%llu,\"copies\":%llu,\"sets\":%llu,\"captured\":%llu},"
            "\"managed_peak_bytes\":%llu,\"host_pinned_peak_bytes\":%llu,\"warnings\":%ld,\"largest\":[",
            U(errors), U(ac), U(ab), U(fr), U(failed), U(launches), U(sets), U(set_bytes), U(glaunch), U(gcopy), U(gset),
            U(captured), U(managed), U(host), warnings);
    for (size_t i = 0; i < pk->nlargest; i++) {
        const struct vt_largest *l = &pk->largest[i];
        vt_esc_printf(f, VT_ESC_JSON, "%s{\"bytes\":%llu,\"mem\":\"%s\",\"api\":", i ? "," : "", U(l->size), vt_rd_mem_name(l->mem));
        vt_json_str(f, l->api);
        vt_esc_printf(f, VT_ESC_JSON, ",\"time_ns\":%lld,\"dev\":%d,\"site\":", I(l->t), l->dev);
        vt_json_str(f, vt_site_label(pk, l->site));
        fputc('}', f);
    }
    fputs("],\"processes\":[", f);
    for (size_t i = 0; i < n; i++) { if (i) fputc(',', f); process(f, procs[i]); }
    vt_esc_printf(f, VT_ESC_JSON, "],\"combined\":{\"sum_of_peaks_bytes\":%llu,", U(sum));
    struct vt_combined c;
    vt_combine(procs, n, &c);
    vt_esc_printf(f, VT_ESC_JSON, "\"by_time\":%s,\"not_by_time_reason\":", c.by_time ? "true" : "false");
    if (c.by_time) fputs("null", f); else vt_json_str(f, c.why_not ? c.why_not : "unknown");
    vt_esc_printf(f, VT_ESC_JSON, ",\"peak_bytes\":%llu,\"peak_wall_ns\":%lld,\"devices\":[", U(c.peak), I(c.peak_wall_ns));
    for (size_t i = 0; i < c.ndevs; i++) {
        const struct vt_combined_dev *d = &c.devs[i];
        fputs(i ? ",{\"host\":" : "{\"host\":", f);
        vt_json_str(f, d->host);
        fputs(",\"pci\":", f);
        if (d->pci[0]) vt_json_str(f, d->pci); else fputs("null", f);
        vt_esc_printf(f, VT_ESC_JSON, ",\"dev\":%d,\"name\":", d->dev);
        vt_json_str(f, d->name);
        vt_esc_printf(f, VT_ESC_JSON, ",\"peak_bytes\":%llu,\"peak_wall_ns\":%lld,\"sum_of_peaks_bytes\":%llu,\"processes\":%zu,\"pids_at_peak\":[",
                      U(d->peak), I(d->peak_wall_ns), U(d->sum_of_peaks), d->nprocs);
        for (size_t j = 0; j < d->npids; j++) vt_esc_printf(f, VT_ESC_JSON, "%s%lld", j ? "," : "", I(d->pids[j]));
        fputs("]}", f);
    }
    vt_combined_free(&c);
    fputs("],\"peak_sites\":", f);
    merged(f, procs, n, 0);
    fputs("}}\n", f);
    return ferror(f) ? -1 : 0;
}
