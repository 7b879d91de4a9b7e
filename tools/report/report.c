/* report.c - `vramtrace report`: the CLI layer (options, files, messages, exit status).
 * Data flows one way: reader -> analysis -> renderers; only this file prints diagnostics. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "journal.h"
#include "report/analysis.h"
#include "report/gate.h"
#include "report/inputs.h"
#include "report/reader.h"
#include "report/reader_mt.h"
#include "report/refbw.h"
#include "report/render.h"
#include "report/util.h"

#define MAX_WARN_SHOWN 10

static const char *me = "report";   /* the command whose messages these are: report, or run's gates */

static void usage(FILE *f)
{
    fputs("usage: vramtrace report [options] TRACE... | DIR | -\n"
          "\n"
          "Analyse vramtrace traces (one per process; a directory means its traces, NAME.jsonl and\n"
          "NAME.jsonl.N; - reads one trace from standard input). A file named twice is read once.\n"
          "The text report goes to standard output unless another format is asked for.\n"
          "\n"
          "options:\n"
          "  --json             machine-readable summary on stdout (docs/report.md) instead of text\n"
          "  --text             the text report on stdout as well as --html or --perfetto\n"
          "  --html FILE        write a self-contained HTML report\n"
          "  --perfetto FILE    write Chrome Trace Event JSON (open in ui.perfetto.dev)\n"
          "  --bandwidth FILE   reference bandwidths from `vramtrace bandwidth --json`\n"
          "  --top N            rows per table (default 10)\n"
          "  --diff BASE NEW    compare two runs (each a trace or a directory of traces): peak, sites\n"
          "                     at the peak by change, transfers; text or --json\n"
          "  --no-symbols       do not read ELF/DWARF files to symbolize backtraces\n"
          "  --fail-on LIST     exit with status 3 when a process trips one of LIST (commas): oom, leak,\n"
          "                     error, warning (or error), growth; each reason on stderr (with --diff:\n"
          "                     the new run's processes)\n"
          "  --max-peak [process:|device:]SIZE\n"
          "                     the same for a process's peak VRAM over SIZE (e.g. 40G, 512MiB; K M G T\n"
          "                     are powers of 1024, KB MB GB TB of 1000), or with device: one device's\n"
          "                     (and, over several traces, what they held on it at once)\n"
          "  --max-increase SIZE|PCT%\n"
          "                     with --diff: the new run's peak over the base's by more than SIZE or PCT%\n"
          "  --error-exitcode N\n"
          "                     the status a tripped gate exits with instead of 3 (1-255)\n"
          "  -h, --help         this help\n"
          "  -V, --version      the version\n"
          "\n"
          "Options take their value as --opt=V or --opt V; -- ends the options.\n"
          "Exit status: 0 reported; 1 a failure while reporting (out of memory, a write error);\n"
          "2 bad usage or a trace that could not be read; 3 (or --error-exitcode) a gate tripped.\n", f);
}

static void say_gate(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "vramtrace %s: %s\n", me, msg);
}

int vt_report_gate_option(const char *cmd, enum vt_gate_opt which, const char *v, struct vt_gates *g, int *gate_status)
{
    char err[256];
    int rc = 0;
    switch (which) {
    case VT_OPT_FAIL_ON: rc = vt_gate_parse(v, g, err, sizeof err); break;
    case VT_OPT_MAX_PEAK: rc = vt_gate_parse_peak(v, g, err, sizeof err); break;
    case VT_OPT_MAX_INCREASE: rc = vt_gate_parse_increase(v, g, err, sizeof err); break;
    case VT_OPT_ERROR_EXITCODE: {
        char *end;
        long e = strtol(v, &end, 10);
        if (!*v || *end || e < 1 || e > 255) return vt_cli_bad(cmd, "--error-exitcode needs a number from 1 to 255, not '%s'", v);
        *gate_status = (int)e;
        return 0;
    }
    }
    if (rc < 0) { fprintf(stderr, "vramtrace %s: %s\n", cmd, err); return 2; }
    return 0;
}


