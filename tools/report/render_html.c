/* render_html.c - `--html FILE`: one self-contained page (inline CSS and SVG, no scripts, no
 * network): summary cards, the pictures of render_svg.c, and the tables.  Every trace string
 * goes through vt_html_str(). */
#include "report/cuda_errors.h"
#include "report/render_svg.h"

#include <stdlib.h>
#include <string.h>

#define H(s) vt_html_str(f, (s))

#define B(x) vtr_bytes_tmp(x)

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}"
    "header{background:#1d2330;color:#fff;padding:18px 28px}header h1{margin:0;font-size:22px}"
    "header .sub{color:#aab3c5;font-size:13px;margin-top:4px}"
    "main{padding:8px 28px 40px}section{background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.08);"
    "margin:18px 0;padding:16px 20px}h2{font-size:17px;margin:0 0 10px}h3{font-size:15px;margin:14px 0 6px}"
    ".cards{display:flex;flex-wrap:wrap;gap:12px}.card{flex:1 1 150px;background:#fff;border-radius:8px;padding:12px 16px;"
    "box-shadow:0 1px 3px rgba(0,0,0,.08);border-top:4px solid #4a7bd0}.card .v{font-size:22px;font-weight:600}"
    ".card .l{color:#667;font-size:12px;text-transform:uppercase;letter-spacing:.04em}.card.bad{border-top-color:#d0463a}"
    ".card.warn{border-top-color:#e0a030}.card.ok{border-top-color:#3a9d5d}"
    "table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #e6e8ec;vertical-align:top}"
    "th{background:#f0f2f5;font-weight:600}th.n{text-align:right;width:1%;white-space:nowrap}td.n{text-align:right;width:1%;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}"
    ".oom{border-left:4px solid #d0463a;padding:8px 12px;margin:8px 0;background:#fdf3f2}"
    ".verdict{border-left:4px solid #e0a030;padding:8px 12px;margin:8px 0;background:#fff8ea}ul.notes{margin:0;padding-left:20px}"
    "details summary{cursor:pointer}svg text{font-family:system-ui,sans-serif}.muted{color:#778}";

static void card(FILE *f, const char *cls, const char *label, const char *value)
{
    vt_esc_printf(f, VT_ESC_HTML, "<div class=\"card %s\"><div class=\"l\">", cls);
    H(label);
    fputs("</div><div class=\"v\">", f);
    H(value);
    fputs("</div></div>", f);
}

/* A call site: its label (with the stack to unfold when STACKS) and its NVTX range. */
static void site_cell(FILE *f, const struct vt_site *s, int stacks)
{
    if (stacks && s->nframes) {
        fputs("<details><summary><code>", f);
        H(s->label);
        fputs("</code></summary>", f);
        for (size_t j = 0; j < s->nframes; j++) { fputs("<div><code class=\"muted\">", f); H(s->frames[j]->label); fputs("</code></div>", f); }
        fputs("</details>", f);
    } else { fputs("<code>", f); H(s->label); fputs("</code>", f); }
    if (s->nvtx && s->nvtx[0]) { fputs(" <span class=\"muted\">NVTX: ", f); H(s->nvtx); fputs("</span>", f); }
}

static void table_sites(FILE *f, const struct vt_proc *p, const struct vt_holding *h, size_t n, uint64_t total, int top, int stacks)
{
    fputs("<table><tr><th class=\"n\">bytes</th><th class=\"n\">share</th><th class=\"n\">allocs</th><th>call site</th></tr>", f);
    for (size_t i = 0; i < n && i < (size_t)top; i++) {
        vt_esc_printf(f, VT_ESC_HTML, "<tr><td class=\"n\">%s</td><td class=\"n\">%.1f%%</td><td class=\"n\">%llu</td><td>", B(h[i].bytes),
                total ? 100.0 * (double)h[i].bytes / (double)total : 0, (unsigned long long)h[i].count);
        site_cell(f, &p->sites[h[i].site], stacks);
        fputs("</td></tr>", f);
    }
    fputs("</table>", f);
}

