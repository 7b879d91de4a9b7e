/* test_fatbin_ptx.c - the PTX side of vt_fatbin_parse: parameter-list syntax (comments, strings,
 * vectors, arrays, .align, malformed lists), the parameter limit, and which parameters a kernel
 * uses as addresses through PTX forms nvcc 13 emits (white space, vector stores, loads before a
 * parameter's start). Texts are nvcc's own PTX where a comment says so. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fatbin.h"
#include "vt_test.h"
#include "fatbin_test_util.h"

static int ptx_case(const char *text, uint32_t n, const uint32_t *offsz, const char *what)
{
    blob b = copy(text, strlen(text));
    vt_fatbin *fb;
    int rc = parse(&b, 0, &fb);
    if (rc >= 0) {
        if (n != UINT32_MAX)
            check_layout(fb, "k", n, offsz, what);
        vt_fatbin_free(fb);
    }
    free(b.p);
    return rc;
}

static void test_ptx_syntax(void)
{
    ptx_case(".version 9.0\n.target sm_90\n/* .entry fake( */ .visible .entry k(\n"
             "  .param .u64 p, // comment ,\n  .param .u8 c)\n{ ret; }\n",
             2, (const uint32_t[]){0, 8, 8, 1}, "comments skipped");
    ptx_case(".version 9.0\n.file 1 \"/x/*odd*/.cu\"\n.entry k(.param .u64 .ptr .global .align 16 p,"
             " .param .u32 n) {}", 2, (const uint32_t[]){0, 8, 8, 4}, ".ptr .align is the pointee's");
    /* a string longer than the text before it (a deep build path in .file), holding a comment opener: read
     * whole as one token, never as the start of a comment */
    ptx_case(".version 9.0\n.file 1 \"/build/a-directory-named/*/with/a/path/longer/than/its/offset/k.cu\"\n"
             ".entry k(.param .u64 p, .param .u32 n) {}", 2, (const uint32_t[]){0, 8, 8, 4},
             "a long string with /* in it");
    /* a string whose first character is '*' (a file named "*scratch.cu"): a string, not a comment */
    ptx_case(".version 9.0\n.file 1 \"*scratch.cu\"\n.entry k(.param .u64 p, .param .u32 n) {}", 2,
             (const uint32_t[]){0, 8, 8, 4}, "a string starting with *");
    ptx_case(".version 9.0\n.entry k(.param .v2 .f32 v, .param .u32 a[3], .param .align 16 .b8 s[20],"
             " .param .f16 h) {}", 4, (const uint32_t[]){0, 8, 8, 12, 32, 20, 52, 2}, "vector, array, .align");
    /* Vectors after smaller parameters: a vector variable is aligned to its whole size (PTX ISA,
     * vector types), so a .v4 .f32 after a .u8 sits at 16, a .v2 .b16 after a .u16 at 4. ptxas 13
     * refuses vector-typed .entry parameters ("cannot be allocated in .param state space"), so no
     * kernel the driver loads depends on this; the rule is kept for other producers' PTX. */
    ptx_case(".version 9.0\n.entry k(.param .u8 c, .param .v4 .f32 v, .param .u32 n, .param .v2 .u64 w,"
             " .param .u16 h, .param .v2 .b16 x, .param .v4 .u8 y, .param .u8 z, .param .v4 .u16 q) {}", 9,
             (const uint32_t[]){0, 1, 16, 16, 32, 4, 48, 16, 64, 2, 68, 4, 72, 4, 76, 1, 80, 8},
             "vectors at non-zero offsets (aligned to elem * count)");
    ptx_case(".version 9.0\n.target sm_80\n.entry k(.param .u8 c, .param .align 64 .b8 s[64]) {}", 2,
             (const uint32_t[]){0, 1, 32, 64}, "align 64 on sm_80 (bank at 0x160)");
    ptx_case(".version 9.0\n.target sm_100\n.entry k(.param .u8 c, .param .align 64 .b8 s[64]) {}", 2,
             (const uint32_t[]){0, 1, 64, 64}, "align 64 on sm_100 (bank at 0x380)");
    ptx_case(".version 9.0\n.entry k {}", 0, NULL, ".entry without a parameter list");
    VT_CHECK_EQ_INT(ptx_case(".version 9.0\n.entry k(.param .e9m9 x) {}", UINT32_MAX, NULL, ""), 0,
                    "unknown param type: kernel left out");
    VT_CHECK_EQ_INT(ptx_case(".version 9.0\n.entry k(.param .u32 a, .param", UINT32_MAX, NULL, ""),
                    VT_FATBIN_ECORRUPT, "unterminated param list");
    VT_CHECK_EQ_INT(ptx_case(".version 9.0\n.entry k(.param .align 3 .b8 x[4]) {}", UINT32_MAX, NULL,
                             ""), VT_FATBIN_ECORRUPT, "non-power-of-two .align");
    VT_CHECK_EQ_INT(ptx_case(".version 9.0\n.entry k(.param .b8 x[99999999999]) {}", UINT32_MAX, NULL,
                             ""), VT_FATBIN_ECORRUPT, "absurd array size");
    VT_CHECK_EQ_INT(ptx_case(".version 9.0\n.entry (", UINT32_MAX, NULL, ""), VT_FATBIN_ECORRUPT,
                    ".entry without name");
    VT_CHECK_EQ_INT(ptx_case("hello world", UINT32_MAX, NULL, ""), VT_FATBIN_EINVAL, "plain text");
    ptx_case(".version 9.0\n.entry k(.param .b8 a[0x10], .param .b8 b[0XaF], .param .b8 c[0xB]) {}", 3,
             (const uint32_t[]){0, 16, 16, 175, 191, 11}, "hexadecimal array sizes (0x, 0X, both cases of digit)");
    ptx_case(".version 9.0\n.entry k(.param .u64 .ptr .shared .align 8 p, .param .u32 n) {}", 2,
             (const uint32_t[]){0, 8, 8, 4}, ".ptr .shared: the pointee's space");
    /* the bank's address moves an .align 64 parameter (after one byte: 32 on sm_80's 0x160); a
     * target the parser does not know leaves plain offsets (64) */
    ptx_case(".version 9.0\n.target sm_x9\n.entry k(.param .u8 c, .param .align 64 .b8 s[64]) {}", 2,
             (const uint32_t[]){0, 1, 64, 64}, "align 64 for an unknown target sm_x9: plain offsets");
    ptx_case(".version 9.0\n.target sm_9\n.entry k(.param .u8 c, .param .align 64 .b8 s[64]) {}", 2,
             (const uint32_t[]){0, 1, 64, 64}, "align 64 for a short target sm_9: plain offsets");
    ptx_case(".version 9.0\n.entry k(.param .u64 p) { ld.param.u64 %rd1, [p];", 1,
             (const uint32_t[]){0, 8}, "a body with no closing brace: the layout still read");
    VT_CHECK_EQ_INT(ptx_case(".version 9.0\n.entry k(.param .b64 x[9000]) {}", UINT32_MAX, NULL, ""),
                    VT_FATBIN_ECORRUPT, "a 72000-byte parameter (over 64 KiB)");
    VT_CHECK_EQ_INT(ptx_case(".version 9.0\n.entry k(.reg .u64 x) {}", UINT32_MAX, NULL, ""),
                    VT_FATBIN_ECORRUPT, "a parameter list holding a .reg");
    VT_CHECK_EQ_INT(ptx_case(".version 9.0\n.entry k(.param .u64 a .param .u64 b) {}", UINT32_MAX, NULL, ""),
                    VT_FATBIN_ECORRUPT, "two parameters without a comma");
    /* a whole kernel commented out (PTX takes C's comments): only the one after it is there */
    static const char commented[] = ".version 9.0\n/* .entry fake(.param .u64 q) { ret; } */ .entry k(.param .u64 p) { ret; }\n";
    blob b = copy(commented, sizeof commented - 1);
    vt_fatbin *fb = NULL;
    int rc = parse(&b, 0, &fb);
    VT_CHECK(rc == 1 && vt_fatbin_find(fb, "k") && !vt_fatbin_find(fb, "fake"),
             "a kernel inside /* */ is not a kernel (rc %d: 1 kernel, k)", rc);
    if (rc >= 0) vt_fatbin_free(fb);
    free(b.p);
}

