/* test_bandwidth.c - unit tests of tools/bandwidth: peak formulas, sysfs parsing on the fixtures in
 * tests/data/sysfs, size parsing, medians, the embedded PTX text and a short host DDR run. */
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_test.h"
#include "bandwidth/bandwidth.h"
#include "bandwidth/bw.h"

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static char root_buf[1024];
static const char *fixture(const char *tree)
{
    const char *root = getenv("ROOT");
    snprintf(root_buf, sizeof root_buf, "%s/tests/data/sysfs/%s", root ? root : ".", tree);
    return root_buf;
}

static void test_peaks(void)
{
    /* H100 SXM: 2619 MHz x 5120 bits; H200: 3201 MHz x 6144 bits (3201e6 x 768 B x 2 = 4916.7 GB/s). */
    VT_CHECK(near(vt_bw_vram_peak_gbps(2619000, 5120), 3352.32, 0.01), "H100 VRAM peak 3352.32 GB/s (got %.2f)",
             vt_bw_vram_peak_gbps(2619000, 5120));
    VT_CHECK(near(vt_bw_vram_peak_gbps(3201000, 6144), 4916.74, 0.01), "H200 VRAM peak 4916.74 GB/s (got %.2f)",
             vt_bw_vram_peak_gbps(3201000, 6144));
    VT_CHECK(near(vt_bw_vram_peak_gbps(10501000, 384), 1008.10, 0.01), "GDDR6X 384-bit peak 1008.1 GB/s");
    VT_CHECK(vt_bw_vram_peak_gbps(0, 5120) == 0.0 && vt_bw_vram_peak_gbps(2619000, 0) == 0.0,
             "VRAM peak 0 when an attribute is unknown");

    VT_CHECK(near(vt_bw_pcie_lane_gbps(2.5), 0.25, 1e-9), "Gen1 lane 0.25 GB/s (8b/10b)");
    VT_CHECK(near(vt_bw_pcie_lane_gbps(5.0), 0.5, 1e-9), "Gen2 lane 0.5 GB/s");
    VT_CHECK(near(vt_bw_pcie_lane_gbps(8.0), 0.9846, 1e-4), "Gen3 lane 0.985 GB/s (128b/130b)");
    VT_CHECK(near(vt_bw_pcie_lane_gbps(16.0), 1.9692, 1e-4), "Gen4 lane 1.969 GB/s");
    VT_CHECK(near(vt_bw_pcie_lane_gbps(32.0), 3.9385, 1e-4), "Gen5 lane 3.938 GB/s");
    VT_CHECK(near(16 * vt_bw_pcie_lane_gbps(16.0), 31.5, 0.05), "Gen4 x16 ~31.5 GB/s");
    VT_CHECK(near(16 * vt_bw_pcie_lane_gbps(32.0), 63.0, 0.05), "Gen5 x16 ~63.0 GB/s");
    VT_CHECK(near(16 * vt_bw_pcie_lane_gbps(64.0), 121.0, 0.05), "Gen6 x16 ~121 GB/s (FLIT 242/256)");
    VT_CHECK(vt_bw_pcie_lane_gbps(0) == 0.0, "lane 0 for unknown speed");
}

