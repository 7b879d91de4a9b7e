// status_kb.h - a figure from /proc/self/status (VmRSS, VmHWM, RssAnon, ...) in kB, -1 when it
// cannot be read; shared by the bench programs (bench_calls.cu, soak.cu).
#ifndef VT_BENCH_STATUS_KB_H
#define VT_BENCH_STATUS_KB_H
#include <cstdio>
#include <cstdlib>
#include <cstring>

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') { v = atol(line + kl + 1); break; }
    if (f) fclose(f);
    return v;
}
#endif
