/* commands.h - the vramtrace subcommands; tools/vramtrace.c dispatches to these.
 * Each takes argv with argv[0] = the subcommand name and returns the process exit status:
 * 0 success, 1 a run-time failure (message printed), 2 bad usage or bad input (one-line message). */
#ifndef VT_COMMANDS_H
#define VT_COMMANDS_H

int vt_cmd_run(int argc, char **argv);
int vt_cmd_report(int argc, char **argv);
int vt_cmd_bandwidth(int argc, char **argv);

#endif
