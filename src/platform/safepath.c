/* safepath.c - a path's directory reached one component at a time (see safepath.h). */
#include "safepath.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VT_SAFEPATH_MAX   4096
#define VT_SAFEPATH_LINKS 40 /* as the kernel's own limit on links in one lookup */

/* Where the walk stands, for naming a refused link: the directories entered so far. */
static void where_enter(char *where, const char *comp, size_t n)
{
    size_t len = strlen(where);
    if (n == 2 && comp[0] == '.' && comp[1] == '.') {
        char *slash = strrchr(where, '/');
        if (slash) *(slash == where ? slash + 1 : slash) = '\0';
        return;
    }
    if (len + 1 + n >= VT_SAFEPATH_MAX) return;
    if (len == 0 || where[len - 1] != '/') where[len++] = '/';
    memcpy(where + len, comp, n);
    where[len + n] = '\0';
}

/* The next component of the path being walked: opened without following it, made when missing
 * and asked to. An fd, or a negative errno. */
static int open_component(int dfd, const char *comp, int flags)
{
    /* O_DIRECTORY first: it triggers an automount (autofs /home) as a path lookup would */
    int fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno == ENOENT && (flags & VT_SAFEPATH_MKDIR)) {
        if (mkdirat(dfd, comp, 0700) != 0 && errno != EEXIST) return -errno;
    } else if (errno != ENOTDIR && errno != ELOOP) {
        return -errno;
    }
    fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int vt_safepath_dir_open(const char *path, int flags, const char **base, char *bad, size_t badlen)
{
    const char *last = strrchr(path, '/');
    if (base) *base = last ? last + 1 : path;
    size_t dirlen = last ? (size_t)(last - path) + 1 : 0;
    /* rest: what is left to walk, rewritten when a link splices its target in */
    char rest[2 * VT_SAFEPATH_MAX], where[VT_SAFEPATH_MAX], target[VT_SAFEPATH_MAX];
    if (dirlen >= VT_SAFEPATH_MAX) return -ENAMETOOLONG;
    memcpy(rest, path, dirlen);
    rest[dirlen] = '\0';
    if (path[0] == '/') strcpy(where, "/");
    else if (!getcwd(where, sizeof where)) where[0] = '\0';
    int dfd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -errno;
    int links = 0;
    char *p = rest;
    for (;;) {
        while (*p == '/') p++;
        if (!*p) return dfd;
        char *end = p + strcspn(p, "/");
        char saved = *end;
        *end = '\0';
        size_t n = (size_t)(end - p);
        if (n == 1 && p[0] == '.') { *end = saved; p = end; continue; }
        int fd = open_component(dfd, p, flags);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            int e = fd < 0 ? -fd : errno;
            if (fd >= 0) close(fd);
            close(dfd);
            return -e;
        }
        if (S_ISDIR(st.st_mode)) {
            close(dfd);
            dfd = fd;
            where_enter(where, p, n);
            *end = saved;
            p = end;
            continue;
        }
        if (!S_ISLNK(st.st_mode)) { close(fd); close(dfd); return -ENOTDIR; }
        if (st.st_uid != geteuid() && st.st_uid != 0) {
            if (bad && badlen) {
                char named[VT_SAFEPATH_MAX];
                memcpy(named, where, strlen(where) + 1);
                where_enter(named, p, n);
                size_t k = strlen(named);
                if (k >= badlen) k = badlen - 1;
                memcpy(bad, named, k);
                bad[k] = '\0';
            }
            close(fd);
            close(dfd);
            return -EPERM;
        }
        /* the link read through the descriptor whose owner was checked, never by its name again */
        ssize_t tl = ++links > VT_SAFEPATH_LINKS ? -1 : readlinkat(fd, "", target, sizeof target);
        int e = links > VT_SAFEPATH_LINKS ? ELOOP : errno;
        close(fd);
        if (tl <= 0 || (size_t)tl >= sizeof target) { close(dfd); return tl < 0 ? -e : -ENAMETOOLONG; }
        *end = saved;
        size_t tail = strlen(end);
        if ((size_t)tl + tail + 1 >= sizeof rest) { close(dfd); return -ENAMETOOLONG; }
        memmove(rest + tl, end, tail + 1);
        memcpy(rest, target, (size_t)tl);
        p = rest;
        if (target[0] == '/') {
            close(dfd);
            dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (dfd < 0) return -errno;
            strcpy(where, "/");
        }
    }
}
