/* graphs.c - the node sets of graphs being captured, graphs and execs (graphs.h). */
#include "graphs.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "cuda_abi.h"
#include "resolve.h"
#include "tracer.h"

struct gset { const void *key; struct vt_gnode *n; size_t cnt, cap; int exec; };
#define VT_GSETS 1024
static struct gset gsets[VT_GSETS];
/* Replays read the sets side by side (a read lock: threads replaying graphs never wait on each
 * other); capture, update and destroy write, ahead of new readers (threads replaying without a
 * pause would otherwise keep a destroy waiting for ever). A replay takes no lock of its own here
 * again (writer preference makes a nested read wait behind a waiting writer). */
static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static inline void g_write(void) { vt_ts.held++; pthread_rwlock_wrlock(&g_lock); }
static inline void g_read(void) { vt_ts.held++; pthread_rwlock_rdlock(&g_lock); }
static inline void g_unlock(void) { pthread_rwlock_unlock(&g_lock); vt_ts.held--; }
_Atomic int vt_captures_active;

void vt_graph_capture_begun(void) { atomic_fetch_add(&vt_captures_active, 1); }
void vt_graph_capture_ended(void)
{
    int n = atomic_load(&vt_captures_active);
    while (n > 0 && !atomic_compare_exchange_weak(&vt_captures_active, &n, n - 1)) {}
}

static struct gset *gset_find(const void *key, int create)
{
    struct gset *empty = NULL;
    for (int i = 0; i < VT_GSETS; i++) {
        if (gsets[i].key == key) return &gsets[i];
        if (!gsets[i].key && !empty) empty = &gsets[i];
    }
    if (create && empty) empty->key = key;
    return create ? empty : NULL;
}

static void free_nodes(struct vt_gnode *n, size_t cnt)
{
    for (size_t i = 0; i < cnt; i++) free(n[i].args);
    free(n);
}

/* Appends *nd to KEY's set, which then owns nd->args (freed here when it cannot be added). */
static void gset_add(const void *key, struct vt_gnode *nd)
{
    if (!key) { free(nd->args); return; }
    g_write();
    struct gset *s = gset_find(key, 1);
    if (s && s->cnt == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 8;
        struct vt_gnode *nn = realloc(s->n, nc * sizeof *nn);
        if (nn) { s->n = nn; s->cap = nc; }
    }
    if (s && s->cnt < s->cap) s->n[s->cnt++] = *nd;
    else free(nd->args);
    g_unlock();
}

void vt_graph_drop(const void *key)
{
    g_write();
    struct gset *s = gset_find(key, 0);
    if (s) { free_nodes(s->n, s->cnt); memset(s, 0, sizeof *s); }
    g_unlock();
}

/* A copy of CNT nodes owning its own argument bytes (a node whose bytes cannot be copied replays
 * unchecked); NULL when out of memory. g_lock held. */
static struct vt_gnode *copy_nodes(const struct vt_gnode *n, size_t cnt)
{
    struct vt_gnode *copy = malloc(cnt * sizeof *copy);
    if (!copy) return NULL;
    memcpy(copy, n, cnt * sizeof *copy);
    for (size_t i = 0; i < cnt; i++) {
        unsigned char *b = n[i].args ? malloc(n[i].args_len) : NULL;
        if (b) memcpy(b, n[i].args, n[i].args_len);
        copy[i].args = b;
    }
    return copy;
}

/* Appends a copy of N's nodes to *OUT (*CNT of them, room for *CAP), each conditional node
 * replaced by its bodies' nodes marked cond (nested ones too, DEPTH levels deep at most).
 * -1 out of memory. g_lock held. */
static int expand_into(const struct vt_gnode *n, size_t cnt, int cond, int depth, struct vt_gnode **out, size_t *len,
                       size_t *cap)
{
    for (size_t i = 0; i < cnt; i++) {
        if (n[i].kind == VT_G_COND) {
            size_t nb = n[i].args ? n[i].args_len / sizeof(void *) : 0;
            for (size_t b = 0; b < nb && depth < 8; b++) {
                const void *body;
                memcpy(&body, n[i].args + b * sizeof body, sizeof body);
                struct gset *s = body ? gset_find(body, 0) : NULL;
                if (s && expand_into(s->n, s->cnt, 1, depth + 1, out, len, cap) < 0) return -1;
            }
            continue;
        }
        if (*len == *cap) {
            size_t nc = *cap ? 2 * *cap : 8;
            struct vt_gnode *nn = realloc(*out, nc * sizeof *nn);
            if (!nn) return -1;
            *out = nn;
            *cap = nc;
        }
        struct vt_gnode *d = &(*out)[(*len)++];
        *d = n[i];
        d->cond = d->cond || cond;
        d->args = n[i].args ? malloc(n[i].args_len) : NULL;
        if (d->args) memcpy(d->args, n[i].args, n[i].args_len);
    }
    return 0;
}

