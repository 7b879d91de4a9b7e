/* refbw.c - reads the reference-bandwidth JSON of `vramtrace bandwidth --json` with json-c. */
#include "report/refbw.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

static const char *const names[VT_REF__COUNT] = { "h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable",
                                                  "d2d_copy", "vram_triad", "host_ddr_copy" };
const char *vt_ref_name(enum vt_ref_id id) { return (unsigned)id < VT_REF__COUNT ? names[id] : "?"; }

static double num(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) return -1;
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)) return -1;
    double d = json_object_get_double(v);
    return d > 0 && d < 1e6 ? d : -1;
}

int vt_refbw_load(const char *path, struct vt_refbw *ref, char *err, size_t errlen)
{
    for (int i = 0; i < VT_REF__COUNT; i++) ref->gbps[i] = ref->theoretical[i] = -1;
    ref->pcie_gen = ref->pcie_width = 0;
    ref->pcie_gbps = -1;
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    json_object *o = json_tokener_parse(buf);
    if (!o || !json_object_is_type(o, json_type_object)) {
        if (o) json_object_put(o);
        snprintf(err, errlen, "%s: not a JSON object (expected the output of `vramtrace bandwidth --json`)", path);
        return -1;
    }
    json_object *res, *pcie;
    if (!json_object_object_get_ex(o, "results", &res) || !json_object_is_type(res, json_type_array)) {
        json_object_put(o);
        snprintf(err, errlen, "%s: no \"results\" array (expected the output of `vramtrace bandwidth --json`)", path);
        return -1;
    }
    for (size_t i = 0; i < json_object_array_length(res); i++) {
        json_object *r = json_object_array_get_idx(res, i), *nm;
        if (!json_object_is_type(r, json_type_object) || !json_object_object_get_ex(r, "name", &nm)) continue;
        const char *s = json_object_get_string(nm);
        for (int k = 0; k < VT_REF__COUNT; k++)
            if (s && !strcmp(s, names[k])) { ref->gbps[k] = num(r, "gbps"); ref->theoretical[k] = num(r, "theoretical_gbps"); }
    }
    if (json_object_object_get_ex(o, "pcie", &pcie) && json_object_is_type(pcie, json_type_object)) {
        double g = num(pcie, "gen"), w = num(pcie, "width");
        ref->pcie_gen = g > 0 ? (int)g : 0;
        ref->pcie_width = w > 0 ? (int)w : 0;
        ref->pcie_gbps = num(pcie, "theoretical_gbps");
    }
    json_object_put(o);
    return 0;
}
