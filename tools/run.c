/* run.c - `vramtrace run`: run a command with libvramtrace.so preloaded and say where traces went. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bandwidth/bandwidth.h"
#include "report/gate.h"
#include "report/refbw.h"
#include "report/util.h"
#include "cli.h"
#include "commands.h"
#include "journal.h"
#include "safepath.h"
#include "trace_writer.h"

static void run_usage(FILE *f)
{
    fputs("usage: vramtrace run [options] -- CMD [ARGS...]\n"
          "\n"
          "Runs CMD with libvramtrace.so preloaded; every process of CMD that uses CUDA writes a trace.\n"
          "\n"
          "options:\n"
          "  -o, --output PATH     trace path template (%p pid, %e program, %h host, %r rank);\n"
          "                        default vramtrace-%e-%p.jsonl in the current directory\n"
          "  --sim                 run on the simulated CUDA device (build/sim, or $VRAMTRACE_SIM_DIR;\n"
          "                        tests and demos)\n"
          "  --check MODE          pointer checks: record (default), abort (stop at the first error), off\n"
          "  --no-backtrace        do not record call stacks (cheapest; reports lose call sites)\n"
          "  --bandwidth           measure reference bandwidths first (for `report --bandwidth`)\n"
          "  --torch-tensors       PyTorch allocates each tensor with cudaMallocAsync (its allocator\n"
          "                        backend:cudaMallocAsync): the report names the lines of live tensors\n"
          "                        instead of the caching allocator's segments (docs/report.md)\n"
          "  -q, --quiet           no messages from the tracer inside the program\n"
          "  --fail-on LIST        after the program: check its traces as `report --fail-on` does (oom,\n"
          "                        leak, error, warning, growth); each tripped gate one line on stderr\n"
          "  --max-peak [process:|device:]SIZE   the same, for a peak over SIZE (e.g. 40G)\n"
          "  --error-exitcode N    the status when a gate trips and the program succeeded (default 3)\n"
          "  -h, --help            this help\n"
          "  -V, --version         the version\n"
          "\n"
          "Options take their value as --opt=V or --opt V; the first word that is not an option (or\n"
          "the word after --) starts CMD.\n"
          "The exit status is CMD's (128+N when it was killed by signal N); 2 for bad usage of run. With\n"
          "gates, a program that succeeded exits with the gate status when one trips (pick one CMD never\n"
          "uses with --error-exitcode), and 1 when its traces could not be checked.\n", f);
}

/* Directory holding the vramtrace binary (libvramtrace.so and build/sim sit beside it); "" if
 * unknown. Asked on first use: only `run` needs it. */
static const char *self_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0]) return dir;
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) { dir[0] = '\0'; return dir; }
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    return dir;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static int find_lib(char *out, size_t len)
{
    const char *dir = self_dir();
    const char *env = getenv("VRAMTRACE_LIB");
    if (env && *env) { snprintf(out, len, "%s", env); return file_exists(out); }
    if (snprintf(out, len, "%s/libvramtrace.so", dir) < (int)len && file_exists(out)) return 1;
    if (snprintf(out, len, "%s/../lib/vramtrace/libvramtrace.so", dir) >= (int)len) return 0;
    return file_exists(out);
}

static void add_env(const char *name, const char *value, char sep, int append)
{
    const char *old = getenv(name);
    if (!old || !*old) { setenv(name, value, 1); return; }
    size_t n = strlen(value) + strlen(old) + 2;
    char *v = malloc(n);
    if (!v) return;
    if (append) snprintf(v, n, "%s%c%s", old, sep, value);
    else snprintf(v, n, "%s%c%s", value, sep, old);
    setenv(name, v, 1);
    free(v);
}
static void prepend_env(const char *name, const char *value, char sep) { add_env(name, value, sep, 0); }

