#!/bin/sh
# check_layers.sh - `make check-layers` (tools/check-layers.py): the tree as it is passes, and
# breaches planted in a copy of it are caught, each by the evidence the toolchain gives: an
# upward call with no include (nm only), an upward include, and a circle between two tools/
# files (one calls, the other includes).
. tests/lib.sh
command -v python3 >/dev/null 2>&1 || { skip "check_layers: python3 missing"; exit 0; }
[ -f "$BUILD/obj/src/platform/clock.o" ] && [ -f "$BUILD/obj/tools/report/util.o" ] ||
    { not_ok "check_layers: $BUILD/obj not built"; exit 0; }
FLAGS="-std=c11 -D_GNU_SOURCE -Iinclude -Isrc/hooks -Isrc/core -Isrc/fatbin -Isrc/trace -Isrc/platform -Itools -I$BUILD/gen"
# shellcheck disable=SC2086
layers() { (cd "$1" && python3 tools/check-layers.py "$BUILD" $FLAGS); }

layers "$ROOT" >"$TMP/clean.out" 2>&1; rc=$?
check_eq "the tree has no upward dependency and no circle" "$rc:$(tail -1 "$TMP/clean.out" | sed 's/[0-9]* modules/N modules/')" \
    "0:check-layers: N modules, no upward dependency, no circle"

# plant NAME FILE : a copy of the sources and objects in $TMP/NAME, FILE's object rebuilt there
# after the caller has edited FILE in it (through the edit function given as $3)
plant() {
    d="$TMP/$1"; mkdir -p "$d/$BUILD"
    cp -r "$ROOT/src" "$ROOT/include" "$ROOT/tools" "$d/" && cp -r "$ROOT/$BUILD/obj" "$ROOT/$BUILD/gen" "$d/$BUILD/"
    (cd "$d" && $3 "$2") || return 1
    # shellcheck disable=SC2086
    (cd "$d" && cc $FLAGS -c "$2" -o "$BUILD/obj/${2%.c}.o") 2>"$TMP/$1.cc" || { cat "$TMP/$1.cc"; return 1; }
}
# platform/clock.c calls core's registry, declared by hand: only nm can see it
up_call() { printf '%s\n' 'unsigned long vt_registry_live_vram(int dev);' \
    'unsigned long vt_planted_upward(void) { return vt_registry_live_vram(-1); }' >>"$1"; }
plant upcall src/platform/clock.c up_call
layers "$TMP/upcall" >"$TMP/upcall.out" 2>&1; rc=$?
check_eq "an upward call (platform -> core, no include) fails" "$rc" 1
check "... named with the symbol and both files" grep -qx \
    "check-layers: src/platform/clock.c calls vt_registry_live_vram (src/core/registry.c): platform/ may not depend on core/, a layer above it" \
    "$TMP/upcall.out"

# trace/records.c includes a hooks header
up_include() { sed -i 's|^#include "jsonl.h"$|#include "jsonl.h"\n#include "lifecycle.h"|' "$1"; }
plant upinc src/trace/records.c up_include
layers "$TMP/upinc" >"$TMP/upinc.out" 2>&1; rc=$?
check_eq "an upward include (trace -> hooks) fails" "$rc" 1
check "... named with the header" grep -qx \
    "check-layers: src/trace/records.c includes src/hooks/lifecycle.h (src/hooks/lifecycle.c): trace/ may not depend on hooks/, a layer above it" \
    "$TMP/upinc.out"

# tools/report/util.c calls render_text.c, which includes util.h: a circle of two
circle_call() { printf '%s\n' 'struct vt_proc; struct _IO_FILE;' \
    'int vt_render_text(struct _IO_FILE *f, struct vt_proc *const *procs, unsigned long n, const void *o);' \
    'void vt_planted_circle(void) { vt_render_text(0, 0, 0, 0); }' >>"$1"; }
plant circle tools/report/util.c circle_call
layers "$TMP/circle" >"$TMP/circle.out" 2>&1; rc=$?
check_eq "a circle inside tools/ fails" "$rc" 1
check "... as a circle of util.c and render_text.c" grep -q \
    "^check-layers: circle of [0-9]* modules (.*render_text.c.*util.c.*)" "$TMP/circle.out"
check_eq "... and nothing else is reported" "$(grep -c '^check-layers: circle\|may not depend' "$TMP/circle.out")" 1
