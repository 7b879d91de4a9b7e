#!/bin/sh
# report_failed_calls.sh - each failed call names where it was called from (issue 51): the report's
# "Failed calls" section, JSON errors[].site and the HTML list carry the first failure's site, the
# line the program printed for it. A failed free's record has no stack; the tracer's finding about
# it, written next on the same thread, has it.
. "$ROOT/tests/lib.sh"
need_sim
P="$PROGS/failed_calls"
"$VT" run --sim -q -o "$TMP/fc.jsonl" -- "$P" >"$TMP/out" 2>"$TMP/err"
check_eq "the program ran: exit 0" "$?" 0
# rc API RESULT LINE, from the program: the results CUDA gave it and the lines it called from
line_of() { awk -v a="$1" -v r="$2" '$1 == "rc" && $2 == a && $3 == r { print $4; exit }' "$TMP/out"; }
malloc_line=$(line_of cudaMalloc 2); free_line=$(line_of cudaFree 1); copy_line=$(line_of cudaMemcpy 21)
check "the program saw OOM (2), invalid value (1) and invalid direction (21)" \
    test -n "$malloc_line" -a -n "$free_line" -a -n "$copy_line"
main_line=$(grep -n '^    too_big(&d);$' "$ROOT/tests/progs/failed_calls.cu" | head -1 | cut -d: -f1)
"$VT" report --json "$TMP/fc.jsonl" >"$TMP/r.json" 2>"$TMP/r.err"
check_eq "JSON errors: api, result, count and the first one's site" \
    "$(jq -c '[.errors[] | [.api, .res, .count, .site]]' "$TMP/r.json")" \
    "[[\"cudaMalloc\",2,2,\"too_big(void**) (failed_calls.cu:$malloc_line) <- main (failed_calls.cu:$main_line)\"],[\"cudaFree\",1,1,\"main (failed_calls.cu:$free_line)\"],[\"cudaMemcpy\",21,1,\"main (failed_calls.cu:$copy_line)\"]]"
check_eq "JSON errors: offsets in order, within the run" \
    "$(jq -c '[.errors[] | .offset_ns > 0] + [.errors[0].offset_ns < .errors[1].offset_ns, .errors[1].offset_ns < .errors[2].offset_ns]' "$TMP/r.json")" \
    "[true,true,true,true,true]"
"$VT" report "$TMP/fc.jsonl" >"$TMP/r.txt" 2>&1
sed -n '/^Failed calls/,/^$/p' "$TMP/r.txt" >"$TMP/sec"
check_eq "text: one Failed calls section" "$(grep -c '^Failed calls' "$TMP/r.txt")" 1
check "text: cudaMalloc -> cudaErrorMemoryAllocation (2) x2, then its site" \
    sh -c 'grep -A1 "^  cudaMalloc -> cudaErrorMemoryAllocation (2) x2, first at " "$1" | tail -1 | grep -qx "    at: too_big(void\*\*) (failed_calls.cu:$2) <- main (failed_calls.cu:$3)"' _ "$TMP/sec" "$malloc_line" "$main_line"
check "text: cudaFree -> cudaErrorInvalidValue (1) x1 at main (failed_calls.cu:$free_line)" \
    sh -c 'grep -A1 "^  cudaFree -> cudaErrorInvalidValue (1) x1, first at " "$1" | tail -1 | grep -qx "    at: main (failed_calls.cu:$2)"' _ "$TMP/sec" "$free_line"
check "text: cudaMemcpy -> cudaErrorInvalidMemcpyDirection (21) x1 at main (failed_calls.cu:$copy_line)" \
    sh -c 'grep -A1 "^  cudaMemcpy -> cudaErrorInvalidMemcpyDirection (21) x1, first at " "$1" | tail -1 | grep -qx "    at: main (failed_calls.cu:$2)"' _ "$TMP/sec" "$copy_line"
"$VT" report --html "$TMP/r.html" "$TMP/fc.jsonl" >/dev/null 2>&1
check "HTML: the failed free's site" grep -q "cudaErrorInvalidValue (1) ×1, first from <code>main (failed_calls.cu:$free_line)</code>" "$TMP/r.html"
# --no-backtrace: no stacks recorded; the site says so instead of inventing one
"$VT" run --sim -q --no-backtrace -o "$TMP/nb.jsonl" -- "$P" >/dev/null 2>&1
check_eq "--no-backtrace: every site (no backtrace)" \
    "$("$VT" report --json "$TMP/nb.jsonl" | jq -c '[.errors[].site] | unique')" '["(no backtrace)"]'
