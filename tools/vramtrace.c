/* vramtrace.c - CLI entry point: dispatches `vramtrace run|report|bandwidth`. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

#define VT_VERSION "0.1.0"

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
