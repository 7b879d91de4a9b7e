/* vt_test.h - minimal unit-test helpers. Each check prints "ok - ..." or "not ok - ..." (TAP-like);
 * tests/run.sh counts those lines. main() returns vt_test_finish(). */
#ifndef VT_TEST_H
#define VT_TEST_H
#include <stdio.h>
#include <string.h>

static int vt_test_failures;

#define VT_CHECK(cond, ...) do {                                                   \
        if (cond) { printf("ok - "); printf(__VA_ARGS__); printf("\n"); }          \
        else { vt_test_failures++; printf("not ok - "); printf(__VA_ARGS__);       \
               printf("  (%s:%d: %s)\n", __FILE__, __LINE__, #cond); }             \
        fflush(stdout);                                                            \
    } while (0)

#define VT_CHECK_EQ_INT(a, b, name) do { long long va_ = (long long)(a), vb_ = (long long)(b); \
        VT_CHECK(va_ == vb_, "%s (got %lld, want %lld)", name, va_, vb_); } while (0)
#define VT_CHECK_EQ_STR(a, b, name) do { const char *sa_ = (a), *sb_ = (b);                    \
        VT_CHECK(sa_ && sb_ && strcmp(sa_, sb_) == 0, "%s (got '%s', want '%s')", name,          \
                 sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)"); } while (0)

static inline int vt_test_finish(void) { return vt_test_failures ? 1 : 0; }
#endif
