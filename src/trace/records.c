/* records.c - JSON lines from journal records (docs/trace-format.md); used by the drain thread
 * and by crash recovery in the CLI. */
#include "records.h"

#include <string.h>

#include <vramtrace/trace.h>
#include "jsonl.h"

/* A record's `mem` is the registry's enum vt_mem, which is vramtrace/trace.h's list in order
 * (registry.h builds it from VT_TRACE_MEMS); an out-of-range value reads "unknown". */
#define VT_X(id) VT_MEMN_##id,
static const char *const mem_names[] = { VT_TRACE_MEMS(VT_X) };
#undef VT_X
static inline const char *mem_name(unsigned mem) { return mem < sizeof mem_names / sizeof *mem_names ? mem_names[mem] : "unknown"; }
#define VT_X(id) VT_DIRN_##id,
static const char *const dir_names[] = { VT_TRACE_DIRS(VT_X) };   /* enum vt_dir's order */
#undef VT_X
#define VT_X(id) VT_HOSTN_##id,
static const char *const host_names[] = { NULL, VT_TRACE_HOSTS(VT_X) };   /* 0: no host side */
#undef VT_X

/* {"ev":EV,"t":..,"dur":..,"tid":..,"api":..,"res":..,"dev":..  — the fixed part (< 200 bytes,
 * the API name is capped) always fits a buffer of LINE_MIN bytes, so it is written unchecked. */
#define LINE_MIN 512

/* Table names are NUL-terminated within VT_API_NAME_MAX (api_names.h): copy the whole field at
 * once and advance by the name's length. */
static inline char *api_name(char *p, const char *name)
{
    memcpy(p, name, VT_API_NAME_MAX);
    return p + strnlen(name, VT_API_NAME_MAX - 1);
}

void vt_record_begin(vt_line *l, const char *ev, const struct vt_rec_call *c, const struct vt_api_names *names, int res_null)
{
    char *p = l->p;
    p = VT_W_LIT(p, "{\"ev\":\"");
    p = vt_w_ident(p, ev, 16);
    p = VT_W_LIT(p, "\",\"t\":");
    p = vt_w_u64(p, c->t0);
    p = VT_W_LIT(p, ",\"dur\":");
    p = vt_w_u64(p, c->dur);
    p = VT_W_LIT(p, ",\"tid\":");
    p = vt_w_i64(p, c->tid);
    p = VT_W_LIT(p, ",\"api\":\"");
    p = api_name(p, vt_api_name(names, c->api));
    if (res_null) p = VT_W_LIT(p, "\",\"res\":null,\"dev\":");
    else {
        p = VT_W_LIT(p, "\",\"res\":");
        p = vt_w_i64(p, c->res);
        p = VT_W_LIT(p, ",\"dev\":");
    }
    p = vt_w_i64(p, c->dev);
    l->p = p;
}

static void put_bt(vt_line *l, const uint64_t *frames, unsigned n)
{
    if (!n) return;
    VT_PUT_LIT(l, ",\"bt\":[");
    for (unsigned i = 0; i < n; i++) {
        if (i) VT_PUT_LIT(l, ",");
        vt_put_hex(l, frames[i]);
    }
    VT_PUT_LIT(l, "]");
}

static void fmt_alloc(vt_line *l, const struct vt_api_names *names, const struct vt_rec_alloc *a)
{
    vt_record_begin(l, VT_EVN_ALLOC, &a->c, names, 0);
    int ok = a->c.res == 0;
    if (ok && !a->is_handle) { vt_put_key(l, "addr"); vt_put_hex(l, a->addr); }
    vt_put_key(l, "size"); vt_put_u64(l, a->size);
    vt_put_key(l, "mem"); vt_put_str(l, mem_name(a->mem));
    if (a->is_handle && ok) { vt_put_key(l, "handle"); vt_put_hex(l, a->handle); }
    if (a->has_stream) { vt_put_key(l, "stream"); vt_put_hex(l, a->stream); }
    if (a->graph) VT_PUT_LIT(l, ",\"graph\":true");
    if (a->pitch) {
        vt_put_key(l, "pitch"); vt_put_u64(l, a->pitch);
        vt_put_key(l, "width"); vt_put_u64(l, a->width);
        vt_put_key(l, "height"); vt_put_u64(l, a->height);
    }
    if (a->has_meminfo) {
        vt_put_key(l, "free_bytes"); vt_put_u64(l, a->free_b);
        vt_put_key(l, "total_bytes"); vt_put_u64(l, a->total_b);
    }
    put_bt(l, a->frames, a->nframes);
}

