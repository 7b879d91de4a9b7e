#!/bin/sh
# report_sections.sh - every text report has each section once and in the report's order
# (issue 52: a second "Copy sites (by host time)" printed before "by bytes" went unseen): over
# every fixture trace and directory, and the traces of programs that fill each kind of section
# (copies both ways, steps, growth, snapshots, NVTX ranges, OOMs, failed calls, findings, notes,
# resets). The expected sections of the programs are named, so a section that vanished fails too.
. "$ROOT/tests/lib.sh"
D="$ROOT/tests/data/traces"
export TZ=UTC
n=0
for t in "$D"/*.jsonl "$D"/ranks "$D"/gpu_share; do
    "$VT" report "$t" >"$TMP/r.txt" 2>/dev/null
    why=$(sections_in_order "$TMP/r.txt")
    check "$(basename "$t"): sections once each, in order${why:+ ($why)}" test -z "$why"
    n=$((n + 1))
done
check "fixtures: more than 10 reports checked" test "$n" -gt 10
# a check that cannot fail is no check: a report with Copy sites twice, and out of order, is caught
printf 'Summary\n\nCopy sites (by bytes):\n\nCopy sites (by bytes):\n' >"$TMP/dup.txt"
printf 'Summary\n\nCopy sites (by host time of synchronous copies):\n\nCopy sites (by bytes):\n' >"$TMP/order.txt"
check "the check itself: a repeated section fails" sh -c '! (. "$1"; sections_in_order "$2") >/dev/null' _ "$ROOT/tests/lib.sh" "$TMP/dup.txt"
check "the check itself: sections out of order fail" sh -c '! (. "$1"; sections_in_order "$2") >/dev/null' _ "$ROOT/tests/lib.sh" "$TMP/order.txt"

need_sim
# DEVICES | PROGRAM ARGS | the sections its report must have, in order: staged_copy copies d2h and h2d
# (synchronous: by bytes and by host time) in 8 identical rounds (steps, found by their repeats) on
# 2 devices (a peak for each); failed_calls fails 2 allocations for lack of memory (an OOM each),
# frees a host pointer (a finding) and has 3 kinds of failed call, no successful copy
while IFS='|' read -r devs prog want; do
    # shellcheck disable=SC2086
    VRAMTRACE_SIM_DEVICES=$devs "$VT" run --sim -q -o "$TMP/p.jsonl" -- "$PROGS"/$prog >/dev/null 2>&1
    "$VT" report "$TMP/p.jsonl" >"$TMP/p.txt" 2>/dev/null
    rm -f "$TMP/p.jsonl"
    why=$(sections_in_order "$TMP/p.txt")
    check "$prog: sections once each, in order${why:+ ($why)}" test -z "$why"
    got=$(grep -E '^(Summary|Growth \(|Steps: |OOM: |Failed calls \(|Snapshots \(|Peak: |Peak on dev |Largest allocations:|Allocation churn |Leaks \(|Ranges \(|Transfers \(|Copy sites \(|Findings \(|Notes \(|Kernels \()' "$TMP/p.txt" \
          | sed -E 's/^Peak on dev .*/Peak-dev/; s/^Copy sites \(by bytes.*/Copy bytes/; s/^Copy sites \(by host time.*/Copy time/
                    s/^(Summary|Growth|Steps|OOM|Failed calls|Snapshots|Peak|Largest allocations|Allocation churn|Leaks|Ranges|Transfers|Findings|Notes|Kernels)([ :(].*)?$/\1/' | uniq | tr '\n' ',')
    check_eq "$prog: the sections it fills" "$got" "$want"
done <<'EOF2'
2|staged_copy|Summary,Growth,Steps,Peak,Peak-dev,Largest allocations,Allocation churn,Transfers,Copy bytes,Copy time,
1|failed_calls|Summary,OOM,Failed calls,Peak,Largest allocations,Allocation churn,Findings,
EOF2
