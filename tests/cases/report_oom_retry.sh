#!/bin/sh
# report_oom_retry.sh - what an OOM report must get right beyond its numbers: an OOM the program
# survives is told apart from the one it does not, and one GPU's failure is held by that GPU's
# allocations only.
# tests/progs/oom_retry.cu behaves like PyTorch's caching allocator on a 1 GiB device: with a cache
# of 900 MiB, 512 MiB fails (FIRST_TRY, 900 MiB live) and fails again after one 300 MiB block is
# given back (SECOND, 600 MiB live); with the cache empty the same 512 MiB succeeds (RETRY, 0 B
# live before it): both failures are recovered, 900 and 600 MiB less live. 2 GiB then fails for
# good (FATAL, 512 MiB live): not recovered. Numbers and lines come from the program.
. tests/lib.sh
need_sim
SRC="$ROOT/tests/progs/oom_retry.cu"
line() { grep -n "// $1\$" "$SRC" | cut -d: -f1; }
RA=$(grep -n '// RAW_ALLOC' "$SRC" | cut -d: -f1); F=$(line FIRST_TRY); S=$(line SECOND); R=$(line RETRY); X=$(line FATAL)
VRAMTRACE_SIM_MEM=1G "$VT" run --sim -o "$TMP/r.jsonl" -- "$PROGS/oom_retry" >"$TMP/out" 2>"$TMP/err"
check_eq "the program saw what its comments say" "$(cat "$TMP/out")" "rc=0 big=1 huge=0"
site() { echo "raw_alloc(unsigned long) (oom_retry.cu:$RA) <- main (oom_retry.cu:$1)"; }
out=$("$VT" report "$TMP/r.jsonl")
check "summary: 3 OOMs, 2 retried successfully" sh -c 'printf "%s\n" "$1" | grep -q "^  OOM           3 allocations failed for lack of memory, 2 of them retried successfully$"' _ "$out"
check_eq "each OOM: requested where, and recovered or not" \
    "$(printf '%s\n' "$out" | grep -A2 '^OOM: ' | grep -e '^OOM: ' -e '^  requested at' -e '^  recovered' -e '^  not recovered' |
       sed 's/ at [0-9:.]* (+[^)]*)/ at T/; s/ failed at T.*; live / live /; s/; driver.*//')" \
"OOM: cudaMalloc of 512.00 MiB live 900.00 MiB
  requested at: $(site "$F")
  recovered:    the same size succeeded from this thread at T with 900.00 MiB less live, at $(site "$R")
OOM: cudaMalloc of 512.00 MiB live 600.00 MiB
  requested at: $(site "$S")
  recovered:    the same size succeeded from this thread at T with 600.00 MiB less live, at $(site "$R")
OOM: cudaMalloc of 2.00 GiB live 512.00 MiB
  requested at: $(site "$X")
  not recovered: no later allocation of this size from this thread succeeded"
j=$("$VT" report --json "$TMP/r.jsonl")
check_eq "JSON: counts" "$(printf '%s' "$j" | jq -c '[.oom_count, .oom_recovered_count, .processes[0].oom_recovered_count]')" "[3,2,2]"
check_eq "JSON: per OOM recovered, freed before the retry, the retry's site" \
    "$(printf '%s' "$j" | jq -r '.oom_events[]|"\(.requested_bytes) \(.recovered) \(.freed_before_retry_bytes) \(.recovered_site)"')" \
"536870912 true 943718400 $(site "$R")
536870912 true 629145600 $(site "$R")
2147483648 false null null"
check "JSON: the retry comes after its failure" sh -c 'printf "%s" "$1" | jq -e "[.oom_events[]|select(.recovered)|.recovered_time_ns > .time_ns]|all" >/dev/null' _ "$j"
"$VT" report --html "$TMP/r.html" "$TMP/r.jsonl" >/dev/null
check "HTML: the heading counts the recovered ones" grep -q '<h2>Failed allocations (3, 2 retried successfully)</h2>' "$TMP/r.html"
check_eq "HTML: two recovered, one not" "$(grep -o '<b>recovered:</b>\|<b>not recovered:</b>' "$TMP/r.html" | sort | uniq -c | sed 's/^ *//')" \
"1 <b>not recovered:</b>
2 <b>recovered:</b>"
# examples/oom.cu stops at its first failure: one OOM, not recovered, and no retry wording at all
VRAMTRACE_SIM_MEM=4G "$VT" run --sim -o "$TMP/o.jsonl" -- "$EXAMPLES/oom" >/dev/null 2>&1
check_eq "oom.cu: one OOM, none recovered, nothing said of retries" \
    "$("$VT" report --json "$TMP/o.jsonl" | jq -c '[.oom_count, .oom_recovered_count, .oom_events[0].recovered]'),$("$VT" report "$TMP/o.jsonl" | grep -c 'recovered\|retried')" "[1,0,false],0"