static void fmt_free(vt_line *l, const struct vt_api_names *names, const struct vt_rec_free *f)
{
    char *p = l->p;
    p = VT_W_LIT(p, "{\"ev\":\"" VT_EVN_FREE "\",\"t\":");
    p = vt_w_u64(p, f->c.t0);
    p = VT_W_LIT(p, ",\"tid\":");
    p = vt_w_i64(p, f->c.tid);
    p = VT_W_LIT(p, ",\"api\":\"");
    p = api_name(p, vt_api_name(names, f->c.api));
    p = VT_W_LIT(p, "\",\"dev\":");
    p = vt_w_i64(p, f->c.dev);
    p = f->is_handle ? VT_W_LIT(p, ",\"handle\":") : VT_W_LIT(p, ",\"addr\":");
    p = vt_w_hex(p, f->addr);
    if (f->known) {
        p = VT_W_LIT(p, ",\"size\":");
        p = vt_w_u64(p, f->size);
        l->p = p;
        vt_put_key(l, "mem");
        vt_put_str(l, mem_name(f->mem));
        p = l->p;
    }
    if (f->has_stream) { p = VT_W_LIT(p, ",\"stream\":"); p = vt_w_hex(p, f->stream); }
    p = VT_W_LIT(p, ",\"res\":");
    p = vt_w_i64(p, f->c.res);
    p = VT_W_LIT(p, ",\"dur\":");
    p = vt_w_u64(p, f->c.dur);
    l->p = p;
}

/* A launch, copy or memset captured into a graph (not done now), or done by a graph launch. */
static char *graph_role(char *p, uint8_t graph)
{
    if (graph == 1) return VT_W_LIT(p, ",\"captured\":true");
    if (graph == 2) return VT_W_LIT(p, ",\"graph\":true");
    return p;
}

static void fmt_copy_as(vt_line *l, const struct vt_api_names *names, const struct vt_rec_copy *x, const char *ev)
{
    vt_record_begin(l, ev, &x->c, names, 0);
    char *p = l->p;
    p = VT_W_LIT(p, ",\"dst\":");
    p = vt_w_hex(p, x->dst);
    p = VT_W_LIT(p, ",\"src\":");
    p = vt_w_hex(p, x->src);
    p = VT_W_LIT(p, ",\"size\":");
    p = vt_w_u64(p, x->size);
    p = VT_W_LIT(p, ",\"dir\":\"");
    p = vt_w_ident(p, dir_names[x->dir & 3], 4);
    *p++ = '"';
    if (x->host && x->host < 4) {
        p = VT_W_LIT(p, ",\"host\":\"");
        p = vt_w_ident(p, host_names[x->host], 10);
        *p++ = '"';
    }
    if (x->async) {
        p = VT_W_LIT(p, ",\"async\":true,\"stream\":");
        p = vt_w_hex(p, x->stream);
    } else p = VT_W_LIT(p, ",\"async\":false");
    if (x->kind >= 0) { p = VT_W_LIT(p, ",\"kind\":"); p = vt_w_i64(p, x->kind); }
    if (x->is_2d) {
        p = VT_W_LIT(p, ",\"width\":"); p = vt_w_u64(p, x->width);
        p = VT_W_LIT(p, ",\"height\":"); p = vt_w_u64(p, x->height);
        p = VT_W_LIT(p, ",\"dpitch\":"); p = vt_w_u64(p, x->dpitch);
        p = VT_W_LIT(p, ",\"spitch\":"); p = vt_w_u64(p, x->spitch);
    }
    if (x->src_dev >= 0) { p = VT_W_LIT(p, ",\"src_dev\":"); p = vt_w_i64(p, x->src_dev); }
    l->p = graph_role(p, x->graph);
    put_bt(l, x->frames, x->nframes);
}
static void fmt_copy(vt_line *l, const struct vt_api_names *names, const struct vt_rec_copy *x) { fmt_copy_as(l, names, x, VT_EVN_COPY); }

