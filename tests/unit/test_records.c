/* test_records.c - src/records.c: every binary record formats as one valid JSON line with the
 * fields docs/trace-format.md promises; damaged or half-written records are dropped. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "records.h"
#include "registry.h"
#include "vt_test.h"

static json_object *format(int type, const void *rec, size_t len, size_t *n)
{
    static char buf[8192];
    *n = vt_record_format(type, rec, len, 0, buf, sizeof buf);
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
    vt_rec_set_api(c, api);
}

int main(void)
{
    size_t n;
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
    VT_CHECK(vt_record_format(VT_R_ALLOC, &al, sizeof al, 0, (char[8192]){0}, 8192) == 0,
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

    struct vt_rec_call sy;
    call(&sy, "cudaDeviceSynchronize");
    sy.res = 700;
    o = format(VT_R_SYNC, &sy, sizeof sy, &n);
    VT_CHECK(o && num(o, "res") == 700 && !strcmp(str(o, "api"), "cudaDeviceSynchronize"), "sync: sticky error code");
    json_object_put(o);

    char text[64];
    struct vt_rec_text *t = (struct vt_rec_text *)text;
    t->len = 4;
    memcpy(t->text, "{}\n", 3);
    VT_CHECK(vt_record_format(VT_R_TEXT, t, sizeof *t + 4, 0, (char[64]){0}, 64) == 4, "text: copied as is");
    t->len = 1000;
    VT_CHECK(vt_record_format(VT_R_TEXT, t, sizeof *t + 4, 0, (char[64]){0}, 64) == 0, "text: a length past the record is dropped");
    VT_CHECK(vt_record_format(VT_R_LAUNCH, &la, sizeof la, 1, (char[1024]){0}, 1024) == 0, "a half-written record is dropped");
    VT_CHECK(vt_record_format(99, &la, sizeof la, 0, (char[1024]){0}, 1024) == 0, "an unknown type is dropped");
    VT_CHECK(vt_record_format(VT_R_LAUNCH, &la, 8, 0, (char[1024]){0}, 1024) == 0, "a short record is dropped");

    memcpy(la.c.api, "evil\",\"x\":1", 12);
    vt_record_sanitize(VT_R_LAUNCH, &la, sizeof la);
    o = format(VT_R_LAUNCH, &la, sizeof la, &n);
    VT_CHECK(o && !strcmp(str(o, "api"), "evil"), "sanitize: a damaged API name cannot break the JSON");
    json_object_put(o);
    return vt_test_finish();
}
