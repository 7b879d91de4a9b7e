/* trace_writer.c - MAP_SHARED append-only trace file; one atomic add per line, mutex only to grow. */
#include "trace_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "safepath.h"
#include "tracer.h"

#if defined(__SANITIZE_THREAD__)
/* TSan kills a process whose mapping leaves its application ranges; 64 GiB near the libraries does. */
#define VT_MAP_RESERVE_MAX ((size_t)1 << 30)
#else
#define VT_MAP_RESERVE_MAX ((size_t)64 << 30) /* virtual span mapped once; the file grows inside it */
#endif
#define VT_MAP_RESERVE_MIN ((size_t)64 << 20) /* smallest span tried (ulimit -v, valgrind) */
#define VT_MAP_RESERVE_FLOOR ((size_t)4 << 20) /* smallest span an address-space limit may leave */
#define VT_CHUNK_MIN ((size_t)1 << 20)
#define VT_CHUNK_MAX ((size_t)64 << 20)
/* Written pages are unmapped from the process (MADV_DONTNEED) in steps of this size, one step
 * behind the write offset: the page cache keeps the data (a dirty shared page stays dirty), but
 * the trace stops counting in the program's VmRSS, which a long run would otherwise grow by the
 * whole trace. A late writer into a released page only faults it back in. */
#define VT_RELEASE_STEP ((size_t)8 << 20)
/* Kept free at the end of the backed file, for the footer: when the disk fills, the writer
 * stops, and the footer saying how many events were dropped, and why, still has room. */
#define VT_FOOTER_ROOM ((size_t)4096)

enum { W_CLOSED = 0, W_OPEN = 1, W_FAILED = 2 };

static struct {
    _Atomic int state;
    char *map;
    size_t span;              /* bytes mapped; the trace's size limit */
    int span_limited;         /* the span was cut to fit RLIMIT_AS's headroom */
    _Atomic size_t off;       /* bytes claimed so far */
    _Atomic size_t file_size; /* bytes backed by the file (fallocated) */
    _Atomic size_t released;  /* [0, released) is unmapped from this process (VT_RELEASE_STEP) */
    _Atomic uint64_t lines, dropped;
    pthread_mutex_t grow_lock;
    char error[256];
    void (*on_fail)(const char *error); /* called once, when the writer stops */
    /* Where the footer's dropped count stands in the file once it is written (0: no footer yet).
     * Lines refused after it (threads still calling CUDA while the process exits) are counted
     * there in place: the count is padded to a fixed width with spaces, which JSON allows. */
    _Atomic size_t footer_count_at;
    pthread_mutex_t footer_lock;
    /* No descriptor is kept: a program may close every fd above 2 (daemons do) and its next
     * open() would get the number back. Growing and trimming reopen the file by this absolute
     * name and touch it only when it is still the file that is mapped (same device and inode). */
    char path[4096];
    dev_t dev;
    ino_t ino;
} W = { .grow_lock = PTHREAD_MUTEX_INITIALIZER, .footer_lock = PTHREAD_MUTEX_INITIALIZER };

#define VT_COUNT_WIDTH 20 /* digits of a uint64_t */
static void put_count(char *at, uint64_t n)
{
    char digits[VT_COUNT_WIDTH + 1];
    snprintf(digits, sizeof digits, "%-20llu", (unsigned long long)n);
    memcpy(at, digits, VT_COUNT_WIDTH);
}

/* A line was dropped after the footer was written: the footer's count follows. */
static __attribute__((noinline)) void count_late_drop(size_t at)
{
    int saved = errno;
    vt_mutex_lock(&W.footer_lock);
    put_count(W.map + at, atomic_load(&W.dropped));
    vt_mutex_unlock(&W.footer_lock);
    errno = saved;
}

static void count_drop(void)
{
    atomic_fetch_add(&W.dropped, 1); /* seq_cst, with the load: vt_writer_close counts it or we do */
    size_t at = atomic_load(&W.footer_count_at);
    if (__builtin_expect(at != 0, 0)) count_late_drop(at);
}

static void set_error(const char *what, int e)
{
    if (!W.error[0]) snprintf(W.error, sizeof W.error, "%s: %s", what, strerror(e));
}

/* The program's address space so far (/proc/self/statm's first field), 0 if unknown. Raw read():
 * no stdio, no allocation. */
