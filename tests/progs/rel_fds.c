/* rel_fds.c - a daemon-style program that closes every descriptor above stderr once CUDA has
 * started, then opens its own file and keeps calling CUDA (tests/cases/rel_behaviour.sh).
 * Usage: rel_fds FILE PAIRS [fork] [chdir] [move]
 *   1. cudaMalloc 1 MiB (the tracer opens its trace and ring here);
 *   2. close(3..1023), as daemons and some launchers do; with "chdir", chdir("/") as they also do
 *      (FILE must then be absolute); with "move", rename $VRAMTRACE_OUTPUT (a plain path: the
 *      trace) to the same name + ".moved", as a log rotation would;
 *   3. open FILE (it gets the lowest free number, one the tracer may have held);
 *   4. PAIRS cudaMalloc/cudaFree pairs: megabytes of trace, so the trace file grows several times;
 *   5. with "fork": fork; the child writes 50 bytes "c..." to FILE through the inherited descriptor
 *      and exits 0 only if every write and a cudaMalloc/cudaFree succeeded; the parent waits;
 *   6. write 100 bytes ("p...", or 50 after the child's 50) to FILE, close it.
 * Prints "fd=N errors=E" and exits 0 when every call succeeded, 1 otherwise. Untraced, FILE ends
 * with exactly 100 bytes. */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_all(int fd, char c, size_t n)
{
    char buf[100];
    memset(buf, c, sizeof buf);
    return write(fd, buf, n) == (ssize_t)n ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: rel_fds FILE PAIRS [fork] [chdir] [move]\n"); return 2; }
    int pairs = atoi(argv[2]), do_fork = 0, do_chdir = 0, do_move = 0, errors = 0;
    for (int i = 3; i < argc; i++) {
        do_fork |= !strcmp(argv[i], "fork");
        do_chdir |= !strcmp(argv[i], "chdir");
        do_move |= !strcmp(argv[i], "move");
    }
    void *keep = NULL;
    errors += cudaMalloc(&keep, 1 << 20) != cudaSuccess;
    for (int fd = 3; fd < 1024; fd++) close(fd);
    if (do_chdir && chdir("/") != 0) return 1;
    const char *trace = getenv("VRAMTRACE_OUTPUT");
    char moved[4200];
    snprintf(moved, sizeof moved, "%s.moved", trace ? trace : "");
    if (do_move && (!trace || rename(trace, moved) != 0)) return 1;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { perror(argv[1]); return 1; }
    for (int i = 0; i < pairs; i++) {
        void *p = NULL;
        errors += cudaMalloc(&p, 4096 + (size_t)i % 7 * 512) != cudaSuccess;
        errors += cudaFree(p) != cudaSuccess;
    }
    size_t mine = 100;
    if (do_fork) {
        pid_t pid = fork();
        if (pid == 0) {
            void *p = NULL;
            int bad = write_all(fd, 'c', 50);
            bad += cudaMalloc(&p, 4096) != cudaSuccess;
            bad += cudaFree(p) != cudaSuccess;
            _exit(bad ? 1 : 0);
        }
        int st = 0;
        errors += pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        mine = 50;
    }
    errors += write_all(fd, 'p', mine);
    errors += close(fd) != 0;
    errors += cudaFree(keep) != cudaSuccess;
    printf("fd=%d errors=%d\n", fd, errors);
    return errors ? 1 : 0;
}
