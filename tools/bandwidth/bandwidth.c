/* bandwidth.c - `vramtrace bandwidth`: option parsing, the measurement sequence (GPU copies and
 * kernels, PCIe link from sysfs, host DDR) and vt_bandwidth_measure_json() for `run --bandwidth`. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bandwidth.h"
#include "bw.h"
#include "cli.h"
#include "commands.h"
#include "report/util.h"
#include "safepath.h"

#define DEFAULT_SIZE   ((size_t)1 << 30)   /* 1 GiB per array: far beyond an H200's 50 MB L2 */
#define DEFAULT_TRIALS 7
#define QUICK_SIZE     ((size_t)256 << 20)
#define QUICK_TRIALS   3
#define MIN_SIZE       ((size_t)1 << 20)

int vt_bw_measure(const struct vt_bw_opts *o, struct vt_bw_report *r)
{
    memset(r, 0, sizeof *r);
    r->progress = o->progress;
    r->progress_ctx = o->progress_ctx;
    int rc = 0;
    const char *root = o->sysfs_root ? o->sysfs_root : "";
    if (!o->no_gpu) {
        if (r->progress) r->progress(r->progress_ctx, "measuring the GPU's copies and VRAM kernels");
        int g = vt_bw_gpu_measure(o, r);
        if (g == 2) return 2;
        if (g < 0) rc = -1;
    }
    /* No GPU (or its bus id unknown): the PCIe link of the N-th NVIDIA display device in sysfs.
     * The link idles at a lower speed, so without transfers the max_* files describe it best. */
    if (!r->pcie.present) {
        char bus[64];
        if (r->gpu.pci_bus_id[0])
            vt_bw_pcie_read(root, r->gpu.pci_bus_id, 0, &r->pcie);
        else if (vt_bw_pcie_find_nvidia(root, o->device, bus, sizeof bus) == 0)
            vt_bw_pcie_read(root, bus, 0, &r->pcie);
    }
    /* Theoretical figures: PCIe for host<->device copies, VRAM for device-side rows. */
    for (int i = 0; i < r->nresults; i++) {
        struct vt_bw_result *x = &r->results[i];
        if (!strncmp(x->name, "h2d_", 4) || !strncmp(x->name, "d2h_", 4))
            x->theoretical_gbps = r->pcie.present ? r->pcie.theoretical_gbps : 0.0;
        else if (!strncmp(x->name, "vram_", 5) || !strcmp(x->name, "d2d_copy"))
            x->theoretical_gbps = r->gpu.theoretical_gbps;
    }
    if (!o->no_host) {
        size_t hs = o->host_size;
        if (!hs) {
            hs = o->size;
            size_t llc4 = 4 * vt_bw_llc_bytes();
            if (hs < llc4) hs = llc4;
        }
        if (r->progress) r->progress(r->progress_ctx, "measuring host DDR (copy and triad)");
        vt_bw_host_measure(hs, o->trials, r);
    }
    return rc;
}

static void usage(FILE *f)
{
    fputs("usage: vramtrace bandwidth [--device N] [--size BYTES] [--trials N] [--json] [-o FILE]\n"
          "\n"
          "Measures on this machine: host<->device copies (pageable and pinned), device->device copy,\n"
          "BabelStream-style VRAM kernels (read, write, copy, triad), the PCIe link from sysfs and\n"
          "host DDR (multi-threaded copy and triad), each with its % of the theoretical peak.\n"
          "\n"
          "options:\n"
          "  --device N        CUDA device ordinal (default 0)\n"
          "  --size BYTES      bytes per array, suffixes K M G (default 1G; capped to free memory)\n"
          "  --host-size BYTES\n"
          "                    bytes per host DDR array (default: --size, at least 4 x LLC)\n"
          "  --trials N        timed runs per figure after one warm-up; the median is reported (default 7)\n"
          "  --json            print the JSON document (docs/bandwidth.md) instead of the table\n"
          "  -o, --output FILE\n"
          "                    write the output to FILE instead of stdout\n"
          "  --no-gpu          skip the GPU rows\n"
          "  --no-host         skip the host DDR rows\n"
          "  -h, --help        this help\n"
          "  -V, --version     the version\n"
          "\n"
          "Options take their value as --opt=V or --opt V. While measuring, a progress line shows on\n"
          "stderr when it is a terminal.\n", f);
}