struct warn_ctx { long shown, total; };
static void on_warn(void *ctx, const char *msg)
{
    struct warn_ctx *w = ctx;
    if (w->shown++ < MAX_WARN_SHOWN) {
        vt_cli_progress_done(); /* the message on a line of its own; the progress comes back */
        fprintf(stderr, "vramtrace %s: %s\n", me, msg);
    }
    w->total++;
}

static void say_note(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "vramtrace %s: %s\n", me, msg);
}

/* A process that died (SIGKILL, _exit, exec) may have left its last events in TRACE.ring: they
 * are folded into the trace first (what `vramtrace run` does after the program exits). Then a
 * descriptor of the trace, or -1 after saying why. */
static int open_trace(const struct vtr_inputs *in, size_t k)
{
    char err[1024];
    const char *path = in->v[k].name;
    if (!in->v[k].is_stdin) {
        long got = vt_journal_recover(path, err, sizeof err);
        if (got > 0) fprintf(stderr, "vramtrace %s: %s: recovered %ld events left in %s.ring\n", me, path, got, path);
        else if (got < 0) fprintf(stderr, "vramtrace %s: warning: %s\n", me, err);
    }
    int fd = vtr_input_open(in, k, err, sizeof err);
    if (fd < 0) fprintf(stderr, "vramtrace %s: %s\n", me, err);
    return fd;
}

/* Progress over all the traces: bytes of the earlier ones, and all of them. Shown (on a terminal)
 * only when they add up to PROGRESS_MIN_BYTES: a report of a small trace is done at once. */
#define PROGRESS_MIN_BYTES ((uint64_t)16 << 20)
struct progress { uint64_t before, total; size_t k, n; int on; };

static void show_progress(const struct progress *pr, const struct vt_mreader *r)
{
    /* no file name: one another user chose could carry terminal escapes */
    char what[160], a[32], b[32];
    uint64_t at = pr->before + vt_mreader_offset(r);
    snprintf(what, sizeof what, "reading trace %zu of %zu: %d%% (%s of %s)", pr->k + 1, pr->n,
             pr->total ? (int)(at * 100 / pr->total) : 0, vtr_fmt_bytes(a, sizeof a, at), vtr_fmt_bytes(b, sizeof b, pr->total));
    vt_cli_progress("report", what);
}

/* Reads and analyses the trace FD (taken) named PATH. 0, or the exit status after printing why. */
static int analyse(int fd, const char *path, struct vt_proc *p, const struct progress *pr)
{
    char err[1024];
    struct warn_ctx w = { 0, 0 };
    struct vt_mreader *r = vt_mreader_open_fd(fd, path, on_warn, &w, err, sizeof err);
    if (!r) {
        int oom = errno == ENOMEM;   /* the report's own failure (1), not the trace's (2) */
        fprintf(stderr, "vramtrace %s: %s\n", me, err);
        return oom ? 1 : 2;
    }
    struct vt_event ev;
    int rc;
    unsigned long nev = 0;
    while ((rc = vt_mreader_next(r, &ev, err, sizeof err)) > 0) {
        if (vt_proc_feed(p, &ev, err, sizeof err) < 0) { rc = VT_RD_ENOMEM; break; }
        if (pr->on && !(++nev & 0xffff)) show_progress(pr, r);
    }
    vt_cli_progress_done();
    p->warnings = w.total;
    p->lines = vt_mreader_lines(r);
    vt_mreader_close(r);
    if (w.shown > MAX_WARN_SHOWN)
        fprintf(stderr, "vramtrace %s: %s: %ld more warnings not shown\n", me, path, w.shown - MAX_WARN_SHOWN);
    if (rc < 0) {
        fprintf(stderr, "vramtrace %s: %s\n", me, err);
        return rc == VT_RD_ENOMEM || rc == VT_RD_EIO ? 1 : 2;
    }
    if (vt_proc_finish(p, err, sizeof err) < 0) { fprintf(stderr, "vramtrace %s: %s\n", me, err); return 1; }
    return 0;
}

/* The traces of IN read and analysed, as far as they can be: L->procs[0..L->done) (L->split of
 * them the base run's when SPLIT, the operands' count before the new run, is not 0). One trace
 * that cannot be read (a rank killed as the tracer started, a damaged file) does not hide the
 * others: each is named on stderr, the rest are analysed, and L->unreadable counts them; one
 * that is empty (killed before anything was recorded) is named and skipped. 0, or the exit
 * status (L->procs is then still the caller's to free). */
