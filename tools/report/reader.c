/* reader.c - streaming JSONL trace reader: hand-written fast path for flat records, strict
 * json-c fallback for everything else, typed validation into struct vt_event. */
#include "report/reader.h"
#include "report/reader_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

__attribute__((format(printf, 2, 3)))
static void warnf(struct vt_reader *r, const char *fmt, ...)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "%s:%ld: warning: ", r->path, r->line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    r->nwarn++;
    if (r->warn) r->warn(r->wctx, msg);
}

static struct vt_reader *reader_alloc(const char *name)
{
    struct vt_reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->fd = -1;
    r->path = strdup(name);
    r->tok = json_tokener_new();
    if (!r->path || !r->tok) { vt_reader_close(r); return NULL; }
    json_tokener_set_flags(r->tok, JSON_TOKENER_STRICT);
    return r;
}

struct vt_reader *vt_reader_new_mem(const char *name) { return reader_alloc(name); }

struct vt_reader *vt_reader_open(const char *path, vt_reader_warn_fn warn, void *warn_ctx,
                                 char *err, size_t errlen)
{
    /* Non-blocking, and regular files only: opening a FIFO named like a trace blocks until
     * someone writes to it, and a device can be read for ever. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        errno = e == ENOMEM ? EIO : e;   /* ENOMEM means the reader's own memory (reader.h) */
        return NULL;
    }
    return vt_reader_open_fd(fd, path, warn, warn_ctx, err, errlen);
}

struct vt_reader *vt_reader_open_fd(int fd, const char *path, vt_reader_warn_fn warn, void *warn_ctx,
                                    char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file (%s): not read", path,
                 S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    struct vt_reader *r = reader_alloc(path);
    if (r) { r->cap = 1u << 20; r->buf = malloc(r->cap); }
    if (!r || !r->buf) {
        close(fd);
        vt_reader_close(r);
        snprintf(err, errlen, "%s: out of memory", path);
        errno = ENOMEM;
        return NULL;
    }
    r->fd = fd;
    r->warn = warn;
    r->wctx = warn_ctx;
    return r;
}

void vt_reader_close(struct vt_reader *r)
{
    if (!r) return;
    if (r->fd >= 0) close(r->fd);
    if (r->jo) json_object_put(r->jo);
    if (r->tok) json_tokener_free(r->tok);
    free(r->buf);
    free(r->arena);
    free(r->path);
    free(r);
}

long vt_reader_warnings(const struct vt_reader *r) { return r->nwarn; }
long vt_reader_lines(const struct vt_reader *r) { return r->line; }

int vt_reader_seek(struct vt_reader *r, uint64_t offset, long line, int got_header)
{
    if (r->fd < 0) return -1;
    r->pos = offset;
    r->start = r->end = 0;
    r->eof = 0;
    r->line = line - 1; /* vt_reader_next counts the line before it parses it */
    r->got_header = got_header;
    return 0;
}
const char *vt_reader_path(const struct vt_reader *r) { return r->path; }
uint64_t vt_reader_offset(const struct vt_reader *r) { return r->pos - (r->end - r->start); }


/* ---- json-c fallback ----------------------------------------------------------------------- */

static void to_jval(json_object *o, struct jval *v)
{
    memset(v, 0, sizeof *v);
    switch (json_object_get_type(o)) {
    case json_type_null: v->type = JV_NULL; break;
    case json_type_boolean: v->type = JV_BOOL; v->i = json_object_get_boolean(o); break;
    case json_type_double: v->type = JV_DBL; break;
    case json_type_int:
        v->type = JV_INT;
        v->i = json_object_get_int64(o);
        if (v->i == INT64_MAX && json_object_get_uint64(o) > (uint64_t)INT64_MAX) {
            v->big = 1; v->u = json_object_get_uint64(o);
        }
        break;
    case json_type_string:
        v->type = JV_STR; v->s = json_object_get_string(o); v->n = (size_t)json_object_get_string_len(o);
        break;
    case json_type_array: v->type = JV_ARR; v->jo = o; break;
    case json_type_object: v->type = JV_OBJ; v->jo = o; break;
    }
}

