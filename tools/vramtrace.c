/* vramtrace.c - CLI entry point: dispatches `vramtrace run|report|bandwidth|help|version`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
    fputs("usage: vramtrace <command> [options]\n"
          "\n"
          "Trace the device memory of unmodified CUDA programs.\n"
          "\n"
          "commands:\n"
          "  run [options] -- CMD ARGS...        run CMD under the tracer; it writes one trace per process\n"
          "  report [options] TRACE... | DIR     analyse traces (text; --json, --html, --perfetto)\n"
          "  bandwidth [options]                 measure reference bandwidths on this machine\n"
          "  help [COMMAND]                      this help, or a command's\n"
          "  version                             the version (also -V, --version)\n"
          "\n"
          "`vramtrace help COMMAND` or `vramtrace COMMAND --help` describes each command's options.\n", f);
}

static const struct { const char *name; int (*fn)(int, char **); } commands[] = {
    { "run", vt_cmd_run }, { "report", vt_cmd_report }, { "bandwidth", vt_cmd_bandwidth },
};

static int (*command(const char *name))(int, char **)
{
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
        if (!strcmp(commands[k].name, name)) return commands[k].fn;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) { usage(stderr); return 2; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        if (argc == 2 || strcmp(cmd, "help")) { usage(stdout); return fflush(stdout) != 0; }
        if (argc > 3) { fputs("vramtrace help: one command at a time (try 'vramtrace help')\n", stderr); return 2; }
        int (*fn)(int, char **) = command(argv[2]);
        if (!fn && (!strcmp(argv[2], "help") || !strcmp(argv[2], "version"))) { usage(stdout); return fflush(stdout) != 0; }
        if (!fn) { fprintf(stderr, "vramtrace help: unknown command '%s' (try 'vramtrace help')\n", argv[2]); return 2; }
        char help[] = "--help";
        char *args[] = { argv[2], help, NULL };
        return fn(2, args);
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) return vt_cli_version();
    int (*fn)(int, char **) = command(cmd);
    if (fn) return fn(argc - 1, argv + 1);
    fprintf(stderr, "vramtrace: unknown command '%s' (try 'vramtrace --help')\n", cmd);
    return 2;
}