void vt_graph_transfer(const void *from, const void *to, int move)
{
    if (!from || !to || from == to) return;
    g_write();
    struct gset *s = gset_find(from, 0);
    if (s && s->cnt) {
        struct gset *d = gset_find(to, 1);
        struct vt_gnode *copy = NULL;
        size_t len = 0, cap = 0;
        /* an exec's nodes are what runs: conditional bodies in their nodes' place */
        int made = 0;
        if (d && move) {
            copy = copy_nodes(s->n, s->cnt);
            len = copy ? s->cnt : 0;
            made = copy != NULL;
        } else if (d) {
            made = expand_into(s->n, s->cnt, 0, 0, &copy, &len, &cap) == 0;
        }
        if (made) {
            free_nodes(d->n, d->cnt);
            d->n = copy;
            d->cnt = len;
            d->cap = move ? len : cap;
            d->exec = !move;
        } else if (copy) {
            free_nodes(copy, len);
        }
    }
    if (s && move) { free_nodes(s->n, s->cnt); memset(s, 0, sizeof *s); }
    g_unlock();
}

/* The clone's handle for ORIG's node N (NULL: none known); guard held, errno kept. */
static const void *node_in_clone(const void *n, const void *clone)
{
    typedef CUresult (*find_fn)(void **, const void *, const void *);
    find_fn find = (find_fn)vt_real_driver("cuGraphNodeFindInClone");
    void *out = NULL;
    if (!n || !find) return NULL;
    int saved = errno;
    vt_ts.guard++;
    if (find(&out, n, clone) != CUDA_SUCCESS) out = NULL;
    vt_ts.guard--;
    errno = saved;
    return out;
}

void vt_graph_clone(const void *orig, const void *clone)
{
    if (!orig || !clone || orig == clone) return;
    g_read();
    struct gset *s = gset_find(orig, 0);
    size_t n = s ? s->cnt : 0;
    struct vt_gnode *copy = n ? copy_nodes(s->n, n) : NULL;
    g_unlock();
    if (!copy) return;
    for (size_t i = 0; i < n; i++) {   /* the driver asked with no lock held */
        copy[i].node = node_in_clone(copy[i].node, clone);
        copy[i].parent = node_in_clone(copy[i].parent, clone);
    }
    g_write();
    struct gset *d = gset_find(clone, 1);
    if (d) {
        free_nodes(d->n, d->cnt);
        d->n = copy;
        d->cnt = d->cap = n;
        d->exec = 0;
        copy = NULL;
    }
    g_unlock();
    if (copy) free_nodes(copy, n);
}

/* A copy of CHILD's nodes as NODE's clone: *n of them, NULL when none or out of memory. g_lock held. */
static struct vt_gnode *child_clone(const void *child, const void *node, size_t *n)
{
    struct gset *c = gset_find(child, 0);
    *n = c ? c->cnt : 0;
    struct vt_gnode *copy = *n ? copy_nodes(c->n, *n) : NULL;
    for (size_t i = 0; copy && i < *n; i++) {
        copy[i].node = NULL;          /* the child's node handles are not the parent's */
        copy[i].parent = node;
    }
    return copy;
}

void vt_graph_append_child(const void *graph, const void *child, const void *node)
{
    if (!graph || !child || graph == child) return;
    size_t n;
    g_write();
    struct vt_gnode *copy = child_clone(child, node, &n);
    g_unlock();
    for (size_t i = 0; copy && i < n; i++) gset_add(graph, &copy[i]);   /* takes over the argument bytes */
    free(copy);
}

