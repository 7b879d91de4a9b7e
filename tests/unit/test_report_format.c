/* test_report_format.c - the writer (src/trace/records.c) and the reader (tools/report/reader.c)
 * agree on the trace format of include/vramtrace/trace.h: every binary record the tracer
 * formats, with every value of its enumerated fields (mem, dir, host), reads back with the same
 * values, and carries only keys the format lists.  Every record kind and value name the header
 * lists is one the reader knows by that name.
 *
 * With trace files as arguments it checks real traces instead: each line's "ev" and top-level keys
 * must be in the header's lists (tests/cases/trace_names.sh runs it on traced programs). */
#include <json-c/json.h>
#include <stdlib.h>

#include "records.h"
#include "report/reader.h"
#include "vt_test.h"

/* registry.h's, declared here: its enum vt_mem (the writer's, from 0) and the reader's (0 =
 * none) share their constant names, so one file cannot include both. */
const char *vt_mem_name(int mem);

#define ONE(id) +1
enum { WRITER_MEMS = 0 VT_TRACE_MEMS(ONE), WRITER_DIRS = 0 VT_TRACE_DIRS(ONE), WRITER_HOSTS = 0 VT_TRACE_HOSTS(ONE) };
#undef ONE

#define FIELD(k) VT_TRACE_FIELD_NAME(k),
static const char *const fields[] = { VT_TRACE_FIELDS(FIELD) };
#undef FIELD
#define EVN(id) VT_EVN_##id,
static const char *const events[] = { VT_TRACE_EVENTS(EVN) };
#undef EVN
#define DIRN(id) VT_DIRN_##id,
static const char *const dirs[] = { VT_TRACE_DIRS(DIRN) };   /* the writer's enum vt_dir order */
#undef DIRN
#define HOSTN(id) VT_HOSTN_##id,
static const char *const hosts[] = { "none", VT_TRACE_HOSTS(HOSTN) };   /* records.h: 0 is no host side */
#undef HOSTN

static int listed(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++) if (!strcmp(list[i], s)) return 1;
    return 0;
}

/* the first top-level key of LINE not in the header's field list, or NULL */
static const char *unlisted_key(const char *line, char *out, size_t cap)
{
    json_object *o = json_tokener_parse(line);
    if (!o) { snprintf(out, cap, "(not JSON)"); return out; }
    const char *bad = NULL;
    json_object_object_foreach(o, k, v) {
        (void)v;
        if (!listed(fields, sizeof fields / sizeof *fields, k)) { snprintf(out, cap, "%s", k); bad = out; break; }
    }
    json_object_put(o);
    return bad;
}

static struct vt_reader *rd;
static const struct vt_api_names *names;
static char line[8192], err[512];

/* Formats a binary record and reads it back into EV: 1, or 0 with the reason in err */
static int round_trip(int type, const void *rec, size_t len, struct vt_event *ev)
{
    size_t n = vt_record_format(type, rec, len, 0, names, line, sizeof line);
    if (!n || line[n - 1] != '\n') { snprintf(err, sizeof err, "not formatted"); return 0; }
    line[n - 1] = '\0';
    char tmp[sizeof line];
    memcpy(tmp, line, n);
    char key[64];
    if (unlisted_key(line, key, sizeof key)) { snprintf(err, sizeof err, "key '%s' is not in trace.h", key); return 0; }
    return vt_reader_parse_line(rd, tmp, n - 1, 0, ev, err, sizeof err) == 1;
}

static void call(struct vt_rec_call *c, const char *api)
{
    memset(c, 0, sizeof *c);
    c->t0 = 1000;
    c->dur = 5;
    c->tid = 77;
    c->dev = 0;
    c->api = vt_api_id(api);
}

static int check_files(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "r");
        if (!f) { printf("not ok - cannot open %s\n", argv[i]); return 1; }
        char *buf = NULL;
        size_t cap = 0;
        long lineno = 0, bad = 0, nlines = 0;
        while (getline(&buf, &cap, f) > 0) {
            lineno++;
            buf[strcspn(buf, "\n")] = '\0';
            if (!buf[0] || buf[0] == '\0') continue;
            nlines++;
            json_object *o = json_tokener_parse(buf), *ev;
            char key[64];
            const char *k = unlisted_key(buf, key, sizeof key);
            if (k) { printf("not ok - %s:%ld: key '%s' is not in vramtrace/trace.h\n", argv[i], lineno, k); bad++; }
            if (!o || !json_object_object_get_ex(o, "ev", &ev) ||
                !listed(events, sizeof events / sizeof *events, json_object_get_string(ev))) {
                printf("not ok - %s:%ld: record kind '%s' is not in vramtrace/trace.h\n", argv[i], lineno,
                       o && json_object_object_get_ex(o, "ev", &ev) ? json_object_get_string(ev) : "(none)");
                bad++;
            }
            if (o) json_object_put(o);
        }
        free(buf);
        fclose(f);
        if (!bad) printf("ok - %s: %ld lines, every kind and key listed\n", argv[i], nlines);
        vt_test_failures += bad != 0;
    }
    return vt_test_finish();
}

