/* test_sass.c - the parameter bytes a kernel's SASS uses as addresses (tools/report/sass.c), on
 * nvdisasm's listings of tests/data/sass/kernels.cu (kernels.sm_90.sass) and grid_constant.cu. The expected bytes are
 * written in kernels.cu from its source; the layouts are its structs' (8-byte words). */
#include <stdio.h>
#include <stdlib.h>

#include "report/sass.h"
#include "vt_test.h"

#ifndef VT_SASS_DIR
#define VT_SASS_DIR "tests/data/sass"
#endif

/* the used bytes as 8-byte words "0 16" */
static const char *words(const uint8_t *used, uint32_t n)
{
    static char buf[256];
    size_t k = 0;
    buf[0] = 0;
    for (uint32_t w = 0; w < n; w += 8) {
        int any = 0;
        for (uint32_t b = w; b < w + 8 && b < n; b++) any |= used[b];
        if (any && k + 8 < sizeof buf) k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%u", k ? " " : "", w);
    }
    return buf;
}

int main(void)
{
    FILE *f = fopen(VT_SASS_DIR "/kernels.sm_90.sass", "rb");
    VT_CHECK(f != NULL, "the listing opens");
    if (!f) return vt_test_finish();
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    static const struct { const char *kernel, *decl; uint32_t params[8], nparams, nbytes; const char *want; } cases[] = {
        { "gather", "gather(Slice s, float *out): s.data and out", { 0, 16, 16, 8 }, 2, 24, "0 16" },
        { "pick", "pick(Table t, int i, float *out): t.ptrs[i] (any of the 4), out; not i", { 0, 32, 32, 4, 40, 8 }, 3, 48, "0 8 16 24 40" },
        { "escape", "escape(Slice s, float **out): s.data stored through out", { 0, 16, 16, 8 }, 2, 24, "0 16" },
        { "offset", "offset(Pair p): base + off both in the address", { 0, 16 }, 1, 16, "0 8" },
        { "unused", "unused(Slice s, int n, float *out): only out", { 0, 16, 16, 4, 24, 8 }, 3, 32, "24" },
        { "strided", "strided(float *p, Stride st): p; the stride only scales the index", { 0, 8, 8, 16 }, 2, 24, "0" },
        { "tail_offset", "tail_offset(char *base, Pad pad, short off): base and off, not pad (258 bytes: the 65th 4-byte word half there)", { 0, 8, 8, 248, 256, 2 }, 3, 258, "0 256" },
    };
    uint8_t used[512]; /* the largest case: 258 bytes */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = vt_sass_param_uses(text, len, cases[i].kernel, 0x210, cases[i].params, cases[i].nparams, used, cases[i].nbytes);
        VT_CHECK(rc == 0 && !strcmp(words(used, cases[i].nbytes), cases[i].want), "%s: words used %s (want %s)", cases[i].decl,
                 rc ? "(not found)" : words(used, cases[i].nbytes), cases[i].want);
    }
    VT_CHECK_EQ_INT(vt_sass_param_uses(text, len, "no_such_kernel", 0x210, NULL, 0, used, 16), -1, "a kernel not in the listing");
    VT_CHECK_EQ_INT(vt_sass_param_uses(text, len, "gathe", 0x210, NULL, 0, used, 16), -1, "a prefix of a kernel's name is none");
    /* hostile text: cut anywhere, the reader stays inside it */
    for (size_t cut = 0; cut < len; cut += 97) vt_sass_param_uses(text, cut, "pick", 0x210, NULL, 0, used, 48);
    VT_CHECK(1, "listings cut at 97-byte steps read without a fault");
    /* the wrong bank base: nothing is a parameter */
    vt_sass_param_uses(text, len, "gather", 0x160, (const uint32_t[]){ 0, 16, 16, 8 }, 2, used, 24);
    VT_CHECK_EQ_STR(words(used, 24), "", "another arch's bank base (0x160) reads none of sm_90's parameters");

    /* a __grid_constant__ read at a computed index (grid_constant.cu): the loaded value is the
     * parameter's bytes; the index register (i << 3) only says where, so i is no address */
    f = fopen(VT_SASS_DIR "/grid_constant.sm_90.sass", "rb");
    VT_CHECK(f != NULL, "the grid_constant listing opens");
    if (!f) return vt_test_finish();
    len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    static const struct { const char *kernel, *decl; } gc[] = {
        { "pick_const", "pick_const(const __grid_constant__ Table t, int i, float *out): t.ptrs[i] (any of the 4), out; not i" },
        { "at_offset", "at_offset(const __grid_constant__ Table t, int off, float *out): the pointer at byte off of t (any of the 4), out; not off" },
    };
    for (size_t i = 0; i < sizeof gc / sizeof gc[0]; i++) {
        int rc = vt_sass_param_uses(text, len, gc[i].kernel, 0x210, (const uint32_t[]){ 0, 32, 32, 4, 40, 8 }, 3, used, 48);
        VT_CHECK(rc == 0 && !strcmp(words(used, 48), "0 8 16 24 40"), "%s (got %s)", gc[i].decl, rc ? "(not found)" : words(used, 48));
    }
    return vt_test_finish();
}