static void test_parse(void)
{
    double g = 0;
    VT_CHECK(vt_bw_pcie_parse_speed("16.0 GT/s PCIe", &g) == 0 && g == 16.0, "parse '16.0 GT/s PCIe'");
    VT_CHECK(vt_bw_pcie_parse_speed("32.0 GT/s PCIe\n", &g) == 0 && g == 32.0, "parse '32.0 GT/s PCIe\\n'");
    VT_CHECK(vt_bw_pcie_parse_speed("8 GT/s", &g) == 0 && g == 8.0, "parse old '8 GT/s'");
    VT_CHECK(vt_bw_pcie_parse_speed("2.5 GT/s", &g) == 0 && g == 2.5, "parse '2.5 GT/s'");
    VT_CHECK(vt_bw_pcie_parse_speed("64.0 GT/s PCIe", &g) == 0 && g == 64.0, "parse '64.0 GT/s PCIe'");
    VT_CHECK(vt_bw_pcie_parse_speed("Unknown", &g) < 0, "'Unknown' speed rejected");
    VT_CHECK(vt_bw_pcie_parse_speed("Unknown speed", &g) < 0, "'Unknown speed' rejected");
    VT_CHECK(vt_bw_pcie_parse_speed("", &g) < 0 && vt_bw_pcie_parse_speed("16", &g) < 0, "empty / unitless rejected");
    VT_CHECK_EQ_INT(vt_bw_pcie_gen(2.5), 1, "2.5 GT/s is Gen1");
    VT_CHECK_EQ_INT(vt_bw_pcie_gen(8.0), 3, "8 GT/s is Gen3");
    VT_CHECK_EQ_INT(vt_bw_pcie_gen(16.0), 4, "16 GT/s is Gen4");
    VT_CHECK_EQ_INT(vt_bw_pcie_gen(32.0), 5, "32 GT/s is Gen5");
    VT_CHECK_EQ_INT(vt_bw_pcie_gen(64.0), 6, "64 GT/s is Gen6");
    VT_CHECK_EQ_INT(vt_bw_pcie_gen(12.0), 0, "12 GT/s is no generation");
    VT_CHECK_EQ_INT(vt_bw_pcie_parse_width("16"), 16, "width '16'");
    VT_CHECK_EQ_INT(vt_bw_pcie_parse_width("x8\n"), 8, "width 'x8'");
    VT_CHECK_EQ_INT(vt_bw_pcie_parse_width("0"), 0, "width '0' is unknown");
    VT_CHECK_EQ_INT(vt_bw_pcie_parse_width("Unknown"), 0, "width 'Unknown' is unknown");

    char b[32];
    VT_CHECK(vt_bw_pcie_normalize_busid("0000:1B:00.0", b, sizeof b) == 0 && !strcmp(b, "0000:1b:00.0"),
             "bus id '0000:1B:00.0' -> '%s'", b);
    VT_CHECK(vt_bw_pcie_normalize_busid("00000000:C1:00.0", b, sizeof b) == 0 && !strcmp(b, "0000:c1:00.0"),
             "bus id '00000000:C1:00.0' -> '%s'", b);
    VT_CHECK(vt_bw_pcie_normalize_busid("1b:00.0", b, sizeof b) < 0, "bus id without domain rejected");
    VT_CHECK(vt_bw_pcie_normalize_busid("0000:1b:00.0x", b, sizeof b) < 0, "bus id with trailing junk rejected");
    VT_CHECK(vt_bw_pcie_normalize_busid("0000:1b:00.0\n", b, sizeof b) == 0 && !strcmp(b, "0000:1b:00.0"),
             "bus id with trailing newline accepted");

    size_t sz = 0;
    VT_CHECK(vt_bw_parse_size("64M", &sz) == 0 && sz == (size_t)64 << 20, "size 64M");
    VT_CHECK(vt_bw_parse_size("1G", &sz) == 0 && sz == (size_t)1 << 30, "size 1G");
    VT_CHECK(vt_bw_parse_size("512KiB", &sz) == 0 && sz == (size_t)512 << 10, "size 512KiB");
    VT_CHECK(vt_bw_parse_size("1048576", &sz) == 0 && sz == 1048576, "size in bytes");
    VT_CHECK(vt_bw_parse_size("12x", &sz) < 0 && vt_bw_parse_size("-1G", &sz) < 0 && vt_bw_parse_size("", &sz) < 0,
             "bad sizes rejected");
    VT_CHECK(vt_bw_parse_size("99999999999999999999", &sz) < 0 && vt_bw_parse_size("99999999999T", &sz) < 0,
             "overflowing sizes rejected");

    double v[] = {5, 1, 3}, w[] = {4, 1, 3, 2};
    VT_CHECK(vt_bw_median(v, 3) == 3.0, "median of 3");
    VT_CHECK(vt_bw_median(w, 4) == 2.5, "median of 4");
}

