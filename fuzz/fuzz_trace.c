/* fuzz_trace.c - libFuzzer target for the trace reader, analysis and every renderer (`make fuzz`):
 * arbitrary bytes are fed as a trace file, and the promises are asserted, not only "no crash":
 *  - the parallel reader (chunks of 4 KiB, so inputs cross chunks) returns exactly the records
 *    and line numbers the sequential reader does;
 *  - --json and --perfetto output parses as JSON and is valid UTF-8;
 *  - the HTML holds no element the renderer does not write itself (no markup from the trace);
 *  - the text report holds no control character but newline and tab.
 * A broken promise aborts, which libFuzzer reports with the input. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/analysis.h"
#include "report/escape.h"
#include "report/reader.h"
#include "report/reader_mt.h"
#include "report/render.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    setenv("VRAMTRACE_REPORT_CHUNK", "4096", 1);
    setenv("VRAMTRACE_REPORT_THREADS", "2", 1);
    setenv("VRAMTRACE_NVDISASM", "none", 1); /* hermetic: no external tool runs on fuzzed notes */
    return 0;
}

#define PROMISE(cond, what) do { if (!(cond)) { fprintf(stderr, "broken promise: %s\n", what); abort(); } } while (0)

static void check_json(const char *buf, size_t n, const char *what)
{
    PROMISE(vt_utf8_valid(buf, n), what);
    json_tokener *tok = json_tokener_new_ex(64);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *o = json_tokener_parse_ex(tok, buf, (int)n);
    PROMISE(o && json_tokener_get_error(tok) == json_tokener_success, what);
    json_object_put(o);
    json_tokener_free(tok);
}

/* Every element the HTML renderer and its SVG write; anything else came from a trace. */
static void check_html(const char *buf, size_t n)
{
    static const char *const tags[] = { "b", "body", "br", "circle", "code", "defs", "details", "div", "g", "h1", "h2", "h3",
                                        "head", "header", "html", "li", "line", "main", "marker", "meta", "p", "path", "rect",
                                        "section", "span", "style", "summary", "svg", "table", "td", "text", "th", "title", "tr",
                                        "ul", NULL };
    for (size_t i = 0; i + 1 < n; i++) {
        if (buf[i] != '<') continue;
        size_t j = i + 1;
        if (buf[j] == '/' || buf[j] == '!') continue;
        size_t k = j;
        while (k < n && ((buf[k] >= 'a' && buf[k] <= 'z') || (buf[k] >= '0' && buf[k] <= '9'))) k++;
        int known = 0;
        for (int t = 0; tags[t] && !known; t++) known = strlen(tags[t]) == k - j && !memcmp(tags[t], buf + j, k - j);
        PROMISE(known, "HTML holds only the renderer's own elements");
    }
}

/* The events a reader returns, as "type line;" text, for comparing two readers. */
static char *sequence(const char *path, int parallel, int *rc_out)
{
    char err[512], *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    struct vt_event ev;
    int rc = -1;
    if (parallel) {
        struct vt_mreader *m = vt_mreader_open(path, NULL, NULL, err, sizeof err);
        if (m) {
            while ((rc = vt_mreader_next(m, &ev, err, sizeof err)) > 0) fprintf(f, "%d %ld;", (int)ev.type, ev.line);
            vt_mreader_close(m);
        }
    } else {
        struct vt_reader *r = vt_reader_open(path, NULL, NULL, err, sizeof err);
        if (r) {
            while ((rc = vt_reader_next(r, &ev, err, sizeof err)) > 0) fprintf(f, "%d %ld;", (int)ev.type, ev.line);
            vt_reader_close(r);
        }
    }
    fprintf(f, "end %d", rc);
    fclose(f);
    *rc_out = rc;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/fuzz-trace-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    if (write(fd, data, size) != (ssize_t)size) { close(fd); unlink(path); return 0; }
    close(fd);

    int rc_seq, rc_par;
    char *seq = sequence(path, 0, &rc_seq), *par = sequence(path, 1, &rc_par);
    PROMISE(seq && par && !strcmp(seq, par), "the parallel reader returns what the sequential one does");
    free(seq);
    free(par);

    char err[512];
    struct vt_reader *r = vt_reader_open(path, NULL, NULL, err, sizeof err);
    struct vt_proc *p = vt_proc_new(path, 0);
    char *pbuf = NULL;
    size_t plen = 0;
    FILE *pfile = open_memstream(&pbuf, &plen);
    struct vt_perfetto *pf = pfile ? vt_perfetto_open(pfile) : NULL;
    int finished = 0;
    if (r && p) {
        if (pf) { struct vt_observer obs = vt_perfetto_observer(pf); vt_proc_set_observer(p, &obs); }
        struct vt_event ev;
        int rc;
        while ((rc = vt_reader_next(r, &ev, err, sizeof err)) > 0)
            if (vt_proc_feed(p, &ev, err, sizeof err) < 0) break;
        finished = rc == 0 && vt_proc_finish(p, err, sizeof err) == 0;
    }
    if (pf) {
        vt_perfetto_finish(pf, &p, finished ? 1 : 0);
        fclose(pfile);
        if (finished) check_json(pbuf, plen, "--perfetto output is valid JSON in UTF-8");
    }
    free(pbuf);
    if (finished) {
        struct vt_render_opts o = { 5, NULL };
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        if (out && vt_render_json(out, &p, 1, &o) == 0 && fclose(out) == 0) check_json(buf, len, "--json output is valid JSON in UTF-8");
        free(buf);
        buf = NULL;
        out = open_memstream(&buf, &len);
        if (out && vt_render_html(out, &p, 1, &o) == 0 && fclose(out) == 0) check_html(buf, len);
        free(buf);
        buf = NULL;
        out = open_memstream(&buf, &len);
        FILE *text = out ? vt_text_filter(out) : NULL;
        if (text && vt_render_text(text, &p, 1, &o) == 0 && fclose(text) == 0 && fclose(out) == 0)
            for (size_t i = 0; i < len; i++)
                PROMISE((unsigned char)buf[i] >= 0x20 || buf[i] == '\n' || buf[i] == '\t', "the text report holds no control character");
        free(buf);
    }
    vt_reader_close(r);
    vt_proc_free(p);
    unlink(path);
    return 0;
}
