/* escape.h - the one choke point per output format for text that comes from a trace (program
 * and module paths, kernel, API and NVTX names ...). Every byte of such a string reaches the
 * output through here:
 *  - JSON (--json, --perfetto): a valid UTF-8 string body; quotes, backslashes, control
 *    characters and < > & escaped, and every byte that starts no valid UTF-8 sequence as U+FFFD;
 *  - HTML (--html, its SVG): & < > " ' as entities, control characters as their visible
 *    control pictures, invalid UTF-8 as U+FFFD;
 *  - text: a filtering stream (vt_text_filter) that shows control characters other than newline
 *    and tab, and invalid UTF-8, as \xNN, so a name cannot move the terminal's cursor or ring it.
 * vt_esc_printf is printf whose %s arguments are escaped for the format: the renderers write all
 * their output with it, so the format string is the only markup and no field can be forgotten. */
#ifndef VT_REPORT_ESCAPE_H
#define VT_REPORT_ESCAPE_H
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

enum vt_esc { VT_ESC_JSON, VT_ESC_HTML };

/* Bytes in the valid UTF-8 sequence at s (1 to 4), or 0 when none starts there. */
size_t vt_utf8_len(const unsigned char *s);
/* s[0..n) is valid UTF-8 throughout. */
int vt_utf8_valid(const char *s, size_t n);
void vt_json_str(FILE *f, const char *s);                  /* a JSON string literal, quotes included */
void vt_json_chars(FILE *f, const char *s, size_t max);    /* its body, at most max bytes of s */
void vt_html_str(FILE *f, const char *s);                  /* text for an element or an attribute */
void vt_html_chars(FILE *f, const char *s, size_t max);
/* printf with every %s escaped for `esc` (integers and floats as printf writes them). Returns 0,
 * or -1 when writing failed or the format holds a conversion it does not know. */
int vt_esc_printf(FILE *f, enum vt_esc esc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vt_esc_vprintf(FILE *f, enum vt_esc esc, const char *fmt, va_list ap);
/* A stream writing to `out` with control characters and invalid UTF-8 shown as \xNN (text
 * reports). fclose it to flush; NULL when it cannot be made. */
FILE *vt_text_filter(FILE *out);
#endif