static int slow_parse(struct vt_reader *r, const char *p, size_t len, struct vt_event *ev,
                      char *err, size_t errlen)
{
    json_tokener_reset(r->tok);
    json_object *o = json_tokener_parse_ex(r->tok, p, (int)len);
    enum json_tokener_error je = json_tokener_get_error(r->tok);
    if (!o || je != json_tokener_success) {
        if (o) json_object_put(o);
        return vtr_rd_fail(r, VT_RD_ESYNTAX, err, errlen, "not valid JSON (%s)",
                    je == json_tokener_continue ? "unexpected end of line" : json_tokener_error_desc(je));
    }
    if (ws(p + json_tokener_get_parse_end(r->tok), p + len) != p + len) {
        json_object_put(o);
        return vtr_rd_fail(r, VT_RD_ESYNTAX, err, errlen, "not valid JSON (trailing characters after the record)");
    }
    r->jo = o;
    if (!json_object_is_type(o, json_type_object))
        return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "record is not a JSON object");
    json_object_object_foreach(o, key, val) {
        struct jval v;
        to_jval(val, &v);
        if (v.type == JV_ARR) {
            size_t n = json_object_array_length(val);
            v.n = n < VT_READER_MAX_BT ? n : VT_READER_MAX_BT;
            for (size_t i = 0; i < v.n; i++) to_jval(json_object_array_get_idx(val, i), &r->elems[i]);
            v.elems = r->elems;
        }
        int rc = vtr_rd_field(r, ev, key, strlen(key), &v, err, errlen);
        if (rc < 0) return rc;
    }
    return 0;
}

/* ---- record validation --------------------------------------------------------------------- */

static int need(struct vt_reader *r, const struct vt_event *ev, uint32_t bits, char *err, size_t errlen)
{
    static const char *const names[] = { "t", "dur", "tid", "api", "res", "dev", "addr", "size", "mem",
        "bt", "handle", "free_bytes", "total_bytes", "dir", "host", "k", "id", "name", "kind", "arg",
        "value", "path", "base", "lo", "hi", "version", "pid", "format", "alloc", "wall_time", "async", "label" };
    uint32_t miss = bits & ~ev->has;
    if (!miss) return 0;
    int b = __builtin_ctz(miss);
    return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "%s record is missing field '%s'", vt_rd_ev_name(ev->type), names[b]);
}

