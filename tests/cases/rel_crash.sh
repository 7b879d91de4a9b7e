#!/bin/sh
# rel_crash.sh - a program that dies (SIGKILL, abort, SIGSEGV, _exit) leaves a trace the report
# reads, holding every allocation made before it died (docs/trace-format.md "Crash semantics").
. tests/lib.sh
need_sim
P="$PROGS/rel_crash"
# under `make SAN=1` ASan's own SIGSEGV/abort handlers would turn the deaths into exit(1)
case "${VRAMTRACE_PRELOAD_FIRST:-}" in *asan*) export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_abort=0";; esac
N=8
MiB=1048576
# verify NAME TRACE : the trace parses, has every allocation, and the report reads it
verify() {
    name=$1; t=$2
    check "$name: trace file exists" test -s "$t"
    check_eq "$name: every line parses, header first" "$(jqs "$t" '.[0].ev')" header
    check_eq "$name: all $N allocations recorded" "$(jqs "$t" '[.[] | select(.ev=="alloc" and .res==0)] | length')" $N
    check_eq "$name: no footer" "$(jqs "$t" '[.[] | select(.ev=="footer")] | length')" 0
    j=$("$VT" report --json "$t" 2>"$TMP/$name.rep.err"); rc=$?
    check_eq "$name: report --json exits 0 on a trace without footer" "$rc" 0
    check_eq "$name: report peak_bytes" "$(printf '%s' "$j" | jq -r .peak_bytes)" $((N * MiB))
    check_eq "$name: report leaked_bytes (live at death)" "$(printf '%s' "$j" | jq -r .leaked_bytes)" $((N * MiB))
    "$VT" report "$t" >"$TMP/$name.txt" 2>&1
    check_eq "$name: text report exits 0" "$?" 0
}

# SIGKILL while sleeping: wait for "ready" (bounded), kill the program itself (not vramtrace)
"$VT" run --sim -q -o "$TMP/kill.jsonl" -- "$P" sleep $N >"$TMP/kill.out" 2>&1 &
vt=$!
i=0
while ! grep -q '^ready' "$TMP/kill.out" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
pid=$(sed -n 's/^ready pid=//p' "$TMP/kill.out")
if [ -n "$pid" ]; then kill -KILL "$pid"; else kill -KILL $vt; fi
wait $vt
check_eq "SIGKILL: vramtrace run exits 128+9" "$?" 137
verify sigkill "$TMP/kill.jsonl"
# `vramtrace run` folded the ring into the trace and cut the dead writer's pre-grown NUL tail
sz=$(stat -c %s "$TMP/kill.jsonl"); used=$(tr -d '\000' <"$TMP/kill.jsonl" | wc -c)
check_eq "SIGKILL: NUL tail trimmed when the ring was recovered" "$sz" "$used"
check "SIGKILL: ring file removed after recovery" test ! -e "$TMP/kill.jsonl.ring"

"$VT" run --sim -q -o "$TMP/abort.jsonl" -- "$P" abort $N >/dev/null 2>&1
check_eq "abort(): exit status 128+6" "$?" 134
verify abort "$TMP/abort.jsonl"

"$VT" run --sim -q -o "$TMP/segv.jsonl" -- "$P" segv $N >/dev/null 2>&1
check_eq "SIGSEGV: exit status 128+11" "$?" 139
verify segv "$TMP/segv.jsonl"

"$VT" run --sim -q -o "$TMP/uexit.jsonl" -- "$P" _exit $N >/dev/null 2>&1
check_eq "_exit(3): exit status 3" "$?" 3
verify _exit "$TMP/uexit.jsonl"

# clean exit for contrast: footer last, no NUL bytes, live_bytes = what was never freed
"$VT" run --sim -q -o "$TMP/clean.jsonl" -- "$P" exit $N >/dev/null 2>&1
check_eq "clean exit: status 0" "$?" 0
check_eq "clean exit: footer is the last line" "$(jqs "$TMP/clean.jsonl" '.[-1].ev')" footer
check_eq "clean exit: footer live_bytes" "$(jqs "$TMP/clean.jsonl" '.[-1].live_bytes')" $((N * MiB))
check_eq "clean exit: footer events = lines in the file" "$(jqs "$TMP/clean.jsonl" '.[-1].events')" "$(wc -l <"$TMP/clean.jsonl" | tr -d ' ')"
check_eq "clean exit: file cut to its data (no NUL bytes)" "$(tr -cd '\000' <"$TMP/clean.jsonl" | wc -c | tr -d ' ')" 0

