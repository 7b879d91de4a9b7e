/* commands.h - the vramtrace subcommands; tools/vramtrace.c dispatches to these.
 * Each takes argv with argv[0] = the subcommand name and returns the process exit status:
 * 0 success, 1 a run-time failure (message printed), 2 bad usage or bad input (one-line message). */
#ifndef VT_COMMANDS_H
#define VT_COMMANDS_H
#include <stddef.h>

int vt_cmd_run(int argc, char **argv);
int vt_cmd_report(int argc, char **argv);
int vt_cmd_bandwidth(int argc, char **argv);

/* The CI gates (report/gate.h), shared by `report` and `run`. */
struct vt_gates;
/* The gate options, and their getopt_long codes in both commands (above any other option's) */
enum vt_gate_opt { VT_OPT_FAIL_ON = 512, VT_OPT_MAX_PEAK, VT_OPT_MAX_INCREASE, VT_OPT_ERROR_EXITCODE };
/* One gate option's value V into G (--error-exitcode's into *GATE_STATUS). 0, or 2 after a
 * one-line message naming CMD. */
int vt_report_gate_option(const char *cmd, enum vt_gate_opt which, const char *v, struct vt_gates *g, int *gate_status);
/* `run`'s gates: the traces at PATHS analysed as `report` reads them (nothing rendered), then G
 * checked; each tripped gate one line "vramtrace CMD: ..." on stderr. 0 none tripped, 1 tripped,
 * 2 a trace could not be analysed (said). */
int vt_report_gate_traces(const char *cmd, char *const *paths, size_t n, const struct vt_gates *g);

#endif
