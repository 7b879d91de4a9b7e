/* kernels.c - handle -> kernel record table and lazy parameter-layout resolution. */
#include "kernels.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "param_types.h"
#include "tracer.h"

#define TABLE_BITS 18
#define TABLE_SIZE (1u << TABLE_BITS)

/* One table for every key kind: keys are distinct pointers (stubs, handles, modules), tagged by
 * kind in the low bits of a separate field so a module and a function never collide. */
enum { K_HOST = 1, K_HANDLE = 2, K_MODULE = 3, K_FATBIN = 4 };
struct slot {
    _Atomic uintptr_t key;
    _Atomic int kind;
    _Atomic(void *) val;
};
static struct slot table[TABLE_SIZE];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t next_id = 1;

/* Parsed images, by (image, sm): a runtime fatbin wrapper, or a module copy (vt_module_image). */
struct parsed { const void *image; unsigned sm; vt_fatbin *fb; struct parsed *next; };
static struct parsed *parsed_images;

static inline uint32_t hash_ptr(uintptr_t p, int kind)
{
    uint64_t x = (uint64_t)p * 0x9E3779B97F4A7C15ull + (uint64_t)kind;
    return (uint32_t)(x >> (64 - TABLE_BITS));
}

static void *get(const void *key, int kind)
{
    uintptr_t k = (uintptr_t)key;
    if (!k) return NULL;
    for (uint32_t i = hash_ptr(k, kind), n = 0; n < TABLE_SIZE; i = (i + 1) & (TABLE_SIZE - 1), n++) {
        uintptr_t sk = atomic_load_explicit(&table[i].key, memory_order_acquire);
        if (!sk) return NULL;
        if (sk == k && atomic_load_explicit(&table[i].kind, memory_order_relaxed) == kind)
            return atomic_load_explicit(&table[i].val, memory_order_acquire);
    }
    return NULL;
}

static void put(const void *key, int kind, void *val)
{
    uintptr_t k = (uintptr_t)key;
    if (!k) return;
    vt_mutex_lock(&table_lock);
    for (uint32_t i = hash_ptr(k, kind), n = 0; n < TABLE_SIZE; i = (i + 1) & (TABLE_SIZE - 1), n++) {
        uintptr_t sk = atomic_load_explicit(&table[i].key, memory_order_relaxed);
        if (sk == k && atomic_load_explicit(&table[i].kind, memory_order_relaxed) == kind) {
            atomic_store_explicit(&table[i].val, val, memory_order_release);
            break;
        }
        if (!sk) {
            atomic_store_explicit(&table[i].val, val, memory_order_relaxed);
            atomic_store_explicit(&table[i].kind, kind, memory_order_relaxed);
            atomic_store_explicit(&table[i].key, k, memory_order_release);
            break;
        }
    }
    vt_mutex_unlock(&table_lock);
}

static vt_kernel *new_kernel(const char *name, const void *host_fun, const void *image, const vt_module_image *module,
                             uint64_t function)
{
    vt_kernel *k = calloc(1, sizeof *k);
    if (!k) return NULL;
    k->id = atomic_fetch_add(&next_id, 1);
    k->name = strdup(name ? name : "?");
    k->host_fun = host_fun;
    k->image = image;
    k->module = module;
    k->function = function;
    return k;
}

vt_kernel *vt_kernels_register_host(const void *fatbin, const void *host_fun, const char *name)
{
    vt_kernel *k = get(host_fun, K_HOST);
    if (k) return k;
    k = new_kernel(name, host_fun, vt_kernels_fatbin_lookup(fatbin), NULL, 0);
    if (k) put(host_fun, K_HOST, k);
    return k;
}

vt_kernel *vt_kernels_by_host(const void *host_fun) { return get(host_fun, K_HOST); }
void vt_kernels_bind(const void *handle, vt_kernel *k) { if (k) put(handle, K_HANDLE, k); }
vt_kernel *vt_kernels_by_handle(const void *handle) { return get(handle, K_HANDLE); }