int vt_graph_set_child(const void *exec, const void *node, const void *child)
{
    if (!exec || !node || !child) return -1;
    int found = -1;
    g_write();
    struct gset *s = gset_find(exec, 0);
    size_t first = 0, old = 0, n = 0;
    while (s && first < s->cnt && s->n[first].parent != node) first++;
    while (s && first + old < s->cnt && s->n[first + old].parent == node) old++;
    struct vt_gnode *copy = old ? child_clone(child, node, &n) : NULL;
    struct vt_gnode *nn = old && (copy || !n) ? malloc((s->cnt - old + n) * sizeof *nn + 1) : NULL;
    if (old && nn) {
        for (size_t i = first; i < first + old; i++) free(s->n[i].args);
        memcpy(nn, s->n, first * sizeof *nn);
        if (n) memcpy(nn + first, copy, n * sizeof *nn);
        memcpy(nn + first + n, s->n + first + old, (s->cnt - first - old) * sizeof *nn);
        free(s->n);
        s->n = nn;
        s->cnt = s->cap = s->cnt - old + n;
        found = 0;
    } else {
        free(nn);
        for (size_t i = 0; copy && i < n; i++) free(copy[i].args);
    }
    free(copy);
    g_unlock();
    return found;
}

void vt_graphs_reset(void)
{
    g_lock = (pthread_rwlock_t)PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
    for (int i = 0; i < VT_GSETS; i++) {
        free_nodes(gsets[i].n, gsets[i].cnt);
        memset(&gsets[i], 0, sizeof gsets[i]);
    }
    atomic_store(&vt_captures_active, 0);
}

int vt_stream_capturing(uint64_t stream)
{
    typedef CUresult (*cap_fn)(CUstream, int *);
    cap_fn q = (cap_fn)vt_real_driver("cuStreamIsCapturing");
    if (!q || !stream) return 0; /* the legacy default stream cannot capture */
    int st = 0, saved = errno;
    vt_ts.guard++;
    CUresult r = q((CUstream)(uintptr_t)stream, &st);
    vt_ts.guard--;
    errno = saved;
    return r == CUDA_SUCCESS && st == 1 /* CU_STREAM_CAPTURE_STATUS_ACTIVE */;
}

const void *vt_capture_key(uint64_t stream, const void **node)
{
    /* cuStreamGetCaptureInfo_v3 (CUDA 12.3+): status, id, the graph being built, dependencies
     * and their edge data (asked with them: without, edges with data make the query fail) */
    typedef CUresult (*info_fn)(CUstream, int *, uint64_t *, void **, void *const **, const void **, size_t *);
    info_fn q = (info_fn)vt_real_driver("cuStreamGetCaptureInfo_v3");
    int st = 0, saved = errno;
    void *graph = NULL;
    void *const *deps = NULL;
    const void *edges = NULL;
    size_t ndeps = 0;
    uint64_t id = 0;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (node) *node = NULL;
    if (q) {
        vt_ts.guard++;
        r = q((CUstream)(uintptr_t)stream, &st, &id, &graph, node ? &deps : NULL, node ? &edges : NULL, node ? &ndeps : NULL);
        vt_ts.guard--;
    }
    errno = saved;
    if (r == CUDA_SUCCESS && st == 1 && node && deps && ndeps == 1) *node = deps[0];
    if (r == CUDA_SUCCESS) return st == 1 && graph ? graph : NULL;
    return vt_stream_capturing(stream) ? (const void *)(uintptr_t)stream : NULL;
}

void vt_graph_add_cond(const void *graph, const void *node, void *const *bodies, size_t n)
{
    struct vt_gnode c = { .kind = VT_G_COND, .dev = -1, .node = node };
    size_t len = n * sizeof(void *);   /* the handles, as bytes (args is a byte buffer) */
    if (!bodies || !n || !(c.args = malloc(len))) return;
    memcpy(c.args, bodies, len);
    c.args_len = len;
    gset_add(graph, &c);
}

void vt_graph_add_alloc(const void *key, uint64_t addr, uint64_t size, int dev)
{
    struct vt_gnode n = { .kind = VT_G_ALLOC, .dev = dev, .addr = addr, .size = size };
    gset_add(key, &n);
}

void vt_graph_add_free(const void *key, uint64_t addr)
{
    struct vt_gnode n = { .kind = VT_G_FREE, .dev = -1, .addr = addr };
    gset_add(key, &n);
}

