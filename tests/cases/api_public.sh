#!/bin/sh
# api_public.sh - include/vramtrace/vramtrace.h, the API a program may call: tests/progs/api_snapshot
# run without the tracer (every call a no-op returning 0) and under it (snapshots, a nested pause
# over a warm-up, version queries), with the records, the report's text, JSON and Perfetto output
# the program's own calls imply; the header in plain C and C++ programs that never touch CUDA.
. tests/lib.sh
need_sim
P="$PROGS/api_snapshot"
SRC="$ROOT/tests/progs/api_snapshot.cu"
MiB=1048576
line_of() { grep -n "$1" "$SRC" | head -1 | cut -d: -f1; }   # source line of a marker comment
LA=$(line_of API_ALLOC_A); LB=$(line_of API_ALLOC_B); LC=$(line_of API_ALLOC_C)

# ---- without the tracer: every call does nothing and says so ---------------------------------
out=$(LD_LIBRARY_PATH="$SIM" "$P" 2>&1); rc=$?
check_eq "without the tracer: exit 0, every call returns 0, no version" "$rc|$out" \
    "0|api=0 version=none
snap=0,0,0 pause=0,0 resume=0,0,0 err=0"

# ---- under the tracer -------------------------------------------------------------------------
t="$TMP/api.jsonl"
"$VT" run --sim -o "$t" -- "$P" >"$TMP/run.out" 2>"$TMP/run.err"; rc=$?
check_eq "with the tracer: API version 1, tracer 0.1.0; 3 snapshots written; pause depths 1,2; resume depths 1,0 and 0 for a resume without a pause" \
    "$rc|$(cat "$TMP/run.out")" "0|api=1 version=0.1.0
snap=1,1,1 pause=1,2 resume=1,0,0 err=0"
check_eq "snapshot records: label and the tracer's live bytes (1, 1+2, 1+4 MiB)" \
    "$(jqs "$t" '[.[]|select(.ev=="snapshot")|"\(.label):\(.live_bytes)"]|join(" ")')" \
    "loaded:$MiB grown:$((3 * MiB)) trimmed:$((5 * MiB))"
check_eq "pause/resume records: depths, and the 4 calls made while paused (memcpy, launch, sync, memset)" \
    "$(jqs "$t" '[.[]|select(.ev=="pause" or .ev=="resume")|"\(.ev)\(.depth)\(if .skipped then ":\(.skipped)" else "" end)"]|join(" ")')" \
    "pause1 pause2 resume1 resume0:4"
check_eq "while paused nothing of the traffic was recorded: 1 copy (d2h), 1 launch, 1 sync, 0 sets" \
    "$(jqs "$t" '[([.[]|select(.ev=="copy")|.dir]|join(",")), ([.[]|select(.ev=="launch")]|length), ([.[]|select(.ev=="sync")]|length), ([.[]|select(.ev=="set")]|length)]|map(tostring)|join(" ")')" \
    "d2h 1 1 0"
check_eq "allocations are recorded while paused: 3 allocs (1, 2, 4 MiB), 3 frees" \
    "$(jqs "$t" '[([.[]|select(.ev=="alloc")|.size/1048576|tostring]|join(",")), ([.[]|select(.ev=="free")]|length|tostring)]|join(" ")')" \
    "1,2,4 3"

"$VT" report --json "$t" >"$TMP/r.json" 2>"$TMP/r.err"
check_eq "report --json snapshots: label, live bytes, change since the one before" \
    "$(jq -r '[.snapshots[]|"\(.label):\(.live_bytes):\(.change_bytes)"]|join(" ")' "$TMP/r.json")" \
    "loaded:$MiB:null grown:$((3 * MiB)):$((2 * MiB)) trimmed:$((5 * MiB)):$((2 * MiB))"
