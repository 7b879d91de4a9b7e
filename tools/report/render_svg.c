/* render_svg.c - the inline SVG pictures of the HTML report: live-VRAM timeline (downsampled
 * buckets, peak and OOMs marked, <title> hovers), squarified treemap of the peak by call site,
 * and the host DDR <-> PCIe <-> VRAM data-flow picture. */
#include "report/render_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define H(s) vt_html_str(f, (s))

#define B(x) vtr_bytes_tmp(x)

/* ---- timeline ---- */
static void nice_ticks(double max, double *step)
{
    double raw = max / 5, mag = pow(10, floor(log10(raw > 0 ? raw : 1))), r = raw / mag;
    *step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
}

void vt_svg_timeline(FILE *f, const struct vt_proc *p)
{
    const double W = 1100, Hh = 300, L = 78, R = 20, T = 18, Bm = 40, pw = W - L - R, ph = Hh - T - Bm;
    double dur = (double)(p->t_end - p->t0);
    if (dur <= 0) dur = 1;
    uint64_t ymax = p->peak;
    for (size_t i = 0; i < p->nooms; i++) if (p->ooms[i].live + p->ooms[i].requested > ymax) ymax = p->ooms[i].live + p->ooms[i].requested;
    if (!ymax) ymax = 1;
    double ym = (double)ymax * 1.08;
    /* bytes axis in the unit of the peak */
    const char *unit = "GiB";
    double div = 1 << 30;
    if (ymax < (1ull << 20)) { unit = "KiB"; div = 1024; } else if (ymax < (1ull << 30)) { unit = "MiB"; div = 1 << 20; }
    vt_esc_printf(f, VT_ESC_HTML, "<svg viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" role=\"img\" aria-label=\"live device memory over time\">", W, Hh);
    vt_esc_printf(f, VT_ESC_HTML, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fafbfc\" stroke=\"#dde\"/>", L, T, pw, ph);
    double step;
    nice_ticks(ym / div, &step);
    for (double v = 0; v <= ym / div + 1e-9; v += step) {
        double y = T + ph - v * div / ym * ph;
        vt_esc_printf(f, VT_ESC_HTML, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e6ea\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" fill=\"#556\">%g %s</text>",
                L, L + pw, y, y, L - 6, y + 4, v, unit);
    }
    nice_ticks(dur / 1e9, &step);
    for (double s = 0; s <= dur / 1e9 + 1e-12; s += step) {
        double x = L + s * 1e9 / dur * pw;
        vt_esc_printf(f, VT_ESC_HTML, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eef0f3\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" fill=\"#556\">%g s</text>",
                x, x, T, T + ph, x, T + ph + 16, s);
    }
    vt_esc_printf(f, VT_ESC_HTML, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" fill=\"#334\">time since the trace started</text>",
            L + pw / 2, Hh - 4);
    /* area of the per-bucket maximum, line of the value at each bucket's end */
    double bw = (double)p->bucket_ns;
    uint64_t level = 0;
    fputs("<path fill=\"#4a7bd0\" fill-opacity=\".25\" stroke=\"none\" d=\"", f);
    vt_esc_printf(f, VT_ESC_HTML, "M%.1f %.1f", L, T + ph);
    for (size_t i = 0; i < p->ntimeline; i++) {
        const struct vt_bucket *b = &p->timeline[i];
        uint64_t mx = b->used ? b->max : level;
        double x0 = L + fmin((double)i * bw / dur, 1) * pw, x1 = L + fmin((double)(i + 1) * bw / dur, 1) * pw;
        double y = T + ph - (double)mx / ym * ph;
        if (b->used) level = b->last;
        vt_esc_printf(f, VT_ESC_HTML, "L%.1f %.1fL%.1f %.1fL%.1f %.1f", x0, y, x1, y, x1, T + ph - (double)level / ym * ph);
    }
    vt_esc_printf(f, VT_ESC_HTML, "L%.1f %.1fL%.1f %.1fZ\"/>", L + pw, T + ph - (double)level / ym * ph, L + pw, T + ph);
    level = 0;
    fputs("<path fill=\"none\" stroke=\"#2b5fb8\" stroke-width=\"1.6\" d=\"", f);
    vt_esc_printf(f, VT_ESC_HTML, "M%.1f %.1f", L, T + ph);
    for (size_t i = 0; i < p->ntimeline; i++) {
        const struct vt_bucket *b = &p->timeline[i];
        if (b->used) level = b->last;
        double x1 = L + fmin((double)(i + 1) * bw / dur, 1) * pw;
        vt_esc_printf(f, VT_ESC_HTML, "H%.1fV%.1f", x1 - (b->used ? 0 : 0), T + ph - (double)level / ym * ph);
    }
    vt_esc_printf(f, VT_ESC_HTML, "H%.1f\"/>", L + pw);
    /* device capacity */
    for (size_t i = 0; i < p->ndevices; i++)
        if (p->devices[i].total_bytes && (double)p->devices[i].total_bytes <= ym) {
            double y = T + ph - (double)p->devices[i].total_bytes / ym * ph;
            vt_esc_printf(f, VT_ESC_HTML, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" stroke-dasharray=\"6 4\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#666\">dev %d capacity %s</text>",
                    L, L + pw, y, y, L + 6, y - 4, p->devices[i].dev, B(p->devices[i].total_bytes));
        }
    /* hover targets: one per used bucket */
    for (size_t i = 0; i < p->ntimeline; i++) {
        const struct vt_bucket *b = &p->timeline[i];
        if (!b->used) continue;
        double x0 = L + fmin((double)i * bw / dur, 1) * pw, x1 = L + fmin((double)(i + 1) * bw / dur, 1) * pw;
        if (x1 - x0 < 2) x1 = x0 + 2;
        vt_esc_printf(f, VT_ESC_HTML, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"transparent\"><title>+%.4f s: live %s (max %s)",
                x0, T, x1 - x0, ph, (double)b->t0 / 1e9, B(b->last), B(b->max));
        if (b->big_size) {
            vt_esc_printf(f, VT_ESC_HTML, "\nlargest allocation here: %s ", B(b->big_size));
            H(b->big_api ? b->big_api : "");
            fputs(" at ", f);
            H(vt_site_label(p, b->big_site));
        }
        fputs("</title></rect>", f);
    }
    /* OOMs and the peak */
    for (size_t i = 0; i < p->nooms; i++) {
        const struct vt_oom *o = &p->ooms[i];
        double x = L + (double)(o->t - p->t0) / dur * pw;
        double y = T + ph - (double)o->live / ym * ph;
        vt_esc_printf(f, VT_ESC_HTML, "<g><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#d0463a\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>"
                "<path d=\"M%.1f %.1fl-6 -10h12z\" fill=\"#d0463a\"/>", x, x, T, T + ph, x, y - 2);
        if (i < 3) vt_esc_printf(f, VT_ESC_HTML, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"12\" fill=\"#d0463a\" font-weight=\"600\">OOM</text>", x + 4, T + 14 + 14.0 * (double)i);
        vt_esc_printf(f, VT_ESC_HTML, "<title>OOM: %s of %s failed at +%.4f s; live %s; ", o->api, B(o->requested), (double)(o->t - p->t0) / 1e9, B(o->live));
        fputs("requested at ", f);
        H(vt_site_label(p, o->site));
        if (o->nholders) { vt_esc_printf(f, VT_ESC_HTML, "; most held by %s ", B(o->holders[0].bytes)); H(vt_site_label(p, o->holders[0].site)); }
        fputs("</title></g>", f);
    }
    if (p->peak) {
        double x = L + (double)(p->peak_t - p->t0) / dur * pw, y = T + ph - (double)p->peak / ym * ph;
        vt_esc_printf(f, VT_ESC_HTML, "<g><circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#f0a020\" stroke=\"#fff\" stroke-width=\"1.5\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"600\" fill=\"#a06000\" text-anchor=\"%s\">peak %s</text>"
                "<title>peak: %s live at +%.4f s", x, y, x + (x > L + pw - 120 ? -8 : 8), y - 6,
                x > L + pw - 120 ? "end" : "start", B(p->peak), B(p->peak), (double)(p->peak_t - p->t0) / 1e9);
        if (p->npeak_sites) { fputs("; largest holder ", f); H(vt_site_label(p, p->peak_sites[0].site)); }
        fputs("</title></g>", f);
    }
    fputs("</svg>", f);
}