static uint64_t vm_bytes(void)
{
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    uint64_t pages = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) pages = pages * 10 + (uint64_t)(buf[i] - '0');
    return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The span the trace may map. Under an address-space limit (ulimit -v, RLIMIT_AS, as batch
 * schedulers set) the span counts against the program's own allocations: taking the largest
 * power of two that still mapped left a program with 10 GiB of headroom 2 GiB. At most a
 * sixteenth of what is left is taken (down to VT_MAP_RESERVE_FLOOR); the trace then stops at that
 * size and its footer says why. */
static size_t span_allowed(void)
{
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return VT_MAP_RESERVE_MAX;
    uint64_t used = vm_bytes(), left = as.rlim_cur > used ? as.rlim_cur - used : 0;
    size_t span = VT_MAP_RESERVE_MAX;
    while (span > VT_MAP_RESERVE_FLOOR && span > left / 16) span /= 2;
    return span;
}

static void set_size_error(void)
{
    if (!W.span_limited) { set_error("trace file reached its size limit", EFBIG); return; }
    char what[160];
    snprintf(what, sizeof what, "trace file reached %zu MiB, the most the address-space limit (RLIMIT_AS) left it",
             W.span >> 20);
    set_error(what, EFBIG);
}

/* The trace's directory reached again by name, without following another user's link (see
 * safepath.h): an O_PATH descriptor, *base the trace's name in it; or a negative errno. */
static int trace_dir(const char **base) { return vt_safepath_dir_open(W.path, 0, base, NULL, 0); }

