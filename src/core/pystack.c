/* pystack.c - recorded call stacks with the calling thread's Python frames (pystack.h). */
#include "pystack.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backtrace.h"
#include "emit.h"
#include "pyframes.h"
#include "tracer.h"

/* Code objects seen, by identity (vt_py_code_identity: a code object freed and another made at
 * its address is another key). Open addressing, entries never removed;
 * full: the frame is left out. */
#define CODE_BITS 16
#define CODE_SLOTS (1u << CODE_BITS)
struct code_slot { _Atomic uint64_t key; _Atomic uint32_t id; };
static struct code_slot codes[CODE_SLOTS];
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_code_id = 1;

static void emit_pycode(uint32_t id, const struct vt_py_code *c)
{
    size_t cap = 1024 + 6 * (c->file_len + c->name_len) + 2 * c->linetable_len;
    char *buf = malloc(cap), file[4097], name[1025];
    if (!buf) return;
    snprintf(file, sizeof file, "%.*s", (int)c->file_len, c->file);
    snprintf(name, sizeof name, "%.*s", (int)c->name_len, c->name);
    vt_line l;
    vt_line_init(&l, buf, cap - 2);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_PYCODE "\"");
    vt_put_key(&l, "id"); vt_put_u64(&l, id);
    vt_put_key(&l, "file"); vt_put_str(&l, file);
    vt_put_key(&l, "name"); vt_put_str(&l, name);
    vt_put_key(&l, "line"); vt_put_i64(&l, c->firstlineno);
    vt_put_key(&l, "pyver"); vt_put_u64(&l, (uint64_t)c->version);
    vt_put_key(&l, "linetable"); VT_PUT_LIT(&l, "\"");
    static const char hexd[] = "0123456789abcdef";
    for (size_t i = 0; i < c->linetable_len; i++) {
        char h[2] = { hexd[c->linetable[i] >> 4], hexd[c->linetable[i] & 15] };
        vt_put_raw(&l, h, 2);
    }
    VT_PUT_LIT(&l, "\"");
    vt_fmt_emit(&l);
    free(buf);
}

/* The id of the code object at CODE (its record written the first time); 0 when it cannot be. */
static uint32_t code_id(uint64_t code)
{
    uint64_t key = vt_py_code_identity(code);
    if (!key) return 0;
    for (uint32_t i = 0, at = (uint32_t)key & (CODE_SLOTS - 1); i < 64; i++, at = (at + 1) & (CODE_SLOTS - 1)) {
        uint64_t k = atomic_load_explicit(&codes[at].key, memory_order_acquire);
        if (k == key) {
            uint32_t id = atomic_load_explicit(&codes[at].id, memory_order_acquire);
            if (id) return id;
            break; /* being written by another thread: take the lock below */
        }
        if (!k) break;
    }
    struct vt_py_code c;
    if (vt_py_code_describe(code, &c) < 0) return 0;
    uint32_t id = 0;
    vt_mutex_lock(&code_lock);
    for (uint32_t i = 0, at = (uint32_t)key & (CODE_SLOTS - 1); i < 64; i++, at = (at + 1) & (CODE_SLOTS - 1)) {
        uint64_t k = atomic_load_explicit(&codes[at].key, memory_order_relaxed);
        if (k == key) { id = atomic_load_explicit(&codes[at].id, memory_order_relaxed); break; }
        if (k) continue;
        id = next_code_id++;
        emit_pycode(id, &c); /* before the id is published: no stack names it before its record */
        atomic_store_explicit(&codes[at].id, id, memory_order_release);
        atomic_store_explicit(&codes[at].key, key, memory_order_release);
        break;
    }
    vt_mutex_unlock(&code_lock);
    return id;
}

static VT_TLS uint64_t stack_serial;
uint64_t vt_stack_serial(void) { return stack_serial; }

int vt_stack_capture(uint64_t *frames, int depth)
{
    int n = vt_backtrace(frames, depth);
    uint64_t serial = vt_backtrace_serial();
    vt_modules_cover(frames, n, serial, vt_emit_module);
    vt_pyframe py[32];
    int room = VT_BT_MAX - n;
    int np = vt_cfg.python_frames ? vt_py_frames(py, room < 32 ? room : 32) : 0;
    for (int i = 0; i < np; i++) {
        uint32_t id = code_id(py[i].code);
        if (id) frames[n++] = VT_PYFRAME_TAG | (uint64_t)id << 24 | (py[i].offset & 0xffffffu);
    }
    stack_serial = np ? 0 : serial; /* the memo knows the C frames only */
    return n;
}

void vt_fmt_bt(vt_line *l)
{
    if (!vt_cfg.backtraces) return;
    uint64_t frames[VT_BT_MAX];
    int n = vt_stack_capture(frames, vt_cfg.bt_depth);
    VT_PUT_LIT(l, ",\"bt\":[");
    for (int i = 0; i < n; i++) {
        if (i) VT_PUT_LIT(l, ",");
        vt_put_hex(l, frames[i]);
    }
    VT_PUT_LIT(l, "]");
}

void vt_pystack_reset(void)
{
    memset(codes, 0, sizeof codes); /* only this thread runs in a fork child */
    next_code_id = 1;
    pthread_mutex_init(&code_lock, NULL);
}
