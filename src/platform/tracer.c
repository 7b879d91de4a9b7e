/* tracer.c - process-wide tracer state below every layer: the configuration (read once from the
 * environment), the per-thread state, thread ids, and the run's manifest.  The lifecycle that
 * uses them (init, trace creation, fork, exit) is hooks/lifecycle.c. */
#include "tracer.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>


struct vt_config vt_cfg = { .enabled = 1, .backtraces = 1, .python_frames = 1, .bt_depth = 24, .check = VT_CHECK_RECORD,
                            .fold = 1, .fold_interval_ns = 1000000000u,
                            .meminfo_interval_ns = 1000000000u };
VT_TLS struct vt_thread_state vt_ts;

unsigned vt_fork_gen; /* bumped in each fork child: thread ids cached before it are the parent's */

int vt_gettid_slow(void)
{
    vt_ts.tid = (int)syscall(SYS_gettid);
    vt_ts.tid_gen = vt_fork_gen;
    return vt_ts.tid;
}

/* A knob set to a value it does not take: one line on stderr, and the default. A typo would
 * otherwise trace silently with other settings than the ones asked for. */
void vt_config_bad_knob(const char *name, const char *v, const char *takes)
{
    /* Once per run, not once per process a launcher spawns: the process `run` started says it. */
    if (!vt_cfg.quiet && (vt_cfg.root_pid == 0 || vt_cfg.root_pid == getpid()))
        fprintf(stderr, "vramtrace: %s=%s not understood (takes %s); using the default\n", name, v, takes);
}

/* v is a whole decimal number, nothing else: 0 (*out set), or -1. */
static int whole_number(const char *v, long *out)
{
    char *end;
    *out = strtol(v, &end, 10);
    return end == v || *end ? -1 : 0;
}

/* 1/0, on/off, yes/no, true/false (any case), or a whole number (non-zero: on). */
int vt_config_flag(const char *v, int *out)
{
    static const char *const on[] = { "on", "yes", "true" }, *const off[] = { "off", "no", "false" };
    for (int i = 0; i < 3; i++) {
        if (!strcasecmp(v, on[i])) return *out = 1, 0;
        if (!strcasecmp(v, off[i])) return *out = 0, 0;
    }
    long n;
    if (whole_number(v, &n) != 0) return -1;
    *out = n != 0;
    return 0;
}

static int env_flag(const char *name, int dflt)
{
    const char *v = getenv(name);
    int on;
    if (!v || !*v) return dflt;
    if (vt_config_flag(v, &on) == 0) return on;
    vt_config_bad_knob(name, v, "1, 0, on, off, yes, no, true, false");
    return dflt;
}

void vt_config_read(void)
{
    const char *r = getenv("VRAMTRACE_ROOT_PID");
    vt_cfg.root_pid = r ? atol(r) : 0;
    vt_cfg.quiet = env_flag("VRAMTRACE_QUIET", 0); /* first: it silences the warnings below */
    vt_cfg.enabled = !env_flag("VRAMTRACE_DISABLE", 0);
    vt_cfg.backtraces = env_flag("VRAMTRACE_BACKTRACE", 1);
    vt_cfg.python_frames = env_flag("VRAMTRACE_PYTHON_FRAMES", 1);
    const char *d = getenv("VRAMTRACE_BT_DEPTH");
    long depth;
    if (d && *d) {
        if (whole_number(d, &depth) == 0 && depth > 0) vt_cfg.bt_depth = depth > VT_BT_MAX ? VT_BT_MAX : (int)depth;
        else vt_config_bad_knob("VRAMTRACE_BT_DEPTH", d, "a number of frames above 0");
    }
    const char *fh = getenv("VRAMTRACE_FREED_HISTORY");
    long ranges;
    if (fh && *fh) {
        if (whole_number(fh, &ranges) == 0 && ranges > 0 && ranges <= 32768) vt_cfg.freed_history = (int)ranges;
        else vt_config_bad_knob("VRAMTRACE_FREED_HISTORY", fh, "a number of freed ranges from 1 to 32768");
    }
    const char *mi = getenv("VRAMTRACE_MEMINFO_INTERVAL_MS");
    long ms = 1000;
    if (mi && *mi && (whole_number(mi, &ms) != 0 || ms < 0)) {
        vt_config_bad_knob("VRAMTRACE_MEMINFO_INTERVAL_MS", mi, "milliseconds between driver memory samples, 0 for none");
        ms = 1000;
    }
    vt_cfg.meminfo_interval_ns = (uint64_t)ms * 1000000u;
    vt_cfg.fold = env_flag("VRAMTRACE_FOLD", 1);
    const char *fi = getenv("VRAMTRACE_FOLD_INTERVAL_MS");
    long fms = 1000;
    if (fi && *fi && (whole_number(fi, &fms) != 0 || fms < 1 || fms > 3600000)) {
        vt_config_bad_knob("VRAMTRACE_FOLD_INTERVAL_MS", fi, "milliseconds from 1 to 3600000 between writes of folded launch counts");
        fms = 1000;
    }
    vt_cfg.fold_interval_ns = (uint64_t)fms * 1000000u;
    const char *u = getenv("VRAMTRACE_UNWIND");
    vt_cfg.unwind_glibc = u && !strcmp(u, "glibc");
    if (u && *u && !vt_cfg.unwind_glibc && strcmp(u, "default")) vt_config_bad_knob("VRAMTRACE_UNWIND", u, "default, glibc");
    const char *c = getenv("VRAMTRACE_CHECK");
    if (c && !strcmp(c, "off")) vt_cfg.check = VT_CHECK_OFF;
    else if (c && !strcmp(c, "abort")) vt_cfg.check = VT_CHECK_ABORT;
    else if (c && *c && strcmp(c, "record")) vt_config_bad_knob("VRAMTRACE_CHECK", c, "record, abort, off");
    const char *o = getenv("VRAMTRACE_OUTPUT");
    snprintf(vt_cfg.output, sizeof vt_cfg.output, "%s", o && *o ? o : "vramtrace-%e-%p.jsonl");
}

/* `vramtrace run` lists every trace of the run, children's included, from this file. */
/* One line: a trace's (absolute) path; "!" and why a process has no trace; "+" and the pid of a
 * process the tracer was loaded into (so `run` can tell "never used CUDA" from "never traced"). */
void vt_manifest_note(const char *kind, const char *text)
{
    const char *m = getenv("VRAMTRACE_MANIFEST");
    if (!m || !*m) return;
    int saved = errno;
    /* `run` made the file: only that one, never created here, never a FIFO (opening one blocks
     * until someone reads it), a device or another user's file planted at the name. */
    int fd = open(m, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0) {
        char line[4200];
        int n = snprintf(line, sizeof line, "%s%s\n", kind, text);
        if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) < 0) { /* best effort */ }
        close(fd);
    }
    errno = saved;
}
