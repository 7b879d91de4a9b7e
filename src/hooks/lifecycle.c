/* lifecycle.c - the tracer's lifecycle, at the top of the library: init (once, from the first hook
 * or the constructor), the trace file's lazy creation with its header and ring (registered as
 * the sink's opener), fork children (every layer's state reset), and the exit footer and
 * summary. Calls every layer below; none calls it (the sink calls open_trace through a pointer). */
#include "lifecycle.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <vramtrace/trace.h>
#include "addrspace.h"
#include "api_names.h"
#include "backtrace.h"
#include "pystack.h"
#include "check.h"
#include "events.h"
#include "fold.h"
#include "graphs.h"
#include "journal.h"
#include "jsonl.h"
#include "registry.h"
#include "sink.h"
#include "trace_writer.h"
#include "tracer.h"

static void child_after_fork(void);
static int open_trace(void);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static int forked_child; /* set in the fork child: no drain thread (see vt_trace_open) */
static uint64_t start_ns; /* process start as the tracer saw it: header `t`, before any event */
static struct timespec start_wall; /* the same instant on the wall clock */

/* vt_live (tracer.h) points here until init is done: hooks take the slow path. */
static _Atomic int not_yet;
/* Where the page cannot be wiped on fork (kernels before 4.14): always 1, and fork children that
 * the atfork handler does not see are found by their pid, at exit only. */
static _Atomic int no_wipe_word;
_Atomic(_Atomic int *) vt_live = &not_yet;
static pid_t owner_pid; /* the process this state belongs to */

static void init_once_fn(void)
{
    vt_clock_init();
    start_ns = vt_now();
    clock_gettime(CLOCK_REALTIME, &start_wall);
    vt_config_read();
    vt_va_init();
    if (vt_cfg.freed_history) vt_registry_set_freed_history((unsigned)vt_cfg.freed_history);
    owner_pid = getpid();
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "%ld", (long)owner_pid);
    vt_manifest_note("+", pid_text);
    pthread_atfork(NULL, NULL, child_after_fork);
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
    long page = sysconf(_SC_PAGESIZE);
    _Atomic int *w = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (w != MAP_FAILED && madvise(w, (size_t)page, MADV_WIPEONFORK) != 0) {
        munmap(w, (size_t)page);
        w = MAP_FAILED;
    }
    if (w == MAP_FAILED) w = &no_wipe_word;
    atomic_store(w, 1);
    vt_trace_set_opener(open_trace); /* before any hook can emit an event */
    atomic_store_explicit(&vt_live, w, memory_order_release); /* last: vt_init's fast path */
}

/* A fork child whose first sight of the tracer is a hook or its exit (no atfork handler ran:
 * _Fork, syscall(SYS_fork)): one thread resets the parent's state, others wait for it. */
static void reset_unseen_child(_Atomic int *w)
{
    int zero = 0;
    if (atomic_compare_exchange_strong(w, &zero, 2)) {
        child_after_fork();
        return;
    }
    while (atomic_load_explicit(w, memory_order_acquire) == 2) sched_yield();
}

void vt_init_slow(void)
{
    pthread_once(&init_once, init_once_fn);
    _Atomic int *w = atomic_load_explicit(&vt_live, memory_order_acquire);
    if (w != &not_yet && atomic_load_explicit(w, memory_order_acquire) != 1) reset_unseen_child(w);
}

/* Where fork children cannot be seen on the hot path (no wipe-on-fork page): by the pid. */
static void reset_if_pid_changed(void)
{
    if (atomic_load(&vt_live) == &no_wipe_word && owner_pid && getpid() != owner_pid) child_after_fork();
}

__attribute__((constructor)) static void vt_constructor(void) { vt_init(); }


static const char *const rank_vars[] = {
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
    "PMI_RANK", "SLURM_PROCID", "SLURM_LOCALID", NULL,
};

