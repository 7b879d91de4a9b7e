/* reader_fields.c - the trace reader's field table: each key of a record, typed and checked, into
 * struct vt_event; the format's name tables (from vramtrace/trace.h).  Fed by both parsers
 * (reader_fast.c by hand, reader.c through json-c); calls neither. */
#include "report/reader_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>


/* Name tables from vramtrace/trace.h, indexed by the enums reader.h builds from the same lists. */
#define NAME(prefix, id) [prefix##_##id] = prefix##N_##id,
#define EV(id) NAME(VT_EV, id)
#define MEM(id) NAME(VT_MEM, id)
#define DIR(id) NAME(VT_DIR, id)
#define HOST(id) NAME(VT_HOST, id)
static const char *const ev_names[VT_EV__COUNT] = { "unknown", VT_TRACE_EVENTS(EV) };
static const char *const mem_names[VT_MEM__COUNT] = { "none", VT_TRACE_MEMS(MEM) };
static const char *const dir_names[VT_DIR__COUNT] = { "none", VT_TRACE_DIRS(DIR) };
static const char *const host_names[VT_HOST__COUNT] = { "none", VT_TRACE_HOSTS(HOST) };
#undef EV
#undef MEM
#undef DIR
#undef HOST
#undef NAME

const char *vt_rd_ev_name(enum vt_ev_type t) { return (unsigned)t < VT_EV__COUNT ? ev_names[t] : "?"; }
const char *vt_rd_mem_name(enum vt_mem m) { return (unsigned)m < VT_MEM__COUNT ? mem_names[m] : "?"; }
const char *vt_rd_dir_name(enum vt_dir d) { return (unsigned)d < VT_DIR__COUNT ? dir_names[d] : "?"; }
const char *vt_rd_host_name(enum vt_host h) { return (unsigned)h < VT_HOST__COUNT ? host_names[h] : "?"; }

static int lookup(const char *const *names, int count, const char *s, size_t n)
{
    for (int i = 1; i < count; i++)
        if (names[i][0] == s[0] && strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return i;
    return -1;
}

int vtr_rd_ev_lookup(const char *s, size_t n) { return lookup(ev_names, VT_EV__COUNT, s, n); }

__attribute__((format(printf, 5, 6)))
int vtr_rd_fail(struct vt_reader *r, int code, char *err, size_t errlen, const char *fmt, ...)
{
    int n = snprintf(err, errlen, "%s:%ld: ", r->path, r->line);
    if (n < 0) n = 0;
    if ((size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* ---- typed field extraction ---------------------------------------------------------------- */

static const char *type_name(int t)
{
    static const char *const n[] = { "null", "a boolean", "an integer", "a number", "a string",
                                     "an array", "an object" };
    return n[t];
}

const char *vtr_rd_keep_str(struct vt_reader *r, const char *s, size_t n)
{
    if (r->alen + n + 1 > r->acap) return "";      /* cannot happen: arena sized per line */
    char *d = r->arena + r->alen;
    memcpy(d, s, n);
    d[n] = '\0';
    r->alen += n + 1;
    return d;
}

static int parse_hex(const char *s, size_t n, uint64_t *out)
{
    if (n < 3 || n > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return -1;
    uint64_t v = 0;
    for (size_t i = 2; i < n; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 0;
}

#define WANT(cond, what) do { if (!(cond)) return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, \
        "field '%.*s' must be %s, got %s", (int)kn, k, what, type_name(v->type)); } while (0)

static int get_i64(struct vt_reader *r, const char *k, size_t kn, const struct jval *v,
                   int64_t *out, int nonneg, char *err, size_t errlen)
{
    WANT(v->type == JV_INT, "an integer");
    if (v->big) return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field '%.*s' is out of range%s", (int)kn, k,
                            v->big == 2 ? " (beyond 64 bits)" : "");
    if (nonneg && v->i < 0)
        return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field '%.*s' is negative (%lld)", (int)kn, k,
                    (long long)v->i);
    *out = v->i;
    return 0;
}

static int get_u64(struct vt_reader *r, const char *k, size_t kn, const struct jval *v,
                   uint64_t *out, char *err, size_t errlen)
{
    WANT(v->type == JV_INT, "an integer");
    if (v->big == 2) return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field '%.*s' is out of range (more than 2^64-1)", (int)kn, k);
    if (!v->big && v->i < 0)
        return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field '%.*s' is negative (%lld)", (int)kn, k,
                    (long long)v->i);
    *out = v->big ? v->u : (uint64_t)v->i;
    return 0;
}

static int get_hex(struct vt_reader *r, const char *k, size_t kn, const struct jval *v,
                   uint64_t *out, char *err, size_t errlen)
{
    WANT(v->type == JV_STR, "a hex string");
    if (parse_hex(v->s, v->n, out) < 0)
        return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field '%.*s' is not a hex address (\"%.*s\")",
                    (int)kn, k, (int)(v->n > 40 ? 40 : v->n), v->s);
    return 0;
}

static int get_enum(struct vt_reader *r, const char *k, size_t kn, const struct jval *v,
                    const char *const *names, int count, int *out, char *err, size_t errlen)
{
    WANT(v->type == JV_STR, "a string");
    int e = lookup(names, count, v->s, v->n);
    if (e < 0)
        return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field '%.*s' has unknown value \"%.*s\"",
                    (int)kn, k, (int)(v->n > 40 ? 40 : v->n), v->s);
    *out = e;
    return 0;
}

