#!/bin/sh
# journal.sh - the record ring (src/trace/journal.c): events reach the trace through the drain thread,
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
    VRAMTRACE_TEST_KILL_AT=2:$k "$VT" run --sim -q -o "$TMP/mid$k.jsonl" -- "$P" exit 16 >/dev/null 2>&1
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

# The drainer killed after each store of its loop (VRAMTRACE_TEST_KILL_AT=STEP:K, a test hook):
# 1 after naming the record it copies, 2 halfway through the line, 3 after the line, 4 after
# line_done, 5 after emptying the first of the record's slots, 6 after emptying them all, 7 after
# advancing tail - for the first allocation's record and the eighth. VRAMTRACE_SYNC=defer: the
# program makes its 16 allocations, and the exit drains the ring (and dies there), so the
# recovered trace must hold exactly those 16, each once. Before, a kill at 5 or 6 cut the complete
# line and skipped the emptied record: 15.
VRAMTRACE_SYNC=defer "$VT" run --sim -q -o "$TMP/kd.jsonl" -- "$P" exit 16 >/dev/null 2>&1
first=$(jqs "$TMP/kd.jsonl" '[.[].ev] | index("alloc")')
bad=""
for k in $first $((first + 7)); do
    for step in 1 2 3 4 5 6 7; do
        rm -f "$TMP/kd-$step-$k.jsonl"
        VRAMTRACE_SYNC=defer VRAMTRACE_TEST_KILL_AT=$step:$k "$VT" run --sim -q -o "$TMP/kd-$step-$k.jsonl" -- "$P" exit 16 >/dev/null 2>&1
        rc=$?
        got=$(tr -d '\000' <"$TMP/kd-$step-$k.jsonl" | jq -s -c '[([.[] | select(.ev == "alloc")] | length), ([.[] | select(.ev == "alloc") | .addr] | unique | length), .[0].ev]' 2>/dev/null)
        [ "$rc:$got" = '137:[16,16,"header"]' ] || bad="$bad step $step of record $k: $rc:$got;"
    done
done
check_eq "drainer killed after each store of its loop: 16 allocations, each once, every line valid" "$bad" ""

# a report run while the killed program is a zombie (its parent has not waited for it yet): the
# process writes nothing more, so its ring is recovered - all its 8 allocations. Before, the
# report said "still writing" and went on without the ring's events.
if command -v python3 >/dev/null 2>&1; then
    VT="$VT" LIB="$(preload "$ROOT/$BUILD/libvramtrace.so")" python3 - "$P" "$TMP/z.jsonl" "$SIM" >"$TMP/z.out" 2>&1 <<'PY'
import os, signal, subprocess, sys, time
prog, trace, sim = sys.argv[1:4]
env = dict(os.environ, LD_LIBRARY_PATH=sim, LD_PRELOAD=os.environ["LIB"], VRAMTRACE_SYNC="defer",
           VRAMTRACE_OUTPUT=trace, VRAMTRACE_QUIET="1")
p = subprocess.Popen([prog, "sleep", "8"], stdout=subprocess.PIPE, env=env)
p.stdout.readline()                      # "ready pid=P": its 8 allocations are in the ring
os.kill(p.pid, signal.SIGKILL)
for _ in range(200):                     # until the kernel has made it a zombie (not waited for)
    if open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()[0] == "Z":
        break
    time.sleep(0.01)
print("state", open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()[0])
r = subprocess.run([os.environ["VT"], "report", "--json", trace], capture_output=True, text=True)
print("rc", r.returncode)
sys.stderr.write(r.stderr)
open(trace + ".json", "w").write(r.stdout)
p.wait()
PY
    check_eq "zombie writer: the report ran while it was one, exit 0" "$(grep '^state\|^rc' "$TMP/z.out" | tr '\n' ' ')" "state Z rc 0 "
    check_eq "zombie writer: its ring recovered, all 8 allocations" "$(jq -r '.allocations.count' "$TMP/z.jsonl.json")" 8
    check_eq "zombie writer: no 'still writing'" "$(grep -c 'still writing' "$TMP/z.out")" 0
else skip "zombie writer: python3 missing"; fi
check "live writer: the warning says how much waits in the ring" grep -q "still writing it ([0-9]* ring slots not yet in the trace)" "$TMP/live.err"

# the ring's name already taken (a file made there first): the program's threads format the
# events instead, saying so once with why; the file at the name is left exactly as it was
printf 'not ours' >"$TMP/taken.jsonl.ring"
env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" VRAMTRACE_OUTPUT="$TMP/taken.jsonl" \
    "$P" exit 3 >/dev/null 2>"$TMP/taken.err"
check_eq "ring name taken: the program's exit status (0)" "$?" 0
check_eq "ring name taken: one line saying why, and what is done instead" \
    "$(grep -c "^vramtrace: cannot create $TMP/taken.jsonl.ring: File exists; formatting events in the program's threads instead$" "$TMP/taken.err")" 1
check_eq "ring name taken: the file there untouched" "$(cat "$TMP/taken.jsonl.ring")" "not ours"
check_eq "ring name taken: every allocation (3) and the footer still in the trace" \
    "$(jqs "$TMP/taken.jsonl" '[([.[]|select(.ev=="alloc")]|length), ([.[]|select(.ev=="footer")]|length)]|map(tostring)|join(" ")')" "3 1"

# a damaged ring: a warning naming the file, the trace still read
run_sim VRAMTRACE_OUTPUT="$TMP/d.jsonl" "$P" exit 2 >/dev/null
printf 'not a ring' >"$TMP/d.jsonl.ring"
"$VT" report --json "$TMP/d.jsonl" >"$TMP/d.json" 2>"$TMP/d.err"
check_eq "damaged ring: report still exits 0" "$?" 0
check "damaged ring: one-line warning naming it" grep -q "d.jsonl.ring: not a vramtrace ring file" "$TMP/d.err"
check_eq "damaged ring: trace still analysed" "$(jq -r .peak_bytes "$TMP/d.json")" $((2 * MiB))
