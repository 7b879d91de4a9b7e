/* fatbin_test_util.h - what test_fatbin.c, test_fatbin_ptx.c and test_fatbin_elf.c share: an owned
 * byte buffer, a fixture loaded, the parser called with its contract checked (a failure leaves
 * *out NULL and says why), a kernel's layout compared with the expected offsets and sizes. */
#ifndef VT_FATBIN_TEST_UTIL_H
#define VT_FATBIN_TEST_UTIL_H
#include <stdint.h>
#include <stdio.h>
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

/* Little-endian fields of an image being edited (x86-64 and aarch64 hosts are little-endian). */
static inline uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint16_t rd16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline void wr64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline void wr32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void wr16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }

/* An edit of a loaded image (it may grow the buffer). */
typedef void (*patch_fn)(blob *b);

/* Fixture NAME of tests/data/fatbin (or $VT_FATBIN_DATA); p NULL when it cannot be read. */
static inline blob load(const char *name)
{
    const char *dir = getenv("VT_FATBIN_DATA");
    char path[512];
    blob b = {NULL, 0};
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "tests/data/fatbin", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return b;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.p = malloc((size_t)n + 1);
    if (b.p && fread(b.p, 1, (size_t)n, f) == (size_t)n) {
        b.n = (size_t)n;
        b.p[n] = 0;
    } else {
        free(b.p);
        b.p = NULL;
    }
    fclose(f);
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
