/* fatbin.c - placeholder until the fatbin parser lands (see fatbin.h). */
#include <stdlib.h>
#include <stdio.h>
#include "fatbin.h"
struct vt_fatbin { int unused; };
int vt_fatbin_parse(const void *data, size_t len, vt_fatbin **out, char *err, size_t errlen)
{ (void)data; (void)len; *out = NULL; snprintf(err, errlen, "fatbin parser not built"); return VT_FATBIN_EINVAL; }
size_t vt_fatbin_count(const vt_fatbin *fb) { (void)fb; return 0; }
const vt_kernel_layout *vt_fatbin_at(const vt_fatbin *fb, size_t i) { (void)fb; (void)i; return NULL; }
const vt_kernel_layout *vt_fatbin_find(const vt_fatbin *fb, const char *name) { (void)fb; (void)name; return NULL; }
void vt_fatbin_free(vt_fatbin *fb) { free(fb); }
