/* bandwidth.h - the seam other commands use to get reference bandwidths (`vramtrace run
 * --bandwidth`). The measurement itself lives in tools/bandwidth/; its JSON format is described in
 * docs/bandwidth.md and is what `vramtrace report --bandwidth FILE` reads. */
#ifndef VT_BANDWIDTH_H
#define VT_BANDWIDTH_H
#include <stddef.h>

/* Runs a quick measurement (256 MiB GPU arrays, host arrays 4 x LLC, 3 trials, device 0) and writes the
 * JSON document to `path` (created or truncated). Prints nothing: why GPU rows are missing (no
 * libcuda.so.1, cuInit failure, no device) is recorded in the document's "notes", with "gpu": null.
 * Returns 0 when the file was written - also when no GPU exists. Returns -1 with a one-line reason
 * in err[errlen] (err may be NULL) when it could not be written, or when a measurement failed on a
 * real GPU (the file is then still written, with what was measured and the notes). Takes a few seconds; loads libcuda.so.1 into the process if it exists. */
/* The file is created, never opened through a link or over an existing file: PATH, else PATH
 * with ".1" ... ".99" before its ".json" (the first free name, put in used[usedlen]). */
int vt_bandwidth_measure_json(const char *path, char *used, size_t usedlen, char *err, size_t errlen);

#endif
