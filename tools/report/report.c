/* report.c - `vramtrace report`: the CLI layer (options, files, messages, exit status).
 * Data flows one way: reader -> analysis -> renderers; only this file prints diagnostics. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "journal.h"
#include "report/analysis.h"
#include "report/gate.h"
#include "report/reader.h"
#include "report/reader_mt.h"
#include "report/refbw.h"
#include "report/render.h"
#include "report/util.h"

#define MAX_WARN_SHOWN 10

static void usage(FILE *f)
{
    fputs("usage: vramtrace report [options] TRACE... | DIR\n"
          "\n"
          "Analyse vramtrace traces (one per process; a directory means every *.jsonl in it).\n"
          "\n"
          "options:\n"
          "  --json             machine-readable summary on stdout (docs/report.md) instead of text\n"
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
          "  --error-exitcode N the status --fail-on exits with instead of 3 (1-255)\n"
          "  -h, --help         this help\n", f);
}

/* "--opt=VALUE" or "--opt VALUE": the value, advancing *I past it; NULL when A is not OPT.
 * *MISSING set when OPT came without its value. */
static const char *opt_value(const char *opt, char **argv, int argc, int *i, int *missing)
{
    size_t n = strlen(opt);
    const char *a = argv[*i];
    if (!a || strncmp(a, opt, n)) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n]) return NULL;
    if (*i + 1 >= argc) { *missing = 1; return NULL; }
    return argv[++*i];
}

static void say_gate(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "vramtrace report: %s\n", msg);
}

struct warn_ctx { long shown, total; };
static void on_warn(void *ctx, const char *msg)
{
    struct warn_ctx *w = ctx;
    if (w->shown++ < MAX_WARN_SHOWN) fprintf(stderr, "vramtrace report: %s\n", msg);
    w->total++;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Expands DIR into its *.jsonl files (sorted); returns the count added, or -1. */
static int add_dir(const char *dir, char ***paths, size_t *n, size_t *cap)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    size_t before = *n;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".jsonl")) continue;
        /* regular files only, links not followed: a FIFO named like a trace blocked the report */
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "vramtrace report: %s/%s: not a regular file; skipped\n", dir, e->d_name);
            continue;
        }
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 16;
            char **np = realloc(*paths, *cap * sizeof *np);
            if (!np) { closedir(d); return -1; }
            *paths = np;
        }
        size_t sz = strlen(dir) + len + 2;
        char *p = malloc(sz);
        if (!p) { closedir(d); return -1; }
        snprintf(p, sz, "%s/%s", dir, e->d_name);
        (*paths)[(*n)++] = p;
    }
    closedir(d);
    if (*n > before) qsort(*paths + before, *n - before, sizeof **paths, cmp_str);
    return (int)(*n - before);
}

/* Reads and analyses one trace. 0, or the exit status after printing why. */
static int analyse(const char *path, struct vt_proc *p)
{
    char err[1024];
    struct warn_ctx w = { 0, 0 };
    /* A process that died (SIGKILL, _exit, exec) may have left its last events in TRACE.ring:
     * fold them into the trace first (what `vramtrace run` does after the program exits). */
    long got = vt_journal_recover(path, err, sizeof err);
    if (got > 0) fprintf(stderr, "vramtrace report: %s: recovered %ld events left in %s.ring\n", path, got, path);
    else if (got < 0) fprintf(stderr, "vramtrace report: warning: %s\n", err);
    struct vt_mreader *r = vt_mreader_open(path, on_warn, &w, err, sizeof err);
    if (!r) { fprintf(stderr, "vramtrace report: %s\n", err); return 2; }
    struct vt_event ev;
    int rc;
    while ((rc = vt_mreader_next(r, &ev, err, sizeof err)) > 0)
        if (vt_proc_feed(p, &ev, err, sizeof err) < 0) { rc = VT_RD_ENOMEM; break; }
    p->warnings = w.total;
    p->lines = vt_mreader_lines(r);
    vt_mreader_close(r);
    if (w.shown > MAX_WARN_SHOWN)
        fprintf(stderr, "vramtrace report: %s: %ld more warnings not shown\n", path, w.shown - MAX_WARN_SHOWN);
    if (rc < 0) {
        fprintf(stderr, "vramtrace report: %s\n", err);
        return rc == VT_RD_ENOMEM || rc == VT_RD_EIO ? 1 : 2;
    }
    if (vt_proc_finish(p, err, sizeof err) < 0) { fprintf(stderr, "vramtrace report: %s\n", err); return 1; }
    return 0;
}