/* What to know before trusting the figures (the text summary's warnings and notes), and the
 * failed calls by name. */
static void notes(FILE *f, const struct vt_proc *p)
{
    char why[400];
    const char *inc = vt_incomplete_reason(why, sizeof why, p);
    if (!inc && !p->stale_modules && !p->missing_modules && !p->caching_allocator && !p->torch_backend && !p->duplicate_allocs && !p->nerrors) return;
    fputs("<section><h2>Notes</h2><ul class=\"notes\">", f);
    if (inc) { fputs("<li><b>Trace incomplete:</b> ", f); H(inc); fputs("; the figures cover what was written.</li>", f); }
    if (p->stale_modules) {
        fputs("<li><b>Changed since the trace:</b> <code>", f); H(p->stale_modules);
        fputs("</code> is not the build that ran and no matching file was found (VRAMTRACE_DEBUGINFO_DIR or /usr/lib/debug/.build-id): "
              "its frames are shown as offsets.</li>", f);
    }
    if (p->missing_modules) {
        fputs("<li><b>Not found:</b> <code>", f); H(p->missing_modules);
        fputs("</code> was moved or deleted since the trace and no file with its build-id was found: its frames are shown as offsets.</li>", f);
    }
    if (p->torch_backend && !strcmp(p->torch_backend, "cudaMallocAsync"))
        vt_esc_printf(f, VT_ESC_HTML, "<li><b>PyTorch tensors:</b> each tensor was allocated with cudaMallocAsync (backend:cudaMallocAsync%s): "
                      "the sites are the lines that allocated tensors; memory the driver's pool keeps after frees is counted apart.</li>",
                      p->torch_tensors ? ", set by <code>run --torch-tensors</code>" : "");
    else if (p->caching_allocator) {
        fputs("<li><b>Caching allocator:</b> ", f); H(p->caching_allocator);
        fputs(" allocated here: the tracer sees the segments it reserves from CUDA, not the tensors inside them.", f);
        if (p->torch_backend)
            fputs(p->torch_tensors ? " (<code>run --torch-tensors</code> was given, but no allocation was stream-ordered: this PyTorch did not take the setting.)"
                                   : " <code>vramtrace run --torch-tensors</code> makes each tensor an allocation of its own.", f);
        fputs("</li>", f);
    }
    if (p->duplicate_allocs)
        vt_esc_printf(f, VT_ESC_HTML, "<li><b>%llu allocation%s recorded where one was still live</b> (first: line %ld): a free missing "
                      "from the trace; the older allocation is not counted after it.</li>", (unsigned long long)p->duplicate_allocs,
                      p->duplicate_allocs == 1 ? "" : "s", p->duplicate_line);
    if (p->nerrors) {
        vt_esc_printf(f, VT_ESC_HTML, "<li><b>Failed calls (%llu):</b> ", (unsigned long long)p->error_count);
        for (size_t i = 0; i < p->nerrors; i++) {
            const char *nm = vt_cuda_error_name(p->errors[i].api, p->errors[i].res);
            fputs(i ? ", <code>" : "<code>", f);
            H(p->errors[i].api);
            fputs("</code> \xe2\x86\x92 ", f);
            H(nm ? nm : "error");
            vt_esc_printf(f, VT_ESC_HTML, " (%lld) \xc3\x97%llu", (long long)p->errors[i].res, (unsigned long long)p->errors[i].count);
            int site = p->errors[i].site;
            if (site >= 0 && (size_t)site < p->nsites && p->sites[site].nframes) { /* not "(no backtrace)" */
                fputs(", first from <code>", f);
                H(vt_site_label(p, site));
                fputs("</code>", f);
            }
        }
        fputs("</li>", f);
    }
    fputs("</ul></section>", f);
}

