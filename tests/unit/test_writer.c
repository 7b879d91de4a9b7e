/* test_writer.c - the trace file writer (trace/trace_writer.c), by what ends up in the file: the
 * lines in the order claimed, the footer closing them with its dropped count (padded to 20 digits,
 * rewritten in place for a line refused after it), the file cut to exactly that, a second trace
 * at a taken name made beside it as NAME.1, the mapping's bounds, and the writer stopping at
 * RLIMIT_FSIZE (no SIGXFSZ, the footer's room kept) and at the span an address-space limit
 * leaves, each saying so once with the reason. */
#include "vt_test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_writer.h"

/* A sanitizer build: gcc names it by a macro, clang answers __has_feature. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

static char dir[4096];
static int failures_said;
static char failure[512];
static void on_fail(const char *error)
{
    failures_said++;
    snprintf(failure, sizeof failure, "%s", error);
}

/* The whole file at path (NUL-terminated; *len its size), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { if (fd >= 0) close(fd); return NULL; }
    char *b = malloc((size_t)st.st_size + 1);
    ssize_t n = b ? pread(fd, b, (size_t)st.st_size, 0) : -1;
    close(fd);
    if (n != st.st_size) { free(b); return NULL; }
    b[n] = 0;
    *len = (size_t)n;
    return b;
}

/* Text compared whole, printed with its newlines as \n so each check stays one line. */
static void oneline(char *out, size_t n, const char *s)
{
    size_t o = 0;
    for (; s && *s && o + 3 < n; s++) {
        if (*s == '\n') out[o++] = '\\', out[o++] = 'n';
        else out[o++] = *s;
    }
    out[o] = 0;
}
static void check_text(const char *got, const char *want, const char *name)
{
    char g[512], w[512];
    oneline(g, sizeof g, got);
    oneline(w, sizeof w, want);
    VT_CHECK(got && !strcmp(got, want), "%s (got '%s', want '%s')", name, got ? g : "(null)", w);
}

static void open_at(const char *name, char *used, size_t used_len)
{
    char path[4200], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int r = vt_writer_open(path, used, used_len, err, sizeof err);
    VT_CHECK(r == 0, "vt_writer_open %s (%s)", name, err);
}

