/* journal.c - the record ring (MAP_SHARED, mapped twice back to back so a record never wraps),
 * its drain thread, and crash recovery. See journal.h. */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <vramtrace/trace.h>
#include "records.h"
#include "safepath.h"
#include "trace_writer.h"
#include "tracer.h"

#define SLOT 64
#define RING_SLOTS_DEFAULT (1u << 16) /* 4 MiB; a power of two (slot_at masks) */
#define HDR_BYTES 65536               /* multiple of every page size Linux uses */
#define RING_MAGIC "VTRING3" /* 2: API names as ids into the header's table; 3: the trace's token */

enum { S_EMPTY = 0, S_CLAIMED = 1, S_READY = 2 };

struct slot_hdr {
    _Atomic uint32_t state;
    uint16_t type;
    uint16_t nslots;
    uint32_t bytes; /* payload bytes */
    uint32_t pos;   /* low bits of the claim position (commit's wake test) */
};

struct ring_file_hdr {
    char magic[8];
    uint32_t slot_size, nslots;
    int64_t pid;
    uint64_t start_time; /* /proc/self/stat starttime: tells a live writer from a reused pid */
    char token[VT_RING_TOKEN_LEN + 1]; /* the trace header's "token" */
    char trace_path[4096];
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t tail;
    /* The record the drainer is copying into the trace (its position + 1; 0 none) and where its
     * line starts there. A writer killed mid-copy leaves part of a line that recovery, which
     * formats the record again from `tail`, must cut first (else the line is broken or doubled). */
    _Atomic uint64_t line_rec, line_off;
    /* Where the records whose lines are complete in the trace end (a ring position): set after
     * the copy, before the record's slots are emptied and `tail` passes them. A drainer killed
     * between the two leaves line_done > tail, and recovery starts there (the lines are in the
     * trace; re-formatting or cutting them would double or lose one). */
    _Atomic uint64_t line_done;
    /* The API names the records' ids refer to (api_names.h): written before any record using them. */
    _Alignas(64) struct vt_api_names names;
    /* vt_journal_place() of the writer; "" in rings of tracers before it was kept */
    char place[VT_PLACE_LEN];
};
_Static_assert(sizeof(struct ring_file_hdr) <= HDR_BYTES, "ring header outgrew its pages");

static struct {
    _Atomic int on;
    _Atomic int sync;            /* each commit drains inline: 1 when it may leave that to a thread
                                  * already draining, 2 from vt_journal_close on (late commits) */
    char *data;                  /* 2 * ring bytes, second half aliases the first */
    struct ring_file_hdr *hdr;
    uint32_t nslots;
    char ring_path[4200];
    /* The ring is made and removed in the trace's directory, reached without following another
     * user's link: by name again at close only while it is still this directory and this ring. */
    dev_t dir_dev, ring_dev;
    ino_t dir_ino, ring_ino;
    pthread_t thread;
    int have_thread;
    _Atomic int stop;
    _Alignas(64) _Atomic int sleeping; /* written by the drainer only: own cache line */
    _Alignas(64) _Atomic int wake;
    pthread_mutex_t drain_lock;
    /* VRAMTRACE_TEST_KILL_AT=STEP:K (tests only): die at step STEP of the K-th record drained,
     * to prove that a drainer killed after any store of its loop loses and doubles nothing. */
    long kill_rec;
    int kill_step;
    char line[1 << 16];          /* the drainer's formatting buffer (drain_lock held) */
} J = { .drain_lock = PTHREAD_MUTEX_INITIALIZER };

/* Each thread's last view of the tail: re-read only when the ring looks full by it, so claims
 * do not pull the drainer's cache line across cores on every event. */
static __thread __attribute__((tls_model("initial-exec"))) uint64_t seen_tail;

/* nslots is a power of two: a mask, not a division (a 64-bit div costs tens of cycles per claim) */
static inline struct slot_hdr *slot_at(uint64_t pos) { return (struct slot_hdr *)(J.data + (pos & (J.nslots - 1)) * SLOT); }

