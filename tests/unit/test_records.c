/* test_records.c - src/records.c: every binary record formats as one valid JSON line with the
 * fields docs/trace-format.md promises; damaged or half-written records are dropped. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "records.h"
#include "registry.h"
#include "vt_test.h"

static const struct vt_api_names *names;

static json_object *format(int type, const void *rec, size_t len, size_t *n)
{
    static char buf[8192];
    *n = vt_record_format(type, rec, len, 0, names, buf, sizeof buf);
    if (!*n || buf[*n - 1] != '\n') return NULL;
    buf[*n - 1] = '\0';
    return json_tokener_parse(buf);
}
static const char *str(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "";
}
static long long num(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? (long long)json_object_get_int64(v) : -12345;
}

static void call(struct vt_rec_call *c, const char *api)
{
    memset(c, 0, sizeof *c);
    c->t0 = 1234567890123ull;
    c->dur = 77;
    c->tid = 4242;
    c->dev = 1;
    c->api = vt_api_id(api);
}

int main(void)
{
    size_t n;
    names = vt_api_names_current();
    struct { struct vt_rec_alloc a; uint64_t f[2]; } al;
    memset(&al, 0, sizeof al);
    call(&al.a.c, "cudaMalloc");
    al.a.addr = 0x7e0000000000ull;
    al.a.size = 1048576;
    al.a.mem = VT_MEM_DEVICE;
    al.a.nframes = 2;
    al.a.frames[0] = 0x55aa;
    al.a.frames[1] = 0x7fbb;
    json_object *o = format(VT_R_ALLOC, &al, sizeof al, &n);
    VT_CHECK(o != NULL, "alloc: one valid JSON line");
    VT_CHECK_EQ_STR(str(o, "ev"), "alloc", "alloc: ev");
    VT_CHECK_EQ_STR(str(o, "addr"), "0x7e0000000000", "alloc: addr as hex string");
    VT_CHECK_EQ_INT(num(o, "size"), 1048576, "alloc: size");
    VT_CHECK_EQ_STR(str(o, "mem"), "device", "alloc: mem");
    VT_CHECK_EQ_INT(num(o, "t"), 1234567890123ll, "alloc: t");
    VT_CHECK_EQ_INT(num(o, "tid"), 4242, "alloc: tid");
    json_object *bt;
    VT_CHECK(json_object_object_get_ex(o, "bt", &bt) && json_object_array_length(bt) == 2, "alloc: two frames");
    json_object_put(o);
    al.a.nframes = 60000;
    VT_CHECK(vt_record_format(VT_R_ALLOC, &al, sizeof al, 0, names, (char[8192]){0}, 8192) == 0,
             "alloc: a frame count larger than the record is dropped");

    struct vt_rec_free fr;
    memset(&fr, 0, sizeof fr);
    call(&fr.c, "cudaFree");
    fr.addr = 0x7e0000000000ull;
    fr.known = 1;
    fr.size = 4096;
    fr.c.res = 1;
    o = format(VT_R_FREE, &fr, sizeof fr, &n);
    VT_CHECK(o && !strcmp(str(o, "ev"), "free") && num(o, "res") == 1 && num(o, "size") == 4096 && num(o, "dur") == 77,
             "free: res, size and dur");
    json_object_put(o);

    struct vt_rec_copy cp;
    memset(&cp, 0, sizeof cp);
    call(&cp.c, "cudaMemcpyAsync");
    cp.dst = 0x7e00;
    cp.src = 0x55dd;
    cp.size = 4096;
    cp.dir = 1;
    cp.host = 2;
    cp.async = 1;
    cp.stream = 0xabc;
    cp.kind = 1;
    cp.src_dev = -1;
    o = format(VT_R_COPY, &cp, sizeof cp, &n);
    VT_CHECK(o && !strcmp(str(o, "dir"), "h2d") && !strcmp(str(o, "host"), "pinned") && !strcmp(str(o, "stream"), "0xabc") &&
             num(o, "kind") == 1 && num(o, "src_dev") == -12345, "copy: dir, host, stream, kind, no src_dev");
    json_object_put(o);

    struct vt_rec_launch la;
    memset(&la, 0, sizeof la);
    call(&la.c, "__cudaLaunchKernel");
    la.k = 3;
    la.grid[0] = 4096; la.grid[1] = 1; la.grid[2] = 1;
    la.block[0] = 256; la.block[1] = 1; la.block[2] = 1;
    o = format(VT_R_LAUNCH, &la, sizeof la, &n);
    json_object *g;
    VT_CHECK(o && num(o, "k") == 3 && json_object_object_get_ex(o, "grid", &g) &&
             json_object_get_int(json_object_array_get_idx(g, 0)) == 4096, "launch: kernel id and grid");
    json_object_put(o);

    struct vt_rec_set st;
    memset(&st, 0, sizeof st);
    call(&st.c, "cudaMemset");
    st.value = -1;
    st.size = 10;
    o = format(VT_R_SET, &st, sizeof st, &n);
    VT_CHECK(o && num(o, "value") == -1 && num(o, "size") == 10, "set: value and size");
    json_object_put(o);

    struct vt_rec_sync sy;
    memset(&sy, 0, sizeof sy);
    call(&sy.c, "cudaDeviceSynchronize");
    sy.c.res = 700;
    o = format(VT_R_SYNC, &sy, sizeof sy, &n);
    VT_CHECK(o && num(o, "res") == 700 && !strcmp(str(o, "api"), "cudaDeviceSynchronize"), "sync: sticky error code");
    VT_CHECK(o && !json_object_object_get_ex(o, "stream", NULL), "sync: a device synchronisation names no stream");
    json_object_put(o);
    call(&sy.c, "cudaStreamSynchronize");
    sy.has_stream = 1; sy.stream = 0;
    o = format(VT_R_SYNC, &sy, sizeof sy, &n);
    VT_CHECK(o && !strcmp(str(o, "stream"), "0x0"), "sync: the legacy default stream is stream 0x0");
    json_object_put(o);
    VT_CHECK(!format(VT_R_SYNC, &sy, sizeof sy.c, &n), "sync: a record without its stream fields is refused");

    char text[96];
    struct vt_rec_text *t = (struct vt_rec_text *)text;
    static const char rec_line[] = "{\"ev\":\"kernel\",\"id\":1}\n";
    t->len = sizeof rec_line - 1;
    memcpy(t->text, rec_line, sizeof rec_line - 1);
    VT_CHECK(vt_record_format(VT_R_TEXT, t, sizeof *t + t->len, 0, names, (char[64]){0}, 64) == t->len, "text: a record line is copied as is");
    t->len = 1000;
    VT_CHECK(vt_record_format(VT_R_TEXT, t, sizeof *t + 4, 0, names, (char[64]){0}, 64) == 0, "text: a length past the record is dropped");
    /* a ring read back from disk may hold anything: only one escaped JSON record line passes */
    static const char *const forged[] = { "root::0:0::/root:/bin/sh\n", "{\"ev\":\"x\"}\n{\"ev\":\"y\"}\n",
                                          "{\"ev\":\"x\",\"a\":\"\t\"}\n", "{\"ev\":\"x\"}" };
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
        t->len = (uint32_t)strlen(forged[i]);
        memcpy(t->text, forged[i], t->len);
        VT_CHECK(vt_record_format(VT_R_TEXT, t, sizeof *t + t->len, 0, names, (char[96]){0}, 96) == 0,
                 "text: not one escaped JSON record line (forged %zu): dropped", i);
    }
    VT_CHECK(vt_record_format(VT_R_LAUNCH, &la, sizeof la, 1, names, (char[1024]){0}, 1024) == 0, "a half-written record is dropped");
    VT_CHECK(vt_record_format(99, &la, sizeof la, 0, names, (char[1024]){0}, 1024) == 0, "an unknown type is dropped");
    VT_CHECK(vt_record_format(VT_R_LAUNCH, &la, 8, 0, names, (char[1024]){0}, 1024) == 0, "a short record is dropped");

    /* a ring read back from a dead process: its name table and ids are untrusted */
    static struct vt_api_names file_names;
    atomic_store(&file_names.count, 100000); /* past the table */
    memcpy(file_names.name[0], "junk", 4);
    memcpy(file_names.name[1], "evil\",\"x\":1", 12);
    memset(file_names.name[2], 'A', VT_API_NAME_MAX); /* no NUL */
    vt_api_names_sanitize(&file_names);
    VT_CHECK_EQ_INT(atomic_load(&file_names.count), VT_API_IDS, "sanitize: a count past the table is clamped");
    static char line[1024];
    const char *want[] = { "", "evil", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "" };
    uint32_t ids[] = { 0, 1, 2, 5000 };
    for (int i = 0; i < 4; i++) {
        la.c.api = ids[i];
        size_t len = vt_record_format(VT_R_LAUNCH, &la, sizeof la, 0, &file_names, line, sizeof line);
        o = NULL;
        if (len && line[len - 1] == '\n') { line[len - 1] = '\0'; o = json_tokener_parse(line); }
        char what[96];
        snprintf(what, sizeof what, "sanitize: name id %u formats as valid JSON with api \"%s\"", ids[i], want[i]);
        VT_CHECK(o && !strcmp(str(o, "api"), want[i]), what);
        json_object_put(o);
    }

    /* ids: one per distinct name, stable, shared by equal strings at different addresses */
    char copy[] = "cudaMalloc";
    uint32_t a = vt_api_id("cudaMalloc"), b = vt_api_id(copy), z = vt_api_id(NULL);
    VT_CHECK(a != 0 && a == b && z == 0, "ids: equal names share an id, NULL is id 0");
    VT_CHECK(vt_api_id("cudaFree") != a, "ids: another name, another id");
    VT_CHECK_EQ_STR(vt_api_name(names, a), "cudaMalloc", "ids: the id names its string");

    /* Two hot names whose addresses fall in the same memo set (as cudaMalloc and cudaFree may in
     * an allocation loop) both stay memoized: alternating them misses only the first time. */
    static char pool[64][16];
    int x = -1, y = -1;
    for (int i = 0; i < 64 && y < 0; i++) {
        snprintf(pool[i], sizeof pool[i], "apiName%d", i);
        for (int j = 0; j < i && y < 0; j++)
            if (vt_api_memo_set(pool[i]) == vt_api_memo_set(pool[j])) { x = j; y = i; }
    }
    VT_CHECK(y >= 0, "memo: two names in one set found");
    if (y >= 0) {
        uint32_t ix = vt_api_id(pool[x]), iy = vt_api_id(pool[y]);
        uint64_t m0 = vt_api_id_misses();
        int same = 1;
        for (int r = 0; r < 1000; r++) same &= vt_api_id(pool[x]) == ix && vt_api_id(pool[y]) == iy;
        VT_CHECK(same && ix != iy, "memo: alternating names keep their ids");
        VT_CHECK_EQ_INT((long long)(vt_api_id_misses() - m0), 0, "memo: alternating two names of one set never misses");
    }
    return vt_test_finish();
}