static void test_sysfs(void)
{
    struct vt_bw_pcie p;
    char bus[64];
    VT_CHECK(vt_bw_pcie_find_nvidia(fixture("gen4"), 0, bus, sizeof bus) == 0 && !strcmp(bus, "0000:01:00.0"),
             "gen4: finds the GPU, not its audio function (%s)", bus);
    VT_CHECK(vt_bw_pcie_find_nvidia(fixture("gen4"), 1, bus, sizeof bus) < 0, "gen4: only one GPU");
    VT_CHECK(vt_bw_pcie_read(fixture("gen4"), "0000:01:00.0", 0, &p) == 0 && p.gen == 4 && p.width == 16 &&
             near(p.theoretical_gbps, 31.51, 0.01) && !strcmp(p.source, "sysfs_max"),
             "gen4 max link: Gen%d x%d %.2f GB/s %s", p.gen, p.width, p.theoretical_gbps, p.source);
    VT_CHECK(vt_bw_pcie_read(fixture("gen4"), "0000:01:00.0", 1, &p) == 0 && p.gen == 1 && p.width == 16 &&
             near(p.theoretical_gbps, 4.0, 1e-9) && p.max_gen == 4 && !strcmp(p.source, "sysfs_current"),
             "gen4 current (idle) link: Gen%d x%d, max Gen%d", p.gen, p.width, p.max_gen);

    VT_CHECK(vt_bw_pcie_find_nvidia(fixture("gen5"), 0, bus, sizeof bus) == 0 && !strcmp(bus, "0000:1b:00.0"),
             "gen5: NVSwitch and Intel VGA ignored (%s)", bus);
    VT_CHECK(vt_bw_pcie_read(fixture("gen5"), "0000:1b:00.0", 1, &p) == 0 && p.gen == 5 && p.width == 16 &&
             p.gts == 32.0 && near(p.theoretical_gbps, 63.0, 0.05), "gen5 x16: %.2f GB/s", p.theoretical_gbps);

    VT_CHECK(vt_bw_pcie_find_nvidia(fixture("gen3"), 0, bus, sizeof bus) == 0, "gen3: found");
    VT_CHECK(vt_bw_pcie_read(fixture("gen3"), bus, 1, &p) == 0 && p.gen == 3 && p.width == 8 && p.max_width == 16 &&
             near(p.theoretical_gbps, 7.88, 0.01), "gen3 '8 GT/s' x8: %.2f GB/s", p.theoretical_gbps);

    VT_CHECK(vt_bw_pcie_find_nvidia(fixture("gen6"), 0, bus, sizeof bus) == 0 &&
             vt_bw_pcie_read(fixture("gen6"), bus, 1, &p) == 0 && p.gen == 6 && near(p.theoretical_gbps, 121.0, 0.05),
             "gen6 x16: %.2f GB/s", p.theoretical_gbps);

    VT_CHECK(vt_bw_pcie_read(fixture("unknown"), "0000:03:00.0", 1, &p) == 0 && p.gen == 3 && p.width == 16 &&
             !strcmp(p.source, "sysfs_max"), "current 'Unknown' falls back to the max link (%s)", p.source);
    VT_CHECK(vt_bw_pcie_read(fixture("unknown"), "0000:04:00.0", 1, &p) < 0 && !p.present,
             "all-unknown link gives no PCIe facts");

    VT_CHECK(vt_bw_pcie_find_nvidia(fixture("multi"), 0, bus, sizeof bus) == 0 && !strcmp(bus, "0000:41:00.0"),
             "multi: device 0 is the lower bus id (%s)", bus);
    VT_CHECK(vt_bw_pcie_find_nvidia(fixture("multi"), 1, bus, sizeof bus) == 0 && !strcmp(bus, "0000:c1:00.0"),
             "multi: device 1 is 0000:c1:00.0 (%s)", bus);
    VT_CHECK(vt_bw_pcie_find_nvidia(fixture("does-not-exist"), 0, bus, sizeof bus) < 0, "missing sysfs: none");
}