static void test_lines_and_footer(void)
{
    char used[4200], want_path[4200];
    open_at("t.jsonl", used, sizeof used);
    snprintf(want_path, sizeof want_path, "%s/t.jsonl", dir);
    VT_CHECK_EQ_STR(used, want_path, "the trace is at the name asked");
    char *first = vt_writer_reserve(6);
    VT_CHECK(first != NULL, "a line claimed");
    if (!first) return;
    memcpy(first, "{\"a\"}\n", 6);
    VT_CHECK_EQ_INT(vt_writer_offset(first), 0, "the first claim is at offset 0");
    VT_CHECK_EQ_INT(vt_writer_put("{\"b\":2}\n", 8), 0, "a second line put");
    VT_CHECK_EQ_INT(vt_writer_put("{\"c\":3}\n", 8), 0, "a third line put");
    char *fourth = vt_writer_reserve(3);
    VT_CHECK_EQ_INT(fourth ? (long long)vt_writer_offset(fourth) : -1, 22, "the fourth claim follows the others (6 + 8 + 8)");
    if (fourth) memcpy(fourth, "{}\n", 3);
    VT_CHECK_EQ_INT(vt_writer_lines(), 4, "4 lines kept");
    VT_CHECK(vt_writer_owns((uint64_t)(uintptr_t)first), "the mapping owns its first byte");
    VT_CHECK(!vt_writer_owns((uint64_t)(uintptr_t)first - 1), "nor the byte before it");
    /* Without an address-space limit the span is 64 GiB (1 GiB under TSan). */
#if defined(__SANITIZE_THREAD__)
    uint64_t span = 1ull << 30;
#else
    uint64_t span = 64ull << 30;
#endif
    VT_CHECK(vt_writer_owns((uint64_t)(uintptr_t)first + span - 1), "the mapping owns its last byte (span - 1)");
    VT_CHECK(!vt_writer_owns((uint64_t)(uintptr_t)first + span), "and ends at its span");

    size_t len;
    char *b = slurp(used, &len);
    VT_CHECK(b && len == 1 << 20, "open: the file is backed a chunk ahead (1 MiB, got %zu)", b ? len : 0);
    free(b);

    char errbuf[256];
    VT_CHECK_EQ_INT(vt_writer_error(errbuf, sizeof errbuf), 0, "no error");
    vt_writer_close("{\"ev\":\"end\"", 11);
    static const char want[] = "{\"a\"}\n{\"b\":2}\n{\"c\":3}\n{}\n{\"ev\":\"end\",\"dropped\":0                   }\n";
    b = slurp(used, &len);
    check_text(b, want, "closed: the lines in order, the footer with its padded count, nothing after");
    VT_CHECK_EQ_INT(len, sizeof want - 1, "closed: the file cut to what was written");
    free(b);

    /* Refused after the footer: counted there, in place. */
    VT_CHECK_EQ_INT(vt_writer_put("{\"late\":1}\n", 11), -1, "a line after close is refused");
    VT_CHECK(vt_writer_reserve(4) == NULL, "and a claim");
    b = slurp(used, &len);
    check_text(b ? strstr(b, "{\"ev\"") : NULL, "{\"ev\":\"end\",\"dropped\":2                   }\n",
                    "late lines counted in the footer in place (2)");
    VT_CHECK_EQ_INT(len, sizeof want - 1, "the file's size unchanged");
    free(b);
    vt_writer_close("{\"ev\":\"end\"", 11);   /* a second close does nothing */
    b = slurp(used, &len);
    VT_CHECK_EQ_INT(len, sizeof want - 1, "a second close changes nothing");
    free(b);
    vt_writer_forget();

    /* The name is taken: each next trace is made beside it, not over it; closed with no line and
     * no footer, a trace is an empty file. */
    for (int k = 1; k <= 2; k++) {
        open_at("t.jsonl", used, sizeof used);
        snprintf(want_path, sizeof want_path, "%s/t.jsonl.%d", dir, k);
        VT_CHECK_EQ_STR(used, want_path, "the name taken: the next free NAME.k");
        vt_writer_close(NULL, 0);
        b = slurp(used, &len);
        VT_CHECK(b && len == 0, "closed with no line and no footer: an empty file (%zu bytes)", b ? len : 1);
        free(b);
        vt_writer_forget();
    }
}

/* RLIMIT_FSIZE: lines stop where the next would leave less than the footer's 4096 bytes under the
 * limit; the footer still fits; no SIGXFSZ reaches the program. */
static void test_file_size_limit(void)
{
    enum { LINE = 1000, LIMIT = (1 << 20) + 300000 };
    struct rlimit old, fl;
    getrlimit(RLIMIT_FSIZE, &old);
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < LIMIT) { printf("skip - RLIMIT_FSIZE below the test's\n"); return; }
    char used[4200];
    open_at("fsize.jsonl", used, sizeof used);
    fl.rlim_cur = LIMIT;
    fl.rlim_max = old.rlim_max;
    setrlimit(RLIMIT_FSIZE, &fl);
    char line[LINE];
    memset(line, 'x', LINE);
    line[0] = '{', line[LINE - 2] = '}', line[LINE - 1] = '\n';
    int kept = 0, refused = 0;
    for (int i = 0; i < 2000; i++) {
        if (vt_writer_put(line, LINE) == 0) kept++;
        else refused++;
    }
    /* the k-th line is kept while k * LINE + 4096 <= LIMIT */
    int want_kept = (LIMIT - 4096) / LINE;
    VT_CHECK_EQ_INT(kept, want_kept, "lines kept under RLIMIT_FSIZE");
    VT_CHECK_EQ_INT(refused, 2000 - want_kept, "every later line refused");
    VT_CHECK_EQ_INT(failures_said, 1, "the failure said once");
    VT_CHECK_EQ_STR(failure, "trace file reached the file size limit (RLIMIT_FSIZE): File too large", "and why");
    char errbuf[256] = "";
    VT_CHECK(vt_writer_error(errbuf, sizeof errbuf) == 1 && !strcmp(errbuf, failure), "vt_writer_error says the same");
    vt_writer_close("{\"ev\":\"end\"", 11);
    setrlimit(RLIMIT_FSIZE, &old);
    size_t len;
    char *b = slurp(used, &len);
    char want_footer[128];
    snprintf(want_footer, sizeof want_footer, "{\"ev\":\"end\",\"dropped\":%-20d}\n", 2000 - want_kept);
    /* The footer goes where the lines' room ended (LIMIT - 4096): the part of it no whole line
     * filled stays NUL bytes, which readers skip (docs/trace-format.md). */
    size_t flen = strlen(want_footer), lines_end = (size_t)want_kept * LINE, room_end = LIMIT - 4096;
    int nuls = 1;
    for (size_t i = lines_end; b && i < room_end && i < len; i++) nuls &= b[i] == 0;
    VT_CHECK(b && len == room_end + flen && b[lines_end - 1] == '\n' && nuls && !memcmp(b + room_end, want_footer, flen),
             "the file: %d whole lines, NULs to %zu, then the footer counting %d dropped (%zu bytes, want %zu)", want_kept,
             room_end, 2000 - want_kept, b ? len : 0, room_end + flen);
    free(b);
    vt_writer_forget();
}