# exit() while 4 threads keep calling cudaMalloc/cudaFree (rel_exit.c): every call is either in
# the trace or counted in the footer's `dropped`, and the footer is the last line. The program
# counts the calls that returned (A allocs + F frees, in a shared file); a call in flight when the
# process ended returned to no one, so recorded + dropped lies in [A+F, A+F+4]. Three runs: the
# window is a race. Before, late calls were lost silently and a late line could follow the footer.
for i in 1 2 3; do
    head -c 4096 /dev/zero >"$TMP/exit-counts"
    timeout 60 "$VT" run --sim -q -o "$TMP/exit$i.jsonl" -- "$PROGS/rel_exit" "$TMP/exit-counts" 4 >/dev/null 2>&1
    check_eq "exit with busy threads ($i): status 0" "$?" 0
    calls=$(od -An -tu8 -v "$TMP/exit-counts" | tr -s ' ' '\n' | awk '{ s += $1 } END { print s }')
    check_eq "exit with busy threads ($i): the footer is the last line, once" \
        "$(jqs "$TMP/exit$i.jsonl" '[.[-1].ev, ([.[] | select(.ev == "footer")] | length)] | join(",")')" footer,1
    got=$(jqs "$TMP/exit$i.jsonl" '([.[] | select(.ev == "alloc" or .ev == "free")] | length) + .[-1].dropped')
    check "exit with busy threads ($i): recorded + dropped ($got) within [$calls, $calls + 4]" \
        test "$got" -ge "$calls" -a "$got" -le $((calls + 4))
done

# killed while the tracer starts: the trace has its header and 1 MiB of NULs grown ahead, the
# ring its allocated size and a header never written (VRAMTRACE_TEST_KILL_AT_START dies there).
# `run` finds the writer gone: it removes the empty ring and cuts the NUL tail, silently; the
# reports after it say nothing of a ring. Before, every report warned "not a vramtrace ring file".
VRAMTRACE_TEST_KILL_AT_START=1 "$VT" run --sim -q -o "$TMP/start.jsonl" -- "$P" exit $N >/dev/null 2>"$TMP/start.err"
check_eq "killed at start-up: exit status 128+9" "$?" 137
check "killed at start-up: no ring left" test ! -e "$TMP/start.jsonl.ring"
check_eq "killed at start-up: the trace is its header line, NUL tail cut" \
    "$(jqs "$TMP/start.jsonl" '[length, .[0].ev] | join(",")'):$(stat -c %s "$TMP/start.jsonl")" "1,header:$(tr -d '\000' <"$TMP/start.jsonl" | wc -c | tr -d ' ')"
check_eq "killed at start-up: run says nothing of a ring" "$(grep -c ring "$TMP/start.err")" 0
"$VT" report --json "$TMP/start.jsonl" >"$TMP/start.json" 2>"$TMP/start-report.err"
check_eq "killed at start-up: report exits 0 without a warning, incomplete (died), no allocation" \
    "$?:$(wc -c <"$TMP/start-report.err" | tr -d ' '):$(jq -c '[.processes[0].complete, .processes[0].incomplete_reason, .allocations.count]' "$TMP/start.json")" \
    '0:0:[false,"no footer: the process died or called _exit",0]'
# the same leftover found by `report` (a plain LD_PRELOAD run: nobody recovered it)
env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 \
    VRAMTRACE_TEST_KILL_AT_START=1 VRAMTRACE_OUTPUT="$TMP/start2.jsonl" "$P" exit $N >/dev/null 2>&1
check_eq "killed at start-up, preloaded: the empty ring is left beside a 1 MiB trace" \
    "$(test -e "$TMP/start2.jsonl.ring" && echo ring):$(stat -c %s "$TMP/start2.jsonl")" "ring:$MiB"
