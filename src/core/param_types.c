/* param_types.c - the top-level parameter types of a demangled kernel signature (param_types.h). */
#include "param_types.h"

#include <stdlib.h>
#include <string.h>

#include "resolve.h"

/* The built-in arithmetic types as the Itanium demangler (libstdc++, libc++abi) spells them. */
static const char *const arith_names[] = {
    "bool", "char", "signed char", "unsigned char", "wchar_t", "char8_t", "char16_t", "char32_t",
    "short", "unsigned short", "int", "unsigned int", "long", "unsigned long", "long long",
    "unsigned long long", "__int128", "unsigned __int128", "float", "double", "long double",
    "__float128", "_Float16", "_Float32", "_Float64", "_Float128", "std::float16_t", "std::bfloat16_t",
    "decltype(nullptr)", "std::nullptr_t",
};

static int is_space(char c) { return c == ' ' || c == '\t'; }

/* [s, e) trimmed, with a template argument's top-level cv-qualifiers dropped ("long const"). */
static int classify(const char *s, const char *e)
{
    for (;;) {
        while (s < e && is_space(*s)) s++;
        while (e > s && is_space(e[-1])) e--;
        if (e - s > 6 && !memcmp(e - 6, " const", 6)) { e -= 6; continue; }
        if (e - s > 9 && !memcmp(e - 9, " volatile", 9)) { e -= 9; continue; }
        if (e - s > 6 && !memcmp(s, "const ", 6)) { s += 6; continue; }
        break;
    }
    size_t n = (size_t)(e - s);
    if (!n) return VT_PT_OTHER;
    for (size_t i = 0; i < sizeof arith_names / sizeof arith_names[0]; i++)
        if (strlen(arith_names[i]) == n && !memcmp(arith_names[i], s, n)) return VT_PT_ARITH;
    if (e[-1] == '*') return VT_PT_POINTER;                   /* "float*", "char const*", "Foo<int>*" */
    /* "void (*)(int)", "int (*) [4]": a pointer to a function or an array */
    for (const char *p = s; p + 3 <= e; p++)
        if (p[0] == '(' && p[1] == '*' && p[2] == ')') return VT_PT_POINTER;
    if (e[-1] == '&' || e[-1] == ')' || e[-1] == ']') return VT_PT_OTHER; /* a reference, a function, an array */
    /* what remains is a name: a class, union, enum or closure type, or a template of one */
    return VT_PT_CLASS;
}

int vt_param_types_parse(const char *demangled, uint8_t *kinds, uint32_t max)
{
    if (!demangled) return -1;
    size_t len = strlen(demangled);
    if (len < 2 || demangled[len - 1] != ')') return -1;
    /* The parameter list is the last top-level parenthesised group: parentheses are balanced in
     * demangled text ("(anonymous namespace)::k(long)", "{lambda(float)#1}", "void (*)(int)"). */
    const char *open = NULL;
    int depth = 0;
    for (const char *p = demangled + len - 1; p >= demangled; p--) {
        if (*p == ')') depth++;
        else if (*p == '(' && --depth == 0) { open = p; break; }
    }
    if (!open || open == demangled) return -1;
    const char *s = open + 1, *end = demangled + len - 1;
    const char *t = s;
    while (t < end && is_space(*t)) t++;
    if (t == end) return 0;
    /* Commas at the top level separate parameters. Inside parentheses, brackets and braces
     * commas are protected by those; angle brackets count only outside them, where they are a
     * template's (an expression's '>' sits inside parentheses: "Foo<(1>2), int>"). */
    int paren = 0, angle = 0;
    uint32_t n = 0;
    const char *start = s;
    for (const char *p = s; p <= end; p++) {
        char c = p < end ? *p : ',';
        if (c == '(' || c == '[' || c == '{') paren++;
        else if (c == ')' || c == ']' || c == '}') { if (--paren < 0) return -1; }
        else if (!paren && c == '<') angle++;
        else if (!paren && c == '>') { if (--angle < 0) return -1; }
        else if (!paren && !angle && c == ',') {
            if (n == max) return -1;
            if (p == start) return -1; /* an empty parameter: not a signature */
            kinds[n++] = (uint8_t)classify(start, p);
            start = p + 1;
        }
    }
    if (paren || angle) return -1;
    /* "(void)" is not how the demangler writes no parameters, but a void parameter is none */
    if (n == 1 && end - s == 4 && !memcmp(s, "void", 4)) return 0;
    return (int)n;
}

int vt_param_types_of(const char *mangled, uint8_t *kinds, uint32_t max)
{
    char *d = vt_cxa_demangle(mangled);
    if (!d) return -1;
    int n = vt_param_types_parse(d, kinds, max);
    free(d);
    return n;
}
