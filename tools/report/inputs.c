/* inputs.c - the traces one report reads (inputs.h). */
#include "report/inputs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void vtr_inputs_init(struct vtr_inputs *in, void (*note)(void *ctx, const char *msg), void *ctx)
{
    memset(in, 0, sizeof *in);
    in->stdin_fd = -1;
    in->note = note;
    in->note_ctx = ctx;
}

void vtr_inputs_free(struct vtr_inputs *in)
{
    for (size_t k = 0; k < in->n; k++) free(in->v[k].name);
    free(in->v);
    if (in->stdin_fd >= 0) close(in->stdin_fd);
    in->v = NULL;
    in->n = in->cap = 0;
    in->stdin_fd = -1;
}

static void say(const struct vtr_inputs *in, const char *fmt, const char *a, const char *b)
{
    char msg[8300];
    snprintf(msg, sizeof msg, fmt, a, b);
    if (in->note) in->note(in->note_ctx, msg);
}

/* Appends NAME (taken) with ST's identity; 1 added, 0 a duplicate of the same run (said). */
static int push(struct vtr_inputs *in, char *name, int run, const struct stat *st, char *err, size_t errlen)
{
    if (st) {
        for (size_t k = 0; k < in->n; k++) {
            const struct vtr_input *o = &in->v[k];
            if (o->run == run && o->have_id && o->dev == st->st_dev && o->ino == st->st_ino) {
                if (strcmp(o->name, name)) say(in, "%s: the same file as %s: read once", name, o->name);
                else say(in, "%s: given twice: read once%s", name, "");
                free(name);
                return 0;
            }
        }
    }
    if (in->n == in->cap) {
        size_t cap = in->cap ? in->cap * 2 : 16;
        struct vtr_input *v = realloc(in->v, cap * sizeof *v);
        if (!v) { free(name); snprintf(err, errlen, "out of memory"); return -1; }
        in->v = v;
        in->cap = cap;
    }
    struct vtr_input *e = &in->v[in->n++];
    memset(e, 0, sizeof *e);
    e->name = name;
    e->run = run;
    if (st) { e->dev = st->st_dev; e->ino = st->st_ino; e->have_id = 1; e->size = S_ISREG(st->st_mode) ? st->st_size : 0; }
    return 1;
}

/* A trace's name in a directory: NAME.jsonl, or NAME.jsonl.N (N from 1 to 99, as the tracer
 * numbers a trace whose name was taken). */
static int is_trace_name(const char *s)
{
    const char *j = strstr(s, ".jsonl");
    while (j) {
        const char *t = j + 6;
        if (j > s && !*t) return 1;
        if (j > s && t[0] == '.' && t[1] >= '1' && t[1] <= '9' &&
            (!t[2] || (isdigit((unsigned char)t[2]) && !t[3]))) return 1;
        j = strstr(j + 1, ".jsonl");
    }
    return 0;
}

/* Orders DIR's traces by name, and NAME.jsonl.N after NAME.jsonl by N (2 before 10). */
static int cmp_trace_names(const void *pa, const void *pb)
{
    const char *a = ((const struct vtr_input *)pa)->name, *b = ((const struct vtr_input *)pb)->name;
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    if (isdigit((unsigned char)a[i]) && isdigit((unsigned char)b[i]) && i > 0 && a[i - 1] == '.') {
        size_t la = strspn(a + i, "0123456789"), lb = strspn(b + i, "0123456789");
        if (la != lb) return la < lb ? -1 : 1;
    }
    return strcmp(a + i, b + i);
}

static int add_dir(struct vtr_inputs *in, const char *dir, int run, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) { snprintf(err, errlen, "%s: %s", dir, strerror(errno)); return -2; }
    struct dirent *e;
    size_t before = in->n;
    int seen = 0;
    while ((e = readdir(d))) {
        if (!is_trace_name(e->d_name)) continue;
        seen++;
        size_t sz = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(sz);
        if (!p) { closedir(d); snprintf(err, errlen, "out of memory"); return -1; }
        snprintf(p, sz, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
        /* regular files only, links not followed: a FIFO named like a trace blocked the report */
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
            say(in, "%s: not a regular file; skipped%s", p, "");
            free(p);
            continue;
        }
        if (push(in, p, run, &st, err, errlen) < 0) { closedir(d); return -1; }
    }
    closedir(d);
    if (!seen) { snprintf(err, errlen, "%s: no *.jsonl traces in this directory", dir); return -2; }
    if (in->n > before) qsort(in->v + before, in->n - before, sizeof *in->v, cmp_trace_names);
    return (int)(in->n - before);
}

/* Standard input as a file the reader can read again: itself when it is a regular file (`<
 * trace.jsonl`), else a copy in an anonymous memory file (a pipe is read once). */
static int take_stdin(struct vtr_inputs *in, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(STDIN_FILENO, &st) != 0) { snprintf(err, errlen, "%s: %s", VTR_STDIN_NAME, strerror(errno)); return -2; }
    if (S_ISREG(st.st_mode)) {
        in->stdin_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
        if (in->stdin_fd < 0) { snprintf(err, errlen, "%s: %s", VTR_STDIN_NAME, strerror(errno)); return -2; }
        return 0;
    }
    int fd = memfd_create("vramtrace-stdin", MFD_CLOEXEC);
    if (fd < 0) { snprintf(err, errlen, "%s: cannot hold a copy: %s", VTR_STDIN_NAME, strerror(errno)); return -2; }
    static char buf[1 << 16];
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { snprintf(err, errlen, "%s: %s", VTR_STDIN_NAME, strerror(errno)); close(fd); return -2; }
        if (n == 0) break;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) { snprintf(err, errlen, "%s: cannot hold a copy: %s", VTR_STDIN_NAME, strerror(errno)); close(fd); return -2; }
            off += w;
        }
    }
    in->stdin_fd = fd;
    return 0;
}

int vtr_inputs_add(struct vtr_inputs *in, const char *operand, int run, char *err, size_t errlen)
{
    if (!strcmp(operand, "-")) {
        if (in->stdin_fd >= 0) { snprintf(err, errlen, "-: standard input can be read once, not given twice"); return -2; }
        int rc = take_stdin(in, err, errlen);
        if (rc < 0) return rc;
        char *name = strdup(VTR_STDIN_NAME);
        if (!name) { snprintf(err, errlen, "out of memory"); return -1; }
        rc = push(in, name, run, NULL, err, errlen);
        struct stat st;
        if (rc > 0) {
            in->v[in->n - 1].is_stdin = 1;
            if (fstat(in->stdin_fd, &st) == 0) in->v[in->n - 1].size = st.st_size;
        }
        return rc;
    }
    struct stat st;
    int known = stat(operand, &st) == 0;
    if (known && S_ISDIR(st.st_mode)) return add_dir(in, operand, run, err, errlen);
    char *name = strdup(operand);
    if (!name) { snprintf(err, errlen, "out of memory"); return -1; }
    return push(in, name, run, known ? &st : NULL, err, errlen);
}

int vtr_input_open(const struct vtr_inputs *in, size_t k, char *err, size_t errlen)
{
    const struct vtr_input *e = &in->v[k];
    int fd = e->is_stdin ? fcntl(in->stdin_fd, F_DUPFD_CLOEXEC, 3)
           : open(e->name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) snprintf(err, errlen, "%s: %s", e->name, strerror(errno));
    return fd;
}
