/* test_config.c - the knobs the library reads from the environment (platform/tracer.c), against
 * what README.md documents: each knob's default, the values it takes (bounds included), and one
 * stderr line naming a value it does not take, which then leaves the default. Also the run
 * manifest's writer: one line appended to the file `run` made, never to anything else. */
#include "vt_test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer.h"

static const char *const knobs[] = {
    "VRAMTRACE_ROOT_PID", "VRAMTRACE_QUIET", "VRAMTRACE_DISABLE", "VRAMTRACE_BACKTRACE",
    "VRAMTRACE_PYTHON_FRAMES", "VRAMTRACE_BT_DEPTH", "VRAMTRACE_FREED_HISTORY",
    "VRAMTRACE_MEMINFO_INTERVAL_MS", "VRAMTRACE_FOLD", "VRAMTRACE_FOLD_INTERVAL_MS",
    "VRAMTRACE_UNWIND", "VRAMTRACE_CHECK", "VRAMTRACE_OUTPUT",
};

static char errpath[4096];

/* Reads the knobs with only the given NAME=VALUE strings set (NULL-terminated), from the
 * tracer's initial values; what it printed on stderr is left in err (empty: nothing). */
static char err[4096];
static void read_env(const char *const *set)
{
    static const struct vt_config initial = { .enabled = 1, .backtraces = 1, .python_frames = 1, .bt_depth = 24,
                                              .check = VT_CHECK_RECORD, .fold = 1, .fold_interval_ns = 1000000000u,
                                              .meminfo_interval_ns = 1000000000u };
    for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++) unsetenv(knobs[i]);
    for (; *set; set++) putenv((char *)*set);
    vt_cfg = initial;
    fflush(stderr);
    int saved = dup(2), fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    vt_config_read();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, err, sizeof err - 1, 0);
    err[n > 0 ? n : 0] = 0;
    close(fd);
}
#define READ_ENV(...) read_env((const char *const[]){ __VA_ARGS__, NULL })
static void read_with(const char *name, const char *value)
{
    static char kv[512];
    if (!name) { READ_ENV(NULL); return; }
    snprintf(kv, sizeof kv, "%s=%s", name, value);
    READ_ENV(kv);
}

/* NAME=VALUE is not taken: exactly README's one line, and the default stays. */
static void rejected(const char *name, const char *value, const char *takes)
{
    char want[512];
    snprintf(want, sizeof want, "vramtrace: %s=%s not understood (takes %s); using the default", name, value, takes);
    size_t n = strlen(err);
    int one_line = n > 0 && err[n - 1] == '\n' && !memchr(err, '\n', n - 1);
    if (one_line) err[n - 1] = 0;
    VT_CHECK(one_line && !strcmp(err, want), "%s=%s: one line on stderr (got '%s', want '%s')", name, value, err, want);
}

static void test_defaults(void)
{
    read_with(NULL, NULL);
    VT_CHECK_EQ_STR(err, "", "defaults: nothing on stderr");
    VT_CHECK_EQ_INT(vt_cfg.enabled, 1, "defaults: tracing on");
    VT_CHECK_EQ_INT(vt_cfg.backtraces, 1, "defaults: backtraces on");
    VT_CHECK_EQ_INT(vt_cfg.python_frames, 1, "defaults: Python frames on");
    VT_CHECK_EQ_INT(vt_cfg.bt_depth, 24, "defaults: 24 frames");
    VT_CHECK_EQ_INT(vt_cfg.freed_history, 0, "defaults: freed history 0 (the registry's own 16384)");
    VT_CHECK_EQ_INT(vt_cfg.meminfo_interval_ns, 1000000000ull, "defaults: a memory sample per 1000 ms at most");
    VT_CHECK_EQ_INT(vt_cfg.fold, 1, "defaults: steady launches folded");
    VT_CHECK_EQ_INT(vt_cfg.fold_interval_ns, 1000000000ull, "defaults: folded counts every 1000 ms");
    VT_CHECK_EQ_INT(vt_cfg.unwind_glibc, 0, "defaults: the tracer's unwinder");
    VT_CHECK_EQ_INT(vt_cfg.check, VT_CHECK_RECORD, "defaults: check=record");
    VT_CHECK_EQ_INT(vt_cfg.quiet, 0, "defaults: not quiet");
    VT_CHECK_EQ_INT(vt_cfg.root_pid, 0, "defaults: no root pid");
    VT_CHECK_EQ_STR(vt_cfg.output, "vramtrace-%e-%p.jsonl", "defaults: the output template");
}

