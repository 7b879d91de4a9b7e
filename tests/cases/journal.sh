#!/bin/sh
# journal.sh - the record ring (src/journal.c): events reach the trace through the drain thread,
# the ring is removed on a clean exit, a process killed before the drain got there leaves a ring
# that `vramtrace report` (or `run`) folds back in, a live writer's ring is left alone, and a
# damaged ring file gives a warning, not a crash. Also: VRAMTRACE_SYNC=1 gives the same trace.
. tests/lib.sh
need_sim
P="$PROGS/rel_crash"
N=64
MiB=1048576
run_sim() { env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 "$@"; }
# start_bg OUT ARGS... : the program itself in the background (env execs it: $bg is its pid)
start_bg() {
    out=$1; shift
    env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 "$@" >"$out" 2>&1 &
    bg=$!
    i=0
    while ! grep -q '^ready' "$out" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
}

# clean exit: no ring left, every allocation in the trace
run_sim VRAMTRACE_OUTPUT="$TMP/clean.jsonl" "$P" exit $N >/dev/null
check "clean exit: ring file removed" test ! -e "$TMP/clean.jsonl.ring"
check_eq "clean exit: all $N allocations" "$(jqs "$TMP/clean.jsonl" '[.[]|select(.ev=="alloc")]|length')" $N
check_eq "clean exit: footer present" "$(jqs "$TMP/clean.jsonl" '[.[]|select(.ev=="footer")]|length')" 1

# same program with formatting in the calling thread: the same records, in the same order
run_sim VRAMTRACE_SYNC=1 VRAMTRACE_OUTPUT="$TMP/sync.jsonl" "$P" exit $N >/dev/null
sig() { jqs "$1" '[.[]|select(.ev=="alloc" or .ev=="launch" or .ev=="sync")|[.ev,.api,.size,.res]]|tostring'; }
check_eq "VRAMTRACE_SYNC=1 writes the same event sequence" "$(sig "$TMP/sync.jsonl")" "$(sig "$TMP/clean.jsonl")"

# SIGKILL without `vramtrace run`: the ring stays; report recovers it
start_bg "$TMP/k.out" VRAMTRACE_OUTPUT="$TMP/k.jsonl" "$P" sleep $N
# while the writer lives, the report must not take its ring
"$VT" report --json "$TMP/k.jsonl" >/dev/null 2>"$TMP/live.err"
check "live writer: report warns the ring is still being written" grep -q "still writing" "$TMP/live.err"
check "live writer: ring left in place" test -e "$TMP/k.jsonl.ring"
kill -KILL $bg; wait $bg 2>/dev/null
check "SIGKILL: ring left behind" test -e "$TMP/k.jsonl.ring"
j=$("$VT" report --json "$TMP/k.jsonl" 2>"$TMP/rec.err")
check_eq "SIGKILL: report reads the trace" "$?" 0
check_eq "SIGKILL: every allocation counted after recovery" "$(printf '%s' "$j" | jq -r .peak_bytes)" $((N * MiB))
check "SIGKILL: ring removed once recovered" test ! -e "$TMP/k.jsonl.ring"
check_eq "SIGKILL: each allocation in the trace exactly once" \
    "$(jqs "$TMP/k.jsonl" '[.[]|select(.ev=="alloc")|.addr]|unique|length'):$(jqs "$TMP/k.jsonl" '[.[]|select(.ev=="alloc")]|length')" "$N:$N"

# records still in the ring when the process died are formatted by the CLI: with the drainer
# off (VRAMTRACE_SYNC=defer) everything after the header waits in the ring
start_bg "$TMP/s.out" VRAMTRACE_SYNC=defer VRAMTRACE_OUTPUT="$TMP/s.jsonl" "$P" sleep 4
check_eq "deferred: nothing but header and modules reached the trace yet" \
    "$(jqs "$TMP/s.jsonl" '[.[]|select(.ev!="header" and .ev!="module")]|length')" 0
kill -KILL $bg; wait $bg 2>/dev/null
"$VT" report --json "$TMP/s.jsonl" >"$TMP/s.json" 2>"$TMP/s.err"
check "deferred: report says it recovered events" grep -q "recovered [0-9]* events" "$TMP/s.err"
check_eq "deferred: recovered trace has the 4 allocations" "$(jq -r .peak_bytes "$TMP/s.json")" $((4 * MiB))
check_eq "deferred: the kernel and its launch were recovered" \
    "$(jqs "$TMP/s.jsonl" '[.[]|select(.ev=="kernel" or .ev=="launch")]|length')" 2
check_eq "deferred: every recovered line is valid JSON" "$(tr -d '\000' <"$TMP/s.jsonl" | jq -c . >/dev/null 2>&1; echo $?)" 0

# the drainer killed halfway through copying a line into the trace (a test hook raises SIGKILL
# there): recovery cuts the half line, formats that record again, and every line parses
# (line k of the file is the k-th drained; the header before them is written directly. Where the
# first allocation falls depends on how many libraries are loaded: ask a clean run.)
"$VT" run --sim -q -o "$TMP/mid.jsonl" -- "$P" exit 16 >/dev/null 2>&1
first=$(jqs "$TMP/mid.jsonl" '[.[].ev] | index("alloc")')
for k in $((first + 1)) $((first + 8)); do
    VRAMTRACE_TEST_KILL_IN_DRAIN=$k "$VT" run --sim -q -o "$TMP/mid$k.jsonl" -- "$P" exit 16 >/dev/null 2>&1
    check_eq "killed mid-line ($k): vramtrace run exits 128+9" "$?" 137
    check_eq "killed mid-line ($k): every line is valid JSON" "$(tr -d '\000' <"$TMP/mid$k.jsonl" | jq -c . >/dev/null 2>&1; echo $?)" 0
    # the drainer may die while the program is still allocating: as many allocations as were
    # made by then, none doubled (the half-copied record is formatted once, by recovery)
    n=$(jqs "$TMP/mid$k.jsonl" '[.[]|select(.ev=="alloc")]|length')
    check_eq "killed mid-line ($k): no allocation line doubled" \
        "$(jqs "$TMP/mid$k.jsonl" '[.[]|select(.ev=="alloc")|.addr]|unique|length')" "$n"
    check "killed mid-line ($k): allocations recorded ($n)" test "$n" -ge 1
    check_eq "killed mid-line ($k): header first" "$(jqs "$TMP/mid$k.jsonl" '.[0].ev')" header
done

# a damaged ring: a warning naming the file, the trace still read
run_sim VRAMTRACE_OUTPUT="$TMP/d.jsonl" "$P" exit 2 >/dev/null
printf 'not a ring' >"$TMP/d.jsonl.ring"
"$VT" report --json "$TMP/d.jsonl" >"$TMP/d.json" 2>"$TMP/d.err"
check_eq "damaged ring: report still exits 0" "$?" 0
check "damaged ring: one-line warning naming it" grep -q "d.jsonl.ring: not a vramtrace ring file" "$TMP/d.err"
check_eq "damaged ring: trace still analysed" "$(jq -r .peak_bytes "$TMP/d.json")" $((2 * MiB))