vt_kernel *vt_kernels_driver(const void *handle, const char *name, const vt_module_image *module, uint64_t function)
{
    vt_kernel *k = get(handle, K_HANDLE);
    if (k && k->name && name && strcmp(k->name, name) == 0 && k->module == module) return k;
    k = new_kernel(name, NULL, NULL, module, function);
    if (k) put(handle, K_HANDLE, k);
    return k;
}

vt_kernel *vt_kernels_unknown(const void *handle)
{
    char name[64];
    snprintf(name, sizeof name, "kernel@%p", handle);
    return vt_kernels_driver(handle, name, NULL, 0);
}

static void module_set(const void *module, uint8_t *bytes, size_t len)
{
    vt_module_image *m = calloc(1, sizeof *m);
    if (!m) { free(bytes); return; }
    m->bytes = bytes;
    m->len = bytes ? len : 0;
    put(module, K_MODULE, m); /* a reused module handle now names this image */
}

void vt_kernels_module_loaded(const void *module, const void *image)
{
    size_t len = 0;
    const void *from = vt_fatbin_image_extent(image, &len);
    uint8_t *copy = from ? malloc(len) : NULL;
    if (copy) memcpy(copy, from, len);
    module_set(module, copy, len);
}

void vt_kernels_module_loaded_file(const void *module, const char *path)
{
    uint8_t *copy = NULL;
    size_t len = 0;
    FILE *f = path ? fopen(path, "rbe") : NULL;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        /* +1: a NUL after PTX text, as a PTX image in memory has */
        if (n > 0 && (size_t)n < VT_FATBIN_MAX_IMAGE && fseek(f, 0, SEEK_SET) == 0 && (copy = malloc((size_t)n + 1))) {
            if (fread(copy, 1, (size_t)n, f) == (size_t)n) { copy[n] = 0; len = (size_t)n + 1; }
            else { free(copy); copy = NULL; }
        }
    }
    if (f) fclose(f);
    module_set(module, copy, len);
}

/* The module's kernels launched from now on are the program's error; their layouts were taken
 * at their first launch. The bytes go, and so do the parsed layouts kept for them. */
void vt_kernels_module_unloaded(const void *module)
{
    vt_module_image *m = get(module, K_MODULE);
    if (!m) return;
    vt_mutex_lock(&layout_lock);
    for (struct parsed **pp = &parsed_images; *pp;) {
        struct parsed *p = *pp;
        if (p->image == m) { *pp = p->next; vt_fatbin_free(p->fb); free(p); }
        else pp = &p->next;
    }
    free((void *)m->bytes);
    m->bytes = NULL;
    m->len = 0;
    vt_mutex_unlock(&layout_lock);
}

const vt_module_image *vt_kernels_module_lookup(const void *module) { return get(module, K_MODULE); }
void vt_kernels_fatbin_handle(const void *handle, const void *wrapper) { put(handle, K_FATBIN, (void *)wrapper); }
const void *vt_kernels_fatbin_lookup(const void *handle)
{
    const void *w = get(handle, K_FATBIN);
    return w ? w : handle;
}

/* `key` is what the cache knows the image by: the wrapper itself, or the module copy's record
 * (unique for the process's life, unlike the addresses images are loaded from). */
static vt_fatbin *parsed_for(const void *key, const void *image, size_t len, unsigned sm)
{
    for (struct parsed *p = parsed_images; p; p = p->next)
        if (p->image == key && p->sm == sm) return p->fb;
    struct parsed *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    char err[128];
    p->image = key;
    p->sm = sm;
    if (!image || vt_fatbin_parse_arch(image, len, sm, &p->fb, err, sizeof err) < 0) p->fb = NULL;
    p->next = parsed_images;
    parsed_images = p;
    return p->fb;
}

/* The launch check's word list (kernels.h), so a launch does not redo the alignment arithmetic
 * for every parameter: every 8-byte word of each parameter that can hold a pointer. The argument
 * buffer places each parameter at a multiple of its alignment, and a type holding a pointer is
 * 8-aligned, so a parameter at an offset that is not a multiple of 8 holds none: an align-4
 * struct's int pairs (CUB's GridEvenShare at offset 20) are never read as addresses. A parameter
 * the kernel's mangled name types as an integer or floating type (`ptypes[i]`, NULL when the name
 * says nothing) holds no address either, whatever its value (param_types.h). */