static int64_t rank_var(json_object *o, const char *const *names)
{
    for (; *names; names++) {
        json_object *x;
        if (!json_object_object_get_ex(o, *names, &x)) continue;
        const char *s = json_object_get_string(x);
        char *end;
        long long v = s ? strtoll(s, &end, 10) : 0;
        if (s && *s && !*end && v >= 0 && v < (1ll << 31)) return v;
    }
    return -1;
}

/* Every record field goes down this chain (keys it does not need go all the way), so each test
 * is first one compare of (length, first, last character) against a constant. */
#define KEY_SIG(n, first, last) ((uint32_t)(n) | (uint32_t)(unsigned char)(first) << 8 | (uint32_t)(unsigned char)(last) << 16)
#define KEY(lit) (ksig == KEY_SIG(sizeof(lit) - 1, lit[0], lit[sizeof(lit) - 2]) && memcmp(k, lit, sizeof(lit) - 1) == 0)
#define STR(dst) do { WANT(v->type == JV_STR, "a string"); (dst) = vtr_rd_keep_str(r, v->s, v->n); } while (0)
#define I64(dst, nn, bit) do { rc = get_i64(r, k, kn, v, &(dst), nn, err, errlen); ev->has |= (bit); } while (0)
#define HEX(dst, bit) do { rc = get_hex(r, k, kn, v, &(dst), err, errlen); ev->has |= (bit); } while (0)

static inline unsigned skip_slot(uint32_t sig) { return (sig * 0x9E3779B1u) >> 26; }
static inline int skipped_key(const struct vt_reader *r, const char *k, size_t kn, uint32_t sig)
{
    unsigned i = skip_slot(sig);
    return r->skip[i].sig == sig && r->skip[i].n == kn && memcmp(r->skip[i].k, k, kn) == 0;
}
static void remember_skipped(struct vt_reader *r, const char *k, size_t kn, uint32_t sig)
{
    if (!kn || kn >= sizeof r->skip[0].k) return;
    unsigned i = skip_slot(sig);
    r->skip[i].sig = sig;
    r->skip[i].n = (uint8_t)kn;
    memcpy(r->skip[i].k, k, kn);
}

/* "MAJOR.MINOR" (what the tracer writes: "9.0", "12.1") as MAJOR * 10 + MINOR, read from the
 * value's own bytes; 0 (unknown) unless a major below 100 and one minor digit lead it. */
