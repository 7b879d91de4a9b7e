/* util.c - u64 hash map, string interner and byte formatting for the report. */
#include "report/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safepath.h"

static int hmap_grow(struct vtr_hmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    struct vtr_hmap n = { calloc(ncap, 8), calloc(ncap, 8), calloc(ncap, 1), ncap, 0 };
    if (!n.keys || !n.vals || !n.used) { vtr_hmap_free(&n); return -1; }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i]) continue;
        size_t j = vtr_mix64(m->keys[i]) & (ncap - 1);
        while (n.used[j]) j = (j + 1) & (ncap - 1);
        n.used[j] = 1; n.keys[j] = m->keys[i]; n.vals[j] = m->vals[i]; n.len++;
    }
    vtr_hmap_free(m);
    *m = n;
    return 0;
}

uint64_t *vtr_hmap_get(const struct vtr_hmap *m, uint64_t key)
{
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1, i = vtr_mix64(key) & mask;
    while (m->used[i]) {
        if (m->keys[i] == key) return &m->vals[i];
        i = (i + 1) & mask;
    }
    return NULL;
}

int vtr_hmap_put(struct vtr_hmap *m, uint64_t key, uint64_t val)
{
    uint64_t *v = vtr_hmap_get(m, key);
    if (v) { *v = val; return 0; }
    if ((m->len + 1) * 4 > m->cap * 3 && hmap_grow(m) < 0) return -1;
    size_t mask = m->cap - 1, i = vtr_mix64(key) & mask;
    while (m->used[i]) i = (i + 1) & mask;
    m->used[i] = 1; m->keys[i] = key; m->vals[i] = val; m->len++;
    return 0;
}

int vtr_hmap_del(struct vtr_hmap *m, uint64_t key)
{
    if (!m->cap) return 0;
    size_t mask = m->cap - 1, i = vtr_mix64(key) & mask;
    while (m->used[i] && m->keys[i] != key) i = (i + 1) & mask;
    if (!m->used[i]) return 0;
    m->used[i] = 0; m->len--;
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = vtr_mix64(m->keys[j]) & mask;
        /* move j into the hole at i when its home is not in (i, j] (cyclically) */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            m->keys[i] = m->keys[j]; m->vals[i] = m->vals[j]; m->used[i] = 1;
            m->used[j] = 0;
            i = j;
        }
    }
    return 1;
}

void vtr_hmap_free(struct vtr_hmap *m)
{
    free(m->keys); free(m->vals); free(m->used);
    memset(m, 0, sizeof *m);
}

uint64_t vtr_hash64(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 1099511628211ull; }
    return vtr_mix64(h);
}

int64_t vtr_strtab_intern(struct vtr_strtab *t, const char *s)
{
    uint64_t h = vtr_hash64(s, strlen(s));
    uint64_t *first = vtr_hmap_get(&t->index, h);
    if (first) {
        for (uint32_t id = (uint32_t)*first; id != UINT32_MAX; id = t->next[id])
            if (!strcmp(t->strs[id], s)) return id;
    }
    if (t->len == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 64;
        char **ns = realloc(t->strs, ncap * sizeof *ns);
        if (!ns) return -1;
        t->strs = ns;
        uint32_t *nn = realloc(t->next, ncap * sizeof *nn);
        if (!nn) return -1;
        t->next = nn;
        t->cap = ncap;
    }
    char *copy = strdup(s);
    if (!copy) return -1;
    uint32_t id = (uint32_t)t->len;
    t->next[id] = first ? (uint32_t)*first : UINT32_MAX;
    if (vtr_hmap_put(&t->index, h, id) < 0) { free(copy); return -1; }
    t->strs[t->len++] = copy;
    return id;
}

void vtr_strtab_free(struct vtr_strtab *t)
{
    for (size_t i = 0; i < t->len; i++) free(t->strs[i]);
    free(t->strs);
    free(t->next);
    vtr_hmap_free(&t->index);
    memset(t, 0, sizeof *t);
}

char *vtr_fmt_bytes(char *buf, size_t n, uint64_t b)
{
    static const char *const u[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (b < 1024) { snprintf(buf, n, "%llu B", (unsigned long long)b); return buf; }
    double v = (double)b / 1024;
    int i = 0;
    while (v >= 1024 && i < 5) { v /= 1024; i++; }
    snprintf(buf, n, "%.2f %s", v, u[i]);
    return buf;
}

/* A trace with nothing in it but NULs (or nothing at all): its process was killed between the
 * file's creation and its header. Read through the descriptor, never followed as a link. */
int vtr_trace_is_empty(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    int empty = vtr_fd_is_empty(fd);
    close(fd);
    return empty;
}

int vtr_fd_is_empty(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    char buf[65536];
    ssize_t n;
    off_t off = 0;
    while ((n = pread(fd, buf, sizeof buf, off)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            if (buf[i]) return 0;
        off += n;
    }
    return 1;
}

int vtr_out_open(struct vtr_out *o, const char *path)
{
    o->f = NULL;
    o->dfd = -1;
    if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path) { errno = ENAMETOOLONG; return -1; }
    const char *base;
    int dfd = vt_safepath_dir_open(o->path, 0, &base, NULL, 0);
    if (dfd < 0) { errno = -dfd; return -1; }
    if (!*base || strlen(base) > 240) { close(dfd); errno = !*base ? EISDIR : ENAMETOOLONG; return -1; }
    o->base = base;
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int tries = 0; tries < 100; tries++) {
        unsigned char rnd[6];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) break;
        char suffix[7];
        for (int i = 0; i < 6; i++) suffix[i] = set[rnd[i] % (sizeof set - 1)];
        suffix[6] = '\0';
        snprintf(o->tmp, sizeof o->tmp, ".%s.%s", base, suffix);
        /* 0666 less the umask: the mode the report would have had written in place */
        int fd = openat(dfd, o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) break;
        if (!(o->f = fdopen(fd, "w"))) {
            int e = errno;
            close(fd);
            unlinkat(dfd, o->tmp, 0);
            errno = e;
            break;
        }
        o->dfd = dfd;
        return 0;
    }
    int e = errno;
    close(dfd);
    errno = e;
    return -1;
}

int vtr_out_commit(struct vtr_out *o, int ok)
{
    if (!o->f) return -1;
    if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0) ok = 0;
    if (fclose(o->f) != 0) ok = 0;
    o->f = NULL;
    int rc = ok && renameat(o->dfd, o->tmp, o->dfd, o->base) == 0 ? 0 : -1;
    if (rc) unlinkat(o->dfd, o->tmp, 0);
    close(o->dfd);
    o->dfd = -1;
    return rc;
}
