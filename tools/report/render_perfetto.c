/* render_perfetto.c - `--perfetto FILE`: Chrome Trace Event JSON, streamed while the traces are
 * read (counters for live bytes per device, complete events for calls, copies and launches,
 * B/E for NVTX push/pop), finished with instants for OOMs and findings and the M name records. */
#include "report/render.h"

#include <stdlib.h>
#include <string.h>

#include "report/util.h"

struct vt_perfetto {
    FILE *f;
    int first;
    struct vtr_hmap tids;          /* (pid << 32 | tid) -> 1, for thread_name records */
};

struct vt_perfetto *vt_perfetto_open(FILE *f)
{
    struct vt_perfetto *pf = calloc(1, sizeof *pf);
    if (!pf) return NULL;
    pf->f = f;
    pf->first = 1;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
    return pf;
}

static void sep(struct vt_perfetto *pf) { if (!pf->first) fputs(",\n", pf->f); pf->first = 0; }
static double us(int64_t ns) { return (double)ns / 1000.0; }
static long long pidof(const struct vt_proc *p) { return p->pid >= 0 ? (long long)p->pid : 0; }

static void complete(struct vt_perfetto *pf, const struct vt_proc *p, const struct vt_event *ev,
                     const char *name, const char *cat)
{
    FILE *f = pf->f;
    sep(pf);
    fputs("{\"ph\":\"X\",\"name\":", f);
    vt_json_str(f, name && name[0] ? name : vt_rd_ev_name(ev->type));
    vt_esc_printf(f, VT_ESC_JSON, ",\"cat\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f,\"dur\":%.3f,\"args\":{", cat, pidof(p),
            (long long)ev->tid, us(ev->t), us(ev->dur));
    vt_esc_printf(f, VT_ESC_JSON, "\"res\":");
    if (ev->res_null) fputs("null", f); else vt_esc_printf(f, VT_ESC_JSON, "%lld", (long long)ev->res);
    if (ev->has & VT_F_SIZE) vt_esc_printf(f, VT_ESC_JSON, ",\"bytes\":%llu", (unsigned long long)ev->size);
    if (ev->type == VT_EV_COPY) {
        vt_esc_printf(f, VT_ESC_JSON, ",\"dir\":\"%s\",\"async\":%s", vt_rd_dir_name(ev->dir), ev->async ? "true" : "false");
        if (ev->host) vt_esc_printf(f, VT_ESC_JSON, ",\"host\":\"%s\"", vt_rd_host_name(ev->host));
    }
    /* which stream a copy went on and which one a synchronisation waited for: .item()'s pair */
    if (ev->has_stream) vt_esc_printf(f, VT_ESC_JSON, ",\"stream\":\"0x%llx\"", (unsigned long long)ev->stream);
    if (ev->has & VT_F_MEM) vt_esc_printf(f, VT_ESC_JSON, ",\"mem\":\"%s\"", vt_rd_mem_name(ev->mem));
    if (ev->has & VT_F_ADDR) vt_esc_printf(f, VT_ESC_JSON, ",\"addr\":\"0x%llx\"", (unsigned long long)ev->addr);
    if (ev->dev >= 0) vt_esc_printf(f, VT_ESC_JSON, ",\"dev\":%lld", (long long)ev->dev);
    fputs("}}", f);
}

