/* test_report_reader_fields.c - every key the reader's field table (reader_fields.c) takes, each
 * with a value of its own, lands in its field of struct vt_event, through both parsers: the fast
 * path and json-c (which takes a line holding an escape: each line is read again with an unknown
 * key "zz":"\u0041" put first). The records are the tracer's own (include/vramtrace/trace.h). */
#include <stdlib.h>

#include "vt_test.h"
#include "report/reader.h"

static struct vt_reader *rd;
static char err[512];

/* LINE parsed as-is (pass 0) or with an escape in it (pass 1); 1 when it parsed */
static int parse_pass(const char *line, int first, int pass, struct vt_event *ev)
{
    char buf[4096];
    if (pass) snprintf(buf, sizeof buf, "{\"zz\":\"\\u0041\",%s", line + 1);
    else snprintf(buf, sizeof buf, "%s", line);
    memset(ev, 0, sizeof *ev);
    err[0] = 0;
    return vt_reader_parse_line(rd, buf, strlen(buf), first, ev, err, sizeof err) == 1;
}

#define BOTH(line, first, cond, ...)                                                                     \
    for (int pass_ = 0; pass_ < 2; pass_++) {                                                            \
        struct vt_event e;                                                                               \
        int ok_ = parse_pass(line, first, pass_, &e);                                                    \
        VT_CHECK(ok_ && (cond), __VA_ARGS__);                                                            \
        if (!ok_) printf("#   (%s parser) %s\n", pass_ ? "json-c" : "fast", err);                           \
    }

static void header_footer(void)
{
    BOTH("{\"ev\":\"header\",\"format\":\"vramtrace-trace\",\"version\":1,\"tracer\":\"0.9.1\",\"pid\":4242,\"ppid\":4241,"
         "\"program\":\"train.py\",\"hostname\":\"node7\",\"checks\":\"on\",\"torch_alloc_conf\":\"expandable_segments:True\","
         "\"torch_cuda_alloc_conf\":\"max_split_size_mb:128\",\"torch_tensors\":true,\"t\":17,\"wall_time\":1733500000,"
         "\"wall_time_ns\":1733500000123456789,\"page_size\":65536,\"rank\":{\"RANK\":\"5\",\"LOCAL_RANK\":\"1\",\"WORLD_SIZE\":\"8\"}}",
         1,
         e.type == VT_EV_HEADER && !strcmp(e.format, "vramtrace-trace") && e.version == 1 && !strcmp(e.tracer, "0.9.1") &&
             e.pid == 4242 && e.ppid == 4241 && !strcmp(e.program, "train.py") && !strcmp(e.hostname, "node7") &&
             !strcmp(e.checks, "on") && !strcmp(e.torch_alloc_conf, "expandable_segments:True") &&
             !strcmp(e.torch_cuda_alloc_conf, "max_split_size_mb:128") && e.torch_tensors == 1 && e.t == 17 &&
             e.wall_time == 1733500000 && e.wall_time_ns == 1733500000123456789LL && e.page_size == 65536 &&
             e.rank == 5 && e.local_rank == 1 && e.world_size == 8,
         "header: every key in its field (pass %d)", pass_);
    BOTH("{\"ev\":\"footer\",\"t\":99,\"events\":123456,\"dropped\":7,\"live_bytes\":4096,\"findings\":3,\"error\":\"disk full\"}", 0,
         e.type == VT_EV_FOOTER && e.t == 99 && e.events == 123456 && e.dropped == 7 && e.live_bytes == 4096 &&
             e.findings == 3 && !strcmp(e.error, "disk full"),
         "footer: events, dropped, live_bytes, findings, error (pass %d)", pass_);
}

static void device_records(void)
{
    BOTH("{\"ev\":\"device\",\"t\":5,\"dev\":2,\"name\":\"GPU two\",\"total_bytes\":85899345920,\"cc\":\"10.3\","
         "\"pci\":\"0000:41:00.0\",\"sim\":true,\"mem_clock_khz\":1,\"bus_width_bits\":1,\"pageable_access\":0}", 0,
         e.type == VT_EV_DEVICE && e.dev == 2 && !strcmp(e.name, "GPU two") && e.total_bytes == 85899345920ULL &&
             e.cc == 103 && !strcmp(e.pci, "0000:41:00.0") && e.sim == 1,
         "device: dev, name, total_bytes, cc 10.3 as 103, pci, sim (pass %d)", pass_);
    /* cc: major * 10 + minor for a major below 100 and a one-digit minor; anything else unknown (0) */
    static const struct { const char *cc; int want; } ccs[] = {
        { "9.0", 90 }, { "12.1", 121 }, { "99.9", 999 }, { "9", 0 }, { "100.0", 0 }, { "9.10", 0 }, { "x.y", 0 },
        { "8.6 and more text after it", 86 }, { "9.", 0 }, { ".5", 0 }, { "7.5", 75 },
    };
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++) {
        char line[256];
        snprintf(line, sizeof line, "{\"ev\":\"device\",\"t\":5,\"dev\":0,\"cc\":\"%s\"}", ccs[i].cc);
        BOTH(line, 0, e.cc == ccs[i].want, "cc \"%s\": %d (got %d, pass %d)", ccs[i].cc, ccs[i].want, e.cc, pass_);
    }
    BOTH("{\"ev\":\"meminfo\",\"t\":6,\"dev\":1,\"api\":\"cudaMemGetInfo\",\"res\":0,\"free_bytes\":1000,\"total_bytes\":5000}", 0,
         e.type == VT_EV_MEMINFO && e.free_bytes == 1000 && e.total_bytes == 5000 && (e.has & VT_F_FREE) && (e.has & VT_F_TOTAL),
         "meminfo: free_bytes, total_bytes (pass %d)", pass_);
}

