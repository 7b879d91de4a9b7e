/* inputs.h - the traces one `vramtrace report` reads, from its operands.
 *
 * An operand is a trace file, a directory (its traces: NAME.jsonl, and NAME.jsonl.N, which the
 * tracer writes when NAME.jsonl already exists; never NAME.jsonl.ring, the crash journal), or "-"
 * (standard input: a file as it is, anything else read once into an anonymous file, because the
 * reader reads a trace more than once and from several threads).
 *
 * Invariants: a file is read once per run (the two runs of --diff are apart): the same file named
 * twice, by a link, or by name and in its directory, counts as one process, and the second
 * naming is said through the NOTE callback. Nothing here prints; errors are returned with their
 * message in ERR. */
#ifndef VT_REPORT_INPUTS_H
#define VT_REPORT_INPUTS_H
#include <stddef.h>
#include <sys/types.h>

#define VTR_STDIN_NAME "<stdin>"

struct vtr_input {
    char *name;       /* the path as given (under a directory operand: DIR/NAME), or VTR_STDIN_NAME */
    int run;          /* the operand's run: 0, or 1 for --diff's NEW */
    dev_t dev;
    ino_t ino;
    int have_id;      /* dev/ino known (stat succeeded); a file that cannot be stat'ed is read to say why */
    int is_stdin;
    off_t size;       /* bytes when the operand was read (progress), 0 unknown */
};

struct vtr_inputs {
    struct vtr_input *v;
    size_t n, cap;
    int stdin_fd;     /* the copy of standard input, -1 until "-" is met; 0 is never it */
    void (*note)(void *ctx, const char *msg);
    void *note_ctx;
};

void vtr_inputs_init(struct vtr_inputs *in, void (*note)(void *ctx, const char *msg), void *ctx);
/* Adds OPERAND's traces to RUN. The number of traces added (0 for a duplicate, said), or -2 with
 * ERR for bad input (a directory without traces, "-" twice, standard input unreadable), -1 with
 * ERR when out of memory. */
int vtr_inputs_add(struct vtr_inputs *in, const char *operand, int run, char *err, size_t errlen);
/* A new descriptor reading input K from its start (standard input's copy duplicated; a path
 * opened non-blocking, so a FIFO put there since cannot block), or -1 with ERR. */
int vtr_input_open(const struct vtr_inputs *in, size_t k, char *err, size_t errlen);
void vtr_inputs_free(struct vtr_inputs *in);
#endif