/* --torch-tensors: PyTorch's allocator settings ("key:value" items separated by commas) with any
 * backend item replaced by backend:cudaMallocAsync, in each variable the user set (PyTorch 2.9 and
 * later read PYTORCH_ALLOC_CONF first, earlier ones only PYTORCH_CUDA_ALLOC_CONF), and in
 * PYTORCH_CUDA_ALLOC_CONF when unset (every version reads it). A backend the user chose is said. */
static void torch_tensors_env(int quiet)
{
    static const char *const vars[] = { "PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF" };
    static const char want[] = "backend:cudaMallocAsync";
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
        const char *old = getenv(vars[k]);
        if (!old) {
            if (k == 1) setenv(vars[k], want, 1);
            continue;
        }
        size_t cap = strlen(old) + sizeof want + 2, n = 0;
        char *v = malloc(cap), *copy = strdup(old);
        if (!v || !copy) { free(v); free(copy); setenv(vars[k], want, 1); continue; }
        char *save = NULL;
        for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
            const char *key = item + strspn(item, " \t");
            if (!strncmp(key, "backend", 7) && key[7 + strspn(key + 7, " \t")] == ':') {
                const char *val = strchr(key, ':') + 1;
                val += strspn(val, " \t");
                if (strncmp(val, "cudaMallocAsync", 15) && !quiet)
                    fprintf(stderr, "vramtrace run: --torch-tensors: %s item '%s' replaced by %s\n", vars[k], key, want);
                continue;
            }
            n += (size_t)snprintf(v + n, cap - n, "%s%s", n ? "," : "", item);
        }
        snprintf(v + n, cap - n, "%s%s", n ? "," : "", want);
        setenv(vars[k], v, 1);
        free(v);
        free(copy);
    }
    setenv("VRAMTRACE_TORCH_TENSORS", "1", 1);
}

static void absolute(const char *in, char *out, size_t len)
{
    if (in[0] == '/') { snprintf(out, len, "%s", in); return; }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) { snprintf(out, len, "%s", in); return; }
    if (snprintf(out, len, "%s/%s", cwd, in) >= (int)len) snprintf(out, len, "%s", in);
}