/* ,"count":N,"bytes":B,"last":T: what a folded record adds to its first one's fields */
static void fold_tail(vt_line *l, uint64_t count, uint64_t bytes, uint64_t last_end)
{
    char *p = l->p;
    p = VT_W_LIT(p, ",\"count\":");
    p = vt_w_u64(p, count);
    p = VT_W_LIT(p, ",\"bytes\":");
    p = vt_w_u64(p, bytes);
    p = VT_W_LIT(p, ",\"last\":");
    l->p = vt_w_u64(p, last_end);
}

static void fmt_set_as(vt_line *l, const struct vt_api_names *names, const struct vt_rec_set *s, const char *ev)
{
    vt_record_begin(l, ev, &s->c, names, 0);
    char *p = l->p;
    p = VT_W_LIT(p, ",\"addr\":");
    p = vt_w_hex(p, s->addr);
    p = VT_W_LIT(p, ",\"size\":");
    p = vt_w_u64(p, s->size);
    p = VT_W_LIT(p, ",\"value\":");
    p = vt_w_i64(p, s->value);
    if (s->async) { p = VT_W_LIT(p, ",\"async\":true,\"stream\":"); p = vt_w_hex(p, s->stream); }
    else p = VT_W_LIT(p, ",\"async\":false");
    l->p = graph_role(p, s->graph);
}
static void fmt_set(vt_line *l, const struct vt_api_names *names, const struct vt_rec_set *s) { fmt_set_as(l, names, s, VT_EVN_SET); }

/* A launch line's fields after the call head; EV "launch", or "launches" for a folded count. */
static char *launch_fields(vt_line *l, const struct vt_api_names *names, const char *ev, const struct vt_rec_call *c,
                           uint32_t kid, const uint32_t grid[3], const uint32_t block[3], uint64_t shmem, uint64_t stream)
{
    vt_record_begin(l, ev, c, names, 0);
    char *p = l->p;
    p = VT_W_LIT(p, ",\"k\":");
    p = vt_w_u64(p, kid);
    p = VT_W_LIT(p, ",\"grid\":[");
    p = vt_w_u64(p, grid[0]); *p++ = ','; p = vt_w_u64(p, grid[1]); *p++ = ','; p = vt_w_u64(p, grid[2]);
    p = VT_W_LIT(p, "],\"block\":[");
    p = vt_w_u64(p, block[0]); *p++ = ','; p = vt_w_u64(p, block[1]); *p++ = ','; p = vt_w_u64(p, block[2]);
    p = VT_W_LIT(p, "],\"shmem\":");
    p = vt_w_u64(p, shmem);
    p = VT_W_LIT(p, ",\"stream\":");
    return vt_w_hex(p, stream);
}

static void fmt_launch(vt_line *l, const struct vt_api_names *names, const struct vt_rec_launch *k)
{
    char *p = launch_fields(l, names, VT_EVN_LAUNCH, &k->c, k->k, k->grid, k->block, k->shmem, k->stream);
    l->p = graph_role(p, k->graph);
}

static void fmt_launches(vt_line *l, const struct vt_api_names *names, const struct vt_rec_launches *k)
{
    char *p = launch_fields(l, names, VT_EVN_LAUNCHES, &k->c, k->k, k->grid, k->block, k->shmem, k->stream);
    p = VT_W_LIT(p, ",\"count\":");
    p = vt_w_u64(p, k->count);
    p = VT_W_LIT(p, ",\"last\":");
    p = vt_w_u64(p, k->last_end);
    l->p = graph_role(p, k->graph);
}

