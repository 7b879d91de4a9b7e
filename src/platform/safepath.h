/* safepath.h - reaching a file's directory without following a link another user owns.
 *
 * Root may trace a program whose -o path passes through directories other users control. Checking
 * the path for their links and then opening it by name lets them swap a directory for a link in
 * between (the check sees a directory, the open follows the link). So the path is walked one
 * component at a time with openat(O_PATH | O_NOFOLLOW) from a descriptor of the directory before
 * it; a link is followed only when the user or root owns it (its target is walked the same way);
 * the caller then creates or opens the file relative to the descriptor it is handed, which stays
 * the directory that was checked whatever happens to the names later.
 *
 * Invariants: never follows a link owned by anyone but the effective user or root; makes missing
 * directories (0700) only when asked; no allocation (the tracer calls it from its constructor).
 */
#ifndef VT_PLATFORM_SAFEPATH_H
#define VT_PLATFORM_SAFEPATH_H

#include <stddef.h>

#define VT_SAFEPATH_MKDIR 1 /* make missing directories, 0700 */

/* A descriptor (O_PATH, close-on-exec) of the directory that holds PATH's last component, PATH
 * being absolute or relative to the working directory; *BASE (when given) points at that last
 * component in PATH ("" when PATH ends in '/'). On failure a negative errno: -EPERM when a link
 * another user owns is on the way, BAD then naming it (BAD may be NULL). */
int vt_safepath_dir_open(const char *path, int flags, const char **base, char *bad, size_t badlen);

#endif