/* Where the process copies from, by bytes (the text's "Copy sites"). */
static void copy_sites(FILE *f, const struct vt_proc *p, int top)
{
    size_t *idx = NULL;
    long n = vt_copy_sites(p, 0, &idx);
    if (n < 0) fputs("<section><h2>Copy sites</h2><p>Unknown: the report ran out of memory for them.</p></section>", f);
    if (n > 0) {
        fputs("<section><h2>Copy sites</h2><table><tr><th class=\"n\">bytes</th><th class=\"n\">copies</th><th class=\"n\">host time</th>"
              "<th class=\"n\">pageable</th><th>call site</th></tr>", f);
        for (long k = 0; k < n && k < top; k++) {
            const struct vt_site *s = &p->sites[idx[k]];
            char d[32];
            vt_esc_printf(f, VT_ESC_HTML, "<tr><td class=\"n\">%s</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td class=\"n\">%llu</td><td>",
                          B(s->copy_bytes), (unsigned long long)s->copy_count,
                          s->copy_ns ? vt_fmt_dur(d, sizeof d, (double)s->copy_ns / 1e9) : "async", (unsigned long long)s->pageable_count);
            site_cell(f, s, 1);
            fputs("</td></tr>", f);
        }
        fputs("</table><p class=\"muted\">Host time: of the synchronous copies. Pageable: copies through pageable host memory "
              "(the driver stages them through a pinned buffer).</p></section>", f);
    }
    free(idx);
}

/* Achieved bandwidth by direction and host memory kind against the reference, and the verdicts. */
static void transfers(FILE *f, struct vt_proc *const *procs, size_t np, const struct vt_refbw *r)
{
    fputs("<section><h2>Transfers: host DDR \xe2\x86\x94 PCIe \xe2\x86\x94 VRAM</h2>", f);
    vt_svg_flow(f, procs, np, r);
    int rows = 0, h;
    enum vt_dir dir;
    for (size_t row = 0; vt_transfer_row(row, &dir, &h); row++) {
        struct vt_dirstat d = vt_dirstat_all(procs, np, dir, h);
        if (!d.count) continue;
        if (!rows++)
            fputs("<table><tr><th>direction</th><th>host memory</th><th class=\"n\">bytes</th><th class=\"n\">copies</th>"
                  "<th class=\"n\">host time</th><th class=\"n\">achieved</th><th>against the reference</th></tr>", f);
        char ds[32];
        vt_esc_printf(f, VT_ESC_HTML, "<tr><td>%s</td><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%llu</td>",
                      vt_rd_dir_name(dir), vt_transfer_host_name(h), B(d.bytes),
                      (unsigned long long)d.count);
        if (d.gbps >= 0) vt_esc_printf(f, VT_ESC_HTML, "<td class=\"n\">%s</td><td class=\"n\">%.2f GB/s</td>", vt_fmt_dur(ds, sizeof ds, d.seconds), d.gbps);
        else fputs("<td class=\"n\">-</td><td class=\"n\">asynchronous only</td>", f);
        int ref = vt_transfer_ref(dir, h);
        fputs("<td>", f);
        if (r && ref >= 0 && r->gbps[ref] > 0) {
            if (d.gbps >= 0) vt_esc_printf(f, VT_ESC_HTML, "%.0f%% of ", 100.0 * d.gbps / r->gbps[ref]);
            vt_esc_printf(f, VT_ESC_HTML, "%s %.1f GB/s", vt_ref_name((enum vt_ref_id)ref), r->gbps[ref]);
        }
        fputs("</td></tr>", f);
    }
    if (rows) fputs("</table><p class=\"muted\">Achieved: bytes over the host time of the synchronous copies.</p>", f);
    struct vt_verdict vs[16];
    size_t nv = vt_transfer_verdicts(procs, np, r, vs, 16);
    for (size_t v = 0; v < nv; v++) {
        char tb[512];
        fputs("<div class=\"verdict\"><b>Verdict:</b> ", f);
        H(vt_verdict_text(tb, sizeof tb, &vs[v]));
        for (size_t k = 0; k < vs[v].nsites; k++) { fputs(k ? "<br>" : "<br>at ", f); fputs("<code>", f); H(vs[v].sites[k]->label); fputs("</code>", f); }
        fputs("</div>", f);
    }
    if (!r) fputs("<p class=\"muted\">Run <code>vramtrace bandwidth --json &gt; bw.json</code> on this machine and pass <code>--bandwidth bw.json</code> to compare with its reference bandwidths.</p>", f);
    fputs("</section>", f);
}