/* An address-space limit: the span is at most a sixteenth of what the program has left (halved
 * from 64 GiB until it fits), and the trace stops at it saying so. */
static void test_address_space_limit(void)
{
#ifdef UNDER_SANITIZER
    printf("skip - a sanitizer's shadow memory leaves no room for an address-space limit\n");
#else
    char buf[64] = "";
    int fd = open("/proc/self/statm", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    unsigned long long used = n > 0 ? strtoull(buf, NULL, 10) * (unsigned long long)sysconf(_SC_PAGESIZE) : 0;
    struct rlimit old, as;
    getrlimit(RLIMIT_AS, &old);
    /* 600 MiB left: a sixteenth is 37.5 MiB, so the span is 32 MiB (the next power of two down) */
    as.rlim_cur = used + (600ull << 20);
    as.rlim_max = old.rlim_max;
    if (!used || (old.rlim_max != RLIM_INFINITY && old.rlim_max < as.rlim_cur) || setrlimit(RLIMIT_AS, &as) != 0) {
        printf("skip - cannot set an address-space limit\n");
        return;
    }
    char used_path[4200];
    failures_said = 0;
    open_at("as.jsonl", used_path, sizeof used_path);
    setrlimit(RLIMIT_AS, &old);
    enum { LINE = 4096 };
    static char line[LINE];
    memset(line, 'y', LINE);
    line[LINE - 1] = '\n';
    int kept = 0;
    char *first = NULL;
    for (int i = 0; i < 9000; i++) {
        char *p = vt_writer_reserve(LINE);
        if (!p) continue;
        if (!first) first = p;
        memcpy(p, line, LINE);
        kept++;
    }
    VT_CHECK_EQ_INT(kept, ((32 << 20) - 4096) / LINE, "lines kept in a 32 MiB span");
    VT_CHECK(first && vt_writer_owns((uint64_t)(uintptr_t)first + (32u << 20) - 1) &&
             !vt_writer_owns((uint64_t)(uintptr_t)first + (32u << 20)), "the span is 32 MiB");
    VT_CHECK_EQ_INT(failures_said, 1, "the failure said once");
    VT_CHECK_EQ_STR(failure, "trace file reached 32 MiB, the most the address-space limit (RLIMIT_AS) left it: File too large",
                    "and why");
    vt_writer_close(NULL, 0);
    vt_writer_forget();
#endif
}

int main(void)
{
    signal(SIGXFSZ, SIG_DFL);   /* a store past the limit would kill this test, as it would a program */
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/vt-writer-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { printf("not ok - a temporary folder\n"); return 1; }
    vt_writer_on_failure(on_fail);
    test_lines_and_footer();
    test_file_size_limit();
    test_address_space_limit();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) { /* left behind: harmless */ }
    return vt_test_finish();
}