static void on_event(void *ctx, const struct vt_proc *p, const struct vt_event *ev, const char *kernel)
{
    struct vt_perfetto *pf = ctx;
    FILE *f = pf->f;
    if (ev->has & VT_F_TID) vtr_hmap_put(&pf->tids, (uint64_t)pidof(p) << 32 | ((uint64_t)ev->tid & 0xffffffffu), 1);
    switch (ev->type) {
    case VT_EV_ALLOC: case VT_EV_FREE: {
        complete(pf, p, ev, ev->api, "memory");
        for (size_t i = 0; i < p->ndevices; i++) {
            const struct vt_device *d = &p->devices[i];
            if (d->dev != ev->dev) continue;
            sep(pf);
            vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"C\",\"name\":\"VRAM dev %d\",\"pid\":%lld,\"ts\":%.3f,\"args\":{\"bytes\":%llu}}",
                    d->dev, pidof(p), us(ev->t + ev->dur), (unsigned long long)d->live);
        }
        if (ev->mem == VT_MEM_MANAGED || ev->mem == VT_MEM_PINNED || ev->mem == VT_MEM_REGISTERED) {
            sep(pf);
            vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%lld,\"ts\":%.3f,\"args\":{\"bytes\":%llu}}",
                    ev->mem == VT_MEM_MANAGED ? "managed" : "pinned host", pidof(p), us(ev->t + ev->dur),
                    (unsigned long long)(ev->mem == VT_MEM_MANAGED ? p->managed_live : p->host_live));
        }
        break;
    }
    case VT_EV_COPY: case VT_EV_SET: case VT_EV_SYNC: case VT_EV_MEMINFO:
        complete(pf, p, ev, ev->api, ev->type == VT_EV_COPY ? "copy" : "api");
        break;
    case VT_EV_LAUNCH:
        complete(pf, p, ev, kernel ? kernel : ev->api, "launch");
        break;
    case VT_EV_COPIES: case VT_EV_SETS: /* folded: one instant at the first */
        sep(pf);
        vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"name\":", ev->type == VT_EV_COPIES ? "copies" : "sets");
        vt_json_str(f, ev->api);
        vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f,\"args\":{\"count\":%llu,\"bytes\":%llu,\"until_us\":%.3f,\"host_us\":%.3f}}",
                      pidof(p), (long long)ev->tid, us(ev->t), (unsigned long long)ev->count, (unsigned long long)ev->bytes, us(ev->last), us(ev->dur));
        break;
    case VT_EV_LAUNCHES: /* folded launches: one instant at the first, with how many and until when */
        sep(pf);
        fputs("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"launches\",\"name\":", f);
        vt_json_str(f, kernel ? kernel : ev->api);
        vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f,\"args\":{\"launches\":%llu,\"until_us\":%.3f,\"host_us\":%.3f}}",
                      pidof(p), (long long)ev->tid, us(ev->t), (unsigned long long)ev->count, us(ev->last), us(ev->dur));
        break;
    case VT_EV_RANGE_PUSH:
        sep(pf);
        fputs("{\"ph\":\"B\",\"cat\":\"nvtx\",\"name\":", f);
        vt_json_str(f, ev->name);
        vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f}", pidof(p), (long long)ev->tid, us(ev->t));
        break;
    case VT_EV_RANGE_POP:
        sep(pf);
        vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"E\",\"cat\":\"nvtx\",\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f}", pidof(p), (long long)ev->tid, us(ev->t));
        break;
    case VT_EV_RANGE_START: case VT_EV_RANGE_END:
        sep(pf);
        vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"%s\",\"cat\":\"nvtx\",\"id\":%lld,\"name\":", ev->type == VT_EV_RANGE_START ? "b" : "e", (long long)ev->id);
        vt_json_str(f, ev->name[0] ? ev->name : "range");
        vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f}", pidof(p), (long long)ev->tid, us(ev->t));
        break;
    case VT_EV_SNAPSHOT: /* a process-wide instant with the live VRAM the report counts then */
        sep(pf);
        fputs("{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"snapshot\",\"name\":", f);
        vt_json_str(f, ev->label);
        vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f,\"args\":{\"live_bytes\":%llu}}", pidof(p),
                      (long long)ev->tid, us(ev->t), (unsigned long long)p->live);
        break;
    case VT_EV_PAUSE: case VT_EV_RESUME: /* the outermost pause..resume as one slice on the process */
        if (ev->depth != (ev->type == VT_EV_PAUSE ? 1 : 0)) break;
        sep(pf);
        vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"%s\",\"cat\":\"pause\",\"id\":\"pause\",\"name\":\"recording paused\","
                      "\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f}", ev->type == VT_EV_PAUSE ? "b" : "e", pidof(p), (long long)ev->tid, us(ev->t));
        break;
    case VT_EV_MARK:
        sep(pf);
        fputs("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nvtx\",\"name\":", f);
        vt_json_str(f, ev->name);
        vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f}", pidof(p), (long long)ev->tid, us(ev->t));
        break;
    default: break;
    }
}