/* A path for a shell command line: as it is when it is plain, else in single quotes. */
static void put_shell_word(FILE *f, const char *s)
{
    if (*s && !s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-=:,@%")]) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

/* A directory to make a private one in: reached without a link another user owns, owned by this
 * user or root, and either writable by no one else or sticky (others cannot then rename or remove
 * what this user made there). */
static int private_parent_ok(const char *dir)
{
    char slashed[PATH_MAX + 2];
    snprintf(slashed, sizeof slashed, "%s/", dir);
    int fd = vt_safepath_dir_open(slashed, 0, NULL, NULL, 0);
    if (fd == -EPERM) return 0; /* reached through a link another user owns: they could swap it */
    struct stat st;
    int got = fd >= 0 && fstat(fd, &st) == 0;
    if (fd >= 0) close(fd);
    if (!got || !S_ISDIR(st.st_mode)) return 1; /* mkdtemp says what is wrong */
    if (st.st_uid != geteuid() && st.st_uid != 0) return 0;
    return !(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX);
}

/* A run killed with SIGKILL leaves its private directories (vramtrace-run-PID-*, vramtrace-lib-
 * PID-*) behind: remove those of this user whose run is gone, with the only names run puts in
 * them, through a descriptor of the directory (never following a link). */
static void sweep_stale(const char *tmpdir)
{
    DIR *d = opendir(tmpdir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *rest = !strncmp(e->d_name, "vramtrace-run-", 14) ? e->d_name + 14
                         : !strncmp(e->d_name, "vramtrace-lib-", 14) ? e->d_name + 14 : NULL;
        char *end;
        long pid = rest ? strtol(rest, &end, 10) : 0;
        if (pid <= 0 || *end != '-' || (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        unlinkat(fd, "traces.list", 0);
        unlinkat(fd, "libvramtrace.so", 0);
        unlinkat(fd, "libvtsimredirect.so", 0);
        unlinkat(fd, "libcudart.so.13", 0);
        close(fd);
        unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

/* SIGTERM or SIGHUP to run (a scheduler ending the job, a closed terminal) goes to the program;
 * run waits for it, then says where the traces are and removes its private directories. */
static volatile sig_atomic_t child_pid;
static void forward_signal(int sig)
{
    int saved = errno;
    if (child_pid > 0) kill((pid_t)child_pid, sig);
    errno = saved;
}

/* The loader splits LD_PRELOAD at spaces and colons and expands $ORIGIN-style tokens in it: a
 * library whose path has one of those cannot be named there. */
static int preload_unsafe(const char *path) { return path[strcspn(path, " :\t\n$")] != '\0'; }

/* A new private directory DIR (mkdtemp, 0700) named vramtrace-KIND-PID-XXXXXX, in $TMPDIR when
 * that is a parent private_parent_ok() accepts (and, with PRELOADABLE, one LD_PRELOAD can carry),
 * else in /tmp; the stale directories of killed runs in that parent are removed first. When
 * $TMPDIR refuses (missing, full), the list of traces is done without (run says so: the user named
 * that directory), the preload link goes to /tmp (without it the program cannot start traced).
 * 0, or -1 with errno set and PARENT naming the directory that refused. */
static int make_private_dir(const char *kind, int preloadable, char *dir, size_t dirlen, const char **parent)
{
    static char swept[PATH_MAX];
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir || (preloadable && preload_unsafe(tmpdir)) || !private_parent_ok(tmpdir)) tmpdir = "/tmp";
    for (;;) {
        if (strcmp(swept, tmpdir)) {
            sweep_stale(tmpdir);
            snprintf(swept, sizeof swept, "%s", tmpdir);
        }
        *parent = tmpdir;
        if (snprintf(dir, dirlen, "%s/vramtrace-%s-%ld-XXXXXX", tmpdir, kind, (long)getpid()) >= (int)dirlen)
            errno = ENAMETOOLONG;
        else if (mkdtemp(dir))
            return 0;
        if (!preloadable || !strcmp(tmpdir, "/tmp")) return -1;
        tmpdir = "/tmp";
    }
}

/* LD_PRELOAD's names for the N libraries in LIBS: each one's own path, or, when that has a
 * character LD_PRELOAD cannot carry, a link to it (under its file name) in one private directory
 * made for them (DIR; "" when none was needed). The links live as long as `run` (processes the
 * command starts after run has returned find no tracer). */
#define MAX_PRELOADS 3
static int preload_names(const char *const *libs, int n, char names[][PATH_MAX + 32], char *dir, size_t dirlen,
                         char *err, size_t errlen)
{
    dir[0] = '\0';
    for (int k = 0; k < n; k++) {
        if (!preload_unsafe(libs[k])) { snprintf(names[k], PATH_MAX + 32, "%s", libs[k]); continue; }
        const char *parent;
        if (!dir[0] && make_private_dir("lib", 1, dir, dirlen, &parent) != 0) {
            dir[0] = '\0';
            snprintf(err, errlen, "no private directory for a link to %s in %s: %s", libs[k], parent, strerror(errno));
            return -1;
        }
        const char *base = strrchr(libs[k], '/');
        snprintf(names[k], PATH_MAX + 32, "%s/%s", dir, base ? base + 1 : libs[k]);
        if (symlink(libs[k], names[k]) != 0) {
            snprintf(err, errlen, "cannot link to %s from %s: %s", libs[k], dir, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void preload_names_remove(const char *dir, char names[][PATH_MAX + 32], int n)
{
    if (!dir[0]) return;
    for (int k = 0; k < n; k++)
        if (!strncmp(names[k], dir, strlen(dir))) unlink(names[k]);
    rmdir(dir);
}

/* At exit, from the list the tracer kept (VRAMTRACE_MANIFEST): each trace's ring converted (the
 * process died before the drain thread got there), where the traces are, and why a process has
 * none: with -q too (the process itself said it at once without -q), a lost trace is never silent. */
static void report_traces(const char *manifest, int manifest_ok, const char *tmpl, int quiet, int rc, char ***out, size_t *nout)
{
    /* Read back only what is still the list run made: a regular file of ours, not a link. */
    int fd = manifest_ok ? open(manifest, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    struct stat st;
    const char *why = manifest_ok ? NULL : "not created";
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) why = "not run's own file";
    else if (fd < 0 && !why) why = strerror(errno);
    FILE *f = !why ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0) close(fd);
        fprintf(stderr, "vramtrace: traces go to %s (the list of traces could not be read: %s)\n", tmpl, why ? why : "out of memory");
        return;
    }
    char line[PATH_MAX + 2];
    int loaded = 0, failed = 0;
    size_t ntraces = 0, cap = 0;
    char **traces = NULL;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '+') { loaded++; continue; }
        if (line[0] == '!') { /* without -q the process said it when it happened */
            if (quiet) fprintf(stderr, "vramtrace: a process has no trace: %s\n", line + 1);
            failed++;
            continue;
        }
        if (!line[0]) continue;
        char err[512];
        long got = vt_journal_recover(line, err, sizeof err);
        if (got < 0) fprintf(stderr, "vramtrace: %s\n", err);
        else if (got > 0 && !quiet)
            fprintf(stderr, "vramtrace: recovered %ld events the program left in %s.ring\n", got, line);
        if (vtr_trace_is_empty(line)) { /* said even with -q: a lost trace is never silent */
            fprintf(stderr, "vramtrace: %s is empty: its process was killed as the tracer started, before anything "
                            "was recorded\n", line);
            failed++; /* not "never used CUDA" */
            continue;
        }
        if (!quiet) fprintf(stderr, "vramtrace: trace written to %s\n", line);
        if (ntraces == cap) {
            char **t = realloc(traces, (cap = cap ? 2 * cap : 8) * sizeof *t);
            if (!t) break;
            traces = t;
        }
        if ((traces[ntraces] = strdup(line))) ntraces++;
    }
    fclose(f);
    if (ntraces && !quiet) {
        fputs("vramtrace: analyse with: vramtrace report", stderr);
        for (size_t k = 0; k < ntraces; k++) {
            fputc(' ', stderr);
            put_shell_word(stderr, traces[k]);
        }
        fputc('\n', stderr);
    } else if (!ntraces && !failed && !quiet && rc != 127) {
        if (loaded) fprintf(stderr, "vramtrace: no trace written (the program never used CUDA)\n");
        else fprintf(stderr, "vramtrace: no trace written: the tracer was never loaded into the program "
                             "(a statically linked or setuid program, or one that clears LD_PRELOAD)\n");
    }
    *out = traces;
    *nout = ntraces;
}

/* The template's directories that do not depend on the process (up to the first component with
 * a % letter) are made now, 0700: a mistake in -o is said before the program runs, not after it
 * ran for hours untraced. Those with % letters are made by each process (vt_writer_open). A link
 * another user owns on the way is not followed (-EPERM, BAD naming it); other failures: 1, ERR
 * saying why. */
static int make_template_dirs(const char *tmpl, char *bad, size_t badlen, char *err, size_t errlen)
{
    char fixed[PATH_MAX];
    snprintf(fixed, sizeof fixed, "%s", tmpl);
    char *pct = strchr(fixed, '%');
    if (pct) *pct = '\0';
    char *slash = strrchr(fixed, '/');
    if (!slash) return 0;
    slash[1] = '\0'; /* "dir/": the walk makes dir and what is missing above it */
    int fd = vt_safepath_dir_open(fixed, VT_SAFEPATH_MKDIR, NULL, bad, badlen);
    if (fd == -EPERM) return -EPERM;
    int rc = fd;
    if (fd >= 0) {
        close(fd);
        slash[0] = '\0';
        if (access(fixed[0] ? fixed : "/", W_OK | X_OK) == 0) return 0;
        rc = -errno;
    }
    slash[0] = '\0';
    snprintf(err, errlen, "cannot use %s for traces: %s", fixed[0] ? fixed : "/", strerror(-rc));
    return 1;
}

int vt_cmd_run(int argc, char **argv)
{
    const char *output = NULL, *check = NULL;
    int sim = 0, no_bt = 0, bandwidth = 0, quiet = 0, torch = 0, c, gate_status = 3;
    struct vt_gates gates;
    vt_gates_init(&gates);
    enum { O_SIM = 256, O_CHECK, O_NO_BT, O_BANDWIDTH, O_TORCH };
    static const struct option longs[] = {
        { "output", required_argument, NULL, 'o' }, { "sim", no_argument, NULL, O_SIM },
        { "check", required_argument, NULL, O_CHECK }, { "no-backtrace", no_argument, NULL, O_NO_BT },
        { "bandwidth", no_argument, NULL, O_BANDWIDTH }, { "torch-tensors", no_argument, NULL, O_TORCH },
        { "fail-on", required_argument, NULL, VT_OPT_FAIL_ON }, { "max-peak", required_argument, NULL, VT_OPT_MAX_PEAK },
        { "error-exitcode", required_argument, NULL, VT_OPT_ERROR_EXITCODE },
        { "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    /* in order: the first operand is the program, and what follows it is its own */
    vt_cli_begin(1);
    while ((c = vt_cli_next("run", argc, argv, "o:qhV", longs)) != -1) {
        switch (c) {
        case 'h': run_usage(stdout); return 0;
        case 'V': return vt_cli_version();
        case 'o': output = optarg; break;
        case 'q': quiet = 1; break;
        case O_SIM: sim = 1; break;
        case O_NO_BT: no_bt = 1; break;
        case O_BANDWIDTH: bandwidth = 1; break;
        case O_TORCH: torch = 1; break;
        case VT_OPT_FAIL_ON: case VT_OPT_MAX_PEAK: case VT_OPT_ERROR_EXITCODE: {
            int st = vt_report_gate_option("run", (enum vt_gate_opt)c, optarg, &gates, &gate_status);
            if (st) return st;
            break;
        }
        case O_CHECK:
            check = optarg;
            if (strcmp(check, "record") && strcmp(check, "abort") && strcmp(check, "off"))
                return vt_cli_bad("run", "--check must be record, abort or off, not '%s'", check);
            break;
        default: return 2;
        }
    }
    int i = optind;
    if (i >= argc) { fprintf(stderr, "vramtrace run: no command given (usage: vramtrace run [options] -- CMD ARGS...)\n"); return 2; }

    char lib[PATH_MAX];
    if (!find_lib(lib, sizeof lib)) {
        fprintf(stderr, "vramtrace run: cannot find libvramtrace.so next to %s/vramtrace (set VRAMTRACE_LIB)\n", self_dir());
        return 1;
    }
    /* the simulated device: $VRAMTRACE_SIM_DIR (an installed vramtrace has none beside it), else
     * the build's, beside the binary */
    char simdir[PATH_MAX + 8];
    const char *simenv = getenv("VRAMTRACE_SIM_DIR");
    if (simenv && *simenv) absolute(simenv, simdir, sizeof simdir);
    else snprintf(simdir, sizeof simdir, "%s/sim", self_dir());
    if (sim) {
        char probe[sizeof simdir + 32];
        snprintf(probe, sizeof probe, "%s/libcudart.so.13", simdir);
        if (!file_exists(probe)) {
            fprintf(stderr, "vramtrace run: --sim needs the simulated device, not built in %s (run `make test` or `make sim` with nvcc installed)\n", simdir);
            return 1;
        }
        prepend_env("LD_LIBRARY_PATH", simdir, ':');
        setenv("VRAMTRACE_SIM_DIR", simdir, 1);
    }
    char tmpl[PATH_MAX];
    absolute(output ? output : "vramtrace-%e-%p.jsonl", tmpl, sizeof tmpl);
    if (output && (strlen(output) >= sizeof tmpl - 1 || strlen(tmpl) >= sizeof tmpl - 1)) {
        fprintf(stderr, "vramtrace run: -o is over %zu bytes as an absolute path; not starting %s\n", sizeof tmpl - 2, argv[i]);
        return 2;
    }
    /* A trace is a file the tracer maps and grows: /dev/stdout, a FIFO or a device cannot be one
     * (the tracer used to create "/dev/stdout.1" beside it). */
    struct stat ost;
    if (!strchr(tmpl, '%') && stat(tmpl, &ost) == 0 && !S_ISREG(ost.st_mode)) {
        fprintf(stderr, "vramtrace run: -o %s: not a regular file (traces are files the tracer maps; name a path); not starting %s\n",
                tmpl, argv[i]);
        return 2;
    }
    setenv("VRAMTRACE_OUTPUT", tmpl, 1);
    if (check) setenv("VRAMTRACE_CHECK", check, 1);
    if (no_bt) setenv("VRAMTRACE_BACKTRACE", "0", 1);
    if (quiet) setenv("VRAMTRACE_QUIET", "1", 1);
    if (torch) torch_tensors_env(quiet);
    if (!getenv("NVTX_INJECTION64_PATH")) setenv("NVTX_INJECTION64_PATH", lib, 1);
    char dir_err[PATH_MAX + 64], bad[PATH_MAX];
    int dirs = make_template_dirs(tmpl, bad, sizeof bad, dir_err, sizeof dir_err);
    if (dirs == -EPERM) {
        fprintf(stderr, "vramtrace run: -o %s: %s is a link another user owns (not followed); not starting %s\n", tmpl, bad, argv[i]);
        return 2;
    }
    if (dirs != 0) {
        fprintf(stderr, "vramtrace run: %s; not starting %s\n", dir_err, argv[i]);
        return 1;
    }
    /* The list of traces lives in a directory only this user can enter (mkdtemp, 0700): a name
     * another user can guess (/tmp/vramtrace-run-PID.list) let them plant a link that made root's
     * run, and the traced processes appending to it, write into root's files. */
    char list_dir[PATH_MAX], manifest[PATH_MAX + 16];
    const char *tmpdir;
    int manifest_ok = make_private_dir("run", 0, list_dir, sizeof list_dir, &tmpdir) == 0;
    snprintf(manifest, sizeof manifest, "%s/traces.list", manifest_ok ? list_dir : tmpdir);
    if (manifest_ok) {
        int mfd = open(manifest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        manifest_ok = mfd >= 0;
        if (manifest_ok) close(mfd);
        else rmdir(list_dir);
    }
    if (!manifest_ok)
        fprintf(stderr, "vramtrace run: cannot create the list of traces in %s: %s (traces are still written to %s)\n",
                tmpdir, strerror(errno), tmpl);
    else setenv("VRAMTRACE_MANIFEST", manifest, 1);

    if (bandwidth) {
        char bw[PATH_MAX + 32], err[256];
        char *dot = strrchr(tmpl, '/');
        snprintf(bw, sizeof bw, "%.*s/vramtrace-bandwidth-%ld.json", dot ? (int)(dot - tmpl) : 1, dot ? tmpl : ".", (long)getpid());
        char bw_used[sizeof bw + 8];
        if (vt_bandwidth_measure_json(bw, bw_used, sizeof bw_used, err, sizeof err) != 0) fprintf(stderr, "vramtrace run: bandwidth: %s\n", err);
        else if (!quiet) {
            fprintf(stderr, "vramtrace: reference bandwidths in %s (use: vramtrace report --bandwidth %s TRACE)\n", bw_used, bw_used);
            /* without a usable GPU here (--sim included) only the host rows are measured */
            struct vt_refbw ref;
            if (vt_refbw_load(bw_used, &ref, err, sizeof err) == 0 && ref.gbps[VT_REF_H2D_PINNED] <= 0 && ref.gbps[VT_REF_D2D] <= 0)
                fprintf(stderr, "vramtrace: no GPU measured here: the reference has host rows only; for the GPU rows run "
                                "`vramtrace bandwidth --json -o ref.json` on the machine with the GPU and pass that to report --bandwidth\n");
        }
    }
    /* the tracer, and under --sim the shim that hands frameworks the simulated runtime when they
     * open theirs by path (tests/sim/sim_redirect.c) and the simulated runtime */
    const char *preloads[MAX_PRELOADS] = { lib };
    int npreloads = 1;
    char shim[PATH_MAX + 32], simrt[PATH_MAX + 32];
    if (sim) {
        snprintf(shim, sizeof shim, "%s/libvtsimredirect.so", simdir);
        if (file_exists(shim)) preloads[npreloads++] = shim;
        /* the simulated runtime itself, after the tracer: a library whose DT_RPATH names the
         * wheel's own runtime (PyTorch's libtorch_global_deps.so, RPATH beats LD_LIBRARY_PATH)
         * then finds libcudart.so.13 already loaded, by its SONAME */
        snprintf(simrt, sizeof simrt, "%s/libcudart.so.13", simdir);
        preloads[npreloads++] = simrt;
    }
    /* the simulated runtime goes last, after the user's own preloads: an interposer of theirs
     * must still come before the runtime it wraps */
    int nfront = sim ? npreloads - 1 : npreloads;
    char link_dir[PATH_MAX] = "", names[MAX_PRELOADS][PATH_MAX + 32];
    char err[2 * PATH_MAX + 128];
    if (preload_names(preloads, npreloads, names, link_dir, sizeof link_dir, err, sizeof err) != 0) {
        fprintf(stderr, "vramtrace run: cannot preload %s: its path has a space, colon or '$', which LD_PRELOAD "
                        "cannot carry, and %s; not starting %s\n", lib, err, argv[i]);
        preload_names_remove(link_dir, names, npreloads);
        if (manifest_ok) { unlink(manifest); rmdir(list_dir); }
        return 1;
    }
    for (int k = nfront - 1; k >= 0; k--) prepend_env("LD_PRELOAD", names[k], ':');
    if (nfront < npreloads) add_env("LD_PRELOAD", names[nfront], ':', 1);
    /* A sanitizer runtime (libasan/libtsan) must come before everything else in LD_PRELOAD. */
    const char *first = getenv("VRAMTRACE_PRELOAD_FIRST");
    if (first && *first) prepend_env("LD_PRELOAD", first, ':');

    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { fprintf(stderr, "vramtrace run: fork: %s\n", strerror(errno)); return 1; }
    if (pid == 0) {
        char rootpid[32];
        snprintf(rootpid, sizeof rootpid, "%ld", (long)getpid());
        setenv("VRAMTRACE_ROOT_PID", rootpid, 1);
        execvp(argv[i], argv + i);
        fprintf(stderr, "vramtrace run: cannot run '%s': %s\n", argv[i], strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* The terminal's ^C reaches the whole process group; the tracer waits for the program. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    if (WIFSIGNALED(status) && !quiet)
        fprintf(stderr, "vramtrace: program killed by signal %d; the trace holds everything up to that point\n", WTERMSIG(status));
    char **traces = NULL;
    size_t ntraces = 0;
    report_traces(manifest, manifest_ok, tmpl, quiet, rc, &traces, &ntraces);
    /* The gates, over the traces the program left: the program's own failure comes first (its
     * status), a tripped gate of a program that succeeded is the gate status, a trace that could
     * not be analysed 1 (the gates could not be checked). */
    if (vt_gates_any(&gates) && ntraces) {
        int g = vt_report_gate_traces("run", traces, ntraces, &gates);
        if (rc == 0 && g == 1) rc = gate_status;
        else if (rc == 0 && g == 2) rc = 1;
    }
    for (size_t k = 0; k < ntraces; k++) free(traces[k]);
    free(traces);
    if (manifest_ok) {
        unlink(manifest);
        rmdir(list_dir);
    }
    preload_names_remove(link_dir, names, npreloads);
    return rc;
}