static void test_ptx(void)
{
    const char *p = vt_bw_kernels_ptx;
    VT_CHECK(strstr(p, "\n.version 7.0\n") != NULL, "PTX ISA 7.0 (JIT-able by drivers since CUDA 11.0)");
    VT_CHECK(strstr(p, "\n.target sm_80\n") != NULL, "PTX target sm_80");
    VT_CHECK(strstr(p, ".entry vt_bw_read(") && strstr(p, ".entry vt_bw_write(") &&
             strstr(p, ".entry vt_bw_copy(") && strstr(p, ".entry vt_bw_triad("), "four kernel entries");
    VT_CHECK(strstr(p, "ld.global.nc.v4.f32") && strstr(p, "st.global.v4.f32"), "128-bit vector loads and stores");
}

static void test_host(void)
{
    struct vt_bw_report *r = calloc(1, sizeof *r);
    if (!r) return;
    int rc = vt_bw_host_measure((size_t)48 << 20, 3, r);
    VT_CHECK(rc == 0 && r->nresults == 2, "host DDR measured (%d rows)", r->nresults);
    if (r->nresults == 2) {
        const struct vt_bw_result *c = &r->results[0], *t = &r->results[1];
        VT_CHECK_EQ_STR(c->name, "host_ddr_copy", "first row");
        VT_CHECK_EQ_STR(t->name, "host_ddr_triad", "second row");
        VT_CHECK(c->gbps > 0.1 && c->gbps < 2000, "host copy %.1f GB/s in (0.1, 2000)", c->gbps);
        VT_CHECK(t->gbps > 0.1 && t->gbps < 2000, "host triad %.1f GB/s in (0.1, 2000)", t->gbps);
        VT_CHECK(c->bytes == 2ull * (48u << 20) && t->bytes == 3ull * (48u << 20), "copy counts 2, triad 3 arrays");
        VT_CHECK(c->trials == 3 && c->median_ms > 0 && !c->simulated, "trials and median recorded");
        VT_CHECK(c->gbps / t->gbps < 20 && t->gbps / c->gbps < 20, "copy and triad within 20x of each other");
    }
    VT_CHECK(r->host_threads >= 1, "host threads %d", r->host_threads);
    free(r);
}

/* vt_bandwidth_measure_json(): the quick run `vramtrace run --bandwidth` uses. */
static void test_measure_json(void)
{
    char path[] = "/tmp/vt-bw-test.XXXXXX", err[256] = "";
    int fd = mkstemp(path);
    if (fd < 0) { VT_CHECK(0, "mkstemp"); return; }
    close(fd);
    /* PATH exists (mkstemp made it): never written over; the next free name is taken */
    char used[sizeof path + 16], want[sizeof path + 16];
    int rc = vt_bandwidth_measure_json(path, used, sizeof used, err, sizeof err);
    VT_CHECK(rc == 0, "vt_bandwidth_measure_json returns 0 (%s)", err);
    snprintf(want, sizeof want, "%s.1", path);
    struct stat st;
    VT_CHECK(!strcmp(used, want) && stat(path, &st) == 0 && st.st_size == 0,
             "an existing file is left alone, the reference goes to %s (got %s)", want, used);
    FILE *f = fopen(used, "r");
    char buf[8192] = "";
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    VT_CHECK(!strncmp(buf, "{\"version\":1,\"gpu\":", strlen("{\"version\":1,\"gpu\":")), "document starts with version 1");
    VT_CHECK(strstr(buf, "\"name\":\"host_ddr_triad\"") != NULL, "document has the host rows");
    unlink(path);
    unlink(used);
    VT_CHECK(vt_bandwidth_measure_json("/nonexistent-dir/x.json", used, sizeof used, err, sizeof err) == -1 && strstr(err, "cannot create"),
             "unwritable path: -1 and '%s'", err);
}

int main(void)
{
    test_peaks();
    test_parse();
    test_sysfs();
    test_ptx();
    test_host();
    test_measure_json();
    return vt_test_finish();
}
