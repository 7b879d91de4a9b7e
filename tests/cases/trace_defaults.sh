#!/bin/sh
# trace_defaults.sh - the defaults are the documented ones, and a clean run says nothing else
# (issue 52: the default formatting mode could silently become synchronous, with no drain thread,
# and every traced run could print a false "formatting events in the program's threads instead"
# warning, and no test noticed either).
# docs/trace-format.md: events are formatted by the tracer's drain thread (named "vramtrace") unless
# VRAMTRACE_SYNC=1, which formats in the calling thread; a fork child of a threaded parent does the
# same (docs/reliability.md).
. "$ROOT/tests/lib.sh"
need_sim
P="$PROGS/threads_comm"   # after a cudaMalloc: "threads N named-vramtrace K"
"$VT" run --sim -o "$TMP/d.jsonl" -- "$P" >"$TMP/d.out" 2>"$TMP/d.err"
check_eq "default: one drain thread named vramtrace beside the program's one thread" "$?:$(cat "$TMP/d.out")" "0:threads 2 named-vramtrace 1"
check_eq "default: stderr holds only the end-of-run lines" "$(stderr_unexpected "$TMP/d.err")" ""
check_eq "default: ... and both of them" "$(wc -l <"$TMP/d.err" | tr -d ' ')" 2
VRAMTRACE_SYNC=0 "$VT" run --sim -q -o "$TMP/s0.jsonl" -- "$P" >"$TMP/s0.out" 2>&1
check_eq "VRAMTRACE_SYNC=0 is the default" "$(cat "$TMP/s0.out")" "threads 2 named-vramtrace 1"
VRAMTRACE_SYNC=1 "$VT" run --sim -q -o "$TMP/s1.jsonl" -- "$P" >"$TMP/s1.out" 2>&1
check_eq "VRAMTRACE_SYNC=1: no drain thread (formatted in the caller)" "$(cat "$TMP/s1.out")" "threads 1 named-vramtrace 0"
VRAMTRACE_SYNC=defer "$VT" run --sim -q -o "$TMP/sd.jsonl" -- "$P" >"$TMP/sd.out" 2>&1
check_eq "VRAMTRACE_SYNC=defer: no drain thread (records wait in the ring)" "$(cat "$TMP/sd.out")" "threads 1 named-vramtrace 0"
for t in d s0 s1 sd; do
    check_eq "$t: the trace holds the allocation and its free" \
        "$(jqs "$TMP/$t.jsonl" '[.[] | select(.ev == "alloc" or .ev == "free") | .ev] | join(",")')" "alloc,free"
done
# clean programs (no bug planted in them) say nothing but the end-of-run lines: copies, steps, CUB, NVTX,
# runtime and driver calls, one and two devices
for spec in "1|staged_copy" "2|staged_copy" "1|small_copies" "2|wl_mem multi" "1|steady_sites" "1|typed_sites" "1|steps" "1|cub_reduce" "1|nvtx_ranges"; do
    devs=${spec%%|*}; prog=${spec#*|}
    # shellcheck disable=SC2086
    VRAMTRACE_SIM_DEVICES=$devs "$VT" run --sim -o "$TMP/c.jsonl" -- "$PROGS"/$prog >/dev/null 2>"$TMP/c.err" </dev/null
    check_eq "$prog on $devs device(s): nothing on stderr but the end-of-run lines" "$?:$(stderr_unexpected "$TMP/c.err" | head -3)" "0:"
    rm -f "$TMP/c.jsonl"
done

# A quiet program costs little: the drain thread polls every 1 ms while records flow and every
# 10 ms after 20 empty polls (docs/performance.md), so over one quiet second it wakes about 100
# times, never near the 1000 of a thread that kept polling at 1 ms. rel_crash sleep: 8 cudaMalloc
# and a launch, then pause() until killed.
"$VT" run --sim -q -o "$TMP/q.jsonl" -- "$PROGS/rel_crash" sleep >"$TMP/q.out" 2>&1 &
runner=$!
i=0; pid=
while [ $i -lt 100 ] && [ -z "$pid" ]; do
    pid=$(sed -n 's/^ready pid=\([0-9]*\)$/\1/p' "$TMP/q.out"); i=$((i + 1)); [ -n "$pid" ] || sleep 0.1
done
drain=
for t in /proc/"$pid"/task/*; do [ "$(cat "$t/comm" 2>/dev/null)" = vramtrace ] && drain=$t; done
wakeups() { sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$drain/status"; }
if [ -n "$drain" ]; then
    sleep 0.5                                  # past the 20 quick polls after the last record
    # per second of the time measured around the sleep: a loaded machine (CI, two suites at a
    # time) may wake the shell late, and a 1.6 s "second" is not a busy drain thread
    t0=$(date +%s%N); w0=$(wakeups); sleep 1; w1=$(wakeups); t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000000 )); n=$(( (w1 - w0) * 1000 / (ms > 0 ? ms : 1) ))
    check "a quiet second: the drain thread wakes 10 to 200 times a second (every 10 ms; $n over $ms ms)" test "$n" -ge 10 -a "$n" -le 200
else
    not_ok "a quiet second: no drain thread found in the traced program (pid '$pid')"
fi
[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
wait $runner 2>/dev/null || :   # killed: its status is 137