/* ---- treemap (squarified) ---- */
struct tm_item { const char *label; uint64_t bytes; double area; };

static double worst(const struct tm_item *it, size_t a, size_t b, double side)
{
    double s = 0, mx = 0, mn = 1e300;
    for (size_t i = a; i < b; i++) { s += it[i].area; mx = fmax(mx, it[i].area); mn = fmin(mn, it[i].area); }
    double s2 = s * s, w2 = side * side;
    return fmax(w2 * mx / s2, s2 / (w2 * mn));
}

static void tm_rect(FILE *f, const struct tm_item *it, double x, double y, double w, double h, uint64_t total, size_t idx)
{
    static const char *const pal[] = { "#4a7bd0", "#3a9d8f", "#7b61c4", "#d07a3a", "#5a9d3a", "#c4557b", "#3a86b8", "#9d8a3a" };
    vt_esc_printf(f, VT_ESC_HTML, "<g><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"2\"/>",
            x, y, w, h, it->label ? pal[idx % 8] : "#a0a6b0");
    size_t maxc = (size_t)(w / 7.2);
    if (w > 40 && h > 30) {
        char lab[256];
        snprintf(lab, sizeof lab, "%s", it->label ? it->label : "other sites");
        if (strlen(lab) > maxc && maxc > 3) { lab[maxc - 1] = '\0'; strcat(lab, "\xe2\x80\xa6"); }
        vt_esc_printf(f, VT_ESC_HTML, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#fff\" font-weight=\"600\">", x + 6, y + 17);
        H(lab);
        vt_esc_printf(f, VT_ESC_HTML, "</text><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#fff\">%s (%.1f%%)</text>", x + 6, y + 32,
                B(it->bytes), 100.0 * (double)it->bytes / (double)total);
    }
    fputs("<title>", f);
    H(it->label ? it->label : "other sites");
    vt_esc_printf(f, VT_ESC_HTML, ": %s at the peak</title></g>", B(it->bytes));
}

void vt_svg_treemap(FILE *f, const struct vt_proc *p)
{
    const double W = 1100, Hh = 320;
    size_t n = p->npeak_sites < 24 ? p->npeak_sites : 24;
    if (!n) { fputs("<p class=\"muted\">No device memory was live at the peak.</p>", f); return; }
    struct tm_item it[25];
    uint64_t total = 0, shown = 0;
    for (size_t i = 0; i < p->npeak_sites; i++) vt_sat_add(&total, p->peak_sites[i].bytes);
    for (size_t i = 0; i < n; i++) {
        it[i] = (struct tm_item){ vt_site_label(p, p->peak_sites[i].site), p->peak_sites[i].bytes, 0 };
        vt_sat_add(&shown, it[i].bytes);
    }
    if (total > shown) it[n++] = (struct tm_item){ NULL, total - shown, 0 };
    for (size_t i = 0; i < n; i++) it[i].area = (double)it[i].bytes / (double)total * W * Hh;
    vt_esc_printf(f, VT_ESC_HTML, "<svg viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" role=\"img\" aria-label=\"memory at the peak by call site\">", W, Hh);
    double x = 0, y = 0, w = W, h = Hh;
    size_t i = 0;
    while (i < n) {
        double side = fmin(w, h);
        size_t j = i + 1;
        while (j < n && worst(it, i, j + 1, side) <= worst(it, i, j, side)) j++;
        double s = 0;
        for (size_t k = i; k < j; k++) s += it[k].area;
        if (w >= h) {
            double cw = s / h, cy = y;
            for (size_t k = i; k < j; k++) { double kh = it[k].area / cw; tm_rect(f, &it[k], x, cy, cw, kh, total, k); cy += kh; }
            x += cw; w -= cw;
        } else {
            double rh = s / w, cx = x;
            for (size_t k = i; k < j; k++) { double kw = it[k].area / rh; tm_rect(f, &it[k], cx, y, kw, rh, total, k); cx += kw; }
            y += rh; h -= rh;
        }
        i = j;
    }
    fputs("</svg>", f);
}


/* ---- data flow: host DDR <-> PCIe <-> VRAM ---- */
static void rate(char *buf, size_t n, double gbps, uint64_t bytes)
{
    if (!bytes) snprintf(buf, n, "-");
    else if (gbps >= 0) snprintf(buf, n, "%.2f GB/s", gbps); else snprintf(buf, n, "async only");
}

static void link_label(FILE *f, double x, double y, const char *dir, struct vt_proc *const *procs, size_t n,
                       enum vt_dir d, const struct vt_refbw *ref, int ref_pinned, int ref_pageable)
{
    struct vt_dirstat all = vt_dirstat_all(procs, n, d, VT_HOST__COUNT);
    char r1[32], r2[32], r3[32];
    rate(r1, sizeof r1, all.gbps, all.bytes);
    vt_esc_printf(f, VT_ESC_HTML, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"14\" font-weight=\"600\" text-anchor=\"middle\" fill=\"#1d2330\">%s  %s in %llu copies  \xc2\xb7  %s achieved</text>",
            x, y, dir, B(all.bytes), (unsigned long long)all.count, r1);
    if (ref_pinned < 0) {   /* d2d */
        if (ref && ref->gbps[VT_REF_D2D] > 0)
            vt_esc_printf(f, VT_ESC_HTML, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\" fill=\"#556\">reference d2d_copy %.1f GB/s</text>",
                    x, y + 16, ref->gbps[VT_REF_D2D]);
        return;
    }
    struct vt_dirstat pg = vt_dirstat_all(procs, n, d, VT_HOST_PAGEABLE), pn = vt_dirstat_all(procs, n, d, VT_HOST_PINNED);
    rate(r2, sizeof r2, pg.gbps, pg.bytes);
    rate(r3, sizeof r3, pn.gbps, pn.bytes);
    vt_esc_printf(f, VT_ESC_HTML, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\" fill=\"#445\">pageable %s @ %s  \xc2\xb7  pinned %s @ %s",
            x, y + 17, B(pg.bytes), r2, B(pn.bytes), r3);
    if (ref && ref->gbps[ref_pinned] > 0) vt_esc_printf(f, VT_ESC_HTML, "  \xc2\xb7  reference pinned %.1f GB/s", ref->gbps[ref_pinned]);
    if (ref && ref->gbps[ref_pageable] > 0) vt_esc_printf(f, VT_ESC_HTML, ", pageable %.1f GB/s", ref->gbps[ref_pageable]);
    fputs("</text>", f);
    if (ref && ref->gbps[ref_pinned] > 0 && all.gbps >= 0) {
        double u = all.gbps / ref->gbps[ref_pinned];
        double bw = 240;
        vt_esc_printf(f, VT_ESC_HTML, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"8\" rx=\"4\" fill=\"#e4e6ea\"/>"
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.1f\" height=\"8\" rx=\"4\" fill=\"%s\"><title>%.0f%% of the measured pinned bandwidth</title></rect>"
                "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" fill=\"#556\">%.0f%% of reference</text>",
                x - bw / 2, y + 24, bw, x - bw / 2, y + 24, fmin(u, 1) * bw, u < 0.5 ? "#d0463a" : u < 0.8 ? "#e0a030" : "#3a9d5d",
                100 * u, x + bw / 2 + 8, y + 32, 100 * u);
    }
}

void vt_svg_flow(FILE *f, struct vt_proc *const *procs, size_t n, const struct vt_refbw *ref)
{
    const double W = 1100, Hh = 330;
    vt_esc_printf(f, VT_ESC_HTML, "<svg viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" role=\"img\" aria-label=\"data flow\">"
            "<defs><marker id=\"ah\" markerWidth=\"10\" markerHeight=\"10\" refX=\"8\" refY=\"5\" orient=\"auto\">"
            "<path d=\"M0 0L10 5L0 10z\" fill=\"#4a5468\"/></marker></defs>", W, Hh);
    /* boxes */
    fputs("<rect x=\"20\" y=\"70\" width=\"200\" height=\"150\" rx=\"10\" fill=\"#e8eef9\" stroke=\"#4a7bd0\" stroke-width=\"2\"/>"
          "<text x=\"120\" y=\"138\" font-size=\"18\" font-weight=\"600\" text-anchor=\"middle\">Host DDR</text>", f);
    if (ref && ref->gbps[VT_REF_HOST_DDR] > 0)
        vt_esc_printf(f, VT_ESC_HTML, "<text x=\"120\" y=\"160\" font-size=\"12\" text-anchor=\"middle\" fill=\"#556\">copy %.1f GB/s (reference)</text>", ref->gbps[VT_REF_HOST_DDR]);
    struct vt_dirstat hh = vt_dirstat_all(procs, n, VT_DIR_H2H, VT_HOST__COUNT);
    if (hh.count) vt_esc_printf(f, VT_ESC_HTML, "<text x=\"120\" y=\"180\" font-size=\"12\" text-anchor=\"middle\" fill=\"#556\">h2h %s</text>", B(hh.bytes));
    fputs("<rect x=\"880\" y=\"70\" width=\"200\" height=\"150\" rx=\"10\" fill=\"#eaf6ee\" stroke=\"#3a9d5d\" stroke-width=\"2\"/>"
          "<text x=\"980\" y=\"138\" font-size=\"18\" font-weight=\"600\" text-anchor=\"middle\">GPU VRAM</text>", f);
    uint64_t peak = 0;
    for (size_t i = 0; i < n; i++) peak = procs[i]->peak > peak ? procs[i]->peak : peak;
    vt_esc_printf(f, VT_ESC_HTML, "<text x=\"980\" y=\"160\" font-size=\"12\" text-anchor=\"middle\" fill=\"#556\">peak %s</text>", B(peak));
    if (ref && ref->gbps[VT_REF_VRAM_TRIAD] > 0)
        vt_esc_printf(f, VT_ESC_HTML, "<text x=\"980\" y=\"178\" font-size=\"12\" text-anchor=\"middle\" fill=\"#556\">triad %.0f GB/s (reference)</text>", ref->gbps[VT_REF_VRAM_TRIAD]);
    /* PCIe band */
    fputs("<rect x=\"220\" y=\"128\" width=\"660\" height=\"34\" fill=\"#f0f1f4\" stroke=\"#c8ccd4\"/>", f);
    if (ref && ref->pcie_gbps > 0)
        vt_esc_printf(f, VT_ESC_HTML, "<text x=\"550\" y=\"150\" font-size=\"13\" text-anchor=\"middle\" fill=\"#445\">PCIe gen %d x%d  \xc2\xb7  %.1f GB/s theoretical per direction</text>",
                ref->pcie_gen, ref->pcie_width, ref->pcie_gbps);
    else fputs("<text x=\"550\" y=\"150\" font-size=\"13\" text-anchor=\"middle\" fill=\"#445\">PCIe</text>", f);
    /* arrows */
    fputs("<line x1=\"224\" y1=\"112\" x2=\"872\" y2=\"112\" stroke=\"#4a5468\" stroke-width=\"3\" marker-end=\"url(#ah)\"/>"
          "<line x1=\"876\" y1=\"178\" x2=\"228\" y2=\"178\" stroke=\"#4a5468\" stroke-width=\"3\" marker-end=\"url(#ah)\"/>", f);
    link_label(f, 550, 40, "H2D", procs, n, VT_DIR_H2D, ref, VT_REF_H2D_PINNED, VT_REF_H2D_PAGEABLE);
    link_label(f, 550, 200, "D2H", procs, n, VT_DIR_D2H, ref, VT_REF_D2H_PINNED, VT_REF_D2H_PAGEABLE);
    /* d2d loop under the VRAM box */
    fputs("<path d=\"M940 220 C 920 290, 1040 290, 1020 226\" fill=\"none\" stroke=\"#4a5468\" stroke-width=\"3\" marker-end=\"url(#ah)\"/>", f);
    link_label(f, 720, 290, "D2D", procs, n, VT_DIR_D2D, ref, -1, -1);
    fputs("</svg>", f);
}
