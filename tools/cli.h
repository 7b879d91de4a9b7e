/* cli.h - the command-line conventions every vramtrace command shares, so that habits from
 * other GNU tools work the same in each: options parsed by getopt_long (`--opt=V` and `--opt V`,
 * unambiguous prefixes, `--` ends the options), -h/--help, -V/--version, and bad usage answered by
 * one line on stderr that names the command and the option, with exit status 2.
 *
 * Invariant: only these functions print for a usage error of an option; a command's own checks
 * of a value (a number out of range) print their own line in the same form (vt_cli_bad). */
#ifndef VT_CLI_H
#define VT_CLI_H
#include <getopt.h>
#include <stdio.h>

#include <vramtrace/vramtrace.h>

#define VT_CLI_USAGE (-2)   /* vt_cli_next: a usage error was said; exit with status 2 */

/* Starts parsing a command's ARGV (argv[0] is the command's name). IN_ORDER stops at the first
 * operand (`run`: what follows is the program's own command line); otherwise operands and options
 * may mix, and getopt_long moves the operands to argv[optind..argc) in their order. */
void vt_cli_begin(int in_order);

/* The next option of ARGV: its `val` from LONGS or its letter from SHORTS (getopt's syntax, no
 * leading '+' or ':'), with its value in optarg; -1 after the last option (the operands are at
 * argv[optind..argc)); VT_CLI_USAGE after saying what was wrong ("vramtrace CMD: unknown option
 * '--x' (try 'vramtrace CMD --help')", "option '--top' needs a value", "option '--json' takes no
 * value"). */
int vt_cli_next(const char *cmd, int argc, char **argv, const char *shorts, const struct option *longs);

/* Says "vramtrace CMD: " FMT (one argument) " (try 'vramtrace CMD --help')" on stderr; returns 2. */
int vt_cli_bad(const char *cmd, const char *fmt, const char *arg);

/* Prints "vramtrace VERSION" on stdout (-V, --version, `vramtrace version`); returns 0, or 1 when
 * stdout could not be written. */
int vt_cli_version(void);

/* A progress line on stderr, redrawn in place, only when stderr is a terminal: "vramtrace CMD:
 * WHAT" (WHAT already formatted); at most ten redraws a second. vt_cli_progress_done() clears it.
 * Nothing at all when stderr is a file or a pipe, so logs and CI output hold no progress noise. */
void vt_cli_progress(const char *cmd, const char *what);
/* The same, drawn every time: a step of a few long ones (bandwidth's rows). */
void vt_cli_progress_step(const char *cmd, const char *what);
void vt_cli_progress_done(void);
int vt_cli_progress_on(void);

#endif
