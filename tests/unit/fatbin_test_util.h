/* fatbin_test_util.h - what test_fatbin.c and test_fatbin_ptx.c share: an owned byte buffer, the
 * parser called with its contract checked (a failure leaves *out NULL and says why), a kernel's
 * layout compared with the expected offsets and sizes. */
#ifndef VT_FATBIN_TEST_UTIL_H
#define VT_FATBIN_TEST_UTIL_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fatbin.h"
#include "vt_test.h"

typedef struct blob {
    unsigned char *p;
    size_t n;
} blob;

static inline blob copy(const void *p, size_t n)
{
    blob b = {malloc(n ? n : 1), n};
    if (b.p)
        memcpy(b.p, p, n);
    return b;
}

static inline int parse(const blob *b, unsigned sm, vt_fatbin **fb)
{
    char err[128];
    *fb = (vt_fatbin *)1;
    int rc = vt_fatbin_parse_arch(b->p, b->n, sm, fb, err, sizeof err);
    if (rc < 0 && (*fb != NULL || !err[0]))
        return -1000; /* contract: *out NULL and a message */
    return rc;
}

static inline void check_layout(const vt_fatbin *fb, const char *name, uint32_t n, const uint32_t *offsz,
                                       const char *what)
{
    const vt_kernel_layout *k = vt_fatbin_find(fb, name);
    int good = k && k->nparams == n;
    for (uint32_t i = 0; good && i < n; i++)
        good = k->params[i].offset == offsz[2 * i] && k->params[i].size == offsz[2 * i + 1];
    VT_CHECK(good, "%s: %s layout", what, name);
}

#endif