/* /proc/PID/stat's start time (field 22), and its state (field 3) in *state when asked. */
static uint64_t proc_stat(pid_t pid, char *state)
{
    char path[64], buf[1024];
    if (state) *state = '?';
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* comm may hold spaces */
    if (!p) return 0;
    if (state && p[1] == ' ' && p[2]) *state = p[2];
    for (int field = 2; *p && field < 22; p++)
        if (*p == ' ') field++;
    return strtoull(p, NULL, 10);
}
static uint64_t proc_start_time(pid_t pid) { return proc_stat(pid, NULL); }

int vt_journal_place(char *out, size_t len)
{
    char boot[64] = "", ns[64];
    out[0] = '\0';
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, boot, sizeof boot - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return -1;
    boot[strcspn(boot, "\n")] = '\0';
    ssize_t m = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    if (m <= 0) return -1;
    ns[m] = '\0';
    if (snprintf(out, len, "%s/%s", boot, ns) >= (int)len) { out[0] = '\0'; return -1; }
    return 0;
}

/* Can a pid the writer recorded be looked up here? Only on the same boot of the same machine and
 * in the same PID namespace: elsewhere (a container, another host sharing the filesystem) the
 * number names another process or none, and a live writer would be taken for dead. A writer that
 * recorded no place (an older tracer) is taken to be local, as before. */
static int writer_place_is_here(const char *place)
{
    if (!place[0]) return 1;
    char here[VT_PLACE_LEN];
    return vt_journal_place(here, sizeof here) == 0 && strcmp(here, place) == 0;
}

/* The ring's writer still runs: its pid alive with the start time it recorded, and not a zombie
 * (killed but not yet waited for by its parent: it writes nothing more). */
static int writer_alive(pid_t pid, uint64_t start_time)
{
    char state;
    return pid > 0 && kill(pid, 0) == 0 && proc_stat(pid, &state) == start_time && state != 'Z' && state != 'X';
}

/* Format and write records from the tail while they are complete. Caller holds drain_lock. */
static long drain_locked(int take_incomplete)
{
    struct ring_file_hdr *h = J.hdr;
    uint64_t t = atomic_load_explicit(&h->tail, memory_order_relaxed);
    /* seq_cst, like the claims' add and the commits' load of `sync`: a claim this load does not
     * see commits after vt_journal_close set `sync`, and sees it (plain loads on x86) */
    uint64_t head = atomic_load(&h->head);
    long done = 0;
    while (t < head) {
        struct slot_hdr *s = slot_at(t);
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st != S_READY && !(take_incomplete && st == S_CLAIMED)) break;
        uint32_t n = s->nslots;
        if (n == 0 || n > J.nslots / 4) n = 1; /* damaged: step over one slot */
        size_t len = vt_record_format(s->type, s + 1, s->bytes, st != S_READY, &h->names, J.line, sizeof J.line);
        char *dst = len ? vt_writer_reserve(len) : NULL;
        int kill = __builtin_expect(J.kill_rec > 0, 0) && --J.kill_rec == 0 ? J.kill_step : 0;
        if (dst) {
            atomic_store_explicit(&h->line_off, vt_writer_offset(dst), memory_order_relaxed);
            atomic_store_explicit(&h->line_rec, t + 1, memory_order_release);
            atomic_thread_fence(memory_order_release); /* both before any byte of the line */
            if (kill == 1) raise(SIGKILL);
            if (kill == 2) { memcpy(dst, J.line, len / 2); raise(SIGKILL); }
            memcpy(dst, J.line, len);
            if (kill == 3) raise(SIGKILL);
        }
        atomic_thread_fence(memory_order_release); /* the line before line_done */
        atomic_store_explicit(&h->line_done, t + n, memory_order_release);
        if (kill == 4) raise(SIGKILL);
        for (uint32_t i = 0; i < n; i++) {
            atomic_store_explicit(&slot_at(t + i)->state, S_EMPTY, memory_order_relaxed);
            if (kill == 5) raise(SIGKILL);
        }
        if (kill == 6) raise(SIGKILL);
        t += n;
        atomic_store_explicit(&h->tail, t, memory_order_release);
        if (kill == 7) raise(SIGKILL);
        done++;
    }
    return done;
}

