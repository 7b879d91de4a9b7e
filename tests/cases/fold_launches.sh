#!/bin/sh
# fold_launches.sh - steady launches counted, not a line each (issue 48 slice 1, core/fold.h):
# the size of a steady loop's trace and its exact counts, what a SIGKILL loses (at most the last
# interval's counts: VRAMTRACE_FOLD_INTERVAL_MS), and the lines folding must keep.
. tests/lib.sh
need_sim

# 600000 launches of one configuration (tests/progs/trace_rt.cu "many"): the first keeps its line,
# the rest are counted; the report counts all of them for their kernel
"$VT" run --sim -q -o "$TMP/many.jsonl" -- "$PROGS/trace_rt" many >"$TMP/many.out" 2>&1
check_eq "600000 steady launches: exit 0, all counted, one launch line" \
    "$?:$(nlaunches "$TMP/many.jsonl"):$(grep -c '"ev":"launch"' "$TMP/many.jsonl")" "0:600000:1"
bytes=$(wc -c <"$TMP/many.jsonl")
check "600000 steady launches: at most 16 bytes of trace per launch ($bytes bytes in all)" test "$bytes" -le $((16 * 600000))
"$VT" report --json "$TMP/many.jsonl" >"$TMP/many.json" 2>/dev/null
check_eq "the report: 600000 launches, all of k_ptr" \
    "$(jq -c '[.launches, ([.processes[0].kernels[] | select(.name | test("k_ptr")) | .launches] | add)]' "$TMP/many.json")" "[600000,600000]"

# 64 configurations of one kernel (block 32 or 64, 0 to 496 bytes of shared memory) launched in
# turn 5 times (trace_rt "configs"): the thread's last configuration never matches, so each launch
# is looked up in the fold table, where configurations that differ only in block or shared memory
# may share a probe window; each configuration's launches, lines and counts, are its own 5
"$VT" run --sim -q -o "$TMP/configs.jsonl" -- "$PROGS/trace_rt" configs >"$TMP/configs.out" 2>&1
check_eq "64 configurations x 5: exit 0, each one's launches counted as its own (block, shared memory)" \
    "$?:$(jqs "$TMP/configs.jsonl" '[.[] | select(.ev == "launch" or .ev == "launches") | {b: .block[0], s: .shmem, c: (.count // 1)}]
        | group_by([.b, .s]) | map("config \(.[0].b) \(.[0].s) \(map(.c) | add)") | .[]' | sort | tr '\n' ';')" \
    "0:$(grep '^config ' "$TMP/configs.out" | sort | tr '\n' ';')"

# SIGKILL: counts written at the interval (by the drain thread for a thread gone quiet) survive
for ms in 100 250; do
    env VRAMTRACE_FOLD_INTERVAL_MS=$ms "$VT" run --sim -q -o "$TMP/k$ms.jsonl" -- "$PROGS/rel_crash" steady 1 $((4 * ms)) >"$TMP/k$ms.out" 2>&1
    rc=$?
    check_eq "interval $ms ms, killed after $((4 * ms)) ms of quiet: killed (137), all 5001 launches in the recovered trace" \
        "$rc:$(nlaunches "$TMP/k$ms.jsonl")" "137:5001"
done
env VRAMTRACE_FOLD_INTERVAL_MS=60000 "$VT" run --sim -q -o "$TMP/k0.jsonl" -- "$PROGS/rel_crash" steady 1 0 >"$TMP/k0.out" 2>&1
n=$(nlaunches "$TMP/k0.jsonl")
check "killed within the interval: what was counted since the last write is lost, never more (1 to 5001 recorded: $n)" \
    test "$n" -ge 1 -a "$n" -le 5001

# a thread's counters are written when it ends: killed right after, with an interval of a minute
env VRAMTRACE_FOLD_INTERVAL_MS=60000 "$VT" run --sim -q -o "$TMP/th.jsonl" -- "$PROGS/rel_crash" thread_steady 1 >"$TMP/th.out" 2>&1
check_eq "a thread's 5000 launches, counted, written when it ended (killed at once after, interval 60 s): all 5001 there" \
    "$?:$(nlaunches "$TMP/th.jsonl"):$(grep -c '"ev":"launch"' "$TMP/th.jsonl")" "137:5001:2"

# folding off: a line each
VRAMTRACE_FOLD=0 "$VT" run --sim -q -o "$TMP/off.jsonl" -- "$PROGS/rel_crash" steady 1 0 >/dev/null 2>&1
check_eq "VRAMTRACE_FOLD=0: every launch a line (5001), no launches record" \
    "$(grep -c '"ev":"launch"' "$TMP/off.jsonl"):$(grep -c '"ev":"launches"' "$TMP/off.jsonl")" "5001:0"

# bad values: one line each naming the knob and what it takes; the defaults apply (folding on)
env VRAMTRACE_FOLD=maybe VRAMTRACE_FOLD_INTERVAL_MS=0 "$VT" run --sim -o "$TMP/bad.jsonl" -- "$PROGS/rel_crash" steady 1 0 >/dev/null 2>"$TMP/bad.err"
check_eq "bad VRAMTRACE_FOLD and VRAMTRACE_FOLD_INTERVAL_MS: a line each, and folding on as by default" \
    "$(grep -c '^vramtrace: VRAMTRACE_FOLD=maybe not understood (takes 1, 0, on, off, yes, no, true, false); using the default$' "$TMP/bad.err") $(grep -c '^vramtrace: VRAMTRACE_FOLD_INTERVAL_MS=0 not understood (takes milliseconds from 1 to 3600000 between writes of folded launch counts); using the default$' "$TMP/bad.err") $(grep -c '"ev":"launch"' "$TMP/bad.jsonl")" \
    "1 1 1"