static int compute_capability(const char *s, size_t n)
{
    size_t i = 0;
    unsigned maj = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9' && maj < 100) maj = maj * 10 + (unsigned)(s[i++] - '0');
    if (i == 0 || maj >= 100 || i + 1 >= n || s[i] != '.' || s[i + 1] < '0' || s[i + 1] > '9') return 0;
    if (i + 2 < n && s[i + 2] >= '0' && s[i + 2] <= '9') return 0; /* a minor of two digits */
    return (int)(maj * 10 + (unsigned)(s[i + 1] - '0'));
}

int vtr_rd_field(struct vt_reader *r, struct vt_event *ev, const char *k, size_t kn,
                 const struct jval *v, char *err, size_t errlen)
{
    int rc = 0, e = 0;
    const uint32_t ksig = kn ? KEY_SIG(kn, k[0], k[kn - 1]) : 0;
    if (KEY("ev")) {
        WANT(v->type == JV_STR, "a string");
        r->seen_ev = 1;
        e = lookup(ev_names, VT_EV__COUNT, v->s, v->n);
        ev->type = e < 0 ? VT_EV_UNKNOWN : (enum vt_ev_type)e;
    } else if (KEY("t")) I64(ev->t, 1, VT_F_T);
    else if (KEY("dur")) I64(ev->dur, 1, VT_F_DUR);
    else if (KEY("tid")) I64(ev->tid, 1, VT_F_TID);
    else if (KEY("api")) { STR(ev->api); ev->has |= VT_F_API; }
    else if (KEY("res")) {
        ev->has |= VT_F_RES;
        /* a key given twice (JSON leaves it open): the last value wins, so a null result is
         * always res 0 and a number clears an earlier null (the analysis reads either alone) */
        if (v->type == JV_NULL) { ev->res_null = 1; ev->res = 0; }
        else { ev->res_null = 0; rc = get_i64(r, k, kn, v, &ev->res, 0, err, errlen); }
    } else if (KEY("dev")) {
        I64(ev->dev, 0, VT_F_DEV);
        if (!rc && !vtr_rd_dev_ok(ev->dev))
            return vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field 'dev' is out of range (%lld)", (long long)ev->dev);
    } else if (KEY("k")) I64(ev->k, 1, VT_F_K);
    else if (KEY("stream")) { HEX(ev->stream, 0); ev->has_stream = 1; }
    else if (KEY("addr")) HEX(ev->addr, VT_F_ADDR);
    else if (KEY("src")) HEX(ev->src, 0);
    else if (KEY("dst")) HEX(ev->dst, 0);
    else if (KEY("size")) { rc = get_u64(r, k, kn, v, &ev->size, err, errlen); ev->has |= VT_F_SIZE; }
    else if (skipped_key(r, k, kn, ksig)) return 0; /* grid, block, shmem, src, dst...: seen, not needed */
    else if (KEY("mem")) {
        rc = get_enum(r, k, kn, v, mem_names, VT_MEM__COUNT, &e, err, errlen);
        if (!rc) { ev->mem = (enum vt_mem)e; ev->has |= VT_F_MEM; }
    } else if (KEY("dir")) {
        rc = get_enum(r, k, kn, v, dir_names, VT_DIR__COUNT, &e, err, errlen);
        if (!rc) { ev->dir = (enum vt_dir)e; ev->has |= VT_F_DIR; }
    } else if (KEY("host")) {
        rc = get_enum(r, k, kn, v, host_names, VT_HOST__COUNT, &e, err, errlen);
        if (!rc) { ev->host = (enum vt_host)e; ev->has |= VT_F_HOST; }
    } else if (KEY("bt")) {
        WANT(v->type == JV_ARR, "an array");
        size_t n = v->n < VT_READER_MAX_BT ? v->n : VT_READER_MAX_BT;
        for (size_t i = 0; i < n && !rc; i++) {
            const struct jval *x = &v->elems[i];
            if (x->type != JV_STR || parse_hex(x->s, x->n, &r->bt[i]) < 0)
                rc = vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field 'bt' element %zu is not a hex address", i);
        }
        ev->bt = r->bt; ev->nbt = n; ev->has |= VT_F_BT;
    } else if (KEY("handle")) HEX(ev->handle, VT_F_HANDLE);
    else if (KEY("free_bytes")) { rc = get_u64(r, k, kn, v, &ev->free_bytes, err, errlen); ev->has |= VT_F_FREE; }
    else if (KEY("total_bytes")) { rc = get_u64(r, k, kn, v, &ev->total_bytes, err, errlen); ev->has |= VT_F_TOTAL; }
    else if (KEY("async")) { WANT(v->type == JV_BOOL, "a boolean"); ev->async = (int)v->i; ev->has |= VT_F_ASYNC; }
    else if (KEY("captured")) { WANT(v->type == JV_BOOL, "a boolean"); ev->captured = (int)v->i; }
    else if (KEY("graph")) { WANT(v->type == JV_BOOL, "a boolean"); ev->graph = (int)v->i; }
    else if (KEY("id")) I64(ev->id, 0, VT_F_ID);
    else if (KEY("name")) { STR(ev->name); ev->has |= VT_F_NAME; }
    else if (KEY("kind")) {             /* a string on findings; the cudaMemcpyKind integer on copies */
        if (v->type == JV_STR) { ev->kind = vtr_rd_keep_str(r, v->s, v->n); ev->has |= VT_F_KIND; }
        else WANT(v->type == JV_INT, "a string or an integer");
    } else if (KEY("severity")) STR(ev->severity);
    else if (KEY("msg")) STR(ev->msg);
    else if (KEY("class")) STR(ev->cls);
    else if (KEY("mapping")) STR(ev->mapping);
    else if (KEY("arg")) I64(ev->arg, 1, VT_F_ARG);
    else if (KEY("offset")) I64(ev->offset, 1, 0);
    else if (KEY("count")) rc = get_u64(r, k, kn, v, &ev->count, err, errlen);
    else if (KEY("first")) I64(ev->first, 1, 0);
    else if (KEY("last")) I64(ev->last, 1, 0);
    else if (KEY("bytes")) rc = get_u64(r, k, kn, v, &ev->bytes, err, errlen);
    else if (KEY("value")) {            /* hex string on findings; the memset byte (integer) on `set` */
        if (v->type == JV_INT) rc = get_u64(r, k, kn, v, &ev->value, err, errlen);
        else HEX(ev->value, 0);
        ev->has |= VT_F_VALUE;
    } else if (KEY("alloc")) {
        WANT(v->type == JV_OBJ, "an object");
        json_object *a, *s;
        if (v->jo && json_object_object_get_ex(v->jo, "addr", &a) &&
            json_object_is_type(a, json_type_string))
            parse_hex(json_object_get_string(a), strlen(json_object_get_string(a)), &ev->alloc_addr);
        if (v->jo && json_object_object_get_ex(v->jo, "size", &s) && json_object_is_type(s, json_type_int))
            ev->alloc_size = (uint64_t)json_object_get_int64(s);
        ev->has |= VT_F_ALLOCREF;
    } else if (KEY("path")) { STR(ev->path); ev->has |= VT_F_PATH; }
    else if (KEY("base")) HEX(ev->base, VT_F_BASE);
    else if (KEY("lo")) HEX(ev->lo, VT_F_LO);
    else if (KEY("hi")) HEX(ev->hi, VT_F_HI);
    else if (KEY("sim")) { WANT(v->type == JV_BOOL, "a boolean"); ev->sim = (int)v->i; }
    else if (KEY("file")) STR(ev->file);
    else if (KEY("linetable")) STR(ev->linetable);
    else if (KEY("line")) I64(ev->pyline, 1, 0);
    else if (KEY("pyver")) { int64_t pv = 0; I64(pv, 0, 0); ev->pyver = (int)pv; }
    else if (KEY("cc")) { WANT(v->type == JV_STR, "a string"); ev->cc = compute_capability(v->s, v->n); }
    else if (KEY("params")) { /* [[offset, size], ...] */
        WANT(v->type == JV_ARR, "an array");
        size_t n = 0;
        if (v->jo) {
            size_t len = json_object_array_length(v->jo);
            for (size_t i = 0; i < len && n < VT_READER_MAX_PARAMS; i++) {
                json_object *pair = json_object_array_get_idx(v->jo, i);
                if (!json_object_is_type(pair, json_type_array) || json_object_array_length(pair) != 2) {
                    rc = vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field 'params' element %zu is not an [offset, size] pair", i);
                    break;
                }
                int64_t o = json_object_get_int64(json_object_array_get_idx(pair, 0));
                int64_t z = json_object_get_int64(json_object_array_get_idx(pair, 1));
                if (o < 0 || z < 0 || o > 65535 || z > 65535) {
                    rc = vtr_rd_fail(r, VT_RD_ESCHEMA, err, errlen, "field 'params' element %zu is out of range", i);
                    break;
                }
                r->params[2 * n] = (uint32_t)o;
                r->params[2 * n + 1] = (uint32_t)z;
                n++;
            }
        }
        ev->params = r->params;
        ev->nparams = n;
    }
    else if (KEY("pci")) STR(ev->pci);
    else if (KEY("build_id")) STR(ev->build_id);
    else if (KEY("file_size")) rc = get_u64(r, k, kn, v, &ev->file_size, err, errlen);
    else if (KEY("mtime")) I64(ev->mtime, 1, 0);
    else if (KEY("wall_time_ns")) I64(ev->wall_time_ns, 1, 0);
    else if (KEY("format")) { STR(ev->format); ev->has |= VT_F_FORMAT; }
    else if (KEY("version")) I64(ev->version, 0, VT_F_VERSION);
    else if (KEY("tracer")) STR(ev->tracer);
    else if (KEY("pid")) I64(ev->pid, 1, VT_F_PID);
    else if (KEY("ppid")) I64(ev->ppid, 1, 0);
    else if (KEY("program")) STR(ev->program);
    else if (KEY("hostname")) STR(ev->hostname);
    else if (KEY("checks")) STR(ev->checks);
    else if (KEY("torch_alloc_conf")) STR(ev->torch_alloc_conf);
    else if (KEY("torch_cuda_alloc_conf")) STR(ev->torch_cuda_alloc_conf);
    else if (KEY("torch_tensors")) { WANT(v->type == JV_BOOL, "a boolean"); ev->torch_tensors = (int)v->i; }
    else if (KEY("wall_time")) {
        if (v->type == JV_DBL) { ev->wall_time = 0; ev->has |= VT_F_WALL; }
        else I64(ev->wall_time, 1, VT_F_WALL);
    } else if (KEY("page_size")) I64(ev->page_size, 1, 0);
    else if (KEY("rank")) {
        WANT(v->type == JV_OBJ, "an object");
        static const char *const rk[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", NULL };
        static const char *const lr[] = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", NULL };
        static const char *const ws[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", NULL };
        if (v->jo) { ev->rank = rank_var(v->jo, rk); ev->local_rank = rank_var(v->jo, lr);
                     ev->world_size = rank_var(v->jo, ws); }
    } else if (KEY("events")) I64(ev->events, 1, 0);
    else if (KEY("dropped")) I64(ev->dropped, 1, 0);
    else if (KEY("live_bytes")) I64(ev->live_bytes, 1, 0);
    else if (KEY("findings")) I64(ev->findings, 1, 0);
    else if (KEY("error")) STR(ev->error);
    else if (KEY("label")) { STR(ev->label); ev->has |= VT_F_LABEL; }
    else if (KEY("depth")) I64(ev->depth, 1, 0);
    else if (KEY("skipped")) rc = get_u64(r, k, kn, v, &ev->skipped, err, errlen);
    else if (KEY("keep") || KEY("release_threshold")) { rc = get_u64(r, k, kn, v, &ev->keep, err, errlen); ev->has_keep = 1; }
    else if (KEY("reserved_after")) { rc = get_u64(r, k, kn, v, &ev->reserved_after, err, errlen); ev->has_reserved_after = 1; }
    /* everything else (src, dst, grid, block, params, argv, pitch, ...) is not needed */
    else remember_skipped(r, k, kn, ksig);
    return rc;
}
