#!/bin/sh
# py_layout.sh - the tracer's reader of Python frames (src/platform/pyframes.c, issue 47) against
# each CPython 3.10-3.13 installed here: its layout table equals what that version's own headers
# say (tests/pylayout/pylayout.c, the compiler's offsetof), and inside that interpreter, with the
# lock released (ctypes), it reads the calling thread's frames: names, file, first lines, and
# instruction offsets that CPython itself maps to the calling lines (tests/pylayout/probe.py).
# Then the report's line-table decoder (tools/report/pylines.c) against co_lines() for every
# instruction of a few standard modules' code objects (tests/pylayout/lines.py).
. tests/lib.sh
found=0
cc -std=c11 -D_GNU_SOURCE -Itools -o "$TMP/lines_check" tests/pylayout/lines_check.c tools/report/pylines.c ||
    check "the line-table check builds" false
cpythons >"$TMP/pythons"
while read -r minor py <&3; do
    inc=$(no_san "$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
    [ -f "$inc/Python.h" ] || { skip "py_layout: 3.$minor at $py has no headers"; continue; }
    found=$((found + 1))
    v=3$minor
    cc -I"$inc" -I"$inc/internal" -o "$TMP/pylayout$v" tests/pylayout/pylayout.c 2>"$TMP/cc$v.err" ||
        { check "3.$minor: the layout probe compiles against its headers" false; continue; }
    "$TMP/pylayout$v" | sort >"$TMP/want$v"
    "$ROOT/$BUILD/tests/unit/test_pyframes" --dump 3$minor | sort >"$TMP/got$v"
    check_eq "3.$minor: the tracer's layout table is the headers' offsetof ($(wc -l <"$TMP/want$v" | tr -d ' ') fields; lines that differ)" \
        "$(diff "$TMP/want$v" "$TMP/got$v" | grep -c '^[<>]')" 0
    cc -std=c11 -D_GNU_SOURCE -shared -fPIC -Isrc/platform -o "$TMP/probe$v.so" tests/pylayout/pyprobe.c src/platform/pyframes.c -ldl ||
        { check "3.$minor: the probe builds" false; continue; }
    out=$(no_san "$py" tests/pylayout/probe.py "$TMP/probe$v.so" 2>&1 | tr '\n' ';')
    case $minor in 10) run=run ;; *) run=Outer.run ;; esac   # co_qualname from 3.11
    f="$ROOT/tests/pylayout/probe.py"
    check_eq "3.$minor: frames read with the lock released: inner, middle, run, <module>, at the calling lines 14, 18, 23, 26" \
        "$out" "4;inner $f 13 14;middle $f 17 18;$run $f 22 23;<module> $f 1 26;"
    r=$(no_san "$py" tests/pylayout/lines.py | "$TMP/lines_check" 2>"$TMP/lines$v.err")
    check "3.$minor: line tables decoded as co_lines() says: over 300 code objects, over 10000 offsets, none differs ($r)" \
        sh -c 'set -- $1; [ "$1" -gt 300 ] && [ "$2" -gt 10000 ] && [ "$3" -eq 0 ]' _ "$r"
    if [ "$minor" -ge 11 ]; then # tables without columns (-X no_debug_ranges: the "no columns" entries)
        r=$(no_san "$py" -X no_debug_ranges tests/pylayout/lines.py fresh | "$TMP/lines_check" 2>"$TMP/lines$v.nc.err")
        check "3.$minor: line tables without columns decoded as co_lines() says: over 300 code objects, over 10000 offsets, none differs ($r)" \
            sh -c 'set -- $1; [ "$1" -gt 300 ] && [ "$2" -gt 10000 ] && [ "$3" -eq 0 ]' _ "$r"
    fi
done 3<"$TMP/pythons"
[ $found -gt 0 ] || skip "py_layout: NOT TESTED - no CPython 3.10-3.13 with headers here"
