/* api.c - the entry points include/vramtrace/vramtrace.h finds with dlsym: snapshots, pausing
 * the recording of call traffic, version queries. Each is safe to call at any time, from any
 * thread, before or without CUDA; errno is kept. */
#include <vramtrace/vramtrace.h>

#include "events.h"
#include "lifecycle.h"
#include "tracer.h"

int vramtrace_api_version_v1(void) { return VRAMTRACE_API_VERSION; }
const char *vramtrace_version_v1(void) { return VT_TRACER_VERSION; }

int vramtrace_snapshot_v1(const char *label)
{
    vt_init();
    if (vt_forward_only()) return 0;
    return vt_ev_snapshot(label);
}

int vramtrace_step_v1(void)
{
    vt_init();
    if (vt_forward_only()) return 0;
    return vt_ev_step();
}

int vramtrace_pause_v1(void)
{
    vt_init();
    return vt_cfg.enabled ? vt_ev_pause(0) : 0;
}

int vramtrace_resume_v1(void)
{
    vt_init();
    return vt_cfg.enabled ? vt_ev_pause(1) : 0;
}
