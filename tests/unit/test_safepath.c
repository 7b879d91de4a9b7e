/* test_safepath.c - vt_safepath_dir_open: which directory a path reaches, which links it follows,
 * which it refuses. Expected directories are checked by inode against stat(2) of the real ones. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safepath.h"
#include "vt_test.h"

static char root[256];

static const char *at(const char *rel)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
    return buf[k];
}

/* 1 when PATH reaches the directory DIR (same inode) with BASE as its last component */
static int reaches(const char *path, const char *dir, const char *base_want, int flags)
{
    const char *base = NULL;
    int fd = vt_safepath_dir_open(path, flags, &base, NULL, 0);
    if (fd < 0) return 0;
    struct stat a, b;
    int same = fstat(fd, &a) == 0 && stat(dir, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    close(fd);
    return same && base && !strcmp(base, base_want);
}

int main(void)
{
    snprintf(root, sizeof root, "%s/vt-safepath-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) { perror("mkdtemp"); return 1; }
    mkdir(at("a"), 0700);
    mkdir(at("a/b"), 0700);
    mkdir(at("other"), 0700);
    symlink("a/b", at("rel"));                /* a relative link, the user's own */
    symlink(at("a"), at("abs"));              /* an absolute one */
    symlink("../other", at("a/up"));          /* through .. */
    symlink("loop2", at("loop1"));
    symlink("loop1", at("loop2"));
    symlink(at("a/b/f"), at("notdir"));       /* a link to a file that is not there */

    VT_CHECK(reaches(at("a/b/t.jsonl"), at("a/b"), "t.jsonl", 0), "a plain path reaches its directory");
    VT_CHECK(reaches(at("rel/t.jsonl"), at("a/b"), "t.jsonl", 0), "the user's relative link is followed");
    VT_CHECK(reaches(at("abs/b/t.jsonl"), at("a/b"), "t.jsonl", 0), "the user's absolute link is followed, the walk goes on in it");
    VT_CHECK(reaches(at("a/up/t.jsonl"), at("other"), "t.jsonl", 0), "a link with .. resolves from the link's directory");
    VT_CHECK(reaches(at("a/./b//t.jsonl"), at("a/b"), "t.jsonl", 0), "'.' and doubled slashes are skipped");
    VT_CHECK(reaches(at("a/b/"), at("a/b"), "", 0), "a path ending in '/': the directory itself, base empty");
    VT_CHECK_EQ_INT(vt_safepath_dir_open(at("loop1/t"), 0, NULL, NULL, 0), -ELOOP, "a link loop: -ELOOP");
    VT_CHECK_EQ_INT(vt_safepath_dir_open(at("missing/x/t"), 0, NULL, NULL, 0), -ENOENT, "a missing directory, not asked to make: -ENOENT");
    VT_CHECK(reaches(at("new/x/t"), at("new/x"), "t", VT_SAFEPATH_MKDIR), "missing directories are made when asked");
    struct stat st;
    VT_CHECK(stat(at("new/x"), &st) == 0 && (st.st_mode & 0777) == 0700, "... mode 0700");
    int f = open(at("a/file"), O_CREAT | O_WRONLY, 0600);
    close(f);
    VT_CHECK_EQ_INT(vt_safepath_dir_open(at("a/file/t"), 0, NULL, NULL, 0), -ENOTDIR, "a file on the way: -ENOTDIR");
    VT_CHECK_EQ_INT(vt_safepath_dir_open(at("notdir/t"), 0, NULL, NULL, 0), -ENOENT, "a link to nothing: -ENOENT");
    char cwd[1024];
    if (getcwd(cwd, sizeof cwd) && chdir(at("a")) == 0) {
        VT_CHECK(reaches("b/t", at("a/b"), "t", 0), "a relative path starts at the working directory");
        VT_CHECK(reaches("t", at("a"), "t", 0), "a bare name: the working directory");
        if (chdir(cwd) != 0) return 1;
    }

    /* a link owned by another user (root can make one: lchown) */
    if (geteuid() == 0) {
        symlink(at("other"), at("foreign"));
        if (lchown(at("foreign"), 65534, 65534) == 0) {
            char bad[1024] = "";
            VT_CHECK_EQ_INT(vt_safepath_dir_open(at("foreign/t"), 0, NULL, bad, sizeof bad), -EPERM,
                            "a link another user owns: -EPERM");
            VT_CHECK_EQ_STR(bad, at("foreign"), "... naming the link");
            symlink("foreign", at("mine"));
            bad[0] = '\0';
            VT_CHECK_EQ_INT(vt_safepath_dir_open(at("mine/t"), 0, NULL, bad, sizeof bad), -EPERM,
                            "the user's own link to another user's link: -EPERM too");
            VT_CHECK_EQ_STR(bad, at("foreign"), "... naming the other user's link");
            /* a directory another user owns is entered (only links are refused) */
            VT_CHECK(chown(at("other"), 65534, 65534) == 0 && reaches(at("other/t"), at("other"), "t", 0), "a directory another user owns is entered");
        }
    } else {
        printf("skip - links owned by another user: needs root\n");
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) return 1;
    return vt_test_finish();
}