struct vt_observer vt_perfetto_observer(struct vt_perfetto *pf)
{
    struct vt_observer o = { on_event, pf };
    return o;
}

int vt_perfetto_finish(struct vt_perfetto *pf, struct vt_proc *const *procs, size_t n)
{
    FILE *f = pf->f;
    char b1[32], b2[32];
    for (size_t i = 0; i < n; i++) {
        const struct vt_proc *p = procs[i];
        for (size_t j = 0; j < p->nooms; j++) {
            const struct vt_oom *o = &p->ooms[j];
            sep(pf);
            vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"oom\",\"name\":\"OOM %s %s\",\"pid\":%lld,\"ts\":%.3f,"
                    "\"args\":{\"requested_bytes\":%llu,\"live_bytes\":%llu,\"dev\":%d,\"live_device_bytes\":%llu,"
                    "\"recovered\":%s,\"site\":", o->api, vtr_fmt_bytes(b1, sizeof b1, o->requested), pidof(p), us(o->t),
                    (unsigned long long)o->requested, (unsigned long long)o->live, o->dev, (unsigned long long)o->live_dev,
                    o->recovered ? "true" : "false");
            vt_json_str(f, vt_site_label(p, o->site));
            fputs(",\"held_by\":", f);
            vt_json_str(f, o->nholders ? vt_site_label(p, o->holders[0].site) : "");
            fputs("}}", f);
        }
        for (size_t j = 0; j < p->nfindings; j++) {
            const struct vt_finding *x = &p->findings[j];
            sep(pf);
            fputs("{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"finding\",\"name\":", f);
            vt_json_str(f, x->kind);
            vt_esc_printf(f, VT_ESC_JSON, ",\"pid\":%lld,\"ts\":%.3f,\"args\":{\"severity\":", pidof(p), us(x->t));
            vt_json_str(f, x->severity);
            fputs(",\"kernel\":", f); vt_json_str(f, x->kernel);
            fputs(",\"msg\":", f); vt_json_str(f, x->msg);
            fputs(",\"site\":", f); vt_json_str(f, vt_site_label(p, x->site));
            vt_esc_printf(f, VT_ESC_JSON, ",\"count\":%llu}}", (unsigned long long)x->count);
        }
        if (p->peak) {
            sep(pf);
            vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"peak\",\"name\":\"peak %s\",\"pid\":%lld,\"ts\":%.3f}",
                    vtr_fmt_bytes(b2, sizeof b2, p->peak), pidof(p), us(p->peak_t));
        }
        sep(pf);
        const char *prog = strrchr(p->program, '/');
        prog = prog ? prog + 1 : p->program;
        char name[512];
        if (p->rank >= 0) snprintf(name, sizeof name, "%s (rank %lld)", prog[0] ? prog : "process", (long long)p->rank);
        else snprintf(name, sizeof name, "%s", prog[0] ? prog : "process");
        vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,\"args\":{\"name\":", pidof(p));
        vt_json_str(f, name);
        fputs("}}", f);
    }
    for (size_t i = 0; i < pf->tids.cap; i++) {
        if (!pf->tids.used[i]) continue;
        uint64_t k = pf->tids.keys[i];
        sep(pf);
        vt_esc_printf(f, VT_ESC_JSON, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":\"tid %llu\"}}",
                (unsigned long long)(k >> 32), (unsigned long long)(k & 0xffffffffu), (unsigned long long)(k & 0xffffffffu));
    }
    fputs("\n]}\n", f);
    vtr_hmap_free(&pf->tids);
    free(pf);
    return ferror(f) ? -1 : 0;
}