static int bad(const char *fmt, const char *arg) { return vt_cli_bad("bandwidth", fmt, arg); }

static void show_progress(void *ctx, const char *what)
{
    (void)ctx;
    vt_cli_progress_step("bandwidth", what);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    if (!s || !*s) return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* -o FILE appears only once whole, never written through a link at FILE (report/util.h). */
static FILE *open_out(const char *path, struct vtr_out *o)
{
    if (!path) return stdout;
    return vtr_out_open(o, path) == 0 ? o->f : NULL;
}

static int close_out(FILE *f, struct vtr_out *o, int ok)
{
    if (f == stdout) return fflush(f) != 0 || !ok;
    return vtr_out_commit(o, ok) != 0;
}

int vt_cmd_bandwidth(int argc, char **argv)
{
    struct vt_bw_opts o = {.device = 0, .size = DEFAULT_SIZE, .trials = DEFAULT_TRIALS};
    int json = 0, dump_ptx = 0;
    const char *out = NULL;
    enum { O_DEVICE = 256, O_SIZE, O_HOST_SIZE, O_TRIALS, O_JSON, O_NO_GPU, O_NO_HOST, O_DUMP_PTX, O_SYSFS };
    static const struct option longs[] = {
        { "device", required_argument, NULL, O_DEVICE }, { "size", required_argument, NULL, O_SIZE },
        { "host-size", required_argument, NULL, O_HOST_SIZE }, { "trials", required_argument, NULL, O_TRIALS },
        { "json", no_argument, NULL, O_JSON }, { "output", required_argument, NULL, 'o' },
        { "no-gpu", no_argument, NULL, O_NO_GPU }, { "no-host", no_argument, NULL, O_NO_HOST },
        { "dump-ptx", no_argument, NULL, O_DUMP_PTX },     /* hidden: for tests (ptxas) */
        { "sysfs-root", required_argument, NULL, O_SYSFS }, /* hidden: for tests (fixtures) */
        { "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 },
    };
    int c;
    vt_cli_begin(0);
    while ((c = vt_cli_next("bandwidth", argc, argv, "o:hV", longs)) != -1) {
        const char *v = optarg;
        size_t sz;
        switch (c) {
        case 'h': usage(stdout); return 0;
        case 'V': return vt_cli_version();
        case 'o': out = v; break;
        case O_JSON: json = 1; break;
        case O_NO_GPU: o.no_gpu = 1; break;
        case O_NO_HOST: o.no_host = 1; break;
        case O_DUMP_PTX: dump_ptx = 1; break;
        case O_SYSFS: o.sysfs_root = v; break;
        case O_DEVICE:
            if (parse_int(v, 0, 1023, &o.device)) return bad("bad --device '%s' (want an ordinal 0..1023)", v);
            break;
        case O_TRIALS:
            if (parse_int(v, 1, 1000, &o.trials)) return bad("bad --trials '%s' (want 1..1000)", v);
            break;
        case O_SIZE:
        case O_HOST_SIZE:
            if (vt_bw_parse_size(v, &sz) || sz < MIN_SIZE || sz > ((size_t)1 << 40))
                return bad(c == O_SIZE ? "bad --size '%s' (want bytes, 1M..1T, e.g. 64M or 1G)"
                                       : "bad --host-size '%s' (want bytes, 1M..1T, e.g. 64M or 1G)", v);
            if (c == O_SIZE) o.size = sz & ~(size_t)15; else o.host_size = sz;
            break;
        default: return 2;
        }
    }
    if (optind < argc) return bad("unexpected argument '%s'", argv[optind]);
    struct vtr_out ob;
    if (dump_ptx) {
        FILE *f = open_out(out, &ob);
        if (!f) { fprintf(stderr, "vramtrace bandwidth: cannot write %s: %s\n", out, strerror(errno)); return 1; }
        fputs(vt_bw_kernels_ptx, f);
        if (close_out(f, &ob, 1)) { fprintf(stderr, "vramtrace bandwidth: writing %s failed\n", out ? out : "stdout"); return 1; }
        return 0;
    }
    FILE *f = open_out(out, &ob);
    if (!f) { fprintf(stderr, "vramtrace bandwidth: cannot write %s: %s\n", out, strerror(errno)); return 1; }
    struct vt_bw_report *r = malloc(sizeof *r);
    if (!r) { fputs("vramtrace bandwidth: out of memory\n", stderr); return 1; }
    if (vt_cli_progress_on()) { o.progress = show_progress; o.progress_ctx = NULL; }
    int rc = vt_bw_measure(&o, r);
    vt_cli_progress_done();
    for (int i = 0; i < r->nnotes; i++) fprintf(stderr, "vramtrace bandwidth: %s\n", r->notes[i]);
    if (rc == 2) { free(r); close_out(f, &ob, 0); return 2; }
    if (json) vt_bw_print_json(f, r); else vt_bw_print_table(f, r);
    int werr = close_out(f, &ob, 1);
    free(r);
    if (werr) { fprintf(stderr, "vramtrace bandwidth: writing %s failed\n", out ? out : "stdout"); return 1; }
    return rc < 0 ? 1 : 0;
}

/* Create PATH (or PATH.N.json) exclusively, 0600, no link followed at the name nor one another
 * user owns on the way (safepath.h): run writes it at a name others can predict (the pid), where a
 * link planted for it made root overwrite a file of its own. */
static FILE *create_exclusive(const char *path, char *used, size_t usedlen)
{
    size_t n = strlen(path);
    size_t stem = n > 5 && !strcmp(path + n - 5, ".json") ? n - 5 : n;
    const char *base;
    int dfd = vt_safepath_dir_open(path, 0, &base, NULL, 0);
    if (dfd < 0) { errno = -dfd; return NULL; }
    FILE *f = NULL;
    for (int i = 0; i < 100; i++) {
        if (i == 0) snprintf(used, usedlen, "%s", path);
        else snprintf(used, usedlen, "%.*s.%d%s", (int)stem, path, i, path + stem);
        int fd = openat(dfd, used + (base - path), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            if (!(f = fdopen(fd, "w"))) close(fd);
            break;
        }
        if (errno != EEXIST) break;
    }
    int e = errno;
    close(dfd);
    errno = e;
    return f;
}

int vt_bandwidth_measure_json(const char *path, char *used, size_t usedlen, char *err, size_t errlen)
{
    /* Host arrays: 4 x LLC (at least 64 MiB), not QUICK_SIZE, to keep it short on big-LLC hosts. */
    size_t hs = 4 * vt_bw_llc_bytes();
    struct vt_bw_opts o = {.device = 0, .size = QUICK_SIZE, .trials = QUICK_TRIALS,
                           .host_size = hs < ((size_t)64 << 20) ? (size_t)64 << 20 : hs};
    FILE *f = create_exclusive(path, used, usedlen);
    if (!f) {
        if (err) snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    struct vt_bw_report *r = malloc(sizeof *r);
    if (!r) { if (err) snprintf(err, errlen, "out of memory"); fclose(f); return -1; }
    int rc = vt_bw_measure(&o, r);
    vt_bw_print_json(f, r);
    if (fclose(f)) {
        if (err) snprintf(err, errlen, "writing %s failed", used);
        free(r);
        return -1;
    }
    if (rc != 0) {   /* the file holds what was measured, and the notes */
        if (err) snprintf(err, errlen, "bandwidth measurement failed: %s", r->nnotes ? r->notes[r->nnotes - 1] : "?");
        free(r);
        return -1;
    }
    free(r);
    return 0;
}
