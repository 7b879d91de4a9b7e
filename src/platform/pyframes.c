/* pyframes.c - the calling thread's Python frames, read without the interpreter's lock (pyframes.h). */
#include "pyframes.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve.h"

/* Where CPython keeps what the walk reads, per version (x86-64 and aarch64 alike: LP64). The
 * numbers are each version's offsetof/bit masks, checked against its own headers by
 * tests/cases/py_layout.sh (tests/pylayout/pylayout.c); the names are that program's. */
struct layout {
    int version;
    uint32_t ts_frame, ts_cframe, cframe_current;     /* the thread's innermost frame: direct, or through its _PyCFrame */
    uint32_t fr_code, fr_previous, fr_instr, fr_owner; /* 3.10: PyFrameObject (f_lasti an int index); else _PyInterpreterFrame */
    uint32_t co_code_units, co_qualname, co_filename, co_firstlineno, co_linetable;
    uint32_t bytes_size, bytes_data;
    uint32_t str_length, str_state, str_ascii_data, str_utf8_length, str_utf8;
    uint32_t str_compact_mask, str_ascii_mask, str_kind_mask, owned_by_cstack;
};
static const struct layout layouts[] = {
    { 310, 24, 0, 0, 32, 24, 96, 0, 0, 112, 104, 40, 120, 16, 32, 16, 32, 48, 48, 56, 32, 64, 28, 0 },
    { 311, 0, 56, 8, 32, 48, 56, 69, 184, 128, 112, 72, 136, 16, 32, 16, 32, 48, 48, 56, 32, 64, 28, 0 },
    { 312, 0, 56, 0, 0, 8, 56, 70, 192, 128, 112, 68, 136, 16, 32, 16, 32, 40, 40, 48, 32, 64, 28, 3 },
    { 313, 72, 0, 0, 0, 8, 56, 70, 200, 128, 112, 68, 136, 16, 32, 16, 32, 40, 40, 48, 32, 64, 28, 3 },
};

typedef void *(*this_thread_fn)(void);
typedef int (*initialized_fn)(void);
static const struct layout *L;
static this_thread_fn this_thread_state;
static initialized_fn is_initialized;
static uintptr_t code_type;         /* &PyCode_Type: a frame's code object is checked to be one */
static _Atomic int state;           /* 0 not looked yet, 1 Python found, -1 none (never looked again) */

static const struct layout *layout_for(int version)
{
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].version == version) return &layouts[i];
    return NULL;
}

/* Once: is this a CPython process of a version we know? Racing first callers all compute the
 * same answer (dlsym is thread-safe), so no once-lock is needed in the hooks' path. */
static int ready(void)
{
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s) return s > 0;
    const char *(*version)(void) = (const char *(*)(void))vt_real_dlsym(RTLD_DEFAULT, "Py_GetVersion");
    this_thread_fn tt = (this_thread_fn)vt_real_dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    initialized_fn ini = (initialized_fn)vt_real_dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    void *type = vt_real_dlsym(RTLD_DEFAULT, "PyCode_Type");
    int maj = 0, min = 0;
    const char *v = version && tt && ini && type ? version() : NULL;
    const struct layout *l = v && sscanf(v, "%d.%d", &maj, &min) == 2 ? layout_for(maj * 100 + min) : NULL;
    if (l) {
        L = l;
        this_thread_state = tt;
        is_initialized = ini;
        code_type = (uintptr_t)type;
    }
    atomic_store_explicit(&state, l ? 1 : -1, memory_order_release);
    return l != NULL;
}

static inline uintptr_t rd(uintptr_t p) { uintptr_t v; memcpy(&v, (const void *)p, sizeof v); return v; }
static inline int aligned(uintptr_t p) { return p && !(p & 7); }

int vt_py_frames(vt_pyframe *out, int max)
{
    if (max <= 0 || !ready() || !is_initialized()) return 0;
    uintptr_t ts = (uintptr_t)this_thread_state(), fr;
    if (!aligned(ts)) return 0;
    if (L->ts_cframe) {
        uintptr_t cf = rd(ts + L->ts_cframe);
        if (!aligned(cf)) return 0;
        fr = rd(cf + L->cframe_current);
    } else {
        fr = rd(ts + L->ts_frame);
    }
    int n = 0;
    for (int hops = 0; aligned(fr) && n < max && hops < 4096; hops++, fr = rd(fr + L->fr_previous)) {
        /* the interpreter's own entry frames (3.12+) hold no user code */
        if (L->owned_by_cstack && *(const char *)(fr + L->fr_owner) == (char)L->owned_by_cstack) continue;
        uintptr_t code = rd(fr + L->fr_code);
        if (!aligned(code) || rd(code + 8) != code_type) continue; /* 3.13: f_executable may be None */
        uint32_t off = 0;
        if (L->version == 310) {
            int lasti;
            memcpy(&lasti, (const void *)(fr + L->fr_instr), sizeof lasti);
            off = lasti > 0 ? (uint32_t)lasti * 2 : 0;
        } else {
            uintptr_t ip = rd(fr + L->fr_instr), start = code + L->co_code_units;
            off = ip >= start && ip - start < (1u << 24) ? (uint32_t)(ip - start) : 0;
        }
        out[n++] = (vt_pyframe){ code, off };
    }
    return n;
}