static const char *rank_value(void)
{
    static const char *const order[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", NULL };
    for (int i = 0; order[i]; i++) {
        const char *v = getenv(order[i]);
        if (v && *v) return v;
    }
    return "0";
}

/* Expand %p %e %h %r; a process other than the one `vramtrace run` started gets .<pid> before
 * the extension when the template has no %p, so fork/exec children never share a file. */
/* A value a % letter inserts (program name, host, rank) names one path component, never more:
 * "RANK=../.." must not climb out of the template's directory, and a newline in a program's
 * file name must not split run's list of traces. Anything but [A-Za-z0-9._+-] becomes '_', and
 * a value of dots only ("." or "..") becomes underscores. */
static void put_component(char *dst, size_t cap, const char *v)
{
    size_t i = 0;
    int only_dots = 1;
    for (; v[i] && i + 1 < cap; i++) {
        char c = v[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                 c == '+' || c == '-';
        dst[i] = ok ? c : '_';
        if (c != '.') only_dots = 0;
    }
    dst[i] = '\0';
    if (only_dots) memset(dst, '_', i);
}

/* The trace's path from the template; -1 when it does not fit in CAP (said, never cut short:
 * a cut name is another file). */
static int expand_path(char *out, size_t cap)
{
    char exe[PATH_MAX] = "prog", host[256] = "host";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = '\0';
    const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    gethostname(host, sizeof host - 1);
    const char *t = vt_cfg.output;
    size_t o = 0;
    int has_pid = 0;
    for (; *t; t++) {
        char tmp[PATH_MAX];
        const char *ins = NULL;
        if (t[0] == '%' && t[1]) {
            t++;
            if (*t == 'p') { snprintf(tmp, sizeof tmp, "%ld", (long)getpid()); ins = tmp; has_pid = 1; }
            else if (*t == 'e') { put_component(tmp, sizeof tmp, base); ins = tmp; }
            else if (*t == 'h') { put_component(tmp, sizeof tmp, host); ins = tmp; }
            else if (*t == 'r') { put_component(tmp, sizeof tmp, rank_value()); ins = tmp; }
            else if (*t == '%') ins = "%";
            else { tmp[0] = '%'; tmp[1] = *t; tmp[2] = '\0'; ins = tmp; }
            size_t l = strlen(ins);
            if (o + l >= cap) return -1;
            memcpy(out + o, ins, l);
            o += l;
        } else {
            if (o + 1 >= cap) return -1;
            out[o++] = *t;
        }
    }
    out[o] = '\0';
    if (!has_pid && vt_cfg.root_pid && vt_cfg.root_pid != (long)getpid()) {
        char *dot = strrchr(out, '.');
        char *slash = strrchr(out, '/');
        char suffix[64];
        snprintf(suffix, sizeof suffix, ".%ld", (long)getpid());
        if (dot && (!slash || dot > slash)) {
            char ext[256];
            snprintf(ext, sizeof ext, "%s", dot);
            snprintf(dot, cap - (size_t)(dot - out), "%s%s", suffix, ext);
        } else {
            size_t l = strlen(out);
            snprintf(out + l, cap - l, "%s", suffix);
        }
        if (strlen(out) + 1 >= cap - 1) return -1;
    }
    return 0;
}

/* A random token the trace header and its ring share: recovery folds a ring into a trace only
 * when they match, so a ring planted beside someone's trace is never taken for theirs. */
static char ring_token[VT_RING_TOKEN_LEN + 1];

static void make_ring_token(void)
{
    unsigned char r[VT_RING_TOKEN_LEN / 2];
    ssize_t got = getrandom(r, sizeof r, GRND_NONBLOCK);
    if (got != (ssize_t)sizeof r) { /* no entropy yet (early boot): still unguessable to another user */
        uint64_t x = vt_now() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&got;
        for (size_t i = 0; i < sizeof r; i++) { x = x * 6364136223846793005ull + 1442695040888963407ull; r[i] = (unsigned char)(x >> 56); }
    }
    for (size_t i = 0; i < sizeof r; i++) snprintf(ring_token + 2 * i, 3, "%02x", r[i]);
}

static void write_header(void)
{
    char buf[16384];
    vt_line l;
    vt_line_init(&l, buf, sizeof buf - 2);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_HEADER "\",\"format\":\"" VT_TRACE_FORMAT "\",\"version\":" VT_TRACE_XSTR(VT_TRACE_VERSION)
               ",\"tracer\":\"" VT_TRACER_VERSION "\"");
    /* first, before any string a program controls: recovery looks for the first "token" */
    vt_put_key(&l, "token"); vt_put_str(&l, ring_token);
    vt_put_key(&l, "pid"); vt_put_i64(&l, getpid());
    vt_put_key(&l, "ppid"); vt_put_i64(&l, getppid());
    char place[VT_PLACE_LEN];
    if (vt_journal_place(place, sizeof place) == 0) { vt_put_key(&l, "pidns"); vt_put_str(&l, place); }
    char exe[PATH_MAX] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    vt_put_key(&l, "program"); vt_put_str(&l, exe);
    /* argv, bounded: a command line can be megabytes (400 file arguments passed 16 KiB and the
     * whole header line was dropped). Each argument keeps its first VT_ARG_KEEP bytes, the list
     * what fits in `args`; the rest is counted in "argv_omitted". */
    char args[8192];
    vt_line a;
    vt_line_init(&a, args, sizeof args);
    uint64_t omitted = 0;
    FILE *f = fopen("/proc/self/cmdline", "re");
    if (f) {
        enum { VT_ARG_KEEP = 2048 };
        char arg[VT_ARG_KEEP + 4];
        size_t len = 0;
        int c, first = 1, cut = 0;
        while ((c = fgetc(f)) != EOF) {
            if (c != 0) {
                if (len < VT_ARG_KEEP) arg[len++] = (char)c;
                else cut = 1;
                continue;
            }
            if (cut) { memcpy(arg + len, "...", 3); len += 3; }
            arg[len] = '\0';
            char *mark = a.p;
            if (!omitted) {
                if (!first) VT_PUT_LIT(&a, ",");
                vt_put_str(&a, arg);
            }
            if (omitted || a.overflow) { /* roll back: the list stays whole */
                a.p = mark;
                a.end = args + sizeof args;
                a.overflow = 0;
                omitted++;
            }
            first = 0;
            len = 0;
            cut = 0;
        }
        fclose(f);
    }
    vt_put_key(&l, "argv"); VT_PUT_LIT(&l, "[");
    vt_put_raw(&l, args, vt_line_len(&a));
    VT_PUT_LIT(&l, "]");
    if (omitted) { vt_put_key(&l, "argv_omitted"); vt_put_u64(&l, omitted); }
    vt_put_key(&l, "t"); vt_put_u64(&l, start_ns);
    vt_put_key(&l, "wall_time"); vt_put_u64(&l, (uint64_t)start_wall.tv_sec);
    vt_put_key(&l, "wall_time_ns"); vt_put_u64(&l, (uint64_t)start_wall.tv_sec * 1000000000ull + (uint64_t)start_wall.tv_nsec);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    vt_put_key(&l, "hostname"); vt_put_str(&l, host);
    vt_put_key(&l, "rank"); VT_PUT_LIT(&l, "{");
    int first = 1;
    for (int i = 0; rank_vars[i]; i++) {
        const char *v = getenv(rank_vars[i]);
        if (!v) continue;
        if (!first) VT_PUT_LIT(&l, ",");
        vt_put_str(&l, rank_vars[i]);
        VT_PUT_LIT(&l, ":");
        vt_put_str(&l, v);
        first = 0;
    }
    VT_PUT_LIT(&l, "}");
    vt_put_key(&l, "page_size"); vt_put_i64(&l, sysconf(_SC_PAGESIZE));
    vt_put_key(&l, "backtraces"); if (vt_cfg.backtraces) VT_PUT_LIT(&l, "true"); else VT_PUT_LIT(&l, "false");
    static const char *const modes[] = { "off", "record", "abort" };
    vt_put_key(&l, "checks"); vt_put_str(&l, modes[vt_cfg.check]);
    /* PyTorch's allocator settings: whether the tracer sees its tensors or its segments */
    static const char *const torch_vars[][2] = { { "PYTORCH_ALLOC_CONF", "torch_alloc_conf" },
                                                 { "PYTORCH_CUDA_ALLOC_CONF", "torch_cuda_alloc_conf" } };
    for (size_t i = 0; i < sizeof torch_vars / sizeof torch_vars[0]; i++) {
        const char *v = getenv(torch_vars[i][0]);
        if (v && strlen(v) < 1024) { vt_put_key(&l, torch_vars[i][1]); vt_put_str(&l, v); }
    }
    const char *tt = getenv("VRAMTRACE_TORCH_TENSORS");
    if (tt && !strcmp(tt, "1")) { vt_put_key(&l, "torch_tensors"); VT_PUT_LIT(&l, "true"); }
    VT_PUT_LIT(&l, "}\n");
    if (!l.overflow) vt_writer_put(buf, vt_line_len(&l));
}


static char ring_no_room[600]; /* the ring did not fit on the disk (said at exit if nothing else is) */
static _Atomic int writer_stopped;

/* The trace writer stopped for good (full disk, file size limit, file replaced): the one line. */
static void say_writer_stopped(const char *error)
{
    atomic_store(&writer_stopped, 1);
    if (!vt_cfg.quiet) fprintf(stderr, "vramtrace: %s; further events are dropped (the program continues)\n", error);
}

/* The opener (sink.h): the first event opens the trace file, writes its header, opens the ring. */
static int open_trace(void)
{
    int s = atomic_load_explicit(&vt_trace_state, memory_order_acquire);
    if (s) return s > 0;
    vt_init();
    vt_mutex_lock(&open_lock);
    if (!atomic_load(&vt_trace_state)) {
        char path[4096], err[512];
        int long_path = expand_path(path, sizeof path) != 0;
        vt_ts.guard++;
        vt_writer_on_failure(say_writer_stopped);
        int rc = -ENAMETOOLONG;
        if (long_path) snprintf(err, sizeof err, "the trace path from VRAMTRACE_OUTPUT is over %zu bytes once expanded", sizeof path - 1);
        else rc = vt_writer_open(path, vt_trace_file, sizeof vt_trace_file, err, sizeof err);
        if (rc == 0) {
            make_ring_token();
            vt_manifest_note("", vt_trace_file); /* first: `run` can name even a trace left empty */
            /* Tests only: die between the trace's creation and its header (an empty trace). */
            const char *kill_at_start = getenv("VRAMTRACE_TEST_KILL_AT_START");
            if (kill_at_start && !strcmp(kill_at_start, "trace")) raise(SIGKILL);
            write_header();
            char jerr[512];
            const char *sm = getenv("VRAMTRACE_SYNC");
            int mode = 0;
            if (sm && !strcmp(sm, "defer")) mode = 2;
            else if (sm && *sm && vt_config_flag(sm, &mode) != 0) vt_config_bad_knob("VRAMTRACE_SYNC", sm, "0, 1, defer");
            /* A fork child of a threaded parent may only make async-signal-safe calls until it
             * execs (POSIX): it formats in its own threads rather than start a drain thread. */
            if (forked_child && mode == 0) mode = 1;
            vt_journal_set_tick(vt_fold_tick); /* quiet threads' folded launches, every interval */
            int jrc = vt_journal_open(vt_trace_file, mode, ring_token, jerr, sizeof jerr);
            /* No room for the ring: the trace file is likely to fill next, and that is the one
             * line a full disk gets; said at exit only if it never comes. */
            if (jrc == -ENOSPC || jrc == -EDQUOT) snprintf(ring_no_room, sizeof ring_no_room, "%s", jerr);
            else if (jrc != 0 && !vt_cfg.quiet)
                fprintf(stderr, "vramtrace: %s; formatting events in the program's threads instead\n", jerr);
            if (vt_cfg.backtraces) {
                uint64_t warm[4];
                vt_backtrace(warm, 4); /* loads the unwinder now, not inside the first hook's timing */
            }
            vt_modules_emit_new(vt_emit_module);
        } else {
            if (!vt_cfg.quiet) fprintf(stderr, "vramtrace: %s; tracing disabled for this process\n", err);
            vt_manifest_note("!", err);
        }
        vt_ts.guard--;
        atomic_store_explicit(&vt_trace_state, rc == 0 ? 1 : -1, memory_order_release);
    }
    vt_mutex_unlock(&open_lock);
    return atomic_load(&vt_trace_state) > 0;
}



static void child_after_fork(void)
{
    /* Only this thread survives: reset every lock and forget the parent's trace. The child gets
     * its own file on its first CUDA call. Run by the atfork handler, or, for a child made
     * without one, by its first hook or its exit (vt_init_slow). */
    vt_api_names_after_fork(); /* before the journal moves the names out of the parent's ring */
    vt_journal_forget();
    vt_writer_forget();
    forked_child = 1;
    vt_registry_reset();
    vt_modules_reset();
    vt_pystack_reset();
    vt_fold_fork_child();
    vt_check_reset();
    vt_emit_reset_after_fork();
    vt_findings_reset_after_fork();
    vt_graphs_reset();
    pthread_mutex_init(&open_lock, NULL);
    atomic_store(&vt_trace_state, 0);
    vt_trace_file[0] = '\0';
    vt_fork_gen++;
    vt_ts.tid = 0;
    vt_ts.held = 0; /* the locks were all made anew */
    owner_pid = getpid();
    /* Re-armed last: other threads the child has started wait in reset_unseen_child until now. */
    atomic_store_explicit(atomic_load(&vt_live), 1, memory_order_release);
}

/* Allocations live at exit, by the kinds every output names alike (trace.h VT_LEAK_KINDS). */
enum {
#define VT_X(id, word) LEAK_##id,
    VT_LEAK_KINDS(VT_X)
#undef VT_X
    LEAK_KINDS
};
struct leak_sum { uint64_t bytes[LEAK_KINDS], count[LEAK_KINDS]; };
static void add_leak(const vt_alloc_info *a, void *ctx)
{
    struct leak_sum *s = ctx;
    int k = -1;
#define VT_X(id, word) if (a->mem == VT_MEM_##id) k = LEAK_##id;
    VT_LEAK_KINDS(VT_X)
#undef VT_X
    if (k < 0) return;
    s->bytes[k] += a->size;
    s->count[k]++;
}

static void print_size(char *buf, size_t len, uint64_t b)
{
    if (b >= (1ull << 30)) snprintf(buf, len, "%.2f GiB", (double)b / (1 << 30));
    else if (b >= (1ull << 20)) snprintf(buf, len, "%.2f MiB", (double)b / (1 << 20));
    else if (b >= 1024) snprintf(buf, len, "%.2f KiB", (double)b / 1024);
    else snprintf(buf, len, "%llu B", (unsigned long long)b);
}

void vt_tracer_shutdown(void)
{
    /* A fork child the atfork handler did not see exits with the parent's state: drop it (its
     * drain thread is not in this process; joining it would hang) and close only its own trace. */
    if (atomic_load(&vt_live) != &not_yet) vt_init();
    reset_if_pid_changed();
    if (atomic_load(&vt_trace_state) <= 0) return;
    vt_ts.guard++; /* from here on, this thread's CUDA calls (later destructors) only forward */
    if (vt_ts.held > 0) {
        /* exit() from a signal handler that interrupted this thread inside the tracer, holding
         * one of its locks: waiting for that lock would wait forever. Leave the trace as a crash
         * leaves it (its ring is recovered by `vramtrace run` or `report`). */
        static const char msg[] = "vramtrace: exit() called from a signal handler inside a CUDA call: the trace is "
                                  "left as a crash leaves it (run and report recover its ring)\n";
        if (!vt_cfg.quiet && write(2, msg, sizeof msg - 1) < 0) {}
        return;
    }
    vt_fold_flush_all(1); /* every thread's folded launches, before the footer */
    vt_findings_flush();
    vt_journal_close(); /* every queued record reaches the file before the footer counts them */
    struct leak_sum leaks = { { 0 }, { 0 } };
    vt_registry_foreach(add_leak, &leaks);
    uint64_t nfind = 0;
    for (int k = 0; k < VT_F_COUNT; k++) nfind += vt_findings_count(k);
    char buf[512];
    vt_line l;
    vt_line_init(&l, buf, sizeof buf);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_FOOTER "\"");
    vt_put_key(&l, "t"); vt_put_u64(&l, vt_now());
    vt_put_key(&l, "events"); vt_put_u64(&l, vt_writer_lines() + 1);
    vt_put_key(&l, "live_bytes"); vt_put_u64(&l, vt_registry_live_vram(-1));
    vt_put_key(&l, "findings"); vt_put_u64(&l, nfind);
    char werr[256];
    if (vt_writer_error(werr, sizeof werr)) { vt_put_key(&l, "error"); vt_put_str(&l, werr); }
    /* the writer ends it: "dropped" counts lines refused even after the footer is written */
    vt_writer_close(l.overflow ? NULL : buf, vt_line_len(&l));
    if (ring_no_room[0] && !atomic_load(&writer_stopped) && !vt_cfg.quiet)
        fprintf(stderr, "vramtrace: %s; events were formatted in the program's threads instead\n", ring_no_room);
    uint64_t nleaks = leaks.count[LEAK_DEVICE] + leaks.count[LEAK_MANAGED] + leaks.count[LEAK_PINNED];
    if (!vt_cfg.quiet && (nfind || nleaks)) {
        static const char *const names[VT_F_COUNT] = { "host pointer", "use after free", "out-of-bounds pointer",
                                                       "out-of-bounds copy", "direction mismatch", "double free", "invalid free",
                                                       "other-device pointer", "mismatched free" };
        fprintf(stderr, "vramtrace: %s:", vt_trace_file);
        if (nfind) {
            /* by severity first, as the report says it, then by kind */
            uint64_t nerr = vt_findings_errors(), nwarn = nfind - nerr;
            fprintf(stderr, " findings: %llu error%s, %llu warning%s (", (unsigned long long)nerr, nerr == 1 ? "" : "s",
                    (unsigned long long)nwarn, nwarn == 1 ? "" : "s");
            int first = 1;
            for (int k = 0; k < VT_F_COUNT; k++) {
                uint64_t c = vt_findings_count(k);
                if (c) { fprintf(stderr, "%s%llu %s", first ? "" : ", ", (unsigned long long)c, names[k]); first = 0; }
            }
            fputc(')', stderr);
        }
        static const char *const kinds[LEAK_KINDS] = {
#define VT_X(id, word) word,
            VT_LEAK_KINDS(VT_X)
#undef VT_X
        };
        int first = 1;
        for (int k = 0; k < LEAK_KINDS; k++) {
            if (!leaks.count[k]) continue;
            char sz[64];
            print_size(sz, sizeof sz, leaks.bytes[k]);
            fprintf(stderr, "%s %llu %s allocation%s (%s)", first ? (nfind ? ";" : "") : ",", (unsigned long long)leaks.count[k],
                    kinds[k], leaks.count[k] == 1 ? "" : "s", sz);
            first = 0;
        }
        if (nleaks) fprintf(stderr, " not freed at exit");
        fprintf(stderr, "\n");
    }
    vt_ts.guard--;
}

/* The preloaded library's destructor runs before those of the libraries loaded after it or
 * initialized before it (the CUDA runtime, a framework's own, ctypes-loaded ones), and those may
 * still allocate and free (a C++ static's destructor, a handle pool): their calls would come
 * after the footer, dropped, and the trace marked incomplete. An exit handler registered while
 * exit() runs the destructors runs after all of them (glibc runs handlers registered during
 * exit once the current one returns), so the footer is written there; where none can be
 * registered, now. Registered with no DSO handle: atexit() in a shared library passes the
 * library's, and its own __cxa_finalize, right after this destructor, would run it at once. */
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);
static void vt_after_destructors(void *unused) { (void)unused; vt_tracer_shutdown(); }
__attribute__((destructor)) static void vt_destructor(void)
{
    if (atomic_load(&vt_trace_state) > 0 && __cxa_atexit(vt_after_destructors, NULL, NULL) == 0) return;
    vt_tracer_shutdown();
}
