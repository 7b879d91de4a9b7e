/* fuzz_cli.c - libFuzzer target for `vramtrace report`'s command line (`make fuzz`): the input,
 * split at NUL bytes, is its argument list, run in a scratch directory that holds a small trace
 * (t.jsonl), a reference bandwidth file (bw.json) and a subdirectory of traces (d/). Arguments
 * naming another directory (holding '/', or "..": the parent is /tmp, whatever traces lie there)
 * are rewritten, so output files (--html, --perfetto)
 * land in the scratch directory. The command must return 0, 1 or 2, never crash or hang.
 * stdout goes to /dev/null; run with -close_fd_mask=2 to silence its messages too. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"

static char dir[64];
static int home; /* the directory libFuzzer runs in (its corpus paths are relative to it) */

static void put(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");
    if (f) { fputs(text, f); fclose(f); }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    setenv("VRAMTRACE_NVDISASM", "none", 1); /* hermetic: no external tool runs on fuzzed notes */
    snprintf(dir, sizeof dir, "/tmp/fuzz-cli-XXXXXX");
    home = open(".", O_RDONLY | O_DIRECTORY);
    if (home < 0 || !mkdtemp(dir) || chdir(dir) != 0) abort();
    static const char trace[] =
        "{\"ev\":\"header\",\"format\":\"vramtrace-trace\",\"version\":1,\"tracer\":\"0.1.0\",\"pid\":7,\"ppid\":1,"
        "\"program\":\"/p\",\"argv\":[],\"t\":1000,\"hostname\":\"h\",\"rank\":{},\"page_size\":4096,\"backtraces\":false,\"checks\":\"record\"}\n"
        "{\"ev\":\"alloc\",\"t\":2000,\"dur\":1,\"tid\":1,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":0,\"addr\":\"0x1000\",\"size\":4096,\"mem\":\"device\"}\n";
    put("t.jsonl", trace);
    if (mkdir("d", 0700) == 0) put("d/r0.jsonl", trace);
    put("bw.json", "{}\n");
    if (!freopen("/dev/null", "w", stdout) || fchdir(home) != 0) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size > 4096) return 0;
    char *buf = malloc(size + 1), *argv[66];
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    int argc = 0;
    argv[argc++] = (char *)"report";
    for (size_t i = 0; i <= size && argc < 65;) {
        char *a = buf + i;
        size_t n = strlen(a);
        for (size_t k = 0; k < n; k++) if (a[k] == '/') a[k] = '_'; /* nothing outside the scratch directory */
        if (!strcmp(a, "..")) a[0] = '_';                             /* not its parent either (all of /tmp) */
        argv[argc++] = a;
        i += n + 1;
    }
    argv[argc] = NULL;
    if (chdir(dir) != 0) abort();
    int rc = vt_cmd_report(argc, argv);
    if (rc < 0 || rc > 2) { fprintf(stderr, "report returned %d\n", rc); abort(); }
    if (fchdir(home) != 0) abort();
    free(buf);
    return 0;
}