/* The PTX parser keeps at most VT_FATBIN_MAX_PARAMS (1024) parameters a kernel: 1024 one-byte
 * parameters (offsets 0..1023) parse, 1025 refuse the image as corrupt with that reason. */
static void test_param_limit(void)
{
    for (int np = 1024; np <= 1025; np++) {
        size_t cap = 64 + (size_t)np * 24, at = 0;
        char *text = malloc(cap);
        at += (size_t)snprintf(text + at, cap - at, ".version 9.0\n.target sm_90\n.entry k(");
        for (int i = 0; i < np; i++) at += (size_t)snprintf(text + at, cap - at, "%s.param .u8 a%d", i ? ", " : "", i);
        at += (size_t)snprintf(text + at, cap - at, ")\n{\nret;\n}\n");
        char err[128] = "";
        vt_fatbin *fb = NULL;
        int rc = vt_fatbin_parse_arch(text, at, 0, &fb, err, sizeof err);
        if (np == 1024) {
            const vt_kernel_layout *k = rc == 1 ? vt_fatbin_find(fb, "k") : NULL;
            VT_CHECK(k && k->nparams == 1024 && k->params[1023].offset == 1023 && k->params[1023].size == 1,
                     "1024 parameters: all kept, the last at byte 1023 (rc %d, %u)", rc, k ? k->nparams : 0);
        } else
            VT_CHECK(rc == VT_FATBIN_ECORRUPT && !fb && strcmp(err, "PTX .entry has too many params") == 0,
                     "1025 parameters: corrupt, 'PTX .entry has too many params' (rc %d, '%s')", rc, err);
        if (rc >= 0) vt_fatbin_free(fb);
        free(text);
    }
    vt_fatbin_free(NULL); /* a failed parse's NULL (kernels.c frees it with its module): nothing */
    VT_CHECK(1, "vt_fatbin_free(NULL) returns");
}