/* A str object as UTF-8: compact ASCII in place, else its cached UTF-8 copy; "" otherwise. */
static void str_of(uintptr_t s, const char **p, size_t *n)
{
    *p = "";
    *n = 0;
    if (!aligned(s)) return;
    uint32_t st;
    memcpy(&st, (const void *)(s + L->str_state), sizeof st);
    int64_t len;
    memcpy(&len, (const void *)(s + L->str_length), sizeof len);
    if (len < 0 || len > 4096 || !(st & L->str_compact_mask)) return;
    if (st & L->str_ascii_mask) {
        *p = (const char *)(s + L->str_ascii_data);
        *n = (size_t)len;
        return;
    }
    uintptr_t u = rd(s + L->str_utf8);
    int64_t ulen;
    memcpy(&ulen, (const void *)(s + L->str_utf8_length), sizeof ulen);
    if (u && ulen >= 0 && ulen <= 16384) { *p = (const char *)u; *n = (size_t)ulen; }
}

int vt_py_code_describe(uint64_t code, struct vt_py_code *out)
{
    memset(out, 0, sizeof *out);
    out->file = out->name = "";
    uintptr_t c = (uintptr_t)code;
    if (!ready() || !aligned(c) || rd(c + 8) != code_type) return -1;
    out->version = L->version;
    str_of(rd(c + L->co_filename), &out->file, &out->file_len);
    str_of(rd(c + L->co_qualname), &out->name, &out->name_len);
    memcpy(&out->firstlineno, (const void *)(c + L->co_firstlineno), sizeof out->firstlineno);
    uintptr_t lt = rd(c + L->co_linetable);
    if (aligned(lt)) {
        int64_t len;
        memcpy(&len, (const void *)(lt + L->bytes_size), sizeof len);
        if (len > 0 && len < (1 << 24)) {
            out->linetable = (const uint8_t *)(lt + L->bytes_data);
            out->linetable_len = (size_t)len;
        }
    }
    return 0;
}

uint64_t vt_py_code_identity(uint64_t code)
{
    uintptr_t c = (uintptr_t)code;
    if (!ready() || !aligned(c) || rd(c + 8) != code_type) return 0;
    int first;
    memcpy(&first, (const void *)(c + L->co_firstlineno), sizeof first);
    uint64_t h = (uint64_t)c ^ (rd(c + L->co_filename) * 0x9E3779B97F4A7C15ull) ^ (rd(c + L->co_linetable) << 1) ^ (uint64_t)(uint32_t)first;
    h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ull; h ^= h >> 33;
    return h ? h : 1;
}

int vt_py_layout_dump(int version, char *buf, size_t n)
{
    const struct layout *l = layout_for(version);
    if (!l) return -1;
    snprintf(buf, n,
             "version %d\nts_frame %u\nts_cframe %u\ncframe_current %u\nfr_code %u\nfr_previous %u\nfr_instr %u\nfr_owner %u\n"
             "co_code_units %u\nco_qualname %u\nco_filename %u\nco_firstlineno %u\nco_linetable %u\nbytes_size %u\nbytes_data %u\n"
             "str_length %u\nstr_state %u\nstr_ascii_data %u\nstr_utf8_length %u\nstr_utf8 %u\nstr_compact_mask %u\n"
             "str_ascii_mask %u\nstr_kind_mask %u\nowned_by_cstack %u\n",
             l->version, l->ts_frame, l->ts_cframe, l->cframe_current, l->fr_code, l->fr_previous, l->fr_instr, l->fr_owner,
             l->co_code_units, l->co_qualname, l->co_filename, l->co_firstlineno, l->co_linetable, l->bytes_size, l->bytes_data,
             l->str_length, l->str_state, l->str_ascii_data, l->str_utf8_length, l->str_utf8, l->str_compact_mask, l->str_ascii_mask,
             l->str_kind_mask, l->owned_by_cstack);
    return 0;
}