# ---- one process, two GPUs: device 1's OOM is held by device 1's allocations ----------------------
# tests/progs/oom_two_gpus.cu: 900 MiB on device 0 (ON_DEV0), 600 MiB on device 1 (ON_DEV1), then
# 512 MiB on device 1 fails (DEV1_OOM): 600 MiB live there, 1500 MiB in the process.
S2="$ROOT/tests/progs/oom_two_gpus.cu"
l2() { grep -n "// $1\$" "$S2" | cut -d: -f1; }
VRAMTRACE_SIM_DEVICES=2 VRAMTRACE_SIM_MEM=1G "$VT" run --sim -o "$TMP/g2.jsonl" -- "$PROGS/oom_two_gpus" >"$TMP/g2.out" 2>/dev/null
check_eq "two GPUs: the program saw the failure on device 1, then the retry succeed" "$(cat "$TMP/g2.out")" "rc=0 fail=2 retry=0"
check_eq "two GPUs: held by device 1's allocation only, with the device's and the process's live bytes" \
    "$("$VT" report --json "$TMP/g2.jsonl" | jq -c '.oom_events[0]|[.dev, .live_device_bytes, .live_bytes, [.held_by[]|[.site,.bytes,.count]]]')" \
    "[1,629145600,1572864000,[[\"main (oom_two_gpus.cu:$(l2 ON_DEV1))\",629145600,1]]]"
check_eq "two GPUs: recovered by the retry, with what device 1 got back (600 MiB, not the process's 1500)" \
    "$("$VT" report --json "$TMP/g2.jsonl" | jq -c '.oom_events[0]|[.recovered, .freed_before_retry_bytes, .recovered_site]')" \
    "[true,629145600,\"main (oom_two_gpus.cu:$(l2 RETRY))\"]"
check "two GPUs: the text says which live bytes it means" sh -c '"$1" report "$2" | grep -q "^OOM: cudaMalloc of 512.00 MiB failed at .* on dev 1 (cudaErrorMemoryAllocation 2); live 600.00 MiB on dev 1 (1.46 GiB in the process); "' _ "$VT" "$TMP/g2.jsonl"

# ---- one process, two GPUs: each device's own peak and what filled it ------------------------------
# tests/progs/two_gpu_peaks.cu: dev 0 peaks at 800 MiB (A0 600 + B0 200, B0 freed before dev 1 is
# used), dev 1 at 600 MiB (C1 500 + D1 100); the process peak, 1200 MiB, is A0 + C1 + D1.
S3="$ROOT/tests/progs/two_gpu_peaks.cu"
MiB=1048576
l3() { echo "main (two_gpu_peaks.cu:$(grep -n "// $1\$" "$S3" | cut -d: -f1))"; }
VRAMTRACE_SIM_DEVICES=2 VRAMTRACE_SIM_MEM=2G "$VT" run --sim -o "$TMP/tg.jsonl" -- "$PROGS/two_gpu_peaks" >"$TMP/tg.out" 2>/dev/null
check_eq "two peaks: the program ran" "$(cat "$TMP/tg.out")" "rc=0"
j=$("$VT" report --json "$TMP/tg.jsonl")
check_eq "two peaks: each device's peak and its sites" \
    "$(printf '%s' "$j" | jq -c '[.processes[0].devices[]|[.dev,.peak_bytes,[.peak_sites[]|[.site,.bytes]]]]')" \
    "[[0,$((800 * MiB)),[[\"$(l3 A0)\",$((600 * MiB))],[\"$(l3 B0)\",$((200 * MiB))]]],[1,$((600 * MiB)),[[\"$(l3 C1)\",$((500 * MiB))],[\"$(l3 D1)\",$((100 * MiB))]]]]"
check_eq "two peaks: the process peak is A0 + C1 + D1" \
    "$(printf '%s' "$j" | jq -c '[.peak_bytes,[.peak_sites[]|.bytes]]')" "[$((1200 * MiB)),[$((600 * MiB)),$((500 * MiB)),$((100 * MiB))]]"
check "two peaks: the text shows dev 0's" sh -c '"$1" report "$2" | grep -A2 "^Peak on dev 0: 800.00 MiB at " | grep -q "200.00 MiB  25.0%      1 alloc   $3"' _ "$VT" "$TMP/tg.jsonl" "$(l3 B0)"
check_eq "one GPU: the device's peak sites are the process's, and no per-device section" \
    "$("$VT" report --json "$TMP/o.jsonl" | jq -c '(.processes[0].devices[0].peak_sites) == (.peak_sites|map(del(.stack)))') $("$VT" report "$TMP/o.jsonl" | grep -c '^Peak on dev')" "true 0"
"$VT" report --html "$TMP/tg.html" "$TMP/tg.jsonl" >/dev/null
check_eq "two peaks: the page has a table per device" "$(grep -o '<h3>Peak on dev [01]: [0-9.]* MiB' "$TMP/tg.html" | tr '\n' ';')" "<h3>Peak on dev 0: 800.00 MiB;<h3>Peak on dev 1: 600.00 MiB;"
# each device's table: its sites' bytes, their share of that device's peak, allocations, the site
# alone (the stacks are the process table's)
rows() { sed 's/<h3>/\n<h3>/g' "$TMP/tg.html" | grep "^<h3>Peak on dev $1:" | sed 's|</table>.*||; s|<tr>|\n|g' | grep '^<td' \
    | sed 's|<[^>]*>| |g; s/  */ /g; s/^ //; s/ $//' | tr '\n' ';'; }
check_eq "two peaks: dev 0's table: A0 600 MiB (75%), B0 200 MiB (25%)" "$(rows 0)" "600.00 MiB 75.0% 1 $(l3 A0);200.00 MiB 25.0% 1 $(l3 B0);"
check_eq "two peaks: dev 1's table: C1 500 MiB (83.3%), D1 100 MiB (16.7%)" "$(rows 1)" "500.00 MiB 83.3% 1 $(l3 C1);100.00 MiB 16.7% 1 $(l3 D1);"
