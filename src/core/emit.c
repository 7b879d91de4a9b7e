/* emit.c - getting core's lines and records into the trace: the common head of call lines, the
 * call stack, binary records onto the journal, and the records of the process's context (module,
 * device). Below events.c, launch_check.c and findings.c; calls none of them. */
#include "emit.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramtrace/trace.h>
#include "backtrace.h"
#include "cuda_abi.h"
#include "journal.h"
#include "resolve.h"

#define VT_MAX_DEV 64

_Atomic int vt_pause_depth;
_Atomic uint64_t vt_pause_skipped;

static _Atomic int device_state[VT_MAX_DEV]; /* 0 unknown, 1 being written, 2 written */
static int device_pageable[VT_MAX_DEV];
static _Atomic unsigned device_sm[VT_MAX_DEV];

void vt_emit_reset_after_fork(void)
{
    for (int i = 0; i < VT_MAX_DEV; i++) atomic_store(&device_state[i], 0);
}

void vt_fmt_begin(vt_line *l, char *buf, const char *ev, const struct vt_call *c)
{
    vt_line_init(l, buf, LINE_MAX_BYTES - 2);
    struct vt_rec_call r;
    vt_fill_call(&r, c);
    vt_record_begin(l, ev, &r, vt_api_names_current(), 0);
}

/* Close the line; returns its length, or 0 when it overflowed (then it is not written). */
size_t vt_fmt_finish(vt_line *l)
{
    VT_PUT_LIT(l, "}\n");
    return l->overflow ? 0 : vt_line_len(l);
}

void vt_fmt_emit(vt_line *l)
{
    size_t n = vt_fmt_finish(l);
    if (n) vt_trace_append(l->start, n);
}

void vt_emit_module(const struct vt_module_info *m)
{
    char buf[LINE_MAX_BYTES * 3];
    vt_line l;
    vt_line_init(&l, buf, sizeof buf - 2);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_MODULE "\",\"path\":");
    vt_put_str(&l, m->path);
    vt_put_key(&l, "base"); vt_put_hex(&l, m->base);
    vt_put_key(&l, "lo"); vt_put_hex(&l, m->lo);
    vt_put_key(&l, "hi"); vt_put_hex(&l, m->hi);
    if (m->build_id[0]) { vt_put_key(&l, "build_id"); vt_put_str(&l, m->build_id); }
    if (m->file_size) {
        vt_put_key(&l, "file_size"); vt_put_u64(&l, m->file_size);
        vt_put_key(&l, "mtime"); vt_put_i64(&l, m->mtime);
    }
    vt_fmt_emit(&l);
}

