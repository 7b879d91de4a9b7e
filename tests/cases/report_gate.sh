#!/bin/sh
# report_gate.sh - `report --fail-on=LIST` (issue 49's gate, the first of issue 51's CI gates):
# the exit status is 3 (or --error-exitcode's) when a process trips a gate, one line on stderr
# for each, the report itself written as always; 0 and a quiet stderr when nothing trips; 2 for
# a list that names no gate. Every expected count comes from what the test programs do.
. tests/lib.sh
need_sim

M=1048576
# gate TRACE OPTS...: "STATUS|STDERR" of a report of TRACE with OPTS (stdout kept in $TMP/gate.out)
gate() {
    t=$1; shift
    "$VT" report "$@" "$t" >"$TMP/gate.out" 2>"$TMP/gate.err"
    echo "$?|$(cat "$TMP/gate.err")"
}
pid() { "$VT" report --json "$1" | jq -r '.processes[0].pid'; }

# growth: tests/progs/growth.cu (see report_growth.sh): leak keeps 24 MiB a step, window 10-19,
# out of memory at step 682; warm-up, the caching allocator's fragments and the noisy loop stop
# growing or never trend: no alarm.
for mode in leak warmup noisy frag; do
    "$VT" run --sim -q -o "$TMP/$mode.jsonl" -- "$PROGS/growth" $mode >/dev/null 2>&1
done
L="$TMP/leak.jsonl"
WANT="3|vramtrace report: --fail-on=growth: pid $(pid "$L") ($L): live VRAM grows +24.00 MiB per step over steps 10-19; device 0 runs out at step 682"
check_eq "growth: the leak trips it, status 3, one line" "$(gate "$L" --fail-on=growth)" "$WANT"
check_eq "growth: the text report is still written" "$(grep -c '^Growth (live VRAM at the end of each step): growing, +24.00 MiB per step over steps 10-19' "$TMP/gate.out")" 1
check_eq "growth: '--fail-on growth' is the same option" "$(gate "$L" --fail-on growth)" "$WANT"
check_eq "growth: --json with the gate writes the JSON" "$(gate "$L" --json --fail-on=growth | cut -c1-2):$(jq -r '.processes[0].growth.kind' "$TMP/gate.out")" "3|:steady"
for mode in warmup noisy frag; do
    check_eq "growth: $mode does not trip it" "$(gate "$TMP/$mode.jsonl" --fail-on=growth)" "0|"
done
check_eq "growth: --error-exitcode=9 sets the status" "$(gate "$L" --fail-on=growth --error-exitcode=9 | cut -d'|' -f1)" 9
check_eq "growth: --diff gates the new run: a warm-up after the leak passes" \
    "$("$VT" report --diff --fail-on=growth "$L" "$TMP/warmup.jsonl" >/dev/null 2>&1; echo $?)" 0
check_eq "growth: --diff gates the new run: the leak after a warm-up fails" \
    "$("$VT" report --diff --fail-on=growth "$TMP/warmup.jsonl" "$L" >/dev/null 2>"$TMP/d.err"; echo $?):$(grep -c -- '--fail-on=growth: pid' "$TMP/d.err")" "3:1"

# oom: tests/progs/oom_retry.cu on a 1 GiB device fails 3 allocations; 2 of them the same thread
# retried successfully (a caching allocator's retry, which the program never sees): 1 counts.
VRAMTRACE_SIM_MEM=1G "$VT" run --sim -q -o "$TMP/oom.jsonl" -- "$PROGS/oom_retry" >/dev/null 2>&1
O="$TMP/oom.jsonl"
check_eq "oom: the one failure never retried trips it" "$(gate "$O" --fail-on=oom)" \
    "3|vramtrace report: --fail-on=oom: pid $(pid "$O") ($O): 1 allocation failed for lack of memory and was not retried successfully"
check_eq "oom: the program freed everything: no leak" "$(gate "$O" --fail-on=leak)" "0|"

# leak: trace_rt leak keeps 3 MiB and 12345 B (frees the third); leak_kinds keeps 4 KiB + 64 KiB
# of VRAM (a cudaMalloc, a cudaMallocAsync), 1 MiB managed and 8 KiB pinned host.
"$VT" run --sim -q -o "$TMP/leak2.jsonl" -- "$PROGS/trace_rt" leak >/dev/null 2>&1
"$VT" run --sim -q -o "$TMP/kinds.jsonl" -- "$PROGS/trace_rt" leak_kinds >/dev/null 2>&1
check_eq "leak: 3 MiB + 12345 B (3.01 MiB) in 2 allocations" "$(gate "$TMP/leak2.jsonl" --fail-on=leak)" \
    "3|vramtrace report: --fail-on=leak: pid $(pid "$TMP/leak2.jsonl") ($TMP/leak2.jsonl): not freed at exit: 3.01 MiB VRAM in 2 allocations"
