/* fuzz_trace.c - libFuzzer target for the trace reader and analysis (`make fuzz-trace`):
 * arbitrary bytes are fed as a trace file through reader -> analysis -> JSON/HTML renderers;
 * nothing may crash, leak or trip the sanitizers, whatever the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "report/analysis.h"
#include "report/reader.h"
#include "report/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/fuzz-trace-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    if (write(fd, data, size) != (ssize_t)size) { close(fd); unlink(path); return 0; }
    close(fd);
    char err[512];
    struct vt_reader *r = vt_reader_open(path, NULL, NULL, err, sizeof err);
    struct vt_proc *p = vt_proc_new(path, 0);
    if (r && p) {
        struct vt_event ev;
        int rc;
        while ((rc = vt_reader_next(r, &ev, err, sizeof err)) > 0)
            if (vt_proc_feed(p, &ev, err, sizeof err) < 0) break;
        if (rc == 0 && vt_proc_finish(p, err, sizeof err) == 0) {
            FILE *out = fopen("/dev/null", "w");
            struct vt_render_opts o = { 5, NULL };
            if (out) {
                vt_render_json(out, &p, 1, &o);
                vt_render_html(out, &p, 1, &o);
                vt_render_text(out, &p, 1, &o);
                fclose(out);
            }
        }
    }
    vt_reader_close(r);
    vt_proc_free(p);
    unlink(path);
    return 0;
}