static void findings_and_folds(void)
{
    BOTH("{\"ev\":\"finding\",\"t\":40,\"dev\":0,\"id\":12,\"kind\":\"host_pointer\",\"severity\":\"error\",\"msg\":\"a host pointer\","
         "\"class\":\"pageable\",\"mapping\":\"heap\",\"name\":\"scale(float*, float)\",\"arg\":1,\"offset\":24,\"count\":3,"
         "\"first\":30,\"last\":41,\"value\":\"0x7f00deadbeef\",\"alloc\":{\"addr\":\"0x200000200000\",\"size\":4096}}", 0,
         e.type == VT_EV_FINDING && e.id == 12 && !strcmp(e.kind, "host_pointer") && !strcmp(e.severity, "error") &&
             !strcmp(e.msg, "a host pointer") && !strcmp(e.cls, "pageable") && !strcmp(e.mapping, "heap") &&
             !strcmp(e.name, "scale(float*, float)") && e.arg == 1 && e.offset == 24 && e.count == 3 && e.first == 30 &&
             e.last == 41 && e.value == 0x7f00deadbeefULL && e.alloc_addr == 0x200000200000ULL && e.alloc_size == 4096,
         "finding: id, kind, severity, msg, class, mapping, name, arg, offset, count, first, last, value, alloc (pass %d)", pass_);
    BOTH("{\"ev\":\"copies\",\"t\":50,\"dur\":3,\"tid\":9,\"api\":\"cudaMemcpyAsync\",\"res\":0,\"dev\":1,\"k\":4,\"dst\":\"0x200000200000\","
         "\"src\":\"0x7f0000001000\",\"size\":4096,\"dir\":\"h2d\",\"host\":\"pinned\",\"async\":true,\"stream\":\"0x5555\","
         "\"kind\":1,\"count\":40,\"bytes\":163840,\"last\":90,\"captured\":false,\"graph\":false}", 0,
         e.type == VT_EV_COPIES && e.t == 50 && e.dur == 3 && e.tid == 9 && !strcmp(e.api, "cudaMemcpyAsync") && e.res == 0 &&
             e.dev == 1 && e.k == 4 && e.dst == 0x200000200000ULL && e.src == 0x7f0000001000ULL && e.size == 4096 &&
             e.dir == VT_DIR_H2D && e.host == VT_HOST_PINNED && e.async == 1 && e.stream == 0x5555 && e.has_stream &&
             !(e.has & VT_F_KIND) && e.count == 40 && e.bytes == 163840 && e.last == 90,
         "copies: the call's fields, a copy's integer kind not a finding's, count, bytes, last (pass %d)", pass_);
    BOTH("{\"ev\":\"launch\",\"t\":60,\"dur\":1,\"tid\":9,\"api\":\"cuGraphLaunch\",\"res\":0,\"dev\":0,\"k\":7,\"captured\":true,\"graph\":true}", 0,
         e.k == 7 && e.captured == 1 && e.graph == 1, "launch: captured and graph true (pass %d)", pass_);
    BOTH("{\"ev\":\"set\",\"t\":61,\"api\":\"cudaMemset\",\"res\":0,\"dev\":0,\"addr\":\"0x10\",\"size\":8,\"value\":255}", 0,
         e.type == VT_EV_SET && e.value == 255 && (e.has & VT_F_VALUE) && e.addr == 0x10 && e.size == 8,
         "set: an integer value (pass %d)", pass_);
    BOTH("{\"ev\":\"alloc\",\"t\":62,\"api\":\"cuMemCreate\",\"res\":0,\"dev\":0,\"addr\":\"0x0\",\"size\":2097152,\"mem\":\"vmm\","
         "\"handle\":\"0xabc\",\"bt\":[\"0x401000\",\"0x402000\",\"0x403000\"]}", 0,
         e.type == VT_EV_ALLOC && e.mem == VT_MEM_VMM && e.handle == 0xabc && (e.has & VT_F_HANDLE) && e.nbt == 3 &&
             e.bt[0] == 0x401000 && e.bt[2] == 0x403000,
         "alloc: mem vmm, handle, bt (pass %d)", pass_);
}

