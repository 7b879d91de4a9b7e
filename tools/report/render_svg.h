/* render_svg.h - SVG pictures for the HTML report (render_svg.c).  Each writes one <svg> element
 * (or a short note when there is nothing to draw); trace strings are HTML-escaped. */
#ifndef VT_REPORT_RENDER_SVG_H
#define VT_REPORT_RENDER_SVG_H
#include "report/render.h"

void vt_svg_timeline(FILE *f, const struct vt_proc *p);
void vt_svg_treemap(FILE *f, const struct vt_proc *p);
/* Data flow over all of PROCS, with reference bandwidths from REF (may be NULL). */
void vt_svg_flow(FILE *f, struct vt_proc *const *procs, size_t n, const struct vt_refbw *ref);
#endif
