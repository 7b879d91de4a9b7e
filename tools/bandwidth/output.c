/* output.c - the text table and the JSON document (docs/bandwidth.md) of `vramtrace bandwidth`,
 * and size parsing/formatting. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"

int vt_bw_parse_size(const char *s, size_t *out)
{
    if (!s || !isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && *end == 'i') end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return -1;
    if (shift && v > (UINT64_MAX >> shift)) return -1;
    v <<= shift;
    if (v > SIZE_MAX) return -1;
    *out = (size_t)v;
    return 0;
}

void vt_bw_format_size(unsigned long long bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) { v /= 1024.0; u++; }
    if (u == 0) snprintf(buf, len, "%llu B", bytes);
    else snprintf(buf, len, "%.*f %s", v >= 100 ? 0 : v >= 10 ? 1 : 2, v, units[u]);
}

static const char *row_label(const char *name)
{
    static const struct { const char *name, *label; } labels[] = {
        {"h2d_pageable", "host->device, pageable"}, {"h2d_pinned", "host->device, pinned"},
        {"d2h_pageable", "device->host, pageable"}, {"d2h_pinned", "device->host, pinned"},
        {"d2d_copy", "device->device copy"},
        {"vram_read", "VRAM read kernel"}, {"vram_write", "VRAM write kernel"},
        {"vram_copy", "VRAM copy kernel"}, {"vram_triad", "VRAM triad kernel"},
        {"host_ddr_copy", "host DDR copy"}, {"host_ddr_triad", "host DDR triad"},
    };
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (!strcmp(labels[i].name, name)) return labels[i].label;
    return name;
}

void vt_bw_print_table(FILE *f, const struct vt_bw_report *r)
{
    const struct vt_bw_gpu *g = &r->gpu;
    const struct vt_bw_pcie *p = &r->pcie;
    if (g->present) {
        fprintf(f, "GPU:  %s%s (compute %d.%d, %d SMs, L2 %d MiB, %.1f GiB)\n", g->name,
                g->sim ? " [simulated]" : "", g->cc_major, g->cc_minor, g->sm_count, g->l2_bytes >> 20,
                (double)g->total_mem / (double)(1u << 30));
        if (g->theoretical_gbps > 0)
            fprintf(f, "      theoretical VRAM peak %.1f GB/s (memory clock %d kHz x %d-bit bus x 2 / 8)\n",
                    g->theoretical_gbps, g->mem_clock_khz, g->bus_width_bits);
        else
            fprintf(f, "      theoretical VRAM peak unknown (memory clock / bus width attributes not reported)\n");
        if (g->grid > 0)
            fprintf(f, "      kernels: float4 grid-stride, %d blocks x %d threads\n", g->grid, g->block);
    } else {
        fprintf(f, "GPU:  none\n");
    }
    if (p->present) {
        fprintf(f, "PCIe: %s Gen%d x%d (%.1f GT/s, %s)", p->bus_id, p->gen, p->width, p->gts,
                !strcmp(p->source, "sysfs_current") ? "current link" : "max link");
        if (p->max_gen && (p->max_gen != p->gen || p->max_width != p->width))
            fprintf(f, ", device max Gen%d x%d", p->max_gen, p->max_width);
        fprintf(f, "\n      theoretical peak %.1f GB/s per direction\n", p->theoretical_gbps);
    } else {
        fprintf(f, "PCIe: no NVIDIA device link found in sysfs\n");
    }
    if (r->host_threads)
        fprintf(f, "Host: %d threads, arrays of %.0f MiB (LLC %zu MiB)\n", r->host_threads,
                (double)r->host_size / (double)(1u << 20), vt_bw_llc_bytes() >> 20);
    fprintf(f, "\n%-26s %10s %8s %10s %11s %7s\n", "measurement", "traffic", "trials", "median ms",
            "GB/s", "% peak");
    for (int i = 0; i < r->nresults; i++) {
        const struct vt_bw_result *x = &r->results[i];
        char sz[32], pct[16] = "-";
        vt_bw_format_size(x->bytes, sz, sizeof sz);
        /* A simulated row's % would be meaningless (the JSON still carries it, marked simulated). */
        if (x->theoretical_gbps > 0 && !x->simulated)
            snprintf(pct, sizeof pct, "%.0f%%", 100.0 * x->gbps / x->theoretical_gbps);
        fprintf(f, "%-26s %10s %8d %10.3f %11.1f %7s%s\n", row_label(x->name), sz, x->trials, x->median_ms,
                x->gbps, pct, x->simulated ? "  [simulated]" : "");
    }
    if (r->nresults == 0) fprintf(f, "(nothing measured)\n");
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

void vt_bw_print_json(FILE *f, const struct vt_bw_report *r)
{
    const struct vt_bw_gpu *g = &r->gpu;
    const struct vt_bw_pcie *p = &r->pcie;
    fputs("{\"version\":1,\"gpu\":", f);
    if (g->present) {
        fputs("{\"name\":", f);
        json_str(f, g->name);
        fprintf(f, ",\"sim\":%s,\"theoretical_gbps\":", g->sim ? "true" : "false");
        if (g->theoretical_gbps > 0) fprintf(f, "%.3f", g->theoretical_gbps); else fputs("null", f);
        fprintf(f, ",\"mem_clock_khz\":%d,\"bus_width_bits\":%d,\"sm_count\":%d,\"pci_bus_id\":",
                g->mem_clock_khz, g->bus_width_bits, g->sm_count);
        json_str(f, g->pci_bus_id);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs(",\"pcie\":", f);
    if (p->present) {
        fprintf(f, "{\"gen\":%d,\"width\":%d,\"gts\":%.1f,\"theoretical_gbps\":%.3f,\"source\":",
                p->gen, p->width, p->gts, p->theoretical_gbps);
        json_str(f, p->source);
        fprintf(f, ",\"max_gen\":%d,\"max_width\":%d,\"bus_id\":", p->max_gen, p->max_width);
        json_str(f, p->bus_id);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    if (r->host_threads)
        fprintf(f, ",\"host\":{\"threads\":%d,\"array_bytes\":%zu,\"llc_bytes\":%zu}", r->host_threads,
                r->host_size, vt_bw_llc_bytes());
    else
        fputs(",\"host\":null", f);
    fputs(",\"results\":[", f);
    for (int i = 0; i < r->nresults; i++) {
        const struct vt_bw_result *x = &r->results[i];
        fprintf(f, "%s{\"name\":", i ? "," : "");
        json_str(f, x->name);
        fprintf(f, ",\"gbps\":%.3f,\"bytes\":%llu,\"trials\":%d,\"median_ms\":%.6f", x->gbps, x->bytes,
                x->trials, x->median_ms);
        if (x->theoretical_gbps > 0)
            fprintf(f, ",\"theoretical_gbps\":%.3f,\"pct_of_theoretical\":%.2f", x->theoretical_gbps,
                    100.0 * x->gbps / x->theoretical_gbps);
        fprintf(f, ",\"simulated\":%s}", x->simulated ? "true" : "false");
    }
    fputs("],\"notes\":[", f);
    for (int i = 0; i < r->nnotes; i++) {
        if (i) fputc(',', f);
        json_str(f, r->notes[i]);
    }
    fputs("]}\n", f);
}