/* Steps and growth (analysis.h's vt_steps, vt_growth): the growth in a sentence, each step's
 * live VRAM at its start (blue) and its peak (orange) as two lines, the growing sites, the forecast. */
static void steps_growth(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o)
{
    const struct vt_steps *s = &p->steps;
    const struct vt_growth *g = &p->growth;
    if (s->source == VT_STEPS_NONE || !s->nlist) return;
    vt_esc_printf(f, VT_ESC_HTML, "<section><h2>Steps (%llu) and growth</h2><p>", (unsigned long long)s->count);
    if (s->source == VT_STEPS_API) fputs("From the program's <code>vramtrace_step()</code> calls", f);
    else if (s->source == VT_STEPS_NVTX) { fputs("From the NVTX range <code>", f); H(s->name); fputs("</code>", f); }
    else { fputs("From a period in the calls the tracer always writes (", f); H(s->name); fputs(")", f); }
    fputs(". ", f);
    if (g->kind == VT_GROWTH_FLAT) vt_esc_printf(f, VT_ESC_HTML, "Live VRAM is <b>flat</b> from step to step (wobbling by %s).", B(g->wobble_bytes));
    else if (g->kind == VT_GROWTH_WARMUP)
        vt_esc_printf(f, VT_ESC_HTML, "A <b>warm-up</b>: live VRAM grew %s over steps 1-%zu, then stopped growing.", B(g->warmup_bytes), g->warmup_steps);
    else if (g->kind == VT_GROWTH_STEADY)
        vt_esc_printf(f, VT_ESC_HTML, "Live VRAM is <b>growing: +%s per step</b> over steps %zu-%zu.", B((uint64_t)g->rate_bytes), g->window_first, g->window_last);
    fputs("</p>", f);
    if (s->live_known && s->nlist > 1 && s->max_peak) {
        const int W = 800, Ht = 160;
        size_t n = s->nlist, stride = n > 2000 ? (n + 1999) / 2000 : 1;
        vt_esc_printf(f, VT_ESC_HTML, "<svg class=\"steps\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">", W, Ht + 10, W, Ht + 10);
        for (int line = 0; line < 2; line++) {
            vt_esc_printf(f, VT_ESC_HTML, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", line ? "#e67e22" : "#2e86de");
            for (size_t i = 0; i < n; i += stride) {
                uint64_t v = line ? s->list[i].peak : s->list[i].live_start;
                vt_esc_printf(f, VT_ESC_HTML, "%s%.1f,%.1f", i ? " " : "", (double)i * (W - 10) / (double)(n - 1) + 5,
                              5 + Ht - (double)v * Ht / (double)s->max_peak);
            }
            fputs("\"/>", f);
        }
        fputs("</svg><p class=\"muted\">Per step, left to right: blue, live VRAM as the step began; orange, the most live during it.</p>", f);
    }
    if (g->kind == VT_GROWTH_STEADY && g->nsites) {
        fputs("<table><tr><th class=\"n\">per step</th><th class=\"n\">rose in</th><th>site whose live bytes rise</th></tr>", f);
        for (size_t i = 0; i < g->nsites && i < (size_t)o->top; i++) {
            vt_esc_printf(f, VT_ESC_HTML, "<tr><td class=\"n\">+%s</td><td class=\"n\">%llu of %zu</td><td><code>",
                          B((uint64_t)(g->sites[i].bytes_per_step > 0 ? g->sites[i].bytes_per_step : 0)),
                          (unsigned long long)g->sites[i].rises, g->window_last - g->window_first + 1);
            H(vt_site_label(p, g->sites[i].site));
            fputs("</code></td></tr>", f);
        }
        fputs("</table>", f);
    }
    if (g->has_forecast) {
        char d0[32];
        vt_esc_printf(f, VT_ESC_HTML, "<p><b>Forecast:</b> device %d runs out at step %llu, about %s after the trace's last step, "
                      "when a step's peak reaches %s.</p>", g->forecast_dev, (unsigned long long)g->forecast_step,
                      vt_fmt_dur(d0, sizeof d0, g->forecast_seconds), B(g->capacity_bytes));
    }
    fputs("</section>", f);
}


/* A section's table of sites (vt_merge_sites's WHICH: 1 leaked, 2 released by a reset), then its end. */
static void site_table(FILE *f, const struct vt_proc *p, int which, const struct vt_render_opts *o)
{
    struct vt_merged_site *m = NULL;
    struct vt_proc *one = (struct vt_proc *)p;
    long k = vt_merge_sites(&one, 1, which, &m);
    fputs("<table><tr><th class=\"n\">bytes</th><th class=\"n\">allocs</th><th>call site</th></tr>", f);
    for (long i = 0; i < k && i < o->top; i++) {
        vt_esc_printf(f, VT_ESC_HTML, "<tr><td class=\"n\">%s</td><td class=\"n\">%llu</td><td><code>",
                      B(m[i].bytes), (unsigned long long)m[i].count);
        H(m[i].label);
        fputs("</code></td></tr>", f);
    }
    fputs("</table></section>", f);
    free(m);
}

static void process(FILE *f, const struct vt_proc *p, const struct vt_render_opts *o, int multi)
{
    char buf[128], w[64];
    notes(f, p);
    fputs("<section><h2>", f);
    if (multi) { H(base(p->path)); fputs(": ", f); }
    fputs("Live device memory</h2>", f);
    vt_svg_timeline(f, p);
    fputs("<p class=\"muted\">Blue: live VRAM (device, async and VMM allocations; managed and pinned host memory are not counted). "
          "Orange dot: the peak. Red: failed allocations. Hover for details.</p></section>", f);
    steps_growth(f, p, o);

    vt_esc_printf(f, VT_ESC_HTML, "<section><h2>Memory at the peak by call site (%s)</h2>", B(p->peak));
    if (p->peak_ranges[0]) { fputs("<p>NVTX range: <code>", f); H(p->peak_ranges); fputs("</code></p>", f); }
    vt_svg_treemap(f, p);
    table_sites(f, p, p->peak_sites, p->npeak_sites, p->peak, o->top, 1);
    size_t used = vt_vram_devices(p);
    for (size_t i = 0; used > 1 && i < p->ndevices; i++) {   /* several GPUs: what filled each one */
        const struct vt_device *d = &p->devices[i];
        if (!d->peak) continue;
        vt_esc_printf(f, VT_ESC_HTML, "<h3>Peak on dev %d: %s at %s</h3>", d->dev, B(d->peak), vt_fmt_when(w, sizeof w, p, d->peak_t));
        table_sites(f, p, d->peak_sites, d->npeak_sites, d->peak, o->top, 0);
    }
    fputs("</section>", f);

    if (p->nranges) {
        fputs("<section><h2>NVTX ranges</h2><table><tr><th class=\"n\">peak</th><th class=\"n\">allocs</th><th class=\"n\">bytes</th>"
              "<th class=\"n\">frees</th><th class=\"n\">freed</th><th>range</th></tr>", f);
        for (size_t i = 0; i < p->nranges && i < (size_t)o->top; i++) {
            const struct vt_range *r = &p->ranges[i];
            vt_esc_printf(f, VT_ESC_HTML, "<tr><td class=\"n\">%s</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td class=\"n\">%llu</td>"
                    "<td class=\"n\">%s</td><td><code>", B(r->peak_bytes), (unsigned long long)r->alloc_count, B(r->alloc_bytes),
                    (unsigned long long)r->free_count, B(r->free_bytes));
            H(r->name);
            fputs("</code></td></tr>", f);
        }
        fputs("</table><p class=\"muted\">Peak: live VRAM when the range opened and after each allocation inside it; "
              "allocations in nested ranges also count in the enclosing ones.</p></section>", f);
    }
    if (p->nooms) {
        vt_esc_printf(f, VT_ESC_HTML, "<section><h2>Failed allocations (%llu", (unsigned long long)p->oom_count);
        if (p->oom_recovered) vt_esc_printf(f, VT_ESC_HTML, ", %llu retried successfully", (unsigned long long)p->oom_recovered);
        fputs(")</h2>", f);
        for (size_t i = 0; i < p->nooms && i < (size_t)o->top; i++) {
            const struct vt_oom *x = &p->ooms[i];
            fputs("<div class=\"oom\"><b>", f);
            H(x->api);
            vt_esc_printf(f, VT_ESC_HTML, " of %s failed</b> at %s", B(x->requested), vt_fmt_when(w, sizeof w, p, x->t));
            vt_esc_printf(f, VT_ESC_HTML, "; live %s", B(x->dev >= 0 ? x->live_dev : x->live));
            if (x->dev >= 0 && x->live_dev != x->live) vt_esc_printf(f, VT_ESC_HTML, " on dev %d (%s in the process)", x->dev, B(x->live));
            if (x->has_free) vt_esc_printf(f, VT_ESC_HTML, "; driver free %s of %s", B(x->free_bytes), B(x->total_bytes));
            fputs("<br>requested at <code>", f);
            H(vt_site_label(p, x->site));
            fputs("</code>", f);
            if (x->ranges[0]) { fputs(" in range <code>", f); H(x->ranges); fputs("</code>", f); }
            if (x->recovered) {
                vt_esc_printf(f, VT_ESC_HTML, "<br><b>recovered:</b> the same size succeeded from this thread at %s with %s less live, at <code>",
                              vt_fmt_when(w, sizeof w, p, x->recovered_t), B(x->freed_before_retry));
                H(vt_site_label(p, x->recovered_site));
                fputs("</code>", f);
            } else if (p->oom_recovered) fputs("<br><b>not recovered:</b> no later allocation of this size from this thread succeeded", f);
            if (x->nholders) {
                fputs("<h3>held by</h3>", f);
                table_sites(f, p, x->holders, x->nholders, x->live, o->top, 0);
            }
            fputs("</div>", f);
        }
        fputs("</section>", f);
    }
    if (p->nsnapshots) {
        vt_esc_printf(f, VT_ESC_HTML, "<section><h2>Snapshots (%llu)</h2>", (unsigned long long)p->snapshot_count);
        for (size_t i = 0; i < p->nsnapshots; i++) {
            const struct vt_snapshot *s = &p->snapshots[i];
            fputs("<div class=\"oom\"><b>", f);
            H(s->label);
            vt_esc_printf(f, VT_ESC_HTML, "</b> at %s: %s live", vt_fmt_when(w, sizeof w, p, s->t), B(s->live));
            if (i) {
                const struct vt_snapshot *b = &p->snapshots[i - 1];
                uint64_t d = s->live > b->live ? s->live - b->live : b->live - s->live;
                vt_esc_printf(f, VT_ESC_HTML, ", %s%s since <b>", s->live == b->live ? "no change" : s->live > b->live ? "+" : "-",
                              s->live == b->live ? "" : B(d));
                H(b->label);
                fputs("</b>", f);
            }
            if (s->nholders) table_sites(f, p, s->holders, s->nholders, s->live, o->top, 0);
            fputs("</div>", f);
        }
        fputs("</section>", f);
    }
    if (p->nfindings) {
        char fs[96];
        vt_esc_printf(f, VT_ESC_HTML, "<section><h2>Findings (%s)</h2><table><tr><th>severity</th><th>kind</th><th>kernel</th><th>arg</th><th>address</th><th>site</th><th>message</th><th class=\"n\">times</th></tr>",
                vt_fmt_findings(fs, sizeof fs, p->finding_errors, p->finding_warnings));
        for (size_t i = 0; i < p->nfindings && i < (size_t)o->top * 10; i++) {
            const struct vt_finding *x = &p->findings[i];
            fputs("<tr><td>", f); H(x->severity);
            fputs("</td><td>", f); H(x->kind);
            fputs("</td><td><code>", f); H(x->kernel);
            fputs("</code></td><td class=\"n\">", f);
            if (x->arg >= 0) vt_esc_printf(f, VT_ESC_HTML, "%lld", (long long)x->arg);
            vt_esc_printf(f, VT_ESC_HTML, "</td><td><code>0x%llx</code></td><td><code>", (unsigned long long)x->value);
            H(vt_site_label(p, x->site));
            fputs("</code></td><td>", f); H(x->msg);
            vt_esc_printf(f, VT_ESC_HTML, "</td><td class=\"n\">%llu</td></tr>", (unsigned long long)x->count);
        }
        fputs("</table></section>", f);
    }
    if (p->nnotes) {
        fputs("<section><h2>Notes (not findings)</h2><table><tr><th>kernel</th><th class=\"n\">words</th><th>first at</th><th>note</th></tr>", f);
        for (size_t i = 0; i < p->nnotes && i < (size_t)o->top * 10; i++) {
            char msg[256];
            fputs("<tr><td><code>", f); H(p->notes[i].kernel);
            vt_esc_printf(f, VT_ESC_HTML, "</code></td><td class=\"n\">%llu</td><td><code>", (unsigned long long)p->notes[i].words);
            H(vt_site_label(p, p->notes[i].site));
            fputs("</code></td><td>", f);
            H(vt_note_text(msg, sizeof msg, &p->notes[i]));
            fputs("</td></tr>", f);
        }
        fputs("</table></section>", f);
    }
    if (p->leak_bytes) {
        vt_esc_printf(f, VT_ESC_HTML, "<section><h2>Leaks: %s in %llu allocations %s</h2>", B(p->leak_bytes),
                      (unsigned long long)p->leak_count, p->has_footer && !p->footer_dropped ? "at exit" : "live when the trace ended");
        site_table(f, p, 1, o);
    }
    if (p->reset_leak_count || p->reset_leak_managed) {   /* beside the leaks, not in them (docs/report.md) */
        vt_esc_printf(f, VT_ESC_HTML, "<section><h2>Released by %s, never freed by the program: %s in %llu allocations (not counted as leaked)</h2>",
                      vt_reset_api(p), B(p->reset_leak_bytes), (unsigned long long)p->reset_leak_count);
        site_table(f, p, 2, o);
    }
    if (p->nlargest) {
        fputs("<section><h2>Largest allocations</h2><table><tr><th class=\"n\">bytes</th><th>mem</th><th>API</th><th>when</th><th>call site</th></tr>", f);
        for (size_t i = 0; i < p->nlargest && i < (size_t)o->top; i++) {
            const struct vt_largest *l = &p->largest[i];
            vt_esc_printf(f, VT_ESC_HTML, "<tr><td class=\"n\">%s</td><td>%s</td><td>", B(l->size), vt_rd_mem_name(l->mem));
            H(l->api);
            vt_esc_printf(f, VT_ESC_HTML, "</td><td>%s</td><td><code>", vt_fmt_when(buf, sizeof buf, p, l->t));
            H(vt_site_label(p, l->site));
            fputs("</code></td></tr>", f);
        }
        fputs("</table></section>", f);
    }
    copy_sites(f, p, o->top);
}

int vt_render_html(FILE *f, struct vt_proc *const *procs, size_t n, const struct vt_render_opts *o)
{
    const struct vt_proc *pk = procs[vt_peak_proc(procs, n)];
    char v[96];
    uint64_t oomc = 0, fe = 0, fw = 0, leak = 0, errs = 0;
    for (size_t i = 0; i < n; i++) {
        oomc += procs[i]->oom_count; fe += procs[i]->finding_errors; fw += procs[i]->finding_warnings; vt_sat_add(&leak, procs[i]->leak_bytes); errs += procs[i]->error_count;
    }
    fputs("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>vramtrace report: ", f);
    H(base(pk->program[0] ? pk->program : pk->path));
    fputs("</title><style>", f);
    fputs(css, f); /* the renderer's own stylesheet: markup, not text */
    fputs("</style></head><body><header><h1>vramtrace report: ", f);
    H(pk->program[0] ? pk->program : "(unknown program)");
    fputs("</h1><div class=\"sub\">", f);
    if (n == 1) {
        vt_esc_printf(f, VT_ESC_HTML, "pid %lld", (long long)pk->pid);
        if (pk->rank >= 0) vt_esc_printf(f, VT_ESC_HTML, ", rank %lld", (long long)pk->rank);
        if (pk->hostname[0]) { fputs(" on ", f); H(pk->hostname); }
        fputs(" \xc2\xb7 trace ", f);
        H(pk->path);
        char why[400];
        vt_esc_printf(f, VT_ESC_HTML, " \xc2\xb7 %llu events \xc2\xb7 %.3g s", (unsigned long long)pk->events, (double)(pk->t_end - pk->t0) / 1e9);
        if (vt_incomplete_reason(why, sizeof why, pk)) { fputs(" \xc2\xb7 incomplete: ", f); H(why); }
    } else vt_esc_printf(f, VT_ESC_HTML, "%zu traces", n);
    fputs("</div></header><main><div class=\"cards\" style=\"margin-top:18px\">", f);
    snprintf(v, sizeof v, "%s", B(pk->peak));
    card(f, "", n > 1 ? "highest peak VRAM" : "peak VRAM", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)oomc);
    card(f, oomc ? "bad" : "ok", "failed allocations", v);
    snprintf(v, sizeof v, "%s", B(leak));
    card(f, leak ? "warn" : "ok", "leaked VRAM", v);
    card(f, fe ? "bad" : fw ? "warn" : "ok", "findings", vt_fmt_findings(v, sizeof v, fe, fw));
    snprintf(v, sizeof v, "%llu", (unsigned long long)errs);
    card(f, errs ? "warn" : "ok", "failed API calls", v);
    fputs("</div>", f);
    if (n > 1) {
        size_t top = vt_peak_proc(procs, n);
        fputs("<section><h2>Ranks</h2><table><tr><th>rank</th><th>pid</th><th>host</th><th class=\"n\">peak</th><th class=\"n\">OOMs</th>"
              "<th class=\"n\">errors</th><th class=\"n\">warnings</th><th class=\"n\">leaked</th><th>trace</th></tr>", f);
        for (size_t i = 0; i < n; i++) {
            const struct vt_proc *p = procs[i];
            fputs(i == top ? "<tr style=\"background:#fff6e0\"><td>" : "<tr><td>", f);
            if (p->rank >= 0) vt_esc_printf(f, VT_ESC_HTML, "%lld", (long long)p->rank); else fputs("-", f);
            vt_esc_printf(f, VT_ESC_HTML, "</td><td>%lld</td><td>", (long long)p->pid);
            H(p->hostname);
            vt_esc_printf(f, VT_ESC_HTML, "</td><td class=\"n\">%s%s</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td><code>",
                    B(p->peak), i == top ? " (highest)" : "", (unsigned long long)p->oom_count,
                    (unsigned long long)p->finding_errors, (unsigned long long)p->finding_warnings, B(p->leak_bytes));
            H(base(p->path));
            fputs("</code></td></tr>", f);
        }
        fputs("</table></section>", f);
    }
    for (size_t i = 0; i < n; i++) process(f, procs[i], o, n > 1);
    transfers(f, procs, n, o->ref);
    fputs("<p class=\"muted\">Generated by vramtrace report. Static page: no scripts, no network.</p></main></body></html>\n", f);
    return ferror(f) ? -1 : 0;
}