int vt_writer_dir_open(const char **base)
{
    int dfd = trace_dir(base);
    if (dfd < 0) return dfd;
    struct stat st;
    if (fstatat(dfd, *base, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != W.dev || st.st_ino != W.ino) {
        close(dfd);
        return -ESTALE;
    }
    return dfd;
}

/* The mapped file, opened again by name for one operation; -1 (error set) when it cannot be
 * opened or the name now leads to another file. The caller closes it. */
static int reopen_mapped(void)
{
    int saved = errno;
    const char *base;
    int dfd = trace_dir(&base), fd = -1;
    if (dfd >= 0) {
        fd = openat(dfd, base, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        int e = errno;
        close(dfd);
        errno = e;
    } else {
        errno = -dfd;
    }
    struct stat st;
    if (fd < 0) set_error("cannot reopen trace file", errno);
    else if (fstat(fd, &st) != 0 || st.st_dev != W.dev || st.st_ino != W.ino) {
        set_error("trace file was moved or replaced", ESTALE);
        close(fd);
        fd = -1;
    }
    errno = saved;
    return fd;
}

int vt_writer_open(const char *path, char *used_path, size_t used_len, char *err, size_t errlen)
{
    char name[sizeof W.path], abs_path[sizeof W.path - 8];
    int fd = -1, e = 0;
    /* Absolute: the program may chdir before the file is reopened to grow it. */
    size_t cwd_len = 0;
    if (path[0] != '/' && getcwd(abs_path, sizeof abs_path)) {
        cwd_len = strlen(abs_path);
        abs_path[cwd_len++] = '/';
    }
    if (cwd_len + strlen(path) >= sizeof abs_path) {
        snprintf(err, errlen, "cannot create trace file %.200s: %s", path, strerror(ENAMETOOLONG));
        return -ENAMETOOLONG;
    }
    memcpy(abs_path + cwd_len, path, strlen(path) + 1);
    /* The directory is reached without following another user's link and the file made in the
     * directory reached: checking the path and then opening it by name let a link swapped in
     * between put the trace where its owner chose. Missing directories (traces/rank%r/) are made,
     * 0700. */
    char bad[4096];
    const char *base;
    int dfd = vt_safepath_dir_open(abs_path, VT_SAFEPATH_MKDIR, &base, bad, sizeof bad);
    if (dfd == -EPERM) {
        snprintf(err, errlen, "cannot create trace file %.1000s: %.1000s is a link another user owns (not followed)", abs_path, bad);
        return -EPERM;
    }
    if (dfd < 0) {
        snprintf(err, errlen, "cannot create trace file %s: %s", abs_path, strerror(-dfd));
        return dfd;
    }
    for (int i = 0; i < 100; i++) {
        if (i == 0) memcpy(name, abs_path, strlen(abs_path) + 1);
        else snprintf(name, sizeof name, "%s.%d", abs_path, i);
        fd = openat(dfd, name + (base - abs_path), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST) break;
    }
    if (fd < 0) {
        e = errno;
        close(dfd);
        snprintf(err, errlen, "cannot create trace file %s: %s", name, strerror(e));
        return -e;
    }
    /* Address space can be limited (ulimit -v, valgrind): halve the span until it maps. */
    char *map = MAP_FAILED;
    size_t span = span_allowed();
    size_t least = span < VT_MAP_RESERVE_MIN ? span : VT_MAP_RESERVE_MIN;
    W.span_limited = span < VT_MAP_RESERVE_MAX;
    for (; span >= least; span /= 2) {
        map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
        if (map != MAP_FAILED) break;
    }
    if (map == MAP_FAILED) {
        e = errno;
        snprintf(err, errlen, "cannot map trace file %s: %s", name, strerror(e));
        close(fd);
        unlinkat(dfd, name + (base - abs_path), 0);
        close(dfd);
        return -e;
    }
    close(dfd);
    struct stat st;
    if (fstat(fd, &st) != 0) st.st_dev = 0, st.st_ino = 0;
    close(fd);
    snprintf(W.path, sizeof W.path, "%s", name);
    W.dev = st.st_dev;
    W.ino = st.st_ino;
    W.map = map;
    W.span = span;
    W.error[0] = '\0';
    atomic_store(&W.off, 0);
    atomic_store(&W.file_size, 0);
    atomic_store(&W.released, 0);
    atomic_store(&W.lines, 0);
    atomic_store(&W.dropped, 0);
    atomic_store(&W.state, W_OPEN);
    snprintf(used_path, used_len, "%s", name);
    return 0;
}

int vt_file_allocate(int fd, uint64_t off, uint64_t len)
{
    if (fallocate(fd, 0, (off_t)off, (off_t)len) == 0) return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS) return -errno;
    /* No fallocate here: write the zeros, so every block exists before it is stored into. */
    static const char zeros[65536];
    while (len > 0) {
        size_t n = len < sizeof zeros ? (size_t)len : sizeof zeros;
        ssize_t w = pwrite(fd, zeros, n, (off_t)off);
        if (w <= 0) return w < 0 ? -errno : -ENOSPC;
        off += (uint64_t)w;
        len -= (uint64_t)w;
    }
    return 0;
}

/* Make the file back at least `need` bytes. Blocks allocated, never a sparse size: a store into
 * a sparse page of a full disk would raise SIGBUS in the traced program. Never past RLIMIT_FSIZE:
 * growing beyond it would send SIGXFSZ, which kills the program. When the disk has less room than
 * a chunk, what is needed exactly is tried before giving up. */
static int grow_to(size_t need)
{
    vt_mutex_lock(&W.grow_lock);
    size_t have = atomic_load(&W.file_size);
    int rc = 0;
    struct rlimit fl;
    size_t limit = W.span;
    if (getrlimit(RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY && fl.rlim_cur < limit)
        limit = (size_t)fl.rlim_cur;
    while (have < need && rc == 0) {
        size_t step = have < VT_CHUNK_MIN ? VT_CHUNK_MIN : (have > VT_CHUNK_MAX ? VT_CHUNK_MAX : have);
        size_t want = have + step;
        if (want < need) want = need + VT_CHUNK_MIN;
        if (want > limit) want = limit;
        if (want < need) { set_error("trace file reached the file size limit (RLIMIT_FSIZE)", EFBIG); rc = -1; break; }
        if (want <= have) { set_size_error(); rc = -1; break; }
        int fd = reopen_mapped();
        if (fd < 0) { rc = -1; break; }
        int e = vt_file_allocate(fd, have, want - have);
        if ((e == -ENOSPC || e == -EDQUOT) && want > need) {
            want = need;
            e = vt_file_allocate(fd, have, want - have);
        }
        if (e != 0) set_error("cannot grow trace file", -e);
        close(fd);
        if (e != 0) { rc = -1; break; }
        have = want;
        atomic_store(&W.file_size, have);
    }
    vt_mutex_unlock(&W.grow_lock);
    return rc;
}

/* A claim crossed a VT_RELEASE_STEP boundary at `o`: release what lies a whole step behind it. */
static __attribute__((noinline)) void release_behind(size_t o)
{
    size_t end = o / VT_RELEASE_STEP * VT_RELEASE_STEP;
    if (end < 2 * VT_RELEASE_STEP) return;
    end -= VT_RELEASE_STEP;
    size_t from = atomic_load_explicit(&W.released, memory_order_relaxed);
    if (from >= end || !atomic_compare_exchange_strong(&W.released, &from, end)) return; /* another thread has it */
    int saved = errno;
    (void)madvise(W.map + from, end - from, MADV_DONTNEED);
    errno = saved;
}

/* The first failure stops the writer (every later line is dropped and counted) and says so once. */
static __attribute__((noinline)) void stop_on_failure(void)
{
    if (!W.error[0]) set_size_error();
    int open_state = W_OPEN;
    if (atomic_compare_exchange_strong(&W.state, &open_state, W_FAILED) && W.on_fail) W.on_fail(W.error);
}

char *vt_writer_reserve(size_t len)
{
    if (atomic_load(&W.state) != W_OPEN) { count_drop(); return NULL; }
    size_t o = atomic_fetch_add(&W.off, len);
    /* Re-check after claiming: close() reads `off` after it stops the writer, so a claim that
     * lands after that read sees W_OPEN gone here and never touches the (cut) file. Every line
     * that is kept ends VT_FOOTER_ROOM before the backed end (the footer's room). */
    size_t need = o + len + VT_FOOTER_ROOM;
    if (atomic_load(&W.state) != W_OPEN || need > W.span ||
        (need > atomic_load_explicit(&W.file_size, memory_order_acquire) && grow_to(need) != 0)) {
        count_drop();
        if (atomic_load(&W.state) == W_OPEN) stop_on_failure();
        return NULL;
    }
    atomic_fetch_add_explicit(&W.lines, 1, memory_order_relaxed);
    if (__builtin_expect(o / VT_RELEASE_STEP != (o + len) / VT_RELEASE_STEP, 0)) release_behind(o + len);
    return W.map + o;
}

uint64_t vt_writer_offset(const char *p) { return (uint64_t)(p - W.map); }

int vt_writer_put(const char *line, size_t len)
{
    char *dst = vt_writer_reserve(len);
    if (!dst) return -1;
    memcpy(dst, line, len);
    return 0;
}

void vt_writer_close(const char *footer, size_t len)
{
    /* Closed first: every claim made after this is refused and counted, so the footer, claimed
     * next, is the last line; lines claimed before it land before it. */
    int was = atomic_exchange(&W.state, W_CLOSED);
    if (was == W_CLOSED) return;
    size_t end = atomic_fetch_add(&W.off, 0);
    size_t backed = atomic_load(&W.file_size);
    size_t kept = backed >= VT_FOOTER_ROOM ? backed - VT_FOOTER_ROOM : 0; /* every kept line ends by here */
    if (end > kept) end = kept; /* the writer stopped (disk full ...): a failed claim may leave NULs before the footer */
    static const char key[] = ",\"dropped\":";
    size_t total = len + sizeof key - 1 + VT_COUNT_WIDTH + 2;
    if (footer && backed >= VT_FOOTER_ROOM && total <= VT_FOOTER_ROOM) {
        char *p = W.map + end;
        memcpy(p, footer, len);
        memcpy(p + len, key, sizeof key - 1);
        size_t at = end + len + sizeof key - 1;
        memcpy(W.map + at + VT_COUNT_WIDTH, "}\n", 2);
        /* Published first, then counted: a drop whose thread loads footer_count_at before this
         * store added to `dropped` before the load below (both seq_cst), and one after it
         * rewrites the count itself, under the lock. */
        vt_mutex_lock(&W.footer_lock);
        atomic_store(&W.footer_count_at, at);
        put_count(W.map + at, atomic_load(&W.dropped));
        vt_mutex_unlock(&W.footer_lock);
        end += total;
    }
    /* Cut the pre-grown NUL tail; lines claimed before `end` stay inside the file. */
    int fd = reopen_mapped();
    if (fd < 0) return; /* the NUL tail stays: readers skip it */
    if (ftruncate(fd, (off_t)end) != 0) set_error("cannot trim trace file", errno);
    close(fd);
}

void vt_writer_forget(void)
{
    if (W.map) munmap(W.map, W.span);
    W.map = NULL;
    W.path[0] = '\0';
    W.error[0] = '\0';
    atomic_store(&W.state, W_CLOSED);
    atomic_store(&W.off, 0);
    atomic_store(&W.file_size, 0);
    atomic_store(&W.released, 0);
    atomic_store(&W.footer_count_at, 0);
    pthread_mutex_init(&W.grow_lock, NULL);
    pthread_mutex_init(&W.footer_lock, NULL);
}

int vt_writer_owns(uint64_t addr)
{
    uint64_t m = (uint64_t)(uintptr_t)W.map;
    return W.map && addr >= m && addr < m + W.span;
}

uint64_t vt_writer_lines(void) { return atomic_load(&W.lines); }

void vt_writer_on_failure(void (*fn)(const char *error)) { W.on_fail = fn; }

int vt_writer_error(char *buf, size_t len)
{
    if (!W.error[0]) return 0;
    snprintf(buf, len, "%s", W.error);
    return 1;
}
