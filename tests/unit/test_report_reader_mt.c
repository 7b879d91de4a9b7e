/* test_report_reader_mt.c - the parallel reader's knobs are what they say (issue 52: both were
 * parsed in base 11, VRAMTRACE_REPORT_CHUNK=64 giving 70-byte chunks, and nothing noticed): a
 * trace of known size split into chunks of the size asked, by the number of workers asked, and
 * the sequential reader below the size threshold; every line read either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_test.h"
#include "report/reader_mt.h"

static long read_all(const char *path, int *workers, uint64_t *chunk, long *nchunks)
{
    char err[512];
    struct vt_mreader *m = vt_mreader_open(path, NULL, NULL, err, sizeof err);
    if (!m) { fprintf(stderr, "open: %s\n", err); return -1; }
    vt_mreader_plan(m, workers, chunk, nchunks);
    struct vt_event ev;
    long n = 0;
    int rc;
    while ((rc = vt_mreader_next(m, &ev, err, sizeof err)) > 0) n++;
    vt_mreader_close(m);
    return rc < 0 ? -1 : n;
}

int main(void)
{
    char path[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/vt-reader-mt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) { fprintf(stderr, "mkstemp failed\n"); return 1; }
    fputs("{\"ev\":\"header\",\"format\":\"vramtrace-trace\",\"version\":1,\"pid\":3,\"t\":5}\n", f);
    for (int i = 0; i < 40; i++)   /* 40 lines of 80 bytes each (79 and the newline) */
        fprintf(f, "{\"ev\":\"sync\",\"t\":%d,\"dur\":1,\"tid\":2,\"api\":\"cudaDeviceSynchronize\",\"res\":0,\"dev\":0}%*s\n",
                1000 + i, 5, "");
    long size = ftell(f);
    fclose(f);
    int workers;
    uint64_t chunk;
    long nchunks;

    setenv("VRAMTRACE_REPORT_CHUNK", "64", 1);
    setenv("VRAMTRACE_REPORT_THREADS", "3", 1);
    VT_CHECK_EQ_INT(read_all(path, &workers, &chunk, &nchunks), 41, "CHUNK=64 THREADS=3: the header and 40 lines");
    VT_CHECK_EQ_INT((long)chunk, 64, "64-byte chunks");
    VT_CHECK_EQ_INT(nchunks, (size + 63) / 64, "the file's size over 64, rounded up");
    VT_CHECK_EQ_INT(workers, 3, "3 workers");

    setenv("VRAMTRACE_REPORT_CHUNK", "1000", 1);
    setenv("VRAMTRACE_REPORT_THREADS", "2", 1);
    VT_CHECK_EQ_INT(read_all(path, &workers, &chunk, &nchunks), 41, "CHUNK=1000 THREADS=2: every line");
    VT_CHECK_EQ_INT((long)chunk, 1000, "1000-byte chunks");
    VT_CHECK_EQ_INT(nchunks, (size + 999) / 1000, "the file's size over 1000, rounded up");
    VT_CHECK_EQ_INT(workers, 2, "2 workers");

    setenv("VRAMTRACE_REPORT_THREADS", "1", 1);
    VT_CHECK_EQ_INT(read_all(path, &workers, &chunk, &nchunks), 41, "THREADS=1: every line");
    VT_CHECK_EQ_INT(workers, 0, "THREADS=1: the sequential reader");

    unsetenv("VRAMTRACE_REPORT_CHUNK");
    unsetenv("VRAMTRACE_REPORT_THREADS");
    VT_CHECK_EQ_INT(read_all(path, &workers, &chunk, &nchunks), 41, "no knob: every line");
    VT_CHECK_EQ_INT(workers, 0, "a trace under 64 MiB: the sequential reader");
    unlink(path);
    return vt_test_finish();
}