struct loaded { struct vt_proc **procs; size_t done, split, unreadable; };
static int load_all(const struct vtr_inputs *in, size_t split, int symbols, struct vt_perfetto *pf, struct loaded *L)
{
    size_t npaths = in->n;
    int status = 0;
    memset(L, 0, sizeof *L);
    if (!(L->procs = calloc(npaths ? npaths : 1, sizeof *L->procs))) { fprintf(stderr, "vramtrace %s: out of memory\n", me); return 1; }
    struct vt_proc **procs = L->procs;
    size_t done = 0, unreadable = 0, empty = 0, split_kept = split;
    struct progress pr = { 0, 0, 0, npaths, 0 };
    for (size_t k = 0; k < npaths; k++) pr.total += (uint64_t)in->v[k].size;
    pr.on = pr.total >= PROGRESS_MIN_BYTES && vt_cli_progress_on();
    for (size_t k = 0; k < npaths; k++) {
        pr.k = k;
        if (k) pr.before += (uint64_t)in->v[k - 1].size;
        const char *path = in->v[k].name;
        int fd = open_trace(in, k);
        if (fd < 0 && npaths > 1) {
            unreadable++;
            if (k < split) split_kept--;
            continue;
        }
        if (fd < 0) { status = 2; break; }
        if (npaths > 1 && vtr_fd_is_empty(fd)) {
            fprintf(stderr, "vramtrace %s: %s: empty (the process was killed as the tracer started: nothing was "
                            "recorded); skipped\n", me, path);
            close(fd);
            empty++;
            if (k < split) split_kept--;
            continue;
        }
        if (!(procs[done] = vt_proc_new(path, symbols))) { close(fd); fprintf(stderr, "vramtrace %s: out of memory\n", me); status = 1; break; }
        if (pf) { struct vt_observer obs = vt_perfetto_observer(pf); vt_proc_set_observer(procs[done], &obs); }
        int rc = analyse(fd, path, procs[done], &pr);
        if (rc == 2 && npaths > 1) { /* analyse said why, with the place */
            vt_proc_free(procs[done]);
            procs[done] = NULL;
            unreadable++;
            if (k < split) split_kept--;
            continue;
        }
        done++;
        if (rc) { status = rc; break; }
    }
    L->done = done;
    L->split = split_kept;
    L->unreadable = unreadable;
    if (!status && npaths > 1 && (unreadable || empty)) {
        if (!done) {
            fprintf(stderr, "vramtrace %s: none of the %zu traces could be read\n", me, npaths);
            status = 2;
        } else if (unreadable) {
            fprintf(stderr, "vramtrace %s: %zu of %zu traces could not be read (named above); the report covers the other %zu\n", me,
                    unreadable + empty, npaths, done);
        }
    }
    return status;
}

/* run's gates (commands.h) */
int vt_report_gate_traces(const char *cmd, char *const *paths, size_t n, const struct vt_gates *g)
{
    struct vtr_inputs in;
    const char *was = me;
    me = cmd;
    vtr_inputs_init(&in, say_note, NULL);
    int status = 0;
    for (size_t i = 0; i < n && !status; i++) {
        char err[8300];
        if (vtr_inputs_add(&in, paths[i], 0, err, sizeof err) < 0) { fprintf(stderr, "vramtrace %s: %s\n", me, err); status = 2; }
    }
    struct loaded L = { 0 };
    if (!status && in.n && load_all(&in, 0, 0, NULL, &L) != 0) status = 2;
    if (!status && vt_gate_check(L.procs, L.done, g, say_gate, NULL)) status = 1;
    if (!status && L.unreadable) status = 2;
    for (size_t i = 0; i < L.done; i++) vt_proc_free(L.procs[i]);
    free(L.procs);
    vtr_inputs_free(&in);
    me = was;
    return status == 1 || status == 0 ? status : 2;
}