static void test_flags(void)
{
    static const struct { const char *v; int on; } ok[] = {
        { "1", 1 }, { "0", 0 }, { "on", 1 }, { "OFF", 0 }, { "Yes", 1 }, { "no", 0 }, { "TRUE", 1 },
        { "false", 0 }, { "7", 1 }, { "-1", 1 }, { "00", 0 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        read_with("VRAMTRACE_BACKTRACE", ok[i].v);
        char name[96];
        snprintf(name, sizeof name, "VRAMTRACE_BACKTRACE=%s: backtraces %d, nothing on stderr", ok[i].v, ok[i].on);
        VT_CHECK(vt_cfg.backtraces == ok[i].on && !*err, "%s", name);
        int out = -5;
        VT_CHECK(vt_config_flag(ok[i].v, &out) == 0 && out == ok[i].on, "vt_config_flag(%s) = %d", ok[i].v, ok[i].on);
    }
    static const char *const bad[] = { "2x", "onn", "y", "1 ", "" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int out = -5;
        VT_CHECK(vt_config_flag(bad[i], &out) == -1 && out == -5, "vt_config_flag('%s') is not a flag, out untouched", bad[i]);
    }
    read_with("VRAMTRACE_PYTHON_FRAMES", "maybe");
    rejected("VRAMTRACE_PYTHON_FRAMES", "maybe", "1, 0, on, off, yes, no, true, false");
    VT_CHECK_EQ_INT(vt_cfg.python_frames, 1, "VRAMTRACE_PYTHON_FRAMES=maybe: the default (on)");
    read_with("VRAMTRACE_PYTHON_FRAMES", "off");
    VT_CHECK_EQ_INT(vt_cfg.python_frames, 0, "VRAMTRACE_PYTHON_FRAMES=off");
    read_with("VRAMTRACE_DISABLE", "1");
    VT_CHECK_EQ_INT(vt_cfg.enabled, 0, "VRAMTRACE_DISABLE=1: tracing off");
    read_with("VRAMTRACE_FOLD", "no");
    VT_CHECK_EQ_INT(vt_cfg.fold, 0, "VRAMTRACE_FOLD=no: a line per launch");
    read_with("VRAMTRACE_BACKTRACE", "");
    VT_CHECK(vt_cfg.backtraces == 1 && !*err, "VRAMTRACE_BACKTRACE empty: the default, nothing said");

    /* Quiet is read first: it silences the other knobs' complaints too. */
    READ_ENV("VRAMTRACE_BT_DEPTH=ten", "VRAMTRACE_QUIET=yes");
    VT_CHECK(!*err && vt_cfg.quiet == 1 && vt_cfg.bt_depth == 24,
             "VRAMTRACE_QUIET=yes VRAMTRACE_BT_DEPTH=ten: quiet, the default depth, nothing on stderr");

    /* Only the process `run` started complains, not every process a launcher spawns. */
    static char other[64], self[64];
    snprintf(other, sizeof other, "VRAMTRACE_ROOT_PID=%ld", (long)getppid());
    snprintf(self, sizeof self, "VRAMTRACE_ROOT_PID=%ld", (long)getpid());
    READ_ENV(other, "VRAMTRACE_CHECK=abrot");
    VT_CHECK_EQ_INT(vt_cfg.root_pid, getppid(), "VRAMTRACE_ROOT_PID read");
    VT_CHECK(!*err && vt_cfg.check == VT_CHECK_RECORD,
             "a process other than the root: VRAMTRACE_CHECK=abrot leaves record and says nothing");
    READ_ENV(self, "VRAMTRACE_CHECK=abrot");
    rejected("VRAMTRACE_CHECK", "abrot", "record, abort, off");
}

/* The numeric knobs: each value read, what it sets (NULL-terminated table), and for a value not
 * taken, README's line saying what the knob takes. */
struct numcase { const char *v; unsigned long long want; int ok; };
static unsigned long long field_of(const char *knob)
{
    if (!strcmp(knob, "VRAMTRACE_BT_DEPTH")) return (unsigned long long)vt_cfg.bt_depth;
    if (!strcmp(knob, "VRAMTRACE_FREED_HISTORY")) return (unsigned long long)vt_cfg.freed_history;
    if (!strcmp(knob, "VRAMTRACE_MEMINFO_INTERVAL_MS")) return vt_cfg.meminfo_interval_ns;
    return vt_cfg.fold_interval_ns;
}
static void numbers(const char *knob, const char *takes, const struct numcase *c)
{
    for (; c->v; c++) {
        read_with(knob, c->v);
        char name[128];
        snprintf(name, sizeof name, "%s=%s: %llu", knob, c->v, c->want);
        VT_CHECK_EQ_INT(field_of(knob), c->want, name);
        if (c->ok) VT_CHECK_EQ_STR(err, "", name);
        else rejected(knob, c->v, takes);
    }
}

static void test_numbers(void)
{
    /* frames above 0, capped at 64 (VT_BT_MAX) */
    numbers("VRAMTRACE_BT_DEPTH", "a number of frames above 0", (const struct numcase[]){
        { "1", 1, 1 }, { "4", 4, 1 }, { "63", 63, 1 }, { "64", 64, 1 }, { "65", 64, 1 }, { "1000", 64, 1 },
        { "0", 24, 0 }, { "-3", 24, 0 }, { "ten", 24, 0 }, { "10x", 24, 0 }, { NULL, 0, 0 } });
    numbers("VRAMTRACE_FREED_HISTORY", "a number of freed ranges from 1 to 32768", (const struct numcase[]){
        { "1", 1, 1 }, { "64", 64, 1 }, { "32768", 32768, 1 }, { "32769", 0, 0 }, { "0", 0, 0 }, { "lots", 0, 0 },
        { NULL, 0, 0 } });
    /* milliseconds, 0 for none: kept in ns */
    numbers("VRAMTRACE_MEMINFO_INTERVAL_MS", "milliseconds between driver memory samples, 0 for none", (const struct numcase[]){
        { "0", 0, 1 }, { "1", 1000000ull, 1 }, { "2500", 2500000000ull, 1 }, { "-1", 1000000000ull, 0 },
        { "often", 1000000000ull, 0 }, { NULL, 0, 0 } });
    numbers("VRAMTRACE_FOLD_INTERVAL_MS", "milliseconds from 1 to 3600000 between writes of folded launch counts",
            (const struct numcase[]){ { "1", 1000000ull, 1 }, { "250", 250000000ull, 1 }, { "3600000", 3600000000000ull, 1 },
                                      { "3600001", 1000000000ull, 0 }, { "0", 1000000000ull, 0 }, { "5s", 1000000000ull, 0 },
                                      { NULL, 0, 0 } });
}

static void test_words(void)
{
    static const struct { const char *v; int mode; int ok; } check[] = {
        { "record", VT_CHECK_RECORD, 1 }, { "abort", VT_CHECK_ABORT, 1 }, { "off", VT_CHECK_OFF, 1 },
        { "abrot", VT_CHECK_RECORD, 0 }, { "OFF", VT_CHECK_RECORD, 0 },
    };
    for (size_t i = 0; i < sizeof check / sizeof *check; i++) {
        read_with("VRAMTRACE_CHECK", check[i].v);
        char name[96];
        snprintf(name, sizeof name, "VRAMTRACE_CHECK=%s: mode %d", check[i].v, check[i].mode);
        VT_CHECK_EQ_INT(vt_cfg.check, check[i].mode, name);
        if (check[i].ok) VT_CHECK_EQ_STR(err, "", name);
        else rejected("VRAMTRACE_CHECK", check[i].v, "record, abort, off");
    }
    read_with("VRAMTRACE_UNWIND", "glibc");
    VT_CHECK(vt_cfg.unwind_glibc == 1 && !*err, "VRAMTRACE_UNWIND=glibc");
    read_with("VRAMTRACE_UNWIND", "default");
    VT_CHECK(vt_cfg.unwind_glibc == 0 && !*err, "VRAMTRACE_UNWIND=default");
    read_with("VRAMTRACE_UNWIND", "fast");
    VT_CHECK_EQ_INT(vt_cfg.unwind_glibc, 0, "VRAMTRACE_UNWIND=fast: the default");
    rejected("VRAMTRACE_UNWIND", "fast", "default, glibc");
    read_with("VRAMTRACE_OUTPUT", "/x/%r.jsonl");
    VT_CHECK_EQ_STR(vt_cfg.output, "/x/%r.jsonl", "VRAMTRACE_OUTPUT taken as given");
    read_with("VRAMTRACE_OUTPUT", "");
    VT_CHECK_EQ_STR(vt_cfg.output, "vramtrace-%e-%p.jsonl", "VRAMTRACE_OUTPUT empty: the default template");
}

/* The manifest: a line appended to the regular file of ours that `run` made; nothing written to a
 * symbolic link or a FIFO at the name, nothing created, errno as it was. */
static void test_manifest(const char *dir)
{
    char m[4200], link[4200], fifo[4200], absent[4200];
    snprintf(m, sizeof m, "%s/manifest", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(absent, sizeof absent, "%s/absent", dir);
    int fd = open(m, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (write(fd, "x\n", 2) != 2) VT_CHECK(0, "manifest: prepared");
    close(fd);
    setenv("VRAMTRACE_MANIFEST", m, 1);
    errno = EDOM;
    vt_manifest_note("+", "1234");
    VT_CHECK_EQ_INT(errno, EDOM, "manifest: errno kept");
    vt_manifest_note("!", "no CUDA");
    vt_manifest_note("", "/t/a b.jsonl");
    char buf[256] = { 0 };
    fd = open(m, O_RDONLY);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    for (char *c = buf; *c; c++) if (*c == '\n') *c = '|';
    VT_CHECK_EQ_STR(n > 0 ? buf : "", "x|+1234|!no CUDA|/t/a b.jsonl|", "manifest: one line a note, appended");

    if (symlink(m, link) == 0) {
        setenv("VRAMTRACE_MANIFEST", link, 1);
        vt_manifest_note("+", "99");
        struct stat st;
        VT_CHECK(stat(m, &st) == 0 && st.st_size == (off_t)strlen("x\n+1234\n!no CUDA\n/t/a b.jsonl\n"),
                 "manifest: nothing written through a symbolic link");
    }
    if (mkfifo(fifo, 0600) == 0) {
        setenv("VRAMTRACE_MANIFEST", fifo, 1);
        vt_manifest_note("+", "99");   /* would block forever without a reader, were it opened blocking */
        int r = open(fifo, O_RDONLY | O_NONBLOCK);
        char c;
        VT_CHECK(r >= 0 && read(r, &c, 1) == 0, "manifest: a FIFO at the name gets nothing");
        if (r >= 0) close(r);
    }
    setenv("VRAMTRACE_MANIFEST", absent, 1);
    vt_manifest_note("+", "99");
    VT_CHECK(access(absent, F_OK) != 0, "manifest: never created");
    unsetenv("VRAMTRACE_MANIFEST");
}

int main(void)
{
    char dir[] = "/tmp/vt-config-XXXXXX";
    const char *tmp = getenv("TMPDIR");
    char dirbuf[4096];
    snprintf(dirbuf, sizeof dirbuf, "%s/vt-config-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *d = mkdtemp(dirbuf);
    if (!d) d = mkdtemp(dir);
    if (!d) { printf("not ok - a temporary folder\n"); return 1; }
    snprintf(errpath, sizeof errpath, "%s/stderr", d);
    test_defaults();
    test_flags();
    test_numbers();
    test_words();
    test_manifest(d);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    if (system(cmd) != 0) { /* left behind: harmless */ }
    return vt_test_finish();
}
