/* refbw.h - reference bandwidths from `vramtrace bandwidth --json` (tools/bandwidth/):
 * {"results":[{"name":"h2d_pinned","gbps":25.1,"theoretical_gbps":..},...],
 *  "pcie":{"gen":5,"width":16,"theoretical_gbps":63.0}}.  Missing fields are tolerated
 * (value < 0 = unknown). */
#ifndef VT_REPORT_REFBW_H
#define VT_REPORT_REFBW_H
#include <stddef.h>

enum vt_ref_id { VT_REF_H2D_PINNED, VT_REF_H2D_PAGEABLE, VT_REF_D2H_PINNED, VT_REF_D2H_PAGEABLE,
                 VT_REF_D2D, VT_REF_VRAM_TRIAD, VT_REF_HOST_DDR, VT_REF__COUNT };
struct vt_refbw {
    double gbps[VT_REF__COUNT], theoretical[VT_REF__COUNT];
    int pcie_gen, pcie_width;       /* 0 unknown */
    double pcie_gbps;               /* theoretical, < 0 unknown */
};
/* Loads PATH.  0, or -1 with "PATH: what is wrong" in ERR (not JSON, no results array). */
int vt_refbw_load(const char *path, struct vt_refbw *ref, char *err, size_t errlen);
const char *vt_ref_name(enum vt_ref_id id);
#endif