static int write_file(const char *path, const char *what, int (*fn)(FILE *, struct vt_proc *const *, size_t,
                      const struct vt_render_opts *), struct vt_proc *const *procs, size_t n, const struct vt_render_opts *o)
{
    struct vtr_out out;
    if (vtr_out_open(&out, path) != 0) { fprintf(stderr, "vramtrace report: %s: %s\n", path, strerror(errno)); return 1; }
    int rc = fn(out.f, procs, n, o);
    if (vtr_out_commit(&out, rc >= 0) != 0) {
        fprintf(stderr, "vramtrace report: writing %s %s failed (%s left as it was)\n", what, path, path);
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
    char **paths = NULL;
    size_t npaths = 0, cap = 0;
    int only_files = 0;
    unsigned gates = 0;
    int gate_status = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || !a[1]) {
            if (npos++ == 1) split = npaths;
            struct stat st;
            if (stat(a, &st) == 0 && S_ISDIR(st.st_mode)) {
                int k = add_dir(a, &paths, &npaths, &cap);
                if (k < 0) { fprintf(stderr, "vramtrace report: %s: %s\n", a, strerror(errno)); status = 2; goto out; }
                if (k == 0) { fprintf(stderr, "vramtrace report: %s: no *.jsonl traces in this directory\n", a); status = 2; goto out; }
                continue;
            }
            if (npaths == cap) {
                cap = cap ? cap * 2 : 16;
                char **np = realloc(paths, cap * sizeof *np);
                if (!np) { fputs("vramtrace report: out of memory\n", stderr); status = 1; goto out; }
                paths = np;
            }
            if (!(paths[npaths] = strdup(a))) { status = 1; goto out; }
            npaths++;
            continue;
        }
        if (!strcmp(a, "--")) { only_files = 1; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); goto out; }
        if (!strcmp(a, "--json")) { json = 1; continue; }
        if (!strcmp(a, "--diff")) { diff = 1; continue; }
        if (!strcmp(a, "--no-symbols")) { symbols = 0; continue; }
        int missing = 0;
        const char *v;
        if ((v = opt_value("--fail-on", argv, argc, &i, &missing))) {
            char err[160];
            if (vt_gate_parse(v, &gates, err, sizeof err) < 0) { fprintf(stderr, "vramtrace report: %s\n", err); status = 2; goto out; }
            continue;
        }
        if ((v = opt_value("--error-exitcode", argv, argc, &i, &missing))) {
            char *end;
            long c = strtol(v, &end, 10);
            if (!*v || *end || c < 1 || c > 255) {
                fprintf(stderr, "vramtrace report: --error-exitcode needs a number from 1 to 255, not '%s'\n", v);
                status = 2; goto out;
            }
            gate_status = (int)c;
            continue;
        }
        if (missing) { fprintf(stderr, "vramtrace report: %s needs an argument\n", a); status = 2; goto out; }
        const char **dst = !strcmp(a, "--html") ? &html : !strcmp(a, "--perfetto") ? &perfetto
                         : !strcmp(a, "--bandwidth") ? &bw : NULL;
        int is_top = !strcmp(a, "--top");
        if (dst || is_top) {
            if (i + 1 >= argc) { fprintf(stderr, "vramtrace report: %s needs an argument\n", a); status = 2; goto out; }
            v = argv[++i];
            if (dst) { *dst = v; continue; }
            char *end;
            long t = strtol(v, &end, 10);
            if (!*v || *end || t < 1 || t > 100000) {
                fprintf(stderr, "vramtrace report: --top needs a number from 1 to 100000, not '%s'\n", v);
                status = 2; goto out;
            }
            opts.top = (int)t;
            continue;
        }
        fprintf(stderr, "vramtrace report: unknown option '%s' (try 'vramtrace report --help')\n", a);
        status = 2;
        goto out;
    }
    if (!npaths) { fputs("vramtrace report: no trace given (usage: vramtrace report [options] TRACE... | DIR)\n", stderr); status = 2; goto out; }
    if (diff && npos != 2) {
        fprintf(stderr, "vramtrace report: --diff takes two runs, BASE and NEW (each a trace or a directory), not %d\n", npos);
        status = 2; goto out;
    }
    if (diff && (html || perfetto)) {
        fputs("vramtrace report: --diff writes text or --json only (not --html or --perfetto)\n", stderr);
        status = 2; goto out;
    }
    if (bw) {
        char err[1024];
        if (vt_refbw_load(bw, &ref, err, sizeof err) < 0) { fprintf(stderr, "vramtrace report: %s\n", err); status = 2; goto out; }
        opts.ref = &ref;
    }

    struct vt_proc **procs = calloc(npaths, sizeof *procs);
    struct vt_perfetto *pf = NULL;
    struct vtr_out pfo = { 0 };
    if (!procs) { status = 1; goto out; }
    if (perfetto) {
        if (vtr_out_open(&pfo, perfetto) != 0 || !(pf = vt_perfetto_open(pfo.f))) {
            fprintf(stderr, "vramtrace report: %s: %s\n", perfetto, strerror(errno));
            vtr_out_commit(&pfo, 0);
            free(procs);
            status = 1;
            goto out;
        }
    }
    /* One trace that cannot be read (a rank killed as the tracer started, a damaged file) does
     * not hide the others: each is named on stderr, the rest are reported, and the exit status
     * says so (2), unless all it lacked was a beginning (killed before anything was recorded). */
    size_t done = 0, unreadable = 0, empty = 0, split_kept = split;
    for (size_t k = 0; k < npaths; k++) {
        if (npaths > 1 && vtr_trace_is_empty(paths[k])) {
            fprintf(stderr, "vramtrace report: %s: empty (the process was killed as the tracer started: nothing was "
                            "recorded); skipped\n", paths[k]);
            empty++;
            if (k < split) split_kept--;
            continue;
        }
        if (!(procs[done] = vt_proc_new(paths[k], symbols))) { fputs("vramtrace report: out of memory\n", stderr); status = 1; break; }
        if (pf) { struct vt_observer obs = vt_perfetto_observer(pf); vt_proc_set_observer(procs[done], &obs); }
        int rc = analyse(paths[k], procs[done]);
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
    split = split_kept;
    if (!status && npaths > 1 && (unreadable || empty)) {
        if (!done) {
            fprintf(stderr, "vramtrace report: none of the %zu traces could be read\n", npaths);
            status = 2;
        } else if (unreadable) {
            fprintf(stderr, "vramtrace report: %zu of %zu traces could not be read (named above); the report covers the other %zu\n",
                    unreadable + empty, npaths, done);
        }
    }
    if (!status && diff && (split == 0 || split == done)) {
        fprintf(stderr, "vramtrace report: --diff: no trace of the %s run could be read\n", split == 0 ? "base" : "new");
        status = 2;
    }
    if (pf) {
        int rc = status ? vt_perfetto_finish(pf, procs, 0) : vt_perfetto_finish(pf, procs, done);
        if (vtr_out_commit(&pfo, rc >= 0) != 0) {
            fprintf(stderr, "vramtrace report: writing %s failed (%s left as it was)\n", perfetto, perfetto);
            if (!status) status = 1;
        }
    }
    if (!status && diff) {
        FILE *text = json ? NULL : vt_text_filter(stdout);
        int rc = vt_render_diff(text ? text : stdout, procs, split, procs + split, done - split, &opts, json);
        if (text && fclose(text) != 0) rc = -1;
        if (fflush(stdout) != 0 || rc < 0) { fputs("vramtrace report: writing the report failed\n", stderr); status = 1; }
    } else if (!status) {
        int rc;
        if (json) rc = vt_render_json(stdout, procs, done, &opts);
        else { /* through the filter: a name cannot move the terminal's cursor or ring it */
            FILE *text = vt_text_filter(stdout);
            rc = vt_render_text(text ? text : stdout, procs, done, &opts);
            if (text && fclose(text) != 0) rc = -1;
        }
        if (fflush(stdout) != 0 || rc < 0) { fputs("vramtrace report: writing the report failed\n", stderr); status = 1; }
        if (html && !status) status = write_file(html, "HTML report", vt_render_html, procs, done, &opts);
    }
    /* The gates read what was reported: with --diff, the new run. Only a written report is gated;
     * a trace that could not be read still makes it 2 (the gates saw only the others). */
    if (!status && gates && vt_gate_check(diff ? procs + split : procs, diff ? done - split : done, gates, say_gate, NULL))
        status = unreadable ? 2 : gate_status;
    for (size_t i = 0; i < done; i++) vt_proc_free(procs[i]);
    free(procs);
    if (!status && unreadable) status = 2;
out:
    for (size_t i = 0; i < npaths; i++) free(paths[i]);
    free(paths);
    return status;
}
