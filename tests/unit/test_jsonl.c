/* test_jsonl.c - src/jsonl.h: integer, hex and string formatting against printf, overflow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"
#include "vt_test.h"

static int same_as_printf(unsigned long long v)
{
    char got[64], want[64];
    vt_line l;
    vt_line_init(&l, got, sizeof got);
    vt_put_u64(&l, v);
    VT_PUT_LIT(&l, " ");
    vt_put_hex(&l, v);
    VT_PUT_LIT(&l, " ");
    vt_put_i64(&l, -(long long)(v >> 1));
    *l.p = '\0';
    snprintf(want, sizeof want, "%llu \"0x%llx\" %lld", v, v, -(long long)(v >> 1));
    if (strcmp(got, want)) { printf("# mismatch: got %s want %s\n", got, want); return 0; }
    return 1;
}

int main(void)
{
    int ok = 1;
    for (int e = 0; e < 64 && ok; e++)
        for (int d = -2; d <= 2 && ok; d++) ok = same_as_printf((1ull << e) + (unsigned long long)(long long)d);
    VT_CHECK(ok, "u64/hex/i64 around every power of two match printf");
    ok = 1;
    unsigned long long p10 = 1;
    for (int k = 0; k < 20 && ok; k++, p10 *= 10) ok = same_as_printf(p10) && same_as_printf(p10 - 1) && same_as_printf(p10 + 1);
    VT_CHECK(ok, "u64 around every power of ten (digit-count edges, 10^8 split) matches printf");
    ok = same_as_printf(0) && same_as_printf(~0ull) && same_as_printf(4294967295ull) && same_as_printf(4294967296ull);
    VT_CHECK(ok, "0, 2^32-1, 2^32 and 2^64-1 match printf");
    srand(7);
    ok = 1;
    for (int i = 0; i < 200000 && ok; i++) {
        unsigned long long v = ((unsigned long long)rand() << 42) ^ ((unsigned long long)rand() << 21) ^ (unsigned long long)rand();
        ok = same_as_printf(v >> (rand() % 64));
    }
    VT_CHECK(ok, "200000 random values match printf");

    char small[8];
    vt_line l;
    vt_line_init(&l, small, sizeof small);
    vt_put_u64(&l, 123456789);
    VT_CHECK(l.overflow, "a number that does not fit sets overflow");
    vt_put_raw(&l, "x", 1);
    VT_CHECK(l.p == small, "nothing is written after an overflow");

    char buf[64];
    vt_line_init(&l, buf, sizeof buf);
    vt_put_str(&l, "a\"b\\c\n\x01</>");
    *l.p = '\0';
    VT_CHECK_EQ_STR(buf, "\"a\\\"b\\\\c\\u000a\\u0001</>\"", "strings are JSON-escaped");
    return vt_test_finish();
}