void vt_ensure_device(int dev)
{
    if (dev < 0 || dev >= VT_MAX_DEV) return;
    int expected = 0;
    if (atomic_load_explicit(&device_state[dev], memory_order_acquire) == 2 ||
        !atomic_compare_exchange_strong(&device_state[dev], &expected, 1))
        return;
    typedef CUresult (*get_fn)(CUdevice *, int);
    typedef CUresult (*name_fn)(char *, int, CUdevice);
    typedef CUresult (*mem_fn)(size_t *, CUdevice);
    typedef CUresult (*attr_fn)(int *, int, CUdevice);
    typedef CUresult (*pci_fn)(char *, int, CUdevice);
    get_fn get = (get_fn)vt_real_driver("cuDeviceGet");
    name_fn name = (name_fn)vt_real_driver("cuDeviceGetName");
    mem_fn mem = (mem_fn)vt_real_driver("cuDeviceTotalMem_v2");
    attr_fn attr = (attr_fn)vt_real_driver("cuDeviceGetAttribute");
    pci_fn pci = (pci_fn)vt_real_driver("cuDeviceGetPCIBusId");
    char bus[64] = "";
    CUdevice d = 0;
    char nm[256] = "unknown";
    size_t total = 0;
    int clock = 0, width = 0, pageable = 0, major = 0, minor = 0;
    vt_ts.guard++;
    int got = get && get(&d, dev) == CUDA_SUCCESS;
    if (got) {
        if (name) name(nm, sizeof nm, d);
        if (mem) mem(&total, d);
        if (pci && pci(bus, (int)sizeof bus, d) != CUDA_SUCCESS) bus[0] = 0; /* which GPU: ordinals differ per process */
        bus[sizeof bus - 1] = 0;
        if (attr) {
            attr(&clock, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, d);
            attr(&width, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, d);
            attr(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, d);
            attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
            attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
        }
    }
    vt_ts.guard--;
    if (!got) { /* the driver is not initialised yet: try again after the next call */
        atomic_store(&device_state[dev], 0);
        return;
    }
    device_pageable[dev] = pageable;
    atomic_store(&device_sm[dev], (unsigned)(major * 10 + minor));
    char buf[LINE_MAX_BYTES];
    vt_line l;
    vt_line_init(&l, buf, sizeof buf - 2);
    VT_PUT_LIT(&l, "{\"ev\":\"" VT_EVN_DEVICE "\"");
    vt_put_key(&l, "t"); vt_put_u64(&l, vt_now());
    vt_put_key(&l, "dev"); vt_put_i64(&l, dev);
    vt_put_key(&l, "name"); vt_put_str(&l, nm);
    vt_put_key(&l, "total_bytes"); vt_put_u64(&l, total);
    char cc[32];
    snprintf(cc, sizeof cc, "%d.%d", major, minor);
    vt_put_key(&l, "cc"); vt_put_str(&l, cc);
    vt_put_key(&l, "mem_clock_khz"); vt_put_i64(&l, clock);
    vt_put_key(&l, "bus_width_bits"); vt_put_i64(&l, width);
    vt_put_key(&l, "pageable_access"); vt_put_i64(&l, pageable);
    if (bus[0]) { vt_put_key(&l, "pci"); vt_put_str(&l, bus); }
    vt_put_key(&l, "sim"); if (strstr(nm, "simulated")) VT_PUT_LIT(&l, "true"); else VT_PUT_LIT(&l, "false");
    vt_fmt_emit(&l);
    atomic_store_explicit(&device_state[dev], 2, memory_order_release);
}

unsigned vt_device_sm(int dev)
{
    if (dev < 0 || dev >= VT_MAX_DEV) return 0;
    unsigned sm = atomic_load(&device_sm[dev]);
    if (sm) return sm;
    typedef CUresult (*get_fn)(CUdevice *, int);
    typedef CUresult (*attr_fn)(int *, int, CUdevice);
    get_fn get = (get_fn)vt_real_driver("cuDeviceGet");
    attr_fn attr = (attr_fn)vt_real_driver("cuDeviceGetAttribute");
    CUdevice d;
    int major = 0, minor = 0;
    vt_ts.guard++;
    if (get && attr && get(&d, dev) == CUDA_SUCCESS &&
        attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) == CUDA_SUCCESS)
        attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
    vt_ts.guard--;
    return (unsigned)(major * 10 + minor);
}

int vt_device_pageable_access(int dev)
{
    if (dev < 0 || dev >= VT_MAX_DEV) return 0;
    /* A launch can be the program's first CUDA call: record the device now, the severity of a
     * host-pointer finding depends on it. */
    if (atomic_load_explicit(&device_state[dev], memory_order_acquire) != 2) {
        /* The runtime may not have loaded the driver yet; the launch is about to, so do it now
         * (the reference is kept) and initialise it (idempotent). */
        typedef CUresult (*init_fn)(unsigned int);
        vt_ts.guard++;
        if (!vt_real_driver("cuInit")) (void)dlopen("libcuda.so.1", RTLD_NOW);
        init_fn init = (init_fn)vt_real_driver("cuInit");
        if (init) init(0);
        vt_ts.guard--;
        vt_ensure_device(dev);
    }
    return device_pageable[dev];
}

void vt_fmt_ensure_device(int dev)
{
    if (dev >= 0 && dev < VT_MAX_DEV && atomic_load_explicit(&device_state[dev], memory_order_acquire) != 2)
        vt_ensure_device(dev);
}


void vt_emit_formatted(int type, const void *rec, size_t len)
{
    char buf[LINE_MAX_BYTES * 2];
    size_t n = vt_record_format(type, rec, len, 0, vt_api_names_current(), buf, sizeof buf);
    if (n) vt_trace_append(buf, n);
}

void vt_emit_record(int type, const void *rec, size_t len)
{
    void *slot = vt_journal_claim(type, len);
    if (slot) {
        memcpy(slot, rec, len);
        vt_journal_commit(slot);
        return;
    }
    vt_emit_formatted(type, rec, len);
}