static void plan_words(vt_kernel *k, const vt_addr_use *uses, int32_t nuses, const uint8_t *ptypes)
{
    uint32_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass && !(k->words = malloc(n * sizeof *k->words))) break;
        uint32_t j = 0;
        for (uint32_t i = 0; i < k->nparams; i++) {
            uint32_t off = k->params[i].offset, size = k->params[i].size;
            if (size < 8 || (ptypes && ptypes[i] == VT_PT_ARITH)) continue;
            int whole = nuses < 0;
            for (int32_t u = 0; u < nuses; u++) {
                if (uses[u].param != i) continue;
                if (uses[u].offset == VT_USE_WHOLE) whole = 1;
                else if (uses[u].offset <= size - 8) { /* one word the code dereferences, any alignment */
                    if (pass) k->words[j] = (vt_arg_word){ i, uses[u].offset };
                    j++;
                }
            }
            if (!whole || off % 8) continue;
            for (uint32_t w = 0; w + 8 <= size; w += 8, j++)
                if (pass) k->words[j] = (vt_arg_word){ i, w };
        }
        n = j;
        if (!n) break;
    }
    k->nwords = n;
    k->uses_known = nuses >= 0;
    if (!k->uses_known && n && k->words) k->warned = calloc(n, sizeof *k->warned);
}

vt_kernel *vt_kernel_resolve_layout(vt_kernel *k, vt_paraminfo_fn query, unsigned sm)
{
    if (atomic_load_explicit(&k->layout_state, memory_order_acquire)) return k;
    vt_mutex_lock(&layout_lock);
    if (!atomic_load_explicit(&k->layout_state, memory_order_relaxed)) {
        vt_param tmp[VT_FATBIN_MAX_PARAMS];
        uint32_t n = 0;
        uint64_t off, size;
        while (query && n < VT_FATBIN_MAX_PARAMS && query(k, n, &off, &size) == 0) {
            tmp[n].offset = (uint32_t)off;
            tmp[n].size = (uint32_t)size;
            n++;
        }
        if (n > 0) k->source = VT_LAYOUT_PARAMINFO;
        /* The image: the layout when the driver gave none, and in any case which words the
         * kernel's PTX uses as addresses (they name parameters and bytes within them). */
        const vt_kernel_layout *lay = NULL;
        if (k->image || (k->module && k->module->bytes)) {
            vt_fatbin *fb = k->image ? parsed_for(k->image, k->image, 0, sm) : parsed_for(k->module, k->module->bytes, k->module->len, sm);
            lay = fb ? vt_fatbin_find(fb, k->name) : NULL;
            if (lay && !n) {
                n = lay->nparams < VT_FATBIN_MAX_PARAMS ? lay->nparams : VT_FATBIN_MAX_PARAMS;
                memcpy(tmp, lay->params, n * sizeof tmp[0]);
                k->source = (int)lay->source;
            }
            if (lay && lay->nparams != n) lay = NULL; /* the driver and the image disagree: trust neither's uses */
        }
        if (n > 0) {
            k->params = malloc(n * sizeof tmp[0]);
            if (k->params) {
                memcpy(k->params, tmp, n * sizeof tmp[0]);
                k->nparams = n;
                uint8_t types[VT_FATBIN_MAX_PARAMS];
                int ntypes = vt_param_types_of(k->name, types, VT_FATBIN_MAX_PARAMS);
                if (ntypes == (int)n && (k->ptypes = malloc(n))) memcpy(k->ptypes, types, n);
                plan_words(k, lay ? lay->uses : NULL, lay ? lay->nuses : -1, k->ptypes);
            } else k->source = VT_LAYOUT_NONE;
        }
        atomic_store_explicit(&k->layout_state, 1, memory_order_release);
    }
    vt_mutex_unlock(&layout_lock);
    return k;
}

const char *vt_layout_source_name(int source)
{
    switch (source) {
    case VT_LAYOUT_PARAMINFO: return "paraminfo";
    case VT_LAYOUT_ELF: return "elf";
    case VT_LAYOUT_PTX: return "ptx";
    default: return "none";
    }
}
