/* bw.h - internals of `vramtrace bandwidth`, shared by its files and tests/unit/test_bandwidth.c.
 *
 * A measurement fills one struct vt_bw_report: optional GPU facts, optional PCIe link facts and an
 * ordered list of result rows (GB/s, median of `trials` timed runs after one warm-up). Bandwidths
 * are decimal: GB/s = 1e9 bytes per second; `bytes` is the traffic one run moves (a copy counts
 * its read and its write, as STREAM/BabelStream do). Nothing here exits the process or prints to
 * stdout; notes for the user go into report->notes and the CLI decides where they are printed. */
#ifndef VT_BW_H
#define VT_BW_H
#include <stddef.h>
#include <stdio.h>

#define VT_BW_MAX_RESULTS 16
#define VT_BW_MAX_NOTES   8

struct vt_bw_opts {
    int device;                 /* CUDA ordinal; also picks the N-th NVIDIA PCI device without GPU */
    size_t size;                /* bytes per array (GPU arrays and copies); multiple of 16 */
    size_t host_size;           /* bytes per host DDR array; 0 = max(size, 4 x LLC) */
    int trials;                 /* timed runs per figure (>= 1), after one warm-up */
    int no_gpu, no_host;        /* skip the GPU part / the host DDR part */
    const char *sysfs_root;     /* "" or NULL for the real "/"; tests point it at tests/data/sysfs */
    /* told what is being measured, and each row as it is done (a progress line); may be NULL */
    void (*progress)(void *ctx, const char *what);
    void *progress_ctx;
};

struct vt_bw_result {
    char name[24];              /* h2d_pageable ... host_ddr_triad (docs/bandwidth.md) */
    double gbps;
    unsigned long long bytes;   /* traffic of one run */
    int trials;
    double median_ms;
    double theoretical_gbps;    /* 0 = no theoretical figure for this row */
    int simulated;
};

struct vt_bw_gpu {
    int present;
    char name[256];
    int sim;                    /* the simulated device (name contains "simulated") */
    int mem_clock_khz, bus_width_bits;
    double theoretical_gbps;    /* vt_bw_vram_peak_gbps(mem_clock_khz, bus_width_bits); 0 if unknown */
    int sm_count, cc_major, cc_minor, l2_bytes;
    size_t total_mem;
    char pci_bus_id[32];        /* normalised, e.g. "0000:1b:00.0"; "" if unknown */
    int grid, block;            /* kernel launch shape used */
};

struct vt_bw_pcie {
    int present;
    int gen, width;             /* gen 0 = unknown */
    double gts;                 /* GT/s per lane */
    double theoretical_gbps;    /* one direction */
    int max_gen, max_width;
    char source[32];            /* "sysfs_current" or "sysfs_max" */
    char bus_id[32];
};

struct vt_bw_report {
    struct vt_bw_gpu gpu;
    struct vt_bw_pcie pcie;
    struct vt_bw_result results[VT_BW_MAX_RESULTS];
    int nresults;
    char notes[VT_BW_MAX_NOTES][256];
    int nnotes;
    int host_threads;
    size_t host_size;
    void (*progress)(void *ctx, const char *what);   /* o->progress, for the rows as they are added */
    void *progress_ctx;
};

/* --- bandwidth.c: the whole measurement ------------------------------------------------------ */
/* Fills *r (zeroed first). Returns 0, or -1 if a measurement failed on a real GPU (what was
 * measured stays in *r, the reason is in r->notes). A missing GPU is not a failure. */
int vt_bw_measure(const struct vt_bw_opts *o, struct vt_bw_report *r);

/* --- results.c: rows and notes ---------------------------------------------------------------- */
void vt_bw_note(struct vt_bw_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct vt_bw_result *vt_bw_add(struct vt_bw_report *r, const char *name, unsigned long long bytes,
                               double *ms, int trials, int simulated);  /* sorts ms[] for the median */
double vt_bw_median(double *v, int n);  /* sorts v in place; 0 for n <= 0 */

/* --- gpu.c: libcuda.so.1 via dlopen ---------------------------------------------------------- */
/* Measures the copy and kernel rows on device o->device. Returns 0 on success, 1 when there is
 * no usable GPU (one note says why; r->gpu.present stays 0), 2 for a --device out of range
 * (note set), -1 if a measurement failed on a present GPU (note set; other rows kept). */
int vt_bw_gpu_measure(const struct vt_bw_opts *o, struct vt_bw_report *r);
extern const char vt_bw_kernels_ptx[];  /* the embedded PTX (NUL-terminated) */

/* --- host.c: host DDR bandwidth on the CPU ---------------------------------------------------- */
/* Multi-threaded copy (memcpy) and triad over three arrays of `bytes` each (threads = online
 * CPUs, each first-touching its own slice). Adds host_ddr_copy and host_ddr_triad rows.
 * Returns 0, or -1 if memory or threads could not be had (note set). */
int vt_bw_host_measure(size_t bytes, int trials, struct vt_bw_report *r);
size_t vt_bw_llc_bytes(void);           /* total last-level cache (sysfs, else sysconf, else 32 MiB) */

/* --- pcie.c: sysfs link facts and peak formulas --------------------------------------------- */
double vt_bw_vram_peak_gbps(int mem_clock_khz, int bus_width_bits);  /* kHz x bits x 2 / 8; 0 if unknown */
int vt_bw_pcie_parse_speed(const char *s, double *gts);  /* "16.0 GT/s PCIe" -> 16.0; -1 if unknown */
int vt_bw_pcie_parse_width(const char *s);               /* "16" or "x16" -> 16; 0 if unknown */
int vt_bw_pcie_gen(double gts);                          /* 2.5 -> 1 ... 64 -> 6; 0 if unknown */
double vt_bw_pcie_lane_gbps(double gts);                 /* one lane, one direction, after encoding */
/* "0000:1B:00.0" or "00000000:1B:00.0" -> "0000:1b:00.0"; -1 if unparseable. */
int vt_bw_pcie_normalize_busid(const char *in, char *out, size_t len);
/* Reads <root>/sys/bus/pci/devices/<bus_id>/{current,max}_link_{speed,width}. prefer_current:
 * describe the current link (right after transfers it shows the trained speed), falling back to
 * the max_* files when current_* are unreadable; else describe max_*. Returns 0 or -1. */
int vt_bw_pcie_read(const char *root, const char *bus_id, int prefer_current, struct vt_bw_pcie *p);
/* The index-th (in bus-id order) PCI function with vendor 0x10de and a display class (0x03xxxx)
 * under <root>/sys/bus/pci/devices; writes its bus id. Returns 0 or -1 if there is none. */
int vt_bw_pcie_find_nvidia(const char *root, int index, char *bus_id, size_t len);

/* --- output.c ----------------------------------------------------------------------------- */
void vt_bw_print_table(FILE *f, const struct vt_bw_report *r);
void vt_bw_print_json(FILE *f, const struct vt_bw_report *r);
/* "64M" "1G" "1048576" "512KiB" -> bytes (K/M/G/T are powers of 1024). Returns 0 or -1. */
int vt_bw_parse_size(const char *s, size_t *out);
void vt_bw_format_size(unsigned long long bytes, char *buf, size_t len);  /* "1.00 GiB" */

#endif