static struct vt_gnode kernel_node(const void *node, vt_kernel *k, int dev, void **args, const void *buf, uint64_t len,
                                   vt_dim3 grid, vt_dim3 block, uint64_t shmem)
{
    struct vt_gnode n = { .kind = VT_G_KERNEL, .dev = dev, .node = node, .k = k, .grid = grid, .block = block, .shmem = shmem };
    if (args && k) { /* flatten the parameters into the buffer the kernel will see */
        uint64_t end = 0;
        for (uint32_t i = 0; i < k->nparams; i++)
            if ((uint64_t)k->params[i].offset + k->params[i].size > end) end = (uint64_t)k->params[i].offset + k->params[i].size;
        if (end && (n.args = calloc(1, end))) {
            n.args_len = end;
            for (uint32_t i = 0; i < k->nparams; i++)
                if (args[i]) memcpy(n.args + k->params[i].offset, args[i], k->params[i].size);
        }
    } else if (buf && len && (n.args = malloc(len))) {
        memcpy(n.args, buf, len);
        n.args_len = len;
    }
    return n;
}

void vt_graph_add_kernel(const void *key, const void *node, vt_kernel *k, int dev, void **args, const void *buf,
                         uint64_t len, vt_dim3 grid, vt_dim3 block, uint64_t shmem)
{
    struct vt_gnode n = kernel_node(node, k, dev, args, buf, len, grid, block, shmem);
    gset_add(key, &n);
}

/* Replaces NODE's node (of kind N->kind) in EXEC's set or, EXEC NULL, in the graph holding it
 * by *N, which the set then owns (freed here when no such node is known). */
static int set_node(const void *exec, const void *node, struct vt_gnode *n)
{
    int found = -1;
    if (node) {
        g_write();
        for (int i = 0; i < VT_GSETS && found < 0; i++) {
            struct gset *s = &gsets[i];
            if (!s->key || (exec ? s->key != exec : s->exec)) continue;
            for (size_t j = 0; j < s->cnt; j++)
                if (s->n[j].node == node && s->n[j].kind == n->kind) {
                    n->parent = s->n[j].parent;
                    free(s->n[j].args);
                    s->n[j] = *n;
                    found = 0;
                    break;
                }
        }
        g_unlock();
    }
    if (found < 0) free(n->args);
    return found;
}

int vt_graph_set_kernel(const void *exec, const void *node, vt_kernel *k, int dev, void **args, const void *buf,
                        uint64_t len, vt_dim3 grid, vt_dim3 block, uint64_t shmem)
{
    struct vt_gnode n = kernel_node(node, k, dev, args, buf, len, grid, block, shmem);
    return set_node(exec, node, &n);
}

void vt_graph_add_copy(const void *key, const void *node, int dev, uint64_t dst, uint64_t src, uint64_t size,
                       const struct vt_copy_extra *x)
{
    struct vt_gnode n = { .kind = VT_G_COPY, .dev = dev, .node = node, .addr = dst, .src = src, .size = size, .x = *x };
    gset_add(key, &n);
}

int vt_graph_set_copy(const void *exec, const void *node, int dev, uint64_t dst, uint64_t src, uint64_t size,
                      const struct vt_copy_extra *x)
{
    struct vt_gnode n = { .kind = VT_G_COPY, .dev = dev, .node = node, .addr = dst, .src = src, .size = size, .x = *x };
    return set_node(exec, node, &n);
}

void vt_graph_add_set(const void *key, const void *node, int dev, uint64_t addr, uint64_t size, int value, uint64_t elem)
{
    struct vt_gnode n = { .kind = VT_G_SET, .dev = dev, .node = node, .addr = addr, .size = size, .value = value, .elem = elem };
    gset_add(key, &n);
}

int vt_graph_set_set(const void *exec, const void *node, int dev, uint64_t addr, uint64_t size, int value, uint64_t elem)
{
    struct vt_gnode n = { .kind = VT_G_SET, .dev = dev, .node = node, .addr = addr, .size = size, .value = value, .elem = elem };
    return set_node(exec, node, &n);
}

void vt_graph_foreach(const void *key, void (*fn)(const struct vt_gnode *, void *), void *ctx)
{
    /* Held across the calls: a concurrent destroy of this set must not free the argument bytes
     * being checked. fn must not add to or drop a set. */
    g_read();
    struct gset *s = gset_find(key, 0);
    for (size_t i = 0; s && i < s->cnt; i++) fn(&s->n[i], ctx);
    g_unlock();
}
