/* cli.c - the shared command-line conventions (cli.h). */
#include "cli.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

static int in_order;

void vt_cli_begin(int stop_at_operand)
{
    optind = 0;   /* glibc: a full restart, reading the '+' of the next option string again */
    opterr = 0;   /* vt_cli_next says what was wrong, in the commands' form */
    in_order = stop_at_operand;
}

int vt_cli_bad(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "vramtrace %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (try 'vramtrace %s --help')\n", cmd);
    return 2;
}

int vt_cli_next(const char *cmd, int argc, char **argv, const char *shorts, const struct option *longs)
{
    /* '+' keeps `run`'s program arguments away from getopt; ':' tells a missing value apart */
    char spec[64];
    snprintf(spec, sizeof spec, "%s:%s", in_order ? "+" : "", shorts);
    int c = getopt_long(argc, argv, spec, longs, NULL);
    if (c != '?' && c != ':') return c;
    /* The word that was wrong. A long option is always a whole word, the one before optind; a
     * short letter is named by optopt. */
    const char *word = optind >= 1 && optind - 1 < argc ? argv[optind - 1] : NULL;
    int is_long = word && !strncmp(word, "--", 2) && word[2];
    char name[64];
    if (is_long) {
        size_t n = strcspn(word, "=");
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name - 1 ? n : sizeof name - 1), word);
    } else {
        snprintf(name, sizeof name, "-%c", optopt > 32 && optopt < 127 ? optopt : '?');
    }
    if (c == ':') vt_cli_bad(cmd, "option '%s' needs a value", name);
    else if (is_long && optopt && strchr(word, '=')) vt_cli_bad(cmd, "option '%s' takes no value", name);
    else vt_cli_bad(cmd, "unknown option '%s'", name);
    return VT_CLI_USAGE;
}

int vt_cli_version(void)
{
    puts("vramtrace " VRAMTRACE_VERSION);
    return fflush(stdout) != 0 ? 1 : 0;
}

static int progress_state = -1;   /* -1 not asked yet, 0 stderr is not a terminal, 1 it is */
static int progress_shown;
static struct timespec progress_last;

int vt_cli_progress_on(void)
{
    if (progress_state < 0) progress_state = isatty(STDERR_FILENO) == 1;
    return progress_state;
}

static void draw(const char *cmd, const char *what, int throttled)
{
    if (!vt_cli_progress_on()) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (now.tv_sec - progress_last.tv_sec) * 1000 + (now.tv_nsec - progress_last.tv_nsec) / 1000000;
    if (throttled && progress_shown && ms < 100) return;
    progress_last = now;
    /* \r and clear-to-end-of-line: one line redrawn, whatever the previous one's length */
    fprintf(stderr, "\r\033[Kvramtrace %s: %s", cmd, what);
    fflush(stderr);
    progress_shown = 1;
}

void vt_cli_progress(const char *cmd, const char *what) { draw(cmd, what, 1); }
void vt_cli_progress_step(const char *cmd, const char *what) { draw(cmd, what, 0); }

void vt_cli_progress_done(void)
{
    if (!progress_shown) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    progress_shown = 0;
}
