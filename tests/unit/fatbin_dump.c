/* fatbin_dump.c - test tool: print the kernel layouts vt_fatbin_parse finds in a file.
 * Usage: fatbin_dump FILE [SM]   (SM: device arch for vt_fatbin_parse_arch, e.g. 90) ->  one line per kernel: "NAME SOURCE N OFF:SIZE ..." (SOURCE elf|ptx);
 * with VT_DUMP_USES=1 also "uses NAME P:OFF ..." (the words the PTX uses as addresses; P:* the whole
 * parameter; "uses NAME ?" when no PTX told); exit 1 with "error CODE: MSG" on stderr when the
 * parse fails. */
#include <stdio.h>
#include <stdlib.h>
#include "fatbin.h"

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: fatbin_dump FILE [SM]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    size_t cap = 1 << 16, len = 0, r;
    unsigned char *buf = malloc(cap);
    while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) {
            unsigned char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    vt_fatbin *fb;
    char err[256];
    unsigned sm = argc == 3 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    int rc = vt_fatbin_parse_arch(buf, len, sm, &fb, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "error %d: %s\n", rc, err);
        free(buf);
        return 1;
    }
    for (size_t i = 0; i < vt_fatbin_count(fb); i++) {
        const vt_kernel_layout *k = vt_fatbin_at(fb, i);
        printf("%s %s %u", k->name, k->source == VT_LAYOUT_ELF ? "elf" : "ptx", k->nparams);
        for (uint32_t j = 0; j < k->nparams; j++)
            printf(" %u:%u", k->params[j].offset, k->params[j].size);
        printf("\n");
        const char *want = getenv("VT_DUMP_USES");
        if (!want || !*want) continue;
        printf("uses %s", k->name);
        if (k->nuses < 0) printf(" ?");
        for (int32_t j = 0; j < k->nuses; j++) {
            if (k->uses[j].offset == VT_USE_WHOLE) printf(" %u:*", k->uses[j].param);
            else printf(" %u:%u", k->uses[j].param, k->uses[j].offset);
        }
        printf("\n");
    }
    vt_fatbin_free(fb);
    free(buf);
    return 0;
}