check_eq "leak: every kind: 68 KiB VRAM in 2, 1 MiB managed, 8 KiB pinned host" "$(gate "$TMP/kinds.jsonl" --fail-on=leak)" \
    "3|vramtrace report: --fail-on=leak: pid $(pid "$TMP/kinds.jsonl") ($TMP/kinds.jsonl): not freed at exit: 68.00 KiB VRAM in 2 allocations, 1.00 MiB managed, 8.00 KiB pinned host"
# rel_crash allocates 3 x 1 MiB and frees none: exiting, that is a leak; aborting, what was live
# when the process died is not a leak of its code (the trace has no footer)
"$VT" run --sim -q -o "$TMP/exit.jsonl" -- "$PROGS/rel_crash" exit 3 >/dev/null 2>&1
"$VT" run --sim -q -o "$TMP/abort.jsonl" -- "$PROGS/rel_crash" abort 3 >/dev/null 2>&1
check_eq "leak: 3 MiB live at a clean exit trips it" "$(gate "$TMP/exit.jsonl" --fail-on=leak | head -1 | sed 's/: pid.*: not/: not/')" \
    "3|vramtrace report: --fail-on=leak: not freed at exit: 3.00 MiB VRAM in 3 allocations"
check_eq "leak: 3 MiB live when the process aborted does not" "$(gate "$TMP/abort.jsonl" --fail-on=leak | head -1 | cut -d'|' -f1):$(grep -c fail-on "$TMP/gate.err")" "0:0"

# error / warning: trace_rt copies makes 8 errors (3 out-of-bounds copies/sets, 3 direction
# mismatches, a double free, an invalid free), no warning; between makes 1 warning (a pointer
# between two allocations), no error; clean makes neither.
for mode in copies between clean; do "$VT" run --sim -q -o "$TMP/$mode.jsonl" -- "$PROGS/trace_rt" $mode >/dev/null 2>&1; done
C="$TMP/copies.jsonl"; B="$TMP/between.jsonl"
check_eq "error: 8 checker errors" "$(gate "$C" --fail-on=error)" "3|vramtrace report: --fail-on=error: pid $(pid "$C") ($C): 8 checker errors"
check_eq "error: a warning alone does not trip it" "$(gate "$B" --fail-on=error)" "0|"
check_eq "warning: a warning trips it" "$(gate "$B" --fail-on=warning)" "3|vramtrace report: --fail-on=warning: pid $(pid "$B") ($B): 1 checker warning and 0 errors"
check_eq "warning: errors trip it too" "$(gate "$C" --fail-on=warning | head -1 | cut -d'|' -f1)" 3
check_eq "clean: no gate trips" "$(gate "$TMP/clean.jsonl" --fail-on=oom,leak,error,warning,growth)" "0|"
check_eq "several gates: one line each, in a fixed order (oom, leak, error, warning, growth)" \
    "$(gate "$C" --fail-on=growth,warning,error | head -1 | cut -d'|' -f1):$(grep -c . "$TMP/gate.err"):$(sed 's/: pid.*//' "$TMP/gate.err" | tr '\n' ' ')" \
    "3:2:vramtrace report: --fail-on=error vramtrace report: --fail-on=warning "

# bad lists: status 2, one line naming the word
check_eq "a word that is no gate: status 2, named" "$(gate "$L" --fail-on=growht)" \
    "2|vramtrace report: --fail-on: 'growht' is not a gate (oom, leak, error, warning, growth, separated by commas)"
check_eq "an empty item: status 2" "$(gate "$L" --fail-on=oom, | cut -d'|' -f1)" 2
check_eq "no list: status 2" "$("$VT" report "$L" --fail-on >/dev/null 2>"$TMP/e"; echo $?):$(cat "$TMP/e")" "2:vramtrace report: option '--fail-on' needs a value (try 'vramtrace report --help')"
check_eq "--error-exitcode out of range: status 2" "$(gate "$L" --error-exitcode=0 | cut -d'|' -f1)" 2
