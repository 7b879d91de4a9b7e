/* api_names.c - the API name table (see api_names.h). */
#include "api_names.h"

#include <pthread.h>
#include <string.h>
#include "tracer.h"

__thread __attribute__((tls_model("initial-exec"))) struct vt_api_memo vt_api_memo[1 << VT_API_MEMO_BITS];
static __thread __attribute__((tls_model("initial-exec"))) uint64_t misses;
uint64_t vt_api_id_misses(void) { return misses; }

static struct vt_api_names own = { .count = 1, .cap = VT_API_IDS }; /* id 0: "" */
static _Atomic(struct vt_api_names *) cur = &own;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int ident_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* dst (VT_API_NAME_MAX bytes) = src cut as api_names.h says, NUL-padded */
static void cut_name(char *dst, const char *src)
{
    size_t n = 0;
    while (n < VT_API_NAME_MAX - 1 && ident_char(src[n])) n++;
    memmove(dst, src, n);
    memset(dst + n, 0, VT_API_NAME_MAX - n);
}

uint32_t vt_api_id_slow(const char *api, struct vt_api_memo *e)
{
    uint32_t id = 0;
    misses++;
    if (api) {
        char want[VT_API_NAME_MAX];
        cut_name(want, api);
        vt_mutex_lock(&lock);
        struct vt_api_names *t = atomic_load_explicit(&cur, memory_order_relaxed);
        uint32_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
        for (id = 1; id < n && memcmp(t->name[id], want, VT_API_NAME_MAX) != 0; id++) {}
        if (id == n) {
            if (n < VT_API_IDS) {
                memcpy(t->name[n], want, VT_API_NAME_MAX);
                atomic_store_explicit(&t->count, n + 1, memory_order_release);
            } else id = 0; /* full: the record goes out unnamed rather than not at all */
        }
        vt_mutex_unlock(&lock);
    }
    e->name[1] = e->name[0]; /* the older way goes */
    e->id[1] = e->id[0];
    e->name[0] = api;
    e->id[0] = id;
    return id;
}

const struct vt_api_names *vt_api_names_current(void) { return atomic_load_explicit(&cur, memory_order_acquire); }

void vt_api_names_use(struct vt_api_names *dst)
{
    if (!dst) dst = &own;
    vt_mutex_lock(&lock);
    struct vt_api_names *t = atomic_load_explicit(&cur, memory_order_relaxed);
    if (t != dst) {
        uint32_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
        memcpy(dst->name, t->name, (size_t)n * VT_API_NAME_MAX);
        dst->cap = VT_API_IDS;
        atomic_store_explicit(&dst->count, n, memory_order_release);
        atomic_store_explicit(&cur, dst, memory_order_release);
    }
    vt_mutex_unlock(&lock);
}

void vt_api_names_sanitize(struct vt_api_names *t)
{
    uint32_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
    if (n > VT_API_IDS) n = VT_API_IDS;
    atomic_store_explicit(&t->count, n, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++) cut_name(t->name[i], t->name[i]);
    if (n) memset(t->name[0], 0, VT_API_NAME_MAX);
}

void vt_api_names_after_fork(void) { pthread_mutex_init(&lock, NULL); }