/* TEXT (one kernel's PTX) parsed: 1 kernel, or a failed check naming WHAT; *fb and *b for
 * ptx_done. */
static const vt_kernel_layout *ptx_kernel(const char *text, const char *name, const char *what, vt_fatbin **fb, blob *b)
{
    *b = copy(text, strlen(text));
    int rc = parse(b, 0, fb);
    VT_CHECK(rc == 1, "%s parses (one kernel; got %d)", what, rc);
    return rc >= 0 ? vt_fatbin_find(*fb, name) : (*fb = NULL, NULL);
}
static void ptx_done(vt_fatbin *fb, blob *b)
{
    if (fb) vt_fatbin_free(fb);
    free(b->p);
}

/* Address use through PTX whitespace: nvcc's own PTX for
 *     __global__ void k(int *p, int *q) { *p = *q + 1; }
 * (nvcc 13 -ptx -arch=sm_90), with the load's address written after a form feed, which ptxas 13
 * takes as white space (it assembles this text; a vertical tab, another control byte or a byte
 * above 0x7f there it refuses). Both parameters are addresses the kernel uses at their word 0. */
static void test_ptx_use_whitespace(void)
{
    static const char text[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry _Z1kPiS_(\n\t.param .u64 _Z1kPiS__param_0,\n\t.param .u64 _Z1kPiS__param_1\n)\n{\n"
        "\t.reg .b32 \t%r<3>;\n\t.reg .b64 \t%rd<5>;\n"
        "\tld.param.u64 \t%rd1, [_Z1kPiS__param_0];\n\tld.param.u64 \t%rd2, [_Z1kPiS__param_1];\n"
        "\tcvta.to.global.u64 \t%rd3, %rd1;\n\tcvta.to.global.u64 \t%rd4, %rd2;\n"
        "\tld.global.u32 \t%r1, \f[%rd4];\n\tadd.s32 \t%r2, %r1, 1;\n\tst.global.u32 \t[%rd3], %r2;\n\tret;\n}\n";
    blob b;
    vt_fatbin *fb;
    const vt_kernel_layout *k = ptx_kernel(text, "_Z1kPiS_", "PTX with a form feed before an operand", &fb, &b);
    /* in either order: the order of uses is not part of the contract */
    int both = k && k->nuses == 2 && k->uses[0].offset == 0 && k->uses[1].offset == 0 &&
               k->uses[0].param + k->uses[1].param == 1 && k->uses[0].param != k->uses[1].param;
    VT_CHECK(both, "a form feed is white space: the load through q counts (uses 0:0 1:0, got %d)", k ? k->nuses : -9);
    ptx_done(fb, &b);
}

/* nvcc 13 -ptx -arch=sm_90 of
 *     struct __align__(16) P { int *a; int *b; };
 *     __global__ void k(int *x, int *y, P *out) { out[0] = P{x, y}; }
 * stores both pointers with one vector store, x in its first lane. A pointer stored to memory may
 * be dereferenced by whoever reads it (docs/detection.md): x and y are used, and out is the
 * store's address. Every lane counts, the first included. */
static void test_ptx_use_vector_store(void)
{
    static const char text[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry _Z1kPiS_P1P(\n\t.param .u64 _Z1kPiS_P1P_param_0,\n\t.param .u64 _Z1kPiS_P1P_param_1,\n"
        "\t.param .u64 _Z1kPiS_P1P_param_2\n)\n{\n\t.reg .b64 \t%rd<5>;\n"
        "\tld.param.u64 \t%rd1, [_Z1kPiS_P1P_param_2];\n\tcvta.to.global.u64 \t%rd2, %rd1;\n"
        "\tld.param.u64 \t%rd3, [_Z1kPiS_P1P_param_1];\n\tld.param.u64 \t%rd4, [_Z1kPiS_P1P_param_0];\n"
        "\tst.global.v2.u64 \t[%rd2], {%rd4, %rd3};\n\tret;\n}\n";
    blob b;
    vt_fatbin *fb;
    const vt_kernel_layout *k = ptx_kernel(text, "_Z1kPiS_P1P", "PTX with a vector store", &fb, &b);
    unsigned seen = 0;
    for (int32_t i = 0; k && i < k->nuses; i++)
        if (k->uses[i].offset == 0 && k->uses[i].param < 3) seen |= 1u << k->uses[i].param;
    VT_CHECK(k && k->nuses == 3 && seen == 7, "both stored pointers (lanes 0 and 1) and the store's address are used (%d uses, params %x)",
             k ? k->nuses : -9, seen);
    ptx_done(fb, &b);
}

/* A load through a __grid_constant__ parameter's address (nvcc 13's `mov.b64 %rd1, param`) before
 * the parameter's start, [%rd1+-1]: not a known place in it, so whatever it loads is "some word of
 * it" (docs/detection.md): a dereference of either lane uses the whole parameter, never a word
 * computed from the wrapped offset (lane 1 would read as byte 7). */
static void test_ptx_use_before_param(void)
{
    static const char text[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry _Z1k1Si(\n\t.param .align 8 .b8 _Z1k1Si_param_0[16],\n\t.param .u32 _Z1k1Si_param_1\n)\n{\n"
        "\t.reg .b32 \t%r<3>;\n\t.reg .b64 \t%rd<7>;\n"
        "\tmov.b64 \t%rd1, _Z1k1Si_param_0;\n\tld.param.v2.u64 \t{%rd4, %rd5}, [%rd1+-1];\n"
        "\tcvta.to.global.u64 \t%rd6, %rd5;\n\tmov.u32 \t%r2, 1;\n\tst.global.u32 \t[%rd6], %r2;\n\tret;\n}\n";
    blob b;
    vt_fatbin *fb;
    const vt_kernel_layout *k = ptx_kernel(text, "_Z1k1Si", "PTX loading before a parameter's start", &fb, &b);
    VT_CHECK(k && k->nuses == 1 && k->uses[0].param == 0 && k->uses[0].offset == VT_USE_WHOLE,
             "a load at param_0 - 1: the whole parameter is used (%d uses, the first at %u)", k ? k->nuses : -9,
             k && k->nuses ? k->uses[0].offset : 0);
    ptx_done(fb, &b);
}

/* nvcc 13 -ptx -arch=sm_90 of
 *     struct S { unsigned lo, hi; };
 *     __global__ void halves(S s) { union { S s; int *p; } u; u.s = s; *u.p = 1; }
 * loads the 8-byte parameter as two 32-bit halves and joins them (mov.b64 %rd1, {%r3, %r2})
 * before the store through it: the whole of s, from byte 0, is an address the kernel uses. */
static void test_ptx_use_halves(void)
{
    static const char text[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry _Z7halves31S(\n\t.param .align 4 .b8 _Z7halves31S_param_0[8]\n)\n{\n"
        "\t.reg .b32 \t%r<4>;\n\t.reg .b64 \t%rd<2>;\n\n\n\tmov.u32 \t%r1, 1;\n"
        "\tld.param.u32 \t%r2, [_Z7halves31S_param_0+4];\n\tld.param.u32 \t%r3, [_Z7halves31S_param_0];\n"
        "\tmov.b64 \t%rd1, {%r3, %r2};\n\tst.u32 \t[%rd1], %r1;\n\tret;\n\n}\n";
    blob b;
    vt_fatbin *fb;
    const vt_kernel_layout *k = ptx_kernel(text, "_Z7halves31S", "PTX joining two halves", &fb, &b);
    VT_CHECK(k && k->nuses == 1 && k->uses[0].param == 0 && k->uses[0].offset == 0,
             "the joined halves are s's word 0, stored through (got %d uses)", k ? k->nuses : -9);
    ptx_done(fb, &b);
}

/* nvcc 13 -ptx -arch=sm_90 of
 *     __global__ void many(int *p, int **pp, int *out)
 *     { #pragma unroll
 *       for (int i = 0; i < 600; i++) pp[i] = p + 3 * i * i;
 *       *out = 1; }
 * written out by the rule nvcc's text follows (checked line for line against it): 600 registers
 * hold addresses in p (the analysis' table grows past its first 1024 slots), and out's register,
 * loaded before them, is used after them. p is stored (used), pp and out are stored through. */
static void test_ptx_use_many_registers(void)
{
    size_t cap = 1 << 16, at = 0;
    char *t = malloc(cap);
    at += (size_t)snprintf(t + at, cap - at,
        ".version 9.0\n.target sm_90\n.address_size 64\n\n"
        ".visible .entry _Z4manyPiPS_S_(\n\t.param .u64 _Z4manyPiPS_S__param_0,\n\t.param .u64 _Z4manyPiPS_S__param_1,\n"
        "\t.param .u64 _Z4manyPiPS_S__param_2\n)\n{\n\t.reg .b32 \t%%r<2>;\n\t.reg .b64 \t%%rd<605>;\n\n\n"
        "\tld.param.u64 \t%%rd1, [_Z4manyPiPS_S__param_0];\n\tld.param.u64 \t%%rd2, [_Z4manyPiPS_S__param_1];\n"
        "\tld.param.u64 \t%%rd3, [_Z4manyPiPS_S__param_2];\n\tcvta.to.global.u64 \t%%rd4, %%rd2;\n\tst.global.u64 \t[%%rd4], %%rd1;\n");
    for (int i = 1; i < 600; i++)
        at += (size_t)snprintf(t + at, cap - at, "\tadd.s64 \t%%rd%d, %%rd1, %d;\n\tst.global.u64 \t[%%rd4+%d], %%rd%d;\n",
                               4 + i, 12 * i * i, 8 * i, 4 + i);
    at += (size_t)snprintf(t + at, cap - at,
        "\tcvta.to.global.u64 \t%%rd604, %%rd3;\n\tmov.u32 \t%%r1, 1;\n\tst.global.u32 \t[%%rd604], %%r1;\n\tret;\n\n}\n\n");
    if (at >= cap) { VT_CHECK(0, "the PTX of many fits %zu bytes", cap); free(t); return; }
    blob b;
    vt_fatbin *fb;
    const vt_kernel_layout *k = ptx_kernel(t, "_Z4manyPiPS_S_", "PTX with 600 address registers", &fb, &b);
    unsigned seen = 0;
    for (int32_t i = 0; k && i < k->nuses; i++)
        if (k->uses[i].offset == 0 && k->uses[i].param < 3) seen |= 1u << k->uses[i].param;
    VT_CHECK(k && k->nuses == 3 && seen == 7, "p, pp and out, out's register read 600 address registers later (%d uses, params %x)",
             k ? k->nuses : -9, seen);
    ptx_done(fb, &b);
    free(t);
}

/* PTX identifiers may start with '%' or '$' (PTX ISA, identifiers: [_$%] then [a-zA-Z0-9_$]);
 * ptxas 13 assembles this hand-written kernel (-arch=sm_90). Its layout is read with those names
 * (out at 0, n at 8, _p at 16), and out, loaded by name and stored through, is the one address
 * used: n is stored as a value. */
static void test_ptx_percent_names(void)
{
    static const char text[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 %out, .param .u32 $n, .param .u64 _p)\n{\n"
        "\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<2>;\n"
        "\tld.param.u64 %rd1, [%out];\n\tld.param.u32 %r1, [$n];\n"
        "\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";
    blob b;
    vt_fatbin *fb;
    const vt_kernel_layout *k = ptx_kernel(text, "k", "PTX with % and $ parameter names", &fb, &b);
    check_layout(fb, "k", 3, (const uint32_t[]){0, 8, 8, 4, 16, 8}, "% and $ names");
    VT_CHECK(k && k->nuses == 1 && k->uses[0].param == 0 && k->uses[0].offset == 0,
             "%%out stored through: the one use is param 0 word 0 (got %d uses)", k ? k->nuses : -9);
    ptx_done(fb, &b);
}

int main(void)
{
    test_ptx_syntax();
    test_param_limit();
    test_ptx_use_whitespace();
    test_ptx_use_vector_store();
    test_ptx_use_before_param();
    test_ptx_use_halves();
    test_ptx_use_many_registers();
    test_ptx_percent_names();
    return vt_test_finish();
}
