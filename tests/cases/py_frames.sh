#!/bin/sh
# py_frames.sh - the Python line in recorded stacks (issue 47, slice 1): tests/pylayout/alloc.py
# calls the CUDA runtime through ctypes (the interpreter's lock released) from nested functions,
# traced under each CPython 3.10-3.13 installed here. Its lines come from its "# at:" markers;
# the report must name them: a helper's line with the caller that tells its sites apart, the
# Python callers out from it, the copy's line; the trace holds one `pycode` record per code object
# a stack goes through.
. tests/lib.sh
need_sim
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then
    skip "py_frames: not under the sanitizer build (the interpreter is not instrumented)"
    exit 0
fi
S="$ROOT/tests/pylayout/alloc.py"
at() { grep -n "# at:$1\b" "$S" | cut -d: -f1; }
found=0
cpythons >"$TMP/pythons"
while read -r minor py <&3; do
    found=$((found + 1))
    T="$TMP/py$minor.jsonl"
    "$VT" run --sim -q -o "$T" -- "$py" "$S" >"$TMP/py$minor.out" 2>"$TMP/py$minor.err"
    check_eq "3.$minor: the program ran (its copy returned 0)" "$?:$(cat "$TMP/py$minor.out")" "0:upload 0"
    "$VT" report --json "$T" >"$TMP/py$minor.json" 2>/dev/null
    check_eq "3.$minor: peak sites: the helper's line, told apart by the callers' lines; 3 MiB and 2 MiB" \
        "$(jq -r '.peak_sites | map("\(.site) \(.bytes)") | join(";")' "$TMP/py$minor.json")" \
        "malloc (alloc.py:$(at malloc)) <- weights (alloc.py:$(at weights)) 3145728;malloc (alloc.py:$(at malloc)) <- activations (alloc.py:$(at acts)) 2097152"
    check_eq "3.$minor: the copy's site is its line" \
        "$(jq -r '[.processes[0].copy_sites[].site] | join(";")' "$TMP/py$minor.json")" \
        "upload (alloc.py:$(at copy))"
    "$VT" report "$T" >"$TMP/py$minor.txt" 2>&1
    check_eq "3.$minor: text: the weights' site shows its Python caller, and the module's line is common to all" \
        "$(grep -A1 "<- weights" "$TMP/py$minor.txt" | sed -n 2p | sed 's/^ *//') / $(grep -c "every site above called from <module> (alloc.py:$(at main_model))" "$TMP/py$minor.txt")" \
        "from model (alloc.py:$(at model_w)) / 1"
    check_eq "3.$minor: every Python frame in a stack has its code record (no frame left unnamed)" \
        "$(grep -c 'a Python frame whose code record is missing' "$TMP/py$minor.txt")" 0
    check "3.$minor: one pycode record per code object (file alloc.py, distinct ids)" sh -c \
        'n=$(grep -c "\"ev\":\"pycode\"" "$1"); u=$(grep "\"ev\":\"pycode\"" "$1" | jq -r .id | sort -u | wc -l); [ "$n" -ge 4 ] && [ "$n" -eq "$u" ]' _ "$T"
    # How many Python frames a stack keeps: with 4 native frames (VRAMTRACE_BT_DEPTH=4), every one
    # of a recursion 5 deep (5 + 2, deep.py's docstring), and 32 of one 40 deep (the most a stack
    # takes: VT_BT_MAX 64 leaves room for more, the Python part stops at 32), innermost first.
    for depth in 5 40; do
        D="$TMP/deep$minor-$depth.jsonl" want=$((depth + 2))
        [ $want -gt 32 ] && want=32
        VRAMTRACE_BT_DEPTH=4 "$VT" run --sim -q -o "$D" -- "$py" "$ROOT/tests/pylayout/deep.py" $depth >/dev/null 2>&1
        check_eq "3.$minor: recursion $depth deep: 4 native frames, then $want Python frames" \
            "$(jq -r 'select(.ev=="alloc") | [.bt[] | if test("^0x[89a-f][0-9a-f]{15}$") then "p" else "c" end] | join("")' "$D")" \
            "cccc$(printf "%${want}s" | tr ' ' p)"
        "$VT" report --json "$D" >"$D.json" 2>/dev/null
        ml=$(grep -n "# at:malloc" "$ROOT/tests/pylayout/deep.py" | cut -d: -f1)
        check_eq "3.$minor: recursion $depth deep: the one site is the innermost frame's line (no caller needed to tell it apart)" \
            "$(jq -r '[.peak_sites[].site] | join(";")' "$D.json")" "down (deep.py:$ml)"
    done
done 3<"$TMP/pythons"
[ $found -gt 0 ] || skip "py_frames: NOT TESTED - no CPython 3.10-3.13 here"