static void modules_and_marks(void)
{
    BOTH("{\"ev\":\"module\",\"t\":2,\"path\":\"/usr/lib/libtorch_cuda.so\",\"base\":\"0x7f0000000000\",\"lo\":\"0x7f0000001000\","
         "\"hi\":\"0x7f0000900000\",\"build_id\":\"a1b2c3\",\"file_size\":123456789,\"mtime\":1700000000}", 0,
         e.type == VT_EV_MODULE && !strcmp(e.path, "/usr/lib/libtorch_cuda.so") && e.base == 0x7f0000000000ULL &&
             e.lo == 0x7f0000001000ULL && e.hi == 0x7f0000900000ULL && !strcmp(e.build_id, "a1b2c3") &&
             e.file_size == 123456789 && e.mtime == 1700000000,
         "module: path, base, lo, hi, build_id, file_size, mtime (pass %d)", pass_);
    BOTH("{\"ev\":\"pycode\",\"t\":3,\"id\":31,\"addr\":\"0x7f1234\",\"name\":\"train_step\",\"file\":\"/home/u/train.py\",\"line\":42,"
         "\"linetable\":\"80000a01\",\"pyver\":312}", 0,
         e.type == VT_EV_PYCODE && e.id == 31 && e.addr == 0x7f1234 && !strcmp(e.file, "/home/u/train.py") && e.pyline == 42 &&
             !strcmp(e.linetable, "80000a01") && e.pyver == 312,
         "pycode: file, line, linetable, pyver (pass %d)", pass_);
    BOTH("{\"ev\":\"kernel\",\"t\":4,\"id\":7,\"name\":\"k\",\"params\":[[0,8],[8,4],[16,16]]}", 0,
         e.type == VT_EV_KERNEL && e.nparams == 3 && e.params[0] == 0 && e.params[1] == 8 && e.params[2] == 8 &&
             e.params[3] == 4 && e.params[4] == 16 && e.params[5] == 16,
         "kernel: each [offset, size] pair in order (pass %d)", pass_);
    BOTH("{\"ev\":\"snapshot\",\"t\":70,\"label\":\"epoch 3\"}", 0, e.type == VT_EV_SNAPSHOT && !strcmp(e.label, "epoch 3"),
         "snapshot: label (pass %d)", pass_);
    BOTH("{\"ev\":\"pause\",\"t\":71,\"depth\":2}", 0, e.type == VT_EV_PAUSE && e.depth == 2, "pause: depth (pass %d)", pass_);
    BOTH("{\"ev\":\"resume\",\"t\":72,\"depth\":0,\"skipped\":5000}", 0, e.type == VT_EV_RESUME && e.skipped == 5000,
         "resume: skipped (pass %d)", pass_);
    BOTH("{\"ev\":\"pool_trim\",\"t\":73,\"dev\":1,\"pool\":\"0x99\",\"keep\":4096,\"reserved_before\":65536,\"reserved_after\":8192}", 0,
         e.type == VT_EV_POOL_TRIM && e.keep == 4096 && e.has_keep && e.reserved_after == 8192 && e.has_reserved_after,
         "pool_trim: keep, reserved_after (pass %d)", pass_);
    BOTH("{\"ev\":\"pool_attr\",\"t\":74,\"dev\":1,\"pool\":\"0x99\",\"release_threshold\":1048576}", 0,
         e.type == VT_EV_POOL_ATTR && e.keep == 1048576 && e.has_keep && !e.has_reserved_after,
         "pool_attr: release_threshold (pass %d)", pass_);
}

/* "res" given twice: the last value wins, a null one with res 0 (the analysis takes res_null
 * alone as "the call never returned" and res alone as its code) */
static void result_twice(void)
{
    BOTH("{\"ev\":\"free\",\"t\":2,\"dur\":1,\"tid\":5,\"api\":\"cudaFree\",\"res\":null,\"dev\":0,\"addr\":\"0x7e0000000000\",\"res\":1}", 0,
         e.type == VT_EV_FREE && !e.res_null && e.res == 1, "res null, then 1: failed with 1 (pass %d; res_null %d res %lld)",
         pass_, e.res_null, (long long)e.res);
    BOTH("{\"ev\":\"free\",\"t\":2,\"dur\":1,\"tid\":5,\"api\":\"cudaFree\",\"res\":1,\"dev\":0,\"addr\":\"0x7e0000000000\",\"res\":null}", 0,
         e.type == VT_EV_FREE && e.res_null && e.res == 0, "res 1, then null: never returned, res 0 (pass %d; res_null %d res %lld)",
         pass_, e.res_null, (long long)e.res);
}

int main(void)
{
    rd = vt_reader_new_mem("mem");
    header_footer();
    device_records();
    findings_and_folds();
    modules_and_marks();
    result_twice();
    vt_reader_close(rd);
    return vt_test_finish();
}
