#!/bin/sh
# py_life.sh - Python frames through a program's life cycle (issue 47, slice 1), under each CPython
# 3.10-3.13 installed here: tests/pylayout/life.py with its native helper (life_helper.c). Lines come
# from the scripts' "# at:" markers; what each mode does is in life.py's docstring.
#   fork      the child's trace names the child's lines with its own pycode records (the parent's
#             records went to the parent's trace before the fork)
#   cthreads  a thread Python never ran has no Python frame; a Python callback on a C thread has
#             its own frames only, not those of the thread that waits for it
#   shutdown  CUDA calls made without the lock while the interpreter finalizes, an atexit handler,
#             a library destructor after finalization (and after the tracer's own): no crash, a
#             complete trace with the destructor's pair in it, the lines named
#   subinterp 3.12 and later rebind a thread's thread state to the sub-interpreter it enters: its
#             lines; 3.10 and 3.11 keep the main interpreter's state bound (PyThreadState_Swap
#             does not rebind it), so the allocation is named by the main script's line that ran
#             the sub-interpreter: outer, but true, and read from frames that are alive
. tests/lib.sh
need_sim
if [ -n "${VRAMTRACE_PRELOAD_FIRST:-}" ]; then
    skip "py_life: not under the sanitizer build (the interpreter is not instrumented)"
    exit 0
fi
L="$ROOT/tests/pylayout/life.py"
H="$ROOT/tests/pylayout/life_helper.c"
at() { grep -n "# at:$1\b" "$2" | cut -d: -f1; }
cc -std=c11 -g -O1 -fPIC -shared -o "$TMP/helper.so" "$H" -lpthread -ldl || { check "the native helper builds" false; exit 0; }
M=$(at malloc "$L")
stacks() { "$VT" report --json "$1" 2>/dev/null | jq -r ".peak_sites[] | select(.bytes == $2) | .stack | join(\" | \")"; }
found=0
cpythons >"$TMP/pythons"
while read -r minor py <&3; do
    found=$((found + 1))
    v=3.$minor

    mkdir -p "$TMP/fork$minor"
    "$VT" run --sim -q -o "$TMP/fork$minor/t.jsonl" -- "$py" "$L" "$TMP/helper.so" fork >"$TMP/fork$minor.out" 2>"$TMP/fork$minor.err" </dev/null
    check_eq "$v fork: exit 0, the parent finished" "$?:$(cat "$TMP/fork$minor.out")" "0:fork done"
    child=$(ls "$TMP/fork$minor" | grep -v '^t.jsonl$')
    check_eq "$v fork: the child's 2 MiB named by the child's lines" "$(stacks "$TMP/fork$minor/$child" 2097152)" \
        "malloc (life.py:$M) | <module> (life.py:$(at child "$L"))"
    check_eq "$v fork: the child's trace has its own code records (malloc, <module>)" \
        "$(jqs "$TMP/fork$minor/$child" '[.[] | select(.ev == "pycode") | .name] | sort | join(",")')" "<module>,malloc"
    check_eq "$v fork: the parent's 1 MiB and 3 MiB at its lines before and after the fork" \
        "$(stacks "$TMP/fork$minor/t.jsonl" 1048576) / $(stacks "$TMP/fork$minor/t.jsonl" 3145728)" \
        "malloc (life.py:$M) | <module> (life.py:$(at parent_before "$L")) / malloc (life.py:$M) | <module> (life.py:$(at parent_after "$L"))"

    T="$TMP/cthreads$minor.jsonl"
    "$VT" run --sim -q -o "$T" -- "$py" "$L" "$TMP/helper.so" cthreads >"$TMP/ct$minor.out" 2>"$TMP/ct$minor.err" </dev/null
    check_eq "$v cthreads: exit 0" "$?:$(cat "$TMP/ct$minor.out")" "0:cthreads done"
    check_eq "$v cthreads: the callback's 6 MiB has the callback thread's frames only (not the waiting line $(at c_callback "$L"))" \
        "$(stacks "$T" 6291456)" "malloc (life.py:$M) | from_c (life.py:$(at callback "$L"))"
    s5=$(stacks "$T" 5242880)
    check_eq "$v cthreads: the C thread's 5 MiB: its C line first, no Python frame" \
        "${s5%% | *} / $(printf '%s' "$s5" | grep -c '\.py:')" \
        "c_alloc_main (life_helper.c:$(grep -n 'cuda_malloc(&p, (size_t)n)' "$H" | cut -d: -f1)) / 0"

    for run in 1 2 3; do
        T="$TMP/down$minor.$run.jsonl"
        "$VT" run --sim -q -o "$T" -- "$py" "$L" "$TMP/helper.so" shutdown >"$TMP/down$minor.out" 2>"$TMP/down$minor.err" </dev/null
        check_eq "$v shutdown (run $run): exit 0, a complete trace" \
            "$?:$(cat "$TMP/down$minor.out"):$("$VT" report --json "$T" 2>/dev/null | jq -r '.processes[0].complete')" "0:shutdown done:true"
    done
    check_eq "$v shutdown: the atexit handler's 7 MiB at its line" "$(stacks "$T" 7340032)" \
        "malloc (life.py:$M) | cleanup (life.py:$(at atexit "$L"))"
    "$VT" report "$T" >"$TMP/down$minor.txt" 2>&1
    check_eq "$v shutdown: the library destructor's pair, after the tracer's own destructor, is in the trace" \
        "$(grep -c "^ *1 alloc  *8.00 KiB total  at_unload (life_helper.c:$(grep -n 'cuda_malloc(&p, 8192)' "$H" | cut -d: -f1))\$" "$TMP/down$minor.txt")" 1
    n=$(sed -n "s/^ *\([0-9]*\) allocs .* busy (life.py:$(at busy "$L"))\$/\1/p" "$TMP/down$minor.txt")
    check "$v shutdown: the daemon thread's pairs before finalization named by its line (at least the 200 waited for; $n)" \
        test "${n:-0}" -ge 200

    T="$TMP/sub$minor.jsonl"
    "$VT" run --sim -q -o "$T" -- "$py" "$L" "$TMP/helper.so" subinterp >"$TMP/sub$minor.out" 2>"$TMP/sub$minor.err" </dev/null
    check_eq "$v subinterp: exit 0" "$?:$(cat "$TMP/sub$minor.out")" "0:subinterp done"
    Sub="$ROOT/tests/pylayout/sub.py"
    if [ "$minor" -ge 12 ]; then
        want="sub_alloc (sub.py:$(at sub "$Sub")) | <module> (sub.py:$(at sub_call "$Sub")) | <module> (<string>:1)"
    else
        want="<module> (life.py:$(at run_sub "$L"))"
    fi
    check_eq "$v subinterp: the 9 MiB allocated in the sub-interpreter" "$(stacks "$T" 9437184)" "$want"
done 3<"$TMP/pythons"
[ $found -gt 0 ] || skip "py_life: NOT TESTED - no CPython 3.10-3.13 here"
