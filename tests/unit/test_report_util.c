/* test_report_util.c - the report's hash map (against a reference array, with deletions), the
 * string interner and byte formatting. */
#include <stdlib.h>

#include "vt_test.h"
#include "report/util.h"
#include "report/escape.h"

/* vt_text_filter: a UTF-8 character split across two writes reaches the output whole (its lead
 * byte waits for the rest); a control byte is shown as \xNN */
static void test_text_filter_split(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    FILE *f = out ? vt_text_filter(out) : NULL;
    VT_CHECK(f != NULL, "the text filter opens");
    if (!f) { if (out) fclose(out); free(buf); return; }
    fputs("ab\xc3", f);
    fflush(f);
    fputs("\xa9z\x01\n", f);
    fclose(f);
    fclose(out);
    VT_CHECK(buf && strcmp(buf, "ab\xc3\xa9z\\x01\n") == 0, "a character split across writes stays whole (got '%s')", buf ? buf : "");
    free(buf);
}

int main(void)
{
    test_text_filter_split();
    struct vtr_hmap m = { 0 };
    enum { N = 20000 };
    static uint64_t ref[N];
    static int present[N];
    srand(7);
    int bad = 0;
    for (int round = 0; round < 200000; round++) {
        int k = rand() % N;
        uint64_t key = (uint64_t)k * 0x100000 + 0x7e0000000000ull;   /* address-like keys */
        if (rand() % 3) { ref[k] = (uint64_t)round; present[k] = 1; if (vtr_hmap_put(&m, key, ref[k]) < 0) bad++; }
        else { int d = vtr_hmap_del(&m, key); if (d != present[k]) bad++; present[k] = 0; }
    }
    size_t n = 0;
    for (int k = 0; k < N; k++) {
        uint64_t *v = vtr_hmap_get(&m, (uint64_t)k * 0x100000 + 0x7e0000000000ull);
        if (present[k]) { n++; if (!v || *v != ref[k]) bad++; } else if (v) bad++;
    }
    VT_CHECK_EQ_INT(bad, 0, "hash map agrees with the reference after 200k put/del");
    VT_CHECK_EQ_INT(m.len, n, "hash map length");
    vtr_hmap_free(&m);

    struct vtr_strtab t = { 0 };
    int64_t a = vtr_strtab_intern(&t, "alpha"), b = vtr_strtab_intern(&t, "beta");
    VT_CHECK(a != b && vtr_strtab_intern(&t, "alpha") == a, "interner returns stable ids");
    VT_CHECK_EQ_STR(vtr_strtab_get(&t, b), "beta", "interned string");
    vtr_strtab_free(&t);

    char buf[32];
    VT_CHECK_EQ_STR(vtr_fmt_bytes(buf, sizeof buf, 512), "512 B", "bytes");
    VT_CHECK_EQ_STR(vtr_fmt_bytes(buf, sizeof buf, 1536), "1.50 KiB", "KiB");
    VT_CHECK_EQ_STR(vtr_fmt_bytes(buf, sizeof buf, 3ull << 30), "3.00 GiB", "GiB");
    return vt_test_finish();
}
