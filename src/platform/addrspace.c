/* addrspace.c - the top of the user address space from /proc/self/maps (addrspace.h). */
#include "addrspace.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Atomic uint64_t vt_va_top = VT_VA_TOP_MIN;

uint64_t vt_va_top_for(uint64_t end)
{
    if (!end || end >> 63) return VT_VA_TOP_MIN;
    uint64_t top = VT_VA_TOP_MIN;
    while (top < end - 1) top = top << 1 | 1;
    return top;
}

void vt_va_raise_slow(uint64_t end)
{
    uint64_t want = vt_va_top_for(end), cur = vt_va_top_now();
    while (want > cur && !atomic_compare_exchange_weak(&vt_va_top, &cur, want)) {}
}

static uint64_t hex(const char **s)
{
    uint64_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return v;
        v = v << 4 | (uint64_t)d;
    }
}

uint64_t vt_va_highest_end(const char *text)
{
    uint64_t best = 0;
    for (const char *line = text; *line;) {
        const char *s = line;
        hex(&s);
        if (*s == '-') {
            s++;
            uint64_t end = hex(&s);
            if (!(end >> 63) && end > best) best = end;
        }
        const char *eol = strchr(line, '\n');
        if (!eol) break;
        line = eol + 1;
    }
    return best;
}

char *vt_read_maps(void)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) { close(fd); return NULL; }
    for (;;) {
        if (len + 4096 > cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return buf;
}

void vt_va_init(void)
{
    char *maps = vt_read_maps();
    if (!maps) return;
    vt_va_raise(vt_va_highest_end(maps));
    free(maps);
}