int main(int argc, char **argv)
{
    if (argc > 1) return check_files(argc, argv);
    rd = vt_reader_new_mem("roundtrip");
    names = vt_api_names_current();
    struct vt_event ev;

    /* every record kind the header lists is known to the reader by the same name */
    int known = 1;
    for (size_t i = 0; i < sizeof events / sizeof *events; i++)
        known &= strcmp(vt_rd_ev_name((enum vt_ev_type)(i + 1)), events[i]) == 0;
    VT_CHECK(known && VT_EV__COUNT == sizeof events / sizeof *events + 1, "reader knows all %zu record kinds of trace.h",
             sizeof events / sizeof *events);

    /* alloc and free of every kind of memory the tracer's registry can hold */
    for (int m = 0; m < WRITER_MEMS; m++) {
        struct { struct vt_rec_alloc a; uint64_t f[1]; } al;
        memset(&al, 0, sizeof al);
        call(&al.a.c, "cudaMalloc");
        al.a.addr = 0x7e0000000000ull;
        al.a.size = 4096;
        al.a.mem = (uint8_t)m;
        al.a.nframes = 1;
        al.a.frames[0] = 0x55aa;
        int ok = round_trip(VT_R_ALLOC, &al, sizeof al, &ev);
        VT_CHECK(ok && ev.type == VT_EV_ALLOC && ev.size == 4096 && !strcmp(vt_rd_mem_name(ev.mem), vt_mem_name(m)),
                 "alloc of mem '%s' reads back (%s)", vt_mem_name(m), ok ? "ok" : err);

        struct vt_rec_free fr;
        memset(&fr, 0, sizeof fr);
        call(&fr.c, "cudaFree");
        fr.addr = 0x7e0000000000ull;
        fr.known = 1;
        fr.size = 4096;
        fr.mem = (uint8_t)m;
        ok = round_trip(VT_R_FREE, &fr, sizeof fr, &ev);
        VT_CHECK(ok && ev.type == VT_EV_FREE && ev.addr == 0x7e0000000000ull &&
                 !strcmp(vt_rd_mem_name(ev.mem), vt_mem_name(m)),
                 "free of mem '%s' reads back (%s)", vt_mem_name(m), ok ? "ok" : err);
    }

    /* copies in every direction, with every host side */
    for (int d = 0; d < WRITER_DIRS; d++)
        for (int h = 0; h <= WRITER_HOSTS; h++) {
            struct vt_rec_copy cp;
            memset(&cp, 0, sizeof cp);
            call(&cp.c, "cudaMemcpy");
            cp.dst = 0x7e00; cp.src = 0x55dd; cp.size = 64;
            cp.dir = (uint8_t)d; cp.host = (uint8_t)h; cp.kind = 4; cp.src_dev = -1;
            int ok = round_trip(VT_R_COPY, &cp, sizeof cp, &ev);
            VT_CHECK(ok && ev.type == VT_EV_COPY && !strcmp(vt_rd_dir_name(ev.dir), dirs[d]) &&
                     !strcmp(vt_rd_host_name(ev.host), hosts[h]) && ev.size == 64,
                     "copy %s host %s reads back (%s)", dirs[d], hosts[h], ok ? "ok" : err);
        }

    /* the other binary records: every key listed, every record read */
    struct vt_rec_copy c2;
    memset(&c2, 0, sizeof c2);
    call(&c2.c, "cudaMemcpy2DAsync");
    c2.size = 6; c2.width = 3; c2.height = 2; c2.dpitch = 8; c2.spitch = 4; c2.is_2d = 1; c2.async = 1;
    c2.stream = 0x10; c2.src_dev = 1; c2.kind = -1; c2.dir = 3;
    VT_CHECK(round_trip(VT_R_COPY, &c2, sizeof c2, &ev) && ev.async == 1 && ev.stream == 0x10, "2D peer async copy (%s)", err);
    struct vt_rec_set st;
    memset(&st, 0, sizeof st);
    call(&st.c, "cudaMemsetAsync");
    st.addr = 0x7e00; st.size = 10; st.value = 255; st.async = 1; st.stream = 0x20;
    VT_CHECK(round_trip(VT_R_SET, &st, sizeof st, &ev) && ev.type == VT_EV_SET && ev.value == 255, "set (%s)", err);
    struct vt_rec_launch la;
    memset(&la, 0, sizeof la);
    call(&la.c, "cudaLaunchKernel");
    la.k = 3; la.grid[0] = la.grid[1] = la.grid[2] = 1; la.block[0] = 32; la.block[1] = la.block[2] = 1;
    VT_CHECK(round_trip(VT_R_LAUNCH, &la, sizeof la, &ev) && ev.type == VT_EV_LAUNCH && ev.k == 3, "launch (%s)", err);
    struct vt_rec_meminfo mi;
    memset(&mi, 0, sizeof mi);
    call(&mi.c, "cudaMemGetInfo");
    mi.free_b = 100; mi.total_b = 200;
    VT_CHECK(round_trip(VT_R_MEMINFO, &mi, sizeof mi, &ev) && ev.type == VT_EV_MEMINFO && ev.free_bytes == 100 &&
             ev.total_bytes == 200, "meminfo (%s)", err);
    struct vt_rec_sync sy;
    memset(&sy, 0, sizeof sy);
    call(&sy.c, "cudaStreamSynchronize");
    sy.has_stream = 1; sy.stream = 0x5000;
    VT_CHECK(round_trip(VT_R_SYNC, &sy, sizeof sy, &ev) && ev.type == VT_EV_SYNC && ev.has_stream && ev.stream == 0x5000, "sync of a stream (%s)", err);
    sy.has_stream = 0; sy.stream = 0;
    VT_CHECK(round_trip(VT_R_SYNC, &sy, sizeof sy, &ev) && ev.type == VT_EV_SYNC && !ev.has_stream, "device sync (%s)", err);

    vt_reader_close(rd);
    return vt_test_finish();
}
