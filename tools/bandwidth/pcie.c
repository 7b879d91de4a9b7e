/* pcie.c - PCIe link facts from sysfs and the theoretical peak formulas (VRAM and PCIe). */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bw.h"

double vt_bw_vram_peak_gbps(int mem_clock_khz, int bus_width_bits)
{
    if (mem_clock_khz <= 0 || bus_width_bits <= 0) return 0.0;
    /* kHz -> Hz, x bus width in bytes, x 2 transfers per clock (DDR); decimal GB/s. */
    return (double)mem_clock_khz * 1e3 * ((double)bus_width_bits / 8.0) * 2.0 / 1e9;
}

int vt_bw_pcie_parse_speed(const char *s, double *gts)
{
    if (!s) return -1;
    while (isspace((unsigned char)*s)) s++;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0.0) || v > 1000.0) return -1;   /* "Unknown", "Unknown speed", "" */
    while (isspace((unsigned char)*end)) end++;
    if (strncmp(end, "GT/s", 4) != 0) return -1;
    *gts = v;
    return 0;
}

int vt_bw_pcie_parse_width(const char *s)
{
    if (!s) return 0;
    while (isspace((unsigned char)*s)) s++;
    if (*s == 'x' || *s == 'X') s++;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v <= 0 || v > 64) return 0;
    while (isspace((unsigned char)*end)) end++;
    return *end ? 0 : (int)v;
}

int vt_bw_pcie_gen(double gts)
{
    static const double speeds[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};
    for (int i = 0; i < (int)(sizeof speeds / sizeof speeds[0]); i++)
        if (gts > speeds[i] * 0.95 && gts < speeds[i] * 1.05) return i + 1;
    return 0;
}

double vt_bw_pcie_lane_gbps(double gts)
{
    if (!(gts > 0.0)) return 0.0;
    if (gts < 7.0) return gts * (8.0 / 10.0) / 8.0;        /* Gen1/2: 8b/10b */
    if (gts < 60.0) return gts * (128.0 / 130.0) / 8.0;    /* Gen3-5: 128b/130b */
    return gts * (242.0 / 256.0) / 8.0;                     /* Gen6+: FLIT mode, 242 of 256 bytes */
}

int vt_bw_pcie_normalize_busid(const char *in, char *out, size_t len)
{
    unsigned dom, bus, dev, fn;
    int used = 0;
    if (!in) return -1;
    size_t n = strspn(in, "0123456789abcdefABCDEF:.");   /* no "0x", signs or spaces inside */
    if (in[n] && !isspace((unsigned char)in[n])) return -1;
    if (sscanf(in, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &used) != 4 || (size_t)used != n) return -1;
    if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7) return -1;
    int w = snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

/* Reads a small sysfs file into buf (trailing newline stripped). Returns 0 or -1. */
static int read_attr(const char *root, const char *bus_id, const char *attr, char *buf, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s/%s", root ? root : "", bus_id, attr);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && isspace((unsigned char)buf[n - 1])) buf[--n] = '\0';
    return 0;
}

static int read_link(const char *root, const char *bus_id, const char *which, double *gts, int *width)
{
    char buf[128], attr[64];
    snprintf(attr, sizeof attr, "%s_link_speed", which);
    if (read_attr(root, bus_id, attr, buf, sizeof buf) < 0 || vt_bw_pcie_parse_speed(buf, gts) < 0)
        return -1;
    snprintf(attr, sizeof attr, "%s_link_width", which);
    if (read_attr(root, bus_id, attr, buf, sizeof buf) < 0 || !(*width = vt_bw_pcie_parse_width(buf)))
        return -1;
    return 0;
}

int vt_bw_pcie_read(const char *root, const char *bus_id, int prefer_current, struct vt_bw_pcie *p)
{
    memset(p, 0, sizeof *p);
    double cur_gts = 0, max_gts = 0;
    int cur_w = 0, max_w = 0;
    int have_cur = read_link(root, bus_id, "current", &cur_gts, &cur_w) == 0;
    int have_max = read_link(root, bus_id, "max", &max_gts, &max_w) == 0;
    if (!have_cur && !have_max) return -1;
    snprintf(p->bus_id, sizeof p->bus_id, "%s", bus_id);
    if (have_max) { p->max_gen = vt_bw_pcie_gen(max_gts); p->max_width = max_w; }
    if (have_cur && (prefer_current || !have_max)) {
        p->gts = cur_gts; p->width = cur_w;
        snprintf(p->source, sizeof p->source, "sysfs_current");
    } else {
        p->gts = max_gts; p->width = max_w;
        snprintf(p->source, sizeof p->source, "sysfs_max");
    }
    p->gen = vt_bw_pcie_gen(p->gts);
    p->theoretical_gbps = vt_bw_pcie_lane_gbps(p->gts) * p->width;
    p->present = 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int vt_bw_pcie_find_nvidia(const char *root, int index, char *bus_id, size_t len)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/sys/bus/pci/devices", root ? root : "");
    DIR *d = opendir(dir);
    if (!d) return -1;
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        if (e->d_name[0] == '.') continue;
        char buf[64];
        if (read_attr(root, e->d_name, "vendor", buf, sizeof buf) < 0 || strtoul(buf, NULL, 16) != 0x10de)
            continue;
        if (read_attr(root, e->d_name, "class", buf, sizeof buf) < 0 || (strtoul(buf, NULL, 16) >> 16) != 0x03)
            continue;
        if (!(names[n] = strdup(e->d_name))) break;
        n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    int rc = -1;
    if (index >= 0 && index < n) {
        snprintf(bus_id, len, "%s", names[index]);
        rc = 0;
    }
    for (int i = 0; i < n; i++) free(names[i]);
    return rc;
}
