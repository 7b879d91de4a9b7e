/* fuzz_ring.c - libFuzzer target for crash recovery (`make fuzz`): a ring of the trace's own (its
 * token and a dead writer's pid, so recovery trusts it) whose every other byte comes from the
 * input - head, tail, the copy markers, the API-name table and the slots - beside a trace of one
 * header line. vt_journal_recover must not crash, hang or read outside the file, and every line
 * the trace holds afterwards must be valid JSON in valid UTF-8: a dead program's ring is
 * untrusted input. journal.c is included for its (private) ring layout. */
#include "../src/trace/journal.c"

#include <json-c/json.h>
#include <sys/wait.h>

#include "report/escape.h"

static pid_t dead_pid;
static char dir[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    pid_t c = fork(); /* a pid that surely belongs to no process: a child already waited for */
    if (c == 0) _exit(0);
    waitpid(c, NULL, 0);
    dead_pid = c;
    snprintf(dir, sizeof dir, "/tmp/fuzz-ring-XXXXXX");
    if (!mkdtemp(dir)) abort();
    return 0;
}

static uint64_t take64(const uint8_t **p, size_t *n)
{
    uint64_t v = 0;
    size_t k = *n < 8 ? *n : 8;
    memcpy(&v, *p, k);
    *p += k;
    *n -= k;
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char token[] = "0123456789abcdef0123456789abcdef";
    char trace[128], ringp[160];
    snprintf(trace, sizeof trace, "%s/t.jsonl", dir);
    snprintf(ringp, sizeof ringp, "%s.ring", trace);
    FILE *t = fopen(trace, "w");
    if (!t) return 0;
    fprintf(t, "{\"ev\":\"header\",\"format\":\"vramtrace-trace\",\"version\":1,\"tracer\":\"0.1.0\",\"token\":\"%s\",\"pid\":%ld,"
               "\"ppid\":1,\"program\":\"/p\",\"argv\":[],\"t\":1,\"hostname\":\"h\",\"rank\":{},\"page_size\":4096,"
               "\"backtraces\":false,\"checks\":\"record\"}\n", token, (long)dead_pid);
    if (size && (data[0] & 0x80)) for (int i = 0; i < 300; i++) fputc('\0', t); /* a dead writer's NUL tail */
    fclose(t);

    const uint8_t *p = data;
    size_t n = size;
    static struct ring_file_hdr h;
    memset(&h, 0, sizeof h);
    uint32_t nslots = 1u << (2 + (size ? data[0] % 7 : 0)); /* 4 .. 256 slots */
    if (n) { p++; n--; }
    memcpy(h.magic, RING_MAGIC, sizeof RING_MAGIC);
    h.slot_size = SLOT;
    h.nslots = nslots;
    h.pid = dead_pid;
    memcpy(h.token, token, sizeof token);
    atomic_store(&h.tail, take64(&p, &n));
    atomic_store(&h.head, atomic_load(&h.tail) + take64(&p, &n) % (3 * (uint64_t)nslots));
    atomic_store(&h.line_rec, take64(&p, &n));
    atomic_store(&h.line_off, take64(&p, &n) % 4096);
    atomic_store(&h.line_done, atomic_load(&h.tail) + take64(&p, &n) % (3 * (uint64_t)nslots));
    size_t names = n < sizeof h.names / 4 ? n : sizeof h.names / 4; /* part of the name table, the rest zero */
    memcpy(&h.names, p, names);
    p += names;
    n -= names;

    int fd = open(ringp, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return 0;
    static uint8_t page[HDR_BYTES];
    memset(page, 0, sizeof page);
    memcpy(page, &h, sizeof h);
    int ok = write(fd, page, sizeof page) == (ssize_t)sizeof page;
    size_t ring_bytes = (size_t)nslots * SLOT;
    uint8_t *slots = calloc(1, ring_bytes);
    if (slots) memcpy(slots, p, n < ring_bytes ? n : ring_bytes);
    ok = ok && slots && write(fd, slots, ring_bytes) == (ssize_t)ring_bytes;
    free(slots);
    close(fd);
    if (!ok) return 0;

    char err[512];
    (void)vt_journal_recover(trace, err, sizeof err);

    /* every line left in the trace: JSON, UTF-8 */
    FILE *in = fopen(trace, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (in && (len = getline(&line, &cap, in)) > 0) {
        size_t m = 0;
        for (ssize_t i = 0; i < len; i++) if (line[i]) line[m++] = line[i]; /* NUL padding is skipped by readers */
        while (m && (line[m - 1] == '\n')) m--;
        if (!m) continue;
        if (!vt_utf8_valid(line, m)) { fprintf(stderr, "recovered line is not UTF-8\n"); abort(); }
        json_tokener *tok = json_tokener_new();
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        json_object *o = json_tokener_parse_ex(tok, line, (int)m);
        if (!o || json_tokener_get_error(tok) != json_tokener_success) {
            fprintf(stderr, "recovered line is not JSON: %.*s\n", (int)m, line);
            abort();
        }
        json_object_put(o);
        json_tokener_free(tok);
    }
    free(line);
    if (in) fclose(in);
    unlink(ringp);
    unlink(trace);
    return 0;
}