static void fmt_meminfo(vt_line *l, const struct vt_api_names *names, const struct vt_rec_meminfo *m)
{
    vt_record_begin(l, VT_EVN_MEMINFO, &m->c, names, 0);
    if (m->c.res == 0) {
        char *p = l->p;
        p = VT_W_LIT(p, ",\"free_bytes\":");
        p = vt_w_u64(p, m->free_b);
        p = VT_W_LIT(p, ",\"total_bytes\":");
        p = vt_w_u64(p, m->total_b);
        l->p = p;
    }
}

size_t vt_record_format(int type, const void *rec, size_t len, int incomplete, const struct vt_api_names *names,
                        char *buf, size_t cap)
{
    if (incomplete) return 0; /* its writer died while filling it: the fields cannot be trusted */
    if (type == VT_R_TEXT) {
        const struct vt_rec_text *t = rec;
        if (len < sizeof *t || t->len > len - sizeof *t || t->len > cap || t->len == 0) return 0;
        /* Only what the tracer writes: one JSON record line, its control bytes escaped. A ring is
         * read back from disk, where anything may have been written into it. */
        static const char head[] = "{\"ev\":\"";
        if (t->len < sizeof head + 2 || memcmp(t->text, head, sizeof head - 1) || t->text[t->len - 1] != '\n' ||
            t->text[t->len - 2] != '}')
            return 0;
        for (size_t i = 0; i + 1 < t->len; i++)
            if ((unsigned char)t->text[i] < 0x20) return 0;
        memcpy(buf, t->text, t->len);
        return t->len;
    }
    if (cap < LINE_MIN) return 0;
    vt_line l;
    vt_line_init(&l, buf, cap - 2);
    switch (type) {
    case VT_R_ALLOC: {
        const struct vt_rec_alloc *a = rec;
        if (len < sizeof *a || a->nframes > (len - sizeof *a) / sizeof a->frames[0]) return 0;
        fmt_alloc(&l, names, a);
        break;
    }
    case VT_R_FREE: if (len < sizeof(struct vt_rec_free)) return 0; fmt_free(&l, names, rec); break;
    case VT_R_COPY: {
        const struct vt_rec_copy *c = rec;
        if (len < sizeof *c || c->nframes > (len - sizeof *c) / sizeof c->frames[0]) return 0;
        fmt_copy(&l, names, c);
        break;
    }
    case VT_R_COPIES: {
        const struct vt_rec_fold *f = rec;
        const struct vt_rec_copy *c = (const void *)(f + 1);
        size_t head = sizeof *f + sizeof *c;
        if (len < head || c->nframes > (len - head) / sizeof c->frames[0]) return 0;
        fmt_copy_as(&l, names, c, VT_EVN_COPIES);
        fold_tail(&l, f->count, f->bytes, f->last_end);
        break;
    }
    case VT_R_SET: if (len < sizeof(struct vt_rec_set)) return 0; fmt_set(&l, names, rec); break;
    case VT_R_SETS: {
        const struct vt_rec_fold *f = rec;
        if (len < sizeof *f + sizeof(struct vt_rec_set)) return 0;
        fmt_set_as(&l, names, (const void *)(f + 1), VT_EVN_SETS);
        fold_tail(&l, f->count, f->bytes, f->last_end);
        break;
    }
    case VT_R_LAUNCH: if (len < sizeof(struct vt_rec_launch)) return 0; fmt_launch(&l, names, rec); break;
    case VT_R_LAUNCHES: if (len < sizeof(struct vt_rec_launches)) return 0; fmt_launches(&l, names, rec); break;
    case VT_R_SYNC: {
        const struct vt_rec_sync *y = rec;
        if (len < sizeof *y) return 0;
        vt_record_begin(&l, VT_EVN_SYNC, rec, names, 0);
        if (y->has_stream) { vt_put_key(&l, "stream"); vt_put_hex(&l, y->stream); }
        break;
    }
    case VT_R_MEMINFO: if (len < sizeof(struct vt_rec_meminfo)) return 0; fmt_meminfo(&l, names, rec); break;
    default: return 0;
    }
    VT_PUT_LIT(&l, "}\n");
    return l.overflow ? 0 : vt_line_len(&l);
}