static int validate(struct vt_reader *r, struct vt_event *ev, int first, char *err, size_t errlen)
{
    if (first) {
        if (ev->type != VT_EV_HEADER)
            return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "first record is not a header (ev \"%s\")", vt_rd_ev_name(ev->type));
        if (!(ev->has & VT_F_FORMAT) || strcmp(ev->format, VT_TRACE_FORMAT))
            return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "not a vramtrace trace (header format is not \"" VT_TRACE_FORMAT "\")");
        if (!(ev->has & VT_F_VERSION))
            return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "header record is missing field 'version'");
        if (ev->version != VT_TRACE_VERSION)
            return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "unsupported trace version %lld (this vramtrace reads version %d)",
                        (long long)ev->version, VT_TRACE_VERSION);
        return need(r, ev, VT_F_PID, err, errlen);
    }
    switch (ev->type) {
    case VT_EV_HEADER: return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "second header record");
    case VT_EV_ALLOC: {
        int rc = need(r, ev, VT_F_T | VT_F_RES | VT_F_SIZE | VT_F_MEM, err, errlen);
        if (rc || ev->res_null || ev->res != 0) return rc;
        if (ev->mem == VT_MEM_VMM && !(ev->has & (VT_F_HANDLE | VT_F_ADDR))) return need(r, ev, VT_F_HANDLE, err, errlen);
        if (ev->mem != VT_MEM_VMM && (rc = need(r, ev, VT_F_ADDR, err, errlen))) return rc;
        if (ev->size > VT_MAX_SANE_SIZE)
            return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "absurd allocation size %llu", (unsigned long long)ev->size);
        return 0;
    }
    case VT_EV_FREE:
        if (!(ev->has & (VT_F_ADDR | VT_F_HANDLE))) return need(r, ev, VT_F_ADDR, err, errlen);
        return need(r, ev, VT_F_T, err, errlen);
    case VT_EV_COPY: {
        int rc = need(r, ev, VT_F_T | VT_F_SIZE | VT_F_DIR, err, errlen);
        if (!rc && ev->size > VT_MAX_SANE_SIZE)
            return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "absurd copy size %llu", (unsigned long long)ev->size);
        return rc;
    }
    case VT_EV_KERNEL: return need(r, ev, VT_F_ID | VT_F_NAME, err, errlen);
    case VT_EV_PYCODE: return need(r, ev, VT_F_ID, err, errlen);
    case VT_EV_LAUNCH: return need(r, ev, VT_F_T | VT_F_K, err, errlen);
    case VT_EV_COPIES: case VT_EV_SETS: {
        int rc = need(r, ev, ev->type == VT_EV_COPIES ? VT_F_T | VT_F_SIZE | VT_F_DIR : VT_F_T | VT_F_SIZE, err, errlen);
        if (!rc && ev->count == 0) return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "a folded record without its count");
        if (!rc && (ev->bytes > VT_MAX_SANE_SIZE || ev->size > VT_MAX_SANE_SIZE))
            return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "absurd size %llu", (unsigned long long)ev->bytes);
        return rc;
    }
    case VT_EV_LAUNCHES: {
        int rc = need(r, ev, VT_F_T | VT_F_K, err, errlen);
        if (!rc && ev->count == 0) return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "a launches record without its count");
        return rc;
    }
    case VT_EV_FINDING: return need(r, ev, VT_F_T | VT_F_KIND, err, errlen);
    case VT_EV_RANGE_PUSH: return need(r, ev, VT_F_TID | VT_F_NAME, err, errlen);
    case VT_EV_RANGE_POP: return need(r, ev, VT_F_TID, err, errlen);
    case VT_EV_RANGE_START: return need(r, ev, VT_F_ID, err, errlen);
    case VT_EV_RANGE_END: return need(r, ev, VT_F_ID, err, errlen);
    case VT_EV_MODULE: return need(r, ev, VT_F_PATH | VT_F_BASE | VT_F_LO | VT_F_HI, err, errlen);
    case VT_EV_DEVICE: return need(r, ev, VT_F_DEV, err, errlen);
    case VT_EV_SNAPSHOT: return need(r, ev, VT_F_T | VT_F_LABEL, err, errlen);
    case VT_EV_STEP: return need(r, ev, VT_F_T, err, errlen);
    case VT_EV_PAUSE: case VT_EV_RESUME: return need(r, ev, VT_F_T, err, errlen);
    default: return 0;
    }
}

