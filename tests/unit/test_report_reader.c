/* test_report_reader.c - the trace reader: fast path and json-c fallback agree, typed fields,
 * errors as "NAME:LINE: ...". */
#include <stdlib.h>

#include "vt_test.h"
#include "report/reader.h"

static int parse(struct vt_reader *r, const char *line, int first, struct vt_event *ev, char *err)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", line);
    return vt_reader_parse_line(r, buf, strlen(buf), first, ev, err, 512);
}

int main(void)
{
    struct vt_reader *r = vt_reader_new_mem("mem");
    struct vt_event ev;
    char err[512];
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"header\",\"format\":\"vramtrace-trace\",\"version\":1,\"pid\":3,\"t\":5,"
                             "\"rank\":{\"RANK\":\"4\",\"LOCAL_RANK\":\"1\"}}", 1, &ev, err), 1, "header parses");
    VT_CHECK_EQ_INT(ev.rank, 4, "rank from header rank object");
    VT_CHECK_EQ_INT(ev.local_rank, 1, "local rank");
    const char *alloc = "{\"ev\":\"alloc\",\"t\":10,\"dur\":2,\"tid\":9,\"api\":\"cudaMalloc\",\"res\":0,\"dev\":0,"
                        "\"addr\":\"0x7e0000000000\",\"size\":1048576,\"mem\":\"device\",\"bt\":[\"0x10\",\"0xFFfe\"]}";
    VT_CHECK_EQ_INT(parse(r, alloc, 0, &ev, err), 1, "alloc parses (fast path)");
    VT_CHECK(ev.type == VT_EV_ALLOC && ev.addr == 0x7e0000000000ull && ev.size == 1048576 && ev.mem == VT_MEM_DEVICE,
             "alloc fields");
    VT_CHECK(ev.nbt == 2 && ev.bt[0] == 0x10 && ev.bt[1] == 0xfffe, "bt decoded");
    VT_CHECK_EQ_STR(ev.api, "cudaMalloc", "api string");
    /* the same record with an escape goes through json-c and gives the same fields */
    const char *slow = "{\"ev\":\"alloc\",\"t\":10,\"dur\":2,\"tid\":9,\"api\":\"cuda\\u004dalloc\",\"res\":0,\"dev\":0,"
                       "\"addr\":\"0x7e0000000000\",\"size\":1048576,\"mem\":\"device\",\"bt\":[\"0x10\",\"0xFFfe\"]}";
    VT_CHECK_EQ_INT(parse(r, slow, 0, &ev, err), 1, "escaped alloc parses (json-c)");
    VT_CHECK_EQ_STR(ev.api, "cudaMalloc", "json-c unescaped api");
    VT_CHECK(ev.nbt == 2 && ev.bt[1] == 0xfffe && ev.size == 1048576, "json-c fields agree");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"free\",\"t\":1,\"api\":\"cudaFree\",\"res\":null,\"addr\":\"0x1\"}", 0, &ev, err), 1, "free res null");
    VT_CHECK(ev.res_null == 1, "res_null set");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"set\",\"t\":1,\"api\":\"cudaMemset\",\"res\":0,\"addr\":\"0x1\",\"size\":4,\"value\":255}", 0, &ev, err),
                    1, "set with integer value");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"something_new\",\"t\":1}", 0, &ev, err), 1, "unknown event type is skipped, not an error");
    VT_CHECK(ev.type == VT_EV_UNKNOWN, "unknown type");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"alloc\",\"t\":1,\"res\":0,\"size\":01,\"mem\":\"device\",\"addr\":\"0x1\"}", 0, &ev, err),
                    VT_RD_ESYNTAX, "leading zero rejected (strict JSON)");
    VT_CHECK(strncmp(err, "mem:0: not valid JSON", 21) == 0, "message has name:line: (%s)", err);
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"alloc\",\"t\":1,\"res\":0,\"size\":1,\"mem\":\"device\",\"addr\":\"0x1\",}", 0, &ev, err),
                    VT_RD_ESYNTAX, "trailing comma rejected");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"alloc\",\"t\":1,\"res\":0,\"size\":1,\"mem\":\"device\",\"addr\":\"0x12345678901234567\"}", 0, &ev, err),
                    VT_RD_ESCHEMA, "address over 64 bits rejected");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"copy\",\"t\":1,\"res\":0,\"size\":1,\"dir\":\"sideways\"}", 0, &ev, err),
                    VT_RD_ESCHEMA, "unknown dir rejected");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"alloc\",\"t\":-5,\"res\":0,\"size\":1,\"mem\":\"device\",\"addr\":\"0x1\"}", 0, &ev, err),
                    VT_RD_ESCHEMA, "negative time rejected");
    vt_reader_close(r);
    return vt_test_finish();
}