check_eq "report --json: \"grown\" is held by the sites of lines $LB and $LA, \"trimmed\" by $LC and $LA" \
    "$(jq -r '[.snapshots[]|[.held_by[]|"\(.site|capture("api_snapshot.cu:(?<l>[0-9]+)").l)=\(.bytes)/\(.count)"]|join(",")]|join(" ")' "$TMP/r.json")" \
    "$LA=$MiB/1 $LB=$((2 * MiB))/1,$LA=$MiB/1 $LC=$((4 * MiB))/1,$LA=$MiB/1"
check_eq "report --json paused: once, 4 calls not recorded" \
    "$(jq -r '"\(.paused.count) \(.paused.skipped_calls) \(.paused.seconds > 0)"' "$TMP/r.json")" "1 4 true"
# the time paused is the outermost pause's: from the depth-1 pause to the depth-0 resume
pause_ns() { jqs "$1" "([.[]|select(.ev==\"resume\" and .depth==0)][0].t) - ([.[]|select(.ev==\"$2\" and .depth==$3)][0].t)"; }
check_eq "report --json paused.seconds: resume0's t less pause1's t" \
    "$(jq -r '.paused.seconds*1e9|round' "$TMP/r.json")" "$(pause_ns "$t" pause 1)"
# A pause whose first records are lost (a full ring drops records; a pause made before the trace
# opened writes none) starts at the first record seen inside it: still one pause, timed from there.
grep -v '"ev":"pause".*"depth":1[,}]' "$t" >"$TMP/lost1.jsonl"
grep -v '"ev":"pause"' "$t" >"$TMP/lost2.jsonl"
for c in "lost1 pause 2" "lost2 resume 1"; do
    set -- $c
    "$VT" report --json "$TMP/$1.jsonl" >"$TMP/$1.json" 2>"$TMP/$1.err"
    check_eq "report --json, the trace without the pauses below depth $3: 1 pause from the first $2 (depth $3), 4 calls" \
        "$(jq -r '"\(.paused.count) \(.paused.skipped_calls) \(.paused.seconds*1e9|round)"' "$TMP/$1.json")" \
        "1 4 $(pause_ns "$TMP/$1.jsonl" "$2" "$3")"
done
check_eq "report --json: peak 7 MiB, 1 launch, 1 d2h copy" \
    "$(jq -r '"\(.peak_bytes) \(.launches) \(.transfers.d2h.count) \(.transfers.h2d.count)"' "$TMP/r.json")" "$((7 * MiB)) 1 1 0"
schema_ok "report --json with snapshots validates against docs/report-schema.json" "$(cat "$TMP/r.json")" \
    '([$s[0].required[] as $k | has($k)] | all) and (.snapshots | all(has("label") and has("held_by") and has("change_bytes")))'

"$VT" report "$t" >"$TMP/r.txt" 2>&1
check "text: the summary's paused line" grep -qx \
    "  paused        1 time, [0-9.]* \(ns\|µs\|ms\|s\): 4 calls not recorded (copies, sets, launches, syncs)" "$TMP/r.txt"
check "text: \"grown\" with its live bytes and the change since \"loaded\"" grep -q \
    '^  "grown" at .*: 3.00 MiB live, +2.00 MiB since "loaded"$' "$TMP/r.txt"
check "text: \"trimmed\" held first by line $LC (4 MiB)" sh -c \
    "grep -A1 '^  \"trimmed\" at .*: 5.00 MiB live, +2.00 MiB since \"grown\"\$' '$TMP/r.txt' | tail -1 | grep -q '^      4.00 MiB .*api_snapshot.cu:$LC) \[1 alloc\]\$'"

"$VT" report --html "$TMP/r.html" "$t" >/dev/null 2>&1
check "html: the snapshots section with \"trimmed\" and its change since \"grown\"" sh -c \
    "grep -q '<h2>Snapshots (3)</h2>' '$TMP/r.html' && grep -q '<b>trimmed</b> at [^<]*: 5.00 MiB live, +2.00 MiB since <b>grown</b>' '$TMP/r.html'"

