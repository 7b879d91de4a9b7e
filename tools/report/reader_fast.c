/* reader_fast.c - the trace reader's hand-written parser for flat records as the tracer writes
 * them (escape-free strings, integers, flat arrays of scalars); anything else goes back to
 * reader.c's strict json-c path. Never accepts what json-c would reject. */
#include "report/reader_int.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const char *fast_str(const char *p, const char *e, struct jval *v)
{   /* p after the opening quote; NULL = not for the fast path */
    const char *s = p;
    /* 1: ends the fast scan ('"', '\\', control characters) */
    static const unsigned char stop[256] = {
        [0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1,
    };
    while (p < e && !stop[(unsigned char)*p]) p++;
    if (p < e && *p != '"') return NULL;
    if (p >= e) return NULL;
    v->type = JV_STR; v->s = s; v->n = (size_t)(p - s);
    return p + 1;
}

static const char *fast_scalar(const char *p, const char *e, struct jval *v)
{
    v->big = 0;
    if (p >= e) return NULL;
    char c = *p;
    if (c == '"') return fast_str(p + 1, e, v);
    if (c == '-' || (c >= '0' && c <= '9')) {
        int neg = c == '-';
        if (neg) p++;
        const char *d = p;
        uint64_t u = 0;
        int over = 0; /* more than 2^64-1: said as out of range, never clamped (json-c clamps) */
        while (p < e && *p >= '0' && *p <= '9') {
            unsigned dgt = (unsigned)(*p - '0');
            if (u > (UINT64_MAX - dgt) / 10) over = 1;
            else u = u * 10 + dgt;
            p++;
        }
        size_t nd = (size_t)(p - d);
        if (nd == 0 || (nd > 1 && *d == '0')) return NULL;
        if (p < e && (*p == '.' || *p == 'e' || *p == 'E')) return NULL;
        v->type = JV_INT;
        if (over || (neg && u > (uint64_t)INT64_MAX + 1)) { v->big = 2; v->u = UINT64_MAX; v->i = neg ? INT64_MIN : INT64_MAX; }
        else if (neg) v->i = (int64_t)(0 - u);
        else if (u > (uint64_t)INT64_MAX) { v->big = 1; v->u = u; v->i = INT64_MAX; }
        else v->i = (int64_t)u;
        return p;
    }
    if (e - p >= 4 && !memcmp(p, "null", 4)) { v->type = JV_NULL; return p + 4; }
    if (e - p >= 4 && !memcmp(p, "true", 4)) { v->type = JV_BOOL; v->i = 1; return p + 4; }
    if (e - p >= 5 && !memcmp(p, "false", 5)) { v->type = JV_BOOL; v->i = 0; return p + 5; }
    return NULL;
}

/* ---- the head every call record starts with, as records.c writes it ------------------------
 * {"ev":"NAME","t":N,"dur":N,"tid":N,"api":"NAME","res":N|null,"dev":N  -- most of every line
 * of a real trace. Matched literally, it skips the key scans and the field() chain; anything
 * else (another order, spaces, escapes, odd values) returns NULL and the general loop parses the
 * whole line, reporting any error exactly as before. */
#define HEAD_LIT(lit) (e - p >= (ptrdiff_t)sizeof(lit) - 1 && memcmp(p, lit, sizeof(lit) - 1) == 0 ? (p += sizeof(lit) - 1, 1) : 0)

/* An integer field of the head: fast_scalar's number, within int64, not negative unless allowed
 * (anything else: NULL, and the general path gives its error). */
static inline const char *head_int(const char *p, const char *e, int64_t *out, int allow_neg)
{
    struct jval v;
    if (!(p = fast_scalar(p, e, &v)) || v.type != JV_INT || v.big || (!allow_neg && v.i < 0)) return NULL;
    *out = v.i;
    return p;
}

static const char *call_head(struct vt_reader *r, const char *p, const char *e, struct vt_event *ev)
{
    struct jval v;
    int64_t x;
    if (!HEAD_LIT("{\"ev\":\"") || !(p = fast_str(p, e, &v))) return NULL;
    int t = vtr_rd_ev_lookup(v.s, v.n);
    if (!HEAD_LIT(",\"t\":") || !(p = head_int(p, e, &ev->t, 0))) return NULL;
    if (!HEAD_LIT(",\"dur\":") || !(p = head_int(p, e, &ev->dur, 0))) return NULL;
    if (!HEAD_LIT(",\"tid\":") || !(p = head_int(p, e, &ev->tid, 0))) return NULL;
    if (!HEAD_LIT(",\"api\":\"") || !(p = fast_str(p, e, &v))) return NULL;
    if (!HEAD_LIT(",\"res\":")) return NULL;
    if (HEAD_LIT("null")) ev->res_null = 1;
    else if (!(p = head_int(p, e, &ev->res, 1))) return NULL;
    if (!HEAD_LIT(",\"dev\":") || !(p = head_int(p, e, &x, 1)) || !vtr_rd_dev_ok(x)) return NULL;
    ev->dev = x;
    ev->type = t < 0 ? VT_EV_UNKNOWN : (enum vt_ev_type)t;
    ev->api = vtr_rd_keep_str(r, v.s, v.n);
    ev->has |= VT_F_T | VT_F_DUR | VT_F_TID | VT_F_API | VT_F_RES | VT_F_DEV;
    r->seen_ev = 1;
    return p;
}

/* Returns 0 parsed, FALLBACK, or a negative error from field(). */
int vtr_rd_fast_parse(struct vt_reader *r, const char *p, const char *e, struct vt_event *ev,
                      char *err, size_t errlen)
{
    p = ws(p, e);
    if (p >= e || *p != '{') return FALLBACK;
    const char *after_head = call_head(r, p, e, ev);
    if (after_head) { p = after_head; goto next_field; }
    p = ws(p + 1, e);
    if (p < e && *p == '}') return ws(p + 1, e) == e ? 0 : FALLBACK;
    for (;;) {
        struct jval key, v;
        if (p >= e || *p != '"' || !(p = fast_str(p + 1, e, &key))) return FALLBACK;
        p = ws(p, e);
        if (p >= e || *p != ':') return FALLBACK;
        p = ws(p + 1, e);
        if (p < e && *p == '[') {
            size_t n = 0;
            p = ws(p + 1, e);
            if (p < e && *p == ']') p++;
            else for (;;) {
                if (n >= VT_READER_MAX_BT) return FALLBACK;
                if (!(p = fast_scalar(p, e, &r->elems[n]))) return FALLBACK;
                n++;
                p = ws(p, e);
                if (p < e && *p == ',') { p = ws(p + 1, e); continue; }
                if (p < e && *p == ']') { p++; break; }
                return FALLBACK;
            }
            v.type = JV_ARR; v.n = n; v.elems = r->elems; v.jo = NULL; v.big = 0;
        } else if (!(p = fast_scalar(p, e, &v))) return FALLBACK;
        int rc = vtr_rd_field(r, ev, key.s, key.n, &v, err, errlen);
        if (rc < 0) return rc;
    next_field:
        p = ws(p, e);
        if (p < e && *p == ',') { p = ws(p + 1, e); continue; }
        if (p < e && *p == '}') return ws(p + 1, e) == e ? 0 : FALLBACK;
        return FALLBACK;
    }
}