static long drain_try(void)
{
    if (vt_mutex_trylock(&J.drain_lock) != 0) return -1;
    long n = drain_locked(0);
    vt_mutex_unlock(&J.drain_lock);
    return n;
}

static void futex_wait_ms(_Atomic int *word, int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}
static void futex_wake(_Atomic int *word) { syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

static void (*_Atomic tick_fn)(void);
void vt_journal_set_tick(void (*fn)(void)) { atomic_store(&tick_fn, fn); }

static void *drainer(void *arg)
{
    (void)arg;
    int idle = 0;
    while (!atomic_load(&J.stop)) {
        void (*tick)(void) = atomic_load_explicit(&tick_fn, memory_order_acquire);
        if (tick) tick();
        long n = drain_try();
        if (n > 0) { idle = 0; continue; }
        /* Poll quickly while events flow, slowly when the program is quiet. */
        idle = idle < 20 ? idle + 1 : idle;
        atomic_store(&J.sleeping, 1);
        futex_wait_ms(&J.wake, idle < 10 ? 1 : 10);
        atomic_store(&J.sleeping, 0);
    }
    return NULL;
}

/* The ring's name removed, in the directory it was made in and only while it names this ring:
 * the path may have been turned into a link to elsewhere since. */
static void remove_ring(void)
{
    const char *base;
    int dfd = vt_safepath_dir_open(J.ring_path, 0, &base, NULL, 0);
    if (dfd < 0) return;
    struct stat st;
    if (fstat(dfd, &st) == 0 && st.st_dev == J.dir_dev && st.st_ino == J.dir_ino &&
        fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == J.ring_dev && st.st_ino == J.ring_ino)
        unlinkat(dfd, base, 0);
    close(dfd);
}

int vt_journal_open(const char *trace_path, int mode, const char *token, char *err, size_t errlen)
{
    uint32_t nslots = RING_SLOTS_DEFAULT;
    size_t ring_bytes = (size_t)nslots * SLOT;
    snprintf(J.ring_path, sizeof J.ring_path, "%s.ring", trace_path);
    /* Growing a file past RLIMIT_FSIZE raises SIGXFSZ, which would kill the program. */
    struct rlimit fl;
    if (getrlimit(RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY && fl.rlim_cur < HDR_BYTES + ring_bytes) {
        snprintf(err, errlen, "file size limit (ulimit -f) too small for %s", J.ring_path);
        return -EFBIG;
    }
    const char *trace_base, *ring_base = strrchr(J.ring_path, '/') ? strrchr(J.ring_path, '/') + 1 : J.ring_path;
    int dfd = vt_writer_dir_open(&trace_base);
    int fd = dfd < 0 ? (errno = -dfd, -1) : openat(dfd, ring_base, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat dst, rst;
    if (fd >= 0 && (fstat(dfd, &dst) != 0 || fstat(fd, &rst) != 0)) { close(fd); unlinkat(dfd, ring_base, 0); fd = -1; }
    if (fd < 0) {
        int e = errno;
        if (dfd >= 0) close(dfd);
        snprintf(err, errlen, "cannot create %s: %s", J.ring_path, strerror(e));
        return -e;
    }
    J.dir_dev = dst.st_dev, J.dir_ino = dst.st_ino, J.ring_dev = rst.st_dev, J.ring_ino = rst.st_ino;
    char *area = MAP_FAILED;
    struct ring_file_hdr *hdr = MAP_FAILED;
    int e = 0;
    /* Allocated for real, never sparse: a store into a hole of a full disk raises SIGBUS. */
    e = -vt_file_allocate(fd, 0, HDR_BYTES + ring_bytes);
    if (!e) {
        hdr = mmap(NULL, HDR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        area = mmap(NULL, 2 * ring_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (hdr == MAP_FAILED || area == MAP_FAILED ||
            mmap(area, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, HDR_BYTES) == MAP_FAILED ||
            mmap(area + ring_bytes, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, HDR_BYTES) == MAP_FAILED)
            e = errno ? errno : ENOMEM;
    }
    if (e) {
        snprintf(err, errlen, "cannot map %s: %s", J.ring_path, strerror(e));
        if (hdr != MAP_FAILED) munmap(hdr, HDR_BYTES);
        if (area != MAP_FAILED) munmap(area, 2 * ring_bytes);
        close(fd);
        unlinkat(dfd, ring_base, 0);
        close(dfd);
        return -e;
    }
    close(dfd);
    /* Tests only: die where a kill during start-up leaves a ring whose header was never written. */
    const char *kill_at_start = getenv("VRAMTRACE_TEST_KILL_AT_START");
    if (kill_at_start && *kill_at_start == '1') raise(SIGKILL);
    /* The header first: a process killed from here on leaves a ring recovery recognises. */
    memcpy(hdr->magic, RING_MAGIC, sizeof RING_MAGIC);
    hdr->slot_size = SLOT;
    hdr->nslots = nslots;
    if (kill_at_start && !strcmp(kill_at_start, "half")) raise(SIGKILL); /* tests: a header written in part */
    hdr->pid = getpid();
    hdr->start_time = proc_start_time(getpid());
    vt_journal_place(hdr->place, sizeof hdr->place);
    snprintf(hdr->token, sizeof hdr->token, "%s", token ? token : "");
    snprintf(hdr->trace_path, sizeof hdr->trace_path, "%s", trace_path);
    atomic_store(&hdr->head, 0);
    atomic_store(&hdr->tail, 0);
    atomic_store(&hdr->line_rec, 0);
    atomic_store(&hdr->line_done, 0);
    vt_api_names_use(&hdr->names);
    /* Fault the ring in now: first-touch faults would otherwise land on the program's threads,
     * one per 4 KiB of events, for the whole first lap. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    if (madvise(area, ring_bytes, MADV_POPULATE_WRITE) != 0)
        for (size_t off = 0; off < ring_bytes; off += 4096) ((volatile char *)area)[off] = 0;
    /* The mappings keep the file: no descriptor is held that a program closing its fds could
     * hand to its next open(). */
    close(fd);
    J.hdr = hdr;
    J.data = area;
    J.nslots = nslots;
    J.sync = mode == 1;
    const char *kill_env = getenv("VRAMTRACE_TEST_KILL_AT");
    J.kill_rec = 0;
    if (kill_env && sscanf(kill_env, "%d:%ld", &J.kill_step, &J.kill_rec) != 2) J.kill_rec = 0;
    atomic_store(&J.stop, 0);
    J.have_thread = 0;
    if (mode == 0) {
        /* The drainer must never take the program's signals. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        J.have_thread = pthread_create(&J.thread, NULL, drainer, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (J.have_thread) pthread_setname_np(J.thread, "vramtrace");
        else J.sync = 1;
    }
    atomic_store(&J.on, 1);
    return 0;
}

int vt_journal_owns(uint64_t addr)
{
    uint64_t d = (uint64_t)(uintptr_t)J.data, h = (uint64_t)(uintptr_t)J.hdr;
    return (J.data && addr >= d && addr < d + 2 * (uint64_t)J.nslots * SLOT) || (J.hdr && addr >= h && addr < h + HDR_BYTES);
}

/* Full: help drain (the ring moves at formatting speed, never loses order). Out of line: the
 * common claim then keeps fewer registers live. */
static __attribute__((noinline)) void wait_for_room(struct ring_file_hdr *h, uint64_t pos, uint32_t n)
{
    while (pos + n - (seen_tail = atomic_load_explicit(&h->tail, memory_order_acquire)) > J.nslots) {
        if (drain_try() <= 0) {
            if (J.have_thread) futex_wake(&J.wake);
            sched_yield();
        }
    }
}

void *vt_journal_claim(int type, size_t bytes)
{
    if (!atomic_load_explicit(&J.on, memory_order_acquire)) return NULL;
    uint32_t n = (uint32_t)((sizeof(struct slot_hdr) + bytes + SLOT - 1) / SLOT);
    if (n > J.nslots / 4) return NULL;
    struct ring_file_hdr *h = J.hdr;
    uint64_t pos = atomic_fetch_add(&h->head, n); /* seq_cst: see drain_locked */
    if (pos + n - seen_tail > J.nslots || seen_tail > pos) wait_for_room(h, pos, n);
    struct slot_hdr *s = slot_at(pos);
    s->type = (uint16_t)type;
    s->nslots = (uint16_t)n;
    s->bytes = (uint32_t)bytes;
    s->pos = (uint32_t)pos;
    atomic_store_explicit(&s->state, S_CLAIMED, memory_order_release);
    return s + 1;
}

void vt_journal_commit(void *payload)
{
    struct slot_hdr *s = (struct slot_hdr *)payload - 1;
    atomic_store_explicit(&s->state, S_READY, memory_order_release);
    int sync = atomic_load(&J.sync);
    if (sync) {
        if (drain_try() < 0 && sync == 2) { /* no drainer will come after the one holding the lock */
            vt_mutex_lock(&J.drain_lock);
            drain_locked(0);
            vt_mutex_unlock(&J.drain_lock);
        }
        return;
    }
    /* Each time the head passes an eighth of the ring, make sure the drainer is awake (it also
     * polls); no shared line is read on the other commits. */
    uint32_t eighth = J.nslots / 8;
    if (((s->pos + s->nslots) & (eighth - 1)) < s->nslots && atomic_load_explicit(&J.sleeping, memory_order_relaxed)) {
        atomic_store(&J.sleeping, 0);
        futex_wake(&J.wake);
    }
}

int vt_journal_text(const char *line, size_t len)
{
    struct vt_rec_text *t = vt_journal_claim(VT_R_TEXT, sizeof *t + len);
    if (!t) return -1;
    t->len = (uint32_t)len;
    memcpy(t->text, line, len);
    vt_journal_commit(t);
    return 0;
}

void vt_journal_close(void)
{
    /* Threads still running while the process exits may hold claims, or claim now (they saw
     * `on` before it dropped): from here each commit drains inline, so their records reach the
     * writer, which keeps them before its footer or counts them as dropped. */
    atomic_store(&J.sync, 2);
    if (!atomic_exchange(&J.on, 0)) return;
    if (J.have_thread) {
        atomic_store(&J.stop, 1);
        futex_wake(&J.wake);
        pthread_join(J.thread, NULL);
        J.have_thread = 0;
    }
    /* A thread still inside a hook at exit may hold a claim: give it a moment, then write what it
     * had (a claimed record is complete but for the final store) rather than lose it. */
    vt_mutex_lock(&J.drain_lock);
    for (int i = 0; i < 50; i++) {
        drain_locked(0);
        if (atomic_load(&J.hdr->tail) == atomic_load(&J.hdr->head)) break;
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    drain_locked(1);
    vt_mutex_unlock(&J.drain_lock);
    remove_ring();
    /* The mapping stays: a late claim from another thread finds J.on == 0 before touching it. */
}

void vt_journal_forget(void)
{
    vt_api_names_use(NULL); /* the names leave the header before it is unmapped */
    if (J.data) munmap(J.data, 2 * (size_t)J.nslots * SLOT);
    if (J.hdr) munmap(J.hdr, HDR_BYTES);
    J.data = NULL;
    J.hdr = NULL;
    J.have_thread = 0;
    atomic_store(&J.on, 0);
    pthread_mutex_init(&J.drain_lock, NULL);
}

/* The dead writer pre-grew the trace with NULs: cut them so recovered lines follow the last one. */
static void trim_nul_tail(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    char buf[65536];
    off_t end = st.st_size;
    while (end > 0) {
        off_t from = end > (off_t)sizeof buf ? end - (off_t)sizeof buf : 0;
        ssize_t n = pread(fd, buf, (size_t)(end - from), from);
        if (n <= 0) return;
        ssize_t i = n - 1;
        while (i >= 0 && buf[i] == '\0') i--;
        if (i >= 0) { end = from + i + 1; break; }
        end = from;
    }
    if (end < st.st_size && ftruncate(fd, end) != 0) { /* keep the padding: readers skip it */ }
}

/* What the trace's header line says of its writer: the pid and the ring token (the first
 * "token", written before any string a program controls), and who owns the file. 0, or -1 when
 * the trace is not a regular file or has no header. */
struct trace_facts { long pid; char token[VT_RING_TOKEN_LEN + 1]; char place[VT_PLACE_LEN]; uid_t uid; };
static int trace_header_facts(int fd, struct trace_facts *f)
{
    char buf[4096];
    struct stat st;
    memset(f, 0, sizeof *f);
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0) return -1;
    buf[n] = '\0';
    char *nl = memchr(buf, '\n', (size_t)n);
    if (nl) *nl = '\0';
    static const char head[] = "{\"ev\":\"" VT_EVN_HEADER "\"";
    if (strncmp(buf, head, sizeof head - 1) != 0) return -1;
    const char *p = strstr(buf, "\"pid\":"), *t = strstr(buf, "\"token\":\"");
    f->pid = p ? strtol(p + 6, NULL, 10) : 0;
    if (t && strlen(t + 9) > VT_RING_TOKEN_LEN && t[9 + VT_RING_TOKEN_LEN] == '"')
        memcpy(f->token, t + 9, VT_RING_TOKEN_LEN);
    /* the first "pidns" key is the header's own: the strings a program controls (its name, its
     * arguments) are written escaped, and an escaped quote never reads as the key's */
    const char *pl = strstr(buf, "\"pidns\":\"");
    if (pl) {
        size_t len = strcspn(pl + 9, "\"\\");
        if (len < sizeof f->place) memcpy(f->place, pl + 9, len);
    }
    f->uid = st.st_uid;
    return 0;
}

/* The trace and its ring as recovery sees them: both opened once, by name in one directory
 * opened once, never by path again. Someone who owns a directory on the trace's path could swap
 * it between two opens (a symlink flipped during recovery made root append the ring to a file of
 * its own with the trace's name); through these descriptors everything read, cut and written is
 * what was checked. */
struct recovery {
    int dfd;               /* the trace's directory */
    int tfd;               /* the trace: read-write (append), or read-only when it cannot be written */
    int writable;
    const char *ring_name; /* the ring's name in dfd */
};

/* Remove the ring's name only while it is still the ring that was read (same device and inode). */
static int unlink_ring(const struct recovery *rc, int ring_fd)
{
    struct stat a, b;
    if (fstat(ring_fd, &a) != 0 || fstatat(rc->dfd, rc->ring_name, &b, AT_SYMLINK_NOFOLLOW) != 0 ||
        a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return -1;
    return unlinkat(rc->dfd, rc->ring_name, 0);
}

/* A ring whose header was never written (the process was killed while the tracer started)
 * holds no record: when the trace's writer is gone, remove it and cut the trace's NUL tail, so
 * that no later report warns about it. 1 when discarded. */
static int discard_unborn_ring(const struct recovery *rc, int ring_fd, const struct ring_file_hdr *h,
                               const struct trace_facts *tf)
{
    /* Never written (all zeros), or written in part: the fields go in order, magic first, so a
     * part is the magic with zeros or this trace's own pid and token after it. */
    const unsigned char *b = (const unsigned char *)h;
    int zero = 1;
    for (size_t i = 0; i < sizeof *h && zero; i++)
        if (b[i]) zero = 0;
    static const char no_token[VT_RING_TOKEN_LEN + 1];
    int part = memcmp(h->magic, RING_MAGIC, sizeof RING_MAGIC) == 0 && (h->pid == 0 || h->pid == tf->pid) &&
               (!memcmp(h->token, no_token, sizeof h->token) || !memcmp(h->token, tf->token, VT_RING_TOKEN_LEN));
    if (!zero && !part) return 0;
    if (tf->pid <= 0 || !writer_place_is_here(tf->place) || writer_alive((pid_t)tf->pid, proc_start_time((pid_t)tf->pid)))
        return 0;
    if (!rc->writable) return 0;
    trim_nul_tail(rc->tfd);
    return unlink_ring(rc, ring_fd) == 0;
}

/* What lies from `off` to the end of the trace is one line, whole or in part, after a complete
 * one: the record the drainer was copying, which recovery formats again. The only cut recovery
 * makes: a damaged ring's offset must never cut other lines. */
static int only_partial_line_after(int fd, uint64_t off, uint64_t end)
{
    char buf[4096];
    if (off == 0 || pread(fd, buf, 1, (off_t)off - 1) != 1 || buf[0] != '\n') return 0;
    for (uint64_t at = off; at < end;) {
        size_t want = end - at < sizeof buf ? (size_t)(end - at) : sizeof buf;
        ssize_t n = pread(fd, buf, want, (off_t)at);
        if (n <= 0) return 0;
        const char *nl = memchr(buf, '\n', (size_t)n);
        if (nl && (at + (uint64_t)(nl - buf) + 1 != end)) return 0; /* a newline before the very end */
        at += (uint64_t)n;
    }
    return 1;
}

long vt_journal_recover(const char *trace_path, char *err, size_t errlen)
{
    char ring[4200], base[4096], ring_name[4200];
    snprintf(ring, sizeof ring, "%s.ring", trace_path);
    const char *slash = strrchr(trace_path, '/');
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : trace_path);
    snprintf(ring_name, sizeof ring_name, "%s.ring", base);
    /* The directory reached without following another user's link (safepath.h): through one,
     * what is cut and appended here would be wherever that user points it. Such a trace is read
     * as it is; its owner can recover it. */
    char bad[4096];
    struct recovery rc = { vt_safepath_dir_open(trace_path, 0, NULL, bad, sizeof bad), -1, 0, ring_name };
    if (rc.dfd == -EPERM) {
        struct stat rst;
        if (lstat(ring, &rst) != 0) return 0;
        snprintf(err, errlen, "%s: not recovered: %s is a link another user owns (not followed); the trace is read as it is",
                 ring, bad);
        return -EPERM;
    }
    if (rc.dfd < 0) return 0; /* the trace's own open reports that */
    int fd = openat(rc.dfd, ring_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        close(rc.dfd);
        return e == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s", ring, strerror(e)), -e);
    }
    rc.tfd = openat(rc.dfd, base, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    rc.writable = rc.tfd >= 0;
    if (rc.tfd < 0) rc.tfd = openat(rc.dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    /* Read, never mapped: a ring left sparse on a full tmpfs (an older tracer's) raises SIGBUS
     * when a hole is faulted in, where read() returns zeros. */
    struct stat st;
    static struct ring_file_hdr hcopy;
    struct ring_file_hdr *h = &hcopy;
    char *data = NULL;
    long out = -EINVAL;
    memset(h, 0, sizeof *h);
    /* Only the trace's own ring: anyone who can write beside a trace can plant TRACE.ring, and
     * recovering it would cut the trace and append whatever it holds. */
    struct trace_facts tf;
    if (rc.tfd < 0 || trace_header_facts(rc.tfd, &tf) != 0) {
        snprintf(err, errlen, "%s: not this trace's ring (the trace has no header to match it); left alone", ring);
        out = -EPERM;
        goto done;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != tf.uid) {
        snprintf(err, errlen, "%s: not this trace's ring (not a regular file of the trace's owner); left alone", ring);
        out = -EPERM;
        goto done;
    }
    int have_hdr = st.st_size >= HDR_BYTES && pread(fd, h, sizeof *h, 0) == (ssize_t)sizeof *h;
    if (!have_hdr || memcmp(h->magic, RING_MAGIC, sizeof RING_MAGIC) != 0 || h->slot_size != SLOT || h->nslots == 0 ||
        (h->nslots & (h->nslots - 1)) != 0 || (uint64_t)st.st_size < HDR_BYTES + (uint64_t)h->nslots * SLOT) {
        if (have_hdr && discard_unborn_ring(&rc, fd, h, &tf)) out = 0;
        else snprintf(err, errlen, "%s: not a vramtrace ring file", ring);
        goto done;
    }
    if ((h->pid == 0 || !h->token[0]) && discard_unborn_ring(&rc, fd, h, &tf)) { /* killed mid-header */
        out = 0;
        goto done;
    }
    if (!tf.token[0] || memcmp(h->token, tf.token, VT_RING_TOKEN_LEN) != 0 || h->pid != tf.pid) {
        snprintf(err, errlen, "%s: not this trace's ring (its token or pid is not the trace header's); left alone", ring);
        out = -EPERM;
        goto done;
    }
    h->place[sizeof h->place - 1] = '\0';
    if (!writer_place_is_here(h->place)) {
        snprintf(err, errlen, "%s: process %lld wrote it on another machine or boot, or in another PID namespace (a "
                 "container): whether it still runs cannot be told from here, so the trace is read as it is", ring,
                 (long long)h->pid);
        out = -EBUSY;
        goto done;
    }
    if (writer_alive((pid_t)h->pid, h->start_time)) {
        uint64_t pending = atomic_load(&h->head) - atomic_load(&h->tail);
        snprintf(err, errlen, "%s: process %lld is still writing it (%llu ring slots not yet in the trace)", ring,
                 (long long)h->pid, (unsigned long long)(pending > h->nslots ? h->nslots : pending));
        out = -EBUSY;
        goto done;
    }
    size_t ring_bytes = (size_t)h->nslots * SLOT;
    data = malloc(ring_bytes);
    if (data && pread(fd, data, ring_bytes, HDR_BYTES) != (ssize_t)ring_bytes) { free(data); data = NULL; }
    int tfd = rc.writable ? rc.tfd : -1;
    if (!rc.writable) errno = EACCES;
    if (tfd >= 0) trim_nul_tail(tfd);
    struct stat tst;
    uint64_t line_off = atomic_load(&h->line_off), tail = atomic_load(&h->tail), line_done = atomic_load(&h->line_done);
    /* The drainer died after completing lines it had not yet passed `tail` over: they are in the
     * trace, and recovery starts after them. Else, when it died copying the record at `tail`,
     * the part of its line already in the trace is cut (the record is formatted again). */
    int done_ahead = line_done > tail && line_done - tail <= h->nslots;
    if (tfd >= 0 && !done_ahead && atomic_load(&h->line_rec) == tail + 1 && fstat(tfd, &tst) == 0 &&
        line_off < (uint64_t)tst.st_size && only_partial_line_after(tfd, line_off, (uint64_t)tst.st_size) &&
        ftruncate(tfd, (off_t)line_off) != 0) {
        /* cannot cut the partial line: the recovered ones still follow it */
    }
    if (!data || tfd < 0) {
        snprintf(err, errlen, "cannot recover %s: %s", ring, strerror(errno ? errno : EIO));
        goto done;
    }
    uint64_t t = done_ahead ? line_done : tail, head = atomic_load(&h->head);
    if (head - t > h->nslots) t = head - h->nslots;
    static char line[1 << 16];
    char rec[1 << 16];
    static struct vt_api_names names_copy; /* the header is the dead process's: untrusted */
    struct vt_api_names *names = &names_copy;
    memcpy(names, &h->names, sizeof *names);
    vt_api_names_sanitize(names);
    out = 0;
    while (t < head) {
        const struct slot_hdr *s = (const struct slot_hdr *)(data + (t % h->nslots) * SLOT);
        uint32_t state = s->state, n = s->nslots;
        if (state == S_EMPTY || n == 0 || n > h->nslots / 4) { t++; continue; } /* never filled */
        size_t bytes = s->bytes < (size_t)n * SLOT - sizeof *s ? s->bytes : (size_t)n * SLOT - sizeof *s;
        if (bytes > sizeof rec) bytes = sizeof rec;
        /* copy out, unwrapping (this mapping is not doubled) */
        for (size_t off = 0; off < bytes; off++) {
            uint64_t byte = (t % h->nslots) * SLOT + sizeof *s + off;
            rec[off] = data[byte % ring_bytes];
        }
        size_t len = vt_record_format(s->type, rec, bytes, state != S_READY, names, line, sizeof line);
        if (len && write(tfd, line, len) == (ssize_t)len) out++;
        t += n;
    }
    unlink_ring(&rc, fd);
done:
    free(data);
    close(fd);
    if (rc.tfd >= 0) close(rc.tfd);
    close(rc.dfd);
    return out;
}
