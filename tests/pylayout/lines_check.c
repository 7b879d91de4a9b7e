/* lines_check.c - tools/report/pylines.c against CPython's co_lines() (tests/cases/py_lines.sh):
 * reads lines.py's output on stdin, decodes every offset, prints "codes offsets mismatches". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/pylines.h"

int main(void)
{
    static char line[1 << 20];
    static uint8_t table[1 << 19];
    size_t len = 0;
    int ver = 0, first = 0;
    long codes = 0, offsets = 0, bad = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (line[0] == 'C') {
            char *hex = malloc(strlen(line));
            if (!hex || sscanf(line, "C %d %d %s", &ver, &first, hex) < 2) { free(hex); continue; }
            if (sscanf(line, "C %d %d %s", &ver, &first, hex) < 3) hex[0] = 0;
            len = 0;
            for (const char *h = hex; h[0] && h[1] && len < sizeof table; h += 2) {
                unsigned v;
                sscanf(h, "%2x", &v);
                table[len++] = (uint8_t)v;
            }
            free(hex);
            codes++;
        } else if (line[0] == 'O') {
            unsigned off;
            int want;
            if (sscanf(line, "O %u %d", &off, &want) != 2) continue;
            offsets++;
            int got = vt_py_addr2line(ver, table, len, first, off);
            if (got != want && bad++ < 5) fprintf(stderr, "code %ld offset %u: got %d, want %d\n", codes, off, got, want);
        }
    }
    printf("%ld %ld %ld\n", codes, offsets, bad);
    return 0;
}
