/* fuzz_fatbin.c - libFuzzer target for vt_fatbin_parse (make fuzz-fatbin). Inputs starting with
 * the wrapper magic are skipped: a wrapper holds a raw pointer that the parser follows by design.
 * Each input is parsed with its length and, NUL-terminated, with len 0 (the "unknown length" path
 * for PTX text); layouts found are checked for internal consistency. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fatbin.h"

static void check(vt_fatbin *fb, int rc)
{
    if (rc < 0) {
        if (fb)
            abort();
        return;
    }
    if ((size_t)rc != vt_fatbin_count(fb))
        abort();
    for (size_t i = 0; i < vt_fatbin_count(fb); i++) {
        const vt_kernel_layout *k = vt_fatbin_at(fb, i);
        if (!k->name || vt_fatbin_find(fb, k->name) != k || k->nparams > VT_FATBIN_MAX_PARAMS)
            abort();
        for (uint32_t j = 0; j < k->nparams; j++)
            if ((uint64_t)k->params[j].offset + k->params[j].size > 0x20000)
                abort();
    }
    vt_fatbin_free(fb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t wrap[4] = {0xB1, 0x43, 0x62, 0x46};
    if (size == 0 || (size >= 4 && memcmp(data, wrap, 4) == 0))
        return 0;
    char err[128];
    vt_fatbin *fb = NULL;
    int rc = vt_fatbin_parse(data, size, &fb, err, sizeof err);
    check(fb, rc);
    fb = NULL; /* arch-aware variant on the same input */
    rc = vt_fatbin_parse_arch(data, size, 86, &fb, err, sizeof err);
    check(fb, rc);
    /* text path with len 0: only safe on a NUL-terminated copy that no magic can match */
    if (data[0] != 0x50 && data[0] != 0x7f && data[0] != 0xB1) {
        char *s = malloc(size + 1);
        if (!s)
            return 0;
        memcpy(s, data, size);
        s[size] = 0;
        fb = NULL;
        rc = vt_fatbin_parse(s, 0, &fb, err, sizeof err);
        check(fb, rc);
        free(s);
    }
    return 0;
}
