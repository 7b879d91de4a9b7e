/* util.h - small containers for the report: a u64->u64 open-addressing hash map and a string
 * interner.  Neither prints; allocation failure returns -1 (the map is left unchanged). */
#ifndef VT_REPORT_UTIL_H
#define VT_REPORT_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Map with linear probing and backward-shift deletion.  Zero-initialise to get an empty map. */
struct vtr_hmap {
    uint64_t *keys, *vals;
    uint8_t *used;
    size_t cap, len;        /* cap is 0 or a power of two */
};
/* Returns a pointer to KEY's value, or NULL when absent.  Valid until the next put/del. */
uint64_t *vtr_hmap_get(const struct vtr_hmap *m, uint64_t key);
/* Inserts or overwrites.  0 on success, -1 out of memory. */
int vtr_hmap_put(struct vtr_hmap *m, uint64_t key, uint64_t val);
/* Removes KEY; returns 1 when it was there. */
int vtr_hmap_del(struct vtr_hmap *m, uint64_t key);
void vtr_hmap_free(struct vtr_hmap *m);

/* String interner: ids are dense from 0; strings are owned by the table. Zero-initialise. */
struct vtr_strtab {
    char **strs;
    size_t len, cap;
    struct vtr_hmap index;   /* hash -> first id; collisions chained through `next` */
    uint32_t *next;
};
/* Returns the id of S (adding a copy), or -1 out of memory. */
int64_t vtr_strtab_intern(struct vtr_strtab *t, const char *s);
#define vtr_strtab_get(t, id) ((t)->strs[(id)])
void vtr_strtab_free(struct vtr_strtab *t);

uint64_t vtr_hash64(const void *p, size_t n);
static inline uint64_t vtr_mix64(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    return x;
}

/* Human-readable bytes: "512 B", "1.50 KiB", "3.00 GiB" into BUF (>= 32 bytes); returns BUF. */
char *vtr_fmt_bytes(char *buf, size_t n, uint64_t bytes);

/* 1 when PATH is a regular file holding nothing but NUL bytes, or nothing: its process was killed
 * between the trace's creation and its header (run and report skip it, saying so). */
int vtr_trace_is_empty(const char *path);
/* The same for an open file, read with pread (FD's offset is not moved). */
int vtr_fd_is_empty(int fd);

/* An output file (--html, --perfetto, bandwidth -o) that appears at PATH only once it is whole:
 * written to a new file beside it (created exclusively, so never through a link at PATH or over
 * another file), then renamed over PATH; a kill, a full disk or a failed render leaves PATH as it
 * was. PATH's directory is reached without following a link another user owns (safepath.h), and
 * the new file is made and renamed in that very directory. */
struct vtr_out { FILE *f; int dfd; const char *base; char tmp[512]; char path[4096]; };
/* 0, or -1 with errno set. */
int vtr_out_open(struct vtr_out *o, const char *path);
/* Closes the file; when ok and everything was written, renames it over PATH, else removes it.
 * 0 when PATH now holds the whole file, -1 otherwise. */
int vtr_out_commit(struct vtr_out *o, int ok);
#endif