static int write_file(const char *path, const char *what, int (*fn)(FILE *, struct vt_proc *const *, size_t,
                      const struct vt_render_opts *), struct vt_proc *const *procs, size_t n, const struct vt_render_opts *o)
{
    struct vtr_out out;
    if (vtr_out_open(&out, path) != 0) { fprintf(stderr, "vramtrace %s: %s: %s\n", me, path, strerror(errno)); return 1; }
    int rc = fn(out.f, procs, n, o);
    if (vtr_out_commit(&out, rc >= 0) != 0) {
        fprintf(stderr, "vramtrace %s: writing %s %s failed (%s left as it was)\n", me, what, path, path);
        return 1;
    }
    return 0;
}

int vt_cmd_report(int argc, char **argv)
{
    const char *html = NULL, *perfetto = NULL, *bw = NULL;
    int json = 0, symbols = 1, status = 0, diff = 0, npos = 0;
    size_t split = 0;   /* --diff: paths[0..split) are the base run, the rest the new one */
    struct vt_render_opts opts = { 10, NULL };
    struct vt_refbw ref;
    struct vtr_inputs in;
    vtr_inputs_init(&in, say_note, NULL);
    struct vt_gates gates;
    vt_gates_init(&gates);
    int gate_status = 3;
    enum { O_JSON = 256, O_TEXT, O_HTML, O_PERFETTO, O_BANDWIDTH, O_TOP, O_DIFF, O_NO_SYMBOLS };
    static const struct option longs[] = {
        { "json", no_argument, NULL, O_JSON }, { "text", no_argument, NULL, O_TEXT },
        { "html", required_argument, NULL, O_HTML }, { "perfetto", required_argument, NULL, O_PERFETTO },
        { "bandwidth", required_argument, NULL, O_BANDWIDTH }, { "top", required_argument, NULL, O_TOP },
        { "diff", no_argument, NULL, O_DIFF }, { "no-symbols", no_argument, NULL, O_NO_SYMBOLS },
        { "fail-on", required_argument, NULL, VT_OPT_FAIL_ON }, { "error-exitcode", required_argument, NULL, VT_OPT_ERROR_EXITCODE },
        { "max-peak", required_argument, NULL, VT_OPT_MAX_PEAK }, { "max-increase", required_argument, NULL, VT_OPT_MAX_INCREASE },
        { "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 },
    };
    int c, want_text = 0;
    vt_cli_begin(0);
    while ((c = vt_cli_next("report", argc, argv, "hV", longs)) != -1) {
        const char *v = optarg;
        char *end;
        switch (c) {
        case 'h': usage(stdout); goto out;
        case 'V': status = vt_cli_version(); goto out;
        case O_JSON: json = 1; break;
        case O_TEXT: want_text = 1; break;
        case O_DIFF: diff = 1; break;
        case O_NO_SYMBOLS: symbols = 0; break;
        case O_HTML: html = v; break;
        case O_PERFETTO: perfetto = v; break;
        case O_BANDWIDTH: bw = v; break;
        case O_TOP: {
            long t = strtol(v, &end, 10);
            if (!*v || *end || t < 1 || t > 100000) { status = vt_cli_bad("report", "--top needs a number from 1 to 100000, not '%s'", v); goto out; }
            opts.top = (int)t;
            break;
        }
        case VT_OPT_FAIL_ON: case VT_OPT_MAX_PEAK: case VT_OPT_MAX_INCREASE: case VT_OPT_ERROR_EXITCODE:
            if ((status = vt_report_gate_option(me, (enum vt_gate_opt)c, v, &gates, &gate_status)) != 0) goto out;
            break;
        default: status = 2; goto out;
        }
    }
    if (vt_gates_for_diff(&gates) && !diff) { status = vt_cli_bad("report", "%s compares two runs: it needs --diff BASE NEW", "--max-increase"); goto out; }
    if (json && want_text) { status = vt_cli_bad("report", "%s: choose one of --json and --text for standard output", "--json --text"); goto out; }
    for (int i = optind; i < argc; i++) {
        char err[8300];
        if (npos++ == 1) split = in.n;
        if (vtr_inputs_add(&in, argv[i], diff && npos == 2, err, sizeof err) < 0) {
            fprintf(stderr, "vramtrace %s: %s\n", me, err);
            status = strcmp(err, "out of memory") ? 2 : 1;
            goto out;
        }
    }
    size_t npaths = in.n;
    if (!npaths) { fprintf(stderr, "vramtrace %s: no trace given (usage: vramtrace report [options] TRACE... | DIR)\n", me); status = 2; goto out; }
    if (diff && npos != 2) {
        fprintf(stderr, "vramtrace %s: --diff takes two runs, BASE and NEW (each a trace or a directory), not %d\n", me, npos);
        status = 2; goto out;
    }
    if (diff && (html || perfetto)) {
        fprintf(stderr, "vramtrace %s: --diff writes text or --json only (not --html or --perfetto)\n", me);
        status = 2; goto out;
    }
    if (bw) {
        char err[1024];
        if (vt_refbw_load(bw, &ref, err, sizeof err) < 0) { fprintf(stderr, "vramtrace %s: %s\n", me, err); status = 2; goto out; }
        opts.ref = &ref;
    }

    struct vt_perfetto *pf = NULL;
    struct vtr_out pfo = { 0 };
    if (perfetto) {
        if (vtr_out_open(&pfo, perfetto) != 0 || !(pf = vt_perfetto_open(pfo.f))) {
            fprintf(stderr, "vramtrace %s: %s: %s\n", me, perfetto, strerror(errno));
            vtr_out_commit(&pfo, 0);
            status = 1;
            goto out;
        }
    }
    struct loaded L;
    status = load_all(&in, split, symbols, pf, &L);
    struct vt_proc **procs = L.procs;
    size_t done = L.done, unreadable = L.unreadable;
    split = L.split;
    if (!status && diff && (split == 0 || split == done)) {
        fprintf(stderr, "vramtrace %s: --diff: no trace of the %s run could be read\n", me, split == 0 ? "base" : "new");
        status = 2;
    }
    if (pf) {
        int rc = status ? vt_perfetto_finish(pf, procs, 0) : vt_perfetto_finish(pf, procs, done);
        if (vtr_out_commit(&pfo, rc >= 0) != 0) {
            fprintf(stderr, "vramtrace %s: writing %s failed (%s left as it was)\n", me, perfetto, perfetto);
            if (!status) status = 1;
        }
    }
    if (!status && diff) {
        FILE *text = json ? NULL : vt_text_filter(stdout);
        int rc = vt_render_diff(text ? text : stdout, procs, split, procs + split, done - split, &opts, json);
        if (text && fclose(text) != 0) rc = -1;
        if (fflush(stdout) != 0 || rc < 0) { fprintf(stderr, "vramtrace %s: writing the report failed\n", me); status = 1; }
    } else if (!status) {
        int rc = 0;
        if (json) rc = vt_render_json(stdout, procs, done, &opts);
        else if (want_text || (!html && !perfetto)) { /* through the filter: a name cannot move the terminal's cursor or ring it */
            FILE *text = vt_text_filter(stdout);
            rc = vt_render_text(text ? text : stdout, procs, done, &opts);
            if (text && fclose(text) != 0) rc = -1;
        }
        if (fflush(stdout) != 0 || rc < 0) { fprintf(stderr, "vramtrace %s: writing the report failed\n", me); status = 1; }
        if (html && !status) status = write_file(html, "HTML report", vt_render_html, procs, done, &opts);
    }
    /* The gates read what was reported: with --diff, the new run (and its increase over the base).
     * Only a written report is gated; a trace that could not be read still makes it 2 (the gates
     * saw only the others). */
    if (!status && vt_gates_any(&gates)) {
        size_t tripped = vt_gate_check(diff ? procs + split : procs, diff ? done - split : done, &gates, say_gate, NULL);
        if (diff) tripped += vt_gate_check_diff(procs, split, procs + split, done - split, &gates, say_gate, NULL);
        if (tripped) status = unreadable ? 2 : gate_status;
    }
    for (size_t i = 0; i < done; i++) vt_proc_free(procs[i]);
    free(procs);
    if (!status && unreadable) status = 2;
out:
    vtr_inputs_free(&in);
    return status;
}
