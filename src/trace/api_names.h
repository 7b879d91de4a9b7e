/* api_names.h - API names as small ids, so a record carries 4 bytes instead of a 40-byte copy.
 *
 * The table is append-only: an id, once given, names the same string for the life of the process.
 * It lives in the process until the journal opens, then in the ring file's header
 * (vt_api_names_use), so crash recovery in another process can name the records it formats.
 * Names are stored cut at the first character outside [A-Za-z0-9_] and at VT_API_NAME_MAX - 1,
 * NUL-padded; a table read back from a file gets the same treatment (vt_api_names_sanitize)
 * before use, so formatting may copy a name without looking at it. Id 0 is the empty name (NULL).
 *
 * Interning locks only the first time a thread meets a name: the per-thread memo is keyed by the
 * string's address, hence `api` must be a string whose bytes never change (the hooks pass
 * literals). The memo is two-way set associative: two hot names whose addresses hash alike
 * (cudaMalloc and cudaFree in an allocation loop, say) must not evict each other on every call,
 * since a miss costs the lock and a search of the table. Reading a name never locks: an id reaches a reader through a record published after
 * the name was stored. Not async-signal-safe, like the hooks.
 */
#ifndef VT_API_NAMES_H
#define VT_API_NAMES_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define VT_API_NAME_MAX 40
#define VT_API_IDS 1024 /* the tracer hooks ~400 entry points; a full table names the rest "" */

struct vt_api_names {
    _Atomic uint32_t count; /* ids [0, count) are filled */
    uint32_t cap;           /* VT_API_IDS */
    char name[VT_API_IDS][VT_API_NAME_MAX];
};

struct vt_api_memo { const char *name[2]; uint32_t id[2]; }; /* way 0 the most recent */
#define VT_API_MEMO_BITS 4
extern __thread __attribute__((tls_model("initial-exec"))) struct vt_api_memo vt_api_memo[1 << VT_API_MEMO_BITS];
uint32_t vt_api_id_slow(const char *api, struct vt_api_memo *e);
/* The memo set a name's address falls in. */
static inline unsigned vt_api_memo_set(const char *api)
{
    return (unsigned)(((uintptr_t)api * 0x9E3779B97F4A7C15ull) >> (64 - VT_API_MEMO_BITS));
}
static inline uint32_t vt_api_id(const char *api)
{
    /* A zeroed entry (name NULL, id 0) is already the right answer for NULL. */
    struct vt_api_memo *e = &vt_api_memo[vt_api_memo_set(api)];
    if (__builtin_expect(e->name[0] == api, 1)) return e->id[0];
    if (e->name[1] == api) return e->id[1];
    return vt_api_id_slow(api, e);
}
/* Memo misses of the calling thread (tests). */
uint64_t vt_api_id_misses(void);

/* The table names are read from in this process. */
const struct vt_api_names *vt_api_names_current(void);
/* Copy the current table into `dst` and read and write it there from now on; NULL: back to the
 * process's own table (before the memory holding the current one goes away). */
void vt_api_names_use(struct vt_api_names *dst);
/* Make a table read from a file safe to format from: count clamped, every name cut as above. */
void vt_api_names_sanitize(struct vt_api_names *t);
/* The name of `id`, NUL-terminated within VT_API_NAME_MAX bytes ("" for an id out of range). */
static inline const char *vt_api_name(const struct vt_api_names *t, uint32_t id)
{
    static const char none[VT_API_NAME_MAX];
    return id < atomic_load_explicit(&t->count, memory_order_acquire) ? t->name[id] : none;
}
/* Fork child: the interning lock may have been held by a thread that is gone. */
void vt_api_names_after_fork(void);

#endif
