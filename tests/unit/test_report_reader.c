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
    /* the call head every tracer record starts with is matched literally (call_head); its odd
     * values must still reach the general path and give the same errors */
    const char *launch = "{\"ev\":\"launch\",\"t\":1000000205,\"dur\":5023,\"tid\":4245,\"api\":\"__cudaLaunchKernel\","
                         "\"res\":0,\"dev\":3,\"k\":44,\"grid\":[2840,1,1],\"block\":[256,1,1],\"shmem\":0,\"stream\":\"0x7f00\"}";
    VT_CHECK_EQ_INT(parse(r, launch, 0, &ev, err), 1, "tracer launch line parses");
    VT_CHECK(ev.type == VT_EV_LAUNCH && ev.t == 1000000205 && ev.dur == 5023 && ev.tid == 4245 && ev.res == 0 &&
             ev.dev == 3 && ev.k == 44 && ev.stream == 0x7f00 && !ev.res_null, "launch fields from the call head and after");
    VT_CHECK_EQ_STR(ev.api, "__cudaLaunchKernel", "launch api");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"sync\",\"t\":5,\"dur\":1,\"tid\":2,\"api\":\"cudaDeviceSynchronize\",\"res\":null,\"dev\":-1}",
                          0, &ev, err), 1, "call head with res null and dev -1");
    VT_CHECK(ev.type == VT_EV_SYNC && ev.res_null && ev.dev == -1 && ev.tid == 2, "its fields");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"sync\",\"t\":5,\"dur\":1,\"tid\":2,\"api\":\"x\",\"res\":-700,\"dev\":0}", 0, &ev, err),
                    1, "negative result code");
    VT_CHECK(ev.res == -700, "res -700");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"sync\",\"t\":5,\"dur\":1,\"tid\":2,\"api\":\"x\",\"res\":0,\"dev\":5000}", 0, &ev, err),
                    VT_RD_ESCHEMA, "dev out of range still rejected");
    VT_CHECK(strstr(err, "'dev' is out of range (5000)") != NULL, "with the general path's message (%s)", err);
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"sync\",\"t\":5,\"dur\":-1,\"tid\":2,\"api\":\"x\",\"res\":0,\"dev\":0}", 0, &ev, err),
                    VT_RD_ESCHEMA, "negative duration still rejected");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"sync\",\"t\":05,\"dur\":1,\"tid\":2,\"api\":\"x\",\"res\":0,\"dev\":0}", 0, &ev, err),
                    VT_RD_ESYNTAX, "leading zero in the head still rejected");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"sync\",\"t\":99999999999999999999,\"dur\":1,\"tid\":2,\"api\":\"x\",\"res\":0,\"dev\":0}",
                          0, &ev, err), VT_RD_ESCHEMA, "time over int64 still rejected");
    VT_CHECK_EQ_INT(parse(r, "{\"ev\":\"sync\",\"t\":5,\"dur\":1,\"tid\":2,\"api\":\"x\",\"res\":0,\"dev\":0", 0, &ev, err),
                    VT_RD_ESYNTAX, "a head without its closing brace is not valid JSON");
    vt_reader_close(r);
    return vt_test_finish();
}