"$VT" report --perfetto "$TMP/p.json" "$t" >/dev/null 2>&1
check_eq "perfetto: three snapshot instants and one paused slice" \
    "$(jq -r '[.traceEvents[]|select(.cat=="snapshot")|.name]|join(",")' "$TMP/p.json") $(jq -r '[.traceEvents[]|select(.cat=="pause")|.ph]|join("")' "$TMP/p.json")" \
    "loaded,grown,trimmed be"

# ---- tracing off: the tracer is loaded but records nothing --------------------------------------
out=$(VRAMTRACE_DISABLE=1 LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" LD_LIBRARY_PATH="$SIM" "$P" 2>&1)
check_eq "VRAMTRACE_DISABLE=1: version known, nothing recorded (snapshots 0, depth 0)" "$out" \
    "api=1 version=0.1.0
snap=0,0,0 pause=0,0 resume=0,0,0 err=0"

# ---- the header alone, in C and C++ programs that never touch CUDA -------------------------------
cat >"$TMP/c.c" <<'EOF'
#include <stdio.h>
#include <vramtrace/vramtrace.h>
int main(int argc, char **argv)
{
    int s = vramtrace_snapshot(argc > 1 ? argv[1] : "start"), p = vramtrace_pause(), r = vramtrace_resume();
    const char *v = vramtrace_version();
    printf("%d %s %d %d %d\n", vramtrace_api_version(), v ? v : "none", s, p, r);
    return 0;
}
EOF
cp "$TMP/c.c" "$TMP/cc.cc"
if cc -std=c11 -Wall -Wextra -Werror -I"$ROOT/include" -o "$TMP/c" "$TMP/c.c" 2>"$TMP/c.err" &&
   c++ -Wall -Wextra -Werror -I"$ROOT/include" -o "$TMP/cxx" "$TMP/cc.cc" 2>>"$TMP/c.err"; then
    ok "the header compiles cleanly as C11 and C++ (-Wall -Wextra -Werror)"
    check_eq "C, no tracer: zeros and no version" "$("$TMP/c")" "0 none 0 0 0"
    check_eq "C++, no tracer: zeros and no version" "$("$TMP/cxx")" "0 none 0 0 0"
    out=$(cd "$TMP" && VRAMTRACE_OUTPUT="$TMP/c.jsonl" VRAMTRACE_QUIET=1 LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" "$TMP/c")
    check_eq "C, under the tracer without CUDA: the snapshot is written (live 0), pause and resume nest" \
        "$out|$(jqs "$TMP/c.jsonl" '[.[]|select(.ev=="snapshot" or .ev=="pause" or .ev=="resume")|"\(.ev):\(.label // .depth):\(.live_bytes // .skipped // "-")"]|join(" ")')" \
        "1 0.1.0 1 1 0|snapshot:start:0 pause:1:- resume:0:0"
    # a label is the program's string: escaped in HTML, control characters filtered from text
    esc=$(printf '\033')
    (cd "$TMP" && VRAMTRACE_OUTPUT="$TMP/h.jsonl" VRAMTRACE_QUIET=1 LD_PRELOAD="$(preload "$ROOT/$BUILD/libvramtrace.so")" \
        "$TMP/c" "<img src=x>${esc}[31m" >/dev/null)
    "$VT" report --html "$TMP/h.html" --text "$TMP/h.jsonl" >"$TMP/h.txt" 2>&1
    check "a hostile label: HTML escaped, no escape byte in the text report" sh -c \
        "grep -q '<b>&lt;img src=x&gt;' '$TMP/h.html' && ! grep -q '<img' '$TMP/h.html' && ! grep -q \"\$(printf '\\033')\" '$TMP/h.txt' && grep -q 'img src=x' '$TMP/h.txt'"
else
    not_ok "the header compiles cleanly as C11 and C++: $(head -3 "$TMP/c.err")"
fi