int vt_reader_parse_line(struct vt_reader *r, char *line, size_t len, int first,
                         struct vt_event *ev, char *err, size_t errlen)
{
    if (r->jo) { json_object_put(r->jo); r->jo = NULL; }
    if (r->acap < len + 64) {
        size_t cap = len + 64 > 4096 ? len + 64 : 4096;
        char *a = realloc(r->arena, cap);
        if (!a) return vtr_rd_fail(r, VT_RD_ENOMEM, err, errlen, "out of memory");
        r->arena = a; r->acap = cap;
    }
    for (int pass = 0; pass < 2; pass++) {
        memset(ev, 0, sizeof *ev);
        ev->api = ev->name = ev->kind = ev->severity = ev->msg = ev->cls = ev->mapping = "";
        ev->path = ev->format = ev->tracer = ev->program = ev->hostname = ev->checks = ev->error = ev->label = ev->pci = ev->build_id = "";
        ev->torch_alloc_conf = ev->torch_cuda_alloc_conf = "";
        ev->file = ev->linetable = "";
        ev->dev = -1; ev->rank = ev->local_rank = ev->world_size = -1;
        ev->line = r->line;
        r->alen = 0;
        r->seen_ev = 0;
        int rc = pass == 0 ? vtr_rd_fast_parse(r, line, line + len, ev, err, errlen)
                           : slow_parse(r, line, len, ev, err, errlen);
        if (rc < 0) return rc;
        if (rc == FALLBACK) continue;
        if (!r->seen_ev) return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "record is missing field 'ev'");
        rc = validate(r, ev, first, err, errlen);
        return rc < 0 ? rc : 1;
    }
    return vtr_rd_fail(r, VT_RD_ESYNTAX, err, errlen, "not valid JSON");
}

/* ---- line splitting ------------------------------------------------------------------------ */

static int has_content(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) if (p[i] != '\0') return 1;
    return 0;
}

int vt_reader_next(struct vt_reader *r, struct vt_event *ev, char *err, size_t errlen)
{
    for (;;) {
        char *ln = r->buf + r->start;
        char *nl = memchr(ln, '\n', r->end - r->start);
        if (!nl) {
            if (r->eof) {
                size_t rest = r->end - r->start;
                if (has_content(ln, rest)) {
                    r->line++;
                    warnf(r, "last record has no newline (cut off by a crash), dropped");
                }
                r->start = r->end;
                if (!r->got_header) {
                    r->line = r->line ? r->line : 1;
                    return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "empty trace (no header record)");
                }
                return 0;
            }
            if (r->start > 0) {
                memmove(r->buf, ln, r->end - r->start);
                r->end -= r->start;
                r->start = 0;
            }
            if (r->end == r->cap) {
                if (r->cap > VT_READER_MAX_LINE) {
                    r->line++;
                    return vtr_rd_fail(r, VT_RD_ESYNTAX, err, errlen, "line longer than %u bytes", VT_READER_MAX_LINE);
                }
                char *nb = realloc(r->buf, r->cap * 2);
                if (!nb) return vtr_rd_fail(r, VT_RD_ENOMEM, err, errlen, "out of memory");
                r->buf = nb;
                r->cap *= 2;
            }
            ssize_t n = pread(r->fd, r->buf + r->end, r->cap - r->end, (off_t)r->pos);
            if (n < 0) {
                if (errno == EINTR) continue;
                return vtr_rd_fail(r, VT_RD_EIO, err, errlen, "read error: %s", strerror(errno));
            }
            if (n == 0) r->eof = 1;
            r->end += (size_t)n;
            r->pos += (uint64_t)n;
            continue;
        }
        r->line++;
        size_t len = (size_t)(nl - ln);
        r->start += len + 1;
        int damaged = 0, had_nul = 0;
        char *z = memrchr(ln, '\0', len);
        if (z) {
            had_nul = 1;
            damaged = has_content(ln, (size_t)(z - ln));
            if (damaged) warnf(r, "record cut off by a crash (NUL bytes inside the line), dropped");
            len -= (size_t)(z + 1 - ln);
            ln = z + 1;
        }
        while (len && (ln[len - 1] == '\r' || ln[len - 1] == ' ' || ln[len - 1] == '\t')) len--;
        if (len == 0) continue;
        int rc = vt_reader_parse_line(r, ln, len, !r->got_header, ev, err, errlen);
        /* NULs then the end of a record: one a live writer is still copying (its tail landed
         * first), or one a crash cut, after the padding */
        if (rc < 0 && had_nul && rc != VT_RD_ENOMEM) {
            warnf(r, "damaged record after NUL bytes, dropped (%s)", err);
            continue;
        }
        if (rc < 0) return rc;
        r->got_header = 1;
        return 1;
    }
}
