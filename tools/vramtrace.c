/* vramtrace.c - CLI entry point: dispatches `vramtrace run|report|bandwidth`. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

#define VT_VERSION "0.1.0"

static char self_dir[PATH_MAX];

const char *vt_self_dir(void) { return self_dir; }

static void init_self_dir(void)
{
    ssize_t n = readlink("/proc/self/exe", self_dir, sizeof self_dir - 1);
    if (n <= 0) { self_dir[0] = '\0'; return; }
    self_dir[n] = '\0';
    char *slash = strrchr(self_dir, '/');
    if (slash) *slash = '\0';
}

static void usage(FILE *f)
{
    fputs("usage: vramtrace <command> [options]\n"
          "\n"
          "Trace the device memory of unmodified CUDA programs.\n"
          "\n"
          "commands:\n"
          "  run [-o PATH] [--sim] [--check=MODE] -- CMD ARGS...   run CMD under the tracer\n"
          "  report [options] TRACE...                           analyse traces (text, --json, --html, --perfetto)\n"
          "  bandwidth [--device N] [--size BYTES] [--json]      measure reference bandwidths on this machine\n"
          "\n"
          "`vramtrace <command> --help` describes each command's options.\n", f);
}

int main(int argc, char **argv)
{
    init_self_dir();
    if (argc < 2) { usage(stderr); return 2; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) { usage(stdout); return 0; }
    if (!strcmp(cmd, "--version")) { puts("vramtrace " VT_VERSION); return 0; }
    if (!strcmp(cmd, "run")) return vt_cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return vt_cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "bandwidth")) return vt_cmd_bandwidth(argc - 1, argv + 1);
    fprintf(stderr, "vramtrace: unknown command '%s' (try 'vramtrace --help')\n", cmd);
    return 2;
}