"$VT" report --json "$TMP/start2.jsonl" >"$TMP/start2.json" 2>"$TMP/start2.err"
check_eq "killed at start-up, preloaded: report exits 0 with no warning, removes the ring, cuts the tail" \
    "$?:$(wc -c <"$TMP/start2.err" | tr -d ' '):$(test -e "$TMP/start2.jsonl.ring" && echo ring):$(stat -c %s "$TMP/start2.jsonl")" \
    "0:0::$(tr -d '\000' <"$TMP/start2.jsonl" | wc -c | tr -d ' ')"

# --- killed before the trace's header (an empty trace) or halfway through the ring's header ------
"$VT" run --sim -o "$TMP/ranks/rank0.jsonl" -- env VRAMTRACE_TEST_KILL_AT_START=trace "$P" exit 2 >/dev/null 2>"$TMP/r0.err"
check_eq "killed before the header: run exits 137, names the empty trace, never says 'never used CUDA'" \
    "$?:$(grep -c "rank0.jsonl is empty: its process was killed as the tracer started" "$TMP/r0.err"):$(grep -c 'never used CUDA' "$TMP/r0.err"):$(stat -c %s "$TMP/ranks/rank0.jsonl")" \
    "137:1:0:0"
env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_QUIET=1 \
    VRAMTRACE_TEST_KILL_AT_START=half VRAMTRACE_OUTPUT="$TMP/ranks/rank1.jsonl" "$P" exit 2 >/dev/null 2>&1
check "killed writing the ring's header: a ring with only its magic and sizes is left" test -e "$TMP/ranks/rank1.jsonl.ring"
"$VT" run --sim -q -o "$TMP/ranks/rank2.jsonl" -- "$P" exit 2 >/dev/null 2>&1
head -c $MiB /dev/zero >"$TMP/ranks/rank3.jsonl" # a NUL-only leftover, as a kill after the first grow leaves
"$VT" report --json "$TMP/ranks" >"$TMP/ranks.json" 2>"$TMP/ranks.err"
check_eq "report DIR with two empty ranks: exits 0, names both, reports the other two" \
    "$?:$(grep -c 'empty (the process was killed as the tracer started: nothing was recorded); skipped' "$TMP/ranks.err"):$(jq '.processes | length' "$TMP/ranks.json")" "0:2:2"
check_eq "report DIR: the half-written ring is removed without a warning; rank2's 2 MiB are reported" \
    "$(test -e "$TMP/ranks/rank1.jsonl.ring" && echo ring):$(grep -c 'rank1' "$TMP/ranks.err"):$(jq '[.processes[].peak_bytes] | max' "$TMP/ranks.json")" ":0:2097152"
"$VT" report "$TMP/ranks/rank1.jsonl" >/dev/null 2>"$TMP/r1.err"
check_eq "half-written ring: a later report says nothing of it" "$?:$(wc -c <"$TMP/r1.err" | tr -d ' ')" "0:0"
printf 'not a trace\n' >"$TMP/ranks/rank4.jsonl"
"$VT" report --json "$TMP/ranks" >"$TMP/ranks2.json" 2>"$TMP/ranks2.err"
check_eq "report DIR with a damaged rank: exit 2, the rank named with its line, the other ranks still reported" \
    "$?:$(grep -c 'rank4.jsonl:1: not valid JSON' "$TMP/ranks2.err"):$(grep -c '3 of 5 traces could not be read (named above); the report covers the other 2' "$TMP/ranks2.err"):$(jq '.processes | length' "$TMP/ranks2.json")" \
    "2:1:1:2"
# the damaged trace named first: the traces after it are read all the same
"$VT" report --json "$TMP/ranks/rank4.jsonl" "$ROOT/tests/data/traces/oom.jsonl" "$TMP/ranks/rank2.jsonl" >"$TMP/first.json" 2>"$TMP/first.err"
check_eq "report with the damaged trace first: exit 2, 1 of 3 unread, the 2 after it reported (oom's 3.5 GiB peak, rank2's 2 MiB)" \
    "$?:$(grep -c '1 of 3 traces could not be read (named above); the report covers the other 2' "$TMP/first.err"):$(jq -c '[.processes[].peak_bytes]' "$TMP/first.json")" \
    "2:1:[3758096384,2097152]"
