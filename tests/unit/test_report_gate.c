/* test_report_gate.c - the gates' arguments (tools/report/gate.c), against docs/report.md: SIZE is bytes
 * with an optional unit, K/M/G/T (and KiB...) powers of 1024, KB/MB/GB/TB powers of 1000, any case,
 * a fraction allowed; no sign, space, hex or infinity; --max-peak takes process: or device:;
 * --max-increase takes SIZE or PCT%; --fail-on a comma list of oom, leak, error, warning, growth. */
#include "vt_test.h"

#include "report/gate.h"

static void size_is(const char *s, unsigned long long want)
{
    uint64_t v = 0;
    int r = vt_gate_parse_size(s, &v);
    VT_CHECK(r == 0 && v == want, "SIZE '%s' = %llu (got %d, %llu)", s, want, r, (unsigned long long)v);
}

static void size_bad(const char *s)
{
    uint64_t v = 12345;
    VT_CHECK(vt_gate_parse_size(s, &v) == -1 && v == 12345, "SIZE '%s' refused, nothing set", s);
}

int main(void)
{
    size_is("0", 0);
    size_is("4096", 4096);
    size_is("4096b", 4096);
    size_is("4096B", 4096);
    size_is("1k", 1024);
    size_is("1K", 1024);
    size_is("2KiB", 2048);
    size_is("1m", 1ull << 20);
    size_is("3MiB", 3ull << 20);
    size_is("1g", 1ull << 30);
    size_is("3.5G", 3758096384ull);
    size_is("79GiB", 79ull << 30);
    size_is("2t", 2ull << 40);
    size_is("1TiB", 1ull << 40);
    size_is("1kb", 1000);
    size_is("80GB", 80000000000ull);
    size_is("2MB", 2000000);
    size_is("3TB", 3000000000000ull);
    size_is("1.5kB", 1500);
    size_is("15.99T", (unsigned long long)(15.99 * 1099511627776.0));
    size_bad("");
    size_bad("G");
    size_bad("-1G");
    size_bad("+1G");
    size_bad(" 1G");
    size_bad("1G ");
    size_bad("0x10");
    size_bad("inf");
    size_bad("1P");
    size_bad("1PiB");
    size_bad("1GiBs");
    size_bad("16777216T");           /* 2^64 bytes: too large */
    size_bad("1e30");

    struct vt_gates g;
    char err[256];
    vt_gates_init(&g);
    VT_CHECK(!vt_gates_any(&g) && !vt_gates_for_diff(&g), "no gate set: none to check");
    VT_CHECK(vt_gate_parse_peak("40G", &g, err, sizeof err) == 0 && g.max_process_peak == 40ull << 30 &&
             g.max_device_peak == VT_GATE_NO_LIMIT && vt_gates_any(&g) && !vt_gates_for_diff(&g),
             "--max-peak=40G: the process limit");
    VT_CHECK(vt_gate_parse_peak("process:1M", &g, err, sizeof err) == 0 && g.max_process_peak == 1ull << 20, "--max-peak=process:1M");
    VT_CHECK(vt_gate_parse_peak("device:79GiB", &g, err, sizeof err) == 0 && g.max_device_peak == 79ull << 30 &&
             g.max_process_peak == 1ull << 20, "--max-peak=device:79GiB: the device limit, the process one kept");
    VT_CHECK(vt_gate_parse_peak("node:1G", &g, err, sizeof err) == -1 &&
             !strcmp(err, "--max-peak: 'node:1G' is not [process:|device:]SIZE (bytes, or with K, M, G, T; e.g. 40G or device:79GiB)"),
             "--max-peak=node:1G refused, saying what it takes (%s)", err);

    vt_gates_init(&g);
    VT_CHECK(vt_gate_parse_increase("512M", &g, err, sizeof err) == 0 && g.max_increase_bytes == 512ull << 20 &&
             g.max_increase_pct < 0 && vt_gates_for_diff(&g), "--max-increase=512M: bytes");
    vt_gates_init(&g);
    VT_CHECK(vt_gate_parse_increase("5%", &g, err, sizeof err) == 0 && g.max_increase_pct == 5.0 &&
             g.max_increase_bytes == VT_GATE_NO_LIMIT && vt_gates_for_diff(&g) && vt_gates_any(&g), "--max-increase=5%%: percent");
    VT_CHECK(vt_gate_parse_increase("0.5%", &g, err, sizeof err) == 0 && g.max_increase_pct == 0.5, "--max-increase=0.5%%");
    VT_CHECK(vt_gate_parse_increase("0%", &g, err, sizeof err) == 0 && g.max_increase_pct == 0 && vt_gates_for_diff(&g),
             "--max-increase=0%%: any increase (a limit of 0 is still a limit)");
    static const char *const bad_inc[] = { "%", "-5%", "5x%", "5", "five", "5%%" };
    for (size_t i = 0; i < sizeof bad_inc / sizeof *bad_inc; i++) {
        vt_gates_init(&g);
        int r = vt_gate_parse_increase(bad_inc[i], &g, err, sizeof err);
        if (!strcmp(bad_inc[i], "5")) { VT_CHECK(r == 0 && g.max_increase_bytes == 5, "--max-increase=5: five bytes"); continue; }
        char want[128];
        snprintf(want, sizeof want, "--max-increase: '%s' is not SIZE or PCT%% (e.g. 512M or 5%%)", bad_inc[i]);
        VT_CHECK(r == -1 && !strcmp(err, want) && !vt_gates_for_diff(&g), "--max-increase=%s refused, nothing set", bad_inc[i]);
    }

    vt_gates_init(&g);
    VT_CHECK(vt_gate_parse("oom", &g, err, sizeof err) == 0 && g.mask == VT_GATE_OOM, "--fail-on=oom");
    vt_gates_init(&g);
    VT_CHECK(vt_gate_parse("growth,warning,error,leak,oom", &g, err, sizeof err) == 0 &&
             g.mask == (VT_GATE_OOM | VT_GATE_LEAK | VT_GATE_ERROR | VT_GATE_WARNING | VT_GATE_GROWTH) && vt_gates_any(&g),
             "--fail-on with all five, in any order");
    static const char *const bad_list[][2] = {
        { "oo", "oo" }, { "oomx", "oomx" }, { "oom,", "" }, { ",oom", "" }, { "oom,,leak", "" }, { "OOM", "OOM" },
        { "leak,errors", "errors" },
    };
    for (size_t i = 0; i < sizeof bad_list / sizeof *bad_list; i++) {
        vt_gates_init(&g);
        char want[160];
        snprintf(want, sizeof want, "--fail-on: '%s' is not a gate (oom, leak, error, warning, growth, separated by commas)", bad_list[i][1]);
        VT_CHECK(vt_gate_parse(bad_list[i][0], &g, err, sizeof err) == -1 && !strcmp(err, want),
                 "--fail-on=%s refused naming '%s' (%s)", bad_list[i][0], bad_list[i][1], err);
    }
    return vt_test_finish();
}
